"""Review 46 (2026-12-07): fixes found by the session's reviewers and the items left by
session 45, each checked against a hand calculation, a source, or the other surface that
already behaves as asked."""
import importlib

import pytest

import planner

sweep_mod = importlib.import_module("planner.sweep")


# --------------------------------------------------------------------------------------
# 46: whole-number floats in the API's counts, as pydantic reads the scenario's int fields
# --------------------------------------------------------------------------------------

def test_whole_number_float_counts_are_read_as_integers():
    """The scenario's integer fields take ``tp=8.0`` (pydantic lax mode), and the CLI reads
    ``--trials 1e3`` as 1,000; ``simulate(n_trials=1e3)`` was refused (session 45's note). Now
    the same trials and seed as floats give the identical table; a fraction is still refused."""
    d = planner.load_preset("default").model_dump()
    a = planner.simulate(d, n_trials=2e2, seed=3.0)
    b = planner.simulate(d, n_trials=200, seed=3)
    assert len(a) == 200 and a.equals(b)
    for bad in (100.5, float("nan"), float("inf"), 1e300, True, "100"):
        with pytest.raises(planner.InputError, match="n_trials: an integer from 1"):
            planner.simulate(d, n_trials=bad)
    with pytest.raises(planner.InputError, match="seed: an integer from 0"):
        planner.simulate(d, n_trials=10, seed=0.5)
    t5 = planner.sweep(d, top=5.0, chunk_size=1e5)
    assert len(t5) == 5 and t5.equals(planner.sweep(d, top=5, chunk_size=100_000))
    with pytest.raises(planner.InputError, match="top = 2.5"):
        planner.sweep(d, top=2.5)


# --------------------------------------------------------------------------------------
# 46c: CDNA3 FP8 GEMMs at their measured MAMF
# --------------------------------------------------------------------------------------

def test_cdna3_fp8_mamf_fraction_is_the_published_hipblaslt_figure():
    """hipBLASLt FP8 GEMM on Azure ND MI300X v5 (samuel-bohman/AI-benchmarking-guide,
    Azure_Results/ND_MI300X_v5_results.md): 1,159.23 TFLOP/s at 8192^3 over the dense FP8 peak
    2,614.9 (../shared/reference/hardware.md §2) = 0.4433; the 16-bit fraction stays MI325X's
    784.9 / 1,307.4 = 0.600."""
    import json
    from pathlib import Path
    cal = json.loads((Path(__file__).resolve().parent.parent / "hardware" / "calibration.json").read_text())
    frac = cal["mamf_frac"]["value"]["cdna3"]
    assert frac["fp8"] == pytest.approx(1159.23 / 2614.9, abs=5e-4)
    assert frac["16bit"] == pytest.approx(784.9 / 1307.4, abs=5e-4)


def test_cdna3_fp8_gemm_time_scales_with_the_mamf_fraction():
    """An FP8 GEMM on MI325X runs at 2 × the 16-bit peak × 0.443 / 0.600 of the 16-bit speed
    (CDNA3 keeps its 16-bit fitted scale for FP8, review 19), so a compute-bound MLP GEMM takes
    0.600 / (2 × 0.443) = 0.677 of its BF16 time: Llama 3 70B's per-layer MLP forward, read off
    the explain string, 2.19 ms in BF16 → 1.48 ms in FP8 (1.48 / 2.19 = 0.676)."""
    import re
    tm = importlib.import_module("planner.timing")
    s16, s8 = tm._family_scales(tm._calibration())
    fam = list(tm.FAMILIES).index("cdna3")
    assert s8[fam] == s16[fam]
    d = planner.load_preset("llama3-70b-h100-1024").to_json_dict()
    d["cluster"]["system"] = "mi325x-8"
    mlp, frac = {}, {}
    for prec in ("bf16", "fp8"):
        d["training"]["precision"] = prec
        text = planner.evaluate(d).explain["t_compute_s"]
        mlp[prec] = float(re.search(r"MLP ([0-9.]+) ms", text).group(1))
        frac[prec] = float(re.search(r"MAMF fraction ([0-9.]+)", text).group(1))
    assert frac == {"bf16": 0.6, "fp8": 0.443}
    assert mlp["fp8"] / mlp["bf16"] == pytest.approx(0.600 / (2 * 0.443), rel=0.01)


# --------------------------------------------------------------------------------------
# 46a: the price note quotes the price's own words; a fleet of another family is said
# --------------------------------------------------------------------------------------

def test_price_note_quotes_the_price_sentence_with_readable_amounts():
    """hardware/accelerators.json gb200 notes: "Price: no cloud figure collected (rack ~$3M
    estimate, press-est); proxy = B200 2026 midpoint $4.875 (U). Attention knee: ..." — the note
    quotes the first sentence only, "$3M" as "3M USD" (it read "~3 USDM" and went on through the
    attention knee and the MAMF)."""
    from planner import catalog, cost
    keys = list(catalog.accelerators())
    t = cost._catalogue_price_text({"accelerator_index": keys.index("gb200")})
    assert t.endswith("“Price: no cloud figure collected (rack ~3M USD estimate, press-est); proxy = B200 2026 "
                      "midpoint 4.875 USD (U).”")
    assert "3-4M USD" in cost._catalogue_price_text({"accelerator_index": keys.index("gb300")})
    assert "8-card kit 65k USD / 8" in cost._catalogue_price_text({"accelerator_index": keys.index("gaudi2")})
    assert "the A100 entry's 2.97 USD, U." in cost._catalogue_price_text({"accelerator_index": keys.index("a800-sxm-80gb")})
    for k in keys:
        text = cost._catalogue_price_text({"accelerator_index": keys.index(k)})
        assert "Attention knee" not in text and "MAMF" not in text and not __import__("re").search(r"USD[kM]", text), k


def test_proxy_prices_name_their_proxy_in_the_source():
    """../shared/reference/hardware.md §4 has no cloud price for GB200 / GB300 NVL72 ("—"): the
    catalogue's price is a proxy, and its source says so as the MI350X's does."""
    from planner import catalog
    accs = catalog.accelerators()
    for k in ("gb200", "gb300", "gh200-96gb", "gh200-144gb", "h800-sxm-80gb", "h100-pcie-80gb", "a100-sxm-80gb",
              "mi355x", "mi250x", "mi350x", "mi250x-gcd"):
        assert "proxy" in accs[k].sources["price_per_gpu_hour_usd"], k
        assert "proxy" in accs[k].notes, k  # the notes give the same


def test_fleet_of_another_family_gets_a_note():
    """The default profile is Llama 3's H100 fleet: on an MI300X system the rates are taken as
    given and a note says so; on the H100 system, none."""
    d = planner.load_preset("default").to_json_dict()
    key = "measured on a hopper fleet"
    assert not any(key in n for n in planner.evaluate(d).notes)
    d["cluster"]["system"] = "mi300x-8"
    notes = [n for n in planner.evaluate(d).notes if key in n]
    assert len(notes) == 1 and "cdna3" in notes[0] and "as given" in notes[0]
    d["reliability"]["profile"] = "rsc-a100"
    assert any("measured on an ampere fleet" in n for n in planner.evaluate(d).notes)


# --------------------------------------------------------------------------------------
# 46b: bad input on the API and CLI
# --------------------------------------------------------------------------------------

_BASE = {"cluster.system": "dgx-h100", "cluster.n_gpus": 1024, "parallelism.tp": 8, "parallelism.pp": 4,
         "parallelism.vpp": 5, "parallelism.schedule": "interleaved"}


@pytest.mark.parametrize("order", ["id first", "field first"])
def test_evaluate_many_edits_a_catalogue_model_as_set_does(order):
    """A table with a ``model`` id column and ``model.n_layers`` beside it: the id's architecture
    with 40 layers, as ``--set model.n_layers=40`` gives (it was a TypeError with the id first and
    80 layers, the edit dropped, with the field first)."""
    import pandas as pd
    row = {"model": "llama3-70b", "model.n_layers": 40} if order == "id first" else \
        {"model.n_layers": 40, "model": "llama3-70b"}
    r = planner.evaluate_many(pd.DataFrame([{**row, **_BASE}]))
    assert r["n_dense_layers"].iloc[0] == 40


def test_evaluate_many_table_errors_name_the_row_and_the_field():
    import pandas as pd
    with pytest.raises(planner.InputError, match=r"row 0: model.n_layers: model = 'nope' is not a catalogue id"):
        planner.evaluate_many(pd.DataFrame([{"model": "nope", "model.n_layers": 40, **_BASE}]))
    with pytest.raises(planner.InputError, match=r"column 'parallelism.tp' given more than once"):
        planner.evaluate_many(pd.DataFrame([[8, 4]], columns=["parallelism.tp", "parallelism.tp"]))
    for bad in (5, [1, 2]):
        with pytest.raises(planner.InputError, match=r"evaluate_many: columns = "):
            planner.evaluate_many(pd.DataFrame([{"model": "llama3-70b", **_BASE}]), columns=bad)
    assert planner.evaluate_many(pd.DataFrame([{"model": "llama3-70b", **_BASE}]),
                                 columns=("step_time_s",)).columns.tolist() == ["name", "step_time_s"]


@pytest.mark.parametrize("cell", ["inf", "-inf", "1e999"])
def test_zero_stage_infinite_is_a_named_error_not_an_overflow(cell):
    from planner import validation
    with pytest.raises(ValueError, match=r"zero_stage '.*': expected 0"):
        validation.parse_zero_stage(cell)


def test_hf_config_text_is_read_as_a_file_is():
    """docs/inputs.md: a config.json naming a key twice is refused; given as text it was read,
    the last value winning. A byte-order mark is skipped; a list is not a config."""
    from pathlib import Path
    text = (Path(__file__).resolve().parent / "data" / "hf_configs14" / "llama31_8b.json").read_text()
    with pytest.raises(planner.InputError, match="key 'num_hidden_layers' given twice"):
        planner.model_from_hf_config(text[: text.rindex("}")] + ', "num_hidden_layers": 80}')
    assert planner.model_from_hf_config("\ufeff" + text).n_layers == 32
    with pytest.raises(planner.InputError, match="expected a JSON object"):
        planner.model_from_hf_config("[1, 2]")
    import json
    cfg = json.loads(text)
    with pytest.raises(planner.InputError, match="hidden_act: expected a string"):
        planner.import_hf_config({**cfg, "hidden_act": 5})


def _cli(*argv):
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-m", "planner", *argv], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def test_cli_option_given_twice_is_refused_and_set_repeats():
    rc, out, err = _cli("evaluate", "--preset", "default", "--preset", "mpt-7b-a100-8")
    assert rc == 2 and "--preset: given twice ('default', then 'mpt-7b-a100-8'); give it once" in err and not out
    rc, _, err = _cli("simulate", "--preset", "default", "--trials", "100", "--trials=200")
    assert rc == 2 and "--trials: given twice (100, then 200)" in err
    rc, out, _ = _cli("evaluate", "--preset", "default", "--set", "parallelism.tp=4", "--set", "parallelism.pp=8",
                      "--format", "json")
    import json
    assert rc == 0 and json.loads(out)["scenario"]["parallelism"]["pp"] == 8


def test_link_base_url_of_another_page_is_refused():
    rc, out, err = _cli("link", "--preset", "default", "--base-url", "http://x/compare")
    assert rc == 2 and not out and "Compare page's path" in err and "'http://x/'" in err


# --------------------------------------------------------------------------------------
# 46d: ckj takes the ranges ck takes; Compare states the simplifications; an empty link slot
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("tier", [
    {"tier": "pfs", "interval_s": 0.01}, {"tier": "pfs", "interval_s": 1e12}, {"tier": "pfs", "interval_s": 600,
                                                                               "replicas": 5000}])
def test_ckj_out_of_range_is_warned_and_the_base_kept(tier):
    """docs/ui.md: a link value takes the Plan page's range (intervals 0.6 s to 6·10⁸ s, peer
    copies 0 to 1,000), refused with a warning and the base value kept — as ``ck`` does."""
    import json
    from planner import share
    base, _ = share.params_to_scenario({"p": "default"})
    sj, warns = share.params_to_scenario({"p": "default", "ckj": json.dumps([tier])})
    assert len(warns) == 1 and "allowed" in warns[0] and warns[0].endswith("kept the base value")
    assert sj["checkpoint"] == base["checkpoint"]
    ok, warns = share.params_to_scenario({"p": "default", "ckj": json.dumps([{"tier": "pfs", "interval_s": 600}])})
    assert not warns and ok["checkpoint"]["tiers"][0]["interval_s"] == 600


def test_compare_lists_each_scenarios_stated_simplifications():
    """The GB200 preset's 4-GPU-tray note (review h30a C3) is on the Plan page; Compare now lists it
    under its scenario, and the notes every scenario shares once."""
    from test_app import COMPARE, _run
    at = _run(COMPARE, {"c_n": "2", "c_src1": "default", "c_src2": "qwen3-235b-gb200-256"})
    (exp,) = [e for e in at.expander if e.label == "Stated simplifications per scenario"]
    text = "\n".join(m.value for m in exp.markdown)
    rep = planner.evaluate(planner.load_preset("qwen3-235b-gb200-256"))
    tray = [n for n in rep.notes if "measured on 8-GPU nodes" in n]
    assert tray and tray[0] in text
    assert "**Every scenario**" in text


def test_compare_empty_link_slot_stays_empty_in_its_link():
    from test_app import COMPARE, _run
    at = _run(COMPARE, {"c_n": "2", "c_src1": "default", "c_src2": "link"})
    q = {k: at.query_params[k] for k in at.query_params}
    assert q["c_src2"] in ("link", ["link"]) and not any(k.startswith("2.") for k in q)
    assert any("No link pasted yet" in c.value for c in at.caption)


# --------------------------------------------------------------------------------------
# 46e: the session's diff review
# --------------------------------------------------------------------------------------

def test_inline_accelerator_price_is_its_own_not_the_catalogues():
    d = planner.load_preset("default").to_json_dict()
    acc = planner.catalog.accelerators()["h100-sxm-80gb"].model_dump(mode="json", by_alias=True)
    d["cluster"]["accelerator"] = {**acc, "price_per_gpu_hour_usd": 3.0}
    (note,) = [n for n in planner.evaluate(d).notes if n.startswith("Price per GPU-hour")]
    assert note.startswith("Price per GPU-hour 3 USD: the scenario's inline accelerator's own") and \
        "the catalogue's figure for" not in note


def test_hf_config_path_starting_with_a_bracket_is_a_file(tmp_path):
    from pathlib import Path
    src = Path(__file__).resolve().parent / "data" / "hf_configs14" / "llama31_8b.json"
    f = tmp_path / "[v2]config.json"
    f.write_text(src.read_text())
    assert planner.model_from_hf_config(str(f)).n_layers == 32


@pytest.mark.parametrize(("kw", "want"), [({"zero_stages": 2.0}, None), ({"zero_stages": None}, None),
                                          ({"zero_stages": 2.5}, r"zero_stages \[2.5\]: allowed: 0, 1, 2, 3"),
                                          ({"recompute": 1.5}, r"recompute \[1.5\]: allowed"),
                                          ({"zero_stages": object()}, r"zero_stages = .*: give one value or a list")])
def test_sweep_option_scalars_of_any_type(kw, want):
    d = planner.load_preset("default").to_json_dict()
    if want is None:
        t = planner.sweep(d, top=3, **kw)
        assert len(t) == 3
        if kw["zero_stages"] is not None:
            assert set(t["zero_stage"]) == {2}
    else:
        with pytest.raises(planner.InputError, match=want):
            planner.sweep(d, top=3, **kw)


def test_ckj_range_message_quotes_the_value_as_given():
    import json
    from planner import share
    _, w = share.params_to_scenario({"p": "default", "ckj": json.dumps([{"tier": "pfs", "interval_s": 0.5999999}])})
    assert "interval_s = 0.5999999: allowed 0.6" in w[0]


def test_link_base_url_advice_is_one_address_that_works():
    rc, out, err = _cli("link", "--preset", "default", "--base-url", "http://h:1/compare?x=1")
    assert rc == 2 and "give the dashboard's address only, 'http://h:1/'" in err
    rc, out, _ = _cli("link", "--preset", "default", "--base-url", "http://h:1/")
    assert rc == 0 and out.startswith("http://h:1/?p=default")


def test_set_of_one_path_twice_is_refused():
    rc, out, err = _cli("evaluate", "--preset", "default", "--set", "parallelism.tp=4", "--set", "parallelism.tp=8")
    assert rc == 2 and "--set parallelism.tp: given twice ('4', then '8'); give it once" in err and not out
    rc, _, err = _cli("evaluate", "--preset", "default", "--set", "checkpoint.tiers[0].interval_s=60",
                      "--set", "checkpoint.tiers.0.interval_s=70")
    assert rc == 2 and "checkpoint.tiers.0.interval_s: given twice" in err
