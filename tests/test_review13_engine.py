"""Review 13 of the engine's memory and step-time models: regression tests for the defects found
by property tests over random scenarios built from the presets.

Each test states the physical relation it checks; the expected values come from that relation or
from a hand calculation, never from the engine's own earlier output.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import planner
from planner import catalog


def _deepseek_like(first_dense: int) -> dict:
    """DeepSeek-V3 (61 layers) with a narrow dense FFN (1,024) and a 32k vocabulary, on the
    DeepSeek-V3 preset's cluster with PP 16 under 1F1B: ranks 0–12 hold 4 layers, ranks 13–15
    hold 3 (61 = 16·3 + 13). With ``first_dense`` = 3 the dense layers are rank 0's first three."""
    d = planner.load_preset("deepseek-v3-h800-2048").to_json_dict()
    m = catalog.resolve_model("deepseek-v3").model_dump(mode="json")
    m["vocab_size"] = 32000
    m["ffn_hidden_size"] = 1024
    m["moe"]["first_dense_layers"] = first_dense
    d["model"] = m
    d["parallelism"].update(schedule="1f1b", vpp=1, layer_split="uneven")
    return d


def _evaluate(d):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return planner.evaluate(d)


def test_moe_middle_rank_with_only_moe_layers_paces_the_pipeline():
    """The slowest pipeline stage sets the step. With 3 cheap leading dense layers on rank 0,
    rank 1 holds 4 MoE layers and no head: exactly what rank 0 of the same model without dense
    layers holds (the embedding adds no compute), so its compute per micro-batch — and the
    step's compute, m × that — must be at least the all-MoE model's first stage's.

    Found by review: only the first and the last stage were costed, so the step was paced by the
    last stage (3 MoE layers + a small head, 105 ms a micro-batch) instead of rank 1 (124 ms):
    t_compute 12.60 s against 14.92 s, the step 15 % short."""
    with_dense = _evaluate(_deepseek_like(3))
    all_moe = _evaluate(_deepseek_like(0))
    # the all-MoE model is paced by its first stage: 4 MoE layers, no head
    assert "= 4 layers" in all_moe.explain["t_compute_s"] and "the first stage" in all_moe.explain["t_compute_s"]
    assert with_dense.results["t_compute_s"] == pytest.approx(all_moe.results["t_compute_s"], rel=1e-12)
    # the explain names the rank that paces the step
    assert "rank 1 of 16" in with_dense.explain["t_compute_s"]
    # the parts still add up to the step
    parts = ("t_compute_s", "t_tp_comm_s", "t_cp_comm_s", "t_ep_comm_s", "t_pp_bubble_s", "t_pp_p2p_s",
             "t_dp_comm_exposed_s", "t_offload_s", "t_optimizer_s")
    r = with_dense.results
    assert sum(r[k] for k in parts) == pytest.approx(r["step_time_s"], rel=1e-12)
    # the bubble is (p − 1)/m of the paced stage's compute + TP + CP + EP (Narayanan 2021):
    # m = 15360 / (1 · 128) = 120, p = 16
    base = r["t_compute_s"] + r["t_tp_comm_s"] + r["t_cp_comm_s"] + r["t_ep_comm_s"]
    assert r["t_pp_bubble_s"] == pytest.approx(15.0 / 120.0 * base, rel=1e-12)


def test_moe_middle_rank_candidate_is_batch_independent():
    """Rows are independent: the middle-rank candidate of one row must not change another row
    (a dense model, DualPipe, partial recompute, interleaving) evaluated in the same batch."""
    rows = [_deepseek_like(3), planner.load_preset("default").to_json_dict(),
            planner.load_preset("deepseek-v3-h800-2048").to_json_dict()]
    partial = copy.deepcopy(_deepseek_like(5))
    partial["parallelism"].update(recompute="full", recompute_layers=2)
    rows.append(partial)
    inter = copy.deepcopy(_deepseek_like(3))
    inter["parallelism"].update(schedule="interleaved", vpp=2, pp=8, dp=None)
    inter["training"]["global_batch_size"] = 16384  # m = 16384 / 256 = 64, a multiple of pp
    rows.append(inter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = planner.evaluate_many(rows)
    for i, d in enumerate(rows):
        one = _evaluate(d).results
        for k in ("step_time_s", "t_compute_s", "t_tp_comm_s", "t_pp_bubble_s", "t_dp_comm_exposed_s", "mfu"):
            np.testing.assert_allclose(df.loc[i, k], one[k], rtol=1e-12, err_msg=f"row {i} {k}")


def test_dualpipe_partial_recompute_tp_explain_multiplies_out():
    """The TP explain's product m × layers × n_coll × t_AR × exposed equals its total.

    Megatron 3.6B (30 layers) on PP 8 with DualPipe, an uneven split (stages 0–5 hold 4 layers,
    6–7 hold 3) and full recompute of 2 layers per chunk: rank 0 runs stage 0 (4 layers, 2 of them
    recomputed) and stage 7 (3 layers, 2 recomputed), half its micro-batches on each, so a micro-batch
    averages (4·4 + 2·2 + 3·4 + 2·2)/2 = 18 TP collectives over (4 + 3)/2 = 3.5 layers:
    n_coll = 36/7 = 5.143. Found by review: the explain showed the model's average 4 + 2·(2·8/30)
    = 5.067, 1.5 % off the total it printed."""
    import re

    d = planner.load_preset("default").to_json_dict()
    d["model"] = "megatron-3.6b"
    d["cluster"].update(system="gb200-nvl72", n_gpus=256)
    d["training"].update(seq_len=4096, global_batch_size=256, micro_batch_size=1)
    d["parallelism"].update(tp=2, pp=8, dp=None, cp=1, vpp=1, schedule="dualpipe", layer_split="uneven",
                            recompute="full", recompute_layers=2, zero_stage=1, sequence_parallel=False)
    r = _evaluate(d)
    text = r.explain["t_tp_comm_s"]
    num = r"([0-9][0-9,]*\.?[0-9]*(?:e[-+]?[0-9]+)?)"
    m = re.match(rf"m·layers·n_coll·t_AR·exposed = {num} × {num} × {num} × {num} ms .*\) × {num} = ", text)
    assert m, text
    mb, layers, n_coll, t_ar_ms, exposed = (float(g.replace(",", "")) for g in m.groups())
    assert mb == 16 and layers == 3.5
    assert n_coll == pytest.approx(36.0 / 7.0, abs=6e-4)  # printed to 4 significant digits
    # the product of the printed factors (t_AR to 3 significant digits) matches the column
    assert mb * layers * n_coll * t_ar_ms * 1e-3 * exposed == pytest.approx(r.results["t_tp_comm_s"], rel=2e-3)
