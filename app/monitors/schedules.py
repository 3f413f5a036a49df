"""The schedules of monitors and the computation of their next run (plain Python: no Flask, no database).

A schedule names a set of calendar days in the account's time zone (an IANA name such as "Europe/London"), and
a monitor runs once on each of those days at one local wall time (02:00 unless told otherwise). `next_run_at()`
gives the first such run strictly after a given instant, as an aware UTC datetime; the caller stores it and
asks again from it once the run is done, so chaining the function walks the schedule one run at a time.

Daylight saving time:

- A local time that does not exist on a spring-forward day (02:30 in America/New_York on the second Sunday of
  March, when the clocks go from 02:00 to 03:00) runs at the first instant after the gap, that is the wall time
  shifted forward by the length of the gap: 03:30 local there. The day is not skipped.
- A local time that happens twice on a fall-back day (01:30 in America/New_York on the first Sunday of
  November) runs once, at its first occurrence (fold=0, still on summer time): 05:30 UTC there, not 06:30.

Each scheduled day thus yields exactly one run. Both rules are what Python gives for a wall time with fold=0
(PEP 495): a time in a gap is read with the offset in force before the gap, which is the same as moving it
forward by the gap, and a repeated time is read as its first occurrence.
"""
from __future__ import annotations

import calendar
from collections.abc import Callable
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

# The schedule values, in the order a form offers them, with the name shown to people.
SCHEDULES: dict[str, str] = {
    "manual": "Manual only",
    "every_day": "Every day",
    "weekdays": "Weekdays (Monday to Friday)",
    "weekends": "Weekends (Saturday and Sunday)",
    "monday": "Every Monday",
    "tuesday": "Every Tuesday",
    "wednesday": "Every Wednesday",
    "thursday": "Every Thursday",
    "friday": "Every Friday",
    "saturday": "Every Saturday",
    "sunday": "Every Sunday",
    "monthly_1": "Monthly on the 1st",
    "monthly_15": "Monthly on the 15th",
    "monthly_1_15": "Monthly on the 1st and 15th",
    "quarterly": "Quarterly (1 January, 1 April, 1 July, 1 October)",
}

_QUARTER_MONTHS = frozenset({1, 4, 7, 10})


def _on_weekday(weekday: int) -> Callable[[date], bool]:
    return lambda day: day.weekday() == weekday


# Whether a local calendar date is one of the schedule's days; every schedule but "manual" has one.
_RUNS_ON: dict[str, Callable[[date], bool]] = {
    "every_day": lambda day: True,
    "weekdays": lambda day: day.weekday() < calendar.SATURDAY,
    "weekends": lambda day: day.weekday() >= calendar.SATURDAY,
    "monday": _on_weekday(calendar.MONDAY),
    "tuesday": _on_weekday(calendar.TUESDAY),
    "wednesday": _on_weekday(calendar.WEDNESDAY),
    "thursday": _on_weekday(calendar.THURSDAY),
    "friday": _on_weekday(calendar.FRIDAY),
    "saturday": _on_weekday(calendar.SATURDAY),
    "sunday": _on_weekday(calendar.SUNDAY),
    "monthly_1": lambda day: day.day == 1,
    "monthly_15": lambda day: day.day == 15,
    "monthly_1_15": lambda day: day.day in (1, 15),
    "quarterly": lambda day: day.day == 1 and day.month in _QUARTER_MONTHS,
}

# The longest wait between two scheduled days is a quarter (at most 92 days); a year and a little more bounds
# the search with room to spare.
_MAX_DAYS = 370


def schedule_name(schedule: str) -> str | None:
    """The human-readable name of a schedule value, or None for a value that is not a schedule."""
    return SCHEDULES.get(schedule)


def _zone(tz: str) -> ZoneInfo:
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        # ZoneInfoNotFoundError is a KeyError; a malformed key ("", "../x") is a ValueError. Both are bad input.
        raise ValueError(f"unknown time zone: {tz!r}") from None


def next_run_at(schedule: str, after: datetime, *, tz: str = "UTC", local_hour: int = 2,
                local_minute: int = 0) -> datetime | None:
    """The first run of `schedule` strictly after the aware datetime `after`, as an aware UTC datetime.

    The schedule's days are calendar days in the time zone `tz`, and the run is at `local_hour:local_minute`
    local time on each of them (see the module docstring for the days around a change of daylight saving time).
    "manual" has no runs and gives None. Raises ValueError for an unknown schedule, a naive `after`, an unknown
    time zone or a time of day out of range.
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule: {schedule!r}")
    if after.tzinfo is None or after.utcoffset() is None:
        raise ValueError("after must be an aware datetime")
    zone = _zone(tz)
    wall_time = time(local_hour, local_minute)  # raises ValueError for an hour or minute out of range
    if schedule == "manual":
        return None
    runs_on = _RUNS_ON[schedule]
    # The search starts the day before `after`'s local date: a run moved forward across a gap at midnight
    # could fall on the next local date, and starting one day early costs one candidate.
    start = after.astimezone(zone).date() - timedelta(days=1)
    for offset in range(_MAX_DAYS + 1):
        day = start + timedelta(days=offset)
        if not runs_on(day):
            continue
        # fold=0: a wall time in a spring-forward gap is read with the offset before the gap (so it lands the
        # length of the gap later on the clock), and a repeated wall time as its first occurrence.
        run = datetime.combine(day, wall_time, tzinfo=zone).astimezone(timezone.utc)
        if run > after:
            return run
    raise AssertionError(f"no run of {schedule!r} within {_MAX_DAYS} days")  # unreachable: every schedule recurs
