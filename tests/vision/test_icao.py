"""MRZ text rules against the specimens printed in ICAO Doc 9303 (parts 4, 5, 7)."""
from app.vision import icao

TD3_SPECIMEN = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"]
TD1_SPECIMEN = ["I<UTOD231458907<<<<<<<<<<<<<<<", "7408122F1204159UTO<<<<<<<<<<<6", "ERIKSSON<<ANNA<MARIA<<<<<<<<<<"]
MRVB_SPECIMEN = ["V<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<", "L8988901C4XXX4009078F9612109<<<<<<<<"]


def test_check_digit_of_the_specimen():
    assert icao.check_digit("L898902C3") == "6"
    assert icao.check_digit("740812") == "2"
    assert icao.check_digit("120415") == "9"


def test_compose_reproduces_the_td3_specimen():
    lines = icao.compose("TD3", country="UTO", surname="Eriksson", given_names="Anna Maria", number="L898902C3",
                         nationality="UTO", birth_date="1974-08-12", sex="F", expiry_date="2012-04-15",
                         optional="ZE184226B")
    assert lines == TD3_SPECIMEN


def test_compose_reproduces_the_td1_specimen():
    lines = icao.compose("TD1", country="UTO", surname="Eriksson", given_names="Anna Maria", number="D23145890",
                         nationality="UTO", birth_date="1974-08-12", sex="F", expiry_date="2012-04-15")
    assert lines == TD1_SPECIMEN


def test_parse_specimens_with_every_check():
    td3 = icao.parse(TD3_SPECIMEN)
    assert td3.valid and td3.format == "TD3"
    assert (td3.surname, td3.given_names, td3.document_number) == ("ERIKSSON", "ANNA MARIA", "L898902C3")
    assert (td3.birth_date, td3.expiry_date, td3.sex, td3.optional_data) == ("1974-08-12", "2012-04-15", "F",
                                                                          "ZE184226B")
    assert icao.parse(TD1_SPECIMEN).valid
    visa = icao.parse(MRVB_SPECIMEN)
    assert visa.valid and visa.format == "MRVB" and visa.nationality == "XXX" and visa.expiry_date == "1996-12-10"


def test_a_wrong_check_digit_is_named():
    bad = [TD3_SPECIMEN[0], TD3_SPECIMEN[1][:19] + "7" + TD3_SPECIMEN[1][20:]]
    parsed = icao.parse(bad)
    assert not parsed.valid
    assert set(parsed.failed_checks) == {"birth_date", "composite"}


def test_not_an_mrz():
    assert icao.parse(["HELLO", "WORLD"]) is None
    assert icao.parse(["P<UTO" + "!" * 39, "L" * 44]) is None
