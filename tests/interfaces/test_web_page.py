"""The web page in headless Debian Chromium (Selenium): find, edit and forget a memory; page through
500; draw the graph; read the stats; and check that looking changes nothing. Screenshots are
kept in test-artifacts/ (CI keeps them as artefacts)."""

from __future__ import annotations

import datetime as dt
import shutil
import time
from pathlib import Path

import httpx
import pytest

from engram.interfaces import seams
from tests.interfaces.conftest import Served, serving

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and DRIVER), reason="Debian's chromium and chromium-driver are not installed (scripts/install-browser.sh)")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture
def browser():  # noqa: ANN201
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1280,900",
                 "--disable-dev-shm-usage"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def test_find_edit_forget_on_the_page(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    with httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {served.alice}"}) as api:
        stored = api.post("/api/v1/memory", json={"content": "The user's cat is called Miso", "tags": ["pets"],
                                                  "key": "cat-name", "valid_from": "2024-05-01T12:00:00Z"}).json()
        other = api.post("/api/v1/memory", json={"content": "The user lives in Lisbon", "links": ["cat-name"]}).json()
    mid = stored["memory_id"]
    wait = WebDriverWait(browser, 20)

    browser.get(f"{served.url}/?token={served.alice}")  # as printed by `engram serve`
    wait.until(ec.text_to_be_present_in_element((By.ID, "who"), "agent alice"))
    assert "token=" not in browser.current_url  # the token does not linger in the address bar

    search = browser.find_element(By.ID, "q")
    search.send_keys("what is the cat called")
    browser.find_element(By.ID, "search-btn").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "hit(s)"))
    row = wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, f'tr.mem-row[data-id="{mid}"]')))
    assert "Miso" in row.text and "=" in row.text  # the score and its parts are shown

    row.click()
    content = wait.until(ec.visibility_of_element_located((By.ID, "edit-content")))
    assert content.get_attribute("value") == "The user's cat is called Miso"
    assert "valid from" in browser.find_element(By.ID, "d-meta").text  # the memory's valid time is shown
    wait.until(lambda d: [a.text for a in d.find_elements(By.CSS_SELECTOR, "#d-links a")] == [other["key"]])
    content.clear()
    content.send_keys("The user's cat is called Mochi")
    browser.find_element(By.ID, "save-btn").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "saved"))
    wait.until(ec.text_to_be_present_in_element((By.ID, "versions"), "Miso"))
    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "web-page-edit.png"))
    with httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {served.alice}"}) as api:
        assert api.get(f"/api/v1/memory/{mid}").json()["content"] == "The user's cat is called Mochi"

    browser.find_element(By.ID, "forget-reason").send_keys("the user asked")
    browser.find_element(By.ID, "forget-btn").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "forgot cat-name"))
    wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, f'tr.mem-row[data-id="{mid}"]'))
    browser.save_screenshot(str(ARTIFACTS / "web-page-after-forget.png"))
    with httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {served.alice}"}) as api:
        assert api.get(f"/api/v1/memory/{mid}").status_code == 404
        assert api.get(f"/api/v1/memory/{other['memory_id']}").json()["links"] == []


def test_saving_one_field_on_the_page_leaves_the_others_byte_for_byte(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    content = "line1\r\nline2\rline3  "  # a textarea shows these line ends as \n
    with httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {served.alice}"}) as api:
        mid = api.post("/api/v1/memory", json={"content": content, "key": "x-crlf", "importance": 0.7}).json()["memory_id"]
    wait = WebDriverWait(browser, 20)
    browser.get(f"{served.url}/?token={served.alice}")
    wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, f'tr.mem-row[data-id="{mid}"]'))).click()
    tags = wait.until(ec.visibility_of_element_located((By.ID, "edit-tags")))
    tags.send_keys("kept")
    browser.find_element(By.ID, "save-btn").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "saved"))
    importance = browser.find_element(By.ID, "edit-importance")
    importance.clear()
    browser.find_element(By.ID, "save-btn").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "importance"))
    with httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {served.alice}"}) as api:
        got = api.get(f"/api/v1/memory/{mid}").json()
        assert (got["content"], got["tags"], got["importance"]) == (content, ["kept"], 0.7)
        assert api.get(f"/api/v1/memory/{mid}/versions").json()["versions"] == []
    # The audit tab says which field the save changed.
    browser.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="audit"]').click()
    entry = wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "#audit li.event.updated")))
    assert "changed tags" in entry.text and "x-crlf" in entry.text


def test_page_without_a_token_asks_for_one(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{served.url}/")
    browser.find_element(By.ID, "token").send_keys("eg_00000000_wrong")
    browser.find_element(By.CSS_SELECTOR, "#token-form button").click()
    WebDriverWait(browser, 20).until(ec.text_to_be_present_in_element((By.ID, "status"), "valid API token"))


TOPICS = ("gardening", "sailing", "chess", "baking", "astronomy", "cycling", "pottery")


def _seed(served: Served, n: int = 500, links: int = 60):  # noqa: ANN202
    """n memories for alice (importance 0.0-0.9, seven topics) and a chain of links among the first."""
    alice = served.engram.for_agent("alice")
    alice.remember_many({"content": f"Note {i:03d} about {TOPICS[i % 7]}", "key": f"note-{i:03d}",
                         "importance": (i % 10) / 10, "tags": [f"t{i % 5}"]} for i in range(n))
    for i in range(links):
        alice.link(f"note-{i:03d}", f"note-{i + 1:03d}")
    return alice


def _open(browser, served: Served):  # noqa: ANN001, ANN202
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 60)
    browser.get(f"{served.url}/?token={served.alice}")
    wait.until(ec.text_to_be_present_in_element((By.ID, "who"), "agent alice"))
    return wait


def _row_ids(browser) -> list[str]:  # noqa: ANN001
    # Looked up afresh and read in one go in the page: the listing is redrawn whole when it loads (a
    # filter changed, a page turned), so rows found by one WebDriver call and read by the next could
    # be gone in between (StaleElementReferenceException while a wait polled during the redraw).
    return browser.execute_script("return [...document.querySelectorAll('tr.mem-row')].map((r) => r.dataset.id)")


def test_page_through_500_memories_sort_and_read_the_stats(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    alice = _seed(served)
    served.engram.for_agent("bob").remember_many({"content": f"Bob's note {i}"} for i in range(7))
    wait = _open(browser, served)
    wait.until(ec.text_to_be_present_in_element((By.ID, "page-info"), "1–50 of 500"))
    seen: list[str] = []
    for page in range(10):
        wait.until(ec.text_to_be_present_in_element((By.ID, "page-info"), f"{page * 50 + 1}–{page * 50 + 50} of 500"))
        seen += _row_ids(browser)
        if page == 0:
            ARTIFACTS.mkdir(exist_ok=True)
            browser.save_screenshot(str(ARTIFACTS / "web-list-page-1.png"))
        if page < 9:
            browser.find_element(By.ID, "next").click()
    assert browser.find_element(By.ID, "next").get_attribute("disabled") is not None  # the last page
    assert len(seen) == 500 and set(seen) == {m.id for m in alice.list(limit=1000)}

    browser.find_element(By.CSS_SELECTOR, 'th[data-order="importance"]').click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "page-info"), "1–50 of 500"))
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "tr.mem-row td:nth-child(5)").text == "0.90")
    importances = [float(td.text) for td in browser.find_elements(By.CSS_SELECTOR, "tr.mem-row td:nth-child(5)")]
    assert importances == sorted(importances, reverse=True) and len(importances) == 50

    browser.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="stats"]').click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "stat-memories"), "500"))
    store = browser.find_element(By.ID, "stat-store").text
    assert "sqlite" in store and "100.0% (500 of 500)" in store and "what alice sees" in store
    assert "507" not in browser.find_element(By.ID, "stats").text  # bob's 7 are not alice's to count
    assert "learned" in browser.find_element(By.ID, "stat-types").text
    assert "agent:alice" in browser.find_element(By.ID, "stat-scopes").text
    browser.save_screenshot(str(ARTIFACTS / "web-stats.png"))


def test_graph_of_the_store_and_of_a_query(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    _seed(served)
    wait = _open(browser, served)
    browser.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="graph"]').click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "graph-status"), "drawn 500 memories, 60 links"))
    counts = browser.execute_script("const g = window.engramGraph; const b = g.elements().boundingBox();"
                                    "return [g.nodes().length, g.edges().length, b.w, b.h];")
    assert counts[:2] == [500, 60] and counts[2] > 0 and counts[3] > 0  # laid out, not stacked on one point
    browser.save_screenshot(str(ARTIFACTS / "web-graph-store.png"))

    query = browser.find_element(By.ID, "graph-q")
    query.send_keys("note about chess")
    browser.find_element(By.ID, "graph-btn").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "graph-status"), "neighbourhood of"))
    labels = browser.execute_script("return window.engramGraph.nodes('[hit = 1]').map((n) => n.data('content'));")
    assert labels and all("chess" in text for text in labels)
    browser.save_screenshot(str(ARTIFACTS / "web-graph-query.png"))

    browser.execute_script("window.engramGraph.nodes('[hit = 1]')[0].emit('tap');")  # a click on a node
    content = wait.until(ec.visibility_of_element_located((By.ID, "edit-content")))
    assert "chess" in content.get_attribute("value")


def test_browsing_and_searching_change_no_memory(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    alice = _seed(served, n=60, links=10)
    alice.update("note-001", content="Note 001 about sailing, revised")  # a version to look at
    before = [m.to_dict() for m in alice.list(limit=1000, order="oldest")]
    audit_before = seams.audit(alice).recent(limit=500)
    wait = _open(browser, served)
    wait.until(ec.text_to_be_present_in_element((By.ID, "page-info"), "of 60"))
    browser.find_element(By.ID, "next").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "page-info"), "51–60 of 60"))
    for order in ("importance", "accessed", "recent", "recent"):
        browser.find_element(By.CSS_SELECTOR, f'th[data-order="{order}"]').click()
        wait.until(ec.text_to_be_present_in_element((By.ID, "page-info"), "1–50 of 60"))
    for words in ("gardening", "note about sailing", "chess"):
        search = browser.find_element(By.ID, "q")
        search.clear()
        search.send_keys(words)
        browser.find_element(By.ID, "search-btn").click()
        wait.until(ec.text_to_be_present_in_element((By.ID, "status"), f"for “{words}”"))
        wait.until(lambda d: _row_ids(d))
        browser.find_element(By.CSS_SELECTOR, "tr.mem-row").click()
        wait.until(lambda d: d.find_element(By.ID, "d-key").text)
    alice_note = alice.get("note-001")
    browser.execute_script("document.querySelector('#q').value = ''")
    browser.find_element(By.ID, "search-btn").click()
    wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, f'tr.mem-row[data-id="{alice_note.id}"]'))).click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "versions"), "Note 001 about sailing"))
    browser.find_element(By.CSS_SELECTOR, "#d-links a").click()
    browser.find_element(By.ID, "d-graph").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "graph-status"), "neighbourhood of"))
    for tab, ready in (("stats", (By.ID, "stat-memories")), ("audit", (By.CSS_SELECTOR, "#audit li")),
                       ("conversations", (By.CSS_SELECTOR, "#conversations li"))):
        browser.find_element(By.CSS_SELECTOR, f'#tabs button[data-tab="{tab}"]').click()
        wait.until(ec.presence_of_element_located(ready))
    after = [m.to_dict() for m in alice.list(limit=1000, order="oldest")]
    assert after == before  # no access marks, no strengthening, no edits
    assert all(m["recall_count"] == 0 for m in after)
    # No change in the audit trail; the searches are there as reads (ClawCode audits all access).
    trail = seams.audit(alice).recent(limit=500)
    assert [e for e in trail if e["action"] != "recalled"] == audit_before
    assert {"gardening", "note about sailing", "chess"} <= {e["detail"]["query"] for e in trail if e["action"] == "recalled"}


def test_another_token_leaves_nothing_of_the_previous_agent_on_the_page(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    alice = served.engram.for_agent("alice")
    secret = alice.remember("Alice's safe code is 4711", key="safe-code").memory
    alice.update(secret, content="Alice's safe code is 9922")  # an earlier version in the detail too
    served.engram.for_agent("bob").remember("Bob plays the cello", key="cello")
    wait = _open(browser, served)
    wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, f'tr.mem-row[data-id="{secret.id}"]'))).click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "versions"), "4711"))

    def shown() -> str:  # what a person sees, and what the form fields hold
        fields = browser.execute_script("return [...document.querySelectorAll('input, textarea')].map((e) => e.value)")
        return browser.find_element(By.TAG_NAME, "body").text + "\n".join(fields)

    browser.find_element(By.ID, "token").send_keys(served.bob)
    browser.find_element(By.CSS_SELECTOR, "#token-form button").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "who"), "agent bob"))
    wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "tr.mem-row")))
    assert "cello" in shown() and "safe code" not in shown() and "4711" not in shown()
    assert not browser.find_element(By.ID, "detail").is_displayed()

    browser.find_element(By.ID, "token").send_keys("eg_00000000_wrong")  # a refused token shows no one's
    browser.find_element(By.CSS_SELECTOR, "#token-form button").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "valid API token"))
    assert "cello" not in shown() and "not signed in" in browser.find_element(By.ID, "who").text


def test_linking_on_the_page_says_what_happened(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    alice = served.engram.for_agent("alice")
    diary = alice.remember("Alice keeps a diary", key="diary").memory
    alice.remember("Alice hikes in the Alps", key="hiking")
    served.engram.for_agent("bob").remember("Bob plays the cello", key="cello")
    wait = _open(browser, served)
    wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, f'tr.mem-row[data-id="{diary.id}"]'))).click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "d-key"), "diary"))

    def link(to: str) -> None:
        box = browser.find_element(By.ID, "link-to")
        box.clear()
        box.send_keys(to)
        browser.find_element(By.CSS_SELECTOR, "#link-form button").click()

    link("cello")  # bob's key: not alice's to link
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), 'memory not found: "cello"'))
    assert browser.find_element(By.ID, "status").get_attribute("class") == "error"
    link("hiking")
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "linked diary and hiking"))
    assert browser.find_element(By.ID, "status").get_attribute("class") != "error"  # the refusal is not left in red
    assert [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#d-links a")] == ["hiking"]


def test_page_opened_without_a_token_says_what_it_needs(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{served.url}/")  # the address without the token `engram serve` printed
    WebDriverWait(browser, 20).until(ec.text_to_be_present_in_element((By.ID, "status"), "Enter an API token above"))
    assert browser.find_element(By.ID, "status").get_attribute("class") == "error"
    assert browser.find_element(By.ID, "who").text == "not signed in"


def test_a_search_in_one_scope_finds_its_hits_ranked_below_the_others(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.select import Select

    alice = served.engram.for_agent("alice")
    alice.remember_many({"content": f"Chess opening {i}: chess, chess and more chess"} for i in range(110))
    rule = alice.remember("The library closes at six; someone once mentioned chess there, among talk of weather and bread",
                          scope="global").memory
    wait = _open(browser, served)
    Select(browser.find_element(By.ID, "f-scope")).select_by_visible_text("global")
    browser.find_element(By.ID, "q").send_keys("chess")
    browser.find_element(By.ID, "search-btn").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "for “chess”"))
    # The page reads at most 100 hits: the global one, ranked below 110 agent ones, is found only
    # when the server narrows the search to the scope.
    assert _row_ids(browser) == [rule.id]
    assert "1 hit(s)" in browser.find_element(By.ID, "status").text


def test_linking_twice_says_the_link_was_already_there(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    alice = served.engram.for_agent("alice")
    diary = alice.remember("Alice keeps a diary", key="diary").memory
    alice.remember("Alice hikes in the Alps", key="hiking", links=["diary"])
    wait = _open(browser, served)
    wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, f'tr.mem-row[data-id="{diary.id}"]'))).click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "d-links"), "hiking"))
    browser.find_element(By.ID, "link-to").send_keys("hiking")
    browser.find_element(By.CSS_SELECTOR, "#link-form button").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "diary and hiking were already linked"))
    assert "linked diary and hiking" not in browser.find_element(By.ID, "status").text


def test_the_header_counts_a_store_and_a_forget(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    served.engram.for_agent("alice").remember("Alice keeps a diary", key="diary")
    wait = _open(browser, served)
    wait.until(ec.text_to_be_present_in_element((By.ID, "who"), "1 memories"))
    browser.find_element(By.CSS_SELECTOR, "#new-panel summary").click()
    browser.find_element(By.ID, "new-content").send_keys("Alice hikes in the Alps")
    browser.find_element(By.ID, "new-btn").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "stored"))
    wait.until(ec.text_to_be_present_in_element((By.ID, "who"), "2 memories"))  # not the count at sign-in
    browser.find_element(By.CSS_SELECTOR, "tr.mem-row").click()
    wait.until(ec.visibility_of_element_located((By.ID, "forget-reason"))).send_keys("a test")
    browser.find_element(By.ID, "forget-btn").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "forgot"))
    wait.until(ec.text_to_be_present_in_element((By.ID, "who"), "1 memories"))


def test_another_tab_drops_the_error_of_this_one(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    served.engram.for_agent("alice").remember("Alice keeps a diary", key="diary")
    wait = _open(browser, served)
    browser.find_element(By.ID, "f-type").send_keys("Two Words")
    browser.find_element(By.ID, "search-btn").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "is not a type word"))
    browser.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="stats"]').click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "stat-memories"), "1"))
    # The memories tab's refusal is not left in red over the stats.
    assert browser.find_element(By.ID, "status").text == ""
    assert browser.find_element(By.ID, "status").get_attribute("class") != "error"


def test_a_server_error_at_sign_in_is_shown_not_taken_for_a_bad_token(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    served.engram.close()  # the token is good; the store behind it answers 503
    browser.get(f"{served.url}/?token={served.alice}")
    WebDriverWait(browser, 20).until(ec.text_to_be_present_in_element((By.ID, "status"), "this engram is closed"))
    assert "valid API token" not in browser.find_element(By.ID, "status").text
    assert browser.find_element(By.ID, "who").text != "not signed in"


def test_forgetting_the_last_row_of_the_last_page_shows_the_page_now_last(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    alice = _seed(served, n=51, links=0)
    wait = _open(browser, served)
    wait.until(ec.text_to_be_present_in_element((By.ID, "page-info"), "1–50 of 51"))
    browser.find_element(By.ID, "next").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "page-info"), "51–51 of 51"))
    last = _row_ids(browser)
    browser.find_element(By.CSS_SELECTOR, "tr.mem-row").click()
    wait.until(ec.visibility_of_element_located((By.ID, "forget-reason"))).send_keys("tidying up")
    browser.find_element(By.ID, "forget-btn").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "forgot"))
    # The whole text: "51–50 of 50", an empty page past the end, holds "1–50 of 50" too.
    wait.until(lambda d: d.find_element(By.ID, "page-info").text == "1–50 of 50")
    assert sorted(_row_ids(browser)) == sorted(m.id for m in alice.list(limit=100)) and last[0] not in _row_ids(browser)
    assert browser.find_element(By.ID, "next").get_attribute("disabled") is not None


def test_every_scope_the_page_offers_lists_without_an_error(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.select import Select

    alice = served.engram.for_agent("alice")
    mine = alice.remember("Alice keeps a diary").memory
    rule = alice.remember("Quiet hours start at ten", scope="global").memory
    wait = _open(browser, served)
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "2 memories"))
    # The page sends no session (the X-Engram-Session header), so "session" could only be refused.
    offered = [o.get_attribute("value") for o in Select(browser.find_element(By.ID, "f-scope")).options]
    assert offered == ["", "agent", "global"]
    for scope, expected in (("agent", [mine.id]), ("global", [rule.id])):
        Select(browser.find_element(By.ID, "f-scope")).select_by_visible_text(scope)
        wait.until(lambda d, expected=expected: _row_ids(d) == expected)
        assert browser.find_element(By.ID, "status").text == "1 memories"


def test_an_audit_entry_opens_its_memory(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    alice = served.engram.for_agent("alice")
    diary = alice.remember("Alice keeps a diary", key="diary").memory
    alice.remember("Alice hikes in the Alps", key="hiking")
    wait = _open(browser, served)
    browser.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="audit"]').click()
    entries = wait.until(lambda d: [li for li in d.find_elements(By.CSS_SELECTOR, "#audit li.event.stored")
                                    if "diary" in li.text])
    entries[0].find_element(By.CSS_SELECTOR, "a.link").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "d-key"), "diary"))
    assert browser.find_element(By.ID, "edit-content").get_attribute("value") == diary.content
    assert browser.find_element(By.ID, "tab-memories").is_displayed()


def test_audit_entries_of_a_forgotten_memory_are_not_links(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    alice = served.engram.for_agent("alice")
    diary = alice.remember("Alice keeps a diary", key="diary").memory
    alice.remember("Alice hikes in the Alps", key="hiking")
    with served.client(served.alice) as api:
        assert api.patch(f"/api/v1/memory/{diary.id}", json={"content": "Alice keeps a paper diary"}).status_code == 200
        assert api.delete(f"/api/v1/memory/{diary.id}", params={"reason": "done"}).status_code == 200
    wait = _open(browser, served)
    browser.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="audit"]').click()

    def links(d) -> dict[str, list[bool]]:  # noqa: ANN001
        # Read in one go in the page: the listing is redrawn whole when a filter changes.
        return d.execute_script(
            "const shown = {}; for (const li of document.querySelectorAll('#audit li.event')) {"
            " (shown[li.querySelector('code').textContent] ||= []).push(!!li.querySelector('a')); } return shown;")

    shown = wait.until(lambda d: links(d).get("diary") and links(d))
    assert shown["diary"] == [False, False, False]  # forgotten, updated, stored: nothing to open
    assert shown["hiking"] == [True]
    # Narrowed to `stored`, the listing holds no forget: the page still knows the diary is gone.
    Select(browser.find_element(By.ID, "audit-action")).select_by_visible_text("stored")
    wait.until(lambda d: len(links(d).get("diary", [])) == 1)
    assert links(browser) == {"diary": [False], "hiking": [True]}


def _forget_on_the_page(browser, wait, memory_id: str, reason: str, *, erase: bool) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, f'tr.mem-row[data-id="{memory_id}"]'))).click()
    box = wait.until(ec.visibility_of_element_located((By.ID, "forget-reason")))
    wait.until(lambda d: d.find_element(By.ID, "edit-content").get_attribute("value"))
    box.clear()
    box.send_keys(reason)
    if erase:  # a plain forget leaves the box as the page shows it: unticked
        checkbox = browser.find_element(By.ID, "forget-erase")
        assert not checkbox.is_selected()
        checkbox.click()
    browser.find_element(By.ID, "forget-btn").click()
    if erase:  # an erase asks once more
        wait.until(ec.text_to_be_present_in_element((By.ID, "forget-btn"), "cannot be undone"))
        browser.find_element(By.ID, "forget-btn").click()


def test_erase_on_the_page_asks_for_a_second_click_and_a_forget_does_not(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    alice = served.engram.for_agent("alice")
    secret = alice.remember("a secret to erase", key="secret").memory
    plain = alice.remember("Alice keeps a diary", key="diary").memory
    wait = _open(browser, served)
    wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, f'tr.mem-row[data-id="{secret.id}"]'))).click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "d-key"), "secret"))
    browser.find_element(By.ID, "forget-reason").send_keys("asked to erase")
    browser.find_element(By.ID, "forget-erase").click()
    button = browser.find_element(By.ID, "forget-btn")
    button.click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "forget-btn"), "cannot be undone"))
    assert "cannot be undone" in browser.find_element(By.ID, "status").text
    with served.client(served.alice) as api:
        assert api.get(f"/api/v1/memory/{secret.id}").status_code == 200  # one click erased nothing
    # Unticking the box takes the question back: ticked again, one click still only asks.
    browser.find_element(By.ID, "forget-erase").click()
    assert button.text == "Forget"
    browser.find_element(By.ID, "forget-erase").click()
    assert button.text == "Erase"
    button.click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "forget-btn"), "cannot be undone"))
    with served.client(served.alice) as api:
        assert api.get(f"/api/v1/memory/{secret.id}").status_code == 200
    button.click()  # the confirmation
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), f"erased {secret.id}"))
    with served.client(served.alice) as api:
        assert api.get(f"/api/v1/memory/{secret.id}").status_code == 404
        assert [r["action"] for r in api.get("/api/v1/audit", params={"memory": secret.id}).json()["entries"]][0] == "erased"
    # A plain forget (it can be brought back from a backup) takes one click.
    wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, f'tr.mem-row[data-id="{plain.id}"]'))).click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "d-key"), "diary"))
    assert button.text == "Forget"
    browser.find_element(By.ID, "forget-reason").send_keys("tidying up")
    button.click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "forgot diary"))
    with served.client(served.alice) as api:
        assert api.get(f"/api/v1/memory/{plain.id}").status_code == 404


def test_erase_on_the_page_leaves_only_ids_in_the_audit_and_a_forget_keeps_its_copy(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    alice = served.engram.for_agent("alice")
    secret = alice.remember("my bank password hint is Quixotrelliumz blue", tags=["private"]).memory
    plain = alice.remember("Alice keeps a diary", key="diary").memory
    wait = _open(browser, served)
    assert "erase" in browser.find_element(By.ID, "forget-form").get_attribute("textContent")  # the choice is explained

    _forget_on_the_page(browser, wait, secret.id, "asked to erase", erase=True)
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), f"erased {secret.id}"))
    assert secret.key not in browser.find_element(By.ID, "status").text  # a key made from the words it erased
    _forget_on_the_page(browser, wait, plain.id, "tidying up", erase=False)  # the box is not left ticked
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "forgot diary"))
    wait.until(lambda d: not _row_ids(d))

    with served.client(served.alice) as api:
        assert api.get(f"/api/v1/memory/{secret.id}").status_code == 404
        rows = api.get("/api/v1/audit", params={"memory": secret.id, "limit": 50}).json()["entries"]
        assert [r["action"] for r in rows] == ["erased", "forgotten", "stored"]
        assert all(r["memory_key"] is None and r["detail"] is None and r["memory_id"] == secret.id for r in rows)
        assert rows[0]["reason"] == "asked to erase"
        assert "quixotrelliumz" not in api.get("/api/v1/audit", params={"limit": 500}).text.lower()
        # A plain forget answers and records as before: the trail keeps the memory whole.
        kept = api.get("/api/v1/audit", params={"memory": plain.id, "limit": 50}).json()["entries"]
        assert [r["action"] for r in kept] == ["forgotten", "stored"]
        assert kept[0]["memory_key"] == "diary" and kept[0]["reason"] == "tidying up"
        assert "Alice keeps a diary" in str(kept[0]["detail"])
        assert api.get(f"/api/v1/memory/{plain.id}").status_code == 404
    # The audit tab shows the erase, and no link to open a memory that is gone.
    browser.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="audit"]').click()
    erased = wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "#audit li.event.erased")))
    assert secret.id in erased.text and "asked to erase" in erased.text and not erased.find_elements(By.CSS_SELECTOR, "a")


def test_a_blank_forget_reason_is_refused_on_the_page(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    diary = served.engram.for_agent("alice").remember("Alice keeps a diary", key="diary").memory
    wait = _open(browser, served)
    _forget_on_the_page(browser, wait, diary.id, "   ", erase=False)
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "reason"))
    assert browser.find_element(By.ID, "status").get_attribute("class") == "error"
    with served.client(served.alice) as api:
        assert api.get(f"/api/v1/memory/{diary.id}").status_code == 200  # nothing forgotten
    box = browser.find_element(By.ID, "forget-reason")
    box.clear()
    box.send_keys("  done with it  ")
    browser.find_element(By.ID, "forget-btn").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "forgot diary"))
    with served.client(served.alice) as api:
        rows = api.get("/api/v1/audit", params={"memory": diary.id, "action": "forgotten"}).json()["entries"]
        assert [r["reason"] for r in rows] == ["done with it"]


def test_remember_something_new_clears_the_form_after_a_store_and_keeps_it_after_a_refusal(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.select import Select

    wait = _open(browser, served)
    browser.find_element(By.CSS_SELECTOR, "#new-panel summary").click()

    def fields() -> tuple[str, str, str]:
        return tuple(browser.find_element(By.ID, i).get_attribute("value") for i in ("new-content", "new-tags", "new-category"))

    browser.find_element(By.ID, "new-content").send_keys("Alice hikes in the Alps")
    browser.find_element(By.ID, "new-tags").send_keys("outdoors, travel")
    Select(browser.find_element(By.ID, "new-category")).select_by_visible_text("core")
    browser.find_element(By.ID, "new-btn").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "stored"))
    assert fields() == ("", "", "knowledge")  # the next memory does not get these tags
    # A refused store (no content) keeps what was typed, to correct.
    browser.find_element(By.ID, "new-tags").send_keys("pets")
    browser.find_element(By.ID, "new-btn").click()
    wait.until(lambda d: d.find_element(By.ID, "status").get_attribute("class") == "error")
    assert "content" in browser.find_element(By.ID, "status").text and fields() == ("", "pets", "knowledge")
    browser.find_element(By.ID, "new-content").send_keys("Alice has a cat")
    browser.find_element(By.ID, "new-btn").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "stored"))
    memories = {m.content: (m.tags, m.category) for m in served.engram.for_agent("alice").list(limit=10)}
    assert memories == {"Alice hikes in the Alps": (("outdoors", "travel"), "core"), "Alice has a cat": (("pets",), "knowledge")}


def test_a_long_conversation_says_it_shows_only_the_newest_messages(tmp_path: Path, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    # A conversation keeps 100 messages unless told more (history.max_history_len): here 5,000.
    with serving(tmp_path, history={"max_history_len": 5000}) as served:
        history = seams.history(served.engram.for_agent("alice"))
        history.append_many("web:long", [{"role": "user", "content": f"message {i}"} for i in range(1005)])
        history.append_many("web:short", [{"role": "user", "content": f"hello {i}"} for i in range(3)])
        wait = _open(browser, served)
        browser.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="conversations"]').click()
        wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, '#conversations li[data-key="web:long"]'))).click()
        wait.until(ec.text_to_be_present_in_element((By.ID, "messages-note"), "showing the newest 1,000 of 1,005 messages"))
        assert len(browser.find_elements(By.CSS_SELECTOR, "#messages li")) == 1000
        browser.find_element(By.CSS_SELECTOR, '#conversations li[data-key="web:short"]').click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#messages li")) == 3)
        assert not browser.find_element(By.ID, "messages-note").is_displayed()  # all of it is shown


def test_a_long_audit_says_it_shows_only_the_newest_entries(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    served.engram.for_agent("alice").remember_many({"content": f"Note {i} about chess", "key": f"chess-{i:03d}"}
                                                   for i in range(205))
    wait = _open(browser, served)
    browser.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="audit"]').click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "audit-note"), "the newest 200 entries; narrow with the filters"))
    assert len(browser.find_elements(By.CSS_SELECTOR, "#audit li.event")) == 200
    browser.find_element(By.ID, "audit-memory").send_keys("chess-001")  # one memory's few entries
    browser.find_element(By.ID, "audit-btn").click()
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#audit li.event")) < 200)
    assert not browser.find_element(By.ID, "audit-note").is_displayed()


def test_the_search_mode_chosen_on_the_page_is_the_one_recall_uses(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import Select

    alice = served.engram.for_agent("alice")
    cat = alice.remember("The user's cat is called Miso", key="cat").memory
    alice.remember("The user sails on Sundays", key="sailing")
    wait = _open(browser, served)
    browser.find_element(By.ID, "q").send_keys("kitten")  # no word of it is stored: only its meaning finds the cat
    mode = Select(browser.find_element(By.ID, "f-mode"))
    assert [o.text for o in mode.options] == ["hybrid (text + vector)", "full text", "vector"]
    mode.select_by_visible_text("full text")  # a change searches again, as the other choices do
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "0 hit(s) for “kitten” (text)"))
    assert not browser.find_elements(By.CSS_SELECTOR, "tr.mem-row")
    mode.select_by_visible_text("vector")
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "for “kitten” (vector)"))
    row = wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "tr.mem-row")))
    assert row.get_attribute("data-id") == cat.id
    mode.select_by_visible_text("hybrid (text + vector)")
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "for “kitten” (hybrid)"))


def test_unlinking_on_the_page_asks_for_a_second_click_then_removes_the_link(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    alice = served.engram.for_agent("alice")
    diary = alice.remember("Alice keeps a diary", key="diary").memory
    hiking = alice.remember("Alice hikes in the Alps", key="hiking").memory
    alice.link("diary", "hiking")
    wait = _open(browser, served)
    wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, f'tr.mem-row[data-id="{diary.id}"]'))).click()
    wait.until(lambda d: [a.text for a in d.find_elements(By.CSS_SELECTOR, "#d-links a")] == ["hiking"])
    browser.find_element(By.CSS_SELECTOR, f'#d-links button.unlink[data-id="{hiking.id}"]').click()
    wait.until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, "#d-links button.unlink"), "click again to confirm"))
    assert "unlink diary and hiking?" in browser.find_element(By.ID, "status").text
    with served.client(served.alice) as api:
        assert api.get(f"/api/v1/memory/{diary.id}").json()["links"] == [hiking.id]  # one click removed nothing
    browser.find_element(By.CSS_SELECTOR, "#d-links button.unlink").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "unlinked diary and hiking"))
    assert browser.find_element(By.ID, "status").get_attribute("class") != "error"
    wait.until(ec.text_to_be_present_in_element((By.ID, "d-links"), "no links"))
    with served.client(served.alice) as api:
        assert api.get(f"/api/v1/memory/{diary.id}").json()["links"] == []
        assert api.get(f"/api/v1/memory/{hiking.id}").json()["links"] == []


def test_a_superseded_neighbour_is_listed_marked_and_unlinked_on_the_page(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    alice = served.engram.for_agent("alice")
    cats = alice.remember("Alice keeps two cats", key="cats").memory
    porto = alice.remember("Alice lives in Porto with her cats", key="porto").memory
    alice.remember("Alice lives in Lisbon", key="lisbon")
    alice.link(cats, porto)
    alice.supersede("porto", "lisbon")
    wait = _open(browser, served)
    wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, f'tr.mem-row[data-id="{cats.id}"]'))).click()
    # Listed (the link is there), said to be superseded, with its unlink button.
    wait.until(lambda d: [a.text for a in d.find_elements(By.CSS_SELECTOR, "#d-links a")] == ["porto"])
    assert browser.find_element(By.CSS_SELECTOR, "#d-links .superseded").text == "superseded"
    button = browser.find_element(By.CSS_SELECTOR, f'#d-links button.unlink[data-id="{porto.id}"]')
    button.click()
    wait.until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, "#d-links button.unlink"), "click again to confirm"))
    browser.find_element(By.CSS_SELECTOR, "#d-links button.unlink").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "unlinked cats and porto"))
    wait.until(ec.text_to_be_present_in_element((By.ID, "d-links"), "no links"))
    assert alice.get("cats").links == () and alice.get("porto").links == ()


def test_a_superseded_memory_and_its_successor_open_each_other(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    alice = served.engram.for_agent("alice")
    old = alice.remember("Alice lives in Porto", key="home-porto").memory
    new = alice.remember("Alice lives in Lisbon", key="home-lisbon").memory
    alice.supersede(old, new)
    wait = _open(browser, served)
    wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, f'tr.mem-row[data-id="{new.id}"]'))).click()
    assert not browser.find_elements(By.CSS_SELECTOR, f'tr.mem-row[data-id="{old.id}"]')  # out of the list
    wait.until(lambda d: [a.text for a in d.find_elements(By.CSS_SELECTOR, "#d-supersedes a")] == ["home-porto"])
    assert not browser.find_element(By.ID, "d-superseded").is_displayed()  # the newest says nothing supersedes it
    browser.find_element(By.CSS_SELECTOR, "#d-supersedes a").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "d-key"), "home-porto"))
    notice = wait.until(ec.visibility_of_element_located((By.ID, "d-superseded")))
    assert "Superseded by home-lisbon" in notice.text and "out of the list and of recall" in notice.text
    assert browser.find_element(By.ID, "edit-content").get_attribute("value") == "Alice lives in Porto"
    assert browser.find_element(By.ID, "d-supersedes").text == "none"
    notice.find_element(By.CSS_SELECTOR, "a").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "d-key"), "home-lisbon"))
    wait.until(ec.invisibility_of_element_located((By.ID, "d-superseded")))


def _facts(browser) -> dict[str, str]:  # noqa: ANN001
    """The open memory's detail facts (``#d-meta``: each ``dt`` and its ``dd``), read in one go."""
    pairs = browser.execute_script("return [...document.querySelectorAll('#d-meta dt')]"
                                   ".map((dt) => [dt.textContent, dt.nextElementSibling.textContent]);")
    return dict(pairs)


def test_an_imported_memory_says_when_it_arrived_and_a_fresh_one_does_not(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    mem0 = (Path(__file__).resolve().parents[1] / "fixtures" / "import" / "mem0.json").read_text()
    with httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {served.alice}"}) as api:
        before = time.time()
        assert api.post("/api/v1/import/mem0", json={"text": mem0}).json()["imported"] == 3
        after = time.time()
        old = api.get("/api/v1/memory/deploys-billing-service-every-tuesday").json()  # created 2024-04-10 in mem0
        fresh = api.post("/api/v1/memory", json={"content": "Billing deploys moved to Fridays", "key": "billing-day"}).json()
        fresh = api.get(f"/api/v1/memory/{fresh['memory_id']}").json()
    assert old["created_at"] == 1712737800.0 and before <= old["received_at"] <= after
    assert fresh["received_at"] == fresh["created_at"]
    second = "%Y-%m-%d %H:%M:%S"  # the page's `when`, in the browser's local time as this process's
    wait = _open(browser, served)
    wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, f'tr.mem-row[data-id="{old["id"]}"]'))).click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "d-key"), old["key"]))
    facts = _facts(browser)
    assert facts["created"] == dt.datetime.fromtimestamp(old["created_at"]).strftime(second)
    assert facts["arrived"] == dt.datetime.fromtimestamp(old["received_at"]).strftime(second)
    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "web-memory-arrived.png"))
    # Created here, it arrived when it was created: no line repeats the creation time.
    browser.find_element(By.CSS_SELECTOR, f'tr.mem-row[data-id="{fresh["id"]}"]').click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "d-key"), "billing-day"))
    facts = _facts(browser)
    assert facts["created"] == dt.datetime.fromtimestamp(fresh["created_at"]).strftime(second)
    assert "arrived" not in facts


class _ProxyWithoutReason:
    """A reverse proxy in front of the real server, as one that speaks HTTP/2 would look to the page:
    every request passed through, but ``failing`` answered 502 with no body and no reason phrase."""

    def __init__(self, upstream: str, failing: str) -> None:
        import http.server
        import threading
        from urllib.parse import urlsplit

        class Handler(http.server.BaseHTTPRequestHandler):
            def relay(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if urlsplit(self.path).path == failing:
                    self.send_response(502, "")  # the status line "HTTP/1.0 502 ": no reason phrase
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                sent = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection", "accept-encoding")}
                answer = httpx.request(self.command, upstream + self.path, headers=sent, content=body, timeout=30)
                self.send_response(answer.status_code)
                dropped = ("content-length", "transfer-encoding", "connection", "content-encoding", "date", "server")
                for k, v in answer.headers.items():
                    if k.lower() not in dropped:
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = relay

            def log_message(self, *args: object) -> None:  # quiet
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_an_error_with_no_detail_and_no_reason_phrase_says_its_status_and_what_was_asked(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    proxy = _ProxyWithoutReason(served.url, "/api/v1/dashboard")
    try:
        wait = WebDriverWait(browser, 60)
        browser.get(f"{proxy.url}/?token={served.alice}")
        wait.until(ec.text_to_be_present_in_element((By.ID, "who"), "agent alice"))
        # What the page is given: a 502 whose statusText is empty, as over HTTP/2.
        seen = browser.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "fetch('/api/v1/dashboard').then((r) => done([r.status, r.statusText, r.headers.get('content-type')]));")
        assert seen == [502, "", None]
        browser.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="stats"]').click()
        wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "HTTP 502 on GET /api/v1/dashboard"))
        assert browser.find_element(By.ID, "status").get_attribute("class") == "error"
    finally:
        proxy.close()


def test_a_memory_with_more_links_and_superseded_memories_than_listed_says_how_many(served: Served, browser) -> None:  # noqa: ANN001
    """The detail lists 50 of a memory's links and 50 of the memories it supersedes; past that it
    said nothing, as if those were all. It now says how many links there are (the memory's own
    ``links`` name every one this agent may read) and that it supersedes more than it lists. Another
    agent's memory linked to a global one is not counted for alice, nor listed."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    alice = served.engram.for_agent("alice")
    hub = alice.remember("Alice's garden plan", key="garden", scope="global").memory
    notes = alice.remember_many({"content": f"Plant bed {i} with herbs", "key": f"bed-{i:02d}"} for i in range(60))
    for result in notes:
        alice.link(hub, result.memory)
    served.engram.for_agent("bob").link(hub, served.engram.for_agent("bob").remember("Bob's own note", key="bob-note").memory)
    successor = alice.remember("Alice's tomato plan, final", key="tomatoes").memory
    for i in range(55):
        alice.supersede(alice.remember(f"Alice's tomato plan, draft {i}", key=f"draft-{i:02d}").memory, successor)
    few = alice.remember("Alice's pepper plan", key="peppers").memory
    alice.link(few, "bed-00")
    wait = _open(browser, served)

    def opened(query: str, memory_id: str) -> None:  # found by a search: the list's first page holds the newest
        search = browser.find_element(By.ID, "q")
        search.clear()
        search.send_keys(query)
        browser.find_element(By.ID, "search-btn").click()
        wait.until(ec.text_to_be_present_in_element((By.ID, "status"), f"for “{query}”"))  # this search's rows drawn
        wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, f'tr.mem-row[data-id="{memory_id}"]'))).click()
        wait.until(ec.text_to_be_present_in_element((By.ID, "d-key"), alice.get(memory_id).key))

    opened("garden plan", hub.id)
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#d-links a")) == 50)
    wait.until(ec.text_to_be_present_in_element((By.ID, "d-links-note"), "showing 50 of 60 links"))
    assert not browser.find_element(By.ID, "d-supersedes-note").is_displayed()
    opened("tomato plan final", successor.id)
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#d-supersedes a")) == 50)
    wait.until(ec.text_to_be_present_in_element((By.ID, "d-supersedes-note"), "showing the oldest 50; it supersedes more"))
    assert not browser.find_element(By.ID, "d-links-note").is_displayed()
    opened("pepper plan", few.id)
    wait.until(lambda d: [a.text for a in d.find_elements(By.CSS_SELECTOR, "#d-links a")] == ["bed-00"])
    assert not browser.find_element(By.ID, "d-links-note").is_displayed()
    assert not browser.find_element(By.ID, "d-supersedes-note").is_displayed()


def test_stored_line_breaks_and_runs_of_spaces_show_on_the_page_as_stored(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    # HTML folds a line break or a run of spaces into one space: a list, a detail or a version
    # would show a different text than the one stored (and than the CLI and the edit box show).
    content, key = "Shopping:\n- eggs\n-  milk   (two)", "list  of  two"
    memory = served.engram.for_agent("alice").remember(content, key=key).memory
    wait = _open(browser, served)
    row = wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, f'tr.mem-row[data-id="{memory.id}"]')))
    assert row.find_element(By.CSS_SELECTOR, ".content").text == content
    assert row.find_element(By.CSS_SELECTOR, ".key").text == key
    row.click()
    edit = wait.until(ec.visibility_of_element_located((By.ID, "edit-content")))
    wait.until(ec.text_to_be_present_in_element((By.ID, "d-key"), "list"))
    assert browser.find_element(By.ID, "d-key").text == key
    edit.clear()
    edit.send_keys("Shopping: done")
    browser.find_element(By.ID, "save-btn").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "saved"))
    wait.until(ec.text_to_be_present_in_element((By.ID, "versions"), "eggs"))
    assert browser.find_element(By.CSS_SELECTOR, "#versions li .content").text == content
    browser.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="audit"]').click()
    stored = wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "#audit li.event.stored details")))
    stored.find_element(By.TAG_NAME, "summary").click()
    assert stored.find_element(By.CSS_SELECTOR, "p").text == content


def test_a_memory_of_any_importance_is_edited_on_the_page(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    # The importance box stepped by 0.05: a memory stored at 0.333 (any door takes it) held a value
    # the browser called invalid, and refused every save of that memory, whatever field was changed.
    memory = served.engram.for_agent("alice").remember("Alice reads at night", key="reads", importance=0.333).memory
    wait = _open(browser, served)
    wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, f'tr.mem-row[data-id="{memory.id}"]'))).click()
    content = wait.until(ec.visibility_of_element_located((By.ID, "edit-content")))
    content.clear()
    content.send_keys("Alice reads in the morning")
    browser.find_element(By.ID, "save-btn").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "saved"))
    with served.client(served.alice) as api:
        got = api.get(f"/api/v1/memory/{memory.id}").json()
        assert (got["content"], got["importance"]) == ("Alice reads in the morning", 0.333)
    importance = browser.find_element(By.ID, "edit-importance")
    importance.clear()
    importance.send_keys("0.42")
    browser.find_element(By.ID, "save-btn").click()
    wait.until(lambda d: served.engram.for_agent("alice").get(memory.id).importance == 0.42)


def test_a_server_that_does_not_answer_is_named_with_the_request_not_only_failed_to_fetch(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    # A stopped server (Ctrl-C while the page stays open) left the status at the browser's own
    # "Failed to fetch": no word of what was asked, nor that no answer came.
    served.engram.for_agent("alice").remember("Alice keeps bees", key="bees")
    wait = _open(browser, served)
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.emulateNetworkConditions",
                            {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    try:
        browser.find_element(By.ID, "q").send_keys("bees")
        browser.find_element(By.ID, "search-btn").click()
        wait.until(ec.text_to_be_present_in_element((By.ID, "status"), "no answer"))
        status = browser.find_element(By.ID, "status")
        assert status.get_attribute("class") == "error"
        assert status.text.startswith("no answer from the server to GET /api/v1/memory/search"), status.text
        assert "engram serve" in status.text, status.text
    finally:
        browser.execute_cdp_cmd("Network.emulateNetworkConditions",
                                {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
