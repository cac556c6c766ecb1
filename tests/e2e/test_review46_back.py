"""Review 46: the browser's Back / Forward on the Compare and Validate pages. Until session 46 these
pages read their link once per session, so Back showed the older address for a moment and the page
wrote its current state over it (docs/ui.md, stated limit of review 45). Now a rerun whose address the
page did not write, with no widget changed since its last write, reads the link again
(app_pages/_common.page_url_moved)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from .test_browser import TIMEOUT_MS

pytestmark = pytest.mark.e2e


def _q(page, key: str) -> list[str]:
    return parse_qs(urlparse(page.url).query).get(key, [])


def _settle(page) -> None:
    """These pages show tables, not the Plan page's metrics: wait for one, then for the run's end."""
    from playwright.sync_api import expect

    page.wait_for_selector('[data-testid="stDataFrame"]', timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT_MS)
    page.wait_for_timeout(500)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT_MS)


def _open(browser, url: str, height: int = 2200):
    """A fresh context on ``url``, settled: (context, page)."""
    ctx = browser.new_context(viewport={"width": 1500, "height": height})
    page = ctx.new_page()
    page.goto(url, wait_until="domcontentloaded")
    _settle(page)
    return ctx, page


def _step(page, step) -> None:
    """Back or Forward, then wait past the rerun that would have written the newer state back."""
    step()
    _settle(page)
    page.wait_for_timeout(1500)
    _settle(page)


def test_compare_back_and_forward_restore_the_number_of_scenarios(app_url, browser):
    from playwright.sync_api import expect

    ctx, page = _open(browser, f"{app_url}/compare?c_n=2", 2200)
    box = page.get_by_label("Scenarios (2 to 4)", exact=True)
    for n in ("3", "4"):
        box.fill(n)
        box.press("Enter")
        page.wait_for_url(f"**c_n={n}**", timeout=TIMEOUT_MS)
        _settle(page)
    expect(page.get_by_label("Scenario 4", exact=True)).to_have_count(1)

    _step(page, page.go_back)
    assert _q(page, "c_n") == ["3"]  # the page would have written c_n=4 back
    expect(box).to_have_value("3", timeout=TIMEOUT_MS)
    expect(page.get_by_label("Scenario 4", exact=True)).to_have_count(0)
    _step(page, page.go_back)
    assert _q(page, "c_n") == ["2"]
    expect(box).to_have_value("2", timeout=TIMEOUT_MS)
    _step(page, page.go_forward)
    assert _q(page, "c_n") == ["3"]
    expect(box).to_have_value("3", timeout=TIMEOUT_MS)
    ctx.close()


def test_validate_back_restores_the_run_set(app_url, browser):
    from playwright.sync_api import expect

    ctx, page = _open(browser, f"{app_url}/validate?v_set=calibration", 1600)
    page.get_by_role("radio", name="out-of-sample runs", exact=True).click()
    page.wait_for_url("**v_set=out_of_sample**", timeout=TIMEOUT_MS)
    _settle(page)

    _step(page, page.go_back)
    assert _q(page, "v_set") == ["calibration"]
    # the calibration set's groups are back as pills (Narayanan is no out-of-sample group)
    pills = page.get_by_test_id("stButtonGroup").last
    expect(pills.get_by_role("button", name="Narayanan", exact=True)).to_be_visible(timeout=TIMEOUT_MS)
    _step(page, page.go_forward)
    assert _q(page, "v_set") == ["out_of_sample"]
    expect(pills.get_by_role("button", name="Narayanan", exact=True)).to_have_count(0, timeout=TIMEOUT_MS)
    ctx.close()


def test_compare_quick_edits_in_a_row_are_all_kept(app_url, browser):
    """Review 46g: three values typed into "Scenarios" without waiting (3, 4, 3). The page wrote its
    address only when the query string of the rerun's request differed, which can be older than the
    browser's, so the URL kept an older edit (c_n=4 under a box of 3), and such a rerun could be read
    as Back, undoing the edits (2–4 of 10 tries). Now the address is written on every run and Back is
    Streamlit's own history flag. Six tries, each in a fresh context."""
    from playwright.sync_api import expect

    for _ in range(6):
        ctx, page = _open(browser, f"{app_url}/compare?c_n=2", 2200)
        box = page.get_by_label("Scenarios (2 to 4)", exact=True)
        for n in ("3", "4", "3"):
            box.fill(n)
            box.press("Enter")
        _settle(page)
        page.wait_for_timeout(1500)
        _settle(page)
        expect(box).to_have_value("3", timeout=TIMEOUT_MS)
        assert _q(page, "c_n") == ["3"]
        expect(page.get_by_label("Scenario 3", exact=True)).to_have_count(1)
        expect(page.get_by_label("Scenario 4", exact=True)).to_have_count(0)
        ctx.close()


def test_validate_back_clears_the_run_pick_it_did_not_have(app_url, browser):
    """Review 46g: a run picked under "Open a run on the Plan page", then Back: the address lost
    v_run but the box kept its pick, and the next edit wrote it back into the link."""
    from playwright.sync_api import expect

    ctx, page = _open(browser, f"{app_url}/validate?v_set=calibration&v_metric=tokens_per_s_per_gpu", 2200)
    page.get_by_role("combobox", name="Open a run on the Plan page").click()
    page.get_by_role("option").nth(2).click()
    page.wait_for_url("**v_run=**", timeout=TIMEOUT_MS)
    _settle(page)
    button = page.get_by_role("button", name="Open on the Plan page")
    expect(button).to_be_enabled(timeout=TIMEOUT_MS)

    _step(page, page.go_back)
    assert _q(page, "v_run") == []
    expect(button).to_be_disabled(timeout=TIMEOUT_MS)
    page.get_by_test_id("stButtonGroup").nth(1).get_by_role("radio", name="TFLOP/s per GPU", exact=True).click()
    page.wait_for_url("**v_metric=tflops_per_gpu**", timeout=TIMEOUT_MS)
    _settle(page)
    page.wait_for_timeout(1000)
    assert _q(page, "v_run") == []  # the Back is not undone by the next edit
    expect(button).to_be_disabled(timeout=TIMEOUT_MS)
    ctx.close()
