"""Review 40a D7, left in session 40, done in session 41: a run with a failure class no enabled
checkpoint tier survives has goodput 0 in the renewal model's steady state (each such failure
restarts training from the beginning), and the notes gave no figure for a run of its length — only
a pointer to the Monte Carlo. Now ``reliability.finite_run`` gives the expected time of a run that
each such failure restarts, e^{Σ λ_c·R_c}·(e^{Λ·T} − 1)/Λ (Poisson failures of rate Λ, a job of T
failure-free seconds, the recovery R_c after each), and the goodput-0 note states it.

Expected values: the formula by hand from the row's inputs (no tier: T is the compute time), and
the Monte Carlo (planner.simulate, 20,000 trials, fixed seed) for a run with a tier beside it."""

from __future__ import annotations

import importlib
import math

import pytest

import planner
from planner import batch as B
from planner import reliability as rel
from planner.engine import run_batch
from planner.schema import FAILURE_CLASSES, validate_scenario

sim = importlib.import_module("planner.simulate")


def _out(tiers, tokens=2e10, scale=1.0):
    sj = planner.load_preset("default").to_json_dict()
    sj["checkpoint"]["tiers"] = tiers
    sj["training"]["tokens_total"] = tokens
    sj["reliability"]["rate_scale"] = scale
    return run_batch(B.from_scenarios([validate_scenario(sj)]))


def test_no_tier_by_hand():
    """No tier: every failure restarts the run, and T is the compute time W (no saves, no stalls)."""
    out = _out([])
    row = B.row(out, 0)
    assert float(out["goodput"][0]) == 0.0 and math.isinf(float(out["time_to_train_days"][0]))
    W = row["tokens_total"] / row["tokens_per_s"]  # s
    lam_h = [row[f"failure_rate_{c}_per_h"] for c in FAILURE_CLASSES]
    R = [row[f"fail_{c}_restart_s"] + row[f"fail_{c}_repair_s"] for c in FAILURE_CLASSES]  # hot spares 0
    lam_s = sum(lam_h) / 3600.0
    want = math.exp(sum(lh * r for lh, r in zip(lam_h, R)) / 3600.0) * math.expm1(lam_s * W) / lam_s / 86_400.0
    fin, exact = rel.finite_run(row)
    assert exact and fin == pytest.approx(want, rel=1e-9)
    # the Monte Carlo, which restarts such a run from the beginning, agrees
    df = sim.simulate_batch_row(out, 0, n_trials=20_000, seed=3)
    t = df["time_to_train_days"]
    assert abs(t.mean() - fin) < 4.0 * t.std() / math.sqrt(len(t))


@pytest.mark.parametrize("tokens, scale", [(2e9, 1.0), (2e10, 1.0), (1e11, 1.0), (2e10, 10.0)])
def test_host_memory_only_against_the_monte_carlo(tokens, scale):
    """Host memory recovers software and network failures; GPU, node and cluster failures restart
    the run. T is then the run's time apart from those (its mean), within 1 % of the Monte Carlo
    (measured: −0.24 / −0.06 / +0.57 / +0.53 %, each within 2 standard errors)."""
    out = _out([{"tier": "host_memory"}], tokens, scale)
    row = B.row(out, 0)
    fin, exact = rel.finite_run(row)
    assert not exact  # two processes: host-memory recoveries and restarts from the beginning
    W_d = row["tokens_total"] / row["tokens_per_s"] / 86_400.0
    assert W_d < fin < math.inf
    assert sim.too_many_failures(out, 0) is None
    t = sim.simulate_batch_row(out, 0, n_trials=20_000, seed=3)["time_to_train_days"]
    assert fin == pytest.approx(t.mean(), rel=0.01)


def test_the_goodput_0_note_gives_the_finite_run():
    sj = planner.load_preset("default").to_json_dict()
    sj["checkpoint"]["tiers"] = [{"tier": "host_memory"}]
    sj["training"]["tokens_total"] = 2e10
    r = planner.evaluate(sj)
    note = next(n for n in r.notes if n.startswith("Goodput is 0: no enabled checkpoint tier survives"))
    fin = rel.finite_run(B.row(_out([{"tier": "host_memory"}]), 0))[0]
    assert f"gives about {fin:.4g} d (e^(Σ λ_c·R_c)·(e^(Λ·T) − 1)/Λ, Λ = 0.01561/h" in note
    assert "at its mean" in note and "the Monte Carlo (planner.simulate) simulates it" in note
    # Λ = the GPU + node + cluster rates: 0.01292 + 0.002218 + 0.000463 per hour (the note lists them)
    assert "(0.01292/h, 0.002218/h, 0.000463/h)" in note
    assert "Enable a tier that survives them (" in note  # three classes (review 41c: "it")
    cost = next(n for n in r.notes if n.startswith("Time, GPU-hours, cost and energy are"))
    assert cost.startswith("Time, GPU-hours, cost and energy are infinite (inf in the CLI table, JSON and CSV, — on the Plan page's headline numbers; the cost per million tokens too): the steady-state goodput is 0")
    # a long run: the figure is astronomically long and the Monte Carlo is refused
    sj["training"]["tokens_total"] = 1e13
    note = next(n for n in planner.evaluate(sj).notes if n.startswith("Goodput is 0: no enabled"))
    assert "too many failures for the Monte Carlo to simulate: the run does not finish in practice" in note


def test_a_tier_that_saves_nothing_within_the_run_restarts_its_classes_too():
    """Review 41b D2: host memory given 1e6 s on a 2.67-day run saves nothing before the run ends,
    so its software and network failures restart the run as the others do: every class restarts,
    and the figure is the exact all-class one (the hand formula of test_no_tier_by_hand), not a
    product of two restart factors (+9.2 % against the Monte Carlo before)."""
    out = _out([{"tier": "host_memory", "interval_s": 1e6}], tokens=2e11)
    row = B.row(out, 0)
    W = row["tokens_total"] / row["tokens_per_s"]
    assert W < 1e6
    lam_h = [row[f"failure_rate_{c}_per_h"] for c in FAILURE_CLASSES]
    R = [row[f"fail_{c}_restart_s"] + row[f"fail_{c}_repair_s"] for c in FAILURE_CLASSES]
    lam_s = sum(lam_h) / 3600.0
    want = math.exp(sum(lh * r for lh, r in zip(lam_h, R)) / 3600.0) * math.expm1(lam_s * W) / lam_s / 86_400.0
    fin, exact = rel.finite_run(row)
    # (T = W·(1 + stall/τ): the save stalls spread over progress, as the Monte Carlo spreads them;
    # host memory's stall/τ is about 1e-7 here)
    assert exact and fin == pytest.approx(want, rel=1e-6)
    note = next(n for n in planner.evaluate(_sj([{"tier": "host_memory", "interval_s": 1e6}], 2e11)).notes
                if n.startswith("Goodput is 0"))
    assert "the host_memory tier saves nothing within the run" in note and "software, network failures" in note
    t = sim.simulate_batch_row(out, 0, n_trials=20_000, seed=3)["time_to_train_days"]
    assert abs(t.mean() - fin) < 4.0 * t.std() / math.sqrt(len(t))


def _sj(tiers, tokens, scale=1.0):
    sj = planner.load_preset("default").to_json_dict()
    sj["checkpoint"]["tiers"] = tiers
    sj["training"]["tokens_total"] = tokens
    sj["reliability"]["rate_scale"] = scale
    return sj


def test_a_figure_past_the_float_range_is_given_in_powers_of_ten_and_refused():
    """Review 41b D3: no tier at 10 × the failure rate on the default preset's 15T tokens: about
    e^1000 days overflowed to inf, and the Monte Carlo ran its round cap instead of refusing."""
    out = _out([], tokens=1.5e13, scale=10.0)
    row = B.row(out, 0)
    lg = rel.finite_run_log10_days(row)
    # hand: Λ·W/ln 10 dominates: Λ = 10 × the catalogue rate, W the compute time
    lam_s = sum(row[f"failure_rate_{c}_per_h"] for c in FAILURE_CLASSES) / 3600.0
    W = row["tokens_total"] / row["tokens_per_s"]
    assert lg == pytest.approx(lam_s * W / math.log(10.0), rel=0.01) and lg > 308
    why = sim.too_many_failures(out, 0)
    assert why is not None and f"10^{lg:,.0f} days" in why and "does not finish in practice" in why
    note = next(n for n in planner.evaluate(_sj([], 1.5e13, 10.0)).notes if n.startswith("Goodput is 0"))
    assert f"gives about 10^{lg:,.0f} d" in note


def test_restart_runs_get_a_longer_round_cap():
    """Review 41b D5: a run's failure count is about geometric where failures restart it, so 10 × its
    mean cut about one trial in 22,000 short (e^−10) and made the mean inf; the cap is 40 × there."""
    p = sim.params_from_batch(_out([{"tier": "host_memory"}]), 0)
    assert sim.restarts_from_beginning(p["work_s"], p["tau_s"], p["enabled"], p["lam_per_s"], p["survives"])
    base = sim.round_cap(p["work_s"], p["tau_s"], p["enabled"], p["stall_s"], p["lam_per_s"], 1000.0)
    long = sim.round_cap(p["work_s"], p["tau_s"], p["enabled"], p["stall_s"], p["lam_per_s"], 1000.0, restarts=True)
    assert (base, long) == (10 * 1000 + sim.MAX_ROUNDS_FLOOR, 40 * 1000 + sim.MAX_ROUNDS_FLOOR)
    q = sim.params_from_batch(_out([{"tier": "host_memory"}, {"tier": "pfs"}]), 0)
    assert not sim.restarts_from_beginning(q["work_s"], q["tau_s"], q["enabled"], q["lam_per_s"], q["survives"])


def test_the_refusal_sizes_a_restart_run_by_its_figure():
    """Review 41b D4: the conservative sizing ignored an inexact finite-run figure, which is an upper
    estimate here (T at its mean), and refused a run the note said the Monte Carlo simulates."""
    out = _out([{"tier": "host_memory"}], tokens=2e10)
    fin, exact = rel.finite_run(B.row(out, 0))
    assert not exact and rel.finite_run_restarts(B.row(out, 0))
    assert sim.expected_days(out, 0, conservative=True) == fin
