"""Review h28d (2026-12-03) of the unbounded number boxes: a decimal box must show a value just
outside its range as something other than the bound (F1), and the link / CLI message gives the box's
bounds as the box's own message does, rounded inward so the bound shown is allowed (F2)."""
from __future__ import annotations

import math

import pytest

from planner import share
from test_app import PLAN, _run  # noqa: F401


def _outside(lo: float, hi: float) -> list[tuple[float, float]]:
    """(value just outside, bound) pairs: 5 % below the lower bound, 5 % above the upper."""
    out = [(hi * 1.05, hi)]
    if lo > 0:
        out.append((lo * 0.95, lo))
    return out


def test_every_decimal_sidebar_box_shows_a_value_just_outside_its_range_as_typed():
    # Before: price "%.2f" showed 0.0095 as "0.01", host memory "%.1f" 0.095 as "0.1", power "%.0f"
    # 0.475 W ... as the allowed bound, beside a message naming the typed value (review h28d F1).
    from app_pages import _common as C
    at = _run(PLAN, {"p": "default"})
    rng = {key: (share.FIELDS[link].lo / share.box_scale(link)[0], share.FIELDS[link].hi / share.box_scale(link)[0])
           for key, link, _, _ in C._MODEL_BOXES + C._MOE_BOXES + C._SCENARIO_BOXES + C._CKPT_REL_BOXES}
    rng.update({f"w_ck_{t}": (share.CK_INTERVAL_MIN_S / 60.0, share.CK_INTERVAL_MAX_S / 60.0)
                for t in at.session_state["w_tiers"]})
    boxes = [b for b in at.sidebar.number_input if b.key in rng and b.proto.data_type == b.proto.FLOAT]
    keys = {b.key for b in boxes}
    assert {"w_price", "w_nic", "w_hostmem", "w_pwr", "w_pue", "w_util", "w_cif", "w_rs", "w_ck_pfs"} <= keys, keys
    for b in boxes:
        fmt = b.proto.format or "%0.2f"  # Streamlit's default for a decimal box
        lo, hi = rng[b.key]
        for v, bound in _outside(lo, hi):
            if math.isfinite(v):
                assert fmt % v != fmt % bound, (b.key, fmt, v, bound)


@pytest.mark.parametrize("key", ["hbmu", "hostmem", "nic"])
def test_link_message_gives_the_boxs_bounds_rounded_inward(key):
    f = share.FIELDS[key]
    scale, unit = share.box_scale(key)
    _, warns = share.params_to_scenario({"p": "default", key: "1e30"})
    w = next(w for w in warns if w.startswith(f"{key}="))
    m = __import__("re").search(r"the Plan page's box: ([\d.,e+-]+) to ([\d.,e+-]+) ", w)
    assert m, w
    shown_lo, shown_hi = (float(x.replace(",", "")) for x in m.groups())
    # each bound shown, typed into the box, is allowed: lo ≤ shown_lo·scale and shown_hi·scale ≤ hi
    assert shown_lo * scale >= f.lo * (1 - 1e-12) and shown_hi * scale <= f.hi * (1 + 1e-12), (w, f.lo, f.hi)
    # and it is the bound to the box's precision (one decimal), not a coarser one
    assert f.hi / scale - shown_hi < 0.1 + 1e-9 or shown_hi >= 1e12, w


def test_usable_hbm_upper_bound_by_hand():
    # 1e14 B / 2^30 B per GiB = 93,132.257 GiB: one decimal rounded down is 93,132.2 (nearest: .3, refused)
    assert 1e14 / 2**30 == pytest.approx(93132.2575, abs=1e-4)
    _, warns = share.params_to_scenario({"p": "default", "hbmu": "2e14"})
    assert any("0.1 to 93,132.2 GiB" in w for w in warns), warns


def test_compare_url_holds_an_out_of_range_scenario_count_and_reopening_it_warns():
    # review h28d F4: st.stop() ran before the URL was written, so it kept c_n=2 and a reload quietly
    # showed two scenarios; now it holds 5, and the link reader refuses 5 (allowed 2 to 4) with a warning
    from streamlit.testing.v1 import AppTest

    from test_app import COMPARE, TIMEOUT
    at = _run(COMPARE)
    at.number_input(key="c_n").set_value(5).run()
    assert not at.exception
    assert at.query_params.get("c_n") in ("5", ["5"]), at.query_params
    at2 = AppTest.from_file(COMPARE, default_timeout=TIMEOUT)
    at2.query_params.update({k: v for k, v in at.query_params.items()})
    at2.run()
    assert not at2.exception
    warned = " ".join(w.value for w in at2.warning)
    assert "c_n" in warned and "2" in warned and "4" in warned, warned


def test_a_typed_decimal_is_grouped_as_the_bounds_are():
    # review h28d: "Price … = 1000001: allowed 0.01 to 1,000,000" (the value ungrouped beside the bound)
    e = share.box_value_error
    assert e("Price", 1000001.0, 0.01, 1e6) == "Price = 1,000,001: allowed 0.01 to 1,000,000"
    assert e("Price", 0.005, 0.01, 1e6) == "Price = 0.005: allowed 0.01 to 1,000,000"
    assert e("T", 20000.0, 1e9, 1e16, unit="trillion tokens", scale=1e12).startswith("T = 20,000 trillion tokens:")


def test_no_fit_shortfall_is_the_difference_of_the_figures_shown():
    """Review h29a F8: Llama 3.1 405B at 8,192 GPUs needed 91.46 GiB of 79.64 GiB usable; the page
    showed "91.5 … 79.6 … (11.8 GiB too much)", each rounded on its own. By hand: 91.5 − 79.6 = 11.9."""
    from app_pages import _common as C

    peak, usable = 91.46 * C.GIB, 79.64 * C.GIB
    assert C.gib_over_text(peak, usable, 1) == "11.9 GiB"
    msg = C.no_fit_text({"fits": False, "mem_total_bytes": peak, "mem_headroom_bytes": usable - peak})
    assert "needs 91.5 GiB per GPU but only 79.6 GiB of HBM is usable (11.9 GiB too much" in msg
    # two decimals where one would not tell them apart: 40.52 vs 40.50 → 0.02
    assert C.gib_over_text(40.52 * C.GIB, 40.50 * C.GIB, 2) == "0.02 GiB"
