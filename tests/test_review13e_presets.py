"""Review 13e: the scenario presets against the published runs they reproduce.

Each test compares a preset's headline output with a figure its run's authors published, with
the tolerance stated and justified in the docstring (mostly the accuracy band of the published
runs like it, docs/timing.md). Published values that are rows of the validation files are read
from them by ``run_id`` / ``fact_id``; the others are quoted with their source. A test here must
not be pinned to a preset's current output.
"""

import csv
import json
from pathlib import Path

import pytest

import planner

ROOT = Path(__file__).resolve().parent.parent
OUT_OF_SAMPLE = ROOT / "validation" / "out_of_sample.csv"
FACTS = ROOT.parent / "shared" / "validation" / "reliability_facts.csv"


def _row(run_id: str) -> dict:
    with OUT_OF_SAMPLE.open(newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            if r["run_id"] == run_id:
                return r
    raise AssertionError(f"{run_id} not in {OUT_OF_SAMPLE}")


def _fact(fact_id: str) -> str:
    with FACTS.open(newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            if r["fact_id"] == fact_id:
                return r["value"]
    raise AssertionError(f"{fact_id} not in {FACTS}")


def _ev(name: str, **par):
    d = planner.load_preset(name).to_json_dict()
    for path, v in par.items():
        sect, key = path.split("__")
        d[sect][key] = v
    return planner.evaluate(d).results


# ---------------------------------------------------------------------------------------
# every preset names its source


def test_every_preset_has_a_source_and_a_description():
    """House rule: every number has a source. A scenario preset carries one ``source`` for its
    inputs and a ``description`` that says which inputs were chosen; a model preset carries a
    ``source`` and the parameter count its authors published."""
    scen = json.loads((ROOT / "presets" / "scenarios.json").read_text(encoding="utf-8"))
    for pid, p in scen.items():
        if pid.startswith("_"):
            continue
        assert len(p.get("source", "")) > 20 and len(p.get("description", "")) > 20, pid
        s = p["scenario"]
        par = s["parallelism"]
        assert par["tp"] * par["pp"] * par["cp"] * par["dp"] == s["cluster"]["n_gpus"], pid
    models = json.loads((ROOT / "presets" / "models.json").read_text(encoding="utf-8"))
    for mid, m in models.items():
        if mid.startswith("_"):
            continue
        assert len(m.get("source", "")) > 20 and m.get("published_params_total", 0) > 0, mid


# ---------------------------------------------------------------------------------------
# Llama 3.1 405B on 16,384 H100 (arXiv:2407.21783)


def test_llama3_405b_throughput_and_mfu_against_table_4():
    """Llama Team, arXiv:2407.21783, Table 4 (out_of_sample.csv llama3_405b_seq8k_16384gpu): 400
    TFLOP/s per GPU, 41 % BF16 MFU on 16,384 H100 with TP 8, PP 16, DP 128. Tolerance ±10 %
    (TFLOP/s) and ±3 points (MFU): the 10th–90th percentile band of the Hopper dense runs the
    constants were never fitted on is 0.88–1.17 (0.88–1.12 before the 13 runs review 15h added)."""
    row = _row("llama3_405b_seq8k_16384gpu")
    r = _ev("llama3-405b-h100-16k")
    assert r["tflops_per_gpu"] / float(row["tflops_per_gpu"]) == pytest.approx(1.0, abs=0.10)
    assert r["mfu"] == pytest.approx(float(row["mfu_pct"]) / 100, abs=0.03)


def test_llama3_405b_gpu_hours_against_the_model_card():
    """meta-llama/llama-models models/llama3_1/MODEL_CARD.md, 'Training Time (GPU hours)': 30.84M
    H100-80GB GPU-hours for Llama 3.1 405B (39.3M is the total of the 8B, 70B and 405B rows, not
    the 405B's). The planner's GPU-hours include failures, restarts and checkpoints; the card's
    include the batch ramp and the long-context stage the preset does not model. Tolerance ±10 %
    (the throughput band of these runs, 0.88–1.17)."""
    r = _ev("llama3-405b-h100-16k")
    assert r["gpu_hours"] / 30.84e6 == pytest.approx(1.0, abs=0.10)


def test_llama3_405b_training_compute_against_the_paper():
    """arXiv:2407.21783, Sec. 1 / 3.2.1: the 405B flagship was pre-trained with 3.8 × 10^25 FLOPs
    on 15.6T tokens. The model FLOPs of a causal step (attention counted over the lower
    triangle) times the number of steps; tolerance ±10 % (the paper rounds to two digits and does
    not give its counting rule)."""
    r = _ev("llama3-405b-h100-16k")
    total = r["model_flop_per_step_causal"] * 15.6e12 / r["tokens_per_step"]
    assert total / 3.8e25 == pytest.approx(1.0, abs=0.10)


def test_llama3_405b_interruptions_and_effective_training_time():
    """arXiv:2407.21783, Sec. 3.3.4 / Table 5 (reliability_facts.csv llama3_unexpected,
    llama3_ettr): 419 unexpected interruptions in a 54-day snapshot, effective training time
    > 90 %. The llama3-h100 profile's rates are derived from that table, so the count checks the
    preset's cluster size and profile (and the Monte Carlo's failure draw), not an independent
    prediction: ±10 % on the analytic rate and on the simulated failures per day (200 runs,
    seed 0; the Poisson spread of a 54-day count is ±5 %)."""
    published = float(_fact("llama3_unexpected"))
    assert _fact("llama3_ettr").strip() == ">90"
    s = planner.load_preset("llama3-405b-h100-16k")
    r = planner.evaluate(s).results
    assert r["failure_rate_per_h"] * 54 * 24 / published == pytest.approx(1.0, abs=0.10)
    assert 0.90 < r["goodput"] < 1.0
    mc = planner.simulate(s, n_trials=200, seed=0)
    per_54_days = (mc["n_failures"] / mc["time_to_train_days"]).mean() * 54
    assert per_54_days / published == pytest.approx(1.0, abs=0.10)
    assert (mc["goodput"] > 0.90).all()


def test_llama3_405b_checkpoint_shard_inside_the_published_range():
    """arXiv:2407.21783, Sec. 3.3.4 (reliability_facts.csv llama3_ckpt_per_gpu): each GPU saves its
    own shard of the model state, '1 MB to 4 GB' per GPU."""
    assert _fact("llama3_ckpt_per_gpu") == "1 MB - 4 GB"
    r = _ev("llama3-405b-h100-16k")
    assert 1e6 <= r["ckpt_shard_bytes"] <= 4e9


# ---------------------------------------------------------------------------------------
# GPT-3 175B on 1,024 A100 (Megatron-LM README; Narayanan et al. SC'21)


def test_gpt3_175b_step_time_against_the_megatron_lm_readme():
    """NVIDIA/Megatron-LM README 'GPT-3 Example' (out_of_sample.csv
    megatronlm_readme_gpt3_175b_1024gpu_gbs1536): GPT-3 175B on 1,024 A100, batch 1,536, TP 8 x
    PP 16, fp16, full recompute, 'each iteration takes around 32 seconds'. The preset keeps PP 8
    (its source's split), so the published split is set here. Tolerance ±15 %: the Ampere dense
    band of the out-of-sample runs is 0.92–1.22 (throughput ratio, 10th–90th percentile)."""
    row = _row("megatronlm_readme_gpt3_175b_1024gpu_gbs1536")
    assert (row["tp"], row["pp"]) == ("8", "16")
    r = _ev("gpt3-175b-a100-1024", parallelism__pp=16, parallelism__dp=8)
    assert r["step_time_s"] / float(row["step_time_s"]) == pytest.approx(1.0, abs=0.15)


def test_gpt3_175b_failure_free_days_against_narayanan():
    """Narayanan et al., SC'21 / arXiv:2104.04473, Sec. 5.1: GPT-3 175B on 300B tokens with 1,024
    A100 and batch 1,536 'would take about 34 days' at 140 TFLOP/s per GPU (an estimate without
    failures: 8TP/(nX)). The preset's failure-free time (step time x steps); ±15 % as above."""
    r = _ev("gpt3-175b-a100-1024")
    steps = 300e9 / r["tokens_per_step"]
    assert r["step_time_s"] * steps / 86400 / 34 == pytest.approx(1.0, abs=0.15)


def test_gpt3_175b_failure_rate_against_the_opt_logbook():
    """The GPT-3 preset takes the OPT-175B A100 fleet profile. metaseq projects/OPT/chronicles
    (reliability_facts.csv opt_machines_down): '~2 machines go down every day' on about 128
    nodes (1,024 A100), i.e. about 2 failures a day for this 128-node job. ±25 % (the logbook's
    '~2' is a round figure)."""
    assert "2 machines go down every day" in _fact("opt_machines_down")
    r = _ev("gpt3-175b-a100-1024")
    assert r["failure_rate_per_h"] * 24 == pytest.approx(2.0, rel=0.25)


# ---------------------------------------------------------------------------------------
# MoE presets


def test_mixtral_8x7b_tflops_against_the_megatron_core_moe_readme():
    """NVIDIA/Megatron-LM megatron/core/transformer/moe/README.md: the reference mapping for
    Mixtral 8x7B on 64 H100 (TP 1, EP 8, PP 4, VP 8, MBS 1, GBS 256, seq 4,096, BF16, dropless)
    reaches '468 TFLOPS' with MCore v0.9 (438 with v0.8). Tolerance ±15 %: the MoE runs are
    over-predicted by a median +11 % (docs/timing.md), so +15 % is the edge of what is expected."""
    r = _ev("mixtral-8x7b-h100-64")
    assert r["tflops_per_gpu"] / 468 == pytest.approx(1.0, abs=0.15)


def test_deepseek_v3_gpu_hours_days_and_cost_against_the_report():
    """DeepSeek-AI, arXiv:2412.19437, Sec. 1 / Table 1: pre-training on 14.8T tokens took 2,664K
    H800 GPU-hours (180K per trillion tokens, '3.7 days on our cluster with 2048 H800 GPUs', so
    14.8 x 3.7 = 54.8 days) and cost $5.328M at the report's assumed $2 per GPU-hour (the preset's
    price override). All-in figures, compared with the planner's GPU-hours, days and cost, which
    include failures and checkpoints. Tolerance ±15 % (the MoE over-prediction, median +11 %, is
    partly offset here by the planner's failure overhead)."""
    r = _ev("deepseek-v3-h800-2048")
    assert r["gpu_hours"] / 2.664e6 == pytest.approx(1.0, abs=0.15)
    assert r["time_to_train_days"] / (14.8 * 3.7) == pytest.approx(1.0, abs=0.15)
    assert r["cost_usd"] / 5.328e6 == pytest.approx(1.0, abs=0.15)
    assert r["cost_usd"] == pytest.approx(2.0 * r["gpu_hours"], rel=1e-9)  # the report's price


def test_deepseek_v3_throughput_against_the_report():
    """out_of_sample.csv deepseekv3_671b_2048gpu_gbs15360: 1e12 / (180K GPU-h x 3,600) = 1,543
    tokens/s per GPU, an average over the whole run (batch ramp, MTP module, failures and all
    overheads included). The planner's throughput of a step without failures, MTP excluded, is
    over it, as for the other MoE runs: accepted from 0.8 to 1.25 (the MoE band's median +11 %
    plus the ~4 % of FLOPs of the MTP module and the failure overhead the average includes)."""
    row = _row("deepseekv3_671b_2048gpu_gbs15360")
    r = _ev("deepseek-v3-h800-2048")
    ratio = r["tokens_per_s"] / 2048 / float(row["tokens_per_s_per_gpu"])
    assert 0.8 <= ratio <= 1.25


def test_qwen3_235b_throughput_against_megatron_bridge():
    """NVIDIA Megatron-Bridge docs/performance-summary.md, 26.02 container, DGX-GB200 (out_of_sample.csv
    mbridge_26.02_gb200_qwen3235ba22b_256gpu_fp8mx): 5,448 tokens/s per GPU. Tolerance ±10 %: the
    Blackwell MoE runs' band is 0.95–1.62 (10th–90th percentile), this preset's layout is the row's."""
    row = _row("mbridge_26.02_gb200_qwen3235ba22b_256gpu_fp8mx")
    r = _ev("qwen3-235b-gb200-256")
    assert r["tokens_per_s"] / 256 / float(row["tokens_per_s_per_gpu"]) == pytest.approx(1.0, abs=0.10)


# ---------------------------------------------------------------------------------------
# single-node benchmark presets


def test_torchtitan_8b_memory_and_throughput_against_table_1():
    """Liang et al., arXiv:2410.06511, Table 1 row '+ torch.compile' (out_of_sample.csv
    torchtitan_h100_llama31_8b_8gpu_fsdp_compile_bf16): 6,674 tokens/s per GPU and a peak of
    77.0 GiB per GPU. ±5 % on both (the preset's inputs are that row's; TorchTitan's H100 runs
    have a median |error| of 6.6 %)."""
    row = _row("torchtitan_h100_llama31_8b_8gpu_fsdp_compile_bf16")
    r = _ev("llama31-8b-torchtitan-h100-8")
    assert r["tokens_per_s"] / 8 / float(row["tokens_per_s_per_gpu"]) == pytest.approx(1.0, abs=0.05)
    assert r["mem_total_bytes"] / 2**30 / float(row["mem_per_gpu_gb"]) == pytest.approx(1.0, abs=0.05)


def test_mpt_7b_against_mosaicml_micro_batch_sweep():
    """mosaicml/llm-foundry benchmarking (out_of_sample.csv mpt_mbsweep_a100_80gb_7b_seq2048_8gpu_mbs6,
    a measurement never used in the fit): MPT-7B on 8 A100-80GB, FSDP, seq 2,048, batch 96,
    micro-batch 6, 4,715 tokens/s per GPU at 65.25 % MFU. ±5 % on throughput and ±3 points on
    MFU (MosaicML's A100 tables: median error 4.1 %)."""
    row = _row("mpt_mbsweep_a100_80gb_7b_seq2048_8gpu_mbs6")
    r = _ev("mpt-7b-a100-8")
    assert r["tokens_per_s"] / 8 / float(row["tokens_per_s_per_gpu"]) == pytest.approx(1.0, abs=0.05)
    assert r["mfu"] == pytest.approx(float(row["mfu_pct"]) / 100, abs=0.03)
