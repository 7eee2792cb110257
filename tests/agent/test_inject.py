from __future__ import annotations

from engram.agent.inject import (
    estimate_tokens,
    humanize_age,
    inject_memory,
    render_prompt_context,
    select_within_budget,
    to_prompt_context,
)


def test_budget_cuts_in_rank_order():
    facts = ["one two three", "a much longer fact with many many words in it here", "short"]
    # "## Relevant Memory" = 3 words -> 4 tokens; "- one two three" = 4 words -> 6; long one -> 16; "- short" -> 3.
    assert select_within_budget(facts, 10) == ["one two three"]
    # The long fact does not fit and ends the list: "short" is not packed in after it.
    assert select_within_budget(facts, 20) == ["one two three"]
    assert select_within_budget(facts, 28) == facts[:2]
    assert select_within_budget(facts, 29) == facts
    assert select_within_budget(facts, 3) == []


def test_relevant_memory_section(engram):
    engram.remember("User prefers dark mode", key="dark-mode")
    engram.remember("User's name is Alice", key="name")
    engram.remember("User identity", key="soul:user", category="core")
    out = inject_memory(engram, "dark mode user", max_tokens=2000)
    assert out.startswith("## Relevant Memory\n\n- User prefers dark mode")
    assert "identity" not in out


def test_token_budget_in_injection(engram):
    for i in range(5):
        engram.remember(f"garden fact number {i} " + "word " * 20, key=f"g{i}")
    full = inject_memory(engram, "garden fact", max_tokens=10_000)
    assert full.count("\n- ") == 5
    small = inject_memory(engram, "garden fact", max_tokens=80)
    assert small.count("\n- ") == 2
    assert estimate_tokens(small) <= 80 + 5


def test_nothing_relevant_renders_nothing(engram):
    assert inject_memory(engram, "anything") == ""
    engram.remember("cats are mammals", key="cats")
    assert inject_memory(engram, "spaceship propulsion") == ""
    assert inject_memory(None, "cats") == ""


def test_prompt_context_rendering(engram, clock):
    engram.remember("I used WebTool to fetch data", type="experience", importance=0.9)
    clock.advance(2 * 3600)
    engram.remember("User prefers formal language", type="social", importance=0.2)
    clock.advance(90)
    assert to_prompt_context(engram, limit=5, now=clock()) == (
        "- [experience] I used WebTool to fetch data (2 hours ago)\n"
        "- [social] User prefers formal language (1 minute ago)"
    )
    out = inject_memory(engram, "formal language", style="prompt_context", now=clock())
    assert out == "- [social] User prefers formal language (1 minute ago)"
    assert render_prompt_context([]) == ""


def test_humanize_age():
    assert humanize_age(0) == "just now"
    assert humanize_age(1) == "1 second ago"
    assert humanize_age(86_400 * 3) == "3 days ago"
    assert humanize_age(86_400 * 14) == "2 weeks ago"
    assert humanize_age(31_536_000 * 2) == "2 years ago"
    # a time after now (a source's clock ahead of ours) is said as such, not as "just now"
    assert humanize_age(-86_400 * 2) == "2 days from now"
    assert humanize_age(-0.5) == "just now"


def test_prompt_context_injection_keeps_its_rendered_lines_within_the_budget(engram):
    for i in range(6):
        engram.remember(f"Sailing fact {i}: the boat number {i} sails on the lake at dawn", type="experience")
    for budget in (30, 45, 60, 120):
        out = inject_memory(engram, "sailing boat lake", max_tokens=budget, style="prompt_context")
        lines = out.splitlines()
        # Each line carries its type and age beside the content; the whole of it fits the budget.
        assert lines and all(line.startswith("- [experience] Sailing fact") for line in lines)
        assert estimate_tokens(out) <= budget
        if len(lines) < 6:  # and the next line would not have fitted
            nxt = inject_memory(engram, "sailing boat lake", max_tokens=10_000, style="prompt_context").splitlines()
            assert estimate_tokens("\n".join(nxt[: len(lines) + 1])) > budget


def test_max_facts_or_max_tokens_of_zero_injects_nothing_and_a_bad_one_is_named(engram):
    # sclaw's InjectMemory: "Returns nil when the store is nil or no relevant facts are found", and its
    # MaxFacts <= 0 or MaxTokens <= 0 asks for nothing. engram refused max_facts=0 naming recall's
    # "limit", an argument the caller never passed, and a max_tokens that is no number failed in a comparison.
    import pytest

    from engram.errors import ValidationError

    engram.remember("User prefers dark mode", key="dark-mode")
    assert inject_memory(engram, "dark mode", max_facts=1) == "## Relevant Memory\n\n- User prefers dark mode"
    for nothing in ({"max_facts": 0}, {"max_facts": -1}, {"max_tokens": 0}, {"max_tokens": -5}):
        assert inject_memory(engram, "dark mode", **nothing) == ""
    for wrong, field in (({"max_facts": 101}, "max_facts"), ({"max_facts": "3"}, "max_facts"),
                         ({"max_facts": 2.5}, "max_facts"), ({"max_tokens": None}, "max_tokens"),
                         ({"max_tokens": "2000"}, "max_tokens")):
        with pytest.raises(ValidationError) as refused:
            inject_memory(engram, "dark mode", **wrong)
        assert refused.value.field == field, refused.value


def test_a_budget_of_the_wrong_type_says_what_is_allowed_once(engram):
    # The type error put "an integer, " before what is allowed, which for these budgets already opens with
    # "an integer": "allowed: an integer, an integer up to 100 (0 or less: nothing injected)".
    import pytest

    from engram.errors import ValidationError

    for wrong, allowed in (({"max_facts": "3"}, "an integer up to 100 (0 or less: nothing injected)"),
                           ({"max_tokens": 1.5}, "an integer (0 or less: nothing injected)")):
        with pytest.raises(ValidationError) as refused:
            inject_memory(engram, "dark mode", **wrong)
        assert refused.value.allowed == allowed, refused.value
