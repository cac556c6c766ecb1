"""The pipeline: columnar batch -> model stats -> memory -> step time -> checkpoint and
reliability -> cost, and the public ``evaluate`` / ``evaluate_many``.

Each stage is a pure function ``stage(b: Batch) -> Batch`` that reads the columns it needs
(inputs and earlier stages' outputs) and returns new columns; :func:`run_batch` merges them.
A stage module may also offer ``explain(row) -> dict[str, str]`` (a formula string with the
numbers plugged in, for one scenario) and the memory stage ``per_stage(b)`` (every pipeline
stage of one scenario); ``report(row) -> (explain, per_stage or None, notes)`` gives all three
sharing their common work (memory, reliability), and :func:`evaluate` calls it where it exists.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import json
import mmap
import multiprocessing
import os
import signal
import sys
import threading
import warnings
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import batch as _batch
from .batch import Batch
from .schema import InputError, Scenario, dotted_path, format_errors, validate_scenario

#: Stage modules in pipeline order; each exposes ``stage(b) -> dict of new columns``.
STAGE_MODULES: tuple[str, ...] = ("model_stats", "memory", "timing", "reliability", "cost")

#: Result columns of DESIGN §3, in display order.
RESULT_COLUMNS: tuple[str, ...] = (
    "params_total", "params_active", "model_flop_per_step",
    "mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes", "mem_activations_bytes",
    "mem_buffers_bytes", "mem_total_bytes", "hbm_bytes", "fits",
    "step_time_s", "t_compute_s", "t_tp_comm_s", "t_cp_comm_s", "t_ep_comm_s", "t_pp_bubble_s",
    "t_pp_p2p_s", "t_dp_comm_exposed_s", "t_offload_s", "t_optimizer_s", "tokens_per_s",
    "tflops_per_gpu", "mfu", "hfu",
    "failure_rate_per_h", "mtbf_h", "ckpt_bytes", "ckpt_interval_s", "ckpt_overhead_frac",
    "lost_work_frac", "restart_frac", "goodput",
    "time_to_train_days", "gpu_hours", "cost_usd", "energy_mwh", "cost_per_m_tokens_usd",
)

#: Input columns kept beside the results in ``evaluate_many``'s table.
KEY_INPUT_COLUMNS: tuple[str, ...] = (
    "n_gpus", "tp", "pp", "dp", "dp_shard", "cp", "ep", "etp", "vpp", "micro_batch_size", "global_batch_size",
    "seq_len", "zero_stage", "recompute", "schedule", "sequence_parallel", "offload_optimizer",
    # the cost inputs, so a table row's cost and energy can be reproduced from it (review 16c)
    "price_per_gpu_hour_usd", "node_power_w", "pue", "utilisation_power_frac", "hot_spare_nodes",
)


#: The inputs a result row's cost and energy are computed from (cost.bill): kept in ``evaluate``'s results.
_COST_INPUTS: tuple[str, ...] = KEY_INPUT_COLUMNS[-5:]

#: The stage modules once every one of them imported (evaluate asked twice a call, ~10 imports each).
_ALL_STAGE_MODULES: list | None = None


def _stage_modules():
    """The stage modules in pipeline order (a fresh list; a stage not built yet is skipped)."""
    global _ALL_STAGE_MODULES
    if _ALL_STAGE_MODULES is not None:
        return list(_ALL_STAGE_MODULES)
    mods = []
    for name in STAGE_MODULES:
        try:
            mods.append(importlib.import_module(f"planner.{name}"))
        except ModuleNotFoundError as e:  # a stage not built yet; tests check all are present
            if e.name != f"planner.{name}":
                raise
    if len(mods) == len(STAGE_MODULES):
        _ALL_STAGE_MODULES = mods
    return list(mods)


#: Rows per chunk in :func:`run_batch`: small enough that a stage's temporaries stay in the
#: CPU caches (measured ~2x faster than one pass over 10^6 rows; benchmarks/bench_memory.py).
DEFAULT_CHUNK_ROWS = 16_384

#: Fewest rows for which the automatic choice (``workers=None``) forks worker processes (8
#: chunks of ``DEFAULT_CHUNK_ROWS``): below it the fork and the pool's start (~10 ms) cost
#: about what a second CPU saves. Counted in rows, so a small ``chunk_rows`` does not fork
#: for a small batch.
PARALLEL_MIN_ROWS = 131_072

#: Environment variable that sets the worker count of the automatic choice (``1``: serial).
WORKERS_ENV = "CLUSTERPLAN_WORKERS"


def _run_stages(b: Batch, mods=None) -> Batch:
    out = dict(b)
    for mod in (_stage_modules() if mods is None else mods):
        out.update(mod.stage(out))
    return out


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def resolve_workers(workers: int | None, n_chunks: int, n_rows: int | None = None) -> int:
    """How many processes :func:`run_batch` uses for ``n_chunks`` chunks of ``n_rows`` rows in
    all (1: serial, in this one).

    ``workers=None`` (automatic): the ``CLUSTERPLAN_WORKERS`` environment variable when set,
    else the CPUs this process may run on; 1 when the batch has fewer than
    :data:`PARALLEL_MIN_ROWS` rows or one chunk, when the process runs other threads (a Streamlit
    server: forking a threaded process can leave a child waiting on a lock another thread
    held), inside a daemon process, or where ``fork`` is not the platform's safe default (only
    Linux is used). An explicit ``workers`` is used as given (capped at the chunk count),
    still only where ``fork`` is available. Raises :class:`InputError` (a ``ValueError``) for a
    ``workers`` or environment value that is not a whole number >= 1.
    """
    if workers is None:
        env = os.environ.get(WORKERS_ENV, "").strip()
        if env:
            if not (env.isascii() and env.isdigit() and int(env) >= 1):
                raise InputError([f"{WORKERS_ENV}={env!r}: give a whole number of worker processes >= 1 (1: serial)"])
            workers = int(env)
        else:
            workers = _usable_cpus()
        if (n_chunks < 2 or (n_rows if n_rows is not None else n_chunks * DEFAULT_CHUNK_ROWS) < PARALLEL_MIN_ROWS
                or threading.active_count() > 1):
            return 1
    elif isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise InputError([f"run_batch: workers = {workers!r}: give a whole number of processes >= 1 (1: serial) or None"])
    if (not sys.platform.startswith("linux") or "fork" not in multiprocessing.get_all_start_methods()
            or multiprocessing.current_process().daemon):  # a daemon process may not have children
        return 1
    return int(max(1, min(int(workers), n_chunks)))


class _Serial(RuntimeError):
    """The parallel path cannot run this batch (a chunk gave other columns or dtypes than the
    first one, or no shared memory file): the caller runs serially, where concatenation
    decides, as it always has."""


#: One parallel section at a time per process: a second thread's call runs serially instead
#: of forking beside the first one's pool.
_FORK_LOCK = threading.Lock()

#: The job of a forked worker (set in the child by :func:`_init_child`, never in the parent).
_CHILD_JOB: Any = None


def _init_child(job) -> None:
    global _CHILD_JOB
    _CHILD_JOB = job
    # Ctrl-C reaches the whole process group: the caller stops the run (the pool cancels what
    # is queued and reaps the workers); a worker that also took it would print its own traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class _DeferredSigint:
    """While a forked pool starts, waits and stops: Ctrl-C (SIGINT) sets a flag instead of raising
    KeyboardInterrupt at whatever bytecode runs, and :meth:`check` raises it at a safe point.

    Review 50: KeyboardInterrupt raised inside ``ProcessPoolExecutor.submit``, inside
    ``Future.result`` (which then kept the future's lock: the pool's manager thread waited on it at
    exit for ever) or inside the shutdown (the workers kept waiting on their task queue, and the
    interpreter's exit joined them) hung ``planner sweep`` after "planner: interrupted" — with
    ``timeout -s INT``, which signals the process and then its group, in about 1 run of 6. A
    Python-level handler runs in the main thread whichever thread the kernel gives the signal to
    (blocking it in one thread with ``pthread_sigmask`` did not hold it back: numpy's BLAS threads
    leave it open). Installed only in the main thread and only over Python's own handler (a
    caller's handler or an ignored SIGINT is left as it is); ``restore`` puts that handler back."""

    def __init__(self):
        self.hit = False
        self.prev = None
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
            self.prev = signal.default_int_handler

    def _on_sigint(self, signum, frame) -> None:
        self.hit = True

    def install(self) -> None:
        if self.prev is not None:
            signal.signal(signal.SIGINT, self._on_sigint)

    def restore(self) -> None:
        if self.prev is not None:
            signal.signal(signal.SIGINT, self.prev)

    def check(self) -> None:
        """KeyboardInterrupt here if a Ctrl-C came since the flag was last cleared."""
        if self.hit:
            self.hit = False
            raise KeyboardInterrupt


#: How often a wait on the workers looks at a deferred Ctrl-C [s] (its longest delay).
_SIGINT_POLL_S = 0.1


def forked_results(fn, items, workers: int, job, *, ordered: bool = True):
    """Yield ``fn(item)`` for every item, computed in ``workers`` forked processes that see
    ``job`` as ``engine._CHILD_JOB`` (inherited by the fork, never pickled); in item order
    when ``ordered``, else as they finish. A worker's exception (``SystemExit`` and
    ``KeyboardInterrupt`` included) is raised here; a worker that dies (killed, out of
    memory) raises ``concurrent.futures.process.BrokenProcessPool`` instead of hanging.

    Ctrl-C: while the pool starts, while this waits on it and while it stops, SIGINT only sets a
    flag (:class:`_DeferredSigint`), raised as KeyboardInterrupt at the next safe point (within
    :data:`_SIGINT_POLL_S`); the caller's own code between two results runs under its usual
    handler. Leaving before every item is done (an exception here or in the caller, Ctrl-C, a
    caller that stops reading) cancels what is queued, stops the workers (SIGTERM) and reaps them;
    a Ctrl-C during that stop is raised after it. Callers close the generator themselves
    (``contextlib.closing``), so that this happens in their frame, not when the generator is
    garbage-collected, where a KeyboardInterrupt is only printed ("Exception ignored")."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor
    from concurrent.futures import TimeoutError as FuturesTimeout
    from concurrent.futures import wait

    sig = _DeferredSigint()
    futs: list = []
    ex = None
    try:
        sig.install()
        ex = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                                 initializer=_init_child, initargs=(job,))
        futs = [ex.submit(_in_child, fn, x) for x in items]  # the first submit forks every worker
        sig.check()
        pending = set(futs)
        nxt = iter(futs)
        while pending:
            if ordered:
                f = next(nxt)
                while True:
                    try:
                        f.result(timeout=_SIGINT_POLL_S)  # a worker's exception is raised here
                        break
                    except FuturesTimeout:
                        sig.check()
                ready = [f]
            else:
                ready, _ = wait(pending, timeout=_SIGINT_POLL_S, return_when=FIRST_COMPLETED)
                sig.check()
            for f in ready:
                pending.discard(f)
                value, caught = f.result()
                for message, category, filename, lineno in caught:  # as if raised here
                    warnings.warn_explicit(message, category, filename, lineno)
                sig.restore()  # the caller's code runs under its own handler
                sig.check()
                yield value
                sig.install()
    finally:
        sig.install()
        try:
            if ex is not None:
                if all(f.done() for f in futs):
                    ex.shutdown(wait=True)
                else:
                    _stop_pool(ex)
        finally:
            sig.restore()
        if sys.exc_info()[0] is None:  # a Ctrl-C during the stop, after a normal end
            sig.check()


def _stop_pool(ex) -> None:
    """Cancel what ``ex`` (a ProcessPoolExecutor) has queued, stop its workers with SIGTERM and
    reap them (what Python 3.14's ``terminate_workers`` does, and the join it leaves out), through
    the pool's ``_processes``; then wait for the pool's manager thread, which reaps a worker too
    (the two race for each exit status: until its thread ends, a worker it reaped can still read
    as alive here)."""
    procs = list((getattr(ex, "_processes", None) or {}).values())
    manager = getattr(ex, "_executor_manager_thread", None)
    ex.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        try:
            if p.is_alive():
                p.terminate()
        except (ValueError, ProcessLookupError):  # closed, or already gone
            pass
    for p in procs:
        try:
            p.join(timeout=5.0)
        except (ValueError, AssertionError):
            pass
    if manager is not None and manager is not threading.current_thread():
        manager.join(timeout=10.0)


def _in_child(fn, x):
    """``fn(x)`` in a worker, with the warnings it issued (the caller re-issues them: a
    worker's stderr is not the caller's ``warnings``), and an exception that would not
    survive pickling (the pool would only report a broken pool) raised as a RuntimeError
    naming it."""
    import pickle

    try:
        with warnings.catch_warnings(record=True) as caught:
            value = fn(x)
    except BaseException as e:
        try:
            pickle.loads(pickle.dumps(e))
        except Exception:
            raise RuntimeError(f"a worker process raised {type(e).__qualname__}: {e}") from None
        raise
    return value, [(str(w.message), w.category, w.filename, w.lineno) for w in caught]


def _stage_columns(out: Batch, piece: Batch) -> dict:
    """The columns of ``out`` that a stage wrote (an input column no stage replaced is the
    chunk's own array)."""
    return {k: v for k, v in out.items() if k not in piece or v is not piece[k]}


def _put_chunk(out: Batch, piece: Batch, start: int, arrays: dict, names: set) -> str | None:
    """Write a chunk's stage columns into ``arrays`` at row ``start``; or, without writing,
    why they do not fit there (other columns, another dtype or length, or an input column a
    stage replaced in this chunk only)."""
    rows = _batch.size(piece)
    if set(out) != names:
        return f"chunk at row {start}: columns differ from the first chunk's"
    made = _stage_columns(out, piece)
    if made.keys() != arrays.keys():
        return f"chunk at row {start}: stages replaced other input columns than in the first chunk"
    for k, dst in arrays.items():
        v = np.asarray(made[k])
        if v.dtype != dst.dtype or v.shape != (rows,):
            return f"chunk at row {start}: column {k!r} is {v.dtype}{v.shape}, not {dst.dtype}"
    for k, dst in arrays.items():
        dst[start:start + rows] = made[k]
    return None


def _column_offsets(made: dict, n: int) -> tuple[dict, int]:
    """64-byte aligned offsets of ``n``-row columns of the dtypes of ``made`` in one buffer,
    widest dtypes first, and the buffer's size in bytes (at least 1)."""
    offsets, size = {}, 0
    for k in sorted(made, key=lambda k: -made[k].dtype.itemsize):
        offsets[k] = size
        size += -(-n * made[k].dtype.itemsize // 64) * 64
    return offsets, max(size, 1)


def _alloc_columns(made: dict, n: int) -> dict:
    """Uninitialised ``n``-row columns of the dtypes of ``made``, all in one private anonymous
    mapping that asks for transparent huge pages (``MADV_HUGEPAGE``, Linux): filling 10^6 rows
    of 83 columns took 160,000 page faults of 4 KiB, about a second of system time on the
    2-CPU development machine. Where the kernel gives no huge pages it is an ordinary
    mapping. The columns share the mapping, which is freed with the last of them."""
    offsets, size = _column_offsets(made, n)
    if size < (1 << 21) or not hasattr(mmap, "MADV_HUGEPAGE"):
        return {k: np.empty(n, dtype=v.dtype) for k, v in made.items()}
    buf = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | getattr(mmap, "MAP_ANONYMOUS", 0x20))
    try:
        buf.madvise(mmap.MADV_HUGEPAGE)
    except OSError:
        pass  # no transparent huge pages here: 4 KiB pages
    return {k: np.frombuffer(buf, dtype=made[k].dtype, count=n, offset=offsets[k]) for k in made}


def _first_layout(b: Batch, mods, chunk_rows: int):
    """Run the first chunk; return (its output, its stage columns as arrays), or raise
    ``_Serial`` when a stage column is not a flat numeric array (no preallocated column can
    hold it)."""
    chunk0 = _batch.take(b, slice(0, chunk_rows))
    first = _run_stages(chunk0, mods)
    made = {k: np.asarray(v) for k, v in _stage_columns(first, chunk0).items()}
    if any(v.ndim != 1 or v.dtype.hasobject for v in made.values()):
        raise _Serial("a column that is not a flat numeric array")
    return first, made


def _fork_chunk(start: int) -> int:
    b, mods, chunk_rows, arrays, names = _CHILD_JOB
    piece = _batch.take(b, slice(start, start + chunk_rows))
    why = _put_chunk(_run_stages(piece, mods), piece, start, arrays, names)
    if why is not None:
        raise _Serial(why)
    return _batch.size(piece)


def _private_map(fd: int, size: int):
    """The file ``fd`` mapped privately (copy-on-write), as a writable buffer that unmaps
    itself when its last user is freed. Through libc's ``mmap`` (ctypes), because Python's
    ``mmap.mmap`` keeps a duplicate of the descriptor open for as long as the mapping lives
    (found by review: 47 results held at once exhausted a 64-descriptor limit)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                              ctypes.c_long]
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    except (OSError, AttributeError):
        return mmap.mmap(fd, size, flags=mmap.MAP_PRIVATE)
    ptr = libc.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE, fd, 0)
    if ptr is None or ptr == ctypes.c_void_p(-1).value:
        raise OSError(ctypes.get_errno(), "mmap of the workers' results failed")

    class _Mapped(ctypes.c_char * size):
        def __del__(self, _munmap=libc.munmap, _ptr=ptr, _size=size):
            _munmap(_ptr, _size)

    return _Mapped.from_address(ptr)


def _run_parallel(b: Batch, mods, chunk_rows: int, workers: int, progress) -> Batch:
    """Chunks over ``workers`` forked processes, each stage's columns written into one shared
    memory file (no pickling of results): the first chunk runs here to learn the columns and
    dtypes, the others in the workers. Same values as the serial path, bit for bit (the same
    code on the same chunks). The result maps the file privately (copy-on-write): a write to
    it, here or in a process forked later, stays in that process, as with ordinary arrays;
    the columns share the file, so it is freed with the last of them. Raises ``_Serial`` when
    a chunk's columns cannot go into the file, or without ``os.memfd_create``."""
    memfd = getattr(os, "memfd_create", None)
    if memfd is None:
        raise _Serial("no os.memfd_create")
    n = _batch.size(b)
    # Columns a stage wrote; an input column no stage replaced is the batch's own array.
    first, made = _first_layout(b, mods, chunk_rows)
    offsets, size = _column_offsets(made, n)  # 64-byte aligned slices of one file
    fd = memfd("clusterplan-run_batch", getattr(os, "MFD_CLOEXEC", 0))
    try:
        os.ftruncate(fd, size)
        shared = mmap.mmap(fd, size, flags=mmap.MAP_SHARED)  # the workers' writes land in the file
        arrays = {k: np.frombuffer(shared, dtype=made[k].dtype, count=n, offset=offsets[k]) for k in made}
        for k, v in made.items():
            arrays[k][: v.size] = v
        if progress is not None:
            progress(min(chunk_rows, n), n)
        done = min(chunk_rows, n)
        job = (b, mods, chunk_rows, arrays, set(first))
        with contextlib.closing(forked_results(_fork_chunk, range(chunk_rows, n, chunk_rows), workers, job,
                                               ordered=False)) as results:
            for rows in results:
                done += rows
                if progress is not None:
                    progress(done, n)
        private = _private_map(fd, size)
    finally:
        os.close(fd)
    del arrays, job  # the shared mapping goes with its last array
    res = {k: np.frombuffer(private, dtype=made[k].dtype, count=n, offset=offsets[k]) for k in made}
    return {k: res[k] if k in res else b[k] for k in first}


def run_batch(b: Batch, *, chunk_rows: int = DEFAULT_CHUNK_ROWS, progress=None, workers: int | None = None) -> Batch:
    """Run every stage over a batch; returns inputs and outputs as one dict of columns.

    Rows are independent (DESIGN §2), so a large batch is cut into chunks of ``chunk_rows``
    rows, each run through the same vectorised stages, and the columns are concatenated: the
    result is the same as one pass. ``progress(done_rows, total_rows)`` is called after each
    chunk.

    ``workers``: processes that run the chunks (:func:`resolve_workers`; default automatic:
    every usable CPU for a batch of at least ``PARALLEL_MIN_ROWS`` rows in a
    single-threaded process on Linux, else 1; one such run at a time per process, a
    concurrent call runs serially). The workers are forked and write every stage column into
    one shared memory file that the result then maps privately, so the result is identical to
    the serial one, bit for bit (tests/test_parallel.py). In one process each chunk's stage
    columns are written into columns allocated once from the first chunk's layout (a chunk
    whose layout differs makes the run concatenate its chunks instead, as before). Stats +
    memory + timing with every column returned: 0.86–0.89 million configurations/s in one
    process, 1.21–1.31 on 2 CPUs (benchmarks/bench_timing.py, docs/sweep.md).
    ``CLUSTERPLAN_WORKERS`` is read only for a batch of more than one chunk.

    Shapes: every column (N,). No loop over rows. Raises ``ValueError`` for an empty batch or
    a bad ``workers`` or ``chunk_rows`` (:class:`InputError`), a worker's exception as it was
    raised (one that cannot be pickled as a ``RuntimeError`` naming it; a worker's warnings
    are re-issued here), and ``BrokenProcessPool`` when a worker dies (killed, out of memory).
    """
    n = _batch.size(b)
    if n == 0:
        raise ValueError("an empty batch: give at least one configuration")
    if progress is not None and not callable(progress):
        raise InputError([f"run_batch: progress = {progress!r}: give a function of (rows done, rows in all), or None"])
    return _run_chunked(b, _stage_modules(), chunk_rows=chunk_rows, progress=progress, workers=workers)


def _run_chunked(b: Batch, mods, *, chunk_rows: int = DEFAULT_CHUNK_ROWS, progress=None,
                 workers: int | None = None) -> Batch:
    """:func:`run_batch` over the given stage modules (the benchmarks time a subset)."""
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) or chunk_rows < 1:
        # found by review: chunk_rows = -3 left the last rows unwritten (zeros), 0 divided by zero
        raise InputError([f"run_batch: chunk_rows = {chunk_rows!r}: give a whole number of rows >= 1"])
    chunk_rows = int(chunk_rows)
    n = _batch.size(b)
    if n <= chunk_rows:
        if workers is not None:
            resolve_workers(workers, 1)  # a bad value is refused whatever the batch
        out = _run_stages(b, mods)
        if progress is not None:
            progress(n, n)
        return out
    w = resolve_workers(workers, -(-n // chunk_rows), n)
    if progress is not None:  # after a fallback the next pass reports only new ground
        user_progress, mark = progress, [0]

        def progress(done, total):
            if done > mark[0]:
                mark[0] = done
                user_progress(done, total)
    if w > 1 and _FORK_LOCK.acquire(blocking=False):  # else another thread's run holds the workers
        try:
            return _run_parallel(b, mods, chunk_rows, w, progress)
        except _Serial:
            pass  # run serially
        finally:
            _FORK_LOCK.release()
    try:
        return _run_serial(b, mods, chunk_rows, progress)
    except _Serial:
        return _run_concatenated(b, mods, chunk_rows, progress)


def _run_serial(b: Batch, mods, chunk_rows: int, progress) -> Batch:
    """The chunks in this process, each chunk's stage columns written into columns allocated
    once from the first chunk's layout (no list of parts, no concatenation: half the memory
    traffic). Raises ``_Serial`` when a chunk does not fit that layout."""
    n = _batch.size(b)
    first, made = _first_layout(b, mods, chunk_rows)
    arrays = _alloc_columns(made, n)
    for k, v in made.items():
        arrays[k][: v.size] = v
    if progress is not None:
        progress(min(chunk_rows, n), n)
    names = set(first)
    for start in range(chunk_rows, n, chunk_rows):
        piece = _batch.take(b, slice(start, start + chunk_rows))
        why = _put_chunk(_run_stages(piece, mods), piece, start, arrays, names)
        if why is not None:
            raise _Serial(why)
        if progress is not None:
            progress(min(start + chunk_rows, n), n)
    return {k: arrays[k] if k in arrays else b[k] for k in first}


def _run_concatenated(b: Batch, mods, chunk_rows: int, progress) -> Batch:
    """The chunks whose layouts differ: each chunk's stage columns concatenated (numpy's type
    promotion decides a dtype that changes; an input column a stage replaced in some chunks
    only is filled from the batch in the others)."""
    n = _batch.size(b)
    parts, names = [], None
    for start in range(0, n, chunk_rows):
        piece = _batch.take(b, slice(start, start + chunk_rows))
        out = _run_stages(piece, mods)
        if names is None:
            names = list(out)
        parts.append(_stage_columns(out, piece))
        if progress is not None:
            progress(min(start + chunk_rows, n), n)
    edges = range(0, n, chunk_rows)
    return {k: np.concatenate([p[k] if k in p else b[k][a:a + chunk_rows] for p, a in zip(parts, edges)])
            if any(k in p for p in parts) else b[k] for k in names}


class Report(BaseModel):
    """The evaluation of one scenario: the flat result columns of DESIGN §3 plus detail."""

    model_config = ConfigDict(extra="forbid")

    scenario: dict[str, Any]
    # bool | int | float: pydantic's smart union keeps each value's own type (an integer column,
    # mem_worst_stage, a stage index, stays an integer: "stage": 0, not 0.0; session 51)
    results: dict[str, bool | int | float] = Field(description="Every result column, SI units.")
    stages: list[dict[str, int | float]] = Field(
        default_factory=list, description="Memory per pipeline stage (bytes), first to last."
    )
    explain: dict[str, str] = Field(default_factory=dict, description="Formula strings with numbers plugged in.")
    notes: list[str] = Field(default_factory=list, description="Stated simplifications and fallbacks.")

    def __getattr__(self, item):  # r.mfu, r.step_time_s ...
        results = self.__dict__.get("results")
        if results is not None and item in results:
            return results[item]
        raise AttributeError(item)

    def to_series(self) -> pd.Series:
        return pd.Series(self.results)


def _py(v):
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return float(v)
    return v


def evaluate(scenario: Scenario | dict) -> Report:
    """Evaluate one scenario (a batch of one: the same vectorised code as a sweep).

    Parameters
    ----------
    scenario : Scenario or JSON-like dict (validated here, a Scenario object too; bad input
        raises :class:`planner.InputError`, a ``ValueError`` whose one-line messages, one per
        field, are in ``.lines``: ``parallelism.tp: ... (got 3)``).

    Returns
    -------
    Report (pydantic model) with
      * ``results``: dict of every result column (python floats, ints for the integer columns such as ``mem_worst_stage``, bools) — units in the
        names: ``*_bytes`` bytes (GiB = 2**30 B only for display), ``*_s`` seconds, ``*_h``
        hours, ``*_days``, ``*_flop*`` FLOP, ``*_usd`` dollars, ``*_mwh`` MWh, ``*_per_s`` /
        ``*_per_h`` rates; ``goodput`` a fraction in [0, 1]; ``mfu``, ``hfu`` fractions of the
        16-bit peak, not clipped (an FP8 / FP4 run can exceed 1; docs/timing.md),
        ``mfu_precision_peak`` of the GEMM precision's peak; inf only in ``mtbf_h`` without
        failures and in the time / GPU-hours / cost / energy of a run that never finishes
        (goodput 0, or too small for them to be a float); NaN only where a value does not apply
        (the interval, save and stall time of a tier not in use; ``ckpt_interval_s`` without any
        tier);
      * ``stages``: list (one dict per pipeline stage) of that stage's memory parts in bytes;
      * ``explain``: dict column -> the formula with the numbers plugged in;
      * ``notes``: list of the stated simplifications that apply to this scenario;
      * ``scenario``: the validated input as JSON.

    The models and their sources (papers, equations, tables): docs/memory.md (ZeRO, Korthikanti
    et al. 2022 activations), docs/timing.md (α-β collectives, Narayanan et al. 2021 bubbles,
    the fitted constants), docs/reliability.md (Young / Daly intervals, renewal goodput).

    Raises
    ------
    InputError — invalid scenario (field, value and allowed range named).
    """
    s = validate_scenario(scenario)
    b = _batch.from_scenarios([s])
    out = run_batch(b)
    row = _batch.row(out, 0)  # python scalars
    # the cost inputs too (KEY_INPUT_COLUMNS' last five), so the JSON / CSV of one scenario reproduces its cost
    # and energy as evaluate_many's rows do (review 48b: with a catalogue price the $2.155 charged was in a note only)
    results = {k: row[k] for k in row if k not in b or k in ("hbm_bytes",) + _COST_INPUTS}
    # the capacities fits / host_fits compare with, as every other surface has them (review 48g)
    results.update({name: row[col] for name, (col, _) in _batch.CAPACITY_COLUMNS.items() if col in row})
    explain: dict[str, str] = {}
    stages: list[dict[str, int | float]] = []
    notes: list[str] = []
    for mod in _stage_modules():
        if hasattr(mod, "report"):  # explain, per_stage and notes sharing their common work
            e, st, n = mod.report(row)  # st None: the module has no per-stage table
            if st is not None:
                stages = st
            explain.update(e)
            notes.extend(n)
            continue
        if hasattr(mod, "explain"):
            explain.update(mod.explain(row))
        if hasattr(mod, "per_stage"):
            stages = mod.per_stage(out, 0)
        if hasattr(mod, "notes"):
            notes.extend(mod.notes(row))
    return Report(scenario=s.to_json_dict(), results=results, stages=stages, explain=explain, notes=notes)


#: Dotted columns that may hold a catalogue id whose fields a deeper column edits (as ``--set``).
_ID_COLUMNS = {"model": "models", "cluster.system": "systems", "cluster.accelerator": "accelerators",
               "reliability.profile": "failure_profiles"}


def _unflatten(flat: dict[str, Any]) -> dict[str, Any]:
    from . import catalog

    nested: dict[str, Any] = {}
    dotted = dotted_path  # tiers[0] is tiers.0, as --set reads it

    def index(key, where, lst, p):
        if not p.isdigit() or int(p) >= len(lst):
            raise InputError([f"{key}: '{where}' " + (f"needs an index from 0 to {len(lst) - 1}" if lst else
                                                      "is an index into an empty list (give the whole list)")])
        return int(p)

    # shallow columns first: ``model`` before ``model.n_layers`` whatever the table's column order
    for key, value in sorted(flat.items(), key=lambda kv: dotted(kv[0]).count(".")):
        if value is None or (isinstance(value, float) and np.isnan(value)):
            continue
        parts = dotted(key).split(".")
        cur = nested
        for i, p in enumerate(parts[:-1]):
            where = ".".join(parts[: i + 1])
            if isinstance(cur, list):  # an item of a list a shallower column gave (review 47c)
                cur = cur[index(key, where, cur, p)]
                if not isinstance(cur, dict):
                    raise InputError([f"{key}: {where} is {cur!r}, not an object whose fields a column can set"])
                continue
            nxt = cur.get(p)
            if nxt is None and parts[i + 1].isdigit():
                # found by review 47c: "checkpoint.tiers.0.interval_s" was refused as "checkpoint.tiers:
                # must be a list", a field the table never named
                raise InputError([f"{key}: {where} is a list, and a column indexes into it only after a '{where}' "
                                  "column gives the whole list (JSON, e.g. '[{\"tier\": \"pfs\", \"interval_s\": "
                                  "3600}]'); give that column"])
            if isinstance(nxt, str) and where in _ID_COLUMNS:  # a catalogue id: its object, then the edit
                table = getattr(catalog, _ID_COLUMNS[where])()
                if nxt not in table:
                    raise InputError([f"{key}: {where} = {nxt!r} is not a catalogue id whose fields a column can "
                                      f"set; allowed: {', '.join(sorted(table))}"])
                mid, nxt = nxt, table[nxt].model_dump(mode="json", by_alias=True)
                if where == "model":  # an edited catalogue model is no longer the published one (as --set)
                    for k in ("source", "published_params_total", "published_params_active"):
                        nxt.pop(k, None)
                    nxt["name"] = f"custom ({mid})"
                cur[p] = nxt
            elif nxt is None:
                nxt = cur[p] = {}
            elif not isinstance(nxt, (dict, list)):
                raise InputError([f"{key}: {where} is {nxt!r}, not an object whose fields a column can set"])
            cur = nxt
        if isinstance(value, str) and value[:1] in "[{":
            try:
                value = json.loads(value)
            except (json.JSONDecodeError, RecursionError):
                pass  # left as the text: validation names the field
        # a copy: a deeper column edits it, never the caller's own list or dict cell (review 47e)
        value = copy.deepcopy(_py(value))
        if isinstance(cur, list):
            cur[index(key, dotted(key), cur, parts[-1])] = value
        else:
            cur[parts[-1]] = value
    return nested


def to_batch(items: Sequence[Scenario | dict] | pd.DataFrame) -> tuple[Batch, list[str]]:
    """Scenarios, JSON dicts or a DataFrame of dotted scenario fields (``parallelism.tp``) ->
    (batch, names); a DataFrame of batch columns is refused (it would bypass validation).

    In a DataFrame of dotted fields an empty (NaN / None) cell means "not given": the
    schema's default applies (e.g. ``parallelism.dp`` derived). Raises ``ValueError`` naming
    the row and the fields of the first invalid row."""
    if isinstance(items, pd.DataFrame):
        if {"n_layers", "tp", "n_gpus"} <= set(items.columns):
            # found by review: a table of batch columns ran unvalidated (tp = 0 gave NaN, n_gpus = 0 inf)
            raise InputError(["evaluate_many: this table has the engine's batch columns (n_layers, tp, n_gpus, …), "
                              "which no schema checks; give dotted scenario fields (parallelism.tp, cluster.n_gpus, "
                              "…) or scenarios (planner.engine.run_batch runs a batch as it is, unchecked)"])
        dup = sorted({str(c) for c in items.columns[items.columns.duplicated()]})
        if dup:  # review 46b: two parallelism.tp columns, the last silently won
            raise InputError([f"evaluate_many: column {', '.join(map(repr, dup))} given more than once: give each "
                              "scenario field in one column"])
        spelled: dict[str, str] = {}
        for c in map(str, items.columns):  # review 47e: tiers.0.x and tiers[0].x are one field
            d = dotted_path(c)
            if d in spelled:
                raise InputError([f"evaluate_many: columns {spelled[d]!r} and {c!r} are the same field ({d}): "
                                  "give it in one column"])
            spelled[d] = c
        scenarios = []
        for i, r in enumerate(items.to_dict("records")):
            try:
                flat = _unflatten(r)
            except InputError as e:  # the row, as a row that fails validation names it
                raise InputError([f"row {i}: {line}" for line in e.lines]) from None
            scenarios.append(_validate_row(i, flat))
    else:
        scenarios = [_validate_row(i, s.model_dump(by_alias=True) if isinstance(s, Scenario) else s)
                     for i, s in enumerate(items)]
    return _batch.from_scenarios(scenarios), [s.name for s in scenarios]


def _validate_row(i: int, data) -> Scenario:
    """Validate row ``i``; a bad row raises :class:`InputError` (a ``ValueError``) naming the
    row and the fields, one line each in ``.lines``."""
    try:
        return Scenario.model_validate(data)
    except ValidationError as e:
        raise InputError([f"row {i}: {line}" for line in format_errors(e)]) from None
    except ValueError as e:  # a model id or a value pydantic did not wrap
        raise InputError([f"row {i}: {e}"]) from None


def evaluate_many(items: Iterable[Scenario | dict] | pd.DataFrame, *, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Evaluate many scenarios in one vectorised pass; one row each.

    Parameters
    ----------
    items : iterable of :class:`Scenario` / JSON-like dicts (mixed is fine), or a
        ``pandas.DataFrame`` of dotted scenario fields (``parallelism.tp``; an empty cell = the
        schema's default; ``checkpoint.tiers.0.interval_s`` or ``checkpoint.tiers[0].interval_s``
        edits an item of the list a ``checkpoint.tiers`` column gives, as ``--set`` does, except that a
        catalogue id inside the list is not expanded: give the item's object there). Every row is validated (Scenario objects too); a table of the
        engine's batch columns is refused (:func:`run_batch` takes one unchecked).
    columns : sequence of str, optional — the result columns to return (default: ``name``,
        the key inputs ``KEY_INPUT_COLUMNS`` and every result column: ``RESULT_COLUMNS`` and
        the detail columns each stage adds).

    Returns
    -------
    pandas.DataFrame, one row per item in order (N rows). Units are in the column names:
    ``*_bytes`` bytes, ``*_s`` seconds, ``*_h`` hours, ``*_flop*`` FLOP, ``*_usd`` dollars,
    ``*_mwh`` MWh; ``mfu`` / ``hfu`` / ``goodput`` fractions. Formulas and their sources:
    docs/memory.md, docs/timing.md, docs/reliability.md.

    Raises
    ------
    InputError (a ``ValueError``) — not a list, an empty list, a table of batch columns, a row that fails validation
    (``row i: field: message``, one line each in ``.lines``), or an unknown name in ``columns``.
    """
    if isinstance(items, (Scenario, dict, str, bytes)) or items is None or not hasattr(items, "__iter__"):
        raise InputError([f"evaluate_many: give a list of scenarios (got {type(items).__name__}); "
                          "for a single scenario use planner.evaluate"])
    if not isinstance(items, pd.DataFrame):
        items = list(items)
    if len(items) == 0:
        raise InputError(["evaluate_many: no scenarios (an empty list or table): give at least one"])
    if columns is not None and not isinstance(columns, str):
        cols = list(columns) if isinstance(columns, Iterable) else None
        if cols is None or not all(isinstance(c, str) for c in cols):  # review 46b: columns=5 was a TypeError
            raise InputError([f"evaluate_many: columns = {columns!r:.80}: give a column name or a list of them, "
                              "or None"])
        columns = cols
    b, names = to_batch(items)
    out = run_batch(b)
    for name, (col, _) in _batch.CAPACITY_COLUMNS.items():  # fits / host_fits' capacities (review 48g)
        if col in out and name != col:
            out[name] = out[col]
    if "etp" not in out and "tp" in out:
        # the batch leaves etp out where every row runs its experts at TP (batch.from_rows); the
        # table has it whatever the other rows are: each such row's TP (review 16i; review 38: a
        # batch without an etp ≠ tp row had no etp column at all)
        out["etp"] = out["tp"]
    if columns is not None:
        if isinstance(columns, str):
            columns = [columns]
        # the table always starts with ``name``: asked for by name, it is that column (review 38b:
        # columns=["name", "tp"] was "unknown 'name'")
        columns = [c for c in columns if c != "name"]
        unknown = [c for c in columns if c not in out]
        if unknown:
            raise InputError([f"evaluate_many: columns: unknown {', '.join(map(repr, unknown))}; allowed: any of "
                              f"{len(out)} columns, e.g. " + ", ".join(c for c in RESULT_COLUMNS[:8] if c in out)])
    return results_frame(out, names=names, columns=columns, inputs=b)


def results_frame(out: Batch, *, names=None, columns=None, inputs: Batch | None = None) -> pd.DataFrame:
    """The result columns of a run as a DataFrame (inputs named in KEY_INPUT_COLUMNS kept)."""
    if columns is None:
        keep = [c for c in KEY_INPUT_COLUMNS if c in out]
        keep += [c for c in RESULT_COLUMNS if c in out and c not in keep]
        input_keys = set(inputs) if inputs is not None else set()
        keep += [c for c in out if c not in keep and c not in input_keys]
        keep += [c for c in _batch.CAPACITY_COLUMNS if c in out and c not in keep]
    else:
        keep = list(columns)
    df = pd.DataFrame({c: out[c] for c in keep})
    # the batch's integer codes as the names the scenario, the sweep and the CLI use (review 48g:
    # evaluate_many gave recompute 1, schedule 1, so t[t.recompute == "selective"] matched nothing)
    for c, labels in (("recompute", _batch.RECOMPUTE), ("schedule", _batch.SCHEDULES),
                      ("offload_optimizer", _batch.OFFLOAD)):
        if c in df and df[c].dtype.kind in "iu":
            df[c] = np.asarray(labels, dtype=object)[df[c].to_numpy()]
    if names is not None:
        df.insert(0, "name", list(names))
    return df
