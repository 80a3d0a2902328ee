"""Field types of the tool contracts that carry their before phase: a core type plus the notation
normaliser (`envs.tools.notation`) that repairs what people type, unless the contract is strict.

A field declares its type and nothing else: `date_from: PastDay | None = Field(None, ...)`. The
normaliser wraps the core type only, so the JSON schema the model sees is the core type's.
"""

from __future__ import annotations

import datetime as dt
import functools
from typing import Annotated

from pydantic import BeforeValidator

from envs.tools.notation import (
    normalize_choice,
    normalize_count,
    normalize_day,
    normalize_local_datetime,
    normalize_minutes,
    normalize_seconds,
)
from envs.validation import normalised, normalised_on_day


def choice(aliases: dict[str, str]) -> BeforeValidator:
    """A Literal field's before phase: any case and spacing, and the synonyms people type."""
    return normalised(functools.partial(normalize_choice, aliases=aliases))


# a day the customer speaks of: "вчера", "22.08", "Aug 22", "пятница" (the last one before today)
PastDay = Annotated[dt.date, normalised_on_day(lambda v, today: normalize_day(v, today, "past"))]
# a day to come: "завтра", "12.03", "Friday" (the next one after today)
FutureDay = Annotated[dt.date, normalised_on_day(lambda v, today: normalize_day(v, today, "future"))]
# "завтра в 15:00", "12.03 3pm" -> a wall-clock datetime
LocalDateTime = Annotated[dt.datetime, normalised_on_day(normalize_local_datetime)]
# "двое", "two", "2 adults"
Count = Annotated[int, normalised(normalize_count)]
# "1 час", "90 min", "полчаса"
Minutes = Annotated[int, normalised(normalize_minutes)]
# "30s", "2 min"
Seconds = Annotated[int, normalised(normalize_seconds)]
