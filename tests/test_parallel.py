"""engine.run_batch over forked worker processes (engine.resolve_workers, _run_parallel).

Rows are independent (DESIGN §2), so the chunks may run in any process: the result must be
the serial one, column for column, dtype for dtype, bit for bit. The expected values here
are the serial path's own output on the same batch (the property under test is equality of
the two paths, not a figure), plus hand-set cases for the worker-count rule.
"""

from __future__ import annotations

import re
import sys
import threading
import types

import math

import numpy as np
import pandas as pd
import pytest

from planner import batch, engine, list_presets, load_preset, memory

linux_fork = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the parallel path forks, on Linux only (serial elsewhere)")


def _mixed_batch(n_rows: int, seed: int = 0) -> batch.Batch:
    """``n_rows`` valid splits drawn from the sweep spaces of every preset (dense, MoE with
    leading dense layers, DualPipe, FP8, FSDP, offload), shuffled so that each chunk mixes
    models and systems."""
    sweep_mod = __import__("importlib").import_module("planner.sweep")
    parts = []
    for k in list_presets():
        space = sweep_mod.build_space(load_preset(k), include_invalid=False, micro_batch_max=2)
        b, reason, _g = space.rows(0, min(space.n_rows, 4_000))
        ok = np.flatnonzero(reason == sweep_mod.R_OK)
        parts.append({c: np.asarray(v)[ok] for c, v in b.items()})
    allrows = {c: np.concatenate([p[c] for p in parts]) for c in parts[0]}
    pick = np.random.default_rng(seed).choice(len(allrows["tp"]), n_rows)
    return {c: v[pick] for c, v in allrows.items()}


@linux_fork
def test_two_workers_give_the_serial_result_bit_for_bit():
    b = _mixed_batch(3_000)
    ser = engine.run_batch(b, chunk_rows=256, workers=1)
    par = engine.run_batch(b, chunk_rows=256, workers=2)
    assert list(par) == list(ser)  # same columns, same order
    made = 0
    for k in ser:
        assert par[k].dtype == ser[k].dtype, k
        assert par[k].shape == (3_000,), k
        assert np.array_equal(par[k], ser[k], equal_nan=ser[k].dtype.kind == "f"), k
        made += k not in b
    assert made > 50  # the stages' own columns came back from the workers, not only the inputs
    assert np.isfinite(par["step_time_s"]).mean() > 0.5


@linux_fork
def test_progress_counts_every_row_once_and_no_pool_thread_is_left():
    b = _mixed_batch(2_000, seed=1)
    seen = []
    before = threading.active_count()
    engine.run_batch(b, chunk_rows=300, workers=2, progress=lambda d, t: seen.append((d, t)))
    assert threading.active_count() == before  # the pool's handler threads are joined
    assert [t for _, t in seen] == [2_000] * 7  # one call per chunk: ceil(2000 / 300) = 7
    done = [d for d, _ in seen]
    assert done == sorted(done) and done[-1] == 2_000
    # chunks finish in any order, so the steps are chunk sizes: six of 300 and one of 200
    assert sorted(np.diff([0] + done)) == [200] + [300] * 6


def test_worker_count_rule(monkeypatch):
    monkeypatch.delenv(engine.WORKERS_ENV, raising=False)
    monkeypatch.setattr(engine, "_usable_cpus", lambda: 4)
    monkeypatch.setattr(engine.threading, "active_count", lambda: 1)
    few = engine.PARALLEL_MIN_ROWS - 1
    assert engine.resolve_workers(None, 100, few) == 1  # too few rows to pay for the fork
    assert engine.resolve_workers(None, 1, 10**7) == 1  # one chunk: nothing to share out
    assert engine.resolve_workers(1, 100) == 1
    if sys.platform.startswith("linux"):
        assert engine.resolve_workers(None, 100) == 4  # every usable CPU
        assert engine.resolve_workers(None, 100, engine.PARALLEL_MIN_ROWS) == 4
        assert engine.resolve_workers(3, 2) == 2  # never more workers than chunks
        monkeypatch.setenv(engine.WORKERS_ENV, "3")
        assert engine.resolve_workers(None, 100) == 3
        monkeypatch.setenv(engine.WORKERS_ENV, "1")
        assert engine.resolve_workers(None, 100) == 1
        monkeypatch.delenv(engine.WORKERS_ENV)
        # another thread (a Streamlit server): forking could leave a child on a held lock
        monkeypatch.setattr(engine.threading, "active_count", lambda: 3)
        assert engine.resolve_workers(None, 100) == 1
        assert engine.resolve_workers(2, 100) == 2  # an explicit request is honoured


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "2"])
def test_a_bad_worker_count_is_refused_with_its_name(bad):
    with pytest.raises(ValueError, match=r"workers = .*whole number of processes >= 1"):
        engine.run_batch(_mixed_batch(10), workers=bad)


@pytest.mark.parametrize("env", ["0", "two", "-1", "1.5", "²", "+2"])
def test_a_bad_environment_worker_count_is_refused_with_its_name(monkeypatch, env):
    monkeypatch.setenv(engine.WORKERS_ENV, env)
    with pytest.raises(ValueError, match=re.escape(f"CLUSTERPLAN_WORKERS='{env}': give a whole number")):
        engine.resolve_workers(None, 100)


def _stage_module(fn):
    return types.SimpleNamespace(stage=fn, __name__="fake_stage")


@linux_fork
def test_a_chunk_whose_dtype_differs_falls_back_to_the_serial_concatenation():
    # int64 in the first chunk, float64 later: the shared int64 buffer cannot hold it, so the
    # run is serial and np.concatenate promotes to float64, exactly as without workers
    b = {"x": np.arange(1_000, dtype=np.int64)}
    mod = _stage_module(lambda c: {"y": c["x"] * 2 if c["x"][0] == 0 else c["x"] * 2.5})
    par = engine._run_chunked(b, [mod], chunk_rows=100, workers=2)
    ser = engine._run_chunked(b, [mod], chunk_rows=100, workers=1)
    assert par["y"].dtype == ser["y"].dtype == np.float64
    assert np.array_equal(par["y"], ser["y"])
    assert par["y"][99] == 198 and par["y"][100] == 250


@linux_fork
def test_an_error_in_a_worker_reaches_the_caller():
    def stage(c):
        if c["x"][0] >= 500:
            raise ValueError("stage failed at row 500")
        return {"y": c["x"] + 1}
    with pytest.raises(ValueError, match="stage failed at row 500"):
        engine._run_chunked({"x": np.arange(1_000)}, [_stage_module(stage)], chunk_rows=100, workers=2)


@linux_fork
def test_input_columns_no_stage_replaced_are_the_batch_s_own_arrays():
    # as for a batch of one chunk (dict(b)): no copy of the inputs on either path
    b = {"x": np.arange(1_000, dtype=np.float64)}
    mod = _stage_module(lambda c: {"y": c["x"] ** 2})
    for w in (1, 2):
        out = engine._run_chunked(b, [mod], chunk_rows=100, workers=w)
        assert out["x"] is b["x"]
        assert np.array_equal(out["y"], np.arange(1_000.0) ** 2)


def test_the_worst_stage_index_is_int64_in_every_batch():
    # found by the parallel path: the column was float64 in a batch holding an MoE model with
    # leading dense layers (DeepSeek-V3's middle-rank candidate) and int64 otherwise, so the
    # dtype depended on which rows shared a chunk
    for names in (["deepseek-v3-h800-2048"], ["llama3-70b-h100-1024"], list_presets()):
        b = batch.from_scenarios([load_preset(k) for k in names])
        from planner import model_stats
        out = dict(b)
        out.update(model_stats.stats(out))
        res = memory.stage(out)
        assert res["mem_worst_stage"].dtype == np.int64, names
        assert np.all((res["mem_worst_stage"] >= 0) & (res["mem_worst_stage"] < b["pp"])), names


@linux_fork
def test_progress_never_goes_back_when_the_parallel_run_falls_back():
    b = {"x": np.arange(1_000, dtype=np.int64)}
    mod = _stage_module(lambda c: {"y": c["x"] * 2 if c["x"][0] == 0 else c["x"] * 2.5})
    seen = []
    engine._run_chunked(b, [mod], chunk_rows=100, workers=2, progress=lambda d, t: seen.append(d))
    assert seen == sorted(set(seen)) and seen[-1] == 1_000


# ---- sweep(top=...) over worker processes ----------------------------------------------------

_sweep_mod = __import__("importlib").import_module("planner.sweep")
_SMALL = dict(cp_max=2, zero_stages=(0, 1, 3), recompute=("selective", "full"), micro_batch_max=2)


def _sweep(monkeypatch, workers, **kw):
    monkeypatch.setenv(engine.WORKERS_ENV, str(workers))
    monkeypatch.setattr(engine, "PARALLEL_MIN_ROWS", 2)
    monkeypatch.setattr(engine.threading, "active_count", lambda: 1)
    return _sweep_mod.sweep(load_preset("default"), **_SMALL, **kw)


@linux_fork
@pytest.mark.parametrize("kw", [dict(top=25, objective="mfu"), dict(top=3, feasible_only=False),
                                dict(top=400, objective="cost")])
def test_a_sweep_with_top_on_workers_is_the_serial_table(monkeypatch, kw):
    ser = _sweep(monkeypatch, 1, chunk_size=97, **kw)
    seen, used = [], []
    real = _sweep_mod._scan_parallel
    monkeypatch.setattr(_sweep_mod, "_scan_parallel", lambda *a, **k: used.append(a[2]) or real(*a, **k))
    par = _sweep(monkeypatch, 2, chunk_size=97, progress=lambda d, t: seen.append((d, t)), **kw)
    assert used == [2]  # the workers ran it
    n = ser.attrs["n_configurations"]
    assert n > 16 * 97  # enough chunks for several tasks of at least four chunks
    pd.testing.assert_frame_equal(par, ser, check_exact=True)
    assert par.attrs == ser.attrs
    assert par["pareto_time_cost"].any()  # the Pareto flags came through the merged positions
    done = [d for d, _ in seen]
    assert done == sorted(done) and done[-1] == n and {t for _, t in seen} == {n}


@linux_fork
def test_a_sweep_whose_ranges_hold_no_feasible_row_still_names_its_columns(monkeypatch):
    # 1 GPU per node of 8 on a 405B model: nothing fits, every scan returns no candidate
    s = load_preset("llama3-405b-h100-16k")
    monkeypatch.setenv(engine.WORKERS_ENV, "2")
    monkeypatch.setattr(engine, "PARALLEL_MIN_ROWS", 2)
    monkeypatch.setattr(engine.threading, "active_count", lambda: 1)
    par = _sweep_mod.sweep(s, gpus=8, top=5, chunk_size=50, tp=(1, 2), pp=(1, 2))
    monkeypatch.setenv(engine.WORKERS_ENV, "1")
    ser = _sweep_mod.sweep(s, gpus=8, top=5, chunk_size=50, tp=(1, 2), pp=(1, 2))
    assert par.empty and ser.empty
    assert list(par.columns) == list(ser.columns) and "step_time_s" in par.columns
    assert par.attrs == ser.attrs


def test_merge_offsets_positions_by_the_rows_before():
    # two hand-made scans: the second's positions move past the first's 3 source rows and 2
    # feasible rows
    a = dict(src_parts=[{"x": np.arange(3)}], pos_parts=[np.array([0, 2])], key_parts=[np.array([1.0, 2.0])],
             reason_parts=[np.zeros(2, int)], group_parts=[np.zeros(2, int)], fpos_parts=[np.array([0, 1])],
             src_rows=3, par_t=[np.ones(2)], par_c=[np.ones(2)], par_tps=[np.ones(2)], par_hr=[np.ones(2)],
             n_feas=2, names=["x"], probe=None, fail={"oom": 1, "host": 0, "host_need_min": math.inf})
    b = dict(a, pos_parts=[np.array([1])], fpos_parts=[np.array([0])], key_parts=[np.array([0.5])],
             n_feas=1, src_rows=2, names=["x"], fail={"oom": np.int64(2), "host": 3, "host_need_min": 5e9})
    m = _sweep_mod._merge_scans([a, b])
    assert [list(p) for p in m["pos_parts"]] == [[0, 2], [4]]
    assert [list(f) for f in m["fpos_parts"]] == [[0, 1], [2]]
    assert m["src_rows"] == 5 and m["n_feas"] == 3 and m["names"] == ["x"]
    # why rows failed (review 15l): counts add, the least host memory needed is the minimum
    assert m["fail"] == {"oom": 3, "host": 3, "host_need_min": 5e9}


# ---- found by a review of the parallel path (each failed on its first version) ----------------

@linux_fork
def test_two_threads_running_batches_at_once_each_get_their_own_result():
    # the job went to the workers through one module global, so a second thread's pool forked
    # with the first one's job (or none): 37,952 of 40,000 step times came back 0.0
    b1, b2 = (_mixed_batch(6_000, seed=s) for s in (3, 4))
    want = [engine.run_batch(b, workers=1)["step_time_s"] for b in (b1, b2)]
    got = {}

    def job(i, b):
        got[i] = engine.run_batch(b, chunk_rows=512, workers=2)["step_time_s"]

    ts = [threading.Thread(target=job, args=(i, b)) for i, b in enumerate((b1, b2))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for i in (0, 1):
        assert np.array_equal(got[i], want[i], equal_nan=True)


def _failing(how):
    def stage(c):
        if c["x"][0] >= 500:
            if how == "kill":
                import os
                import signal
                os.kill(os.getpid(), signal.SIGKILL)
            if how == "exit":
                sys.exit(3)
            if how == "input":
                from planner.schema import InputError
                raise InputError(["field.x: must be positive (got -1)"])
        return {"y": c["x"] + 1}
    return _stage_module(stage)


@linux_fork
def test_a_worker_that_dies_raises_instead_of_hanging():
    from concurrent.futures.process import BrokenProcessPool
    with pytest.raises(BrokenProcessPool):
        engine._run_chunked({"x": np.arange(1_000)}, [_failing("kill")], chunk_rows=100, workers=2)
    with pytest.raises(SystemExit):
        engine._run_chunked({"x": np.arange(1_000)}, [_failing("exit")], chunk_rows=100, workers=2)


@linux_fork
def test_an_input_error_from_a_worker_keeps_its_lines():
    from planner.schema import InputError
    with pytest.raises(InputError) as e:
        engine._run_chunked({"x": np.arange(1_000)}, [_failing("input")], chunk_rows=100, workers=2)
    assert e.value.lines == ["field.x: must be positive (got -1)"]  # was 'f; i; e; l; d; ...'


@linux_fork
def test_a_process_forked_after_a_parallel_run_cannot_change_its_result():
    import multiprocessing as mp
    mod = _stage_module(lambda c: {"y": c["x"] * 2.0})
    out = engine._run_chunked({"x": np.arange(1_000.0)}, [mod], chunk_rows=100, workers=2)
    p = mp.get_context("fork").Process(target=lambda: out["y"].__setitem__(slice(None), -1.0))
    p.start()
    p.join()
    assert p.exitcode == 0
    assert list(out["y"][:3]) == [0.0, 2.0, 4.0]  # was [-1, -1, -1]: the result was a shared mapping
    out["y"][0] = 7.0  # and it is writable here
    assert out["y"][0] == 7.0


def test_explicit_workers_inside_a_daemon_process_run_serially(monkeypatch):
    monkeypatch.setattr(engine.multiprocessing, "current_process", lambda: types.SimpleNamespace(daemon=True))
    assert engine.resolve_workers(2, 100) == 1  # a daemon may not have children (was AssertionError)


def test_log_phi_of_a_row_does_not_depend_on_a_nan_elsewhere():
    # found by review: one NaN made the block-wide min / max comparisons false, so every other
    # element took the closed form instead of the series (an ulp apart)
    from planner import reliability
    x = np.array([1e-3, 0.5, 3.0])
    alone = reliability._log_phi(x)
    with_nan = reliability._log_phi(np.append(x, np.nan))
    assert np.array_equal(with_nan[:3], alone) and np.isnan(with_nan[3])
    # and the series value itself (x/2 + x²/24 − x⁴/2880 at x = 1e-3)
    assert alone[0] == pytest.approx(5e-4 + 1e-6 / 24 - 1e-12 / 2880, rel=1e-15)


@pytest.mark.parametrize("workers", [1, 2])
def test_an_input_column_a_stage_replaces_in_later_chunks_only_is_kept(workers):
    # found by review: the columns to keep were taken from the first chunk alone, so a stage
    # that replaced an input column only from row 500 on lost those values
    b = {"x": np.arange(1_000.0)}
    mod = _stage_module(lambda c: {"y": c["x"] + 1} | ({"x": -c["x"]} if c["x"][0] >= 500 else {}))
    out = engine._run_chunked(b, [mod], chunk_rows=100, workers=workers)
    assert np.array_equal(out["x"], np.r_[np.arange(500.0), -np.arange(500.0, 1_000.0)])
    assert np.array_equal(out["y"], np.arange(1_000.0) + 1)


def test_the_serial_path_writes_into_columns_allocated_once():
    # no concatenation: 10 chunks of a 2 MiB+ batch land in one mapping (huge pages asked for)
    b = {"x": np.arange(300_000.0)}
    mod = _stage_module(lambda c: {"y": c["x"] * 3.0, "z": c["x"] > 5})
    out = engine._run_chunked(b, [mod], chunk_rows=30_000, workers=1)
    assert np.array_equal(out["y"], np.arange(300_000.0) * 3.0)
    assert out["z"].dtype == bool and out["z"].sum() == 300_000 - 6
    assert out["y"].base is not None and out["x"] is b["x"]


# ---- found by a second review (each failed on the version before) -----------------------------

@pytest.mark.parametrize("bad", [-3, 0, 2.5, True])
def test_a_bad_chunk_size_is_refused(bad):
    # -3 left the last rows of the preallocated columns unwritten (zeros); 0 divided by zero
    with pytest.raises(ValueError, match=r"chunk_rows = .*whole number of rows >= 1"):
        engine.run_batch(_mixed_batch(50), chunk_rows=bad)


@linux_fork
def test_a_parallel_result_holds_no_file_descriptor():
    import gc
    import os
    mod = _stage_module(lambda c: {"y": c["x"] * 2.0})
    gc.collect()  # earlier tests' pools may still hold pipes until collected
    before = len(os.listdir("/proc/self/fd"))
    kept = [engine._run_chunked({"x": np.arange(1_000.0)}, [mod], chunk_rows=100, workers=2)["y"]
            for _ in range(5)]
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) <= before  # was one more per result held
    assert all(np.array_equal(k, np.arange(1_000.0) * 2.0) for k in kept)


@linux_fork
def test_warnings_issued_in_a_worker_reach_the_caller():
    import warnings

    def stage(c):
        if c["x"][0] == 500:
            warnings.warn("chunk at row 500 is odd", RuntimeWarning)
        return {"y": c["x"] + 1}
    for w in (1, 2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            engine._run_chunked({"x": np.arange(1_000)}, [_stage_module(stage)], chunk_rows=100, workers=w)
        assert [str(x.message) for x in caught] == ["chunk at row 500 is odd"], w


@linux_fork
def test_an_exception_that_cannot_be_pickled_is_named_not_a_broken_pool():
    class TwoArgs(Exception):
        def __init__(self, a, b):
            super().__init__(f"{a}/{b}")

    def stage(c):
        if c["x"][0] >= 500:
            raise TwoArgs("row", 500)
        return {"y": c["x"] + 1}
    with pytest.raises(RuntimeError, match="a worker process raised .*TwoArgs: row/500"):
        engine._run_chunked({"x": np.arange(1_000)}, [_stage_module(stage)], chunk_rows=100, workers=2)


def test_a_one_chunk_sweep_does_not_read_the_worker_variable(monkeypatch):
    monkeypatch.setenv(engine.WORKERS_ENV, "abc")
    df = _sweep_mod.sweep(load_preset("default"), top=2, gpus=8)
    assert df.attrs["n_configurations"] <= engine.DEFAULT_CHUNK_ROWS


def test_workers_leave_ctrl_c_to_the_caller():
    """Ctrl-C reaches the whole process group: a worker that took it printed its own traceback
    beside the caller's (found by review). Workers ignore SIGINT; the caller stops the run."""
    import signal

    # the caller's handler, set here: a test run started in the background by a non-interactive
    # shell (`nohup … &`) inherits SIGINT ignored, which would make the checks below say nothing
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        got = list(engine.forked_results(signal.getsignal, [signal.SIGINT] * 2, 2, None))
        assert got == [signal.SIG_IGN, signal.SIG_IGN]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the caller's own handler is kept
    finally:
        signal.signal(signal.SIGINT, before)
