"""The pipeline: a batch of N equals N single evaluations; every stage is wired in."""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import planner
from planner import engine
from planner.schema import Scenario


def test_every_stage_module_exists():
    for name in engine.STAGE_MODULES:
        mod = importlib.import_module(f"planner.{name}")
        assert callable(mod.stage), name


def test_report_has_design_result_columns():
    r = planner.evaluate(planner.load_preset("default"))
    missing = [c for c in engine.RESULT_COLUMNS if c not in r.results]
    assert not missing, missing
    assert r.params_total == r.results["params_total"]
    assert len(r.stages) == 4  # pp = 4: every pipeline stage reported


# A strategy of valid scenarios: presets with random splits that satisfy the schema's rules.
@st.composite
def scenarios(draw):
    model = draw(st.sampled_from(["llama3-8b", "llama2-13b", "mixtral-8x7b", "gpt3-175b"]))
    tp = draw(st.sampled_from([1, 2, 4, 8]))
    pp = draw(st.sampled_from([1, 2, 4]))
    cp = draw(st.sampled_from([1, 2]))
    dp = draw(st.sampled_from([1, 2, 4, 8]))
    mbs = draw(st.sampled_from([1, 2]))
    n_mb = draw(st.sampled_from([4, 8]))
    ep = draw(st.sampled_from([1, 2, 4, 8])) if model == "mixtral-8x7b" else 1
    if (dp * cp) % ep:
        ep = 1
    system = draw(st.sampled_from(["dgx-h100", "dgx-a100-80gb", "gb200-nvl72"]))
    precisions = ["bf16"] if system == "dgx-a100-80gb" else ["bf16", "fp8"]  # A100: no fp8 units
    d = {
        "model": model,
        "cluster": {"system": system, "n_gpus": tp * pp * cp * dp},
        "training": {"seq_len": draw(st.sampled_from([2048, 4096])), "global_batch_size": mbs * dp * n_mb,
                     "micro_batch_size": mbs, "precision": draw(st.sampled_from(precisions))},
        "parallelism": {"tp": tp, "pp": pp, "cp": cp, "ep": ep,
                        "zero_stage": draw(st.sampled_from([0, 1, 2, 3])),
                        "recompute": draw(st.sampled_from(["none", "selective", "full", "op_sac"])),
                        "sequence_parallel": draw(st.booleans()),
                        "offload_optimizer": draw(st.sampled_from(["none", "cpu"])),
                        "layer_split": "uneven"},
        "checkpoint": {"tiers": draw(st.sampled_from([
            [{"tier": "pfs"}], [{"tier": "host_memory"}, {"tier": "pfs", "interval_s": 3600}],
            [{"tier": "local_nvme"}, {"tier": "object_store"}]]))},
    }
    return Scenario.model_validate(d)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(scenarios(), min_size=1, max_size=5))
def test_batch_of_n_equals_n_single_evaluations(batch):
    table = planner.evaluate_many(batch)
    assert len(table) == len(batch)
    for i, s in enumerate(batch):
        single = planner.evaluate(s).results
        for col in engine.RESULT_COLUMNS:
            a, b = table[col].iloc[i], single[col]
            if isinstance(b, bool):
                assert bool(a) == b, col
            else:
                assert np.isclose(a, b, rtol=1e-12, equal_nan=True), (col, a, b)


def test_evaluate_many_from_dotted_dataframe():
    df = pd.DataFrame({
        "model": ["llama3-8b", "llama3-8b"],
        "cluster.system": ["dgx-h100", "dgx-h100"],
        "cluster.n_gpus": [8, 16],
        "parallelism.tp": [8, 8],
        "training.global_batch_size": [64, 64],
    })
    t = planner.evaluate_many(df)
    assert list(t["dp"]) == [1, 2]
    assert t["params_total"].iloc[0] == t["params_total"].iloc[1]


def test_evaluate_many_rejects_bad_rows_with_the_field():
    with pytest.raises(Exception) as ei:
        planner.evaluate_many([{"model": "llama3-8b", "cluster": {"system": "dgx-h100", "n_gpus": 7},
                                "parallelism": {"tp": 8}}])
    assert "n_gpus" in str(ei.value)


@pytest.mark.parametrize("fn", ["evaluate", "sweep", "simulate"])
def test_public_api_errors_are_one_line_naming_the_field(fn):
    """Bad input to the Python API raises planner.InputError (a ValueError): one line naming
    the field, the value and what is allowed, none of pydantic's internals (review finding:
    the raw ValidationError ran to 7 lines with input_value dumps and a URL)."""
    d = planner.load_preset("default").to_json_dict()
    d["cluster"]["system"] = "dgx1-v100"  # no BF16 units; the default precision is bf16
    with pytest.raises(planner.InputError) as ei:
        getattr(planner, fn)(d)
    msg = str(ei.value)
    assert "\n" not in msg and "pydantic" not in msg and "input_value" not in msg
    assert msg.startswith("training.precision = 'bf16' is not supported by NVIDIA Tesla V100") and "fp16" in msg
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"].update(tp=8, pp=4, cp=1, dp=32)
    d["cluster"]["n_gpus"] = 512
    if fn == "sweep":  # a sweep replaces the split, as `planner sweep` does (review 44a): it says so
        with pytest.warns(UserWarning, match=r"tp·pp·cp·dp = 8·4·1·32 = 1024 ≠ cluster.n_gpus = 512\); the sweep "
                                             r"replaces the split"):
            planner.sweep(d, top=1)
    else:
        with pytest.raises(ValueError, match=r"tp·pp·cp·dp = 8·4·1·32 = 1024 ≠ cluster.n_gpus = 512"):
            getattr(planner, fn)(d)
    with pytest.raises(planner.InputError) as ei:
        getattr(planner, fn)({})
    # each says what it takes (review 48g: "Field required" alone)
    assert [x.split(" (")[0] for x in ei.value.lines] == ["model: Field required", "cluster: Field required"]
    assert "a catalogue model id" in ei.value.lines[0] and "system (a catalogue id) and n_gpus" in ei.value.lines[1]
    # an unknown key is named even when it is 'str' (a union tag inside pydantic's locations)
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"]["str"] = 1
    with pytest.raises(planner.InputError, match=r"^parallelism\.str: unknown field; allowed: attention_kernel"):
        getattr(planner, fn)(d)


def test_chunked_run_equals_one_pass():
    """Rows are independent: cutting a mixed batch into chunks gives the same columns."""
    from planner import batch as B

    names = list(planner.list_presets())
    b = B.from_scenarios([planner.load_preset(n) for n in names] * 2)
    one = engine.run_batch(b, chunk_rows=10_000)
    seen = []
    chunked = engine.run_batch(b, chunk_rows=3, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (len(names) * 2, len(names) * 2)
    assert set(one) == set(chunked)
    for k in one:
        if one[k].dtype.kind in "fc":
            np.testing.assert_allclose(chunked[k], one[k], rtol=1e-12, equal_nan=True, err_msg=k)
        else:
            np.testing.assert_array_equal(chunked[k], one[k], err_msg=k)


def test_every_preset_fits():
    """The presets reproduce runs that trained on real hardware (or are sensible plans)."""
    for name in planner.list_presets():
        r = planner.evaluate(planner.load_preset(name)).results
        assert r["fits"], (name, r["mem_total_bytes"] / 2**30)


def test_api_messages_for_misused_calls_name_the_call():
    import planner
    with pytest.raises(planner.InputError, match="evaluate_many: give a list of scenarios"):
        planner.evaluate_many(planner.load_preset("default"))
    with pytest.raises(ValueError, match="load_preset: give a scenario preset id as a string"):
        planner.load_preset(None)
    with pytest.raises(planner.InputError, match="no file given"):
        planner.model_from_hf_config("")


def test_evaluate_many_and_load_preset_raise_input_error_with_lines():
    # found by a fresh-user review: these raised a plain ValueError without .lines
    import planner

    for call, first in ((lambda: planner.evaluate_many([]), "evaluate_many: no scenarios"),
                        (lambda: planner.load_preset("nope"), "preset: unknown scenario id 'nope'"),
                        (lambda: planner.evaluate_many([planner.load_preset("default"), {"model": "x"}]), "row 1: ")):
        with pytest.raises(planner.InputError) as e:
            call()
        assert e.value.lines[0].startswith(first)


def test_a_scenario_object_changed_after_validation_is_validated_again():
    """Review 2026-11-30: evaluate returned MFU 0.13 for tp = 3 set on a loaded Scenario (the
    dict path refuses it), and n_gpus = 0 raised ZeroDivisionError."""
    s = planner.load_preset("default")
    s.parallelism.tp = 3
    with pytest.raises(planner.InputError, match="tp"):
        planner.evaluate(s)
    with pytest.raises(planner.InputError, match="row 0: .*tp"):
        planner.evaluate_many([s])
    s = planner.load_preset("default")
    s.cluster.n_gpus = 0
    with pytest.raises(planner.InputError, match="cluster.n_gpus"):
        planner.evaluate(s)


@pytest.mark.parametrize("items", [None, 5, b"x"])
def test_evaluate_many_refuses_what_is_not_a_list(items):
    with pytest.raises(planner.InputError, match="give a list of scenarios"):
        planner.evaluate_many(items)


def test_evaluate_many_names_an_unknown_column():
    with pytest.raises(planner.InputError, match="columns: unknown 'nope'"):
        planner.evaluate_many([planner.load_preset("default")], columns=["mfu", "nope"])
    df = planner.evaluate_many([planner.load_preset("default")], columns=["mfu"])
    assert list(df.columns) == ["name", "mfu"]


def test_evaluate_many_refuses_a_table_of_batch_columns():
    """Found by review: a DataFrame of the engine's batch columns ran unvalidated (tp = 0 gave a
    NaN step time, n_gpus = 0 an infinite MFU). Every input passes through the schema."""
    from planner import batch as B
    df = pd.DataFrame(B.from_scenarios([planner.load_preset("default")]))
    df["tp"] = 0
    with pytest.raises(planner.InputError, match="batch columns"):
        planner.evaluate_many(df)
