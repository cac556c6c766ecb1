"""Review 13 (reliability, checkpoints, goodput, cost, Monte Carlo): regression tests.

Expected values come from hand calculations: the failure rates from the Llama 3 405B
interruption table (Llama Team, arXiv:2407.21783, Table 5: 268 GPU, 46 node, 42 network and 63
software interruptions over 54 days on 16,384 GPUs / 2,048 nodes; the llama3-h100 profile, whose
cluster class is one per 2,160 job-hours), the recovery times of that profile (660 s restart,
+7,200 s repair for gpu and node, 4 h for a cluster outage), and Daly's renewal model for a run
of finite length (Daly, FGCS 22(3) 2006, eq. 20 with the last segment's own length): a run of W
compute seconds that no checkpoint is saved in (the interval is longer than the run) takes
``E[T] = (1/E)·(e^{λW} − 1)/λ`` on average, ``E = Σ_c (λ_c/λ)·e^{−λ R_c}`` (a failure during a
recovery restarts it; the reload of a 1 TB checkpoint at 2 TB/s, 0.5 s, changes E[T] by < 1e-5).
"""

from __future__ import annotations

import importlib
import math
import re

import numpy as np

import planner
from planner import batch as B
from planner import reliability as rel
from planner.engine import run_batch
from planner.schema import validate_scenario

NODE_H = 2_048 * 54 * 24   # node-hours of the Llama 3 snapshot
GPU_H = 16_384 * 54 * 24   # GPU-hours


def _default_rates_per_s(nodes=128, gpus=1_024):
    """λ_c [1/s] and R_c [s] of the default preset (128 nodes, 1,024 GPUs, no hot spares)."""
    lam_h = [nodes * 63 / NODE_H, gpus * 268 / GPU_H, nodes * 46 / NODE_H, nodes * 42 / NODE_H, 1 / 2160]
    R = [660.0, 660.0 + 7200.0, 660.0 + 7200.0, 660.0, 14_400.0]
    return [x / 3600.0 for x in lam_h], R


def _no_save_run_days(work_s):
    """Daly's finite-run expected time [days] of a run that never reaches its first save."""
    lam, R = _default_rates_per_s()
    L = sum(lam)
    # recovery factor e^{Σ_c λ_c R_c}: failures during a recovery extend it (M/G/∞ busy period)
    rec = math.exp(sum(l * r for l, r in zip(lam, R)))
    return rec * math.expm1(L * work_s) / L / 86_400.0


def _scenario(interval_s, tokens=1.5e11, **top):
    d = planner.load_preset("default").to_json_dict()
    d["checkpoint"]["tiers"] = [{"tier": "pfs", "interval_s": interval_s}]
    d["training"]["tokens_total"] = tokens
    d.update(top)
    return d


def _row(d):
    out = run_batch(B.from_scenarios([validate_scenario(d)]))
    return out, B.row(out, 0)


def test_finite_run_ratio_by_hand():
    # W = 1000 s, τ = 300 s: 3 whole segments and a third; x = Λ(τ + s) = 1e-3 × 300 = 0.3
    got = float(rel.finite_run_log_ratio(1000.0, np.array([300.0]), np.array([0.0]), np.array([1e-3])))
    want = math.log((3 * math.expm1(0.3) + math.expm1(0.1)) / ((10 / 3) * math.expm1(0.3)))
    assert math.isclose(got, want, rel_tol=1e-12)
    # interval longer than the run (n = 0, f = 0.1, x = 10): ρ = (e^1 − 1)/(0.1 (e^10 − 1))
    got = float(rel.finite_run_log_ratio(100.0, np.array([1000.0]), np.array([0.0]), np.array([1e-2])))
    assert math.isclose(got, math.log(math.expm1(1.0) / (0.1 * math.expm1(10.0))), rel_tol=1e-12)
    # far longer (x = 1e4: e^x overflows a float): log ρ = log(e − 1) − log(1e-4) − 1e4
    got = float(rel.finite_run_log_ratio(100.0, np.array([1e6]), np.array([0.0]), np.array([1e-2])))
    assert math.isclose(got, math.log(math.expm1(1.0)) - math.log(1e-4) - 1e4, rel_tol=1e-12)
    # no failures recovered by the tier, or a disabled tier: no correction
    assert float(rel.finite_run_log_ratio(100.0, np.array([1e6, np.nan]), np.array([0.0, 0.0]),
                                          np.array([0.0, 1e-2]))) == 0.0


def test_a_run_shorter_than_its_checkpoint_interval_gets_the_finite_run_time_and_a_note():
    """Found by review: the PFS saved every 1e6 s (11.6 days) on a 2-day run: the analytic time
    to train was 112.4 days (the steady-state rate charges a whole 11.6-day interval at λτ = 5.7)
    while the run takes 3.56 days (the Monte Carlo, and Daly's model for a run of this length);
    the notes said the renewal model "tracks the Monte Carlo"."""
    d = _scenario(1e6)
    r = planner.evaluate(d)
    work = 1.5e11 / r.results["tokens_per_s"]
    want = _no_save_run_days(work)
    assert 3.4 < want < 3.7  # (the hand figure: 3.56 d)
    assert r.results["time_to_train_days"] > 100.0  # the headline stays the steady-state rate
    _out, row = _row(d)
    assert math.isclose(rel.finite_run_days(row), want, rel_tol=1e-4)
    short = [n for n in r.notes if n.startswith("The run is short against the pfs checkpoint interval")]
    assert len(short) == 1 and f"about {want:.4g} d" in short[0] and "Monte Carlo" in short[0]  # reliability._g
    assert not any("which tracks the Monte Carlo" in n for n in r.notes)
    mc = planner.simulate(d, n_trials=4_000, seed=0)["time_to_train_days"]
    assert abs(mc.mean() - want) < 4 * mc.std() / math.sqrt(len(mc))


def test_a_long_run_keeps_its_headline_and_no_short_run_note():
    r = planner.evaluate(planner.load_preset("default"))
    _out, row = _row(planner.load_preset("default").to_json_dict())
    # 93 s intervals over a 200-day run: the finite-run correction is below 1e-6
    assert math.isclose(rel.finite_run_days(row), r.results["time_to_train_days"], rel_tol=1e-6)
    assert not any(n.startswith("The run is short") for n in r.notes)


def test_monte_carlo_is_not_refused_for_an_interval_longer_than_the_run():
    """Found by review: the PFS every 1e7 s on a 2-day run: the steady-state time to train was
    3e23 days, so planner.simulate refused the run ("about 1.5e23 failures per run expected ...
    the analytic time to train and goodput stand for it"); it takes about 1.8 failures and 3.56
    days. With 1e9 s the steady-state goodput underflows to 0 and the reason said the run "does
    not finish in expectation"."""
    for iv in (1e7, 1e9):
        d = _scenario(iv)
        r = planner.evaluate(d)
        want = _no_save_run_days(1.5e11 / r.results["tokens_per_s"])
        mc = planner.simulate(d, n_trials=4_000, seed=1)
        days = mc["time_to_train_days"]
        assert mc["finished"].all()
        assert abs(days.mean() - want) < 4 * days.std() / math.sqrt(len(days))
    assert r.results["goodput"] == 0.0  # 1e9 s: exp(−5.7e3) underflows
    why = rel.zero_goodput_reason({**r.results, **_row(d)[1]})
    assert f"about {want:.4g} d" in why and "does not finish in expectation" not in why


def test_the_refusal_of_a_really_long_run_still_quotes_the_headline():
    """The Llama 3 405B preset at 100× the failure rate: ~2e7 failures per run, refused with the
    analytic figures (the finite-run correction changes them by < 1 %: the headline is quoted)."""
    d = planner.load_preset("llama3-405b-h100-16k").to_json_dict()
    d["reliability"]["rate_scale"] = 100.0
    out, _row_ = _row(d)
    sim = importlib.import_module("planner.simulate")  # the module (planner.simulate is the function)
    msg = sim.too_many_failures(out, 0)
    assert msg is not None and f"goodput {float(out['goodput'][0]):.3g}, the analytic model" in msg
    assert f"over {float(out['time_to_train_days'][0]):,.0f} days" in msg


def _slow_async_scenario():
    """One failure class every 30 min (job-wide), restart 600 s; a PFS written at 1 GB/s
    aggregate, async: a 988 s save behind a stall of ~30 s."""
    d = planner.load_preset("default").to_json_dict()
    d["reliability"] = {"profile": {"name": "one class", "reference": "review", "source": "review",
                                    "classes": [{"class": "gpu", "rate": 2.0, "per": "job_hour",
                                                 "restart_s": 600.0, "source": "review"}]},
                        "hot_spare_nodes": 0, "rate_scale": 1.0}
    d["checkpoint"] = {"tiers": [{"tier": {"name": "slow fs", "kind": "pfs", "scope": "shared",
                                           "write_bw_per_node_bytes_per_s": 1e15, "read_bw_per_node_bytes_per_s": 1e15,
                                           "aggregate_write_bw_bytes_per_s": 1e9, "aggregate_read_bw_bytes_per_s": 1e15,
                                           "survives": ["software", "gpu", "node", "network", "cluster"]},
                                  "interval_s": None}],
                       "async": True, "async_interference_frac": 0.02}
    d["training"]["tokens_total"] = 3e10
    return d


def test_frequent_failure_note_does_not_claim_agreement_with_the_monte_carlo_when_another_note_denies_it():
    """Found by review: at λ·(save − stall) = 0.53 the async note said the analytic goodput left
    that loss out (Monte Carlo 1.29 d against 0.77 d), and the note beside it said the renewal model
    "tracks the Monte Carlo". Since session 22 the goodput charges the lag (e^{λL}, exact for one
    tier and one class): the finite-run figure is within 4 standard errors of 2,000 simulated runs.
    The run is 35 intervals long, so the short-run note departs and the frequent note says so."""
    sim = importlib.import_module("planner.simulate")
    d = _slow_async_scenario()
    r = planner.evaluate(d)
    lag = r.results["ckpt_pfs_save_s"] - r.results["ckpt_pfs_stall_s"]
    assert 2.0 * lag / 3600.0 > 0.5  # λ·(save − stall), by hand: 2/h × ~960 s
    note = next(n for n in r.notes if n.startswith("Async pfs checkpoints"))
    assert f"e^{2.0 * lag / 3600.0:.4g}" in note and "the goodput counts" in note
    t = sim.simulate(d, n_trials=2000, seed=5)["time_to_train_days"].to_numpy()
    fin = rel.finite_run_days(_row(d)[1])
    assert abs(t.mean() - fin) < 4 * t.std(ddof=1) / math.sqrt(len(t)), (t.mean(), fin)
    frequent = [n for n in r.notes if n.startswith("Failures are frequent")]
    assert frequent and "which tracks the Monte Carlo" not in frequent[0]
    assert any(n.startswith("The run is short against the pfs checkpoint interval") for n in r.notes)
    # where nothing departs from it, the note still says so (the default preset at 30×)
    d = planner.load_preset("default").to_json_dict()
    d["reliability"]["rate_scale"] = 30.0
    frequent = [n for n in planner.evaluate(d).notes if n.startswith("Failures are frequent")]
    assert frequent and frequent[0].endswith("which tracks the Monte Carlo.")


def test_one_gpu_is_not_written_as_gpus_in_the_cost_explain():
    d = planner.load_preset("mpt-7b-a100-8").to_json_dict()
    d["cluster"]["n_gpus"] = 1
    d["parallelism"]["dp"] = 1
    d["training"]["tokens_total"] = 1e9
    r = planner.evaluate(d)
    wall_h = r.results["time_to_train_days"] * 24.0
    assert r.explain["gpu_hours"].startswith("1 GPU × ")
    assert math.isclose(r.results["gpu_hours"], 1 * wall_h, rel_tol=1e-12)
    d["reliability"]["hot_spare_nodes"] = 2
    r = planner.evaluate(d)
    assert r.explain["gpu_hours"].startswith("(1 GPU + 2 hot spare nodes × 8) = 17 GPUs × ")
    assert math.isclose(r.results["gpu_hours"], 17 * r.results["time_to_train_days"] * 24.0, rel_tol=1e-12)


def test_the_refusal_of_a_run_that_never_finishes_prints_a_readable_count():
    """Found by review: the default preset with the PFS saved every 6e8 s (19 years, longer than
    the run) was refused with a 33-digit failure count ("about 570,844,119,160,355,248,896,..."). One
    PFS tier every 6e8 s on a 1.5e13-token run (about 200 days of compute): the count is λ·24·E[T],
    E[T] Daly's finite run that reaches no save (module docstring), printed to 3 significant digits."""
    d = _scenario(6e8, tokens=1.5e13)
    out, _row_ = _row(d)
    sim = importlib.import_module("planner.simulate")
    msg = sim.too_many_failures(out, 0)
    assert msg is not None
    assert re.search(r"\d[\d,]{12,}", msg) is None, msg  # no run of 13+ digits
    count = float(re.search(r"about (\S+) failures", msg).group(1).replace(",", ""))
    lam_h = float(out["failure_rate_per_h"][0])
    hand = lam_h * 24.0 * _no_save_run_days(float(d["training"]["tokens_total"]) / float(out["tokens_per_s"][0]))
    assert count == float(f"{hand:.3g}")
