"""The paste-a-log page, end to end in a real headless Chromium (Debian's; nothing is downloaded)."""

import shutil

import pytest

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs the system chromium (apt-get install chromium)")

P104_LINE = ("vec_dot_q8_0_q8_1_impl has no device code compatible with CUDA arch 610. "
             "ggml-cuda.cu was compiled for: 500,600,700,750,800,900")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def page(base_url):
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        tab = browser.new_page()
        tab.goto(base_url + "/")
        yield tab
        browser.close()


def test_paste_a_log_and_read_the_diagnosis(page):
    page.fill("#log", P104_LINE)
    page.fill("#gpu", "GeForce GTX 1080")
    page.click("#explain-button")
    page.wait_for_selector(".diag")
    assert page.inner_text(".diag .cls") == "arch-not-compiled"
    assert "-DCMAKE_CUDA_ARCHITECTURES=61" in page.inner_text("#result")


def test_a_log_without_error_says_so(page):
    page.fill("#log", "all good")
    page.fill("#gpu", "")
    page.click("#explain-button")
    page.wait_for_selector("#message")
    assert page.inner_text("#message") == "No known GPU error found in this log."


def test_an_unexplained_question_points_at_what_the_gpu_lacks(page):
    # the tiny KB's one feature (tests/fixtures/tiny/data/features.toml): int8 tensor cores, mentioned as MMQ
    page.fill("#log", "MMQ crashes on our servers")
    page.fill("#gpu", "Tesla V100-SXM2-32GB")
    page.click("#explain-button")
    page.wait_for_selector("#hints")
    assert "int8 tensor cores (IMMA): needs compute capability 7.5" in page.inner_text("#hints")
    assert "cudalogs kb show ggml-no-device-code" in page.inner_text("#hints")


def test_an_unknown_gpu_shows_the_error(page):
    page.fill("#log", P104_LINE)
    page.fill("#gpu", "GTX 9999 Ultra")
    page.click("#explain-button")
    page.wait_for_selector("#error")
    assert "unknown GPU" in page.inner_text("#error")


def test_search_from_the_page(page):
    page.fill("#query", "no device code")
    page.click("#search-button")
    page.wait_for_selector("#search-results li")
    assert "ggml-no-device-code" in page.inner_text("#search-results")
