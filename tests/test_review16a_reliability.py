"""Review 16a: three gaps of the checkpoint / reliability model, closed.

1. The host (CPU) staging buffer of asynchronous saves: PyTorch DCP ``async_save`` first copies
   the rank's state into CPU buffers ("raise CPU memory by a factor of checkpoint_size_per_rank X
   number_of_ranks", PyTorch DCP async recipe), Megatron-LM / NeMo ``FileSystemWriterAsync.
   preload_tensors`` copies every tensor of the rank's write buckets to host memory before the
   writer processes run. It was not counted in ``ckpt_host_mem_per_node_bytes`` /
   ``host_fits_ckpt``.
2. A scenario alone and inside a batch got intervals ~1e-6 apart (the interval solver's
   candidates, starts and stopping rule depended on the other rows of its block; classes that
   recover alike were summed in another order).
3. Goodput 0 at every interval: the headline solver and the grid reference disagreed on a tier
   that recovers nothing (headline "never", grid one step) and on the others.

Expected values are hand calculations (stated in each test), never the code's own output.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import planner
from planner import batch as B
from planner import catalog, engine, model_stats
from planner import reliability as rel
from planner.schema import FAILURE_CLASSES, TIER_KINDS, validate_scenario
from test_review15i_ckpt_props import _mixtral_slow_object_store

GB = 1e9
GIB = 2.0 ** 30
_DROP = {"sources", "uncertain", "notes"}


def _inline(obj) -> dict:
    return obj.model_dump(mode="json", exclude=_DROP)


# ------------------------------------------------------------------ helpers

def _dgx_h100_batch(**tiers):
    """Llama 3 8B preset on 64 H100 (8 DGX H100 nodes, 8 GPUs each, ZeRO-1: every GPU writes),
    with params_total set to 8e9 so that the checkpoint is 14 B × 8e9 = 112e9 B, the shard
    112e9 / 64 = 1.75e9 B and a node's share 8 × 1.75e9 = 14e9 B. ``tiers`` maps a tier kind to
    its fixed interval [s] (the others disabled): fixed intervals keep the solver out of it."""
    b = B.from_scenarios([planner.load_preset("llama3-8b-h100-64")])
    b.update(model_stats.stage(b))
    b["params_total"] = np.array([8e9])
    b["precision"] = np.array([B.PRECISIONS.index("bf16")])
    b["zero_stage"] = np.array([1])
    for k in TIER_KINDS:
        b[f"ckpt_{k}_enabled"] = np.array([k in tiers])
        b[f"ckpt_{k}_interval_s"] = np.array([float(tiers.get(k, np.nan))])
    b["ckpt_host_memory_replicas"] = np.array([0])
    b["ckpt_local_nvme_replicas"] = np.array([0])
    return b


def _row(out: dict, b: dict) -> dict:
    r = {k: np.asarray(v).ravel()[0] for k, v in b.items()}
    r.update({k: np.asarray(v).ravel()[0] for k, v in out.items()})
    return r


# ------------------------------------------------------------------ 1. async staging buffer

def test_async_pfs_save_stages_the_nodes_share_in_host_memory_by_hand():
    """PFS only, async: each node stages its 8 GPUs' shards, 8 × 1.75e9 = 14e9 B, in host memory
    (headline and grid reference alike); nothing else is held."""
    b = _dgx_h100_batch(pfs=3600.0)
    b["ckpt_async"] = np.array([True])
    for out in (rel.stage(b), rel.stage_grid(b)):
        assert out["ckpt_async_staging_per_node_bytes"][0] == pytest.approx(14e9, rel=1e-12)
        assert out["ckpt_host_mem_per_node_bytes"][0] == pytest.approx(14e9, rel=1e-12)
        assert bool(out["host_fits_ckpt"][0])  # 14e9 B << the DGX H100's 2 TiB


def test_async_staging_adds_to_the_host_memory_tier_and_counts_each_saved_tier_by_hand():
    """Host memory (1 peer copy) every 600 s + local NVMe every 1,200 s + PFS every 3,600 s, async:
    host-memory tier 14e9 × (1 + 1) = 28e9 B; staging for NVMe and PFS, 2 × 14e9 = 28e9 B;
    56e9 B per node. The explanation shows the same numbers."""
    b = _dgx_h100_batch(host_memory=600.0, local_nvme=1200.0, pfs=3600.0)
    b["ckpt_async"] = np.array([True])
    b["ckpt_host_memory_replicas"] = np.array([1])
    for out in (rel.stage(b), rel.stage_grid(b)):
        assert out["ckpt_async_staging_per_node_bytes"][0] == pytest.approx(28e9, rel=1e-12)
        assert out["ckpt_host_mem_per_node_bytes"][0] == pytest.approx(56e9, rel=1e-12)
    out = rel.stage(b)
    e = rel.explain(_row(out, b))
    assert "(local_nvme, pfs): 2 × 14 GB = 28 GB per node" in e["ckpt_async_staging_per_node_bytes"]
    text = e["ckpt_host_mem_per_node_bytes"]
    assert "node share 14 GB (min(8 GPUs, 64 writers) × shard 1.75 GB) × (1 + 1 peer copy) = 28 GB" in text
    assert "+ async staging 28 GB = 56 GB = 52.15 GiB per node" in text  # 56e9 / 2^30 = 52.154


def test_synchronous_saves_add_no_staging_buffer():
    """The same tiers saved synchronously: only the host-memory tier's 28e9 B."""
    b = _dgx_h100_batch(host_memory=600.0, local_nvme=1200.0, pfs=3600.0)
    b["ckpt_async"] = np.array([False])
    b["ckpt_host_memory_replicas"] = np.array([1])
    for out in (rel.stage(b), rel.stage_grid(b)):
        assert out["ckpt_async_staging_per_node_bytes"][0] == 0.0
        assert out["ckpt_host_mem_per_node_bytes"][0] == pytest.approx(28e9, rel=1e-12)
    e = rel.explain(_row(rel.stage(b), b))
    assert e["ckpt_async_staging_per_node_bytes"].startswith("synchronous saves write from GPU memory")


def test_a_tier_that_is_never_saved_stages_nothing():
    """PFS given 1e8 s (never, in effect) beside NVMe every 1,200 s, async: one buffer, 14e9 B."""
    b = _dgx_h100_batch(local_nvme=1200.0, pfs=1e8)
    b["ckpt_async"] = np.array([True])
    for out in (rel.stage(b), rel.stage_grid(b)):
        assert out["ckpt_async_staging_per_node_bytes"][0] == pytest.approx(14e9, rel=1e-12)


def test_a_node_too_small_for_the_staging_buffer_does_not_fit_and_says_why():
    """Llama 3 8B on 64 H100, PFS every hour, async, host memory overridden to 10 GB: the staging
    buffer is the node's 8 shards of 14 B/param (8 × 14 × params / 64 = 1.75 × params bytes, 14.05
    GB for 8.03e9 params) > 10 GB: host_fits_ckpt False, with a note naming the staging buffer.
    Synchronous: nothing staged, it fits."""
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["cluster"]["overrides"]["host_memory_bytes"] = 1e10
    d["checkpoint"] = {"tiers": [{"tier": "pfs", "interval_s": 3600}], "async": True}
    r = planner.evaluate(d)
    res = r.results
    need = 1.75 * res["params_total"]  # 8 GPUs × 14 B/param / 64 GPUs
    assert res["ckpt_async_staging_per_node_bytes"] == pytest.approx(need, rel=1e-12)
    assert res["host_fits"] and not res["host_fits_ckpt"]
    note = next(n for n in r.notes if n.startswith("Does not fit in host memory: the in-memory checkpoints need"))
    assert f"staging buffers (each saved tier's node share, copied to host memory before it is written) " \
           f"{need / GIB:,.2f} GiB" in note
    assert f"the node's {1e10 / GIB:,.2f} GiB" in note and "save synchronously" in note
    d["checkpoint"]["async"] = False
    r = planner.evaluate(d)
    assert r.results["host_fits_ckpt"] and r.results["ckpt_host_mem_per_node_bytes"] == 0.0
    assert not any(n.startswith("Does not fit in host memory") for n in r.notes)


# ------------------------------------------------------------------ 2. a scenario alone = in a batch

# perturbed copies of the 405B preset (random tier subsets, bandwidths, failure rates, step times,
# sync/async, spares, replicas, some fixed intervals): tests/test_reliability.py's builder, shared
from test_reliability import _random_rows  # noqa: E402


def _rel_diff(x, y):
    if np.isnan(x) and np.isnan(y):
        return 0.0
    return abs(x - y) / max(abs(x), abs(y))


@pytest.mark.parametrize("seed", [0, 4, 11, 20, 29])
def test_each_row_of_a_mixed_block_gets_what_it_gets_alone(seed):
    """Blocks of 24 very different rows (tiers, bandwidths ×0.01–100, failure rates ×0.01–100,
    sync/async, fixed and free intervals): every row's intervals equal its own evaluation (rel
    1e-12) and so its goodput (1e-15). Before: seed 29 row 19 moved 2.0e-6, seed 20 row 12 6.0e-7,
    seed 11 row 3 1.2e-8, seed 0 row 15 3.5e-11, seed 4 row 0 1.8e-12."""
    b = _random_rows(24, seed)
    many = rel.stage(b)
    for i in range(24):
        one = rel.stage(B.take(b, [i]))
        for k in TIER_KINDS:
            c = f"ckpt_{k}_interval_opt_s"
            assert _rel_diff(one[c][0], many[c][i]) <= 1e-12, (seed, i, k, one[c][0], many[c][i])
        assert one["goodput"][0] == pytest.approx(many["goodput"][i], rel=0, abs=1e-15)


def test_evaluate_alone_equals_the_same_scenario_in_a_batch_of_very_different_ones():
    """planner.evaluate of one scenario against run_batch of it beside others of other sizes,
    failure rates and tiers (a free host-memory tier, the 405B preset on 16k GPUs at 10× the
    failure rate, MPT-7B on one 8-GPU node with NVMe + object store, sync): every interval equal (rel 1e-12). Before: the object store's
    interval moved by 7.1e-7 beside the row with the free host-memory tier."""
    d = _mixtral_slow_object_store()
    other = copy.deepcopy(d)
    other["checkpoint"]["tiers"][0]["interval_s"] = None
    big = planner.load_preset("llama3-405b-h100-16k").to_json_dict()
    big["reliability"]["rate_scale"] = 10
    small = planner.load_preset("mpt-7b-a100-8").to_json_dict()
    small["checkpoint"] = {"tiers": [{"tier": "local_nvme"}, {"tier": "object_store"}], "async": False}
    alone = planner.evaluate(d).results
    scens = [validate_scenario(x) for x in (other, d, big, small)]
    out = engine.run_batch(B.from_scenarios(scens))
    for k in TIER_KINDS:
        c = f"ckpt_{k}_interval_opt_s"
        assert _rel_diff(float(alone[c]), float(out[c][1])) <= 1e-12, (k, alone[c], out[c][1])
    assert float(out["goodput"][1]) == pytest.approx(float(alone["goodput"]), rel=0, abs=1e-15)


def test_a_row_whose_optimum_is_two_tiers_at_one_interval_finds_it_alone():
    """Random block seed 599982112, row 5: host memory fixed at 385 s, local NVMe and PFS free; the
    optimum (grid reference) has NVMe just before PFS at one interval, 74.5 s. Alone the row never
    tried that candidate (0.23789 against the grid's 0.23801); in its block it did, thanks to
    another row with a third free tier. Now the pair candidate is the row's own."""
    b = _random_rows(24, 599982112)
    one = B.take(b, [5])
    fast, grid = rel.stage(one), rel.stage_grid(one)
    assert fast["goodput"][0] >= grid["goodput"][0] - 1e-9
    assert fast["goodput"][0] == rel.stage(b)["goodput"][5]


# ------------------------------------------------------------------ 3. goodput 0 at every interval

def _dead_batch():
    """Host memory + local NVMe, synchronous, both free; software failures once an hour (per job,
    restart 0) that both tiers survive, node failures once an hour that neither survives (no
    replicas): goodput 0 at every interval. Host memory saves in 10 s (14e9 B per node at 1.4e9
    B/s, no other limit) and reloads at once; NVMe saves slower (20 s)."""
    b = _dgx_h100_batch(host_memory=np.nan, local_nvme=np.nan)
    b["ckpt_async"] = np.array([False])
    b["host_link_bw_bytes_per_s"] = np.array([np.inf])
    b["host_memory_bw_bytes_per_s"] = np.array([np.inf])
    for k, w in (("host_memory", 1.4e9), ("local_nvme", 0.7e9)):
        b[f"ckpt_{k}_write_bw_per_node_bytes_per_s"] = np.array([w])
        b[f"ckpt_{k}_agg_write_bw_bytes_per_s"] = np.array([np.inf])
        b[f"ckpt_{k}_read_bw_per_node_bytes_per_s"] = np.array([np.inf])
        b[f"ckpt_{k}_agg_read_bw_bytes_per_s"] = np.array([np.inf])
        for c in FAILURE_CLASSES:
            b[f"ckpt_{k}_survives_{c}"] = np.array([c == "software"])
    for c in FAILURE_CLASSES:
        for u in ("gpu", "node", "job"):
            b[f"fail_{c}_per_{u}_h"] = np.array([0.0])
        b[f"fail_{c}_restart_s"] = np.array([0.0])
        b[f"fail_{c}_repair_s"] = np.array([0.0])
    b["fail_software_per_job_h"] = np.array([1.0])
    b["fail_node_per_job_h"] = np.array([1.0])
    return b


def test_goodput_zero_at_every_interval_headline_and_grid_agree():
    """Goodput 0 whatever the intervals (node failures that no tier survives). The rest of the
    model is one tier (host memory, δ = 10 s) against software failures (M = 3600 s): Daly's
    optimum sqrt(2δM)·(1 + sqrt(δ/(2M))/3 + δ/(18M)) − δ = 268.33 × 1.012577 − 10 = 261.7 s
    (within 1% of the renewal optimum for δ/M <= 0.5). NVMe survives only what host memory does and
    saves slower: never saved (1e8 s). Before: the grid reference put both at one second (its
    first point: every interval was equally 0), the headline host memory at 261.7 s and the NVMe
    at 1e8 s."""
    b = _dead_batch()
    fast, grid = rel.stage(b), rel.stage_grid(b)
    assert fast["goodput"][0] == 0.0 and grid["goodput"][0] == 0.0
    daly = np.sqrt(2 * 10 * 3600) * (1 + np.sqrt(10 / 7200) / 3 + 10 / (18 * 3600)) - 10
    assert daly == pytest.approx(261.70, abs=0.01)
    for out in (fast, grid):
        assert out["ckpt_local_nvme_interval_opt_s"][0] == rel.INTERVAL_MAX_S
        assert out["ckpt_host_memory_interval_opt_s"][0] == pytest.approx(daly, rel=0.01)
    assert fast["ckpt_host_memory_interval_opt_s"][0] == pytest.approx(grid["ckpt_host_memory_interval_opt_s"][0],
                                                                       rel=1e-3)
    row = _row(fast, b)
    assert rel.goodput_zero_at_every_interval(row)
    e = rel.explain(row)
    why = "the goodput is 0 at every interval (no enabled tier survives a failure of class node)"
    assert why in e["ckpt_local_nvme_interval_opt_s"] and "its saves would only stall" in e["ckpt_local_nvme_interval_opt_s"]
    assert why in e["ckpt_host_memory_interval_opt_s"] and "recovers software" in e["ckpt_host_memory_interval_opt_s"]
    # the curve the Plan page draws is 0 at every interval: no point of it is an optimum
    curve = rel.goodput_vs_interval(b, "host_memory", [10.0, 261.7, 1e4])
    assert np.all(curve[:, 0] == 0.0)


def test_recoveries_that_never_end_headline_and_grid_agree_on_the_unused_tier():
    """Software failures twice an hour (MTBF 30 min) with a 10,000 h restart: λR = 2 × 10,000 =
    20,000, the recovery factor e^(λR) = e^20000 puts the goodput below the smallest float
    whatever the intervals (goodput 0; until 2026-12-02 e^(−λR) underflowed in the old factor's
    denominator: "recoveries that never end"). NVMe (slower, survives only what host memory does): never saved, in the headline
    and the grid alike. Host memory: the rest of the model is one tier, δ = 10 s, M = 1800 s:
    Daly sqrt(36000)·(1 + sqrt(10/3600)/3 + 10/32400) − 10 = 189.74 × 1.017877 − 10 = 183.13 s.
    Before: the grid put both tiers at one second (its first point)."""
    b = _dead_batch()
    b["fail_node_per_job_h"] = np.array([0.0])
    b["fail_software_per_job_h"] = np.array([2.0])
    b["fail_software_restart_s"] = np.array([3.6e7])  # 10,000 h
    fast, grid = rel.stage(b), rel.stage_grid(b)
    assert fast["goodput"][0] == 0.0 and grid["goodput"][0] == 0.0
    assert fast["ckpt_local_nvme_interval_opt_s"][0] == grid["ckpt_local_nvme_interval_opt_s"][0] == rel.INTERVAL_MAX_S
    daly = np.sqrt(2 * 10 * 1800) * (1 + np.sqrt(10 / 3600) / 3 + 10 / (18 * 1800)) - 10
    assert daly == pytest.approx(183.13, abs=0.01)
    for out in (fast, grid):
        assert out["ckpt_host_memory_interval_opt_s"][0] == pytest.approx(daly, rel=0.01)
    row = _row(fast, b)
    assert rel.goodput_zero_at_every_interval(row)
    assert "e^2e+04 alone puts the goodput below the smallest float" in rel.explain(row)[
        "ckpt_local_nvme_interval_opt_s"]
