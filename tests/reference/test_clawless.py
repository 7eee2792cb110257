"""Clawless (reference 004) behaviours at its doors: the semantic-recall endpoint over a real socket,
and its configuration files and variables read by engram's settings."""

from __future__ import annotations

from tests.interfaces.conftest import Served


def test_semantic_recall_takes_a_plain_chat_id_and_echoes_it_back(served: Served) -> None:
    # Clawless: "Request body: `{"input":"current question","chatId":"optional","topK":3}`" and history
    # entries are "`{userMessage, botResponse, chatId, platform, timestamp}`"; its chat ids are plain.
    with served.client(served.alice) as c:
        for conversation, user, bot in (
            ("telegram:42", "My dog is called Biscuit", "Biscuit is a lovely name."),
            ("telegram:7", "My dog is called Rex", "Rex is a good dog."),
        ):
            c.post(f"/api/v1/history/{conversation}", json={"role": "user", "content": user})
            c.post(f"/api/v1/history/{conversation}", json={"role": "assistant", "content": bot})
        answer = c.post("/api/memory/semantic-recall", json={"input": "what is my dog called", "chatId": "42", "topK": 3})
        assert answer.status_code == 200, answer.text
        entries = answer.json()["entries"]
        assert [(e["userMessage"], e["chatId"], e["platform"]) for e in entries] == [
            ("My dog is called Biscuit", "42", "telegram")]
        # A full engram key still selects one conversation; a malformed chat id names the field.
        keyed = c.post("/api/memory/semantic-recall", json={"input": "dog", "chatId": "telegram:7"}).json()
        assert [e["chatId"] for e in keyed["entries"]] == ["7"]
        bad = c.post("/api/memory/semantic-recall", json={"input": "dog", "chatId": "4 2"})
        assert bad.status_code == 422 and bad.json()["field"] == "chatId"
