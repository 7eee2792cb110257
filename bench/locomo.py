"""Reading LoCoMo-format data for the recall-quality benchmark (see shared/data/README.md).

Each conversation becomes a list of turns (dia_id, speaker, text, session time) and a list of
questions with their evidence turns. Malformed evidence strings are repaired where their meaning
is clear (``D:11:26`` → ``D11:26``, ``D30:05`` → ``D30:5``, ``;``- or space-separated lists) and
dropped otherwise; both are counted so the report can say so.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_EVIDENCE = re.compile(r"^D:?(\d+):0*(\d+)$")


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    session: int
    time: float


@dataclass(frozen=True, slots=True)
class Question:
    question: str
    category: int
    evidence: tuple[str, ...]


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    repaired: int = 0
    dropped: int = 0
    speakers: tuple[str, str] = ("", "")
    session_times: dict[int, float] = field(default_factory=dict)


def parse_time(text: str) -> float:
    """``1:56 pm on 8 May, 2023`` → epoch seconds (UTC)."""
    cleaned = re.sub(r"\s+", " ", text.strip())
    moment = dt.datetime.strptime(cleaned, "%I:%M %p on %d %B, %Y")
    return moment.replace(tzinfo=dt.UTC).timestamp()


DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"


def data_file(text: str) -> Path:
    """``--data``'s type: a LoCoMo-format JSON file that exists, else argparse's usage error naming
    the path (the default one lives outside the repository, beside it in ``shared/data/``)."""
    import argparse

    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no LoCoMo-format JSON file at {path} (give one with --data PATH;"
                                         " docs/benchmarks.md says where the dev conversations live)")
    return path


def load(path: Path) -> list[Conversation]:
    data = json.loads(path.read_text())
    return [_conversation(item) for item in data]


def _conversation(item: dict) -> Conversation:
    conv = item["conversation"]
    turns: list[Turn] = []
    times: dict[int, float] = {}
    sessions = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
    for n in sessions:
        when = parse_time(conv[f"session_{n}_date_time"])
        times[n] = when
        for turn in conv[f"session_{n}"]:
            turns.append(Turn(turn["dia_id"], turn["speaker"], turn["text"], n, when))
    known = {t.dia_id for t in turns}
    result = Conversation(item.get("sample_id", ""), turns, [], speakers=(conv["speaker_a"], conv["speaker_b"]),
                          session_times=times)
    for qa in item["qa"]:
        evidence: list[str] = []
        for raw in qa.get("evidence", []):
            parts = [p for p in re.split(r"[;,\s]+", raw) if p]
            for part in parts:
                match = _EVIDENCE.match(part)
                fixed = f"D{match.group(1)}:{match.group(2)}" if match else None
                if fixed is None or fixed not in known:
                    result.dropped += 1
                    continue
                if fixed != raw:
                    result.repaired += 1
                if fixed not in evidence:
                    evidence.append(fixed)
        result.questions.append(Question(qa["question"], int(qa["category"]), tuple(evidence)))
    return result
