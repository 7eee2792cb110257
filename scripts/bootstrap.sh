#!/usr/bin/env bash
# Create .venv and install engram with the given extras; does nothing when already up to date.
# Versions come from requirements/lock.txt (pip constraints), so every checkout and CI run
# installs the same set; scripts/lock.sh re-resolves it from pyproject.toml's ranges.
# Usage: scripts/bootstrap.sh [extras]   (default extras: all)
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-all}"
python="${PYTHON:-python3}"
digest="$(cat pyproject.toml requirements/lock.txt | sha256sum | cut -c1-16)"
stamp=".venv/.engram-installed-$digest-${extras//,/_}"
if [ -f "$stamp" ]; then
    exit 0
fi
if [ ! -x .venv/bin/python ]; then
    echo "engram: creating .venv" >&2
    "$python" -m venv .venv
fi
echo "engram: installing engram-recall[$extras] into .venv (first run only)" >&2
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
# Metadata an older checkout built under the distribution's former name (engram): left in src/,
# it would still answer importlib.metadata and pip as a second installed copy.
rm -rf src/engram.egg-info
.venv/bin/python -m pip install --quiet --disable-pip-version-check -c requirements/lock.txt -e ".[$extras]" >&2
# Stamps of other versions are stale; another extras set of this version stays installed (pip
# never uninstalls extras), so its stamp is kept: ./engram and scripts/test.sh alternate without
# reinstalling each time.
find .venv -maxdepth 1 -name '.engram-installed-*' ! -name ".engram-installed-$digest-*" -delete
touch "$stamp"
