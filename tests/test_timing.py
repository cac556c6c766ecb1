"""Step-time model: hand-computed pieces and structural properties."""

import re

import numpy as np
import pytest

import planner
from planner import timing
from planner.batch import SCHEDULES


def test_bubble_1f1b_and_interleaved():
    # Narayanan et al. 2021 §2.2: (p−1)/m and (p−1)/(v·m).
    one = SCHEDULES.index("1f1b")
    inter = SCHEDULES.index("interleaved")
    assert timing.bubble_fraction(8, 64, 1, one) == pytest.approx(7 / 64)
    assert timing.bubble_fraction(8, 64, 3, inter) == pytest.approx(7 / (3 * 64))
    assert timing.bubble_fraction(4, 16, 1, SCHEDULES.index("gpipe")) == pytest.approx(3 / 16)
    zb = timing.bubble_fraction(4, 16, 1, SCHEDULES.index("zero_bubble"))
    # ZB-H1 (Qi et al. 2024 §3.1): (p−1)(T_F+T_B−T_W) / ((p−1)(T_F+T_B+T_W)) = 1/3 at equal
    # parts, of the 1F1B bubble (p−1)/m = 3/16 -> 1/16
    assert zb == pytest.approx(1 / 16)


def test_tp_bytes_per_layer():
    # b·s·h 16-bit values: 1 · 2048 · 12288 · 2 B = 50,331,648 B (GPT-3 175B, Shoeybi 2019 §3).
    assert timing.tp_bytes_per_layer(1, 2048, 12288) == pytest.approx(50_331_648)
    # CP halves the sequence each rank holds.
    assert timing.tp_bytes_per_layer(1, 8192, 8192, cp=2) == pytest.approx(4096 * 8192 * 2)


def test_gemm_efficiency_limits():
    big = timing.gemm_efficiency(1e6, 1e6, 1e6, 0.8, 989e12, 3.35e12, 2.0, 1.0)
    assert big == pytest.approx(0.8, rel=1e-3)
    # At the ridge point (I = R) with k = 1 the efficiency is half of eff_max.
    R = 989e12 / 3.35e12
    x = 3 * R  # M = K = N = 3R gives I = x/3·... : I = 2MKN/(2·3M²) = M/3 = R
    assert timing.gemm_efficiency(x, x, x, 0.8, 989e12, 3.35e12, 2.0, 1.0) == pytest.approx(0.4)


def _eval(**par):
    base = planner.load_preset("default").to_json_dict()
    base["parallelism"].update(par)
    return planner.evaluate(base).results


def test_default_preset_outputs():
    r = _eval()
    parts = sum(r[k] for k in ("t_compute_s", "t_tp_comm_s", "t_cp_comm_s", "t_ep_comm_s", "t_pp_bubble_s",
                                "t_pp_p2p_s", "t_dp_comm_exposed_s", "t_offload_s", "t_optimizer_s"))
    assert r["step_time_s"] == pytest.approx(parts)
    assert 0 < r["mfu"] <= r["hfu"] <= 1
    assert 0.2 < r["mfu"] < 0.7  # published Llama-3-class H100 runs: 38-43% (hardware.md §6a)
    s = planner.load_preset("default")
    assert r["tokens_per_s"] == pytest.approx(s.training.global_batch_size * s.training.seq_len / r["step_time_s"])


def test_tp_overlap_hides_tp_comm():
    a = _eval(tp_comm_overlap=False)["t_tp_comm_s"]
    b = _eval(tp_comm_overlap=True)["t_tp_comm_s"]
    assert b < a


def test_full_recompute_is_slower_than_selective():
    assert _eval(recompute="full")["step_time_s"] > _eval(recompute="selective")["step_time_s"]


def test_explain_has_every_time_column():
    r = planner.evaluate(planner.load_preset("default"))
    for k in ("step_time_s", "t_compute_s", "t_tp_comm_s", "t_pp_bubble_s", "t_dp_comm_exposed_s", "mfu", "hfu"):
        assert k in r.explain and any(ch.isdigit() for ch in r.explain[k])


def test_batch_equals_single_rows():
    from planner import batch, engine
    base = planner.load_preset("default")
    d = base.to_json_dict()
    d2 = base.to_json_dict()
    d2["parallelism"]["tp_comm_overlap"] = True
    scen = [planner.Scenario.model_validate(x) for x in (d, d2)]
    both = engine.run_batch(batch.from_scenarios(scen))
    for i, s in enumerate(scen):
        one = engine.run_batch(batch.from_scenarios([s]))
        assert both["step_time_s"][i] == pytest.approx(one["step_time_s"][0])


def test_fp8_mfu_uses_16bit_peak():
    d = planner.load_preset("default").to_json_dict()
    d["training"]["precision"] = "fp8"
    r = planner.evaluate(d).results
    assert r["mfu_precision_peak"] == pytest.approx(r["mfu"] / 2, rel=0.01)  # H100 fp8 peak = 2 × bf16


def _moe(**par):
    base = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
    base["parallelism"].update(par)
    return planner.evaluate(base).results


def test_ep_overlap_hides_expert_all_to_all_by_its_formula():
    """With ep_comm_overlap the exposed EP time per MoE layer and micro-batch is
    max(0, n_a2a·t_a2a − f·t_layer) (DualPipe, DeepSeek-V3 §3.2.1), f = the fitted TP overlap
    fraction: it never exceeds the un-overlapped time, never goes below zero, and is
    reduced by at most f × the step's compute (the compute the all-to-all can hide behind)."""
    from planner import timing

    off, on = _moe(ep_comm_overlap=False), _moe(ep_comm_overlap=True)
    assert off["t_ep_comm_s"] > 0
    assert 0 <= on["t_ep_comm_s"] < off["t_ep_comm_s"]
    f = timing._default_consts().tp_overlap_frac
    assert off["t_ep_comm_s"] - on["t_ep_comm_s"] <= f * on["t_compute_s"] + 1e-12
    # Nothing else in the step changes except the bubble, which scales the exposed comm.
    assert on["t_compute_s"] == off["t_compute_s"] and on["t_dp_comm_exposed_s"] == off["t_dp_comm_exposed_s"]


def test_moe_host_time_per_local_expert_by_hand(monkeypatch):
    """The routed experts' host time adds E/ep × 0.18 ms per MoE layer and micro-batch to the
    stage time (the GB200 guide's lower bound: a 10 % throughput gain saves 8.44 s × (1 − 1/1.1)
    = 0.77 s per step, over 65.75 micro-batch slots × 8 layers × 8 local experts). Mixtral 8x7B (every layer MoE, 8 experts) on the preset's split:
    t_compute grows by m · layers_per_stage · (8 / ep) · 0.18 ms exactly; a dense model is
    unchanged."""
    # the anchor: 8.44 s × (1 − 1/1.1) / ((2048 / 32 + 7 / 4) × 8 × 8) = 0.182 ms
    assert timing.MOE_HOST_S_PER_LOCAL_EXPERT == pytest.approx(8.44 * (1 - 1 / 1.1) / ((64 + 7 / 4) * 8 * 8), rel=0.02)
    with_host = _moe()
    monkeypatch.setattr(timing, "MOE_HOST_S_PER_LOCAL_EXPERT", 0.0)
    without = _moe()
    d = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
    par, tr = d["parallelism"], d["training"]
    dp = d["cluster"]["n_gpus"] // (par.get("tp", 1) * par.get("pp", 1) * par.get("cp", 1))
    m = tr["global_batch_size"] / (tr.get("micro_batch_size", 1) * dp)
    layers_stage = 32 / par.get("pp", 1)
    assert 32 % (par.get("pp", 1) * par.get("vpp", 1)) == 0  # even split: L/pp layers on every rank
    expected = m * layers_stage * (8 / par["ep"]) * 0.18e-3
    assert with_host["t_compute_s"] - without["t_compute_s"] == pytest.approx(expected, rel=1e-9)
    dense = planner.load_preset("default").to_json_dict()
    monkeypatch.setattr(timing, "MOE_HOST_S_PER_LOCAL_EXPERT", 1.0)
    assert planner.evaluate(dense).results["step_time_s"] == pytest.approx(
        planner.evaluate(planner.load_preset("default").to_json_dict()).results["step_time_s"])


def test_ep_overlap_does_nothing_for_dense_models():
    a = planner.load_preset("default").to_json_dict()
    b = planner.load_preset("default").to_json_dict()
    b["parallelism"]["ep_comm_overlap"] = True
    ra, rb = planner.evaluate(a).results, planner.evaluate(b).results
    assert ra["step_time_s"] == rb["step_time_s"]


def _core_scenario(system, kernel, flash=True, model=None, power_limit_w=None):
    d = planner.load_preset("default").to_json_dict()
    d["cluster"]["system"] = system
    if model is not None:  # other layer counts than the default's 80 over pp·vpp = 20
        d["model"] = model
        d["parallelism"]["layer_split"] = "uneven"
    if power_limit_w is not None:
        d["cluster"].setdefault("overrides", {})["power_limit_w"] = power_limit_w
    d["parallelism"].update(attention_kernel=kernel, flash_attention=flash)
    return planner.Scenario.model_validate(d)


def _core_terms(scenarios):
    """Attention-core times (s) of one forward, one micro-batch, one layer, per scenario (timing._terms)."""
    from planner import batch, model_stats
    b = batch.from_scenarios(scenarios)
    b.update(model_stats.stats(b))
    return np.asarray(timing._terms(b)["_t_core"], dtype=float).reshape(-1)


def _core_s(system, kernel, flash=True, model=None, power_limit_w=None):
    return float(_core_terms([_core_scenario(system, kernel, flash, model, power_limit_w)])[0])


def _calibration_file():
    """The data file the fitted and sourced constants come from (hardware/calibration.json)."""
    import json
    import pathlib
    return json.loads((pathlib.Path(timing.__file__).parents[1] / "hardware" / "calibration.json").read_text())


def _eff_max_from_calibration_file(family):
    """eff_max = mamf_frac x gemm_eff_scale, read from the data file (hardware/calibration.json)."""
    c = _calibration_file()
    return c["mamf_frac"]["value"][family]["16bit"] * c["gemm_eff_scale"]["value"][f"{family}_16bit"]


def test_flash2_kernels_on_hopper_reach_the_papers_share_of_the_a100_utilisation():
    # FlashAttention-2 reaches up to 73 % of the A100 peak (Dao 2023, arXiv:2307.08691, abstract)
    # and 35 % of the H100 peak (Shah et al. 2024, arXiv:2407.08608, abstract). The same kernel,
    # the same layer and micro-batch: its fraction of peak on H100 / on A100 must be 35/73.
    # Peaks (hardware/accelerators.json, NVIDIA datasheets): A100 312, H100 989.4 dense BF16 TFLOP/s.
    # Since review 20 the Hopper core also pays the per-query overhead of 240 keys (pytorch/benchmark
    # PR #2391's H100 tables, timing.ATTN_QUERY_OVERHEAD_KEYS) that the papers' peak figures leave
    # out: the default preset's 8,192 tokens, causal, k = 4,096 keys per query → × 4,096/4,336.
    t_a100 = _core_s("dgx-a100-80gb", "flash2")
    t_h100 = _core_s("dgx-h100", "flash2")
    assert (t_a100 * 312e12) / (t_h100 * 989.4e12) == pytest.approx(0.35 / 0.73 * 4096 / 4336, rel=1e-9)
    # On A100 FlashAttention-2 *is* the native kernel: no change.
    assert t_a100 == pytest.approx(_core_s("dgx-a100-80gb", "native"), rel=1e-15)
    # Against the native Hopper kernels, by hand: eff_max(ampere) / eff_max(hopper) from the
    # data file, head-dim knees 32 (FA2) and 64 (Hopper native); Llama 3 70B d_h = 8192/64 = 128.
    base = _eff_max_from_calibration_file("ampere") / _eff_max_from_calibration_file("hopper") * 0.35 / 0.73
    factor = base * (128 / (128 + 32)) / (128 / (128 + 64))
    native = _core_s("dgx-h100", "native")
    assert t_h100 == pytest.approx(native / factor, rel=1e-9)
    # inside the FA3 paper's "1.5-2.0x faster than FlashAttention-2" at d_h 128
    assert 0.5 < timing.flash2_speed_ratio("hopper", 128.0) < 2 / 3
    # Blackwell takes the Hopper factor on its own native kernels (assumed: no published FA2 figure).
    assert _core_s("dgx-b200", "flash2") == pytest.approx(_core_s("dgx-b200", "native") / factor, rel=1e-9)
    # Without flash attention the kernel setting does not act.
    assert _core_s("dgx-h100", "flash2", flash=False) == pytest.approx(_core_s("dgx-h100", "native", flash=False))


@pytest.mark.parametrize(("system", "model", "d_head"), [
    ("dgx-h100", "llama3-70b", 128.0),   # 8192 / 64
    ("dgx-h100", "gpt-oss-120b", 64.0),  # head_dim 64
    ("dgx-h100", "deepseek-v3", 192.0),  # MLA: nope 128 + rope 64
    ("dgx-b200", "llama3-70b", 128.0),   # own knee 128
    ("gb300-nvl72", "llama3-70b", 128.0),  # own knee 64
    ("hgx-h100-96gb-hbm2e", "llama3-8b", 128.0),  # own MAMF (500 W part)
])
def test_flash2_factor_by_hand_at_several_head_dims(system, model, d_head):
    # FA2's curve d'/(d' + 32), d' = min(d_h, 128) (FA2 on H100: 324 / 370 / 326 TFLOP/s at d_h
    # 64 / 128 / 256, FA3 paper Fig. 5: flat above 128), over Hopper's native d_h/(d_h + 64).
    base = _eff_max_from_calibration_file("ampere") / _eff_max_from_calibration_file("hopper") * 0.35 / 0.73
    dc = min(d_head, 128.0)
    factor = base * (dc / (dc + 32)) / (d_head / (d_head + 64))
    got = _core_s(system, "native", model=model) / _core_s(system, "flash2", model=model)
    assert got == pytest.approx(factor, rel=1e-9)
    family = "blackwell" if system.startswith(("dgx-b", "gb")) else "hopper"
    assert timing.flash2_speed_ratio(family, d_head) == pytest.approx(factor, rel=1e-12)


@pytest.mark.parametrize("system", ["mi300x-8", "gaudi3-8", "dgx-a100-40gb"])
def test_flash2_changes_nothing_where_fa2_is_native_or_has_no_figure(system):
    assert _core_s(system, "flash2") == _core_s(system, "native")


def test_flash2_in_a_mixed_batch_matches_single_rows():
    # one array element per configuration: mixing kernels, families, head dims and a power limit
    # in one batch gives each row what it gets alone
    cases = [("dgx-h100", "flash2", True, None, None), ("dgx-h100", "native", True, None, None),
             ("dgx-a100-80gb", "flash2", True, None, None), ("dgx-b200", "flash2", True, None, None),
             ("mi300x-8", "flash2", True, None, None), ("dgx-h100", "flash2", False, None, None),
             ("dgx-h100", "flash2", True, "deepseek-v3", None), ("dgx-h100", "flash2", True, None, 500.0)]
    together = _core_terms([_core_scenario(*c) for c in cases])
    alone = np.array([_core_s(*c) for c in cases])
    np.testing.assert_allclose(together, alone, rtol=1e-12)
    # the power limit slows FA2 by the same power rule as the native kernels
    ratio_pl = _core_s("dgx-h100", "flash2", power_limit_w=500.0) / _core_s("dgx-h100", "flash2")
    assert ratio_pl == pytest.approx(
        _core_s("dgx-h100", "native", power_limit_w=500.0) / _core_s("dgx-h100", "native"), rel=1e-12)
    assert ratio_pl > 1.0


def test_flash2_note_and_label_state_the_factor():
    r = planner.evaluate(_core_scenario("dgx-h100", "flash2"))
    note = next(n for n in r.notes if "Attention kernel 'flash2'" in n)
    assert f"{timing.flash2_speed_ratio('hopper', 128.0):.2f}×" in note and "35% / 73%" in note
    assert (f"FlashAttention-2-class kernels at {timing.flash2_speed_ratio('hopper', 128.0):.2f} × the native ones"
            in r.explain["t_compute_s"])
    assert "Hopper's factor assumed" in " ".join(planner.evaluate(_core_scenario("dgx-b200", "flash2")).notes)
    assert "no change on ampere" in " ".join(planner.evaluate(_core_scenario("dgx-a100-80gb", "flash2")).notes)


def _ep_terms(**par):
    from planner import batch, model_stats
    d = planner.load_preset("deepseek-v3-h800-2048").to_json_dict()
    d["parallelism"].update(par)
    b = batch.from_scenarios([planner.Scenario.model_validate(d)])
    b.update(model_stats.stats(b))
    T = timing._terms(b)
    return {k: float(np.asarray(T[k]).reshape(-1)[0]) for k in ("_ep_bytes", "_ep_net_frac")}


def test_fp8_dispatch_and_node_limited_routing_terms():
    # DeepSeek-V3 (arXiv:2412.19437): top-8 routing limited to 4 nodes (§2.1.2) -> a token
    # crosses the network 4 times, not 8: network share x 4/8; FP8 dispatch (§3.3.2): the two
    # dispatch all-to-alls carry 1 B per element, the two combines 2 B -> 1.5 B on average.
    bf16 = _ep_terms(ep_dispatch_fp8=False)
    fp8 = _ep_terms(ep_dispatch_fp8=True)
    assert fp8["_ep_bytes"] == pytest.approx(0.75 * bf16["_ep_bytes"], rel=1e-12)
    assert fp8["_ep_net_frac"] == bf16["_ep_net_frac"] == pytest.approx(4 / 8)
    # b·s·h·top_k·cf·2 B for one micro-batch of 4,096 tokens, h = 7,168, top-8, cf 1: 469.8 MB
    assert bf16["_ep_bytes"] == pytest.approx(4096 * 7168 * 8 * 1.0 * 2, rel=1e-12)


def test_sliding_window_attention_core_time():
    """Flash attention core time is proportional to the causal keys per query plus, on Hopper, the
    per-query overhead C = 240 keys (review 20, timing.ATTN_QUERY_OVERHEAD_KEYS): a window of s/4
    in every layer visits w − w²/(2s) = 7s/32 keys per query against s/2, and each of the preset's
    CP 2 ring hops pays C once: at s = 8,192 it leaves (1,792 + 2·240)/(4,096 + 2·240) = 0.49650 of
    the full-attention core time (7/16 without the overhead), and a window as long as the
    sequence changes nothing."""
    from planner import batch, model_stats

    def core(window, frac):
        d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
        d["model"] = planner.catalog.models()["llama3-8b"].model_dump(mode="json")
        if window:
            d["model"].update(sliding_window=window, sliding_window_layer_frac=frac)
        b = batch.from_scenarios([planner.Scenario.model_validate(d)])
        b.update(model_stats.stats(b))
        return float(np.asarray(timing._terms(b)["_t_core"]).reshape(-1)[0]), d["training"]["seq_len"]

    full, s = core(None, 0.0)
    assert s == 8192  # the preset's sequence, over cp = 2
    quarter, _ = core(s // 4, 1.0)
    assert quarter / full == pytest.approx((7 * s / 32 + 2 * 240) / (s / 2 + 2 * 240), rel=1e-12)
    assert quarter / full == pytest.approx(0.49650, abs=5e-6)
    assert core(s, 1.0)[0] == pytest.approx(full, rel=1e-15)


def test_sliding_window_without_flash_saves_nothing_and_batches_match():
    """Without flash attention the s × s scores are computed and masked: a window changes
    neither the attention core time nor the stored scores. A batch mixing windowed and full
    rows gives each row what it gets alone."""
    from planner import batch, model_stats

    def scen(window, flash):
        d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
        d["model"] = planner.catalog.models()["llama3-8b"].model_dump(mode="json")
        d["parallelism"]["flash_attention"] = flash
        if window:
            d["model"].update(sliding_window=window, sliding_window_layer_frac=0.5)
        return d

    def core(d):
        b = batch.from_scenarios([planner.Scenario.model_validate(d)])
        b.update(model_stats.stats(b))
        return float(np.asarray(timing._terms(b)["_t_core"]).reshape(-1)[0])

    assert core(scen(512, False)) == core(scen(None, False))
    r_full, r_win = planner.evaluate(scen(None, False)).results, planner.evaluate(scen(512, False)).results
    assert r_win["mem_total_bytes"] == r_full["mem_total_bytes"]
    rows = [scen(None, True), scen(512, True), scen(None, False), scen(512, False)]
    many = planner.evaluate_many(rows)
    for i, d in enumerate(rows):
        alone = planner.evaluate(d).results
        assert many["step_time_s"].iloc[i] == pytest.approx(alone["step_time_s"], rel=1e-12)
        assert many["mem_total_bytes"].iloc[i] == pytest.approx(alone["mem_total_bytes"], rel=1e-12)


def _terms_for(**par):
    from planner import batch, model_stats
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"].update(par)
    b = batch.from_scenarios([planner.Scenario.model_validate(d)])
    b.update(model_stats.stats(b))
    return {k: float(np.asarray(v).reshape(-1)[0]) for k, v in timing._terms(b).items()}


def test_op_sac_recomputes_k_w3_and_elementwise_by_its_formula():
    """op_sac (TorchTitan per-op SAC: every second matmul of a block recomputed, of which the
    backward needs K, W3 and, without TP, O; norms and activations recomputed; the
    flash-attention output saved) adds per layer and micro-batch one forward of those and of the
    elementwise ops. Llama 3 70B
    (default preset: h 8192, 64 heads, 8 KV heads, d 128): K is 8192·1024 of the attention
    projections' 2·8192·8192 + 2·8192·1024 parameters = 1/18 of their time; W3 is 1/3 of the
    gated MLP's. m = 512 / 32 = 16 micro-batches × 80/4 = 20 layers on a stage. TP: the two
    all-gathers feeding K and W3 run again (SP); a ring all-gather is half an all-reduce's time,
    so 5 all-reduce equivalents per layer (session 25: 6 before, the two counted as two)."""
    none, op = _terms_for(recompute="none"), _terms_for(recompute="op_sac")
    assert none["_m"] == 16 and none["_layers_stage"] == 20
    per_layer = none["_t_attn_proj"] / 18 + none["_t_mlp_dense"] / 3 + none["_t_elem_dense"]
    assert op["t_compute_s"] - none["t_compute_s"] == pytest.approx(16 * 20 * per_layer, rel=1e-9)
    # without TP, O (8192·8192: 8/18 of the projections) runs again too: 9/18 = 1/2 (m = 512/256 = 2)
    one = dict(tp=1, dp=256, schedule="1f1b", vpp=1)
    none1, op1 = _terms_for(recompute="none", **one), _terms_for(recompute="op_sac", **one)
    assert none1["_m"] == 2
    per_layer1 = none1["_t_attn_proj"] / 2 + none1["_t_mlp_dense"] / 3 + none1["_t_elem_dense"]
    assert op1["t_compute_s"] - none1["t_compute_s"] == pytest.approx(2 * 20 * per_layer1, rel=1e-9)
    assert none["_n_tp_coll"] == 4 and op["_n_tp_coll"] == 5
    assert op["t_tp_comm_s"] == pytest.approx(1.25 * none["t_tp_comm_s"], rel=1e-12)
    # between no recompute and full recompute
    full = _terms_for(recompute="full")
    assert none["step_time_s"] < op["step_time_s"] < full["step_time_s"]


def test_op_sac_tp_without_sp_reruns_o_and_its_all_reduce():
    """TP without SP: op_sac runs O again with its all-reduce (+1 collective, not the two
    all-gathers of the SP case), and O's share of the projections (8/18) joins K's (1/18)."""
    none = _terms_for(recompute="none", sequence_parallel=False)
    op = _terms_for(recompute="op_sac", sequence_parallel=False)
    assert op["_n_tp_coll"] == 5
    per_layer = none["_t_attn_proj"] / 2 + none["_t_mlp_dense"] / 3 + none["_t_elem_dense"]
    assert op["t_compute_s"] - none["t_compute_s"] == pytest.approx(16 * 20 * per_layer, rel=1e-9)


def test_blackwell_attention_knee_per_accelerator():
    """Standard Blackwell (B200 / GB200) does twice Hopper's tensor FLOP per clock per SM
    (2.25 PF / (148 SMs × ~1.86 GHz) ≈ 8,192) with the same 16 exp per clock per SM: knee
    8,192 / 16 / 4 = 128. Blackwell Ultra (B300 / GB300) doubles the exp throughput (NVIDIA,
    'Making Softmax More Efficient with NVIDIA Blackwell Ultra'): knee 64. With d_h = 128 and
    the same BF16 peak (2.25 PF on B200 and B300, 2.5 PF on GB200 and GB300) the flash core
    takes (128 + 128)/(128 + 64) = 4/3 as long on the standard part, times the ratio of the two
    parts' MAMF fractions (attention efficiency follows the part's GEMM eff_max: B200 the
    Blackwell family's 0.776, B300 its measured 1,769 / 2,250; GB200 its measured 1,822 / 2,500,
    GB300 its power-rule MAMF / 2,500: tests/test_mamf.py)."""
    acc = planner.catalog.accelerators()
    fam = 0.776  # hardware/calibration.json mamf_frac blackwell 16bit (the B200's MAMF fraction)
    b300 = acc["b300"].mamf_flop_per_s["bf16"] / 2.25e15
    gb200 = acc["gb200"].mamf_flop_per_s["bf16"] / 2.5e15
    gb300 = acc["gb300"].mamf_flop_per_s["bf16"] / 2.5e15
    assert _core_s("dgx-b200", "native") / _core_s("dgx-b300", "native") == pytest.approx(4 / 3 * b300 / fam, rel=1e-12)
    assert _core_s("gb200-nvl72", "native") / _core_s("gb300-nvl72", "native") == pytest.approx(
        4 / 3 * gb300 / gb200, rel=1e-12)
    assert round(2.25e15 / (148 * 1.86e9) / 16 / 4) == 128  # the derivation, to the nearest integer
    assert acc["b200"].attention_dhead_knee == acc["gb200"].attention_dhead_knee == 128
    assert acc["b300"].attention_dhead_knee == acc["gb300"].attention_dhead_knee == 64
    assert acc["h100-sxm-80gb"].attention_dhead_knee is None  # the family value (64) applies


def _elem_terms(preset, **training):
    from planner import batch, model_stats
    d = planner.load_preset(preset).to_json_dict()
    d["training"].update(training)
    b = batch.from_scenarios([planner.Scenario.model_validate(d)])
    b.update(model_stats.stats(b))
    return {k: float(np.asarray(v).reshape(-1)[0]) for k, v in timing._terms(b).items()}


def test_eager_elementwise_bytes_by_op_count():
    """training.elementwise = 'eager' (PyTorch eager ops, counted on TorchTitan's 2024 Llama):
    per token and layer, forward, each of the two RMSNorms 36 B per hidden element instead of
    4 (cast 2+4, pow 4+4, mean 4, multiply 4+4, cast 4+2, × weight 2+2), RoPE 20 B per query
    and key element (cast 2+4, complex multiply 4+4, cast 4+2), SwiGLU 10 B per FFN element
    instead of 6; residual adds unchanged. Fused: 20 B per hidden element + 6 per FFN element.
    Llama 3 70B at TP 8 with SP (default preset: h 8192, 64 heads, 8 KV heads, d 128, FFN
    28,672; every term is sharded by TP 8, so the ratio is free of it):
    eager / fused − 1 = (2·32·8192 + 20·72·128 + 4·28672) / (20·8192 + 6·28672)
                      = 823,296 / 335,872."""
    fused, eager = _elem_terms("default"), _elem_terms("default", elementwise="eager")
    assert eager["_t_elem_dense"] / fused["_t_elem_dense"] - 1.0 == pytest.approx(823296 / 335872, rel=1e-12)
    # the elementwise time runs in every pass: the step grows, GEMMs and attention do not
    assert eager["_t_attn_proj"] == fused["_t_attn_proj"] and eager["_t_core"] == fused["_t_core"]
    assert eager["step_time_s"] > fused["step_time_s"]
    # MLA (DeepSeek-V3 preset, TP 1, dense layers' FFN 18,432): RoPE on the 64-wide rope part of
    # the 128 query heads and the one shared rope key, and the two latent RMSNorms (q_lora 1,536
    # + kv_lora 512, left out of the fused count) at 36 B: (2·32·7168 + 20·129·64 + 36·2048 +
    # 4·18432) / (20·7168 + 6·18432) = 771,328 / 253,952
    fused, eager = _elem_terms("deepseek-v3-h800-2048"), _elem_terms("deepseek-v3-h800-2048", elementwise="eager")
    assert eager["_t_elem_dense"] / fused["_t_elem_dense"] - 1.0 == pytest.approx(771328 / 253952, rel=1e-12)
    # Llama 3.1 8B at TP 1 (the TorchTitan preset: h 4096, 32 heads, 8 KV heads, FFN 14,336):
    # (2·32·4096 + 20·(32 + 8)·128 + 4·14336) / (20·4096 + 6·14336) = 421,888 / 167,936
    d8 = _elem_terms("llama31-8b-torchtitan-h100-8")
    e8 = _elem_terms("llama31-8b-torchtitan-h100-8", elementwise="eager")
    assert e8["_t_elem_dense"] / d8["_t_elem_dense"] - 1.0 == pytest.approx(421888 / 167936, rel=1e-12)


def test_eager_rope_counts_replicated_kv_heads_per_rank():
    """With KV heads replicated (k = 8 < tp = 16), each TP rank applies RoPE to a/t query heads
    and max(k, t)/t = 1 key head: Llama 3 70B (64 heads, d 128, FFN 28,672) at TP 16 with SP:
    eager − fused per rank = 2·32·8192/16 + 20·(64 + 16)/16·128 + 4·28672/16 = 32768 + 12800 +
    7168 = 52,736 B against the fused 20·8192/16 + 6·28672/16 = 20,992 B."""
    from planner import batch, model_stats
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"].update(tp=16, pp=1, vpp=1, schedule="1f1b", dp=None)
    d["cluster"]["system"] = "gb200-nvl72"
    out = {}
    for ew in ("fused", "eager"):
        d["training"]["elementwise"] = ew
        b = batch.from_scenarios([planner.Scenario.model_validate(d)])
        b.update(model_stats.stats(b))
        out[ew] = float(np.asarray(timing._terms(b)["_t_elem_dense"]).reshape(-1)[0])
    assert out["eager"] / out["fused"] - 1.0 == pytest.approx(52736 / 20992, rel=1e-12)


def test_eager_elementwise_leaves_layernorm_gelu_models_alone():
    """GPT-3 (LayerNorm, GeLU, a learned position table) and MPT-7B (LayerNorm, GeLU, ALiBi:
    ``rope = false``): F.layer_norm and F.gelu are single kernels in eager PyTorch too, and
    there is no RoPE: eager = fused to the bit."""
    for preset in ("gpt3-175b-a100-1024", "mpt-7b-a100-8"):
        fused, eager = _elem_terms(preset), _elem_terms(preset, elementwise="eager")
        assert eager["_t_elem_dense"] == fused["_t_elem_dense"], preset
        assert eager["step_time_s"] == fused["step_time_s"], preset
        d = planner.load_preset(preset).to_json_dict()
        d["training"]["elementwise"] = "eager"
        assert any("changes nothing for this model" in n for n in planner.evaluate(d).notes), preset


def test_eager_elementwise_is_explained():
    r = planner.evaluate(planner.load_preset("default").model_copy(
        update={"training": planner.load_preset("default").training.model_copy(update={"elementwise": "eager"})}))
    text = " ".join(r.notes)
    assert "Elementwise 'eager'" in text and "36 B per hidden element" in text and "RoPE 20 B" in text
    assert "Elementwise 'eager'" not in " ".join(planner.evaluate(planner.load_preset("default")).notes)


def test_torchtitan_preset_throughput_near_its_published_run():
    """The llama31-8b-torchtitan-h100-8 preset is TorchTitan's Table 1 '+ torch.compile' run
    (arXiv:2410.06511; validation/out_of_sample.csv torchtitan_h100_llama31_8b_8gpu_fsdp_compile_bf16):
    6,674 tokens/s/GPU published. With PyTorch SDPA's FlashAttention-2 kernels on the 500 W
    HBM2e H100 the model is within 5 % of it (it was 15 % above with FlashAttention-3-class
    attention)."""
    r = planner.evaluate(planner.load_preset("llama31-8b-torchtitan-h100-8")).results
    assert r["tokens_per_s"] / 8 == pytest.approx(6674, rel=0.05)


def test_ep_options_on_a_dense_model_say_they_do_nothing():
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"].update(ep_comm_overlap=True, ep_dispatch_fp8=True)
    r = planner.evaluate(d)
    assert "parallelism.ep_comm_overlap and parallelism.ep_dispatch_fp8 have no effect: the model has no MoE layer." in r.notes
    assert r.results["step_time_s"] == planner.evaluate(planner.load_preset("default")).results["step_time_s"]
    moe = planner.evaluate(planner.load_preset("mixtral-8x7b-h100-64"))
    assert not any("no effect" in n and "ep_" in n for n in moe.notes)


def _dp_terms_by_hand(P, n, grad_bytes, bw_bytes_per_s, alpha_s):
    """Ring all-gather / reduce-scatter of a local parameter count P over n ranks inside one
    NVLink domain: (n−1)/n · P · bytes / BW + (n−1)·α (comm.py, α-β ring)."""
    ag = (n - 1) / n * P * 2.0 / bw_bytes_per_s + (n - 1) * alpha_s
    rs = (n - 1) / n * P * grad_bytes / bw_bytes_per_s + (n - 1) * alpha_s
    return ag, rs


@pytest.mark.parametrize("zero, grad_dtype", [(3, "fp32"), (3, "bf16"), (2, "fp32"), (1, "fp32"), (0, "fp32")])
def test_dp_comm_overlap_off_puts_every_dp_collective_in_the_step(zero, grad_dtype):
    # MPT-7B on one DGX A100 80GB (8 GPUs, NVLink 3: 300 GB/s per GPU × the sourced 0.8 link
    # efficiency of hardware/calibration.json, 2 µs per ring step), global batch 96, micro-batch 6:
    # m = 96 / (6·8) = 2 micro-batches per step. With dp_comm_overlap off nothing hides:
    # ZeRO-3: m·(2 gathers + reduce-scatter); ZeRO-2: m reduce-scatters (every backward, it keeps
    # only its gradient shard) + gather; ZeRO-1: reduce-scatter + gather; ZeRO-0: all-reduce.
    d = planner.load_preset("mpt-7b-a100-8").to_json_dict()
    d["parallelism"].update(zero_stage=zero, dp_comm_overlap=False)
    d["training"]["grad_dtype"] = grad_dtype
    r = planner.evaluate(d)
    P = r.results["params_total"]
    ag, rs = _dp_terms_by_hand(P, 8, 4.0 if grad_dtype == "fp32" else 2.0, 300e9 * 0.8, 2e-6)
    expected = {3: 2 * (2 * ag + rs), 2: 2 * rs + ag, 1: rs + ag, 0: 2 * rs}[zero]
    assert r.results["t_dp_comm_exposed_s"] == pytest.approx(expected, rel=1e-9)
    assert "not overlapped (dp_comm_overlap off)" in r.explain["t_dp_comm_exposed_s"]
    assert any(n.startswith("DP communication not overlapped") for n in r.notes)
    # overlapped (the default) the same collectives hide behind compute: far less is exposed
    d["parallelism"]["dp_comm_overlap"] = True
    on = planner.evaluate(d)
    assert on.results["t_dp_comm_exposed_s"] < 0.25 * expected
    assert on.results["t_compute_s"] == r.results["t_compute_s"]
    assert r.results["step_time_s"] - on.results["step_time_s"] == pytest.approx(
        expected - on.results["t_dp_comm_exposed_s"], rel=1e-9)


def test_zero2_reduce_scatters_after_every_micro_batch():
    """ZeRO-2 keeps only its gradient shard, so each micro-batch's backward reduce-scatters
    (DeepSpeed stage 2: 'gradient reduction is required after every backward',
    deepspeedai/DeepSpeed#2252): with m micro-batches per step, m − 1 reduce-scatters more than
    ZeRO-1, each hidden behind its micro-batch but never below the last bucket (max(40M, 1M·dp)
    params of the rank's P); with one micro-batch per step ZeRO-2 costs what ZeRO-1 does."""
    def run(zero, mbs, gbs):
        d = planner.load_preset("mpt-7b-a100-8").to_json_dict()
        d["parallelism"].update(zero_stage=zero, dp_comm_overlap=True)
        d["training"].update(micro_batch_size=mbs, global_batch_size=gbs, grad_dtype="fp32")
        return planner.evaluate(d)

    one = {z: run(z, 6, 48).results for z in (1, 2)}  # m = 48 / (6·8) = 1
    assert one[2]["step_time_s"] == one[1]["step_time_s"]
    four = {z: run(z, 2, 64) for z in (1, 2)}  # m = 64 / (2·8) = 4
    P = four[2].results["params_total"]
    _ag, rs = _dp_terms_by_hand(P, 8, 4.0, 300e9 * 0.8, 2e-6)
    extra = four[2].results["t_dp_comm_exposed_s"] - four[1].results["t_dp_comm_exposed_s"]
    assert 3 * (40e6 / P) * rs * (1 - 1e-9) <= extra <= 3 * rs
    assert four[2].results["step_time_s"] - four[1].results["step_time_s"] == pytest.approx(extra, rel=1e-9)
    assert "3 earlier micro-batches' reduce-scatters" in four[2].explain["t_dp_comm_exposed_s"]
    # the default preset (Llama 3 70B, 16 micro-batches per DP rank): ZeRO-2 is no longer free
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"]["zero_stage"] = 2
    assert planner.evaluate(d).results["step_time_s"] > planner.evaluate(planner.load_preset("default")).results["step_time_s"]


def test_moe_compute_explain_names_the_moe_layers_mlp():
    """An all-MoE model (Mixtral: 32 MoE layers, no dense one) explains its layer with the MoE
    MLP and the expert GEMM efficiency, and the printed parts add up to the layer time:
    3 passes (fwd + 2 × bwd) × (attn proj + MLP + elementwise) + (1 + 2 + 1) × attention core
    (flash attention: its backward (2.5·d_h + knee)/(d_h + knee) = (2.5·128 + 64)/(128 + 64) = 2 ×
    the forward on H100, its forward again with selective recompute: timing module docstring) +
    the routed experts' host time."""
    import re
    s = planner.load_preset("mixtral-8x7b-h100-64")
    assert s.parallelism.recompute == "selective" and s.parallelism.flash_attention
    r = planner.evaluate(s)
    text = r.explain["t_compute_s"]
    assert "MoE MLP" in text and "dense MLP" not in text and "expert GEMM eff" in text
    assert ", MLP " not in text and "MLP up-projection GEMM eff" not in text

    def ms(label):
        return float(re.search(label + r" ([0-9.]+) ms", text).group(1))

    host = float(re.search(r"= ([0-9.]+) ms per layer and micro-batch", text).group(1))
    layer = 3 * (ms("attn proj") + ms("MoE MLP") + ms("elementwise")) + 4.0 * ms("attn core") + host
    assert layer == pytest.approx(ms("layers ×"), rel=0.01)


def test_dp_comm_overlap_off_reproduces_mosaics_micro_batch_sweep():
    # Published (mosaicml/llm-foundry scripts/train/benchmarking/larger_mb_1.md, commit beb8dee):
    # MPT-7B, seq 2048, 8 A100-80GB, FSDP FULL_SHARD, no activation checkpointing, 2 accumulation
    # steps; MFU at micro-batch 1 / 2 / 4 / 6 = 46.59 / 55.97 / 62.46 / 65.25 %. The published
    # time per micro-batch (b·2048 / tokens/s per GPU: 0.608, 1.013, 1.815, 2.606 s) exceeds the
    # overlapped prediction by 0.15-0.18 s at every b, ≈ the FSDP collectives of a micro-batch
    # (2 bf16 gathers + 1 bf16 reduce-scatter of 6.65e9 params at 0.8 × 300 GB/s: 7/8 · 6.65e9 ·
    # 6 B / 240e9 = 0.145 s). With the collectives in series the model follows the sweep;
    # overlapped, it misses the small micro-batches by ~40 %.
    published = {1: 0.4659, 2: 0.5597, 4: 0.6246, 6: 0.6525}

    def mfu(mbs, overlap):
        d = planner.load_preset("mpt-7b-a100-8").to_json_dict()
        d["training"].update(micro_batch_size=mbs, global_batch_size=mbs * 2 * 8, grad_dtype="bf16")
        d["parallelism"]["dp_comm_overlap"] = overlap
        return planner.evaluate(d).results["mfu"]

    for mbs, pub in published.items():
        assert mfu(mbs, False) == pytest.approx(pub, rel=0.08), mbs
    assert mfu(1, True) / published[1] - 1.0 > 0.25


def test_dp_comm_overlap_off_with_one_dp_rank_says_it_does_nothing():
    d = planner.load_preset("mpt-7b-a100-8").to_json_dict()
    d["parallelism"].update(dp=1, dp_comm_overlap=False)
    d["cluster"]["n_gpus"] = 1
    d["training"].update(global_batch_size=6, micro_batch_size=6)
    r = planner.evaluate(d)
    assert "parallelism.dp_comm_overlap off has no effect: dp·cp = 1 (no DP collective)." in r.notes
    assert r.results["t_dp_comm_exposed_s"] == 0.0


def test_overlapped_dp_never_exposes_more_than_its_collectives():
    # ZeRO-3 with two layers per stage: the first / last layer's share plus what the window
    # cannot hide would exceed the collectives themselves; capped at m·(2 gathers + RS)
    d = planner.load_preset("mpt-7b-a100-8").to_json_dict()
    d["parallelism"].update(tp=8, pp=16, dp=8)
    d["training"]["micro_batch_size"] = 1
    d["cluster"]["n_gpus"] = 1024
    off = planner.evaluate(d).results
    d["parallelism"]["dp_comm_overlap"] = True
    on = planner.evaluate(d).results
    assert on["t_dp_comm_exposed_s"] <= off["t_dp_comm_exposed_s"]
    assert on["step_time_s"] <= off["step_time_s"]


_OVERLAP_COLUMN = {"dp_comm_overlap": "t_dp_comm_exposed_s", "tp_comm_overlap": "t_tp_comm_s",
                   "ep_comm_overlap": "t_ep_comm_s"}


def _overlap_scenarios():
    from hypothesis import strategies as st
    from test_engine import scenarios  # noqa: PLC0415 - the engine test's strategy of valid scenarios

    return st.tuples(scenarios(), st.sampled_from(sorted(_OVERLAP_COLUMN)))


def test_turning_an_overlap_on_never_slows_a_step():
    # Property over random valid scenarios (presets × splits × ZeRO × recompute × systems): hiding
    # a collective can only shorten it, so its exposed column and the step never grow when the
    # overlap is switched on (found: an overlapped ZeRO-3 stage of two layers exposed more).
    from hypothesis import HealthCheck, given, settings

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(case=_overlap_scenarios())
    def check(case):
        s, flag = case
        d = s.to_json_dict()
        out = {}
        for on in (False, True):
            d["parallelism"][flag] = on
            out[on] = planner.evaluate(d).results
        col = _OVERLAP_COLUMN[flag]
        assert out[True][col] <= out[False][col] * (1 + 1e-12) + 1e-15, (flag, col)
        assert out[True]["step_time_s"] <= out[False]["step_time_s"] * (1 + 1e-12), flag

    check()


def _torchtitan_8b(**training):
    d = planner.load_preset("llama31-8b-torchtitan-h100-8").to_json_dict()
    d["training"].update(training)
    return d


def test_fp8_rowwise_bytes_by_hand():
    """training.fp8_scaling = 'rowwise': FP8_ROWWISE_BYTES = 4.8 HBM bytes per cast element.
    Every nn.Linear casts its input (M·K) and weight (K·N) in the forward, its output gradient
    twice (2·M·N) and input and weight again in the backward; full recompute repeats the
    forward casts. Llama 3.1 8B at TP 1 (h 4096, 32 heads, 8 KV heads of 128, FFN 14336), M =
    micro-batch 2 × 8192 = 16384 tokens:
      attention (wq, wk, wv, wo): ΣK = 3·4096 + 4096 = 16384, ΣN = 4096 + 1024 + 1024 + 4096
        = 10240, weights 41,943,040 → 2·(M·16384 + 41,943,040) + 2·M·10240 = 956,301,312
      MLP (w1, w3, w2): ΣK = 2·4096 + 14336 = 22528, ΣN = 2·14336 + 4096 = 32768, weights
        176,160,768 → 2·(M·22528 + 176,160,768) + 2·M·32768 = 2,164,260,864
    per layer 4.8 × 3,120,562,176 B over the host's HBM2e, 2.4 TB/s × hbm_eff
    (hardware/calibration.json); with full recompute + (M·16384 + 41,943,040) + (M·22528 +
    176,160,768) = 855,638,016 cast elements more."""
    hbm_eff = _calibration_file()["hbm_eff"]["value"]
    M = 16384
    attn = 2 * (M * 16384 + 41_943_040) + 2 * M * 10240
    mlp = 2 * (M * 22528 + 176_160_768) + 2 * M * 32768
    assert (attn, mlp) == (956_301_312, 2_164_260_864)
    per_layer = 4.8 * (attn + mlp) / (2.4e12 * hbm_eff)
    tw = planner.evaluate(_torchtitan_8b(precision="fp8")).results
    r = planner.evaluate(_torchtitan_8b(precision="fp8", fp8_scaling="rowwise"))
    m, layers = 1, 32  # global batch 16 = 8 DP ranks × micro-batch 2, one pipeline stage
    assert r.results["t_compute_s"] - tw["t_compute_s"] == pytest.approx(m * layers * per_layer, rel=1e-9)
    assert f"= {per_layer * 1e3:,.3g} ms per layer" in r.explain["t_compute_s"]
    assert any(n.startswith("FP8 row-wise scaling: 4.8 HBM bytes per element of every cast") for n in r.notes)
    # full recompute: the forward casts once more
    d_tw = _torchtitan_8b(precision="fp8")
    d_tw["parallelism"]["recompute"] = "full"
    d_rw = _torchtitan_8b(precision="fp8", fp8_scaling="rowwise")
    d_rw["parallelism"]["recompute"] = "full"
    extra = planner.evaluate(d_rw).results["t_compute_s"] - planner.evaluate(d_tw).results["t_compute_s"]
    assert extra == pytest.approx(layers * 4.8 * (attn + mlp + 855_638_016) / (2.4e12 * hbm_eff), rel=1e-9)


def test_fp8_rowwise_reproduces_the_torchao_table_it_was_derived_from():
    """The derivation of FP8_ROWWISE_BYTES (torchao/float8/README.md, Training benchmarks: 8 H100,
    Llama 3 8B, seq 8192, batch 1, FSDP2, torch.compile, per-op SAC; 6150 tok/s bf16, 7689.5
    tensorwise, 6768 rowwise), on the TorchTitan host preset: the model's tensorwise speed-up
    over bf16 must stay near the published 1.250 for the rowwise figure to mean anything, and
    tensorwise / rowwise must give the published 7689.5 / 6768 = 1.136. A change to the GEMM
    model that moves either asks for the constant to be derived again."""
    run = dict(seq_len=8192, micro_batch_size=1, global_batch_size=8, cross_entropy="fused", elementwise="fused")
    tps = {k: planner.evaluate(_torchtitan_8b(**run, **kw)).results["tokens_per_s"] for k, kw in (
        ("bf16", {"precision": "bf16"}), ("tw", {"precision": "fp8"}),
        ("rw", {"precision": "fp8", "fp8_scaling": "rowwise"}))}
    # 2.5 %: the model gives 1.2253 (1.2262 until the ZeRO-3 embedding unit's gather and reduce-scatter
    # were exposed in full, review h30b F1: 3.7 → 7.7 ms of a 1.24 s step that FP8 does not speed up)
    assert tps["tw"] / tps["bf16"] == pytest.approx(7689.5 / 6150, rel=0.025)
    assert tps["tw"] / tps["rw"] == pytest.approx(7689.5 / 6768, rel=0.01)


def test_fp8_rowwise_does_nothing_without_fp8_gemms():
    bf = planner.evaluate(_torchtitan_8b(precision="bf16")).results
    r = planner.evaluate(_torchtitan_8b(precision="bf16", fp8_scaling="rowwise"))
    assert r.results["step_time_s"] == bf["step_time_s"]
    assert any("FP8 scaling 'rowwise' has no effect" in n for n in r.notes)
    # FP4 GEMMs are not torchao's float8 recipe: no charge either (found by review)
    d = planner.load_preset("default").to_json_dict()
    d["cluster"]["system"] = "dgx-b200"
    d["training"]["precision"] = "fp4"
    fp4 = planner.evaluate(d).results["step_time_s"]
    d["training"]["fp8_scaling"] = "rowwise"
    r = planner.evaluate(d)
    assert r.results["step_time_s"] == fp4
    assert any("FP8 scaling 'rowwise' has no effect" in n for n in r.notes)


def test_fp8_rowwise_moe_layers_explain_says_the_average_it_added():
    # Mixtral 8x7B (every layer MoE): the per-layer figure explain shows is what was added
    d = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
    d["training"]["precision"] = "fp8"
    tw = planner.evaluate(d)
    d["training"]["fp8_scaling"] = "rowwise"
    rw = planner.evaluate(d)
    import re
    per_layer_ms = float(re.search(r"HBM bw = ([\d.]+) ms per layer", rw.explain["t_compute_s"]).group(1))
    m = float(re.search(r"m·t_mb = ([\d.]+) micro-batches", rw.explain["t_compute_s"]).group(1))
    layers = float(re.search(r"\(= ([\d.]+) layers", rw.explain["t_compute_s"]).group(1))
    added = rw.results["t_compute_s"] - tw.results["t_compute_s"]
    assert added == pytest.approx(m * layers * per_layer_ms * 1e-3, rel=5e-3)  # explain rounds to 3 digits
    assert "(MoE layers: their attention projections and shared experts; the routed experts are not charged)" \
        in rw.explain["t_compute_s"]


def test_explain_names_the_first_stage_when_it_is_the_slowest():
    # Llama 3 70B (80 layers) over PP 3 with the uneven split, 1F1B: 27 / 27 / 26 layers, and the
    # first stage's extra layer outweighs the last stage's head. The formula must give the first
    # stage's time without the head (found by review: it added the head to 27 layers).
    import re
    d = planner.load_preset("default").to_json_dict()
    d["cluster"]["n_gpus"] = 768
    d["parallelism"].update(pp=3, layer_split="uneven", schedule="1f1b", vpp=1)
    d["training"].update(precision="fp8", fp8_scaling="rowwise")  # heavier layers: the first stage wins
    text = planner.evaluate(d).explain["t_compute_s"]
    assert "the first stage" in text
    mb = float(re.search(r"× ([\d.]+) ms \(=", text).group(1))
    n, per = re.search(r"\(= ([\d.]+) layers × ([\d.]+) ms", text).groups()
    assert float(n) == 27
    # 3-digit rounding of both figures: within 1 %; with the head added it would be 3.4 % off
    assert mb == pytest.approx(float(n) * float(per), rel=1e-2)


def _window_scenarios():
    """The engine test's valid scenarios, plus what its strategy never sets and the window rules
    (docs/timing.md, "Windows") are about: the EP all-to-all overlap (MoE rows with ep > 1),
    activation offload, flash attention off, and the 1F1B / GPipe / ZB-H1 / DualPipe schedules.
    A draw the schema refuses (DualPipe with an odd pp or too few micro-batches, …) keeps the
    engine test's scenario."""
    from hypothesis import strategies as st
    from pydantic import ValidationError
    from test_engine import scenarios  # noqa: PLC0415

    @st.composite
    def draw(draw):
        s = draw(scenarios())
        d = s.to_json_dict()
        p = d["parallelism"]
        p.update(ep_comm_overlap=draw(st.booleans()) and p.get("ep", 1) > 1,
                 offload_activations=draw(st.booleans()), flash_attention=draw(st.booleans()),
                 schedule=draw(st.sampled_from(["1f1b", "gpipe", "zero_bubble", "dualpipe"])))
        try:
            return planner.Scenario.model_validate(d)
        except ValidationError:
            return s

    return draw()


def test_fp8_rowwise_never_speeds_a_step_up():
    # Property over random valid scenarios: row-wise scaling only adds work, and only to the
    # compute of runs whose GEMMs are FP8; every other column stays as it was or shrinks (more
    # compute hides more DP communication).
    from hypothesis import HealthCheck, given, settings

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(s=_window_scenarios())
    def check(s):
        d = s.to_json_dict()
        out = {}
        for scaling in ("tensorwise", "rowwise"):
            d["training"]["fp8_scaling"] = scaling
            out[scaling] = planner.evaluate(d).results
        tw, rw = out["tensorwise"], out["rowwise"]
        assert rw["t_compute_s"] >= tw["t_compute_s"]
        # More compute never shortens the step, also where several overlapped transfers hide in
        # one compute window (ZeRO-2/3 with CP or the EP overlap, optimizer / activation offload):
        # the exposed remainder of one widens the window of the next instead of each being
        # counted against the same compute (until 2026-11-30 they added, and a step could shrink).
        assert rw["step_time_s"] >= tw["step_time_s"] * (1 - 1e-12)
        if d["training"]["precision"] != "fp8":
            assert rw["step_time_s"] == tw["step_time_s"]

    check()


def _row_terms(preset, training=None, parallelism=None, n_gpus=None):
    from planner import batch, model_stats
    d = planner.load_preset(preset).to_json_dict()
    d["training"].update(training or {})
    d["parallelism"].update(parallelism or {})
    if n_gpus:
        d["cluster"]["n_gpus"] = n_gpus
    b = batch.from_scenarios([planner.Scenario.model_validate(d)])
    b.update(model_stats.stats(b))
    return {k: float(np.asarray(v).reshape(-1)[0]) for k, v in timing._terms(b).items()}


def test_fp8_rowwise_mla_under_tp_and_shared_experts_by_hand():
    """DeepSeek-V3 (h 7168, 128 heads, q_lora 1536, kv_lora 512, d_nope 128, d_rope 64, d_v 128;
    3 dense layers of FFN 18432, 58 MoE layers with one 2048-wide shared expert) at TP 8 with SP,
    full recompute (forward casts 3×), M = 4096 tokens. q_a and kv_a are whole on every rank
    (found by review: they were divided by TP).
      attention ΣK = 7168 + 1536 + 7168 + 512 + 128·128/8 = 18432
                ΣN = 1536 + 128·192/8 + 512 + 64 + 128·256/8 + 7168 = 16448
                weights 7168·1536 + 1536·3072 + 7168·576 + 512·4096 + 2048·7168 = 36,634,624
                casts 3·(M·18432 + 36,634,624) + 2·M·16448 = 471,138,304
      dense MLP ΣK = 2·7168 + 2304, ΣN = 2·2304 + 7168, weights 3·7168·2304 → 449,576,960
      shared expert ΣK = 2·7168 + 256, ΣN = 2·256 + 7168, weights 3·7168·256 → 258,736,128
    per layer, averaged over 3 dense and 58 MoE layers (routed experts not charged), × 4.8 B
    over the H800's 3.35 TB/s × hbm_eff."""
    hbm_eff = _calibration_file()["hbm_eff"]["value"]
    M = 4096
    attn = 3 * (M * 18432 + 36_634_624) + 2 * M * 16448
    mlp = 3 * (M * 16640 + 3 * 7168 * 2304) + 2 * M * 11776
    sh = 3 * (M * 14592 + 3 * 7168 * 256) + 2 * M * 7680
    assert (attn, mlp, sh) == (471_138_304, 449_576_960, 258_736_128)
    per_layer = 4.8 * (3 * (attn + mlp) + 58 * (attn + sh)) / 61 / (3.35e12 * hbm_eff)
    par = dict(tp=8, dp=16, ep=16, schedule="1f1b", sequence_parallel=True)
    T = _row_terms("deepseek-v3-h800-2048", {"fp8_scaling": "rowwise"}, par)
    assert T["_t_row_layer"] == pytest.approx(per_layer, rel=1e-9)


def test_fp8_rowwise_replicates_kv_heads_beyond_the_tp_degree():
    """Llama 3 70B (8 KV heads) at TP 16: K and V heads are replicated, max(8, 16)/16 = one
    whole head each per rank (as the RoPE term counts them), not 8/16 (found by review). Per layer, TP 16, M = micro-batch 1 × 8192 (SP), no
    recompute: ΣK = 3·8192 + 64·128/16, ΣN = 64·128/16 + 1·256 + 8192, weights 8192·(512 + 256
    + 512); MLP ΣK = 2·8192 + 1792, ΣN = 2·1792 + 8192, weights 3·8192·1792."""
    hbm_eff = _calibration_file()["hbm_eff"]["value"]
    T = _row_terms("default", {"precision": "fp8", "fp8_scaling": "rowwise"},
                   {"tp": 16, "dp": 16, "recompute": "none"})
    M = 8192
    attn = 2 * (M * (3 * 8192 + 512) + 8192 * (512 + 256 + 512)) + 2 * M * (512 + 256 + 8192)
    mlp = 2 * (M * (2 * 8192 + 1792) + 3 * 8192 * 1792) + 2 * M * (2 * 1792 + 8192)
    assert T["_t_row_layer"] == pytest.approx(4.8 * (attn + mlp) / (3.35e12 * hbm_eff), rel=1e-9)


def test_explain_dualpipe_and_partial_recompute_stage_add_up():
    # found by review: the stage time shown must be what the numbers next to it add up to
    import re
    r = planner.evaluate(planner.load_preset("deepseek-v3-h800-2048").to_json_dict())
    text = r.explain["t_compute_s"]
    stage = float(re.search(r"× ([\d.]+) ms \(", text).group(1))
    first, last = (float(x) for x in re.search(r"first stage ([\d.]+) ms \+ last stage ([\d.]+) ms", text).groups())
    assert stage == pytest.approx(0.5 * (first + last), rel=1e-2)
    d = planner.load_preset("llama3-405b-h100-16k").to_json_dict()
    d["parallelism"].update(recompute="full", recompute_layers=1)
    text = planner.evaluate(d).explain["t_compute_s"]
    stage = float(re.search(r"× ([\d.]+) ms \(", text).group(1))
    n, per = (float(x) for x in re.search(r"\(= ([\d.]+) layers × ([\d.]+) ms", text).groups())
    sign, corr = re.search(r"([+−]) ([\d.]+) ms: partial recompute", text).groups()
    head = re.search(r" \+ head\+loss ([\d.]+) ms", text)
    total = n * per + (float(head.group(1)) if head else 0.0) + (float(corr) if sign == "+" else -float(corr))
    assert stage == pytest.approx(total, rel=1e-2)


def test_activation_offload_moves_the_stash_not_the_working_set():
    # found by review: the swap time used mem_activations_bytes, which under activation offload
    # is the one layer's working set left on the GPU, not the stash that goes to the host.
    # t = max(0, 2 × stash / (host link × the scale-up link efficiency of calibration.json) −
    # window): with a 0.1 GB/s host link the stash decides.
    import copy

    from planner import catalog

    base = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    acc = catalog.accelerators()["h100-sxm-80gb"].model_dump(mode="json")
    acc["host_link_bw_bytes_per_s"] = 1e8
    acc["name"] = "slow-host-link H100"
    d = copy.deepcopy(base)
    d["cluster"]["accelerator"] = acc
    d["parallelism"]["offload_activations"] = True
    r = planner.evaluate(d).results
    stash = r["mem_act_offload_bytes"]
    assert stash > 10 * r["mem_activations_bytes"]  # the stash, not the GPU-side working set
    # every micro-batch goes out and back (found by a third review: the peak stash was used, 128×
    # too little on a 1F1B run of 128 micro-batches): pp 1 holds one micro-batch in flight, so
    # the traffic is m × the stash, m = global batch / (micro-batch · dp)
    m = 512 / (1 * 32)  # the preset: global batch 512, micro-batch 1, dp 32 (cp 2 does not split the batch)
    assert r["act_offload_traffic_bytes"] == pytest.approx(m * stash, rel=1e-12)
    eff = _calibration_file()["link_eff"]["value"]["host"]  # 0.8: pinned PCIe copies (hardware.md §6b)
    assert eff == 0.8
    # the swap hides behind the compute and the exposed CP / DP remainders (collectives on other
    # links, docs/timing.md "Windows"; the preset has cp 2 and ZeRO-1, no EP)
    window = r["t_compute_s"] + r["t_cp_comm_s"] + r["t_dp_comm_exposed_s"]
    assert r["t_offload_s"] == pytest.approx(2.0 * m * stash / (1e8 * eff) - window, rel=1e-9)


def test_dp_explain_adds_up_for_zero3_with_hsdp():
    # found by review: the replica all-reduce was in the total but not among the parts shown
    import re

    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["parallelism"].update(zero_stage=3, dp_shard=8)
    text = planner.evaluate(d).explain["t_dp_comm_exposed_s"]
    m, ag, rs, rep, total = (float(x) for x in re.search(
        r"m = ([\d.]+) micro-batches × \(2 × param gather ([\d.]+) s \+ gradient reduce-scatter ([\d.]+) s\) "
        r"of the stage it runs \+ replica all-reduce ([\d.]+) s = ([\d.]+) s in total", text).groups())
    assert m * (2 * ag + rs) + rep == pytest.approx(total, rel=2e-3)


def test_dualpipe_counts_the_layers_its_rank_runs_on_average():
    """DualPipe: rank 0 runs half its micro-batches on the first stage and half on the last, so
    its TP collectives are those of ½(first + last) layers per micro-batch (found by review: the
    count took the first stage's alone). An uneven split, 61 layers over 16 stages: 4 and 3
    layers, so 3.5 on average."""
    from planner import batch, model_stats

    def terms(tp):
        s = planner.load_preset("deepseek-v3-h800-2048").to_json_dict()
        s["parallelism"].update(tp=tp, dp=None)
        b = batch.from_scenarios([planner.Scenario.model_validate(s)])
        b.update(model_stats.stats(b))
        return {k: float(np.asarray(v).reshape(-1)[0]) for k, v in timing._terms(b).items()}

    # TP 1 (the EP all-to-all overlapped, no TP): rank 0 is the slower, 3.5 layers on average
    T = terms(1)
    assert T["_layers_stage"] == pytest.approx(3.5)
    # TP 2: the rank is chosen on compute plus its layers' TP / CP / EP time (found by review:
    # on compute alone rank 0 was taken, though a middle rank's extra layer of TP communication
    # makes it the slower). Per micro-batch, by hand: rank 0 ½(first + last) + 3.5·c against a
    # middle rank 4·(layer + c), c = the per-layer communication.
    T = terms(2)
    c = (T["t_tp_comm_s"] + T["t_cp_comm_s"] + T["t_ep_comm_s"]) / (T["_m"] * T["_layers_stage"])
    rank0 = 0.5 * (T["_first_mb"] + T["_last_mb"]) + 3.5 * c
    middle = 4 * (T["_layer_mb"] + c)
    assert middle > rank0 and 0.5 * (T["_first_mb"] + T["_last_mb"]) > 4 * T["_layer_mb"]  # compute alone: rank 0
    assert T["_layers_stage"] == 4 and T["t_compute_s"] == pytest.approx(T["_m"] * 4 * T["_layer_mb"], rel=1e-12)


def test_explain_writes_any_peak_and_a_tiny_mfu_readably():
    """Found by review: an inline part with a 1e30 FLOP/s peak printed '1e+18e12' and MFU 0.0000."""
    from planner.timing import _flop_rate, _frac
    assert _flop_rate(989.4e12) == "989.4e12"
    assert _flop_rate(1e30) == "1e+30"
    assert _frac(0.41139) == "0.4114" and _frac(2.5e-17) == "2.5e-17" and _frac(0.0) == "0.0000"


def test_dualpipe_zero2_reduces_only_the_stage_each_micro_batch_ran():
    """DualPipe: a micro-batch runs on one of the rank's two stages, so ZeRO-2's per-micro-batch
    reduce-scatter carries that stage's gradients (as ZeRO-3's per-micro-batch collectives do),
    and ZeRO-2 never moves more than ZeRO-3, which does the same plus two gathers (found by
    review: 13.11 s against ZeRO-3's 13.07 s with dp_comm_overlap off)."""
    d = planner.load_preset("deepseek-v3-h800-2048").to_json_dict()
    d["parallelism"]["dp_comm_overlap"] = False
    out = {}
    for z in (1, 2, 3):
        d["parallelism"]["zero_stage"] = z
        out[z] = planner.evaluate(d).results["t_dp_comm_exposed_s"]
    assert out[1] < out[2] < out[3]


def test_a_lower_power_limit_never_shortens_a_step():
    # Property over random valid scenarios: a power limit below TDP lowers the matmul ceiling
    # (the power rule) and changes nothing else of the step, so every GEMM takes longer and no
    # transfer gets faster; the step can only grow. Several overlapped transfers hiding in one
    # compute window (ZeRO-2/3 with CP or the EP overlap, offload) must not make more compute
    # shorten the step (found by review: Llama 3 8B, TP 8 × CP 4, ZeRO-3, flash attention on
    # cut compute by 0.63 s and lengthened the step 42.05 → 42.62 s).
    # The strategy samples the regimes (EP overlap, offload, DualPipe) but not the ring-bound CP
    # the review's cases needed (CP 4–8 across nodes, long sequences): with the windows rule, the
    # DualPipe bubble fix or the EP window fix reverted this property still passes (600 examples);
    # those are pinned by test_cp_remainder_widens_the_zero3_window,
    # test_ep_overlap_window_includes_the_cp_remainder and test_dualpipe.py.
    from hypothesis import HealthCheck, given, settings

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(s=_window_scenarios())
    def check(s):
        d = s.to_json_dict()
        from planner import catalog

        tdp = planner.evaluate(d).results
        c = d["cluster"]
        acc = catalog.resolve_accelerator(
            c["accelerator"] if c.get("accelerator") is not None else catalog.resolve_system(c["system"]).accelerator)
        c.setdefault("overrides", {})["power_limit_w"] = 0.5 * acc.tdp_w
        low = planner.evaluate(d).results
        assert low["t_compute_s"] >= tdp["t_compute_s"] * (1 - 1e-12)
        assert low["step_time_s"] >= tdp["step_time_s"] * (1 - 1e-12)

    check()


def test_cp_remainder_widens_the_zero3_window():
    """Llama 3 8B on 64 H100, TP 8 × CP 4 (the ring crosses nodes), ZeRO-3, seq 2,048: the CP
    ring leaves an exposed remainder per layer and the ZeRO-3 collectives are exposed too. By
    the rule (docs/timing.md, Windows): exposed ZeRO-3 = m·min(max(0, z3_mb − ovl·(stage_mb +
    x_mb)) + first/last layer's share, z3_mb) with x_mb = t_cp / m, where before the window
    was stage_mb alone. Flash attention only removes work, and here it cannot lengthen the step
    (before the fix: 42.05 → 42.62 s)."""
    def run(flash):
        d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
        d["parallelism"].update(tp=8, cp=4, pp=1, vpp=1, dp=None, zero_stage=3, schedule="1f1b",
                                flash_attention=flash)
        d["training"]["seq_len"] = 2048
        return d

    on, off = planner.evaluate(run(True)).results, planner.evaluate(run(False)).results
    assert on["t_cp_comm_s"] > 0 and on["t_dp_comm_exposed_s"] > 0
    assert on["step_time_s"] <= off["step_time_s"] * (1 + 1e-12)

    from planner import batch, model_stats
    b = batch.from_scenarios([planner.Scenario.model_validate(run(True))])
    b.update(model_stats.stats(b))
    T = {k: float(np.asarray(v).reshape(-1)[0]) for k, v in timing._terms(b).items()}
    ovl = _calibration_file()["dp_overlap_frac"]["value"]
    m, n_l = T["_m"], T["_layers_stage"]
    z3_mb = 2 * T["_t_param_ag"] + T["_t_grad_rs"]
    # the first / last unit: a layer, or the vocabulary matrix V·h/tp where larger (torchtitan's
    # embedding unit): 128,256 · 4,096 / 8 of the 8.03 B / 8 local parameters = 0.0654 > 1/32
    assert T["_P_local"] == pytest.approx(8.03e9 / 8, rel=2e-3)
    layer = (1 - 2 * 128256 * 4096 / 8.03e9) / 32  # a layer's parameters: 0.0272 of the stage's
    # the embedding unit's gather + reduce-scatter: its share of the stage's bandwidth terms, and the
    # ring's full latency once each (not divided among the units)
    al = T["_al_d"]
    first_last = (T["_t_param_ag"] + T["_t_grad_rs"] - 2 * al) * 128256 * 4096 / 8 / T["_P_local"] + 2 * al
    assert first_last > (T["_t_param_ag"] + T["_t_grad_rs"] - 2 * al) * layer + 2 * al
    stage_mb, x_mb = T["t_compute_s"] / m, T["t_cp_comm_s"] / m

    def exposed(window):
        return m * min(max(0.0, z3_mb - ovl * window) + first_last, z3_mb)

    assert T["t_dp_comm_exposed_s"] == pytest.approx(exposed(stage_mb + x_mb), rel=1e-9)
    assert T["t_dp_comm_exposed_s"] < exposed(stage_mb)  # the CP remainder did widen the window


def test_zero3_explain_window_adds_up_with_cp():
    """The ZeRO-3 explanation names its window (each micro-batch's forward + backward plus the
    exposed CP remainder) and its numbers give the exposed time by hand: Llama 3 8B (32 layers,
    pp 1), TP 8 × CP 4, ZeRO-3: m·(2·gather + reduce-scatter − ovl·(window) + (gather +
    reduce-scatter − 2·latency)·V·h/tp / P_local + 2·latency), ovl from hardware/calibration.json;
    the vocabulary matrix (torchtitan's embedding unit) 128,256 · 4,096 / 8.03e9 = 0.0654 of the
    parameters is larger than a layer's (1 − 2·V·h/8.03e9)/32 = 0.0272."""
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["parallelism"].update(tp=8, cp=4, pp=1, vpp=1, dp=None, zero_stage=3, schedule="1f1b")
    d["training"]["seq_len"] = 2048
    r = planner.evaluate(d)
    text = r.explain["t_dp_comm_exposed_s"]
    m, ag, rs = (float(x) for x in re.search(
        r"m = ([\d.]+) micro-batches × \(2 × param gather ([\d.]+) s \+ gradient reduce-scatter ([\d.]+) s\)", text).groups())
    mb, x, ovl = (float(v) for v in re.search(
        r"\(each micro-batch's forward \+ backward ([\d.]+) ms \+ the exposed CP / EP remainders it runs alongside "
        r"([\d.]+) ms\) × ([\d.]+)", text).groups())
    assert ovl == _calibration_file()["dp_overlap_frac"]["value"]
    share = 128256 * 4096 / 8.03e9
    layer = (1 - 2 * 128256 * 4096 / 8.03e9) / 32  # a layer's parameters, untied embedding and head
    unit, al = (float(v) for v in re.search(
        r"reduce-scatter, ([\d.e-]+) s a micro-batch \(the embedding.*?the ring's latency ([\d.]+) ms", text).groups())
    al /= 1e3
    # the embedding unit: its share of the bandwidth terms plus the ring's latency, once per collective
    assert unit == pytest.approx((ag + rs - 2 * al) * share + 2 * al, rel=3e-3)
    assert (ag + rs - 2 * al) * layer + 2 * al < unit
    by_hand = m * (2 * ag + rs - ovl * (mb + x) / 1e3 + unit)
    assert r.results["t_dp_comm_exposed_s"] == pytest.approx(by_hand, rel=3e-3)  # 4-digit figures


def test_zero_bubble_explain_states_the_formula_it_used():
    """Review: the zero-bubble bubble was explained as '(p−1)/(v·m)' while its number is another.
    ZB-H1 (Qi et al., ICLR'24 §3.1): bubble (p−1)(T_F + T_B − T_W) with T_B the input-gradient part;
    with the weight gradient W = (B − R)/2 of the full backward B (R: a recomputed forward) that is
    (p−1)(F + R) (review 48a: a fixed third of 1F1B's was charged before; that is the T_F = T_B = T_W
    case). Default preset on ZB-H1: p = 4, m = 512 / (1·32) = 16 ≥ p, so the m < p floor does not
    bind; fraction = 3·(F + R) / (16·(F + B)), by hand from the F, R and B the text states."""
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"].update(schedule="zero_bubble", vpp=1)
    r = planner.evaluate(d)
    R, text = r.results, r.explain["t_pp_bubble_s"]
    ms = lambda pat: float(re.search(pat, text).group(1))  # noqa: E731
    F, Rr, B = ms(r"\(F ([\d.]+) ms"), ms(r"recomputed forward R ([\d.]+) ms"), ms(r"backward B ([\d.]+) ms")
    by_hand = 3 * (F + Rr) / (16 * (F + B))
    frac = float(re.search(r"bubble fraction ([\d.]+) of the m = 16 micro-batches", text).group(1))
    assert frac == pytest.approx(by_hand, rel=5e-3)  # 3-digit ms in the text
    assert frac < 3 / 16  # less than 1F1B's (p−1)/m
    assert R["t_pp_bubble_s"] == pytest.approx(
        frac * (R["t_compute_s"] + R["t_tp_comm_s"] + R["t_cp_comm_s"] + R["t_ep_comm_s"]), rel=5e-4)
    assert "ZB-H1" in text and "(p−1)(F + R)" in text and "(v·m)" not in text


def test_a_host_bound_step_says_so():
    """A 2-layer, 64-wide model on one H100 (found by review: a 6.75 ns step): forward + backward
    of a layer in a few µs is about one kernel launch (a few µs each; dozens per layer), which the
    model does not count; the note says the throughput is an upper bound. A 70B layer on 1,024
    H100 (the default preset) takes tens of ms per micro-batch: no note."""
    tiny = {"model": {"name": "tiny", "n_layers": 2, "hidden_size": 64, "n_heads": 2, "ffn_hidden_size": 256,
                      "vocab_size": 1000},
            "cluster": {"system": "dgx-h100", "n_gpus": 1}, "training": {"global_batch_size": 1, "seq_len": 128}}
    r = planner.evaluate(tiny)
    per_layer = r.results["step_time_s"] / 2  # m = 1 micro-batch, 2 layers, pp 1
    assert per_layer < timing.HOST_BOUND_LAYER_S
    note = [n for n in r.notes if "Kernel-launch and framework overhead are not modelled" in n]
    assert note and f"{per_layer * 1e6:.3g} µs" in note[0]
    assert not [n for n in planner.evaluate(planner.load_preset("default")).notes if "µs here" in n]


def test_the_slowest_stage_counts_its_communication():
    """1F1B, DeepSeek-V3's 61 layers over 16 stages (uneven: 4 on the first, 3 + the output head on
    the last), EP 64 not overlapped, every layer MoE (its 3 leading dense layers made MoE: with
    them the first stage holds 3 dense layers and 1 MoE layer, and the last, 3 MoE layers and the
    head, is the slower — the step time places them there since a review found them averaged
    over the stages): the last stage has more compute, but the first's extra MoE layer carries
    its all-to-alls, so the first stage is the slower one and sets the step (found by review: the
    stage was chosen on compute alone). By hand per micro-batch: first 4·(layer + c) against last
    (3 layers + head) + 3·c."""
    import json
    from pathlib import Path

    from planner import batch, model_stats

    s = planner.load_preset("deepseek-v3-h800-2048").to_json_dict()
    m = json.loads((Path(__file__).resolve().parents[1] / "presets" / "models.json").read_text())["deepseek-v3"]
    m = {k: v for k, v in m.items() if not k.startswith("published_")}
    m["moe"] = dict(m["moe"], first_dense_layers=0)
    s["model"] = m
    s["parallelism"].update(schedule="1f1b", ep_comm_overlap=False, tp=1, dp=None)
    b = batch.from_scenarios([planner.Scenario.model_validate(s)])
    b.update(model_stats.stats(b))
    T = {k: float(np.asarray(v).reshape(-1)[0]) for k, v in timing._terms(b).items()}
    assert T["_per_stage_hi"] == 4 and T["_last_mb"] > T["_first_mb"]  # on compute the last is slower
    c = (T["t_tp_comm_s"] + T["t_cp_comm_s"] + T["t_ep_comm_s"]) / (T["_m"] * T["_layers_stage"])
    assert T["_first_mb"] + 4 * c > T["_last_mb"] + 3 * c
    assert T["_layers_stage"] == 4 and not T["_last_is_slowest"]
    assert T["t_compute_s"] == pytest.approx(T["_m"] * T["_first_mb"], rel=1e-12)


def _terms_of(d):
    from planner import batch, model_stats

    b = batch.from_scenarios([planner.Scenario.model_validate(d)])
    b.update(model_stats.stats(b))
    return {k: float(np.asarray(v).reshape(-1)[0]) for k, v in timing._terms(b).items()}


@pytest.mark.parametrize("pp", [4, 6, 14, 16])
def test_dualpipe_middle_rank_is_one_that_exists(pp):
    """DualPipe rank j holds stages j and p−1−j (DeepSeek-V3 §3.2.1). DeepSeek-V3's 61 layers at
    PP 6 split 11, 10, 10, 10, 10, 10: the middle ranks hold 10 + 10, rank 0 11 + 10 + the head;
    no rank holds two 11-layer stages (found by review: the middle rank was costed as two full
    stages, 11 layers, and at TP 2 it was taken as the slowest). By hand from the layout rule
    (model_stats.layers_on_rank): each real rank's load per micro-batch is its average layers ×
    (layer + c) plus half the head on rank 0; the slowest of those sets t_compute."""
    from planner import model_stats

    s = planner.load_preset("deepseek-v3-h800-2048").to_json_dict()
    s["parallelism"].update(tp=2, pp=pp, dp=None)
    s["cluster"]["n_gpus"] = 64 * pp * 2
    T = _terms_of(s)
    lay = [int(model_stats.layers_on_rank(61, pp, 1, j)) for j in range(pp)]
    c = (T["t_tp_comm_s"] + T["t_cp_comm_s"] + T["t_ep_comm_s"]) / (T["_m"] * T["_layers_stage"])
    per, head = T["_layer_mb"], T["_t_head_mb"]
    loads = {j: (0.5 * (lay[j] + lay[pp - 1 - j]), 0.5 * head * (j == 0)) for j in range(pp // 2)}
    j_max = max(loads, key=lambda j: loads[j][0] * (per + c) + loads[j][1])
    n, h = loads[j_max]
    assert T["_layers_stage"] == n
    assert T["t_compute_s"] == pytest.approx(T["_m"] * (n * per + h), rel=1e-12)
    if pp in (4, 6, 14):  # fewer than p/2 + 1 stages hold the extra layer: no rank holds two
        assert j_max == 0 and max(lay[j] + lay[pp - 1 - j] for j in range(1, pp // 2)) < 2 * max(lay)


def test_a_lower_power_limit_cannot_flip_to_the_stage_with_the_wider_window():
    """An MPT-7B-like model (vocab 68,288) on 48 H100, TP 8 × PP 3 (32 layers: 11, 11, 10 + the
    head), ZeRO-3 over 2 ranks: the first stage's extra layer of TP all-reduces makes it the
    slower at 365 W; at 362.5 W the last stage computes enough more to be taken on compute plus
    communication, and its wider ZeRO-3 window (its head's compute) hid more: the step went
    1.2203 → 1.2037 s (found by review). Every stage runs its own ZeRO-3 collectives behind its
    own compute, so the step is the longer of the two stages' steps, each by the documented
    formulas: m·(stage + layers·c) + bubble (p−1)/m × that + p2p + ZeRO-3 exposed
    m·min(max(0, z3_mb − ovl·stage) + unit, z3_mb) + optimizer, the first / last unit's gather +
    reduce-scatter = (gather + reduce-scatter − 2·latency)·share + 2·latency, the share a layer's
    parameters (1 − V·h/P)·pp/L of the average stage's, on the first stage the embedding's V·h/tp
    where larger."""
    import json
    import pathlib

    base = json.loads((pathlib.Path(timing.__file__).parents[1] / "presets" / "models.json").read_text())["mpt-7b"]
    mdl = {k: v for k, v in base.items() if k not in ("source", "published_params_total")}
    mdl.update(name="custom", vocab_size=68288)

    def scen(pw):
        return {"model": mdl, "cluster": {"system": "dgx-h100", "n_gpus": 48, "overrides": {"power_limit_w": pw}},
                "training": {"seq_len": 4096, "global_batch_size": 64, "micro_batch_size": 1},
                "parallelism": {"tp": 8, "pp": 3, "zero_stage": 3, "layer_split": "uneven"}}

    ovl = _calibration_file()["dp_overlap_frac"]["value"]
    steps = []
    for pw in (365.0, 362.5):
        T = _terms_of(scen(pw))
        m, p = T["_m"], 3.0
        c = T["t_tp_comm_s"] / (T["_m"] * T["_layers_stage"])
        z3_mb = 2 * T["_t_param_ag"] + T["_t_grad_rs"]

        # the first stage's first / last ZeRO-3 unit is the embedding (tied: V·h/tp = 68,288 · 4,096 / 8
        # = 35.0 M of the average stage's P/(tp·pp)) where larger than a layer; the last stage's are
        # its layers: (1 − V·h/P)·pp/L, a layer 4h² + 2·h·16,384 + 2h = 201.3 M parameters
        P = 32 * (4 * 4096**2 + 2 * 4096 * 16384 + 2 * 4096) + 68288 * 4096 + 4096
        assert T["_P_local"] == pytest.approx(P / 24, rel=1e-3)
        P = 24 * T["_P_local"]  # the model's exact count (the norms' biases): the identity below is to 1e-9
        emb = 68288 * 4096 / 8 / (P / 24)
        layer = (1 - 68288 * 4096 / P) * 3 / 32
        assert layer < emb

        def stage_step(mb, n, share):
            body = m * (mb + n * c)
            al = T["_al_d"]  # one unit's gather + reduce-scatter: its bandwidth share, the full latency
            unit = (T["_t_param_ag"] + T["_t_grad_rs"] - 2 * al) * share + 2 * al
            dp = m * min(max(0.0, z3_mb - ovl * mb) + unit, z3_mb)
            return body + (p - 1) / m * body + T["t_pp_p2p_s"] + dp + T["t_optimizer_s"]

        by_hand = max(stage_step(T["_first_mb"], 11, emb), stage_step(T["_last_mb"], 10, layer))
        assert T["step_time_s"] == pytest.approx(by_hand, rel=1e-9)
        steps.append(T["step_time_s"])
    assert steps[1] >= steps[0]  # less power: never a shorter step


def test_ep_overlap_window_includes_the_cp_remainder():
    """Qwen3-30B-A3B on 512 MI300X, TP 8 × CP 4 × EP 8 with ep_comm_overlap (interleaved, which the
    overlap needs with PP > 1 since review 14j; GPipe before), ZeRO-2: the CP ring
    leaves an exposed remainder per layer and the all-to-all hides behind the MoE layer. Slower
    attention (a lower power limit, or flash attention off) adds to the attention core what it
    takes from the CP remainder (max(0, ring − core)), so the layer's wall time is unchanged, and
    the all-to-all, which runs while the GPU waits on the ring too, has no more room to hide:
    the step cannot shrink (found by review: against compute alone the EP remainder shrank as
    well, 1.4344 → 1.4339 s at half the TDP, → 1.4221 s with flash attention off). By the
    documented rule the exposed EP time per MoE layer and micro-batch is max(0, n·a2a −
    tp_overlap_frac·(MoE layer compute + CP remainder)), so with the remainder in the window the
    all-to-all is hidden whole here. (Sequence 2,176, not 2,048, since session 37: with the flash
    backward's one exp per score and the refitted tp_overlap_frac the window held the all-to-alls of a
    2,048-token sequence without the CP remainder, so the case no longer tested it.)"""
    d = {"model": "qwen3-30b-a3b", "cluster": {"system": "mi300x-8", "n_gpus": 512},
         "training": {"seq_len": 2176, "global_batch_size": 256, "micro_batch_size": 2, "precision": "bf16"},
         "parallelism": {"tp": 8, "pp": 2, "vpp": 2, "cp": 4, "ep": 8, "schedule": "interleaved", "zero_stage": 2,
                         "recompute": "selective", "sequence_parallel": False, "offload_optimizer": "none",
                         "offload_activations": True, "flash_attention": True, "tp_comm_overlap": True,
                         "dp_comm_overlap": True, "ep_comm_overlap": True, "layer_split": "uneven"}}
    base = planner.evaluate(d).results
    low = dict(d, cluster={**d["cluster"], "overrides": {"power_limit_w": 375.0}})  # half the MI300X's 750 W
    no_flash = dict(d, parallelism={**d["parallelism"], "flash_attention": False})
    T = _terms_of(d)
    c_cp = T["t_cp_comm_s"] / (T["_m"] * T["_layers_stage"])
    assert c_cp > 0 and T["_n_a2a"] * T["_a2a"] < T["_ep_hide"]  # the window covers 4 all-to-alls
    # ... only with the CP remainder in it: tp_overlap_frac × the MoE layer's compute alone
    # (ep_hide less tp_overlap_frac × c_cp, hardware/calibration.json) would leave some exposed
    k = _calibration_file()["tp_overlap_frac"]["value"]
    assert T["_ep_hide"] - k * c_cp < T["_n_a2a"] * T["_a2a"]
    assert base["t_ep_comm_s"] == 0.0
    for other in (low, no_flash):
        r = planner.evaluate(other).results
        assert r["t_compute_s"] > base["t_compute_s"]
        assert r["step_time_s"] >= base["step_time_s"] * (1 - 1e-12)


def test_activation_swap_does_not_depend_on_an_optimizer_offload_row_in_the_batch():
    """Found by a batch-independence property test: a row that swaps activations but does not
    offload its optimizer had the gradient download of the optimizer offload subtracted from its
    exposed swap whenever another row of the batch offloaded its optimizer (Mixtral 8x7B on 96
    MI325X: t_offload 0.041 s alone, 0.012 s beside such a row). docs/timing.md, t_offload_s: the
    swap moves 2·act_offload_traffic_bytes over the host link, hidden behind the compute and the
    exposed CP / EP / DP remainders; here (no CP, no EP) by hand:
    2 × act / (63 GB/s PCIe 5 × 0.8 link efficiency) − (t_compute + t_dp)."""
    import copy
    d = {"model": "llama3-8b", "cluster": {"system": "dgx-h100", "n_gpus": 8},
         "training": {"seq_len": 1024, "global_batch_size": 32, "micro_batch_size": 1},
         "parallelism": {"tp": 1, "pp": 1, "dp": 8, "zero_stage": 0, "recompute": "selective",
                         "offload_activations": True},
         "checkpoint": {"tiers": [{"tier": "pfs"}]}}
    r = planner.evaluate(d).results
    hand = 2.0 * r["act_offload_traffic_bytes"] / (63e9 * 0.8) - (r["t_compute_s"] + r["t_dp_comm_exposed_s"])
    assert hand > 0.05  # the swap is exposed: the case the window matters for
    assert r["t_offload_s"] == pytest.approx(hand, rel=1e-12)
    e = copy.deepcopy(d)
    e["parallelism"].update(offload_optimizer="cpu", offload_activations=False)
    both = planner.evaluate_many([d, e])
    assert both["t_offload_s"].iloc[0] == pytest.approx(hand, rel=1e-12)
    assert both["step_time_s"].iloc[0] == pytest.approx(r["step_time_s"], rel=1e-12)


def test_materialised_attention_drops_the_dropout_traffic_without_dropout():
    # Without flash attention the s x s scores go through HBM: softmax read 2 + write 2 B per score
    # element forward, and with dropout > 0 the dropout's read 2 + write 2 + mask 1 = 5 B more
    # (Korthikanti et al. 2022 §4.1); backward twice the forward. Llama 3 8B (dropout 0, 32 heads,
    # 32 layers) on 64 H100, TP 1 PP 1 CP 1, micro-batch 1, seq 8192, global batch 512 -> m = 8
    # micro-batches, no recompute (passes: fwd + 2 x bwd = 3):
    # delta = m · L · 5 B · (b · a · s · s) · 3 / (3.35e12 B/s · 0.84)
    #       = 8 · 32 · 5 · (32 · 8192²) · 3 / 2.814e12 = 2.930 s of compute.
    from planner import catalog

    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["parallelism"].update(cp=1, dp=None, flash_attention=False, recompute="none")
    m = catalog.models()["llama3-8b"].model_dump(mode="json")
    assert m["dropout"] == 0.0
    d["model"] = dict(m)
    no_dropout = planner.evaluate(d).results["t_compute_s"]
    d["model"] = dict(m, dropout=0.1)
    with_dropout = planner.evaluate(d).results["t_compute_s"]
    expected = 8 * 32 * 5 * (32 * 8192**2) * 3 / (3.35e12 * 0.84)
    assert with_dropout - no_dropout == pytest.approx(expected, rel=1e-9)
    # with flash attention the scores never reach HBM: dropout changes nothing here
    d["parallelism"]["flash_attention"] = True
    d["model"] = dict(m)
    a = planner.evaluate(d).results["t_compute_s"]
    d["model"] = dict(m, dropout=0.1)
    assert planner.evaluate(d).results["t_compute_s"] == a


def test_fp8_on_a_part_whose_fp8_peak_equals_its_bf16_peak_still_runs_fp8():
    # Gaudi 3's MME runs FP8 at its BF16 rate (1,835 TFLOP/s both, hardware/accelerators.json). FP8
    # GEMMs there still move 1-byte operands and, row-wise, pay torchao's casts; a 2 % faster FP8
    # unit can then only shorten the step (found by a property test: the unit was taken to exist
    # only above the 16-bit peak, so 1,835 -> 1,871.7 TFLOP/s made the row-wise step 9 % slower).
    from planner import catalog

    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["cluster"].update(system="gaudi3-8", n_gpus=64)
    d["training"].update(precision="fp8", fp8_scaling="rowwise")
    acc = catalog.accelerators()["gaudi3"].model_dump(mode="json")
    assert acc["peak_flop_per_s"]["fp8"] == acc["peak_flop_per_s"]["bf16"]
    rw = planner.evaluate(d)
    assert not any("has no effect" in n for n in rw.notes)
    d["training"]["fp8_scaling"] = "tensorwise"
    tw = planner.evaluate(d).results["step_time_s"]
    assert rw.results["step_time_s"] > tw  # the row-wise casts are charged
    for scaling, base in (("tensorwise", tw), ("rowwise", rw.results["step_time_s"])):
        faster = dict(acc, peak_flop_per_s=dict(acc["peak_flop_per_s"], fp8=1.02 * acc["peak_flop_per_s"]["fp8"]))
        d["cluster"]["accelerator"] = faster
        d["training"]["fp8_scaling"] = scaling
        assert planner.evaluate(d).results["step_time_s"] <= base
        d["cluster"]["accelerator"] = None


def test_dp_last_bucket_floor_is_one_bucket_collective():
    # Llama 3 8B, ZeRO-1 over dp = 64 H100 (8 nodes), collectives hidden but for the last bucket:
    # bucket = max(40e6, 1e6 · 64) = 64e6 params; ring bw = min(NVLink 450e9·0.8, 8 GPUs · NIC
    # 50e9·0.92) = 360e9 B/s; latency of a pass max((8−1)·2 µs + (8−1)·5 µs, (64−1)·2 µs) = 126 µs
    # (comm: never below the same ring inside one domain);
    # Xb = 63/64 · 64e6 / 360e9 s per byte-per-param: reduce-scatter fp32 4·Xb + α, gather bf16 2·Xb + α.
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["parallelism"].update(cp=1, dp=None, zero_stage=1, recompute="none")
    xb, alpha = 63 / 64 * 64e6 / 360e9, max(7 * 2e-6 + 7 * 5e-6, 63 * 2e-6)
    assert planner.evaluate(d).results["t_dp_comm_exposed_s"] == pytest.approx(6 * xb + 2 * alpha, rel=1e-9)


def test_more_parameters_never_shorten_the_step_through_the_dp_floor():
    # Found by a property test: the floor was the share bucket / P_local of the whole collective,
    # so parameters on a cheaper path (experts over an expert group of one) or more of them (the
    # latency per parameter) lowered it: a GPT-OSS-like MoE on 2,048 B200 (ZeRO-0, dp = ep = 16),
    # FFN and expert width × 2, went 0.141406 → 0.141240 s. Now the floor is one bucket's
    # collective over the dense group, whatever the rest of the model.
    import copy

    m = planner.catalog.models()["gpt-oss-120b"].model_dump(mode="json")
    m.update(n_layers=48, name="gpt-oss-like")
    m["moe"].update(n_experts=32)
    d = planner.load_preset("default").to_json_dict()
    d["model"] = m
    d["cluster"].update(system="dgx-b200", n_gpus=2048)
    d["parallelism"].update(tp=8, pp=16, cp=1, ep=16, dp=None, vpp=1, schedule="interleaved", zero_stage=0,
                            sequence_parallel=True, recompute="op_sac", attention_kernel="flash2",
                            ep_comm_overlap=True, layer_split="uneven")
    d["training"].update(global_batch_size=512, micro_batch_size=1, seq_len=1024, precision="fp4")
    base = planner.evaluate(d).results
    wide = copy.deepcopy(d)
    wide["model"]["ffn_hidden_size"] *= 2
    wide["model"]["moe"]["expert_ffn_hidden_size"] *= 2
    r = planner.evaluate(wide).results
    assert r["step_time_s"] > base["step_time_s"]
    assert r["t_dp_comm_exposed_s"] >= base["t_dp_comm_exposed_s"]


def test_hsdp_dp_floor_keeps_the_last_bucket_s_replica_all_reduce():
    # HSDP with one shard rank (dp_shard = 1, ZeRO-1) on Llama 3 8B, 64 H100: nothing to
    # reduce-scatter or gather, the gradients all-reduced over the 64 replicas once per step, as
    # ZeRO-0 does. The last bucket's all-reduce cannot hide: bucket = max(40e6, 1e6 · 64) = 64e6
    # params of fp32 gradients, ring over 64 ranks in 8 nodes: bw = min(450e9·0.8, 8·50e9·0.92) =
    # 360e9 B/s, latency max((8−1)·2 µs + (8−1)·5 µs, (64−1)·2 µs) = 126 µs per pass:
    # 2 · (63/64 · 4 · 64e6 / 360e9 + 126e-6) = 1.652 ms, for ZeRO-1, 2 and 3 alike.
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["parallelism"].update(cp=1, dp=None, dp_shard=1, recompute="none")
    hand = 2 * (63 / 64 * 4 * 64e6 / 360e9 + max(7 * 2e-6 + 7 * 5e-6, 63 * 2e-6))
    for z in (1, 2, 3):
        d["parallelism"]["zero_stage"] = z
        assert planner.evaluate(d).results["t_dp_comm_exposed_s"] == pytest.approx(hand, rel=1e-9), z
