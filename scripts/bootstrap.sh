#!/usr/bin/env bash
# Create a virtualenv and install engram with the given extras; does nothing when already up to date.
# Versions come from a lock (pip constraints), so every checkout and CI run installs the same set;
# scripts/lock.sh re-resolves both locks from pyproject.toml's ranges:
#   lowest  requirements/lock.txt into .venv: the lower bounds (./engram and the full test suite);
#   newest  requirements/lock-newest.txt into .venv-newest: the newest versions within the ranges,
#           what `pip install engram-recall` gets today (scripts/test.sh's second pass);
#   crewai  requirements/lock-crewai.txt into .venv-crewai: the CrewAI adapter and its test (scripts/test.sh's
#           third pass; CrewAI's MCP SDK cap keeps it out of the other two).
# Usage: scripts/bootstrap.sh [extras] [lowest|newest|crewai]   (defaults: all, lowest)
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-all}"
case "${2:-lowest}" in
    lowest) lock="requirements/lock.txt" venv=".venv" ;;
    newest) lock="requirements/lock-newest.txt" venv=".venv-newest" ;;
    crewai) lock="requirements/lock-crewai.txt" venv=".venv-crewai" ;;
    *) echo "engram: bootstrap.sh: the second argument is lowest, newest or crewai, not '$2'" >&2; exit 2 ;;
esac
python="${PYTHON:-python3}"
digest="$(cat pyproject.toml "$lock" | sha256sum | cut -c1-16)"
stamp="$venv/.engram-installed-$digest-${extras//,/_}"
if [ -f "$stamp" ]; then
    exit 0
fi
if [ ! -x "$venv/bin/python" ]; then
    echo "engram: creating $venv" >&2
    "$python" -m venv "$venv"
fi
echo "engram: installing engram-recall[$extras] into $venv from $lock (first run only)" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
# Metadata an older checkout built under the distribution's former name (engram): left in src/,
# it would still answer importlib.metadata and pip as a second installed copy.
rm -rf src/engram.egg-info
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -c "$lock" -e ".[$extras]" >&2
# Stamps of other versions are stale; another extras set of this version stays installed (pip
# never uninstalls extras), so its stamp is kept: ./engram and scripts/test.sh alternate without
# reinstalling each time.
find "$venv" -maxdepth 1 -name '.engram-installed-*' ! -name ".engram-installed-$digest-*" -delete
touch "$stamp"
