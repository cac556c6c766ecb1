"""Review 15j: the Monte Carlo (planner/simulate.py) checked as a reliability statistician would.

Every expected value below is a closed form or a small linear system written here by hand from
the model the module docstring states (Poisson failures of rate λ = Σ_c λ_c in wall time, also
during recoveries; stalls spread over progress; rollback to the newest durable save of a tier
that survives the class; restart + repair + reload per failure). Statistical tolerances are
stated per test: 4 standard errors of the estimate (two-sided, a false alarm about 6 in 100,000
per assertion), with fixed seeds, so the tests are deterministic.

Closed forms used (exponential failures, Daly 2006, FGCS 22(3), renewal argument):

* a segment of wall length s (τ of progress + its stall δ) that every failure sends back to its
  start, each failure followed by a recovery of class c of length x_c that a failure during it
  extends to the later end (an M/G/∞ busy period B, E[B] = (e^{ρ} − 1)/λ with ρ = Σ_c λ_c·x_c,
  Takács 1962): E[wall] = (e^{λs} − 1)·(1/λ + E[B]) = (e^{λs} − 1)·e^{ρ}/λ;
* Wald's identities for the Poisson process N(t) stopped at the run's end T:
  E[N(T)] = λ·E[T] and E[(N(T) − λT)²] = λ·E[T];
* the progress since the last save at a failure (sync saves, no failures during recovery):
  an exponential of rate μ = λ(τ + δ)/τ per compute second truncated to [0, τ), mean
  1/μ − τ/(e^{μτ} − 1) (τ/2 to first order in μτ).
"""

from __future__ import annotations

import re
import importlib
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import planner
from planner import batch as B
from planner.engine import run_batch
from planner.schema import validate_scenario

sim = importlib.import_module("planner.simulate")  # planner.simulate is also the function
ROOT = Path(__file__).resolve().parents[1]
K, C = 4, 5  # tiers (host_memory, local_nvme, pfs, object_store), classes (software .. cluster)
M = 36_000.0  # 10 h


def _one_tier(tau, delta, lam_c, rec_c, reload, work, *, trials, seed, save=None):
    """One sync PFS tier (index 2) every ``tau`` s of compute, stall ``delta`` s; classes as given."""
    return sim.simulate_params(
        work, np.array([np.nan, np.nan, tau, np.nan]), np.array([False, False, True, False]),
        np.array([0, 0, delta, 0.0]), np.array([0, 0, delta if save is None else save, 0.0]),
        np.asarray(lam_c, dtype=float), np.asarray(rec_c, dtype=float), np.full((K, C), float(reload)),
        np.ones((K, C), dtype=bool), n_trials=trials, seed=seed)


def _segment(lam_c, x_c, s):
    """Expected wall time of a segment of wall length s (renewal, Daly, with M/G/∞ recoveries):
    (e^{λs} − 1)·e^{Σ_c λ_c x_c}/λ."""
    lam_c, x_c = np.asarray(lam_c, float), np.asarray(x_c, float)
    lam = lam_c.sum()
    return math.expm1(lam * s) * math.exp(float(np.sum(lam_c * x_c))) / lam


def _days_s(df):
    return df["time_to_train_days"].to_numpy() * 86_400.0


# --- mean time to train against the renewal model ------------------------------------------------

@pytest.mark.parametrize(("tau", "delta", "reload", "n_seg"), [(M, 600.0, 0.0, 20), (M, 600.0, 900.0, 20),
                                                               (0.25 * M, 60.0, 300.0, 80)])
def test_mean_time_to_train_with_several_classes_is_the_exact_renewal_expectation(tau, delta, reload, n_seg):
    """Three classes of different recovery times (300 s, 7,000 s, 1,200 s; 50/30/20 % of an MTBF
    of 10 h), one sync tier. A run of exactly ``n_seg`` intervals: E[T] = seg₀ + (n − 1)·seg
    (the renewal expectation per segment, above; seg₀ without the reload: a failure in the first
    interval restarts from the beginning, which reloads nothing). 4,000 runs, 4 standard errors."""
    lam_c = np.array([0.5, 0, 0.3, 0.2, 0]) / M
    rec_c = np.array([300.0, 0, 7000.0, 1200.0, 0])
    df = _one_tier(tau, delta, lam_c, rec_c, reload, n_seg * tau, trials=4000, seed=11)
    seg = _segment(lam_c, rec_c + reload, tau + delta)
    seg0 = _segment(lam_c, rec_c, tau + delta)
    want = seg0 + (n_seg - 1) * seg
    t = _days_s(df)
    assert df["finished"].all()
    assert abs(t.mean() - want) < 4 * t.std(ddof=1) / math.sqrt(len(t)), (t.mean(), want)


def test_mean_time_to_train_is_work_over_the_engines_goodput():
    """Reload 0, so every interval is alike: E[T] = W / G exactly, G the engine's renewal goodput
    (planner.reliability.expected_goodput, the headline) for the same parameters, which is also
    the hand formula 1/G = (1 + δ/τ)·φ(λ(τ+δ))·e^{Σ_c λ_c R_c}. 4,000 runs, 4 standard errors."""
    from planner import reliability as rel

    tau, delta = 0.5 * M, 300.0
    lam_c = np.array([0.5, 0, 0.3, 0.2, 0]) / M
    rec_c = np.array([300.0, 0, 7000.0, 1200.0, 0])
    g = rel.expected_goodput(
        [np.array([np.nan]), np.array([np.nan]), np.array([tau]), np.array([np.nan])],
        np.array([[0, 0, delta, 0.0]]), np.array([[False, False, True, False]]), lam_c[None, :],
        rec_c[None, :], np.zeros((1, K, C)), np.ones((1, K, C), dtype=bool))["goodput"][0]
    assert g == pytest.approx(tau / _segment(lam_c, rec_c, tau + delta), rel=1e-12)
    work = 40 * tau
    df = _one_tier(tau, delta, lam_c, rec_c, 0.0, work, trials=4000, seed=12)
    t = _days_s(df)
    assert abs(t.mean() - work / g) < 4 * t.std(ddof=1) / math.sqrt(len(t))
    # the pooled goodput of the summary is W / mean T: the estimate of G
    pooled = sim.summarize(df).set_index("metric").loc["goodput", "mean"]
    assert pooled == pytest.approx(work / t.mean(), rel=1e-12)


# --- failures per run ------------------------------------------------------------------------

def test_failures_per_run_follow_walds_identities_for_a_poisson_process():
    """N(T) of a Poisson process of rate λ stopped at the run's end: E[N − λT] = 0 and
    E[(N − λT)²] = λ·E[T] (Wald's first and second identities; for a fixed T this is Poisson's
    mean = variance = λT). Failures during recoveries count too. 20,000 runs, 4 standard errors
    (of the mean of N − λT, and of its second moment: sqrt(Var((N − λT)²)/n))."""
    lam_c = np.array([0.5, 0, 0.3, 0.2, 0]) / M
    rec_c = np.array([300.0, 0, 7000.0, 1200.0, 0])
    df = _one_tier(M, 600.0, lam_c, rec_c, 900.0, 20 * M, trials=20_000, seed=13)
    lam = lam_c.sum()
    t = _days_s(df)
    n = df["n_failures"].to_numpy().astype(float)
    d = n - lam * t
    assert abs(d.mean()) < 4 * d.std(ddof=1) / math.sqrt(len(d))
    d2 = d**2
    assert abs(d2.mean() - lam * t.mean()) < 4 * d2.std(ddof=1) / math.sqrt(len(d2))
    # the class counts add up, and each class gets its share λ_c/λ of the failures (4 SE of a
    # binomial proportion over all failures)
    cls = df[[f"n_failures_{c}" for c in ("software", "gpu", "node", "network", "cluster")]].to_numpy()
    assert (cls.sum(axis=1) == df["n_failures"].to_numpy()).all()
    tot = cls.sum()
    for j in range(C):
        p = lam_c[j] / lam
        assert abs(cls[:, j].sum() / tot - p) <= 4 * math.sqrt(p * (1 - p) / tot)


# --- lost work per failure -------------------------------------------------------------------

@pytest.mark.parametrize(("lam_tau", "delta"), [(0.05, 60.0), (1.0, 60.0), (2.0, 0.0)])
def test_lost_work_per_failure_is_the_truncated_exponential_mean(lam_tau, delta):
    """Sync saves every τ = 1 h, no recovery time (so no failure strikes a recovery): the compute
    lost per failure is the progress since the last save, an exponential of rate μ = λ(τ+δ)/τ per
    compute second truncated to [0, τ): mean 1/μ − τ/(e^{μτ} − 1) = τ/2·(1 − μτ/6 + ...)
    (1,784.7 s at λτ = 0.05, against τ/2 = 1,800 s). Ratio estimator Σ lost / Σ N over 1,500
    runs, 4 of its standard errors."""
    tau = 3600.0
    lam = lam_tau / tau
    # a long run (1,000 intervals): a failure in the last interval or so cannot lose more than the
    # progress left, a bias of order 1/1,000 of the failures, well under the tolerance
    df = _one_tier(tau, delta, [lam, 0, 0, 0, 0], np.zeros(C), 0.0, 1000 * tau, trials=1500, seed=14)
    mu = lam * (tau + delta) / tau
    want = 1 / mu - tau / math.expm1(mu * tau)
    lost = df["lost_work_h"].to_numpy() * 3600.0
    n = df["n_failures"].to_numpy().astype(float)
    r = lost.sum() / n.sum()
    se = math.sqrt(np.sum((lost - r * n) ** 2) / (len(n) * (len(n) - 1))) / n.mean()
    assert abs(r - want) < 4 * se, (r, want, se)
    if lam_tau <= 0.05:
        assert r == pytest.approx(tau / 2, rel=0.02)
    assert (df["recovery_h"] == 0).all()


@pytest.mark.parametrize(("lam_tau", "save"), [(0.2, 1810.0), (1.0, 1810.0), (0.5, 5000.0)])
def test_lost_work_per_failure_with_async_saves_counts_the_save_until_it_is_durable(lam_tau, save):
    """Async saves every τ = 1 h: 10 s stall, durable ``save`` s after the start (longer than τ in
    the last case), so ℓ = (save − stall)·ρ compute seconds (ρ = 1/(1 + stall/τ)) pass before a save
    can be restored. From a restored save, the progress Y to the next failure is exponential of
    rate μ = λ/ρ and the saves at jτ (j ≥ 1) are durable once Y ≥ jτ + ℓ, so the loss is
    Y − τ·#{j ≥ 1: jτ + ℓ ≤ Y}: mean 1/μ − τ·Σ_j e^{−μ(jτ+ℓ)} = 1/μ − τ·e^{−μℓ}/(e^{μτ} − 1)
    (the sync form at ℓ = 0). A run of 4,000 intervals (the end effect, failures that cannot
    lose more than the progress left, cost −0.24 % at 200 intervals, 4 SE); 1,000 runs, 4 SE."""
    tau, stall = 3600.0, 10.0
    lam = lam_tau / tau
    df = _one_tier(tau, stall, [lam, 0, 0, 0, 0], np.zeros(C), 0.0, 4000 * tau, trials=1000, seed=21, save=save)
    rho = 1 / (1 + stall / tau)
    mu, ell = lam / rho, (save - stall) * rho
    want = 1 / mu - tau * math.exp(-mu * ell) / math.expm1(mu * tau)
    lost = df["lost_work_h"].to_numpy() * 3600.0
    n = df["n_failures"].to_numpy().astype(float)
    r = lost.sum() / n.sum()
    se = math.sqrt(np.sum((lost - r * n) ** 2) / (len(n) * (len(n) - 1))) / n.mean()
    assert abs(r - want) < 4 * se, (r, want, se)


# --- recovery accounting -------------------------------------------------------------------------

@pytest.mark.parametrize("spares", [0, 8])
def test_recovery_time_is_restart_repair_and_reload_and_hot_spares_drop_the_repair(spares):
    """Default preset (Llama 3 profile: restart 660 s for every class, + 7,200 s repair for gpu and
    node failures without hot spares, 14,400 s for a cluster outage) at 30× the failure rate, a
    60-day run. A failure of class c during training starts a recovery of x_c = restart + repair +
    reload that failures during it extend to the later end: a busy period B of an M/G/∞ queue,
    E[B] = (e^ρ − 1)/λ, ρ = Σ_c λ_c·x_c, with 1 + λE[B] = e^ρ failures in it (Wald: its end is a
    stopping time). So E[recovery per run] = E[N]·e^{−ρ}·E[B] = E[N]·(1 − e^{−ρ})/λ, with x_c from
    the profile (the tier's reload, under a second here, from the engine). 600 runs, 4 standard
    errors of the per-run difference. (Until 2026-12-02 a failure restarted the recovery with its
    own x_c: Σ_c E[N_c]·(1 − e^{−λx_c})/λ.)"""
    d = planner.load_preset("default").to_json_dict()
    d["reliability"].update(rate_scale=30, hot_spare_nodes=spares)
    d["checkpoint"]["tiers"] = [{"tier": "pfs"}]
    out = run_batch(B.from_scenarios([validate_scenario(d)]))
    d["training"]["tokens_total"] = float(60 * 86400 * out["tokens_per_s"][0])
    out = run_batch(B.from_scenarios([validate_scenario(d)]))
    p = sim.params_from_batch(out, 0)
    repair = 0.0 if spares else 7200.0
    want_rec = np.array([660.0, 660.0 + repair, 660.0 + repair, 660.0, 14_400.0])
    assert np.allclose(p["recovery_s"], want_rec, rtol=0, atol=1e-9)
    reload = p["reload_s"][2]  # the PFS tier recovers every class
    assert (reload < 1.0).all()
    df = sim.simulate_params(**p, n_trials=600, seed=15)
    lam = p["lam_per_s"].sum()
    cls = df[[f"n_failures_{c}" for c in ("software", "gpu", "node", "network", "cluster")]].to_numpy()
    rho = float(np.sum(p["lam_per_s"] * (want_rec + reload)))
    per = -math.expm1(-rho) / lam
    # a rollback to the start (a failure before the first save, τ ≈ minutes) reloads nothing:
    # at most one reload per run, well below the tolerance
    diff = df["recovery_h"].to_numpy() * 3600.0 - cls.sum(axis=1) * per
    assert abs(diff.mean()) < 4 * diff.std(ddof=1) / math.sqrt(len(diff)) + reload.max()


# --- tiers that do not survive a class -------------------------------------------------------------

def _two_tier_segment(m, tau_a, lam0, lam1, r0, r1, rel_a, rel_b, *, first=False):
    """Expected wall time of one PFS interval of m host-memory intervals (tier A = host memory
    every tau_a, surviving class 0 only; tier B = PFS every m·tau_a, surviving both; no stalls),
    solved by hand as a Markov chain. States: F(i, h), computing sub-interval i, h = 1 when A
    holds a save at its start (always for i > 0; at i = 0 only if progress reached the PFS save,
    not after a class-1 rollback that destroyed A); Q0(i, h): a class-0 recovery towards (i, h)
    (reload A if h, else B); Q1: a class-1 recovery towards (0, 0) (reload B). Any failure cuts
    a recovery short. ``first``: the run's first interval, whose start holds no save (reload 0)."""
    lam = lam0 + lam1
    p0, p1 = lam0 / lam, lam1 / lam
    keys: dict = {}
    rows = []

    def key(k):
        return keys.setdefault(k, len(keys))

    q = math.exp(-lam * tau_a)

    def x0(i, h):
        return r0 + (0.0 if first and i == 0 else (rel_a if h else rel_b))

    x1 = r1 + (0.0 if first else rel_b)
    for i, h in [(i, 1) for i in range(m)] + [(0, 0)]:
        c = {("Q0", i, h): (1 - q) * p0, ("Q1",): (1 - q) * p1}
        if i + 1 < m:
            c[("F", i + 1, 1)] = q
        rows.append((("F", i, h), c, (1 - q) / lam))
        qq = math.exp(-lam * x0(i, h))
        rows.append((("Q0", i, h), {("Q0", i, h): (1 - qq) * p0, ("Q1",): (1 - qq) * p1, ("F", i, h): qq},
                     (1 - qq) / lam))
    qq = math.exp(-lam * x1)
    rows.append((("Q1",), {("Q0", 0, 0): (1 - qq) * p0, ("Q1",): (1 - qq) * p1, ("F", 0, 0): qq}, (1 - qq) / lam))
    for lhs, c, _ in rows:
        key(lhs)
        for k in c:
            key(k)
    a, b = np.eye(len(keys)), np.zeros(len(keys))
    for lhs, c, const in rows:
        b[keys[lhs]] = const
        for k, v in c.items():
            a[keys[lhs], keys[k]] -= v
    return float(np.linalg.solve(a, b)[keys[("F", 0, 1)]])


def _two_tier_run(scale, *, n_b, trials, seed, use_b=True, rel_b=3000.0, r=100.0, m=4):
    tau_a = 600.0
    surv = np.zeros((K, C), dtype=bool)
    surv[0, 0] = True
    surv[2, :] = True
    reload = np.zeros((K, C))
    reload[2, :] = rel_b
    return sim.simulate_params(
        n_b * m * tau_a * scale, np.array([tau_a, np.nan, m * tau_a, np.nan]) * scale,
        np.array([True, False, use_b, False]), np.zeros(K), np.zeros(K),
        np.array([5 / M, 1 / M, 0, 0, 0]) / scale, np.full(C, r) * scale, reload * scale, surv,
        n_trials=trials, seed=seed)


def test_a_failure_the_fast_tier_does_not_survive_rolls_back_to_the_pfs_exactly_as_the_markov_chain():
    """Host memory every 600 s survives class 0 (5 per 10 h); class 1 (1 per 10 h) destroys it
    and rolls the run back to the PFS save (every 2,400 s), which takes 3,000 s to reload; restart
    100 s. 400 PFS intervals: E[T] = first interval + 399 × a later one, from the hand-solved chain
    (13.65 days). 4,000 runs, 4 standard errors."""
    want = (_two_tier_segment(4, 600.0, 5 / M, 1 / M, 100.0, 100.0, 0.0, 3000.0, first=True)
            + 399 * _two_tier_segment(4, 600.0, 5 / M, 1 / M, 100.0, 100.0, 0.0, 3000.0))
    assert want / 86400 == pytest.approx(13.65, abs=0.01)
    t = _days_s(_two_tier_run(1.0, n_b=400, trials=4000, seed=16))
    assert abs(t.mean() - want) < 4 * t.std(ddof=1) / math.sqrt(len(t)), (t.mean() / 86400, want / 86400)


def test_the_monte_carlo_is_exact_under_a_change_of_time_unit_beyond_2_to_the_23_seconds():
    """Found by review 15j. Scaling every time by 2^k (and the rates by 2^−k) must scale every
    simulated run exactly (the same seed draws the same standard exponentials). It did not past
    2^23 s (97 days) of compute: a tier destroyed by a failure held valid saves only above
    ``target + 1e-9``, and the 1e-9 is lost in rounding there, so host memory destroyed by a
    class-1 failure was credited with a save at the PFS rollback point and the next class-0
    failure reloaded from it for free: 13.07 days against the chain's exact 13.65 (and the
    unscaled Monte Carlo's 13.65) with the times scaled by 1,024."""
    a = _two_tier_run(1.0, n_b=400, trials=2000, seed=17)
    for k in (-10, 10, 14):
        s = 2.0**k
        b = _two_tier_run(s, n_b=400, trials=2000, seed=17)
        assert np.array_equal(b["time_to_train_days"].to_numpy(), a["time_to_train_days"].to_numpy() * s), k
        assert np.array_equal(b["recovery_h"].to_numpy(), a["recovery_h"].to_numpy() * s), k
        assert np.array_equal(b["n_failures"].to_numpy(), a["n_failures"].to_numpy()), k
    want = (_two_tier_segment(4, 600.0, 5 / M, 1 / M, 100.0, 100.0, 0.0, 3000.0, first=True)
            + 399 * _two_tier_segment(4, 600.0, 5 / M, 1 / M, 100.0, 100.0, 0.0, 3000.0))
    t = _days_s(_two_tier_run(1024.0, n_b=400, trials=4000, seed=16)) / 1024.0
    assert abs(t.mean() - want) < 4 * t.std(ddof=1) / math.sqrt(len(t)), (t.mean() / 86400, want / 86400)


def test_with_no_tier_surviving_a_class_the_run_restarts_from_the_beginning():
    """The PFS disabled: host memory (every 600 s) survives class 0 only, so a class-1 failure
    (1 per 100 h) restarts from the beginning and reloads nothing. A 20-hour run is then one
    "interval" of 120 host-memory intervals in the chain above with the PFS at the start
    (first=True; 2,000 s restarts). 4,000 runs, 4 standard errors."""
    m = 120
    df = sim.simulate_params(
        m * 600.0, np.array([600.0, np.nan, np.nan, np.nan]), np.array([True, False, False, False]),
        np.zeros(K), np.zeros(K), np.array([5 / M, 0.1 / M, 0, 0, 0]), np.full(C, 2000.0), np.full((K, C), 50.0),
        np.eye(K, C, dtype=bool), n_trials=4000, seed=18)
    want = _two_tier_segment(m, 600.0, 5 / M, 0.1 / M, 2000.0, 2000.0, 50.0, 0.0, first=True)
    t = _days_s(df)
    assert abs(t.mean() - want) < 4 * t.std(ddof=1) / math.sqrt(len(t)), (t.mean(), want)


# --- summary, seeds, limits ---------------------------------------------------------------------

def test_summary_percentiles_and_means_are_numpys_on_the_per_run_table():
    """P10 / P50 / P90 are numpy's linear percentiles of each per-run column, the mean its plain
    mean except goodput's, the pooled W / mean(T); the per-run units agree: goodput ×
    time_to_train_days × 86,400 s is the same work W for every run."""
    df = planner.simulate(planner.load_preset("default"), n_trials=700, seed=19)
    s = sim.summarize(df).set_index("metric")
    assert list(s.index) == ["time_to_train_days", "cost_usd", "goodput", "n_failures", "lost_work_h", "recovery_h"]
    for m in s.index:
        v = df[m].to_numpy(dtype=float)
        assert np.allclose(s.loc[m, ["p10", "p50", "p90"]].to_numpy(float), np.percentile(v, [10, 50, 90]),
                           rtol=1e-15, atol=0)
        if m != "goodput":
            assert s.loc[m, "mean"] == pytest.approx(v.mean(), rel=1e-15)
    w = df["goodput"].to_numpy() * df["time_to_train_days"].to_numpy() * 86400.0
    out = run_batch(B.from_scenarios([planner.load_preset("default")]))
    work = float(out["tokens_total"][0] / out["tokens_per_s"][0])
    assert np.allclose(w, work, rtol=1e-12)
    assert s.loc["goodput", "mean"] == pytest.approx(work / 86400.0 / df["time_to_train_days"].mean(), rel=1e-12)


def test_a_percentile_on_the_last_finished_run_is_that_run_not_infinity():
    """Found by review 15j. Eleven runs: 1, 2, ..., 10 days and one that never finishes (inf).
    The linear P90 sits at position 0.9 × 10 = 9 of the sorted values, exactly the 10th run: 10
    days (and goodput's P10, at position 1, is 1/10 of the work per day: 0.1). numpy interpolates
    10 + (inf − 10) × 0 = NaN there, which summarize read as inf ("never" on the Plan page).
    Between the last finished run and an unfinished one (ten runs: position 8.1) it stays inf."""
    import pandas as pd

    t = np.array([1.0, 2, 3, 4, 5, 6, 7, 8, 9, 10, np.inf])
    df = pd.DataFrame({"time_to_train_days": t, "goodput": np.where(np.isfinite(t), 1 / t, 0.0),
                       "finished": np.isfinite(t)})
    s = sim.summarize(df).set_index("metric")
    assert s.loc["time_to_train_days", ["p10", "p50", "p90"]].tolist() == [2.0, 6.0, 10.0]
    assert s.loc["goodput", "p10"] == pytest.approx(0.1, rel=1e-15)
    s = sim.summarize(df.iloc[1:]).set_index("metric")  # 2 .. 10 and inf: positions 0.9, 4.5, 8.1
    assert s.loc["time_to_train_days", ["p10", "p50", "p90"]].tolist() == [2.9, 6.5, np.inf]


def test_same_seed_same_runs_other_seed_other_runs_and_the_seed_limits():
    d = planner.load_preset("llama3-8b-h100-64")
    a = planner.simulate(d, n_trials=50, seed=2**63 - 1)
    assert a.equals(planner.simulate(d, n_trials=50, seed=2**63 - 1))
    assert not a.equals(planner.simulate(d, n_trials=50, seed=2**63 - 2))
    with pytest.raises(planner.InputError,
                       match=r"^seed: an integer from 0 to 2\^63 − 1 \(got 9223372036854775808\)"):
        planner.simulate(d, n_trials=5, seed=2**63)
    with pytest.raises(planner.InputError, match=r"^n_trials: an integer from 1 to 1,000,000 \(got 1000001\)"):
        planner.simulate(d, n_trials=1_000_001)
    assert len(planner.simulate(d, n_trials=1, seed=0)) == 1


def test_the_loop_is_over_failure_rounds_not_over_trials():
    """The docstring's claim: one loop round per failure, all trials at once. The progress callback
    runs once per round, so the rounds are the most failures of any run + 1 (its last round
    finishes it), whatever the number of trials."""
    lam_c = np.array([1 / M, 0, 0, 0, 0])
    for n in (10, 3000):
        calls = []
        df = sim.simulate_params(
            20 * M, np.array([np.nan, np.nan, M, np.nan]), np.array([False, False, True, False]), np.zeros(K),
            np.zeros(K), lam_c, np.zeros(C), np.zeros((K, C)), np.ones((K, C), dtype=bool),
            n_trials=n, seed=20, progress=calls.append)
        assert len(calls) == df["n_failures"].max() + 1


def test_the_405b_run_the_cli_help_times_fails_about_580_times():
    """CLI help: "10,000 take about 1 s ... for a run with ~580 failures" — the Llama 3 405B preset
    fails ~577 times per run (its speed is measured in benchmarks/, not here: house rule)."""
    df = planner.simulate(planner.load_preset("llama3-405b-h100-16k"), n_trials=2_000, seed=0)
    assert 540 < df["n_failures"].mean() < 620


# --- runs that never finish, runs refused ------------------------------------------------------------

def test_the_unfinished_note_gives_the_cap_the_runs_were_stopped_at():
    """Found by review 15j: the note said the runs were "stopped after 10× the failures the run
    should take" beside failure counts many times that (the run never finishes analytically). A run
    whose recoveries failures extend without end (every repair 1e7 s at 100 × the rate): every run
    stops at the cap, 10 × λ × W·(1 + Σ stall/τ) + 10,000 failures (λ the failure rate, W the compute
    time, the saves' stalls spread over progress), which the note gives. (Until session 41 the run
    with no tier; it is now refused up front by its finite-run figure.)"""
    from test_simulate import _endless_recoveries

    d = _endless_recoveries()
    out = run_batch(B.from_scenarios([validate_scenario(d)]))
    assert float(out["goodput"][0]) == 0.0
    lam_w = float(out["failure_rate_per_h"][0]) / 3600.0 * float(out["tokens_total"][0] / out["tokens_per_s"][0])
    stalls = sum(float(out[f"ckpt_{k}_stall_s"][0]) / float(out[f"ckpt_{k}_interval_opt_s"][0])
                 for k in ("host_memory", "pfs") if float(out[f"ckpt_{k}_interval_opt_s"][0]) < 1e8)
    cap = int(10 * lam_w * (1 + stalls) + 10_000)
    df = planner.simulate(d, n_trials=20, seed=0)
    assert (~df["finished"]).all() and (df["n_failures"] == cap).all()
    note = sim.unfinished_note(df)
    assert note.startswith("20 of 20 simulated runs never finished (time to train ∞): they were stopped after "
                           f"{cap:,} failures each, the simulator's cap (10× the failures expected")
    assert "should take" not in note and "recoveries that the failures during them keep extending" in note


def test_a_run_that_never_finishes_and_would_hit_a_cap_above_200000_is_refused_with_its_reason():
    """Llama 3 405B with host memory only (no replicas: lost with its node) at 40× the failure rate:
    gpu, node and cluster failures restart from the beginning, so the analytic goodput is 0; the
    Monte Carlo would simulate 10 × λW + 10,000 > 200,000 failures per run before giving up. The
    refusal names the reason, the classes and the count; the CLI exits 2 with it and no table."""
    d = planner.load_preset("llama3-405b-h100-16k").to_json_dict()
    d["checkpoint"]["tiers"] = [{"tier": "host_memory", "replicas": 0}]
    d["reliability"]["rate_scale"] = 40
    out = run_batch(B.from_scenarios([validate_scenario(d)]))
    assert float(out["goodput"][0]) == 0.0
    lam_w = float(out["failure_rate_per_h"][0]) / 3600.0 * float(out["tokens_total"][0] / out["tokens_per_s"][0])
    # wall time without failures: W × (1 + stall/τ), host memory saved every few seconds
    stall_frac = float(out["ckpt_host_memory_stall_s"][0] / out["ckpt_host_memory_interval_opt_s"][0])
    cap = 10 * lam_w * (1 + stall_frac) + 10_000
    assert cap > sim.MAX_EXPECTED_FAILURES
    with pytest.raises(planner.InputError) as e:
        planner.simulate(d, n_trials=10)
    msg = str(e.value)
    # since session 41 the run has a finite-run figure (each gpu / node / cluster failure restarting it),
    # about 10^N days: refused by that, naming the classes
    assert msg.startswith("simulate: the analytic goodput is 0, and the model for a run of this length, with each "
                          "gpu, node or cluster failure restarting it")
    assert "the run does not finish in practice" in msg
    r = subprocess.run([sys.executable, "-m", "planner.cli", "simulate", "--preset", "llama3-405b-h100-16k", "--set",
                        'checkpoint.tiers=[{"tier":"host_memory","replicas":0}]', "--set", "reliability.rate_scale=40",
                        "--trials", "10"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2 and r.stdout == "" and "does not finish in practice" in r.stderr


# --- the Plan page's Monte Carlo box against the CLI ---------------------------------------------------

def test_plan_page_monte_carlo_table_is_the_clis_summary_in_the_pages_units():
    """The Plan page's table and ``planner simulate --format json`` for the same scenario, trials and
    seed: the same six rows, in the same order (days, cost in M USD, goodput in %, failures, work
    lost in h, recovery in h), the same numbers to the page's decimals."""
    import json

    from test_app import PLAN, _run

    at = _run(PLAN, {"pl_mct": "300", "pl_mcs": "7"})
    at.button(key="pl_mc_run").click().run()
    assert not at.exception
    tables = [d.value for d in at.dataframe if list(d.value.columns) == ["mean", "P10", "P50", "P90"]]
    assert len(tables) == 1
    page = tables[0]
    assert list(page.index) == ["days to train", "cost, M USD", "goodput, %", "failures", "work lost, h", "recovery, h"]
    r = subprocess.run([sys.executable, "-m", "planner.cli", "simulate", "--preset", "default", "--trials", "300",
                        "--seed", "7", "--format", "json"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    cli = {row["metric"]: row for row in json.loads(r.stdout)}
    for label, metric, scale, dec in (("days to train", "time_to_train_days", 1, 1), ("goodput, %", "goodput", 100, 1),
                                      ("cost, M USD", "cost_usd", 1e-6, 2),
                                      ("failures", "n_failures", 1, 0), ("work lost, h", "lost_work_h", 1, 1),
                                      ("recovery, h", "recovery_h", 1, 1)):
        for col in ("mean", "p10", "p50", "p90"):
            shown = page.loc[label, col.upper() if col != "mean" else col]
            assert shown == f"{cli[metric][col] * scale:,.{dec}f}", (label, col)
