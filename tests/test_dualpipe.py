"""DualPipe (DeepSeek-V3 technical report, arXiv:2412.19437, §3.2.1 and Table 2).

Table 2: bubble (PP/2 − 1)(F&B + B − 3W), parameters 2×, activations PP + 1. With F&B = F + B and
W = B/2 (the model's stated choices) the bubble is (PP/2 − 1)(F + B/2) per step.
"""

from __future__ import annotations

import numpy as np
import pytest

import planner
from planner import timing
from planner.schema import InputError


def _ds(schedule, **par):
    d = planner.load_preset("deepseek-v3-h800-2048").to_json_dict()
    d["parallelism"].update(schedule=schedule, **par)
    return d


def test_bubble_fraction_by_hand():
    # p = 16, m = 120, F = 1, B = 2: (8 − 1)·(1 + 1) / (120·3) = 14/360
    assert timing.dualpipe_bubble_fraction(16, 120, 1.0, 2.0) == pytest.approx(14 / 360, rel=1e-15)
    # p = 2: no bubble term left (PP/2 − 1 = 0)
    assert timing.dualpipe_bubble_fraction(2, 8, 1.0, 2.0) == 0.0
    # against 1F1B's (p − 1)/m: about a third for B = 2F and large p
    f1 = (64 - 1) / 256
    assert timing.dualpipe_bubble_fraction(64, 256, 1.0, 2.0) / f1 == pytest.approx(31 * 2 / (63 * 3), rel=1e-12)


def test_step_bubble_uses_the_stage_forward_and_backward():
    r = planner.evaluate(_ds("dualpipe"))
    b = planner.batch.from_scenarios([planner.Scenario.model_validate(_ds("dualpipe"))])
    b.update(planner.model_stats.stats(b))
    b.update(planner.memory.stage(b))
    T = timing._terms(b)
    F, B, m = (float(np.asarray(T[k]).reshape(-1)[0]) for k in ("_t_fwd_mb", "_t_bwd_mb", "_m"))
    R = r.results
    work = R["t_compute_s"] + R["t_tp_comm_s"] + R["t_cp_comm_s"] + R["t_ep_comm_s"]
    assert R["t_pp_bubble_s"] == pytest.approx((16 / 2 - 1) * (F + B / 2) / (m * (F + B)) * work, rel=1e-12)


def test_memory_two_stages_of_parameters_and_p_plus_1_in_flight():
    one = planner.evaluate(_ds("1f1b")).results
    dual = planner.evaluate(_ds("dualpipe")).results
    # rank 0 (the most loaded): layer parameters ×2, embedding + head on both end ranks
    assert dual["mem_weights_bytes"] > 1.9 * one["mem_weights_bytes"]
    assert dual["mem_optimizer_bytes"] > 1.9 * one["mem_optimizer_bytes"]
    # activations: 1F1B keeps p = 16 micro-batches on rank 0, DualPipe p + 1 = 17
    full = planner.evaluate(_ds("1f1b")).results["mem_activations_bytes"]
    assert dual["mem_activations_bytes"] > full


def test_dualpipe_rules():
    d = planner.load_preset("llama3-70b-h100-1024").to_json_dict()  # 80 layers, 1,024 GPUs, tp 8
    d["parallelism"].update(schedule="dualpipe", vpp=1, pp=5, dp=None, layer_split="uneven")
    d["cluster"]["n_gpus"] = 1000                   # tp 8 × pp 5 × dp 25
    d["training"]["global_batch_size"] = 1000
    with pytest.raises(InputError, match="needs an even pp >= 2"):
        planner.evaluate(d)
    d["cluster"]["n_gpus"] = 1024
    d["parallelism"]["pp"] = 4                      # dp = 32
    d["training"]["global_batch_size"] = 32 * 15     # 15 micro-batches per DP rank: odd
    with pytest.raises(InputError, match="even number of micro-batches"):
        planner.evaluate(d)
    d["training"]["global_batch_size"] = 32 * 16
    assert planner.evaluate(d).results["step_time_s"] > 0


def test_sweep_generates_dualpipe_only_where_valid():
    s = planner.load_preset("llama3-70b-h100-1024")
    df = planner.sweep(s, schedules=("1f1b", "dualpipe"), tp=[8], pp=[2, 4, 5], cp=[1], zero_stages=[1],
                       recompute=["selective"])
    dual = df[df["schedule"] == "dualpipe"]
    assert len(dual) and set(dual["pp"]) <= {2, 4}
    m = s.training.global_batch_size // (dual["micro_batch_size"] * dual["dp"])
    assert (m % 2 == 0).all()
