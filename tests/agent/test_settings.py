"""ChatSettings: out-of-range values are refused when settings load, naming the setting."""

from __future__ import annotations

import pytest

from engram.config import load_settings
from engram.errors import ConfigError


@pytest.mark.parametrize("value", ["0", "101", "500"])
def test_inject_max_facts_is_checked_when_settings_load(monkeypatch, tmp_path, value):
    # QA: 500 passed validation, then every turn failed with "limit: 500 is out of range".
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path))
    monkeypatch.setenv("ENGRAM_CHAT__INJECT_MAX_FACTS", value)
    with pytest.raises(ConfigError, match=r"chat\.inject_max_facts"):
        load_settings()


def test_inject_max_facts_bounds_are_accepted(monkeypatch, tmp_path):
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path))
    for value in ("1", "100"):
        monkeypatch.setenv("ENGRAM_CHAT__INJECT_MAX_FACTS", value)
        assert load_settings().chat.inject_max_facts == int(value)
