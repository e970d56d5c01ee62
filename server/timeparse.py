"""Time phrases in a question ("what changed last week?") as an `updated_*` range.

`"parse_time": true` in a search request: the first phrase found becomes a half-open range
[after, before) in the request's time zone, is taken out of the text that is ranked, and is
echoed in the response's `time_filter`. Understood (English, case-insensitive):

    today, yesterday, this/last week, this/last weekend, over the weekend, this/last month, this/last year
    last/past N hours|days|weeks|months (a month: 30 days; also "in the last 3 days", "over the past two weeks", "last 24h")
                                N may be "a couple of" (3), "a few" (5) or "several" (7): read generously
    the past day|week|fortnight|month|year, in/over the last …, last fortnight
                                a span ending now: 24 hours, 7, 14, 30 or 365 days (a bare "last month" is the calendar's)
    N hours|days|weeks|months|years ago   that hour, day, calendar week (from Monday), month or year;
                                also "an hour ago", "a week ago"; "since …" and "a few days ago" from its start
    this morning|afternoon|evening, tonight   today
    yesterday morning|afternoon|evening|night   yesterday; "last night" from yesterday on
    this/last quarter, in Q1 … Q4 [2026]   (a quarter still to come this year means last year's)
    since the start of the week|month|year   this week, month, year
    since [last] Monday … Sunday | yesterday | October [5] | 5 October | 2026-10-05 | last week …
    on [last] Monday … Sunday, from last Monday …   that day (the latest such, today included; "last": before today)
    on October 5 | 5 October | the 5th of October [2026] | 2026-10-05   that day (one still to come this year: last year's)
    the day before yesterday    that day
    before|prior to / after October [5] [2026] | 2025 | 2026-10-05 | last Monday | last week …
                                up to its start / from its end ("after October": November on)
    since|after|before|until the <event> on October 5 | last Monday | in October [2026] | in 2025 | yesterday
                                from the start of that day, month or year / up to its end (the event lies inside it)
    in|during October [2026]   (a month still to come this year means last year's)
    in 2025
    early|mid|late October|2025, the beginning|middle|end of October|2025|last month|the year, the first|second half of …
                                a month's days 1-10, 11-20, 21 on (halves: 1-15, 16 on); a year's January-April,
                                May-August, September-December (halves: six months)
    the first|last week|fortnight|N days|N weeks of October|2025|this month …   those days of it
    between|from March [5] [2025] and|to|until May [2026] (days, months, years or 2026-03-05; to the end of the last)
    recently, lately            the last RECENT_DAYS days; so does "recent" before changes, updates, posts …
                                ("recent changes to the API": "recent" is the phrase, "changes" says it is about pages)

A question with nothing left but words like "what's new", "what changed", "updates" once the
phrase is out is only about time (`only_time`): it lists the documents updated in the range,
newest first. So does one with no phrase at all that asks for the newest ("what's new?", "latest
updates", "anything new?"): every document, newest first (no range; phrase NEWEST_PHRASE). In a question about something else, the phrase filters only when the question is
about change or about pages ("pricing updates this month", "blog posts about SSO last week"):
"are you open today?" and "I bought boots last week, what is the warranty?" tell of the asker's
day, not of when the pages were updated, and a filter would hide the answer. Nor does a span
tied to another time by "of", "before", "after" … ("the last 3 weeks of pregnancy", "the past month
before launch"): it does not end now ("the last week of October" is read as a part of October).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo

from server.timefilter import PHRASES, exact, shift_days, updated_range

RECENT_DAYS = 30
MONTHS = {m: i for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"), 1)}
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})
MONTHS["sept"] = 9
WEEKDAYS = {d: i for i, d in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))}
MONTH = "(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
WEEKDAY = "(?:" + "|".join(WEEKDAYS) + ")"
UNIT = r"(hours?|hrs?|h|days?|d|weeks?|wks?|w|months?)"
UNIT_NAMES = {"h": "hour", "d": "day", "w": "week", "m": "month"}  # by first letter
NUMBERS = {w: n for n, w in enumerate(("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"), 1)}
# Counts without a number, read generously: a filter too narrow hides the answer, one a little wide only lets more be ranked.
VAGUE = {"couple": 3, "few": 5, "several": 7}
AMOUNT = r"(\d{1,4}|" + "|".join(NUMBERS) + r"|(?:a\s+)?couple(?:\s+of)?|(?:a\s+)?few|several)"
NAMED = "|".join(PHRASES)  # updated_within's calendar phrases
CALENDAR = f"({NAMED})"
ROLLING = {"day": 1, "week": 7, "fortnight": 14, "month": 30, "year": 365}  # "the past month": days back from now
# What "recent" has to stand before to name a time: "a recent generation" names none.
RECENT_NOUNS = r"(?:changes|updates|edits|additions|posts|articles|news|releases|announcements|pages|docs|documents)"
# What a span must not stand before to end now: "the last 3 weeks of pregnancy", "the last week of
# October", "the past month before launch" are about another stretch of time ("the past week of
# changes" is still this one).
NOT_OF = rf"(?!(?:the\s+|our\s+|your\s+)?{RECENT_NOUNS}\b)"
ANCHORED = rf"(?!\s+(?:of|before|after|prior\s+to|until|till|leading\s+up\s+to)\s+{NOT_OF})"
OF_OTHER = rf"(?!\s+of\s+{NOT_OF})"  # "last week of October" is not the calendar's last week; "after lunch" leaves "today" today
DATE = rf"(?:\d{{4}}-\d{{2}}-\d{{2}}|{MONTH}(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?(?:,?\s+\d{{4}})?|\d{{1,2}}(?:st|nd|rd|th)?\s+{MONTH}(?:\s+\d{{4}})?|(?:last\s+)?{WEEKDAY}|{NAMED})"
# A calendar date or stretch a range is made of: 2026-10-05, October [5] [2026], 5 October [2026], 2025.
POINT = rf"(?:\d{{4}}-\d{{2}}-\d{{2}}|{MONTH}(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?(?:,?\s+(?:19|20)\d{{2}})?|\d{{1,2}}(?:st|nd|rd|th)?\s+{MONTH}(?:\s+(?:19|20)\d{{2}})?|(?:19|20)\d{{2}})"
# One day: 2026-10-05, October 5[th] [2026], 5[th] [of] October [2026].
DAY = (rf"(?:\d{{4}}-\d{{2}}-\d{{2}}|{MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+(?:19|20)\d{{2}})?"
       rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH}(?:\s+(?:19|20)\d{{2}})?)")
# A month or a year a part is taken of: October [2025], 2025, this/last/the month, this/last/the year.
WHOLE = rf"({MONTH}(?:\s+(?:19|20)\d{{2}})?|(?:19|20)\d{{2}}|(?:this|last|the)\s+(?:month|year))"
SHARE = r"(early|mid|late|(?:beginning|start|middle|end|first\s+half|second\s+half)\s+of)"
# Where each share of a month (days) and of a year (months) begins and ends: [first, last)
SHARES = {"early": ((1, 11), (1, 5)), "mid": ((11, 21), (5, 9)), "late": ((21, None), (9, None)),
          "first half": ((1, 16), (1, 7)), "second half": ((16, None), (7, None))}
SHARE_NAMES = {"beginning": "early", "start": "early", "middle": "mid", "end": "late"}
# An event between an edge and its date: "since the release on May 5", "before the outage last
# Tuesday", "after the migration in October". The day, month or year is when the event happened, not
# the stretch asked about: the range runs from its start on ("since", "after": the event may be late
# that day) or up to its end ("before").
EVENT_WORD = r"(?!(?:since|after|before|until|till|and|or|but|on|in|during)\b)[\w.'-]+"
EVENT = (rf"\b(since|after|before|prior\s+to|until|till)\s+(?:the|our|your|their|its|this|that|a|an)\s+(?:{EVENT_WORD}\s+){{1,3}}?"
         rf"((?:on\s+)?(?:the\s+)?{DAY}|(?:on\s+(?:last\s+)?|last\s+){WEEKDAY}|(?:in|during)\s+{MONTH}(?:\s+(?:19|20)\d{{2}})?"
         rf"|(?:in|during)\s+(?:19|20)\d{{2}}|yesterday)\b")
PATTERNS = [
    ("event", re.compile(EVENT, re.I | re.A)),
    # Before "month", "year" and "calendar": "late October", "the end of last month", "the first week of 2025"
    ("part", re.compile(rf"\b(?:(?:in|during|from|over|at|around)\s+)?(?:the\s+)?(?:{SHARE}[\s-]+(?:the\s+)?"
                        rf"|(first|last)\s+(?:(week|fortnight)|{AMOUNT}\s+(days?|weeks?))\s+of\s+(?:the\s+)?){WHOLE}\b", re.I | re.A)),
    ("between", re.compile(rf"\b(?:between|from)\s+({POINT})\s+(?:and|to|until|till|through)\s+({POINT})\b", re.I | re.A)),
    ("span", re.compile(rf"\b(?:(?:in|over|during|within|for|from)\s+)?(?:the\s+)?(?:last|past)\s+{AMOUNT}\s*{UNIT}\b{ANCHORED}", re.I | re.A)),
    # Before "calendar": "in the last week" is the 7 days up to now, a bare "last week" the calendar's
    ("rolling", re.compile(r"\b(?:(?:(?:in|over|during|within|for|from)\s+)?(?:the\s+)?past|(?:in|over|during|within|for)\s+the\s+last)"
                           rf"\s+(day|week|fortnight|month|year)\b{ANCHORED}|\b(?:(?:in|over|during)\s+)?(?:the\s+)?last\s+(fortnight)\b{ANCHORED}", re.I | re.A)),
    ("ago", re.compile(rf"\b(since\s+)?(?:{AMOUNT}|(an?))\s+(hours?|days?|weeks?|months?|years?)\s+ago\b", re.I | re.A)),
    ("morning", re.compile(r"\b(?:this\s+(?:morning|afternoon|evening)|tonight)\b", re.I | re.A)),
    # Before "calendar": "yesterday afternoon" is yesterday, and "afternoon" is not a word to rank
    ("yesterday", re.compile(r"\b(?:(?:on|from|during)\s+)?yesterday\s+(?:morning|afternoon|evening|night)\b|\blast\s+night\b", re.I | re.A)),
    ("quarter", re.compile(r"\b(?:(?:in|during)\s+)?(?:the\s+)?(this|last)\s+quarter\b|\b(?:in|during)\s+Q([1-4])(?:\s+((?:19|20)\d{2}))?\b", re.I | re.A)),
    ("start", re.compile(r"\bsince\s+the\s+(?:start|beginning)\s+of\s+(?:the|this)\s+(week|month|year)\b", re.I | re.A)),
    ("since", re.compile(rf"\bsince\s+({DATE})\b", re.I | re.A)),
    ("month", re.compile(rf"\b(?:in|during)\s+({MONTH})(?:\s+(\d{{4}}))?\b", re.I | re.A)),
    ("year", re.compile(r"\b(?:in|during)\s+((?:19|20)\d{2})\b", re.I | re.A)),
    ("calendar", re.compile(rf"\b(?:(?:in|during|from|over)\s+(?:the\s+)?)?{CALENDAR}(?:'s)?\b{OF_OTHER}", re.I | re.A)),
    ("day", re.compile(rf"\bon\s+((?:last\s+)?{WEEKDAY}|(?:the\s+)?{DAY})\b|\bfrom\s+(last\s+{WEEKDAY})\b", re.I | re.A)),  # that day only; "open on Monday?" asks nothing of time
    ("daybefore", re.compile(r"\bthe\s+day\s+before\s+yesterday\b", re.I | re.A)),
    # Before "calendar": "after last week" is from this week on. No bare weekday: "deploys before Friday" is a schedule.
    ("edge", re.compile(rf"\b(before|prior\s+to|after)\s+((?:the\s+)?{DAY}|{POINT}|last\s+{WEEKDAY}|{NAMED})\b{OF_OTHER}", re.I | re.A)),
    ("weekend", re.compile(r"\b(?:over|during)\s+the\s+weekend\b", re.I | re.A)),  # not "on the weekend": "runs on the weekend" is a schedule
    # "a recent generation" names no time; "the most recent docs" asks for the newest, however old
    ("recent", re.compile(rf"\b(recently|lately|(?<!most )recent(?=\s+{RECENT_NOUNS}\b))\b", re.I | re.A)),
]
# Words of a question about change or about the pages themselves: only with one of them does a time
# phrase in a question about something else filter ("I ordered yesterday, where is my parcel?" does not).
ABOUT_PAGES = {"new", "news", "changed", "change", "changes", "updated", "update", "updates", "added", "published", "publish",
               "released", "release", "releases", "edited", "edits", "modified", "written", "wrote", "posted", "happened", "latest",
               "announced", "announcement", "announcements", "changelog", "docs", "doc", "documents", "document", "pages", "page",
               "articles", "article", "posts", "post", "blog"}
# A day or an edge named by a date ("on January 1", "before 2027") is as often a question's own
# subject ("will the new pricing apply on January 1?"): it filters, beside other words, only with
# one of these, not with "new" or a page's noun.
DATED = {"day", "edge", "event"}
CHANGE_WORDS = {"changed", "change", "changes", "updated", "update", "updates", "added", "additions", "published", "edited", "edits",
                "modified", "written", "wrote", "posted", "happened", "released", "announced"}
# Words that, alone, ask for "whatever changed": a question made only of these and a time phrase lists documents.
ONLY_TIME_WORDS = {
    "what", "whats", "what's", "is", "are", "was", "were", "has", "have", "had", "been", "new", "news", "changed", "change", "changes",
    "updated", "update", "updates", "happened", "anything", "something", "which", "pages", "page", "documents", "document", "docs", "doc",
    "articles", "posts", "there", "the", "any", "a", "show", "me", "list", "all", "did", "do", "we", "you", "publish", "published",
    "added", "edit", "edits", "edited", "modified", "written", "wrote", "release", "released", "and", "or", "of", "to", "in", "on", "for", "since", "so", "far",
    "as", "from", "got", "made", "earlier", "latest",
}

# A question made only of these and of ONLY_TIME_WORDS, with no time phrase, asks for the newest
# documents, however old: "what's new?" was ranked by the word "new" (a page about new generations).
NEWEST = {"new", "newest", "latest", "recent", "recently"}
NEWEST_PHRASE = "most recently"


@dataclass(frozen=True)
class TimeFilter:
    phrase: str  # as the question said it
    after: datetime | None
    before: datetime | None
    rest: str  # the question without the phrase: what is ranked
    only_time: bool  # nothing but "what changed": list the documents of the range, newest first


def parse_time(query: str, now: datetime, tz: tzinfo = timezone.utc) -> TimeFilter | None:
    """The first time phrase of `query` as a range, or None when it has none."""
    found = []
    for kind, pattern in PATTERNS:
        for match in pattern.finditer(query):
            try:
                window = _window(kind, match, now, tz)
            except (ValueError, OverflowError):  # a date past what datetime holds ("in December 9999")
                window = None
            if window is not None:
                found.append((match.start(), kind, match, window))
    for _, kind, match, (after, before) in sorted(found, key=lambda f: f[0]):
        rest = " ".join((query[: match.start()] + " " + query[match.end() :]).split())
        rest = re.sub(r"\s+([?!.,])", r"\1", rest).strip(" ,")
        words = re.findall(r"[\w']+", rest.lower())
        only_time = all(w in ONLY_TIME_WORDS for w in words)
        if not only_time and not (CHANGE_WORDS if kind in DATED else ABOUT_PAGES) & set(words):
            continue  # "are you open today?", "will the new pricing apply on January 1?": the words are ranked as they are
        if (after is not None and after > now) or (kind in ("edge", "event") and before is not None and before > now):
            continue  # "the new policy applies after March 2027": about the future, not about when pages changed
        return TimeFilter(match.group(0).strip(), after, before, rest if not only_time else "", only_time)
    words = re.findall(r"[\w']+", query.lower())
    if NEWEST & set(words) and all(w in ONLY_TIME_WORDS or w in NEWEST or w == "most" for w in words):
        return TimeFilter(NEWEST_PHRASE, None, None, "", True)  # "what's new?", "latest updates": every document, newest first
    return None


def _window(kind: str, match: re.Match, now: datetime, tz: tzinfo) -> tuple[datetime | None, datetime | None] | None:
    local = now.astimezone(tz)
    day = local.replace(hour=0, minute=0, second=0, microsecond=0)
    if kind == "span":
        amount, unit = _amount(match.group(1)), UNIT_NAMES[match.group(2)[0].lower()]
        if amount == 0:
            return None
        if unit == "month":
            return now - timedelta(days=30 * amount), None  # "the last 3 months": 90 days
        return now - timedelta(**{f"{unit}s": amount}), None
    if kind == "rolling":
        return now - timedelta(days=ROLLING[(match.group(1) or match.group(2)).lower()]), None
    if kind == "ago":
        stretch = _ago(_amount(match.group(2)) if match.group(2) else 1, match.group(4)[0].lower(), now, day, tz)
        if stretch is None:
            return None
        vague = match.group(2) and _vague(match.group(2))
        return (stretch[0], None) if match.group(1) or vague else stretch  # "since a week ago", "a few days ago": from then on
    if kind == "part":
        return _part(match, day, tz)
    if kind == "morning":
        return updated_range("today", now, tz)
    if kind == "yesterday":  # "last night" may run past midnight: yesterday until now
        after, before = updated_range("yesterday", now, tz)
        return (after, None) if match.group(0).lower().startswith("last") else (after, before)
    if kind == "start":
        return updated_range(f"this {match.group(1).lower()}", now, tz)
    if kind == "quarter":
        return _quarter(match, day, tz)
    if kind == "calendar":
        return updated_range(" ".join(match.group(1).lower().split()), now, tz)
    if kind == "weekend":
        return updated_range("this weekend", now, tz)
    if kind == "day":
        return _named(match.group(1) or match.group(2), day, now, tz)
    if kind == "daybefore":
        return exact(shift_days(day, -2), tz), exact(shift_days(day, -1), tz)
    if kind == "edge":
        stretch = _named(match.group(2), day, now, tz)
        if stretch is None:
            return None
        if match.group(1).lower() == "after":
            return (stretch[1], None) if stretch[1] is not None else None  # "after this week": nothing yet
        return None, stretch[0]
    if kind == "event":
        stretch = _named(re.sub(r"^(?:on|in|during)\s+", "", match.group(2), flags=re.I), day, now, tz)
        if stretch is None:
            return None
        return (stretch[0], None) if match.group(1).lower() in ("since", "after") else (None, stretch[1] or now)
    if kind == "recent":
        return now - timedelta(days=RECENT_DAYS), None
    if kind == "year":
        start, end = _stretch(int(match.group(1)), None, None)
        return exact(start, tz), exact(end, tz)
    if kind == "month":
        month = MONTHS[match.group(1).lower().rstrip(".")]
        start, end = _stretch(int(match.group(2)) if match.group(2) else _latest_year(month, 1, day), month, None)
        return exact(start, tz), exact(end, tz)
    if kind == "between":
        return _between(match.group(1), match.group(2), day, tz)
    stretch = _named(match.group(1), day, now, tz)  # since …
    return (stretch[0], None) if stretch is not None else None


def _ago(amount: int, unit: str, now: datetime, day: datetime, tz: tzinfo) -> tuple[datetime, datetime] | None:
    """The hour, day, calendar week (from Monday), calendar month or year, on the asker's clock (`day`:
    its midnight today), that held the moment `amount` of them back; None before the calendar's first
    years ("9999 years ago")."""
    if unit == "h":
        start = (now - timedelta(hours=amount)).astimezone(tz).replace(minute=0, second=0, microsecond=0).astimezone(timezone.utc)
        return start, start + timedelta(hours=1)
    if unit == "y":
        if day.year - amount < 2:
            return None
        start, end = _stretch(day.year - amount, None, None)
    elif unit == "d":
        start, end = shift_days(day, -amount), shift_days(day, 1 - amount)
    elif unit == "w":
        that = shift_days(day, -7 * amount)
        start = shift_days(that, -that.weekday())
        end = shift_days(start, 7)
    else:
        months = day.year * 12 + day.month - 1 - amount
        start, end = _stretch(months // 12, months % 12 + 1, None)
    return exact(start, tz), exact(end, tz)


def _part(match: re.Match, day: datetime, tz: tzinfo) -> tuple[datetime, datetime] | None:
    """A share of a month (early: days 1-10, mid: 11-20, late: 21 on; halves: 1-15, 16 on) or of a
    year (early: January-April, mid: May-August, late: September-December; halves by six months),
    or its first or last week, fortnight or N days or weeks. A month without a year is the latest
    whose share has begun by today ("late December" asked in November: last year's)."""
    share, edge, unit, amount, days_or_weeks, whole = match.groups()
    if share is not None:
        share = " ".join(share.lower().split()).removesuffix(" of")
        share = SHARE_NAMES.get(share, share)
        length = None
    else:
        share = edge.lower()
        length = {"week": 7, "fortnight": 14}[unit.lower()] if unit else _amount(amount) * (7 if days_or_weeks[0] in "wW" else 1)
        if not length:
            return None  # "the first 0 days of October"
    today = day.replace(tzinfo=None)
    start, end, is_year, named_year = _whole(" ".join(whole.lower().split()), today)
    first, last = _share(start, end, is_year, share, length)
    if not named_year and first > today:  # a share still to come this year: last year's
        start, end = start.replace(year=start.year - 1), _stretch(start.year - 1, None if is_year else start.month, None)[1]
        first, last = _share(start, end, is_year, share, length)
    return exact(first, tz), exact(last, tz)


def _whole(text: str, today: datetime) -> tuple[datetime, datetime, bool, bool]:
    """The local midnights that begin and end the month or year `text` names (WHOLE), whether it is
    a year, and whether it was named by its year (not to be moved to last year's)."""
    if text.startswith(("this ", "last ", "the ")):  # "the end of the month": this one
        back = text.startswith("last ")
        if text.endswith("year"):
            return *_stretch(today.year - back, None, None), True, True
        months = today.year * 12 + today.month - 1 - back
        return *_stretch(months // 12, months % 12 + 1, None), False, True
    if text.isdigit():
        return *_stretch(int(text), None, None), True, True
    year, month, _ = _parts(text)
    return *_stretch(year or today.year, month, None), False, year is not None


def _share(start: datetime, end: datetime, is_year: bool, share: str, length: int | None) -> tuple[datetime, datetime]:
    """[first, last) of a share of [start, end): "early", "late", "first half" … or, with `length`
    days, "first" or "last" that many (within the whole)."""
    if length is not None:
        return (start, min(end, start + timedelta(days=length))) if share == "first" else (max(start, end - timedelta(days=length)), end)
    begin, stop = SHARES[share][is_year]
    if is_year:
        return start.replace(month=begin), end if stop is None else start.replace(month=stop)
    return start.replace(day=begin), end if stop is None else start.replace(day=stop)


def _quarter(match: re.Match, day: datetime, tz: tzinfo) -> tuple[datetime, datetime | None]:
    """This or last quarter (January, April, July, October), or Q1 … Q4 of a year."""
    current = datetime(day.year, 3 * ((day.month - 1) // 3) + 1, 1)
    if match.group(1):
        if match.group(1).lower() == "this":
            return exact(current, tz), None
        previous = datetime(current.year - (current.month == 1), (current.month - 4) % 12 + 1, 1)
        return exact(previous, tz), exact(current, tz)
    first_month = 3 * int(match.group(2)) - 2
    year = int(match.group(3)) if match.group(3) else _latest_year(first_month, 1, day)
    return exact(_stretch(year, first_month, None)[0], tz), exact(_stretch(year, first_month + 2, None)[1], tz)


def _between(first: str, last: str, day: datetime, tz: tzinfo) -> tuple[datetime, datetime] | None:
    """"between March and May": from the start of the first to the end of the last, each a day, a
    month or a year. A first without a year is the latest one begun by today; a last without one
    follows the first. A range that would run into months still to come ("between November and
    February", asked in November) is the last one that did not."""
    (y1, m1, d1), (y2, m2, d2) = _parts(first), _parts(last)
    if (m1 is None) != (m2 is None) and (y1 is None or y2 is None):
        return None  # "from 2025 to May": no reading is sure
    year = y1 or _latest_year(m1, d1 or 1, day)
    start = _stretch(year, m1, d1)[0]
    end_year = y2 or year
    if y2 is None and _stretch(end_year, m2, d2)[0] < start:
        end_year += 1
    end = _stretch(end_year, m2, d2)[1]
    if y1 is None and y2 is None and end_year > year and end > day.replace(tzinfo=None):
        start, end = start.replace(year=start.year - 1), _stretch(end_year - 1, m2, d2)[1]
    return (exact(start, tz), exact(end, tz)) if start < end else None


def _parts(text: str) -> tuple[int | None, int | None, int | None]:
    """(year, month, day) of a POINT or of the date a `since` names, each None where it does not say."""
    text = " ".join(text.lower().replace(",", " ").split())
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        y, m, d = map(int, text.split("-"))
        return y, m, d
    parts = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", text).split()
    month = next((MONTHS[p.rstrip(".")] for p in parts if p.rstrip(".") in MONTHS), None)
    numbers = [int(p) for p in parts if p.isdigit()]
    return next((n for n in numbers if n > 31), None), month, next((n for n in numbers if n <= 31), None)


def _stretch(year: int, month: int | None, date: int | None) -> tuple[datetime, datetime]:
    """The local midnights that begin and end a year, a month or a day (raises ValueError for a date that is none)."""
    if month is None:
        return datetime(year, 1, 1), datetime(year + 1, 1, 1)
    if date is None:
        return datetime(year, month, 1), datetime(year + month // 12, month % 12 + 1, 1)
    start = datetime(year, month, date)
    return start, start + timedelta(days=1)


def _weekday(text: str, day: datetime) -> datetime:
    """The local midnight of "friday" (the latest Friday, today included) or "last friday" (before today)."""
    name = text.removeprefix("last ")
    back = (day.weekday() - WEEKDAYS[name]) % 7
    return shift_days(day, -(back or 7) if name != text else -back)


def _named(text: str, day: datetime, now: datetime, tz: tzinfo) -> tuple[datetime, datetime | None] | None:
    """[start, end) of the day, month, year, weekday or calendar phrase a `since`, `on`, `before`
    or `after` names (end None: it runs until now); None for a date that is none ("Feb 30")."""
    text = " ".join(text.lower().replace(",", " ").split()).removeprefix("the ")
    if text in PHRASES:
        return updated_range(text, now, tz)
    if text.removeprefix("last ") in WEEKDAYS:
        start = _weekday(text, day)
        return exact(start, tz), exact(shift_days(start, 1), tz)
    year, month, date = _parts(text)
    if month is None and year is None:
        return None
    try:
        start, end = _stretch(year or _latest_year(month, date or 1, day), month, date)
    except ValueError:
        return None
    return exact(start, tz), exact(end, tz)


def _latest_year(month: int, date: int, day: datetime) -> int:
    """The year of the latest `month` `date` begun by `day`: one still to come this year is last year's."""
    return day.year if (month, date) <= (day.month, day.day) else day.year - 1


def _amount(text: str) -> int:
    """"3", "three", or a count without a number ("a few", "a couple of") as VAGUE reads it."""
    word = _vague(text) or text.lower()
    return VAGUE.get(word) or NUMBERS.get(word) or int(word)


def _vague(text: str) -> str | None:
    """"few" of "a few", "couple" of "a couple of"; None for a number."""
    return next((word for word in text.lower().split() if word in VAGUE), None)
