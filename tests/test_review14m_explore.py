"""Review 14m: Explore's "One row per result" / "HBM left free, %" and ``planner sweep --distinct``.

``planner.sweep.distinct_results`` formatted every value of every row with a Python f-string
(``col.map(lambda x: f"{x:.12g}")``): a Python loop over configurations, against the house rule
that engine functions are vectorised, and 1.6 s on a 746,655-row sweep on every rerun of the page
with the toggle on. The expected rows below come from the definition (two splits tie when step
time, memory, days and cost agree to 12 significant digits), written out by hand per row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from planner.sweep import TIE_COLUMNS, distinct_results


def _by_hand(df: pd.DataFrame) -> list[int]:
    seen, keep = set(), []
    for i, r in df.iterrows():
        k = tuple(f"{float(r[c]):.12g}" for c in TIE_COLUMNS)
        if k not in seen:
            seen.add(k)
            keep.append(i)
    return keep


def _table(rows):
    return pd.DataFrame(rows, columns=list(TIE_COLUMNS)).assign(tp=range(len(rows)))


def test_ties_to_12_significant_digits_by_hand():
    rows = [
        (4.51, 4.47e10, 193.6, 1.025e7),
        (4.51 * (1 + 1e-15), 4.47e10, 193.6, 1.025e7),  # float noise: ties row 0
        (4.51 * (1 + 1e-10), 4.47e10, 193.6, 1.025e7),  # 11th digit differs: distinct
        (4.51, 4.47e10 + 1.0, 193.6, 1.025e7),           # 1 byte in 4.47e10 (its 11th digit): distinct
        (4.51, 4.47e10 + 0.01, 193.6, 1.025e7),          # below the 12th digit: ties row 0
        (0.0, 0.0, 0.0, 0.0),
        (0.0, 0.0, 0.0, 0.0),                            # zeros tie
        (np.nan, 1.0, np.inf, 2.0),
        (np.nan, 1.0, np.inf, 2.0),                      # NaN / inf tie each other (as "nan"/"inf" did)
        (9.99999999999996, 1.0, 1.0, 1.0),               # rounds up to 10.0000000000 ...
        (10.0, 1.0, 1.0, 1.0),                           # ... so this ties it
        (-3.25, 1e-300, 1e300, 5e-324),                  # extremes do not overflow
    ]
    df = _table(rows)
    want = [0, 2, 3, 5, 7, 9, 11]
    assert _by_hand(df) == want  # the definition, checked on the hand-made table itself
    out = distinct_results(df)
    assert list(out.index) == want
    assert list(out["tp"]) == want


def test_distinct_results_runs_no_python_per_row(monkeypatch):
    n = 50_000
    rng = np.random.default_rng(14)
    df = pd.DataFrame({c: rng.integers(0, 1000, n) * 1.5 for c in TIE_COLUMNS})

    def _no(*a, **k):
        raise AssertionError("a Python callback per value (not vectorised)")

    monkeypatch.setattr(pd.Series, "map", _no)
    monkeypatch.setattr(pd.Series, "apply", _no)
    monkeypatch.setattr(pd.DataFrame, "apply", _no)
    monkeypatch.setattr(pd.DataFrame, "map", _no)
    out = distinct_results(df)
    # every row is one of 1000^4 combinations; compare with a plain drop_duplicates of exact values
    assert list(out.index) == list(df.drop_duplicates().index)


def test_attrs_kept_and_empty_table_passes_through():
    df = _table([(1.0, 2.0, 3.0, 4.0), (1.0, 2.0, 3.0, 4.0)])
    df.attrs["n_configurations"] = 7
    out = distinct_results(df)
    assert len(out) == 1 and out.attrs["n_configurations"] == 7
    empty = df.iloc[:0]
    assert distinct_results(empty).empty
