"""AppTest (streamlit.testing.v1) for every page: default load, widgets -> the right metrics,
the query-param round trip, bad links, bad widget input, chart specs."""

from __future__ import annotations

import json
from pathlib import Path

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

def test_explore_loads_table_and_opens_a_row_in_plan():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"p": "llama3-8b-h100-64"})
    at.run()
    at.switch_page("app_pages/explore.py").run()
    assert not at.exception
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


# Compare -------------------------------------------------------------------------------------

def test_compare_two_presets_side_by_side_and_round_trip():
    at = _run(COMPARE, {"c_n": "2", "c_src1": "default", "c_src2": "llama3-8b-h100-64"})
    table = at.dataframe[0].value
    assert table.shape[1] == 2 and "step time" in table.index
    link = dict(at.query_params)
    assert link["c_src2"] == "llama3-8b-h100-64" and link["2.m"] == "llama3-8b"
    at2 = _run(COMPARE, link)
    assert at2.dataframe[0].value.equals(table)
    spec = charts_by_key(at)[0]
    assert spec["facet"]["field"] == "metric"


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
