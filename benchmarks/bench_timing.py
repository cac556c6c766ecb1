"""Throughput of stages 1-3 (model_stats + memory + timing) and the latency of one evaluate.

Targets (issue): >= 1 million configurations per second for model stats + memory (when
planner/memory.py exists) + step time; one scenario through ``planner.evaluate`` in <= 5 ms.
Printed: one pass, the engine's chunks in this one process, and ``run_batch``'s own path
over forked worker processes (every usable CPU; ``CLUSTERPLAN_WORKERS`` sets the count).

    .venv/bin/python benchmarks/bench_timing.py [--rows 1000000] [--repeat 3]

The batch is ``np.repeat`` of the scenario presets with tp, pp, dp, cp, micro-batch,
recompute, schedule, ZeRO stage and offload perturbed at random (values need not be valid
splits: the engine is pure arithmetic); the n_gpus column is made consistent.
"""

from __future__ import annotations

import argparse
from pathlib import Path
import resource
import sys
import importlib.util
import time

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _batches import random_split_batch  # noqa: E402

import planner
from planner import batch, list_presets, load_preset, model_stats, timing

HAS_MEMORY = importlib.util.find_spec("planner.memory") is not None
if HAS_MEMORY:
    from planner import memory


def build(n_rows: int, seed: int = 0) -> batch.Batch:
    return random_split_batch(n_rows, seed)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    b = build(args.rows)
    best = {"model_stats": np.inf, "memory": np.inf, "timing": np.inf, "total": np.inf}
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        out = dict(b)
        out.update(model_stats.stats(out))
        t1 = time.perf_counter()
        if HAS_MEMORY:
            out.update(memory.stage(out))
        t2 = time.perf_counter()
        res = timing.stage(out)
        t3 = time.perf_counter()
        best["model_stats"] = min(best["model_stats"], t1 - t0)
        best["memory"] = min(best["memory"], t2 - t1)
        best["timing"] = min(best["timing"], t3 - t2)
        best["total"] = min(best["total"], t3 - t0)
    assert np.isfinite(res["step_time_s"]).mean() > 0.99
    n = args.rows
    print(f"rows {n:,}  (memory stage {'included' if HAS_MEMORY else 'absent'})")
    for k, v in best.items():
        print(f"  {k:12s} {v * 1e3:8.1f} ms  -> {n / v / 1e6:6.2f} M configurations/s")
    # The same three stages over the engine's chunks (engine.DEFAULT_CHUNK_ROWS; rows are
    # independent, DESIGN §2): how run_batch and a sweep run them; arrays stay in cache.
    from planner import engine as _engine
    chunk = _engine.DEFAULT_CHUNK_ROWS
    best_chunked = np.inf
    per = {"model_stats": np.inf, "memory": np.inf, "timing": np.inf}
    chunks = [{k: v[i:i + chunk] for k, v in b.items()} for i in range(0, n, chunk)]
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(args.repeat):
        acc = dict.fromkeys(per, 0.0)
        t0 = time.perf_counter()
        for c in chunks:
            out = dict(c)
            ta = time.perf_counter()
            out.update(model_stats.stats(out))
            tb = time.perf_counter()
            if HAS_MEMORY:
                out.update(memory.stage(out))
            tc = time.perf_counter()
            timing.stage(out)
            td = time.perf_counter()
            acc["model_stats"] += tb - ta
            acc["memory"] += tc - tb
            acc["timing"] += td - tc
        best_chunked = min(best_chunked, time.perf_counter() - t0)
        per = {k: min(per[k], acc[k]) for k in per}
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    print(f"  {'chunked':12s} {best_chunked * 1e3:8.1f} ms  -> {n / best_chunked / 1e6:6.2f} M configurations/s "
          f"(all three stages, {chunk:,}-row chunks)")
    # glibc's allocator: with planner/_malloc.py's thresholds the chunks' temporaries stay on the
    # heap. Without them (CLUSTERPLAN_MALLOC=default) the one-pass run above happens to raise
    # glibc's dynamic threshold first, so this loop is fast here too; in a fresh process that
    # runs only chunks (a sweep, the app) it took 1.1 million faults and 1.5 s of system time
    # per 4 runs (planner/_malloc.py)
    print(f"    over the {args.repeat} chunked runs: {ru1.ru_minflt - ru0.ru_minflt:,} minor page faults, "
          f"system time {ru1.ru_stime - ru0.ru_stime:.2f} s, user {ru1.ru_utime - ru0.ru_utime:.2f} s "
          f"(allocator thresholds {'set' if planner._malloc._applied else 'NOT set'}: planner/_malloc.py)")
    for k, v in per.items():
        print(f"    {k:10s} {v * 1e3:8.1f} ms  -> {n / v / 1e6:6.2f} M configurations/s (chunked)")
    # The library's own path: engine.run_batch's chunks over forked worker processes (every
    # usable CPU; engine.resolve_workers), each stage's columns written into shared memory and
    # every column returned, as a caller gets them (planner.engine._run_chunked is run_batch
    # over the given stage modules).
    mods = [model_stats] + ([memory] if HAS_MEMORY else []) + [timing]
    workers = _engine.resolve_workers(None, len(chunks), n)
    best_ser = best_par = np.inf
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        res_ser = _engine._run_chunked(b, mods, workers=1)
        t1 = time.perf_counter()
        res_par = _engine._run_chunked(b, mods, workers=None)
        t2 = time.perf_counter()
        best_ser, best_par = min(best_ser, t1 - t0), min(best_par, t2 - t1)
    assert np.array_equal(res_ser["step_time_s"], res_par["step_time_s"], equal_nan=True)
    assert np.isfinite(res_par["step_time_s"]).mean() > 0.99
    del res_ser
    print(f"  {'run_batch':12s} {best_ser * 1e3:8.1f} ms  -> {n / best_ser / 1e6:6.2f} M configurations/s "
          f"(all three stages, 1 process, every column returned)")
    print(f"  {'run_batch':12s} {best_par * 1e3:8.1f} ms  -> {n / best_par / 1e6:6.2f} M configurations/s "
          f"(all three stages, {workers} process{'es' if workers > 1 else ''}, every column returned)")
    one = n / min(best["total"], best_chunked)
    rate = max(one, n / best_par)
    how = f"run_batch on {workers} processes" if n / best_par > one else "one process"
    target = "OK" if rate >= 1e6 else "BELOW TARGET"
    print(f"model stats + memory + timing: {rate / 1e6:.2f} M configurations/s ({how}; one process "
          f"{one / 1e6:.2f}) (target >= 1.0): {target}")

    s = load_preset("default")
    planner.evaluate(s)  # warm caches
    lat = []
    for _ in range(50):
        t0 = time.perf_counter()
        planner.evaluate(s)
        lat.append(time.perf_counter() - t0)
    med = float(np.median(lat))
    from planner import batch as _b, engine
    out1 = engine.run_batch(_b.from_scenarios([s]))
    row = {k: engine._py(v[0]) for k, v in out1.items()}
    for name, fn in (("timing.stage (1 row)", lambda: timing.stage(out1)), ("timing.explain", lambda: timing.explain(row))):
        ts = []
        for _ in range(50):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        print(f"  {name}: median {np.median(ts) * 1e3:.2f} ms")
    print(f"planner.evaluate(default): median {med * 1e3:.2f} ms, min {min(lat) * 1e3:.2f} ms over 50 "
          f"(target <= 5 ms): {'OK' if med <= 5e-3 else 'ABOVE TARGET'}")


if __name__ == "__main__":
    main()
