"""The entity schema (`EntityIn`): one set of rules for the API, the bulk CSV import and the portal."""
from datetime import date, timedelta

import pytest

from app.core.errors import Invalid
from app.entities.csv_import import parse_csv
from app.entities.schemas import EntityIn, entity_name, validate_entity

PERSON = {"entity_type": "individual", "first_name": "Jane", "last_name": "Citizen"}
COMPANY = {"entity_type": "business", "business_name": "Acme Pty Ltd"}


def errors_of(data, prefix=""):
    with pytest.raises(Invalid) as exc:
        validate_entity(data, prefix)
    return exc.value.errors


def ok(data) -> EntityIn:
    return validate_entity(data)


# ---------------------------------------------------------------- entity type and type-specific fields

def test_entity_type_is_required_and_checked():
    assert errors_of({"first_name": "A"})["entity_type"] == ["This field is required."]
    assert "entity_type" in errors_of({"entity_type": "person"})
    assert "entity_type" in errors_of({"entity_type": "Individual"})


@pytest.mark.parametrize("kind,required", [
    ("individual", ["first_name", "last_name"]), ("business", ["business_name"]),
    ("vessel", ["vessel_name"]), ("property", ["property_name"])])
def test_each_type_requires_its_name_fields(kind, required):
    errors = errors_of({"entity_type": kind})
    assert sorted(errors) == sorted(required)
    if kind == "individual":  # either name is enough (mononyms)
        assert all(msg[0].startswith("Give a first name or a last name") for msg in errors.values())
        from app.entities.schemas import validate_entity
        assert validate_entity({"entity_type": kind, "last_name": "Suharto"}).last_name == "Suharto"
    else:
        assert all(msg[0].startswith("Required for") for msg in errors.values())


def test_blank_names_count_as_missing():
    errors = errors_of({"entity_type": "individual", "first_name": "   ", "last_name": ""})
    assert set(errors) == {"first_name", "last_name"}


@pytest.mark.parametrize("kind,field,value", [
    ("individual", "business_name", "Acme"), ("individual", "vessel_name", "Boaty"),
    ("individual", "business_number", "123"), ("business", "first_name", "Jane"),
    ("business", "birth_date", "1990-01-01"), ("vessel", "property_name", "Home"),
    ("property", "middle_name", "Q"), ("vessel", "business_number_type", "other")])
def test_fields_of_another_type_are_rejected_on_that_field(kind, field, value):
    base = {"individual": PERSON, "business": COMPANY, "vessel": {"entity_type": "vessel", "vessel_name": "V"},
            "property": {"entity_type": "property", "property_name": "P"}}[kind]
    errors = errors_of({**base, field: value})
    assert list(errors) == [field]
    assert errors[field][0].startswith("Only allowed for")


def test_null_fields_of_another_type_are_accepted():
    body = ok({**PERSON, "business_name": None, "vessel_name": "", "business_number_type": None})
    assert body.business_name is None and body.vessel_name is None


def test_unknown_fields_are_rejected_and_all_errors_reported_together():
    errors = errors_of({"entity_type": "individual", "colour": "red", "email1": "nope", "birth_date": "1.1.2000"})
    assert errors["colour"] == ["Unknown field."]
    assert {"email1", "birth_date", "first_name", "last_name"} <= set(errors)


def test_entity_name_is_computed_for_each_type():
    assert entity_name(ok({**PERSON, "middle_name": "Q"}).model_dump()) == "Jane Q Citizen"
    assert entity_name(ok(PERSON).model_dump()) == "Jane Citizen"
    assert entity_name(ok(COMPANY).model_dump()) == "Acme Pty Ltd"
    assert entity_name(ok({"entity_type": "vessel", "vessel_name": "Sea Spirit"}).model_dump()) == "Sea Spirit"
    assert entity_name(ok({"entity_type": "property", "property_name": "1 Main St"}).model_dump()) == "1 Main St"


def test_strings_are_trimmed_and_length_limited():
    assert ok({**PERSON, "first_name": "  Jane  "}).first_name == "Jane"
    assert "address_line1" in errors_of({**PERSON, "address_line1": "x" * 256})
    assert "first_name" in errors_of({**PERSON, "first_name": 42})


# ---------------------------------------------------------------- business numbers

@pytest.mark.parametrize("kind,given,stored", [
    ("au_abn", "51 824 753 556", "51824753556"), ("au_acn", "004 085 616", "004085616"),
    ("uk_crn", "sc123456", "SC123456"), ("uk_crn", "0123 4567", "01234567"), ("other", "AB 12cd", "AB12cd")])
def test_valid_business_numbers_are_stored_compact(kind, given, stored):
    body = ok({**COMPANY, "business_number_type": kind, "business_number": given})
    assert body.business_number == stored


@pytest.mark.parametrize("kind,given", [
    ("au_abn", "51 824 753 557"), ("au_abn", "5182475355"), ("au_abn", "5182475355A"),
    ("au_acn", "004 085 617"), ("au_acn", "00408561"), ("uk_crn", "1234567"), ("uk_crn", "12-45678"),
    ("other", "X" * 33), ("other", "abc-123")])
def test_invalid_business_numbers_are_400_on_the_number(kind, given):
    errors = errors_of({**COMPANY, "business_number_type": kind, "business_number": given})
    assert list(errors) == ["business_number"]


def test_business_number_and_type_go_together():
    assert list(errors_of({**COMPANY, "business_number": "51824753556"})) == ["business_number_type"]
    assert list(errors_of({**COMPANY, "business_number_type": "au_abn"})) == ["business_number"]
    assert "business_number_type" in errors_of({**COMPANY, "business_number_type": "us_ein", "business_number": "1"})


# ---------------------------------------------------------------- address, phones, e-mails, dates

def test_country_either_case_stored_uppercase_and_checked():
    assert ok({**PERSON, "address_country": "nz"}).address_country == "NZ"
    for bad in ("ZZ", "AUS", "A", "12"):
        assert list(errors_of({**PERSON, "address_country": bad})) == ["address_country"], bad


def test_australian_state_codes():
    assert ok({**PERSON, "address_country": "au", "address_state": "qld"}).address_state == "QLD"
    for code in ("ACT", "NSW", "NT", "QLD", "SA", "TAS", "VIC", "WA"):
        assert ok({**PERSON, "address_country": "AU", "address_state": code}).address_state == code
    assert list(errors_of({**PERSON, "address_country": "AU", "address_state": "Queensland"})) == ["address_state"]
    # outside Australia the state is free text
    assert ok({**PERSON, "address_country": "US", "address_state": "California"}).address_state == "California"


def test_phones_are_stored_in_e164_with_the_country_as_region():
    body = ok({**PERSON, "phone1": "0412 345 678", "phone2": "(02) 9876 5432", "phone3": "+1 650 253 0000"})
    assert (body.phone1, body.phone2, body.phone3) == ("+61412345678", "+61298765432", "+16502530000")
    assert ok({**PERSON, "address_country": "gb", "phone1": "020 7946 0958"}).phone1 == "+442079460958"
    for field in ("phone1", "phone2", "phone3", "phone4"):
        assert list(errors_of({**PERSON, field: "12345"})) == [field]
    assert "phone1" in errors_of({**PERSON, "phone1": "not a number"})


def test_emails_are_validated_without_dns():
    assert ok({**PERSON, "email1": "Jane@Example.COM"}).email1 == "Jane@example.com"
    for field in ("email1", "email2", "email3", "email4"):
        assert list(errors_of({**PERSON, field: "jane@"})) == [field]
    assert "email2" in errors_of({**PERSON, "email2": "jane example.com"})


def test_birth_date_format_and_not_in_future():
    assert ok({**PERSON, "birth_date": "1980-02-29"}).birth_date == date(1980, 2, 29)
    for bad in ("1980-2-3", "03/02/1980", "1980-02-30", "19800203", 0, 19800203, True):
        assert list(errors_of({**PERSON, "birth_date": bad})) == ["birth_date"], bad
    assert ok({**PERSON, "birth_date": " "}).birth_date is None
    future = (date.today() + timedelta(days=3)).isoformat()
    assert errors_of({**PERSON, "birth_date": future})["birth_date"] == ["Must not be in the future."]


def test_flags_subset_and_deduplicated():
    assert ok({**PERSON, "flags": ["pep", "fraud", "pep"]}).flags == ["pep", "fraud"]
    assert ok({**PERSON, "flags": None}).flags == []
    assert "flags.1" in errors_of({**PERSON, "flags": ["pep", "terrorist"]})
    assert "flags" in errors_of({**PERSON, "flags": "pep"})


def test_risk_level_values():
    assert ok({**PERSON, "risk_level": None}).risk_level is None
    assert ok({**PERSON, "risk_level": "high"}).risk_level == "high"
    assert "risk_level" in errors_of({**PERSON, "risk_level": "none"})


def test_error_keys_take_a_prefix():
    errors = errors_of({"entity_type": "individual", "email1": "x"}, prefix="rows.7.")
    assert set(errors) == {"rows.7.first_name", "rows.7.last_name", "rows.7.email1"}


# ---------------------------------------------------------------- CSV reading

def test_csv_rows_carry_their_line_numbers_and_skip_blank_lines():
    text = ('\ufeffEntity_Type, First_Name ,last_name,flags\n'
            'Individual,Ann,"Lee Smith",PEP; fraud\n'
            'individual,"Multi\nLine",Lee,\n'
            '\n'
            'individual,Bob,Ray,\n')
    rows, malformed = parse_csv(text)
    # a line break inside a name cell is refused (app/core/inputs.py), and the rows after it keep their lines
    assert list(malformed) == ["rows.3.first_name"]
    assert rows == [(2, {"entity_type": "individual", "first_name": "Ann", "last_name": "Lee Smith",
                         "flags": ["pep", "fraud"]}),
                    (6, {"entity_type": "individual", "first_name": "Bob", "last_name": "Ray"})]


def test_csv_header_problems_are_reported_on_line_1():
    with pytest.raises(Invalid) as exc:
        parse_csv("first_name,colour,first_name\nA,b,c\n")
    assert set(exc.value.errors) == {"rows.1.colour", "rows.1.first_name", "rows.1.entity_type"}


@pytest.mark.parametrize("text", ["", "   \n", "entity_type,first_name\n", "entity_type\n\n\n"])
def test_csv_without_rows_is_a_file_error(text):
    with pytest.raises(Invalid) as exc:
        parse_csv(text)
    assert "file" in exc.value.errors


def test_csv_row_with_extra_cells_and_row_limit():
    rows, malformed = parse_csv("entity_type,vessel_name\nvessel,A,extra\nvessel,B\n")
    assert malformed == {"rows.2": ["The row has more cells than the header has columns."]}
    assert [line for line, _ in rows] == [3]
    from app.core.errors import PayloadTooLarge
    with pytest.raises(PayloadTooLarge) as exc:
        parse_csv("entity_type,vessel_name\n" + "vessel,V\n" * 4, max_rows=3)
    assert "more than 3 rows" in exc.value.message
