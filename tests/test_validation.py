"""Predicted vs published throughput on ../shared/validation/calibration.csv.

Thresholds from the issue: per source group median |relative error| <= 10% and max <= 25%.
"""

import math

import numpy as np
import pandas as pd
import pytest

from planner import validation

GROUPS = ["Narayanan", "Korthikanti", "Megatron-Core H100", "MosaicML FSDP", "NeMo FP8"]


@pytest.fixture(scope="module")
def result():
    return validation.validate()


def test_parsers():
    assert validation.parse_number("51200 (assumed)") == 51200
    assert validation.parse_number("3 (FSDP FULL_SHARD)") == 3
    assert math.isnan(validation.parse_number("n/a"))
    assert validation.parse_recompute("full (activation checkpointing)") == "full"
    assert validation.parse_recompute("selective (attention core only) + sequence parallelism") == "selective"
    assert validation.parse_recompute(None) == "none"
    assert validation.system_for_gpu("A100-SXM4-80GB") == "dgx-a100-80gb"
    assert validation.system_for_gpu("DGX-H100") == "dgx-h100"


def test_skipped_rows_have_reasons(result):
    rows, _ = result
    sk = rows[rows["status"].str.startswith("skipped")]
    assert len(sk) >= 1
    assert (sk["status"].str.len() > len("skipped: ")).all()
    assert "nemo_24.07_DGX-H100_Nemotron-8B_64_FP8" in set(sk["run_id"])


def test_every_group_present(result):
    _, summary = result
    assert set(GROUPS) <= set(summary["group"])


@pytest.mark.parametrize("group", GROUPS)
def test_median_error_within_10pct(result, group):
    _, summary = result
    row = summary.set_index("group").loc[group]
    assert row["median_abs_err"] <= 0.10, f"{group}: median |err| = {row['median_abs_err']:.3f}"


@pytest.mark.parametrize("group", GROUPS)
def test_max_error_within_25pct(result, group):
    _, summary = result
    row = summary.set_index("group").loc[group]
    assert row["max_abs_err"] <= 0.25, f"{group}: max |err| = {row['max_abs_err']:.3f}"


def test_reads_any_csv_with_the_columns(tmp_path):
    df = pd.read_csv(validation.DEFAULT_CSV)
    sub = df[df["source_key"] == "KORTHIKANTI22"]
    p = tmp_path / "k.csv"
    sub.to_csv(p, index=False)
    rows, summary = validation.validate(p)
    assert len(rows) == len(sub)
    assert list(summary["group"]) == ["Korthikanti", "overall"]


def test_missing_columns_is_an_error(tmp_path):
    p = tmp_path / "bad.csv"
    pd.DataFrame({"run_id": ["x"]}).to_csv(p, index=False)
    with pytest.raises(ValueError, match="missing columns"):
        validation.validate(p)
