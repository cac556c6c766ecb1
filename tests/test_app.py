"""AppTest (streamlit.testing.v1) for every page: default load, widgets -> the right metrics,
the query-param round trip, bad links, bad widget input, chart specs."""

from __future__ import annotations

import re
import json
from pathlib import Path

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
PLAN = str(ROOT / "app_pages" / "plan.py")
EXPLORE = str(ROOT / "app_pages" / "explore.py")
COMPARE = str(ROOT / "app_pages" / "compare.py")
VALIDATE = str(ROOT / "app_pages" / "validate.py")
TIMEOUT = 120


@pytest.fixture(autouse=True)
def _clear_caches():
    st.cache_data.clear()
    yield


def _run(path, params=None):
    at = AppTest.from_file(path, default_timeout=TIMEOUT)
    if params:
        at.query_params.update(params)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def charts_by_key(at) -> list[dict]:
    out = []
    for c in at.get("vega_lite_chart"):
        spec = json.loads(c.proto.spec)
        out.append(spec)
    return out


# Plan ----------------------------------------------------------------------------------------

def test_plan_default_loads_with_headline_metrics_and_url():
    at = _run(PLAN)
    m = metrics(at)
    for label in ("Fits in HBM", "Peak memory per GPU", "Step time", "MFU", "Throughput", "MTBF (job)",
                  "Goodput", "Days to train", "Cost to train"):
        assert label in m and m[label] not in ("", None)
    assert m["Peak memory per GPU"].endswith("GiB")
    qp = at.query_params
    assert qp["m"] == "llama3-70b" and qp["sys"] == "dgx-h100" and qp["n"] == "1024" and qp["tp"] == "8"
    assert not at.error and not at.warning
    # how far to trust it: the published runs like this one (planner.validation.accuracy_note)
    assert any(c.value.startswith("Accuracy on published runs like this one (hopper, dense;") for c in at.caption)


def test_plan_app_frame_runs_the_plan_page():
    at = _run(APP)
    assert "Step time" in metrics(at)


def test_changing_recompute_changes_memory_and_time_not_mtbf():
    at = _run(PLAN)
    before = metrics(at)
    at.selectbox(key="w_rc").set_value("full").run()
    after = metrics(at)
    assert after["Peak memory per GPU"] != before["Peak memory per GPU"]
    assert after["Step time"] != before["Step time"]
    assert after["MTBF (job)"] == before["MTBF (job)"]
    assert at.query_params["rc"] == "full"
    at.selectbox(key="w_rc").set_value("op_sac").run()  # TorchTitan per-op SAC: between the two
    op = metrics(at)
    assert not at.error and at.query_params["rc"] == "op_sac"
    assert op["Peak memory per GPU"] not in (before["Peak memory per GPU"], after["Peak memory per GPU"])


def test_changing_gpus_changes_mtbf_and_days():
    at = _run(PLAN)
    before = metrics(at)
    at.number_input(key="w_n").set_value(2048).run()
    after = metrics(at)
    assert after["MTBF (job)"] != before["MTBF (job)"]
    assert after["Days to train"] != before["Days to train"]
    assert at.query_params["n"] == "2048"


def test_price_override_changes_cost_only():
    at = _run(PLAN)
    before = metrics(at)
    at.number_input(key="w_price").set_value(1.0).run()
    after = metrics(at)
    assert after["Cost to train"] != before["Cost to train"]
    assert after["Days to train"] == before["Days to train"]
    assert at.query_params["price"] == "1"


def test_query_param_round_trip_in_a_fresh_session():
    at = _run(PLAN)
    at.number_input(key="w_n").set_value(2048)
    at.selectbox(key="w_rc").set_value("full")
    at.number_input(key="w_nic").set_value(25.0)
    at.run()
    shown = metrics(at)
    link = dict(at.query_params)
    at2 = _run(PLAN, link)
    assert metrics(at2) == shown
    assert dict(at2.query_params) == link
    assert at2.number_input(key="w_n").value == 2048


def test_custom_model_via_widgets_and_link():
    at = _run(PLAN)
    at.selectbox(key="w_model").set_value("custom").run()
    assert at.number_input(key="w_m_layers").value == 80  # seeded from Llama 3 70B
    base = metrics(at)
    at.number_input(key="w_m_layers").set_value(40).run()
    assert metrics(at)["Peak memory per GPU"] != base["Peak memory per GPU"]
    link = dict(at.query_params)
    assert link["m"] == "custom" and link["ml"] == "40" and link["mh"] == "8192"
    at2 = _run(PLAN, link)
    assert metrics(at2) == metrics(at)


def test_bad_link_warns_naming_the_value_and_keeps_the_rest():
    at = _run(PLAN, {"m": "gpt-9", "tp": "0", "n": "2048", "bogus": "1"})
    text = " ".join(w.value for w in at.warning)
    assert "gpt-9" in text and "tp='0'" in text and "allowed 1 to" in text and "bogus" in text
    assert at.number_input(key="w_n").value == 2048  # kept
    assert at.selectbox(key="w_model").value == "llama3-70b"
    assert at.query_params["n"] == "2048" and "Step time" in metrics(at)


def test_link_to_a_system_without_the_precision_warns_and_still_plans():
    """sys=dgx1-v100 on the default bf16: the warning names the precision and the V100, the
    base system is kept, and the page still plans (review finding: the refused link left a
    widget empty and the page showed 'utilisation_power_frac ... got None')."""
    at = _run(PLAN, {"sys": "dgx1-v100"})
    text = " ".join(w.value for w in at.warning)
    assert "sys: refused" in text and "'bf16' is not supported by NVIDIA Tesla V100" in text
    assert not at.error and "Step time" in metrics(at)
    at = _run(PLAN, {"sys": "dgx1-v100", "prec": "fp16", "n": "512"})
    assert not at.warning and at.selectbox(key="w_sys").value == "dgx1-v100"
    # Llama 3 70B's default split does not fit a 32 GB V100: the only error is that one
    assert planner.evaluate(at.session_state["scenario"]).results["fits"] is False
    assert [e.value.startswith("**Does not fit in GPU memory:**") for e in at.error] == [True]


def test_invalid_scenario_still_seeds_every_widget():
    """A scenario that fails validation still fills every sidebar widget with a value (the
    schema defaults for fields it leaves out), so the only error shown is the real one."""
    from app_pages import _common

    sj = {"model": "llama3-8b", "training": {"precision": "bf16"}, "cluster": {"system": "dgx1-v100", "n_gpus": 8}}
    vals = _common.widget_values(sj)
    assert vals["w_util"] == 0.8 and vals["w_pue"] == 1.2 and vals["w_sys"] == "dgx1-v100"


def test_bad_widget_input_shows_error_naming_the_field_and_keeps_inputs():
    at = _run(PLAN)
    at.number_input(key="w_tp").set_value(3).run()
    assert at.error, "expected st.error"
    msg = at.error[0].value
    assert "parallelism" in msg and "tp" in msg
    assert at.number_input(key="w_n").value == 1024 and at.number_input(key="w_tp").value == 3
    assert at.query_params["tp"] == "3"  # the state is still in the URL


def test_plan_chart_specs_have_fields_and_units():
    at = _run(PLAN)
    specs = charts_by_key(at)
    titles = [s.get("title", {}) for s in specs]
    texts = json.dumps(titles)
    assert "Memory per GPU" in texts and "Step-time" in texts and "Goodput" in texts
    mem = next(s for s in specs if "Memory per GPU" in json.dumps(s.get("title")))
    bars = mem["layer"][0]
    assert bars["encoding"]["y"]["aggregate"] == "sum" and "GiB" in bars["encoding"]["y"]["title"]
    assert mem["layer"][1]["mark"]["type"] == "rule"
    gp = next(s for s in specs if "Goodput" in json.dumps(s.get("title")))
    assert "minutes" in gp["layer"][0]["encoding"]["x"]["title"]


def test_formula_view_lists_engine_explain_strings():
    at = _run(PLAN)
    md = " ".join(m.value for m in at.markdown)
    assert "mem_total_bytes" in md or "step_time_s" in md


def test_monte_carlo_button_runs_with_progress():
    at = _run(PLAN, {"pl_mct": "200"})
    assert not any("time to train (days)" in json.dumps(s) and "bin" in json.dumps(s) for s in charts_by_key(at))
    at.button(key="pl_mc_run").click().run()
    assert not at.exception
    assert any("Monte Carlo" in json.dumps(s.get("title")) for s in charts_by_key(at))


def test_preset_selectbox_loads_the_preset():
    at = _run(PLAN)
    at.selectbox(key="w_preset").set_value("llama3-8b-h100-64").run()
    assert at.selectbox(key="w_model").value == "llama3-8b" and at.number_input(key="w_n").value == 64
    assert at.query_params["p"] == "llama3-8b-h100-64"


# Explore -------------------------------------------------------------------------------------

def _explore_from_8b_preset():
    """The Explore page opened after a Plan run on the Llama 3 8B preset."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"p": "llama3-8b-h100-64"})
    at.run()
    at.switch_page("app_pages/explore.py").run()
    assert not at.exception
    return at


def test_explore_loads_table_and_opens_a_row_in_plan():
    at = _explore_from_8b_preset()
    assert at.dataframe and len(at.dataframe[0].value) > 0
    assert at.query_params["ex_obj"] == "time_to_train" and at.query_params["n"] == "64"
    table = at.dataframe[0].value
    specs = charts_by_key(at)
    assert any("Throughput vs memory" in json.dumps(s.get("title")) for s in specs)
    assert any("Pareto" in json.dumps(s.get("title")) for s in specs)
    at.selectbox(key="ex_pick").set_value(1)
    at.button(key="ex_open").click().run()
    assert not at.exception
    assert "Step time" in metrics(at)  # now on Plan
    assert at.number_input(key="w_tp").value == int(table["TP"][1])
    assert at.number_input(key="w_pp").value == int(table["PP"][1])
    assert at.query_params["tp"] == str(int(table["TP"][1]))


def test_explore_bad_link_value_warns():
    at = _run(EXPLORE, {"p": "llama3-8b-h100-64", "ex_top": "many"})
    assert any("ex_top" in w.value for w in at.warning)


def test_explore_every_bad_page_key_warns_naming_key_value_and_allowed():
    at = _run(EXPLORE, {"p": "llama3-8b-h100-64", "ex_top": "-3", "ex_obj": "zzz", "ex_space": "huge",
                        "ex_color": "red", "tp": "abc"})
    text = [w.value for w in at.warning]
    want = {"ex_top='-3'": "1 to 500", "ex_obj='zzz'": "time_to_train, cost", "ex_space='huge'": "focused, full",
            "ex_color='red'": "tp, pp", "tp='abc'": "whole number"}
    for key, allowed in want.items():
        assert any(key in w and allowed in w for w in text), (key, text)
    # the defaults are used, and the URL says so
    assert at.query_params["ex_top"] == "20" and at.query_params["ex_obj"] == "time_to_train"
    assert at.query_params["ex_space"] == "focused"
    # the warnings stay on later runs of the same session
    at.run()
    assert len([w for w in at.warning if "ex_" in w.value]) == 4


def test_explore_table_headers_are_short_with_units_in_the_help():
    at = _run(EXPLORE, {"p": "llama3-8b-h100-64"})
    df = at.dataframe[0]
    cols = list(df.value.columns)
    assert cols[:3] == ["TP", "PP", "DP"] and max(len(c) for c in cols) <= 10, cols
    cfg = json.loads(df.proto.columns)
    helps = {c: cfg.get(c, {}).get("help", "") for c in cols}
    assert "GiB (2³⁰ B)" in helps["GiB"] and "%" in helps["MFU %"] and "USD" in helps["M USD"]
    assert all(helps[c] for c in cols), helps


def test_plan_empty_ck_link_warns_and_keeps_the_base_tiers():
    at = _run(PLAN, {"p": "default", "ck": ""})
    text = " ".join(w.value for w in at.warning)
    assert "ck=''" in text and "'none'" in text
    assert at.multiselect(key="w_tiers").value  # the preset's tiers, not "no checkpointing"
    assert at.query_params["ck"] != "none"


def test_plan_bad_monte_carlo_link_values_warn():
    at = _run(PLAN, {"pl_mct": "5", "pl_mcs": "x"})
    text = " ".join(w.value for w in at.warning)
    assert "pl_mct='5'" in text and "100 to 100,000" in text and "pl_mcs='x'" in text
    assert at.query_params["pl_mct"] == "2000" and at.number_input(key="pl_mct").value == 2000


def test_monte_carlo_trials_box_and_url_stay_consistent():
    """An emptied box gets its last value back; an out-of-range one the nearest bound; the URL
    follows the box every time (the browser no longer holds an unsent value, see plan.py)."""
    at = _run(PLAN, {"pl_mct": "2000"})
    box = at.number_input(key="pl_mct")
    box.set_value(None).run()
    assert at.number_input(key="pl_mct").value == 2000 and at.query_params["pl_mct"] == "2000"
    at.number_input(key="pl_mct").set_value(50).run()
    assert at.number_input(key="pl_mct").value == 100 and at.query_params["pl_mct"] == "100"
    assert any("outside 100 to 100,000" in c.value for c in at.caption)
    at.number_input(key="pl_mct").set_value(3000).run()
    assert at.number_input(key="pl_mct").value == 3000 and at.query_params["pl_mct"] == "3000"
    at.number_input(key="pl_mct").set_value(None).run()
    assert at.number_input(key="pl_mct").value == 3000 and at.query_params["pl_mct"] == "3000"
    at.number_input(key="pl_mcs").set_value(-4).run()
    assert at.number_input(key="pl_mcs").value == 0 and at.query_params["pl_mcs"] == "0"


def test_every_headline_metric_has_help_with_its_unit():
    at = _run(PLAN)
    units = {"Peak memory per GPU": "GiB", "Step time": " s", "MFU": "%", "Throughput": "Tokens per second",
             "MTBF (job)": "h by size", "Goodput": "%", "Days to train": "86,400 s", "Cost to train": "USD",
             "Energy": "MWh"}
    helps = {m.label: m.proto.help for m in at.metric}
    for label, unit in units.items():
        assert helps.get(label) and unit in helps[label], (label, helps.get(label))


def test_checkpoint_intervals_are_shown_in_words_and_by_magnitude():
    # The default scenario: the engine leaves host memory unsaved (its 1e8 s "never" interval) and
    # saves to the PFS every minute or two (both come from the engine; only the display is checked).
    import planner
    from planner.presets import preset_json

    res = planner.evaluate(preset_json("default")).results
    at = _run(PLAN)
    text = " ".join(m.value for m in at.markdown if m.value.startswith("Intervals in use"))
    assert "Intervals in use" in text and "27,778 h" not in text
    from planner.charts import TIER_LABELS  # the legend's names (review 15n)

    for kind in ("host_memory", "pfs"):
        iv = res[f"ckpt_{kind}_interval_opt_s"]
        if iv >= 1e8 * 0.999:
            assert f"**{TIER_LABELS[kind]}**: not saved (another tier covers every failure class)" in text
        else:
            assert f"**{TIER_LABELS[kind]}**: every " in text and " 0 h" not in text


def test_duration_formatting_picks_the_unit_by_magnitude():
    from app_pages import _common as C

    assert C.fmt_duration(0.004) == "4 ms"
    assert C.fmt_duration(7.89) == "7.89 s"
    assert C.fmt_duration(93.1) == "93.1 s"
    assert C.fmt_duration(600) == "10.0 min"
    assert C.fmt_duration(5 * 3600) == "5.0 h"
    assert C.fmt_duration(float("inf")) == "—" and C.fmt_duration(float("nan")) == "—"
    assert C.fmt_interval(1e8) == "not saved (another tier covers every failure class)"
    assert C.fmt_interval(30.0) == "every 30.0 s"
    assert C.fmt({"mtbf_h": 0.1}, "mtbf_h", "h") == "6.0 min"  # not "0.1 h"
    assert C.fmt({"mtbf_h": 0.0309}, "mtbf_h", "h") == "111.2 s"  # 0.0309 h = 111.2 s
    assert C.fmt_col({"ckpt_pfs_interval_opt_s": 1e8}, "ckpt_pfs_interval_opt_s").startswith("not saved")
    # found by a fresh-user review: 0.023 % showed as "0.0 %", GPU-hours as "5.635e+04"
    assert C.fmt_col({"ckpt_overhead_frac": 0.00023}, "ckpt_overhead_frac") == "0.023 %"
    assert C.fmt_col({"ckpt_overhead_frac": 0.0}, "ckpt_overhead_frac") == "0.0 %"
    assert C.fmt_col({"goodput": 0.9512}, "goodput") == "95.1 %"
    assert C.fmt_col({"gpu_hours": 56_350.4}, "gpu_hours") == "56,350 GPU-h"
    assert C.fmt_col({"gpu_hours": 0.4}, "gpu_hours") == "0.4 GPU-h"
    assert C.fmt_col({"ckpt_overhead_frac": 1e-7}, "ckpt_overhead_frac") == "< 0.001 %"


#: A run that never finishes: 16k GPUs, 100 × the failure rate, no checkpoints (the engine gives
#: goodput 0 and infinite days).
NEVER = {"p": "llama3-405b-h100-16k", "rs": "100", "ck": "none"}


def test_run_that_never_finishes_warns_and_shows_dashes_with_reasons():
    import math

    import planner

    at = _run(PLAN, NEVER)
    sj = at.session_state["scenario"]
    res = planner.evaluate(sj).results
    assert res["goodput"] == 0 or not math.isfinite(res["time_to_train_days"])  # the premise
    warn = " ".join(w.value for w in at.warning)
    # the engine's own reason, not a claim of the page's (review 2026-11-30)
    assert "no finite time to train" in warn and C.engine_zero_goodput_note(planner.evaluate(sj).notes) in warn
    assert "not available from the engine yet" not in " ".join(i.value for i in at.info)
    m = {x.label: x for x in at.metric}
    for label in ("Days to train", "Cost to train", "Energy"):
        assert m[label].value == "—"
        assert "Shown as —" in m[label].proto.help and "inf" in m[label].proto.help
    for v in (x.value for x in at.metric):
        assert "inf" not in v.lower() and "nan" not in v.lower()


def test_non_finite_headline_is_a_dash_with_an_explanation(monkeypatch):
    """A headline the engine reports as NaN is never shown raw."""
    import planner

    real = planner.evaluate

    def fake(sj):
        rep = real(sj)
        rep.results["mfu"] = float("nan")
        return rep

    monkeypatch.setattr(planner, "evaluate", fake)
    at = _run(PLAN)
    m = {x.label: x for x in at.metric}
    assert m["MFU"].value == "—" and "reports nan" in m["MFU"].proto.help
    assert any(c.value.startswith("— : MFU") for c in at.caption)


def test_goodput_missing_column_says_not_available(monkeypatch):
    import planner

    real = planner.evaluate

    def fake(sj):
        rep = real(sj)
        rep.results.pop("goodput", None)
        return rep

    monkeypatch.setattr(planner, "evaluate", fake)
    at = _run(PLAN)
    assert any("Goodput is not available from the engine yet" in i.value for i in at.info)
    assert {x.label: x.value for x in at.metric}["Goodput"] == "—"


# Compare -------------------------------------------------------------------------------------


def test_compare_headers_differ_when_only_the_split_differs():
    at = _run(COMPARE, {"c_n": "2", "c_src1": "default", "c_src2": "link", "2.p": "default", "2.tp": "4",
                        "2.pp": "8", "2.rc": "full", "2.price": "1"})
    t = at.dataframe[0].value
    cols = list(t.columns)
    assert len(set(cols)) == 2 and cols[0].startswith("1: ") and cols[1].startswith("2: ")
    assert t.loc["split TP·PP·CP·DP", cols[0]] == "8·4·1·32" and t.loc["recompute", cols[0]] == "selective"
    assert t.loc["split TP·PP·CP·DP", cols[1]] == "4·8·1·32" and t.loc["recompute", cols[1]] == "full"
    # another differing field, by its link key
    # (review 16 new-user: "(default)", the catalogue price here, not "(base)")
    assert t.loc["other differences", cols[1]] == "price=1" and t.loc["other differences", cols[0]] == "price=(default)"


def test_compare_never_finishing_slot_warns():
    params = {"c_n": "2", "c_src1": "default", "c_src2": "link"}
    params.update({f"2.{k}": v for k, v in NEVER.items()})
    at = _run(COMPARE, params)
    assert any("Scenario 2" in w.value and "no finite time to train" in w.value for w in at.warning)
    assert "(see the warning above)" in " ".join(c.value for c in at.caption)
    assert "—" in list(at.dataframe[0].value.iloc[:, 1])


def test_compare_two_presets_side_by_side_and_round_trip():
    at = _run(COMPARE, {"c_n": "2", "c_src1": "default", "c_src2": "llama3-8b-h100-64"})
    table = at.dataframe[0].value
    assert table.shape[1] == 2 and "step time" in table.index
    link = dict(at.query_params)
    assert link["c_src2"] == "llama3-8b-h100-64" and link["2.m"] == "llama3-8b"
    at2 = _run(COMPARE, link)
    assert at2.dataframe[0].value.equals(table)
    # the reloaded link keeps both slots as presets (review: they turned into link slots)
    assert at2.query_params["c_src1"] == "default" and at2.query_params["c_src2"] == "llama3-8b-h100-64"
    spec = charts_by_key(at)[0]
    assert spec["facet"]["field"] == "metric"


def test_compare_preset_slot_with_its_own_keys_applies_them():
    """c_src2=default with 2.sys=... compares the preset changed by the key (review finding: the
    slot's keys were ignored without a word); a preset slot's own keys keep it a preset."""
    at = _run(COMPARE, {"c_n": "2", "c_src1": "default", "c_src2": "default", "2.sys": "dgx-h200"})
    cols = list(at.dataframe[0].value.columns)
    assert "dgx-h100" in cols[0] and "dgx-h200" in cols[1]
    assert at.query_params["c_src2"] == "link" and at.query_params["2.p"] == "default"


def test_compare_slot_from_a_share_link_with_a_bad_value():
    at = _run(COMPARE, {"c_n": "2", "c_src1": "default", "c_src2": "link", "2.m": "llama3-8b", "2.n": "64",
                        "2.tp": "abc", "2.p": "llama3-8b-h100-64"})
    assert any("tp='abc'" in w.value for w in at.warning)
    table = at.dataframe[0].value
    assert any("llama3-8b · 64" in c for c in table.columns)


# Validate ------------------------------------------------------------------------------------

def test_validate_page_scatter_and_error_table():
    at = _run(VALIDATE)
    assert at.dataframe and "group" in at.dataframe[0].value.columns
    spec = charts_by_key(at)[0]
    diag = spec["layer"][0]
    assert diag["encoding"]["x"]["field"] == diag["encoding"]["y"]["field"]  # y = x
    assert "published" in spec["layer"][1]["encoding"]["x"]["title"]
    assert at.query_params["v_metric"]
    # the band the Plan page shows, per accelerator family and kind (validation.accuracy_table)
    from planner import validation
    acc = [d.value for d in at.dataframe if "family" in d.value.columns]
    assert len(acc) == 1
    pd.testing.assert_frame_equal(acc[0].reset_index(drop=True), validation.accuracy_table(), check_dtype=False)


def test_validate_every_group_is_a_visible_pill_and_links_round_trip():
    at = _run(VALIDATE)
    pills = at.pills(key="v_groups")
    assert "NeMo FP8" in pills.options and set(pills.value) == set(pills.options)
    pills.set_value(["NeMo FP8"]).run()
    assert at.query_params["v_group"] in ("NeMo FP8", ["NeMo FP8"])
    at2 = _run(VALIDATE, {"v_group": ["NeMo FP8", "zzz"]})
    assert at2.pills(key="v_groups").value == ["NeMo FP8"]
    assert any("'zzz'" in w.value and "NeMo FP8" in w.value for w in at2.warning)


OUT_OF_SAMPLE = ROOT / "validation" / "out_of_sample.csv"


def _csv_groups(path) -> set[str]:
    """Source groups of a run file, read from the CSV itself (labels as planner.validation.GROUPS)."""
    import csv

    from planner.validation import GROUPS

    with open(path, newline="") as f:
        return {GROUPS.get(r["source_key"], r["source_key"]) for r in csv.DictReader(f)}


def test_validate_switch_to_out_of_sample_shows_its_groups_and_summary():
    oos = _csv_groups(OUT_OF_SAMPLE)
    assert {"MBRIDGE_GB200", "MOSAIC_MPT_H100"} <= oos
    cal = _csv_groups(ROOT.parent / "shared" / "validation" / "calibration.csv")
    at = _run(VALIDATE)
    assert at.segmented_control(key="v_set").value == "calibration"
    before = at.segmented_control(key="v_metric").value
    at.segmented_control(key="v_set").set_value("out_of_sample").run()
    assert not at.exception, [e.message for e in at.exception]
    pills = at.pills(key="v_groups")
    assert {"MBRIDGE_GB200", "MOSAIC_MPT_H100"} <= set(pills.options) <= oos
    assert set(pills.value) == set(pills.options)  # all groups of the new set
    assert not set(pills.options) & (cal - oos)
    # the new set's most published metric: tokens/s per GPU, filled in most rows of the CSV
    import csv

    with open(OUT_OF_SAMPLE, newline="") as f:
        rows = list(csv.DictReader(f))
    assert sum(bool(r["tokens_per_s_per_gpu"].strip()) for r in rows) > len(rows) / 2
    assert before == "tokens_per_s_per_gpu"  # the calibration page opens on its most published metric (MosaicML's 61 rows)
    assert at.segmented_control(key="v_metric").value == "tokens_per_s_per_gpu"
    summary = at.dataframe[0].value
    assert "overall" in set(summary["group"]) and set(summary["group"]) - {"overall"} <= oos
    assert charts_by_key(at)  # the scatter of the new set
    assert at.query_params["v_set"] == "out_of_sample"
    assert any("out_of_sample.csv" in c.value and "never" in c.value for c in at.caption)
    # runs whose memory as read exceeds HBM are counted (the calibration runs all fit)
    from planner.validation import validate
    n_over = int((~validate(OUT_OF_SAMPLE)[0].query("status == 'ok'")["fits"].astype(bool)).sum())
    assert n_over and any(c.value.startswith(f"{n_over} of ") and "do not fit in memory as read" in c.value
                          for c in at.caption)
    # A metric only the out-of-sample runs publish (MFU) falls back to a calibration metric.
    at.segmented_control(key="v_metric").set_value("mfu").run()
    assert at.query_params["v_metric"] == "mfu"
    at.segmented_control(key="v_set").set_value("calibration").run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.segmented_control(key="v_metric").value not in (None, "mfu")
    assert set(at.pills(key="v_groups").value) == set(at.pills(key="v_groups").options) <= cal
    assert at.query_params["v_set"] == "calibration" and at.query_params["v_metric"] != "mfu"
    assert not any("do not fit in memory" in c.value for c in at.caption)


def test_validate_out_of_sample_link_restores_set_and_group():
    assert "MBRIDGE_GB200" in _csv_groups(OUT_OF_SAMPLE)
    at = _run(VALIDATE, {"v_set": "out_of_sample", "v_group": "MBRIDGE_GB200"})
    assert not at.warning
    assert at.segmented_control(key="v_set").value == "out_of_sample"
    assert at.pills(key="v_groups").value == ["MBRIDGE_GB200"]
    # the group's runs all publish tokens/s per GPU (the CSV): the link opens on it, chart drawn
    assert at.segmented_control(key="v_metric").value == "tokens_per_s_per_gpu"
    assert charts_by_key(at) and not any("No run" in i.value for i in at.info)
    qp = at.query_params
    assert qp["v_set"] == "out_of_sample" and qp["v_group"] in ("MBRIDGE_GB200", ["MBRIDGE_GB200"])
    at2 = _run(VALIDATE, dict(qp))  # the link written back opens the same state
    assert at2.segmented_control(key="v_set").value == "out_of_sample"
    assert at2.segmented_control(key="v_metric").value == at.segmented_control(key="v_metric").value
    assert at2.pills(key="v_groups").value == ["MBRIDGE_GB200"]


def test_validate_link_warnings_go_when_the_set_changes():
    """Review finding: a bad link's warnings stayed after switching sets, naming a group the new
    set has as unknown."""
    at = _run(VALIDATE, {"v_set": "bogus", "v_group": "MBRIDGE_GB200"})
    assert any("v_set" in w.value for w in at.warning) and any("MBRIDGE_GB200" in w.value for w in at.warning)
    at.segmented_control(key="v_set").set_value("out_of_sample").run()
    assert not at.exception and not at.warning
    assert "MBRIDGE_GB200" in at.pills(key="v_groups").value


def test_validate_bad_set_in_link_warns_and_shows_calibration():
    at = _run(VALIDATE, {"v_set": "bogus"})
    assert any("v_set" in w.value and "'bogus'" in w.value and "calibration" in w.value
               and "out_of_sample" in w.value for w in at.warning)
    assert at.segmented_control(key="v_set").value == "calibration"
    assert at.query_params["v_set"] == "calibration"
    cal = _csv_groups(ROOT.parent / "shared" / "validation" / "calibration.csv")
    assert set(at.pills(key="v_groups").options) <= cal
    assert "MBRIDGE_GB200" not in at.pills(key="v_groups").options


# Every sidebar input round-trips through the link --------------------------------------------

#: A non-default value for every scenario input of the Plan sidebar (a small custom MoE model
#: so that the split below is valid). Set in stages: preset, then model, then the rest, then
#: the per-tier widgets that appear once the tiers are chosen.
_STAGE_PRESET = {"w_preset": "llama3-8b-h100-64"}
_STAGE_MODEL = {"w_model": "custom"}
_STAGE_REST = {
    "w_m_name": "rt-moe", "w_m_layers": 24, "w_m_hidden": 2048, "w_m_heads": 16, "w_m_kv": 4,
    "w_m_ffn": 5632, "w_m_vocab": 50000, "w_m_hd": 160, "w_m_pos": 2048, "w_m_norm": "layernorm",
    "w_m_do": 0.1, "w_m_mtp": 1, "w_m_gated": False, "w_m_tied": True, "w_m_bias": True, "w_m_rope": False,
    "w_m_experts": 8, "w_m_topk": 4, "w_m_eff": 1408, "w_m_shared": 1, "w_m_fd": 1, "w_m_cf": 1.25, "w_m_nodes": 2,
    "w_sys": "dgx-h200", "w_n": 256, "w_acc": "h100-sxm-80gb", "w_price": 1.5, "w_nic": 40.0,
    "w_hbmu": 70.0, "w_hostmem": 1500.0, "w_pwr": 600.0, "w_pue": 1.3, "w_util": 0.7,
    "w_tp": 2, "w_pp": 2, "w_cp": 2, "w_ep": 2, "w_etp": 2, "w_vpp": 1, "w_z": 2, "w_dps": 32, "w_rcl": 4, "w_rc": "full", "w_sch": "zero_bubble",
    "w_off": "cpu", "w_offw": True, "w_offg": True, "w_offa": True, "w_ls": "uneven",
    "w_sp": False, "w_fa": False, "w_ak": "flash2", "w_tpo": True, "w_dpo": False, "w_epo": True, "w_ep8": True, "w_epn": True,
    "w_seq": 4096, "w_gbs": 256, "w_mbs": 2, "w_prec": "fp8", "w_f8s": "rowwise", "w_f8a": True, "w_gd": "bf16", "w_ce": "eager", "w_ew": "eager", "w_tok": 2.5,
    "w_tiers": ["local_nvme", "object_store"], "w_async": False, "w_cif": 0.05,
    "w_fp": "rsc-a100", "w_rs": 2.0, "w_hs": 4,
}
_STAGE_TIERS = {"w_ck_local_nvme": 30.0, "w_ckr_local_nvme": 1, "w_ck_object_store": 240.0}
# the object store is a shared tier: its "peer copies" input is disabled (no replicas, schema)
_NOT_INPUTS = {"dl_json", "dl_csv", "dl_meg", "dl_tt", "dl_ds", "w_upload", "w_hf"}  # file uploaders and downloads: not scenario inputs


def _sidebar_values(at) -> dict:
    out: dict = {}

    def walk(node):
        for c in getattr(node, "children", {}).values():
            key = getattr(c, "key", None)
            if key and key not in _NOT_INPUTS and hasattr(c, "set_value"):
                out[key] = c.value
            walk(c)

    walk(at.sidebar)
    return out


def _set_widgets(at, values: dict) -> None:
    by_key = {}

    def walk(node):
        for c in getattr(node, "children", {}).values():
            if getattr(c, "key", None):
                by_key[c.key] = c
            walk(c)

    walk(at.sidebar)
    for k, v in values.items():
        by_key[k].set_value(v)
    at.run()
    assert not at.exception, [e.message for e in at.exception]


def test_every_sidebar_input_round_trips_through_the_link():
    from planner.schema import Scenario

    base_at = _run(PLAN)
    default_model = base_at.selectbox(key="w_model").value
    _set_widgets(base_at, _STAGE_MODEL)
    base = _sidebar_values(base_at)  # the app's defaults (default preset, custom model form open)
    base["w_model"] = default_model

    at = _run(PLAN)
    for stage in (_STAGE_PRESET, _STAGE_MODEL, _STAGE_REST, _STAGE_TIERS):
        _set_widgets(at, stage)
    assert not at.error, [e.value for e in at.error]
    shown = _sidebar_values(at)
    # Every input widget of the sidebar was given a non-default value ...
    missing = object()
    same = {k: v for k, v in shown.items() if base.get(k, missing) == v}
    assert same == {}, f"sidebar widgets left at their default: {same}"
    assert at.number_input(key="w_ckr_object_store").disabled  # a shared tier takes no replicas
    assert set(base) - {"w_ck_host_memory", "w_ckr_host_memory", "w_ck_pfs", "w_ckr_pfs"} <= set(shown)
    # ... and a fresh session opened with the link shows the same scenario and the same widgets.
    link = dict(at.query_params)
    at2 = _run(PLAN, link)
    assert not at2.warning, [w.value for w in at2.warning]
    sj1 = Scenario.model_validate(at.session_state["scenario"]).to_json_dict()
    sj2 = Scenario.model_validate(at2.session_state["scenario"]).to_json_dict()
    assert sj2 == sj1
    assert _sidebar_values(at2) == shown
    assert metrics(at2) == metrics(at)
    # Spot checks on the compact keys (SI units in the link).
    assert link["m"] == "custom" and link["md"] == "160" and link["mnorm"] == "layernorm" and link["mdo"] == "0.1"
    assert link["hostmem"] == fmt_si(1500.0 * 2**30) and link["nic"] == "4e10"
    assert link["ck"] == "local_nvme:1800:1,object_store:14400:0"
    assert link["fp"] == "rsc-a100" and link["rs"] == "2" and link["hs"] == "4"
    assert link["epn"] == "1" and link["f8a"] == "1"
    assert link["tpo"] == "1" and link["epo"] == "1" and link["ce"] == "eager" and link["ew"] == "eager" and link["f8s"] == "rowwise" and link["dps"] == "32" and link["rcl"] == "4"


def fmt_si(x: float) -> str:
    from planner.share import fmt_number

    return fmt_number(x)


def test_inline_objects_from_a_link_stay_in_the_sidebar_and_the_link():
    """A link with an inline system / profile / tier (e.g. from imported JSON) keeps them."""
    import json as _json

    from planner import catalog

    system = catalog.systems()["dgx-h100"].model_dump(mode="json", by_alias=True, exclude_none=True)
    system["name"] = "my-h100-cluster"
    prof = catalog.failure_profiles()["llama3-h100"].model_dump(mode="json", by_alias=True, exclude_none=True)
    prof["name"] = "my-fleet"
    tier = catalog.storage_tiers()["pfs"].model_dump(mode="json", by_alias=True, exclude_none=True)
    tier["name"] = "slow-pfs"
    params = {"sysj": _json.dumps(system), "fpj": _json.dumps(prof),
              "ckj": _json.dumps([{"tier": "host_memory", "interval_s": 600}, {"tier": tier}])}
    at = _run(PLAN, params)
    assert not at.warning, [w.value for w in at.warning]
    assert at.selectbox(key="w_sys").value == "(inline)" and at.selectbox(key="w_fp").value == "(inline)"
    assert at.multiselect(key="w_tiers").value == ["host_memory", "inline:slow-pfs"]
    link = dict(at.query_params)
    assert {"sysj", "fpj", "ckj"} <= set(link)
    at.number_input(key="w_ck_inline:slow-pfs").set_value(60.0).run()  # interval of the inline tier
    tiers = at.session_state["scenario"]["checkpoint"]["tiers"]
    assert tiers[1]["tier"]["name"] == "slow-pfs" and tiers[1]["interval_s"] == 3600.0
    at.selectbox(key="w_sys").set_value("dgx-h200").run()  # back to a catalogue system
    assert at.query_params["sys"] == "dgx-h200" and "sysj" not in at.query_params


def _select_table_row(at, key: str, row: int):
    """Select one row of a keyed ``st.dataframe(on_select=...)`` the way the browser does.

    AppTest has no public interaction for dataframe selections (``set_value`` raises
    AppTestError, and writing ``at.session_state[key]`` changes the selection without firing
    ``on_select``). The frontend sends the selection as a JSON widget state under the
    element's id; we send the same message through AppTest's run with widget states.
    """
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    table = next(d for d in at.dataframe if d.key == key)
    states = at._tree.get_widget_states()
    states.widgets.append(WidgetState(
        id=table.proto.id,
        string_value=json.dumps({"selection": {"rows": [row], "columns": [], "cells": []}})))
    at._run(states)
    return at


def test_explore_selecting_a_table_row_opens_it_on_plan():
    at = _explore_from_8b_preset()
    table = at.dataframe[0].value
    assert at.dataframe[0].key == "ex_table" and len(table) > 3
    row = 2
    _select_table_row(at, "ex_table", row)
    assert not at.exception, [e.message for e in at.exception]
    assert "Step time" in metrics(at) and at.title[0].value == "Plan a training run"
    assert at.number_input(key="w_tp").value == int(table["TP"][row])
    assert at.number_input(key="w_pp").value == int(table["PP"][row])
    assert at.number_input(key="w_cp").value == int(table["CP"][row])
    assert at.number_input(key="w_mbs").value == int(table["mb"][row])
    assert at.query_params["tp"] == str(int(table["TP"][row]))


def test_formula_view_has_every_headline_formula_notes_and_units():
    import planner
    from planner.presets import preset_json

    rep = planner.evaluate(preset_json("default"))
    at = _run(PLAN)
    exp = next(e for e in at.expander if e.label.startswith("Formulas"))
    md = [m.value for m in exp.markdown]
    text = "\n".join(md)
    assert "GiB = 2³⁰ B" in text and "GB = 10⁹ B" in text
    for label in metrics(at):  # every headline number on the page has its formula
        block = next((m for m in md if m.startswith(f"**{label}** = ")), None)
        assert block is not None, label
        assert "no formula string" not in block, label
    assert rep.explain["step_time_s"] in text and rep.explain["cost_usd"] in text
    assert "Stated simplifications" in text
    for note in rep.notes:
        assert note in text
    # Intermediate columns carry their unit too (bytes shown in GiB, seconds in s or ms).
    weights = next(m for m in md if m.startswith("`mem_weights_bytes`"))
    assert "GiB" in weights.split("\n")[0]


@pytest.mark.parametrize("page", [PLAN, EXPLORE])
def test_a_link_whose_key_is_refused_and_unset_in_the_preset_renders(page):
    # found by a fresh-user review: ?offw=1 (offload without an offload tier) put None back into a
    # field the preset leaves out, and the checkbox raised a TypeError
    at = _run(page, {"offw": "1"})
    assert not at.exception, [e.value for e in at.exception]
    assert any("offw: refused" in w.value for w in at.warning)


def test_monte_carlo_that_never_finishes_says_why():
    # found by a fresh-user review: ?ck=none then Run simulation drew an empty histogram and a
    # table of NaNs with no word on why
    # (since session 41 the no-tier default run has a finite-run figure, about 10^N days, and is refused up
    # front: the page says why instead of simulating it to the cap)
    at = _run(PLAN, {"ck": "none", "pl_mct": "200"})
    assert not at.exception
    assert at.button(key="pl_mc_run").disabled
    texts = " ".join(w.value for w in at.warning) + " ".join(e.value for e in at.error) + " ".join(
        i.value for i in at.info)
    assert "the run does not finish in practice" in texts and "restarting it" in texts


def test_mtbf_without_failures_says_it_is_infinite():
    # found by a fresh-user review: rate_scale 0 showed MTBF "—" as "not a number it can state"
    at = _run(PLAN, {"rs": "0"})
    assert not at.exception
    helps = [m.help or "" for m in at.metric if m.label.lower().startswith("mtbf")]
    assert helps and "mean time between failures is infinite" in helps[0]


# Review 2026-11-30 -------------------------------------------------------------------------------

import planner  # noqa: E402
from app_pages import _common as C  # noqa: E402


@pytest.mark.parametrize(("params", "key"), [({"tok": "1e5"}, "tok"), ({"mbs": "200000"}, "mbs"),
                                             ({"hs": "200000"}, "hs"), ({"ck": "pfs:1e9:0"}, "ck")])
def test_a_link_value_outside_the_sidebar_box_is_refused_not_clamped(params, key):
    """tok=1e5 was clamped by the Tokens box to 1e6 (0.0 days, $1) without a word; mbs=200000 to
    1. Such values are refused with the usual link warning and the base value kept."""
    at = _run(PLAN, params)
    assert any(w.value.startswith("Link:") and key in w.value for w in at.warning), [w.value for w in at.warning]
    base = planner.evaluate(planner.load_preset("default")).results
    assert metrics(at)["Step time"] == C.fmt(base, "step_time_s", "s")


def test_a_model_name_from_a_link_is_shown_as_plain_text():
    at = _run(PLAN, {"m": "custom", "mn": "a\n\n# HEADER $x$ :red[RED]"})
    cap = next(c.value for c in at.caption if "GPUs" in c.value)
    assert "\\# HEADER \\$x\\$ \\:red\\[RED\\]" in cap and "\n" not in cap.split(" on ")[0]


@pytest.mark.parametrize("steps", [
    [("selectbox", "w_model", "custom"), ("number_input", "w_m_layers", 16)],
    [("number_input", "w_n", 96)]])
def test_explore_sweeps_although_the_sidebar_split_does_not_suit_the_model(steps):
    """Default preset's PP 4 × VPP 5 = 20 virtual stages with a 16-layer custom model (an uneven
    split cannot hold it either; a layer count 20 does not divide now switches the sidebar to the
    uneven split, session 40), or its split on 96 GPUs (DP 3 does not divide the global batch of
    512): the sweep replaces the split."""
    at = _run(EXPLORE)
    for kind, key, value in steps:
        getattr(at, kind)(key=key).set_value(value).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("does not suit" in i.value for i in at.info)
    assert at.dataframe and len(at.dataframe[0].value) > 0


def test_validate_with_no_group_selected_draws_nothing():
    at = _run(VALIDATE, {"v_group": "none"})
    assert not at.get("vega_lite_chart") or not any(
        c.proto.spec and "validation" in c.proto.spec for c in at.get("vega_lite_chart"))
    assert any("No source group selected" in i.value for i in at.info)


def test_small_amounts_keep_two_significant_digits():
    assert C.fmt({"x": 0.0123}, "x", "days") == "17.7 min"  # 0.0123 × 1,440 min, below a day as a duration
    assert C.fmt({"x": 0.43}, "x", "usd") == "$0.43"
    assert C.fmt({"x": 0.0031}, "x", "mwh") == "3.1 kWh"  # below 1 MWh in kWh (review 2026-11-30)
    assert C.fmt({"x": 1234.0}, "x", "usd") == "$1,234" and C.fmt({"x": 0.0}, "x", "mwh") == "0 MWh"


@pytest.mark.parametrize("params", [{"tok": "8.2e12"}, {"tok": "5.4e11"}, {"ck": "pfs:1.9:0"},
                                    {"ck": "host_memory:auto:0,pfs:123.456:0"}, {"nic": "6.49e10"}])
def test_link_values_shown_in_another_unit_round_trip_exactly(params):
    """8.2 trillion tokens came back as 8199999999999.999 (the box holds trillions; ×1e12 in binary
    floating point), a 1.9 s interval as 1.8999999999999997 (review 2026-11-30)."""
    at = _run(PLAN, params)
    assert {k: at.query_params[k] for k in params} == params and not at.warning


@pytest.mark.parametrize("n", [96, 7])
def test_open_in_plan_after_the_fallback_sweep_is_a_valid_scenario(n):
    """Llama 3 8B (32 layers) on 96 or 7 GPUs: the fallback sweep runs on uneven layer splits
    (PP 3, PP 7), and the row opened on Plan keeps layer_split = uneven (review 2026-11-30: Plan
    showed 'n_layers = 32 is not divisible by pp·vpp = 3')."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("app_pages/explore.py").run()
    at.selectbox(key="w_model").set_value("llama3-8b").run()
    at.number_input(key="w_n").set_value(n).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = at.dataframe[0].value
    at.button(key="ex_open").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "Step time" in metrics(at) and at.number_input(key="w_pp").value == int(table["PP"][0])


# Review 2026-11-30 (dashboard defects) -------------------------------------------------------------


def _stale_pick_and_open(at, label: str):
    """Click "Open in Plan" the way a browser does that still shows an earlier sweep's row in the
    "Or pick a row" box: its widget state is that row's label (a string), not a current option."""
    at.button(key="ex_open").click()
    states = at._tree.get_widget_states()
    pick = at.selectbox(key="ex_pick")
    for w in states.widgets:
        if w.id == pick.id:
            w.string_value = label
    at._run(states)
    return at


def _explore_table_row(at, row: int) -> dict:
    t = at.dataframe[0].value
    return {k: int(t[k][row]) for k in ("TP", "PP", "CP", "mb")}


@pytest.mark.parametrize(("kind", "key", "value"), [("number_input", "w_n", 2048),
                                                    ("selectbox", "w_model", "deepseek-v3")])
def test_explore_open_in_plan_after_the_sweep_changed_opens_row_0_of_the_new_sweep(kind, key, value):
    """Review 2026-11-30: after the sweep changed (GPUs 2048, or another model) the "Or pick a row"
    box kept the old sweep's label in the browser and "Open in Plan" raised ValueError (int() of the
    label). The box now restarts at row 0 of the new sweep, and the browser is told so."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("app_pages/explore.py").run()
    old_label = at.selectbox(key="ex_pick").options[1]
    at.selectbox(key="ex_pick").set_value(1).run()
    getattr(at, kind)(key=key).set_value(value).run()
    assert not at.exception and at.dataframe, [e.message for e in at.exception]
    pick = at.selectbox(key="ex_pick")
    new_row0 = _explore_table_row(at, 0)
    assert pick.value == 0 and pick.proto.set_value  # the browser is sent the new sweep's row 0
    assert pick.options[0].startswith(f"#1: TP {new_row0['TP']} · PP {new_row0['PP']} · CP {new_row0['CP']} · ")
    assert old_label not in pick.options
    _stale_pick_and_open(at, old_label)  # a browser that missed it: still no traceback
    assert not at.exception, [e.message for e in at.exception]
    assert at.title[0].value == "Plan a training run" and not at.error
    assert {k: at.number_input(key=w).value for k, w in (("TP", "w_tp"), ("PP", "w_pp"), ("CP", "w_cp"),
                                                           ("mb", "w_mbs"))} == new_row0


def test_explore_pick_index_maps_labels_and_stale_values():
    from app_pages.explore import pick_index

    labels = ["#1: a", "#2: b", "#3: c"]
    assert pick_index(2, labels) == 2 and pick_index("#2: b", labels) == 1
    assert pick_index("#0: TP 4 · PP 2 · CP 2 · mb 1 · interleaved · 182.2 days", labels) == 0
    assert pick_index(7, labels) == 0 and pick_index(None, labels) == 0 and pick_index(True, labels) == 0


NO_FIT = {"p": "default", "n": "8", "tp": "8", "pp": "1", "vpp": "1", "sch": "1f1b"}


def test_plan_configuration_that_does_not_fit_says_so_with_peak_usable_and_stage():
    from planner import batch as pbatch

    at = _run(PLAN, NO_FIT)
    sj = at.session_state["scenario"]
    rep = planner.evaluate(sj)
    res = rep.results
    usable = float(pbatch.scenario_row(planner.Scenario.model_validate(sj))["hbm_usable_bytes"])
    assert res["fits"] is False and res["mem_total_bytes"] > usable  # the premise
    err = [e.value for e in at.error]
    assert len(err) == 1, err
    msg = err[0]
    assert msg.startswith("**Does not fit in GPU memory:**")
    assert f"{res['mem_total_bytes'] / C.GIB:,.1f} GiB per GPU" in msg and f"{usable / C.GIB:,.1f} GiB" in msg
    assert f"stage {int(res['mem_worst_stage'])} of {len(rep.stages)}" in msg
    assert "assume that it fits" in msg
    m = {x.label: x for x in at.metric}
    assert m["Fits in HBM"].value == "no"
    # the shortfall is the difference of the two figures as shown (review h29a: 91.5 − 79.6 read "11.8")
    shown = float(f"{res['mem_total_bytes'] / C.GIB:.1f}") - float(f"{usable / C.GIB:.1f}")
    assert m["Fits in HBM"].proto.delta == f"{shown:,.1f} GiB over"
    assert f"({shown:,.1f} GiB too much" in msg
    # a run that fits has no such error (the default)
    assert not [e for e in _run(PLAN).error]


def _compare_default_and_link(link_params: dict):
    """Compare with the default preset in slot 1 and a link scenario (``link_params``, link keys)
    in slot 2: (the AppTest, its table, the two column headers)."""
    params = {"c_n": "2", "c_src1": "default", "c_src2": "link"}
    params.update({f"2.{k}": v for k, v in link_params.items()})
    at = _run(COMPARE, params)
    t = at.dataframe[0].value
    c1, c2 = list(t.columns)
    return at, t, c1, c2


def test_compare_slot_that_does_not_fit_is_marked_in_header_table_and_chart():
    from streamlit import dataframe_util

    at, t, c1, c2 = _compare_default_and_link(NO_FIT)
    assert "no fit" not in c1 and c2.startswith("2: ✗ no fit · llama3-70b · 8 × dgx-h100")
    assert t.loc["fits in HBM", c1] == "yes" and t.loc["fits in HBM", c2].startswith("no ✗")
    for row in ("time to train", "cost to train", "step time"):
        assert t.loc[row, c2].endswith(" ✗") and not t.loc[row, c1].endswith("✗"), row
    assert any(e.value.startswith("Scenario 2: **Does not fit in GPU memory:**") for e in at.error)
    assert not any(e.value.startswith("Scenario 1") for e in at.error)
    chart = at.get("vega_lite_chart")[0]
    spec = json.loads(chart.proto.spec)
    assert spec["spec"]["encoding"]["opacity"]["field"] == "memory"
    data = pd.concat([dataframe_util.convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.proto.datasets])
    assert set(data[data["scenario"] == c2]["memory"]) == {"does not fit in HBM"}
    assert set(data[data["scenario"] == c1]["memory"]) == {"fits"}
    cap = " ".join(c.value for c in at.caption)
    assert "✗ marks a scenario that does not fit" in cap and "(see the warning above)" not in cap


def test_compare_caption_names_no_warning_when_there_is_none():
    at = _run(COMPARE, {"c_n": "2", "c_src1": "default", "c_src2": "llama3-8b-h100-64"})
    assert not at.warning
    assert not any("warning above" in c.value for c in at.caption)


def test_no_checkpoint_tier_banner_quotes_the_engine_and_points_to_the_monte_carlo():
    """mpt-7b-a100-8 with ck=none: the analytic goodput is 0 (a failure restarts from the beginning)
    while the Monte Carlo finishes every trial; the banner no longer says that the run never
    finishes, and the Monte Carlo caption promises no analytic line that is not drawn."""
    at = _run(PLAN, {"p": "mpt-7b-a100-8", "ck": "none", "pl_mct": "200"})
    rep = planner.evaluate(at.session_state["scenario"])
    reason = C.engine_zero_goodput_note(rep.notes)
    assert rep.results["goodput"] == 0 and "restarts training from the beginning" in reason  # the premise
    warn = " ".join(w.value for w in at.warning)
    assert reason in warn and "no finite time to train" in warn and "Monte Carlo" in warn
    assert "never finishes" not in warn and "failures arrive faster" not in warn
    at.button(key="pl_mc_run").click().run()
    assert not at.exception
    sim = planner.simulate(at.session_state["scenario"], n_trials=200, seed=0)
    assert sim["finished"].all()  # the premise: every simulated run finishes
    # since session 41 the analytic model has a figure for a run of this length (each failure restarting
    # it): drawn as the analytic line, and the caption says the headline has no finite time
    hist = json.loads(next(c for c in at.get("vega_lite_chart") if "Monte Carlo" in c.proto.spec).proto.spec)
    assert len(hist.get("layer", [hist])) == 2
    caps = " ".join(c.value for c in at.caption)
    assert "red dashed line: the analytic expectation for a run of this length" in caps
    assert "the steady-state goodput is 0, so the headline has no finite time" in caps
    assert "the headline, —" not in caps


def test_monte_carlo_caption_names_the_analytic_line_when_it_is_drawn():
    at = _run(PLAN, {"pl_mct": "200"})
    at.button(key="pl_mc_run").click().run()
    res = planner.evaluate(at.session_state["scenario"]).results
    hist = json.loads(next(c for c in at.get("vega_lite_chart") if "Monte Carlo" in c.proto.spec).proto.spec)
    assert len(hist["layer"]) == 2
    assert any(f"red dashed line: the analytic expectation ({C.fmt(res, 'time_to_train_days', 'days')})" in c.value
               for c in at.caption)


def test_monte_carlo_summary_has_readable_names_and_goodput_in_percent():
    from planner.simulate import summarize

    at = _run(PLAN, {"pl_mct": "200", "pl_mcs": "3"})
    at.button(key="pl_mc_run").click().run()
    table = next(d.value for d in at.dataframe if list(d.value.columns)[:1] == ["mean"])
    assert list(table.columns) == ["mean", "P10", "P50", "P90"]
    assert "goodput, %" in table.index and "days to train" in table.index
    assert not any("_" in str(i) for i in table.index)
    want = summarize(planner.simulate(at.session_state["scenario"], n_trials=200, seed=3)).set_index("metric")
    assert table.loc["goodput, %", "mean"] == f"{100 * want.loc['goodput', 'mean']:,.1f}"
    assert table.loc["days to train", "P90"] == f"{want.loc['time_to_train_days', 'p90']:,.1f}"


def test_monte_carlo_boxes_keep_their_values_through_an_invalid_scenario():
    """Review 2026-11-30: Trials 5000 and Seed 7, then TP 3 (error: the section is not drawn), then
    TP 8: both boxes came back empty while the URL kept the values, and the next change showed
    "Seed: empty; kept 7". The page re-seeds them, and tells the browser."""
    at = _run(PLAN)
    at.number_input(key="pl_mct").set_value(5000).run()
    at.number_input(key="pl_mcs").set_value(7).run()
    at.number_input(key="w_tp").set_value(3).run()
    # the invalid scenario stops the page above the boxes
    assert at.error and not [b for b in at.number_input if b.key in ("pl_mct", "pl_mcs")]
    assert at.query_params["pl_mct"] == "5000" and at.query_params["pl_mcs"] == "7"
    at.number_input(key="w_tp").set_value(8).run()
    assert not at.error
    for key, want in (("pl_mct", 5000), ("pl_mcs", 7)):
        box = at.number_input(key=key)
        # the value, and the instruction to show it (a re-mounted box shows its default otherwise)
        assert box.value == want and box.proto.set_value and box.proto.value == want, key
    assert at.query_params["pl_mct"] == "5000" and at.query_params["pl_mcs"] == "7"
    at.number_input(key="w_pp").set_value(8).run()
    assert not any("empty" in c.value for c in at.caption)
    assert at.number_input(key="pl_mct").value == 5000 and at.number_input(key="pl_mcs").value == 7


@pytest.mark.parametrize(("params", "kind", "key"), [
    (NO_FIT, "days", "time_to_train_days"), ({"p": "default", "tok": "1e16"}, "days", "time_to_train_days"),
    ({"p": "default", "tok": "1e16"}, "usd", "cost_usd"), ({"p": "default", "tok": "1e16"}, "mwh", "energy_mwh"),
    ({"p": "default", "tok": "1e6"}, "days", "time_to_train_days"), ({"p": "default", "tok": "1e6"}, "mwh", "energy_mwh"),
])
def test_headline_values_are_compact_with_their_unit(params, kind, key):
    """Review 2026-11-30: "23,330.4 d…", "1.4e-05 days", "0.00042 M…", "$734,137.31 M": large and
    small values change unit (years, $ B, TWh; s, Wh) and keep it; the help has the exact value."""
    at = _run(PLAN, params)
    x = planner.evaluate(at.session_state["scenario"]).results[key]
    label = {"time_to_train_days": "Days to train", "cost_usd": "Cost to train", "energy_mwh": "Energy"}[key]
    m = next(mm for mm in at.metric if mm.label == label)
    assert len(m.value) <= 11 and "e+" not in m.value and "e-" not in m.value, m.value
    if kind == "days" and x >= 1000:
        y = x / 365.25
        assert m.value == (f"{y:,.1f} years" if y < 100 else f"{y:,.0f} years" if y < 1e4 else f"{y / 1e3:,.0f}k years")
        assert f"Exactly: {x:,.1f} days." in m.proto.help
    elif kind == "days":
        assert x < 0.01 and m.value == C.fmt_duration(x * 86400)
    elif kind == "usd":
        assert x >= 1e9 and m.value == f"${x / 1e9:,.1f} B"
    elif x >= 1e6:
        assert m.value == f"{x / 1e6:,.1f} TWh"
    else:
        assert x < 1e-3 and m.value == f"{x * 1e6:,.0f} Wh"


def test_compact_formats_by_magnitude():
    assert C.fmt_days(36.44) == "36.4 days" and C.fmt_days(999.94) == "999.9 days"
    assert C.fmt_days(1000.0) == f"{1000 / 365.25:,.1f} years"
    assert C.fmt_days(4e6) == f"{4e6 / 365.25 / 1e3:,.0f}k years" and C.fmt_days(4e9).endswith(" M years")
    assert C.fmt_days(0.005) == "7.2 min" and C.fmt_days(0.0123) == "17.7 min" and C.fmt_days(0.5) == "12.0 h"
    assert C.fmt_usd(9.654e6) == "$9.65 M" and C.fmt_usd(7.34e11) == "$734.0 B" and C.fmt_usd(1.5e12) == "$1.50 T"
    assert C.fmt_mwh(5483.2) == "5,483 MWh" and C.fmt_mwh(36_550) == "36.5 GWh" and C.fmt_mwh(3.6e6) == "3.6 TWh"
    assert C.fmt_mwh(0.00042) == "420 Wh" and C.fmt_mwh(0.5) == "500 kWh"
    for v in (C.fmt_days(1e12), C.fmt_usd(1e18), C.fmt_mwh(1e12)):
        assert len(v) <= 13 and "e+" not in v, v
    # throughput (found by review: "107.66 M tok/s" was cut at 1,280 px): at most 12 characters
    assert C.fmt({"t": 1.4218e7}, "t", "tok") == "14 M tok/s" and C.fmt({"t": 1.0766e8}, "t", "tok") == "108 M tok/s"
    assert C.fmt({"t": 1.86e6}, "t", "tok") == "1.86 M tok/s" and C.fmt({"t": 2.5e9}, "t", "tok") == "2.5 B tok/s"
    assert all(len(C.fmt({"t": x}, "t", "tok")) <= 12 for x in (9.99e4, 1e5, 9.99e6, 1e7, 9.99e8, 1e9, 1e11))


def test_checkpoint_sizes_have_one_unit_on_the_page():
    """The header said checkpoint sizes were in GB; Formulas shows them in GiB (fmt_col of
    `_bytes`). Both say GiB now."""
    at = _run(PLAN)
    head = next(c.value for c in at.caption if "GPUs" in c.value and "derived" in c.value)
    assert "checkpoint sizes in GiB (2³⁰ B)" in head and "checkpoint sizes in GB" not in head
    exp = next(e for e in at.expander if e.label.startswith("Formulas"))
    md = "\n".join(m.value for m in exp.markdown)
    assert "memory and checkpoint sizes in **GiB = 2³⁰ B**" in md
    ck = next(m.value for m in exp.markdown if m.value.startswith("`ckpt_bytes`"))
    res = planner.evaluate(at.session_state["scenario"]).results
    assert f"{res['ckpt_bytes'] / C.GIB:,.1f} GiB" in ck.split("\n")[0]


def test_usable_hbm_override_error_is_in_the_box_unit():
    at = _run(PLAN)
    at.number_input(key="w_hbmu").set_value(200.0).run()
    msg = " ".join(e.value for e in at.error)
    from planner import batch as pbatch

    phys = float(pbatch.scenario_row(planner.Scenario.model_validate(planner.load_preset("default")))["hbm_bytes"]) / C.GIB
    assert "Usable HBM override = 200 GiB" in msg and f"allowed 0.1 to {phys:,.4g} GiB" in msg
    assert "e+" not in msg and "bytes <=" not in msg and "<=" not in msg  # one unit (review 15n)
    # nor the bytes in brackets, with the schema's full-precision bounds either (review 23:
    # "(107,374,182.4 to 85,899,345,920 bytes)" was left in when the bound gained its commas)
    assert not re.search(r"\([\d,.e+]+ to [\d,.e+]+ bytes\)", msg), msg


def test_a_run_the_monte_carlo_refuses_says_so_once_before_the_button():
    """Found by review: a run expected to fail ~550,000 times (405B, 100× the failure rate, no
    checkpoint tier) got a banner inviting the Monte Carlo, then three messages at once after Run
    (a trials caption, the raw 'simulate: …' refusal, the idle hint). The refusal
    (planner.simulate.too_many_failures: more than MAX_EXPECTED_FAILURES per run) is now known up
    front: the banner says it, the panel says it once, the button is disabled."""
    from planner.simulate import MAX_EXPECTED_FAILURES
    at = _run(PLAN, {"p": "llama3-405b-h100-16k", "rs": "100", "ck": "none"})
    banner = next(w.value for w in at.warning if "no finite time to train" in w.value)
    assert "The Monte Carlo cannot simulate it either" in banner and "run it to see" not in banner
    refusals = [w.value for w in at.warning if w.value.startswith("Not simulated.")]
    assert len(refusals) == 1 and f"{MAX_EXPECTED_FAILURES:,}" in refusals[0]
    assert "simulate:" not in refusals[0] and ").)" not in refusals[0] and refusals[0].endswith(".")
    assert at.button(key="pl_mc_run").disabled
    assert not any("Press **Run simulation**" in c.value for c in at.caption)


def test_explore_open_in_plan_clicked_with_a_new_gpu_count_opens_nothing_stale():
    """Found by a browser test under load: GPUs 2048 typed and "Open in Plan" clicked before the new
    sweep was drawn opened the old sweep's row, with its old GPU count (Plan at n=1024): the
    callback ran before the page, on the rows of the last run that finished. Now the click records
    the row and the label it had; the page opens it only if this run's sweep still has that row
    there, and otherwise says the table changed (opening the new sweep's row of the same number
    would open a split the user never saw: review). One run with both changes is that click."""
    at = _explore_from_8b_preset()
    assert at.query_params["n"] == "64"
    old_row0 = at.selectbox(key="ex_pick").options[0]
    at.number_input(key="w_n").set_value(128)
    at.button(key="ex_open").click().run()
    assert not at.exception
    assert "Step time" not in metrics(at)  # still on Explore
    assert at.query_params["n"] == "128"
    warn = [w.value for w in at.warning if w.value.startswith("The sweep changed while you clicked")]
    assert len(warn) == 1 and old_row0 in warn[0]
    # the new table's row 0, clicked now, opens at 128 GPUs
    row0 = _explore_table_row(at, 0)
    at.button(key="ex_open").click().run()
    assert not at.exception and "Step time" in metrics(at)
    assert at.query_params["n"] == "128" and at.number_input(key="w_n").value == 128
    assert (at.number_input(key="w_tp").value, at.number_input(key="w_pp").value) == (row0["TP"], row0["PP"])


def test_validate_says_which_selected_groups_publish_another_metric():
    """Found by a new-user review: with all five calibration groups selected the tokens/s chart's
    legend had two of them and nothing said why. Each group's rows publish one metric
    (calibration.csv: Narayanan and Korthikanti TFLOP/s or MFU, MosaicML tokens/s, ...): the
    groups with no run of the chart's metric are named under it."""
    from planner import validation

    at = _run(VALIDATE)
    metric = at.query_params["v_metric"]
    rows, _ = validation.validate()
    ok = rows[rows["status"] == "ok"]
    selected = list(at.session_state["v_groups"])
    other = [g for g in selected if not (ok["group"].eq(g) & ok["metric"].eq(metric)).any()]
    assert other  # the default selection has groups of another metric
    caps = [c.value for c in at.caption if c.value.startswith("Not on this chart")]
    assert caps == [f"Not on this chart (their runs publish another metric: pick it above): {', '.join(other)}."]


def test_a_shared_tier_with_imported_peer_copies_can_be_set_back_to_zero():
    """Found by review: an imported scenario JSON with replicas on the parallel file system (Import
    loads it and names the error: 'allowed 0') put 3 in the pfs tier's 'peer copies' input, which
    was disabled for a shared tier, so the error could not be fixed there. The input stays editable
    while it holds a refused value, and is disabled again once it is 0."""
    from planner.presets import preset_json

    at = _run(PLAN, {"p": "default"})
    sj = preset_json("default")
    sj["checkpoint"]["tiers"] = [{"tier": "host_memory", "interval_s": None, "replicas": 1},
                                 {"tier": "pfs", "interval_s": 3600.0, "replicas": 3}]
    at.session_state["scenario"] = sj  # what Import scenario JSON loads (load_into_widgets)
    at.session_state["_sidebar_page"] = ""  # ... into every sidebar widget on the next run
    at.run()
    assert not at.exception
    assert at.number_input(key="w_ckr_pfs").value == 3
    assert any("replicas = 3" in e.value for e in at.error)
    assert not at.number_input(key="w_ckr_pfs").disabled  # it can be fixed where it is shown
    assert not at.number_input(key="w_ckr_host_memory").disabled
    at.number_input(key="w_ckr_pfs").set_value(0).run()
    assert not at.exception and not at.error
    assert at.query_params["ck"] == "host_memory:auto:1,pfs:3600:0"
    at.run()  # the next run locks it at 0 (judged on the last run's scenario: a disabled widget
    # drops the value the browser sends with it, so it cannot lock in the run that sets 0)
    assert at.number_input(key="w_ckr_pfs").disabled and at.number_input(key="w_ckr_pfs").value == 0
    assert not at.error and at.query_params["ck"] == "host_memory:auto:1,pfs:3600:0"


def test_validate_summary_help_and_an_empty_chart_name_the_step_time_rule_and_the_groups():
    """Found by review: the summary's help said |predicted ÷ published − 1| for every group, while a
    step time's error is published ÷ predicted − 1 (the caption above says so; Korthikanti publishes
    step times); and MFU with only groups that publish other metrics said just "No run in this
    selection" (the 'Not on this chart' caption is drawn only under a chart)."""
    at = _run(VALIDATE)
    cols = json.loads(at.dataframe[0].proto.columns)
    helps = {c: cols[c].get("help", "") for c in ("median_abs_err", "mean_signed_err")}
    assert all("published ÷ predicted − 1" in h and "step time" in h for h in helps.values()), helps
    at = _run(VALIDATE, {"v_set": "out_of_sample", "v_metric": "mfu", "v_group": ["MTNLG22", "OPT22"]})
    infos = [i.value for i in at.info]
    assert infos == ["No selected group publishes MFU: MTNLG22, OPT22 publish another metric (pick it above), "
                     "or select a group that publishes this one."], infos


def test_link_warnings_go_once_an_input_changes():
    """Found by review: a link's warnings stayed after the user changed what they were about
    (405B on 8 GPUs: "does not divide cluster.n_gpus = 8" still shown at 1,024 GPUs). They
    describe the link as it was read; after any input differs from it they are gone, on Plan and
    on Explore. Switching pages alone (the same scenario) keeps them."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"p": "default", "tp": "3"})
    at.run()
    assert [w for w in at.warning if w.value.startswith("Link:")]
    at.switch_page("app_pages/explore.py").run()
    assert [w for w in at.warning if w.value.startswith("Link:")]  # same scenario: still true
    at.switch_page("app_pages/plan.py").run()
    at.number_input(key="w_n").set_value(2048).run()
    assert not at.exception
    assert not [w for w in at.warning if w.value.startswith("Link:")]


def _uploader(at, label):
    return next(u for u in at.get("file_uploader") if u.label == label)


def test_an_imports_message_about_the_scenario_goes_once_an_input_is_fixed():
    """Found by review: Import scenario JSON with TP 3 on 1,024 GPUs (3·4·1 = 12 does not divide
    1,024) loaded it and named the error, but the sidebar's red "Import: …" stayed beside the
    results after TP was set back to 8; a config.json whose 32 layers do not split over pp·vpp =
    20 left "the current split or batch is not valid" after VPP was set to 1 (32 / (4·1) layers);
    and a config.json's notes stayed after another preset was loaded. Each describes the scenario
    the import gave: kept while it is shown, gone once an input differs from it."""
    from planner.presets import preset_json

    at = _run(PLAN, {"p": "default"})
    sj = preset_json("default")
    sj["parallelism"].update(tp=3, dp=None)
    _uploader(at, "Import scenario JSON").set_value(
        ("bad.json", json.dumps(sj).encode(), "application/json"))
    at.run()
    assert not at.exception
    imp = [e.value for e in at.sidebar.error if e.value.startswith("Import:")]
    assert imp and "3·4·1" in imp[0], imp
    assert at.number_input(key="w_tp").value == 3
    at.run()  # a rerun with the same scenario keeps it
    assert [e.value for e in at.sidebar.error if e.value.startswith("Import:")] == imp
    at.number_input(key="w_tp").set_value(8).run()
    assert not at.exception and not at.error  # neither the page's error nor the import's
    assert at.metric  # the results are back

    cfg = json.loads((ROOT / "tests" / "data" / "hf_configs.json").read_text())["llama-3.1-8b"]["config"]
    # 36 query heads do not split over TP 8 (40 layers do over PP·VPP 20; a layer count that does not
    # now switches to the uneven split, session 40): the note stays until TP is set to 4
    cfg = dict(cfg, num_hidden_layers=40, num_attention_heads=36, head_dim=128, num_key_value_heads=4)
    _uploader(at, "Import a Hugging Face config.json").set_value(
        ("config.json", json.dumps(cfg).encode(), "application/json"))
    at.run()
    split_note = [c.value for c in at.sidebar.caption if "split or batch is not valid" in c.value]
    assert split_note and at.error
    at.number_input(key="w_tp").set_value(4).run()
    assert not at.exception and not at.error
    assert not [c.value for c in at.sidebar.caption if "split or batch is not valid" in c.value]

    gpt2 = json.loads((ROOT / "tests" / "data" / "hf_configs.json").read_text())["gpt2"]["config"]
    _uploader(at, "Import a Hugging Face config.json").set_value(
        ("gpt2.json", json.dumps(gpt2).encode(), "application/json"))
    at.run()
    assert [c.value for c in at.sidebar.caption if c.value.startswith("gpt2.json: ")]
    at.selectbox(key="w_preset").set_value("llama3-8b-h100-64").run()
    assert not at.exception
    assert at.selectbox(key="w_model").value == "llama3-8b"
    assert not [c.value for c in at.sidebar.caption if c.value.startswith("gpt2.json: ")]


def test_sidebar_choices_use_the_fields_names():
    # The schema's ids stay in links / JSON / CLI; the widgets show the usual names (found by review:
    # the schedule list read 1f1b, zero_bubble, dualpipe)
    at = _run(PLAN)
    sch = at.selectbox(key="w_sch")
    assert sch.value == "interleaved" and "interleaved 1F1B (VPP)" in sch.options  # the default preset
    assert "1F1B" in sch.options and "DualPipe" in sch.options
    assert "zero-bubble (ZB-H1)" in sch.options and "GPipe" in sch.options
    sch.set_value("zero_bubble").run()
    assert not at.exception and at.query_params["sch"] == "zero_bubble"
    assert "per-op SAC (TorchTitan op_sac)" in at.selectbox(key="w_rc").options
    assert "NVMe (ZeRO-Infinity)" in at.selectbox(key="w_off").options
