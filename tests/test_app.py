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


# Every sidebar input round-trips through the link --------------------------------------------

#: A non-default value for every scenario input of the Plan sidebar (a small custom MoE model
#: so that the split below is valid). Set in stages: preset, then model, then the rest, then
#: the per-tier widgets that appear once the tiers are chosen.
_STAGE_PRESET = {"w_preset": "llama3-8b-h100-64"}
_STAGE_MODEL = {"w_model": "custom"}
_STAGE_REST = {
    "w_m_name": "rt-moe", "w_m_layers": 24, "w_m_hidden": 2048, "w_m_heads": 16, "w_m_kv": 4,
    "w_m_ffn": 5632, "w_m_vocab": 50000, "w_m_hd": 160, "w_m_pos": 2048, "w_m_norm": "layernorm",
    "w_m_do": 0.1, "w_m_gated": False, "w_m_tied": True, "w_m_bias": True,
    "w_m_experts": 8, "w_m_topk": 4, "w_m_eff": 1408, "w_m_shared": 1, "w_m_fd": 1, "w_m_cf": 1.25,
    "w_sys": "dgx-h200", "w_n": 256, "w_acc": "h100-sxm-80gb", "w_price": 1.5, "w_nic": 40.0,
    "w_hbmu": 120.0, "w_hostmem": 1500.0, "w_pue": 1.3, "w_util": 0.7,
    "w_tp": 2, "w_pp": 2, "w_cp": 2, "w_ep": 2, "w_vpp": 1, "w_z": 2, "w_rc": "full", "w_sch": "zero_bubble",
    "w_off": "cpu", "w_offw": True, "w_offg": True, "w_offa": True, "w_ls": "uneven",
    "w_sp": False, "w_fa": False, "w_tpo": True,
    "w_seq": 4096, "w_gbs": 256, "w_mbs": 2, "w_prec": "fp8", "w_gd": "bf16", "w_tok": 2.5,
    "w_tiers": ["local_nvme", "object_store"], "w_async": False, "w_cif": 0.05,
    "w_fp": "rsc-a100", "w_rs": 2.0, "w_hs": 4,
}
_STAGE_TIERS = {"w_ck_local_nvme": 30.0, "w_ckr_local_nvme": 1, "w_ck_object_store": 240.0,
                "w_ckr_object_store": 2}
_NOT_INPUTS = {"dl_json", "dl_csv", "w_upload"}


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
    assert link["ck"] == "local_nvme:1800:1,object_store:14400:2"
    assert link["fp"] == "rsc-a100" and link["rs"] == "2" and link["hs"] == "4"


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
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"p": "llama3-8b-h100-64"})
    at.run()
    at.switch_page("app_pages/explore.py").run()
    assert not at.exception
    table = at.dataframe[0].value
    assert at.dataframe[0].key == "ex_table" and len(table) > 3
    row = 2
    _select_table_row(at, "ex_table", row)
    assert not at.exception, [e.message for e in at.exception]
    assert "Step time" in metrics(at) and at.title[0].value == "Plan a training run"
    assert at.number_input(key="w_tp").value == int(table["TP"][row])
    assert at.number_input(key="w_pp").value == int(table["PP"][row])
    assert at.number_input(key="w_cp").value == int(table["CP"][row])
    assert at.number_input(key="w_mbs").value == int(table["micro-batch"][row])
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
