"""Checkpoint size, save / reload time per tier, Young and Daly intervals.

Expected values are hand calculations from the cited formulas:
ZeRO (Rajbhandari et al. 2020, §3.1): 2 B bf16 weights + 12 B fp32 master/m/v = 14 B/param;
BLOOM-176B's full checkpoint of 2.3 TB (validation/reliability_facts.csv ``bloom_ckpt_full``);
Young 1974 and Daly 2006 (eq. 37) as printed in reliability_facts.csv (young_formula,
daly_formula).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from planner import batch as B
from planner import checkpoint as ck
from planner import model_stats
from planner.schema import Scenario


def test_bytes_per_param_is_14():
    # 2 (bf16 weights) + 4 (fp32 master) + 4 (m) + 4 (v), no gradients.
    assert ck.CKPT_BYTES_PER_PARAM == 14.0


def test_bloom_176b_checkpoint_size():
    # 176e9 x 14 B = 2.464e12 B = 2.24 TiB; BLOOM reports "2.3 TB" for the full checkpoint.
    got = float(ck.ckpt_bytes_mixed_adam(176e9))
    assert got == pytest.approx(2.464e12)
    assert got / 2**40 == pytest.approx(2.3, rel=0.05)


def test_scalar_array_series():
    x = [176e9, 70e9]
    a = ck.ckpt_bytes_mixed_adam(np.array(x))
    s = ck.ckpt_bytes_mixed_adam(pd.Series(x))
    assert np.allclose(a, np.asarray(s)) and float(ck.ckpt_bytes_mixed_adam(x[1])) == a[1]


def test_layout_zero1_and_zero0():
    # 70e9 params x 14 B = 9.8e11 B over 1024 GPUs (8 per node), dp = 32.
    lay = ck.ckpt_layout(9.8e11, 1024, 8, 32, 1)
    assert float(lay["shard_bytes"]) == pytest.approx(9.8e11 / 1024)
    assert float(lay["node_bytes"]) == pytest.approx(8 * 9.8e11 / 1024)
    # ZeRO-0: one DP replica (1024/32 = 32 GPUs) writes 9.8e11/32 each; 8 on the busiest node.
    lay0 = ck.ckpt_layout(9.8e11, 1024, 8, 32, 0)
    assert float(lay0["n_writers"]) == 32
    assert float(lay0["shard_bytes"]) == pytest.approx(9.8e11 / 32)
    assert float(lay0["node_bytes"]) == pytest.approx(8 * 9.8e11 / 32)


def test_layout_zero0_with_expert_parallelism_writes_every_ep_rank():
    """ZeRO-0 with EP over the DP ranks: the EP ranks of a replica hold different experts, so
    they all write (found by review: Mixtral 8x7B at TP 1, PP 4, DP 16, EP 8 was written by
    64/16 = 4 GPUs, 163 GB each, six times a GPU's whole model state). 64/16 × 8 = 32 writers;
    at most every GPU."""
    lay = ck.ckpt_layout(6.5e11, 64, 8, 16, 0, ep=8)
    assert float(lay["n_writers"]) == 32
    assert float(lay["shard_bytes"]) == pytest.approx(6.5e11 / 32)
    assert float(ck.ckpt_layout(6.5e11, 64, 8, 16, 0, ep=64)["n_writers"]) == 64  # capped at n_gpus
    assert float(ck.ckpt_layout(6.5e11, 64, 8, 16, 1, ep=8)["n_writers"]) == 64   # ZeRO >= 1: all
    # the engine, both of its paths: the shard is the checkpoint over 32 writers
    import planner
    from planner import reliability as rel
    d = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
    d["parallelism"]["zero_stage"] = 0
    r = planner.evaluate(d).results
    assert r["ckpt_shard_bytes"] == pytest.approx(r["ckpt_bytes"] / 32)
    b = B.from_scenarios([Scenario.model_validate(d)])
    b.update(planner.model_stats.stats(b))
    assert float(rel.stage_grid(b)["ckpt_shard_bytes"][0]) == pytest.approx(r["ckpt_bytes"] / 32)


def _default_row(**ck_override):
    s = Scenario.model_validate({
        "model": "llama3-70b",
        "cluster": {"system": "dgx-h100", "n_gpus": 1024},
        "parallelism": {"tp": 8, "pp": 4, "zero_stage": 1},
        "checkpoint": {"tiers": [{"tier": "host_memory"}, {"tier": "local_nvme"}, {"tier": "pfs"},
                                 {"tier": "object_store"}], "async": False, **ck_override},
    })
    b = B.from_scenarios([s])
    b.update(model_stats.stage(b))
    return b


def test_save_time_per_tier_hand_computed():
    """One configuration, every tier: slowest of host link, per-node and aggregate bandwidth."""
    b = _default_row()
    tt = ck.tier_times(b)
    ckpt = 14.0 * float(b["params_total"][0])
    shard = ckpt / 1024
    node = 8 * shard
    link = float(b["host_link_bw_bytes_per_s"][0])
    # the link at its achieved 0.8 of the nominal rate (link_eff.host, hardware/calibration.json;
    # pinned PCIe copies ~80-85 %, hardware.md §6b); the DRAM share 614.4e9 / 8 does not bind
    assert 0.8 * link < float(b["host_memory_bw_bytes_per_s"][0]) / 8
    d2h = shard / (0.8 * link)
    expect = {}
    for kind in ("host_memory", "local_nvme", "pfs", "object_store"):
        w = float(b[f"ckpt_{kind}_write_bw_per_node_bytes_per_s"][0])
        agg = float(b[f"ckpt_{kind}_agg_write_bw_bytes_per_s"][0])
        expect[kind] = max(d2h, node / w, 0.0 if np.isinf(agg) else ckpt / agg)
    # Numbers from hardware/systems.json (dgx-h100) and storage.json, by hand:
    # pfs: 25e9 B/s per node, 2e12 B/s aggregate -> node share 8·shard/25e9 vs ckpt/2e12.
    assert expect["pfs"] == pytest.approx(max(node / 25e9, ckpt / 2e12, d2h))
    # local NVMe: 27.5e9 B/s write per node.
    assert expect["local_nvme"] == pytest.approx(max(node / 27.5e9, d2h))
    for k, kind in enumerate(("host_memory", "local_nvme", "pfs", "object_store")):
        assert tt["save_s"][0, k] == pytest.approx(expect[kind])
        assert tt["stall_s"][0, k] == pytest.approx(expect[kind])  # sync: stall = save


def test_async_stalls_only_for_device_to_host_copy():
    t = ck.ckpt_save_time(1e9, 8e9, 1e12, 50e9, 10e9, np.inf, ckpt_async=True, async_interference_frac=0.1)
    # d2h = 1e9/50e9 = 0.02 s; node = 8e9/10e9 = 0.8 s; stall = 0.02 + 0.1 x (0.8 - 0.02) = 0.098 s
    assert float(t["d2h_s"]) == pytest.approx(0.02)
    assert float(t["save_s"]) == pytest.approx(0.8)
    assert float(t["stall_s"]) == pytest.approx(0.098)


def test_replicas_cost_network_time_and_survive_node_loss():
    # 2 peer copies of an 8e9 B node share over 8 x 50e9 B/s: 2 x 8e9 / 4e11 = 0.04 s.
    t = ck.ckpt_save_time(1e9, 8e9, 1e12, 1e12, 1e13, np.inf, replicas=2,
                          nic_bw_per_gpu_bytes_per_s=50e9, gpus_per_node=8)
    assert float(t["save_s"]) == pytest.approx(0.04)
    b = _default_row()
    b["ckpt_host_memory_replicas"] = np.array([1])
    tt = ck.tier_times(b)
    from planner.schema import FAILURE_CLASSES
    node_c = FAILURE_CLASSES.index("node")
    cluster_c = FAILURE_CLASSES.index("cluster")
    assert tt["survives"][0, 0, node_c] and not tt["survives"][0, 0, cluster_c]


def test_reload_time_pfs():
    b = _default_row()
    tt = ck.tier_times(b)
    ckpt = 14.0 * float(b["params_total"][0])
    shard = ckpt / 1024
    # pfs read: 40e9 B/s per node, 2e12 B/s aggregate (storage.json); h2d over the host link.
    expect = max(shard / float(b["host_link_bw_bytes_per_s"][0]), 8 * shard / 40e9, ckpt / 2e12)
    assert tt["reload_s"][0, 2, 0] == pytest.approx(expect)


def test_young_hand_value():
    # sqrt(2 x 50 x 10000) = 1000
    assert float(ck.ckpt_interval_young(50.0, 10_000.0)) == pytest.approx(1000.0)


def test_daly_hand_value_and_limits():
    # 1000 x (1 + sqrt(0.0025)/3 + 0.0025/9) - 50 = 966.94
    assert float(ck.ckpt_interval_daly(50.0, 10_000.0)) == pytest.approx(966.944, abs=1e-3)
    # delta >= 2M: tau = M
    assert float(ck.ckpt_interval_daly(30.0, 10.0)) == 10.0
    # delta << M: Young
    assert float(ck.ckpt_interval_daly(1e-3, 1e6)) == pytest.approx(float(ck.ckpt_interval_young(1e-3, 1e6)), rel=1e-3)


def test_async_save_of_a_tier_that_cannot_be_written_warns_nothing():
    # A tier with no write bandwidth takes forever (save = inf); asynchronous with no slow-down
    # (async_interference_frac = 0) its stall is the device-to-host copy alone, 1e9 B / 50e9 B/s
    # = 0.02 s, computed without a 0 · inf (found by review: a RuntimeWarning on GH200 scenarios)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = ck.ckpt_save_time(np.array([1e9]), np.array([8e9]), np.array([1e12]), np.array([50e9]),
                           np.array([0.0]), np.array([np.inf]), ckpt_async=np.array([True]),
                           async_interference_frac=np.array([0.0]))
    assert r["save_s"][0] == np.inf
    assert r["stall_s"][0] == pytest.approx(0.02, rel=1e-12)


def test_ckpt_bytes_explain_ends_in_the_unit_shown():
    # 14 B/param (bf16 weights + fp32 master, m, v) x 70.554e9 params of Llama 3 70B = 9.878e11 B
    # = 919.9 GiB (2^30 B), the unit the table and the Plan page show (found by review: the
    # formula ended in bytes beside a value in GiB)
    import planner

    r = planner.evaluate(planner.load_preset("default"))
    assert r.results["ckpt_bytes"] == pytest.approx(14 * r.results["params_total"], rel=1e-12)
    assert r.explain["ckpt_bytes"].endswith(f"= {14 * r.results['params_total'] / 2**30:,.1f} GiB")
    assert r.explain["ckpt_bytes"].endswith("= 919.9 GiB")
