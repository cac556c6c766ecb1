"""Review 15a: the checkpoint and restart model (planner/checkpoint.py) against hand calculations.

Expected values are hand calculations from the module's stated formulas (DESIGN §4.4) and the
catalogue's bandwidths (hardware/storage.json: pfs 25e9 / 40e9 B/s per node write / read, 2e12
B/s aggregate; object store 12.5e9 B/s per node, no aggregate; hardware/systems.json: dgx-h100 8
GPUs per node, PCIe Gen5 host link 63e9 B/s), never the planner's own output.
"""

from __future__ import annotations

import numpy as np
import pytest

import planner
from planner import batch as B
from planner import checkpoint as ck
from planner import engine
from planner.schema import FAILURE_CLASSES, TIER_KINDS, validate_scenario


def _sub_node_job(n_gpus: int = 4) -> dict:
    """Llama 3 8B on ``n_gpus`` GPUs of one 8-GPU DGX H100 node, FSDP (ZeRO-3), PFS + object store."""
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["cluster"]["n_gpus"] = n_gpus
    d["parallelism"].update(tp=1, pp=1, cp=1, dp=None, zero_stage=3, vpp=1, schedule="1f1b")
    d["training"]["global_batch_size"] = 16
    d["checkpoint"]["tiers"] = [{"tier": "pfs"}, {"tier": "object_store"}]
    return d


def test_reload_of_a_job_smaller_than_a_node_reads_only_its_own_gpus_shards():
    """Found by review: a node reads back the shards of the job's GPUs on it, min(8, 4) = 4 for
    a 4-GPU job on an 8-GPU node, but the reload charged gpus_per_node = 8 shards: the PFS reload
    of the 4-GPU job read twice its whole checkpoint through the node's 40 GB/s (5.62 s instead
    of 2.81 s for Llama 3 8B). By hand, with C = 14 B × params (ZeRO-3: shard C/4, the one node
    reads all of C): PFS max(C/4 / 63e9, C / 40e9, C / 2e12) = C / 40e9; object store C / 12.5e9."""
    out = engine.run_batch(B.from_scenarios([validate_scenario(_sub_node_job())]))
    tt = ck.tier_times(out)
    c = 14.0 * float(out["params_total"][0])
    assert float(tt["ckpt_bytes"][0]) == pytest.approx(c, rel=1e-12)
    pfs, obj = TIER_KINDS.index("pfs"), TIER_KINDS.index("object_store")
    for fc in range(len(FAILURE_CLASSES)):
        assert tt["reload_s"][0, pfs, fc] == pytest.approx(c / 40e9, rel=1e-12)
        assert tt["reload_s"][0, obj, fc] == pytest.approx(c / 12.5e9, rel=1e-12)
    # the save (already right): the node writes the whole C over its 25 GB/s PFS client link
    assert tt["save_s"][0, pfs] == pytest.approx(c / 25e9, rel=1e-12)


def test_reload_time_function_caps_the_node_read_at_the_jobs_gpus():
    """ckpt_reload_time on its own: 1 GB shards, 4 GPUs of an 8-GPU node, 1 GB/s per-node read, no
    other limit: 4 × 1 GB / 1 GB/s = 4 s (it gave 8 s). Without n_gpus (a job of whole nodes, as
    documented) the node reads gpus_per_node shards: 8 s."""
    kw = dict(shard_bytes=1e9, node_bytes=4e9, ckpt_bytes=4e9, host_link_bw_bytes_per_s=np.inf,
              read_bw_per_node_bytes_per_s=1e9, agg_read_bw_bytes_per_s=np.inf, gpus_per_node=8)
    assert float(ck.ckpt_reload_time(**kw, n_gpus=4)) == pytest.approx(4.0)
    assert float(ck.ckpt_reload_time(**kw, n_gpus=16)) == pytest.approx(8.0)
    assert float(ck.ckpt_reload_time(**kw)) == pytest.approx(8.0)
    # vectorised: one call over rows of 1, 4, 8 and 64 GPUs -> 1, 4, 8, 8 s
    got = ck.ckpt_reload_time(**kw, n_gpus=np.array([1, 4, 8, 64]))
    assert np.allclose(got, [1.0, 4.0, 8.0, 8.0])


def test_daly_interval_of_an_unknown_checkpoint_time_is_unknown():
    """Found by review: ckpt_interval_daly(NaN, M) returned M (the NaN failed the test δ < 2M and
    fell to Daly's δ >= 2M branch), a finite interval from an unknown save time. Daly 2006 eq. 37
    by hand for the defined entries: δ = 50, M = 100: x = δ/(2M) = 0.25, sqrt(2·50·100) = 100,
    100·(1 + 0.5/3 + 0.25/9) − 50 = 69.44; δ = 300 >= 2M: τ = M = 100."""
    got = ck.ckpt_interval_daly(np.array([50.0, np.nan, 300.0]), 100.0)
    assert got[0] == pytest.approx(100.0 * (1.0 + 0.5 / 3.0 + 0.25 / 9.0) - 50.0)
    assert np.isnan(got[1])
    assert got[2] == 100.0
    assert np.isnan(ck.ckpt_interval_daly(50.0, np.nan))
    assert np.isnan(ck.ckpt_interval_young(np.nan, 100.0))  # Young: sqrt(2·NaN·M), already NaN


@pytest.mark.parametrize("n_gpus", [8192, 16384])
def test_pfs_bound_save_does_not_shrink_with_more_nodes(n_gpus):
    """Once the file system's aggregate bandwidth is the bottleneck, more writers do not save
    faster: Llama 3 405B on Tectonic's 2 TB/s sustained (reliability_facts.csv llama3_tectonic_bw)
    writes its C = 14 B × params in C / 2e12 s at 8,192 and at 16,384 H100 alike (5.68e12 B:
    about 2.84 s), while the per-node term 8 · C/n / 25e9 (0.22 s at 8,192) stays below it."""
    d = planner.load_preset("llama3-405b-h100-16k").to_json_dict()
    d["cluster"]["n_gpus"] = n_gpus
    d["parallelism"]["dp"] = None
    d["training"]["global_batch_size"] = n_gpus // 8
    r = planner.evaluate(d).results
    c = 14.0 * r["params_total"]
    assert 8 * c / n_gpus / 25e9 < c / 2e12
    assert r["ckpt_pfs_save_s"] == pytest.approx(c / 2e12, rel=1e-12)
