"""Throughput of pipeline stages 4 (reliability) and 5 (cost).

Target (issue): the sweep runs the whole pipeline at >= 1 million configurations per second,
so stage 4 needs >= 3 million rows/s on the 2-core reference machine for rows with two free
checkpoint tiers (host memory + PFS, intervals NaN = optimise).

    .venv/bin/python benchmarks/bench_reliability.py [--rows 1000000] [--repeat 3] [--grid 2000]

The batch: the ``llama3-405b-h100-16k`` preset through stages 1-3 (``planner.engine``), repeated,
with small perturbations: ``n_gpus`` (and ``n_nodes``) by a random multiple of 8 GPUs within
±10%, ``step_time_s`` (and ``tokens_per_s``) by ±10%. Prints the best of ``--repeat`` runs, and
the speed of the grid-search reference (:func:`planner.reliability.stage_grid`) on ``--grid``
rows with the largest goodput difference between the two. Then stage 4 on the rows of the
same preset's sweep (:func:`planner.sweep.build_space`, stages 1-3 run first), in the sweep's
chunks of ``engine.DEFAULT_CHUNK_ROWS``: the batches the sweep target is about.
"""

from __future__ import annotations

import argparse
import importlib
import time

import numpy as np

import planner
from planner import batch, cost, engine, reliability


def build(n_rows: int, seed: int = 0) -> batch.Batch:
    one = engine.run_batch(batch.from_scenarios([planner.load_preset("llama3-405b-h100-16k")]))
    keep = {k: v for k, v in one.items() if k not in reliability._STAGE_COLUMNS
            and k not in ("host_fits_ckpt",) and k not in cost.stage(one)}
    b = {k: np.repeat(v, n_rows) for k, v in keep.items()}
    rng = np.random.default_rng(seed)
    gpn = int(one["gpus_per_node"][0])
    n0 = int(one["n_gpus"][0])
    b["n_gpus"] = n0 + gpn * rng.integers(-n0 // (10 * gpn), n0 // (10 * gpn) + 1, n_rows)
    b["n_nodes"] = b["n_gpus"] // gpn
    f = rng.uniform(0.9, 1.1, n_rows)
    b["step_time_s"] = one["step_time_s"][0] * f
    b["tokens_per_s"] = one["tokens_per_s"][0] / f
    return b


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--grid", type=int, default=2000)
    args = ap.parse_args()
    b = build(args.rows)
    best = {"reliability": np.inf, "cost": np.inf}
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        r = reliability.stage(b)
        t1 = time.perf_counter()
        b2 = dict(b)
        b2.update(r)
        cost.stage(b2)
        t2 = time.perf_counter()
        best["reliability"] = min(best["reliability"], t1 - t0)
        best["cost"] = min(best["cost"], t2 - t1)
    n = args.rows
    tot = best["reliability"] + best["cost"]
    print(f"rows: {n:,} (llama3-405b-h100-16k, host_memory + pfs free, n_gpus/step time perturbed)")
    print(f"reliability.stage: {best['reliability']:.3f} s  {n / best['reliability'] / 1e6:.2f} M rows/s")
    print(f"cost.stage:        {best['cost']:.3f} s  {n / best['cost'] / 1e6:.2f} M rows/s")
    print(f"stage 4 + 5:       {tot:.3f} s  {n / tot / 1e6:.2f} M rows/s")
    # The sweep's rows, in the sweep's chunks.
    sw = importlib.import_module("planner.sweep")
    space = sw.build_space(planner.load_preset("llama3-405b-h100-16k"))
    chunks = []
    for a in range(0, space.n_rows, engine.DEFAULT_CHUNK_ROWS):
        c, reason, _ = space.rows(a, min(a + engine.DEFAULT_CHUNK_ROWS, space.n_rows))
        if not (reason == 0).all():
            c = {k: np.asarray(v)[reason == 0] for k, v in c.items()}
        for mod in engine._stage_modules():
            if mod.__name__ in ("planner.reliability", "planner.cost"):
                continue
            c.update(mod.stage(c))
        chunks.append(c)
    n_sw = sum(len(c["tp"]) for c in chunks)
    t_sw = np.inf
    for _ in range(max(args.repeat, 5)):
        t0 = time.perf_counter()
        for c in chunks:
            reliability.stage(c)
        t_sw = min(t_sw, time.perf_counter() - t0)
    print(f"reliability.stage on the 405B sweep rows ({n_sw:,} in chunks of {engine.DEFAULT_CHUNK_ROWS:,}): "
          f"{t_sw * 1e3:.1f} ms  {n_sw / t_sw / 1e6:.2f} M rows/s")
    if args.grid:
        sub = {k: v[: args.grid] for k, v in b.items()}
        t0 = time.perf_counter()
        g = reliability.stage_grid(sub)
        t1 = time.perf_counter()
        d = r["goodput"][: args.grid] - g["goodput"]
        print(f"grid reference on {args.grid:,} rows: {t1 - t0:.2f} s ({args.grid / (t1 - t0):,.0f} rows/s); "
              f"renewal goodput fast - grid: min {d.min():.2e}, max {d.max():.2e}")


if __name__ == "__main__":
    main()
