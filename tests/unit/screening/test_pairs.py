"""The score of `flask screening compare-pairs`: two names, nothing else known."""
from __future__ import annotations

from app.screening.pairs import UNALIGNED_SCALE, pair_score


def test_both_readings_count():
    # neither name is the query: the middle name of either side is explained the same way
    assert pair_score("Andrey SHEIN", "Andrey Borisovich SHEIN") == pair_score("Andrey Borisovich SHEIN", "Andrey SHEIN")
    assert pair_score("Andrey SHEIN", "Andrey Borisovich SHEIN") > 0.9


def test_a_name_written_as_several():
    assert pair_score("QASEM SOLEIMANI", "Haj Qasem; Haji Qassem; Sardar Soleimani") < 0.8
    assert pair_score("Haji Qassem", "Haj Qasem; Haji Qassem; Sardar Soleimani") == 1.0
    assert pair_score("AQAP", "AL-QAIDA IN THE ARABIAN PENINSULA (AQAP)", "Organization") == 1.0


def test_an_organization_meets_its_acronym():
    assert pair_score("NITC", "NATIONAL IRANIAN TANKER COMPANY", "Organization") >= 0.9
    assert pair_score("NITC", "NATIONAL IRANIAN TANKER COMPANY", "Person") < 0.5   # people have no acronyms


def test_names_sharing_no_part_stay_ranked_below_half():
    near = pair_score("ABWAKASI", "ABU WAQQAS BAKR")
    far = pair_score("MONIR CHOUKA", "Abu Adam")
    assert 0.0 <= far < near < UNALIGNED_SCALE
    assert pair_score("", "Abu Adam") == 0.0


def test_the_score_is_symmetric_and_deterministic():
    pairs = [("Kassem BAZZI", "Qasim Mohammed Ali BAZZI"), ("JOZA INDUSTRIES", "JOZA INDUSTRIAL COMPANY")]
    for a, b in pairs:
        assert pair_score(a, b) == pair_score(b, a) == pair_score(a, b)


def test_airplane_registrations_with_a_typo():
    assert pair_score("EP-MOM", "E-MOM", "Airplane") >= 0.8        # a letter dropped, hyphen apart
    assert pair_score("EP-MOM", "EP-MOC", "Airplane") < 0.8         # the last letter: another aircraft
    assert pair_score("YV2556", "YV2558", "Airplane") < 0.5         # numbers are equal or different
