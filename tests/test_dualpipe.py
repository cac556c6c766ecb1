"""DualPipe (DeepSeek-V3 technical report, arXiv:2412.19437, §3.2.1 and Table 2).

Table 2: bubble (PP/2 − 1)(F&B + B − 3W), parameters 2×, activations PP + 1. With F&B = F + B and
W = B/2 (the model's stated choices) the bubble is (PP/2 − 1)(F + B/2) per step.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import planner
from planner import timing
from planner.presets import preset_json
from planner.schema import InputError


def _ds(schedule, **par):
    d = planner.load_preset("deepseek-v3-h800-2048").to_json_dict()
    d["parallelism"].update(schedule=schedule, **par)
    return d


def test_bubble_fraction_by_hand():
    # p = 16, m = 120, F = 1, B = 2: (8 − 1)·(1 + 1) / (120·3) = 14/360
    assert timing.dualpipe_bubble_fraction(16, 120, 1.0, 2.0) == pytest.approx(14 / 360, rel=1e-15)
    # with a recomputed forward R inside B: W = (B − R)/2 → (p/2 − 1)(F + B/2 + 3R/2)
    assert timing.dualpipe_bubble_fraction(16, 120, 1.0, 3.0, 1.0) == pytest.approx(7 * 4 / (120 * 4), rel=1e-15)
    # p = 2: no bubble term left (PP/2 − 1 = 0)
    assert timing.dualpipe_bubble_fraction(2, 8, 1.0, 2.0) == 0.0
    # against 1F1B's (p − 1)/m: about a third for B = 2F and large p
    f1 = (64 - 1) / 256
    assert timing.dualpipe_bubble_fraction(64, 256, 1.0, 2.0) / f1 == pytest.approx(31 * 2 / (63 * 3), rel=1e-12)


def test_step_bubble_uses_the_stage_forward_and_backward():
    r = planner.evaluate(_ds("dualpipe"))
    b = planner.batch.from_scenarios([planner.Scenario.model_validate(_ds("dualpipe"))])
    b.update(planner.model_stats.stats(b))
    b.update(planner.memory.stage(b))
    T = timing._terms(b)
    F, B, Rc, m = (float(np.asarray(T[k]).reshape(-1)[0]) for k in ("_t_fwd_mb", "_t_bwd_mb", "_t_rec", "_m"))
    assert 0 < Rc < B  # the preset recomputes fully: the recomputed forward is inside B
    R = r.results
    work = R["t_compute_s"] + R["t_tp_comm_s"] + R["t_cp_comm_s"] + R["t_ep_comm_s"]
    # W = (B − R)/2: (p/2 − 1)(F + B + B − 3(B − R)/2) = (p/2 − 1)(F + B/2 + 3R/2)
    expected = (16 / 2 - 1) * (F + B / 2 + 1.5 * Rc) / (m * (F + B)) * work
    assert R["t_pp_bubble_s"] == pytest.approx(expected, rel=1e-12)


def _stages(schedule):
    from planner import batch, memory, model_stats
    b = batch.from_scenarios([planner.Scenario.model_validate(_ds(schedule))])
    b.update(model_stats.stats(b))
    return memory.per_stage(b, 0)


def test_memory_two_stages_of_parameters_and_p_plus_1_in_flight():
    """Rank j holds stages j and p−1−j: its weights, gradients and optimizer states are the 1F1B
    ranks j and p−1−j together (the embedding and head on both end ranks); activations are
    p + 1 micro-batches (DeepSeek-V3 Table 2), instead of 1F1B's p − j of rank j's own layers:
    p − h of them on the stage h = min(j, p−1−j) and h + 1 on the other (the peak of
    ``DualPipe.step()`` in deepseek-ai/DualPipe: steps 1–2 run 2(p/2 − h − 1) + h + 1 = p − h − 1
    forwards of the earlier chunk and h + 1 of the later one, step 4 opens with one more forward of
    the earlier chunk; review 26: until 2026-12-03 half on each)."""
    one, dual = _stages("1f1b"), _stages("dualpipe")
    p = len(one)
    for j in range(p):
        for k in ("mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes"):
            assert dual[j][k] == pytest.approx(one[j][k] + one[p - 1 - j][k], rel=1e-12), (j, k)
    # In flight: 1F1B min(m, p − j), DualPipe min(m, p + 1) (m = 120 here). Ranks 1..12 hold 4 MoE
    # layers each (61 layers over 16 stages: 13 of 4, 3 of 3; 3 dense layers on rank 0), so one
    # micro-batch's activations there are one[1] − one[2], 3/4 of that on ranks 13..15. DualPipe
    # rank j keeps p − h micro-batches at the size of its earlier stage h = min(j, p−1−j) and h + 1
    # at its later one's: for j < p/2 its own stage is the earlier one.
    per_mb = one[1]["mem_activations_bytes"] - one[2]["mem_activations_bytes"]
    assert per_mb > 0
    for j in range(1, 12):
        mirror = per_mb * (3 / 4 if p - 1 - j >= 13 else 1.0)
        h = min(j, p - 1 - j)
        n_own, n_mirror = (p - h, h + 1) if j < p / 2 else (h + 1, p - h)
        assert n_own + n_mirror == p + 1
        assert dual[j]["mem_activations_bytes"] - one[j]["mem_activations_bytes"] == pytest.approx(
            n_own * per_mb + n_mirror * mirror - (p - j) * per_mb, rel=1e-9), j
    # the reverse pipeline's head: logits on both end ranks
    assert dual[0]["mem_logits_bytes"] == dual[p - 1]["mem_logits_bytes"] == one[p - 1]["mem_logits_bytes"] > 0
    assert dual[1]["mem_logits_bytes"] == 0.0


def test_dualpipe_rules():
    d = planner.load_preset("llama3-70b-h100-1024").to_json_dict()  # 80 layers, 1,024 GPUs, tp 8
    d["parallelism"].update(schedule="dualpipe", vpp=1, pp=5, dp=None, layer_split="uneven")
    d["cluster"]["n_gpus"] = 1000                   # tp 8 × pp 5 × dp 25
    d["training"]["global_batch_size"] = 1000
    with pytest.raises(InputError, match="needs an even pp >= 2"):
        planner.evaluate(d)
    d["cluster"]["n_gpus"] = 1024
    d["parallelism"]["pp"] = 4                      # dp = 32
    d["training"]["global_batch_size"] = 32 * 15     # 15 micro-batches per DP rank: odd
    with pytest.raises(InputError, match="even number of micro-batches"):
        planner.evaluate(d)
    d["training"]["global_batch_size"] = 32 * 16
    assert planner.evaluate(d).results["step_time_s"] > 0


def test_dualpipe_most_loaded_middle_rank_by_enumeration():
    # Rank j holds stages j and p-1-j (DeepSeek-V3 §3.2.1); stages 0 .. r-1 carry the extra layer
    # of an uneven split. Count by enumeration over the middle ranks 1 .. p-2 and compare with the
    # closed-form rule the timing model uses (all three branches: 2, 1 and 0 extra stages).
    from planner.timing import dualpipe_middle_extra_stages

    seen = set()
    for p in range(4, 66, 2):
        for r in range(p):
            brute = max(int(j < r) + int(p - 1 - j < r) for j in range(1, p - 1))
            assert dualpipe_middle_extra_stages(r, p) == brute, (p, r)
            seen.add(brute)
    assert seen == {0, 1, 2}


def test_sweep_generates_dualpipe_only_where_valid():
    s = planner.load_preset("llama3-70b-h100-1024")
    df = planner.sweep(s, schedules=("1f1b", "dualpipe"), tp=[8], pp=[2, 4, 5], cp=[1], zero_stages=[1],
                       recompute=["selective"])
    dual = df[df["schedule"] == "dualpipe"]
    assert len(dual) and set(dual["pp"]) <= {2, 4}
    m = s.training.global_batch_size // (dual["micro_batch_size"] * dual["dp"])
    assert (m % 2 == 0).all()


def test_dualpipe_needs_at_least_two_micro_batches_per_rank_pair():
    """DeepSeek's reference dualpipe.py asserts num_chunks >= num_ranks * 2."""
    d = planner.load_preset("llama3-70b-h100-1024").to_json_dict()
    d["parallelism"].update(schedule="dualpipe", vpp=1, pp=8, dp=None)   # dp = 16
    d["training"]["global_batch_size"] = 16 * 14                         # m = 14 < 16
    with pytest.raises(InputError, match="at least 2·pp = 16"):
        planner.evaluate(d)
    d["training"]["global_batch_size"] = 16 * 16
    assert planner.evaluate(d).results["t_pp_bubble_s"] > 0


def test_zero3_per_micro_batch_collectives_cover_one_stage():
    """A DualPipe micro-batch passes through one of the rank's two stages: ZeRO-3 gathers and
    reduce-scatters per micro-batch carry one stage (as 1F1B); only the optimizer step doubles."""
    from planner import batch, memory, model_stats

    def terms(schedule):
        d = planner.load_preset("llama3-70b-h100-1024").to_json_dict()
        d["parallelism"].update(vpp=1, schedule=schedule, zero_stage=3)
        b = batch.from_scenarios([planner.Scenario.model_validate(d)])
        b.update(model_stats.stats(b))
        b.update(memory.stage(b))
        T = timing._terms(b)
        return {k: float(np.asarray(T[k]).reshape(-1)[0]) for k in ("_t_param_ag", "_m", "t_optimizer_s", "_t_dp_total")}

    one, dual = terms("1f1b"), terms("dualpipe")
    assert dual["_t_param_ag"] == pytest.approx(one["_t_param_ag"], rel=1e-12)
    assert dual["_t_dp_total"] == pytest.approx(one["_t_dp_total"], rel=1e-12)
    assert dual["t_optimizer_s"] == pytest.approx(2 * one["t_optimizer_s"], rel=1e-12)


def test_cli_sweep_schedules_option():
    from test_cli import run
    rc, out, err = run("sweep", "--preset", "llama3-70b-h100-1024", "--schedules", "1f1b,dualpipe", "--top", "5",
                       "--format", "json")
    assert rc == 0, err
    rc, _, err = run("sweep", "--preset", "llama3-70b-h100-1024", "--schedules", "dual")
    assert rc == 2 and "--schedules 'dual'" in err and "dualpipe" in err


def test_dualpipe_bubble_weighs_each_pass_with_its_exposed_cp_remainder():
    """Found by a property test: flash attention off shortened DualPipe steps with CP (Llama 2 7B,
    PP 6 × CP 8 on 192 B300, selective recompute: 0.4880 → 0.4873 s; 0.4869 s either way since). The bubble
    (p/2 − 1)(F + B/2 + 3R/2) (DeepSeek-V3 Table 2) is applied to compute + communication, but F and
    B were weighed on compute alone. Ring-bound in both passes, each pass of each layer takes
    max(ring hops, attention core): the core's speed changes neither F nor B, so flash attention
    on or off must give the same compute + CP time, the same bubble and the same step."""
    import copy

    d = {"model": "llama2-7b", "cluster": {"system": "dgx-b300", "n_gpus": 192},
         "training": {"seq_len": 8192, "micro_batch_size": 2, "global_batch_size": 48},
         "parallelism": {"tp": 2, "pp": 6, "cp": 8, "dp": 2, "schedule": "dualpipe", "layer_split": "uneven",
                         "recompute": "selective", "sequence_parallel": False, "zero_stage": 3,
                         "tp_comm_overlap": True},
         "checkpoint": {"tiers": [{"tier": "pfs"}]}}
    on = planner.evaluate(d).results
    off_d = copy.deepcopy(d)
    off_d["parallelism"]["flash_attention"] = False
    off = planner.evaluate(off_d).results
    assert off["t_compute_s"] > on["t_compute_s"] * 1.05 and off["t_cp_comm_s"] < on["t_cp_comm_s"]
    assert off["t_compute_s"] + off["t_cp_comm_s"] == pytest.approx(on["t_compute_s"] + on["t_cp_comm_s"], rel=1e-12)
    assert off["t_pp_bubble_s"] == pytest.approx(on["t_pp_bubble_s"], rel=1e-12)
    assert off["step_time_s"] == pytest.approx(on["step_time_s"], rel=1e-12)


def _dual_case(rng):
    """A random DualPipe scenario of a DeepSeek-V3-shaped model (MLA, leading dense layers, MTP or
    not), small enough to evaluate quickly: p even in 2..16, layers and dense layers at random, an
    uneven split, any recompute, micro-batches m >= 2p."""
    import json
    models = json.load(open(Path(__file__).resolve().parents[1] / "presets" / "models.json"))
    m = {k: v for k, v in models["deepseek-v3"].items()
         if k not in ("source", "published_params_total", "published_params_active")}
    p = int(rng.choice([2, 4, 6, 8, 10, 12, 16]))
    L = int(rng.integers(p + 1, 4 * p + 3))
    m["n_layers"] = L
    m["moe"] = {**m["moe"], "first_dense_layers": int(rng.integers(0, min(L - 1, 2 * p) + 1))}
    m["mtp_layers"] = int(rng.choice([0, 0, 1, 2]))
    d = preset_json("deepseek-v3-h800-2048")
    d["model"] = m
    n_dp = 128  # tp 1: dp 128 on p·128 GPUs, the preset's ep 64 within it
    d["cluster"]["n_gpus"] = p * n_dp
    mb = int(rng.choice([1, 2]))
    mm = 2 * p * int(rng.integers(1, 4))  # micro-batches: even, >= 2p
    d["training"]["micro_batch_size"] = mb
    d["training"]["global_batch_size"] = mm * mb * n_dp
    rc = str(rng.choice(["none", "selective", "full", "full"]))
    d["parallelism"].update(pp=p, dp=None, tp=1, vpp=1, schedule="dualpipe", layer_split="uneven", recompute=rc)
    if rc == "full" and rng.random() < 0.5:
        # partial recompute (Megatron's block method): each stage's working set less what its own
        # later layers freed (review 26, h26b: the rank's own stage alone broke the symmetry)
        chunk = -(-L // p)  # the layers of a pipeline chunk: the schema's bound
        d["parallelism"]["recompute_layers"] = int(rng.integers(1, min(3, chunk) + 1))
    return d


def test_dualpipe_headline_memory_is_the_max_over_every_rank_on_random_layouts():
    """Review 26: with p − h micro-batches on the stage h = min(j, p−1−j) and h + 1 on the other, a
    rank's load is no longer flat between the layout's breakpoints but linear in h; the candidate
    ranks (both ends of every piece) must still find the most loaded rank. Checked against every
    rank (per_stage) on 60 random layouts, alone and as one batch."""
    from planner import batch, engine, memory

    rng = np.random.default_rng(26)
    cases = [planner.Scenario.model_validate(_dual_case(rng)) for _ in range(60)]
    b = batch.from_scenarios(cases)
    out = engine.run_batch(b)
    interior = 0
    for i, s in enumerate(cases):
        stages = memory.per_stage(out, i)
        best = max(st["mem_total_bytes"] for st in stages)
        assert out["mem_total_bytes"][i] == best, (i, s.parallelism.pp)
        one = engine.run_batch(batch.from_scenarios([s]))
        assert one["mem_total_bytes"][0] == out["mem_total_bytes"][i]
        j = int(out["mem_worst_stage"][i])
        assert stages[j]["mem_total_bytes"] == best
        # activations alone, too: their largest rank is often a middle one
        best_act = max(range(len(stages)), key=lambda k: stages[k]["mem_activations_bytes"])
        interior += 0 < best_act < len(stages) - 1
    assert interior > 5  # the layouts do reach middle ranks


def test_dualpipe_ranks_j_and_p_minus_1_minus_j_are_loaded_alike():
    """Ranks j and p−1−j hold the same two stages with the same micro-batches in flight (p − h on
    the earlier, h + 1 on the later), and both end ranks the embedding and the head: every memory
    part is the same, bit for bit, also under partial recompute (``recompute_layers``: each stage's
    working set less what its own later layers freed). ``memory._candidates`` relies on it (it
    tries the first half of the ranks only)."""
    from planner import batch, engine, memory

    rng = np.random.default_rng(7)
    cases = []
    for _ in range(80):
        d = _dual_case(rng)
        d["model"]["vocab_size"] = int(rng.choice([1024, 32000, 129280]))
        if not d["parallelism"].get("recompute_layers"):  # keep the drawn partial recompute
            d["parallelism"]["recompute"] = str(rng.choice(["none", "selective", "full", "op_sac"]))
        d["parallelism"]["offload_activations"] = bool(rng.random() < 0.3)
        cases.append(planner.Scenario.model_validate(d))
    out = engine.run_batch(batch.from_scenarios(cases))
    checked = 0
    for i in range(len(cases)):
        st = memory.per_stage(out, i)
        p = len(st)
        for j in range(p // 2):
            a, b = dict(st[j]), dict(st[p - 1 - j])
            a.pop("stage"), b.pop("stage")
            assert a == b, (i, p, j)
            checked += 1
        assert out["mem_total_bytes"][i] == max(x["mem_total_bytes"] for x in st)
    assert checked > 200
    assert sum(bool(c.parallelism.recompute_layers) for c in cases) >= 5  # partial recompute is drawn


def test_dualpipe_partial_recompute_finds_the_most_loaded_rank():
    """Found by review 26 (h26b): Mixtral 8x7B with 29 layers, 8 of them dense, on DualPipe at pp 12
    (uneven), full recompute of 2 layers per chunk: rank 8's own stage freed less than rank 3's, so
    rank 8 was 0.8 GiB heavier than its mirror rank 3 and the headline (75.29 GiB, rank 3) missed it
    (76.11 GiB). Each stage's working set is now its own less its own freed layers: ranks 3 and 8
    alike, and the headline is the most loaded rank."""
    import json
    from planner import batch, engine, memory

    models = json.load(open(Path(__file__).resolve().parents[1] / "presets" / "models.json"))
    m = {k: v for k, v in models["mixtral-8x7b"].items()
         if k not in ("source", "published_params_total", "published_params_active")}
    m["n_layers"] = 29
    m["moe"] = {**m["moe"], "first_dense_layers": 8}
    d = preset_json("mixtral-8x7b-h100-64")
    d["model"] = m
    d["cluster"]["n_gpus"] = 12 * 16
    d["training"]["global_batch_size"] = 16 * 24
    d["parallelism"].update(pp=12, dp=None, tp=1, ep=8, vpp=1, schedule="dualpipe", layer_split="uneven",
                            recompute="full", recompute_layers=2)
    s = planner.Scenario.model_validate(d)
    out = engine.run_batch(batch.from_scenarios([s]))
    st = memory.per_stage(out, 0)
    tot = [x["mem_total_bytes"] for x in st]
    assert tot == tot[::-1]  # rank j as rank p − 1 − j
    assert out["mem_total_bytes"][0] == max(tot)
    assert max(tot) > tot[0]  # a middle rank is the most loaded


def _interleaved_moe_case(rng):
    """A DeepSeek-V3-shaped model under the interleaved schedule (leading dense layers: the middle
    candidates of memory._candidates), p in 2..8, vpp 2 or 3, uneven split."""
    d = _dual_case(rng)
    p = d["parallelism"]["pp"]
    if p > 8:
        p = 8
        d["parallelism"]["pp"] = p
        d["cluster"]["n_gpus"] = p * 128
    L = d["model"]["n_layers"]
    v = int(rng.choice([2, 3]))
    d["model"]["n_layers"] = L = max(L, p * v + 1)
    d["model"]["moe"]["first_dense_layers"] = int(rng.integers(1, min(L - 1, 2 * p) + 1))
    mm = p * int(rng.integers(1, 4))
    d["training"]["global_batch_size"] = mm * d["training"]["micro_batch_size"] * 128
    d["parallelism"].update(schedule="interleaved", vpp=v, recompute_layers=None)
    if d["parallelism"]["recompute"] == "full" and rng.random() < 0.5:
        # partial recompute under interleaving: at most a chunk's layers (the schema's bound)
        d["parallelism"]["recompute_layers"] = int(rng.integers(1, max(1, L // (p * v)) + 1))
    return d


def test_memory_candidates_stacked_equal_each_rank_alone():
    """The ranks past the two ends (DualPipe's first-half breakpoints, the MoE middle ranks) are
    costed in one ``_stage_parts`` call on an array (k, N) of ranks (session 51: 0.17 ms of a
    DeepSeek-V3 evaluate). Each candidate's components must be those of a call at its rank alone,
    bit for bit, in a batch of many rows and in a batch of one, and no two candidates may be at the
    same rank in every row (the duplicates are dropped, as before)."""
    from planner import batch, memory, model_stats

    rng = np.random.default_rng(51)
    cases = [planner.Scenario.model_validate(_dual_case(rng)) for _ in range(30)]
    cases += [planner.Scenario.model_validate(_interleaved_moe_case(rng)) for _ in range(30)]

    def check(b):
        b = {**b, **model_stats.stats(b)}
        cands = memory._candidates(b)
        cm = memory._common(b)
        n = len(b["tp"])
        assert len(cands) >= 2
        extra = 0
        for i, (j, parts) in enumerate(cands[2:]):
            alone = memory._stage_parts(cm, j)
            assert parts.keys() == alone.keys()
            for k in parts:
                x = np.broadcast_to(parts[k], (n,))
                y = np.broadcast_to(alone[k], (n,))
                assert np.array_equal(x, y, equal_nan=True), (k, i)
            for j0, _ in cands[:i + 2]:
                assert not np.array_equal(np.broadcast_to(j0, (n,)), np.broadcast_to(j, (n,)))
            extra += 1
        return extra

    assert check(batch.from_scenarios(cases)) >= 3
    many = [check(batch.from_scenarios([s])) for s in cases]
    assert sum(many[:30]) > 30 and sum(many[30:]) > 10  # DualPipe and middle ranks were stacked


def test_memory_candidates_uniform_batch_stays_narrow_and_large_batches_go_rank_by_rank(monkeypatch):
    """Review 51: a batch of like rows (evaluate_many of one split, a sweep varying only the price)
    costs its stacked ranks as (k, 1), not (k, N) (6-8x slower on 16,384 rows); above
    memory.STACK_MAX_ROWS rows the ranks are costed one call each. Both give the same values, bit
    for bit, as the stacked call on every row."""
    from planner import batch, memory, model_stats

    s = planner.Scenario.model_validate(preset_json("deepseek-v3-h800-2048"))
    b = dict(batch.from_scenarios([s] * 50))
    b.update(model_stats.stats(b))
    shapes = []
    orig = memory._stage_parts

    def spy(cm, j, **k):
        shapes.append(np.shape(j))
        return orig(cm, j, **k)

    monkeypatch.setattr(memory, "_stage_parts", spy)
    ref = memory.stage(b)
    assert (4, 1) in shapes and not any(len(sh) == 2 and sh[1] == 50 for sh in shapes)
    one = memory.stage({**dict(batch.from_scenarios([s])), **model_stats.stats(dict(batch.from_scenarios([s])))})
    for k in ref:
        assert np.array_equal(ref[k], np.broadcast_to(one[k], ref[k].shape)), k
    # a mixed batch, stacked (default) against rank by rank (STACK_MAX_ROWS 0)
    rng = np.random.default_rng(7)
    cases = [planner.Scenario.model_validate(_dual_case(rng)) for _ in range(20)]
    cases += [planner.Scenario.model_validate(_interleaved_moe_case(rng)) for _ in range(20)]
    m = dict(batch.from_scenarios(cases))
    m.update(model_stats.stats(m))
    shapes.clear()
    stacked = memory.stage(m)
    assert any(len(sh) == 2 and sh[1] == 40 for sh in shapes)
    monkeypatch.setattr(memory, "STACK_MAX_ROWS", 0)
    shapes.clear()
    by_rank = memory.stage(m)
    assert shapes and all(len(sh) <= 1 for sh in shapes)
    for k in stacked:
        assert np.array_equal(stacked[k], by_rank[k], equal_nan=True), k
