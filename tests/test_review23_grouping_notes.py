"""Notes on the tier grouping at high failure rates, read in relative terms (review 23).

A reviewer's Monte Carlo runs of the default preset at 2e12 tokens, host memory at the planner's
interval and the PFS pinned: at 30× the failure rate with the PFS every 12 h the headline goodput
0.00698 against the Monte Carlo's ~0.0062 (500 runs; a time to train 13 % short), where the note said
"optimistic by a few points"; with the PFS every 4 h 0.1159 against 0.1129 (2.7 %), where the
note said the headline "tracks the Monte Carlo" (the gap to the first-order estimate, 0.0031, was
under the absolute 0.005). The notes now quote the first-order estimate
(``reliability._grouping_departures``: its ``stretched`` part in the slow-tier note) in both, and "tracks" needs the gap within 1 % (2 % until review h30a) of the
headline too. Checked against the Monte Carlo here (few trials: each run has tens of thousands of
failures, so its mean is tight; 3–4 standard errors of margin).
"""

from __future__ import annotations

import numpy as np
import pytest

import planner
from planner import batch as B
from planner import reliability as rel
from planner.engine import run_batch
from planner.schema import validate_scenario


def _scenario(rate_scale: float, pfs_s: float) -> dict:
    d = planner.load_preset("default").to_json_dict()
    d["reliability"]["rate_scale"] = rate_scale
    d["training"]["tokens_total"] = 2e12
    d["checkpoint"]["tiers"] = [{"tier": "host_memory"}, {"tier": "pfs", "interval_s": pfs_s}]
    return d


def _departures(d: dict) -> dict:
    row = B.row(run_batch(B.from_scenarios([validate_scenario(d)])), 0)
    return rel._grouping_departures(row)


def _estimate(d: dict) -> float:
    return float(_departures(d)["estimate"])


def _mc(d: dict, trials: int) -> tuple[float, float]:
    """Monte Carlo goodput (work / mean time to train) and its standard error."""
    r = planner.evaluate(d).results
    work_days = r["time_to_train_days"] * r["goodput"]
    t = planner.simulate(d, n_trials=trials, seed=0)["time_to_train_days"].to_numpy()
    g = work_days / t.mean()
    return g, g * t.std(ddof=1) / np.sqrt(trials) / t.mean()


def test_slow_tier_note_quotes_the_stretched_estimate_and_the_longer_time_to_train():
    d = _scenario(30, 12 * 3600)
    rep = planner.evaluate(d)
    g, est = rep.results["goodput"], float(_departures(d)["stretched"])
    assert est < 0.99 * g
    note = next(n for n in rep.notes if n.startswith("The slowest checkpoint tier"))
    assert f"gives about {est:.3g} against the headline {g:.3g}" in note
    assert f"a time to train about {100 * (g / est - 1):.0f} % longer" in note
    assert "a few points" not in note


def test_the_slow_tier_correction_lies_between_the_headline_and_the_monte_carlo():
    """Host memory every 600 s (1 peer copy) + PFS daily at 30× (docs/reliability.md, "Where the
    analytic goodput is optimistic"): headline 0.273, correction 0.213, Monte Carlo ~0.196. The note
    says the Monte Carlo "can be lower still": it is, and the correction closes most of the gap."""
    d = planner.load_preset("default").to_json_dict()
    d["reliability"]["rate_scale"] = 30
    d["checkpoint"]["tiers"] = [{"tier": "host_memory", "interval_s": 600, "replicas": 1},
                                {"tier": "pfs", "interval_s": 86400}]
    rep = planner.evaluate(d)
    g, est = rep.results["goodput"], float(_departures(d)["stretched"])
    note = next(n for n in rep.notes if n.startswith("The slowest checkpoint tier"))
    assert f"gives about {est:.3g}" in note
    mc, se = _mc(d, 200)
    assert mc + 4 * se < est < 0.99 * g
    assert g - est > 0.5 * (g - mc)


def test_tracks_needs_the_gap_within_one_percent_of_the_headline():
    d = _scenario(30, 4 * 3600)
    rep = planner.evaluate(d)
    g, est = rep.results["goodput"], _estimate(d)
    gap = g - est
    assert 0 < gap <= rel.GROUPING_NOTE_GAP  # by the absolute rule alone: "tracks"
    assert gap > rel.GROUPING_NOTE_REL * g  # the relative one: not
    note = next(n for n in rep.notes if n.startswith("Failures are frequent"))
    assert "tracks the Monte Carlo" not in note and f"gives about {est:.3g}" in note
    mc, se = _mc(d, 400)
    assert abs(est - mc) + 3 * se < abs(g - mc)  # 0.1128 / 0.1159 vs ~0.1118 ± 0.0004


def test_tracks_still_said_where_the_gap_is_small_in_both_terms():
    d = _scenario(10, 12 * 3600)
    rep = planner.evaluate(d)
    g, est = rep.results["goodput"], _estimate(d)
    assert abs(g - est) <= min(rel.GROUPING_NOTE_GAP, rel.GROUPING_NOTE_REL * g)
    note = next(n for n in rep.notes if n.startswith("Failures are frequent"))
    assert note.endswith("which tracks the Monte Carlo.")
