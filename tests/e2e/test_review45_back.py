"""Review 45b: the browser's Back / Forward buttons. Every input change writes a new share link (a
history entry); Back used to show the older address for a moment, after which the page wrote the
newer state over it, so no earlier scenario could be reached. Now a link the session did not write
is read as a new one (app_pages/_common.reread_moved_url)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from .test_browser import TIMEOUT_MS, _settle

pytestmark = pytest.mark.e2e


def _n(page) -> str:
    return parse_qs(urlparse(page.url).query).get("n", [""])[0]


def _history_step(page, step, box, n: str) -> None:
    """Back or Forward, then wait past the rerun that would write the newer state over the URL."""
    from playwright.sync_api import expect

    step()
    _settle(page)
    page.wait_for_timeout(1500)
    _settle(page)
    assert _n(page) == n
    expect(box).to_have_value(n, timeout=TIMEOUT_MS)


def test_back_and_forward_restore_the_earlier_scenarios(app_url, browser):
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": 1500, "height": 2200})
    page = ctx.new_page()
    page.goto(f"{app_url}/?p=default&n=1024&pl_mct=3000", wait_until="domcontentloaded")
    _settle(page)
    box = page.get_by_test_id("stSidebar").get_by_label("GPUs", exact=True)
    for n in ("2048", "4096"):
        box.fill(n)
        box.press("Enter")
        page.wait_for_url(f"**n={n}**", timeout=TIMEOUT_MS)
        _settle(page)
    expect(box).to_have_value("4096")

    _history_step(page, page.go_back, box, "2048")  # the page would have written n=4096 back
    _history_step(page, page.go_back, box, "1024")
    # the page's own key came back with the link
    assert parse_qs(urlparse(page.url).query).get("pl_mct") == ["3000"]
    expect(page.get_by_label("Trials", exact=True)).to_have_value("3000", timeout=TIMEOUT_MS)

    _history_step(page, page.go_forward, box, "2048")

    # a change after going back works as before: one new entry, the new value kept
    box.fill("512")
    box.press("Enter")
    page.wait_for_url("**n=512**", timeout=TIMEOUT_MS)
    _settle(page)
    page.wait_for_timeout(1000)
    assert _n(page) == "512"
    expect(box).to_have_value("512")
    ctx.close()


def test_quick_edits_in_a_row_are_all_kept(app_url, browser):
    """Review 45i: three sidebar boxes changed one after another without a pause. A rerun whose
    request still carried the address from before the previous write was taken for Back and read
    that older link over the new values (3 of 13 tries lost edits); an edit changes a widget and
    Back does not, so such a rerun is no longer read as Back. Five tries, each in a fresh context."""
    from playwright.sync_api import expect

    want = {"GPUs": "2048", "PUE": "1.3", "Average power draw, fraction of node power": "0.7"}
    for _ in range(5):
        ctx = browser.new_context(viewport={"width": 1500, "height": 2200})
        page = ctx.new_page()
        page.goto(f"{app_url}/?p=default&n=1024", wait_until="domcontentloaded")
        _settle(page)
        sb = page.get_by_test_id("stSidebar")
        for label, v in want.items():
            bx = sb.get_by_label(label, exact=True)
            bx.fill(v)
            bx.press("Enter")
        _settle(page)
        page.wait_for_timeout(2000)
        _settle(page)
        for label, v in want.items():
            expect(sb.get_by_label(label, exact=True)).to_have_value(v, timeout=TIMEOUT_MS)
        q = parse_qs(urlparse(page.url).query)
        assert (q.get("n"), q.get("pue"), q.get("util")) == (["2048"], ["1.3"], ["0.7"]), page.url
        ctx.close()
