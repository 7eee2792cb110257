#!/usr/bin/env bash
# Re-resolve the two locks from pyproject.toml: the exact versions that CI and
# scripts/bootstrap.sh install (as pip constraints, so users of the package still resolve freely).
#   requirements/lock.txt         direct dependencies at their LOWEST allowed version: the lower
#                                 bounds pyproject.toml promises (the full suite runs on it);
#   requirements/lock-newest.txt  everything at the NEWEST allowed version: what a user's
#                                 `pip install 'engram-recall[all]'` gets today (scripts/test.sh
#                                 runs a subset of the suite on it);
#   requirements/lock-crewai.txt  the CrewAI adapter's test set (dev-crewai) at its LOWEST allowed
#                                 versions, as lock.txt: CrewAI holds the MCP SDK below 2, which
#                                 dev's server extra cannot take, so it has a venv and pass of its own.
# Run it after changing a dependency range (and now and then, to pick up new releases within the
# ranges), then run scripts/test.sh and commit the four files.
# The resolver is uv, itself pinned here so the locks are reproducible; it runs from a throwaway venv.
set -euo pipefail
cd "$(dirname "$0")/.."
uv_version="0.13.8"
tool="$(mktemp -d)"
trap 'rm -rf "$tool"' EXIT
"${PYTHON:-python3}" -m venv "$tool"
"$tool/bin/python" -m pip install --quiet --disable-pip-version-check "uv==$uv_version"
# The dev extras (dev for the lowest lock; dev-uncapped for the newest; dev-crewai for the CrewAI one: see pyproject.toml) and the
# optional token counter, resolved for the machine CI runs
# on (Linux x86-64 with the python3 here); another platform installs from the ranges without it.
# In the lowest lock, indirect dependencies are at their newest (uv's lowest-direct).
compile() {  # compile RESOLUTION FILE EXTRA HEADER
    "$tool/bin/uv" pip compile pyproject.toml --extra "$3" --extra tokens --resolution "$1" \
        --upgrade --no-header --quiet --output-file "$2"
    sed -i "1i # $4 Regenerate with scripts/lock.sh." "$2"
}
compile lowest-direct requirements/lock.txt dev "Exact versions CI and scripts/bootstrap.sh install (pip -c)."
compile highest requirements/lock-newest.txt dev-uncapped \
    "Newest versions within pyproject.toml's ranges, which scripts/test.sh's second pass installs (pip -c)."
compile lowest-direct requirements/lock-crewai.txt dev-crewai \
    "Exact versions scripts/test.sh's CrewAI pass installs (pip -c): pyproject.toml's dev-crewai at its lower bounds."
