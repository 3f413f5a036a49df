"""Unit tests of the monitors' schedules: the names, and the next run of every schedule at the edges of weeks,
months, quarters, leap years and changes of daylight saving time (plain values, no database).

Calendar facts the expected values rely on: 2027-01-01 is a Friday, so 2027-01-04 is a Monday; 2027 is not a
leap year and 2028 is, with 2028-02-29 a Tuesday. In 2027, Europe/London goes to summer time on Sunday
28 March (01:00 GMT -> 02:00 BST) and back on Sunday 31 October (02:00 BST -> 01:00 GMT); America/New_York on
Sunday 14 March (02:00 EST -> 03:00 EDT) and back on Sunday 7 November (02:00 EDT -> 01:00 EST);
Australia/Sydney back on Sunday 4 April (03:00 AEDT -> 02:00 AEST) and forward on Sunday 3 October
(02:00 AEST -> 03:00 AEDT).
"""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from app.monitors.schedules import SCHEDULES, next_run_at, schedule_name


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=timezone.utc)


def local(tz: str, year: int, month: int, day: int, hour: int = 0, minute: int = 0, fold: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=ZoneInfo(tz), fold=fold)


# --- names ---------------------------------------------------------------------------------------------------


def test_schedules_are_the_fifteen_values_in_order():
    assert list(SCHEDULES) == ["manual", "every_day", "weekdays", "weekends", "monday", "tuesday", "wednesday",
                               "thursday", "friday", "saturday", "sunday", "monthly_1", "monthly_15", "monthly_1_15",
                               "quarterly"]
    assert all(isinstance(name, str) and name for name in SCHEDULES.values())
    assert len(set(SCHEDULES.values())) == 15


def test_schedule_name():
    assert schedule_name("manual") == "Manual only"
    assert schedule_name("every_day") == "Every day"
    assert schedule_name("weekdays") == "Weekdays (Monday to Friday)"
    assert schedule_name("weekends") == "Weekends (Saturday and Sunday)"
    assert schedule_name("monday") == "Every Monday"
    assert schedule_name("sunday") == "Every Sunday"
    assert schedule_name("monthly_1") == "Monthly on the 1st"
    assert schedule_name("monthly_15") == "Monthly on the 15th"
    assert schedule_name("monthly_1_15") == "Monthly on the 1st and 15th"
    assert schedule_name("quarterly") == "Quarterly (1 January, 1 April, 1 July, 1 October)"
    assert schedule_name("hourly") is None
    assert schedule_name("") is None
    assert schedule_name("Monday") is None


# --- every schedule from a Monday, a Friday and a Sunday (UTC, the default 02:00) --------------------------

# The expected dates of the next run, at 02:00 UTC, after 03:00 UTC on the day named (that day's run is past).
AFTER_MONDAY_4_JAN = {
    "every_day": date(2027, 1, 5), "weekdays": date(2027, 1, 5), "weekends": date(2027, 1, 9),
    "monday": date(2027, 1, 11), "tuesday": date(2027, 1, 5), "wednesday": date(2027, 1, 6),
    "thursday": date(2027, 1, 7), "friday": date(2027, 1, 8), "saturday": date(2027, 1, 9),
    "sunday": date(2027, 1, 10), "monthly_1": date(2027, 2, 1), "monthly_15": date(2027, 1, 15),
    "monthly_1_15": date(2027, 1, 15), "quarterly": date(2027, 4, 1),
}
AFTER_FRIDAY_8_JAN = {
    "every_day": date(2027, 1, 9), "weekdays": date(2027, 1, 11), "weekends": date(2027, 1, 9),
    "monday": date(2027, 1, 11), "tuesday": date(2027, 1, 12), "wednesday": date(2027, 1, 13),
    "thursday": date(2027, 1, 14), "friday": date(2027, 1, 15), "saturday": date(2027, 1, 9),
    "sunday": date(2027, 1, 10), "monthly_1": date(2027, 2, 1), "monthly_15": date(2027, 1, 15),
    "monthly_1_15": date(2027, 1, 15), "quarterly": date(2027, 4, 1),
}
AFTER_SUNDAY_10_JAN = {
    "every_day": date(2027, 1, 11), "weekdays": date(2027, 1, 11), "weekends": date(2027, 1, 16),
    "monday": date(2027, 1, 11), "tuesday": date(2027, 1, 12), "wednesday": date(2027, 1, 13),
    "thursday": date(2027, 1, 14), "friday": date(2027, 1, 15), "saturday": date(2027, 1, 16),
    "sunday": date(2027, 1, 17), "monthly_1": date(2027, 2, 1), "monthly_15": date(2027, 1, 15),
    "monthly_1_15": date(2027, 1, 15), "quarterly": date(2027, 4, 1),
}


@pytest.mark.parametrize("after, expected", [
    (utc(2027, 1, 4, 3), AFTER_MONDAY_4_JAN),
    (utc(2027, 1, 8, 3), AFTER_FRIDAY_8_JAN),
    (utc(2027, 1, 10, 3), AFTER_SUNDAY_10_JAN),
], ids=["monday", "friday", "sunday"])
def test_every_schedule_from_a_monday_a_friday_and_a_sunday(after, expected):
    assert set(expected) == set(SCHEDULES) - {"manual"}
    for schedule, day in expected.items():
        run = next_run_at(schedule, after)
        assert run == utc(day.year, day.month, day.day, 2), schedule
        assert run.utcoffset() == timedelta(0)
    assert next_run_at("manual", after) is None


def test_before_the_run_time_the_same_day_runs():
    after = utc(2027, 1, 10, 1, 59)  # a Sunday, a minute before its run
    assert next_run_at("every_day", after) == utc(2027, 1, 10, 2)
    assert next_run_at("weekends", after) == utc(2027, 1, 10, 2)
    assert next_run_at("sunday", after) == utc(2027, 1, 10, 2)
    assert next_run_at("weekdays", after) == utc(2027, 1, 11, 2)
    assert next_run_at("saturday", after) == utc(2027, 1, 16, 2)


def test_after_exactly_at_a_run_gives_the_next_one():
    run = utc(2027, 1, 4, 2)  # Monday 4 January 2027, 02:00 UTC
    assert next_run_at("every_day", run) == utc(2027, 1, 5, 2)
    assert next_run_at("weekdays", run) == utc(2027, 1, 5, 2)
    assert next_run_at("monday", run) == utc(2027, 1, 11, 2)
    assert next_run_at("monday", run - timedelta(microseconds=1)) == run
    assert next_run_at("monthly_15", utc(2027, 1, 15, 2)) == utc(2027, 2, 15, 2)
    assert next_run_at("quarterly", utc(2027, 1, 1, 2)) == utc(2027, 4, 1, 2)


def test_local_time_of_day_is_respected():
    after = utc(2027, 1, 4, 3)
    assert next_run_at("every_day", after, local_hour=23, local_minute=45) == utc(2027, 1, 4, 23, 45)
    assert next_run_at("every_day", after, local_hour=0, local_minute=0) == utc(2027, 1, 5, 0, 0)
    assert next_run_at("monday", after, local_hour=3, local_minute=1) == utc(2027, 1, 4, 3, 1)
    assert next_run_at("monday", after, local_hour=3, local_minute=0) == utc(2027, 1, 11, 3, 0)


def test_an_after_in_another_offset_is_the_same_instant():
    after = datetime(2027, 1, 4, 8, 0, tzinfo=timezone(timedelta(hours=5)))  # 03:00 UTC
    run = next_run_at("every_day", after)
    assert run == utc(2027, 1, 5, 2)
    assert run.utcoffset() == timedelta(0)


# --- month ends, leap years, quarters -------------------------------------------------------------------------


def test_month_ends():
    assert next_run_at("monthly_1", utc(2027, 1, 31, 10)) == utc(2027, 2, 1, 2)
    assert next_run_at("monthly_15", utc(2027, 1, 15, 2)) == utc(2027, 2, 15, 2)
    assert next_run_at("monthly_15", utc(2027, 1, 16)) == utc(2027, 2, 15, 2)
    assert next_run_at("monthly_1_15", utc(2027, 1, 15, 2)) == utc(2027, 2, 1, 2)
    assert next_run_at("monthly_1_15", utc(2027, 2, 1, 2)) == utc(2027, 2, 15, 2)
    # February of a common year: 28 days.
    assert next_run_at("every_day", utc(2027, 2, 28, 3)) == utc(2027, 3, 1, 2)
    assert next_run_at("monthly_1_15", utc(2027, 2, 15, 2)) == utc(2027, 3, 1, 2)
    # A 30-day month and a 31-day month.
    assert next_run_at("every_day", utc(2027, 4, 30, 3)) == utc(2027, 5, 1, 2)
    assert next_run_at("monthly_1", utc(2027, 4, 30, 3)) == utc(2027, 5, 1, 2)
    assert next_run_at("every_day", utc(2027, 5, 30, 3)) == utc(2027, 5, 31, 2)
    assert next_run_at("every_day", utc(2027, 5, 31, 3)) == utc(2027, 6, 1, 2)
    assert next_run_at("monthly_1", utc(2027, 5, 31, 3)) == utc(2027, 6, 1, 2)
    # The end of the year.
    assert next_run_at("every_day", utc(2027, 12, 31, 3)) == utc(2028, 1, 1, 2)
    assert next_run_at("monthly_1", utc(2027, 12, 31, 3)) == utc(2028, 1, 1, 2)
    assert next_run_at("monthly_15", utc(2027, 12, 15, 3)) == utc(2028, 1, 15, 2)


def test_leap_year():
    assert next_run_at("every_day", utc(2028, 2, 28, 3)) == utc(2028, 2, 29, 2)
    assert next_run_at("tuesday", utc(2028, 2, 28, 3)) == utc(2028, 2, 29, 2)  # 29 February 2028 is a Tuesday
    assert next_run_at("weekdays", utc(2028, 2, 28, 3)) == utc(2028, 2, 29, 2)
    assert next_run_at("every_day", utc(2028, 2, 29, 3)) == utc(2028, 3, 1, 2)
    assert next_run_at("wednesday", utc(2028, 2, 29, 3)) == utc(2028, 3, 1, 2)
    assert next_run_at("monthly_1", utc(2028, 2, 15, 3)) == utc(2028, 3, 1, 2)
    assert next_run_at("monthly_1", utc(2028, 2, 28, 3)) == utc(2028, 3, 1, 2)
    assert next_run_at("monthly_1", utc(2028, 2, 29, 3)) == utc(2028, 3, 1, 2)
    assert next_run_at("monthly_15", utc(2028, 2, 15, 3)) == utc(2028, 3, 15, 2)
    assert next_run_at("quarterly", utc(2027, 11, 15)) == utc(2028, 1, 1, 2)
    assert next_run_at("quarterly", utc(2028, 2, 29, 3)) == utc(2028, 4, 1, 2)


def test_quarter_boundaries_in_local_time():
    london = "Europe/London"
    # 1 April 02:00 BST is 01:00 UTC; 1 January 02:00 GMT is 02:00 UTC.
    assert next_run_at("quarterly", utc(2027, 3, 31, 12), tz=london) == utc(2027, 4, 1, 1)
    assert next_run_at("quarterly", local(london, 2027, 4, 1, 2), tz=london) == utc(2027, 7, 1, 1)
    assert next_run_at("quarterly", local(london, 2027, 7, 1, 2), tz=london) == utc(2027, 10, 1, 1)
    assert next_run_at("quarterly", local(london, 2027, 10, 1, 2), tz=london) == utc(2028, 1, 1, 2)
    assert next_run_at("quarterly", local(london, 2028, 1, 1, 2), tz=london) == utc(2028, 4, 1, 1)
    # A minute before the run of 1 April, that run is next.
    assert next_run_at("quarterly", local(london, 2027, 4, 1, 1, 59), tz=london) == utc(2027, 4, 1, 1)


# --- daylight saving time -------------------------------------------------------------------------------------


def test_london_spring_forward_runs_a_nonexistent_time_after_the_gap():
    # Sunday 28 March 2027: 01:00 GMT becomes 02:00 BST, so 01:30 local does not exist; it runs at 02:30 BST.
    london = dict(tz="Europe/London", local_hour=1, local_minute=30)
    assert next_run_at("every_day", utc(2027, 3, 27), **london) == utc(2027, 3, 27, 1, 30)
    assert next_run_at("every_day", utc(2027, 3, 27, 12), **london) == utc(2027, 3, 28, 1, 30)
    assert next_run_at("sunday", utc(2027, 3, 22), **london) == utc(2027, 3, 28, 1, 30)
    assert utc(2027, 3, 28, 1, 30).astimezone(ZoneInfo("Europe/London")).hour == 2
    assert next_run_at("every_day", utc(2027, 3, 28, 1, 30), **london) == utc(2027, 3, 29, 0, 30)
    # The default 02:00 exists that day (the clocks jump to it): 01:00 UTC.
    assert next_run_at("every_day", utc(2027, 3, 27, 12), tz="Europe/London") == utc(2027, 3, 28, 1)


def test_london_fall_back_runs_an_ambiguous_time_once_at_its_first_occurrence():
    # Sunday 31 October 2027: 02:00 BST becomes 01:00 GMT, so 01:30 local happens at 00:30 and at 01:30 UTC.
    london = dict(tz="Europe/London", local_hour=1, local_minute=30)
    assert next_run_at("every_day", utc(2027, 10, 30, 12), **london) == utc(2027, 10, 31, 0, 30)
    assert next_run_at("sunday", utc(2027, 10, 25), **london) == utc(2027, 10, 31, 0, 30)
    # The second occurrence is not a run: after the first, or between the two, the next run is Monday's.
    assert next_run_at("every_day", utc(2027, 10, 31, 0, 30), **london) == utc(2027, 11, 1, 1, 30)
    assert next_run_at("every_day", utc(2027, 10, 31, 1), **london) == utc(2027, 11, 1, 1, 30)
    assert next_run_at("sunday", utc(2027, 10, 31, 0, 30), **london) == utc(2027, 11, 7, 1, 30)


def test_new_york_spring_forward_and_fall_back():
    ny = dict(tz="America/New_York", local_hour=2, local_minute=30)
    # Sunday 14 March 2027: 02:30 does not exist; it runs at 03:30 EDT, 07:30 UTC.
    assert next_run_at("every_day", utc(2027, 3, 13, 12), **ny) == utc(2027, 3, 14, 7, 30)  # 02:30 EST the day before
    assert next_run_at("every_day", utc(2027, 3, 13, 6), **ny) == utc(2027, 3, 13, 7, 30)
    assert next_run_at("sunday", utc(2027, 3, 8), **ny) == utc(2027, 3, 14, 7, 30)
    assert next_run_at("every_day", utc(2027, 3, 14, 7, 30), **ny) == utc(2027, 3, 15, 6, 30)  # 02:30 EDT
    # Sunday 7 November 2027: 01:30 happens at 05:30 UTC (EDT) and at 06:30 UTC (EST); it runs at the first.
    ny = dict(tz="America/New_York", local_hour=1, local_minute=30)
    assert next_run_at("every_day", utc(2027, 11, 6, 12), **ny) == utc(2027, 11, 7, 5, 30)
    assert next_run_at("every_day", utc(2027, 11, 7, 5, 30), **ny) == utc(2027, 11, 8, 6, 30)
    assert next_run_at("every_day", utc(2027, 11, 7, 6), **ny) == utc(2027, 11, 8, 6, 30)


def test_sydney_southern_hemisphere():
    sydney = "Australia/Sydney"
    # Sunday 3 October 2027: 02:00 AEST becomes 03:00 AEDT, so the default 02:00 runs at 03:00 AEDT (16:00 UTC on
    # the 2nd) and 02:30 at 03:30 AEDT.
    assert next_run_at("every_day", utc(2027, 10, 1, 12), tz=sydney) == utc(2027, 10, 1, 16)  # 2 Oct, 02:00 AEST
    assert next_run_at("every_day", utc(2027, 10, 1, 16), tz=sydney) == utc(2027, 10, 2, 16)
    assert next_run_at("sunday", utc(2027, 9, 28), tz=sydney) == utc(2027, 10, 2, 16)
    assert next_run_at("sunday", utc(2027, 9, 28), tz=sydney, local_minute=30) == utc(2027, 10, 2, 16, 30)
    assert utc(2027, 10, 2, 16, 30).astimezone(ZoneInfo(sydney)) == local(sydney, 2027, 10, 3, 3, 30)
    assert next_run_at("every_day", utc(2027, 10, 2, 16), tz=sydney) == utc(2027, 10, 3, 15)  # 4 Oct, 02:00 AEDT
    # Sunday 4 April 2027: 03:00 AEDT becomes 02:00 AEST, so 02:30 happens twice; it runs at the first (AEDT).
    assert next_run_at("sunday", utc(2027, 3, 29), tz=sydney, local_minute=30) == utc(2027, 4, 3, 15, 30)
    assert next_run_at("every_day", utc(2027, 4, 3, 15, 30), tz=sydney, local_minute=30) == utc(2027, 4, 4, 16, 30)


def test_the_local_day_decides_not_the_utc_day():
    sydney = "Australia/Sydney"
    # Monday 7 June 2027, 02:00 AEST (UTC+10) is Sunday 6 June, 16:00 UTC.
    assert next_run_at("monday", utc(2027, 6, 1), tz=sydney) == utc(2027, 6, 6, 16)
    assert next_run_at("monday", utc(2027, 6, 6, 15), tz=sydney) == utc(2027, 6, 6, 16)  # Monday 01:00 local
    assert next_run_at("monday", utc(2027, 6, 6, 16), tz=sydney) == utc(2027, 6, 13, 16)
    assert next_run_at("weekdays", utc(2027, 6, 4, 17), tz=sydney) == utc(2027, 6, 6, 16)  # after Friday's run
    assert next_run_at("sunday", utc(2027, 6, 6, 10), tz=sydney) == utc(2027, 6, 12, 16)  # after Sunday's run
    assert next_run_at("monthly_1", utc(2027, 6, 1), tz=sydney) == utc(2027, 6, 30, 16)  # 1 July, 02:00 local
    # West of UTC the other way: Friday 8 January 2027, 20:00 in Los Angeles (UTC-8) is Saturday 04:00 UTC.
    la = dict(tz="America/Los_Angeles", local_hour=20)
    assert next_run_at("friday", utc(2027, 1, 8, 12), **la) == utc(2027, 1, 9, 4)
    assert next_run_at("weekdays", utc(2027, 1, 9, 4), **la) == utc(2027, 1, 12, 4)  # Monday 11th, 20:00 local
    assert next_run_at("saturday", utc(2027, 1, 9, 4), **la) == utc(2027, 1, 10, 4)


# --- errors ----------------------------------------------------------------------------------------------------


def test_manual_has_no_run():
    assert next_run_at("manual", utc(2027, 1, 4)) is None
    assert next_run_at("manual", utc(2027, 1, 4), tz="Europe/London") is None


@pytest.mark.parametrize("schedule", ["hourly", "", "Monday", "monthly_31", "every day"])
def test_unknown_schedule_is_an_error(schedule):
    with pytest.raises(ValueError):
        next_run_at(schedule, utc(2027, 1, 4))


@pytest.mark.parametrize("schedule", ["every_day", "manual"])
def test_naive_after_is_an_error(schedule):
    with pytest.raises(ValueError):
        next_run_at(schedule, datetime(2027, 1, 4, 3))


@pytest.mark.parametrize("tz", ["Mars/Olympus_Mons", "utc", "", "../etc/passwd"])
def test_unknown_time_zone_is_an_error(tz):
    with pytest.raises(ValueError):
        next_run_at("every_day", utc(2027, 1, 4), tz=tz)


@pytest.mark.parametrize("hour, minute", [(24, 0), (-1, 0), (2, 60)])
def test_time_of_day_out_of_range_is_an_error(hour, minute):
    with pytest.raises(ValueError):
        next_run_at("every_day", utc(2027, 1, 4), local_hour=hour, local_minute=minute)


# --- a year of runs ---------------------------------------------------------------------------------------------


def test_a_year_of_daily_runs_in_london_is_one_run_a_day_at_0200_local():
    london = ZoneInfo("Europe/London")
    runs = []
    after = utc(2027, 1, 1)
    for _ in range(366):
        after = next_run_at("every_day", after, tz="Europe/London")
        runs.append(after)
    days = [run.astimezone(london).date() for run in runs]
    assert days == [date(2027, 1, 1) + timedelta(days=n) for n in range(366)]  # 2027-01-01 to 2028-01-01
    assert len(set(days)) == 366
    assert all((run.astimezone(london).hour, run.astimezone(london).minute) == (2, 0) for run in runs)
    assert all(run.utcoffset() == timedelta(0) for run in runs)
    assert runs == sorted(runs)
    # 02:00 BST (01:00 UTC) from 28 March to 30 October, 02:00 GMT otherwise.
    assert runs[days.index(date(2027, 3, 27))] == utc(2027, 3, 27, 2)
    assert runs[days.index(date(2027, 3, 28))] == utc(2027, 3, 28, 1)
    assert runs[days.index(date(2027, 10, 30))] == utc(2027, 10, 30, 1)
    assert runs[days.index(date(2027, 10, 31))] == utc(2027, 10, 31, 2)


def test_chained_weekly_runs_step_a_week_at_a_time_across_both_changes():
    ny = "America/New_York"
    after = utc(2027, 3, 1)
    runs = []
    while after < utc(2027, 12, 1):
        after = next_run_at("sunday", after, tz=ny, local_hour=2, local_minute=30)
        runs.append(after)
    local_runs = [run.astimezone(ZoneInfo(ny)) for run in runs]
    assert all(run.weekday() == 6 for run in local_runs)
    assert [b.date() - a.date() for a, b in zip(local_runs, local_runs[1:])] == [timedelta(days=7)] * (len(runs) - 1)
    # 14 March runs at 03:30 EDT (the gap), every other Sunday at 02:30.
    assert [(run.date(), run.hour, run.minute) for run in local_runs if (run.hour, run.minute) != (2, 30)] == \
        [(date(2027, 3, 14), 3, 30)]
