"""One call returns a bounded page at every door: recall 1-100 hits, list 1-1000 rows, with offset
for the next page and an error naming the field and the range otherwise (issue 15)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.errors import ValidationError


@pytest.fixture
def engram(tmp_path: Path):
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False}) as instance:
        for i in range(30):
            instance.remember(f"apple orchard note number {i}", key=f"n{i:02d}")
        yield instance


def test_library_recall_and_list_refuse_huge_limits_naming_the_range(engram: Engram) -> None:
    for call, allowed in ((lambda: engram.recall("apple", limit=1_000_000_000), "1 to 100"),
                          (lambda: engram.recall("apple", limit=0), "1 to 100"),
                          (lambda: engram.list(limit=1_000_000_000), "1 to 1000")):
        with pytest.raises(ValidationError) as raised:
            call()
        assert raised.value.field == "limit" and allowed in str(raised.value)
    with pytest.raises(ValidationError) as raised:
        engram.recall("apple", limit=100, offset=950)
    assert raised.value.field == "offset" and "0 to 900" in str(raised.value)


def test_library_recall_pages_with_offset(engram: Engram) -> None:
    everything = [h.memory.key for h in engram.recall("apple orchard", limit=30, touch=False)]
    assert len(everything) == 30
    first = [h.memory.key for h in engram.recall("apple orchard", limit=10, touch=False)]
    second = [h.memory.key for h in engram.recall("apple orchard", limit=10, offset=10, touch=False)]
    assert first + second == everything[:20]


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_HOME=str(home), ENGRAM_EMBEDDINGS__PROVIDER="none", ENGRAM_FILES__ENABLED="false")
    return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_cli_recall_limit_is_capped_and_pages(engram: Engram, tmp_path: Path) -> None:
    big = _cli(tmp_path, "recall", "apple", "--limit", "1000000000")
    assert big.returncode == 2 and "limit" in big.stderr and "1 to 100" in big.stderr, big.stderr
    listed = _cli(tmp_path, "list", "--limit", "1000000000")
    assert listed.returncode == 2 and "1 to 1000" in listed.stderr
    first = json.loads(_cli(tmp_path, "--json", "recall", "apple orchard", "--limit", "5").stdout)["hits"]
    page = json.loads(_cli(tmp_path, "--json", "recall", "apple orchard", "--limit", "5", "--offset", "5").stdout)["hits"]
    assert len(page) == 5 and not {h["memory"]["key"] for h in first} & {h["memory"]["key"] for h in page}
