"""Named awkward contents every path must keep byte for byte: line endings, white space at the
ends, separators and marks Unicode treats specially, and text that looks like the memory files'
own syntax (markdown, YAML front matter, comments, fences, links, tags) or like JSON. Unlike
tests/fuzz_inputs.py's random draws, each case is named, so a failure says which content and
which path (library, PostgreSQL, HTTP, MCP, CLI, memory folder, snapshot, history, encryption)
changed it. What no store can hold (NUL, a lone surrogate) is fuzz_inputs.UNSTORABLE."""

from __future__ import annotations

AWKWARD = {
    "lone cr": "before\rafter",
    "crlf": "line one\r\nline two\r\n",
    "mixed line endings": "a\nb\r\nc\rd\n\r\ne",
    "spaces at both ends": "   padded both ends   ",
    "newlines at both ends": "\n\nwrapped in newlines\n\n",
    "trailing newline": "ends with a newline\n",
    "tabs": "\tcol1\tcol2\t",
    "line and paragraph separators": "para\u2028line\u2029para",
    "c1 and form feeds": "a\x0cb\x0bc\x1cd\x1de\x1ef\x85g",
    "bom at start": "\ufeffstarts with a BOM",
    "zwj emoji sequences": "family 👨\u200d👩\u200d👧\u200d👦 flag 🏳\ufe0f\u200d🌈 skin 👍🏽",
    "nfd combining marks": "cafe\u0301 n\u0303",
    "nfc precomposed": "caf\u00e9 \u00f1",
    "rtl and embeddings": "שלום עולם \u202bمرحبا\u202c end",
    "noncharacters and private use": "\ufffe\uffff \U0001ffff \ufdd0 \ue000\U000f0000",
    "markdown headings": "## Not a heading\n# nor this\n### nor this",
    "front matter": "---\nkey: value\ntags: [a, b]\n---\nbody",
    "a fence alone": "---",
    "html comments": "<!-- id:abc key:zz -->\ntext <!-- x -->",
    "yaml fields": "key: value\nid: 01ABC\ncontent: |\n  nested",
    "yaml specials": "? complex\n: value\n!!python/object x\n&anchor *alias\n%YAML 1.2",
    "list items": "- one\n- two\n  - nested",
    "code fences": "```python\nprint('x')\n```\n~~~\ntilde\n~~~",
    "wiki links": "see [[Other Note]] and [[a|b]]",
    "hash tags": "#tag #another-tag not#tag",
    "json object": '{"content": "x", "key": "y", "tags": ["a"]}',
    "json array": '[1, 2, {"a": null}]',
    "json escapes as text": '\\u0000 \\ud800 \\n "\\"',
    "backslashes": "C:\\path\\n\\t not escapes \\\\",
    "trailing backslash": "ends with a backslash\\",
    "quotes only": "'\"'\"",
}

# One line of 1,000,000 characters (~1 MB, two-byte characters at its end): stored where
# max_content_chars is raised to its ceiling.
ONE_MB_LINE = "x" * 999_000 + "\u00e9" * 1000
MAX_CHARS = 1_000_000

# Keys and tags are trimmed (and tags lowercased): these keep what is left exactly.
KEYS = {
    "separators": "a\u2028b\u2029c", "bom": "\ufeffkey", "zwj": "👨\u200d👩\u200d👧", "nfd": "cafe\u0301",
    "nfc": "caf\u00e9", "rtl override": "שלום\u202eevil", "heading": "## heading", "fence": "---",
    "comment": "<!-- id:x -->", "yaml field": "key: value", "list item": "- item", "backticks": "```code```",
    "wiki link": "[[wiki link]]", "hashtag": "#tag", "json": '{"a": 1}', "slashes": "a/b/../c", "dots": "..",
    "backslash": "a\\b", "windows device": "CON", "glob": "what? *star* |pipe| <lt>", "percent": "100% %2F",
    "quotes": "it's \"q\"", "nbsp": "a\u00a0b", "colons": "a:b:c", "yaml bool": "yes", "yaml null": "~",
    "leading zero": "0123", "exponent": "1e3", "inner spaces": "a  b",
}
TAGS = {
    "hashtag": "#tag", "wiki": "[[x]]", "colon": "a: b", "nfd": "e\u0301", "emoji": "🧠", "slash": "a/b",
    "quote": "'q'", "dash": "- x", "yaml bool": "yes", "yaml null": "null", "number": "123", "bracket": "[a]",
    "brace": "{b}", "separator": "a\u2028b", "bom": "\ufefft", "space inside": "two words", "anchor": "&anchor",
    "alias": "*alias", "yaml tag": "!!str", "percent": "%x",
}
