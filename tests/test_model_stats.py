"""Parameter counts and FLOPs against published totals and hand calculations.

Sources: model cards / papers named in presets/models.json (`published_params_*`), Narayanan
et al. 2021 Table 1 (calibration.csv, `params_b`), Megatron-LM `num_floating_point_operations`.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from planner import batch as B
from planner import catalog, model_stats
from planner.schema import Scenario

CAL = Path(__file__).resolve().parents[2] / "shared" / "validation" / "calibration.csv"


def _scenario(model, *, gbs=8, seq=2048, recompute="none"):
    return Scenario.model_validate({
        "model": model,
        "cluster": {"system": "dgx-h100", "n_gpus": 8},
        "training": {"global_batch_size": gbs, "seq_len": seq},
        "parallelism": {"tp": 1, "pp": 1, "recompute": recompute},
    })


def _stats(*scenarios):
    return model_stats.stats(B.from_scenarios(list(scenarios)))


# Published totals (model cards / papers), tolerance 0.5% as the issue sets.
PUBLISHED = {
    "llama3-8b": (8.03e9, None),
    "llama3-70b": (70.6e9, None),
    "llama3-405b": (405.9e9, None),
    "llama2-70b": (69.0e9, None),
    "gpt3-175b": (174.6e9, None),
    "mixtral-8x7b": (46.7e9, 12.9e9),
}


@pytest.mark.parametrize("model_id", sorted(PUBLISHED))
def test_params_match_published(model_id):
    total, active = PUBLISHED[model_id]
    st = _stats(_scenario(model_id))
    assert st["params_total"][0] == pytest.approx(total, rel=0.005)
    if active is not None:
        assert st["params_active"][0] == pytest.approx(active, rel=0.005)


def test_deepseek_v3_with_exact_mla():
    """DeepSeek-V3 report: 671B total, 37B activated (MTP module excluded)."""
    st = _stats(_scenario("deepseek-v3", seq=4096))
    assert st["params_total"][0] == pytest.approx(671e9, rel=0.005)
    # 37B is rounded in the report; the exact count is 37.5-37.6B.
    assert st["params_active"][0] == pytest.approx(37e9, rel=0.02)


def test_every_model_preset_matches_its_published_total():
    for mid, m in catalog.models().items():
        if m.published_params_total is None:
            continue
        st = _stats(_scenario(mid, seq=2048))
        # Published totals are rounded to 0.1B (e.g. MPT's "6.7B", Megatron's "1.7B"): allow
        # the 0.5% model tolerance plus half of the last published digit (0.05B).
        tol_abs = 0.005 * m.published_params_total + 0.05e9
        assert st["params_total"][0] == pytest.approx(m.published_params_total, abs=tol_abs), mid


def _narayanan_rows():
    with CAL.open() as f:
        return [r for r in csv.DictReader(f) if r["source_key"] == "NARAYANAN21_T1"]


@pytest.mark.parametrize("row", _narayanan_rows(), ids=lambda r: r["run_id"])
def test_narayanan_table1_totals(row):
    """Narayanan et al. 2021 Table 1 parameter counts (billions, rounded to 0.1B)."""
    mid = "megatron-" + row["model"].split()[-1].lower().replace(".0b", "b")
    st = _stats(_scenario(mid))
    published = float(row["params_b"]) * 1e9
    assert st["params_total"][0] == pytest.approx(published, rel=0.005 if published > 5e9 else 0.03)


def test_flops_narayanan_hand_calculation():
    """Narayanan eq. (3) for the 18.4B row by hand: B=1024, s=2048, l=40, h=6144, V=51200.

    96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h))
      = 96·1024·2048·40·6144² · (1 + 2048/36864 + 51200/3932160)
      = 3.0399e17 · 1.068576 = 3.2484e17 FLOP (HFU count, includes the recompute forward).
    Our count with full recompute uses matmul params 12·l·h² + V·h (the formula's own model,
    biases and norms excluded) and recomputes the layers but not the output head, as eq. (3)
    does. The model FLOPs (no recompute) follow Korthikanti et al. 2022 §6:
    72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)).
    """
    by_hand = 96 * 1024 * 2048 * 40 * 6144**2 * (1 + 2048 / (6 * 6144) + 51200 / (16 * 40 * 6144))
    assert by_hand == pytest.approx(3.2484e17, rel=1e-4)
    assert model_stats.narayanan_flop_per_step(1024, 2048, 40, 6144, 51200) == pytest.approx(by_hand)
    st = _stats(_scenario("megatron-18.4b", gbs=1024, recompute="full"))
    assert st["hardware_flop_per_step"][0] == pytest.approx(by_hand, rel=0.002)
    korthikanti = 72 * 1024 * 2048 * 40 * 6144**2 * (1 + 2048 / (6 * 6144) + 51200 / (12 * 40 * 6144))
    assert st["model_flop_per_step"][0] == pytest.approx(korthikanti, rel=1e-9)


def test_flops_megatron_gqa_swiglu_hand_calculation():
    """Megatron-LM `num_floating_point_operations` for Llama 3 8B (GQA + SwiGLU), by hand.

    Megatron: 12·B·s·L·h²·(1 + k/a + f·3/(2h)·... ) — written out per term here for
    B=8, s=2048, L=32, h=4096, a=32, k=8, d=128, f=14336, V=128256:
      attention projections: Q h·h, K/V 2·h·k·d, O h·h  -> 2·4096² + 2·4096·1024 = 41,943,040
      gated MLP 3·h·f = 3·4096·14336 = 176,160,768
      per layer matmul params 218,103,808; ×32 = 6,979,321,856; + output head V·h =
      525,336,576 -> N = 7,504,658,432
      6·N·tokens = 6·7,504,658,432·16,384 = 7.3774e14
      attention core, causal half (Megatron since 2026): 6·B·s²·a·d·L
        = 6·8·2048²·32·128·32 = 2.6388e13; full counting doubles it.
    """
    N = 32 * (2 * 4096**2 + 2 * 4096 * 1024 + 3 * 4096 * 14336) + 128256 * 4096
    assert N == 7_504_658_432
    tokens = 8 * 2048
    causal = 6 * N * tokens + 6 * 8 * 2048**2 * 32 * 128 * 32
    full = 6 * N * tokens + 12 * 8 * 2048**2 * 32 * 128 * 32
    st = _stats(_scenario("llama3-8b", gbs=8, seq=2048))
    assert st["matmul_params_active"][0] == pytest.approx(N, rel=1e-12)
    assert st["model_flop_per_step_causal"][0] == pytest.approx(causal, rel=1e-12)
    assert st["model_flop_per_step"][0] == pytest.approx(full, rel=1e-12)


def test_selective_recompute_adds_attention_forward_only():
    st = _stats(_scenario("llama3-8b", recompute="none"), _scenario("llama3-8b", recompute="selective"),
                _scenario("llama3-8b", recompute="full"))
    attn_fwd = 2 * 8 * 2048**2 * 32 * (128 + 128) * 32  # 2·B·s²·a·(d_qk+d_v)·L
    assert st["attn_fwd_flop_per_step"][0] == pytest.approx(attn_fwd)
    hw = st["hardware_flop_per_step"]
    assert hw[1] - hw[0] == pytest.approx(attn_fwd)
    layer_matmul = st["matmul_params_active"][0] - 128256 * 4096  # output head is not recomputed
    assert hw[2] - hw[0] == pytest.approx(2 * layer_matmul * 8 * 2048 + attn_fwd)


def test_vectorised_over_a_million_rows():
    b = B.from_scenarios([_scenario("llama3-8b"), _scenario("mixtral-8x7b")])
    big = {k: np.repeat(v, 500_000) for k, v in b.items()}
    st = model_stats.stats(big)
    assert st["params_total"].shape == (1_000_000,)
    assert st["params_total"][0] == st["params_total"][499_999]
    assert st["params_total"][500_000] != st["params_total"][0]


def test_sliding_window_attention_by_hand():
    """Sliding-window layers (Beltagy et al. 2020; Mistral 7B, Gemma 2, GPT-OSS): a query sees
    min(w, s) keys. s = 4096, w = 128, half the layers windowed (GPT-OSS): full count
    0.5·4096 + 0.5·128 = 2112 keys, causal work 0.5·2048 + 0.5·(128 − 128²/8192) = 1087."""
    full, causal = model_stats.attention_keys(4096, 128, 0.5)
    assert float(full) == 2112.0 and float(causal) == 1087.0
    # no window, or a window no shorter than the sequence: s and s/2 exactly
    for w, frac in ((0, 0.7), (4096, 1.0), (10_000, 0.5)):
        full, causal = model_stats.attention_keys(4096, w, frac)
        assert float(full) == 4096.0 and float(causal) == 2048.0


def test_sliding_window_model_flops():
    """model_flop_per_step: the attention term scales with the keys per query (3 passes of
    2·B·s·keys·a·(d_qk + d_v)·L), the rest is unchanged; the causal count uses the causal keys."""
    import planner
    from planner import batch as B

    base = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    base["model"] = planner.catalog.models()["llama3-8b"].model_dump(mode="json")
    swa = {**base, "model": {**base["model"], "sliding_window": 1024, "sliding_window_layer_frac": 0.5}}
    st = [model_stats.stats(B.from_scenarios([planner.Scenario.model_validate(x)])) for x in (base, swa)]
    s, Bz = base["training"]["seq_len"], base["training"]["global_batch_size"]
    m = base["model"]
    a, d, L = m["n_heads"], m["hidden_size"] // m["n_heads"], m["n_layers"]
    full, causal = model_stats.attention_keys(s, 1024, 0.5)
    per_key = 2.0 * Bz * s * a * 2 * d * L
    assert float(st[0]["model_flop_per_step"][0] - st[1]["model_flop_per_step"][0]) == pytest.approx(
        3.0 * per_key * (s - float(full)), rel=1e-9)
    assert float(st[0]["model_flop_per_step_causal"][0] - st[1]["model_flop_per_step_causal"][0]) == pytest.approx(
        3.0 * per_key * (s / 2 - float(causal)), rel=1e-9)


def test_op_sac_recomputes_k_o_and_w3_by_hand():
    """TorchTitan per-op SAC (``selective_ac_option = "op"``) saves every odd matmul of a block
    and recomputes the even ones; in a Llama block (Q, K, V, O, W1, W3, W2) the backward needs
    K (attention gradient), O (the residual stream feeding the MLP norm, without TP) and W3
    (gate gradient). Llama 3 8B, tp = 1, B = 8, s = 2048: 2 · B·s · L · (h·k·d_h + a·d_h·h + h·f)
    = 2 × 16,384 × 32 × (4096·1024 + 4096·4096 + 4096·14,336) = 2 × 16,384 × 32 × 79,691,776
    = 8.3562e13 FLOP; the attention core is saved (flash). With TP the saved reduce-scatter
    after O rebuilds the residual: O drops out."""
    st = _stats(_scenario("llama3-8b", recompute="none"), _scenario("llama3-8b", recompute="op_sac"))
    hw = st["hardware_flop_per_step"]
    assert hw[1] - hw[0] == pytest.approx(2 * 8 * 2048 * 32 * 79_691_776, rel=1e-12)
    assert 4096 * 1024 + 4096 * 4096 + 4096 * 14336 == 79_691_776
    tp2 = _scenario("llama3-8b", recompute="op_sac")
    tp2.parallelism.tp = 2
    assert _stats(tp2)["hardware_flop_per_step"][0] - hw[0] == pytest.approx(
        2 * 8 * 2048 * 32 * (4096 * 1024 + 4096 * 14336), rel=1e-12)
    assert st["model_flop_per_step"][1] == st["model_flop_per_step"][0]  # MFU is unchanged by recompute
    # without flash attention the math attention's matmuls are not in the save list: + the core forward
    s = _scenario("llama3-8b", recompute="op_sac")
    s.parallelism.flash_attention = False
    st2 = _stats(s)
    assert st2["hardware_flop_per_step"][0] - hw[1] == pytest.approx(st["attn_fwd_flop_per_step"][0], rel=1e-12)


def test_op_sac_moe_recomputes_routed_up_projections_by_hand():
    """MoE layers under op_sac: TorchTitan's grouped expert GEMMs are not in the save list, so
    each routed copy's two up-projections (gated) run again, 2·h·f_e, plus the router gate
    (force-recomputed) h·E and the attention's K and O (tp = 1). Mixtral 8x7B (h 4096, 32
    heads, k 8, d_h 128, f_e 14,336, top-2 of 8, 32 MoE layers), B = 8, s = 2048:
    2 · B·s · 32 · (4096·1024 + 4096·4096 + 2 × 2 × 4096·14,336 + 4096·8)."""
    st = _stats(_scenario("mixtral-8x7b", recompute="none"), _scenario("mixtral-8x7b", recompute="op_sac"))
    per_token_layer = 4096 * 1024 + 4096 * 4096 + 2 * 2 * 4096 * 14336 + 4096 * 8
    hw = st["hardware_flop_per_step"]
    assert hw[1] - hw[0] == pytest.approx(2 * 8 * 2048 * 32 * per_token_layer, rel=1e-12)


def test_op_sac_mla_and_no_sp_cases_by_hand():
    """MLA with a query low-rank (DeepSeek-V3: r_q 1536, r_kv 512, 128 heads, d_nope 128,
    d_rope 64, d_v 128; TorchTitan's matmuls wq_a, wq_b, wkv_a, wkv_b, wo): the even ones, wq_b
    and wkv_b, are recomputed: 1536·128·192 + 512·128·256 = 37,748,736 + 16,777,216 =
    54,525,952 (wo is odd: saved). Llama with TP but no SP: O's output is all-reduced, nothing
    saved rebuilds the residual, so O runs again (K + O + W3)."""
    got = model_stats.op_sac_recompute_params(
        7168, 128, 192, 0, a=128, d_v=128, tp=1, gated=False, mla=True, q_lora_rank=1536,
        kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64)
    assert float(got) == 54_525_952
    k, o, w3 = 4096 * 1024, 4096 * 4096, 4096 * 14336
    kw = dict(a=32, d_v=128, gated=True)
    assert float(model_stats.op_sac_recompute_params(4096, 8, 128, 14336, tp=8, sequence_parallel=True, **kw)) == k + w3
    assert float(model_stats.op_sac_recompute_params(4096, 8, 128, 14336, tp=8, sequence_parallel=False, **kw)) == k + o + w3
    assert float(model_stats.op_sac_recompute_params(4096, 8, 128, 14336, tp=1, **kw)) == k + o + w3
