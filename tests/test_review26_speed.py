"""Session 26 (speed of ``planner.evaluate``): four changes that must not move any number.

1. ``batch.any_true(x)`` replaces ``bool(np.any(x))`` in the stages (``np.any``'s dispatch costs
   ~5 µs a call; a one-row evaluate made ~100 such tests). Same truth value for every input.
2. ``reliability._tri`` returns ``bool(m)`` for a one-element mask (``m.all()`` + ``m.any()`` cost
   ~2 µs; the solver asks ~60 times per row).
3. ``reliability._Block.assign`` keeps its result per order of the tiers' intervals where every
   row of the block agrees on that order (a row alone always does): the solver re-assigns at every
   step, mostly in the same order (DeepSeek-V3's row: 23 calls, 4 orders).
4. ``reliability.report`` gives ``explain`` and ``notes`` of a row computing the row's model and
   tier times once (explain and four notes each computed them: 0.3–0.8 ms); ``planner.evaluate``
   calls it.

Each is checked against the code path without it: the same values, bit for bit, string for string.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import planner
from planner import batch, engine, memory, reliability
from planner.batch import any_true
from planner.schema import validate_scenario

PRESETS = sorted(planner.list_presets())


# 1. any_true -------------------------------------------------------------------------------

@given(hnp.arrays(dtype=st.sampled_from([np.float64, np.int64, np.bool_]), shape=hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4),
                  elements=None))
@settings(max_examples=200)
def test_any_true_is_bool_of_np_any_for_arrays(x):
    assert any_true(x) is bool(np.any(x))


@pytest.mark.parametrize("x", [0, 1, 0.0, -0.0, 2.5, float("nan"), float("inf"), True, False,
                               np.float64(0.0), np.float64("nan"), np.int64(0), np.int64(3), np.bool_(True),
                               np.bool_(False), [0, 0], [0, 1], (), np.zeros(0), np.broadcast_to(np.array(1.0), (5,))])
def test_any_true_is_bool_of_np_any_for_scalars_and_sequences(x):
    assert any_true(x) is bool(np.any(x))


# 2. _tri on one element --------------------------------------------------------------------

@pytest.mark.parametrize("m, want", [(np.array([True]), True), (np.array([False]), False),
                                     (np.array(True), True), (np.array([[False]]), False)])
def test_tri_of_one_element_is_that_bool(m, want):
    assert reliability._tri(m) is want


def test_tri_keeps_arrays_that_differ_and_uniform_ones_as_bools():
    m = np.array([True, False, True])
    assert reliability._tri(m) is m
    assert reliability._tri(np.array([True, True])) is True
    assert reliability._tri(np.array([False, False])) is False


# 3. assign's memo ---------------------------------------------------------------------------

def _rows_for_reliability() -> list[dict]:
    """Scenarios that take the solver through one, two and three tiers, fixed and free
    intervals, async saves, peer copies and a high failure rate."""
    out = []
    for pid in ("default", "llama3-405b-h100-16k", "deepseek-v3-h800-2048", "mpt-7b-a100-8"):
        d = planner.load_preset(pid).to_json_dict()
        out.append(d)
    d = planner.load_preset("default").to_json_dict()
    d["checkpoint"] = {"tiers": [{"tier": "host_memory", "interval_s": None, "replicas": 1},
                                 {"tier": "local_nvme", "interval_s": None, "replicas": 0},
                                 {"tier": "pfs", "interval_s": None, "replicas": 0}],
                       "async": True, "async_interference_frac": 0.02}
    d["reliability"] = {**d["reliability"], "rate_scale": 10.0}
    out.append(d)
    d2 = {**d, "checkpoint": {**d["checkpoint"], "tiers": [
        {"tier": "host_memory", "interval_s": 600.0, "replicas": 1},
        {"tier": "pfs", "interval_s": None, "replicas": 0},
        {"tier": "object_store", "interval_s": None, "replicas": 0}], "async": False}}
    out.append(d2)
    d3 = {**d, "checkpoint": {**d["checkpoint"], "tiers": [
        {"tier": "pfs", "interval_s": 2000.0, "replicas": 0},
        {"tier": "object_store", "interval_s": 3000.0, "replicas": 0}]}}
    out.append(d3)
    return out


def _stage_out(b):
    out = dict(b)
    for mod in engine._stage_modules():
        out.update(mod.stage(out))
    return out


def test_assign_memo_gives_the_values_of_a_fresh_assign_and_fires(monkeypatch):
    """The reliability stage with the memo and with every assign computed afresh (the memo
    emptied before each call) gives the same columns bit for bit, on single rows and on a mixed
    batch (whose masks differ across rows: no memo there); a counter shows the memo was used."""
    rows = [validate_scenario(d) for d in _rows_for_reliability()]
    b_all = batch.from_scenarios(rows)
    pre = dict(b_all)
    for mod in engine._stage_modules()[:3]:
        pre.update(mod.stage(pre))
    singles = [batch.take(pre, slice(i, i + 1)) for i in range(len(rows))]

    with_memo = [reliability.stage(dict(x)) for x in singles] + [reliability.stage(dict(pre))]

    hits = {"n": 0}
    orig = reliability._Block.assign

    def fresh(self, tau, want_reload=False):
        memo = self.__dict__.get("_assigned")
        if memo:
            hits["n"] += 1
            memo.clear()
        return orig(self, tau, want_reload)

    monkeypatch.setattr(reliability._Block, "assign", fresh)
    without = [reliability.stage(dict(x)) for x in singles] + [reliability.stage(dict(pre))]
    assert hits["n"] > 0  # the memo held entries between calls: it was in use
    for a, b in zip(with_memo, without):
        assert a.keys() == b.keys()
        for k in a:
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_assign_returns_fresh_dicts():
    """A caller that replaces an entry of the returned dict (``optimum``'s ``consider`` does)
    must not change what the next call with the same order returns."""
    d = planner.load_preset("llama3-405b-h100-16k")
    pre = _stage_out(batch.from_scenarios([d]))
    seen = []
    orig = reliability._Block.assign

    def spy(self, tau, want_reload=False):
        r = orig(self, tau, want_reload)
        seen.append((self, dict(tau), want_reload, {k: (None if v is None else np.array(v)) for k, v in r[0].items()}))
        for k in r[0]:
            r[0][k] = np.array([-1.0])  # vandalise the caller's copy
        return r

    reliability._Block.assign = spy
    try:
        reliability.stage(dict(pre))
    finally:
        reliability._Block.assign = orig
    assert len(seen) > 3
    for blk, tau, want, lam in seen:
        again = orig(blk, tau, want)[0]
        for k, v in lam.items():
            if v is None:
                assert again[k] is None
            else:
                np.testing.assert_array_equal(again[k], v)


# 4. reliability.report ----------------------------------------------------------------------

def _rows() -> list[dict]:
    out = []
    for d in _rows_for_reliability() + [planner.load_preset(p).to_json_dict() for p in PRESETS]:
        s = validate_scenario(d)
        o = engine.run_batch(batch.from_scenarios([s]))
        out.append(batch.row(o, 0))
    # a short run (the finite-run note) and goodput 0 (zero_goodput_reason)
    d = planner.load_preset("default").to_json_dict()
    d["training"] = {**d["training"], "tokens_total": 2e9}
    d["checkpoint"] = {**d["checkpoint"], "tiers": [{"tier": "pfs", "interval_s": 36000.0, "replicas": 0}]}
    out.append(batch.row(engine.run_batch(batch.from_scenarios([validate_scenario(d)])), 0))
    d = planner.load_preset("default").to_json_dict()
    d["checkpoint"] = {**d["checkpoint"], "tiers": [{"tier": "host_memory", "interval_s": None, "replicas": 0}]}
    out.append(batch.row(engine.run_batch(batch.from_scenarios([validate_scenario(d)])), 0))
    return out


def test_report_equals_explain_and_notes_and_computes_the_model_once(monkeypatch):
    rows = _rows()
    separate = [(reliability.explain(r), reliability.notes(r)) for r in rows]
    calls = {"model": 0, "tt": 0}
    orig_model, orig_tt = reliability._row_model_calc, reliability.ck.tier_times

    def count_model(row):
        calls["model"] += 1
        return orig_model(row)

    def count_tt(b):
        calls["tt"] += 1
        return orig_tt(b)

    monkeypatch.setattr(reliability, "_row_model_calc", count_model)
    monkeypatch.setattr(reliability.ck, "tier_times", count_tt)
    texts = set()
    for r, (e, n) in zip(rows, separate):
        calls.update(model=0, tt=0)
        e2, st, n2 = reliability.report(r)
        assert st is None
        assert e2 == e
        assert n2 == n
        assert calls["model"] <= 1 and calls["tt"] <= 1
        texts.update(n2)
    # the rows reach the notes that ask for the model: the grouping, async lag, short run, goodput 0
    joined = " ".join(texts).lower()
    assert "goodput is 0" in joined
    assert "async" in joined
    assert "the run is short" in joined
    # and without report, explain + notes compute the model more than once (what the memo saves)
    calls.update(model=0, tt=0)
    reliability.explain(rows[1])
    reliability.notes(rows[1])
    assert calls["model"] >= 2


def test_report_memo_is_gone_after_report_and_after_an_error(monkeypatch):
    row = _rows()[0]
    reliability.report(row)
    assert reliability._ROW_MEMO.get() is None

    def boom(r):
        raise RuntimeError("boom")

    monkeypatch.setattr(reliability, "notes", boom)
    with pytest.raises(RuntimeError):
        reliability.report(row)
    assert reliability._ROW_MEMO.get() is None


def test_memo_is_for_its_own_row_only():
    """Inside a report, another row (an equal copy, another object) gets its own computation."""
    rows = _rows()
    r0, r1 = rows[0], rows[1]
    token = reliability._ROW_MEMO.set((r0, {}))
    try:
        m1 = reliability._row_model(r1)
        m0 = reliability._row_model(r0)
        assert reliability._row_model(r0) is m0  # kept for its row
        assert reliability._row_model(dict(r0)) is not m0  # a copy is another row
    finally:
        reliability._ROW_MEMO.reset(token)
    fresh1 = reliability._row_model_calc(r1)
    for k in fresh1[0]:
        np.testing.assert_array_equal(np.asarray(m1[0][k]), np.asarray(fresh1[0][k]))


def test_evaluate_keeps_the_memory_stages_and_uses_reliability_report(monkeypatch):
    s = planner.load_preset("llama3-405b-h100-16k")
    calls = []
    orig = reliability.report
    monkeypatch.setattr(reliability, "report", lambda row: calls.append(1) or orig(row))
    rep = planner.evaluate(s)
    assert calls == [1]
    out = engine.run_batch(batch.from_scenarios([s]))
    row = batch.row(out, 0)
    assert rep.stages == memory.per_stage(out, 0)  # not replaced by reliability's None
    assert len(rep.stages) == int(row["pp"])
    for k, v in reliability.explain(row).items():
        assert rep.explain[k] == v
    rel_notes = reliability.notes(row)
    assert all(n in rep.notes for n in rel_notes)
