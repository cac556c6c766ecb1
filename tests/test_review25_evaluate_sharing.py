"""Session 25 (speed of ``planner.evaluate``): two changes that must not move any number.

1. ``memory.report`` gives ``explain``, ``per_stage`` and ``notes`` of a row from one ``_common``
   and one ``_stage_parts`` over every pipeline stage; ``planner.evaluate`` calls it. Its output
   must equal the three separate calls, string for string and byte for byte.
2. ``memory._candidates`` skips a candidate rank that an earlier candidate already covers in every
   row (DeepSeek-V3's DualPipe layout at pp 16 asked for 10 candidates, 5 of them distinct). The
   most loaded stage is kept only where a candidate is strictly larger, so skipping a repeat
   cannot change a result: checked against the same stage with the skip switched off, on sweep
   spaces and on single rows.
"""

from __future__ import annotations

import numpy as np
import pytest

import importlib

import planner
from planner import batch, engine, memory, model_stats
from planner.schema import validate_scenario

sweep = importlib.import_module("planner.sweep")  # the module (``planner.sweep`` is the function)

PRESETS = sorted(planner.list_presets())


def _variants(pid: str) -> list[dict]:
    d = planner.load_preset(pid).to_json_dict()
    out = [d]
    par = d["parallelism"]
    if par.get("pp", 1) > 1:  # a second schedule / recompute choice on the same preset
        v = {**d, "parallelism": {**par, "recompute": "full" if par.get("recompute") != "full" else "selective"}}
        out.append(v)
    return out


@pytest.mark.parametrize("pid", PRESETS)
def test_report_equals_explain_per_stage_and_notes(pid):
    for d in _variants(pid):
        s = validate_scenario(d)
        b = batch.from_scenarios([s])
        out = engine.run_batch(b)
        row = batch.row(out, 0)
        e, stages, notes = memory.report(row)
        assert e == memory.explain(row)
        assert stages == memory.per_stage(out, 0)
        assert notes == memory.notes(row)
        assert len(stages) == int(row["pp"])
        # no private part leaks into the per-stage table
        assert not any(k.startswith("_") for st in stages for k in st)


def test_evaluate_uses_the_shared_path():
    rep = planner.evaluate(planner.load_preset("deepseek-v3-h800-2048"))
    b = batch.from_scenarios([planner.load_preset("deepseek-v3-h800-2048")])
    out = engine.run_batch(b)
    row = batch.row(out, 0)
    assert rep.stages == memory.per_stage(out, 0)
    for k, v in memory.explain(row).items():
        assert rep.explain[k] == v


def _count_parts(b) -> int:
    n = 0
    orig = memory._stage_parts

    def counting(*a, **k):
        nonlocal n
        n += 1
        return orig(*a, **k)

    memory._stage_parts = counting
    try:
        memory._candidates(b)
    finally:
        memory._stage_parts = orig
    return n


def test_dualpipe_repeats_are_not_evaluated_again():
    """DeepSeek-V3 preset: pp 16, DualPipe, 3 leading dense layers of 61. Candidates: rank 0 and 15
    (the ends). 61 = 16·3 + 13 layers: base 3, rem 13, ranks 0–12 hold 4. Rank 0 holds the 3 dense
    layers, so rank 1 is the first MoE-only rank (jd = 1) and the rank before it is clipped to 1.
    DualPipe's six breakpoint ranks (jd − 1, jd, p − rem, rem, p − 1 − jd, p − jd) = (0, 1, 3, 13,
    14, 15) clip to [1, p − 2] as (1, 1, 3, 13, 14, 14): distinct ranks 0, 15, 1, 3, 13, 14."""
    s = planner.load_preset("deepseek-v3-h800-2048")
    b = dict(batch.from_scenarios([s]))
    b.update(model_stats.stage(b))
    js = sorted(float(np.ravel(j)[0]) for j, _ in memory._candidates(b))
    assert js == [0.0, 1.0, 3.0, 13.0, 14.0, 15.0]
    assert _count_parts(b) == 6


def _stage_without_skip(b):
    orig = memory._tried
    memory._tried = lambda cands, j: False
    try:
        return memory.stage(b)
    finally:
        memory._tried = orig


@pytest.mark.parametrize("pid", ["deepseek-v3-h800-2048", "qwen3-235b-gb200-256", "mixtral-8x7b-h100-64"])
def test_skipping_repeated_ranks_changes_nothing(pid):
    s = planner.load_preset(pid)
    b = dict(sweep.enumerate_splits(s))
    b.update(model_stats.stage(b))
    n = len(b["tp"])
    rng = np.random.default_rng(25)
    take = rng.choice(n, size=min(n, 20_000), replace=False)
    sub = {k: (np.asarray(v)[take] if np.ndim(v) else v) for k, v in b.items()}
    rows = [{k: (np.asarray(v)[[i]] if np.ndim(v) else v) for k, v in b.items()} for i in take[:40]]
    for bb in [sub, *rows]:
        got, ref = memory.stage(bb), _stage_without_skip(bb)
        assert got.keys() == ref.keys()
        for k in ref:
            assert np.array_equal(got[k], ref[k], equal_nan=True), k


def test_tried_compares_whole_rows_and_never_nan():
    cands = [(0.0, None), (np.array([3.0, 5.0]), None)]
    assert memory._tried(cands, np.array([0.0, 0.0]))      # the scalar candidate covers every row
    assert memory._tried(cands, np.array([3.0, 5.0]))
    assert not memory._tried(cands, np.array([3.0, 4.0]))  # one row differs: evaluated
    assert not memory._tried([(np.array([np.nan]), None)], np.array([np.nan]))
