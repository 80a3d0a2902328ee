"""tools-calendar: zones, rooms, overlap rules and the tasks."""

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest

from envs.tools.calendar.contract import normalize_meeting, normalize_room, normalize_zone
from envs.tools.calendar.domain import CalendarTools
from envs.tools.calendar.phrasing import ROOM_RU, ZONE_WORDS
from envs.tools.calendar.world import ROOMS, busy
from tests.envs.tools.tools_agents import call, every_task_solved, find_env

SUITE = CalendarTools()
OPTS = SUITE.options_model(faults=0.0)


@pytest.mark.parametrize(
    "raw, zone",
    [
        ("МСК", "Europe/Moscow"),
        ("по Москве", "Europe/Moscow"),
        ("utc+3", "Europe/Moscow"),
        ("по Лондону", "Europe/London"),
        ("europe/london", "Europe/London"),
        ("JST", "Asia/Tokyo"),
        ("ET", "America/New_York"),
        ("по ЕКБ", "Asia/Yekaterinburg"),
        ("GMT", "UTC"),
        ("Asia/Dubai", "Asia/Dubai"),
    ],
)
def test_time_zones_as_people_name_them(raw, zone):
    assert normalize_zone(raw) == zone


def test_every_zone_phrase_the_principal_uses_is_understood():
    for zone, (ru, en) in ZONE_WORDS.items():
        assert {normalize_zone(p) for p in ru + en} == {zone}


@pytest.mark.parametrize(
    "raw, room",
    [
        ("переговорка Нева", "Neva"),
        ("«Волга»", "Volga"),
        ("room baikal", "Baikal"),
        ("URAL", "Ural"),
        ("в Лене", "в Лене"),
    ],
)
def test_rooms(raw, room):
    assert normalize_room(raw) == room


def test_room_names_in_russian():
    assert {normalize_room(ru) for ru in ROOM_RU.values()} == set(ROOMS)


@pytest.mark.parametrize("raw", ["MTG-7f3a", "mtg 7F3A", "7f3a", "mtg-7F3A"])
def test_meeting_ids(raw):
    assert normalize_meeting(raw) == "mtg-7F3A"


def _env(kind, **kw):
    return find_env(SUITE, OPTS, kind=kind, dialogue="single", **kw)


def _local(instant, zone):
    return instant.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%dT%H:%M")


def test_create_rules_past_capacity_busy_room_and_conflict():
    env = _env("create", pred=lambda e: e.case.context["calendar"].blocks)
    cal, gold = env.case.context["calendar"], dict(env.case.gold_calls[0].arguments)
    home = cal.world.home
    v = env.submit(
        call("create_meeting", **{**gold, "start": _local(cal.now - timedelta(hours=1), home), "timezone": home})
    )
    assert v.code == "start_in_past" and v.location == "arguments.start"
    v = env.submit(call("create_meeting", **{**gold, "room": "Neva", "attendees": 7}))
    assert v.code == "room_too_small" and v.location == "arguments.room" and "Neva" not in v.allowed
    assert all(ROOMS[r] >= 7 for r in v.allowed) and v.allowed
    block = next(
        b
        for b in cal.blocks
        if b.start > cal.now and not busy(cal.meetings, [], b.start, b.start + timedelta(minutes=15), None)
    )
    v = env.submit(
        call(
            "create_meeting",
            **{
                **gold,
                "start": _local(block.start, home),
                "timezone": home,
                "duration_min": 15,
                "room": block.room,
                "attendees": 1,
            },
        )
    )
    assert v.code == "room_busy" and block.room not in v.allowed
    m = next(x for x in cal.meetings if x.start > cal.now)
    free_room = next(r for r in ROOMS if not busy(cal.meetings, cal.blocks, m.start, m.end, r))
    v = env.submit(
        call(
            "create_meeting",
            **{**gold, "start": _local(m.start, "UTC"), "timezone": "UTC", "room": free_room, "attendees": 1},
        )
    )
    assert v.code == "calendar_conflict" and v.observed == _local(m.start, "UTC") and v.allowed
    assert all(a.startswith(_local(m.start, "UTC")[:10]) for a in v.allowed)


def test_absurd_years_are_a_violation_not_a_crash():
    env = _env("create")
    gold = dict(env.case.gold_calls[0].arguments)
    v = env.submit(call("create_meeting", **{**gold, "start": "9999-12-31T23:30", "timezone": "Asia/Tokyo"}))
    assert v.code == "start_out_of_range" and v.allowed == ["2000..2100"]


def test_the_same_instant_in_another_zone_is_the_same_meeting():
    env = _env("create")
    gold = dict(env.case.gold_calls[0].arguments)
    start = env.case.context["calendar"].world.start
    other = "Asia/Tokyo" if gold["timezone"] != "Asia/Tokyo" else "UTC"
    out = env.submit(call("create_meeting", **{**gold, "start": _local(start, other), "timezone": other}))
    assert out.won


def test_an_explicit_offset_wins_over_the_zone():
    env = _env("create")
    gold = dict(env.case.gold_calls[0].arguments)
    start = env.case.context["calendar"].world.start
    out = env.submit(call("create_meeting", **{**gold, "start": start.isoformat(), "timezone": "Asia/Tokyo"}))
    assert out.won


def test_move_keeps_length_and_room_and_a_wrong_time_diverges():
    env = _env("move")
    cal = env.case.context["calendar"]
    m = next(x for x in cal.meetings if x.meeting_id == env.case.gold_calls[0].arguments["meeting_id"])
    length, room = m.end - m.start, m.room
    assert env.submit(env.case.gold_calls[0]).won
    assert (m.end - m.start, m.room) == (length, room)
    env.reset()
    gold = dict(env.case.gold_calls[0].arguments)
    cal = env.case.context["calendar"]
    for hours in range(1, 48):  # a later free hour: valid, but not what was asked
        out = env.submit(
            call(
                "move_meeting",
                **{**gold, "start": _local(cal.world.start + timedelta(hours=hours), "UTC"), "timezone": "UTC"},
            )
        )
        if out.__class__.__name__ == "Accepted":
            break
    assert out.done and out.lost and env.record_extra()["end"] == "diverged"


def test_unknown_and_cancelled_meetings():
    env = _env("cancel")
    cal = env.case.context["calendar"]
    v = env.submit(call("cancel_meeting", meeting_id="mtg-ZZZZ"))
    assert v.code == "unknown_meeting" and set(v.allowed) == {m.meeting_id for m in cal.meetings}
    target = env.case.gold_calls[0].arguments["meeting_id"]
    next(m for m in cal.meetings if m.meeting_id == target).status = "cancelled"
    v = env.submit(call("move_meeting", meeting_id=target, start="2030-01-01T10:00", timezone="UTC"))
    assert v.code == "meeting_cancelled" and target not in v.allowed


def test_list_meetings_reads_the_day_in_the_given_zone():
    env = _env("cancel")
    cal = env.case.context["calendar"]
    m = next(x for x in cal.meetings if x.meeting_id == env.case.gold_calls[0].arguments["meeting_id"])
    day = m.start.astimezone(ZoneInfo("Asia/Tokyo")).date()
    out = env.submit(call("list_meetings", date=day.isoformat(), timezone="JST"))
    assert m.meeting_id in out.observation and _local(m.start, "Asia/Tokyo").replace("T", " ") in out.observation


def test_two_hundred_tasks_all_kinds_deterministic_and_each_solved_by_its_gold_calls():
    every_task_solved(SUITE, OPTS, {"create", "move", "cancel"})
