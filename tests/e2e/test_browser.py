"""Real browser (Playwright driving Debian's Chromium): a share link renders, a widget change
updates the URL, and the new link in a fresh context shows the same numbers."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from .conftest import ARTIFACTS

pytestmark = pytest.mark.e2e
TIMEOUT_MS = 90_000


def _settle(page):
    from playwright.sync_api import expect

    page.wait_for_selector('[data-testid="stAppViewContainer"]', timeout=TIMEOUT_MS)
    page.wait_for_selector('[data-testid="stMetricValue"]', timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT_MS)
    page.wait_for_timeout(500)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT_MS)


def _metrics(page) -> list[str]:
    labels = page.get_by_test_id("stMetricLabel").all_inner_texts()
    values = page.get_by_test_id("stMetricValue").all_inner_texts()
    return [f"{lab.strip()}={val.strip()}" for lab, val in zip(labels, values)]


def test_share_link_widget_change_and_reopen(app_url, browser):
    ctx = browser.new_context(viewport={"width": 1500, "height": 2200})
    page = ctx.new_page()
    page.goto(f"{app_url}/?p=default&n=2048&rc=full", wait_until="domcontentloaded")
    _settle(page)
    q = parse_qs(urlparse(page.url).query)
    assert q["n"] == ["2048"] and q["rc"] == ["full"] and q["m"] == ["llama3-70b"]
    first = _metrics(page)
    assert any(m.startswith("Step time=") and m.endswith(" s") for m in first)
    assert any(m.startswith("Peak memory per GPU=") and "GiB" in m for m in first)

    box = page.get_by_test_id("stSidebar").get_by_label("GPUs", exact=True)
    box.fill("4096")
    box.press("Enter")
    page.wait_for_url("**n=4096**", timeout=TIMEOUT_MS)
    _settle(page)
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=stMetricValue]').length >= 9", timeout=TIMEOUT_MS)
    changed = _metrics(page)
    assert changed != first
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "e2e-plan.png"), full_page=True)

    ctx2 = browser.new_context(viewport={"width": 1500, "height": 2200})
    p2 = ctx2.new_page()
    p2.goto(page.url, wait_until="domcontentloaded")
    _settle(p2)
    assert _metrics(p2) == changed
    assert parse_qs(urlparse(p2.url).query) == parse_qs(urlparse(page.url).query)
    ctx.close()
    ctx2.close()


def test_bad_link_warns_in_the_browser(app_url, browser):
    ctx = browser.new_context(viewport={"width": 1500, "height": 1400})
    page = ctx.new_page()
    page.goto(f"{app_url}/?p=default&tp=0&m=gpt-9", wait_until="domcontentloaded")
    _settle(page)
    alerts = " ".join(page.get_by_test_id("stAlertContentWarning").all_inner_texts())
    assert "gpt-9" in alerts and "tp='0'" in alerts
    assert any(m.startswith("Step time=") for m in _metrics(page))
    ctx.close()
