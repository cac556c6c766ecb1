"""Session 25 (a performance-modelling expert's hand check of the step-time explanations).

* op_sac with sequence parallelism re-runs the two all-gathers feeding K and W3. A ring all-gather
  of the b·s·h activations over t ranks takes (t−1)/t·msg/bw + α, half an all-reduce's
  2(t−1)/t·msg/bw + 2α, so the two are one all-reduce equivalent: 5 per layer, not 6.
* Pipeline sends without sequence parallelism stay at Narayanan et al. 2021 §4.1's b·s·h/t (the
  Megatron-LM 2021 rows ran it), and a note gives Megatron-Core's t× bound.
* MoE with TP > 1 and sequence parallelism off is priced (every token on every TP rank through
  the all-to-all) with a note that Megatron-Core refuses it.
"""

from __future__ import annotations

import pytest

import planner


def _eval(pid: str, **par):
    d = planner.load_preset(pid).to_json_dict()
    d["parallelism"].update(par)
    return planner.evaluate(d)


def test_op_sac_with_sp_adds_one_all_reduce_equivalent_by_hand():
    """Default preset (Llama 3 70B, TP 8 on one NVLink domain, SP on): t_tp_comm_s is
    m·layers·n·t_AR; the no-recompute run has n = 4, so op_sac's is 5/4 of it and full
    recompute's 6/4."""
    base = _eval("default", recompute="none").results["t_tp_comm_s"]
    op = _eval("default", recompute="op_sac").results["t_tp_comm_s"]
    full = _eval("default", recompute="full").results["t_tp_comm_s"]
    assert op == pytest.approx(base * 5 / 4, rel=1e-12)
    assert full == pytest.approx(base * 6 / 4, rel=1e-12)
    # the explanation's count is the one used (it read 16 × 20 × 6 × 0.68 ms = 1.306 s)
    assert " × 20 × 5 × " in _eval("default", recompute="op_sac").explain["t_tp_comm_s"]


def test_p2p_note_without_sp_gives_the_megatron_core_bound():
    rep = _eval("default", sequence_parallel=False)
    p2p = rep.results["t_pp_p2p_s"]
    note = [n for n in rep.notes if n.startswith("Pipeline sends without sequence parallelism")]
    assert len(note) == 1
    assert f"up to 8 × {p2p:.4g} s = {8 * p2p:.4g} s per step" in note[0]
    # the send itself is unchanged by SP: b·s·h/t either way (Narayanan §4.1)
    assert _eval("default", sequence_parallel=True).results["t_pp_p2p_s"] == pytest.approx(p2p, rel=1e-12)
    assert not [n for n in _eval("default").notes if n.startswith("Pipeline sends without")]


def test_moe_tp_without_sp_is_noted():
    off = _eval("mixtral-8x7b-h100-64", tp=2, dp=None, sequence_parallel=False)
    on = _eval("mixtral-8x7b-h100-64", tp=2, dp=None, sequence_parallel=True)
    tp1 = _eval("mixtral-8x7b-h100-64", tp=1, dp=None, sequence_parallel=False)
    key = "MoE with TP 2 and sequence parallelism off"
    assert any(n.startswith(key) for n in off.notes)
    assert not any(n.startswith("MoE with TP") for n in on.notes)
    assert not any(n.startswith("MoE with TP") for n in tp1.notes)
    # what the note says: the all-to-all carries every token on each TP rank, more than with SP
    assert off.results["t_ep_comm_s"] > on.results["t_ep_comm_s"]


def test_moe_collective_count_reads_as_used():
    """The explanation showed '(½ + ½·2 top_k·cf', which reads as ½·2·top_k·cf; it now names the
    product's value."""
    rep = _eval("mixtral-8x7b-h100-64", tp=2, dp=None, sequence_parallel=True)
    t = rep.explain["t_tp_comm_s"]
    assert "(½ + ½·top_k·cf = ½ + ½·2 on MoE layers" in t


def test_mlp_efficiency_label_names_the_up_projection():
    """The default preset's dense MLP: up-projection M = b·s = 8,192, K = 8,192, N = 2·28,672/8 =
    7,168 (gated, TP 8) and down-projection K = 3,584; the label shows the first one's efficiency
    and now says so (it read 'MLP GEMM eff')."""
    t = planner.evaluate(planner.load_preset("default")).explain["t_compute_s"]
    assert "MLP up-projection GEMM eff" in t and "MLP GEMM eff" not in t


def test_zero0_dp_window_is_the_backward_alone():
    """ZeRO-0 has no parameter gather, so only the backward hides the gradient all-reduce
    (timing: exp_ag × (zero >= 1)); the explanation no longer names a forward window."""
    t = _eval("default", zero_stage=0).explain["t_dp_comm_exposed_s"]
    assert "hidden behind backward" in t and "/ forward" not in t
    assert "/ forward" in _eval("default", zero_stage=1).explain["t_dp_comm_exposed_s"]


def test_ep_network_share_shown_only_with_node_limited_routing():
    mix = planner.evaluate(planner.load_preset("mixtral-8x7b-h100-64")).explain["t_ep_comm_s"]
    assert "network share" not in mix
    ds = planner.evaluate(planner.load_preset("deepseek-v3-h800-2048")).explain["t_ep_comm_s"]
    # DeepSeek-V3: top-8 routed to at most M = 4 nodes: min(8, 4)/8 = 0.5
    assert "network share × 0.5 (node-limited routing" in ds


def test_moe_note_without_ep_names_no_all_to_all():
    """At EP 1 there is no expert all-to-all (t_ep_comm_s 0): the note only says Megatron-LM refuses
    MoE with TP but no SP (its arguments.py check holds at any EP)."""
    rep = _eval("mixtral-8x7b-h100-64", tp=2, ep=1, dp=None, sequence_parallel=False)
    note = [n for n in rep.notes if n.startswith("MoE with TP 2")]
    assert len(note) == 1 and "all-to-all" not in note[0]
    assert "When using MoE and tensor parallelism, sequence parallelism must be used." in note[0]
    assert rep.results["t_ep_comm_s"] == 0.0


def test_op_sac_without_sp_in_moe_layers_adds_o_unscaled():
    """Mixtral (every layer MoE, top-2, cf 1) at TP 2, SP off: a layer's 4 collectives weigh
    ½ + ½·2 = 1.5 (the MLP half carries the routed tokens), and op_sac re-runs O's all-reduce,
    the attention half's, once: n_coll = 4 × 1.5 + 1 = 7, i.e. 7/6 of no recompute's 6
    (it read 7.5 = 5 × 1.5)."""
    none = _eval("mixtral-8x7b-h100-64", tp=2, dp=None, sequence_parallel=False, recompute="none")
    op = _eval("mixtral-8x7b-h100-64", tp=2, dp=None, sequence_parallel=False, recompute="op_sac")
    assert op.results["t_tp_comm_s"] == pytest.approx(none.results["t_tp_comm_s"] * 7 / 6, rel=1e-12)
    assert " × 7 × " in op.explain["t_tp_comm_s"]
    # with SP the two all-gathers are one unit spread like the others: 5 × 1.5 = 7.5
    none_sp = _eval("mixtral-8x7b-h100-64", tp=2, dp=None, sequence_parallel=True, recompute="none")
    op_sp = _eval("mixtral-8x7b-h100-64", tp=2, dp=None, sequence_parallel=True, recompute="op_sac")
    assert op_sp.results["t_tp_comm_s"] == pytest.approx(none_sp.results["t_tp_comm_s"] * 7.5 / 6, rel=1e-12)


@pytest.mark.parametrize("pid,gp,ap", [
    # selective recompute, flash on H100 (d_h 128, knee 64): fwd + 2 bwd; core fwd + bwd + 1 fwd, its
    # backward (2.5·128 + 64)/(128 + 64) = 2 × the forward (timing.flash_bwd_over_fwd: one exp per score
    # element in each pass; 2.5 before session 37)
    ("default", 3.0, 4.0),
    ("gpt3-175b-a100-1024", 4.0, 4.0),  # full recompute, materialised scores: fwd + 2 bwd + 1; core 1 + 2 + 1
])
def test_passes_rebuild_the_layer_time(pid, gp, ap):
    """The explanation now states the pass multipliers, so a dense layer's time per micro-batch is
    gp × (attention projections + MLP + elementwise) + ap × attention core, from its own numbers
    (default: 3 × (0.529 + 2.15 + 0.122) + 4 × 0.518 = 10.47 ms, shown as 10.5 ms)."""
    import numpy as np

    from planner import batch, model_stats, timing

    s = planner.load_preset(pid)
    t = planner.evaluate(s).explain["t_compute_s"]
    assert f"GEMMs and elementwise × {gp:g}, attention core × {ap:g}" in t
    b = batch.from_scenarios([s])
    b.update(model_stats.stats(b))
    T = {k: float(np.asarray(v).reshape(-1)[0]) for k, v in timing._terms(b).items()
         if np.size(v) >= 1 and np.asarray(v).dtype.kind in "fib"}
    want = gp * (T["_t_attn_proj"] + T["_t_mlp_dense"] + T["_t_elem_dense"]) + ap * T["_t_core"]
    assert T["_layer_mb"] == pytest.approx(want, rel=1e-12)


def test_moe_compute_names_its_load_imbalance_factor():
    """The MoE MLP's explanation said 'routed experts × load imbalance' without the factor; it now
    prints moe_capacity_factor (Mixtral's model with capacity_factor 1.25 inline)."""
    s = planner.load_preset("mixtral-8x7b-h100-64")
    d = s.to_json_dict()
    m = s.resolved_model().model_dump(by_alias=True)
    m["moe"]["capacity_factor"] = 1.25
    d["model"] = m
    t = planner.evaluate(d).explain["t_compute_s"]
    assert "routed experts × load imbalance 1.25 (moe_capacity_factor)" in t
