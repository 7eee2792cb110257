#!/usr/bin/env bash
# Re-resolve requirements/lock.txt from pyproject.toml: the exact versions that CI and
# scripts/bootstrap.sh install (as pip constraints, so users of the package still resolve freely).
# Run it after changing a dependency range, then run the tests and commit both files.
# The resolver is uv, itself pinned here so the lock is reproducible; it runs from a throwaway venv.
set -euo pipefail
cd "$(dirname "$0")/.."
uv_version="0.13.8"
tool="$(mktemp -d)"
trap 'rm -rf "$tool"' EXIT
"${PYTHON:-python3}" -m venv "$tool"
"$tool/bin/python" -m pip install --quiet --disable-pip-version-check "uv==$uv_version"
# Direct dependencies at their lowest allowed version: CI tests the lower bounds pyproject.toml
# promises (users get newer ones); indirect ones at the newest. Every extra the dev install and the optional token counter use,
# resolved for the machine CI runs on (Linux x86-64 with the python3 here); another platform
# installs from the ranges without it.
"$tool/bin/uv" pip compile pyproject.toml --extra dev --extra tokens --resolution lowest-direct \
    --no-header --quiet --output-file requirements/lock.txt
sed -i '1i # Exact versions CI and scripts/bootstrap.sh install (pip -c). Regenerate with scripts/lock.sh.' requirements/lock.txt
