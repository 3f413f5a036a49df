"""The portal's counted words: the pagination's "1–30 of 45 deliveries" / "1 delivery" take the singular of the
plural the template gives."""
from __future__ import annotations

import pytest

from app.portal import count_of, singular


@pytest.mark.parametrize("plural, one", [("deliveries", "delivery"), ("entries", "entry"), ("entities", "entity"),
                                         ("IDPasses", "IDPass"), ("matches", "match"), ("checks", "check"),
                                         ("events", "event"), ("programs", "program")])
def test_singular_of_the_plurals_the_pages_use(plural, one):
    assert singular(plural) == one
    assert count_of(1, singular(plural), plural) == f"1 {one}"
    assert count_of(1200, singular(plural), plural) == f"1,200 {plural}"
