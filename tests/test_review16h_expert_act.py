"""Review 16h: the routed experts' activation memory with expert tensor parallelism (found by review 16e).

Megatron-Core's ``MoEAlltoAllTokenDispatcher`` ("permute->A2A(EP)->AG(TP)->sort_chunk", its TP group
the expert-TP group of ``etp`` ranks) all-gathers the dispatched tokens over the etp ranks, so each
rank's expert GEMMs run on ``etp`` times the routed token-copies it sent; the grouped GEMM saves that
whole fc1 input ``[sb·r·etp/t, h]`` for its weight gradient. The expert weights are split over etp
(fc1 ``h × 2fe/etp``, fc2 ``fe/etp × h``), so the fe-wide saved tensors are ``[sb·r·etp/t, 2fe/etp]``
(fc1 output, gated) and ``[sb·r·etp/t, fe/etp]`` (fc2 input); the combined output (the unpermute
input, after the reduce-scatter over etp and the combine all-to-all) is ``[sb·r/t, h]``. Per token of
the rank's micro-batch (``sb`` tokens, 16-bit): ``r·(2h·etp + 2h + 6fe)/t``; the planner charged
``r·(4h + 6fe)/t`` (as if etp = 1). Expected values below are hand calculations from these shapes and
Korthikanti et al. 2022 Table 2 (generalised: R = 8h without dropout, S = 4q + 4kv per token, flash
attention: no score matrix) with the Mixtral 8x7B config (mistralai/Mixtral-8x7B-v0.1 config.json:
h 4096, 32 layers, 32 heads, 8 KV heads of 128, 8 experts of 14,336, top-2, capacity factor 1).
"""

from __future__ import annotations

import copy

import pytest

import planner
from planner.presets import preset_json
from planner.schema import InputError, validate_scenario

H, L, Q, KV_HEADS, DH, FE, E, TOPK = 4096, 32, 32 * 128, 8, 128, 14336, 8, 2
S = 4096  # sequence length, micro-batch 1: sb = 4,096 tokens per micro-batch (CP 1)


def _mixtral(tp: int, etp: int | None = None, sp: bool = True, precision: str = "bf16", **par) -> dict:
    """Mixtral 8x7B on 64 H100, PP 1 (1 micro-batch in flight), EP 4, no recompute (unless ``par``
    says), flash attention."""
    d = preset_json("mixtral-8x7b-h100-64")
    q = dict(tp=tp, pp=1, vpp=1, cp=1, ep=4, sequence_parallel=sp, recompute="none",
             schedule="1f1b", flash_attention=True, zero_stage=1, etp=etp)
    q.update(par)
    d["parallelism"].update(q)
    d["parallelism"].pop("dp", None)
    d["training"].update(seq_len=S, micro_batch_size=1, global_batch_size=256, precision=precision)
    return d


def _act(d: dict) -> float:
    r = planner.evaluate(d)
    assert len(r.stages) == 1
    return r.stages[0]["mem_activations_bytes"]


def _layer_bytes_per_token(t: int, etp: int, sp: bool = True) -> float:
    """One Mixtral MoE layer's kept bytes per token of the micro-batch, by hand (bf16, no dropout, flash).
    R: norm inputs 4h, QKV input 2h, MLP (router / dispatcher) input 2h: 8h, replicated without SP.
    S: Q, K 2q + 2kv, V 2kv, attention output 2q: 4q + 4kv (kv = max(8, t) heads × 128), split by t.
    Router: fp32 logits and probabilities, 8 B per expert, of the tokens the rank routes: split by t
    with SP, replicated without it (every TP rank runs the router on all sb tokens).
    Routed experts (r = 2 copies per token): fc1 input 2h × r·etp/t, fc1 output 4fe and fc2 input
    2fe × r/t, combined output 2h × r/t with SP (× r, replicated, without it: all sb tokens routed on
    every rank, t = etp)."""
    r = TOPK * 1.0
    kv = max(KV_HEADS, t) * DH
    R = 8 * H / (t if sp else 1)
    S_attn = (4 * Q + 4 * kv) / t
    router = 8 * E / (t if sp else 1)
    fc1_in = 2 * H * r * etp / t
    fe_wide = (4 * FE + 2 * FE) * r / t
    out = 2 * H * r / (t if sp else 1)
    return R + S_attn + router + fc1_in + fe_wide + out


def test_mixtral_tp2_sp_expert_tp2_by_hand():
    """TP 2 with SP, etp = tp = 2 (Megatron's default), EP 4: per layer and micro-batch the routed
    experts keep fc1 input 2·4096·4096·2·2/2 = 67,108,864 B (the all-gathered copies of both TP ranks),
    fc1 output + fc2 input 6·14336·4096·2/2 = 352,321,536 B and the combined output 2·4096·4096·2/2 =
    33,554,432 B. The whole layer: (8h + 4q + 4kv + 8E + r·(2h·2 + 2h + 6fe))/2 = 137,248 B per token,
    562,167,808 B per layer; 32 layers, 1 micro-batch in flight."""
    per_tok = _layer_bytes_per_token(2, 2)
    assert per_tok == 137_248
    routed_layer = (2 * H * 2 * 2 / 2 + 6 * FE * 2 / 2 + 2 * H * 2 / 2) * S
    assert routed_layer == 67_108_864 + 352_321_536 + 33_554_432
    assert _act(_mixtral(2)) == pytest.approx(L * per_tok * S, rel=1e-12)
    # etp unset is etp = tp: the same
    assert _act(_mixtral(2, etp=2)) == _act(_mixtral(2))


def test_expert_tp_one_under_tp2_keeps_only_its_own_copies():
    """TP 2 with SP, etp = 1: no all-gather over the expert-TP group (one rank), the fc1 input is the
    rank's own sb·r/t copies; the difference to etp = 2 is 32 layers × 2h·sb·r·(2 − 1)/2 = 32 × 33,554,432 B."""
    a1, a2 = _act(_mixtral(2, etp=1)), _act(_mixtral(2, etp=2))
    assert a1 == pytest.approx(L * _layer_bytes_per_token(2, 1) * S, rel=1e-12)
    assert a2 - a1 == pytest.approx(L * 2 * H * S * TOPK * (2 - 1) / 2, rel=1e-12)
    assert a2 - a1 == 32 * 33_554_432


def test_tp4_with_expert_tp2():
    """TP 4 with SP, etp = 2, EP 4 (etp·ep = 8 divides tp·dp = 64): fc1 input 2h·r·2/4 per token."""
    per_tok = _layer_bytes_per_token(4, 2)
    # by hand: (8h + 4q + 4kv + 8E + 2·(2h·2 + 2h) + 2·6fe)/4, kv = 8 heads (4 divides 8)
    assert per_tok == (8 * H + 4 * Q + 4 * 8 * DH + 8 * E + 2 * (4 * H + 2 * H) + 2 * 6 * FE) / 4
    assert _act(_mixtral(4, etp=2)) == pytest.approx(L * per_tok * S, rel=1e-12)


def test_tp1_is_unchanged_by_hand():
    """TP 1 (etp = 1): r·(4h + 6fe) per token as before: (8h + 4q + 4kv + 8E + 2·(4h + 6fe)) × sb."""
    per_tok = 8 * H + 4 * Q + 4 * KV_HEADS * DH + 8 * E + TOPK * (4 * H + 6 * FE)
    assert _layer_bytes_per_token(1, 1) == per_tok
    assert _act(_mixtral(1)) == pytest.approx(L * per_tok * S, rel=1e-12)


def test_tp2_without_sequence_parallelism_keeps_replicated_routed_tokens():
    """TP 2 without SP (etp = tp; allowed): every TP rank holds and routes all sb tokens, so the
    dispatched fc1 input and the combined output are replicated, 2h·r each per token; the fe-wide
    tensors are split by etp; R (8h) is replicated as for a dense layer, and so are the router's fp32
    logits and probabilities (8E: each rank routes all sb tokens; until 2026-12-03 the model split
    them by t, review h26a)."""
    per_tok = 8 * H + 8 * E + (4 * Q + 4 * KV_HEADS * DH + TOPK * 6 * FE) / 2 + TOPK * (2 * H + 2 * H)
    assert _layer_bytes_per_token(2, 2, sp=False) == per_tok
    assert _act(_mixtral(2, sp=False)) == pytest.approx(L * per_tok * S, rel=1e-12)


def test_fp8_keeps_the_gathered_fc1_input_in_one_byte():
    """FP8 (Transformer Engine saves the fp8 cast of a GEMM input): the QKV input h (the MLP input
    stays 2h in an MoE layer: it is the router's input, review 26; R = 7h), the attention output q,
    the fc2 input fe and the fc1 input h per element: per token
    (7h + 3q + 4kv + 8E + r·(h·etp + 2h + 5fe))/t at TP 2 with SP, etp 2."""
    per_tok = (7 * H + 3 * Q + 4 * KV_HEADS * DH + 8 * E + TOPK * (H * 2 + 2 * H + 5 * FE)) / 2
    assert _act(_mixtral(2, precision="fp8")) == pytest.approx(L * per_tok * S, rel=1e-12)


def test_full_recompute_working_set_holds_the_gathered_tokens():
    """Full recompute: each layer keeps its input 2h/t per token; the layer being recomputed holds its
    whole working set on top, the hand per-token sum above: 32 × 2h/2 + (137,248 − 2h/2) per token."""
    a = _act(_mixtral(2, recompute="full"))
    keep = 2 * H / 2
    assert a == pytest.approx((L * keep + (_layer_bytes_per_token(2, 2) - keep)) * S, rel=1e-12)


def test_the_nemo_mixtral_8x22b_row_grows_by_the_gathered_copies():
    """Mixtral 8x22B (h 6144, 56 layers, top-2) at TP 2 with SP, etp = tp: the stage's activations
    grow by inflight × layers × 2h·sb·r·(etp − 1)/t against the old count. Checked as the difference
    between etp = 2 and etp = 1 on the same scenario (etp = 1: the old count at TP 2)."""
    d = preset_json("mixtral-8x7b-h100-64")
    m = copy.deepcopy(planner.catalog.models()["mixtral-8x22b"].model_dump(mode="json")) \
        if "mixtral-8x22b" in planner.catalog.models() else None
    if m is None:
        pytest.fail("catalogue has no mixtral-8x22b")
    d["model"] = m
    d["parallelism"].update(tp=2, pp=4, vpp=1, cp=1, ep=8, sequence_parallel=True, recompute="none",
                            schedule="1f1b", flash_attention=True, zero_stage=1)
    d["parallelism"].pop("dp", None)
    d["cluster"]["n_gpus"] = 128
    d["training"].update(seq_len=8192, micro_batch_size=1, global_batch_size=256, precision="bf16")
    e1 = copy.deepcopy(d)
    e1["parallelism"]["etp"] = 1
    r2, r1 = planner.evaluate(d), planner.evaluate(e1)
    h, sb, r = 6144, 8192, 2
    layers = 56 / 4
    inflight = 4  # 1F1B stage 0: min(m, p) = 4
    for st2, st1 in zip(r2.stages[:1], r1.stages[:1]):
        assert st2["mem_activations_bytes"] - st1["mem_activations_bytes"] == pytest.approx(
            inflight * layers * 2 * h * sb * r * (2 - 1) / 2, rel=1e-12)


def test_etp_below_tp_without_sp_is_refused():
    d = _mixtral(2, etp=1, sp=False)
    with pytest.raises(InputError) as e:
        validate_scenario(d)
    assert "sequence_parallel" in str(e.value)
