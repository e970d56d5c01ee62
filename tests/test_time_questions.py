"""Questions about time: "what changed last week?" becomes a date range in the asker's time zone,
the phrase is not ranked, and a question only about time lists the documents of that range."""

import json
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from typing import NamedTuple
from zoneinfo import ZoneInfo

import pytest

from indexer.config import load_config
from indexer.pipeline import run_index
from server.timeparse import parse_time
from tests.conftest import api_client, write_config

BERLIN = ZoneInfo("Europe/Berlin")
TEXT = {
    "pricing": "The Team plan now costs 49 euros per month, billed yearly.",
    "shipping": "Parcels to the islands travel by ferry and take three extra days.",
    "returns": "Unworn shoes can be returned within thirty days of delivery.",
    "security": "Single sign-on works with any SAML identity provider.",
    "warranty": "Every boot has a two year warranty against broken stitching.",
}


class Week(NamedTuple):
    """The UTC weeks the documents are dated by, from the `now` they were indexed at."""

    now: datetime
    monday: datetime  # this week's, 00:00 UTC
    last_monday: datetime

    @classmethod
    def of(cls, now: datetime) -> "Week":
        monday = (now - timedelta(days=now.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
        return cls(now, monday, monday - timedelta(days=7))

    def dates(self) -> dict[str, datetime]:
        """document -> when it was last updated (front matter)"""
        return {
            "pricing": self.last_monday + timedelta(days=1, hours=9),  # Tuesday of last week
            "shipping": self.monday - timedelta(minutes=30),  # Sunday 23:30 UTC: last week in UTC, this week in Berlin
            "returns": self.last_monday - timedelta(minutes=1),  # the week before
            "security": self.monday + (self.now - self.monday) / 2,  # this week, before now
            "warranty": self.now - timedelta(days=400),
        }


# The `now` handed to parse_time by the tests that call it directly (the served ones ask the clock).
NOW = datetime.now(timezone.utc)
MONDAY = Week.of(NOW).monday


@pytest.fixture
def dated(built_today, tmp_path_factory, local_embedder) -> tuple[Week, object]:
    """(the week, an API client) over documents dated around this week, in UTC and in Berlin."""
    now, client = built_today(lambda now: _indexed(tmp_path_factory.mktemp("time"), Week.of(now)), timezone.utc, BERLIN)
    return Week.of(now), client


@pytest.fixture
def client(dated):
    return dated[1]


@contextmanager
def _indexed(folder, week: Week):
    (folder / "docs").mkdir()
    for name, when in week.dates().items():
        (folder / "docs" / f"{name}.md").write_text(f"---\ntitle: {name.capitalize()}\nupdated_at: {when.isoformat()}\n---\n# {name.capitalize()}\n\n{TEXT[name]}\n")
    config = load_config(write_config(folder, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "local"\n'))
    assert not run_index(config).errors
    with api_client(config.artifacts) as c:
        yield c


def ask(client, query: str, **body) -> dict:
    response = client.post("/v1/search", json={"query": query, "parse_time": True, **body})
    assert response.status_code == 200, response.text
    return response.json()


def titles(result: dict) -> list[str]:
    return [h["title"] for h in result["hits"]]


def test_what_changed_last_week_lists_exactly_that_weeks_documents_newest_first(dated):
    week, client = dated
    result = ask(client, "what changed last week?")
    assert titles(result) == ["Shipping", "Pricing"]
    echoed = result["time_filter"]
    assert echoed["phrase"] == "last week" and echoed["only_time"] is True
    assert datetime.fromisoformat(echoed["after"]) == week.last_monday and datetime.fromisoformat(echoed["before"]) == week.monday


def test_the_week_is_the_askers_week(dated):
    week, client = dated
    if week.now.astimezone(BERLIN).isocalendar()[:2] != week.now.isocalendar()[:2]:
        # Run late on a Sunday (UTC), when it is Monday in Berlin: the week ending in UTC is Berlin's last
        # week (a fresh clone failed here at 23:07 UTC, expecting this file's usual answer).
        assert titles(ask(client, "what's new last week", timezone="Europe/Berlin")) == ["Security", "Shipping"]
        assert titles(ask(client, "what's new this week", timezone="Europe/Berlin")) == []
        return
    result = ask(client, "what's new last week", timezone="Europe/Berlin")
    assert titles(result) == ["Pricing", "Returns"], "Sunday 23:30 UTC is Monday 00:30 in Berlin (this week there), 23:59 a week earlier is last week's Monday"
    assert titles(ask(client, "what's new this week", timezone="Europe/Berlin")) == ["Security", "Shipping"]


def test_a_time_phrase_filters_and_is_not_ranked(client):
    result = ask(client, "changes to the ferry to the islands since last week", mode="lexical")
    assert titles(result) == ["Shipping"] and result["time_filter"]["only_time"] is False
    assert "week" not in result["hits"][0]["snippet"]
    assert ask(client, "changes for unworn shoes since last week", mode="lexical")["hits"] == [], "returns changed before that"
    assert titles(ask(client, "unworn shoes", mode="lexical")) == ["Returns"]


def test_a_time_phrase_that_tells_of_the_askers_day_filters_nothing(client):
    """A visitor's own story ("I bought them last week") is not a question about when pages changed:
    filtered to pages updated last week, the returns page was hidden and nothing answered."""
    result = ask(client, "I bought unworn shoes last week, can I return them?", mode="lexical")
    assert "time_filter" not in result and titles(result)[0] == "Returns"


def test_the_cli_reads_time_phrases_too(client):
    from click.testing import CliRunner

    from indexer.cli import cli

    artifacts = client.app.state.service.settings.artifacts
    result = CliRunner().invoke(cli, ["search", "what changed last week?", "--artifacts", str(artifacts), "--parse-time", "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert [h["title"] for h in body["hits"]] == ["Shipping", "Pricing"] and body["time_filter"]["only_time"] is True
    empty = CliRunner().invoke(cli, ["search", "what changed in 2019?", "--artifacts", str(artifacts), "--parse-time"])
    assert empty.exit_code == 0 and "Nothing was updated in 2019." in empty.output, empty.output
    before = CliRunner().invoke(cli, ["search", "pricing updates before 2020", "--artifacts", str(artifacts), "--parse-time"])
    assert before.exit_code == 0 and "Updated before 2020: before 2020-01-01 00:00 (UTC)" in before.output, before.output
    newest = CliRunner().invoke(cli, ["search", "what's new?", "--artifacts", str(artifacts), "--parse-time"])
    assert newest.exit_code == 0 and newest.output.startswith("The documents updated most recently, newest first\n1. Security"), newest.output
    bad = CliRunner().invoke(cli, ["search", "x", "--artifacts", str(artifacts), "--parse-time", "--timezone", "Mars/Olympus"])
    assert bad.exit_code != 0 and "unknown time zone 'Mars/Olympus'" in bad.output


def test_what_changed_before_a_date_lists_the_older_documents_newest_first(client):
    result = ask(client, "what changed before this week?")
    assert result["time_filter"]["after"] is None and result["time_filter"]["only_time"] is True
    assert titles(result) == ["Shipping", "Pricing", "Returns", "Warranty"]


def test_whats_new_lists_every_document_newest_first(client):
    """"what's new?" — a chat box's first question on many sites — was ranked by the word "new"
    (on `examples/`: a page about shipping new generations)."""
    for question in ("what's new?", "Anything new?", "latest updates", "show me the newest docs"):
        result = ask(client, question)
        assert result["time_filter"] == {"phrase": "most recently", "after": None, "before": None, "only_time": True}, question
        assert titles(result) == ["Security", "Shipping", "Pricing", "Returns", "Warranty"], question
    for question in ("new pricing", "what's new in single sign-on?", "I'm new here, where do I start?", "how do I get the latest release"):
        assert parse_time(question, NOW, timezone.utc) is None, question


def test_without_parse_time_nothing_is_read(client):
    response = client.post("/v1/search", json={"query": "what changed last week?"}).json()
    assert "time_filter" not in response and response["hits"], "an ordinary search"


def test_recency_weight_moves_fresher_documents_up(client):
    plain = client.post("/v1/search", json={"query": "boots shoes parcels plan", "mode": "lexical", "top_k": 5}).json()
    fresh = client.post("/v1/search", json={"query": "boots shoes parcels plan", "mode": "lexical", "top_k": 5, "recency_weight": 1.0}).json()
    assert titles(plain)[-1] != "Warranty", "without the nudge the old page is not last"
    assert titles(fresh)[-1] == "Warranty", "400 days old: the freshest documents pass it"
    assert set(titles(fresh)) == set(titles(plain)), "a nudge reorders, it filters nothing"


@pytest.mark.parametrize("query, after, before, rest", [
    ("what changed since Monday?", MONDAY, None, ""),
    ("pricing changes in October 2025", datetime(2025, 10, 1, tzinfo=timezone.utc), datetime(2025, 11, 1, tzinfo=timezone.utc), "pricing changes"),
    ("security updates in the last 3 days", NOW - timedelta(days=3), None, "security updates"),
    ("anything new this year?", NOW.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0), None, ""),
    ("docs changed recently about SSO", NOW - timedelta(days=30), None, "docs changed about SSO"),
    ("what changed since last Friday?", MONDAY + timedelta(days=4 - (7 if NOW.weekday() <= 4 else 0)), None, ""),  # was: no time phrase at all
    ("pricing updates this month", MONDAY.replace(year=NOW.year, month=NOW.month, day=1), None, "pricing updates"),
    ("what was updated on Monday?", MONDAY, MONDAY + timedelta(days=1), ""),
    ("anything new in the past two weeks?", NOW - timedelta(days=14), None, ""),  # number words, and "the past month" below: no phrase before
    ("security updates over the past month", NOW - timedelta(days=30), None, "security updates"),
    ("docs added the past year", NOW - timedelta(days=365), None, ""),
    ("recent changes to the refund policy", NOW - timedelta(days=30), None, "changes to the refund policy"),
])
def test_phrases(query, after, before, rest):
    parsed = parse_time(query, NOW, timezone.utc)
    assert abs((parsed.after - after).total_seconds()) < 1 and parsed.before == before
    assert parsed.rest == rest


@pytest.mark.parametrize("now, after, before", [
    (datetime(2026, 11, 26, 3, tzinfo=timezone.utc), datetime(2026, 11, 21, tzinfo=timezone.utc), datetime(2026, 11, 23, tzinfo=timezone.utc)),  # a Thursday
    (datetime(2026, 11, 28, 10, tzinfo=timezone.utc), datetime(2026, 11, 28, tzinfo=timezone.utc), None),  # Saturday: this one, so far
    (datetime(2026, 11, 30, 8, tzinfo=timezone.utc), datetime(2026, 11, 28, tzinfo=timezone.utc), datetime(2026, 11, 30, tzinfo=timezone.utc)),  # Monday
])
def test_the_weekend_is_the_latest_saturday_and_sunday(now, after, before):
    for question in ("what changed over the weekend?", "edits this weekend"):
        parsed = parse_time(question, now, timezone.utc)
        assert (parsed.after, parsed.before, parsed.only_time) == (after, before, True), question
    last = parse_time("what changed last weekend?", now, timezone.utc)
    assert last.after == datetime(2026, 11, 28 if now.day == 30 else 21, tzinfo=timezone.utc), "last weekend: the one before this week"
    assert (last.before - last.after) == timedelta(days=2)


def test_a_range_runs_from_the_start_of_its_first_date_to_the_end_of_its_last():
    """"what changed between March and May?" was ranked as words: no range."""
    now = datetime(2026, 11, 27, 21, tzinfo=timezone.utc)
    day = lambda *ymd: datetime(*ymd, tzinfo=timezone.utc)  # noqa: E731
    for question, after, before, rest in [
        ("what changed between March and May?", day(2026, 3, 1), day(2026, 6, 1), ""),
        ("docs updated from October 1 to October 15", day(2026, 10, 1), day(2026, 10, 16), ""),
        ("pricing changes from Dec 2025 through Jan 2026", day(2025, 12, 1), day(2026, 2, 1), "pricing changes"),
        ("what changed between 2024 and 2025", day(2024, 1, 1), day(2026, 1, 1), ""),
        ("changes between November and February", day(2025, 11, 1), day(2026, 3, 1), ""),  # the last such winter, not one to come
    ]:
        parsed = parse_time(question, now, timezone.utc)
        assert (parsed.after, parsed.before, parsed.rest) == (after, before, rest), question
    berlin = parse_time("what changed between March and May?", now, BERLIN)
    assert (berlin.after, berlin.before) == (day(2026, 2, 28, 23), day(2026, 5, 31, 22)), "the asker's midnights"
    for question in ("I travel from March to May, what is the warranty?", "updates between Feb 30 and March 3", "changes from 2025 to May"):
        assert parse_time(question, now, timezone.utc) is None, question


def test_spans_ending_now_quarters_and_days_ago_are_time_phrases_too():
    """Phrasings a chat box gets that were ranked as words: none of these had a range before."""
    now = datetime(2026, 11, 27, 21, tzinfo=timezone.utc)  # a Friday
    day = lambda *ymd: datetime(*ymd, tzinfo=timezone.utc)  # noqa: E731
    for question, after, before in [
        ("what docs changed in the last week", now - timedelta(days=7), None),  # a bare "last week" stays the calendar's
        ("what was added over the past fortnight", now - timedelta(days=14), None),
        ("changes in the last 24h", now - timedelta(hours=24), None),
        ("show me changes from the past 48 hours", now - timedelta(hours=48), None),
        ("what changed 2 days ago", day(2026, 11, 25), day(2026, 11, 26)),
        ("what changed a week ago", day(2026, 11, 16), day(2026, 11, 23)),  # the calendar week of Friday the 20th
        ("docs updated two months ago", day(2026, 9, 1), day(2026, 10, 1)),
        ("what was added a day ago", day(2026, 11, 26), day(2026, 11, 27)),
        ("what changed since 3 weeks ago", day(2026, 11, 2), None),
        ("what changed 3 hours ago", day(2026, 11, 27, 18), day(2026, 11, 27, 19)),
        ("what was updated an hour ago", day(2026, 11, 27, 20), day(2026, 11, 27, 21)),
        ("what changed since 2 hours ago", day(2026, 11, 27, 19), None),
        ("what was published a year ago", day(2025, 1, 1), day(2026, 1, 1)),
        ("what was written two years ago", day(2024, 1, 1), day(2025, 1, 1)),
        ("latest changes this morning", day(2026, 11, 27), None),
        ("docs changed this afternoon", day(2026, 11, 27), None),
        ("what changed yesterday afternoon", day(2026, 11, 26), day(2026, 11, 27)),  # "afternoon" was ranked as a word
        ("what was updated last night", day(2026, 11, 26), None),  # the night may run past midnight
        ("any new articles this quarter?", day(2026, 10, 1), None),
        ("what did we publish last quarter", day(2026, 7, 1), day(2026, 10, 1)),
        ("what was updated in Q4 2025", day(2025, 10, 1), day(2026, 1, 1)),
        ("updates since the start of the month", day(2026, 11, 1), None),
        # Counts without a number, read generously (a couple: 3, a few: 5, several: 7); "ago" from then on
        ("what changed in the last few days", now - timedelta(days=5), None),
        ("updates over the past couple of weeks", now - timedelta(weeks=3), None),
        ("what changed in the last couple days", now - timedelta(days=3), None),
        ("news from the last several days", now - timedelta(days=7), None),
        ("what changed a few days ago", day(2026, 11, 22), None),
        ("docs updated a couple of weeks ago", day(2026, 11, 2), None),
        ("show me the past week of changes", now - timedelta(days=7), None),  # "of changes": still this week
    ]:
        parsed = parse_time(question, now, timezone.utc)
        assert parsed is not None and (parsed.after, parsed.before, parsed.only_time) == (after, before, True), (question, parsed)
    assert parse_time("what changed last week?", now, timezone.utc).before == day(2026, 11, 23), "the calendar's week"
    assert parse_time("I ordered this morning, where is it?", now, timezone.utc) is None, "the asker's day"
    assert parse_time("I bought boots a week ago, what is the warranty?", now, timezone.utc) is None, "the asker's week"
    january = parse_time("what changed 2 months ago", datetime(2026, 1, 15, tzinfo=timezone.utc), timezone.utc)
    assert (january.after, january.before) == (day(2025, 11, 1), day(2025, 12, 1)), "back across the new year"
    india = parse_time("what changed an hour ago", now.replace(minute=20), ZoneInfo("Asia/Kolkata"))  # 02:50 there
    assert (india.after, india.before) == (day(2026, 11, 27, 19, 30), day(2026, 11, 27, 20, 30)), "the hour on the asker's clock"
    assert parse_time("what changed 9999 years ago", now, timezone.utc) is None, "before the calendar: ranked as words"


def test_a_part_of_a_month_or_a_year_is_that_part():
    """"late October", "the last week of October", "the end of last month" were ranked as words, or
    worse: "in the last week of October" was the 7 days just past."""
    now = datetime(2026, 11, 27, 21, tzinfo=timezone.utc)
    day = lambda *ymd: datetime(*ymd, tzinfo=timezone.utc)  # noqa: E731
    for question, after, before in [
        ("what changed in late October", day(2026, 10, 21), day(2026, 11, 1)),
        ("what was updated around mid-September", day(2026, 9, 11), day(2026, 9, 21)),
        ("what changed in the last week of October", day(2026, 10, 25), day(2026, 11, 1)),
        ("what changed in the first week of November", day(2026, 11, 1), day(2026, 11, 8)),
        ("what changed in the first 3 days of this month", day(2026, 11, 1), day(2026, 11, 4)),
        ("what changed at the end of last month", day(2026, 10, 21), day(2026, 11, 1)),
        ("what changed at the start of the year", day(2026, 1, 1), day(2026, 5, 1)),  # a year's early: January-April
        ("what changed in the last two weeks of 2025", day(2025, 12, 18), day(2026, 1, 1)),
        ("what changed in the second half of last year", day(2025, 7, 1), day(2026, 1, 1)),
        ("what changed in late December", day(2025, 12, 21), day(2026, 1, 1)),  # still to come this year: last year's
        ("what changed in the last few days of October", day(2026, 10, 27), day(2026, 11, 1)),
    ]:
        parsed = parse_time(question, now, timezone.utc)
        assert parsed is not None and (parsed.after, parsed.before, parsed.only_time) == (after, before, True), (question, parsed)
    pricing = parse_time("pricing updates in early 2025", now, timezone.utc)
    assert (pricing.after, pricing.before, pricing.rest) == (day(2025, 1, 1), day(2025, 5, 1), "pricing updates")
    berlin = parse_time("what changed in late October", now, BERLIN)
    assert (berlin.after, berlin.before) == (day(2026, 10, 20, 22), day(2026, 10, 31, 23)), "the asker's midnights, across the clock change"
    for question in ("is early access open to new changes", "what changed in the first 0 days of October"):
        assert parse_time(question, now, timezone.utc) is None, question


def test_a_day_by_its_date_and_before_or_after_a_date_are_time_phrases():
    """"what changed on 2026-11-20", "updates from last Tuesday", "docs updated before October",
    "show me updates after November 15th" were ranked as words: no range."""
    now = datetime(2026, 11, 27, 21, tzinfo=timezone.utc)  # a Friday
    day = lambda *ymd: datetime(*ymd, tzinfo=timezone.utc)  # noqa: E731
    for question, after, before in [
        ("what changed on 2026-11-20", day(2026, 11, 20), day(2026, 11, 21)),
        ("what was updated on Nov 20", day(2026, 11, 20), day(2026, 11, 21)),
        ("what was updated on the 5th of October", day(2026, 10, 5), day(2026, 10, 6)),
        ("what changed on December 3", day(2025, 12, 3), day(2025, 12, 4)),  # still to come this year: last year's
        ("updates from last Tuesday", day(2026, 11, 24), day(2026, 11, 25)),
        ("what changed the day before yesterday", day(2026, 11, 25), day(2026, 11, 26)),
        ("docs updated before October", None, day(2026, 10, 1)),
        ("pages updated before 2025", None, day(2025, 1, 1)),
        ("what changed before the 1st of March 2025", None, day(2025, 3, 1)),
        ("changes prior to last Monday", None, day(2026, 11, 23)),
        ("show me updates after November 15th", day(2026, 11, 16), None),  # from the end of the day named
        ("docs updated after June 2025", day(2025, 7, 1), None),
        ("what changed after last week", day(2026, 11, 23), None),
    ]:
        parsed = parse_time(question, now, timezone.utc)
        assert parsed is not None and (parsed.after, parsed.before, parsed.only_time) == (after, before, True), (question, parsed)
    pricing = parse_time("what happened after 2020 to our pricing", now, timezone.utc)
    assert (pricing.after, pricing.before, pricing.rest) == (day(2021, 1, 1), None, "what happened to our pricing")
    for question in ("how do I publish a post before Friday", "deploys happen after Friday", "what should I do before October",
                     "what changed after the migration", "what changed on Feb 30", "I was charged on October 5, can I get a refund?",
                     # A date that is the question's own subject: a filter would hide the answer
                     "Will the new pricing apply on January 1?", "will the new pricing apply on Monday?",
                     "the release on May 5 broke login, how do I fix it?", "the new policy applies after March 2027",
                     "Do the new terms apply before 2027?"):
        assert parse_time(question, now, timezone.utc) is None, question
    assert parse_time("pricing changes on Nov 20", now, timezone.utc).rest == "pricing changes", "a word of change: it filters"


def test_an_event_between_an_edge_and_its_date_moves_the_edge_not_the_day():
    """"what changed since the release on May 5" was read as "on May 5": only that day's changes,
    and everything after the release was filtered out."""
    now = datetime(2026, 11, 27, 21, tzinfo=timezone.utc)  # a Friday
    day = lambda *ymd: datetime(*ymd, tzinfo=timezone.utc)  # noqa: E731
    for question, after, before, rest in [
        ("what changed since the release on May 5", day(2026, 5, 5), None, ""),
        ("what changed after the release on May 5", day(2026, 5, 5), None, ""),  # the release may be late that day
        ("docs updated before the outage on Nov 3", None, day(2026, 11, 4), ""),
        ("changes since the migration in October", day(2026, 10, 1), None, ""),
        ("what changed since the 2.0 launch last Tuesday", day(2026, 11, 24), None, ""),
        ("pages updated after the outage yesterday", day(2026, 11, 26), None, ""),
        ("what changed in pricing since the launch on the 5th of October", day(2026, 10, 5), None, "what changed in pricing"),
        ("what was updated before the freeze in 2025", None, day(2026, 1, 1), ""),
    ]:
        parsed = parse_time(question, now, timezone.utc)
        assert parsed is not None and (parsed.after, parsed.before, parsed.rest) == (after, before, rest), (question, parsed)
    for question in ("Will the refund arrive before the holidays in December?",  # no word of change: the question's own subject
                     "what changed before the release in 2027"):  # about the future
        assert parse_time(question, now, timezone.utc) is None, question


def test_updated_within_takes_the_weekend_too():
    from server.timefilter import updated_range

    saturday = datetime(2026, 11, 28, 10, tzinfo=timezone.utc)
    assert updated_range("last weekend", saturday) == (datetime(2026, 11, 21, tzinfo=timezone.utc), datetime(2026, 11, 23, tzinfo=timezone.utc))
    berlin = updated_range("this weekend", saturday, BERLIN)
    assert berlin == (datetime(2026, 11, 27, 23, tzinfo=timezone.utc), None), "Saturday midnight in Berlin"


def test_questions_without_a_time_phrase_are_left_alone():
    """Also a phrase in a question about something other than change: "are you open today?" was
    filtered to the pages updated today — none, on most sites — and the widget said nothing answers it."""
    for query in ("are you open today?", "what can I order today", "events this weekend", "is the API down today", "open on Monday?",
                  "I ordered yesterday, where is my parcel?", "pricing in October 2025", "refunds since Monday",
                  "what is the capital of Mongolia", "maybe later", "how do I make a weekly report", "mayday procedures",
                  "how do I roll back to a recent generation", "can runs be scheduled on the weekend", "the most recent docs on SSO",
                  "how do I get past the login page", "a recent release of the API", "I ordered a few days ago, where is it?",
                  "what were the last few releases", "I ordered last night, where is it?", "how do I delete the last few generations",
                  # a stretch of other time: these were filtered to the weeks just past, hiding the answer
                  "what happened in the last 3 weeks of pregnancy", "updates in the last 2 days before the release",
                  "docs updated in the past month before launch", "what changed over the past 2 weeks of the sprint"):
        assert parse_time(query, NOW, timezone.utc) is None, query
