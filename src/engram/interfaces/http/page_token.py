"""The page token of one ``engram serve`` run: created at start, revoked on every way out.

The token printed with the page address is valid only while that server runs (as Jupyter's is).
It is revoked when the server stops by Ctrl-C, by SIGTERM (a service manager's stop) or SIGHUP
(its terminal closed): ``exit_on_signals`` turns those into a normal exit, so the ``finally`` that
revokes runs. A SIGKILL or a power cut leaves no exit path, so the token store names each run's
token after its process (``TokenStore.create_run_token``) and the next start on that host revokes
those whose process is gone (``TokenStore.revoke_orphaned_run_tokens``): which tokens are orphaned
is the token store's decision, not this interface's.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType


def exit_on_signals() -> None:
    """SIGTERM and SIGHUP end the process with a normal exit (``SystemExit``, status 128 + signal),
    so ``finally`` blocks run; uvicorn restores this handler and re-raises the signal after its own
    graceful shutdown."""

    def leave(signum: int, frame: FrameType | None) -> None:
        sys.exit(128 + signum)

    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            signal.signal(sig, leave)
