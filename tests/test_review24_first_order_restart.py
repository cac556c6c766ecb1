"""Review 24 (new-user review): with no checkpoint tier (or none that survives a failure class),
the first-order restart term ``Σ_c λ_c(R_c + reload_c)`` read inf, beside a restart share of 0: a
class no tier survives restarts from scratch with nothing to reload, so its term is ``λ_c·R_c``;
its loss is the lost work (``λ_c·τ/2`` with τ = ∞). Hand-computed from DESIGN §4.4's first-order
formula."""

from __future__ import annotations

import numpy as np
import pytest

import planner
from planner import reliability as rel


def _eg(enabled: bool, survives_first: bool):
    lam = np.array([[1e-5, 2e-5]])          # per s, two classes
    R = np.array([[600.0, 1200.0]])          # restart + repair [s]
    reload = np.array([[[100.0, 100.0]]])    # (n, K, C)
    surv = np.array([[[survives_first, False]]])
    return rel.expected_goodput([np.array([3600.0])], np.array([[10.0]]), np.array([[enabled]]), lam, R,
                                reload, surv)


def test_no_tier_restart_term_is_lambda_times_restart():
    res = _eg(False, False)
    # 1e-5 × 600 + 2e-5 × 1200 = 0.006 + 0.024
    assert float(res["restart_frac_first_order"][0]) == pytest.approx(0.030, rel=1e-12)
    assert np.isinf(res["lost_work_frac_first_order"][0])
    assert float(res["goodput_first_order"][0]) == 0.0 and float(res["goodput"][0]) == 0.0


def test_a_surviving_class_reloads_the_others_do_not():
    res = _eg(True, True)
    # class 0 from the tier: 1e-5 × (600 + 100); class 1 from scratch: 2e-5 × 1200
    assert float(res["restart_frac_first_order"][0]) == pytest.approx(0.007 + 0.024, rel=1e-12)
    assert np.isinf(res["lost_work_frac_first_order"][0])


def test_explanation_without_tiers_shows_the_finite_restart_term():
    d = planner.load_preset("default").to_json_dict()
    d["checkpoint"]["tiers"] = []
    r = planner.evaluate(d)
    lam = {fc: r.results[f"failure_rate_{fc}_per_h"] / 3600.0 for fc in rel.FAILURE_CLASSES}
    b = planner.batch.from_scenarios([planner.schema.validate_scenario(d)])
    R = rel.recovery_s(b)[0]
    want = sum(lam[fc] * R[c] for c, fc in enumerate(rel.FAILURE_CLASSES))
    assert want > 0
    txt = r.explain["goodput_first_order"]
    assert "inf − Σ_c λ_c(R_c + reload_c) inf" not in txt
    assert f"Σ_c λ_c(R_c + reload_c) {want:.4g}" in txt
    assert r.results["restart_frac"] == 0.0 and r.results["goodput"] == 0.0
