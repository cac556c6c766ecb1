"""Throughput of stage 1 + 2 (model_stats.stats + memory.stage) on a large batch.

Target (issue): >= 2 million configurations per second on the 2-core dev machine.

    .venv/bin/python benchmarks/bench_memory.py [--rows 1000000] [--repeat 5]

Builds the batch by ``np.repeat`` of the scenario presets and perturbs tp, pp, dp,
micro-batch, recompute, schedule and ZeRO stage at random (values need not be valid
splits: the engine is pure arithmetic), then times the two stages together and alone.
"""

from __future__ import annotations

import argparse
from pathlib import Path
import sys
import time

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _batches import random_split_batch  # noqa: E402

from planner import batch, load_preset, list_presets, memory, model_stats


def build(n_rows: int, seed: int = 0) -> batch.Batch:
    return random_split_batch(n_rows, seed)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--chunk", type=int, default=16384)
    args = ap.parse_args()
    b = build(args.rows)
    n = batch.size(b)
    # warm-up
    ms = model_stats.stats(b)
    memory.stage({**b, **ms})

    def best(fn):
        ts = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        return min(ts)

    t_both = best(lambda: memory.stage({**b, **model_stats.stats(b)}))
    full = {**b, **ms}
    t_mem = best(lambda: memory.stage(full))
    t_ms = best(lambda: model_stats.stats(b))
    chunk = args.chunk

    def chunked():
        # the same stages over blocks of rows that stay in cache (DESIGN §2: rows are
        # independent, so a batch may be cut into chunks)
        outs = []
        for s in range(0, n, chunk):
            c = {k: v[s:s + chunk] for k, v in b.items()}
            c.update(model_stats.stats(c))
            outs.append(memory.stage(c))
        return {k: np.concatenate([o[k] for o in outs]) for k in outs[0]}

    t_chunk = best(chunked)
    print(f"rows: {n:,}")
    print(f"stats + memory in chunks of {chunk:,}: {t_chunk * 1e3:8.1f} ms  -> {n / t_chunk / 1e6:6.2f} M configs/s")
    print(f"model_stats.stats + memory.stage: {t_both * 1e3:8.1f} ms  -> {n / t_both / 1e6:6.2f} M configs/s")
    print(f"memory.stage alone:              {t_mem * 1e3:8.1f} ms  -> {n / t_mem / 1e6:6.2f} M configs/s")
    print(f"model_stats.stats alone:         {t_ms * 1e3:8.1f} ms  -> {n / t_ms / 1e6:6.2f} M configs/s")
    print("target: >= 2.00 M configs/s (stats + memory)")


if __name__ == "__main__":
    main()
