"""Fresh processes load the embedding model in the background (bench/startup.py times them): the
first answer of each door is still a hybrid one, and nothing is left half loaded at exit."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

CODE = "from engram.interfaces.cli.app import main; main()"
PET = "Caroline adopted a rescue greyhound last spring"
# Shares no word with PET: only the vector side can find it.
BY_MEANING = "does she have a pet dog?"


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    return {**env, "ENGRAM_HOME": str(home), **extra}


def cli(home: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CODE, *args], capture_output=True, text=True,
                          env=_env(home, **extra), timeout=120)


def _stored(home: Path) -> None:
    for content in (PET, "The quarterly budget review moved to Thursday", "Paris in spring is lovely"):
        done = cli(home, "remember", content)
        assert done.returncode == 0, done.stderr


def test_a_fresh_recall_embeds_the_query_with_the_model_loading_in_the_background(tmp_path: Path) -> None:
    _stored(tmp_path)
    done = cli(tmp_path, "--json", "recall", BY_MEANING)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["mode"] == "hybrid" and result["notes"] == []
    assert result["hits"][0]["memory"]["content"] == PET


def test_a_recall_that_never_embeds_still_exits_cleanly(tmp_path: Path) -> None:
    # No vector stored (embeddings were off when it was written): the recall answers from full text
    # while the model loads for nothing, and the process waits for it instead of exiting mid-load.
    done = cli(tmp_path, "remember", PET, ENGRAM_EMBEDDINGS__PROVIDER="none")
    assert done.returncode == 0, done.stderr
    done = cli(tmp_path, "--json", "recall", "greyhound")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["mode"] == "text" and result["hits"][0]["memory"]["content"] == PET
    assert done.stderr == ""


def test_the_first_mcp_call_of_a_fresh_server_is_answered_by_meaning(tmp_path: Path) -> None:
    _stored(tmp_path)
    params = StdioServerParameters(command=sys.executable, args=["-c", CODE, "mcp"], env=_env(tmp_path))

    async def run() -> list[dict]:
        async with Client(params) as client:  # the very first call: no tools/list before it
            result = await client.call_tool("recall", {"query": BY_MEANING, "limit": 1})
            assert not result.is_error, result.content
            return (result.structured_content or json.loads(result.content[0].text))["results"]

    results = asyncio.run(run())
    assert [r["content"] for r in results] == [PET]


async def _misconfigured_session(params: StdioServerParameters, errlog: Path) -> tuple[set[str], list[str]]:
    """The tools a server lists and the error texts of a call of each family, over the SDK's client."""
    with errlog.open("w") as log:
        async with Client(stdio_client(params, errlog=log)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            texts = []
            for name, arguments in (("recall", {"query": "pets"}), ("memory_store", {"key": "k", "content": "x"})):
                result = await client.call_tool(name, arguments)
                assert result.is_error, result.content
                texts.append(result.content[0].text)
            return names, texts


def test_mcp_with_unusable_settings_answers_every_call_with_the_error(tmp_path: Path) -> None:
    # It used to exit before the handshake, which a desktop client shows as "server disconnected"
    # with the reason in a log file: now the handshake completes, the tools are listed and every
    # call says which setting is wrong, what is wrong with it and where it was set.
    params = StdioServerParameters(command=sys.executable, args=["-c", CODE, "mcp"],
                                   env=_env(tmp_path, ENGRAM_RECALL__LIMIT="many"))
    names, texts = asyncio.run(_misconfigured_session(params, tmp_path / "stderr.txt"))
    assert {"remember", "recall", "memory_store", "memory_recall"} <= names
    for text in texts:
        assert "recall.limit" in text and "valid integer" in text and "ENGRAM_RECALL__LIMIT" in text, text
    stderr = (tmp_path / "stderr.txt").read_text()
    assert "recall.limit" in stderr and "ENGRAM_RECALL__LIMIT" in stderr, stderr


def test_mcp_names_the_config_file_a_bad_value_came_from(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[embeddings]\nprovider = "nosuch"\n', encoding="utf-8")
    params = StdioServerParameters(command=sys.executable, args=["-c", CODE, "mcp"], env=_env(tmp_path))
    _, texts = asyncio.run(_misconfigured_session(params, tmp_path / "stderr.txt"))
    for text in texts:
        assert "embeddings.provider" in text and '"nosuch"' in text and str(tmp_path / "config.toml") in text, text


def test_mcp_with_unusable_settings_still_exits_with_the_configuration_code(tmp_path: Path) -> None:
    # The client closes at once (no input): the error is on stderr and the exit code is 4, as the CLI's.
    done = subprocess.run([sys.executable, "-c", CODE, "mcp"], capture_output=True, text=True, input="",
                          env=_env(tmp_path, ENGRAM_RECALL__LIMIT="many"), timeout=120)
    assert done.returncode == 4, done.stderr
    assert "recall.limit" in done.stderr and "ENGRAM_RECALL__LIMIT" in done.stderr and done.stdout == ""
