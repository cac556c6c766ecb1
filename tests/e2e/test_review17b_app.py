"""Review 17b, in a real browser: the Explore table of a short run is readable (its time and cost
columns in a unit by size), and fits its box."""

from __future__ import annotations

import pytest

from .test_browser import TIMEOUT_MS, _grid_cell, _grid_headers, _wait_page

pytestmark = pytest.mark.e2e


def test_explore_table_of_a_short_run_reads_in_minutes_and_dollars(app_url, browser):
    """10⁸ tokens of Llama 3 8B on 8 H100: about 25 min and $7 per split (8 GPUs × 0.41 h × $2.155);
    before the fix every row read "0.0" days and "0.00" M USD."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 1400})
    page = ctx.new_page()
    page.goto(f"{app_url}/explore?p=llama3-8b-h100-64&tok=1e8&n=8&cp=1", wait_until="domcontentloaded")
    _wait_page(page, "stDataFrame")
    heads = _grid_headers(page)
    assert heads.index("min") == heads.index("sched.") + 1 and "USD" in heads, heads
    assert "days" not in heads and "M USD" not in heads
    t = _grid_cell(page, heads.index("min"), 1, markers=True)
    usd = _grid_cell(page, heads.index("USD"), 1, markers=True)
    # the grid's accessible cells hold the unformatted value (the canvas draws "24.7", "7.13")
    assert 10.0 < float(t) < 60.0 and 1.0 < float(usd) < 20.0, (t, usd)
    over = page.get_by_test_id("stDataFrame").first.evaluate(
        "el => { const s = el.querySelector('.dvn-scroller'); return s ? s.scrollWidth - s.clientWidth : 0; }")
    assert over <= 1, f"top-K table is {over} px wider than its box"
    ctx.close()
