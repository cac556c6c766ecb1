"""Review 15e: Mixture-of-Experts and MLA modelling against published figures.

Every expected value is a hand calculation from the model's published architecture (config.json /
technical report, cited in each test) or a published figure; none is read back from the engine.
Parameter conventions are those of planner/model_stats.py (DESIGN §4.1): the planner's
``params_active`` counts the input embedding, the model cards that leave it out are compared with
``params_active − V·h``.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import planner
from planner.schema import Scenario

ROOT = Path(__file__).resolve().parents[1]
EXACT = 1e-9
MODELS = json.loads((ROOT / "presets" / "models.json").read_text())


def _ev(model, par=None, train=None, system="dgx-h100", n_gpus=None):
    """One evaluation of ``model`` (preset id or ModelSpec dict) on a plain split."""
    t = {"seq_len": 4096, "global_batch_size": 16, "micro_batch_size": 1}
    t.update(train or {})
    p = {"tp": 1, "pp": 1, "cp": 1, "ep": 1, "vpp": 1, "dp": 8, "schedule": "1f1b",
         "sequence_parallel": False, "zero_stage": 1, "recompute": "selective", "flash_attention": True}
    p.update(par or {})
    n = n_gpus or p["tp"] * p["pp"] * p["cp"] * p["dp"]
    s = Scenario.model_validate({"model": model, "cluster": {"system": system, "n_gpus": n},
                                 "training": t, "parallelism": p})
    return planner.evaluate(s)


def moe_counts(h, L, a, k, d_h, V, E, topk, fe, *, n_sh=0, f_sh=None, first_dense=0, f_dense=0,
               bias=False, attn=None, tied=False):
    """(total, active, matmul-active) parameters written out from DESIGN §4.1: attention
    ``h·a·d_h + 2·h·k·d_h + a·d_h·h`` (+ biases ``(a + 2k)·d_h + h``), SwiGLU expert ``3·h·f_e``
    (+ biases ``2·f_e + h``), router ``h·E``, two RMSNorms ``h`` per layer, embedding and head
    ``V·h`` each, final norm ``h``."""
    f_sh = fe if f_sh is None else f_sh
    if attn is None:
        attn = h * a * d_h + 2 * h * k * d_h + a * d_h * h
        attn_b = ((a + 2 * k) * d_h + h) if bias else 0
    else:
        attn_b = 0
    exp = 3 * h * fe + ((2 * fe + h) if bias else 0)
    exp_mm = 3 * h * fe
    sh = n_sh * (3 * h * f_sh + ((2 * f_sh + h) if bias else 0))
    sh_mm = n_sh * 3 * h * f_sh
    dense_mlp = 3 * h * f_dense + ((2 * f_dense + h) if bias else 0)
    n_moe = L - first_dense
    emb = V * h * (1 if tied else 2)
    layer_ne = attn + attn_b + sh + h * E + 2 * h
    total = n_moe * (layer_ne + E * exp) + first_dense * (attn + attn_b + dense_mlp + 2 * h) + emb + h
    active = n_moe * (layer_ne + topk * exp) + first_dense * (attn + attn_b + dense_mlp + 2 * h) + emb + h
    mm = n_moe * (attn + topk * exp_mm + sh_mm + h * E) + first_dense * (attn + 3 * h * f_dense) + V * h
    return total, active, mm


def mla_attn(h, a, rq, rkv, nope, rope, dv):
    """MLA per layer (DeepSeek-V2 arXiv:2405.04434 §2.1.2 / V3 arXiv:2412.19437 §2.1.1): q down
    ``h·r_q`` + its RMSNorm ``r_q`` + q up ``r_q·a·(d_nope + d_rope)`` (``h·a·(d_nope + d_rope)``
    without q compression), kv down ``h·(r_kv + d_rope)`` (the shared RoPE key) + its RMSNorm
    ``r_kv`` + kv up ``r_kv·a·(d_nope + d_v)``, output ``a·d_v·h``."""
    q = (h * rq + rq + rq * a * (nope + rope)) if rq else h * a * (nope + rope)
    return q + h * (rkv + rope) + rkv + rkv * a * (nope + dv) + a * dv * h


def mla_norms(rq, rkv):
    return rq + rkv


# --- parameters of the MoE presets --------------------------------------------------------------

# (h, L, a, k, d_h, V, E, top_k, f_e, bias): the presets' config.json values, cited in models.json
PRESET_SHAPES = {
    # mistralai/Mixtral-8x22B-v0.1 config.json; Mistral AI announcement: 141B total, 39B active
    "mixtral-8x22b": ((6144, 56, 48, 8, 128, 32768, 8, 2, 16384, False), 141e9, 39e9),
    # Qwen3 Technical Report arXiv:2505.09388 Table 2 + Qwen/Qwen3-30B-A3B config.json: 30.5B / 3.3B
    "qwen3-30b-a3b": ((2048, 48, 32, 4, 128, 151936, 128, 8, 768, False), 30.5e9, 3.3e9),
    # Qwen3 Technical Report Table 2 + Qwen/Qwen3-235B-A22B config.json: 235B / 22B
    "qwen3-235b-a22b": ((4096, 94, 64, 4, 128, 151936, 128, 8, 1536, False), 235e9, 22e9),
    # gpt-oss model card arXiv:2508.10925 Table 1: 116.83B total, 5.13B active (unembedding in,
    # input embedding out)
    "gpt-oss-120b": ((2880, 36, 64, 8, 64, 201088, 128, 4, 2880, True), 116.83e9, 5.13e9),
    "gpt-oss-20b": ((2880, 24, 64, 8, 64, 201088, 32, 4, 2880, True), 20.91e9, 3.61e9),
}


@pytest.mark.parametrize("mid", sorted(PRESET_SHAPES))
def test_moe_preset_parameters_by_hand_and_published(mid):
    (h, L, a, k, d_h, V, E, topk, fe, bias), pub_total, pub_active = PRESET_SHAPES[mid]
    total, active, mm = moe_counts(h, L, a, k, d_h, V, E, topk, fe, bias=bias)
    r = _ev(mid).results
    assert r["params_total"] == pytest.approx(total, rel=EXACT)
    assert r["params_active"] == pytest.approx(active, rel=EXACT)
    assert r["matmul_params_active"] == pytest.approx(mm, rel=EXACT)
    assert r["params_total"] == pytest.approx(pub_total, rel=0.01)
    if mid.startswith("gpt-oss"):
        # the card's active count leaves the input embedding out (models.json note); the router's
        # bias (E per layer) is not modelled: at most 1e-6 of it
        assert r["params_active"] - V * h == pytest.approx(pub_active, rel=0.002)
    else:
        assert r["params_active"] == pytest.approx(pub_active, rel=0.02)
    assert MODELS[mid]["published_params_total"] == pub_total
    assert MODELS[mid]["published_params_active"] == pub_active


# --- models with no preset, as inline ModelSpecs --------------------------------------------------

def _spec(name, **kw):
    base = {"name": name, "gated_mlp": True, "tied_embeddings": False, "norm": "rmsnorm", "linear_bias": False}
    base.update(kw)
    return base


DSV2 = _spec(  # deepseek-ai/DeepSeek-V2 config.json; arXiv:2405.04434 §3.1.2: 236B total, 21B activated
    "DeepSeek-V2", n_layers=60, hidden_size=5120, n_heads=128, ffn_hidden_size=12288, vocab_size=102400,
    moe={"n_experts": 160, "top_k": 6, "expert_ffn_hidden_size": 1536, "n_shared_experts": 2, "first_dense_layers": 1},
    mla={"q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128})
DSV2_LITE = _spec(  # deepseek-ai/DeepSeek-V2-Lite config.json (no q compression); model card: 15.7B / 2.4B
    "DeepSeek-V2-Lite", n_layers=27, hidden_size=2048, n_heads=16, ffn_hidden_size=10944, vocab_size=102400,
    moe={"n_experts": 64, "top_k": 6, "expert_ffn_hidden_size": 1408, "n_shared_experts": 2, "first_dense_layers": 1},
    mla={"q_lora_rank": 0, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128})
DBRX = _spec(  # databricks/dbrx-base config.json; Databricks blog (2024-03-27): 132B total, 36B active
    "DBRX", n_layers=40, hidden_size=6144, n_heads=48, n_kv_heads=8, ffn_hidden_size=10752, vocab_size=100352,
    moe={"n_experts": 16, "top_k": 4, "expert_ffn_hidden_size": 10752})
SCOUT = _spec(  # meta-llama/Llama-4-Scout-17B-16E config.json text_config; model card: 109B total, 17B active
    "Llama 4 Scout", n_layers=48, hidden_size=5120, n_heads=40, n_kv_heads=8, head_dim=128, ffn_hidden_size=16384,
    vocab_size=202048, moe={"n_experts": 16, "top_k": 1, "expert_ffn_hidden_size": 8192, "n_shared_experts": 1})
MAVERICK = _spec(  # Llama-4-Maverick-17B-128E: MoE every 2nd layer (interleave_moe_layer_step 2), dense
    # layers of intermediate_size_mlp 16384; model card: 400B total, 17B active. The planner places
    # the 24 dense layers first (first_dense_layers): totals are exact.
    "Llama 4 Maverick", n_layers=48, hidden_size=5120, n_heads=40, n_kv_heads=8, head_dim=128, ffn_hidden_size=16384,
    vocab_size=202048, moe={"n_experts": 128, "top_k": 1, "expert_ffn_hidden_size": 8192, "n_shared_experts": 1,
                            "first_dense_layers": 24})


def test_deepseek_v2_236b_21b_by_hand():
    h, a, V = 5120, 128, 102400
    attn = mla_attn(h, a, 1536, 512, 128, 64, 128)
    total, active, mm = moe_counts(h, 60, a, a, 192, V, 160, 6, 1536, n_sh=2, first_dense=1, f_dense=12288,
                                   attn=attn)
    mm -= 60 * mla_norms(1536, 512)  # the latent RMSNorms are no matmul
    r = _ev(DSV2, {"ep": 8}).results
    assert r["params_total"] == pytest.approx(total, rel=EXACT)
    assert r["params_active"] == pytest.approx(active, rel=EXACT)
    assert r["matmul_params_active"] == pytest.approx(mm, rel=EXACT)
    assert r["params_total"] == pytest.approx(236e9, rel=0.005)
    assert r["params_active"] == pytest.approx(21e9, rel=0.02)


def test_deepseek_v2_lite_without_q_compression_by_hand():
    h, a, V = 2048, 16, 102400
    attn = mla_attn(h, a, 0, 512, 128, 64, 128)
    total, active, mm = moe_counts(h, 27, a, a, 192, V, 64, 6, 1408, n_sh=2, first_dense=1, f_dense=10944,
                                   attn=attn)
    mm -= 27 * mla_norms(0, 512)
    r = _ev(DSV2_LITE, {"ep": 8}).results
    assert r["params_total"] == pytest.approx(total, rel=EXACT)
    assert r["params_active"] == pytest.approx(active, rel=EXACT)
    assert r["matmul_params_active"] == pytest.approx(mm, rel=EXACT)
    assert r["params_total"] == pytest.approx(15.7e9, rel=0.005)
    # the card's 2.4B leaves the input embedding out (docs/inputs.md "Active parameters")
    assert r["params_active"] - V * h == pytest.approx(2.4e9, rel=0.03)


@pytest.mark.parametrize("spec,pub_total,pub_active,tol", [
    (DBRX, 132e9, 36e9, 0.015), (SCOUT, 109e9, 17e9, 0.015), (MAVERICK, 400e9, 17e9, 0.015)])
def test_dbrx_and_llama4_totals_by_hand_and_published(spec, pub_total, pub_active, tol):
    h, L, a, V = spec["hidden_size"], spec["n_layers"], spec["n_heads"], spec["vocab_size"]
    k = spec["n_kv_heads"]
    d_h = spec.get("head_dim", h // a)
    moe = spec["moe"]
    total, active, _ = moe_counts(h, L, a, k, d_h, V, moe["n_experts"], moe["top_k"], moe["expert_ffn_hidden_size"],
                                  n_sh=moe.get("n_shared_experts", 0), first_dense=moe.get("first_dense_layers", 0),
                                  f_dense=spec["ffn_hidden_size"])
    r = _ev(spec, {"ep": 8}).results
    assert r["params_total"] == pytest.approx(total, rel=EXACT)
    assert r["params_active"] == pytest.approx(active, rel=EXACT)
    assert r["params_total"] == pytest.approx(pub_total, rel=tol)
    assert r["params_active"] == pytest.approx(pub_active, rel=0.02)


# --- DeepSeek-V3: MTP module, FLOPs per token ------------------------------------------------------

DSV3 = dict(h=7168, a=128, V=129280, L=61, rq=1536, rkv=512, nope=128, rope=64, dv=128, E=256, fe=2048,
            f=18432, first=3)


def test_deepseek_v3_main_model_plus_mtp_module_is_the_685b_checkpoint():
    """deepseek-ai/DeepSeek-V3 model card: 'The total size of DeepSeek-V3 models on Hugging Face is
    685B, which includes 671B of the Main Model weights and 14B of the Multi-Token Prediction (MTP)
    Module weights.' The MTP module (arXiv:2412.19437 §2.2, depth 1) is one MoE transformer block,
    the projection M ∈ R^{h×2h}, two RMSNorms (h each) and, in the checkpoint, its own copy of the
    embedding and output head (V·h each) and the head's RMSNorm. The preset excludes it."""
    d = DSV3
    h = d["h"]
    attn = mla_attn(h, d["a"], d["rq"], d["rkv"], d["nope"], d["rope"], d["dv"])
    moe_layer = attn + (d["E"] + 1) * 3 * h * d["fe"] + h * d["E"] + 2 * h
    mtp = moe_layer + 2 * h * h + 2 * h + 2 * d["V"] * h + h
    r = _ev("deepseek-v3", {"ep": 8}).results
    assert MODELS["deepseek-v3"]["published_params_total"] == 671e9
    assert r["params_total"] == pytest.approx(671e9, rel=0.001)
    assert mtp == pytest.approx(14e9, rel=0.05)
    assert r["params_total"] + mtp == pytest.approx(685e9, rel=0.002)


def test_deepseek_v3_flops_per_token_megatron_count_plus_router():
    """NVIDIA's DeepSeek-V3 count (Megatron ``num_floating_point_operations``, causal, no MTP):
    249.8 GFLOP per token at seq 4,096 (cited in planner/timing.py, MOE_HOST_S_PER_LOCAL_EXPERT).
    By hand: 6·N_matmul (MLA latent norms out) + causal attention 3·s·a·(d_qk + d_v)·L per token;
    the planner adds the router 6·h·E per MoE layer (Megatron omits it); the full count doubles
    the attention term."""
    d = DSV3
    h, a, s, L = d["h"], d["a"], 4096, d["L"]
    attn_mm = mla_attn(h, a, d["rq"], d["rkv"], d["nope"], d["rope"], d["dv"]) - mla_norms(d["rq"], d["rkv"])
    n_mm = (d["first"] * (attn_mm + 3 * h * d["f"]) + (L - d["first"]) * (attn_mm + 9 * 3 * h * d["fe"] + h * d["E"])
            + d["V"] * h)
    router = 6 * h * d["E"] * (L - d["first"])
    causal_core = 3 * s * a * (d["nope"] + d["rope"] + d["dv"]) * L
    B = 16
    r = _ev("deepseek-v3", {"ep": 8}, {"seq_len": s, "global_batch_size": B}).results
    per_tok_causal = r["model_flop_per_step_causal"] / (B * s)
    per_tok_full = r["model_flop_per_step"] / (B * s)
    assert per_tok_causal == pytest.approx(6 * n_mm + causal_core, rel=EXACT)
    assert per_tok_full == pytest.approx(6 * n_mm + 2 * causal_core, rel=EXACT)
    assert (per_tok_causal - router) / 1e9 == pytest.approx(249.8, abs=0.05)


def test_deepseek_v3_report_gpu_hours_imply_a_plausible_mfu():
    """arXiv:2412.19437 Table 1: 2,664K H800 GPU-hours for 14.8T tokens of pre-training. With the
    planner's per-token model FLOPs (full count, MTP excluded) and the H800's dense BF16 peak
    989.4 TFLOP/s the report implies an all-in MFU near 44 %: the planner's own MFU for the
    published layout must sit above it (a step without failures or the batch ramp) and within
    the MoE band (docs/timing.md: the model reads as a well-tuned stack, up to ~1.3x)."""
    r = planner.evaluate(planner.load_preset("deepseek-v3-h800-2048")).results
    assert r["tokens_per_step"] == 15360 * 4096
    per_tok = r["model_flop_per_step"] / r["tokens_per_step"]
    implied = 14.8e12 * per_tok / (2.664e6 * 3600 * 989.4e12)
    assert implied == pytest.approx(0.439, abs=0.01)
    assert implied < r["mfu"] < 1.3 * implied


# --- capacity factor ---------------------------------------------------------------------------------

def test_capacity_factor_moves_expert_time_not_model_flops_or_params():
    """MoESpec.capacity_factor is load imbalance / padded capacity (schema): the work the model
    defines (params, model FLOPs, the MFU numerator) is the top-k routed tokens whatever the
    padding; the step gets slower."""
    spec = copy.deepcopy(MODELS["mixtral-8x7b"])
    r1 = _ev(spec, {"ep": 8}).results
    spec["moe"]["capacity_factor"] = 1.25
    r2 = _ev(spec, {"ep": 8}).results
    for key in ("params_total", "params_active", "model_flop_per_step", "model_flop_per_step_causal"):
        assert r2[key] == r1[key], key
    assert r2["step_time_s"] > r1["step_time_s"]
    assert r2["mfu"] < r1["mfu"]


# --- expert parallelism: all-to-all bytes, sharding --------------------------------------------------

def _a2a_text(res):
    return res.explain["t_ep_comm_s"]


def test_deepseek_v3_all_to_all_bytes_fp8_dispatch_and_node_limit():
    """DeepSeek-V3 §3.3.2 / §2.1.2: dispatch in FP8 (1 B), combine in BF16 (2 B), each token to at
    most M = 4 nodes. Per MoE layer and micro-batch (b = 1, s = 4,096) one all-to-all carries
    b·s·h·top_k elements, 4096·7168·8 = 234.9M, at the mean (1 + 2)/2 = 1.5 B: 352.3 MB; the
    network share min(top_k, M)/top_k = 0.5. Full recompute re-runs the forward dispatch and
    combine: 6 all-to-alls per layer (4 without)."""
    res = planner.evaluate(planner.load_preset("deepseek-v3-h800-2048"))
    txt = _a2a_text(res)
    mb = 4096 * 7168 * 8 * 1.5 / 1e6
    assert f"{mb:.1f} MB" in txt
    assert "× 0.5" in txt
    assert "6 all-to-all" in txt
    d = planner.presets.preset_json("deepseek-v3-h800-2048")
    d["parallelism"].update(ep_dispatch_fp8=False, recompute="selective")
    txt2 = _a2a_text(planner.evaluate(d))
    assert f"{4096 * 7168 * 8 * 2 / 1e6:.1f} MB" in txt2
    assert "4 all-to-all" in txt2


def test_deepseek_v3_published_layout_model_states_by_hand():
    """DeepSeek-V3 §3.2 layout on 2,048 H800: PP 16 (DualPipe: rank 0 holds stages 0 and 15), EP 64,
    ZeRO-1 DP 128, no TP; 61 layers split 4 × 13 + 3 × 3 ('uneven'). Rank 0: stage 0 = layers 0–3
    (the 3 dense layers and one MoE layer) with the embedding; stage 15 = layers 58–60 (3 MoE) with
    the head and final norm. Expert parameters: 4 MoE layers × 256/64 local experts × 3·h·f_e;
    optimizer states (fp32 master + Adam m, v: 12 B) sharded over DP 128 for the dense part and
    over the expert-DP group dp/ep = 2 for the experts; bf16 weights, fp32 gradients (Megatron)."""
    d = DSV3
    h = d["h"]
    attn = mla_attn(h, d["a"], d["rq"], d["rkv"], d["nope"], d["rope"], d["dv"])
    dense_layer = attn + 3 * h * d["f"] + 2 * h
    moe_ne = attn + 3 * h * d["fe"] + h * d["E"] + 2 * h  # attention, shared expert, router, norms
    expert = 3 * h * d["fe"]
    non_expert = 2 * d["V"] * h + h + 3 * dense_layer + 4 * moe_ne
    experts = 4 * (d["E"] // 64) * expert
    st = planner.evaluate(planner.load_preset("deepseek-v3-h800-2048")).stages
    s0 = st[0]
    assert s0["mem_weights_bytes"] == pytest.approx(2 * (non_expert + experts), rel=EXACT)
    assert s0["mem_grads_bytes"] == pytest.approx(4 * (non_expert + experts), rel=EXACT)
    assert s0["mem_optimizer_bytes"] == pytest.approx(12 * (non_expert / 128 + experts / 2), rel=EXACT)
    # a middle rank j = 3 holds stages 3 (layers 12–15) and 12 (layers 48–51): 8 MoE layers
    s3 = st[3]
    ne3 = 8 * moe_ne
    ex3 = 8 * (d["E"] // 64) * expert
    assert s3["mem_weights_bytes"] == pytest.approx(2 * (ne3 + ex3), rel=EXACT)
    assert s3["mem_optimizer_bytes"] == pytest.approx(12 * (ne3 / 128 + ex3 / 2), rel=EXACT)


def test_mixtral_64_h100_ep8_interleaved_stage0_states_by_hand():
    """Megatron-Core MoE README reference mapping (preset mixtral-8x7b-h100-64): TP 1, PP 4, VPP 8,
    EP 8, DP 16, ZeRO-1. Rank 0 holds 8 of the 32 layers (one per chunk) and the embedding; its
    8 experts per layer spread over EP 8 (one local expert), their optimizer over dp/ep = 2."""
    h, a, k, V, E, f = 4096, 32, 8, 32000, 8, 14336
    attn = h * a * 128 + 2 * h * k * 128 + a * 128 * h
    ne = 8 * (attn + h * E + 2 * h) + V * h
    ex = 8 * (E // 8) * 3 * h * f
    s0 = planner.evaluate(planner.load_preset("mixtral-8x7b-h100-64")).stages[0]
    assert s0["mem_weights_bytes"] == pytest.approx(2 * (ne + ex), rel=EXACT)
    assert s0["mem_grads_bytes"] == pytest.approx(4 * (ne + ex), rel=EXACT)
    assert s0["mem_optimizer_bytes"] == pytest.approx(12 * (ne / 16 + ex / 2), rel=EXACT)


def test_expert_dp_of_one_leaves_expert_optimizer_unsharded():
    """ep = dp·cp: each expert lives on one rank (expert-DP group of 1), so ZeRO-1 cannot shard its
    optimizer states: 12 B per local expert parameter stay on the rank (docs/memory.md: experts
    sharded over dp·cp/ep). Mixtral 8x7B, dp 8, ep 8: one local expert per layer."""
    h, a, k, V, E, f = 4096, 32, 8, 32000, 8, 14336
    attn = h * a * 128 + 2 * h * k * 128 + a * 128 * h
    ne = 32 * (attn + h * E + 2 * h) + 2 * V * h + h
    ex = 32 * 1 * 3 * h * f  # one local expert per layer
    r = _ev("mixtral-8x7b", {"ep": 8, "dp": 8}, {"global_batch_size": 8}).results
    assert r["mem_optimizer_bytes"] == pytest.approx(12 * (ne / 8 + ex / 1), rel=EXACT)
    assert r["mem_weights_bytes"] == pytest.approx(2 * (ne + ex), rel=EXACT)


def _dp_rs_s(res):
    m = re.search(r"gradient reduce-scatter ([0-9.e+-]+) s", res.explain["t_dp_comm_exposed_s"])
    return float(m.group(1))


def test_expert_gradients_reduce_over_the_expert_dp_group_only():
    """Expert gradients are reduced over the expert-DP group dp·cp/ep, dense ones over dp·cp
    (Megatron-Core expert_data_parallel group). With ep = dp = 8 the group is one rank: the expert
    width cannot move the DP traffic. With ep = 4 (groups of 2) the reduce-scatter adds
    (2−1)/2 · P_exp_local against the dense (8−1)/8 · P_dense (same NVLink ring bandwidth, α-β
    model): P_exp_local = 32 layers × 8 experts × 3·h·f / 4, P_dense = 32·(attention + router +
    norms) + 2·V·h + h."""
    h, a, k, V, E, f = 4096, 32, 8, 32000, 8, 14336
    wide = copy.deepcopy(MODELS["mixtral-8x7b"])
    wide["moe"]["expert_ffn_hidden_size"] = 2 * f
    rs8 = _dp_rs_s(_ev("mixtral-8x7b", {"ep": 8, "dp": 8}, {"global_batch_size": 8}))
    rs8_wide = _dp_rs_s(_ev(wide, {"ep": 8, "dp": 8}, {"global_batch_size": 8}))
    assert rs8_wide == rs8
    rs4 = _dp_rs_s(_ev("mixtral-8x7b", {"ep": 4, "dp": 8}, {"global_batch_size": 8}))
    attn = h * a * 128 + 2 * h * k * 128 + a * 128 * h
    p_dense = 32 * (attn + h * E + 2 * h) + 2 * V * h + h
    p_exp_local = 32 * E * 3 * h * f / 4
    assert (rs4 - rs8) / rs8 == pytest.approx((0.5 * p_exp_local) / (7 / 8 * p_dense), rel=0.02)


# --- inputs, in the API and the CLI -----------------------------------------------------------------

def test_cli_bad_moe_inputs_name_the_field_and_range():
    cases = {
        "model.moe.capacity_factor=0.5": "model.moe.capacity_factor: allowed 1 to 16",
        "model.moe.top_k=9": "top_k = 9 exceeds n_experts = 8",
        "parallelism.ep=3": "parallelism.ep = 3 must divide model.moe.n_experts = 8",
    }
    for arg, msg in cases.items():
        p = subprocess.run([sys.executable, "-m", "planner", "evaluate", "--preset", "mixtral-8x7b-h100-64",
                            "--set", arg], capture_output=True, text=True, cwd=ROOT)
        assert p.returncode == 2, arg
        assert msg in p.stderr, (arg, p.stderr)
        assert "Traceback" not in p.stderr
