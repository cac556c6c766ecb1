"""Review h29a (new-user break-it review) fixes: each test names the finding and gives the expected
text or figure from the finding, the documentation or a hand calculation, not from the code's output."""
from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

import pytest

from planner import share
from planner.cli import main


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


# ---- F1: the CLI refuses what the dashboard ignores, and says so ----------------------------------

def test_f1_cli_says_the_dashboard_would_ignore_an_unknown_key_not_that_it_was_ignored():
    # Before: "planner: --link: 'e': unknown link parameter ignored" with status 2 (the link cut
    # mid-key after '&e'); the other refusals already say "the dashboard would keep ...".
    for link, key in (("?p=default&n=512&e", "e"), ("?p=default&zzz=1", "zzz")):
        rc, out, err = _cli("evaluate", "--link", link)
        assert rc == 2 and out == "", (rc, out, err)
        assert err == f"planner: --link: '{key}': unknown link parameter (the dashboard would ignore it)\n", err
        assert "parameter ignored" not in err


def test_f1_architecture_keys_without_m_custom_are_refused_in_the_same_words():
    rc, _out, err = _cli("evaluate", "--link", "?p=default&mb=4&md=4")
    assert rc == 2
    assert err == ("planner: --link: mb, md: architecture fields are used only with m=custom; "
                   "the dashboard would ignore them\n"), err


def test_f1_the_dashboards_own_warning_still_says_ignored():
    # on the page the key really is ignored (the scenario is shown without it)
    _sj, warns = share.params_to_scenario({"p": "default", "zzz": "1"})
    assert warns == ["'zzz': unknown link parameter ignored"], warns
    assert share.foreign_page_keys({"zzz": "1"}, "compare") == ["'zzz': unknown link parameter ignored"]


# ---- F2: --set / JSON messages name the range, spell JSON's null / true, and say what a model is ----

def _set_err(assignment: str) -> str:
    rc, out, err = _cli("evaluate", "--preset", "default", "--set", assignment)
    assert rc == 2 and out == "", (rc, out, err)
    return err


def test_f2_a_flag_for_a_number_names_the_range():
    # Before: "parallelism.tp: a number, not true". The range is the schema's: tp is a PosInt
    # (1 to 10,000,000, as "--set parallelism.tp=0" says), pue 1 to 3 (Cluster.pue ge=1, le=3).
    assert _set_err("parallelism.tp=true") == \
        "planner: parallelism.tp: must be a whole number, allowed 1 to 10,000,000 (got true)\n"
    assert _set_err("cluster.pue=false") == "planner: cluster.pue: must be a number, allowed 1 to 3 (got false)\n"


def test_f2_null_is_spelled_as_json_spells_it():
    # Before: "... (got None)", Python's spelling of what the user typed as JSON null
    err = _set_err("parallelism.tp=null")
    assert err == "planner: parallelism.tp: must be a whole number, allowed 1 to 10,000,000 (got null)\n"
    assert "None" not in _set_err("checkpoint.async=null")
    assert "(got null)" in _set_err("checkpoint.async=null")
    assert "(got [null])" in _set_err("parallelism.tp=[null]")


def test_f2_python_api_keeps_pythons_spelling():
    # a Python caller passed None, and reads None
    import planner
    d = planner.load_preset("default").model_dump(by_alias=True)
    d["parallelism"]["tp"] = None
    with pytest.raises(planner.InputError, match=r"parallelism\.tp: .*\(got None\)"):
        planner.evaluate(d)


def test_f2_a_model_that_is_neither_an_id_nor_an_object_says_what_is_allowed():
    # Before: "model: Input should be a valid dictionary or instance of ModelSpec (got 4)"
    assert _set_err("model=4") == ("planner: model: must be a model preset id (planner presets models) or an "
                                   "object with the model's fields (got 4)\n")
    err = _set_err("cluster.system=4")
    assert err == ("planner: cluster.system: must be a system id (planner presets hardware) or an object with "
                   "the system's fields (got 4)\n"), err
    err = _set_err("cluster.accelerator=true")
    assert err.startswith("planner: cluster.accelerator: must be an accelerator id (planner presets hardware)"), err
    assert err.endswith("or null (the system's own) (got true)\n"), err
    for a in ("model=4", "cluster.system=4", "cluster.accelerator=4", "reliability.profile=4",
              'checkpoint.tiers=[{"tier": 4}]'):
        err = _set_err(a)
        assert "instance of" not in err and "Input should be a valid dictionary" not in err, (a, err)
    # what the message points at exists: an id listed there is accepted
    rc, out, err = _cli("presets", "models")
    assert rc == 0 and "llama3-70b" in out
    rc, _out, err = _cli("evaluate", "--preset", "default", "--set", "model=llama3-70b", "--format", "json")
    assert rc == 0, err


# ---- F3: a preset id where a scenario goes points at planner.load_preset -------------------------

def test_f3_a_preset_id_given_as_the_scenario_points_at_load_preset():
    import planner
    want = ("the scenario must be a planner.Scenario or a dict of its fields, not a string (got 'default'): "
            "a preset id? use planner.load_preset('default')")
    for call in (lambda: planner.evaluate("default"), lambda: planner.sweep("default"),
                 lambda: planner.simulate("default", n_trials=10)):
        with pytest.raises(planner.InputError) as e:
            call()
        assert e.value.lines == [want], e.value.lines
    with pytest.raises(planner.InputError) as e:
        planner.evaluate_many([planner.load_preset("default"), "default"])
    assert e.value.lines == [f"row 1: {want}"], e.value.lines
    # the pointer works: the preset it names loads and evaluates
    assert planner.evaluate(planner.load_preset("default")).results["step_time_s"] > 0


def test_f3_a_string_that_is_no_preset_id_says_how_to_list_them():
    import planner
    assert "llama" not in planner.list_presets()
    with pytest.raises(planner.InputError) as e:
        planner.evaluate("llama")
    assert e.value.lines == ["the scenario must be a planner.Scenario or a dict of its fields, not a string "
                             "(got 'llama'), and no preset id: planner.list_presets() lists the ids, "
                             "planner.load_preset(id) loads one"], e.value.lines
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(4)
    assert e.value.lines == ["the scenario must be a planner.Scenario or a dict of its fields (got 4)"]


# ---- F6: Compare: one unit a row, and a cut "other differences" cell ends with "…" ---------------

def test_f6_fmt_row_puts_a_row_in_the_unit_of_its_largest_value():
    from app_pages import _common as C
    # review h29a's rows, by hand: 36,800 MWh = 36.8 GWh, so 6,227 MWh = 6.227 GWh -> 6.23 (3 significant
    # digits); $9.59 M is the largest, so $103,117 = $0.103117 M -> $0.103 M
    assert C.fmt_row([6227.0, 36800.0], "mwh") == ["6.23 GWh", "36.8 GWh"]
    assert C.fmt_row([5.01e6, 103117.0, 9.59e6], "usd") == ["$5.01 M", "$0.103 M", "$9.59 M"]
    # durations keep their own units (s / min / h read right side by side; one unit made a step time
    # "0.0804 min"): 45 s beside 192 s = 3.2 min, MTBF 0.5 h = 30 min beside 48.4 h
    assert C.fmt_row([45.0, 192.0], "s") == [C.fmt({"x": 45.0}, "x", "s"), C.fmt({"x": 192.0}, "x", "s")]
    assert C.fmt_row([45.0, 192.0], "s")[1].endswith(" min") and C.fmt_row([45.0, 192.0], "s")[0].endswith(" s")
    assert C.fmt_row([0.5, 48.4], "h")[0].endswith(" min")
    # 50,000 tok/s beside 3.61 M tok/s: 0.05 M -> "0.0500 M tok/s"
    assert C.fmt_row([5e4, 3.61e6], "tok") == ["0.0500 M tok/s", "3.61 M tok/s"]
    # a row already in one unit is left as fmt gives it; a missing value stays "—"
    assert C.fmt_row([0.43, 1234.0, None], "usd") == ["$0.43", "$1,234", "—"]
    assert C.fmt_row([float("inf"), 5e6], "usd") == ["—", "$5.00 M"]


def test_f6_cut_to_width_ends_with_an_ellipsis_and_keeps_what_fits():
    from app_pages import _common as C
    text = "gbs=15360 tok=1.48e13 prec=fp8 sch=dualpipe"  # 43 characters
    # 164 px (four slots): (164 - 16) / 6.5 = 22.8 -> 22 characters, the last one "…"
    assert C.cut_to_width(text, 164) == "gbs=15360 tok=1.48e13…"
    # 220 px (three slots): (220 - 16) / 6.5 = 31.4 -> 31: three whole key=value pairs and "…"
    assert C.cut_to_width(text, 220) == "gbs=15360 tok=1.48e13 prec=fp8…"
    # 300 px (two slots): (300 - 16) / 6.5 = 43.7 -> 43: the whole text
    assert C.cut_to_width(text, 300) == text


_UNIT = {"usd": {" M": 1e6, " B": 1e9, "": 1.0}, "mwh": {" GWh": 1e3, " MWh": 1.0, " kWh": 1e-3}}


def _value(cell: str, kind: str) -> tuple[float, str]:
    """(value in the column's unit, unit text) of a cell such as "$0.103 M" or "6.23 GWh ✗"."""
    body = cell.replace(" ✗", "").lstrip("$")
    for unit, size in sorted(_UNIT[kind].items(), key=lambda t: -len(t[0])):
        if body.endswith(unit):
            return float(body[: len(body) - len(unit)].replace(",", "")) * size, unit
    raise AssertionError(cell)



@pytest.mark.parametrize("params", [
    {"c_n": "2", "c_src1": "default", "c_src2": "llama3-405b-h100-16k"},
    {"c_n": "3", "c_src1": "deepseek-v3-h800-2048", "c_src2": "mixtral-8x7b-h100-64",
     "c_src3": "qwen3-235b-gb200-256"},
])
def test_f6_compare_page_rows_have_one_unit_each(params):
    import planner
    from test_app import COMPARE, _run
    at = _run(COMPARE, params)
    t = at.dataframe[0].value
    ids = [params[f"c_src{i}"] for i in range(1, int(params["c_n"]) + 1)]
    res = [planner.evaluate(planner.load_preset(p)).results for p in ids]
    for row, col, kind in (("cost to train", "cost_usd", "usd"), ("energy", "energy_mwh", "mwh")):
        cells = list(t.loc[row])
        units = {_value(c, kind)[1] for c in cells}
        assert len(units) == 1, (row, cells)
        for c, r in zip(cells, res):  # each cell is its scenario's value to three significant digits
            assert _value(c, kind)[0] == pytest.approx(r[col], rel=5e-3), (row, c, r[col])
    for c in t.loc["other differences"]:
        # what a cell of the narrowest width (Compare.COL_WIDTH) shows: cut ones end with "…"
        assert len(c) <= int(({2: 300, 3: 220}[int(params["c_n"])] - 16) / 6.5), c
    cut = [c for c in t.loc["other differences"] if c.endswith("…")]
    if params["c_n"] == "3":  # "gbs=15360 tok=1.48e13 prec=fp8 sch=dualpipe ..." is longer than 31
        assert cut, list(t.loc["other differences"])


# ---- F7: the goodput chart's subtitle is not cut at the chart's width ----------------------------

def test_f7_plan_charts_subtitle_lines_fit_the_chart():
    # review h29a: on /?p=deepseek-v3-h800-2048 the subtitle "◆ optimum ○ in use (no ◆: best at the
    # longest interval shown, i.e. not saving that tier)" (89 characters) was cut at the 462 px chart;
    # 70 characters at about 6.5 px fit 460 px
    from test_app import PLAN, _run, charts_by_key
    at = _run(PLAN, {"p": "deepseek-v3-h800-2048"})
    specs = charts_by_key(at)
    titles = [s["title"] for s in specs if isinstance(s.get("title"), dict)]
    goodput = [t for t in titles if t.get("text") == "Goodput vs checkpoint interval"]
    assert len(goodput) == 1
    assert goodput[0]["subtitle"] == ["◆ optimum  ○ in use",
                                      "no ◆: best at the longest interval shown, i.e. not saving that tier"]
    for t in titles:
        sub = t.get("subtitle")
        for line in ([sub] if isinstance(sub, str) else sub or []):
            assert len(line) <= 70, line


# ---- F9: evaluate's JSON and CSV carry the capacities `fits` and `host_fits` compare with ----------

def test_f9_json_and_csv_have_the_usable_hbm_and_the_host_memory():
    import json

    import pandas as pd
    # the default preset runs on a DGX H100: hardware/accelerators.json gives the H100 SXM 80 GB
    # 85,520,809,984 B of usable HBM (79.65 GiB of its 80 GiB), hardware/systems.json the DGX H100
    # 2 TiB = 2 × 2⁴⁰ B of host memory per node (sources nv-basepod; nv-dgxh100-ug)
    usable, host = 85_520_809_984.0, 2.0 * 2**40
    rc, out, err = _cli("evaluate", "--preset", "default", "--format", "json")
    assert rc == 0, err
    d = json.loads(out)
    r = d["results"]
    assert r["hbm_usable_bytes"] == usable and r["host_mem_capacity_per_node_bytes"] == host
    assert r["fits"] == (r["mem_total_bytes"] <= r["hbm_usable_bytes"])  # recomputable from the JSON now
    assert r["host_fits"] == (r["host_mem_per_node_bytes"] <= r["host_mem_capacity_per_node_bytes"])
    assert "fits = mem_total_bytes ≤ hbm_usable_bytes" in d["explain"]["hbm_usable_bytes"]
    assert "host_fits = host_mem_per_node_bytes ≤ host_mem_capacity_per_node_bytes" in \
        d["explain"]["host_mem_capacity_per_node_bytes"]
    rc, out, err = _cli("evaluate", "--preset", "default", "--format", "csv")
    assert rc == 0, err
    row = pd.read_csv(io.StringIO(out)).iloc[0]
    assert row["hbm_usable_bytes"] == usable and row["host_mem_capacity_per_node_bytes"] == host
    # nothing renamed or dropped: every column of the engine's results is still there
    import planner
    assert set(planner.evaluate(planner.load_preset("default")).results) <= set(row.index)


def test_f9_an_override_is_the_capacity_written():
    import json
    # 70 GiB = 70 × 2³⁰ = 75,161,927,680 B; 512 GiB = 549,755,813,888 B
    rc, out, err = _cli("evaluate", "--preset", "default", "--format", "json",
                        "--set", "cluster.overrides.hbm_usable_bytes=75161927680",
                        "--set", "cluster.overrides.host_memory_bytes=549755813888")
    assert rc == 0, err
    r = json.loads(out)["results"]
    assert r["hbm_usable_bytes"] == 75_161_927_680.0 and r["host_mem_capacity_per_node_bytes"] == 549_755_813_888.0


def test_f9_readme_documents_the_capacity_keys():
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert "`hbm_usable_bytes`" in text and "`host_mem_capacity_per_node_bytes`" in text


@pytest.mark.parametrize("arg, expected", [
    ("training=4", "training: must be an object (JSON {…}) of its fields: cross_entropy, elementwise, "),
    ("checkpoint=null", "checkpoint: must be an object (JSON {…}) of its fields: async, "),
    ("model.moe=4", "model.moe: must be an object (JSON {…}) of its fields: capacity_factor, "),
    ("parallelism.tp=2.5", "parallelism.tp: must be a whole number, allowed 1 to 10,000,000 (got 2.5)"),
    ("parallelism.tp=null", "parallelism.tp: must be a whole number, allowed 1 to 10,000,000 (got null)"),
])
def test_h29c_f3_no_class_names_and_one_wording_for_a_wrong_kind(arg, expected):
    """Review h29c F-3: "--set training=4" said "Input should be a valid dictionary or instance of
    Training" (a class the user never sees) and tp=null "Input should be a valid integer" beside
    tp=true's "must be a number". The schema's field names are the allowed keys (planner/schema.py)."""
    from planner.cli import main
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(["evaluate", "--preset", "default", "--set", arg])
    assert rc == 2
    assert expected in err.getvalue()
    assert "instance of" not in err.getvalue() and "Input should" not in err.getvalue()


def test_h29c_f4_the_pages_validation_spells_json_values():
    """Review h29c F-4: the Plan page's own check of an imported / linked scenario said "(got None)"
    where the CLI says "(got null)"."""
    from app_pages import _common as C
    import planner

    sj = planner.load_preset("default").model_dump(mode="json")
    sj["parallelism"]["tp"] = None
    _, errs = C.validate(sj)
    assert any(e.startswith("parallelism.tp: must be a whole number") and e.endswith("(got null)") for e in errs), errs
