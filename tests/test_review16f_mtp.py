"""Review 16f: multi-token prediction (model.mtp_layers, commit 36a65fc) tried by a Megatron-Core MoE
user. The three defects (partial recompute, activation-offload traffic, a dense model's block called
MoE) were xfail(strict=True) until their fix (review 16h); the rest pins what was checked and held.

Expected values come from hand calculations (Llama 3 8B and DeepSeek-V3 config dimensions) and from
Megatron-LM's own code:
* ``megatron/training/training.py`` ``num_floating_point_operations`` (transformer_flops): the MTP
  block counted as one more layer of the last layer's kind, ``6·D·(3h + 2h²)`` for the MTP norms and
  eh_proj, logits × (D + 1), MLA's q_lora / kv_lora terms with a ``+ 1`` (their norms), no router.
* ``megatron/core/transformer/multi_token_prediction.py``
  ``MultiTokenPredictionLayer._checkpointed_forward``: under ``recompute_granularity == 'full'``
  the ``uniform`` method checkpoints the MTP layer, the ``block`` method (the planner's
  ``recompute_layers``, exported as ``--recompute-method block``) warns "recompute_method ==
  'block' is not supported for MTP yet. Skipping recompute." and runs it without recompute.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

import planner
from planner import catalog
from planner.hf_config import import_hf_config
from planner.presets import preset_json
from planner.schema import InputError

DSV3 = "deepseek-v3-h800-2048"

# Llama 3 8B (tests/data/hf_configs14/llama31_8b.json dimensions)
H, A, KV, DH, F, V8 = 4096, 32, 8, 128, 14336, 128256
Q_W, KV_W = A * DH, KV * DH
LAYER_8B_MM = H * Q_W + 2 * H * KV_W + Q_W * H + 3 * H * F  # matmul weights of one layer


from test_review16b_mtp import _with_model  # noqa: E402  (the model inlined, fields set)


def _llama8b(pp: int = 4, n_gpus: int = 32, **par) -> dict:
    """Llama 3 8B, seq 4,096, 64 sequences, micro-batch 1, TP 2 with SP, bf16, flash, ZeRO-1."""
    d = preset_json("llama3-8b-h100-64")
    d["training"].update(seq_len=4096, global_batch_size=64, micro_batch_size=1)
    q = dict(tp=2, pp=pp, cp=1, dp=None, sequence_parallel=True, zero_stage=1, recompute="none",
             schedule="1f1b", flash_attention=True)
    q.update(par)
    d["parallelism"].update(q)
    d["parallelism"].pop("dp")
    d["cluster"]["n_gpus"] = n_gpus
    return d


# Activations one MTP module keeps per token without recompute (TP 2 with SP, flash, no dropout,
# 16-bit): its block as a layer (Korthikanti Table 2 generalised: 8h + 4q + 4kv + 6f, gated MLP) and
# its inputs (enorm / hnorm inputs 2h + 2h, the concatenation 4h, the final norm's input 2h), / t.
MTP_KEEP_PER_TOKEN_8B = (8 * H + 4 * Q_W + 4 * KV_W + 6 * F) / 2 + 10 * H / 2
assert MTP_KEEP_PER_TOKEN_8B == 22 * H


# --- defects ------------------------------------------------------------------------------------


def test_block_partial_recompute_does_not_recompute_the_mtp_block():
    """recompute = full with recompute_layers = 1 is Megatron's ``--recompute-method block
    --recompute-num-layers 1`` (planner/export.py). MultiTokenPredictionLayer._checkpointed_forward
    then runs the MTP layer without a checkpoint ("Skipping recompute"). So on the last stage, by hand:
    the MTP part of the hardware FLOPs equals its model FLOPs (no re-run forward); the MTP module keeps
    every activation of its block and its inputs, 22h bytes per token (TP 2, SP), 1 micro-batch in
    flight on the last 1F1B stage; and its compute time is the one it takes without recompute."""
    s, B = 4096, 64
    tokens = B * s
    core_fwd = 2.0 * B * s * s * A * (DH + DH)  # QKᵀ and AV of the MTP block, full counting
    d_model_hand = 6.0 * (LAYER_8B_MM + 2 * H * H + V8 * H) * tokens + 3.0 * core_fwd

    part0 = _llama8b(recompute="full", recompute_layers=1)
    part1 = _with_model(part0, mtp_layers=1)
    none0 = _llama8b(recompute="none")
    none1 = _with_model(none0, mtp_layers=1)
    rp0, rp1 = planner.evaluate(part0), planner.evaluate(part1)
    rn0, rn1 = planner.evaluate(none0), planner.evaluate(none1)

    d_model = rp1.results["model_flop_per_step"] - rp0.results["model_flop_per_step"]
    assert d_model == pytest.approx(d_model_hand, rel=1e-12)
    d_hw = rp1.results["hardware_flop_per_step"] - rp0.results["hardware_flop_per_step"]
    assert d_hw == pytest.approx(d_model_hand, rel=1e-12)  # today: + one block and eh_proj forward

    d_act = rp1.stages[3]["mem_activations_bytes"] - rp0.stages[3]["mem_activations_bytes"]
    assert d_act == pytest.approx(MTP_KEEP_PER_TOKEN_8B * s, rel=1e-12)  # today: 3h (checkpointed inputs)

    dt_part = rp1.results["t_compute_s"] - rp0.results["t_compute_s"]
    dt_none = rn1.results["t_compute_s"] - rn0.results["t_compute_s"]
    assert dt_part == pytest.approx(dt_none, rel=1e-9)


def test_activation_offload_swaps_the_mtp_activations_too():
    """PP 1, TP 2 (SP), 8 GPUs: dp 4, m = 64 / 4 = 16 micro-batches. With offload_activations every
    micro-batch's kept activations go to the host in the forward and come back in the backward; the
    MTP module's (22h B per token, s = 4,096) are part of them: the host stash holds one micro-batch's
    more (it does today) and the traffic per step is m × that more."""
    d0 = _llama8b(pp=1, n_gpus=8, offload_activations=True)
    d1 = _with_model(d0, mtp_layers=1)
    r0, r1 = planner.evaluate(d0), planner.evaluate(d1)
    per_mb = MTP_KEEP_PER_TOKEN_8B * 4096
    assert r1.stages[0]["mem_act_offload_bytes"] - r0.stages[0]["mem_act_offload_bytes"] == pytest.approx(per_mb, rel=1e-12)
    d_traffic = r1.results["act_offload_traffic_bytes"] - r0.results["act_offload_traffic_bytes"]
    assert d_traffic == pytest.approx(16 * per_mb, rel=1e-12)  # today: 0


@pytest.mark.parametrize("bad", [-1, 1.5, True, "1"])
def test_hf_import_names_the_mtp_range_for_every_bad_value(bad):
    cfg = json.loads((Path(__file__).parent / "data" / "hf_configs14" / "deepseek_v3.json").read_text())
    with pytest.raises(InputError) as e:
        import_hf_config({**cfg, "num_nextn_predict_layers": bad})
    msg = str(e.value)
    assert "num_nextn_predict_layers" in msg and "0 to 16" in msg and "10,000,000" not in msg


def test_a_dense_models_mtp_block_is_not_called_moe():
    """Llama 3 8B (dense), PP 2, D = 2: stage 1 (the MTP stage) is the most loaded, so its weights'
    explain names the MTP modules; their block is a dense layer, as docs/inputs.md says."""
    d = _with_model(_llama8b(pp=2, n_gpus=16), mtp_layers=2)
    r = planner.evaluate(d)
    assert r.results["mem_worst_stage"] == 1
    ex = r.explain["mem_weights_bytes"]
    assert "2 MTP modules" in ex
    assert "MoE" not in ex
    assert not any("MoE-layer kind" in n for n in r.notes)


# --- checked and holding ------------------------------------------------------------------------


@pytest.mark.parametrize("D", [0, 1, 2])
def test_deepseek_v3_causal_flops_against_megatron_num_floating_point_operations(D):
    """Megatron-LM transformer_flops for DeepSeek-V3 (MLA, 3 dense + 58 MoE layers, the MTP block of
    the last layer's kind, MoE) at seq 4,096 and 15,360 sequences, by hand; the planner's causal count
    differs by its documented conventions only: it counts the router h·E per MoE layer and leaves out
    the norm terms Megatron adds (q_lora_rank + kv_lora_rank per layer, 3h per MTP module)."""
    h, a, V = 7168, 128, 129280
    rq, rkv, nope, rope, dv = 1536, 512, 128, 64, 128
    E, topk, fe, fd = 256, 8, 2048, 18432
    s, B = 4096, 15360
    n_moe, n_dense, n_layers = 58 + D, 3, 61 + D
    attn = 6 * (rq * (h + a * (nope + rope) + 1) + rkv * (h + a * (nope + dv) + 1) + h * rope + a * dv * h
                + s * a * (nope + rope) / 2 + s * a * dv / 2)
    megatron = B * s * (6 * h * (fd * 3 * n_dense + fe * topk * 3 * n_moe + fe * 3 * n_moe) + attn * n_layers
                        + 6 * D * (3 * h + 2 * h * h) + 6 * h * V * (D + 1))
    conventions = 6 * B * s * (n_moe * h * E - n_layers * (rq + rkv) - D * 3 * h)
    r = planner.evaluate(_with_model(preset_json(DSV3), mtp_layers=D)).results
    assert r["model_flop_per_step_causal"] == pytest.approx(megatron + conventions, rel=1e-12)


def test_sweep_rows_with_mtp_equal_evaluate_of_their_split():
    base = _with_model(preset_json(DSV3), mtp_layers=1)
    df = planner.sweep(base, top=3)
    assert len(df) == 3
    for _, row in df.iterrows():
        d = copy.deepcopy(base)
        p = d["parallelism"]
        for k in ("tp", "pp", "dp", "cp", "ep", "vpp", "zero_stage", "recompute", "schedule",
                  "sequence_parallel", "offload_optimizer"):
            p[k] = row[k].item() if hasattr(row[k], "item") else row[k]
        d["training"]["micro_batch_size"] = int(row["micro_batch_size"])
        r = planner.evaluate(d).results
        for k in ("params_total", "model_flop_per_step", "mem_total_bytes", "step_time_s", "mfu"):
            assert float(row[k]) == pytest.approx(float(r[k]), rel=1e-12), k
        assert r["params_total"] == 671_026_404_352 + 11_610_067_968


def test_gpipe_keeps_every_micro_batchs_mtp_activations_and_cp_splits_them():
    """GPipe: the last stage holds all m = 64 / (1 · 4) = 16 micro-batches' MTP activations; CP 2
    halves the tokens per GPU (1F1B, 1 micro-batch in flight)."""
    s = 4096
    g0 = _llama8b(schedule="gpipe")
    g1 = _with_model(g0, mtp_layers=1)
    dg = planner.evaluate(g1).stages[3]["mem_activations_bytes"] - planner.evaluate(g0).stages[3]["mem_activations_bytes"]
    assert dg == pytest.approx(16 * MTP_KEEP_PER_TOKEN_8B * s, rel=1e-12)
    c0 = _llama8b(cp=2, n_gpus=64)
    c1 = _with_model(c0, mtp_layers=1)
    dc = planner.evaluate(c1).stages[3]["mem_activations_bytes"] - planner.evaluate(c0).stages[3]["mem_activations_bytes"]
    assert dc == pytest.approx(MTP_KEEP_PER_TOKEN_8B * s / 2, rel=1e-12)


def test_mtp_explain_strings_add_up_on_the_head_stage():
    """Llama 3 8B, PP 2, D = 2 (last stage slowest): the compute explain's parts and the TP explain's
    MTP share reproduce the totals: m × (layers × per layer + head + MTP), m × layers × n_coll ×
    t_AR + the MTP blocks' m × D × n_coll × t_AR."""
    r = planner.evaluate(_with_model(_llama8b(pp=2, n_gpus=16), mtp_layers=2))
    ex = r.explain["t_tp_comm_s"]
    assert "MTP blocks" in ex
    # 16 micro-batches × 16 layers × 4 collectives × t_AR, + 16 × 2 blocks × 4 × t_AR: 18/16 of the layers'
    m_layers = float(ex.split("×")[0].split("=")[1]) * float(ex.split("×")[1])
    assert m_layers == 16 * 16
    mtp_part = float(ex.split("of their kind) ")[1].split(" s")[0])
    layers_part = r.results["t_tp_comm_s"] - mtp_part
    assert mtp_part == pytest.approx(layers_part * 2 / 16, rel=1e-3)  # the printed value has 4 digits


# --- review 16h: the fixes' further consequences --------------------------------------------------


def _mtp_share(d: dict, key: str) -> float:
    return planner.evaluate(_with_model(d, mtp_layers=1)).results[key] - planner.evaluate(d).results[key]


@pytest.mark.parametrize("key, par", [("t_tp_comm_s", {}), ("t_cp_comm_s", dict(cp=16, tp=8, n_gpus=512))])
def test_block_partial_recompute_adds_no_mtp_recompute_collectives(key, par):
    """Llama 3 8B, PP 4, TP 2 (SP): the MTP block's TP collectives are 4 per micro-batch without
    recompute, 6 under full recompute (its forward runs again: + 2) and, under the block method
    (recompute_layers = 1, Megatron skips the MTP recompute), 4 again; the CP ring (CP 16 × TP 8, where
    its remainder is exposed) likewise runs its forward hops once, not twice (not the stage-averaged
    recompute share of the decoder layers)."""
    none = _mtp_share(_llama8b(recompute="none", **par), key)
    part = _mtp_share(_llama8b(recompute="full", recompute_layers=1, **par), key)
    full = _mtp_share(_llama8b(recompute="full", **par), key)
    assert none > 0
    assert part == pytest.approx(none, rel=1e-12)
    if key == "t_tp_comm_s":
        assert full == pytest.approx(1.5 * none, rel=1e-12)  # 6 of 4 collectives
    else:
        assert full > none


@pytest.mark.parametrize("overlap", [False, True])
def test_block_partial_recompute_adds_no_mtp_all_to_alls(overlap):
    """Mixtral 8x7B, PP 4 (1F1B), EP 8, one MTP module: its block's EP all-to-alls are 4 per micro-batch
    without recompute, 6 under full recompute and 4 under the block method; with ep_comm_overlap each
    hides behind the block's own compute, which under the block method has no recompute share."""
    def mk(**par):
        d = preset_json("mixtral-8x7b-h100-64")
        q = dict(tp=1, pp=4, vpp=1, schedule="1f1b", recompute="none", ep_comm_overlap=overlap)
        q.update(par)
        d["parallelism"].update(q)
        return d
    none = _mtp_share(mk(), "t_ep_comm_s")
    part = _mtp_share(mk(recompute="full", recompute_layers=1), "t_ep_comm_s")
    full = _mtp_share(mk(recompute="full"), "t_ep_comm_s")
    assert part == pytest.approx(none, rel=1e-12)
    if not overlap:
        assert none > 0 and full == pytest.approx(1.5 * none, rel=1e-12)


def test_dualpipe_activation_offload_swaps_the_head_sides_mtp_micro_batches():
    """DualPipe, PP 2 (both ranks end ranks, the MTP module on each), TP 2 (SP), 16 GPUs: dp 4, m = 16.
    At its peak each rank holds p − 0 = 2 micro-batches of its stage-0 side and 0 + 1 = 1 of the side
    with the head (DualPipe.step(); until 2026-12-03 half of p + 1 = 3, 1.5): its host stash holds 1
    micro-batch's MTP activations (22h B per token) more, and its traffic per step m/2 = 8
    micro-batches' more (half of the step's micro-batches run through the side with the head)."""
    d0 = _llama8b(pp=2, n_gpus=16, schedule="dualpipe", offload_activations=True)
    d1 = _with_model(d0, mtp_layers=1)
    r0, r1 = planner.evaluate(d0), planner.evaluate(d1)
    per_mb = MTP_KEEP_PER_TOKEN_8B * 4096
    for s0, s1 in zip(r0.stages, r1.stages):
        assert s1["mem_act_offload_bytes"] - s0["mem_act_offload_bytes"] == pytest.approx(1.0 * per_mb, rel=1e-12)
    d_traffic = r1.results["act_offload_traffic_bytes"] - r0.results["act_offload_traffic_bytes"]
    assert d_traffic == pytest.approx(8 * per_mb, rel=1e-12)
    assert "1 MTP module with the head" in r1.explain["mem_activations_bytes"]


def test_block_partial_recompute_explain_and_notes_say_the_mtp_block_is_not_recomputed():
    d = _with_model(_llama8b(pp=1, n_gpus=8, recompute="full", recompute_layers=1), mtp_layers=1)
    r = planner.evaluate(d)
    assert "not recomputed" in r.explain["mem_activations_bytes"]
    assert any("not under partial recompute" in n for n in r.notes)


def test_block_partial_recompute_keeps_an_moe_mtp_block_whole():
    """Mixtral 8x7B (h 4096, 32 heads, 8 KV heads of 128, 8 experts of 14,336, top-2), PP 4 (1F1B), TP 1,
    EP 8, flash attention, recompute_layers = 1: the MTP module on the last stage (1 micro-batch in
    flight) keeps its MoE block's no-recompute activations, 8h + 4q + 4kv + 8E (router, fp32) +
    2·(4h + 6fe) = 258,112 B per token, and its inputs 10h = 40,960 B per token."""
    d0 = preset_json("mixtral-8x7b-h100-64")
    d0["parallelism"].update(tp=1, pp=4, vpp=1, schedule="1f1b", recompute="full", recompute_layers=1,
                             flash_attention=True)
    d1 = _with_model(d0, mtp_layers=1)
    h, q, kv, E, fe = 4096, 4096, 8 * 128, 8, 14336
    per_tok = 8 * h + 4 * q + 4 * kv + 8 * E + 2 * (4 * h + 6 * fe) + 10 * h
    assert per_tok == 258_112 + 40_960
    s0, s1 = planner.evaluate(d0).stages, planner.evaluate(d1).stages
    assert s1[3]["mem_activations_bytes"] - s0[3]["mem_activations_bytes"] == pytest.approx(per_tok * 4096, rel=1e-12)
