"""Optimizer offload: the memory and the step time describe the same CPU step (review 39).

The CPU optimizer step (ZeRO-Offload, Ren et al. 2021; Megatron-Core's ``--optimizer-cpu-offload``,
whose HybridDeviceOptimizer copies the gradients to the CPU, steps there and copies the parameters
back) reads an fp32 master, Adam m, v and the gradients in host memory. Before this review the time
model always moved the gradients down and ran Adam on a host master while the memory model, with
the default flags, kept the master on the GPU and counted neither it nor the gradients on the host;
the two flags did not change the time at all. The expected values below are hand calculations from
the preset's architecture and the catalogue's figures (hardware/systems.json,
hardware/accelerators.json, hardware/calibration.json), not the engine's output.
"""

from __future__ import annotations

import itertools

import pytest

import planner

# Llama 3 70B (presets/models.json: 80 layers, h 8,192, 64 heads / 8 KV heads of 128, FFN 28,672,
# vocabulary 128,256, untied): per layer Q, O 8,192² each, K, V 8,192·1,024 each, SwiGLU MLP
# 3·8,192·28,672, two RMSNorms 2·8,192.
H, F, V = 8192, 28672, 128256
LAYER = 2 * H * H + 2 * H * 1024 + 3 * H * F + 2 * H
EMB = V * H
TOTAL = 80 * LAYER + 2 * EMB + H  # + the final norm


def _default(**par):
    d = planner.load_preset("default").to_json_dict()  # TP 8 · PP 4 · VPP 5, ZeRO-1, dp 32, 1,024 H100
    d["parallelism"].update(offload_optimizer="cpu", **par)
    return planner.evaluate(d)


def test_hand_counts_of_the_preset():
    assert LAYER == 855_654_400
    assert TOTAL == 70_553_706_496


@pytest.mark.parametrize("master,grads", list(itertools.product([False, True], repeat=2)))
def test_host_holds_master_states_and_gradients_whatever_the_flags(master, grads):
    """Host bytes per node = GPUs per node × (4 B gradient + 12 B master, m, v) × the optimizer's
    shard of the worst stage: the last, 20 layers + the head + the final norm (not TP-split) over
    TP 8, sharded over dp = 32 (ZeRO-1)."""
    r = _default(offload_master_weights=master, offload_grads=grads).results
    last_stage = (20 * LAYER + EMB) / 8 + H
    assert last_stage == 2_270_478_336
    assert r["host_mem_per_node_bytes"] == pytest.approx(8 * (4 + 12) * last_stage / 32, rel=1e-12)
    # the GPU keeps its fp32 master only with offload_master_weights off: 4 B × stage 0's shard
    stage0 = (20 * LAYER + EMB) / 8
    assert r["mem_optimizer_bytes"] == pytest.approx(0.0 if master else 4 * stage0 / 32, rel=1e-12, abs=0)
    # ZeRO-1 keeps the whole accumulated gradient on the GPU either way (reduced there)
    assert r["mem_grads_bytes"] == pytest.approx(4 * stage0, rel=1e-12)


def test_master_on_gpu_brings_the_fp32_master_up_not_the_16_bit_weights():
    """t_offload_s(master on GPU) − t_offload_s(master on host) = P_shard · (4 − 2) B over the host
    link: PCIe Gen5 x16, 63e9 B/s per direction × 0.8 (link_eff.host); P_shard = the model's
    parameters / (tp · pp) / dp (the step time sizes the shard on the stages' average)."""
    on_gpu = _default(offload_master_weights=False).results["t_offload_s"]
    on_host = _default(offload_master_weights=True).results["t_offload_s"]
    p_shard = TOTAL / (8 * 4) / 32
    assert on_gpu - on_host == pytest.approx(p_shard * 2.0 / (63e9 * 0.8), rel=1e-9)
    assert on_gpu > on_host


def test_nvme_reads_and_writes_at_their_own_rates():
    """ZeRO-Infinity on NVMe, Llama 3 8B at ZeRO-0 on DGX H100 (8 GPUs per node sharing 50 GB/s read,
    27.5 GB/s write, hardware/systems.json dgx-h100): 12 B/param read + 12 B/param written of
    8,030,261,248 parameters = 43.45 s, not 2·12 B at the write rate (56.07 s)."""
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["parallelism"].update(zero_stage=0, offload_optimizer="nvme")
    r = planner.evaluate(d)
    n = 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096) + 2 * 128256 * 4096 + 4096
    assert n == 8_030_261_248
    t_nvme = 12.0 * n * (8 / 50e9 + 8 / 27.5e9)
    assert t_nvme == pytest.approx(43.45, abs=0.01)
    assert "NVMe optimizer states read + write 43.45 s" in r.explain["t_offload_s"]


def test_bf16_gradients_still_take_an_fp32_host_copy():
    """The CPU step reads fp32 gradients (the step time moves 4 B per parameter down whatever
    grad_dtype): host = 8 × (4 + 12) B × 2,270,478,336 / 32 with bf16 gradients too (review 39c: 14 B)."""
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"]["offload_optimizer"] = "cpu"
    d["training"]["grad_dtype"] = "bf16"
    r = planner.evaluate(d).results
    assert r["host_mem_per_node_bytes"] == pytest.approx(8 * 16 * 2_270_478_336 / 32, rel=1e-12)
