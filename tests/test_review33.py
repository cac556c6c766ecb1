"""Session 33 fixes (review h30a C2, C3, C6): each expected figure is a hand calculation from the
catalogue's cited values (hardware/systems.json dgx-h100: PCIe Gen5 63e9 B/s per GPU, host DRAM
614.4e9 B/s, 400 Gb/s = 50e9 B/s of NIC per GPU, 8 GPUs per node) and the sourced achieved-rate
factors of hardware/calibration.json ``link_eff`` (host 0.8, network 0.92), never from the
code's output."""
from __future__ import annotations

import re

import numpy as np
import pytest

import planner
from planner import batch as B
from planner import checkpoint as ck
from planner import engine
from planner import reliability as rel
from planner.schema import FAILURE_CLASSES, TIER_KINDS, validate_scenario

PCIE5 = 63e9  # DGX H100 host link per GPU [B/s]
DRAM = 614.4e9  # DGX H100 host DRAM bandwidth per node [B/s]
NIC = 50e9  # 400 Gb/s per GPU [B/s]
HOST_EFF, NET_EFF = 0.8, 0.92  # hardware/calibration.json link_eff (sourced: hardware.md §6b)


def _llama8b(n_gpus: int, zero: int, tiers: list[dict]) -> dict:
    """Llama 3 8B on ``n_gpus`` DGX H100 GPUs, TP = PP = CP = 1 (DP = n_gpus), given tiers."""
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["cluster"]["n_gpus"] = n_gpus
    d["parallelism"].update(tp=1, pp=1, cp=1, dp=None, zero_stage=zero, vpp=1, schedule="1f1b")
    d["training"]["global_batch_size"] = 32
    d["checkpoint"] = {"tiers": tiers, "async": False, "async_interference_frac": 0.0}
    return d


def _run(d: dict) -> dict:
    return engine.run_batch(B.from_scenarios([validate_scenario(d)]))


def test_catalogue_figures_the_hand_counts_use():
    out = _run(_llama8b(16, 0, [{"tier": "host_memory"}]))
    assert float(out["host_link_bw_bytes_per_s"][0]) == PCIE5
    assert float(out["host_memory_bw_bytes_per_s"][0]) == DRAM
    assert float(out["nic_bw_per_gpu_bytes_per_s"][0]) == NIC
    assert int(out["gpus_per_node"][0]) == 8
    assert ck.link_eff()["host"] == HOST_EFF and ck.link_eff()["network"] == NET_EFF


@pytest.mark.parametrize("n_gpus", [8, 16])
def test_zero0_host_memory_reload_fetches_over_the_network_on_several_nodes(n_gpus):
    """ZeRO-0 at DP = n: one replica (1 GPU at TP 1) writes all C = 14 B × params. Every GPU
    reloads the whole C. Per GPU: host-to-device C / min(0.8 × 63e9 = 50.4e9, 614.4e9 / 8 =
    76.8e9) = C / 50.4e9; the node's 8 C over its DRAM, 614.4e9: C / 76.8e9. On one node (8
    GPUs) the copy is in that node's memory: reload = C / 50.4e9. On two nodes the second node
    has no copy and fetches its 8 C over 8 × 50e9 × 0.92 = 368e9: C / 46e9, which binds
    (review h30a C6: it was counted as a local read, C / 50.4e9, 9.6 % short)."""
    out = _run(_llama8b(n_gpus, 0, [{"tier": "host_memory"}]))
    c = 14.0 * float(out["params_total"][0])
    assert float(out["ckpt_shard_bytes"][0]) == pytest.approx(c, rel=1e-12)  # one writer holds all C
    tt = ck.tier_times(out)
    hm = TIER_KINDS.index("host_memory")
    sw = FAILURE_CLASSES.index("software")  # a class the host-memory tier survives
    assert tt["survives"][0, hm, sw]
    want = c / 46e9 if n_gpus > 8 else c / 50.4e9
    assert tt["reload_s"][0, hm, sw] == pytest.approx(want, rel=1e-12)
    # the stage's own path (reliability._stage_block) prices the same reload: its goodput is the
    # renewal model's over checkpoint.tier_times (stage_grid) at the same intervals
    g = rel.stage_grid(out)
    assert out["goodput"][0] == pytest.approx(g["goodput"][0], rel=1e-9)


def test_zero0_fetch_slows_recovery_against_a_zero1_job_of_the_same_size():
    """Same two-node job: with ZeRO-1 every GPU wrote its own C/16 and reads it back locally
    (C/16 / 50.4e9 per GPU), with ZeRO-0 every GPU fetches C: the ZeRO-0 restart share is larger
    (a PFS tier beside it recovers the GPU and node failures host memory does not survive)."""
    tiers = [{"tier": "host_memory"}, {"tier": "pfs"}]
    z0 = _run(_llama8b(16, 0, tiers))
    z1 = _run(_llama8b(16, 1, tiers))
    assert z0["goodput"][0] > 0 and z1["goodput"][0] > 0
    c = 14.0 * float(z1["params_total"][0])
    tt1 = ck.tier_times(z1)
    hm, sw = TIER_KINDS.index("host_memory"), FAILURE_CLASSES.index("software")
    assert tt1["reload_s"][0, hm, sw] == pytest.approx(c / 16 / 50.4e9, rel=1e-12)
    assert z0["restart_frac"][0] > z1["restart_frac"][0]


def test_peer_replica_copy_runs_at_the_networks_achieved_rate():
    """Host-memory tier with one peer copy, ZeRO-1, 16 GPUs on 2 nodes: each node sends its
    share 8 × C/16 = C/2 to the other node over 8 × 50e9 × 0.92 = 368e9 B/s (the collectives'
    factor; before review h30a C2 the copies ran at the nominal 400e9): C/2 / 368e9. The host
    copy is C/16 / 50.4e9; the node's DRAM takes its own share and the peer's copy, 2 × C/2 at
    614.4e9 (review 44: the received copy was left out of the write), and binds with this figure;
    the network term is its own (below, in the explanation)."""
    d = _llama8b(16, 1, [{"tier": "host_memory", "replicas": 1}])
    out = _run(d)
    c = 14.0 * float(out["params_total"][0])
    net = (c / 2) / (8 * NIC * NET_EFF)
    want = 2 * (c / 2) / DRAM
    assert want > net > (c / 16) / (HOST_EFF * PCIE5)
    assert out["ckpt_host_memory_save_s"][0] == pytest.approx(want, rel=1e-12)
    tt = ck.tier_times(out)
    assert tt["save_s"][0, TIER_KINDS.index("host_memory")] == pytest.approx(want, rel=1e-12)
    text = planner.evaluate(validate_scenario(d)).explain["ckpt_host_memory_save_s"]
    assert "8 GPUs × NIC × 0.92 achieved" in text and "link 63 × 0.8 achieved" in text


def test_pfs_copy_and_offload_share_the_host_links_achieved_rate():
    """PFS, ZeRO-1, async on 64 GPUs: the stall is the device-to-host copy of C/64 at 0.8 × 63e9
    (no interference), the same factor the step-time model's optimizer offload uses."""
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["parallelism"].update(zero_stage=1)
    d["checkpoint"] = {"tiers": [{"tier": "pfs"}], "async": True, "async_interference_frac": 0.0}
    out = _run(d)
    c = 14.0 * float(out["params_total"][0])
    assert out["ckpt_pfs_stall_s"][0] == pytest.approx(c / 64 / (HOST_EFF * PCIE5), rel=1e-12)
    from planner import timing
    assert timing._default_consts().eff_host == HOST_EFF


# ------------------------------------------------------------------ C3: node size of the source fleet

def _profile_rates(pid: str) -> dict:
    import json
    from planner import catalog
    raw = json.loads(catalog.data_path("hardware", "failure_profiles.json").read_text())[pid]
    return {c["class"]: (c["rate"], c["per"]) for c in raw["classes"]}, raw["node_gpus"]


def test_per_node_rates_from_8_gpu_nodes_on_4_gpu_trays_get_a_note_with_the_share_by_hand():
    """Qwen3 235B on 256 GB200 (64 trays of 4) with the Llama 3 fleet's rates (8-GPU Grand Teton
    nodes). By hand from hardware/failure_profiles.json: per node-hour software 2.3736e-5, node
    1.7331e-5, network 1.5824e-5 (× 64 nodes), per GPU-hour 1.2621e-5 (× 256), per job 4.6296e-4:
    the per-node classes are 3.641e-3 of 7.335e-3 /h, 50 %; each 4-GPU tray takes an 8-GPU node's
    rate, 2× the source fleet's per GPU."""
    d = planner.load_preset("qwen3-235b-gb200-256").to_json_dict()
    assert d["reliability"]["profile"] == "llama3-h100" and d["reliability"].get("rate_scale", 1.0) == 1.0
    rates, ref = _profile_rates("llama3-h100")
    assert ref == 8
    n, nodes = 256, 64
    per_node = sum(r for r, per in rates.values() if per == "node_hour") * nodes
    total = per_node + sum(r * n for r, per in rates.values() if per == "gpu_hour") + sum(
        r for r, per in rates.values() if per == "job_hour")
    rep = planner.evaluate(validate_scenario(d))
    assert rep.results["failure_rate_per_h"] == pytest.approx(total, rel=1e-12)
    note = [x for x in rep.notes if "per-node rates" in x]
    assert len(note) == 1, rep.notes
    assert "(software, node, network: 50 % of λ here)" in note[0]
    assert round(100 * per_node / total) == 50
    assert "measured on 8-GPU nodes; this system has 4 GPUs per node" in note[0]
    # 256 GPUs: 64 trays of 4 against 32 nodes of 8 on the source fleet
    assert "the job's 256 GPUs on 64 nodes count 2× the node failures of the same GPUs on the source fleet's 32" \
        in note[0]


def test_no_node_size_note_on_8_gpu_nodes_or_without_a_stated_fleet_node_size():
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()  # DGX H100: 8 per node, as the fleet
    assert not [x for x in planner.evaluate(validate_scenario(d)).notes if "per-node rates" in x]
    g = planner.load_preset("qwen3-235b-gb200-256").to_json_dict()
    from planner import catalog
    prof = catalog.resolve_failure_profile("llama3-h100").model_dump(by_alias=True)
    prof.pop("node_gpus")  # a custom profile that does not state it: nothing to compare
    prof["name"] = "custom fleet"
    g["reliability"]["profile"] = prof
    assert not [x for x in planner.evaluate(validate_scenario(g)).notes if "per-node rates" in x]


# ------------------------------------------------------------------ unused tiers: NaN, not inf

def test_a_tier_not_in_use_has_no_save_or_stall_time():
    """evaluate's contract: inf only in mtbf_h without failures and in the time / cost of a run that
    never finishes; NaN where a value does not apply. The GB200 tray has no local NVMe in the
    catalogue (write bandwidth 0: a save would take forever), and the Qwen3 preset uses host memory
    and the PFS only: its NVMe and object-store save / stall read NaN (they read inf / a figure
    before), on the headline path, the grid path and in the sweep's batch path alike."""
    s = planner.load_preset("qwen3-235b-gb200-256")
    kinds = {u.tier if isinstance(u.tier, str) else u.tier.kind for u in s.checkpoint.tiers}
    assert kinds == {"host_memory", "pfs"}
    r = planner.evaluate(s).results
    out = engine.run_batch(B.from_scenarios([s, planner.load_preset("default")]))
    g = rel.stage_grid(out)
    for kind in ("local_nvme", "object_store"):
        for q in ("save_s", "stall_s"):
            assert np.isnan(r[f"ckpt_{kind}_{q}"]), (kind, q)
            assert np.isnan(out[f"ckpt_{kind}_{q}"][0]) and np.isnan(g[f"ckpt_{kind}_{q}"][0]), (kind, q)
    for kind in ("host_memory", "pfs"):
        assert np.isfinite(r[f"ckpt_{kind}_save_s"]) and r[f"ckpt_{kind}_save_s"] > 0
    inf = [k for k, v in r.items() if isinstance(v, float) and np.isinf(v)]
    assert inf == [], inf


def test_node_size_note_counts_nodes_prints_whole_percents_and_skips_equal_node_counts():
    """The RSC profile is all per-node (one 'node' class): 100 % of λ, printed "100 %" (".2g" gave
    "1e+02"). On gh200-quad (4 GPUs per node) 16 GPUs take 4 nodes against 2 of 8: 2×; 2 GPUs take one
    node either way: no note (review of session 33)."""
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["cluster"]["system"] = "gh200-quad"
    d["reliability"]["profile"] = "rsc-a100"
    d["parallelism"]["dp"] = None
    for n, want in ((16, "(node: 100 % of λ here)"), (2, None)):
        d["cluster"]["n_gpus"] = n
        notes = [x for x in planner.evaluate(validate_scenario(d)).notes if "per-node rates" in x]
        if want is None:
            assert notes == []
        else:
            assert len(notes) == 1 and want in notes[0], notes
            assert "the job's 16 GPUs on 4 nodes count 2× the node failures of the same GPUs on the source " \
                   "fleet's 2" in notes[0]


def _tier_reload(d: dict, kind: str = "host_memory") -> tuple[float, float, dict]:
    out = _run(d)
    tt = ck.tier_times(out)
    k, sw = TIER_KINDS.index(kind), FAILURE_CLASSES.index("software")
    return float(tt["reload_s"][0, k, sw]), 14.0 * float(out["params_total"][0]), out


def test_zero0_stage_within_one_node_or_a_peer_copy_on_every_node_fetches_nothing():
    """Review of the first C6 fix. (a) PP 2 × DP 8 on 2 DGX H100: Megatron puts each pipeline stage
    (8 consecutive ranks, PP outermost) on its own node with its writer, so both nodes hold their
    stage's copy: every GPU reads its C/2 shard locally, (C/2) / min(50.4e9, 614.4e9 / 8 = 76.8e9),
    not over the network. (b) DP 16 on 2 nodes with one peer copy of the host-memory tier: the copy
    is on both nodes, C / 50.4e9 locally (without the copy: C / 46e9 over 8 × 50e9 × 0.92)."""
    d = _llama8b(16, 0, [{"tier": "host_memory"}, {"tier": "pfs"}])
    d["parallelism"].update(pp=2, dp=None)
    r, c, out = _tier_reload(d)
    assert int(out["pp"][0]) == 2 and int(out["dp"][0]) == 8
    assert float(out["ckpt_shard_bytes"][0]) == pytest.approx(c / 2, rel=1e-12)  # one writer per stage
    assert r == pytest.approx((c / 2) / (HOST_EFF * PCIE5), rel=1e-12)
    g = rel.stage_grid(out)
    assert out["goodput"][0] == pytest.approx(g["goodput"][0], rel=1e-9)
    d = _llama8b(16, 0, [{"tier": "host_memory", "replicas": 1}, {"tier": "pfs"}])
    r, c, out = _tier_reload(d)
    assert r == pytest.approx(c / (HOST_EFF * PCIE5), rel=1e-12)
    d = _llama8b(16, 0, [{"tier": "host_memory"}, {"tier": "pfs"}])
    r, c, _ = _tier_reload(d)
    assert r == pytest.approx(c / 46e9, rel=1e-12)


def test_zero0_fetch_is_the_same_in_a_mixed_batch_as_alone():
    """Rows of one batch that differ in ZeRO stage, PP, replicas and node count: each row's restart
    share and goodput as when run alone (the stage's blocks and its de-duplication key read pp)."""
    rows = []
    # the first two differ in TP and PP only (DP 8, 2 writers each): TP 2 × PP 1 fetches (a 16-GPU
    # stage on 2 nodes), TP 1 × PP 2 does not (one stage per node); nothing else in the
    # de-duplication key tells them apart
    for zero, tp, pp, rep, n in ((0, 2, 1, 0, 16), (0, 1, 2, 0, 16), (0, 1, 1, 0, 16), (1, 1, 1, 0, 16),
                                 (0, 1, 1, 1, 16), (0, 1, 1, 0, 8)):
        d = _llama8b(n, zero, [{"tier": "host_memory", "replicas": rep}, {"tier": "pfs"}])
        d["parallelism"].update(tp=tp, pp=pp, dp=None)
        rows.append(validate_scenario(d))
    r0, c, _ = _tier_reload(rows[0].to_json_dict())
    r1, _, _ = _tier_reload(rows[1].to_json_dict())
    assert r0 == pytest.approx((c / 2) / 46e9, rel=1e-12)  # 8 GPUs × C/2 over 8 × 50e9 × 0.92
    assert r1 == pytest.approx((c / 2) / (HOST_EFF * PCIE5), rel=1e-12)
    both = engine.run_batch(B.from_scenarios(rows * 20))  # 100 rows: the de-duplicated path
    for i, s in enumerate(rows):
        alone = engine.run_batch(B.from_scenarios([s]))
        for col in ("restart_frac", "goodput"):
            assert both[col][i] == pytest.approx(float(alone[col][0]), rel=1e-12), (i, col)


# ------------------------------------------------------------------ fresh-user check of session 33

def test_first_order_lost_work_label_names_the_async_lag_it_counts():
    """GB200 Qwen3 preset (async saves): the first-order lost work is Σ λ·τ/2 plus Λ·L for the async
    PFS tier whose save outlasts its stall by L = save − stall, even where that lag is too small for
    the goodput explanation to list it. By hand from the row's own columns: λ = 7.335e-3 /h, τ the
    PFS interval, L = 2.057 − 0.1111 s: λτ/2 = 3.364e-4, ΛL = 3.97e-6, sum 3.404e-4 (the label read
    "Σ_c λ_c·τ_c/2" beside that sum)."""
    rep = planner.evaluate(planner.load_preset("qwen3-235b-gb200-256"))
    r = rep.results
    lam_s = r["failure_rate_per_h"] / 3600.0
    tau = r["ckpt_pfs_interval_opt_s"]
    assert r["ckpt_host_memory_interval_opt_s"] >= 1e8  # host memory not saved: the PFS recovers every class
    lag = r["ckpt_pfs_save_s"] - r["ckpt_pfs_stall_s"]
    want = lam_s * tau / 2.0 + lam_s * lag
    text = rep.explain["lost_work_frac"]
    m = re.search(r"first order \(Σ_c λ_c·τ_c/2 \+ Σ_k Λ_k·L_k\) = ([\d.e+-]+)\)", text)
    assert m, text
    assert float(m.group(1)) == pytest.approx(want, rel=2e-3)  # 4 significant digits printed
    assert "(Σ_c λ_c·τ_c/2 + Σ_k Λ_k·L_k)" in rep.explain["goodput_first_order"]
    sync = planner.load_preset("qwen3-235b-gb200-256").to_json_dict()
    sync["checkpoint"]["async"] = False  # no lag: the plain label
    assert "(first order Σ_c λ_c·τ_c/2 = " in planner.evaluate(validate_scenario(sync)).explain["lost_work_frac"]


def test_plan_pages_raw_result_table_shows_no_nan():
    """The Plan page's "All result columns" table printed str(NaN) = "nan" for the tiers not in use
    (their interval, and since session 33 their save and stall): now "— (does not apply)"."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    plan = str(Path(__file__).resolve().parents[1] / "app_pages" / "plan.py")
    at = AppTest.from_file(plan, default_timeout=120)
    at.query_params.update({"p": "qwen3-235b-gb200-256"})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    tables = [df.value for df in at.dataframe if list(df.value.columns) == ["column", "value"]]
    assert len(tables) == 1
    t = tables[0].set_index("column")["value"]
    assert "nan" not in set(t.astype(str).str.lower())
    assert t["ckpt_local_nvme_save_s"] == "— (does not apply)"
    assert t["ckpt_object_store_interval_opt_s"] == "— (does not apply)"


def test_restart_explanation_gives_each_class_its_reload_and_shows_the_zero0_fetch():
    """Fresh-user check: the reload was shown only inside Σ λ(R + reload). Llama 3 8B at ZeRO-0, DP
    16 on 2 DGX H100, host memory every 600 s and the PFS every 3,600 s: the software and network
    failures (those host memory survives, hardware/storage.json) reload from host memory over the
    network, C / (8 × 50e9 × 0.92) = C / 46e9 (the stage spans both nodes, one holds the copy); the
    others from the PFS."""
    d = _llama8b(16, 0, [{"tier": "host_memory", "interval_s": 600}, {"tier": "pfs", "interval_s": 3600}])
    rep = planner.evaluate(validate_scenario(d))
    c = 14.0 * rep.results["params_total"]
    text = rep.explain["restart_frac"]
    m = re.search(r"software, network from host_memory ([\d.e+-]+) s", text)
    assert m, text
    assert float(m.group(1)) == pytest.approx(c / 46e9, rel=1e-3)  # 4 significant digits printed
    assert "gpu, node, cluster from pfs" in text
    assert "from host_memory " + m.group(1) + " s (fetched over the network: ZeRO-0" in text
    # one node (8 GPUs): the copy is local, C / 50.4e9, and no fetch is named
    d1 = _llama8b(8, 0, [{"tier": "host_memory", "interval_s": 600}, {"tier": "pfs", "interval_s": 3600}])
    t1 = planner.evaluate(validate_scenario(d1)).explain["restart_frac"]
    m1 = re.search(r"software, network from host_memory ([\d.e+-]+) s", t1)
    assert m1 and float(m1.group(1)) == pytest.approx(c / 50.4e9, rel=1e-3) and "fetched" not in t1, t1
