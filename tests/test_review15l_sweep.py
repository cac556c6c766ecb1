"""Review 15l: the split sweep (planner/sweep.py) checked against brute force.

Every expected set, order and front here comes from a plain Python loop over the candidates in the
test (the schema itself as the validity oracle, the definition of Pareto dominance, the stated
tie rule), never from the sweep's own output. The engine's per-row numbers are checked against
``planner.evaluate_many`` of the row's own scenario (``scenario_for_row``), the same pipeline
the sweep claims to equal.
"""

from __future__ import annotations

import importlib
import itertools

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError

import planner
from planner.batch import OFFLOAD, RECOMPUTE, SCHEDULES
from planner.schema import Scenario
from test_sweep import schema_accepts_split  # noqa: E402

sw = importlib.import_module("planner.sweep")


def _model(L, H, KV, **kw):
    return {"name": "t", "n_layers": L, "hidden_size": 64 * H, "n_heads": H, "n_kv_heads": KV,
            "ffn_hidden_size": 256 * H, "vocab_size": 1000, **kw}


def _scen(model, n, B, seq, system="dgx-h100", **par):
    return Scenario.model_validate({
        "model": model,
        "training": {"seq_len": seq, "global_batch_size": B, "micro_batch_size": 1, "tokens_total": 1e9},
        "parallelism": {"layer_split": "uneven", **par},
        "cluster": {"system": system, "n_gpus": n},
    })


ALL_SCHEDULES = ("1f1b", "interleaved", "zero_bubble", "gpipe", "dualpipe")
ONE_INNER = dict(zero_stages=(1,), recompute=("selective",), offload=("none",))


def _brute_structural(s: Scenario, n: int, uneven: bool, nvlink: int, cps, vpps):
    """Every (tp, pp, cp, ep, micro-batch, schedule, vpp) the schema accepts, by a plain loop over
    all integers (TP up to the heads, PP up to the layers, EP up to the experts, every micro-batch
    size up to the batch), restricted only by the sweep's documented candidate sets (CP ``cps``,
    VPP ``vpps``) and its three stated extra rules: TP within the NVLink domain, no schedule
    other than 1F1B without a pipeline, and (review 48e, rule R_SP_SEQ) TP > 1 only where it divides
    seq_len / cp, as the sweep runs sequence parallelism with TP > 1 and Megatron-Core's
    sequence-parallel reduce-scatter refuses that otherwise (evaluate accepts such a split); and CP > 1
    only where 2·CP divides seq_len (causal load balancing's 2·CP chunks, review 48)."""
    base = s.to_json_dict()
    m = s.resolved_model()
    E = m.moe.n_experts if m.moe else 1
    B = s.training.global_batch_size
    found = set()
    for tp in range(1, min(m.n_heads, n, nvlink) + 1):
        if n % tp:
            continue
        for pp in range(1, min(m.n_layers, n // tp) + 1):
            if (n // tp) % pp:
                continue
            for cp, ep, mbs in itertools.product(cps, range(1, E + 1), range(1, B + 1)):
                if (n // (tp * pp)) % cp or E % ep or B % mbs:
                    continue
                if tp > 1 and s.training.seq_len % cp == 0 and (s.training.seq_len // cp) % tp:
                    continue
                if cp > 1 and s.training.seq_len % (2 * cp):  # causal load balancing's 2·cp chunks (review 48)
                    continue
                for sched in ALL_SCHEDULES:
                    for vpp in (vpps if sched == "interleaved" else [1]):
                        if pp == 1 and sched != "1f1b":
                            continue
                        if schema_accepts_split(base, n, tp, pp, cp, ep, mbs, sched, vpp, uneven):
                            found.add((tp, pp, cp, ep, mbs, sched, vpp))
    return found


def _rows(b) -> list[tuple]:
    return [(int(b["tp"][i]), int(b["pp"][i]), int(b["cp"][i]), int(b["ep"][i]), int(b["micro_batch_size"][i]),
             SCHEDULES[b["schedule"][i]], int(b["vpp"][i])) for i in range(len(b["tp"]))]


# (model, GPUs, global batch, seq_len, uneven allowed, system): odd and prime-heavy GPU counts,
# models whose heads / layers / experts have few divisors, an NVLink domain of 4 and of 72.
CASES = [
    (_model(4, 8, 2), 8, 8, 1024, False, "dgx-h100"),
    (_model(6, 6, 3), 12, 24, 96, False, "dgx-h100"),
    (_model(6, 6, 3), 12, 24, 96, True, "dgx-h100"),
    (_model(5, 10, 5), 10, 20, 100, True, "dgx-h100"),
    (_model(3, 3, 1), 6, 12, 48, False, "dgx-h100"),
    (_model(7, 7, 7), 1023, 1023, 64, True, "dgx-h100"),
    (_model(9, 9, 3), 1000, 1000, 500, True, "dgx-h100"),
    (_model(16, 16, 8), 96, 96, 512, False, "dgx-h100"),
    (_model(8, 16, 16, moe={"n_experts": 6, "top_k": 2, "expert_ffn_hidden_size": 512}), 24, 48, 256, False,
     "dgx-h100"),
    (_model(6, 12, 4), 24, 24, 64, True, "gh200-quad"),
    (_model(10, 18, 9), 72, 72, 90, True, "gb200-nvl72"),
]


@pytest.mark.parametrize("model,n,B,seq,uneven,system", CASES)
def test_valid_splits_are_exactly_those_the_schema_accepts(model, n, B, seq, uneven, system):
    s = _scen(model, n, B, seq, system=system)
    nvlink = {"dgx-h100": 8, "gh200-quad": 4, "gb200-nvl72": 72}[system]
    L = model["n_layers"]
    # the documented candidates: CP powers of two up to cp_max (16); VPP 2 .. vpp_max (16): the
    # powers of two and every divisor of the layers
    vpps = sorted({2, 4, 8, 16} & set(range(2, L + 1)) | {v for v in range(2, min(16, L) + 1) if L % v == 0})
    want = _brute_structural(s, n, uneven, nvlink, cps=(1, 2, 4, 8, 16), vpps=vpps)
    b = sw.enumerate_splits(s, schedules=ALL_SCHEDULES, allow_uneven=uneven, **ONE_INNER)
    got = _rows(b)
    assert len(set(got)) == len(got)  # no duplicates
    assert set(got) == want
    assert np.all(b["tp"] * b["pp"] * b["cp"] * b["dp"] == n)
    assert sw.count_splits(s, schedules=ALL_SCHEDULES, allow_uneven=uneven, **ONE_INNER) == len(want)


@pytest.mark.parametrize("system,has_nvme", [("dgx-h100", True), ("gh200-quad", False)])
def test_inner_options_are_every_combination_the_schema_accepts(system, has_nvme):
    """ZeRO × recompute × offload: the schema's oracle over a few structural splits; the scenario's
    offload_master_weights rides on offloading rows only (as documented)."""
    s = _scen(_model(4, 8, 8), 8, 16, 256, system=system, offload_optimizer="cpu", offload_master_weights=True)
    opts = dict(zero_stages=(0, 1, 2, 3), recompute=RECOMPUTE, offload=OFFLOAD, tp=[2], pp=[2], cp=[1],
                micro_batch_size=[1, 2], schedules=("1f1b", "zero_bubble"))
    b = sw.enumerate_splits(s, **opts)
    got = {(int(b["micro_batch_size"][i]), SCHEDULES[b["schedule"][i]], int(b["zero_stage"][i]),
            RECOMPUTE[b["recompute"][i]], OFFLOAD[b["offload_optimizer"][i]], bool(b["offload_master_weights"][i]))
           for i in range(len(b["tp"]))}
    base = s.to_json_dict()
    want = set()
    for mbs, sched, z, rc, off in itertools.product((1, 2), ("1f1b", "zero_bubble"), range(4), RECOMPUTE, OFFLOAD):
        d = {**base, "parallelism": {**base["parallelism"], "tp": 2, "pp": 2, "dp": None, "schedule": sched,
                                      "zero_stage": z, "recompute": rc, "offload_optimizer": off,
                                      "offload_master_weights": off != "none"},
             "training": {**base["training"], "micro_batch_size": mbs}}
        try:
            Scenario.model_validate(d)
        except ValidationError:
            continue
        if z == 0 and off != "none":
            # the sweep's one rule beyond the schema (review 48e, planner/sweep.py build_space): ZeRO-0
            # with the optimizer offloaded is not generated; no framework runs it (DeepSpeed's offload
            # needs ZeRO >= 1, Megatron's --optimizer-cpu-offload the distributed optimizer)
            continue
        want.add((mbs, sched, z, rc, off, off != "none"))
    assert got == want
    assert any(o == "nvme" for *_, o, _ in want) == has_nvme


_CHECK = ["step_time_s", "mem_total_bytes", "time_to_train_days", "cost_usd", "mfu", "tokens_per_s", "goodput",
          "fits"]


@pytest.mark.parametrize("preset", ["mixtral-8x7b-h100-64", "deepseek-v3-h800-2048", "llama3-405b-h100-16k",
                                    "llama31-8b-torchtitan-h100-8"])
def test_every_sampled_row_validates_and_evaluates_to_its_numbers(preset):
    s = planner.load_preset(preset)
    df = sw.sweep(s, feasible_only=False, micro_batch_max=2, cp_max=2, vpp_max=4, zero_stages=(1, 3))
    rng = np.random.default_rng(15)
    idx = rng.choice(len(df), size=min(30, len(df)), replace=False)
    scs = [sw.scenario_for_row(s, df.iloc[i]) for i in idx]  # validates each (Scenario.model_validate)
    ev = planner.evaluate_many(scs)
    for c in _CHECK:
        a, e = df[c].to_numpy()[idx], ev[c].to_numpy()
        if c == "fits":
            assert np.array_equal(a.astype(bool), e.astype(bool)), c
        else:
            np.testing.assert_allclose(a.astype(float), e.astype(float), rtol=1e-9, err_msg=c)


# ---- ranking, top-K, Pareto, one row per result ------------------------------------------------

SMALL = dict(cp_max=2, zero_stages=(0, 1, 3), recompute=("selective", "full"), micro_batch_max=2, vpp_max=4)


def _objective(df, obj):
    return {"time_to_train": df["time_to_train_days"], "cost": df["cost_usd"], "mfu": -df["mfu"],
            "goodput_tokens_per_s": -(df["tokens_per_s"] * df["goodput"])}[obj].to_numpy(float)


def _enum_position(s, df, opts):
    """Each table row's position in the enumeration (enumerate_splits' order, the documented tie order)."""
    b = sw.enumerate_splits(s, **opts)
    pos = {}
    for i in range(len(b["tp"])):
        pos[(int(b["tp"][i]), int(b["pp"][i]), int(b["cp"][i]), int(b["ep"][i]), int(b["vpp"][i]),
             int(b["micro_batch_size"][i]), SCHEDULES[b["schedule"][i]], int(b["zero_stage"][i]),
             RECOMPUTE[b["recompute"][i]], OFFLOAD[b["offload_optimizer"][i]])] = i
    return np.array([pos[(r.tp, r.pp, r.cp, r.ep, r.vpp, r.micro_batch_size, r.schedule, r.zero_stage,
                          r.recompute, r.offload_optimizer)] for r in df.itertuples()]), len(pos)


@pytest.mark.parametrize("preset,objective", [("default", "time_to_train"), ("mixtral-8x7b-h100-64", "cost"),
                                              ("llama31-8b-torchtitan-h100-8", "mfu"),
                                              ("gpt3-175b-a100-1024", "goodput_tokens_per_s")])
def test_ranking_ties_and_top_k_by_brute_force(preset, objective):
    s = planner.load_preset(preset)
    full = sw.sweep(s, objective=objective, feasible_only=False, **SMALL)
    pos, n_enum = _enum_position(s, full, SMALL)
    assert sorted(pos) == list(range(n_enum))  # every enumerated split once
    feas = (full["infeasible_reason"] == "").to_numpy()
    nf = int(feas.sum())
    assert feas[:nf].all() and not feas[nf:].any()  # infeasible rows last
    assert nf == full.attrs["n_feasible"] > 0
    k = _objective(full, objective)[:nf]
    for i in range(nf - 1):  # best first; ties in enumeration order
        assert k[i] < k[i + 1] or (k[i] == k[i + 1] and pos[i] < pos[i + 1]), i
    # the rows that do not fit: nearest miss first (peak / usable HBM, host need / host memory, the larger),
    # then by the objective, ties in enumeration order (review 34; before, enumeration order alone)
    host = (full["host_mem_per_node_bytes"] + full["ckpt_host_mem_per_node_bytes"].fillna(0.0)) / full[
        "host_mem_capacity_per_node_bytes"]
    miss = np.fmax(full["mem_total_bytes"] / full["hbm_usable_bytes"], host).to_numpy(float)
    miss = np.where(np.isfinite(miss), miss, np.inf)
    kk = _objective(full, objective)
    kk = np.where(np.isfinite(kk), kk, np.inf)
    rank = list(zip(miss[nf:], kk[nf:], pos[nf:]))
    assert rank == sorted(rank)
    best = min(range(nf), key=lambda i: (k[i], pos[i]))
    assert best == 0
    fo = sw.sweep(s, objective=objective, **SMALL)
    pd.testing.assert_frame_equal(fo, full.iloc[:nf].reset_index(drop=True), check_exact=True)
    for K in (1, 7, nf // 3 + 1):
        pd.testing.assert_frame_equal(sw.sweep(s, objective=objective, top=K, **SMALL), fo.head(K), check_exact=True)
    pd.testing.assert_frame_equal(sw.sweep(s, objective=objective, top=nf + 3, feasible_only=False, **SMALL),
                                  full.head(nf + 3), check_exact=True)


def _brute_front(x, y):
    """Minimise both: a point is on the front iff no other finite point is <= in both and < in one."""
    fin = np.isfinite(x) & np.isfinite(y)
    on = np.zeros(x.size, dtype=bool)
    for i in range(x.size):
        if fin[i]:
            on[i] = not np.any(fin & (x <= x[i]) & (y <= y[i]) & ((x < x[i]) | (y < y[i])))
    return on


@pytest.mark.parametrize("preset", ["default", "llama3-405b-h100-16k", "mixtral-8x7b-h100-64"])
def test_pareto_flags_are_exactly_the_non_dominated_rows(preset):
    s = planner.load_preset(preset)
    df = sw.sweep(s, **SMALL)
    want = _brute_front(df["time_to_train_days"].to_numpy(float), df["cost_usd"].to_numpy(float))
    assert np.array_equal(df["pareto_time_cost"].to_numpy(), want)
    head = (df["hbm_usable_bytes"] - df["mem_total_bytes"]).to_numpy(float)
    want = _brute_front(-df["tokens_per_s"].to_numpy(float), -head)
    assert np.array_equal(df["pareto_throughput_memory"].to_numpy(), want)
    assert want.sum() >= 2
    # flags over every feasible row, not the rows shown: the top rows keep their flags
    top = sw.sweep(s, top=25, **SMALL)
    pd.testing.assert_frame_equal(top, df.head(25), check_exact=True)


def test_distinct_results_keeps_the_best_of_each_tie_group_and_counts_the_rest():
    s = planner.load_preset("mpt-7b-a100-8")  # the default's H100 space has no exact ties since review 20
    df = sw.sweep(s, **SMALL)
    seen, keep = set(), []
    for i, r in enumerate(df[list(sw.TIE_COLUMNS)].itertuples(index=False)):
        key = tuple(float(f"{v:.12g}") for v in r)  # to 12 significant digits, the documented rule
        if key not in seen:
            seen.add(key)
            keep.append(i)
    d = sw.distinct_results(df)
    assert list(d.index) == keep
    assert len(df) - len(d) > 100  # the preset's space has many exact ties (328: DP × CP × micro-batch)
    assert d.attrs == df.attrs


# ---- constraints --------------------------------------------------------------------------------


def _oracle_feasible(s, opts, min_headroom=0.0, memory_rule="fits", **kw):
    """Feasible rows by the engine's own columns on every enumerated split (run_batch, not the sweep)."""
    b = sw.enumerate_splits(s, **opts, **kw)
    b.pop("sweep_group")
    out = planner.engine.run_batch(b)
    ok = np.asarray(out["fits"], bool) & np.asarray(out["host_fits"], bool) & np.asarray(out["host_fits_ckpt"], bool)
    ok &= np.asarray(out["mem_total_bytes"]) <= (1 - min_headroom) * np.asarray(out["hbm_usable_bytes"])
    if memory_rule == "conservative":
        ok &= np.asarray(out["fits_conservative"], bool)
    ok &= np.isfinite(np.asarray(out["time_to_train_days"], float))
    return set(map(tuple, np.column_stack([b["n_gpus"], b["tp"], b["pp"], b["cp"], b["vpp"], b["micro_batch_size"],
                                           b["schedule"], b["zero_stage"], b["recompute"],
                                           b["offload_optimizer"]])[ok].tolist()))


def _table_set(df):
    return set(map(tuple, np.column_stack([
        df["n_gpus"], df["tp"], df["pp"], df["cp"], df["vpp"], df["micro_batch_size"],
        [SCHEDULES.index(x) for x in df["schedule"]], df["zero_stage"],
        [RECOMPUTE.index(x) for x in df["recompute"]], [OFFLOAD.index(x) for x in df["offload_optimizer"]],
    ]).tolist()))


@pytest.mark.parametrize("min_headroom,rule", [(0.0, "fits"), (0.15, "fits"), (0.0, "conservative"),
                                               (0.25, "conservative")])
def test_memory_limits_keep_exactly_the_rows_that_meet_them(min_headroom, rule):
    s = planner.load_preset("llama3-405b-h100-16k")
    df = sw.sweep(s, min_headroom=min_headroom, memory_rule=rule, **SMALL)
    assert _table_set(df) == _oracle_feasible(s, SMALL, min_headroom, rule)
    assert len(df) == df.attrs["n_feasible"] > 0


def test_a_gpu_count_list_is_the_union_of_its_sweeps_ranked_together():
    s = planner.load_preset("llama3-8b-h100-64")
    opts = dict(SMALL, cp_max=1, zero_stages=(1,))
    both = sw.sweep(s, gpus=[48, 64, 128, 64], **opts)
    parts = [sw.sweep(s, gpus=g, **opts) for g in (48, 64, 128)]
    assert len(both) == sum(len(p) for p in parts)
    assert _table_set(both) == set().union(*map(_table_set, parts))
    assert _table_set(both) == _oracle_feasible(s, opts, gpus=[48, 64, 128])
    k = both["time_to_train_days"].to_numpy()
    assert np.all(np.diff(k) >= 0)
    assert [len(p) > 0 for p in parts] == [False, True, True]  # 48 GPUs: DP 3·2^k never divides 512 evenly
    assert both.iloc[0]["time_to_train_days"] == min(p.iloc[0]["time_to_train_days"] for p in parts if len(p))


# ---- messages when nothing fits ---------------------------------------------------------------


def _little_host_memory():
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["cluster"]["overrides"]["host_memory_bytes"] = 2e9  # 2 GB per node
    return Scenario.model_validate(d)


def test_splits_over_host_memory_are_not_called_out_of_hbm():
    """Found by review 15l: every split of a CPU-offload space on nodes with 2 GB of host memory fits in
    HBM but not in host memory, and the reason said "every valid split runs out of memory", advising
    to offload more (the opposite of the fix)."""
    s = _little_host_memory()
    opts = dict(micro_batch_max=1, cp_max=2, offload=("cpu",))
    df = sw.sweep(s, top=3, **opts)
    assert df.empty
    why = df.attrs["reason"]
    # the truth, by the engine's own columns on every split: how many fit in HBM, fail on host memory
    b = sw.enumerate_splits(s, **opts)
    b.pop("sweep_group")
    out = planner.engine.run_batch(b)
    hbm = np.asarray(out["fits"], bool)
    host_bad = hbm & ~(np.asarray(out["host_fits"], bool) & np.asarray(out["host_fits_ckpt"], bool))
    assert host_bad.sum() > 0 and not np.any(hbm & ~host_bad)
    assert why.startswith(f"no split fits in host memory: {int(host_bad.sum()):,} valid splits fit in HBM")
    assert f"the other {int((~hbm).sum()):,} run out of HBM" in why
    need = np.asarray(out["host_mem_per_node_bytes"])[host_bad].min()
    assert f"the least any of them needs: {need / 2**30:,.1f} GiB per node" in why
    assert f"than the {2e9 / 2**30:,.1f} GiB each node has" in why
    assert "runs out of memory" not in why and "offload more" not in why
    # no_split_reason on its own (the CLI and the Explore page call it) says the same
    assert sw.no_split_reason(s, 1, **opts) == why


def test_cli_names_host_memory_as_the_binding_limit(capsys):
    from planner.cli import main

    rc = main(["sweep", "--preset", "llama3-8b-h100-64", "--set", "cluster.overrides.host_memory_bytes=2e9",
               "--offload", "cpu", "--micro-batch-max", "1", "--cp-max", "2"])
    err = capsys.readouterr().err
    assert rc == 1
    assert "no split fits in host memory" in err and "runs out of memory" not in err


def test_out_of_hbm_reason_unchanged_when_host_memory_is_not_the_limit():
    s = planner.load_preset("llama3-405b-h100-16k")
    df = sw.sweep(s, gpus=8, top=1, micro_batch_max=1, cp_max=1, zero_stages=(1,))
    assert df.empty and df.attrs["reason"].startswith("every valid split runs out of memory")


# ---- where a sweep of an unsuitable split starts ------------------------------------------------


def test_an_unsuitable_micro_batch_is_swept_not_refused():
    """Found by review 15l: the sweep sets the micro-batch row by row, but a scenario whose micro-batch
    (3) divides no DP share of its batch (512) was refused by plain_base / sweep_start, so
    `planner sweep --set training.micro_batch_size=3` stopped with the schema error."""
    d = planner.load_preset("default").to_json_dict()
    d["training"]["micro_batch_size"] = 3
    with pytest.raises(ValidationError, match="micro_batch_size"):
        Scenario.model_validate(d)
    base, s = sw.plain_base(d)
    assert 512 % (s.training.micro_batch_size * s.parallelism.dp) == 0
    assert sw.sweep_start(d)[2] is None
    ok = planner.load_preset("default").to_json_dict()
    assert sw.plain_base(ok)[0]["training"] == ok["training"]  # a micro-batch that suits is kept


def test_a_dualpipe_scenario_whose_split_does_not_suit_still_sweeps_dualpipe():
    """Found by review 15l: `--set parallelism.schedule=dualpipe` on the default preset (VPP 5, which
    DualPipe refuses) started the sweep from a 1F1B split, so the scenario's own schedule, which the
    default space adds, was dropped: no DualPipe row at all."""
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"]["schedule"] = "dualpipe"
    with pytest.raises(ValidationError, match="vpp"):
        Scenario.model_validate(d)
    base, s = sw.plain_base(d)
    assert s.parallelism.schedule == "dualpipe" and s.parallelism.vpp == 1
    # the first (tp, pp) by (tp·pp, pp) that DualPipe accepts: even pp, an even number of at least
    # 2·pp micro-batches: tp·pp = 8 with pp 2 leaves DP 128 and 512 / 128 = 4 = 2·2 micro-batches
    assert (s.parallelism.tp, s.parallelism.pp) == (4, 2)
    df = sw.sweep(s, top=None, micro_batch_max=1, cp_max=1, zero_stages=(1,), recompute=("selective",),
                  offload=("none",))
    assert (df["schedule"] == "dualpipe").any()
    # an interleaved scenario still starts from 1F1B with the scenario's CP (VPP is reset)
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"]["vpp"] = 3
    base, s = sw.plain_base(d)
    assert (s.parallelism.schedule, s.parallelism.vpp, s.parallelism.cp) == ("1f1b", 1, 1)


def test_n_configurations_counts_the_splits_evaluated_not_nvme_rows_never_generated():
    """Found by review 15l: on a system without local NVMe, an offload list with 'nvme' made
    n_configurations (the CLI's "N valid splits evaluated") count rows that are never generated."""
    s = planner.load_preset("llama3-8b-h100-64")
    o = dict(micro_batch_max=1, cp_max=1, zero_stages=(1,), offload=("none", "cpu", "nvme"))
    df = sw.sweep(s, systems=["gh200-quad"], feasible_only=False, **o)
    # by hand: the same space without the nvme target has the same rows; nvme adds none there
    n = sw.count_splits(s, systems=["gh200-quad"], **dict(o, offload=("none", "cpu")))
    assert len(df) == n == df.attrs["n_configurations"]
    assert not (df["offload_optimizer"] == "nvme").any()
    with_nvme = sw.sweep(s, feasible_only=False, **o)  # DGX H100 has local NVMe: three targets of two
    n_dgx = sw.count_splits(s, **dict(o, offload=("none", "cpu")))
    assert with_nvme.attrs["n_configurations"] == len(with_nvme) == n_dgx * 3 // 2


def test_an_mfu_sweep_that_fits_nowhere_is_told_memory_not_goodput():
    """Found by review 15l: an MFU sweep ranks splits without a finite time to train, but when none
    fitted in HBM (Llama 3 405B on 8 GPUs, a host-memory checkpoint tier alone: goodput 0) its reason
    said "no split has a finite time to train", and the fewest-GPUs hint counted with the
    time-to-train rule (nothing ever fits), so it named no GPU count."""
    d = planner.load_preset("llama3-405b-h100-16k").to_json_dict()
    d["checkpoint"] = {"tiers": [{"tier": "host_memory"}]}
    s = Scenario.model_validate(d)
    o = dict(micro_batch_max=1, cp_max=1, zero_stages=(1,))
    df = sw.sweep(s, gpus=8, objective="mfu", top=3, **o)
    assert df.empty and df.attrs["reason"].startswith("every valid split runs out of memory")
    # the time-to-train sweep of the same space: no split can finish, whatever the memory
    tt = sw.sweep(s, gpus=8, top=3, **o)
    assert tt.attrs["reason"].startswith("no split has a finite time to train")
    # the hint, by brute force over the doublings: the first GPU count whose MFU sweep is not empty
    n_fit = {g: sw.sweep(s, gpus=g, objective="mfu", top=1, **o).attrs["n_feasible"] for g in (16, 32, 64)}
    first = next(g for g in (16, 32, 64) if n_fit[g])
    why = sw.no_split_reason(s, 10, gpus=8, objective="mfu", **o)
    assert why.startswith("every valid split runs out of memory")
    assert f"{first:,} GPUs (cluster.n_gpus, doubling from 8) give {n_fit[first]:,} splits that fit" in why


def test_a_row_of_another_system_rebuilds_on_that_system_when_the_base_system_is_inline():
    """Found by review 15l: scenario_for_row replaced the system only when the scenario's was a
    catalogue id, so a scenario with an inline system swept on dgx-b200 rebuilt each row on the
    inline H100 system (7.39 s per step against the row's 3.70 s)."""
    from planner import catalog

    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["cluster"]["system"] = {**catalog.systems()["dgx-h100"].model_dump(mode="json"), "name": "my-h100"}
    s = Scenario.model_validate(d)
    o = dict(micro_batch_max=1, cp_max=1, zero_stages=(1,), recompute=("selective",), offload=("none",))
    for systems in (["dgx-b200"], None):
        df = sw.sweep(s, systems=systems, top=4, **o)
        assert set(df["system"]) == {"dgx-b200" if systems else "my-h100"}
        ev = planner.evaluate_many([sw.scenario_for_row(s, df.iloc[i]) for i in range(len(df))])
        np.testing.assert_allclose(ev["step_time_s"], df["step_time_s"], rtol=1e-9)
        np.testing.assert_allclose(ev["mem_total_bytes"], df["mem_total_bytes"], rtol=1e-9)
