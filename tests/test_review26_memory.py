"""Review 26 (a hand check of the memory model against its sources): three fixes.

1. MLA's V head: V and the attention output are ``2·k·d_v`` and ``2·a·d_v`` bytes per token
   (``v_head_dim``, 128 on DeepSeek-V3 beside 192-wide Q/K heads), as docs/inputs.md and the
   ``MLASpec`` docstring state; they were charged at the Q/K head.
2. DualPipe: of a rank's p + 1 micro-batches in flight, p − h run on its earlier stage
   h = min(j, p−1−j) and h + 1 on its later one (``DualPipe.step()``, deepseek-ai/DualPipe); the
   MTP modules, with the head on the end ranks' later side, hold 1. Checked in
   tests/test_dualpipe.py and tests/test_review16b_mtp.py / 16f; here the end rank's sum by hand.
3. fp8 MoE layers keep their MLP input at 16 bits (it is the router's input: Megatron-Core's TE spec
   builds the pre-MLP norm as its own TENorm for MoE layers), shared experts a 1-byte cast besides.

Expected values are hand calculations from the formulas in docs/memory.md (Korthikanti et al. 2022
Table 2, generalised), not the engine's output.
"""

from __future__ import annotations


import pytest

import planner
from planner import catalog, memory
from planner.presets import preset_json

GiB = 2**30


def _model(mid: str) -> dict:
    return catalog.models()[mid].model_dump(mode="json")


def _one_stage(pid: str, **par) -> dict:
    """A preset on one pipeline stage, TP 1, no recompute, flash attention: one micro-batch in
    flight, so its activations are layers × s·b × bytes per token."""
    d = preset_json(pid)
    d["parallelism"].update(pp=1, vpp=1, tp=1, dp=None, schedule="1f1b", recompute="none",
                            flash_attention=True, sequence_parallel=False, layer_split="even", **par)
    return d


# 1. MLA's V head ------------------------------------------------------------------------------

def test_mla_v_head_sets_v_and_the_attention_output():
    """DeepSeek-V3 (a = 128 heads, Q/K head 192, fp8), one stage, one micro-batch of s = 4096:
    each layer keeps V (2·a·d_v B per token) and the attention output (its 1-byte fp8 cast, a·d_v).
    d_v 128 -> 64 takes 3·128·64 = 24,576 B per token and layer off, over 61 layers and 4096 tokens."""
    acts = {}
    for dv in (128, 64):
        d = _one_stage("deepseek-v3-h800-2048")
        m = _model("deepseek-v3")
        m["mla"]["v_head_dim"] = dv
        d["model"] = m
        d["cluster"]["n_gpus"] = 1024  # dp 1024: 15 micro-batches of the preset's 15,360
        acts[dv] = planner.evaluate(d).results["mem_activations_bytes"]
    assert acts[128] - acts[64] == 61 * 4096 * (2 + 2 - 1) * 128 * 64  # V 2a·Δ + O 2a·Δ − its fp8 byte a·Δ
    assert 3 * 128 * 64 == 24_576


def test_activation_bytes_per_layer_takes_the_v_head():
    """The public per-layer formula: no parallelism, MHA (k = a), plain MLP f = 4h, dropout, no
    flash: s·b·(10h + 2q + 2kv + 2kv_v + 2q_v + 4f + 5·a·s) with q = a·d_h, q_v = a·d_v. With
    d_v = d_h it is Table 2's s·b·h·(34 + 5as/h)."""
    s, b, h, a = 2048, 1, 4096, 32
    base = memory.activation_bytes_per_layer(s, b, h, a)
    assert float(base) == s * b * h * (34 + 5 * a * s / h)
    d, dv = 128, 64
    got = memory.activation_bytes_per_layer(s, b, h, a, head_dim=d, v_head_dim=dv)
    want = s * b * (10 * h + 2 * a * d + 2 * a * d + 2 * a * dv + 2 * a * dv + 4 * 4 * h + 5 * a * s)
    assert float(got) == want
    # fp8: the attention output's 1-byte cast is a·d_v (and the QKV, MLP inputs and fc2 input)
    got8 = memory.activation_bytes_per_layer(s, b, h, a, head_dim=d, v_head_dim=dv, lowp=True)
    assert float(got - got8) == s * b * (2 * h + a * dv + 4 * h)


def test_models_without_mla_are_unchanged():
    """Every other model has d_v = d_h: 2q + 2kv + 2kv_v + 2q_v = 4q + 4kv (Llama 3 70B: q = 8192,
    kv = 8·128 = 1024; dense, TP 1, bf16, no dropout, gated f = 28,672: R 8h, S 4q + 4kv + 6f)."""
    d = _one_stage("default")
    d["cluster"]["n_gpus"] = 512  # dp 512: the global batch of 512
    r = planner.evaluate(d)
    h, q, kv, f = 8192, 8192, 1024, 28672
    per_token = 8 * h + 4 * q + 4 * kv + 6 * f
    assert r.results["mem_activations_bytes"] == 80 * 8192 * per_token


# 2. DualPipe's split ----------------------------------------------------------------------------

def test_dualpipe_end_rank_holds_p_micro_batches_of_stage_0_and_one_of_stage_p_minus_1():
    """DeepSeek-V3 preset (p 16, 61 layers: ranks 0–12 hold 4, 13–15 hold 3; 3 dense layers on
    stage 0; full recompute keeps 2h = 14,336 B per token per layer, s·b = 4096 tokens: 56 MiB per
    layer and micro-batch): rank 0 keeps 16 micro-batches of stage 0 (4 layers) and 1 of stage 15
    (3 layers): (16·4 + 1·3)·56 MiB = 3,752 MiB, plus the recomputed layer's working set. Half and
    half (8.5 each) gave 3,451 MiB."""
    r = planner.evaluate(planner.load_preset("deepseek-v3-h800-2048"))
    st0 = r.stages[0]
    per_layer = 2 * 7168 * 4096
    assert per_layer == 56 * 2**20
    stash = (16 * 4 + 1 * 3) * per_layer
    work = st0["mem_activations_bytes"] - stash
    # the working set: one whole MoE layer of one micro-batch less its kept input (no recompute
    # minus full recompute), the largest kind the rank recomputes; between 1 and 3 GiB here
    assert 1 * GiB < work < 3 * GiB
    assert "(16 × stage 0's 224.0 MiB" in r.explain["mem_activations_bytes"]
    assert "+ 1 × its mirror stage 15's 168.0 MiB) / 17" in r.explain["mem_activations_bytes"]
    # the middle ranks: rank 7 holds stages 7 and 8, 4 layers each: 17 × 4 × 56 MiB + the same working set
    st7 = r.stages[7]
    assert st7["mem_activations_bytes"] - work == 17 * 4 * per_layer


# 3. fp8 MoE layers: the router's input stays 16-bit --------------------------------------------------

def test_fp8_moe_layer_keeps_the_mlp_input_at_16_bits():
    """Mixtral 8x7B (32 MoE layers, h 4096, 32 heads of 128, 8 KV heads, top-2 of 8 experts of
    14,336, no shared expert), one stage, s·b = 4096 tokens. bf16 -> fp8 takes off, per token and
    layer: the QKV input's second byte (h), the attention output's (q = 4096), and each of the 2
    routed copies' fc1 input (h) and fc2 input (f_e) second bytes: 4096 + 4096 + 2·(4096 + 14336)
    = 45,056 B. The MLP input (the router's input) stays 2h (it was taken to h: 49,152 B)."""
    acts = {}
    for prec in ("bf16", "fp8"):
        d = _one_stage("mixtral-8x7b-h100-64", ep=1)
        d["training"]["precision"] = prec
        d["cluster"]["n_gpus"] = 64
        acts[prec] = planner.evaluate(d).results["mem_activations_bytes"]
    assert acts["bf16"] - acts["fp8"] == 32 * 4096 * (4096 + 4096 + 2 * (4096 + 14336))


def test_fp8_moe_layer_with_a_shared_expert_keeps_its_1_byte_input_cast_too():
    """The same with one shared expert of 14,336 (a Mixtral-shaped model with
    n_shared_experts = 1): bf16 -> fp8 also takes the shared expert's fc2 input second byte (f_s),
    and adds its fc1 input's 1-byte cast (h): 45,056 + 14,336 − 4,096 = 55,296 B per token and
    layer."""
    acts = {}
    for prec in ("bf16", "fp8"):
        d = _one_stage("mixtral-8x7b-h100-64", ep=1)
        m = _model("mixtral-8x7b")
        m["moe"] = {**m["moe"], "n_shared_experts": 1, "shared_expert_ffn_hidden_size": 14336}
        d["model"] = m
        d["training"]["precision"] = prec
        d["cluster"]["n_gpus"] = 64
        acts[prec] = planner.evaluate(d).results["mem_activations_bytes"]
    assert acts["bf16"] - acts["fp8"] == 32 * 4096 * (45_056 + 14_336 - 4_096)


def test_fp8_dense_layer_still_keeps_the_mlp_input_at_one_byte():
    """A dense layer's pre-MLP norm is fused into fc1 (TE LayerNormLinear): its output is saved as
    the fp8 cast. Llama 3 70B, one stage: bf16 -> fp8 takes h (QKV input) + h (MLP input) + q
    (attention output) + f (fc2 input) per token and layer: 8192 + 8192 + 8192 + 28672."""
    acts = {}
    for prec in ("bf16", "fp8"):
        d = _one_stage("default")
        d["training"]["precision"] = prec
        d["cluster"]["n_gpus"] = 512
        acts[prec] = planner.evaluate(d).results["mem_activations_bytes"]
    assert acts["bf16"] - acts["fp8"] == 80 * 8192 * (8192 * 3 + 28672)
