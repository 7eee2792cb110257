"""The PHP decay rule and per-scope retention, with their edges."""

from __future__ import annotations

import pytest

from engram.lifecycle import decay, retention
from engram.lifecycle.settings import DecaySettings, RetentionSettings
from engram.model import Scope
from tests.lifecycle.conftest import remember_at

DAY = 86400.0


def keys(engram) -> set[str]:
    return {m.key for m in engram.store.iter_all()}


def test_decay_rule_and_its_edges(backend, make_engram, clock):
    engram = make_engram(backend)
    old = clock.t - 31 * DAY
    remember_at(engram, old, "faded", key="faded", importance=0.29)
    remember_at(engram, old, "at importance edge", key="imp-edge", importance=0.3)
    remember_at(engram, clock.t - 30 * DAY, "at age edge", key="age-edge", importance=0.1)
    remember_at(engram, old, "recalled once", key="recalled", importance=0.1)
    remember_at(engram, old, "core stays", key="core", category="core", importance=0.0)
    remember_at(engram, old, "summary stays", key="sum", type="summary", importance=0.0)
    engram.store.touch([engram.get("recalled").id], clock.t - 20 * DAY)
    report = decay.run(engram, DecaySettings(), now=clock.t)
    assert [m.key for m in report.removed] == ["faded"]
    assert keys(engram) == {"imp-edge", "age-edge", "recalled", "core", "sum"}
    assert decay.run(engram, DecaySettings(), now=clock.t).removed == ()  # idempotent


def test_decay_thresholds_are_configurable(make_engram, clock):
    engram = make_engram("sqlite")
    remember_at(engram, clock.t - 8 * DAY, "mid", key="mid", importance=0.45)
    report = decay.run(engram, DecaySettings(max_importance=0.5, min_age_days=7), now=clock.t)
    assert [m.key for m in report.removed] == ["mid"]


@pytest.mark.parametrize("basis", ["updated", "accessed"])
def test_retention_per_scope_with_edges(backend, make_engram, clock, basis):
    engram = make_engram(backend)
    session = engram.for_agent("default", "s1")
    remember_at(session, clock.t - 30 * DAY - 1, "session old", key="s-old", scope="session")
    remember_at(session, clock.t - 30 * DAY, "session edge", key="s-edge", scope="session")
    remember_at(engram, clock.t - 91 * DAY, "agent old", key="a-old")
    remember_at(engram, clock.t - 89 * DAY, "agent young", key="a-young")
    remember_at(engram, clock.t - 900 * DAY, "agent core", key="a-core", category="core")
    remember_at(engram, clock.t - 9000 * DAY, "global ancient", key="g", scope="global")
    for m in engram.store.iter_all():  # make "accessed" agree with the creation times
        engram.store.touch([m.id], m.created_at, recall=False)
    report = retention.run(engram, RetentionSettings(basis=basis), now=clock.t)
    assert sorted(m.key for m in report.removed) == ["a-old", "s-old"]
    assert keys(engram) == {"s-edge", "a-young", "a-core", "g"}
    assert all(m.scope in (Scope("default", "s1"), Scope("default")) for m in report.removed)


def test_retention_accessed_basis_keeps_recently_used(make_engram, clock):
    engram = make_engram("sqlite")
    m = remember_at(engram, clock.t - 200 * DAY, "old but used", key="used").memory
    engram.store.touch([m.id], clock.t - DAY)
    assert retention.run(engram, RetentionSettings(basis="updated"), now=clock.t - 1).removed
    remember_at(engram, clock.t - 200 * DAY, "old but used", key="used2")
    engram.store.touch([engram.get("used2").id], clock.t - DAY)
    assert retention.run(engram, RetentionSettings(basis="accessed"), now=clock.t).removed == ()


def test_global_limit_can_be_set(make_engram, clock):
    engram = make_engram("inmemory")
    remember_at(engram, clock.t - 11 * DAY, "global old", key="g", scope="global")
    report = retention.run(engram, RetentionSettings(global_days=10), now=clock.t)
    assert [m.key for m in report.removed] == ["g"]


def test_unlimited_retention_can_be_written_where_null_cannot(make_engram, clock, tmp_path, monkeypatch):
    # "none = unlimited" had no spelling in TOML (no null) or a variable ("none" was "not a valid
    # number"); 0, the way out a user would try, expires the scope at once.
    from engram.config import load_settings
    from engram.errors import ConfigError

    (tmp_path / "config.toml").write_text('[lifecycle.retention]\nagent_days = "unlimited"\n', encoding="utf-8")
    monkeypatch.setenv("ENGRAM_LIFECYCLE__RETENTION__SESSION_DAYS", "none")
    settings = load_settings(home=tmp_path).lifecycle.retention
    assert (settings.session_days, settings.agent_days, settings.global_days) == (None, None, None)
    engram = make_engram("sqlite")
    remember_at(engram, clock.t - 10_000 * DAY, "kept for ever", key="old")
    assert retention.run(engram, settings, now=clock.t).removed == ()
    monkeypatch.setenv("ENGRAM_LIFECYCLE__RETENTION__SESSION_DAYS", "soon")
    with pytest.raises(ConfigError, match=r'lifecycle\.retention\.session_days: "soon" is not a number of days '
                                          r'\(allowed: a number of days, 0 or more, or "unlimited"\) '
                                          r"\(from ENGRAM_LIFECYCLE__RETENTION__SESSION_DAYS\)"):
        load_settings(home=tmp_path)
    # A negative number names "unlimited" among what is allowed too (pydantic's bound said only
    # "Input should be greater than or equal to 0"), from a variable, the config file or an argument.
    monkeypatch.setenv("ENGRAM_LIFECYCLE__RETENTION__SESSION_DAYS", "-2")
    with pytest.raises(ConfigError, match=r'lifecycle\.retention\.session_days: -2 is out of range '
                                          r'\(allowed: a number of days, 0 or more, or "unlimited"\) '
                                          r"\(from ENGRAM_LIFECYCLE__RETENTION__SESSION_DAYS\)"):
        load_settings(home=tmp_path)
    monkeypatch.delenv("ENGRAM_LIFECYCLE__RETENTION__SESSION_DAYS")
    with pytest.raises(ConfigError, match=r'lifecycle\.retention\.global_days: -1\.5 is out of range '
                                          r'\(allowed: a number of days, 0 or more, or "unlimited"\) \(from an argument\)'):
        load_settings(home=tmp_path, lifecycle={"retention": {"global_days": -1.5}})
    assert keys(engram) == {"old"}
