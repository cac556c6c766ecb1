"""Hybrid sharding (HSDP, ``parallelism.dp_shard < dp``): memory, step time, validation.

Hand calculations from the model's stated formulas:
* ZeRO [Rajbhandari et al. 2020, Fig. 1]: the sharded states divide by the sharding group,
  here ``dp_shard·cp`` instead of ``dp·cp``;
* ring all-reduce (Patarasuk & Yuan 2009; NCCL): ``2·(r−1)/r · S / BW + 2·α`` for ``r``
  members, with the per-GPU network bandwidth × its efficiency when each member sits in its own
  node (docs/timing.md, hardware/calibration.json ``link_eff``, ``alpha_s``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import planner
from planner import batch, model_stats, timing
from planner.schema import InputError

CAL = json.loads((Path(__file__).resolve().parents[1] / "hardware" / "calibration.json").read_text())


def _scenario(n_gpus=16, zero=3, dp_shard=None, cp=1, **par):
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["cluster"]["n_gpus"] = n_gpus
    d["training"]["global_batch_size"] = 64
    d["parallelism"].update(tp=1, pp=1, cp=cp, dp=None, zero_stage=zero, dp_shard=dp_shard, **par)
    return d


def test_full_sharding_and_dp_shard_equal_dp_are_the_same_run():
    a = planner.evaluate(_scenario(dp_shard=None)).results
    b = planner.evaluate(_scenario(dp_shard=16)).results
    for k, v in a.items():
        if isinstance(v, float) and np.isfinite(v):
            assert b[k] == v, k


@pytest.mark.parametrize("zero", [1, 2, 3])
def test_sharded_states_divide_by_dp_shard(zero):
    """ZeRO-1 shards the optimizer, ZeRO-2 also gradients, ZeRO-3 also weights: the sharded
    parts grow by dp/dp_shard = 16/4 = 4, the others do not change."""
    full = planner.evaluate(_scenario(zero=zero)).results
    hs = planner.evaluate(_scenario(zero=zero, dp_shard=4)).results
    assert hs["mem_optimizer_bytes"] == pytest.approx(4 * full["mem_optimizer_bytes"], rel=1e-12)
    assert hs["mem_grads_bytes"] == pytest.approx((4 if zero >= 2 else 1) * full["mem_grads_bytes"], rel=1e-12)
    assert hs["mem_weights_bytes"] == pytest.approx((4 if zero >= 3 else 1) * full["mem_weights_bytes"], rel=1e-12)


def test_with_cp_the_shard_group_is_dp_shard_times_cp():
    full = planner.evaluate(_scenario(zero=1, cp=2)).results          # dp 8, cp 2: shard 16
    hs = planner.evaluate(_scenario(zero=1, cp=2, dp_shard=2)).results  # shard 2·2 = 4
    assert hs["mem_optimizer_bytes"] == pytest.approx(4 * full["mem_optimizer_bytes"], rel=1e-12)


def _terms(d):
    b = batch.from_scenarios([planner.Scenario.model_validate(d)])
    b.update(model_stats.stats(b))
    T = timing._terms(b)
    return b, {k: float(np.asarray(v).reshape(-1)[0]) for k, v in T.items()
               if np.asarray(v).size == 1 or np.ndim(v) == 0}


def test_replica_all_reduce_by_hand():
    """16 H100 in 2 DGX nodes, ZeRO-1, dp_shard 8: the shard group is one node (NVLink), the 2
    replicas sit in different nodes, so the all-reduce of the fp32 gradient shard P/8 crosses
    the network: 2·(1/2)·4·P/8 / (50 GB/s × eff_network) + 2·α_network."""
    b, T = _terms(_scenario(zero=1, dp_shard=8))
    P = float(np.asarray(b["params_total"])[0])
    eff = CAL["link_eff"]["value"]["network"]
    alpha = CAL["alpha_s"]["value"]["network"]
    nic = float(np.asarray(b["nic_bw_per_gpu_bytes_per_s"])[0])
    expected = 2.0 * (0.5 * 4.0 * P / 8 / (nic * eff) + alpha)
    assert T["_t_rep"] == pytest.approx(expected, rel=1e-9)
    # The reduce-scatter stays inside the node: (8−1)/8 · 4·P / (NVLink × eff_scaleup) + 7·α_nvl
    nvl = float(np.asarray(b["scaleup_bw_bytes_per_s"])[0]) * CAL["link_eff"]["value"]["scaleup"]
    rs = 7 / 8 * 4.0 * P / nvl + 7 * CAL["alpha_s"]["value"]["scaleup"]
    assert T["_t_grad"] == pytest.approx(rs + expected, rel=1e-9)


def test_optimizer_step_runs_on_the_larger_shard():
    full = planner.evaluate(_scenario(zero=1)).results
    hs = planner.evaluate(_scenario(zero=1, dp_shard=8)).results
    assert hs["t_optimizer_s"] == pytest.approx(2 * full["t_optimizer_s"], rel=1e-12)


@pytest.mark.parametrize("par, expected", [
    ({"dp_shard": 3}, "dp_shard = 3 must divide dp = 16"),
    ({"dp_shard": 4, "zero": 0}, "needs zero_stage 1, 2 or 3"),
    ({"dp_shard": 0}, "parallelism.dp_shard"),
])
def test_bad_dp_shard_names_the_field(par, expected):
    d = _scenario(**{k: v for k, v in par.items() if k != "zero"}, **({"zero": par["zero"]} if "zero" in par else {}))
    with pytest.raises(InputError) as e:
        planner.evaluate(d)
    assert expected in str(e.value)


def test_hsdp_with_expert_parallelism_is_refused():
    d = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
    d["parallelism"]["dp"] = None
    dp = d["cluster"]["n_gpus"] // (d["parallelism"]["tp"] * d["parallelism"]["pp"] * d["parallelism"]["cp"])
    assert d["parallelism"]["ep"] > 1
    d["parallelism"]["dp_shard"] = dp // 2
    with pytest.raises(InputError, match="hybrid sharding of expert-parallel models is not modelled"):
        planner.evaluate(d)


def test_link_carries_dp_shard():
    from planner import share
    d = _scenario(zero=3, dp_shard=8)
    params = share.scenario_to_params(d)
    assert params["dps"] == "8"
    back, warnings = share.params_to_scenario(params)
    assert not warnings and back["parallelism"]["dp_shard"] == 8
    _, warnings = share.params_to_scenario({**params, "dps": "-2"})
    assert warnings and "dps" in warnings[0]


def test_sweep_rows_shard_over_all_dp_ranks_and_open_as_such():
    """The sweep does not sweep HSDP: a base scenario's dp_shard must not leak into rows with
    another dp (it would shard over a group that is not theirs)."""
    from planner.sweep import scenario_for_row
    base = planner.Scenario.model_validate(_scenario(n_gpus=64, zero=3, dp_shard=8))
    df = planner.sweep(base, top=5, tp=[1, 2], pp=[1], cp=[1], zero_stages=[1, 3], recompute=["full"])
    assert len(df)
    for _, row in df.iterrows():
        s = scenario_for_row(base, row)
        assert s.parallelism.dp_shard is None
        r = planner.evaluate(s).results
        assert r["mem_total_bytes"] == pytest.approx(row["mem_total_bytes"], rel=1e-9)
        assert r["step_time_s"] == pytest.approx(row["step_time_s"], rel=1e-9)


def _moe_hsdp(dp_shard):
    """Mixtral 8x7B on 64 H100, ep = 1, pp = 4 (dp 16), ZeRO-1."""
    d = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
    d["parallelism"].update(ep=1, pp=4, vpp=1, schedule="1f1b", dp=None, zero_stage=1, dp_shard=dp_shard)
    return d


def test_moe_with_ep1_shards_experts_over_the_shard_group_in_time_too():
    """Memory and optimizer-step time both see the shard over dp_shard·cp = 4 instead of 16:
    ×4 (the optimizer step is bound by HBM traffic over the local shard)."""
    full, hs = planner.evaluate(_moe_hsdp(None)).results, planner.evaluate(_moe_hsdp(4)).results
    assert hs["mem_optimizer_bytes"] == pytest.approx(4 * full["mem_optimizer_bytes"], rel=1e-12)
    assert hs["t_optimizer_s"] == pytest.approx(4 * full["t_optimizer_s"], rel=1e-12)
    # The replica all-reduce carries every local parameter, experts included: P_local = P/(tp·pp)
    # = P/4 (the stage average). 4 replicas at stride tp·dp_shard·cp = 4 sit 2 per 8-GPU node in
    # 2 nodes: ring bandwidth min(NVLink·eff, 2·NIC·eff), latency α_nvl + α_net (docs/timing.md).
    b, T = _terms(_moe_hsdp(4))
    P_local = float(np.asarray(b["params_total"])[0]) / 4
    eff = CAL["link_eff"]["value"]
    al = CAL["alpha_s"]["value"]
    bw = min(float(np.asarray(b["scaleup_bw_bytes_per_s"])[0]) * eff["scaleup"],
             2 * float(np.asarray(b["nic_bw_per_gpu_bytes_per_s"])[0]) * eff["network"])
    expected = 2 * (0.75 * 4.0 * P_local / 4 / bw + al["scaleup"] + al["network"])
    assert T["_t_rep"] == pytest.approx(expected, rel=1e-9)


def test_mixed_batches_give_each_row_its_own_numbers():
    dense = _scenario(zero=1, dp_shard=8)
    rows = [planner.load_preset("mixtral-8x7b-h100-64").to_json_dict(), dense, _moe_hsdp(4)]
    both = planner.evaluate_many(rows)
    for i, d in enumerate(rows):
        alone = planner.evaluate(d).results
        for k in ("step_time_s", "t_optimizer_s", "t_dp_comm_exposed_s", "mem_total_bytes"):
            assert both[k].iloc[i] == pytest.approx(alone[k], rel=1e-12), (i, k)
