"""Sweep speed: enumeration rate, per-stage engine rate, end-to-end configurations per second,
the full Llama 3 405B / 16,384 H100 sweep latency, and peak memory.

Targets (issue): >= 1 million configurations per second end to end; the full sweep for 405B
on 16,384 H100 in < 1 s; peak memory stated.

    .venv/bin/python benchmarks/bench_sweep.py [--preset llama3-405b-h100-16k] [--repeat 2]
        [--chunk-size 250000] [--big]

``--big`` also enumerates (without evaluating) a multi-system, multi-size space to show the
enumeration rate at scale. Figures are wall-clock on the machine it runs on (print includes
the CPU count); the machine is shared, so take the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import importlib
import os
import resource
import time
import tracemalloc

import numpy as np

import planner
from planner import engine

sw = importlib.import_module("planner.sweep")


def _best(fn, repeat):
    best = np.inf
    res = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = fn()
        best = min(best, time.perf_counter() - t0)
    return best, res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="llama3-405b-h100-16k")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--chunk-size", type=int, default=250_000)
    ap.add_argument("--big", action="store_true")
    args = ap.parse_args()
    s = planner.load_preset(args.preset)
    print(f"preset {args.preset}: {s.cluster.n_gpus} x {s.cluster.system}, cpus={os.cpu_count()}")

    # 1. Enumeration only (build the space + materialise every row's batch columns).
    def enum():
        space = sw.build_space(s)
        b, reason, g = space.rows(0, space.n_rows)
        return space
    t_enum, space = _best(enum, args.repeat)
    n = space.n_rows
    print(f"enumeration: {n:,} rows in {t_enum * 1e3:.1f} ms = {n / t_enum / 1e6:.2f} M rows/s "
          f"({space.n_struct:,} structural x {space.n_inner} inner)")

    # 2. Engine, stage by stage, over the whole space as one batch.
    b, reason, g = space.rows(0, n)
    out = dict(b)
    tot = 0.0
    for mod in engine._stage_modules():
        t0 = time.perf_counter()
        out.update(mod.stage(out))
        dt = time.perf_counter() - t0
        tot += dt
        print(f"  stage {mod.__name__:22s} {dt * 1e3:9.1f} ms  {n / dt / 1e6:8.3f} M rows/s")
    print(f"  engine total             {tot * 1e3:9.1f} ms  {n / tot / 1e6:8.3f} M rows/s")

    # 3. End to end: planner.sweep (enumerate, evaluate, reasons, rank, Pareto, table).
    t_sweep, df = _best(lambda: sw.sweep(s, chunk_size=args.chunk_size), args.repeat)
    print(f"sweep end to end: {n:,} configurations in {t_sweep:.3f} s = "
          f"{n / t_sweep / 1e6:.3f} M configurations/s; {df.attrs['n_feasible']:,} feasible "
          f"(target >= 1 M/s; 405B full sweep < 1 s)")
    t_top, _ = _best(lambda: sw.sweep(s, top=20, chunk_size=args.chunk_size), args.repeat)
    print(f"sweep top=20: {t_top:.3f} s = {n / t_top / 1e6:.3f} M configurations/s")
    multi = dict(gpus=[8192, 16384, 24576, 32768], systems=["dgx-h100", "dgx-h200"])
    n_multi = sw.count_splits(s, **multi)
    t_multi, dfm = _best(lambda: sw.sweep(s, chunk_size=args.chunk_size, **multi), args.repeat)
    print(f"sweep end to end, 4 sizes x 2 systems: {n_multi:,} configurations in {t_multi:.3f} s = "
          f"{n_multi / t_multi / 1e6:.3f} M configurations/s; {dfm.attrs['n_feasible']:,} feasible")
    # The same space with top=20 (the CLI's default): with top the sweep runs its chunks on
    # forked worker processes (every usable CPU; engine.resolve_workers), each returning its
    # candidates and its feasible rows' Pareto inputs; CLUSTERPLAN_WORKERS=1 gives one process.
    w_multi = engine.resolve_workers(None, -(-n_multi // min(args.chunk_size, engine.DEFAULT_CHUNK_ROWS)), n_multi)
    t_mtop, _ = _best(lambda: sw.sweep(s, top=20, chunk_size=args.chunk_size, **multi), args.repeat)
    print(f"sweep top=20, 4 sizes x 2 systems: {t_mtop:.3f} s = {n_multi / t_mtop / 1e6:.3f} M configurations/s "
          f"({w_multi} process{'es' if w_multi > 1 else ''})")
    best = df.iloc[0]
    print("best split (time_to_train):", {k: best[k] for k in (
        "tp", "pp", "dp", "cp", "vpp", "micro_batch_size", "zero_stage", "recompute", "schedule",
        "offload_optimizer")},
        {k: float(best[k]) for k in ("step_time_s", "mfu", "time_to_train_days") if k in df.columns})

    # 3b. The same with the reliability stage left out (monkeypatched here only), to show the
    # rate of everything else (enumeration + the other stages + reasons, ranking, Pareto).
    real = engine._stage_modules
    engine._stage_modules = lambda: [m for m in real() if m.__name__ != "planner.reliability"]
    try:
        t_norel, _ = _best(lambda: sw.sweep(s, chunk_size=args.chunk_size), args.repeat)
        big_s = dict(gpus=[8192, 16384, 24576, 32768], systems=["dgx-h100", "dgx-h200"])
        n_big = sw.count_splits(s, **big_s)
        t_big, _ = _best(lambda: sw.sweep(s, top=100, chunk_size=args.chunk_size, **big_s), 1)
    finally:
        engine._stage_modules = real
    print(f"sweep WITHOUT reliability stage: {n:,} in {t_norel:.3f} s = {n / t_norel / 1e6:.3f} M/s; "
          f"{n_big:,} rows (4 sizes x 2 systems) in {t_big:.3f} s = {n_big / t_big / 1e6:.3f} M/s")

    # 4. Peak memory: Python-heap peak (tracemalloc traces numpy buffers) and process max RSS.
    tracemalloc.start()
    sw.sweep(s, chunk_size=args.chunk_size)
    _, peak_full = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    tracemalloc.start()
    sw.sweep(s, top=20, chunk_size=args.chunk_size)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"peak traced memory of one full-table sweep: {peak_full / 2**20:.1f} MiB")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    print(f"peak traced memory of one sweep(top=20): {peak / 2**20:.1f} MiB; "
          f"process max RSS: {rss / 2**20:.1f} MiB")

    if args.big:
        big = dict(gpus=[4096, 8192, 16384, 24576, 32768],
                   systems=["dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72"])
        t0 = time.perf_counter()
        nb = sw.count_splits(s, **big)
        dt = time.perf_counter() - t0
        print(f"big space ({len(big['gpus'])} sizes x {len(big['systems'])} systems): {nb:,} valid rows "
              f"counted in {dt * 1e3:.1f} ms")
        space = sw.build_space(s, **big)
        t0 = time.perf_counter()
        for a in range(0, space.n_rows, args.chunk_size):
            space.rows(a, min(a + args.chunk_size, space.n_rows))
        dt = time.perf_counter() - t0
        print(f"  chunked enumeration of {space.n_rows:,} rows: {space.n_rows / dt / 1e6:.2f} M rows/s")


if __name__ == "__main__":
    main()
