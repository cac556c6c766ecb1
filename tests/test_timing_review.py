"""Step-time defects found by a property-test review (2026-11-30), each against its formula."""

from __future__ import annotations

import copy
import inspect
import re
import threading

import numpy as np
import pytest

import planner
from planner import catalog, timing


def _partial(L: int):
    """Llama 3 70B cut to L layers on 64 H100: TP 16 × PP 4, 1F1B, uneven split, full recompute of
    one layer per stage, 8 micro-batches of one sequence."""
    sc = planner.load_preset("llama3-70b-h100-1024").model_copy(deep=True)
    sc.model = catalog.resolve_model("llama3-70b").model_copy(
        update=dict(n_layers=L, published_params_total=None, published_params_active=None))
    p = sc.parallelism
    sc.cluster.n_gpus = 64
    p.tp, p.pp, p.dp, p.vpp, p.schedule, p.layer_split = 16, 4, 1, 1, "1f1b", "uneven"
    p.recompute, p.recompute_layers = "full", 1
    sc.training.global_batch_size, sc.training.micro_batch_size = 8, 1
    return planner.evaluate(sc)


def test_partial_recompute_tp_collectives_use_the_pacing_stages_share():
    # L = 5, 6, 7 over PP 4: the first stage (the pacing one) holds 2 layers each time and
    # recomputes 1 of them, so per layer it runs 4 + 2·(1/2) = 5 TP collectives whatever L is
    # (was the average share min(N·pp/L, 1) = 4/5, 4/6, 4/7: 5.6, 5.33, 5.14 collectives, and
    # the step got shorter as layers were added)
    steps, tps = [], []
    for L in (5, 6, 7):
        r = _partial(L)
        steps.append(r.results["step_time_s"])
        tps.append(r.results["t_tp_comm_s"])
        m = re.search(r"= ([\d.]+) × ([\d.]+) × ([\d.]+) × ([\d.]+) ms .* × ([\d.]+) = ([\d.e+-]+) s",
                      r.explain["t_tp_comm_s"])
        assert m, r.explain["t_tp_comm_s"]
        mb, layers, n_coll, t_ar_ms, exposed, total = (float(x) for x in m.groups())
        assert (mb, layers, n_coll) == (8, 2, 5)
        # the plugged-in numbers reproduce the stated result (to the 3-4 digits shown)
        assert mb * layers * n_coll * t_ar_ms * 1e-3 * exposed == pytest.approx(total, rel=2e-3)
    assert tps[0] == pytest.approx(tps[1], rel=1e-12) and tps[1] == pytest.approx(tps[2], rel=1e-12)
    assert steps[0] <= steps[1] <= steps[2]  # more layers (on the other stages) never shorten the step


def test_explain_after_a_cache_miss_and_across_threads():
    # the one-row terms cache is per thread, and a row rebuilt after a miss carries every column
    # _terms reads (recompute_layers and dp_shard were missing)
    src = inspect.getsource(timing._terms)
    read = set(re.findall(r'\b(?:f|g|fl)\("([a-z_0-9]+)"\)', src)) | set(re.findall(r'"([a-z_0-9]+)" in b', src))
    assert read <= set(timing._TERM_INPUTS), sorted(read - set(timing._TERM_INPUTS))

    part = planner.schema.validate_scenario(_partial(6).scenario)
    other = planner.load_preset("mixtral-8x7b-h100-64")
    ref = planner.evaluate(part)
    row = _row_of(part)
    timing._LAST.one_row = None  # a miss: explain rebuilds the row from _TERM_INPUTS
    assert timing.explain(row)["t_compute_s"] == ref.explain["t_compute_s"]
    bad = []

    def worker(sc, n):
        for _ in range(n):
            r = planner.evaluate(sc)
            if sc is part and r.explain != ref.explain:
                bad.append(r.explain["t_compute_s"][:80])
    ts = [threading.Thread(target=worker, args=(part, 40)), threading.Thread(target=worker, args=(other, 40))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad, bad[:3]


def _row_of(sc):
    """The evaluated one-row batch of ``sc`` as a dict (inputs and every stage's columns)."""
    from planner import batch, engine
    out = engine.run_batch(batch.from_scenarios([sc]))
    return batch.row(out, 0)


def _serial_offload(frac: float) -> float:
    """Llama 3 70B on 16 H100 (TP 8 × DP 2, ZeRO-0, CPU optimizer offload, DP collectives in series
    with compute) with dp_overlap_frac set to ``frac``: its step time."""
    sc = planner.load_preset("llama3-70b-h100-1024").model_copy(deep=True)
    p = sc.parallelism
    sc.cluster.n_gpus = 16
    p.tp, p.pp, p.dp, p.vpp, p.schedule = 8, 1, 2, 1, "1f1b"
    p.zero_stage, p.offload_optimizer, p.dp_comm_overlap = 0, "cpu", False
    sc.training.global_batch_size, sc.training.micro_batch_size = 2, 1
    C = copy.deepcopy(timing.load_calibration())
    C["dp_overlap_frac"] = frac
    b = planner.batch.from_scenarios([sc])
    from planner import memory, model_stats
    b.update(model_stats.stats(b))
    b.update(memory.stage(b))
    return float(timing.stage(b, C)["step_time_s"][0])


def test_serial_dp_rows_do_not_depend_on_the_overlap_constant():
    # with dp_comm_overlap off nothing is hidden, so the fitted dp_overlap_frac must not move the
    # step through the offload window either (was 5.2537 / 5.3018 / 5.3436 s at 0 / 0.9 / 1)
    s0, s9, s1 = (_serial_offload(f) for f in (0.0, 0.9, 1.0))
    assert s0 == s9 == s1


def test_dense_model_ep_explain_says_no_moe():
    r = planner.evaluate(planner.load_preset("default"))
    assert r.results["t_ep_comm_s"] == 0.0
    assert r.explain["t_ep_comm_s"].startswith("no MoE layers (a dense model)")


def test_a_larger_nvlink_domain_never_slows_a_ring():
    # TP 16 over two 8-GPU domains: hierarchical latency (8−1)·2 µs + (2−1)·5 µs = 19 µs per pass;
    # inside one 16-GPU domain (16−1)·2 µs = 30 µs. The floor (n−1)·α_nvl makes both 30 µs
    # (alpha_s in hardware/calibration.json: 2 µs NVLink, 5 µs network per step)
    from planner import comm
    a_s, a_n = 2e-6, 5e-6
    n = np.array([16.0])
    _, split, _ = comm.ring_link(n, None, np.array([8.0]), np.array([1e11]), np.array([1e11]), a_s, a_n)
    _, one, _ = comm.ring_link(n, None, np.array([16.0]), np.array([1e11]), np.array([1e11]), a_s, a_n)
    assert one[0] == pytest.approx(15 * a_s)
    assert split[0] == pytest.approx(15 * a_s)  # was 7·a_s + 1·a_n = 19 µs
    # the general function agrees
    _, alpha, _, _ = comm.group_link(n, 1.0, np.array([8.0]), 1e11, 1e11, eff_scaleup=1.0, eff_network=1.0,
                                     alpha_scaleup_s=a_s, alpha_network_s=a_n)
    assert alpha[0] == pytest.approx(15 * a_s)
    # a DP ring of one GPU per domain keeps its network steps: 127·5 µs > 127·2 µs
    _, dp, _ = comm.ring_link(np.array([128.0]), np.array([8.0]), np.array([8.0]), np.array([1e11]),
                              np.array([1e11]), a_s, a_n)
    assert dp[0] == pytest.approx(127 * a_n)


def test_step_with_a_16_gpu_domain_is_not_slower_than_with_8():
    sc = planner.load_preset("llama3-70b-h100-1024").model_copy(deep=True)
    p = sc.parallelism
    p.tp, p.pp, p.vpp, p.schedule, p.dp = 16, 4, 1, "1f1b", None
    steps = []
    for dom in (8, 16):
        s = sc.model_copy(deep=True)
        sysd = catalog.systems()["dgx-h100"].model_dump(mode="json")
        sysd.update(nvlink_domain_size=dom, gpus_per_node=8 if dom == 8 else 16)
        s.cluster.system = planner.schema.System.model_validate(sysd)
        steps.append(planner.evaluate(s).results["step_time_s"])
    assert steps[1] <= steps[0] * (1 + 1e-12)


def test_in_network_reduction_speeds_up_only_a_ring_inside_one_nvlink_domain():
    """NVLink SHARP reduces inside the NVSwitch (hardware/systems.json: IB SHARP is not modelled).
    Found by review: the default preset's DGX H100 ZeRO-0 gradient all-reduce over its 32 DP
    ranks (stride tp·pp... one GPU per node in each ring) got the speed-up and ran above the
    50 GB/s NIC. Hand calculation: Llama 3 70B's 70.55e9 parameters over tp·pp = 32 are 2.205e9
    per GPU, fp32 gradients 8.82e9 B; ring 2·31/32 · 8.82e9 B / (50e9 B/s × 0.92) + 2·31 · 5 µs."""
    import planner
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"].update(zero_stage=0, dp_comm_overlap=False)
    r = planner.evaluate(d)
    import json
    from pathlib import Path
    cal = json.loads((Path(__file__).resolve().parents[1] / "hardware" / "calibration.json").read_text())
    eff, alpha = cal["link_eff"]["value"]["network"], cal["alpha_s"]["value"]["network"]  # 0.92, 5 µs
    p_local = r.results["params_total"] / 32
    hand = 2 * 31 / 32 * 4 * p_local / (50e9 * eff) + 2 * 31 * alpha
    assert r.results["t_dp_comm_exposed_s"] == pytest.approx(hand, rel=2e-3)


def test_leading_dense_layers_sit_on_the_first_stage_for_the_step_time():
    """Found by review: the step time spread an MoE model's leading dense layers over every stage
    (the average MoE share), while memory and the layout put them on the first ranks. Mixtral
    8x7B with 16 of its 32 layers dense at PP 2 (1F1B): stage 1 holds layers 16–31, all MoE, and
    carries the head, so it runs exactly what the last stage of the all-MoE model runs — the same
    compute and the same all-to-all time (16 MoE layers × 4 all-to-alls × 8 micro-batches); the
    average share gave 20 % less."""
    import json
    from pathlib import Path
    from planner import model_stats
    assert float(model_stats.dense_layers_on_rank(32, 16, 2, 1, 0)) == 16.0
    assert float(model_stats.dense_layers_on_rank(32, 16, 2, 1, 1)) == 0.0
    # interleaved: 32 layers, pp 2, vpp 4 → virtual stages of 4; rank 0 holds stages 0, 2, 4, 6
    # (layers 0–3, 8–11, 16–19, 24–27): 8 of the first 16 are dense there, 8 on rank 1
    assert float(model_stats.dense_layers_on_rank(32, 16, 2, 4, 0)) == 8.0
    assert float(model_stats.dense_layers_on_rank(32, 16, 2, 4, 1)) == 8.0
    models = json.loads((Path(__file__).resolve().parents[1] / "presets" / "models.json").read_text())
    m = dict(models["mixtral-8x7b"])
    m.pop("published_params_total", None)
    m.pop("published_params_active", None)
    out = {}
    for fd in (0, 16):
        m["moe"] = dict(m["moe"], first_dense_layers=fd)
        d = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
        d["model"] = m
        d["parallelism"].update(pp=2, vpp=1, schedule="1f1b", dp=None)
        out[fd] = planner.evaluate(d).results
    assert out[16]["t_compute_s"] == pytest.approx(out[0]["t_compute_s"], rel=1e-12)
    assert out[16]["t_ep_comm_s"] == pytest.approx(out[0]["t_ep_comm_s"], rel=1e-12)


def test_moe_layers_with_tp_move_the_routed_tokens_in_their_mlp_collectives():
    """Megatron-Core's alltoall dispatcher with expert TP = TP all-gathers the dispatched tokens over
    the TP group and reduce-scatters them in the combine (MoEAlltoAllTokenDispatcher): the MLP
    half's two collectives carry top_k·cf tokens per token (found by review: charged as a dense
    layer's b·s·h). Mixtral 8x7B (top-2, capacity factor 1) at TP 2, EP 4, every layer MoE:
    4 × (½ + ½·2) = 6 collectives' worth per layer against a dense layer's 4."""
    from planner import batch, model_stats
    d = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
    d["parallelism"].update(tp=2, ep=4, dp=None)
    b = batch.from_scenarios([planner.Scenario.model_validate(d)])
    b.update(model_stats.stats(b))
    T = {k: float(np.asarray(v).reshape(-1)[0]) for k, v in timing._terms(b).items()}
    assert T["_n_tp_coll"] == pytest.approx(6.0)
    assert T["t_tp_comm_s"] == pytest.approx(T["_m"] * T["_layers_stage"] * 6.0 * T["_tp_ar"] * T["_tp_exposed_frac"],
                                             rel=1e-12)


def test_fp32_training_moves_4_byte_activations_and_weights():
    """Without mixed precision (fp32 / tf32) activations and weights are 4 B: the TP all-reduce of
    b·s·h, the pipeline p2p of b·s·h/t and the ZeRO parameter all-gather carry twice the bytes of
    bf16 (found by review: charged at 2 B). Default preset: b·s·h = 1 × 8,192 × 8,192, so
    134.2 MB in bf16 and 268.4 MB in tf32; the same for the p2p message over t = 8."""
    from planner import batch, model_stats
    T = {}
    for p in ("bf16", "tf32"):
        d = planner.load_preset("default").to_json_dict()
        d["training"]["precision"] = p
        b = batch.from_scenarios([planner.Scenario.model_validate(d)])
        b.update(model_stats.stats(b))
        T[p] = {k: float(np.asarray(v).reshape(-1)[0]) for k, v in timing._terms(b).items()}
    assert T["bf16"]["_tp_msg"] == pytest.approx(2 * 8192 * 8192) and T["tf32"]["_tp_msg"] == pytest.approx(4 * 8192 * 8192)
    assert T["tf32"]["_p2p_msg"] == pytest.approx(2 * T["bf16"]["_p2p_msg"])
    assert T["tf32"]["t_tp_comm_s"] > 1.9 * T["bf16"]["t_tp_comm_s"]
