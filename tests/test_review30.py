"""Session 30 fixes: each test gives its expected figure from a hand calculation or the catalogue's
cited value, not from the code's output."""
from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

import pandas as pd

from planner.cli import main

#: DGX H100 host memory, 2 TiB per node (hardware/systems.json, NVIDIA DGX H100 user guide).
DGX_H100_HOST_BYTES = 2 * 2**40
#: Llama 3 8B parameter count (presets/models.json; Meta's 8.03 B).
LLAMA3_8B_PARAMS = 8_030_261_248


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def test_sweep_csv_carries_the_host_memory_need_and_capacity_host_fits_compares():
    # Before: the sweep's CSV / JSON had host_fits but neither side of its comparison (the evaluate
    # export and the pages' CSVs had both since session 29), so a script could not recompute it.
    rc, out, err = _cli("sweep", "--preset", "llama3-8b-h100-64", "--offload", "cpu", "--top", "50",
                        "--format", "csv")
    assert rc == 0, err
    df = pd.read_csv(io.StringIO(out))
    for col in ("host_mem_per_node_bytes", "ckpt_host_mem_per_node_bytes", "host_mem_capacity_per_node_bytes"):
        assert col in df.columns, col
    assert (df["host_mem_capacity_per_node_bytes"] == DGX_H100_HOST_BYTES).all()
    assert (df["host_fits"] == (df["host_mem_per_node_bytes"] <= df["host_mem_capacity_per_node_bytes"])).all()
    fits_ckpt = (df["host_mem_per_node_bytes"] + df["ckpt_host_mem_per_node_bytes"]
                 <= df["host_mem_capacity_per_node_bytes"])
    assert (df["host_fits_ckpt"] == fits_ckpt).all()
    # CPU optimizer offload without master weights or gradients (the defaults): Adam's two fp32
    # moments, 8 B per parameter, sharded over dp·cp; 8 GPUs per node (docs/memory.md).
    off = df[(df["offload_optimizer"] == "cpu") & (df["pp"] == 1) & (df["tp"] == 1)]
    assert len(off) > 0
    shard = off["dp"] * off["cp"]
    expect = 8 * 8.0 * LLAMA3_8B_PARAMS / shard
    assert ((off["host_mem_per_node_bytes"] - expect).abs() <= 1e-9 * expect).all(), (
        off[["dp", "cp", "host_mem_per_node_bytes"]], expect)


def test_sweep_without_offload_needs_no_host_memory():
    rc, out, err = _cli("sweep", "--preset", "llama3-8b-h100-64", "--offload", "none", "--top", "5",
                        "--format", "csv")
    assert rc == 0, err
    df = pd.read_csv(io.StringIO(out))
    assert (df["host_mem_per_node_bytes"] == 0).all()
    assert df["host_fits"].all()
