"""Review h27b, D4 (2026-12): a number box outside its range.

Streamlit's browser-side bounds (``min_value`` / ``max_value``) kept an out-of-range entry red in the
box without sending it: the page and its URL kept the old value, and the range showed only in a hover
icon. The boxes now have no browser-side bounds; the page names the box, the value typed and the range
(``planner.share.box_value_error``, with the ranges of ``planner.share.FIELDS``, the link's), keeps the
other inputs, and shows the results again once the value is back in range.

The expected ranges below are read from the schema / share constants, never pasted from the page.

AppTest note (verified on Streamlit 1.67): ``number_input.set_value`` does not enforce a box's
bounds and does not raise; on the next run the widget's deserializer puts an out-of-range value back
to the box's default (:func:`test_apptest_resets_a_bounded_box_silently`), which is why the old tests
could not see D4 (the browser instead keeps the entry unsent).
"""

from __future__ import annotations

import math

import pytest
from streamlit.testing.v1 import AppTest

from planner import schema, share
from planner.sweep import EXPLORE_TOP_MAX
from test_app import COMPARE, EXPLORE, PLAN, TIMEOUT, _clear_caches, _run  # noqa: F401


def _n(x: float) -> str:
    """A bound as the page writes it: whole numbers grouped (1 to 100,000), others shortest."""
    return f"{int(x):,}" if float(x).is_integer() else share.fmt_number(x)


def _state(at) -> dict:
    """Every sidebar input's value (number boxes, select boxes, checkboxes)."""
    out = {}
    for kind in ("number_input", "selectbox", "checkbox", "multiselect"):
        for w in getattr(at.sidebar, kind):
            if w.key:
                v = w.value
                out[w.key] = "nan" if isinstance(v, float) and math.isnan(v) else v
    return out


def _errors(at) -> str:
    return "\n".join(e.value for e in at.error)


def _check_named_then_fixed(at, key, bad, good, label, rng, *, results=lambda at: len(at.metric) > 0):
    """Set ``key`` to ``bad``: one error naming ``label``, the value and ``rng``, no results, every other
    input kept. Then ``good``: no error, results back."""
    assert results(at), "results before the change"
    before = _state(at)
    at.number_input(key=key).set_value(bad).run()
    assert not at.exception, [e.message for e in at.exception]
    text = _errors(at)
    assert label in text and rng in text, text
    assert not results(at), "results shown for a value out of range"
    after = _state(at)
    assert at.number_input(key=key).value == bad  # the box keeps what was typed
    assert {k: v for k, v in after.items() if k != key} == {k: v for k, v in before.items() if k != key}
    at.number_input(key=key).set_value(good).run()
    assert not at.exception and not at.error, _errors(at)
    assert results(at), "results did not come back"
    return text


@pytest.mark.parametrize("key, bad, good, label, rng", [
    # an int parallel degree: share.WIDGET_DEGREE_MAX is the link's (and the box's) ceiling
    ("w_tp", 0, 8, "Parallelism → TP = 0", f"a whole number 1 to {_n(share.WIDGET_DEGREE_MAX)}"),
    ("w_tp", share.WIDGET_DEGREE_MAX + 1, 8, "Parallelism → TP", f"1 to {_n(share.WIDGET_DEGREE_MAX)} (parallelism.tp)"),
    # GPUs: the schema's count ceiling
    ("w_n", 0, 1024, "Hardware → GPUs = 0", f"a whole number 1 to {_n(schema.COUNT_MAX)} (cluster.n_gpus)"),
    # an optional float override in its own unit (GB/s): the schema's LINK_BW_RANGE / 1e9
    ("w_nic", 0.05, 50.0, "Hardware → NIC bandwidth override = 0.05 GB/s per GPU",
     f"allowed {_n(schema.LINK_BW_RANGE[0] / 1e9)} to {_n(schema.LINK_BW_RANGE[1] / 1e9)} GB/s per GPU"),
    # a negative GiB override
    ("w_hbmu", -3.0, 70.0, "Hardware → Usable HBM override = -3 GiB",
     f"allowed {_n(schema.HBM_BYTES_RANGE[0] / 2**30)} to"),
    # a per-tier checkpoint interval, in minutes (share.CK_INTERVAL_MIN_S is in seconds)
    ("w_ck_pfs", 0.001, 30.0, "Checkpoints → pfs: interval = 0.001 minutes",
     f"allowed {_n(share.CK_INTERVAL_MIN_S / 60)} to {_n(share.CK_INTERVAL_MAX_S / 60)} minutes"),
    ("w_ckr_host_memory", -1, 1, "Checkpoints → host_memory: peer copies = -1",
     f"a whole number 0 to {_n(share.CK_REPLICAS_MAX)}"),
    # failure-rate scale: the schema's Reliability.rate_scale bounds
    ("w_rs", 150.0, 1.0, "Reliability → Failure-rate scale = 150",
     "allowed {} to {}".format(*(_n(m.ge if hasattr(m, "ge") else m.le) for m in
                                 schema.Reliability.model_fields["rate_scale"].metadata))),
    ("w_pue", 0.5, 1.2, "Hardware → PUE = 0.5", "allowed 1 to 3 (cluster.pue)"),
    ("w_seq", 0, 8192, "Training → Sequence length (tokens) = 0", "a whole number 1 to 4,194,304"),
])
def test_plan_names_an_out_of_range_box_and_recovers(key, bad, good, label, rng):
    at = _run(PLAN, {"p": "default"})
    _check_named_then_fixed(at, key, bad, good, label, rng)


def test_the_link_holds_what_the_box_holds_as_for_any_invalid_state():
    """As for a split that does not divide the GPUs (n=1000 is in the URL, with the schema's error), the
    URL holds the box's value; opened, the link refuses it with the same range and keeps the rest."""
    at = _run(PLAN, {"p": "default"})
    at.number_input(key="w_nic").set_value(0.05).run()
    assert at.query_params["nic"] == "5e7"
    at.number_input(key="w_nic").set_value(None)
    at.number_input(key="w_n").set_value(1000).run()
    assert at.query_params["n"] == "1000" and "does not divide cluster.n_gpus = 1000" in _errors(at)
    at.number_input(key="w_n").set_value(1024)
    at.number_input(key="w_tp").set_value(0).run()
    assert at.query_params["tp"] == "0"
    sj, warns = share.params_to_scenario(dict(at.query_params))
    assert any(w.startswith("tp='0'") and f"1 to {_n(share.WIDGET_DEGREE_MAX)}" in w for w in warns), warns


def test_the_stepper_below_the_minimum_gives_the_message():
    at = _run(PLAN, {"p": "llama3-8b-h100-64"})  # TP 1
    assert at.number_input(key="w_tp").value == 1
    at.number_input(key="w_tp").decrement().run()  # the "−" button: no browser-side minimum any more
    assert not at.exception
    assert "Parallelism → TP = 0: allowed a whole number 1 to" in _errors(at)
    at.number_input(key="w_tp").increment().run()
    assert not at.error and at.metric


def test_nan_and_inf_never_reach_the_page_as_a_traceback():
    """A float box cannot be given NaN or ±inf in a browser (the box refuses to send them); through the
    session state Streamlit's own deserializer puts the box's default back (None: the catalogue value;
    a required box: 0.0). Whatever arrives, no traceback, and the box and the scenario agree; the check
    itself names such a value (test_box_value_error_words)."""
    at = _run(PLAN, {"p": "default"})
    for key, value, path in (("w_hbmu", float("nan"), ("cluster", "overrides", "hbm_usable_bytes")),
                             ("w_rs", float("inf"), ("reliability", "rate_scale")),
                             ("w_hostmem", -float("inf"), ("cluster", "overrides", "host_memory_bytes"))):
        at.session_state[key] = value
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        box, cur = at.number_input(key=key).value, at.session_state["scenario"]
        for p in path:
            cur = (cur or {}).get(p)
        scale = {"w_hbmu": 2**30, "w_hostmem": 2**30}.get(key, 1.0)
        assert (box is None and cur is None) or cur == pytest.approx(box * scale), (key, box, cur)


def test_custom_moe_capacity_factor_is_checked_not_replaced():
    at = _run(PLAN, {"p": "mixtral-8x7b-h100-64"})
    at.selectbox(key="w_model").set_value("custom").run()
    assert at.number_input(key="w_m_experts").value == 8 and at.metric
    lo, hi = share.FIELDS["mcf"].lo, share.FIELDS["mcf"].hi
    assert (lo, hi) == tuple(next(getattr(m, a) for m in schema.MoESpec.model_fields["capacity_factor"].metadata
                                  if hasattr(m, a)) for a in ("ge", "le"))  # the link's range is the schema's
    text = _check_named_then_fixed(at, "w_m_cf", 0.0, 1.25, "Model → Capacity factor = 0",
                                   f"allowed {_n(lo)} to {_n(hi)} (model.moe.capacity_factor)")
    assert text
    # 0 went into the scenario as typed (it was silently read as 1.0): the link says the same
    at.number_input(key="w_m_cf").set_value(0.0).run()
    assert at.session_state["scenario"]["model"]["moe"]["capacity_factor"] == 0.0
    # negative experts and max nodes reach the check too (they were read as a dense model / no limit)
    at.number_input(key="w_m_cf").set_value(1.0)
    at.number_input(key="w_m_experts").set_value(-2).run()
    assert "Model → Experts = -2: allowed a whole number 0 to" in _errors(at)
    assert at.session_state["scenario"]["model"]["moe"]["n_experts"] == -2
    at.number_input(key="w_m_experts").set_value(8)
    at.number_input(key="w_m_nodes").set_value(-1).run()
    assert "Model → Max nodes per token = -1: allowed a whole number 0 to" in _errors(at)
    at.number_input(key="w_m_nodes").set_value(0)
    at.number_input(key="w_m_hd").set_value(0).run()
    assert "Model → Head dim = 0: allowed a whole number 1 to" in _errors(at)  # was read as "auto"
    at.number_input(key="w_m_hd").set_value(None).run()
    assert not at.error and at.metric


def test_plan_trials_out_of_range_is_named_and_set_to_the_bound():
    """Trials had no browser-side bounds already: the page names the range and sets the nearest bound
    (box and URL agree). Unchanged here; see the report for values beyond 2⁵³ − 1."""
    at = _run(PLAN, {"p": "default"})
    lo, hi = share.PLAN_MC_TRIALS_RANGE
    at.number_input(key="pl_mct").set_value(lo - 95).run()
    assert not at.exception
    cap = " ".join(c.value for c in at.caption)
    assert f"Trials {lo - 95:,} is outside {lo:,} to {hi:,}; set to {lo:,}" in cap, cap
    assert at.number_input(key="pl_mct").value == lo and at.query_params["pl_mct"] == str(lo)
    at.number_input(key="pl_mct").set_value(hi * 10).run()
    assert at.number_input(key="pl_mct").value == hi and at.query_params["pl_mct"] == str(hi)


def test_explore_top_k_out_of_range_is_named_and_recovers():
    at = _run(EXPLORE, {"p": "llama3-8b-h100-64"})
    has = lambda at: any(m.label == "Feasible splits" for m in at.metric)  # noqa: E731
    _check_named_then_fixed(at, "ex_top", 0, 10, "Top K = 0", f"a whole number 1 to {_n(EXPLORE_TOP_MAX)}",
                            results=has)
    _check_named_then_fixed(at, "ex_head", -5, 10, "HBM left free, % = -5", "a whole number 0 to 50",
                            results=has)


def test_explore_names_a_sidebar_box_out_of_range():
    at = _run(EXPLORE, {"p": "llama3-8b-h100-64"})
    at.number_input(key="w_gbs").set_value(0).run()
    assert not at.exception
    assert f"Training → Global batch (sequences) = 0: allowed a whole number 1 to {_n(schema.COUNT_MAX)}" in _errors(at)
    at.number_input(key="w_gbs").set_value(256).run()
    assert not at.error and any(m.label == "Feasible splits" for m in at.metric)


def test_compare_scenarios_box_out_of_range():
    at = _run(COMPARE)
    n_cols = lambda at: len([s for s in at.selectbox if (s.key or "").startswith("c_src")])  # noqa: E731
    assert n_cols(at) == 2
    at.number_input(key="c_n").set_value(5).run()
    assert not at.exception
    assert "Scenarios (2 to 4) = 5: allowed a whole number 2 to 4" in _errors(at)
    at.number_input(key="c_n").set_value(3).run()
    assert not at.error and n_cols(at) == 3


def test_box_value_error_words():
    e = share.box_value_error
    assert e("B", 2.5, 1, 10, whole=True) == "B = 2.5: must be a whole number; allowed a whole number 1 to 10"
    assert "B = 1e30: allowed a whole number 1 to 10" in e("B", 10**30, 1, 10, whole=True)
    assert "not a number" in e("B", "x", 1, 10) and "not a number" in e("B", True, 1, 10)
    assert e("HBM", float("nan"), 1, 10, unit="GiB").startswith("HBM = nan: must be a finite number; allowed 1 to 10")
    assert e("S", float("inf"), 0, 100).startswith("S = inf: must be a finite number")
    assert e("S", -float("inf"), 0, 100).startswith("S = -inf: must be a finite number")
    assert e("B", None, 1, 10, empty="auto") is None and "B: empty" in e("B", None, 1, 10)
    # a bound in the box's unit is rounded inward: the number shown is itself accepted (here and by a link)
    hi_gib = share.FIELDS["hbmu"].hi / 2**30
    text = share.field_box_error("hbmu", hi_gib * 2, "HBM")
    shown = float(text.split(" to ")[1].split(" GiB")[0].replace(",", ""))
    assert shown <= hi_gib and share.field_box_error("hbmu", shown, "HBM") is None
    assert share._parse_value(share.FIELDS["hbmu"], repr(shown * 2**30))[1] is None


def test_apptest_resets_a_bounded_box_silently():
    """What AppTest does with a bounded box (why D4 went unseen): no error, the default back."""
    def script():
        import streamlit as st
        st.number_input("x", min_value=1, max_value=5, value=3, key="x")

    at = AppTest.from_function(script, default_timeout=TIMEOUT).run()
    at.number_input(key="x").set_value(9).run()
    assert not at.exception and at.number_input(key="x").value == 3
