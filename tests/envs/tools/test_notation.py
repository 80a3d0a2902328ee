"""The shared before-phase normalisers, with notation as people type it."""

from datetime import date

import pytest

from envs.tools.notation import (
    normalize_choice,
    normalize_count,
    normalize_day,
    normalize_local_datetime,
    normalize_minutes,
    normalize_seconds,
    parse_day,
)

TODAY = date(2026, 3, 10)  # a Tuesday


@pytest.mark.parametrize(
    "raw, past, future",
    [
        ("вчера", date(2026, 3, 9), date(2026, 3, 9)),
        ("Позавчера", date(2026, 3, 8), date(2026, 3, 8)),
        ("завтра", date(2026, 3, 11), date(2026, 3, 11)),
        ("day after tomorrow", date(2026, 3, 12), date(2026, 3, 12)),
        ("22 августа", date(2025, 8, 22), date(2026, 8, 22)),
        ("5 Mar", date(2026, 3, 5), date(2027, 3, 5)),
        ("Aug 22", date(2025, 8, 22), date(2026, 8, 22)),
        ("March 12, 2026", date(2026, 3, 12), date(2026, 3, 12)),
        ("12 мая", date(2025, 5, 12), date(2026, 5, 12)),
        ("1 марта", date(2026, 3, 1), date(2027, 3, 1)),
        ("22.08", date(2025, 8, 22), date(2026, 8, 22)),
        ("22/08/26", date(2026, 8, 22), date(2026, 8, 22)),
        ("в пятницу", date(2026, 3, 6), date(2026, 3, 13)),
        ("on Friday", date(2026, 3, 6), date(2026, 3, 13)),
        ("во вторник", date(2026, 3, 3), date(2026, 3, 17)),
        ("2026-03-12", date(2026, 3, 12), date(2026, 3, 12)),
    ],
)
def test_days_read_relative_month_name_dotted_and_weekday_notation(raw, past, future):
    assert parse_day(raw, TODAY, "past") == past
    assert parse_day(raw, TODAY, "future") == future


@pytest.mark.parametrize("raw", ["когда-то", "31.02", "13.13.2026", "someday", ""])
def test_unreadable_days_pass_through_for_the_core_types_to_reject(raw):
    assert normalize_day(raw, TODAY, "past") == raw.strip()


@pytest.mark.parametrize(
    "raw, want",
    [
        ("завтра в 15:00", "2026-03-11T15:00"),
        ("12.03 3pm", "2026-03-12T15:00"),
        ("в четверг в 11:00", "2026-03-12T11:00"),
        ("12 марта в 15:30", "2026-03-12T15:30"),
        ("on Friday at 3:30 pm", "2026-03-13T15:30"),
        ("15:00 12 марта", "2026-03-12T15:00"),
        ("tomorrow at 9 am", "2026-03-11T09:00"),
        ("2026-03-12 15:00", "2026-03-12 15:00"),
    ],
)
def test_local_datetimes(raw, want):
    assert normalize_local_datetime(raw, TODAY) == want


@pytest.mark.parametrize("raw", ["12 марта", "в 25:00 завтра", "13pm tomorrow"])
def test_local_datetimes_without_a_readable_clock_pass_through(raw):
    assert normalize_local_datetime(raw, TODAY) == raw


@pytest.mark.parametrize(
    "raw, want",
    [
        ("1 час", 60),
        ("на час", 60),
        ("90 min", 90),
        ("1,5 h", 90),
        ("1h30", 90),
        ("полчаса", 30),
        ("полтора часа", 90),
        ("for an hour and a half", 90),
        ("45", 45),
        ("1:30", 90),
        (60, 60),
    ],
)
def test_minutes(raw, want):
    assert normalize_minutes(raw) == want


@pytest.mark.parametrize("raw, want", [("30s", 30), ("30 секунд", 30), ("2 min", 120), ("15", 15), (20, 20)])
def test_seconds(raw, want):
    assert normalize_seconds(raw) == want


@pytest.mark.parametrize(
    "raw, want", [("двое", 2), ("two", 2), ("2 adults", 2), ("одного ребёнка", 1), ("трое взрослых", 3), (1, 1)]
)
def test_counts(raw, want):
    assert normalize_count(raw) == want


def test_choices_in_any_case_and_synonyms():
    aliases = {"эконом": "economy"}
    assert normalize_choice("Эконом", aliases) == "economy"
    assert normalize_choice(" ECONOMY ", aliases) == "economy"
    assert normalize_choice("Not Received", aliases) == "not_received"
    assert normalize_choice(5, aliases) == 5
