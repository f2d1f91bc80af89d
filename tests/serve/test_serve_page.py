"""The page at ``/`` in a real headless Chromium (selenium + Debian's chromium/chromedriver).

Skipped when chromium or chromedriver is missing, except with ``SPARQLQA_REQUIRE_BROWSER=1``
(CI: ``scripts/install_browser.sh`` installs them), where a missing browser fails the test.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_helpers import DIRECTED, QUESTION, running

from sparqlqa.serve.service import ServeSettings, Service

#: a film whose label is markup: the page must show it as text and run nothing
HOSTILE = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>&amp; "Q" end'
EXTRA = ("@prefix ex: <https://example.org/movies/> .\n"
         "@prefix rel: <https://example.org/movies/rel/> .\n"
         "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
         "@prefix sqa: <https://sparqlqa.dev/ns#> .\n"
         'ex:hostile a ex:Movie ; rdfs:label """' + HOSTILE + '""" ; rel:directed_by ex:ridley_scott ;\n'
         '    sqa:text "A film with a hostile title." .\n')


def _browser_paths() -> tuple[str, str] | None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@pytest.fixture
def chrome(tmp_path: Path) -> Iterator[Any]:
    required = os.environ.get("SPARQLQA_REQUIRE_BROWSER") == "1"
    paths = _browser_paths()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service as DriverService
    except ImportError:
        paths = None
    if paths is None:
        if required:
            pytest.fail("SPARQLQA_REQUIRE_BROWSER=1 but chromium, chromedriver or selenium is missing: "
                        "run 'bash scripts/install_browser.sh'")
        pytest.skip("no chromium/chromedriver/selenium (bash scripts/install_browser.sh)")
    options = webdriver.ChromeOptions()
    options.binary_location = paths[0]
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1600", f"--user-data-dir={tmp_path / 'chrome-profile'}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=DriverService(executable_path=paths[1]))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def hostile_kb(movies_ttl: Path, tmp_path: Path) -> None:
    from sparqlqa.ingest import ingest

    extra = tmp_path / "hostile.ttl"
    extra.write_text(EXTRA, "utf-8")
    ingest([movies_ttl, extra], kb="movies")


def test_ask_on_the_page_shows_answers_sparql_and_graph(hostile_kb: None, chrome: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    with running(Service(ServeSettings(kbs=("movies",)))) as url:
        chrome.get(url + "/")
        wait = WebDriverWait(chrome, 30)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#kb option[value='movies']"))
        chrome.find_element(By.ID, "question").send_keys(QUESTION)
        chrome.find_element(By.ID, "ask").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#answers li.answer")) >= 4)
        chrome.save_screenshot(str(tmp_path / "page.png"))

        labels = [e.text for e in chrome.find_elements(By.CSS_SELECTOR, "#answers li.answer .label")]
        assert DIRECTED | {HOSTILE} <= set(labels[:4])
        headline = chrome.find_element(By.ID, "headline").text  # the answer's form in one line, as text
        assert headline and headline.split(":")[0].split()[0].isdigit() and labels[0] in headline
        sparql = chrome.find_elements(By.CSS_SELECTOR, "#sparql pre.sparql")
        assert sparql and sparql[0].is_displayed() and sparql[0].text.startswith("SELECT")
        assert "directed_by" in sparql[0].text
        assert chrome.find_element(By.CSS_SELECTOR, "#sparql button.download").text == "download .rq"
        assert len(chrome.find_elements(By.CSS_SELECTOR, "#graph svg circle.node")) >= 5
        graph_labels = {e.text for e in chrome.find_elements(By.CSS_SELECTOR, "#graph svg text.node-label")}
        assert "Ridley Scott" in graph_labels
        stages = [e.text for e in chrome.find_elements(By.CSS_SELECTOR, "#timings tr.timing td:first-child")]
        assert "total" in stages
        assert "answers (offline)" in chrome.find_element(By.ID, "status").text
        # the hostile label is text: no element was made from it and no script of it ran
        assert chrome.execute_script("return window.pwned === undefined")
        assert not chrome.find_elements(By.CSS_SELECTOR, "#answers img, #answers script, #graph img")

        copy = chrome.find_element(By.CSS_SELECTOR, "#sparql button.copy")
        copy.click()
        wait.until(lambda d: copy.text == "copied")
    assert (tmp_path / "page.png").stat().st_size > 10_000


def test_the_page_asks_for_the_token_when_the_api_needs_one(movies_kb: Any, chrome: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    with running(Service(ServeSettings(kbs=("movies",))), token="s3cret") as url:
        chrome.get(url + "/")
        wait = WebDriverWait(chrome, 30)
        token = chrome.find_element(By.ID, "token")
        wait.until(lambda d: token.is_displayed())
        assert "missing or wrong token" in chrome.find_element(By.ID, "status").text
        token.send_keys("s3cret", Keys.TAB)  # 'change' fires on leaving the field
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#kb option[value='movies']"))
        chrome.find_element(By.ID, "question").send_keys(QUESTION, Keys.ENTER)
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#answers li.answer")) >= 3)


def test_a_table_answer_renders_as_a_table_that_sorts(movies_ttl: Path, chrome: Any, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The film-table strategy's answer (film, director, budget; the hostile film's budget 9): an HTML table,
    node cells named and linked to their IRI, headings that sort (numbers as numbers, again to reverse)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    from table_strategy import BUDGETS, film_table_strategy, ingest_movies_with_budgets

    extra = tmp_path / "hostile.ttl"
    extra.write_text(EXTRA + "ex:hostile rel:budget 9 .\n", "utf-8")
    ingest_movies_with_budgets(movies_ttl, tmp_path, extra)
    with running(Service(ServeSettings(kbs=("movies",), strategy=film_table_strategy(monkeypatch)))) as url:
        chrome.get(url + "/")
        wait = WebDriverWait(chrome, 30)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#kb option[value='movies']"))
        chrome.find_element(By.ID, "question").send_keys("films, their directors and budgets")
        chrome.find_element(By.ID, "ask").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#answer-table tbody tr")) == len(BUDGETS) + 1)

        def column(n: int) -> list[str]:
            return [e.text for e in chrome.find_elements(By.CSS_SELECTOR, f"#answer-table tbody td:nth-child({n})")]

        heads = chrome.find_elements(By.CSS_SELECTOR, "#answer-table thead th")
        assert [h.text for h in heads] == ["film", "director", "budget"]
        budgets = sorted([*BUDGETS.values(), "9"], key=float)
        assert column(3) == budgets[::-1]  # the query's order: ORDER BY DESC(?budget)
        first = chrome.find_element(By.CSS_SELECTOR, "#answer-table tbody tr td:nth-child(1) a")
        assert first.text == "Avatar" and first.get_attribute("href") == "https://example.org/movies/avatar"
        assert first.get_attribute("title") == "https://example.org/movies/avatar"
        assert column(2)[0] == "James Cameron" and HOSTILE in column(1)
        assert chrome.find_element(By.CSS_SELECTOR, "#answer-table tbody td:nth-child(3)").get_attribute(
            "class") == "num"
        assert not chrome.find_element(By.ID, "answers").is_displayed()
        assert f"{len(BUDGETS) + 1} rows (film-table)" in chrome.find_element(By.ID, "status").text
        assert "in the query's order" in chrome.find_element(By.ID, "table-note").text
        assert "ORDER BY DESC(?budget)" in chrome.find_element(By.CSS_SELECTOR, "#sparql pre.sparql").text

        heads[2].click()  # budget, ascending: 9 before 11 before 103 (as text "103" < "11" < "9")
        wait.until(lambda d: heads[2].get_attribute("aria-sort") == "ascending")
        assert column(3) == budgets and "sorted by budget, ascending" in chrome.find_element(By.ID, "table-note").text
        chrome.save_screenshot(str(tmp_path / "table.png"))
        heads[2].click()
        wait.until(lambda d: heads[2].get_attribute("aria-sort") == "descending")
        assert column(3) == budgets[::-1] and heads[0].get_attribute("aria-sort") is None
        heads[0].click()  # film names, ascending; each row moves whole
        wait.until(lambda d: heads[0].get_attribute("aria-sort") == "ascending")
        films = [name for name in column(1) if name != HOSTILE]
        assert films == sorted(films, key=str.casefold) and column(2)[column(1).index("Avatar")] == "James Cameron"
        assert chrome.execute_script("return window.pwned === undefined")
        assert not chrome.find_elements(By.CSS_SELECTOR, "#answer-table img, #answer-table script")
    assert (tmp_path / "table.png").stat().st_size > 10_000
