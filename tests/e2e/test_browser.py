"""Real browser (Playwright driving Debian's Chromium): a share link renders, a widget change
updates the URL, and the new link in a fresh context shows the same numbers."""

from __future__ import annotations

import re
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


def llama_config_file(tmp_path, **over):
    """A Llama-3.1-8B config.json (tests/data/hf_configs.json) with ``over`` applied, written to
    ``tmp_path``; its path."""
    import json
    from pathlib import Path

    cfg = json.loads((Path(__file__).resolve().parents[1] / "data" / "hf_configs.json").read_text())
    f = tmp_path / "config.json"
    f.write_text(json.dumps(dict(cfg["llama-3.1-8b"]["config"], **over)))
    return f


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


def _wait_page(page, testid: str, count: int = 1):
    from playwright.sync_api import expect

    page.wait_for_selector('[data-testid="stAppViewContainer"]', timeout=TIMEOUT_MS)
    expect(page.get_by_test_id(testid)).to_have_count(count, timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT_MS)


def _grid_cell(page, col: int, row: int, markers: bool = False) -> str:
    """Text of one st.dataframe cell, ``col`` as in :func:`_grid_headers` (0 = the index).
    The grid draws on a canvas; its accessible fallback table carries each cell as
    ``data-testid=glide-cell-<col>-<row>``, shifted by one when the table has a
    row-selection marker column (``on_select``)."""
    return (page.get_by_test_id(f"glide-cell-{col + markers}-{row}").first.text_content(timeout=TIMEOUT_MS) or "").strip()


def _grid_headers(page) -> list[str]:
    page.get_by_test_id("glide-cell-1-1").first.wait_for(state="attached", timeout=TIMEOUT_MS)
    return [t.strip() for t in page.get_by_test_id("stDataFrame").first.locator("th[role=columnheader]").all_text_contents()]


def test_explore_renders_and_a_clicked_row_opens_in_plan(app_url, browser):
    """Explore: both scatter charts and the top-K table render; clicking a row's selection
    marker switches to Plan with that split's TP / PP / CP in the sidebar and the URL."""
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": 1500, "height": 1700})
    page = ctx.new_page()
    page.goto(f"{app_url}/explore?p=llama3-8b-h100-64", wait_until="domcontentloaded")
    _wait_page(page, "stDataFrame")
    expect(page.get_by_test_id("stVegaLiteChart")).to_have_count(2, timeout=TIMEOUT_MS)
    page.wait_for_selector('[data-testid="stVegaLiteChart"] svg, [data-testid="stVegaLiteChart"] canvas',
                           timeout=TIMEOUT_MS)
    heads = _grid_headers(page)
    # no index column (the selection markers number nothing); the ranking column leads the results
    assert heads[:3] == ["TP", "PP", "DP"] and heads.index("days") == heads.index("sched.") + 1
    assert {"M USD", "goodput %", "MFU %", "GiB"} <= set(heads)
    # Every column fits: the grid does not scroll sideways (the last header was cut off before).
    over = page.get_by_test_id("stDataFrame").first.evaluate(
        "el => { const s = el.querySelector('.dvn-scroller'); return s ? s.scrollWidth - s.clientWidth : 0; }")
    assert over <= 1, f"top-K table is {over} px wider than its box"
    row = 2
    tp, pp, cp = (_grid_cell(page, heads.index(h), row, markers=True) for h in ("TP", "PP", "CP"))
    page.screenshot(path=str(ARTIFACTS / "e2e-explore.png"), full_page=True)
    # Row markers sit in the first 30 px of the grid; header and rows are 35 px high.
    box = page.get_by_test_id("stDataFrame").first.bounding_box()
    page.mouse.click(box["x"] + 12, box["y"] + 35 + 35 * row + 17)
    expect(page.get_by_role("heading", name="Plan a training run")).to_be_visible(timeout=TIMEOUT_MS)
    _settle(page)
    q = parse_qs(urlparse(page.url).query)
    assert (q["tp"], q["pp"], q["cp"]) == ([tp], [pp], [cp])
    sb = page.get_by_test_id("stSidebar")
    assert sb.get_by_label("TP", exact=True).input_value() == tp
    assert sb.get_by_label("PP", exact=True).input_value() == pp
    assert any(m.startswith("Step time=") for m in _metrics(page))
    ctx.close()


def test_compare_two_presets_side_by_side(app_url, browser):
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": 1500, "height": 1600})
    page = ctx.new_page()
    page.goto(f"{app_url}/compare?c_n=2&c_src1=default&c_src2=llama3-8b-h100-64", wait_until="domcontentloaded")
    _wait_page(page, "stDataFrame")
    expect(page.get_by_test_id("stVegaLiteChart")).to_have_count(1, timeout=TIMEOUT_MS)
    page.wait_for_selector('[data-testid="stVegaLiteChart"] svg, [data-testid="stVegaLiteChart"] canvas',
                           timeout=TIMEOUT_MS)
    heads = _grid_headers(page)
    assert any(h.startswith("1: llama3-70b · 1024") for h in heads), heads
    assert any(h.startswith("2: llama3-8b · 64") for h in heads), heads
    rows = [_grid_cell(page, 0, r) for r in range(16)]  # 16 rows since the GPU-hours row (2026-12-03)
    assert "step time" in rows and "cost to train" in rows
    c1 = heads.index(next(h for h in heads if h.startswith("1:")))
    assert _grid_cell(page, c1, rows.index("split TP·PP·CP·DP")) == "8·4·1·32"  # the split is a row now
    r = rows.index("step time")
    for col in (heads.index(next(h for h in heads if h.startswith("1:"))),
                heads.index(next(h for h in heads if h.startswith("2:")))):
        assert _grid_cell(page, col, r).endswith(" s")
    assert _grid_cell(page, 1, r) != _grid_cell(page, 2, r)  # columns 1 and 2: the two scenarios
    q = parse_qs(urlparse(page.url).query)
    assert q["c_src2"] == ["llama3-8b-h100-64"] and q["2.m"] == ["llama3-8b"]
    page.screenshot(path=str(ARTIFACTS / "e2e-compare.png"), full_page=True)
    ctx.close()


def test_validate_page_renders(app_url, browser):
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": 1500, "height": 1400})
    page = ctx.new_page()
    page.goto(f"{app_url}/validate", wait_until="domcontentloaded")
    # the error per group, the accuracy band per family (in a collapsed expander, still in the
    # DOM) and the table of every run
    _wait_page(page, "stDataFrame", count=3)
    expect(page.get_by_test_id("stVegaLiteChart").first).to_be_visible(timeout=TIMEOUT_MS)
    page.wait_for_selector('[data-testid="stVegaLiteChart"] svg, [data-testid="stVegaLiteChart"] canvas',
                           timeout=TIMEOUT_MS)
    # Every source group is a visible pill (a multiselect hid "NeMo FP8" behind "+1").
    pills = page.get_by_test_id("stButtonGroup").last
    for g in ("Korthikanti", "Megatron-Core H100", "MosaicML FSDP", "Narayanan", "NeMo FP8"):
        expect(pills.get_by_role("button", name=g, exact=True)).to_be_visible(timeout=TIMEOUT_MS)
    page.screenshot(path=str(ARTIFACTS / "e2e-validate.png"), full_page=True)
    ctx.close()


def test_monte_carlo_trials_box_and_url_agree_after_bad_input(app_url, browser):
    """Emptying the Trials box, or typing a value out of range, leaves box and URL equal."""
    ctx = browser.new_context(viewport={"width": 1500, "height": 1800})
    page = ctx.new_page()
    page.goto(f"{app_url}/?p=default&pl_mct=2000", wait_until="domcontentloaded")
    _settle(page)
    from playwright.sync_api import expect

    box = page.get_by_label("Trials", exact=True)
    for typed, want in (("", "2000"), ("50", "100"), ("2000", "2000"), ("", "2000")):
        box.fill(typed)
        box.press("Tab")
        # the URL may already hold `want` (an emptied box restores the value it had): wait for
        # the box itself, then for the URL, then for the run to finish
        expect(box).to_have_value(want, timeout=TIMEOUT_MS)
        page.wait_for_url(f"**pl_mct={want}**", timeout=TIMEOUT_MS)
        _settle(page)
        assert box.input_value() == want, (typed, box.input_value())
        assert parse_qs(urlparse(page.url).query)["pl_mct"] == [want]
    ctx.close()


def test_plan_run_that_never_finishes_explains_why(app_url, browser):
    ctx = browser.new_context(viewport={"width": 1500, "height": 1800})
    page = ctx.new_page()
    page.goto(f"{app_url}/?p=llama3-405b-h100-16k&rs=100&ck=none", wait_until="domcontentloaded")
    _settle(page)
    alerts = " ".join(page.get_by_test_id("stAlertContentWarning").all_inner_texts())
    assert "no finite time to train" in alerts and "Engine: Goodput is 0" in alerts
    m = _metrics(page)
    assert "Days to train=—" in m and not any("inf" in x.lower() or "nan" in x.lower() for x in m)
    page.screenshot(path=str(ARTIFACTS / "e2e-plan-never.png"), full_page=True)
    ctx.close()


def test_hugging_face_config_upload_fills_the_custom_model(app_url, browser, tmp_path):
    """The sidebar's config.json uploader: a Llama-3.1-8B-style file with 80 layers (so the
    default split, pp·vpp = 20, stays valid) turns the model into 'custom' with the file's
    numbers, the results change, and the share link carries the architecture."""
    import json

    from playwright.sync_api import expect

    f = llama_config_file(tmp_path, num_hidden_layers=80, _name_or_path="e2e/llama-80l")
    ctx = browser.new_context(viewport={"width": 1500, "height": 2200})
    page = ctx.new_page()
    page.goto(f"{app_url}/?p=default", wait_until="domcontentloaded")
    _settle(page)
    before = _metrics(page)
    sb = page.get_by_test_id("stSidebar")
    up = sb.get_by_test_id("stFileUploader").filter(has_text="Hugging Face")
    up.locator("input[type=file]").set_input_files(str(f))
    expect(sb.get_by_label("Layers", exact=True)).to_have_value("80", timeout=TIMEOUT_MS)
    expect(sb.get_by_label("Hidden size", exact=True)).to_have_value("4096", timeout=TIMEOUT_MS)
    expect(sb.get_by_label("FFN hidden size", exact=True)).to_have_value("14336", timeout=TIMEOUT_MS)
    _settle(page)
    assert _metrics(page) != before
    q = parse_qs(urlparse(page.url).query)
    assert "m" not in q or q["m"] != ["llama3-70b"]
    # a file the planner cannot model: an error naming why; the imported model stays
    bad = tmp_path / "t5.json"
    bad.write_text(json.dumps({"model_type": "t5", "d_model": 512}))
    up.locator("input[type=file]").set_input_files(str(bad))
    expect(sb.get_by_test_id("stAlertContentError").filter(has_text="encoder-decoder")).to_have_count(
        1, timeout=TIMEOUT_MS)
    expect(sb.get_by_label("Layers", exact=True)).to_have_value("80", timeout=TIMEOUT_MS)
    # the same config.json dropped on "Import scenario JSON" is refused; the scenario is kept
    sb.get_by_text("Export / import", exact=True).click()
    scen_up = sb.get_by_test_id("stFileUploader").filter(has_text="Import scenario JSON")
    scen_up.locator("input[type=file]").set_input_files(str(f))
    expect(sb.get_by_test_id("stAlertContentError").filter(has_text="is a Hugging Face config.json")).to_have_count(
        1, timeout=TIMEOUT_MS)
    expect(sb.get_by_label("Layers", exact=True)).to_have_value("80", timeout=TIMEOUT_MS)
    expect(sb.get_by_label("GPUs", exact=True)).to_have_value("1024", timeout=TIMEOUT_MS)
    ctx.close()


# Review 2026-11-30 ---------------------------------------------------------------------------------

#: Finds a value (or header) that its box cuts off: any element under ``root`` whose content is wider
#: than the element.
_CLIPPED_JS = """els => els.filter(e => [e, ...e.querySelectorAll('*')].some(d => d.scrollWidth > d.clientWidth + 1))
                          .map(e => e.innerText)"""
_GRID_OVER_JS = ("el => { const s = el.querySelector('.dvn-scroller'); "
                 "return s ? s.scrollWidth - s.clientWidth : 0; }")


def test_explore_open_in_plan_after_the_sweep_changed(app_url, browser):
    """The reviewer's steps: /explore, GPUs 2048 (Enter), "Open in Plan" raised a ValueError
    (the "Or pick a row" box still held the old sweep's label). Now Plan opens row 0 of the new
    sweep."""
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": 1500, "height": 1700})
    page = ctx.new_page()
    page.goto(f"{app_url}/explore", wait_until="domcontentloaded")
    _wait_page(page, "stDataFrame")
    feasible = page.get_by_test_id("stMetricValue").first
    expect(feasible).to_be_visible(timeout=TIMEOUT_MS)
    before = feasible.inner_text()
    box = page.get_by_test_id("stSidebar").get_by_label("GPUs", exact=True)
    box.fill("2048")
    box.press("Enter")
    page.wait_for_url("**n=2048**", timeout=TIMEOUT_MS)
    # the new sweep drawn (under load the old table stayed up a while and was read: flaky)
    expect(feasible).not_to_have_text(before, timeout=TIMEOUT_MS)
    _wait_page(page, "stDataFrame")
    heads = _grid_headers(page)
    want = {h: _grid_cell(page, heads.index(h), 0, markers=True) for h in ("TP", "PP", "CP", "mb")}
    pick = page.get_by_role("combobox", name="Or pick a row")
    row0 = f"#1: TP {want['TP']} · PP {want['PP']} · CP {want['CP']} · mb {want['mb']} · "
    expect(pick).to_have_value(re.compile("^" + re.escape(row0)), timeout=TIMEOUT_MS)
    page.get_by_role("button", name="Open in Plan").click()
    expect(page.get_by_role("heading", name="Plan a training run")).to_be_visible(timeout=TIMEOUT_MS)
    _settle(page)
    assert page.get_by_test_id("stException").count() == 0
    q = parse_qs(urlparse(page.url).query)
    assert (q["n"], q["tp"], q["pp"], q["cp"], q["mbs"]) == (["2048"], [want["TP"]], [want["PP"]], [want["CP"]],
                                                              [want["mb"]])
    ctx.close()


def test_monte_carlo_boxes_survive_an_invalid_scenario(app_url, browser):
    """Trials 5000, Seed 7, then TP 3 (an error: the boxes are not drawn), then TP 8: the boxes
    showed empty placeholders while the URL kept the values (review 2026-11-30)."""
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": 1500, "height": 2000})
    page = ctx.new_page()
    page.goto(f"{app_url}/?p=default", wait_until="domcontentloaded")
    _settle(page)
    for label, v in (("Trials", "5000"), ("Seed", "7")):
        b = page.get_by_label(label, exact=True)
        b.fill(v)
        b.press("Tab")
        page.wait_for_url(f"**pl_mc{'t' if label == 'Trials' else 's'}={v}**", timeout=TIMEOUT_MS)
        _settle(page)
    tp = page.get_by_test_id("stSidebar").get_by_label("TP", exact=True)
    for v in ("3", "8"):
        tp.fill(v)
        tp.press("Enter")
        page.wait_for_url(f"**tp={v}**", timeout=TIMEOUT_MS)
        page.wait_for_timeout(500)
        expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT_MS)
    _settle(page)
    expect(page.get_by_label("Trials", exact=True)).to_have_value("5000", timeout=TIMEOUT_MS)
    expect(page.get_by_label("Seed", exact=True)).to_have_value("7", timeout=TIMEOUT_MS)
    pp = page.get_by_test_id("stSidebar").get_by_label("PP", exact=True)
    pp.fill("8")
    pp.press("Enter")
    page.wait_for_url("**pp=8**", timeout=TIMEOUT_MS)
    _settle(page)
    caps = " ".join(page.get_by_test_id("stCaptionContainer").all_inner_texts())
    assert "empty" not in caps
    q = parse_qs(urlparse(page.url).query)
    assert q["pl_mct"] == ["5000"] and q["pl_mcs"] == ["7"]
    assert page.get_by_label("Trials", exact=True).input_value() == "5000"
    ctx.close()


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_layout_key_results_visible(app_url, browser, size):
    """docs/ui.md: at 1,280 px (and wider) the Explore top-K table, four Compare slots, the Monte
    Carlo summary, its button and the headline numbers fit without sideways scrolling or "…"
    (review 2026-11-30: 974 / 977 px of columns in 818 px; "Run sim…"; "23,330.4 d…")."""
    from playwright.sync_api import expect

    w, h = size
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    page.goto(f"{app_url}/explore", wait_until="domcontentloaded")
    _wait_page(page, "stDataFrame")
    heads = _grid_headers(page)
    assert {"days", "M USD", "goodput %"} <= set(heads)
    assert page.get_by_test_id("stDataFrame").first.evaluate(_GRID_OVER_JS) <= 1
    page.screenshot(path=str(ARTIFACTS / f"e2e-explore-{w}.png"))

    page.goto(f"{app_url}/compare?c_n=4", wait_until="domcontentloaded")
    _wait_page(page, "stDataFrame")
    assert len([x for x in _grid_headers(page) if x[:2] in ("1:", "2:", "3:", "4:")]) == 4
    assert page.get_by_test_id("stDataFrame").first.evaluate(_GRID_OVER_JS) <= 1
    page.screenshot(path=str(ARTIFACTS / f"e2e-compare4-{w}.png"))

    for link in ("/?p=default&n=8&tp=8&pp=1&vpp=1&sch=1f1b&tok=1e16", "/?p=default&tok=1e6", "/?p=default&tok=1e16"):
        page.goto(app_url + link, wait_until="domcontentloaded")
        _settle(page)
        clipped = page.get_by_test_id("stMetricValue").evaluate_all(_CLIPPED_JS)
        assert not clipped, (link, clipped)

    page.goto(f"{app_url}/?p=default&pl_mct=200", wait_until="domcontentloaded")
    _settle(page)
    assert not page.get_by_test_id("stButton").filter(has_text="Run simulation").evaluate_all(_CLIPPED_JS)
    page.get_by_role("button", name="Run simulation").click()
    summary = page.get_by_test_id("stDataFrame").filter(has_text="P90")
    expect(summary).to_have_count(1, timeout=TIMEOUT_MS)
    _settle(page)
    assert summary.evaluate(_GRID_OVER_JS) <= 1
    summary.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / f"e2e-plan-mc-{w}.png"))
    ctx.close()


def test_the_app_fetches_nothing_from_outside(app_url, browser):
    """The shipped config promises no external fonts or CDNs (.streamlit/config.toml): every request
    the pages make goes to the app itself (found by a new-user review: the ':material/dns:' page
    icon made the browser fetch an SVG from fonts.gstatic.com, an error offline; an emoji icon is
    a data: URL)."""
    from urllib.parse import urlparse as _up

    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    page = ctx.new_page()
    seen: list[str] = []
    page.on("request", lambda req: seen.append(req.url))
    host = _up(app_url).netloc
    for path in ("/", "/explore", "/compare", "/validate"):
        page.goto(f"{app_url}{path}", wait_until="domcontentloaded")
        page.wait_for_selector('[data-testid="stSidebar"]', timeout=TIMEOUT_MS)
        page.wait_for_selector('[data-testid="stMainBlockContainer"] h1', timeout=TIMEOUT_MS)
        page.wait_for_timeout(3000)  # icons, favicon and charts requested after the first paint
    outside = sorted({u for u in seen if _up(u).scheme in ("http", "https", "ws", "wss") and _up(u).netloc != host})
    assert outside == []
    ctx.close()


def test_narrow_window_wraps_the_columns(app_url, browser):
    """At 800 px the sidebar stays open (Streamlit hides it only at 768 px and below) and leaves the
    main area 468 px: four headline numbers per row were cut ("0.87 …", "207.…"), the goodput-vs-
    interval chart shrank to a vertical line with its title cut, the Monte Carlo summary hid P50 /
    P90 and Explore's "Colour by" cut its PP choice (review 2026-11-30). app.py's NARROW_CSS wraps
    the rows of a main area under 800 px: nothing cut, each chart as wide as the main area."""
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": 800, "height": 1000})
    page = ctx.new_page()
    page.goto(f"{app_url}/?p=default&pl_mct=200", wait_until="domcontentloaded")
    _settle(page)
    expect(page.get_by_test_id("stSidebar").get_by_label("GPUs", exact=True)).to_be_visible()  # still open
    content = page.get_by_test_id("stMainBlockContainer").evaluate(
        "e => { const s = getComputedStyle(e); return e.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight); }")
    assert content < 600
    for tid in ("stMetricLabel", "stMetricValue", "stMetricDelta"):
        assert not page.get_by_test_id(tid).evaluate_all(_CLIPPED_JS), tid
    page.get_by_role("button", name="Run simulation").click()
    summary = page.get_by_test_id("stDataFrame").filter(has_text="P90")
    expect(summary).to_have_count(1, timeout=TIMEOUT_MS)
    _settle(page)
    assert summary.evaluate(_GRID_OVER_JS) <= 1
    widths = page.get_by_test_id("stVegaLiteChart").evaluate_all("els => els.map(e => e.getBoundingClientRect().width)")
    assert len(widths) == 4 and min(widths) >= content - 2, (content, widths)
    page.screenshot(path=str(ARTIFACTS / "e2e-plan-800.png"))

    page.goto(f"{app_url}/explore?p=default", wait_until="domcontentloaded")
    _wait_page(page, "stDataFrame")
    assert not page.get_by_test_id("stButtonGroup").evaluate_all(_CLIPPED_JS)
    widths = page.get_by_test_id("stVegaLiteChart").evaluate_all("els => els.map(e => e.getBoundingClientRect().width)")
    assert len(widths) == 2 and min(widths) >= content - 2, (content, widths)
    ctx.close()


def test_hostile_link_renders_as_text_and_fetches_nothing(app_url, browser):
    """Review 13i: Plan opened from a link whose custom model, inline system and inline tier carry
    markdown (tests/test_review13i_inject.py's PAY): no image element, no request to the image's
    host, no bold / strike / LaTeX from the names, no right-to-left override in the text."""
    import json
    import sys
    from pathlib import Path
    from urllib.parse import urlencode

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from test_review13i_inject import PAY, _inline, _tier_link

    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    params = {"p": PAY, "m": "custom", "mn": "M" + PAY, "ckj": _tier_link("T" + PAY),
              "sysj": json.dumps(_inline("systems", "dgx-h100", "S" + PAY))}
    page.goto(f"{app_url}/?" + urlencode(params), wait_until="domcontentloaded")
    page.get_by_text("Intervals in use").wait_for(timeout=90_000)
    page.wait_for_timeout(2_000)
    found = page.evaluate("""() => {
        const q = s => Array.from(document.querySelectorAll(s));
        return {img: q('img').map(e => e.getAttribute('src') || '').filter(s => s.includes('127.0.0.1:9')),
                bold: q('strong, b').map(e => e.textContent).filter(t => t.trim() === 'PWN'),
                del: q('del').length, katex: q('.katex').length,
                rtl: (document.body.innerText.match(/\\u202e/g) || []).length,
                warn: q('[data-testid="stAlert"]').map(e => e.innerText).join(' ')};
    }""")
    ctx.close()
    assert "p='**PWN**" in found["warn"], found["warn"][:300]  # the value is shown, as text
    assert found["img"] == [] and found["bold"] == [] and found["del"] == 0 and found["katex"] == 0, found
    assert found["rtl"] == 0
    assert not [r for r in requests if "127.0.0.1:9/" in r], requests
