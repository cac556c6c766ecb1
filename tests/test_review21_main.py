"""Session 21 (main): a validation row that states fewer GPUs per node than the catalogue system
holds runs on that node size, so its collectives are placed as the run placed them.

Expected values are hand calculations of the α-β ring (docs/timing.md, planner/comm.py) with the
sourced constants: the DGX H200's NIC bandwidth 400 Gb/s = 50e9 B/s per GPU (catalogue
``dgx-h200``, nv-basepod) and the network link efficiency 0.92 (hardware/calibration.json
``link_eff.network``, sourced: IB NDR 92-98 %). Also: the share-link split fitter keeps TP inside
the NVLink domain; a shared checkpoint tier states a bandwidth; a failure during a recovery
extends it (the M/G/∞ busy period, Takács 1962, checked against a direct event simulation).
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np
import pytest

import planner
from planner import validation

ROOT = Path(__file__).resolve().parents[1]
OOS = ROOT / "validation" / "out_of_sample.csv"
RUN = "kempnerforge_70b_32xh200_tp4_fsdp8"  # TP 4 x FSDP 8 on 4-GPU H200 nodes, 4 micro-batches

NIC_BPS = 50e9
NET_EFF = 0.92


def _row(**changes) -> dict:
    rows = list(csv.DictReader(io.StringIO(OOS.read_text(encoding="utf-8"))))
    r = next(x for x in rows if x["run_id"] == RUN)
    r.update(changes)
    return r


def _no_overlap(scen) -> dict:
    d = scen.to_json_dict()
    d["parallelism"]["dp_comm_overlap"] = False  # exposed DP time = every collective's time
    return d


def test_a_stated_4_gpu_node_is_the_node_the_row_runs_on():
    used: list[str] = []
    scen, why = validation.row_to_scenario(_row(), used)
    assert scen is not None, why
    sys_ = scen.cluster.system
    assert not isinstance(sys_, str)
    assert (sys_.gpus_per_node, sys_.nvlink_domain_size) == (4, 4)
    assert sys_.accelerator == "h200-sxm-141gb" and sys_.nic_bw_per_gpu_bytes_per_s == NIC_BPS
    # per-node capacities scaled by 4/8 from the DGX H200's 2 TiB, 10.2 kW
    assert sys_.host_memory_bytes == pytest.approx(2 ** 41 / 2)
    assert sys_.node_power_w == pytest.approx(10200 / 2)
    assert any("node of 4 GPUs as stated" in u for u in used)


def test_fsdp_beside_tp4_on_4_gpu_nodes_crosses_the_network_by_hand():
    scen, why = validation.row_to_scenario(_row())
    assert scen is not None, why
    r = planner.evaluate(_no_overlap(scen))
    P = r.results["params_total"]
    shard = P / 4  # TP 4 shards every weight (norm weights, replicated, are 2e-5 of P)
    # ring over the 8 FSDP ranks, each in its own node: (n-1)/n of the shard through the NIC
    ag = 7 / 8 * shard * 2 / (NIC_BPS * NET_EFF)  # bf16 parameters
    rs = 7 / 8 * shard * 4 / (NIC_BPS * NET_EFF)  # fp32 gradients
    m = 64 // (2 * 8)  # global batch 64 / (micro-batch 2 x DP 8) = 4
    expected = m * (2 * ag + rs)  # FSDP: gather forward and backward, reduce-scatter, per micro-batch
    assert expected == pytest.approx(10.74, rel=2e-3)  # the figure, worked: 4 x (2 x 0.671 + 1.342) s
    assert r.results["t_dp_comm_exposed_s"] == pytest.approx(expected, rel=1e-3)


def test_the_catalogue_8_gpu_node_halves_that_traffic():
    """Without the statement the DGX H200 holds two FSDP ranks of a TP-4 group per node: the ring
    crosses each node boundary through both ranks' NICs, half the bytes per NIC (ring_link)."""
    plain = _row(gpu="H200 141GB", interconnect="NVLink intra-node, InfiniBand inter-node")
    scen8, why = validation.row_to_scenario(plain)
    assert scen8 is not None, why
    assert scen8.cluster.system == "dgx-h200"
    scen4, _ = validation.row_to_scenario(_row())
    t8 = planner.evaluate(_no_overlap(scen8)).results["t_dp_comm_exposed_s"]
    t4 = planner.evaluate(_no_overlap(scen4)).results["t_dp_comm_exposed_s"]
    assert t8 / t4 == pytest.approx(0.5, rel=2e-3)


@pytest.mark.parametrize("text, system", [
    ("8x H200 per node", "dgx-h200"),           # the catalogue's own size: unchanged
    ("16 GPUs per node", "dgx-h200"),           # larger than the NVLink domain: not invented
])
def test_other_node_sizes_keep_the_catalogue_system(text, system):
    scen, why = validation.row_to_scenario(_row(interconnect=text))
    assert scen is not None, why
    assert scen.cluster.system == system


def test_a_rack_scale_domain_keeps_its_system():
    """GB200 NVL72: 4 GPUs per node is the catalogue's own node; the 72-GPU domain stays."""
    scen, why = validation.row_to_scenario(_row(gpu="GB200", interconnect="4x GB200 per node, NVL72"))
    assert scen is not None, why
    sys_ = scen.cluster.system
    assert isinstance(sys_, str)
    from planner import catalog
    spec = catalog.resolve_system(sys_)
    assert spec.nvlink_domain_size == 72 and spec.gpus_per_node == 4


# --- share links: the split fitter keeps TP inside the NVLink domain --------------------------

def test_an_odd_global_batch_on_1024_gpus_is_refused_not_fitted_across_nodes():
    """511 = 7 · 73 is odd, so micro-batch · DP divides it only with DP = 1; TP · PP = 1,024 then
    needs TP ≥ 1,024 / 80 layers > 8, beyond the DGX H100's 8-GPU NVLink domain. The link's batch
    is refused (the base preset's 512 kept), not fitted to TP 64 · PP 16 (found by review)."""
    from planner import share

    sj, warnings = share.params_to_scenario({"p": "default", "gbs": "511"})
    assert sj["training"]["global_batch_size"] == 512
    assert sj["parallelism"]["tp"] == 8
    assert len(warnings) == 1 and warnings[0].startswith("gbs: refused, training.global_batch_size = 511 is not "
                                                         "divisible by micro_batch_size·dp"), warnings


def test_a_link_that_asks_for_tp_across_nodes_keeps_it():
    from planner import share

    sj, warnings = share.params_to_scenario({"p": "default", "tp": "16"})
    assert sj["parallelism"]["tp"] == 16 and not any(w.startswith("tp") for w in warnings), warnings


# --- a shared checkpoint tier states a bandwidth ----------------------------------------------

@pytest.mark.parametrize("given, missing", [
    ({}, "write"),
    ({"write_bw_per_node_bytes_per_s": 1e10}, "read"),
    ({"aggregate_write_bw_bytes_per_s": 1e12}, "read"),
])
def test_a_shared_tier_without_any_bandwidth_is_refused(given, missing):
    from planner.schema import InputError

    tier = {"name": "my pfs", "kind": "pfs", "scope": "shared", "survives": ["node"],
            "sources": {k: "what-if" for k in given}, **given}
    sj = {"model": "llama3-8b", "cluster": {"system": "dgx-h100", "n_gpus": 64},
          "checkpoint": {"tiers": [{"tier": tier}]}}
    with pytest.raises(InputError) as e:
        planner.evaluate(sj)
    assert f"{missing}_bw_per_node_bytes_per_s and aggregate_{missing}_bw_bytes_per_s are both null" in str(e.value)


def test_a_shared_tier_with_only_an_aggregate_rate_is_accepted():
    rates = {"aggregate_write_bw_bytes_per_s": 1e11, "aggregate_read_bw_bytes_per_s": 1e11}
    tier = {"name": "my pfs", "kind": "pfs", "scope": "shared",
            "survives": ["software", "gpu", "node", "network", "cluster"],
            "sources": {k: "what-if" for k in rates}, **rates}
    r = planner.evaluate({"model": "llama3-8b", "cluster": {"system": "dgx-h100", "n_gpus": 64},
                          "checkpoint": {"tiers": [{"tier": tier}]}})
    assert r.results["goodput"] > 0


# --- recoveries: a failure during one extends it (M/G/∞ busy period) ---------------------------

def _busy_periods(lam_c, x_c, n, seed):
    """Mean busy period of an M/G/∞ queue by direct event simulation (independent of planner):
    a recovery starts with a failure of class c (probability λ_c/λ) and lasts x_c; each failure
    arriving before the recovery ends extends it to max(end, arrival + x_c')."""
    rng = np.random.default_rng(seed)
    lam_c, x_c = np.asarray(lam_c, float), np.asarray(x_c, float)
    lam, p = lam_c.sum(), lam_c / lam_c.sum()
    out = np.empty(n)
    for i in range(n):
        t, end = 0.0, x_c[rng.choice(len(p), p=p)]
        while True:
            t += rng.exponential(1.0 / lam)
            if t >= end:
                break
            end = max(end, t + x_c[rng.choice(len(p), p=p)])
        out[i] = end
    return out


def test_the_busy_period_mean_is_takacs_closed_form():
    """E[B] = (e^{λE[x]} − 1)/λ (M/G/∞, Takács 1962), checked against a direct simulation of the
    rule: λ = 2/h over two classes, a 10-minute restart (λ_1 = 1.5/h) and a 2-hour repair
    (λ_2 = 0.5/h): ρ = 1.5 · 1/6 + 0.5 · 2 = 1.25. 20,000 periods, 4 standard errors."""
    lam_c = np.array([1.5, 0.5]) / 3600.0
    x_c = np.array([600.0, 7200.0])
    rho = float(np.sum(lam_c * x_c))
    assert rho == pytest.approx(1.25)
    want = math.expm1(rho) / lam_c.sum()
    b = _busy_periods(lam_c, x_c, 20_000, seed=3)
    assert abs(b.mean() - want) < 4 * b.std(ddof=1) / math.sqrt(len(b)), (b.mean(), want)


def test_the_engine_recovery_factor_is_one_plus_lambda_times_the_busy_period():
    """The renewal factor of the goodput is 1 + λ·E[B] = e^ρ: the engine's restart share of the
    loss, log-factor form, equals Σ_c λ_c·(R_c + reload_c) (planner.reliability.expected_goodput),
    here with one tier and no reload."""
    from planner import reliability as rel

    lam_c = np.array([1.5 / 3600.0, 0.5 / 3600.0, 0, 0, 0])
    R_c = np.array([600.0, 7200.0, 0, 0, 0])
    K, C = 4, 5
    res = rel.expected_goodput(
        [np.array([np.nan]), np.array([np.nan]), np.array([1800.0]), np.array([np.nan])],
        np.array([[0, 0, 5.0, 0.0]]), np.array([[False, False, True, False]]), lam_c[None, :],
        R_c[None, :], np.zeros((1, K, C)), np.ones((1, K, C), dtype=bool))
    assert res["log_recovery_factor"][0] == pytest.approx(1.25, rel=1e-12)
    x = lam_c.sum() * (1800.0 + 5.0)
    assert res["goodput"][0] == pytest.approx(1 / ((1 + 5 / 1800) * math.exp(1.25) * math.expm1(x) / x), rel=1e-12)


@pytest.mark.parametrize("tp", ["1e3", "128"])
def test_a_tampered_tp_does_not_lift_the_cap(tp):
    """``tp=1e3&gbs=511``: the link's TP is refused (it divides neither the GPUs nor the heads);
    the fitter must not then take TP 64 across nodes for the odd batch (found by review: the cap
    was max(domain, the link's TP) = 1,000)."""
    from planner import share

    sj, warnings = share.params_to_scenario({"p": "default", "tp": tp, "gbs": "511"})
    assert sj["parallelism"]["tp"] == 8 and sj["training"]["global_batch_size"] == 512, warnings
    assert any(w.startswith("gbs: refused") for w in warnings) and any(w.startswith("tp: refused") for w in warnings)


@pytest.mark.parametrize("text, note", [
    ("3 GPUs per node", "node of 3 GPUs as stated (dgx-h200 has 8; NVLink domain 3; host memory, NVMe and power "
                        "per node × 3/8); TP 4 spans 2 such nodes (over the network)"),
    ("16 GPUs per node", "node of 16 GPUs stated; placed on dgx-h200's 8-GPU NVLink domain (whether NVLink spans "
                         "the stated node is not known)"),
])
def test_every_stated_node_size_is_said(text, note):
    used: list[str] = []
    scen, why = validation.row_to_scenario(_row(interconnect=text), used)
    assert scen is not None, why
    assert note in used, used


def test_the_derived_node_says_where_its_figures_come_from():
    scen, _ = validation.row_to_scenario(_row())
    s = scen.cluster.system
    assert s.sources["gpus_per_node"] == "the row's own statement"
    assert s.sources["node_power_w"].startswith("derived by the validation reader: dgx-h200's figure x 4/8")
    assert "node_power_w" in s.uncertain and "host_memory_bytes" in s.uncertain


def test_megatron_export_launches_the_systems_gpus_per_node():
    """torchrun --nproc-per-node is the system's GPUs per node: 4 on GB200 NVL72 (64 nodes for 256
    GPUs), 8 on a DGX (until session 21: 8 everywhere)."""
    from planner.export import megatron_args

    text = megatron_args(planner.load_preset("qwen3-235b-gb200-256")).text
    assert "torchrun --nnodes 64 --nproc-per-node 4 " in text
    assert "torchrun --nnodes 128 --nproc-per-node 8 " in megatron_args(planner.load_preset("default")).text


def _one_class(restart_s, tier):
    d = planner.load_preset("default").to_json_dict()
    d["reliability"]["profile"] = {"name": "p", "reference": "r", "source": "s", "classes": [
        {"class": "software", "rate": 1.0, "per": "job_hour", "restart_s": restart_s, "source": "s"}]}
    d["checkpoint"]["tiers"] = [tier]
    return d


def test_goodput_explain_and_reason_when_recoveries_and_lost_work_together_underflow():
    """1 failure/h, restart 2,628,000 s (730 h: factor e^730, a float) and host memory every 1e5 s
    (λτ = 27.8: φ ≈ e^24.45): together e^754, beyond the float range. The explain shows both
    factors and the total by their exponents; the reason names both (found by review: it blamed
    the recovery factor alone, and φ was shown as inf)."""
    r = planner.evaluate(_one_class(2_628_000.0, {"tier": "host_memory", "interval_s": 1e5}))
    assert r.results["goodput"] == 0.0
    e = r.explain["goodput"]
    assert "× e^730 ×" in e and "= e^754." in e and "inf" not in e, e
    why = r.explain["time_to_train_days"]
    assert "× e^730 (recoveries) × e^24.45 (work lost since the last saves) is beyond the float range" in why, why
