"""Review 16d: the Compare page in a real browser (Playwright + Debian's Chromium) at 1,280 px, the
width a laptop gives it with the sidebar open: four scenarios (dense, MoE, one that does not fit in
HBM, one that misses host memory), every cell against ``planner evaluate --link`` of the slot's own
keys in the page's URL (the CLI is the reference), the chart's legend and tooltips, the page's
share link opened in a fresh session, a tampered copy of it, and "Scenarios" 4 → 2 → 4."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from urllib.parse import parse_qsl, urlencode, urlparse

import pytest
from shown import COMPARE_ROWS, UNITS_SI, parse_shown

from .conftest import ARTIFACTS, ROOT

pytestmark = pytest.mark.e2e
TIMEOUT_MS = 120_000
GIB = 2.0**30

HBM_NO_FIT = {"p": "default", "n": "8", "tp": "8", "pp": "1", "vpp": "1", "sch": "1f1b"}
HOST_NO_FIT = {"p": "gpt3-175b-a100-1024", "n": "8", "tp": "8", "pp": "1", "vpp": "1", "sch": "1f1b", "z": "3",
               "off": "cpu", "offw": "1", "offg": "1", "gbs": "64"}
QUERY = {"c_n": "4", "c_src1": "default", "c_src2": "mixtral-8x7b-h100-64", "c_src3": "link", "c_src4": "link",
         **{f"3.{k}": v for k, v in HBM_NO_FIT.items()}, **{f"4.{k}": v for k, v in HOST_NO_FIT.items()}}

_SCALE, _ROWS = UNITS_SI, COMPARE_ROWS  # tests/shown.py


def _settle(page):
    from playwright.sync_api import expect

    page.wait_for_selector('[data-testid="stDataFrame"]', timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT_MS)
    page.wait_for_timeout(1000)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT_MS)


def _open(browser, url: str):
    ctx = browser.new_context(viewport={"width": 1280, "height": 2600})
    page = ctx.new_page()
    page.goto(url, wait_until="domcontentloaded")
    _settle(page)
    return ctx, page


def _table(page) -> tuple[list[str], dict[str, list[str]]]:
    """(column headers, row name -> cells) from the grid's accessible DOM table."""
    heads = [h.strip() for h in page.locator('[data-testid="stDataFrame"] [role="columnheader"]').all_inner_texts()]
    cells = page.locator('[data-testid="stDataFrame"] [role="gridcell"]').all_inner_texts()
    w = len(heads)
    return heads[1:], {cells[i]: cells[i + 1:i + w] for i in range(0, len(cells), w)}


def _parse(cell: str) -> tuple[float, float]:
    """(value in SI, half a unit of the last digit shown) of a shown number (tests/shown.py)."""
    return parse_shown(cell, _SCALE)


def _cli(url: str, slot: int) -> dict:
    keys = [(k[len(f"{slot}."):], v) for k, v in parse_qsl(urlparse(url).query) if k.startswith(f"{slot}.")]
    r = subprocess.run([sys.executable, "-m", "planner", "evaluate", "--link",
                        "http://localhost:8501/?" + urlencode(keys), "--format", "json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["results"]


def test_four_slots_every_cell_is_the_clis_and_the_link_round_trips(browser, app_url):
    ctx, page = _open(browser, f"{app_url}/compare?{urlencode(QUERY)}")
    try:
        heads, rows = _table(page)
        page.screenshot(path=str(ARTIFACTS / "review16d_compare_1280.png"), full_page=True)
        assert [h[:3] for h in heads] == ["1: ", "2: ", "3: ", "4: "]
        assert heads[2].startswith("3: ✗ no fit") and heads[3].startswith("4: ✗ host memory")
        for i in range(1, 5):
            res = _cli(page.url, i)
            for row, (key, si) in _ROWS.items():
                shown, half = _parse(rows[row][i - 1])
                assert math.isclose(shown, float(res[key]) * si, abs_tol=half * 1.0001), (i, row, rows[row][i - 1])
            assert rows["fits in HBM"][i - 1].startswith("yes" if res["fits"] else "no ✗")
            assert rows["fits in host memory"][i - 1].startswith("yes" if res["host_fits"] else "no ✗")
        # both slots that do not fit carry ✗ on goodput too, as the errors above the table say
        assert rows["goodput"][2].endswith("✗") and rows["goodput"][3].endswith("✗")
        assert not rows["goodput"][0].endswith("✗") and not rows["goodput"][1].endswith("✗")
        # each slot's choice is readable whole in its box (the preset id without a "preset: " prefix
        # that cut "mixtral-8x7b-h100-64"; widths in CSS px: text, box)
        boxes = page.evaluate("""() => [...document.querySelectorAll(
                                       '[data-testid="stSelectbox"] input[role="combobox"]')]
                                       .map(i => [i.value, i.scrollWidth, i.clientWidth])""")
        assert [b[0] for b in boxes] == ["default", "mixtral-8x7b-h100-64", "from a share link", "from a share link"]
        assert all(sw <= cw for _, sw, cw in boxes), boxes
        # four slots fit 1,280 px: no horizontal scroll in the table
        sw, cw = page.evaluate("""() => { const e = document.querySelector('[data-testid="stDataFrame"] .dvn-scroller');
                                          return [e.scrollWidth, e.clientWidth]; }""")
        assert sw <= cw, (sw, cw)
        # the chart: bars named by scenario and memory state (Vega's aria-labels hold the tooltip fields)
        aria = page.locator('[data-testid="stVegaLiteChart"] [aria-label]').evaluate_all(
            "els => els.map(e => e.getAttribute('aria-label'))")
        assert any(a.startswith(f"scenario: {heads[3]};") and "memory: does not fit in host memory" in a
                   for a in aria), aria[:8]
        assert any(a.startswith(f"scenario: {heads[2]};") and "memory: does not fit in HBM" in a for a in aria)
        assert any("legend titled 'memory'" in a and "does not fit in host memory" in a for a in aria)
        link = page.url
    finally:
        ctx.close()

    # the page's own link in a fresh session: the same table
    ctx2, p2 = _open(browser, link)
    try:
        assert _table(p2) == (heads, rows)
    finally:
        ctx2.close()

    # a tampered copy: slot 2's TP made "abc", c_n 7: both refused by name, the other slots kept
    q = dict(parse_qsl(urlparse(link).query))
    q.update({"2.tp": "abc", "c_n": "7"})
    ctx3, p3 = _open(browser, f"{app_url}/compare?{urlencode(q)}")
    try:
        alerts = " ".join(p3.get_by_test_id("stAlert").all_inner_texts())
        assert "c_n='7': refused; allowed 2 to 4; using 2" in alerts
        h3, r3 = _table(p3)
        assert h3 == heads[:2] and r3["step time"] == rows["step time"][:2]
        assert "Scenario 2: tp='abc' (parallelism.tp): must be a whole number" in alerts
        assert p3.get_by_label("Scenarios (2 to 4)", exact=True).input_value() == "2"
    finally:
        ctx3.close()


def test_fewer_scenarios_and_back_keeps_slots_3_and_4(browser, app_url):
    ctx, page = _open(browser, f"{app_url}/compare?{urlencode(QUERY)}")
    try:
        heads, _ = _table(page)
        box = page.get_by_label("Scenarios (2 to 4)", exact=True)
        box.fill("2")
        box.press("Enter")
        page.wait_for_url(re.compile(r".*c_n=2.*"), timeout=TIMEOUT_MS)
        _settle(page)
        assert len(_table(page)[0]) == 2
        box.fill("4")
        box.press("Enter")
        page.wait_for_url(re.compile(r".*c_n=4.*"), timeout=TIMEOUT_MS)
        _settle(page)
        assert _table(page)[0] == heads
    finally:
        ctx.close()
