"""Suite `tools-calendar`: create, move and cancel meetings across time zones and rooms."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from envs.contract import ToolCall
from envs.tools.calendar.backend import CalendarService
from envs.tools.calendar.contract import CancelMeetingInput, CreateMeetingInput, ListMeetingsInput, MoveMeetingInput
from envs.tools.calendar.phrasing import customer
from envs.tools.calendar.world import ROOMS, ZONES, CalendarWorld, make_calendar_world
from envs.tools.case import Case, domain_case
from envs.tools.suite import ToolsSuite
from envs.tools.tooling import Tool

SYSTEM = (
    "You are the scheduling assistant of a busy person (the principal), chatting with them. You act only "
    "through the tools you are given; a reply without a tool call is sent to the principal. If you need "
    "something they have not told you, ask them."
)


def _allowed(cal: CalendarService, field: str) -> list[str]:
    if field == "timezone":
        return list(ZONES)
    if field == "room":
        return list(ROOMS)
    if field == "meeting_id":
        return [m.meeting_id for m in cal.meetings if m.status == "active"]
    if field == "duration_min":
        return ["15..480"]
    if field == "start":
        return [f"> {cal.now.strftime('%Y-%m-%dT%H:%M')} ({cal.world.home})"]
    return []


def tools(cal: CalendarService) -> list[Tool]:
    def allowed(f: str) -> list[str]:
        return _allowed(cal, f)

    def ids() -> dict[str, list[str]]:
        return {"meeting_id": _allowed(cal, "meeting_id")}

    return [
        Tool(
            "list_meetings",
            "List the principal's meetings on one day.",
            ListMeetingsInput,
            cal.list,
            allowed_for=allowed,
        ),
        Tool(
            "create_meeting",
            "Put a new meeting in the principal's calendar and book its room.",
            CreateMeetingInput,
            cal.create,
            write=True,
            slots={
                "start": ("time",),
                "timezone": ("time",),
                "duration_min": ("duration",),
                "room": ("room",),
                "attendees": ("room",),
            },
            allowed_for=allowed,
        ),
        Tool(
            "move_meeting",
            "Move a meeting to a new start (and optionally another room).",
            MoveMeetingInput,
            cal.move,
            write=True,
            slots={"meeting_id": ("meeting",), "start": ("time",), "timezone": ("time",)},
            allowed_for=allowed,
            enums=ids,
        ),
        Tool(
            "cancel_meeting",
            "Cancel a meeting.",
            CancelMeetingInput,
            cal.cancel,
            write=True,
            slots={"meeting_id": ("meeting",)},
            allowed_for=allowed,
            enums=ids,
        ),
    ]


def gold_calls(w: CalendarWorld) -> list[ToolCall]:
    start = w.start.astimezone(ZoneInfo(w.zone)).strftime("%Y-%m-%dT%H:%M")
    if w.kind == "create":
        return [
            ToolCall(
                name="create_meeting",
                arguments={
                    "title": w.title,
                    "start": start,
                    "timezone": w.zone,
                    "duration_min": w.duration,
                    "room": w.room,
                    "attendees": w.attendees,
                },
            )
        ]
    if w.kind == "move":
        return [ToolCall(name="move_meeting", arguments={"meeting_id": w.target, "start": start, "timezone": w.zone})]
    return [ToolCall(name="cancel_meeting", arguments={"meeting_id": w.target})]


def build(seed: int) -> Case:
    w = make_calendar_world(seed)
    cal = CalendarService(w)
    return domain_case(
        "calendar",
        w,
        SYSTEM,
        f"Now: {w.now.strftime('%Y-%m-%d %H:%M')} ({w.now:%A}), the principal's time zone: {w.home}.",
        customer(w),
        tools=tools(cal),
        context={"today": w.today, "calendar": cal},
        state=cal.state,
        gold_calls=gold_calls(w),
    )


class CalendarTools(ToolsSuite):
    name = "tools-calendar"
    prefix = "calendar"
    seed_base = 7_300_000
    build = staticmethod(build)
