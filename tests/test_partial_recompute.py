"""Full recompute of only N layers per pipeline chunk (``parallelism.recompute_layers``;
Megatron ``--recompute-method block --recompute-num-layers N``).

Hand calculations from the model's per-layer terms (docs/memory.md): a rank with ``n`` layers
keeps ``n_rc`` layer inputs (2·s·b·h/t bytes each, Korthikanti et al. 2022 §4.3 "full") and the
no-recompute activations of the other ``n − n_rc`` layers, plus the working set of the layer
being recomputed; the recomputed forward adds ``n_rc / n`` of a forward pass.
"""

from __future__ import annotations

import numpy as np
import pytest

import planner
from planner import timing
from planner.schema import InputError


def _run(rc="full", n=None, **par):
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()   # 32 layers, p = 1
    d["parallelism"].update(recompute=rc, recompute_layers=n, **par)
    return planner.evaluate(d).results


def test_activation_memory_by_hand():
    none, full = _run("none")["mem_activations_bytes"], _run("full")["mem_activations_bytes"]
    # p = 1, one micro-batch in flight: none = 32·W; full = 32·K + (W − K) with K = the layer input
    W = none / 32
    K = (full - W) / 31
    assert K == pytest.approx(2 * 8192 / 2 * 4096, rel=1e-12)  # 2·s/cp·b·h bytes: 32 MiB
    for n in (8, 16, 24):
        # Megatron's block method checkpoints layers 0..n−1 one by one and runs the others
        # plainly; the backward reaches layer n−1 (and recomputes it) only after the 32 − n later
        # layers' backward freed their W each, and W − K < (32 − n)·W: no working-set extra
        # (until 2026-11-30 the extra W − K was added for every n)
        got = _run("full", n)["mem_activations_bytes"]
        assert got == pytest.approx(n * K + (32 - n) * W, rel=1e-12)
    assert _run("full", 32)["mem_activations_bytes"] == pytest.approx(full, rel=1e-12)


def test_recompute_time_is_linear_in_the_recomputed_share():
    t0, t1 = _run("none")["t_compute_s"], _run("full")["t_compute_s"]
    for n in (8, 16, 24):
        assert _run("full", n)["t_compute_s"] == pytest.approx(t0 + (t1 - t0) * n / 32, rel=1e-9)


def test_hardware_flops_count_the_recomputed_share():
    from planner import batch, model_stats

    def hw(n, rc="full"):
        d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
        d["parallelism"].update(recompute=rc, recompute_layers=n)
        st = model_stats.stats(batch.from_scenarios([planner.Scenario.model_validate(d)]))
        return float(st["model_flop_per_step"][0]), float(st["hardware_flop_per_step"][0])

    m, full = hw(None)
    _, half = hw(16)
    assert half - m == pytest.approx(0.5 * (full - m), rel=1e-12)


def test_interleaved_chunks_and_pipeline_stages():
    """PP 4 × VPP 2 on 32 layers: chunks of 4 layers; N = 2 per chunk recomputes 2·2 = 4 of the
    rank's 8 layers, i.e. half of the layers, on every rank."""
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["cluster"]["n_gpus"] = 64
    d["parallelism"].update(tp=1, pp=4, cp=1, dp=None, vpp=2, schedule="interleaved", recompute="full",
                            recompute_layers=2)
    d["training"]["global_batch_size"] = 512
    half = planner.evaluate(d).results
    d["parallelism"]["recompute_layers"] = None
    full = planner.evaluate(d).results
    d["parallelism"].update(recompute="none")
    none = planner.evaluate(d).results
    assert half["t_compute_s"] == pytest.approx((none["t_compute_s"] + full["t_compute_s"]) / 2, rel=1e-9)
    assert full["mem_activations_bytes"] < half["mem_activations_bytes"] < none["mem_activations_bytes"]


@pytest.mark.parametrize("par, expected", [
    ({"recompute": "selective", "recompute_layers": 4}, "needs recompute = 'full'"),
    ({"recompute": "full", "recompute_layers": 33}, "exceeds the layers of a pipeline chunk"),
    ({"recompute": "full", "recompute_layers": 0}, "parallelism.recompute_layers"),
])
def test_bad_recompute_layers_name_the_field(par, expected):
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["parallelism"].update(par)
    with pytest.raises(InputError, match=expected):
        planner.evaluate(d)


def test_export_and_link():
    from planner import share
    from planner.export import megatron_args, torchtitan_toml
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["parallelism"].update(recompute="full", recompute_layers=8)
    text = megatron_args(d).text
    assert "--recompute-method block" in text and "--recompute-num-layers 8" in text
    assert any("8 layers per chunk" in n for n in torchtitan_toml(d).notes)
    params = share.scenario_to_params(d)
    assert params["rcl"] == "8"
    back, warnings = share.params_to_scenario(params)
    assert not warnings and back["parallelism"]["recompute_layers"] == 8


def test_each_stage_recomputes_its_own_share_on_uneven_splits():
    """DeepSeek-V3 (61 layers, pp 16, uneven: first 13 stages 4 layers, last 3 stages 3 layers) with
    N = 3: the first stages recompute 3 of 4 layers, the last all of its 3. EP 16: on 1F1B the
    expert all-to-all is exposed (the overlap needs PP 1, interleaving or DualPipe,
    timing.ep_overlap_possible, review 14j). With N = 3 the last stage (3 layers + the output head,
    all recomputed) paces the step; under full recompute a middle rank with four MoE layers does
    (since review 20's refit; before it the last stage paced both), so the last stage's compute per
    micro-batch is the same in both, and the step with N = 3 is no longer than with full."""
    from planner import batch, memory, model_stats

    def terms(d):
        b = batch.from_scenarios([planner.Scenario.model_validate(d)])
        b.update(model_stats.stats(b))
        b.update(memory.stage(b))
        return timing._terms(b)

    def one(T, k):
        return float(np.asarray(T[k]).reshape(-1)[0])

    d = planner.load_preset("deepseek-v3-h800-2048").to_json_dict()
    d["parallelism"].update(schedule="1f1b", recompute="full", recompute_layers=3, ep=16)
    n3 = planner.evaluate(d).results
    T3 = terms(d)
    d["parallelism"]["recompute_layers"] = None
    full = planner.evaluate(d).results
    Tf = terms(d)
    assert n3["step_time_s"] <= full["step_time_s"]
    # the last stage (3 layers + the output head) paces the N = 3 step, and it recomputes all 3
    assert one(T3, "_layers_stage") == 3.0
    assert one(T3, "_last_mb") == pytest.approx(one(Tf, "_last_mb"), rel=1e-12)
    # the first stage recomputes 3 of its 4 layers: less than under full recompute
    assert one(T3, "_first_mb") < one(Tf, "_first_mb")
    m = 120  # micro-batches per pipeline: global batch 15,360 / (micro-batch 1 × DP 128)
    assert n3["t_compute_s"] == pytest.approx(m * one(T3, "_last_mb"), rel=1e-12)


def test_moe_leading_dense_layers_are_the_recomputed_ones():
    """Megatron's block method recomputes the first N layers of a chunk: on DeepSeek-V3's rank 0
    (3 dense + 1 MoE layer) N = 1 recomputes a dense layer and keeps 2 dense and the MoE layer
    whole: 16 micro-batches in flight × (K + 2·W_dense + W_moe). The recomputed dense layer's
    working set W_dense − K adds nothing: it is recomputed after the backward of the three later
    layers freed 2·W_dense + W_moe of that micro-batch (until 2026-11-30 the extra was charged, and
    at the larger, MoE layer's working set)."""
    from planner import batch, memory, model_stats
    d = planner.load_preset("deepseek-v3-h800-2048").to_json_dict()
    d["parallelism"].update(schedule="1f1b", recompute="full", recompute_layers=1)
    b = batch.from_scenarios([planner.Scenario.model_validate(d)])
    b.update(model_stats.stats(b))
    cm = memory._common(b)
    g = {k: float(np.ravel(cm[k])[0]) for k in ("full_keep", "work_dense", "work_moe", "rec_extra_dense")}
    assert g["rec_extra_dense"] == pytest.approx(g["work_dense"] - g["full_keep"], rel=1e-12)  # flash on
    assert g["rec_extra_dense"] < 2 * g["work_dense"] + g["work_moe"]
    rank0 = memory.per_stage(b, 0)[0]["mem_activations_bytes"]
    expected = 16 * (g["full_keep"] + 2 * g["work_dense"] + g["work_moe"])
    assert rank0 == pytest.approx(expected, rel=1e-12)


def test_without_flash_the_layers_not_recomputed_keep_their_scores():
    """GPT-3 175B preset (flash attention off, 12 layers per stage): the kept layers store what no
    recompute stores, score matrix included, so memory is linear in N between none (N = 0) and
    N = 11, and N = 1 keeps more than selective recompute (which drops every layer's scores).
    N = 12 is full recompute: only there does the recomputed layer's working set (scores
    included) add to the stash, as no later layer of the chunk has freed its activations."""
    def act(rc, n=None):
        d = planner.load_preset("gpt3-175b-a100-1024").to_json_dict()
        d["parallelism"].update(recompute=rc, recompute_layers=n)
        return planner.evaluate(d).results["mem_activations_bytes"]

    a0, a1, a6, a11, a12 = act("none"), act("full", 1), act("full", 6), act("full", 11), act("full", 12)
    assert (a0 - a1) / (a1 - a6) == pytest.approx(1 / 5, rel=1e-12)
    assert (a1 - a6) / (a6 - a11) == pytest.approx(1.0, rel=1e-12)
    assert a12 == pytest.approx(act("full"), rel=1e-12)
    assert a12 < a11 < a0
    assert a1 > act("selective")


def test_partial_recompute_replays_the_cp_ring_on_the_stage_s_own_recomputed_layers():
    """Found by a property test (flash attention off shortened a step): with partial recompute the
    CP ring exchange of the recomputed forward was charged at the average share of recomputed
    layers, min(N·pp·vpp/L, 1), while the compute took the pacing stage's own, min(N·vpp, n)/n.
    Llama 3 8B, PP 3 uneven (first stage n = 11 layers), N = 2, CP 2 across nodes at 2 GB/s per
    GPU (ring-bound in both passes). docs/timing.md, t_cp_comm_s: (c−1) hops forward, 2(c−1)
    backward, exposed beyond the attention core of the same pass (fwd 1×, bwd 2.5× the core with
    flash); the recomputed forward replays its hops on the N layers it recomputes:
    t_cp = m·(n·(e_f + e_b) + N·e_f), e_f = fwd hops − core, e_b = bwd hops − 2.5·core.
    Ring-bound, the attention core hides inside the hops, so attention compute + exposed CP does
    not depend on the core's speed: flash attention on or off gives the same t_compute + t_cp."""
    import copy

    import numpy as np

    from planner import engine, memory, model_stats, timing

    d = {"model": "llama3-8b",
         "cluster": {"system": "dgx-h100", "n_gpus": 48, "overrides": {"nic_bw_per_gpu_bytes_per_s": 2e9}},
         "training": {"seq_len": 4096, "global_batch_size": 8, "micro_batch_size": 1},
         "parallelism": {"tp": 8, "pp": 3, "cp": 2, "dp": 1, "recompute": "full", "recompute_layers": 2,
                         "layer_split": "uneven", "sequence_parallel": True},
         "checkpoint": {"tiers": [{"tier": "pfs"}]}}
    b = engine.to_batch([d])[0]
    out = dict(b)
    out.update(model_stats.stage(out))
    out.update(memory.stage(out))
    T = timing._terms(out, None, detail=True)
    one = lambda k: float(np.ravel(T[k])[0])  # noqa: E731
    assert one("_layers_stage") == 11 and one("_last_is_slowest") == 0  # the first stage paces
    core, hop_f, hop_b = one("_t_core"), one("_cp_fwd"), one("_cp_bwd")
    # the flash backward on H100 at d_h 128: (2.5·128 + 64)/(128 + 64) = 2 × the core (timing.flash_bwd_over_fwd)
    e_f, e_b = hop_f - core, hop_b - 2.0 * core
    assert e_f > 0 and e_b > 0  # ring-bound in both passes
    m, n, N = 8, 11, 2
    assert one("t_cp_comm_s") == pytest.approx(m * (n * (e_f + e_b) + N * e_f), rel=1e-12)
    r_on = planner.evaluate(d).results
    off = copy.deepcopy(d)
    off["parallelism"]["flash_attention"] = False
    r_off = planner.evaluate(off).results
    # attention itself is materially slower (the s × s scores through HBM: 4 B per element forward
    # without dropout, Llama 3 trains with none; 9 B with it)
    assert r_off["t_compute_s"] > r_on["t_compute_s"] * 1.2
    assert r_off["t_compute_s"] + r_off["t_cp_comm_s"] == pytest.approx(
        r_on["t_compute_s"] + r_on["t_cp_comm_s"], rel=1e-12)
    assert r_off["step_time_s"] >= r_on["step_time_s"] * (1 - 1e-12)
