"""Review h27c (2026-12): the Monte Carlo gave no cost distribution; the sweep dropped the
scenario's expert TP (tests/test_review16e_etp.py); the docs had the missed-save factor upside down.

Expected values by hand: the default preset runs 1,024 H100 at the catalogue's $2.155 per GPU-hour
(hardware/accelerators.json, h100-sxm-80gb), so each day of a run costs 1,024 × 24 × 2.155 =
$52,961.28; with 2 hot spare nodes of 8 GPUs the GPUs paid are 1,040.
"""

from __future__ import annotations

import importlib
import math
import subprocess
import sys
from pathlib import Path

import numpy as np

import planner

sim = importlib.import_module("planner.simulate")
ROOT = Path(__file__).resolve().parents[1]


def test_each_run_has_its_bill_at_its_own_wall_time():
    df = planner.simulate(planner.load_preset("default"), n_trials=200, seed=3)
    assert list(df.columns[:4]) == ["time_to_train_days", "gpu_hours", "cost_usd", "energy_mwh"]
    days = df["time_to_train_days"].to_numpy()
    assert np.allclose(df["gpu_hours"].to_numpy(), days * 24.0 * 1024, rtol=1e-12)
    assert np.allclose(df["cost_usd"].to_numpy(), days * 52_961.28, rtol=1e-12)
    # energy is linear in the wall time too: the analytic headline's MWh per day
    r = planner.evaluate(planner.load_preset("default")).results
    assert np.allclose(df["energy_mwh"].to_numpy() / days, r["energy_mwh"] / r["time_to_train_days"], rtol=1e-12)
    assert np.std(df["cost_usd"].to_numpy()) > 0  # a distribution, not the headline repeated


def test_hot_spares_are_paid_in_every_run():
    d = planner.load_preset("default").to_json_dict()
    d["reliability"]["hot_spare_nodes"] = 2
    df = planner.simulate(d, n_trials=100, seed=1)
    assert np.allclose(df["gpu_hours"].to_numpy(), df["time_to_train_days"].to_numpy() * 24.0 * 1040, rtol=1e-12)


def test_summary_and_cli_show_the_cost_distribution():
    df = planner.simulate(planner.load_preset("default"), n_trials=300, seed=5)
    s = sim.summarize(df).set_index("metric")
    v = df["cost_usd"].to_numpy()
    assert math.isclose(s.loc["cost_usd", "mean"], float(np.mean(v)), rel_tol=1e-12)
    assert np.allclose(s.loc["cost_usd", ["p10", "p50", "p90"]].to_numpy(float), np.percentile(v, [10, 50, 90]))
    out = subprocess.run([sys.executable, "-m", "planner", "simulate", "--preset", "default", "--trials", "300",
                          "--seed", "5"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    (line,) = [ln for ln in out.stdout.splitlines() if ln.split() and ln.split()[0] == "cost_M_USD"]
    assert abs(float(line.split()[1]) - float(np.mean(v)) / 1e6) <= 0.005  # 2 decimals of M USD
    assert "same seed and number of trials" in out.stdout


def test_a_run_that_never_finishes_costs_inf():
    # the bill of an infinite wall time (a trial at the round cap) is infinite in all three columns
    from planner import batch as _batch
    from planner import cost as _cost
    from planner.engine import run_batch

    out = run_batch(_batch.from_scenarios([planner.load_preset("default")]))
    wall, gh, usd, mwh = _cost.bill(_batch.take(out, [0]), np.array([86_400.0, np.inf]))
    assert math.isclose(float(usd[0]), 52_961.28, rel_tol=1e-12)
    assert np.isinf(gh[1]) and np.isinf(usd[1]) and np.isinf(mwh[1]) and np.isinf(wall[1])


def test_docs_define_the_missed_save_factor_as_the_reciprocal():
    text = (ROOT / "docs" / "reliability.md").read_text()
    assert "`M_k = (1 − p·e^{−Λ_k s_k})/(1 − p)` ≥ 1" in text
