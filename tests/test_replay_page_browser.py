"""`sim show --html`: one self-contained page that replays the deal, checked in a real
headless browser (Debian's chromium, driven by selenium through chromedriver): what it
shows after each step is what the referee says the position is."""

import json
import shutil
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import sim

from sim.engine.referee import calc as calc_referee

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
try:
    import selenium  # noqa: F401

    SELENIUM = True
except ImportError:
    SELENIUM = False
BROWSER_MISSING = (
    "no headless browser here: needs chromium and chromedriver (apt-get install chromium "
    "chromium-driver) and the selenium package"
)
needs_browser = pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER and SELENIUM), reason=BROWSER_MISSING
)


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    with tempfile.TemporaryDirectory() as profile:
        for flag in (
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--window-size=1280,900",
        ):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        try:
            yield driver
        finally:
            driver.quit()


def page_of(tmp_path, *args):
    page = tmp_path / "deal.html"
    result = sim("show", *args, "--html", page, "--final", "--no-color")
    assert result.exit_code == 0, result.output
    return page


def logged_line(tmp_path, *args):
    log = tmp_path / "m.jsonl"
    run = ["calc", *args, "-n", 2, "--out", tmp_path / "r.parquet", "--log-moves", log, "-q"]
    assert sim(*run).exit_code == 0
    return json.loads(log.read_text().splitlines()[1])


def by_id(browser, name):
    from selenium.webdriver.common.by import By

    return browser.find_element(By.ID, name)


def pile_cards(browser, pile):
    from selenium.webdriver.common.by import By

    cards = browser.find_elements(By.CSS_SELECTOR, f'[data-pile="{pile}"] .card')
    return [card.get_attribute("data-card") for card in cards]


def position_after(line, k):
    position = calc_referee.position(line)
    for number, move in enumerate(line["moves"][:k], 1):
        position.play(number, move)
    return position


class Sources(HTMLParser):
    """Every address a page would load: src and href attributes."""

    def __init__(self, text):
        super().__init__()
        self.addresses = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.addresses += [value for name, value in attrs if name in ("src", "href") and value]


def test_the_replay_page_needs_nothing_beside_it(tmp_path):
    text = page_of(tmp_path, "calc", "--deal", 1).read_text(encoding="utf-8")
    assert Sources(text).addresses == []
    assert "http://" not in text and "https://" not in text
    assert text.count("<script") == 2  # the deal's data and the script, both inline


def test_show_html_refuses_to_replace_a_file_unless_told(tmp_path):
    page = tmp_path / "deal.html"
    page.write_text("mine")
    result = sim("show", "calc", "--html", page)
    assert result.output == f"Error: {page} exists; use --overwrite to replace it\n"
    assert page.read_text() == "mine"


@needs_browser
def test_the_page_steps_through_the_deal_as_the_referee_plays_it(tmp_path, browser):
    line = logged_line(tmp_path)
    page = page_of(tmp_path, "calc", "--deal", 1)
    browser.get(page.as_uri())
    n = len(line["moves"])
    assert by_id(browser, "counter").text == f"as dealt ({n} moves)"
    for _ in range(12):
        by_id(browser, "forward").click()
    assert by_id(browser, "counter").text == f"move 12 of {n}: {line['moves'][11]}"
    position = position_after(line, 12)
    for w, pile in enumerate(position.piles):
        assert pile_cards(browser, f"W{w + 1}") == pile
    by_id(browser, "back").click()
    assert by_id(browser, "counter").text.startswith("move 11 of")
    assert pile_cards(browser, "turned") == position_after(line, 11).stock[:1]


@needs_browser
def test_the_move_list_the_slider_and_play_jump_and_run(tmp_path, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    line = logged_line(tmp_path)
    page = page_of(tmp_path, "calc", "--deal", 1)
    browser.get(page.as_uri())
    n = len(line["moves"])
    browser.find_element(By.CSS_SELECTOR, '#moves > li[data-index="30"]').click()
    assert by_id(browser, "counter").text == f"move 30 of {n}: {line['moves'][29]}"
    assert pile_cards(browser, "W2") == position_after(line, 30).piles[1]
    browser.execute_script(
        "const s = document.getElementById('slider'); s.value = 40;"
        "s.dispatchEvent(new Event('input'));"
    )
    assert by_id(browser, "counter").text.startswith("move 40 of")
    by_id(browser, "last").click()
    assert by_id(browser, "counter").text.startswith(f"move {n} of {n}")
    by_id(browser, "first").click()
    by_id(browser, "play").click()  # plays on from the deal, a move each half second
    WebDriverWait(browser, 10).until(
        lambda b: b.find_element(By.ID, "counter").text.startswith("move 2 of")
    )
    by_id(browser, "play").click()  # pause
    stopped = by_id(browser, "counter").text
    browser.execute_script("return new Promise(r => setTimeout(r, 1200))")
    assert by_id(browser, "counter").text == stopped


@needs_browser
def test_the_page_marks_the_losing_move_and_steps_through_the_winning_alternative(
    tmp_path, browser
):
    from selenium.webdriver.common.by import By

    page = page_of(tmp_path, "calc", "--deal", 1, "--explain")
    browser.get(page.as_uri())
    lost = browser.find_element(By.CSS_SELECTOR, "#moves > li.lost")
    assert lost.get_attribute("data-index") == "49"  # the oracle's verdict (README)
    assert "lost the deal: w3>f1 still wins" in lost.text
    by_id(browser, "alternative").click()
    assert by_id(browser, "counter").text == (
        "winning alternative at move 49, the position before it"
    )
    by_id(browser, "forward").click()
    assert by_id(browser, "counter").text.startswith("winning alternative at move 49, step 1")
    by_id(browser, "last").click()
    foundations = [pile_cards(browser, f"F{k}")[-1] for k in range(1, 5)]
    assert [card[0] for card in foundations] == ["K"] * 4  # the alternative wins
    screenshots = Path(tmp_path) / "page.png"
    browser.save_screenshot(str(screenshots))
    assert screenshots.stat().st_size > 10_000
