"""Review 14d: clusterplan against the formulas of the tools users have today
(../shared/reference/anchors.md §4) on canonical cases, and the three most common complaints of
§8 in the API, the CLI and the dashboard.

Every expected value is written out here from the cited formula (Megatron-LM
``theoretical_memory_usage.py`` / ``num_floating_point_operations``, Narayanan et al. 2021,
Rajbhandari et al. 2020, Korthikanti et al. 2022 Table 2, the ring collectives of NCCL-tests),
never taken from the engine. Where clusterplan differs, the test adds the documented
generalisation explicitly and names the doc line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import planner
from planner.schema import Scenario

ROOT = Path(__file__).resolve().parents[1]
EXACT = 1e-9


def _ev(model, par=None, train=None, system="dgx-h100"):
    t = {"seq_len": 2048, "global_batch_size": 64, "micro_batch_size": 1}
    t.update(train or {})
    p = {"tp": 8, "pp": 8, "cp": 1, "ep": 1, "vpp": 1, "dp": 1, "schedule": "1f1b",
         "sequence_parallel": False, "zero_stage": 0, "recompute": "none", "flash_attention": False}
    p.update(par or {})
    n = p["tp"] * p["pp"] * p["cp"] * p["dp"]
    s = Scenario.model_validate({"model": model, "cluster": {"system": system, "n_gpus": n},
                                 "training": t, "parallelism": p})
    return planner.evaluate(s)


# --- §4.1 parameters ---------------------------------------------------------------------------

def megatron_layer_params(h, a, k, d_h, f, gated=True, rms=True):
    """Megatron ``theoretical_memory_usage.py``: ``P_L = 2h·(f·g + n) + 2h²·(1 + k/a)·(a·d_h/h)``,
    g = 3/2 for SwiGLU (else 1), n = 1 for RMSNorm (2 for LayerNorm)."""
    g = 1.5 if gated else 1.0
    n = 1 if rms else 2
    return 2 * h * (f * g + n) + 2 * h * h * (1 + k / a) * (a * d_h / h)


LLAMA3 = {  # h, L, a, k, d_h, f, V (arXiv:2407.21783 Table 3)
    "llama3-8b": (4096, 32, 32, 8, 128, 14336, 128256),
    "llama3-70b": (8192, 80, 64, 8, 128, 28672, 128256),
    "llama3-405b": (16384, 126, 128, 8, 128, 53248, 128256),
}


def llama_params(mid):
    h, L, a, k, d, f, V = LLAMA3[mid]
    # untied embedding + head 2·V·h, final RMSNorm h (model_stats docstring: "two per layer plus a
    # final one"; Megatron's formula folds the final norm into the block the same way)
    return L * megatron_layer_params(h, a, k, d, f) + 2 * V * h + h


@pytest.mark.parametrize("mid", sorted(LLAMA3))
def test_llama3_params_megatron_formula(mid):
    r = _ev(mid, {"tp": 1, "pp": 1})
    assert r.results["params_total"] == pytest.approx(llama_params(mid), rel=EXACT)
    assert r.results["params_active"] == pytest.approx(llama_params(mid), rel=EXACT)


def test_gpt3_params_narayanan_eq2_plus_final_layernorm():
    """Narayanan et al. 2021 eq. (2): ``P = 12·l·h²·(1 + 13/(12h) + (V+s)/(12·l·h))`` (tied head,
    learned positions, biases). The formula omits the final LayerNorm (2h), which clusterplan counts
    (model_stats docstring, "two per layer plus a final one")."""
    L, h, V, s = 96, 12288, 50257, 2048
    eq2 = 12 * L * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * L * h))
    r = _ev("gpt3-175b", {"tp": 1, "pp": 1})
    assert r.results["params_total"] == pytest.approx(eq2 + 2 * h, rel=EXACT)
    assert r.results["params_total"] == pytest.approx(174.6e9, rel=0.005)  # GPT-3 paper


MIX = dict(h=4096, L=32, a=32, k=8, d=128, f=14336, V=32000, E=8, r=2)


def _mixtral_parts():
    m = MIX
    h = m["h"]
    attn = 2 * h * h * (1 + m["k"] / m["a"]) * (m["a"] * m["d"] / h)
    expert = 3 * h * m["f"]
    router = h * m["E"]  # model_stats docstring: "a router h·E"
    per_layer_ne = attn + router + 2 * h
    non_expert = m["L"] * per_layer_ne + 2 * m["V"] * h + h
    experts = m["L"] * m["E"] * expert
    return non_expert, experts, expert


def test_mixtral_params_megatron_moe_formula():
    """Megatron MoE form: ``f·g → f_moe·E·g``; active: ``r`` of ``E`` experts (llm-analysis)."""
    non_expert, experts, expert = _mixtral_parts()
    r = _ev("mixtral-8x7b", {"tp": 1, "pp": 1})
    assert r.results["params_total"] == pytest.approx(non_expert + experts, rel=EXACT)
    active = non_expert + MIX["L"] * MIX["r"] * expert
    assert r.results["params_active"] == pytest.approx(active, rel=EXACT)
    assert r.results["params_total"] == pytest.approx(46.7e9, rel=0.005)
    assert r.results["params_active"] == pytest.approx(12.9e9, rel=0.005)


def test_deepseek_v3_params_mla_by_hand():
    """DeepSeek-V3 (arXiv:2412.19437 §2.1.1, §4.2): MLA with q/kv low rank and their RMSNorms,
    3 dense layers (f 18432), 58 MoE layers of 256 routed + 1 shared expert (f 2048), router h·E."""
    h, a, rq, rkv, nope, rope, dv, V = 7168, 128, 1536, 512, 128, 64, 128, 129280
    attn = (h * rq + rq + rq * a * (nope + rope)            # q down, its norm, q up
            + h * (rkv + rope) + rkv + rkv * a * (nope + dv)  # kv down (+ shared rope key), norm, kv up
            + a * dv * h)                                  # o
    dense = attn + 3 * h * 18432 + 2 * h
    exp = 3 * h * 2048
    moe_total = attn + 256 * exp + exp + h * 256 + 2 * h
    moe_active = attn + 8 * exp + exp + h * 256 + 2 * h
    emb = 2 * V * h + h
    r = _ev("deepseek-v3", {"tp": 1, "pp": 1}, {"seq_len": 4096})
    assert r.results["params_total"] == pytest.approx(3 * dense + 58 * moe_total + emb, rel=EXACT)
    assert r.results["params_active"] == pytest.approx(3 * dense + 58 * moe_active + emb, rel=EXACT)
    assert r.results["params_total"] == pytest.approx(671e9, rel=0.005)


# --- §4.2 FLOPs ----------------------------------------------------------------------------------

def megatron_flops_2024(B, s, L, h, a, k, d_h, f, V, r=1, gated=True):
    """Megatron ``num_floating_point_operations`` (2024 form, per global batch), full s² counting:
    ``12·B·s·L·h²·[(1 + k/a + s/h)·(a·d_h/h) + (f/h)·r·g + V/(2·L·h)]``."""
    g = 1.5 if gated else 1.0
    return 12 * B * s * L * h * h * ((1 + k / a + s / h) * (a * d_h / h) + (f / h) * r * g + V / (2 * L * h))


@pytest.mark.parametrize("mid,seq", [("llama3-70b", 8192), ("llama3-405b", 8192), ("llama3-8b", 4096)])
def test_llama3_model_flops_megatron(mid, seq):
    h, L, a, k, d, f, V = LLAMA3[mid]
    B = 64
    r = _ev(mid, {"tp": 1, "pp": 1}, {"seq_len": seq, "global_batch_size": B})
    full = megatron_flops_2024(B, seq, L, h, a, k, d, f, V)
    assert r.results["model_flop_per_step"] == pytest.approx(full, rel=EXACT)
    # Megatron HEAD (2026): causal mask halves the s² term, 6·B·s²·(a·d_h) per layer
    causal = full - 6 * B * seq * seq * a * d * L
    assert r.results["model_flop_per_step_causal"] == pytest.approx(causal, rel=EXACT)


def test_gpt3_flops_narayanan_model_and_hardware():
    """Narayanan et al. 2021 eq. (3): 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) with full recompute
    (hardware FLOPs); 72·…·(1 + s/(6h) + V/(12·l·h)) without (model FLOPs, Korthikanti §6); the
    Megatron 2024 form gives the same for MHA, f = 4h, plain MLP."""
    B, s, L, h, V = 1536, 2048, 96, 12288, 50257
    model = 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h))
    hw_full = 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h))
    assert megatron_flops_2024(B, s, L, h, 96, 96, 128, 4 * h, V, gated=False) == pytest.approx(model, rel=EXACT)
    r = _ev("gpt3-175b", {"tp": 8, "pp": 8, "dp": 1, "recompute": "full"}, {"global_batch_size": B})
    assert r.results["model_flop_per_step"] == pytest.approx(model, rel=EXACT)
    assert r.results["hardware_flop_per_step"] == pytest.approx(hw_full, rel=EXACT)
    # selective (Korthikanti §6): + the attention core forward 4·B·s²·h·L only
    r = _ev("gpt3-175b", {"tp": 8, "pp": 8, "dp": 1, "recompute": "selective"}, {"global_batch_size": B})
    assert r.results["hardware_flop_per_step"] == pytest.approx(model + 4 * B * s * s * h * L, rel=EXACT)


def test_mixtral_flops_megatron_moe_plus_router():
    """Megatron MoE FLOPs: ``(f/h)·r·g`` for the routed MLP. clusterplan also counts the router
    matmul, 6·tokens·h·E per MoE layer (model_stats docstring: N_matmul_active includes the
    router; docs/timing.md "Model FLOPs"), 8e-5 of the total here."""
    m = MIX
    B, s = 64, 4096
    meg = megatron_flops_2024(B, s, m["L"], m["h"], m["a"], m["k"], m["d"], m["f"], m["V"], r=m["r"])
    router = 6 * B * s * m["L"] * m["h"] * m["E"]
    r = _ev("mixtral-8x7b", {"tp": 1, "pp": 1}, {"seq_len": s, "global_batch_size": B})
    assert r.results["model_flop_per_step"] == pytest.approx(meg + router, rel=EXACT)
    assert router / meg < 1e-4


# --- §4.3 model states --------------------------------------------------------------------------

@pytest.mark.parametrize("zero", [0, 1, 2, 3])
@pytest.mark.parametrize("grad_dtype,gb", [("bf16", 2), ("fp32", 4)])
def test_model_states_zero_rajbhandari(zero, grad_dtype, gb):
    """ZeRO (Rajbhandari et al. 2020, K = 12): ZeRO-1 2Ψ + 2Ψ + 12Ψ/d, ZeRO-2 2Ψ + (2+12)Ψ/d,
    ZeRO-3 (2+2+12)Ψ/d; with fp32 gradients (Megatron) 2 + 4 + 12/d = Megatron's 6 + 12/d.
    Llama 3 8B, tp 1, pp 1, dp 8."""
    psi, d = llama_params("llama3-8b"), 8
    r = _ev("llama3-8b", {"tp": 1, "pp": 1, "dp": d, "zero_stage": zero, "flash_attention": True},
            {"grad_dtype": grad_dtype, "global_batch_size": 8}).results
    assert r["mem_weights_bytes"] == pytest.approx(2 * psi / (d if zero >= 3 else 1), rel=EXACT)
    assert r["mem_grads_bytes"] == pytest.approx(gb * psi / (d if zero >= 2 else 1), rel=EXACT)
    assert r["mem_optimizer_bytes"] == pytest.approx(12 * psi / (d if zero >= 1 else 1), rel=EXACT)
    if zero == 3:
        # docs/memory.md "ZeRO-3 prefetch": 2 units of 16-bit weights + 1 unit of gradients of the
        # largest unit the stage gathers: the output head + final norm, V·h + h
        h, V = 4096, 128256
        assert r["mem_zero3_prefetch_bytes"] == pytest.approx((2 * 2 + gb) * (V * h + h), rel=EXACT)
    else:
        assert r["mem_zero3_prefetch_bytes"] == 0


def test_model_states_per_stage_llama70b_tp8_pp4():
    """Megatron's most loaded shard: ``(L/p · P_L + V·h)/t`` on the first stage (embedding there);
    the last holds the head (+ the final norm, replicated over TP: docs/memory.md "output head
    (+ final norm) on the last"); middle stages layers only. Distributed optimizer (ZeRO-1), fp32
    grads: 2 + 4 + 12/d bytes per parameter (Megatron 6 + 12/d)."""
    h, L, a, k, d_h, f, V = LLAMA3["llama3-70b"]
    t, p, d = 8, 4, 32
    PL = megatron_layer_params(h, a, k, d_h, f)
    per_stage = [(L / p * PL + V * h) / t, L / p * PL / t, L / p * PL / t, (L / p * PL + V * h) / t + h]
    st = _ev("llama3-70b", {"tp": t, "pp": p, "dp": d, "zero_stage": 1, "sequence_parallel": True,
                            "recompute": "selective", "flash_attention": True},
             {"seq_len": 8192, "global_batch_size": 512}).stages
    for j, P in enumerate(per_stage):
        assert st[j]["mem_weights_bytes"] == pytest.approx(2 * P, rel=EXACT), j
        assert st[j]["mem_grads_bytes"] == pytest.approx(4 * P, rel=EXACT), j
        assert st[j]["mem_optimizer_bytes"] == pytest.approx(12 * P / d, rel=EXACT), j


def test_model_states_mixtral_expert_parallel():
    """Complaint (§8, Megatron theoretical memory): EP does not divide the expert weights.
    Here experts are divided by ep and their optimizer sharded over dp/ep (llm-analysis: "expert
    weights divided by e and sharded over d/e"). Mixtral, tp 1, pp 1, dp 16, ep 8, ZeRO-1, bf16."""
    non_expert, experts, _ = _mixtral_parts()
    dp, ep = 16, 8
    r = _ev("mixtral-8x7b", {"tp": 1, "pp": 1, "dp": dp, "ep": ep, "zero_stage": 1, "flash_attention": True},
            {"grad_dtype": "bf16", "global_batch_size": 16}).results
    local = non_expert + experts / ep
    assert r["mem_weights_bytes"] == pytest.approx(2 * local, rel=EXACT)
    assert r["mem_grads_bytes"] == pytest.approx(2 * local, rel=EXACT)
    assert r["mem_optimizer_bytes"] == pytest.approx(12 * (non_expert / dp + experts / ep / (dp / ep)), rel=EXACT)


# --- §4.4 activations (Korthikanti et al. 2022 Table 2) -------------------------------------------

S, BMB, H, A, T = 2048, 1, 12288, 96, 8   # GPT-3 175B, micro-batch 1, TP 8
SBH = S * BMB * H
GPT3_ROWS = {
    "tp": ({}, SBH * (10 + 24 / T + 5 * A * S / (H * T))),
    "tp+sp": ({"sequence_parallel": True}, SBH * (34 + 5 * A * S / H) / T),
    "tp+selective": ({"recompute": "selective"}, SBH * (10 + 24 / T)),
    "tp+sp+selective": ({"sequence_parallel": True, "recompute": "selective"}, 34 * SBH / T),
    "full": ({"recompute": "full"}, 2 * SBH),
    "full+sp": ({"sequence_parallel": True, "recompute": "full"}, 2 * SBH / T),
}


@pytest.mark.parametrize("row", sorted(GPT3_ROWS))
def test_gpt3_activations_korthikanti_table2_every_stage(row):
    """GPT-3 175B (dropout 0.1, MHA, f = 4h, no flash attention), tp 8, pp 8, m = 64: per stage j,
    12 layers × Table 2's bytes per layer × min(m, p − j) micro-batches in flight (1F1B,
    Narayanan 2021; the first stage holds the most). Documented additions (docs/memory.md
    "Activations"): with recompute and no flash attention the layer being recomputed holds its
    score matrix (5·a·s²·b/t: softmax 2, its dropout output 2, mask 1); full recompute adds one
    working layer (its no-recompute activations less the input already kept)."""
    par, per_layer = GPT3_ROWS[row]
    p, m, layers = 8, 64, 12
    scores = 5 * A * S * S * BMB / T
    extra = 0.0
    if row in ("tp+selective", "tp+sp+selective"):
        extra = scores
    elif row == "full":
        extra = GPT3_ROWS["tp"][1] - 2 * SBH
    elif row == "full+sp":
        extra = GPT3_ROWS["tp+sp"][1] - 2 * SBH / T
    st = _ev("gpt3-175b", {"tp": T, "pp": p, **par}, {"global_batch_size": m}).stages
    for j in range(p):
        want = layers * per_layer * min(m, p - j) + extra
        assert st[j]["mem_activations_bytes"] == pytest.approx(want, rel=EXACT), (row, j)
    assert st[0]["mem_activations_bytes"] > st[-1]["mem_activations_bytes"]


def test_llama70b_activations_gqa_swiglu_nodropout_interleaved():
    """Korthikanti generalised (docs/memory.md "Activations": R = 8h without dropout, S = 4q + 4kv
    + 6f gated, kv = max(k, t)·d_h; TP + SP + selective: (R + S)/t per token) on the default
    preset's layout: tp 8, pp 4, v 5, m 16. First stage: p·(1 + (p−1)/(p·v)) = 4.6 micro-batches
    of its 20 layers (Korthikanti §4.2.3 / Megatron ``compute_activation_memory``)."""
    h, L, a, k, d_h, f, V = LLAMA3["llama3-70b"]
    t, p, v, s = 8, 4, 5, 8192
    per_token = (8 * h + 4 * a * d_h + 4 * max(k, t) * d_h + 6 * f) / t
    inflight = p * (1 + (p - 1) / (p * v))
    r = planner.evaluate(planner.load_preset("default"))
    sc = r.scenario
    assert sc["parallelism"]["vpp"] == v and sc["training"]["global_batch_size"] // 32 == 16
    assert r.stages[0]["mem_activations_bytes"] == pytest.approx(s * per_token * 20 * inflight, rel=EXACT)
    # Table 2's 34·s·b·h/t for MHA, f = 4h, with dropout (10h): the generalisation reduces to it
    assert 10 * h + 4 * h + 4 * h + 4 * (4 * h) == 34 * h


# --- §4.5 pipeline and §4.6 communication ---------------------------------------------------------

@pytest.mark.parametrize("sched,v", [("1f1b", 1), ("gpipe", 1), ("interleaved", 2)])
@pytest.mark.parametrize("m", [8, 32])
def test_bubble_fraction_narayanan(sched, v, m):
    """Bubble (p−1)/m (1F1B, GPipe), (p−1)/(v·m) interleaved, applied to compute + TP + CP + EP
    (docs/timing.md, t_pp_bubble_s). PP p2p: b·s·h/t·2 B per micro-batch per boundary, forward and
    backward, v× with interleaving, over the network (stride tp·dp = 8: one GPU per node):
    S/(50 GB/s × 0.92) + 5 µs."""
    p = 4
    r = _ev("llama3-70b", {"tp": 8, "pp": p, "vpp": v, "schedule": sched, "flash_attention": True,
                           "sequence_parallel": True}, {"global_batch_size": m}).results
    base = r["t_compute_s"] + r["t_tp_comm_s"] + r["t_cp_comm_s"] + r["t_ep_comm_s"]
    assert r["t_pp_bubble_s"] == pytest.approx((p - 1) / (v * m) * base, rel=EXACT)
    s_p2p = 1 * 2048 * 8192 * 2 / 8
    assert r["t_pp_p2p_s"] == pytest.approx(2 * v * m * (s_p2p / (50e9 * 0.92) + 5e-6), rel=EXACT)


@pytest.mark.parametrize("grad_dtype,gb", [("fp32", 4), ("bf16", 2)])
def test_dp_ring_allreduce_llama8b(grad_dtype, gb):
    """ZeRO-0 gradient all-reduce, nothing overlapped: ring 2·(n−1)/n·S/BW + 2·(n−1)·α with
    S = grad bytes × Ψ/t, n = dp = 8, one GPU per node in the ring (TP 8 fills the node): BW =
    50 GB/s NIC × 0.92, α = 5 µs (docs/timing.md "Collectives and placement")."""
    psi, n = llama_params("llama3-8b"), 8
    r = _ev("llama3-8b", {"tp": 8, "pp": 1, "dp": n, "zero_stage": 0, "flash_attention": True,
                          "dp_comm_overlap": False}, {"grad_dtype": grad_dtype, "global_batch_size": 64}).results
    S_ = gb * psi / 8
    assert r["t_dp_comm_exposed_s"] == pytest.approx(2 * (n - 1) / n * S_ / 46e9 + 2 * (n - 1) * 5e-6, rel=1e-6)


@pytest.mark.parametrize("sp", [True, False])
def test_tp_collectives_per_layer(sp):
    """Megatron TP: 4 all-reduces of b·s·h·2 B per layer per micro-batch (2 forward, 2 backward;
    with SP reduce-scatter + all-gather, the same volume) inside the NVLink domain: 450 GB/s × 0.8,
    α = 2 µs; a plain all-reduce uses NVLS (×480/370) on DGX H100. Pacing stage: 20 layers, m = 8."""
    r = _ev("llama3-70b", {"tp": 8, "pp": 4, "flash_attention": True, "sequence_parallel": sp},
            {"global_batch_size": 8}).results
    S_ = 2048 * 8192 * 2
    bw = 450e9 * 0.8 * (1 if sp else 480 / 370)
    ar = 2 * 7 / 8 * S_ / bw + 2 * 7 * 2e-6
    assert r["t_tp_comm_s"] == pytest.approx(8 * 20 * 4 * ar, rel=EXACT)


# --- §8 complaints: API, CLI, dashboard ------------------------------------------------------------
# 1. "The estimate says X GB but I OOM" (Megatron #525, DeepSpeed #4093/#4527, EleutherAI's 5 GiB):
#    the margin (NCCL/CUDA reserve, fragmentation), fp32 gradients and the logits are explicit parts.
# 2. Per-stage memory: the first stage holds the most activations; embedding on the first stage,
#    head (and logits) on the last (Megatron PR #1345, Fujii's standalone embedding stage).
# 3. ZeRO-1/2 not covered or ZeRO-2 not partitioning gradients, fp32 master weights unclear
#    (DeepSpeed #5102, #4076): covered by test_model_states_zero_rajbhandari above.

COMPONENTS = ("mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes", "mem_activations_bytes",
              "mem_logits_bytes", "mem_comm_buffers_bytes", "mem_fragmentation_bytes")


def _check_stages(stages, h, V, t):
    assert len(stages) == 4
    act = [s["mem_activations_bytes"] for s in stages]
    assert act == sorted(act, reverse=True) and act[0] > act[-1]          # first stage holds most
    w = [s["mem_weights_bytes"] for s in stages]
    assert w[0] - w[1] == pytest.approx(2 * V * h / t, rel=1e-6)          # embedding on the first
    assert w[3] - w[1] == pytest.approx(2 * (V * h / t + h), rel=1e-6)    # head + final norm on the last
    lg = [s["mem_logits_bytes"] for s in stages]
    assert lg[:3] == [0, 0, 0] and lg[3] > 0                              # logits on the last only
    for s in stages:
        assert s["mem_grads_bytes"] == pytest.approx(2 * s["mem_weights_bytes"], rel=1e-9)  # fp32 grads
        assert s["mem_comm_buffers_bytes"] > 0 and s["mem_fragmentation_bytes"] > 0
        parts = sum(s[c] for c in COMPONENTS) + s["mem_zero3_prefetch_bytes"]
        assert s["mem_total_bytes"] == pytest.approx(parts, rel=1e-9)


_ONE_F_ONE_B = ["--set", "parallelism.schedule=1f1b", "--set", "parallelism.vpp=1"]


def test_complaints_api_and_cli_json():
    h, _, _, _, _, _, V = LLAMA3["llama3-70b"]
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"].update(schedule="1f1b", vpp=1)
    rep = planner.evaluate(d)
    _check_stages(rep.stages, h, V, 8)
    out = subprocess.run([sys.executable, "-m", "planner", "evaluate", "--preset", "default", *_ONE_F_ONE_B,
                          "--format", "json"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    js = json.loads(out.stdout)
    _check_stages(js["stages"], h, V, 8)
    for a_, b_ in zip(js["stages"], rep.stages):
        for c in COMPONENTS:
            assert a_[c] == pytest.approx(b_[c], rel=1e-12), c


def test_complaints_cli_table_shows_every_stage_and_the_fp32_master_states():
    out = subprocess.run([sys.executable, "-m", "planner", "evaluate", "--preset", "default", *_ONE_F_ONE_B,
                          "--format", "table"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    txt = out.stdout
    assert "memory per pipeline stage (GiB):" in txt
    assert "12 B × " in txt and "fp32 master + Adam m, v" in txt     # optimizer states explained
    assert "4 B × " in txt                                           # fp32 gradients explained
    assert "embedding on the first, head on the last stage" in txt
    assert "fragmentation" in txt and "CUDA/NCCL reserve" in txt
    table = txt.split("memory per pipeline stage (GiB):")[1].split("note:")[0].strip().splitlines()
    assert len(table) == 5 and table[0].split()[0] == "stage"
    cols = table[0].split()
    rows = [dict(zip(cols, map(float, ln.split()))) for ln in table[1:]]
    act = [r_["mem_activations_bytes"] for r_ in rows]
    assert act == sorted(act, reverse=True) and act[0] > act[-1]
    assert [r_["mem_logits_bytes"] > 0 for r_ in rows] == [False, False, False, True]


def test_complaints_dashboard_memory_chart_per_stage():
    """Plan page (AppTest, as tests/test_app.py): the memory chart has one bar per pipeline stage,
    stacked by component (optimizer, gradients, activations, margin …), with the engine's values."""
    from streamlit import dataframe_util
    from streamlit.testing.v1 import AppTest

    import streamlit as st
    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app_pages" / "plan.py"), default_timeout=120)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    rep = planner.evaluate(at.session_state["scenario"])
    chart = None
    for c in at.get("vega_lite_chart"):
        spec = json.loads(c.proto.spec)
        if "pipeline stage" in json.dumps(spec):
            chart = c
            break
    assert chart is not None
    data = pd.concat([dataframe_util.convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.proto.datasets])
    data = data[data["stage"].notna()] if "stage" in data else data
    assert data["stage"].nunique() == len(rep.stages) == 4
    per_stage = data.groupby("stage_index")["gib"].sum().sort_index().to_numpy()
    want = [s["mem_total_bytes"] / 2**30 for s in rep.stages]
    assert per_stage == pytest.approx(want, rel=1e-6)
    comps = " ".join(map(str, data["component"].unique())).lower()
    for word in ("optimizer", "gradient", "activation", "weight"):
        assert word in comps, (word, comps)


def test_deepseek_v3_model_flops_mla_matmuls_only():
    """Regression (review 14d): MLA's latent RMSNorms (r_q = 1536, r_kv = 512 per layer) were
    counted as matmul parameters in N_matmul_active (+124,928). Megatron HEAD's MLA FLOPs take the
    projections only: q down h·r_q and up r_q·a·(d_nope + d_rope), kv down h·(r_kv + d_rope) and up
    r_kv·a·(d_nope + d_v), o a·d_v·h; the attention core 2·s²·a·(d_qk + d_v) forward per
    sequence-layer with d_qk = 192, d_v = 128 (full counting, ×3 for forward + backward)."""
    h, a, rq, rkv, nope, rope, dv, V = 7168, 128, 1536, 512, 128, 64, 128, 129280
    attn = h * rq + rq * a * (nope + rope) + h * (rkv + rope) + rkv * a * (nope + dv) + a * dv * h
    exp = 3 * 2048 * h
    N = 3 * (attn + 3 * h * 18432) + 58 * (attn + 8 * exp + exp + h * 256) + V * h
    B_, s = 8, 4096
    r = _ev("deepseek-v3", {"tp": 1, "pp": 1}, {"seq_len": s, "global_batch_size": B_}).results
    assert r["matmul_params_active"] == pytest.approx(N, rel=1e-12)
    core = 2 * B_ * s * s * a * ((nope + rope) + dv) * 61
    assert r["model_flop_per_step"] == pytest.approx(6 * N * B_ * s + 3 * core, rel=1e-12)
