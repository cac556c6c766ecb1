"""docs/reliability.md's rate_scale table: its analytic columns are what the planner gives (review 23).

The table quotes, for the default preset at 1, 3, 10, 30 and 100× its failure rate, the MTBF, the
first-order and renewal goodput and the headline days; found by review: three cells had drifted
after the async save lag (2026-12-02: 0.6399 for 0.6398, 586.8 for 586.9, 7,231.9 for 7,233.8
days) with no test reading them. The Monte Carlo columns are checked against the analytic ones
by tests/test_simulate.py, not here (2,000 trials per row). The ×100 row's refusal quotes the
simulator's own count of expected failures, read from its message.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import planner
from planner.schema import InputError

DOC = Path(__file__).resolve().parents[1] / "docs" / "reliability.md"


def _rows() -> dict[int, list[str]]:
    text = DOC.read_text(encoding="utf-8")
    head = "| rate_scale | MTBF [h] | first order | renewal (headline `goodput`) |"
    assert head in text
    block = text[text.index(head):].split("\n\n", 1)[0].splitlines()[2:]
    rows = {}
    for line in block:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[int(cells[0])] = cells
    return rows


def _res(rs: float) -> dict:
    d = planner.load_preset("default").to_json_dict()
    d["reliability"]["rate_scale"] = rs
    return planner.evaluate(d).results


@pytest.mark.parametrize("rs", [1, 3, 10, 30, 100])
def test_analytic_columns(rs):
    cells = _rows()[rs]
    r = _res(rs)
    mtbf = float(cells[1])
    assert r["mtbf_h"] == pytest.approx(mtbf, rel=0.006)  # 3 significant figures
    assert f"{r['goodput_first_order']:.4f}" == cells[2]
    assert f"{r['goodput']:.4f}" == cells[3]
    assert f"{r['time_to_train_days']:,.1f}" == cells[6]


def test_the_x100_refusal_quotes_the_simulators_count():
    cells = _rows()[100]
    m = re.search(r"not run: ([\d,]+) failures per run expected", cells[4])
    assert m, cells[4]
    d = planner.load_preset("default").to_json_dict()
    d["reliability"]["rate_scale"] = 100
    import importlib

    simulate = importlib.import_module("planner.simulate")  # (planner.simulate is also the function)
    with pytest.raises(InputError) as e:
        simulate.simulate(d, n_trials=10, seed=1)
    assert f"about {m.group(1)} failures per run expected" in str(e.value)
