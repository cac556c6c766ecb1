"""Session 25 (speed of ``planner.evaluate``): two changes that must not move any number.

1. ``memory.report`` gives ``explain``, ``per_stage`` and ``notes`` of a row from one ``_common``
   and one ``_stage_parts`` over every pipeline stage; ``planner.evaluate`` calls it. Its output
   must equal the three separate calls, string for string and byte for byte.
2. ``memory._candidates`` skips a candidate rank that an earlier candidate already covers in every
   row (DeepSeek-V3's DualPipe layout at pp 16 asked for 10 candidates, 6 of them distinct). The
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
from planner.batch import SCHEDULES
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


def test_evaluate_takes_the_shared_path_and_gives_its_values():
    """``planner.evaluate`` calls ``memory.report`` once (a spy counts it) and its stages and
    memory explanations are the separate calls' values."""
    s = planner.load_preset("deepseek-v3-h800-2048")
    calls = []
    orig = memory.report

    def spy(row):
        calls.append(1)
        return orig(row)

    memory.report = spy
    try:
        rep = planner.evaluate(s)
    finally:
        memory.report = orig
    assert len(calls) == 1
    out = engine.run_batch(batch.from_scenarios([s]))
    row = batch.row(out, 0)
    assert rep.stages == memory.per_stage(out, 0)
    for k, v in memory.explain(row).items():
        assert rep.explain[k] == v


def _count_parts(b) -> int:
    """Ranks evaluated by ``_stage_parts`` (a call on a (k, N) array of ranks counts k: session 51
    costs the ranks past the two ends in one call)."""
    n = 0
    orig = memory._stage_parts

    def counting(cm, j, **k):
        nonlocal n
        n += np.shape(j)[0] if np.ndim(j) == 2 else 1
        return orig(cm, j, **k)

    memory._stage_parts = counting
    try:
        memory._candidates(b)
    finally:
        memory._stage_parts = orig
    return n


def test_dualpipe_repeats_are_not_evaluated_again():
    """DeepSeek-V3 preset: pp 16, DualPipe, 3 leading dense layers of 61. Candidates: rank 0 and 15
    (the ends). 61 = 16·3 + 13 layers: base 3, rem 13, ranks 0–12 hold 4. Rank 0 holds the 3 dense
    layers, so rank 1 is the first MoE-only rank (jd = 1). DualPipe's six breakpoint ranks t =
    (jd − 1, jd, p − rem, rem, p − 1 − jd, p − jd) = (0, 1, 3, 13, 14, 15), the ranks t − 1 before
    them (−1, 0, 2, 12, 13, 14) and the first half's ends 1 and p/2 − 1 = 7, mirrored into the
    first half (min(j, p − 1 − j); ranks j and p − 1 − j are loaded alike, review 26) and clipped
    to [1, 7]: (1, 1, 3, 2, 1, 1; 1, 1, 2, 3, 2, 1; 1, 7): distinct ranks 0, 15, 1, 3, 2, 7."""
    s = planner.load_preset("deepseek-v3-h800-2048")
    b = dict(batch.from_scenarios([s]))
    b.update(model_stats.stage(b))
    js = sorted(float(np.ravel(j)[0]) for j, _ in memory._candidates(b))
    assert js == [0.0, 1.0, 2.0, 3.0, 7.0, 15.0]
    assert _count_parts(b) == 6


def _stage_counting_skips(b, skip: bool):
    """memory.stage with the skip on or off, and how many candidates it skipped."""
    orig = memory._repeats
    n = 0

    def counting(E, prior):
        nonlocal n
        hit = orig(E, prior)
        n += int(hit.sum())
        return hit

    memory._repeats = counting if skip else (lambda E, prior: np.zeros(E.shape[0], dtype=bool))
    try:
        return memory.stage(b), n
    finally:
        memory._repeats = orig


def _deepseek_rows():
    s = planner.load_preset("deepseek-v3-h800-2048")
    b = dict(sweep.enumerate_splits(s))
    b.update(model_stats.stage(b))
    return b


def _take(b, idx):
    return {k: (np.asarray(v)[idx] if np.ndim(v) else v) for k, v in b.items()}


def test_skipping_repeated_ranks_changes_nothing():
    """DeepSeek-V3's sweep space (DualPipe and leading dense layers: the only preset with rows the
    skip acts on). Three kinds of batch, each compared with the skip switched off, key for key
    and bit for bit: (a) multi-row batches of one layout (the same pp, vpp and schedule in every
    row, so the candidate ranks agree and the skip fires on the whole batch); (b) a random
    sample mixing layouts (candidate ranks differ between rows: nothing may be skipped wrongly);
    (c) single rows. The skip must fire in (a) and (c), or the test would compare one path
    with itself."""
    b = _deepseek_rows()
    n = len(b["tp"])
    rng = np.random.default_rng(25)
    dual = np.flatnonzero((np.asarray(b["schedule"]) == SCHEDULES.index("dualpipe")) & (np.asarray(b["pp"]) == 16))
    batches = []
    # (a) every DualPipe row at pp 16 with one vpp: one layout, many splits
    vpp = np.asarray(b["vpp"])[dual]
    same = dual[vpp == vpp[0]][:2000]
    assert len(same) >= 10
    batches.append(("one layout", _take(b, same)))
    # (b) a random mix
    batches.append(("mixed", _take(b, rng.choice(n, size=min(n, 20_000), replace=False))))
    # (c) single rows, DualPipe ones among them
    singles = np.concatenate([rng.choice(dual, 20, replace=False), rng.choice(n, 20, replace=False)])
    batches += [("single", _take(b, [i])) for i in singles]
    fired = {"one layout": 0, "mixed": 0, "single": 0}
    for kind, bb in batches:
        got, hits = _stage_counting_skips(bb, True)
        ref, _ = _stage_counting_skips(bb, False)
        fired[kind] += hits
        assert got.keys() == ref.keys()
        for k in ref:
            assert np.asarray(got[k]).dtype == np.asarray(ref[k]).dtype, k
            assert np.array_equal(got[k], ref[k], equal_nan=True), (kind, k)
    assert fired["one layout"] > 0 and fired["single"] > 0, fired


def test_repeats_compare_whole_rows_and_never_nan():
    prior = np.array([[0.0, 0.0], [3.0, 5.0]])  # the first candidate at rank 0 in every row
    E = np.array([[0.0, 0.0],    # rank 0 in every row: a repeat of the first
                  [3.0, 5.0],    # a repeat of the second
                  [3.0, 4.0],    # one row differs: evaluated
                  [3.0, 4.0],    # a repeat of the row before it
                  [1.0, 1.0]])
    assert memory._repeats(E, prior).tolist() == [True, True, False, True, False]
    nan = np.array([[np.nan]])
    assert memory._repeats(np.array([[np.nan], [np.nan]]), nan).tolist() == [False, False]
