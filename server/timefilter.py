"""`updated_within`: a recent-changes filter a chatbot can pass straight from what the user said.

    "7d", "36h", "2w", "last 3 days", "past 24 hours"   a span ending now
    "today", "yesterday"                                 calendar days
    "this week", "last week"                             ISO weeks (Monday to Sunday)
    "this weekend", "last weekend"                       Saturday and Sunday: this one while it lasts, else
                                                         the latest one; "last weekend" the one before this week
    "this month", "last month", "this year", "last year"

Calendar phrases are read in the request's `timezone` (an IANA name such as "Europe/Berlin";
UTC by default), so "today" is the user's today. The result is a half-open range
[after, before) of aware datetimes; `before` is None when the range runs to now.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from server.service import ServiceError

UNITS = {"h": "hours", "hour": "hours", "hours": "hours", "d": "days", "day": "days", "days": "days", "w": "weeks", "week": "weeks", "weeks": "weeks"}
SPAN = re.compile(r"^(?:(?:last|past)\s+)?([0-9]{1,5})\s*(h|hours?|d|days?|w|weeks?)$")
PHRASES = ("today", "yesterday", "this week", "last week", "this weekend", "last weekend", "this month", "last month", "this year", "last year")
# What /schema promises (lowercase, single spaces; the parser is more forgiving)
UPDATED_WITHIN_PATTERN = r"^((last |past )?[1-9][0-9]{0,4} ?(h|hours?|d|days?|w|weeks?)|" + "|".join(PHRASES) + ")$"
ACCEPTED = 'a span such as "7d", "24h", "2w" or "last 3 days", or one of: ' + ", ".join(f'"{p}"' for p in PHRASES)
UPDATED_WITHIN_DESCRIPTION = ", ".join(f'"{p}"' for p in ("7d", "24h", "last 3 days", *PHRASES[:-1])) + f' or "{PHRASES[-1]}"'  # /schema's description


def zone(name: str | None) -> tzinfo:
    if not name:
        return timezone.utc
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ServiceError("INVALID_REQUEST", f"timezone: unknown time zone {name!r}; use an IANA name such as 'Europe/Berlin'", 400) from None


def updated_range(within: str, now: datetime, tz: tzinfo = timezone.utc) -> tuple[datetime, datetime | None]:
    """The [after, before) range `within` names, as of `now` (aware)."""
    text = " ".join(within.lower().split())
    span = SPAN.match(text)
    if span:
        amount = int(span.group(1))
        if amount == 0:
            raise ServiceError("INVALID_REQUEST", f"filters.updated_within: {within!r} is an empty span", 400)
        return now - timedelta(**{UNITS[span.group(2)]: amount}), None
    local = now.astimezone(tz)
    day = local.replace(hour=0, minute=0, second=0, microsecond=0)
    week = day - timedelta(days=day.weekday())
    weekend_before = (shift_days(week, -2), week)  # the Saturday and Sunday before this week's Monday
    month = day.replace(day=1)
    year = month.replace(month=1)
    ranges = {
        "today": (day, None),
        "yesterday": (shift_days(day, -1), day),
        "this week": (week, None),
        "last week": (shift_days(week, -7), week),
        "this weekend": (shift_days(week, 5), None) if day.weekday() >= 5 else weekend_before,
        "last weekend": weekend_before,
        "this month": (month, None),
        "last month": (_previous_month(month), month),
        "this year": (year, None),
        "last year": (year.replace(year=year.year - 1), year),
    }
    if text not in ranges:
        raise ServiceError("INVALID_REQUEST", f"filters.updated_within: {within!r} is not understood; use {ACCEPTED}", 400)
    after, before = ranges[text]
    return exact(after, tz), exact(before, tz) if before is not None else None


def intersect(after: datetime | None, before: datetime | None, window: tuple[datetime, datetime | None]) -> tuple[datetime | None, datetime | None]:
    """Both constraints at once: the later start and the earlier end."""
    start, end = window
    after = start if after is None else max(_aware(after), start)
    if end is not None:
        before = end if before is None else min(_aware(before), end)
    return after, before


def shift_days(moment: datetime, days: int) -> datetime:
    return (moment.replace(tzinfo=None) + timedelta(days=days)).replace(tzinfo=moment.tzinfo)


def _previous_month(first: datetime) -> datetime:
    return first.replace(year=first.year - 1, month=12) if first.month == 1 else first.replace(month=first.month - 1)


def exact(local_midnight: datetime, tz: tzinfo) -> datetime:
    """A wall-clock time in `tz` as a UTC instant (a day that starts after a DST change keeps its own offset)."""
    return local_midnight.replace(tzinfo=None).replace(tzinfo=tz).astimezone(timezone.utc)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)
