"""Summaries (LLM, extractive fallback, idempotent, recallable) and consolidation of near-duplicates."""

from __future__ import annotations

import datetime as dt

import pytest

from engram.errors import ProviderError
from engram.lifecycle import common, consolidate, summaries
from engram.lifecycle.settings import ConsolidationSettings, SummarySettings
from tests.lifecycle.conftest import T0

DAY = 86400.0


class EchoSummarizer:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def summarize(self, texts):  # noqa: ANN001, ANN201
        self.calls.append(list(texts))
        return f"LLM summary of {len(texts)} notes"


class BrokenSummarizer:
    def summarize(self, texts):  # noqa: ANN001, ANN201
        raise ProviderError("model unavailable")


def day_start(t: float) -> float:
    d = dt.datetime.fromtimestamp(t, dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return d.timestamp()


def test_daily_summary_extractive_stored_listed_recallable_and_idempotent(backend, make_engram, clock):
    engram = make_engram(backend)
    yesterday = day_start(clock.t) - DAY
    engram.remember("learned that the staging database moved", importance=0.9, created_at=yesterday + 3600)
    engram.remember("minor note about lunch", importance=0.1, created_at=yesterday + 7200)
    engram.remember("today's note is not in yesterday", created_at=day_start(clock.t) + 10)
    settings = SummarySettings(weekly=False, extractive_items=1)
    report = summaries.run(engram, settings, now=clock.t)
    assert report.changed == 1
    (summary,) = summaries.list_summaries(engram)
    assert summary.type == "summary" and "staging database moved" in summary.content
    assert "lunch" not in summary.content and "(and 1 more)" in summary.content
    meta = summary.metadata
    assert (meta["period_type"], meta["source_memory_count"], meta["method"]) == ("daily", 2, "extractive")
    assert (meta["period_start"], meta["period_end"]) == (yesterday, yesterday + DAY)
    assert summary.key == f"summary:daily:{dt.datetime.fromtimestamp(yesterday, dt.UTC):%Y-%m-%d}"
    assert summaries.run(engram, settings, now=clock.t).changed == 0  # idempotent
    hits = engram.recall("staging database summary")
    assert summary.id in [h.memory.id for h in hits]


def _two_days_of_three_agents(engram, clock) -> tuple[float, float]:  # noqa: ANN001
    """alice, bob and carol each remember something yesterday and two days ago; returns those days."""
    yesterday, two_days_ago = day_start(clock.t) - DAY, day_start(clock.t) - 2 * DAY
    for agent in ("alice", "bob", "carol"):
        view = engram.for_agent(agent)
        view.remember(f"{agent} planted tomatoes", created_at=yesterday + 60)
        view.remember(f"{agent} bought seeds", created_at=two_days_ago + 60)
    return yesterday, two_days_ago


def test_a_run_reads_the_store_once_for_every_agent_and_period(make_engram, clock, monkeypatch):
    # Each period of each agent used to read the whole store: agents x ~17 periods full passes, a
    # job that grows with the number of users (one agent per user in the adapters) times the store.
    engram = make_engram("sqlite")
    yesterday, two_days_ago = _two_days_of_three_agents(engram, clock)
    engram.for_agent("dave").remember("dave's old note", created_at=day_start(clock.t) - 40 * DAY)
    passes = []
    iter_all = engram.store.iter_all
    monkeypatch.setattr(engram.store, "iter_all", lambda *a, **k: passes.append(1) or iter_all(*a, **k))
    report = summaries.run(engram, SummarySettings(weekly=False), now=clock.t)
    assert len(passes) == 1
    assert report.changed == 6  # two days for each of three agents; dave's is past the lookback
    made = {(m.scope.agent, m.metadata["period_start"], m.metadata["source_memory_count"])
            for agent in ("alice", "bob", "carol", "dave") for m in summaries.list_summaries(engram.for_agent(agent))}
    assert made == {(a, day, 1) for a in ("alice", "bob", "carol") for day in (yesterday, two_days_ago)}


def test_a_run_announces_its_summaries_together(make_engram, clock, monkeypatch):
    """One batch of events for the run's summaries (the memory folder settles each agent's file
    once for them), every 200 at most, and those stored before a period that fails still told."""
    engram = make_engram("sqlite")
    yesterday, two_days_ago = _two_days_of_three_agents(engram, clock)
    batches: list[list[str]] = []
    engram.events.subscribe_batches(lambda events: batches.append([e.kind for e in events]))
    report = summaries.run(engram, SummarySettings(weekly=False), now=clock.t)
    assert report.changed == 6 and batches == [["stored"] * 6]

    def new_agents(*names: str) -> list[str]:
        for agent in names:
            engram.for_agent(agent).remember(f"{agent} fixed the fence", created_at=yesterday + 60)
        return list(names)

    with monkeypatch.context() as bounded:  # at most 2 a batch
        bounded.setattr(common, "ANNOUNCED_TOGETHER", 2)
        agents = new_agents("dave", "erin", "fay")
        batches.clear()
        summaries.run(engram, SummarySettings(weekly=False), now=clock.t, agents=agents)
        assert batches == [["stored", "stored"], ["stored"]]

    made = summaries.summarize_period

    def failing_for_ivy(engram, scope, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if scope.agent == "ivy":
            raise OSError("disk gone")
        return made(engram, scope, *args, **kwargs)

    monkeypatch.setattr(summaries, "summarize_period", failing_for_ivy)
    agents = new_agents("gus", "hal", "ivy")
    batches.clear()
    with pytest.raises(OSError):
        summaries.run(engram, SummarySettings(weekly=False), now=clock.t, agents=agents)
    assert batches == [["stored", "stored"]]  # gus's and hal's, stored before ivy's failed


def test_llm_summarizer_is_used_and_failure_falls_back(make_engram, clock):
    engram = make_engram("sqlite")
    start = day_start(clock.t) - DAY
    engram.remember("one", created_at=start + 1)
    engram.remember("two", created_at=start + 2)
    llm = EchoSummarizer()
    summaries.run(engram, SummarySettings(weekly=False), now=clock.t, summarizer=llm)
    (s,) = summaries.list_summaries(engram, "daily")
    assert llm.calls == [["one", "two"]] and "LLM summary of 2 notes" in s.content and s.metadata["method"] == "llm"
    other = make_engram("inmemory")
    other.remember("three", created_at=start + 3)
    summaries.run(other, SummarySettings(weekly=False), now=clock.t, summarizer=BrokenSummarizer())
    (s2,) = summaries.list_summaries(other)
    assert s2.metadata["method"] == "extractive" and "- three" in s2.content


def test_weekly_periods_are_iso_weeks_and_only_ended_ones():
    monday = dt.datetime(2027, 1, 11, tzinfo=dt.UTC).timestamp()
    periods = summaries.periods_ending_by(monday + 3 * DAY, "weekly", 14)
    assert [p.start for p in periods] == [monday - 7 * DAY, monday - 14 * DAY]
    assert all(p.end - p.start == 7 * DAY for p in periods)
    daily = summaries.periods_ending_by(monday + 5, "daily", 2)
    assert [p.end for p in daily] == [monday, monday - DAY]


def test_extractive_respects_max_chars():
    from engram.model import Memory

    memories = [Memory(id=str(i), key=str(i), content="word " * 100, created_at=i) for i in range(5)]
    text = summaries.extractive(memories, items=5, max_chars=150)
    assert len(text) <= 150


def test_list_summaries_rejects_unknown_period(make_engram):
    from engram.errors import ValidationError

    with pytest.raises(ValidationError) as err:
        summaries.list_summaries(make_engram("inmemory"), "monthly")
    assert err.value.field == "period_type"


def test_consolidation_merges_near_duplicates(backend, make_engram, clock, embedder):
    engram = make_engram(backend, embedder=embedder)
    # a and c get the keys engram derives from their text; b's key is its writer's.
    a = engram.remember("The user prefers dark mode in the editor", tags="ui", importance=0.4).memory
    b = engram.remember("the user prefers DARK MODE in the editor!", key="b", tags="prefs", importance=0.8).memory
    c = engram.remember("Dark mode in the editor: the user prefers it", importance=0.2).memory
    other = engram.remember("The build uses Python 3.11", key="other").memory
    session_copy = engram.for_agent("default", "s").remember(
        "The user prefers dark mode in the editor", scope="session").memory
    engram.link(c.key, "other")
    engram.store.touch([a.id], clock.t)
    report = consolidate.run(engram, ConsolidationSettings(threshold=0.95), now=clock.t)
    assert sorted(m.key for m in report.removed) == sorted([a.key, c.key])
    survivor = engram.get("b")
    assert survivor.id == b.id  # the most important member survives
    assert set(survivor.tags) == {"prefs", "ui"}
    assert survivor.importance == 0.8
    assert other.id in survivor.links  # c's link moved to the survivor
    merged = {h["key"]: h["content"] for h in survivor.metadata["merged_from"]}
    assert merged == {a.key: a.content, c.key: c.content}
    assert survivor.metadata["merged_recall_count"] == 1
    assert engram.store.get_many([session_copy.id])  # another scope is never merged in
    assert consolidate.run(engram, ConsolidationSettings(threshold=0.95), now=clock.t).removed == ()


def test_consolidation_never_merges_away_a_key_its_writer_chose(backend, make_engram, clock, embedder):
    engram = make_engram(backend, embedder=embedder)
    engram.remember("Buy milk on the way home", key="monday-todo")
    engram.remember("Buy milk on the way home!", key="tuesday-todo")
    unnamed = engram.remember("buy milk on the way home", importance=0.9).memory
    report = consolidate.run(engram, ConsolidationSettings(threshold=0.95), now=clock.t)
    # The unnamed copy joins a named one (even a less important one); both named ones stay.
    assert [m.id for m in report.removed] == [unnamed.id]
    assert engram.get("monday-todo").importance == 0.9
    assert engram.get("tuesday-todo").content == "Buy milk on the way home!"
    assert consolidate.run(engram, ConsolidationSettings(threshold=0.95), now=clock.t).removed == ()


def test_consolidation_keeps_the_same_words_with_other_attributes_apart(backend, make_engram, clock, embedder):
    engram = make_engram(backend, embedder=embedder)
    monday = engram.remember("Buy milk", metadata={"day": "monday"}).memory
    tuesday = engram.remember("Buy milk!", metadata={"day": "tuesday"}).memory
    about_ann = engram.remember("Likes tea", related_entity="Ann").memory
    about_bo = engram.remember("Likes tea!", related_entity="Bo").memory
    assert consolidate.run(engram, ConsolidationSettings(threshold=0.95), now=clock.t).removed == ()
    assert len(engram.store.get_many([monday.id, tuesday.id, about_ann.id, about_bo.id])) == 4
    twin = engram.remember("buy milk", metadata={"day": "monday"}).memory
    assert [m.id for m in consolidate.run(engram, ConsolidationSettings(threshold=0.95), now=clock.t).removed] \
        in ([twin.id], [monday.id])
    # The entity is the same name whatever its case, as its filter reads it: a copy about "ANN" joins "Ann".
    shouted = engram.remember("likes tea", related_entity="ANN").memory
    merged = consolidate.run(engram, ConsolidationSettings(threshold=0.95), now=clock.t).removed
    assert {m.id for m in merged} < {about_ann.id, shouted.id} and len(merged) == 1
    assert len(engram.store.get_many([about_bo.id])) == 1


def test_consolidation_keeps_the_same_words_with_other_numbers_apart(backend, make_engram, clock, embedder):
    # Texts that differ only in a number were merged: the embedding barely sees the digits, so
    # "room 214" and "room 241" were near-duplicates and one fact dropped out of recall.
    engram = make_engram(backend, embedder=embedder)
    words = "The design review with the platform team moved to room {} on the third floor"
    first = engram.remember(words.format(214)).memory
    second = engram.remember(words.format(241)).memory
    assert consolidate.run(engram, ConsolidationSettings(threshold=0.5), now=clock.t).removed == ()
    assert len(engram.store.get_many([first.id, second.id])) == 2
    # A reworded copy keeps its numbers (leading zeros aside), and merges as before.
    copy = engram.remember("the design review with the platform team moved to room 0214, on the third floor!").memory
    merged = consolidate.run(engram, ConsolidationSettings(threshold=0.5), now=clock.t).removed
    assert [m.id for m in merged] in ([copy.id], [first.id])
    assert len(engram.store.get_many([second.id])) == 1


def test_consolidation_below_threshold_and_without_vectors_does_nothing(make_engram, clock, embedder):
    engram = make_engram("sqlite")  # no embedder: no vectors, nothing compared
    engram.remember("same words here")
    engram.remember("same words here again")
    assert consolidate.run(engram, ConsolidationSettings(threshold=0.5), now=clock.t).removed == ()
    with_vectors = make_engram("inmemory", embedder=embedder)
    with_vectors.remember("apples and pears")
    with_vectors.remember("apples and plums")
    assert consolidate.run(with_vectors, ConsolidationSettings(threshold=0.99), now=clock.t).removed == ()


def test_consolidation_announces_its_merges_together_and_the_folder_follows(make_engram, clock, embedder, tmp_path):
    """Every 200 merges' events go to the listeners in one batch (the memory folder then writes
    each file once for them, not once per merge), and what was merged is in the folder and the
    audit trail as if each merge had been told on its own."""
    from engram.files.sync import FileSync

    engram = make_engram("sqlite", embedder=type(embedder)(dims=4096))
    syncer = FileSync(engram, tmp_path / "memory")
    syncer.attach()
    batches: list[int] = []
    engram.events.subscribe_batches(lambda events: batches.append(len(events)))
    copies = engram.remember_many([{"content": f"note g{n} item{n}" + "!" * copy} for n in range(450) for copy in (0, 1)])
    batches.clear()
    report = consolidate.run(engram, ConsolidationSettings(threshold=0.99), now=clock.t)
    assert report.changed == 450 and len(report.removed) == 450
    assert batches == [400, 400, 100]  # two events (forgotten, updated) a merge
    syncer.detach()
    assert not syncer.sync().changed  # the folder already said what the database does
    text = (tmp_path / "memory" / "agents" / "default" / "knowledge.md").read_text(encoding="utf-8")
    kept = {m.id for m in engram.store.iter_all()}
    assert len(kept) == 450 and all(f"id:{i}" in text for i in kept)
    assert not any(f"id:{m.id}" in text for m in report.removed)
    removed_ids = sorted(m.id for m in report.removed)
    assert {i for i, _ in engram.backend.audit_log().forgotten(removed_ids)} == set(removed_ids)
    assert {c.memory.id for c in copies} == kept | {m.id for m in report.removed}


def test_merges_made_before_one_fails_are_still_announced(make_engram, clock, embedder, monkeypatch):
    engram = make_engram("sqlite", embedder=type(embedder)(dims=4096))
    engram.remember_many([{"content": f"note g{n} item{n}" + "!" * copy} for n in range(3) for copy in (0, 1)])
    told: list[str] = []
    engram.events.subscribe_batches(lambda events: told.extend(e.kind for e in events))
    merge, calls = consolidate.merge, []

    def failing_third(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append(1)
        if len(calls) == 3:
            raise OSError("disk gone")
        return merge(*args, **kwargs)

    monkeypatch.setattr(consolidate, "merge", failing_third)
    with pytest.raises(OSError):
        consolidate.run(engram, ConsolidationSettings(threshold=0.99), now=clock.t)
    assert told == ["forgotten", "updated", "forgotten", "updated"]
    assert len(list(engram.store.iter_all())) == 4


def test_a_sessions_memories_are_summarised_in_that_session_never_shown_to_its_siblings(make_engram, clock):
    # The agent's summary held its sessions' memories: one session's content, stored in the agent's
    # scope, was recalled and listed by every other session of that agent.
    engram = make_engram("sqlite")
    yesterday = day_start(clock.t) - DAY
    alice = engram.for_agent("alice")
    alice.remember("alice waters the roses", created_at=yesterday + 60)
    alice.for_session("s1").remember("the surprise party is on friday", scope="session", created_at=yesterday + 120)
    alice.for_session("s2").remember("s2 asked about the weather", scope="session", created_at=yesterday + 180)
    assert summaries.run(engram, SummarySettings(weekly=False), now=clock.t).changed == 3
    made = {(str(m.scope), m.metadata["source_memory_count"])
            for m in summaries.list_summaries(engram.for_agent("alice", "s1"))}
    assert made == {("agent:alice", 1), ("session:alice/s1", 1)}
    s2 = engram.for_agent("alice", "s2")
    for summary in summaries.list_summaries(s2):
        assert "surprise party" not in summary.content
    assert not [h for h in s2.recall("surprise party friday") if "surprise party" in h.memory.content]
    (own,) = [m for m in summaries.list_summaries(s2) if m.scope.session == "s2"]
    assert "weather" in own.content


def test_consolidation_keeps_the_survivors_times_context_and_validity(backend, make_engram, clock, embedder):
    # A merge rewrites the survivor's tags and metadata only: the fact itself was last written when
    # its newest copy was, so recency (age since the last write) must not make it new; and what the
    # merge does not decide (search context, when the fact held) stays as its writer gave it.
    engram = make_engram(backend, embedder=embedder)
    survivor = engram.remember("the user prefers DARK MODE in the editor!", key="b", importance=0.8,
                               search_context="settings talk", valid_from=T0 - 10 * DAY,
                               valid_until=T0 + 100 * DAY).memory
    clock.advance(DAY)
    copy = engram.remember("The user prefers dark mode in the editor", importance=0.4).memory
    clock.advance(30 * DAY)
    consolidate.run(engram, ConsolidationSettings(threshold=0.95), now=clock.t)
    merged = engram.get("b")
    assert merged.id == survivor.id and merged.metadata["merged_from"][0]["key"] == copy.key
    assert (merged.search_context, merged.valid_from, merged.valid_until) == ("settings talk", T0 - 10 * DAY,
                                                                             T0 + 100 * DAY)
    assert merged.updated_at == copy.updated_at  # the group's last write, not the merge's time
    assert merged.last_accessed == clock.t  # kept in use: hygiene counts idleness from now


@pytest.mark.parametrize("max_content_chars", [300, 2000])
def test_a_summary_is_cut_to_the_stores_content_limit(tmp_path, max_content_chars):
    # Review: the summary (its header and up to lifecycle.summaries.max_chars of text) was written
    # straight to the store, past max_content_chars when max_chars is set above it, so the home
    # held a memory no door would accept: its snapshot export could not be imported back.
    import json

    from typer.testing import CliRunner

    from engram.engine import Engram
    from engram.interfaces.cli.app import app

    home, limits = tmp_path / "home", {"ENGRAM_MAX_CONTENT_CHARS": str(max_content_chars),
                                       "ENGRAM_LIFECYCLE__SUMMARIES__MAX_CHARS": "5000",
                                       "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    with Engram.from_settings(home=home, agent="alice", max_content_chars=max_content_chars,
                              embeddings={"provider": "none"}) as alice:
        yesterday = day_start(alice.clock()) - DAY
        for n in range(8):
            alice.remember(f"note {n}: " + "the staging database moved to the east region " * 6,
                           created_at=yesterday + 60 * n, importance=0.9)
    runner = CliRunner()

    def cli(*args: str) -> str:
        done = runner.invoke(app, ["--home", str(home), "--agent", "alice", *args], env=limits, catch_exceptions=False)
        assert done.exit_code == 0, done.output
        return done.output

    [summary] = [m for m in json.loads(cli("--json", "summaries", "--make", "--period", "daily"))]
    assert summary["content"].startswith("Daily summary from ") and "- note 0: the staging database" in summary["content"]
    assert len(summary["content"]) <= max_content_chars
    snapshot = tmp_path / "alice.json"
    cli("export", str(snapshot))
    other = tmp_path / "other"
    done = runner.invoke(app, ["--home", str(other), "--agent", "alice", "--json", "import", str(snapshot)], env=limits,
                         catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert summary["content"] in [m["content"] for m in json.loads(
        runner.invoke(app, ["--home", str(other), "--agent", "alice", "--json", "list", "--type", "summary"],
                      env=limits).output)]


def test_list_summaries_makes_the_period_asked_for_alone(make_engram, clock):
    """``engram summaries --make --period daily`` made the weekly summaries too (``--period`` only
    filtered what was shown): the make is of that period alone."""
    engram = make_engram("sqlite")
    engram.remember("a note from last week", created_at=day_start(clock.t) - 8 * DAY + 60)
    settings = SummarySettings(lookback_days=14)
    daily = summaries.list_summaries(engram, "daily", make=settings)
    assert [s.metadata["period_type"] for s in daily] == ["daily"]
    assert summaries.list_summaries(engram, "weekly") == []  # none made
    weekly = summaries.list_summaries(engram, "weekly", make=settings)
    assert [s.metadata["period_type"] for s in weekly] == ["weekly"]
    assert len(summaries.list_summaries(engram)) == 2
