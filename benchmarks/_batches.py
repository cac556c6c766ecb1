"""Shared benchmark input: a large batch built by repeating the scenario presets and
perturbing the split at random (values need not be valid splits: the engine is pure
arithmetic, and a benchmark measures throughput, not results)."""

from __future__ import annotations

import numpy as np

from planner import batch, list_presets, load_preset


def random_split_batch(n_rows: int, seed: int = 0) -> batch.Batch:
    """``n_rows`` rows: every preset repeated, with tp, pp, dp, cp, micro-batch, recompute,
    ZeRO stage, schedule, vpp, offload and TP-comm overlap drawn at random."""
    small = batch.from_scenarios([load_preset(k) for k in list_presets()])
    reps = -(-n_rows // batch.size(small))
    b = {k: np.repeat(v, reps)[:n_rows] for k, v in small.items()}
    rng = np.random.default_rng(seed)
    b["tp"] = rng.choice([1, 2, 4, 8], n_rows)
    b["pp"] = rng.choice([1, 2, 4, 8, 16], n_rows)
    b["dp"] = rng.choice([1, 8, 32, 128], n_rows)
    b["cp"] = rng.choice([1, 1, 2], n_rows)
    b["micro_batch_size"] = rng.choice([1, 2, 4], n_rows)
    b["recompute"] = rng.integers(0, 3, n_rows)
    b["zero_stage"] = rng.integers(0, 4, n_rows)
    b["schedule"] = rng.integers(0, 4, n_rows)
    b["vpp"] = np.where(b["schedule"] == 1, rng.choice([1, 2, 4], n_rows), 1)
    b["offload_optimizer"] = rng.choice([0, 0, 0, 1, 2], n_rows)
    b["tp_comm_overlap"] = rng.random(n_rows) < 0.5
    b["dp_comm_overlap"] = rng.random(n_rows) < 0.8
    b["fp8_rowwise"] = rng.random(n_rows) < 0.2
    b["n_gpus"] = b["tp"] * b["pp"] * b["dp"] * b["cp"]
    return b
