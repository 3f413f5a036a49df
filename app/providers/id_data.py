"""The `data` each ID type takes (`POST /adhoc-id-checks`, `POST /entities/{uuid}/id-checks`): fields, formats and
the words people read for them. One source: the API's validation and OpenAPI document, the portal's "Check a
document" form and what the providers receive.

Formats follow what the issuers publish for the Australian Document Verification Service (DVS), the NZ Transport
Agency and the NZ Department of Internal Affairs (docs/idchecks.md lists them). A model validator that finds a
field wrong raises `FieldErrors` naming the field, so the `400` points at it (`id_types.validate_data`)."""
from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from app.core.schemas import RequestSchema, StrictDate

AU_STATES = ("ACT", "NSW", "NT", "QLD", "SA", "TAS", "VIC", "WA")
AuState = Literal[AU_STATES]


def _month(value: Any) -> Any:
    if isinstance(value, str):
        if not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", value.strip()):
            raise ValueError("Must be a month in the format YYYY-MM.")
        return value.strip()
    raise ValueError("Must be a month in the format YYYY-MM.")


def _past(value: date) -> date:
    if value > date.today():
        raise ValueError("Must not be in the future.")
    return value


def _upper_compact(value: Any) -> Any:
    """Document numbers: upper case, spaces and dashes removed (people type "N 1234 567")."""
    return re.sub(r"[\s-]+", "", value).upper() if isinstance(value, str) else value


Month = Annotated[str, BeforeValidator(_month)]
PastDate = Annotated[StrictDate, AfterValidator(_past)]
Name = Annotated[str, Field(min_length=1, max_length=50, pattern=r"^[^\d<>{}\[\]\\/@#$%^*=+_|~]*$")]
OptionalName = Annotated[str | None, Field(default=None, max_length=50, pattern=r"^[^\d<>{}\[\]\\/@#$%^*=+_|~]*$")]


def number(pattern: str, hint: str, title: str) -> Any:
    """A document-number field: normalised (upper case, no spaces or dashes) and checked against `pattern`. The ID
    type's entry names its number fields (`IdType.numbers`): those are never kept in clear."""
    def check(value: str) -> str:
        if not re.fullmatch(pattern, value):
            raise ValueError(hint)
        return value
    return Annotated[str, BeforeValidator(_upper_compact), AfterValidator(check), Field(title=title, description=hint)]


class _Person(RequestSchema):
    first_name: Name = Field(title="First name")
    middle_name: OptionalName = Field(default=None, title="Middle name")
    last_name: Name = Field(title="Last name")
    birth_date: PastDate = Field(title="Date of birth")


# Driver licence number and card number formats by state (as the road agencies print them; DVS checks the card
# number for every state).
LICENCE_NUMBER = {
    "ACT": r"\d{1,10}", "NSW": r"[0-9A-Z]{6,8}", "NT": r"\d{1,10}", "QLD": r"\d{8,9}", "SA": r"[0-9A-Z]{6}",
    "TAS": r"[0-9A-Z]{6,8}", "VIC": r"\d{1,10}", "WA": r"\d{7}",
}
CARD_NUMBER = {
    "ACT": r"[0-9A-Z]{10}", "NSW": r"\d{10}", "NT": r"\d{6,8}", "QLD": r"[0-9A-Z]{10}", "SA": r"[0-9A-Z]{9}",
    "TAS": r"[0-9A-Z]{9}", "VIC": r"[0-9A-Z]{8}", "WA": r"[0-9A-Z]{8,10}",
}
_ANY = r"[0-9A-Z]{1,10}"
LicenceNumber = number(_ANY, "Up to 10 letters and digits.", "Licence number")
LicenceCardNumber = number(_ANY, "Up to 10 letters and digits.", "Card number")
AuPassportNumber = number(r"[A-Z]{1,2}\d{7}", "One or two letters then 7 digits, e.g. PA1234567.", "Passport number")
MedicareNumber = number(r"\d{10}", "The 10 digits on the card.", "Card number")
ForeignPassportNumber = number(r"[0-9A-Z]{1,14}", "The foreign passport's number (up to 14 letters and digits).",
                               "Passport number")
RegistrationNumber = number(r"[0-9A-Z/]{1,10}", "Up to 10 letters and digits.", "Registration number")
CertificateNumber = number(r"[0-9A-Z]{1,11}", "Up to 11 letters and digits.", "Certificate number")
CustomerReferenceNumber = number(r"\d{9}[A-Z]", "9 digits and a letter, e.g. 123456789A.", "Customer reference number")
StockNumber = number(r"[A-Z]{2,4}\d{6,9}", "Letters then digits as printed, e.g. ACC1234567.", "Stock number")
NzLicenceNumber = number(r"[A-Z]{2}\d{6}", "Two letters then 6 digits, e.g. DI123456.", "Licence number (5a)")
NzPassportNumber = number(r"[A-Z]{1,2}\d{6}", "One or two letters then 6 digits, e.g. LA123456.", "Passport number")
MemberNumber = number(r"[0-9A-Z]{1,20}", "Up to 20 letters and digits.", "Member number")


class DriversLicence(_Person):
    state: AuState = Field(title="State of issue")
    licence_number: LicenceNumber
    card_number: LicenceCardNumber

    @model_validator(mode="after")
    def _state_formats(self) -> "DriversLicence":
        errors = []
        if not re.fullmatch(LICENCE_NUMBER[self.state], self.licence_number):
            errors.append(("licence_number", f"Not a {self.state} licence number ({_describe(LICENCE_NUMBER[self.state])})."))
        if not re.fullmatch(CARD_NUMBER[self.state], self.card_number):
            errors.append(("card_number", f"Not a {self.state} licence card number ({_describe(CARD_NUMBER[self.state])})."))
        if errors:
            raise FieldErrors(errors)
        return self


class Passport(_Person):
    gender: Literal["M", "F", "X"] = Field(title="Sex on the passport")
    document_number: AuPassportNumber


def _medicare_ok(value: str) -> bool:
    digits = [int(c) for c in value]
    return digits[0] in range(2, 7) and sum(d * w for d, w in zip(digits[:8], (1, 3, 7, 9, 1, 3, 7, 9))) % 10 \
        == digits[8]


class Medicare(RequestSchema):
    first_name: Name = Field(title="First name")
    middle_name: OptionalName = Field(default=None, title="Middle initial or name")
    last_name: Name = Field(title="Last name")
    birth_date: PastDate = Field(title="Date of birth")
    card_number: MedicareNumber
    individual_reference_number: Literal["1", "2", "3", "4", "5", "6", "7", "8", "9"] = Field(
        title="Reference number (the digit beside the name)")
    card_type: Literal["green", "blue", "yellow"] = Field(title="Card colour")
    card_expiry: str = Field(title="Valid to", description="YYYY-MM for a green card, YYYY-MM-DD for blue or yellow.")

    @model_validator(mode="after")
    def _card(self) -> "Medicare":
        errors = []
        if not _medicare_ok(self.card_number):
            errors.append(("card_number", "Not a Medicare card number (its check digit does not match)."))
        if self.card_type == "green":
            if not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", self.card_expiry):
                errors.append(("card_expiry", "A green card's expiry is a month: YYYY-MM."))
        else:
            try:
                date.fromisoformat(self.card_expiry) if len(self.card_expiry) == 10 else _raise()
            except ValueError:
                errors.append(("card_expiry", f"A {self.card_type} card's expiry is a date: YYYY-MM-DD."))
        if errors:
            raise FieldErrors(errors)
        return self


def _country(value: Any) -> Any:
    import pycountry
    if not isinstance(value, str) or pycountry.countries.get(alpha_3=value.strip().upper()) is None:
        raise ValueError("Must be an ISO 3166-1 alpha-3 country code, e.g. GBR.")
    return value.strip().upper()


class Visa(_Person):
    passport_number: ForeignPassportNumber
    country_of_issue: Annotated[str, BeforeValidator(_country)] = Field(title="Passport's country (ISO alpha-3)")


class BirthCertificate(_Person):
    registration_state: AuState = Field(title="State of registration")
    registration_number: RegistrationNumber
    registration_date: PastDate | None = Field(default=None, title="Date of registration")
    certificate_number: CertificateNumber | None \
        = Field(default=None)


class Centrelink(_Person):
    card_type: Literal["PCC", "HCC", "SHC"] = Field(
        title="Card", description="PCC pensioner concession, HCC health care, SHC Commonwealth seniors health card.")
    customer_reference_number: CustomerReferenceNumber
    card_expiry: StrictDate = Field(title="Valid to")


class Citizenship(_Person):
    stock_number: StockNumber
    acquisition_date: PastDate = Field(title="Date citizenship was acquired")


class NzDriversLicence(_Person):
    licence_number: NzLicenceNumber
    version_number: Annotated[str, Field(pattern=r"^\d{3}$", title="Version number (5b)",
                                         description="The 3 digits of field 5b.")]


class NzPassport(_Person):
    passport_number: NzPassportNumber
    expiry_date: StrictDate = Field(title="Date of expiry")


def _abn(value: Any) -> Any:
    from stdnum.au import abn
    if value is None:
        return None
    try:
        return abn.validate(value)
    except Exception:
        raise ValueError("Not an ABN (11 digits with a valid check sum).") from None


class PayrollSuper(_Person):
    employer_abn: Annotated[str | None, BeforeValidator(_abn)] = Field(default=None, title="Employer's ABN")
    super_fund_usi: Annotated[str | None, Field(pattern=r"^[0-9A-Z]{9,20}$")] = Field(
        default=None, title="Super fund USI")
    member_number: MemberNumber | None = Field(
        default=None)

    @model_validator(mode="after")
    def _one_source(self) -> "PayrollSuper":
        if not (self.employer_abn or self.super_fund_usi):
            raise FieldErrors([("employer_abn", "Give the employer's ABN, the super fund's USI, or both.")])
        if self.super_fund_usi and not self.member_number:
            raise FieldErrors([("member_number", "Needed with the super fund's USI.")])
        return self


# ---------------------------------------------------------------- helpers

class FieldErrors(ValueError):
    """Errors of named fields found by a model validator (pydantic would report them on the whole model):
    `id_types.validate_data` reads `.errors` and reports each on its field."""

    def __init__(self, errors: list[tuple[str, str]]):
        super().__init__("; ".join(m for _, m in errors))
        self.errors = errors


def _raise():
    raise ValueError


def _describe(pattern: str) -> str:
    text = pattern.replace("[0-9A-Z]", "letters and digits").replace(r"\d", "digits").replace("[A-Z]", "letters")
    return re.sub(r"\{(\d+),(\d+)\}", r" (\1 to \2)", re.sub(r"\{(\d+)\}", r" (\1)", text))
