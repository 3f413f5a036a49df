"""Dates of birth as the qualifier step compares them (pure Python): a listed or queried date at its precision
(year, month, day, or a range of years) and the outcome of comparing two. What each outcome adds to or takes
from the score is in `constants`.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DateValue:
    year: int
    month: int | None = None
    day: int | None = None
    year_to: int | None = None  # a range of years "1973..1974"

    @classmethod
    def parse(cls, iso: str) -> "DateValue | None":
        try:
            if ".." in iso:
                a, b = iso.split("..", 1)
                return cls(int(a[:4]), None, None, int(b[:4]))
            parts = iso.split("-")
            return cls(int(parts[0]), int(parts[1]) if len(parts) > 1 else None,
                       int(parts[2]) if len(parts) > 2 else None)
        except (ValueError, IndexError):
            return None


def compare_dates(q: DateValue, r: DateValue) -> tuple[str, int]:
    """("exact" | "year" | "day" | "near" | "conflict", year distance)."""
    if r.year_to is not None:
        lo, hi = r.year, r.year_to
        if lo <= q.year <= hi:
            return "year", 0
        dist = lo - q.year if q.year < lo else q.year - hi
        return ("near" if dist == 1 else "conflict"), dist
    dist = abs(q.year - r.year)
    if dist:
        return ("near" if dist == 1 else "conflict"), dist
    if q.month is None or r.month is None:
        return "year", 0
    if q.month != r.month:
        return "day", 0
    if q.day is None or r.day is None:
        return "year", 0
    return ("exact" if q.day == r.day else "day"), 0


DOB_RANK = {"exact": 0, "year": 1, "day": 2, "near": 3, "conflict": 4}
