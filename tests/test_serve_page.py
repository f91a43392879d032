"""The page of ``spandep serve`` in a real headless Chromium (Debian's ``chromium``, driven by Playwright): type or
upload, parse, see the trees, download. ``SPANDEP_SCREENSHOTS=docs`` also writes the screenshots of docs/serve.md.

The browser is ``$SPANDEP_CHROMIUM``, else the first of ``chromium``, ``chromium-browser``, ``google-chrome`` on the
PATH (``make test`` installs Debian's ``chromium`` where it is missing). Without one the test is skipped on a
developer's machine and fails in CI (``$CI`` set), where it must run."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import httpx
import pytest
from conftest import DEV
from serve_live import live_server

from spandep.data.conllu import read_conllu
from spandep.serve.service import Service, ServiceSettings

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
SENTENCE = "The dog chased the cat."
LONG = " ".join(["The parser proposes a span for every word of the sentence and then links the spans"] * 4) + "."
WIDTH = 1100


def chromium() -> str:
    found = os.environ.get("SPANDEP_CHROMIUM") or next(filter(None, map(shutil.which, BROWSERS)), None)
    if found is None:
        reason = "no Chromium: apt-get install chromium (make test does), or set SPANDEP_CHROMIUM to a Chromium binary"
        if os.environ.get("CI"):
            pytest.fail(f"the browser test must run in CI: {reason}")
        pytest.skip(reason)
    return found


@pytest.fixture(scope="module")
def page():
    """A Chromium page on a live server with the shipped model: ``(page, url)``."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the test extra)")
    executable = chromium()
    with live_server(Service.load(["en"], ServiceSettings(), threads=1)) as url, sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": WIDTH, "height": 800}, accept_downloads=True)
        yield context.new_page(), url
        browser.close()


def screenshot(page, tmp_path: Path, name: str) -> None:
    page.screenshot(path=str(tmp_path / name), full_page=True)
    if os.environ.get("SPANDEP_SCREENSHOTS"):
        page.screenshot(path=str(Path(os.environ["SPANDEP_SCREENSHOTS"]) / name), full_page=True)


def load(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#model option", state="attached")  # the models are listed


def parse(page, url: str, text: str, input_format: str = "text") -> None:
    load(page, url)
    page.fill("#data", text)
    page.select_option("#input", input_format)
    page.click("#parse")
    page.wait_for_function("document.getElementById('status').textContent.includes('parsed by model')")


@pytest.mark.slow
def test_typed_sentence_is_drawn_with_its_words_and_arcs(page, tmp_path):
    page, url = page
    parse(page, url, SENTENCE)
    assert page.inner_text("#status") == "1 sentence parsed by model en"
    tree = page.locator("figure.sentence .tree svg")
    assert tree.count() == 1
    assert tree.locator("text.displacy-token").count() == 6  # The dog chased the cat .
    assert tree.locator("g.displacy-arrow").count() == 5  # every word but the root
    assert tree.locator("tspan.displacy-tag").all_text_contents() == ["DET", "NOUN", "VERB", "DET", "NOUN", "PUNCT"]
    page.click("figure.sentence summary")
    assert page.locator("figure.sentence table tbody tr").count() == 6
    screenshot(page, tmp_path, "serve-page.png")


@pytest.mark.slow
def test_long_sentence_scrolls_in_its_own_box(page):
    page, url = page
    parse(page, url, LONG + " " + SENTENCE)
    boxes = page.eval_on_selector_all(".tree", "els => els.map(e => [e.scrollWidth, e.clientWidth])")
    widths = page.eval_on_selector_all(".tree svg", "els => els.map(e => e.getBoundingClientRect().width)")
    assert len(boxes) >= 2 and any(scroll > box for scroll, box in boxes[:-1])  # the long tree scrolls sideways ...
    assert boxes[-1][0] <= boxes[-1][1] and widths[-1] < WIDTH / 2  # ... the short one does not, and is only as wide as it needs
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH  # the page itself does not scroll


@pytest.mark.slow
def test_uploaded_conllu_shows_lemmas_and_features(page, tmp_path):
    page, url = page
    load(page, url)
    page.set_input_files("#file", str(DEV))
    page.wait_for_function("document.getElementById('input').value === 'conllu'")  # the file is read, its kind chosen
    assert page.input_value("#data") == DEV.read_text(encoding="utf-8")
    page.click("#parse")
    page.wait_for_function("document.getElementById('status').textContent.includes('parsed by model')")
    sentences = list(read_conllu(DEV))
    trees = page.locator("figure.sentence .tree svg")
    assert trees.count() == len(sentences)
    first = trees.nth(0)
    assert first.locator("tspan.displacy-lemma").all_text_contents() == [w.lemma for w in sentences[0].words]
    assert first.locator("text.displacy-token").nth(3).locator("title").text_content() == sentences[0].words[3].feats  # a tooltip
    screenshot(page, tmp_path, "serve-page-conllu.png")


@pytest.mark.slow
def test_downloads_are_what_the_service_writes(page):
    page, url = page
    parse(page, url, SENTENCE)
    for fmt in ("conllu", "jsonl"):
        with page.expect_download() as download:
            page.click(f"#downloads button[data-format={fmt}]")
        saved = Path(download.value.path()).read_text(encoding="utf-8")
        assert saved == httpx.post(f"{url}/parse", json={"data": SENTENCE, "output": fmt}).json()["result"]
        assert download.value.suggested_filename == f"parsed.{fmt}"


@pytest.mark.slow
def test_errors_are_shown_on_the_page(page):
    page, url = page
    load(page, url)
    page.fill("#data", "not CoNLL-U")
    page.select_option("#input", "conllu")
    page.click("#parse")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('error')")
    status = page.inner_text("#status")  # the reader's message, with its hint that the data looks like plain text
    assert status.startswith("error: data:1: expected 10 tab-separated columns, found 1; this looks like plain text")
