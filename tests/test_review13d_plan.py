"""Regression tests from a review of the Plan and Validate pages by a user who quotes their numbers
in a budget request: every headline and chart equals the engine's value after the unit the page
states, rounding never hides a real difference, and a link's warning goes once the user replaces the
value it is about.

Expected values come from unit arithmetic (GiB = 2³⁰ B, 1 day = 86,400 s, % = × 100) applied to
the engine's results, and from the premises each test states; never from the page's own formatting
functions."""

from __future__ import annotations

import json
import re

import pandas as pd
import planner
import pytest
from streamlit import dataframe_util

from planner import batch as pbatch
from planner import charts
from test_app import PLAN, VALIDATE, _clear_caches, _run  # noqa: F401

GIB = 2**30


def _charts(at) -> list[tuple[dict, dict[str, pd.DataFrame]]]:
    out = []
    for c in at.get("vega_lite_chart"):
        data = {d.name: dataframe_util.convert_arrow_bytes_to_pandas_df(d.data.data) for d in c.proto.datasets}
        out.append((json.loads(c.proto.spec), data))
    return out


def _layer_data(spec: dict, data: dict, i: int) -> pd.DataFrame:
    return data[spec["layer"][i]["data"]["name"]]


def _number(text: str) -> float:
    return float(re.search(r"[-+]?[\d,]*\.?\d+(?:e[-+]?\d+)?", text).group(0).replace(",", ""))


# Rounding must not hide a real difference -----------------------------------------------------

def test_peak_just_above_usable_hbm_never_reads_equal_to_it():
    """Usable HBM set 0.02 GiB below the default plan's peak: the page said "Fits in HBM: no,
    0.0 GiB over" beside "40.5 GiB of 40.5 GiB usable"."""
    sj = planner.load_preset("default").to_json_dict()
    peak = planner.evaluate(sj).results["mem_total_bytes"]
    usable = peak - 0.02 * GIB
    at = _run(PLAN, {"p": "default", "hbmu": repr(usable)})
    m = {x.label: x for x in at.metric}
    assert m["Fits in HBM"].value == "no"
    over = m["Fits in HBM"].proto.delta
    assert over.endswith("GiB over") and _number(over) == pytest.approx(0.02, rel=0.05), over
    shown_peak = _number(m["Peak memory per GPU"].value)
    shown_usable = _number(m["Peak memory per GPU"].proto.delta)
    assert shown_peak > shown_usable  # the numbers say what "no" says
    assert shown_peak == pytest.approx(peak / GIB, abs=0.006) and shown_usable == pytest.approx(usable / GIB, abs=0.006)


def test_peak_just_below_usable_hbm_reads_below_it():
    sj = planner.load_preset("default").to_json_dict()
    peak = planner.evaluate(sj).results["mem_total_bytes"]
    at = _run(PLAN, {"p": "default", "hbmu": repr(peak + 0.02 * GIB)})
    m = {x.label: x for x in at.metric}
    assert m["Fits in HBM"].value == "yes"
    assert _number(m["Peak memory per GPU"].value) < _number(m["Peak memory per GPU"].proto.delta)


def test_exactly_line_of_a_tiny_run_keeps_its_digits():
    """A 1-million-token run of the default plan: the days, cost and energy help said "Exactly:
    0.0 days" and "Exactly: $0", fewer digits than the headline above it."""
    at = _run(PLAN, {"p": "default", "tok": "1e6"})
    res = planner.evaluate(at.session_state["scenario"]).results
    assert res["time_to_train_days"] < 0.01 and res["cost_usd"] < 10  # the premise: a tiny run
    m = {x.label: x.proto.help for x in at.metric}
    for label, key in (("Days to train", "time_to_train_days"), ("Cost to train", "cost_usd"),
                       ("Energy", "energy_mwh")):
        line = m[label].split("Exactly: ", 1)[1]
        assert "e-" not in line
        assert _number(line.replace("$", "")) == pytest.approx(res[key], rel=1e-3), (label, line)


# The goodput curve and its markers -----------------------------------------------------------

def test_interval_below_ten_seconds_is_on_the_goodput_chart():
    """Llama 3.1 405B on 131,072 H100: the engine saves host memory every 7.4 s (one step). The
    chart started at 10 s: no ○ for that tier, and its ◆ at the 10 s edge below the engine's own
    optimum."""
    at = _run(PLAN, {"p": "llama3-405b-h100-16k", "n": "131072", "gbs": "16384"})
    res = planner.evaluate(at.session_state["scenario"]).results
    iv = res["ckpt_host_memory_interval_opt_s"]
    assert iv < 10.0  # the premise
    text = " ".join(m.value for m in at.markdown if m.value.startswith("Intervals in use"))
    assert "no ○" not in text
    spec, data = next((s, d) for s, d in _charts(at) if "Goodput vs checkpoint interval" in json.dumps(s.get("title")))
    line, best, cur = (_layer_data(spec, data, i) for i in range(3))
    assert set(cur["tier"]) == {"host memory", "parallel file system"}  # charts.TIER_LABELS
    for _, c in cur.iterrows():
        assert c["goodput_pct"] == pytest.approx(100 * res["goodput"], rel=1e-12)
        on_line = line[(line["tier"] == c["tier"]) & (line["interval_s"] == c["interval_s"])]
        assert len(on_line) == 1 and on_line["goodput_pct"].iloc[0] == pytest.approx(c["goodput_pct"], rel=1e-9)
        b = best[best["tier"] == c["tier"]]["goodput_pct"].iloc[0]
        assert b >= c["goodput_pct"] * (1 - 1e-12)
    # minutes on the axis: 7.4 s is 0.123 min
    assert line["interval_min"].min() == pytest.approx(iv / 60.0, rel=1e-9)


def test_no_failures_does_not_say_another_tier_covers_them():
    """Failure-rate scale 0: every tier read "not saved (another tier covers every failure class)",
    which no tier does."""
    at = _run(PLAN, {"p": "default", "rs": "0"})
    text = " ".join(m.value for m in at.markdown if m.value.startswith("Intervals in use"))
    assert "another tier covers" not in text
    assert text.count("no failures to recover from") == 2
    assert any("No failures (failure rate 0)" in c.value for c in at.caption)


# Stale link warnings -------------------------------------------------------------------------

def test_trials_link_warning_goes_once_the_box_is_changed():
    at = _run(PLAN, {"pl_mct": "5"})
    assert any("pl_mct='5'" in w.value for w in at.warning)
    at.number_input(key="pl_mct").set_value(3000).run()
    assert not any("pl_mct" in w.value for w in at.warning)
    assert at.query_params["pl_mct"] == "3000"


def test_validate_link_warning_goes_once_the_metric_is_picked():
    at = _run(VALIDATE, {"v_metric": "bogus", "v_group": "nope"})
    assert any("v_metric='bogus'" in w.value for w in at.warning)
    other = next(m for m in at.segmented_control(key="v_metric").options if m != at.session_state["v_metric"])
    at.segmented_control(key="v_metric").set_value(other).run()
    text = " ".join(w.value for w in at.warning)
    assert "v_metric" not in text and "v_group 'nope'" in text  # the group's warning is still true
    groups = list(at.session_state["v_groups"])
    at.pills(key="v_groups").set_value(groups[:1]).run()
    assert not at.warning


# Wording ----------------------------------------------------------------------------------------

def test_one_gpu_is_not_plural():
    at = _run(PLAN, {"p": "mpt-7b-a100-8", "n": "1"})
    assert at.session_state["scenario"]["cluster"]["n_gpus"] == 1  # the premise
    assert any(" on 1 GPU (" in c.value for c in at.caption)


def test_validation_scatter_tooltip_gives_the_error_in_percent():
    rows = pd.DataFrame({"run_id": ["a"], "group": ["g"], "published": [100.0], "predicted": [102.0],
                         "rel_err": [0.02]})
    spec = charts.validation_scatter(rows, "published", "predicted", color="group",
                                     tooltip=("run_id", "rel_err")).to_dict()
    tips = {t["field"]: t for t in spec["layer"][1]["encoding"]["tooltip"]}
    assert tips["rel_err"].get("format") == ".1%"


# Every number on the page is the engine's, in the stated unit ------------------------------------

CASES = {
    "default": {"p": "default"},
    "moe": {"p": "mixtral-8x7b-h100-64"},
    "fp8": {"p": "default", "prec": "fp8"},
    "uneven pp": {"p": "default", "n": "960", "pp": "3", "vpp": "1", "sch": "1f1b", "ls": "uneven", "gbs": "480"},
    "no tier": {"p": "default", "ck": "none"},
}


@pytest.mark.parametrize("case", list(CASES))
def test_headlines_and_charts_equal_the_engine(case):
    at = _run(PLAN, CASES[case])
    rep = planner.evaluate(at.session_state["scenario"])
    res = rep.results
    m = {x.label: x.value for x in at.metric}
    assert m["Fits in HBM"] == ("yes" if res["fits"] else "no")
    assert _number(m["Peak memory per GPU"]) == pytest.approx(res["mem_total_bytes"] / GIB, abs=0.05)
    assert _number(m["MFU"]) == pytest.approx(100 * res["mfu"], abs=0.05)
    if res["goodput"] > 0:
        assert _number(m["Goodput"]) == pytest.approx(100 * res["goodput"], abs=0.05)
        assert _number(m["Days to train"]) == pytest.approx(res["time_to_train_days"], abs=0.05)
    else:
        assert m["Days to train"] == "—" and m["Cost to train"] == "—"
    specs = _charts(at)
    # memory per stage: one stacked bar per stage, summing to that stage's total; the usable line
    mem_spec, mem_data = specs[0]
    bars = _layer_data(mem_spec, mem_data, 0)
    assert bars["stage_index"].nunique() == len(rep.stages)
    for stg in rep.stages:
        got = bars[bars["stage_index"] == int(stg["stage"])]["gib"].sum()
        assert got == pytest.approx(stg["mem_total_bytes"] / GIB, rel=1e-9)
    rule = _layer_data(mem_spec, mem_data, 1)
    scen = planner.Scenario.model_validate(at.session_state["scenario"])
    usable = float(pbatch.scenario_row(scen)["hbm_usable_bytes"])
    assert rule.set_index("line").loc["usable HBM", "gib"] == pytest.approx(usable / GIB, rel=1e-12)
    assert usable == pytest.approx(res["mem_total_bytes"] + res["mem_headroom_bytes"], rel=1e-9)
    # step time: the parts add up to the engine's step time
    step_spec, step_data = specs[1]
    parts = next(iter(step_data.values()))
    assert parts["seconds"].sum() == pytest.approx(res["step_time_s"], rel=1e-9)


def test_no_fit_message_never_reads_equal_numbers():
    """Found by review: the red "Does not fit" box read "needs 40.5 GiB ... only 40.5 GiB ... (0.0
    GiB too much)" for a peak 0.02 GiB above the usable HBM, the case the headline already shows
    with the decimals that tell them apart. 40.49 and 40.47 GiB differ in the second decimal."""
    from app_pages import _common as C

    gib = 2**30
    peak, usable = 40.49 * gib, 40.47 * gib
    txt = C.no_fit_text({"fits": False, "mem_total_bytes": peak, "mem_worst_stage": 0}, usable, 4)
    assert "needs 40.49 GiB per GPU but only 40.47 GiB" in txt
    assert "(0.02 GiB too much" in txt
    # far apart: one decimal, as before
    txt = C.no_fit_text({"fits": False, "mem_total_bytes": 90.0 * gib, "mem_worst_stage": 0}, 74.5 * gib, 4)
    assert "needs 90.0 GiB per GPU but only 74.5 GiB" in txt and "(15.5 GiB too much" in txt
