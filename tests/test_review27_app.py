"""Review h27b (2026-12, the dashboard in a browser): the fixes.

- Choosing a schedule other than interleaved with VPP > 1 set nothing and stopped the page with a
  schema error, while the page's own link opened with VPP 1 and numbers: the widget now sets VPP to
  1 and says so, as the link does, and the schema's message names the fix.
- Compare's four metric panels in a row were 706 px wide, cut off in an 800 px window: two a row.
- The energy formula wrote 10,200 W as "1.02e+04 W".
- A link's boolean refusal said "must be 1 or 0" while true / yes / on are read too.
"""

from __future__ import annotations

import math

import planner
from planner import charts, share
from planner.schema import InputError, validate_scenario
from test_app import PLAN, _run


def test_a_non_interleaved_schedule_sets_vpp_to_1_and_says_so():
    at = _run(PLAN, {"p": "default"})  # PP 4 × VPP 5, interleaved
    assert at.number_input(key="w_vpp").value == 5
    at.selectbox(key="w_sch").set_value("1f1b").run()
    assert not at.exception
    assert at.number_input(key="w_vpp").value == 1
    assert any("VPP 5 → 1" in c.value for c in at.sidebar.caption)
    assert not [e.value for e in at.error]  # numbers, not a schema error
    # the link of that state reads the same scenario
    sj = share.params_to_scenario(share.scenario_to_params(at.session_state["scenario"]))[0]
    assert sj["parallelism"]["vpp"] == 1 and sj["parallelism"]["schedule"] == "1f1b"


def test_the_schema_message_names_the_fix():
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"]["schedule"] = "1f1b"
    try:
        validate_scenario(d)
    except InputError as e:
        text = str(e)
    else:  # pragma: no cover - the scenario is invalid
        raise AssertionError("vpp 5 with 1f1b validated")
    assert "parallelism.vpp = 5 needs schedule = 'interleaved'" in text and "set vpp = 1" in text


def test_compare_chart_has_two_panels_a_row():
    res = {name: planner.evaluate(planner.load_preset(pid)).results
           for name, pid in (("a", "default"), ("b", "llama3-8b-h100-64"))}
    spec = charts.compare_chart(res).to_dict()
    assert spec["columns"] == 2
    # 2 × 150 px of plot plus axes fits the ~470 px main column of an 800 px window (4 × 130 did not)
    assert spec["spec"]["width"] * spec["columns"] <= 320
    # the slots' colours leave red to the "does not fit" outline
    rng = spec["spec"]["encoding"]["color"]["scale"]["range"]
    assert len(rng) >= 4 and not any(c.lower() in ("#d62728", "#e45756", "#ff9da6", "#ff0000") for c in rng)


def test_energy_formula_writes_watts_in_plain_digits():
    ex = planner.evaluate(planner.load_preset("default")).explain["energy_mwh"]
    assert "e+0" not in ex
    assert "× 10200 W" in ex  # DGX H100: 10.2 kW per node (hardware/systems.json)


def test_link_boolean_refusal_names_every_accepted_word():
    _sj, warnings = share.params_to_scenario({"p": "default", "fa": "maybe"})
    assert any("must be 1 or 0 (also true / false, yes / no, on / off)" in w for w in warnings)


def test_vpp_above_1_under_another_schedule_chooses_interleaved():
    """Review h27d: typing VPP 2 under 1F1B still stopped the page on the schema error."""
    at = _run(PLAN, {"p": "default"})
    at.selectbox(key="w_sch").set_value("1f1b").run()  # VPP 5 → 1 (above)
    at.number_input(key="w_vpp").set_value(2).run()
    assert not at.exception and not [e.value for e in at.error]
    assert at.selectbox(key="w_sch").value == "interleaved" and at.number_input(key="w_vpp").value == 2
    assert any("1F1B → interleaved 1F1B (VPP)" in c.value for c in at.sidebar.caption)


def test_the_schedule_note_goes_with_a_preset_load():
    at = _run(PLAN, {"p": "default"})
    at.selectbox(key="w_sch").set_value("1f1b").run()
    assert any("VPP 5 → 1" in c.value for c in at.sidebar.caption)
    at.selectbox(key="w_preset").set_value("llama3-8b-h100-64").run()
    assert not any("VPP 5 → 1" in c.value for c in at.sidebar.caption)


def test_explore_open_in_plan_runs_the_rows_expert_tp():
    """Review h27d: a TP 1 row of Mixtral at etp 2 opened in Plan on "etp = 2 must divide tp = 1";
    Explore's row scenario now takes gcd(etp, tp) as the sweep did, = tp for a dense model."""
    from planner.sweep import scenario_for_row
    mix = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
    mix["parallelism"].update(tp=2, etp=2, dp=None, sequence_parallel=True)
    row = {"tp": 1, "pp": 1, "dp": 64, "cp": 1, "ep": 8, "vpp": 1, "zero_stage": 1, "n_gpus": 64,
           "sequence_parallel": False, "recompute": "none", "schedule": "1f1b", "offload_optimizer": "none",
           "micro_batch_size": 1}
    sc = scenario_for_row(validate_scenario(mix), row)
    assert sc.parallelism.etp == 1  # gcd(2, 1)
    dense = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    dense["parallelism"].update(tp=2, etp=2, dp=None)
    assert scenario_for_row(validate_scenario(dense), {**row, "ep": 1, "tp": 4, "dp": 16}).parallelism.etp is None
    # the page's own function (app_pages/explore.py row_scenario) opens the sweep's rows as they ran
    from app_pages.explore import row_scenario

    df = planner.sweep(validate_scenario(mix), top=None, tp=(1, 2), ep=(8,), cp=(1,), zero_stages=(1,),
                       recompute=("selective",), offload=("none",), schedules=("1f1b",))
    assert {1, 2} <= set(df["tp"].astype(int))
    for tp_ in (1, 2):
        r = df[df["tp"] == tp_].iloc[0]
        opened = row_scenario(mix, r.to_dict())
        assert opened["parallelism"]["etp"] == math.gcd(2, tp_)
        got = planner.evaluate(opened).results
        assert math.isclose(got["step_time_s"], float(r["step_time_s"]), rel_tol=1e-12)
