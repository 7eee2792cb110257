"""A YAML memory file's text is kept per item and joined (``YamlDocument.text``): after any edits
it must be exactly what dumping the whole list gives, hostile contents included."""

from __future__ import annotations

import random

import yaml

from engram.files.entry import build_entry
from engram.files.yaml_format import _dumper, parse

CONTENTS = ["plain", "multi\nline\ntext", "trailing space \nnext", "üñí©ødé ✓ 漢字 🎉", "# not a comment",
            "- a dash", "key: value", "'single'", '"double"', "word " * 40, "tab\there", "null", "123", "yes",
            " leading", "x\n\ny\n", "line\u2028separator", "a" + " b" * 80]


def _whole(doc_title: str, items: list[object]) -> str:
    body = yaml.dump({"memories": items}, Dumper=_dumper(), sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=100)
    return f"# {doc_title}\n{body}"


def test_the_text_kept_per_item_is_the_whole_list_dumped_after_any_edits() -> None:
    start = "# Notes\nmemories:\n- id: a0\n  content: first\n  tags: [x]\n- id: a1\n  content: |-\n    two\n    lines\n"
    for seed in range(20):
        rng = random.Random(seed)
        doc = parse(start if seed % 2 else "", "notes.yaml", max_content_chars=10_000)
        ids = [e.id for e in doc.parsed.entries]
        for n in range(60):
            roll = rng.random()
            content = rng.choice(CONTENTS) + rng.choice(CONTENTS)
            tags = rng.sample(["red", "blue", "ünï"], rng.randint(0, 2))
            if roll < 0.55 or not ids:
                doc.add(build_entry({"content": content, "id": f"e{n}", "tags": tags}, max_content_chars=10_000))
                ids.append(f"e{n}")
            elif roll < 0.75:
                assert doc.remove(ids.pop(rng.randrange(len(ids))))
            elif roll < 0.9:
                target = rng.choice(ids)
                assert doc.replace(target, build_entry({"content": content, "id": target}, max_content_chars=10_000))
            elif doc.lines and (line := rng.choice(doc.lines)) > 0:
                kept = doc.items[doc.lines.index(line)]
                assert doc.set_at(line, None)
                ids.remove(str(kept["id"]))  # type: ignore[index]
            if rng.random() < 0.5:  # as a sync pass does between changes, or not
                assert doc.text() == _whole(doc.title, doc.items), (seed, n)
        text = doc.text()
        assert text == _whole(doc.title, doc.items), seed
        again = parse(text, "notes.yaml", max_content_chars=10_000)
        assert [e.id for e in again.parsed.entries] == ids and not again.parsed.problems
    assert parse("", "empty.yaml", max_content_chars=100).text() == _whole("Empty", [])
