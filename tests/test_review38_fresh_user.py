"""Review 38: defects a fresh user found (from a clean clone, README only), each pinned here.

1. ``evaluate_many``'s table had an ``etp`` column only when some row ran its experts at a TP
   other than the row's TP (tests/test_review16_main.py).
2. A row's TP communication time moved by one ulp with the other rows of its batch (a partial
   recompute row elsewhere sent every row through the per-stage sums).
3. A scenario file's ``"8"`` and ``"off"`` were read as 8 and false without a word.
4. A link's ``etp`` on a dense model moved the preset's TP to it (Llama 3 70B at TP 2, out of memory).
5. ``planner.sweep(gpus=10**8)`` gave an empty table blaming the batch; the CLI says the range.
6. A CSV row without a sequence length was "architecture not published: seq_len".
"""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest

import planner
from planner import share
from planner.schema import COUNT_MAX, Scenario
from tests.test_cli import run

# The reviewer's pair (random valid scenarios): A a DualPipe MoE row without partial recompute,
# B a dense row with one layer of full recompute per chunk (partial recompute).
_A = {"model": "deepseek-v3",
      "training": {"seq_len": 2048, "global_batch_size": 1024, "micro_batch_size": 2, "precision": "fp16",
                   "tokens_total": 1e9},
      "parallelism": {"tp": 2, "pp": 12, "cp": 1, "ep": 4, "vpp": 1, "sequence_parallel": True, "zero_stage": 3,
                      "recompute": "none", "schedule": "dualpipe", "offload_optimizer": "cpu", "offload_grads": True,
                      "flash_attention": True, "attention_kernel": "flash2", "ep_dispatch_fp8": True,
                      "layer_split": "uneven"},
      "cluster": {"system": "dgx1-v100", "n_gpus": 384,
                  "overrides": {"price_per_gpu_hour_usd": 2.0, "host_memory_bytes": 107374182.4}}}
_B = {"model": "mpt-7b",
      "training": {"seq_len": 17, "global_batch_size": 16, "micro_batch_size": 2, "precision": "bf16",
                   "cross_entropy": "eager", "tokens_total": 1e6},
      "parallelism": {"tp": 1, "pp": 1, "zero_stage": 2, "recompute": "full", "recompute_layers": 1,
                      "offload_activations": True, "flash_attention": False},
      "cluster": {"system": "hgx-h100-96gb-hbm2e", "n_gpus": 4, "overrides": {"nic_bw_per_gpu_bytes_per_s": 1e8}}}


def _same(x, y) -> bool:
    return bool(x == y or (isinstance(x, float) and isinstance(y, float) and np.isnan(x) and np.isnan(y)))


def test_a_row_gives_the_same_bits_alone_and_beside_a_partial_recompute_row():
    alone = planner.evaluate_many([_A])
    pair = planner.evaluate_many([_A, _B])
    assert "recompute_layers" in _B["parallelism"]  # B is the partial-recompute row
    diff = [c for c in alone.columns if c in pair.columns and alone[c].dtype.kind in "fiub"
            and not _same(alone[c].iloc[0], pair[c].iloc[0])]
    assert diff == []
    # and the partial row too, alone and second in the batch
    b_alone = planner.evaluate_many([_B])
    assert [c for c in b_alone.columns if b_alone[c].dtype.kind in "fiub"
            and not _same(b_alone[c].iloc[0], pair[c].iloc[1])] == []


def test_batch_independence_over_presets_with_a_partial_recompute_row():
    presets = ["default", "mixtral-8x7b-h100-64", "llama3-8b-h100-64", "deepseek-v3-h800-2048"]
    rows = [planner.load_preset(p) for p in presets]
    alone = planner.evaluate_many(rows)
    mixed = planner.evaluate_many(rows + [_B])
    for c in ("step_time_s", "t_tp_comm_s", "t_ep_comm_s", "t_compute_s", "t_pp_bubble_s"):
        assert list(alone[c]) == list(mixed[c].iloc[:len(rows)]), c


LAX = {"model": "llama3-8b", "cluster": {"system": "dgx-h100", "n_gpus": "8"},
       "training": {"seq_len": "4096"},
       "parallelism": {"sequence_parallel": "no", "flash_attention": "off", "tp": "1"}}


def test_a_scenario_file_with_text_for_numbers_and_booleans_is_refused(tmp_path):
    f = tmp_path / "lax.json"
    f.write_text(json.dumps(LAX))
    rc, out, err = run("evaluate", str(f))
    assert rc == 2 and "Traceback" not in err and out == ""
    assert "cluster.n_gpus: must be a whole number, allowed 1 to 10,000,000 (got the text '8')" in err
    assert "training.seq_len: must be a whole number" in err and "(got the text '4096')" in err
    assert "parallelism.sequence_parallel: must be true or false (got 'no')" in err
    assert "parallelism.flash_attention: must be true or false (got 'off')" in err


@pytest.mark.parametrize("field, value", [("flash_attention", 0), ("flash_attention", "true"),
                                          ("sequence_parallel", 1), ("tp_comm_overlap", "yes")])
def test_the_api_refuses_a_boolean_written_otherwise(field, value):
    d = {"model": "llama3-8b", "cluster": {"system": "dgx-h100", "n_gpus": 8}, "parallelism": {field: value}}
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(d)
    assert f"parallelism.{field}: must be true or false (got {value!r})" in str(e.value)


def test_real_numbers_and_booleans_still_pass_and_set_still_reads_json():
    s = Scenario.model_validate({"model": "llama3-8b", "cluster": {"system": "dgx-h100", "n_gpus": 8},
                                 "training": {"seq_len": 4096, "tokens_total": 1e12},
                                 "parallelism": {"flash_attention": False, "sequence_parallel": True}})
    assert s.cluster.n_gpus == 8 and s.parallelism.flash_attention is False
    assert s.training.tokens_total == 1e12
    rc, out, err = run("evaluate", "--preset", "llama3-8b-h100-64", "--set", "parallelism.flash_attention=false",
                       "--set", "parallelism.tp=2")
    assert rc == 0, err
    assert "TP 2 ·" in out.splitlines()[0]  # --set values are JSON: 2 and false, not text


def test_an_etp_link_key_on_a_dense_model_is_dropped_not_fitted():
    sj, warnings = share.params_to_scenario({"p": "default", "etp": "2"})
    base = planner.load_preset("default").to_json_dict()
    assert sj["parallelism"]["tp"] == base["parallelism"]["tp"] == 8  # TP kept
    assert sj["parallelism"].get("etp") is None
    assert any(w.startswith("etp: dropped: expert tensor parallelism applies to MoE models only") for w in warnings)
    assert not any(w.startswith("tp=") for w in warnings)
    # etp equal to the dense model's TP changes nothing and says nothing
    sj2, w2 = share.params_to_scenario({"p": "default", "etp": "8"})
    assert sj2["parallelism"]["tp"] == 8 and not any("etp" in w for w in w2)


def test_an_etp_link_key_on_an_moe_model_still_wins():
    sj, warnings = share.params_to_scenario({"p": "mixtral-8x7b-h100-64", "etp": "2"})
    assert sj["parallelism"]["etp"] == 2 and sj["parallelism"]["tp"] % 2 == 0
    assert not any(w.startswith("etp: dropped") for w in warnings)


def test_sweep_refuses_more_gpus_than_the_schema_allows():
    s = planner.load_preset("llama3-8b-h100-64")
    with pytest.raises(planner.InputError) as e:
        planner.sweep(s, gpus=COUNT_MAX + 1, top=3)
    assert f"allowed 1 to {COUNT_MAX:,} GPUs" in str(e.value)
    with pytest.raises(planner.InputError):
        planner.sweep(s, gpus=[64, 10**8], top=3)


def test_a_csv_row_without_seq_len_names_the_sequence_length(tmp_path):
    from planner.validation import DEFAULT_CSV
    with open(DEFAULT_CSV, newline="") as fh:
        rows = list(csv.reader(fh))[:2]
    i = rows[0].index("seq_len")
    for cell in ("nan", ""):
        rows[1][i] = cell
        f = tmp_path / "bad.csv"
        with open(f, "w", newline="") as fh:
            csv.writer(fh).writerows(rows)
        rc, _out, err = run("validate", "--csv", str(f))
        assert rc == 2
        assert "seq_len not published (the sequence length in tokens" in err
        assert "architecture not published" not in err


# ---- review 38b (a second reviewer, on the fixes above) ----------------------------------------

def test_numpy_booleans_are_booleans_for_true_false_fields_and_refused_for_numbers():
    """A pandas / sweep table cell is numpy's bool: the strict rule refused it for a true/false
    field (review 38b) and let it through as 1 for a number field."""
    from planner.presets import preset_json
    sj = preset_json("default")
    sj["parallelism"]["sequence_parallel"] = np.True_
    plain = preset_json("default")
    plain["parallelism"]["sequence_parallel"] = True
    assert planner.evaluate(sj).step_time_s == planner.evaluate(plain).step_time_s
    bad = preset_json("default")
    bad["parallelism"]["tp"] = np.True_
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(bad)
    assert "parallelism.tp: must be a whole number, allowed 1 to 10,000,000 (got true)" in str(e.value)


@pytest.mark.parametrize("value, shown", [("false", "false"), ('"1"', "'1'")])
def test_zero_stage_refuses_a_boolean_or_text(value, shown):
    rc, _out, err = run("evaluate", "--preset", "default", "--set", f"parallelism.zero_stage={value}")
    assert rc == 2 and f"parallelism.zero_stage: must be 0, 1, 2 or 3 (got {shown})" in err


def test_an_inline_accelerators_peak_as_text_is_refused():
    from planner import catalog
    from planner.presets import preset_json
    a = catalog.accelerators()["h100-sxm-80gb"].model_dump(mode="json")
    a["peak_flop_per_s"]["bf16"] = "989400000000000.0"
    sj = preset_json("default")
    sj["cluster"]["accelerator"] = a
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(sj)
    assert "cluster.accelerator.peak_flop_per_s: bf16: a number, not the text '989400000000000.0'" in str(e.value)


def test_a_dense_row_beside_an_moe_row_gives_the_same_bits():
    """op_sac without SP on an uneven split: (c − a)·1 + a was one ulp off c in a batch with an
    MoE row (review 38b)."""
    from planner.presets import preset_json
    s = preset_json("default")
    s["model"] = "megatron-529.6b"
    s["parallelism"].update(tp=8, pp=8, cp=2, vpp=4, dp=None, schedule="interleaved", layer_split="uneven",
                            recompute="op_sac", sequence_parallel=False, tp_comm_overlap=True)
    alone = planner.evaluate_many([s])
    pair = planner.evaluate_many([s, preset_json("mixtral-8x7b-h100-64")])
    assert [c for c in alone.columns if alone[c].dtype.kind in "fiub"
            and not _same(alone[c].iloc[0], pair[c].iloc[0])] == []


def test_columns_may_name_the_name_column():
    df = planner.evaluate_many([planner.load_preset("default")], columns=["name", "tp", "mfu"])
    assert list(df.columns) == ["name", "tp", "mfu"]
    assert df["name"].iloc[0] == planner.load_preset("default").name
