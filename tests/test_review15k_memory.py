"""Review 15k: the per-GPU memory model (planner/memory.py) checked by hand against published
memory figures and formulas, plus metamorphic checks. Every expected value is a hand calculation
from the cited source (shown in each docstring), never an earlier output of the code.

Sources:
[ZeRO]  Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter
        Models", SC'20, arXiv:1910.02054: §3.1 (2Ψ + 2Ψ + KΨ, K = 12), §5.1 / Table 1 (per-device
        model states against the DP degree), §1 ("a trillion-parameter model ... requires
        approximately 16 terabytes ... 16TB divided by 1024 is 16GB").
[K22]   Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models",
        arXiv:2205.05198, Table 2 and §4.2.3 (interleaved first stage: ``1 + (p−1)/(p·v)``).
[MEG]   Megatron-LM ``megatron/training/theoretical_memory_usage.py``:
        ``num_bytes_per_parameter = 18 if not use_distributed_optimizer else 6 + (12 / dp)``;
        ``compute_activation_memory``: ``s·b·h·(18 + 4·ffn/h)`` per layer × num_layers (p
        micro-batches of L/p layers on the first stage), × ``1 + (p−1)/(p·v)`` interleaved.
[DS]    DeepSpeed ``deepspeed/runtime/zero/stage3.py``, ``estimate_zero3_model_states_mem_needs``:
        no offload ``gpu = 4·largest_layer + 18·Ψ/N``; optimizer offload
        ``gpu = 4·largest_layer + 2·Ψ/N``, ``cpu = 16·Ψ/num_nodes`` (× additional_buffer_factor).
[PTP]   PyTorch ``torch/distributed/pipelining/schedules.py``, ``ScheduleGPipe._step_microbatches``:
        every micro-batch's forward and loss run (losses kept in ``_internal_losses``) before the
        first backward. Megatron ``_VocabParallelCrossEntropy.forward`` saves the fp32 softmax
        (``ctx.save_for_backward(exp_logits, ...)``) for the backward.

GPT-3 175B (Brown et al. 2020; the ``gpt3-175b-a100-1024`` preset, Megatron-LM 2021 style):
L = 96, h = 12,288, a = 96, f = 4h, V = 50,257, learned position table 2,048 × h, tied
embeddings, dropout 0.1, s = 2,048, b = 1, tp 8, pp 8, dp 16, global batch 1,536 → m = 96.
Per layer 12h² + 13h = 1,811,939,328 + 159,744 = 1,812,099,072 parameters, / t = 226,512,384.
Stage 0: 12 layers = 2,718,148,608 + word embedding V·h/t = 77,194,752 + position table
2,048·h = 25,165,824 (not TP-sharded) = 2,820,509,184 parameters.
"""

from __future__ import annotations

import numpy as np
import pytest

import planner
from planner import memory

GPT3 = "gpt3-175b-a100-1024"
SBH = 2048 * 1 * 12288  # s·b·h of GPT-3 = 25,165,824
LAYER_T8 = 226_512_384  # GPT-3 parameters of one layer per TP rank (t = 8)
STAGE0_P8 = 12 * LAYER_T8 + 77_194_752 + 25_165_824  # = 2,820,509,184


def gpt3(**par):
    """The GPT-3 preset as a dict, with ``parallelism`` / ``training`` fields replaced."""
    d = planner.load_preset(GPT3).to_json_dict()
    for k, v in par.items():
        sec = "training" if k in ("global_batch_size", "micro_batch_size", "cross_entropy", "grad_dtype",
                                  "precision", "seq_len") else "parallelism"
        d[sec][k] = v
    return d


def stages(d):
    return planner.evaluate(d).stages


# --------------------------------------------------------------------------------------------
# Defect found by this review: GPipe's last stage holds every micro-batch's loss
# --------------------------------------------------------------------------------------------

def test_gpipe_last_stage_holds_the_saved_loss_of_every_micro_batch():
    """[PTP], [MEG]: under GPipe the last stage runs all m forwards, each with its loss, before
    the first backward, so the loss's saved fp32 tensor (4 B per logit) of all m micro-batches
    is alive, not one micro-batch's as under 1F1B (forward then backward at once on the last
    stage). Until 2026-12-01 the planner charged GPipe one micro-batch of logits while
    charging it m micro-batches of layer activations.

    GPT-3, tp 8, pp 8, m = 1,536 / (1 · 16) = 96, s·V/t = 2,048 · 50,257 / 8 = 12,865,792
    logits per micro-batch:
      1F1B (fused loss):  4 B × 12,865,792                     =    51,463,168 B
      GPipe (fused loss): 4 B × 96 × 12,865,792                = 4,940,464,128 B (4.60 GiB)
      GPipe, eager loss under TP (loss_parallel 16 B) + PyTorch pipelining's kept outputs
      (4 B × m = 384 B) + the other 95 micro-batches' saved log-softmax (4 B × 95 = 380 B):
      (16 + 384 + 380) = 780 B × 12,865,792                   = 10,035,317,760 B
    (Before the fix: 51,463,168 B and 5,146,316,800 B = (16 + 384) × 12,865,792.)"""
    n = 2048 * 50257 / 8
    assert n == 12_865_792
    one = stages(gpt3(schedule="1f1b"))[-1]["mem_logits_bytes"]
    gp = stages(gpt3(schedule="gpipe"))
    eager = stages(gpt3(schedule="gpipe", cross_entropy="eager"))[-1]["mem_logits_bytes"]
    assert one == pytest.approx(51_463_168, rel=1e-12)
    assert gp[-1]["mem_logits_bytes"] == pytest.approx(4_940_464_128, rel=1e-12)
    assert [s_["mem_logits_bytes"] for s_ in gp[:-1]] == [0.0] * 7
    assert eager == pytest.approx(10_035_317_760, rel=1e-12)
    # the per-logit helper itself, vectorised over a mixed batch (GPipe and 1F1B rows)
    got = memory._logit_bytes_per_element(np.array([False, False, True]), np.array([8.0, 8.0, 8.0]),
                                          np.array([8.0, 8.0, 8.0]), np.array([96.0, 96.0, 96.0]),
                                          gpipe=np.array([False, True, True]))
    assert list(got) == [4.0, 384.0, 780.0]
    # a mixed batch gives each row what it gets alone (the sweep path)
    ds = [gpt3(schedule="gpipe"), gpt3(schedule="1f1b"), gpt3(schedule="gpipe", cross_entropy="eager")]
    t = planner.evaluate_many(ds)
    assert list(t["mem_logits_bytes"]) == [planner.evaluate(d).results["mem_logits_bytes"] for d in ds]
    assert list(t["mem_logits_bytes"]) == [4_940_464_128, 0.0, 10_035_317_760]  # 1F1B: stage 0 is the worst


def test_gpipe_headline_memory_is_the_last_stage_when_its_losses_outweigh_stage_0():
    """The vectorised headline (``mem_total_bytes``, ``mem_worst_stage``) sees the GPipe logits:
    GPT-3 under GPipe holds m = 96 micro-batches of activations on every stage (96 × 12 layers
    × 2·s·b·h = 4,831,838,208 B of full-recompute stash, plus one layer's working set), so the
    stages differ by their states and the last stage's logits: stage 7 holds 12 layers + the
    tied head V·h/t + the final LayerNorm's weight and bias 2h = 2,718,148,608 + 77,194,752 +
    24,576 = 2,795,367,936 parameters against stage 0's 2,820,509,184, 25,141,248 fewer (× 18 B
    = 0.42 GiB less states), but 4.60 GiB of losses (above): the last stage is the most loaded
    (before the fix stage 0 was, with 0.05 GiB of logits on stage 7)"""
    r = planner.evaluate(gpt3(schedule="gpipe"))
    st = r.stages
    assert int(r.results["mem_worst_stage"]) == 7
    assert r.results["mem_total_bytes"] == pytest.approx(max(s_["mem_total_bytes"] for s_ in st), rel=1e-12)
    assert st[7]["mem_weights_bytes"] == pytest.approx(2 * 2_795_367_936, rel=1e-12)
    assert 12 * LAYER_T8 + 77_194_752 + 2 * 12288 == 2_795_367_936


# --------------------------------------------------------------------------------------------
# ZeRO (Rajbhandari et al. 2020)
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("psi, nd, stage, gb", [
    # Table 1 rows, hand-evaluated: baseline (2+2+12)Ψ; P_os 4Ψ + 12Ψ/N_d; P_os+g 2Ψ + 14Ψ/N_d;
    # P_os+g+p 16Ψ/N_d (GB = 1e9 B)
    (7.5e9, 1, 1, 120.0), (7.5e9, 4, 1, 52.5), (7.5e9, 4, 2, 41.25), (7.5e9, 4, 3, 30.0),
    (7.5e9, 16, 1, 35.625), (7.5e9, 16, 2, 21.5625), (7.5e9, 16, 3, 7.5),
    (7.5e9, 64, 1, 31.40625), (7.5e9, 64, 2, 16.640625), (7.5e9, 64, 3, 1.875),
    (128e9, 4, 2, 704.0), (128e9, 16, 2, 368.0), (128e9, 64, 3, 32.0), (128e9, 1024, 3, 2.0),
    (1e12, 16, 2, 2875.0), (1e12, 64, 3, 250.0), (1e12, 1024, 1, 4011.71875),
    # §1: a trillion parameters on 1,024 GPUs with all three stages: 16 TB / 1,024 = 15.625 GB
    (1e12, 1024, 3, 15.625),
])
def test_zero_table1_model_states_per_device(psi, nd, stage, gb):
    """[ZeRO] §5.1 / Table 1: mixed-precision Adam, 2 B fp16 weights, 2 B fp16 gradients,
    K = 12 B optimizer states; per device (2 + 2 + K)Ψ (baseline), 2Ψ + 2Ψ + KΨ/N_d (P_os),
    2Ψ + (2 + K)Ψ/N_d (P_os+g), (2 + 2 + K)Ψ/N_d (P_os+g+p). E.g. 7.5B on 64 GPUs:
    30 + 90/64 = 31.41 GB, 15 + 105/64 = 16.64 GB, 120/64 = 1.875 GB (Fig. 1: 31.4, 16.6, 1.9)."""
    w, g, o = memory.model_state_bytes(psi, nd, stage, grad_bytes=2.0)
    assert float(w + g + o) / 1e9 == pytest.approx(gb, rel=1e-12)


def test_more_zero_sharding_never_raises_a_stage_with_many_layers():
    """Metamorphic ([ZeRO] §5): ZeRO 0 → 1 → 2 → 3 lowers every stage of GPT-3 (tp 8, pp 8,
    dp 16, fp32 gradients, 12 layers a stage: the ZeRO-3 exception of docs/memory.md needs
    fewer than about 4–8 layers with a shard group of 2). States of stage 0 by hand
    (P = 2,820,509,184): ZeRO-0 18P = 50,769,165,312 B; ZeRO-1 (6 + 12/16)P =
    19,038,437,022 B; ZeRO-2 (2 + 16/16)P = 8,461,527,552 B; ZeRO-3 18P/16 = 3,173,072,832 B
    (+ the prefetch: 2 gathered layers × 2 B + 1 layer × 4 B gradients = 8 × 226,512,384 =
    1,812,099,072 B)."""
    P = STAGE0_P8
    want = {0: 18 * P, 1: (6 + 12 / 16) * P, 2: 3 * P, 3: 18 * P / 16}
    totals = []
    for z in (0, 1, 2, 3):
        st = stages(gpt3(zero_stage=z))
        s0 = st[0]
        got = s0["mem_weights_bytes"] + s0["mem_grads_bytes"] + s0["mem_optimizer_bytes"]
        assert got == pytest.approx(want[z], rel=1e-12), z
        totals.append([s_["mem_total_bytes"] for s_ in st])
        if z == 3:
            assert s0["mem_zero3_prefetch_bytes"] == pytest.approx(8 * LAYER_T8, rel=1e-12)
    for lo, hi in zip(totals, totals[1:]):
        assert all(b <= a for a, b in zip(lo, hi))


# --------------------------------------------------------------------------------------------
# Megatron-LM theoretical_memory_usage.py
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("zero, bytes_per_param", [(0, 18.0), (1, 6.0 + 12.0 / 16)])
def test_megatron_weight_and_optimizer_bytes_per_parameter(zero, bytes_per_param):
    """[MEG] ``compute_weight_and_optimizer_memory``: 18 B per parameter of the most loaded
    shard without the distributed optimizer (2 weight + 4 fp32 gradient + 12 Adam), 6 + 12/dp
    with it (ZeRO-1 over dp = 16). Stage 0 of GPT-3 at tp 8, pp 8 holds 2,820,509,184
    parameters (module docstring): 50,769,165,312 B and 19,038,437,022 B."""
    s0 = stages(gpt3(zero_stage=zero))[0]
    got = s0["mem_weights_bytes"] + s0["mem_grads_bytes"] + s0["mem_optimizer_bytes"]
    assert got == pytest.approx(bytes_per_param * STAGE0_P8, rel=1e-12)


@pytest.mark.parametrize("vpp, stashes", [(1, 96.0), (2, 96.0 * (1 + 7 / 16)), (3, 96.0 * (1 + 7 / 24))])
def test_megatron_activation_formula_first_stage(vpp, stashes):
    """[MEG] ``compute_activation_memory`` with selective recompute and SP:
    ``s·b·h·(18 + 4·ffn/h)/t`` = 34·s·b·h/t per layer ([K22] Table 2, TP + SP + selective) ×
    num_layers on the first stage (p micro-batches of L/p layers), × the interleaved penalty
    ``1 + (p−1)/(p·v)`` ([K22] §4.2.3). GPT-3, t = 8, p = 8, flash attention on (no score
    matrix of a recomputed layer), m = 96: 34 × 25,165,824 / 8 = 106,954,752 B per layer;
    1F1B 96 layer-stashes = 10,267,656,192 B; v = 2 (6 layers a chunk): 96 × 1.4375 = 138 →
    14,759,755,776 B; v = 3 (4 layers a chunk): 96 × (1 + 7/24) = 124 → 13,262,389,248 B.
    (Megatron's formula also adds the first stage's embedding input and dropout mask, which
    docs/memory.md states are not counted.)"""
    sched = "interleaved" if vpp > 1 else "1f1b"
    s0 = stages(gpt3(recompute="selective", sequence_parallel=True, flash_attention=True, schedule=sched,
                     vpp=vpp))[0]
    per_layer = 34 * SBH / 8
    assert per_layer == 106_954_752
    assert s0["mem_activations_bytes"] == pytest.approx(stashes * per_layer, rel=1e-12)


# --------------------------------------------------------------------------------------------
# DeepSpeed estimate_zero3_model_states_mem_needs
# --------------------------------------------------------------------------------------------

GPT_7_5B = dict(name="gpt-7.5b", n_layers=36, hidden_size=4096, n_heads=32, ffn_hidden_size=16384,
                vocab_size=51200, gated_mlp=False, tied_embeddings=True, norm="layernorm", linear_bias=True)


def _gpt75(**par):
    return {"model": GPT_7_5B,
            "training": {"seq_len": 2048, "global_batch_size": 64, "micro_batch_size": 1, "grad_dtype": "fp32"},
            "parallelism": {"tp": 1, "pp": 1, "dp": 64, "zero_stage": 3, **par},
            "cluster": {"system": "dgx-a100-80gb", "n_gpus": 64}}


def test_deepspeed_zero3_estimate_without_offload():
    """[DS] without offload: ``gpu_mem = 4·largest_layer + 18·Ψ/N`` (18 = 2 fp16 weight + 4 fp32
    gradient + 12 fp32 master and Adam m, v). GPT 7.5B (36 × 4096, V 51,200, tied): Ψ =
    36 × (12h² + 13h) + V·h + 2h = 36 × 201,379,840 + 209,715,200 + 8,192 = 7,459,397,632
    parameters (biases included; the planner counts norms and biases as DeepSpeed's
    ``numel`` does), on N = 64: 18Ψ/64 = 2,097,955,584 B of sharded states. The gathered
    part is the planner's own choice (2 units of 2 B weights + 1 unit of 4 B gradients, the
    unit the largest of a layer and the embedding, V·h = 209,715,200): 8 × 209,715,200 =
    1,677,721,600 B, at least DeepSpeed's 4 B × the largest module (the embedding)."""
    r = planner.evaluate(_gpt75())
    res = r.results
    psi = res["params_total"]
    assert psi == 36 * (12 * 4096**2 + 13 * 4096) + 51200 * 4096 + 2 * 4096 == 7_459_397_632
    states = res["mem_weights_bytes"] + res["mem_grads_bytes"] + res["mem_optimizer_bytes"]
    assert states == pytest.approx(18 * psi / 64, rel=1e-12) == 2_097_955_584
    assert res["mem_zero3_prefetch_bytes"] == pytest.approx(8 * 51200 * 4096, rel=1e-12)
    assert res["mem_zero3_prefetch_bytes"] >= 4 * 51200 * 4096


def test_deepspeed_zero3_estimate_with_optimizer_offload():
    """[DS] ``cpu_offload=True, cpu_offload_params=False``: on the GPU only the fp16 parameter
    shard, ``2·Ψ/N`` (+ the gathered layer); on the host ``16·Ψ`` per node's share
    (``total_params · 16 · gpus_factor``, gpus_factor = 1/num_nodes; 16 = 4 fp32 gradient + 12
    master, m, v), before DeepSpeed's ``additional_buffer_factor`` of 1.5. With
    offload_optimizer = cpu, offload_master_weights and offload_grads (ZeRO-3: each
    reduce-scattered partition moves to the host, ZeRO-Offload §4): GPU states 2Ψ/64 =
    233,106,176 B; host per node (8 GPUs, 8 nodes) 16Ψ/8 = 14,918,795,264 B."""
    r = planner.evaluate(_gpt75(offload_optimizer="cpu", offload_master_weights=True, offload_grads=True))
    res = r.results
    psi = res["params_total"]
    assert psi == 7_459_397_632
    assert res["mem_weights_bytes"] == pytest.approx(2 * psi / 64, rel=1e-12) == 233_106_176
    assert res["mem_grads_bytes"] == 0.0 and res["mem_optimizer_bytes"] == 0.0
    assert res["host_mem_per_node_bytes"] == pytest.approx(16 * psi / 8, rel=1e-12) == 14_918_795_264


# --------------------------------------------------------------------------------------------
# Korthikanti Table 2 terms, sequence parallelism and recompute, end to end on GPT-3
# --------------------------------------------------------------------------------------------

def test_sequence_parallel_divides_the_replicated_terms_by_t():
    """[K22] Table 2, GPT-3 at t = 8, no recompute, no flash attention (5·a·s/h = 5·96·2048/12288
    = 80): per layer s·b·h·(10 + 24/t + 5as/(ht)) = 23·s·b·h = 578,813,952 B without SP,
    s·b·h·(34 + 80)/t = 14.25·s·b·h = 358,612,992 B with SP. Stage 0 of 1F1B keeps p = 8
    micro-batches of 12 layers = 96 layer-stashes: 55,566,139,392 B and 34,426,847,232 B
    (docs/memory.md: "55.6 GB of activations" on GPT-3's first stage without SP)."""
    no_sp = stages(gpt3(recompute="none", sequence_parallel=False))[0]["mem_activations_bytes"]
    sp = stages(gpt3(recompute="none", sequence_parallel=True))[0]["mem_activations_bytes"]
    assert no_sp == pytest.approx(96 * 23 * SBH, rel=1e-12) == 55_566_139_392
    assert sp == pytest.approx(96 * 14.25 * SBH, rel=1e-12) == 34_426_847_232


def test_recompute_full_below_selective_below_none_by_hand():
    """[K22] Table 2 without SP, t = 8, no flash (the preset's 2021 setting), stage 0 (96
    layer-stashes):
      none:      96 × 23·sbh                                                = 55,566,139,392 B
      selective: 96 × (10 + 24/8)·sbh + the recomputed layer's scores 5as·sb/t = 10·sbh
                 = 96 × 327,155,712 + 251,658,240                            = 31,658,606,592 B
      full:      96 × 2·sbh + the recomputed layer (13·sbh − 2·sbh) + its scores 10·sbh
                 = 4,831,838,208 + 276,824,064 + 251,658,240                = 5,360,320,512 B"""
    got = {rc: stages(gpt3(recompute=rc))[0]["mem_activations_bytes"] for rc in ("none", "selective", "full")}
    assert got["none"] == pytest.approx(55_566_139_392, rel=1e-12)
    assert got["selective"] == pytest.approx(31_658_606_592, rel=1e-12)
    assert got["full"] == pytest.approx(5_360_320_512, rel=1e-12)
    assert got["full"] < got["selective"] < got["none"]


def test_more_pipeline_stages_lower_weights_but_1f1b_stage_0_keeps_p_micro_batches():
    """[K22] §4.2.3 / [MEG]: under 1F1B the first stage keeps p micro-batches of L/p layers, so
    its activations stay those of all L layers of one micro-batch when p doubles (m = 96 ≥ p),
    while its layer weights halve. GPT-3, t = 8, selective recompute, SP, flash attention:
    activations 96 × 34·sbh/8 = 10,267,656,192 B at pp 4 (4 × 24 layers) and pp 8 (8 × 12);
    stage-0 weights 2 B × (24 × 226,512,384 + 102,360,576) = 11,077,315,584 B at pp 4 and
    2 B × 2,820,509,184 = 5,641,018,368 B at pp 8."""
    a4 = stages(gpt3(pp=4, dp=32, recompute="selective", sequence_parallel=True, flash_attention=True))
    a8 = stages(gpt3(pp=8, dp=16, recompute="selective", sequence_parallel=True, flash_attention=True))
    assert len(a4) == 4 and len(a8) == 8
    want = 96 * 34 * SBH / 8
    assert a4[0]["mem_activations_bytes"] == pytest.approx(want, rel=1e-12)
    assert a8[0]["mem_activations_bytes"] == pytest.approx(want, rel=1e-12)
    assert a4[0]["mem_weights_bytes"] == pytest.approx(2 * (24 * LAYER_T8 + 102_360_576), rel=1e-12)
    assert a8[0]["mem_weights_bytes"] == pytest.approx(2 * STAGE0_P8, rel=1e-12)
    # the later 1F1B stages keep p − j micro-batches: stage j of pp 8 holds (8 − j) × 12 layers
    for j, s_ in enumerate(a8):
        assert s_["mem_activations_bytes"] == pytest.approx((8 - j) * 12 * 34 * SBH / 8, rel=1e-12), j


def test_zero_bubble_keeps_1f1b_memory_and_gpipe_keeps_m():
    """Qi et al. 2023 §3 (ZB-H1: the peak activation memory of 1F1B); GPipe keeps all m
    micro-batches on every stage (Huang et al. 2019): GPT-3, selective + SP + flash, stage 3
    of pp 8: 1F1B and ZB-H1 (8 − 3) × 12 = 60 layer-stashes, GPipe 96 × 12 = 1,152."""
    per_layer = 34 * SBH / 8
    base = dict(recompute="selective", sequence_parallel=True, flash_attention=True)
    one = stages(gpt3(schedule="1f1b", **base))[3]["mem_activations_bytes"]
    zb = stages(gpt3(schedule="zero_bubble", **base))[3]["mem_activations_bytes"]
    gp = stages(gpt3(schedule="gpipe", **base))[3]["mem_activations_bytes"]
    assert one == zb == pytest.approx(60 * per_layer, rel=1e-12)
    assert gp == pytest.approx(1152 * per_layer, rel=1e-12)


@pytest.mark.parametrize("norm, final", [("layernorm", 2 * 4096), ("rmsnorm", 4096)])
def test_final_norm_is_counted_whole_with_its_bias(norm, final):
    """docs/memory.md: "the final norm on the last stage is counted whole"; model_stats counts a
    norm as h weights (RMSNorm) or 2h (LayerNorm: weight and bias). Until 2026-12-01 the memory
    model took h for both, so a LayerNorm model's stages summed to h parameters fewer than
    ``params_total`` (found against [DS]'s 18·Ψ/N: 2,097,954,432 B instead of 2,097,955,584 B).
    GPT 7.5B at ZeRO-0, tp 1, pp 2 (18 layers a stage, untied head): the two stages' weights
    sum to 2 B × params_total; the last stage holds 18 × (12h² + 13h) + V·h + the final norm:
    18 × 201,379,840 + 209,715,200 + 2h (LayerNorm) or h (RMSNorm)."""
    model = dict(GPT_7_5B, norm=norm, tied_embeddings=False)
    d = {"model": model,
         "training": {"seq_len": 2048, "global_batch_size": 64, "micro_batch_size": 1, "grad_dtype": "fp32"},
         "parallelism": {"tp": 1, "pp": 2, "dp": 32, "zero_stage": 0},
         "cluster": {"system": "dgx-a100-80gb", "n_gpus": 64}}
    r = planner.evaluate(d)
    per_layer = 12 * 4096**2 + (13 if norm == "layernorm" else 11) * 4096  # RMSNorm: 2 norms of h, not 2h
    assert r.stages[1]["mem_weights_bytes"] == pytest.approx(2 * (18 * per_layer + 51200 * 4096 + final), rel=1e-15)
    assert sum(s_["mem_weights_bytes"] for s_ in r.stages) == pytest.approx(2 * r.results["params_total"], rel=1e-15)
