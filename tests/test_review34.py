"""Session 34 fixes from the session-33 fresh-user check: the CLI sweep table's MFU of the GEMM
precision's own peak and its ``reason`` column. Expected figures are hand calculations from the
catalogue's cited peaks (hardware/accelerators.json h100-sxm-80gb: BF16 989.4e12, FP8 1978.9e12
FLOP/s dense, NVIDIA H100 datasheet), never the code's output."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import planner
from planner import cli
from planner.sweep import sweep

ROOT = Path(__file__).resolve().parent.parent
BF16_H100, FP8_H100 = 989.4e12, 1978.9e12
H100 = "h100-sxm-80gb"  # the accelerator of the dgx-h100 system the preset runs on


def test_h100_peaks_the_hand_counts_use():
    acc = json.loads((ROOT / "hardware" / "accelerators.json").read_text())
    peaks = acc[H100]["peak_flop_per_s"]
    assert peaks["bf16"] == BF16_H100 and peaks["fp8"] == FP8_H100


@pytest.fixture(scope="module")
def fp8_top():
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["training"]["precision"] = "fp8"
    return sweep(d, top=3)


def test_sweep_keeps_mfu_of_the_precision_peak(fp8_top):
    # the same achieved FLOP/s over the FP8 peak: mfu × 989.4 / 1978.9 (hand ratio 0.49997)
    assert "mfu_precision_peak" in fp8_top
    want = fp8_top["mfu"].to_numpy() * BF16_H100 / FP8_H100
    assert np.allclose(fp8_top["mfu_precision_peak"].to_numpy(), want, rtol=1e-9)


def test_sweep_table_shows_fp8_mfu_beside_the_16bit_one(fp8_top):
    t = cli.sweep_table(fp8_top)
    cols = list(t.columns)
    assert cols.index("mfu_prec_pct") == cols.index("mfu_pct") + 1
    assert np.allclose(t["mfu_prec_pct"], 100.0 * fp8_top["mfu"] * BF16_H100 / FP8_H100, rtol=1e-9)
    # every row fits: no empty reason column
    assert (fp8_top["infeasible_reason"] == "").all()
    assert "reason" not in t


def test_sweep_table_16bit_run_has_no_second_mfu_and_keeps_a_reason_that_is_there():
    df = pd.DataFrame({"mfu": [0.41, 0.39], "mfu_precision_peak": [0.41, 0.39],
                       "infeasible_reason": ["", "OOM on stage 0"]})
    t = cli.sweep_table(df)
    assert "mfu_prec_pct" not in t  # bf16: the precision's peak is the 16-bit one
    assert list(t["reason"]) == ["", "OOM on stage 0"]
    assert list(t["mfu_pct"]) == pytest.approx([41.0, 39.0])


def test_cli_sweep_table_text_fp8(capsys):
    rc = cli.main(["sweep", "--preset", "llama3-8b-h100-64", "--set", "training.precision=fp8", "--top", "2"])
    out = capsys.readouterr().out
    assert rc == 0
    header = out.splitlines()[1].split()
    assert "mfu_prec_pct" in header and "reason" not in header


def _plan_metrics(query: dict):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app_pages" / "plan.py"), default_timeout=120)
    at.query_params.update(query)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return {m.label: m for m in at.metric}


def test_plan_page_mfu_of_the_fp8_peak_below_the_16bit_one():
    """An FP8 run's Plan page shows its MFU of the 16-bit peak (comparable across precisions) and,
    below it, of the FP8 peak: half the figure on an H100 (989.4 / 1978.9, the catalogue's peaks)."""
    m = _plan_metrics({"p": "llama3-8b-h100-64", "prec": "fp8"})["MFU"]
    top = float(m.value.replace("%", "").strip())
    assert m.delta.endswith("% of FP8 peak")
    below = float(m.delta.split("%")[0].strip())
    # both printed to 0.1 %: each off by up to 0.05, the top one scaled by the ratio (~0.5) on the way
    r = BF16_H100 / FP8_H100
    assert below == pytest.approx(top * r, abs=0.05 + 0.05 * r + 1e-9)
    assert "FP8 peak" in m.help


def test_plan_page_bf16_mfu_has_no_second_figure():
    m = _plan_metrics({"p": "llama3-8b-h100-64"})["MFU"]
    assert not m.delta
