"""Tests of planner.sweep: enumeration (hand count, schema as oracle), row = single evaluate,
infeasibility reasons, Pareto fronts, chunking, multi-system sweeps, the Llama 3 405B split."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import importlib

import planner
from planner.schema import Scenario

# ``planner.sweep`` is the function (planner/__init__.py binds it); the module by name:
sw = importlib.import_module("planner.sweep")

TINY_MODEL = {
    "name": "tiny", "n_layers": 4, "hidden_size": 256, "n_heads": 8, "n_kv_heads": 2,
    "ffn_hidden_size": 1024, "vocab_size": 1000,
}
TINY_MOE = {
    "name": "tiny-moe", "n_layers": 4, "hidden_size": 256, "n_heads": 8, "n_kv_heads": 8,
    "ffn_hidden_size": 1024, "vocab_size": 1000,
    "moe": {"n_experts": 4, "top_k": 2, "expert_ffn_hidden_size": 512},
}


def tiny(model=TINY_MODEL, n_gpus=8, B=8, seq=1024, **par):
    return Scenario.model_validate({
        "model": model,
        "training": {"seq_len": seq, "global_batch_size": B, "micro_batch_size": 1, "tokens_total": 1e9},
        "parallelism": par,
        "cluster": {"system": "dgx-h100", "n_gpus": n_gpus},
    })


FIXED = dict(zero_stages=(1,), recompute=("selective",), offload=("none",), cp_max=1)
#: A reduced space for the engine-backed tests (the whole default space is ~34k rows).
SMALL = dict(cp_max=2, zero_stages=(0, 1, 3), recompute=("selective", "full"), micro_batch_max=2)


@pytest.fixture(scope="module")
def default_scenario():
    return planner.load_preset("default")


@pytest.fixture(scope="module")
def default_all(default_scenario):
    """Every row of the reduced default space, feasible or not."""
    return sw.sweep(default_scenario, feasible_only=False, **SMALL)


# ---- enumeration ----------------------------------------------------------------------------


def test_hand_count_tiny_8_gpus():
    # Hand count. Model: 4 layers, 8 heads, 2 KV heads; 8 GPUs (one DGX H100, NVLink domain 8);
    # B = 8 sequences; CP = 1, ZeRO-1, selective recompute, no offload, schedule 1F1B only.
    # TP | 8 and TP | 8 heads, KV 2 % TP == 0 or TP % 2 == 0: TP in {1, 2, 4, 8}.
    # PP | 4 layers and PP | 8 GPUs: PP in {1, 2, 4}; TP·PP must divide 8:
    #   (TP, PP, DP) = (1,1,8) (1,2,4) (1,4,2) (2,1,4) (2,2,2) (2,4,1) (4,1,2) (4,2,1) (8,1,1)
    # micro-batch b divides B/DP = 8/DP: DP 8 -> {1}; DP 4 -> {1,2}; DP 2 -> {1,2,4};
    #   DP 1 -> {1,2,4,8}:  1 + 2 + 3 + 2 + 3 + 4 + 3 + 4 + 4 = 26.
    s = tiny()
    assert sw.count_splits(s, schedules=("1f1b",), **FIXED) == 26
    # Interleaved adds VPP >= 2 with PP·VPP dividing 4 layers (only PP 2, VPP 2) and
    # m = B/(b·DP) a multiple of PP = 2: (1,2,4): b=1 (m 2) -> 1; (2,2,2): b 1,2 (m 4, 2)
    # -> 2; (4,2,1): b 1,2,4 (m 8,4,2) -> 3.  26 + 6 = 32.
    assert sw.count_splits(s, schedules=("1f1b", "interleaved"), **FIXED) == 32
    # Zero bubble adds one row per 1F1B row with PP > 1: 2 + 3 + 3 + 4 + 4 = 16 -> 48; the inner
    # options multiply: 4 ZeRO stages × 3 recompute modes × 2 offload targets = 24, less ZeRO-0 with
    # the optimizer offloaded (× 3 recompute modes), which the sweep does not run (review 48e): 21.
    full = sw.count_splits(s, cp_max=1)
    assert full == 48 * (4 * 3 * 2 - 3)
    b = sw.enumerate_splits(s, schedules=("1f1b",), **FIXED)
    assert len(b["tp"]) == 26
    assert np.all(b["tp"] * b["pp"] * b["cp"] * b["dp"] == 8)
    assert np.array_equal(b["sequence_parallel"], b["tp"] > 1)


def schema_accepts_split(base: dict, n_gpus, tp, pp, cp, ep, mbs, sched, vpp, uneven=False) -> bool:
    """Whether the schema itself (pydantic) accepts scenario JSON ``base`` with this split on
    ``n_gpus`` GPUs (dp derived): the oracle of the brute-force sweep checks."""
    d = {**base, "parallelism": {**base["parallelism"], "tp": tp, "pp": pp, "cp": cp, "ep": ep,
                                  "dp": None, "vpp": vpp, "schedule": sched,
                                  "layer_split": "uneven" if uneven else "even"},
         "training": {**base["training"], "micro_batch_size": mbs},
         "cluster": {**base["cluster"], "n_gpus": n_gpus}}
    try:
        Scenario.model_validate(d)
    except ValidationError:
        return False
    return True


def _oracle_valid(s: Scenario, n_gpus, tps, pps, cps, eps, mbss, sched_vpp, nvlink=8, uneven=False):
    """Brute force: every combination validated by the schema itself (pydantic), TP within
    the NVLink domain, pp = 1 only with 1F1B (the sweep's redundancy rule)."""
    base = s.to_json_dict()
    found = set()
    for tp, pp, cp, ep, mbs, (sched, vpp) in itertools.product(tps, pps, cps, eps, mbss, sched_vpp):
        if tp > nvlink or (pp == 1 and sched != "1f1b"):
            continue
        if schema_accepts_split(base, n_gpus, tp, pp, cp, ep, mbs, sched, vpp, uneven):
            found.add((tp, pp, cp, ep, mbs, sched, vpp))
    return found


@pytest.mark.parametrize("model,n_gpus,B,seq,uneven", [
    (TINY_MODEL, 16, 32, 1024, False),
    (TINY_MODEL, 24, 48, 96, True),
    (TINY_MOE, 16, 32, 512, False),
])
def test_enumeration_matches_schema(model, n_gpus, B, seq, uneven):
    s = tiny(model=model, n_gpus=n_gpus, B=B, seq=seq, tp=1, pp=1, cp=1)
    opts = dict(zero_stages=(1,), recompute=("selective",), offload=("none",), cp_max=8,
                schedules=("1f1b", "interleaved", "zero_bubble"), vpp_max=4, allow_uneven=uneven)
    b = sw.enumerate_splits(s, **opts)
    got = {(int(b["tp"][i]), int(b["pp"][i]), int(b["cp"][i]), int(b["ep"][i]),
            int(b["micro_batch_size"][i]), planner.batch.SCHEDULES[b["schedule"][i]], int(b["vpp"][i]))
           for i in range(len(b["tp"]))}
    assert len(got) == len(b["tp"])  # no duplicates
    divs = [d for d in range(1, n_gpus + 1) if n_gpus % d == 0]
    E = model.get("moe", {}).get("n_experts", 0)
    want = _oracle_valid(
        s, n_gpus, tps=divs, pps=[d for d in divs if d <= model["n_layers"]], cps=[1, 2, 4, 8],
        eps=[e for e in range(1, E + 1) if E % e == 0] if E else [1],
        mbss=[d for d in range(1, B + 1) if B % d == 0],
        sched_vpp=[("1f1b", 1), ("zero_bubble", 1), ("interleaved", 2), ("interleaved", 4)],
        uneven=uneven,
    )
    assert got == want
    assert sw.count_splits(s, **opts) == len(want)


def test_tp_beyond_nvlink_option_and_invalid_rows_kept():
    s = tiny(model={**TINY_MODEL, "n_heads": 16, "n_kv_heads": 16}, n_gpus=16, B=16)
    opts = dict(FIXED, schedules=("1f1b",))
    b = sw.enumerate_splits(s, **opts)
    assert b["tp"].max() == 8
    b2 = sw.enumerate_splits(s, allow_tp_beyond_nvlink=True, **opts)
    assert b2["tp"].max() == 16
    b3 = sw.enumerate_splits(s, include_invalid=True, **opts)
    reasons = sw.reason_strings(b3["sweep_reason"])
    assert "group larger than the NVLink domain (tp > nvlink_domain_size)" in set(reasons)
    assert any(r.startswith("batch does not divide") for r in reasons)
    assert np.count_nonzero(b3["sweep_reason"] == 0) == len(b["tp"])


# ---- evaluation ---------------------------------------------------------------------------

MAIN_COLUMNS = ("params_total", "model_flop_per_step", "mem_total_bytes", "fits", "step_time_s",
                "tokens_per_s", "mfu", "goodput", "time_to_train_days", "cost_usd", "energy_mwh")


def _check_rows_equal_evaluate(s, df, rows):
    checked = 0
    for i in rows:
        row = df.iloc[int(i)]
        single = sw.scenario_for_row(s, row)
        rep = planner.evaluate(single).results
        for c in MAIN_COLUMNS:
            if c not in df.columns:
                continue
            if isinstance(rep[c], bool):
                assert bool(row[c]) == rep[c], (c, i)
            else:
                np.testing.assert_allclose(row[c], rep[c], rtol=1e-9, err_msg=f"{c} row {i}")
            checked += 1
    return checked


def test_rows_equal_single_evaluate(default_scenario, default_all):
    s, df = default_scenario, default_all
    rng = np.random.default_rng(0)
    rows = rng.choice(len(df), size=6, replace=False)
    assert _check_rows_equal_evaluate(s, df, rows) >= 6 * 3


def test_rows_equal_single_evaluate_multi_system_and_sizes(default_scenario):
    s = default_scenario
    opts = dict(SMALL, cp_max=1, zero_stages=(1,), recompute=("selective",))
    df = sw.sweep(s, gpus=[512, 1024], systems=["dgx-h100", "dgx-h200"], top=None, **opts)
    assert set(df["system"]) <= {"dgx-h100", "dgx-h200"}
    assert set(df["n_gpus"]) <= {512, 1024}
    for sid in ("dgx-h100", "dgx-h200"):
        for n in (512, 1024):
            one = sw.sweep(s, gpus=n, systems=[sid], feasible_only=False, **opts)
            assert len(one) == sw.count_splits(s, gpus=n, systems=[sid], **opts)
            assert np.count_nonzero((df["system"] == sid) & (df["n_gpus"] == n)) == int(
                (one["infeasible_reason"] == "").sum())
    rng = np.random.default_rng(1)
    h200 = np.flatnonzero(df["system"].to_numpy() == "dgx-h200")
    _check_rows_equal_evaluate(s, df, rng.choice(h200, size=3, replace=False))


def test_chunking_and_progress_give_the_same_result(default_scenario, default_all):
    s = default_scenario
    calls = []
    a = sw.sweep(s, top=50, objective="mfu", **SMALL)
    b = sw.sweep(s, top=50, objective="mfu", chunk_size=97, progress=lambda d, t: calls.append((d, t)), **SMALL)
    # Same rows, same order; values equal to rounding (a stage may vectorise over the rows of
    # a pass, e.g. the checkpoint-interval search, which moves results by ~1e-13).
    pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-9)
    total = sw.build_space(s, **SMALL).n_rows
    assert calls[-1] == (total, total)
    assert all(x[0] < y[0] for x, y in zip(calls, calls[1:]))
    full = sw.sweep(s, chunk_size=123, feasible_only=False, **SMALL)
    pd.testing.assert_frame_equal(full, default_all, check_exact=False, rtol=1e-9)


def test_oom_reason_hand_case(default_all):
    # Llama 3 70B, TP 8, PP 1, ZeRO-0, no offload: weights + fp32 grads + Adam states are
    # 70.6e9 / 8 × (2 + 4 + 12) B = 158.8 GB per GPU > 80 GB of H100 HBM: OOM on stage 0.
    s = planner.load_preset("default")
    df = sw.sweep(s, feasible_only=False, tp=[8], pp=[1], cp=[1], zero_stages=(0,), offload=("none",))
    assert len(df) > 0
    assert set(df["infeasible_reason"]) == {"OOM on stage 0"}
    assert not df["fits"].any()
    # Every OOM row names the most loaded stage given by the memory stage.
    all_rows = default_all
    oom = all_rows[all_rows["infeasible_reason"].str.startswith("OOM")]
    assert len(oom) > 0
    if "mem_worst_stage" in oom.columns:
        assert (oom["infeasible_reason"] == "OOM on stage " + oom["mem_worst_stage"].astype(int).astype(str)).all()
    ok = all_rows["fits"] & all_rows.get("host_fits", True) & all_rows.get("host_fits_ckpt", True)
    assert (all_rows["infeasible_reason"] == "").sum() == ok.sum()
    # Feasible rows come first; feasible_only drops the rest.
    n_feas = int(ok.sum())
    assert (all_rows["infeasible_reason"].iloc[:n_feas] == "").all()
    feas = sw.sweep(s, **SMALL)
    assert (feas["infeasible_reason"] == "").all()
    assert len(feas) == (all_rows["infeasible_reason"] == "").sum()


def test_host_memory_reason_hand_case():
    # 70B, TP 8 × PP 4 × DP 32, ZeRO-1, optimizer offloaded to the CPU: each GPU's optimizer
    # shard is 12 B × 70.6e9 / (8·4·32) = 0.83 GB of fp32 master + Adam states; 8 GPUs per
    # node put 6.6 GB in host memory. Host memory overridden to 1 GB: exceeded. Without
    # offload the same split fits (checkpoints go to the PFS only, synchronously, so they use no
    # host memory; an async save would stage the node's share, 8 × 14 B × 70.6e9 / 1024 = 7.7 GB,
    # in host memory first: review 16a).
    data = planner.presets.preset_json("default")
    data["cluster"]["overrides"] = {"host_memory_bytes": 1e9}
    data["checkpoint"]["tiers"] = [{"tier": "pfs", "interval_s": None}]
    data["checkpoint"]["async"] = False
    s = Scenario.model_validate(data)
    df = sw.sweep(s, feasible_only=False, tp=[8], pp=[4], cp=[1], zero_stages=(1,),
                  recompute=("selective",), micro_batch_size=[1], schedules=("1f1b",))
    assert len(df) == 2
    by_off = dict(zip(df["offload_optimizer"], df["infeasible_reason"]))
    assert by_off == {"cpu": "host memory exceeded", "none": ""}


def test_objectives_sort_and_top(default_scenario):
    s = default_scenario
    small = dict(SMALL, cp_max=1, zero_stages=(1,))
    for obj, col, asc in (("time_to_train", "time_to_train_days", True), ("cost", "cost_usd", True),
                          ("mfu", "mfu", False), ("goodput_tokens_per_s", "goodput_tokens_per_s", False)):
        df = sw.sweep(s, objective=obj, top=25, **small)
        if col not in df.columns:
            pytest.skip(f"{col} not produced yet")
        v = df[col].to_numpy()
        assert len(df) == 25
        assert np.all(np.diff(v) >= 0) if asc else np.all(np.diff(v) <= 0)
        full = sw.sweep(s, objective=obj, **small)
        assert np.isclose(full[col].iloc[0], v[0], rtol=0)
    with pytest.raises(ValueError, match="allowed"):
        sw.sweep(s, objective="speed")
    with pytest.raises(planner.InputError, match="unknown option"):
        sw.sweep(s, tensor_parallel=[2])


def test_columns_and_package_entry_point(default_scenario):
    s = default_scenario
    df = planner.sweep(s, top=3, **dict(SMALL, cp_max=1, zero_stages=(1,)))
    assert list(df.columns[: len(sw.SPLIT_COLUMNS)]) == list(sw.SPLIT_COLUMNS)
    assert list(df.columns[-3:]) == ["infeasible_reason", "pareto_time_cost", "pareto_throughput_memory"]
    assert df["recompute"].isin(["none", "selective", "full"]).all()
    assert len(df) == 3


def test_pareto_flags_of_sweep(default_scenario):
    df = sw.sweep(default_scenario, **SMALL)
    if "time_to_train_days" not in df.columns or "cost_usd" not in df.columns:
        pytest.skip("cost stage not present yet")
    m = sw.pareto_front(df["time_to_train_days"], df["cost_usd"])
    assert np.array_equal(m, df["pareto_time_cost"].to_numpy())
    assert df["pareto_time_cost"].any()
    # The fastest feasible split is on the time-cost front.
    assert df["pareto_time_cost"].iloc[0] or df["time_to_train_days"].iloc[0] == df["time_to_train_days"].iloc[1]


# ---- Pareto front ---------------------------------------------------------------------------


def _brute_front(x, y, minimize):
    xs = np.where(minimize[0], x, -x)
    ys = np.where(minimize[1], y, -y)
    n = len(x)
    out = np.zeros(n, dtype=bool)
    for i in range(n):
        if not (np.isfinite(xs[i]) and np.isfinite(ys[i])):
            continue
        dominated = False
        for j in range(n):
            if j == i or not (np.isfinite(xs[j]) and np.isfinite(ys[j])):
                continue
            if xs[j] <= xs[i] and ys[j] <= ys[i] and (xs[j] < xs[i] or ys[j] < ys[i]):
                dominated = True
                break
        out[i] = not dominated
    return out


vals = st.one_of(st.integers(-5, 5).map(float), st.floats(-1e3, 1e3, allow_nan=False),
                 st.just(float("nan")), st.just(float("inf")))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(vals, vals), min_size=0, max_size=40),
       st.tuples(st.booleans(), st.booleans()))
def test_pareto_front_matches_brute_force(points, minimize):
    x = np.asarray([p[0] for p in points], dtype=float)
    y = np.asarray([p[1] for p in points], dtype=float)
    got = sw.pareto_front(x, y, minimize)
    assert np.array_equal(got, _brute_front(x, y, minimize))


def test_pareto_front_simple():
    x = np.array([1.0, 2.0, 3.0, 2.0, 1.0])
    y = np.array([3.0, 2.0, 1.0, 3.0, 3.0])
    assert sw.pareto_front(x, y).tolist() == [True, True, True, False, True]
    assert sw.pareto_front(x, y, minimize=(False, False)).tolist() == [False, False, True, True, False]


# ---- the published Llama 3 405B split ------------------------------------------------------


def test_llama3_405b_best_splits_match_published_choice():
    # Llama 3 405B on 16,384 H100, 16M tokens per step (arXiv:2407.21783, Table 4: TP 8,
    # CP 1, PP 16, DP 128). The best splits keep TP inside the 8-GPU NVLink node and pipeline
    # over at least 8 stages.
    s = planner.load_preset("llama3-405b-h100-16k")
    df = sw.sweep(s, top=20)
    if "time_to_train_days" not in df.columns:
        pytest.skip("timing / cost stages not present yet")
    assert len(df) == 20
    assert (df["tp"] <= 8).all()  # TP inside one DGX node (NVLink domain of 8)
    assert (df["pp"] >= 8).all()
    # The same holds within the schedule family Meta used (1F1B / interleaved).
    df2 = sw.sweep(s, top=10, schedules=("1f1b", "interleaved"), zero_stages=(1,))
    assert (df2["tp"] <= 8).all() and (df2["pp"] >= 8).all()


@pytest.mark.parametrize("seed", [0, 1])
def test_pareto_front_large_set_matches_definition(seed):
    # Above _PARETO_PREFILTER_MIN points the front is computed after dropping points dominated
    # by a subsample's front. Oracle: the definition (no other point at least as good in both
    # and strictly better in one), checked pairwise; ties and non-finite values included.
    rng = np.random.default_rng(seed)
    n = 3000
    x = rng.integers(0, 60, n).astype(float)
    y = np.where(rng.random(n) < 0.5, 60.0 - x + rng.integers(0, 5, n), rng.integers(0, 60, n)).astype(float)
    x[rng.integers(0, n, 30)] = np.nan
    y[rng.integers(0, n, 30)] = np.inf
    for mn in ((True, True), (False, False), (True, False)):
        xs, ys = (x if mn[0] else -x), (y if mn[1] else -y)
        fin = np.isfinite(xs) & np.isfinite(ys)
        X, Y = xs[fin], ys[fin]
        dominated = ((X[None, :] <= X[:, None]) & (Y[None, :] <= Y[:, None])
                     & ((X[None, :] < X[:, None]) | (Y[None, :] < Y[:, None]))).any(axis=1)
        expect = np.zeros(n, dtype=bool)
        expect[np.flatnonzero(fin)[~dominated]] = True
        assert np.array_equal(sw.pareto_front(x, y, mn), expect)


def test_sweep_option_lists_one_value_repeats_and_errors():
    """A plain string is one option, repeats count once, a bad option is planner.InputError
    (review: 'op_sac' was split into letters, 'op_sac,op_sac' doubled the rows)."""
    s = planner.load_preset("llama3-8b-h100-64")
    one = planner.sweep(s, recompute="op_sac", top=None)
    twice = planner.sweep(s, recompute=("op_sac", "op_sac"), top=None)
    assert set(one["recompute"]) == {"op_sac"} and len(one) == len(twice)
    with pytest.raises(planner.InputError, match="allowed: none, selective, full, op_sac"):
        planner.sweep(s, recompute=("bogus",))
    with pytest.raises(planner.InputError, match="objective"):
        planner.sweep(s, objective="zzz")


@pytest.mark.parametrize("kw", [{"top": "a"}, {"top": True}, {"gpus": "a"}, {"gpus": [1024, 0]}, {"gpus": 1024.5},
                                {"systems": "dgx-h100"}, {"chunk_size": 0}])
def test_sweep_refuses_wrong_types_naming_the_argument(kw):
    import planner
    with pytest.raises(planner.InputError) as e:
        planner.sweep(planner.load_preset("default"), **kw)
    assert f"sweep: {next(iter(kw))} = " in str(e.value)


def test_an_empty_sweep_has_the_same_columns_whatever_emptied_it():
    # 7 GPUs admit no split of the default (no configuration); 1 GPU admits splits, none fits
    import planner
    s = planner.load_preset("default")
    none_at_all, none_fit = planner.sweep(s, gpus=7), planner.sweep(s, gpus=1)
    assert len(none_at_all) == len(none_fit) == 0
    assert none_at_all.attrs["n_configurations"] == 0 and none_fit.attrs["n_configurations"] > 0
    assert list(none_at_all.columns) == list(none_fit.columns) == list(planner.sweep(s, top=1).columns)


@pytest.mark.parametrize(("kw", "text"), [({"systems": ["nope"]}, "unknown system id 'nope'"),
                                          ({"tp": "16"}, "tp = '16'"), ({"pp": 2.5}, "pp = 2.5"),
                                          ({"tp": [True]}, "tp = [True]"), ({"cp_max": 0}, "cp_max = 0")])
def test_sweep_refuses_bad_candidates_naming_them(kw, text):
    """Review 2026-11-30: tp="16" returned an empty table, an unknown system a bare ValueError."""
    with pytest.raises(planner.InputError) as e:
        planner.sweep(planner.load_preset("default"), feasible_only=False, **kw)
    assert text in e.value.lines[0]


@pytest.mark.parametrize(("kw", "text"), [({"micro_batch_size": "a"}, "micro_batch_size = 'a'"),
                                          ({"micro_batch_size": [2.5]}, "micro_batch_size = [2.5]"),
                                          ({"vpp": "a"}, "vpp = 'a'"), ({"vpp": [0]}, "vpp = [0]"),
                                          ({"vpp": [2.5]}, "vpp = [2.5]"), ({"vpp_max": "x"}, "vpp_max = 'x'"),
                                          ({"vpp_max": 0}, "vpp_max = 0"),
                                          ({"micro_batch_max": 2.5}, "micro_batch_max = 2.5")])
def test_sweep_refuses_bad_micro_batch_and_vpp_candidates(kw, text):
    """Review: micro_batch_size="a", vpp="a" / vpp_max="x" raised a bare ValueError / TypeError,
    micro_batch_size=[2.5] was truncated to 2 and vpp=[0] silently ignored; like tp and pp
    they are InputErrors naming the argument and its value."""
    with pytest.raises(planner.InputError) as e:
        planner.sweep(planner.load_preset("default"), feasible_only=False, **kw)
    assert text in e.value.lines[0]


def test_one_micro_batch_size_or_vpp_is_a_list_of_one():
    # micro_batch_size=2 (one value, as tp=4 is) raised IndexError. Hand count on the tiny
    # model of test_hand_count_tiny_8_gpus, 1F1B only, b = 2: b divides B/DP = 8/DP, so
    # DP 4: (TP, PP) = (1,2), (2,1) -> 2; DP 2: (1,4), (2,2), (4,1) -> 3; DP 1: (2,4), (4,2),
    # (8,1) -> 3; DP 8 (B/DP = 1) none: 8 splits.
    s = tiny()
    assert sw.count_splits(s, schedules=("1f1b",), micro_batch_size=2, **FIXED) == 8
    assert sw.count_splits(s, schedules=("1f1b",), micro_batch_size=[2], **FIXED) == 8
    # vpp=2: interleaved rows of the hand count (PP 2, VPP 2): 6, plus the 26 1F1B rows
    assert sw.count_splits(s, schedules=("1f1b", "interleaved"), vpp=2, **FIXED) == 32


def test_a_local_nvme_tier_on_a_system_without_nvme_names_the_reason():
    """Sweeping over systems with a local_nvme checkpoint tier: the system without NVMe
    (gh200-quad) gets the reason in words, not 'not evaluated (non-finite result)'."""
    s = planner.load_preset("default").to_json_dict()
    s["checkpoint"] = {"tiers": [{"tier": "local_nvme"}, {"tier": "pfs"}]}
    df = planner.sweep(s, systems=["dgx-h100", "gh200-quad"], feasible_only=False, include_invalid=True)
    gh = df[df["system"] == "gh200-quad"]
    assert len(gh) > 0
    reasons = gh["infeasible_reason"].value_counts()
    # every split that passes the rules checked before it (GPU count, TP within the node) says so
    assert reasons.index[0] == "checkpoint tier local_nvme needs local NVMe (the system has none)"
    assert "not evaluated (non-finite result)" not in reasons.index


def test_an_unknown_keyword_is_an_input_error_naming_it():
    """The docstring's Raises lists InputError for bad options: an unknown keyword (it lands in
    **space_options) is one, naming the keyword and listing the accepted ones."""
    s = planner.load_preset("default")
    for call, where, own in ((lambda: planner.sweep(s, foo=1), "sweep", {"objective", "top", "chunk_size"}),
                             (lambda: sw.count_splits(s, foo=1), "count_splits", set()),
                             (lambda: sw.enumerate_splits(s, foo=1), "enumerate_splits", set())):
        with pytest.raises(planner.InputError) as e:
            call()
        msg = str(e.value)
        assert msg.startswith(f"{where}: unknown option(s) 'foo'; accepted: ")
        accepted = set(msg.split("accepted: ", 1)[1].split(", "))
        assert {"gpus", "systems", "tp", "pp", "cp_max", "allow_uneven"} | own <= accepted


def test_plain_base_is_the_plainest_split_the_schema_accepts():
    """Llama 3.1 8B (32 layers, 32 heads) in the default preset's scenario (1,024 GPUs, global
    batch 512, TP 8 · PP 4 · VPP 5): 32 layers do not divide into pp·vpp = 20 stages. By the
    rule (fewest model-parallel GPUs, then the smaller PP): tp·pp = 1 leaves DP = 1,024, which
    does not divide the batch of 512; tp 2, pp 1 leaves DP 512, which does."""
    d = planner.load_preset("default").to_json_dict()
    d["model"] = planner.model_from_hf_config({
        "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
        "tie_word_embeddings": False}).model_dump(mode="json", exclude_none=True)
    with pytest.raises(ValidationError, match="pp·vpp = 20"):
        Scenario.model_validate(d)
    pairs = sw.plain_splits(d)
    assert pairs[:4] == [(1, 1), (2, 1), (1, 2), (4, 1)]  # tp·pp = 1, 2, 2, 4; the smaller pp first
    base, s = sw.plain_base(d)
    p = s.parallelism
    assert (p.tp, p.pp, p.dp, p.cp, p.vpp, p.schedule, p.layer_split) == (2, 1, 512, 1, 1, "1f1b", "uneven")
    assert base["model"] == d["model"] and base["training"] == d["training"]
    # nothing to start from when the fault is not the split
    d["training"]["seq_len"] = -1
    assert sw.plain_base(d) is None


def test_an_empty_sweep_names_why_no_split_can_finish():
    """Splits that fit but have no finite time to train (host memory alone survives no node
    failure) are not 'out of memory': the reason is the engine's own (found by review)."""
    from planner.sweep import no_split_reason
    s = planner.load_preset("mpt-7b-a100-8").to_json_dict()
    s["checkpoint"] = {"tiers": [{"tier": "host_memory"}]}
    df = planner.sweep(s)
    assert len(df) == 0 and df.attrs["n_configurations"] > 0
    why = no_split_reason(s, df.attrs["n_configurations"])
    assert why.startswith("no split has a finite time to train") and "survives a failure of class node" in why
    assert no_split_reason(s, 0).startswith("no split satisfies the divisibility rules")
    big = planner.load_preset("llama3-405b-h100-16k").to_json_dict()
    # some splits fit in HBM only by offloading the optimizer, whose CPU step needs fp32 master,
    # Adam m, v and the gradients on the host, 16 B per parameter of the shard (review 39): on 128
    # GPUs that is at least 8 GPUs × 16 B × 405e9 / 128 ≈ 405 GB a node (ZeRO >= 1 shards it over all
    # 128), more than nodes with 200 GB of host memory hold; the rest run out of HBM. (Before review
    # 48e the sweep also ran ZeRO-0 with the optimizer offloaded, whose unsharded states overflowed
    # the DGX H100's own 2 TiB on the preset's 16,384 GPUs; no framework runs that, so it is gone.)
    big["cluster"]["n_gpus"] = 128
    big["cluster"]["overrides"]["host_memory_bytes"] = 200e9
    big["parallelism"].update(dp=None, offload_optimizer="cpu", offload_master_weights=True)
    why = no_split_reason(big, 10)
    assert why.startswith("no split fits in host memory") and "run out of HBM" in why


def test_sweep_refuses_replicas_its_gpu_count_cannot_hold():
    """As evaluate: each copy goes to another node; 16 H100 are 2 nodes, so at most 1 replica."""
    s = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    s["checkpoint"] = {"tiers": [{"tier": "host_memory", "replicas": 7}, {"tier": "pfs"}]}
    with pytest.raises(planner.InputError, match=r"replicas = 7: .* 2 nodes; allowed 0 to 1"):
        planner.sweep(s, gpus=16, top=1)


def test_sweep_refuses_a_feasible_only_that_is_not_a_flag():
    # found by review: feasible_only="no" was taken as True
    with pytest.raises(planner.InputError, match=r"sweep: feasible_only = 'no': give True or False"):
        planner.sweep(planner.load_preset("llama3-8b-h100-64"), feasible_only="no", top=1)


def test_an_empty_sweep_says_why_in_python_too():
    # TP 3 divides neither Llama 3 70B's 64 heads nor 1,024 GPUs: no split passes the rules, and
    # the DataFrame says so as the CLI does (found by review: Python got an empty frame alone)
    s = planner.load_preset("default")
    df = planner.sweep(s, tp=[3])
    assert df.empty and df.attrs["n_configurations"] == 0
    assert df.attrs["reason"].startswith("no split satisfies the divisibility rules")
    assert "reason" not in planner.sweep(s, top=3).attrs


def test_a_first_chunk_of_rule_invalid_rows_keeps_the_result_columns(default_scenario):
    # found by review: with include_invalid the first 80-row chunk held invalid splits only, the
    # result columns were learned from it, and the table had no step_time_s or mfu at all
    kw = dict(top=9, feasible_only=False, include_invalid=True, offload=("none", "cpu", "nvme"))
    small = sw.sweep(default_scenario, chunk_size=80, **kw)
    whole = sw.sweep(default_scenario, chunk_size=100_000, **kw)
    assert {"step_time_s", "mfu", "goodput"} <= set(small.columns)
    pd.testing.assert_frame_equal(small, whole)


def test_a_system_that_cannot_run_the_scenario_s_precision_is_refused_with_the_schema_s_message():
    # found by review: bf16 on a V100 system raised KeyError 'bf16' (a system without local NVMe
    # under a local_nvme tier is a per-row reason instead: the test above)
    s = planner.load_preset("llama31-8b-torchtitan-h100-8")
    with pytest.raises(planner.InputError, match=r"sweep: systems: dgx1-v100: training.precision = 'bf16' "
                                                 r"is not supported by .*V100"):
        sw.sweep(s, top=3, systems=["dgx1-v100"])
    assert len(sw.sweep(s, top=3, systems=["dgx-h100", "dgx-b200"])) == 3  # systems that can: unchanged


# ---- found by a new-user review (2026-11-30) ----

def test_an_mfu_sweep_needs_no_finite_time_to_train():
    """With no checkpoint tier the goodput is 0 and the time to train infinite whatever the
    split; an MFU sweep does not depend on it, so it ranks the splits that fit (was: 'no feasible
    split', 0 of 34,272). A time, cost or goodput-weighted throughput sweep still finds none."""
    s = planner.load_preset("default").to_json_dict()
    s["checkpoint"] = {"tiers": []}
    df = planner.sweep(s, objective="mfu", top=5)
    assert len(df) == 5 and df.attrs["n_feasible"] > 0
    assert (df["mfu"].diff().dropna() <= 0).all() and np.isinf(df["time_to_train_days"]).all()
    # goodput × tokens/s is 0 on every such row: nothing to rank, refused with the time objectives
    assert len(planner.sweep(s, objective="goodput_tokens_per_s", top=5)) == 0
    assert len(planner.sweep(s, objective="time_to_train", top=5)) == 0
    assert len(planner.sweep(s, objective="cost", top=5)) == 0


def test_a_size_or_system_given_twice_is_swept_once():
    """Every row came twice (36,848 rows for 18,424 splits), so a top-K table showed each twice."""
    s = planner.load_preset("default")
    one = planner.sweep(s, top=None)
    assert len(planner.sweep(s, gpus=[1024, 1024], top=None)) == len(one)
    assert len(planner.sweep(s, systems=["dgx-h100", "dgx-h100"], top=None)) == len(one)
    top = planner.sweep(s, gpus=[1024, 1024], top=10)
    assert not top.duplicated(subset=["tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch_size", "zero_stage", "recompute",
                                      "schedule", "offload_optimizer"]).any()


def test_a_progress_that_is_not_a_function_is_an_input_error():
    from planner.schema import InputError
    with pytest.raises(InputError, match="progress = 5"):
        planner.sweep(planner.load_preset("default"), progress=5, top=5)


def test_out_of_memory_reason_names_the_offload_fields_the_sweep_does_not_choose():
    """The hint said 'try … recompute/offload'; the sweep already tries full recompute and
    optimizer offload, and takes offload_master_weights / offload_grads from the scenario:
    with them set, 8 H100 hold Llama 3 70B (504 feasible splits, found by review)."""
    from planner.sweep import no_split_reason
    s = planner.load_preset("default").to_json_dict()
    s["cluster"]["n_gpus"] = 8
    s["parallelism"] = {"tp": 8, "pp": 1}
    assert len(planner.sweep(s)) == 0
    why = no_split_reason(s, 10)
    assert "offload_master_weights" in why and "offload_grads" in why
    assert "offload_optimizer = cpu" in why  # the example must be one the schema accepts (found by review)
    s["parallelism"].update(offload_optimizer="cpu", offload_master_weights=True, offload_grads=True)
    assert len(planner.sweep(s)) > 0


def test_no_valid_split_names_the_batch_and_gpu_count_that_stop_every_split():
    """1,000 = 2³·5³ GPUs and a global batch of 512 = 2⁹ sequences: DP must divide both, so DP is
    1 to 8 and TP·PP·CP at least 125, which the model's 64 heads and 80 layers do not allow with
    an even split. The sweep still runs on 1,000 GPUs (sweep_start) and the reason names both
    fields; a global batch of 1,000 lets DP be 1,000 ÷ (TP·PP·CP) (found by review: the page said
    the sidebar's TP·PP·CP = 32 was the problem)."""
    from planner.sweep import no_valid_split_reason, sweep_start
    sj = planner.load_preset("default").to_json_dict()
    sj["cluster"]["n_gpus"] = 1000
    base, scen, gpus = sweep_start(sj)
    assert gpus == 1000 and scen.cluster.n_gpus < 1000
    assert len(planner.sweep(scen, gpus=gpus, top=5)) == 0
    why = no_valid_split_reason(scen, 1000)
    assert "training.global_batch_size = 512" in why and "cluster.n_gpus = 1,000" in why
    assert "a global batch of 1,000 sequences" in why
    sj["training"]["global_batch_size"] = 1000
    assert sweep_start(sj)[2] is None  # now a plain split of 1,000 GPUs is valid
