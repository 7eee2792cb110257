"""The page token each ``engram serve`` run makes: named so that a list read after the run tells the
truth, and so that a later start finds those a killed server left."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_a_servers_page_token_once_revoked_is_not_listed_as_this_runs(tmp_path: Path) -> None:
    # `engram token list --all` showed a revoked page token as "engram serve (this run, pid N on HOST)"
    # long after that run had ended (the list leaves revoked ones out without --all).
    import socket

    from engram.auth import TokenStore

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(gone.stdout)
    tokens = TokenStore.open(tmp_path / "tokens.db")
    try:
        _, run = tokens.create_run_token("alice")
        tokens.revoke(run.id)
        listed = [t for t in tokens.list(include_revoked=True) if t.id == run.id]
        assert listed and listed[0].revoked_at is not None
        assert listed[0].name == f"engram serve page (run pid {os.getpid()} on {socket.gethostname()})"
        assert "this run" not in listed[0].name
        # Run tokens left by a killed server are still found, under either name.
        _, earlier = tokens.create("alice", name=f"engram serve (this run, pid {dead_pid} on {socket.gethostname()})")
        _, later = tokens.create("alice", name=f"engram serve page (run pid {dead_pid} on {socket.gethostname()})")
        _, live = tokens.create_run_token("alice")
        _, kept = tokens.create("alice", name="mine")
        # Another host's run: whether its server runs cannot be seen from here, so it stays.
        _, elsewhere = tokens.create("alice", name=f"engram serve page (run pid {dead_pid} on not-{socket.gethostname()})")
        assert sorted(tokens.revoke_orphaned_run_tokens()) == sorted([earlier.id, later.id])
        assert sorted(t.id for t in tokens.list()) == sorted([live.id, kept.id, elsewhere.id])
    finally:
        tokens.close()
