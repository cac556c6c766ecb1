"""Chart builders: the Vega-Lite specs carry the expected fields and units (no browser)."""

from __future__ import annotations

import pandas as pd

import planner
from planner import charts

GIB = 2**30


def _layers(spec: dict) -> list[dict]:
    return spec.get("layer", [spec])


def test_memory_chart_stacks_components_per_stage_with_hbm_line():
    stages = [{"stage": 0, "mem_weights_bytes": 2 * GIB, "mem_grads_bytes": GIB, "mem_optimizer_bytes": GIB,
               "mem_activations_bytes": 10 * GIB, "mem_logits_bytes": 0.0, "mem_buffers_bytes": 3 * GIB},
              {"stage": 1, "mem_weights_bytes": 2 * GIB, "mem_grads_bytes": GIB, "mem_optimizer_bytes": GIB,
               "mem_activations_bytes": 8 * GIB, "mem_logits_bytes": 4 * GIB, "mem_buffers_bytes": 3 * GIB}]
    df = charts.memory_stages_frame(stages)
    assert set(df["stage"]) == {"stage 0", "stage 1"}
    # the margin is its own component, in GiB
    m = df[(df["stage"] == "stage 0") & df["component"].str.startswith("margin")]
    assert m["gib"].iloc[0] == 3.0
    spec = charts.memory_stages_chart(stages, 80 * GIB, 80 * GIB + 2 * GIB).to_dict()
    bars, rule = _layers(spec)
    assert bars["encoding"]["y"]["aggregate"] == "sum" and "GiB" in bars["encoding"]["y"]["title"]
    assert bars["encoding"]["x"]["field"] == "stage"
    assert rule["mark"]["type"] == "rule"
    rule_data = spec["datasets"][rule["data"]["name"]]
    assert {"line": "usable HBM", "gib": 80.0} in rule_data


def test_step_time_chart_uses_engine_parts_in_seconds():
    res = {"t_compute_s": 3.0, "t_tp_comm_s": 0.5, "t_pp_bubble_s": 0.2, "step_time_s": 3.7}
    spec = charts.step_time_chart(res).to_dict()
    assert spec["encoding"]["x"]["field"] == "seconds" and "(s)" in spec["encoding"]["x"]["title"]
    data = spec["datasets"][spec["data"]["name"]]
    assert {d["part"]: d["seconds"] for d in data} == {"compute": 3.0, "TP comm": 0.5, "PP bubble": 0.2}


def test_goodput_curve_marks_the_best_point_per_tier():
    curve = pd.DataFrame({"tier": ["a"] * 3 + ["b"] * 3, "interval_s": [60, 600, 6000] * 2,
                          "goodput": [0.90, 0.95, 0.93, 0.80, 0.85, 0.88]})
    spec = charts.goodput_interval_chart(curve).to_dict()
    line, opt = _layers(spec)
    assert line["encoding"]["x"]["scale"]["type"] == "log" and "minutes" in line["encoding"]["x"]["title"]
    assert "%" in line["encoding"]["y"]["title"]
    best = spec["datasets"][opt["data"]["name"]]
    # b still rises at the grid's longest interval: its best is "not saved" (or beyond the grid), no ◆
    # there (review h27b: a ◆ at 7 days read "save weekly"), and the subtitle says why
    assert sorted((d["tier"], d["interval_s"]) for d in best) == [("a", 600)]
    # on a line of its own, each line short enough for the Plan page's 460 px chart (review h29a F7:
    # one 89-character line was cut at "not saving that t…"); 70 characters at about 6.5 px each
    assert spec["title"]["subtitle"] == ["◆ optimum  ○ in use",
                                         "no ◆: best at the longest interval shown, i.e. not saving that tier"]
    assert all(len(line) <= 70 for line in spec["title"]["subtitle"])
    inner = charts.goodput_interval_chart(curve[curve["tier"] == "a"]).to_dict()
    assert "not saving" not in inner["title"]["subtitle"]


def test_mc_histogram_in_days():
    sim = pd.DataFrame({"time_to_train_days": [10.0, 11.0, 12.5, 11.2]})
    spec = charts.time_to_train_hist(sim, 11.0).to_dict()
    hist = _layers(spec)[0]
    assert hist["encoding"]["x"]["bin"] and "days" in hist["encoding"]["x"]["title"]


def test_sweep_charts_on_engine_output():
    s = planner.load_preset("llama3-8b-h100-64")
    df = planner.sweep(s, top=30, zero_stages=(1,), recompute=("selective",), offload=("none",),
                       schedules=("1f1b",), cp_max=1)
    sc = charts.throughput_memory_scatter(df, "pp").to_dict()
    assert sc["encoding"]["color"]["field"] == "pp"
    assert "GiB" in sc["encoding"]["x"]["title"] and "tokens/s" in sc["encoding"]["y"]["title"]
    pa = charts.pareto_cost_days_chart(df).to_dict()
    assert "days" in pa["layer"][0]["encoding"]["x"]["title"] and "USD" in pa["layer"][0]["encoding"]["y"]["title"]


def test_compare_chart_one_panel_per_metric_with_units():
    res = {"A": {"mfu": 0.4, "step_time_s": 4.0}, "B": {"mfu": 0.5, "step_time_s": 3.0, "goodput": 0.9}}
    df = charts.compare_frame(res)
    assert set(df["metric"]) == {"MFU (%)", "step time (s)", "goodput (%)"}
    assert df[(df["scenario"] == "A") & (df["metric"] == "MFU (%)")]["value"].iloc[0] == 40.0
    spec = charts.compare_chart(res).to_dict()
    assert spec["facet"]["field"] == "metric" and spec["resolve"]["scale"]["y"] == "independent"


def test_validation_scatter_has_identity_line():
    rows = pd.DataFrame({"published": [100.0, 200.0], "predicted": [110.0, 190.0], "group": ["x", "y"],
                         "run_id": ["r1", "r2"]})
    spec = charts.validation_scatter(rows, "published", "predicted", color="group", unit="TFLOP/s per GPU").to_dict()
    diag, pts = spec["layer"]
    assert diag["mark"]["type"] == "line" and diag["encoding"]["x"]["field"] == diag["encoding"]["y"]["field"]
    assert "TFLOP/s" in pts["encoding"]["x"]["title"] and pts["encoding"]["x"]["scale"]["type"] == "log"


# Review 2026-11-30 ---------------------------------------------------------------------------------


def test_usable_hbm_line_has_a_colour_no_component_uses_and_is_drawn_over_the_physical_line():
    """The usable-HBM rule was the red of "optimizer states" (the theme's third colour) and lay
    under the grey physical-HBM dash (79.6 vs 80 GiB on an H100)."""
    rep = planner.evaluate(planner.load_preset("default"))
    usable, physical = 79.6 * GIB, 80 * GIB
    spec = charts.memory_stages_chart(rep.stages, usable, physical).to_dict()
    bars, rule = _layers(spec)
    comp = bars["encoding"]["color"]["scale"]
    assert comp["domain"] == [lab for _, lab in charts.MEMORY_COMPONENTS]
    assert len(comp["range"]) == len(comp["domain"]) and len(set(comp["range"])) == len(comp["range"])
    stroke = rule["encoding"]["stroke"]["scale"]
    colour = dict(zip(stroke["domain"], stroke["range"]))
    assert colour["usable HBM"] not in comp["range"] and colour["physical HBM"] not in comp["range"]
    assert colour["usable HBM"] != colour["physical HBM"]
    dash = dict(zip(rule["encoding"]["strokeDash"]["scale"]["domain"], rule["encoding"]["strokeDash"]["scale"]["range"]))
    assert dash["usable HBM"] != dash["physical HBM"]
    # marks are drawn in data order: the usable line last, over the physical one
    rows = spec["datasets"][rule["data"]["name"]]
    assert [r["line"] for r in rows] == ["physical HBM", "usable HBM"]
    assert rows[-1]["gib"] == usable / GIB and rows[0]["gib"] == physical / GIB


def test_mc_histogram_draws_the_analytic_line_only_when_there_is_one():
    sim = pd.DataFrame({"time_to_train_days": [10.0, 11.0, 12.5, 11.2]})
    assert len(_layers(charts.time_to_train_hist(sim, 11.0).to_dict())) == 2
    for none in (None, float("inf"), float("nan")):
        assert len(_layers(charts.time_to_train_hist(sim, none).to_dict())) == 1


def test_compare_chart_marks_a_scenario_that_does_not_fit():
    res = {"A": {"fits": True, "cost_usd": 2e6, "mfu": 0.4}, "B": {"fits": False, "cost_usd": 1e6, "mfu": 0.5}}
    df = charts.compare_frame(res)
    assert set(df[df["scenario"] == "B"]["memory"]) == {charts.NO_FIT}
    assert set(df[df["scenario"] == "A"]["memory"]) == {"fits"}
    enc = charts.compare_chart(res).to_dict()["spec"]["encoding"]
    op = dict(zip(enc["opacity"]["scale"]["domain"], enc["opacity"]["scale"]["range"]))
    assert enc["opacity"]["field"] == "memory" and op[charts.NO_FIT] < op["fits"] == 1.0
    assert dict(zip(enc["stroke"]["scale"]["domain"], enc["stroke"]["scale"]["range"]))[charts.NO_FIT] != "transparent"


def test_the_interval_in_use_is_drawn_in_its_tiers_colour():
    # found by review: a black ○ on two overlapping tier lines did not say whose interval it marks
    curve = pd.DataFrame({"tier": ["a"] * 3 + ["b"] * 3, "interval_s": [60, 600, 6000] * 2,
                          "goodput": [0.90, 0.95, 0.93, 0.90, 0.95, 0.88]})
    cur = pd.DataFrame({"tier": ["b"], "interval_s": [600], "goodput": [0.95]})
    spec = charts.goodput_interval_chart(curve, cur).to_dict()
    line, _, mark = _layers(spec)
    assert mark["encoding"]["color"]["field"] == line["encoding"]["color"]["field"] == "tier"
    assert mark["mark"]["filled"] is False and "color" not in mark["mark"]
    assert [d["tier"] for d in spec["datasets"][mark["data"]["name"]]] == ["b"]


# Review 13 (browser): tooltips and legends a user reads ---------------------------------------

def _tooltips(spec):
    """Every tooltip entry (dicts) in a chart spec, layers and facets included."""
    out = []

    def walk(node):
        if isinstance(node, dict):
            tt = node.get("encoding", {}).get("tooltip") if isinstance(node.get("encoding"), dict) else None
            if tt:
                out.extend(tt if isinstance(tt, list) else [tt])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(spec)
    return out


def test_sweep_chart_tooltips_use_the_fields_names():
    """Found by review: the Explore charts' tooltips read micro_batch_size, zero_stage."""
    import planner
    df = planner.sweep(planner.load_preset("mpt-7b-a100-8"), top=20)
    for chart in (charts.throughput_memory_scatter(df), charts.pareto_cost_days_chart(df)):
        titles = [t.get("title", t.get("field")) for t in _tooltips(chart.to_dict())]
        assert "micro-batch" in titles and "micro_batch_size" not in titles
        assert "zero_stage" not in titles


def test_validation_tooltip_rounds_and_names_the_unit():
    """Found by review: "predicted | 22666.1482525" beside "published | 23559", no unit."""
    rows = pd.DataFrame({"run_id": ["a"], "published": [23559.0], "predicted": [22666.1482525], "rel_err": [-0.038]})
    spec = charts.validation_scatter(rows, "published", "predicted", unit="tokens/s", tooltip=["run_id", "rel_err"]).to_dict()
    tips = {t.get("title"): t for t in _tooltips(spec)}
    assert tips["predicted (tokens/s)"]["format"] == ",.4~g"
    assert "published (tokens/s)" in tips and "run" in tips


def test_monte_carlo_tooltip_names_the_bar_range():
    """Found by review: the histogram's tooltip said only "trials | 73", not which days."""
    sim = pd.DataFrame({"time_to_train_days": [10.0, 11.0, 12.0, 13.0]})
    tips = _tooltips(charts.time_to_train_hist(sim).to_dict())
    assert any(t.get("bin") and t.get("field") == "t" for t in tips)


def test_compare_chart_has_one_memory_legend():
    """Found by review: Vega warned of opacity on an unsorted discrete field and of a conflicting
    legend (two channels of the same field without a legend beside one with it)."""
    spec = charts.compare_chart({"a": {"step_time_s": 1.0, "fits": True},
                                 "b": {"step_time_s": 2.0, "fits": False}}).to_dict()
    enc = spec["spec"]["encoding"]
    for ch in ("opacity", "stroke", "strokeDash"):
        assert enc[ch]["type"] == "ordinal" and enc[ch].get("legend") is not None, ch
