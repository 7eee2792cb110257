#!/usr/bin/env bash
# Create .venv and install engram with the given extras; does nothing when already up to date.
# Usage: scripts/bootstrap.sh [extras]   (default extras: all)
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-all}"
python="${PYTHON:-python3}"
stamp=".venv/.engram-installed-$(cat pyproject.toml | sha256sum | cut -c1-16)-${extras//,/_}"
if [ -f "$stamp" ]; then
    exit 0
fi
if [ ! -x .venv/bin/python ]; then
    echo "engram: creating .venv" >&2
    "$python" -m venv .venv
fi
echo "engram: installing engram[$extras] into .venv (first run only)" >&2
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[$extras]" >&2
rm -f .venv/.engram-installed-*
touch "$stamp"
