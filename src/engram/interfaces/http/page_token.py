"""The page token of one ``engram serve`` run: created at start, revoked on every way out.

The token printed with the page address is valid only while that server runs (as Jupyter's is).
It is revoked when the server stops by Ctrl-C, by SIGTERM (a service manager's stop) or SIGHUP
(its terminal closed): ``exit_on_signals`` turns those into a normal exit, so the ``finally`` that
revokes runs. A SIGKILL or a power cut leaves no exit path, so each run's token is named after its
process (``engram serve page (run pid N on HOST)``) and the next start on that host revokes those
whose process is gone. The name reads true after the run too: ``engram token list --all`` shows it
beside the time it was revoked (it was "engram serve (this run, ...)", which a revoked token's row
still claimed long after that run had ended); tokens named so before are still recognised.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import sys
from types import FrameType

from engram.auth import TokenInfo, TokenStore

_NAME = re.compile(r"^engram serve page \(run pid (\d+) on (\S+)\)$")
_EARLIER_NAME = re.compile(r"^engram serve \(this run(?:, pid (\d+) on (\S+))?\)$")  # as they were named before


def create(tokens: TokenStore, agent: str) -> tuple[str, TokenInfo]:
    """A token for this run, named so a later start can tell whether its process is gone."""
    return tokens.create(agent, name=f"engram serve page (run pid {os.getpid()} on {socket.gethostname()})")


def expire_orphans(tokens: TokenStore) -> list[str]:
    """Revoke run tokens of servers on this host that are no longer running (and those of runs
    before tokens were named by process); returns the ids revoked."""
    here = socket.gethostname()
    revoked = []
    for info in tokens.list():
        found = _NAME.match(info.name) or _EARLIER_NAME.match(info.name)
        if found is None:
            continue
        pid, host = found.groups()
        if pid is not None and (host != here or _alive(int(pid))):
            continue
        tokens.revoke(info.id)
        revoked.append(info.id)
    return revoked


def exit_on_signals() -> None:
    """SIGTERM and SIGHUP end the process with a normal exit (``SystemExit``, status 128 + signal),
    so ``finally`` blocks run; uvicorn restores this handler and re-raises the signal after its own
    graceful shutdown."""

    def leave(signum: int, frame: FrameType | None) -> None:
        sys.exit(128 + signum)

    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            signal.signal(sig, leave)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True
