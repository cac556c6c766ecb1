"""Multi-token prediction (ModelSpec.mtp_layers; DeepSeek-V3 report arXiv:2412.19437 §2.2,
Megatron-Core ``multi_token_prediction.py``): parameters, FLOPs, memory of the last stage, step time,
the schema / Hugging Face import / share link surfaces, and mtp_layers = 0 changing nothing.

Expected values are hand calculations from the architecture (DeepSeek-V3 config.json dimensions)
and the published totals (deepseek-ai/DeepSeek-V3 model card: 685B = 671B main + 14B MTP)."""

from __future__ import annotations

import copy
import json
import math
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import planner
from planner import catalog, share
from planner.hf_config import import_hf_config
from planner.presets import preset_json
from planner.schema import InputError, validate_scenario

# DeepSeek-V3 config.json (tests/data/hf_configs14/deepseek_v3.json)
h, a, V, L = 7168, 128, 129280, 61
RQ, RKV, NOPE, ROPE, DV = 1536, 512, 128, 64, 128
E, TOPK, FE, N_SH, F_DENSE, FIRST = 256, 8, 2048, 1, 18432, 3

# MLA per layer (DeepSeek-V3 §2.1.1): q_a h·r_q, q_b r_q·a·(nope+rope), kv_a h·(r_kv+rope),
# kv_b r_kv·a·(nope+dv), o a·dv·h; latent RMSNorms r_q + r_kv (not matmuls)
MLA_MM = h * RQ + RQ * a * (NOPE + ROPE) + h * (RKV + ROPE) + RKV * a * (NOPE + DV) + a * DV * h
MLA = MLA_MM + RQ + RKV
EXPERT = 3 * h * FE  # SwiGLU expert: gate, up, down
MOE_LAYER = MLA + E * EXPERT + N_SH * EXPERT + h * E + 2 * h  # + router h·E + 2 RMSNorms
MOE_ACTIVE_MM = MLA_MM + TOPK * EXPERT + N_SH * EXPERT + h * E  # matmuls touching each token
EH_PROJ = 2 * h * h  # M_k ∈ R^{h×2h}
MTP_NORMS = 3 * h  # enorm, hnorm, final_layernorm (HF: shared_head.norm)

DSV3 = "deepseek-v3-h800-2048"


def _with_model(data: dict, **fields) -> dict:
    """The scenario with its model inlined from the catalogue and ``fields`` set on it."""
    d = copy.deepcopy(data)
    mid = d["model"] if isinstance(d["model"], str) else None
    m = catalog.models()[mid].model_dump(mode="json") if mid else copy.deepcopy(d["model"])
    m.update(fields)
    d["model"] = m
    return d


def _results(data) -> dict:
    return planner.evaluate(data).results


# --- parameters -------------------------------------------------------------------------------


def test_deepseek_v3_mtp_adds_one_moe_block_projection_and_three_norms():
    base = preset_json(DSV3)
    r0, r1 = _results(base), _results(_with_model(base, mtp_layers=1))
    mtp = MOE_LAYER + EH_PROJ + MTP_NORMS  # 11,610,067,968
    assert mtp == 11_610_067_968
    assert r1["params_total"] - r0["params_total"] == mtp
    assert r1["params_mtp"] == mtp and r0["params_mtp"] == 0
    # active: the block with top_k of E experts, the projection, the norms
    assert r1["params_active"] - r0["params_active"] == MLA + (TOPK + N_SH) * EXPERT + h * E + 2 * h + EH_PROJ + MTP_NORMS
    # Model card: 685B on Hugging Face = 671B main + 14B MTP. The checkpoint's MTP layer also stores
    # its own embedding and head (V·h each; shared in training, so not counted by the planner). Both
    # published figures are rounded to 1B, so the MTP share is 14B ± 1B.
    stored = mtp + 2 * V * h
    assert 13e9 <= stored <= 15e9
    assert abs(r1["params_total"] + 2 * V * h - 685e9) <= 1e9


def test_two_mtp_layers_count_twice_and_dense_models_take_a_dense_block():
    base = preset_json(DSV3)
    r1 = _results(_with_model(base, mtp_layers=1))
    r2 = _results(_with_model(base, mtp_layers=2))
    assert r2["params_mtp"] == 2 * r1["params_mtp"]
    # Llama 3 8B (dense, untied): one dense layer (GQA attention + SwiGLU + 2 norms) + 2h² + 3h
    d = preset_json("llama3-8b-h100-64")
    hh, kv, dh, f = 4096, 8, 128, 14336
    layer = hh * 32 * dh + 2 * hh * kv * dh + 32 * dh * hh + 3 * hh * f + 2 * hh
    r = _results(_with_model(d, mtp_layers=1))
    assert r["params_mtp"] == layer + 2 * hh * hh + 3 * hh


# --- FLOPs ------------------------------------------------------------------------------------


def test_deepseek_v3_mtp_model_and_hardware_flops_by_hand():
    """Per token and MTP depth: 6·(the block's active matmuls + eh_proj 2h² + the output head V·h)
    (Megatron-LM num_floating_point_operations: logits × (D + 1), 2h² per MTP layer, the block as one
    more layer) + the attention core, full counting 3 × 2·s·a·(d_qk + d_v) per token (forward 1,
    backward 2). Full recompute (the preset) adds the block and eh_proj forward once and the core
    forward; the head is not recomputed."""
    base = preset_json(DSV3)
    B, s = base["training"]["global_batch_size"], base["training"]["seq_len"]
    tokens = B * s
    r0, r1 = _results(base), _results(_with_model(base, mtp_layers=1))
    core_fwd = 2.0 * B * s * s * a * (NOPE + ROPE + DV)  # QKᵀ + AV, one layer, full counting
    mm = MOE_ACTIVE_MM + EH_PROJ + V * h
    assert r1["model_flop_per_step"] - r0["model_flop_per_step"] == pytest.approx(6.0 * mm * tokens + 3.0 * core_fwd, rel=1e-12)
    hw = 2.0 * (MOE_ACTIVE_MM + EH_PROJ) * tokens + core_fwd
    d_hw = r1["hardware_flop_per_step"] - r0["hardware_flop_per_step"]
    assert d_hw - (r1["model_flop_per_step"] - r0["model_flop_per_step"]) == pytest.approx(hw, rel=1e-12)
    # MFU counts them: model FLOP / (step · N · peak16), the formula the explain shows
    assert r1["mfu"] == pytest.approx(r1["model_flop_per_step"] / (r1["step_time_s"] * 2048 * 989.4e12), rel=1e-3)


def test_partial_recompute_does_not_recompute_the_mtp_block():
    """Megatron's MultiTokenPredictionLayer checkpoints its block under full recompute with the uniform
    method only (_checkpointed_forward); under the block method (recompute_layers > 0) it warns
    "recompute_method == 'block' is not supported for MTP yet. Skipping recompute." So with
    recompute_layers = 1 the MTP share of the hardware FLOPs equals its model FLOPs, while with every
    layer recomputed it adds the block and eh_proj forward, 2·(active block matmuls + 2h²) per token,
    and the attention core forward once (by hand, DeepSeek-V3 dimensions). (Until review 16h this test
    asserted the opposite.)"""
    base = preset_json(DSV3)
    base["parallelism"].update(schedule="1f1b")
    B, s = base["training"]["global_batch_size"], base["training"]["seq_len"]
    tokens = B * s
    core_fwd = 2.0 * B * s * s * a * (NOPE + ROPE + DV)
    part = copy.deepcopy(base)
    part["parallelism"]["recompute_layers"] = 1

    def mtp_share(d):
        r0, r1 = _results(d), _results(_with_model(d, mtp_layers=1))
        return (r1["hardware_flop_per_step"] - r0["hardware_flop_per_step"],
                r1["model_flop_per_step"] - r0["model_flop_per_step"])

    hw_full, model_full = mtp_share(base)
    hw_part, model_part = mtp_share(part)
    assert model_part == pytest.approx(model_full, rel=1e-12)
    assert hw_part == pytest.approx(model_part, rel=1e-12)
    assert hw_full - model_full == pytest.approx(2.0 * (MOE_ACTIVE_MM + EH_PROJ) * tokens + core_fwd, rel=1e-12)


# --- mtp_layers = 0 changes nothing -----------------------------------------------------------


@pytest.mark.parametrize("pid", ["default", DSV3, "llama3-8b-h100-64", "llama3-405b-h100-16k"])
def test_mtp_zero_is_byte_identical_to_no_field(pid):
    base = preset_json(pid)
    r_id, r_zero = _results(base), _results(_with_model(base, mtp_layers=0))
    r_none = _results(_with_model(base))  # inlined without the key: the default
    for k, v in r_id.items():
        for other in (r_zero, r_none):
            w = other[k]
            if isinstance(v, float) and math.isnan(v):
                assert math.isnan(w), k
            else:
                assert w == v, (k, v, w)


def test_a_mixed_batch_leaves_the_rows_without_mtp_unchanged():
    base = preset_json(DSV3)
    alone = planner.evaluate_many([base])
    mixed = planner.evaluate_many([base, _with_model(base, mtp_layers=1)])
    for c in alone.columns:
        if pd.api.types.is_numeric_dtype(alone[c].dtype):
            assert np.array_equal(alone[c].to_numpy(), mixed[c].to_numpy()[:1], equal_nan=True), c


# --- memory: the last stage only ----------------------------------------------------------------


def _llama8b_pp4(**par) -> dict:
    d = preset_json("llama3-8b-h100-64")
    d["training"].update(seq_len=4096, global_batch_size=64, micro_batch_size=1)
    d["parallelism"].update(tp=2, pp=4, cp=1, dp=None, sequence_parallel=True, zero_stage=1, recompute="none",
                            schedule="1f1b", flash_attention=True, **par)
    d["parallelism"].pop("dp")
    d["cluster"]["n_gpus"] = 32
    return d


def test_memory_of_the_last_stage_only_by_hand():
    """Llama 3 8B, TP 2 (SP) × PP 4 × DP 4, ZeRO-1, no recompute, flash attention, bf16, 1F1B. The
    MTP module sits on the last stage (Megatron-Core mtp_on_this_rank): stages 0–2 unchanged. On
    stage 3: parameters D·(dense layer + 2h²)/t + 3h norms + a copy of the input embedding V·h/t
    (Megatron builds the embedding on the MTP stage when pp > 1); weights 2 B, fp32 gradients 4 B,
    optimizer 12 B / dp. Activations: 1 micro-batch in flight on the last stage × (one layer's
    Korthikanti activations + the MTP inputs 10h B per token, /t with SP). Logits: 4 B × s·b·V/t more.
    Fragmentation: 5 % of the increase."""
    d0, d1 = _llama8b_pp4(), _with_model(_llama8b_pp4(), mtp_layers=1)
    s0, s1 = planner.evaluate(d0).stages, planner.evaluate(d1).stages
    assert len(s0) == len(s1) == 4
    for j in range(3):
        assert s1[j] == s0[j], j
    hh, kv, dh, f, VV, t, dp, s = 4096, 8, 128, 14336, 128256, 2, 4, 4096
    layer = hh * 32 * dh + 2 * hh * kv * dh + 32 * dh * hh + 3 * hh * f + 2 * hh
    P = (layer + 2 * hh * hh) / t + 3 * hh + VV * hh / t
    last0, last1 = s0[3], s1[3]
    assert last1["mem_weights_bytes"] - last0["mem_weights_bytes"] == pytest.approx(2.0 * P, rel=1e-12)
    assert last1["mem_grads_bytes"] - last0["mem_grads_bytes"] == pytest.approx(4.0 * P, rel=1e-12)
    assert last1["mem_optimizer_bytes"] - last0["mem_optimizer_bytes"] == pytest.approx(12.0 * P / dp, rel=1e-12)
    # one layer, TP + SP, flash, no dropout (Korthikanti Table 2 generalised: (R + S)/t, R = 8h
    # without the 2h dropout masks, S = 4q + 4kv + 6f gated): bytes per token × s·b
    q, kvw = 32 * dh, kv * dh
    per_tok = (8 * hh + 4 * q + 4 * kvw + 6 * f) / t + 10 * hh / t
    assert last1["mem_activations_bytes"] - last0["mem_activations_bytes"] == pytest.approx(per_tok * s, rel=1e-12)
    assert last1["mem_logits_bytes"] == pytest.approx(2.0 * last0["mem_logits_bytes"], rel=1e-12)
    assert last0["mem_logits_bytes"] == pytest.approx(4.0 * s * VV / t, rel=1e-12)
    inc = (2.0 + 4.0) * P + 12.0 * P / dp + per_tok * s + 4.0 * s * VV / t
    assert last1["mem_total_bytes"] - last0["mem_total_bytes"] == pytest.approx(1.05 * inc, rel=1e-9)


def test_full_recompute_keeps_only_the_checkpointed_inputs():
    """Under full recompute a layer keeps its input 2h and the MTP module its two inputs 4h (/t with
    SP): 6h/t B per token more on the last stage, besides the recomputed layer's working set already
    there."""
    d0, d1 = _llama8b_pp4(), _with_model(_llama8b_pp4(), mtp_layers=1)
    for d in (d0, d1):
        d["parallelism"]["recompute"] = "full"
    s0, s1 = planner.evaluate(d0).stages, planner.evaluate(d1).stages
    delta = s1[3]["mem_activations_bytes"] - s0[3]["mem_activations_bytes"]
    assert delta == pytest.approx((2 * 4096 + 4 * 4096) / 2 * 4096, rel=1e-12)


def test_tied_embeddings_need_no_extra_embedding_copy():
    """A tied model's head weight on the last stage already is the embedding copy the MTP module uses."""
    d0 = _llama8b_pp4()
    m = catalog.models()["llama3-8b"].model_dump(mode="json")
    m["tied_embeddings"] = True
    d0["model"] = m
    d1 = _with_model(d0, mtp_layers=1)
    w0, w1 = planner.evaluate(d0).stages[3], planner.evaluate(d1).stages[3]
    hh, kv, dh, f = 4096, 8, 128, 14336
    layer = hh * 32 * dh + 2 * hh * kv * dh + 32 * dh * hh + 3 * hh * f + 2 * hh
    P = (layer + 2 * hh * hh) / 2 + 3 * hh
    assert w1["mem_weights_bytes"] - w0["mem_weights_bytes"] == pytest.approx(2.0 * P, rel=1e-12)


def test_dualpipe_puts_the_mtp_module_on_both_end_ranks():
    base = preset_json(DSV3)
    r1 = planner.evaluate(_with_model(base, mtp_layers=1))
    s0, s1 = planner.evaluate(base).stages, r1.stages
    # the most loaded rank is an end rank: its explain names the MTP parts. By hand (TP 1, EP 64):
    # MLA + shared expert + router + 2 norms + eh_proj + 3 norms = 335.8M, routed experts
    # 256·3h·2048/64 = 176.2M: 0.512e9; full recompute keeps 2h (the block's input) + 4h (the two MTP
    # inputs) per token, 16-bit: (2 + 4)·7168·4096 B = 168 MiB per micro-batch, for 1 micro-batch: at
    # DualPipe's peak an end rank holds p − 0 = 16 micro-batches of its stage 0 side and 0 + 1 = 1 of
    # its stage p − 1 side, the one with the head (DualPipe.step(); until 2026-12-03 half of p + 1, 8.5)
    assert r1.results["mem_worst_stage"] == 0
    ex = r1.explain
    # written in e6 below 1e9 since review h32: 335.8M (rounded) + 256·3·7168·2048/64 = 176,160,768
    m_mtp = re.search(r"1 MTP module: ([\d.]+)e6 params", ex["mem_weights_bytes"])
    assert m_mtp and float(m_mtp.group(1)) * 1e6 == pytest.approx(335.8e6 + 176_160_768, abs=0.1e6)
    assert "1 MTP module with the head: 1 micro-batch × 168.0 MiB" in ex["mem_activations_bytes"]
    a0 = planner.evaluate(base).results["mem_activations_bytes"]
    assert r1.results["mem_activations_bytes"] - a0 == 168 * 2**20
    assert "× (1 + 1)" in ex["mem_logits_bytes"]
    p = len(s0)
    for j in range(1, p - 1):
        assert s1[j] == s0[j], j
    for j in (0, p - 1):
        assert s1[j]["mem_weights_bytes"] > s0[j]["mem_weights_bytes"]
        assert s1[j]["mem_logits_bytes"] == pytest.approx(2.0 * s0[j]["mem_logits_bytes"], rel=1e-12)


# --- step time ----------------------------------------------------------------------------------


def test_step_time_grows_on_the_head_stage_and_explains_it():
    d0 = _llama8b_pp4()
    d1 = _with_model(d0, mtp_layers=1)
    r0, r1 = planner.evaluate(d0), planner.evaluate(d1)
    assert r1.results["t_compute_s"] > r0.results["t_compute_s"]
    assert r1.results["t_tp_comm_s"] > r0.results["t_tp_comm_s"]  # the block's TP collectives
    assert "MTP 1 module" in r1.explain["t_compute_s"]
    assert "MTP blocks" in r1.explain["t_tp_comm_s"]
    # memory explains the most loaded stage: here stage 0 (more micro-batches in flight), no MTP there
    assert r1.results["mem_worst_stage"] == 0 and "MTP" not in r1.explain["mem_weights_bytes"]
    assert "MTP" in r1.explain["mfu"]
    assert any("Multi-token prediction" in n for n in r1.notes)
    # more than one more layer on the last stage (it also runs eh_proj and the head once more): the same
    # engine with 36 layers puts one more on every stage
    t_layer = planner.evaluate(_with_model(d0, n_layers=36)).results["t_compute_s"] - r0.results["t_compute_s"]
    assert r1.results["t_compute_s"] - r0.results["t_compute_s"] > t_layer


def test_pp1_step_time_difference_is_one_layer_plus_eh_proj_plus_head():
    """PP 1, dense, no recompute: the MTP module costs one more layer (the same engine with L + 1
    layers), plus eh_proj and the head + loss once more; so it costs more than a layer, and the
    excess does not depend on the layer count."""
    d = preset_json("llama3-8b-h100-64")
    d["parallelism"].update(recompute="none", cp=1, dp=None)
    d["parallelism"].pop("dp")
    t = {(nl, D): _results(_with_model(d, n_layers=nl, mtp_layers=D))["t_compute_s"]
         for nl, D in ((32, 0), (32, 1), (33, 0), (33, 1), (34, 0))}
    extra32 = t[32, 1] - t[33, 0]  # eh_proj + head + loss, per step
    extra33 = t[33, 1] - t[34, 0]
    assert extra32 > 0
    assert extra32 == pytest.approx(extra33, rel=1e-9)


# --- surfaces -----------------------------------------------------------------------------------


def test_schema_refuses_a_negative_depth_naming_the_field_and_range():
    d = _with_model(preset_json(DSV3), mtp_layers=-1)
    with pytest.raises(InputError) as e:
        validate_scenario(d)
    assert "model.mtp_layers" in str(e.value) and "0 to 16" in str(e.value)
    for bad in (17, 1.5, True):
        with pytest.raises(InputError) as e:
            validate_scenario(_with_model(preset_json(DSV3), mtp_layers=bad))
        assert "model.mtp_layers" in str(e.value)


def test_cli_set_mtp_layers_and_its_error():
    ok = subprocess.run([sys.executable, "-m", "planner", "evaluate", "--preset", DSV3, "--set", "model.mtp_layers=1",
                         "--format", "json"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    out = json.loads(ok.stdout)
    res = out.get("results", out)
    assert res["params_total"] == pytest.approx(671_026_404_352 + 11_610_067_968, rel=1e-12)
    bad = subprocess.run([sys.executable, "-m", "planner", "evaluate", "--preset", DSV3, "--set", "model.mtp_layers=-1"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "model.mtp_layers" in bad.stderr and "0 to 16" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_hf_import_reads_num_nextn_predict_layers():
    imp = import_hf_config("tests/data/hf_configs14/deepseek_v3.json")
    assert imp.model.mtp_layers == 1
    assert any("num_nextn_predict_layers = 1" in n and "mtp_layers" in n for n in imp.notes)
    d = preset_json(DSV3)
    d["model"] = imp.model.model_dump(mode="json")
    r = _results(d)
    assert r["params_mtp"] == MOE_LAYER + EH_PROJ + MTP_NORMS
    assert r["params_total"] - r["params_mtp"] == pytest.approx(671e9, rel=0.001)  # report: 671B main model
    cfg = json.load(open("tests/data/hf_configs14/deepseek_v3.json"))
    for bad in (-1, 40, "1"):
        with pytest.raises(InputError) as e:
            import_hf_config({**cfg, "num_nextn_predict_layers": bad})
        assert "num_nextn_predict_layers" in str(e.value)
    assert import_hf_config({**cfg, "num_nextn_predict_layers": 0}).model.mtp_layers == 0


def test_share_link_round_trip_and_range():
    d = _with_model(preset_json(DSV3), mtp_layers=2)
    sj = validate_scenario(d).to_json_dict()
    params = share.scenario_to_params(sj, preset=DSV3)
    assert params["m"] == "custom" and params["mtp"] == "2"
    back, warns = share.params_to_scenario(params)[:2]
    model = back.model if hasattr(back, "model") else back["model"]
    assert (model.mtp_layers if hasattr(model, "mtp_layers") else model["mtp_layers"]) == 2
    for bad in ("-1", "17", "x"):
        w = share.params_to_scenario({**params, "mtp": bad})[1]
        assert any(x.startswith(f"mtp={bad!r}") and "0 to 16" in x for x in w), w
