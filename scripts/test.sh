#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh "dev"
exec .venv/bin/python -m pytest "$@"
