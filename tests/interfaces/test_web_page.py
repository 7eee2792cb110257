"""The web page in headless Debian Chromium (Selenium): store through the API, find the memory on
the page, edit it, forget it, and keep a screenshot in test-artifacts/."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest

from tests.interfaces.conftest import Served

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
                                                  "key": "cat-name"}).json()
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
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#graph circle")) == 2)  # it and its one link
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


def test_page_without_a_token_asks_for_one(served: Served, browser) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{served.url}/")
    browser.find_element(By.ID, "token").send_keys("eg_00000000_wrong")
    browser.find_element(By.CSS_SELECTOR, "#token-form button").click()
    WebDriverWait(browser, 20).until(ec.text_to_be_present_in_element((By.ID, "status"), "valid API token"))
