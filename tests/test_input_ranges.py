"""Physical ranges of hardware figures, and what the engine says where a figure is absurd.

From a new-user review (2026-11-30): a NIC of 1e-300 B/s crashed ``simulate`` with a
ZeroDivisionError; an inline accelerator of 1e-300 FLOP/s gave NaN step times; the share links
refused override values the API took; a published 5,000 TFLOP/s per H100 was compared; an
unreadable TFLOP/s cell beside an MFU was passed over without a word; a scenario file with a
UTF-8 byte-order mark was refused.
"""

from __future__ import annotations

import importlib
import io
import json
import math
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pandas as pd
import pytest

import planner
from planner import batch, catalog, engine, reliability, schema, share, validation
from planner.cli import main
from planner.schema import InputError, read_json_file, validate_scenario

simulate = importlib.import_module("planner.simulate")  # (planner.simulate is the function)
sweep = importlib.import_module("planner.sweep")


def _default_json():
    return planner.load_preset("default").model_dump(mode="json", by_alias=True)


def _lines(data):
    with pytest.raises(InputError) as e:
        validate_scenario(data)
    return e.value.lines


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            rc = main(list(argv))
        except SystemExit as e:
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("field, value, rng", [
    ("nic_bw_per_gpu_bytes_per_s", 1e-300, "allowed 1e+08 to 1e+15"),
    ("nic_bw_per_gpu_bytes_per_s", 1e16, "allowed 1e+08 to 1e+15"),
    ("price_per_gpu_hour_usd", 1e308, "allowed 0.01 to 1,000,000"),
    # (power_limit_w: its range is the part's own, 0.25·TDP to TDP, tests/test_mamf.py)
    # 0.1 GiB = 0.1 × 2^30 B; 1e14 B / 2^30 = 93,132.3 GiB, 1e16 B / 2^30 = 9,313,226 GiB
    ("hbm_usable_bytes", 1.0, "allowed 107,374,182.4 to 1e+14 bytes (0.1 to 93,132.3 GiB)"),
    ("host_memory_bytes", 1e-5, "allowed 107,374,182.4 to 1e+16 bytes (0.1 to 9,313,226 GiB)"),
])
def test_cluster_overrides_outside_their_range_name_the_whole_range(field, value, rng):
    d = _default_json()
    d["cluster"]["overrides"][field] = value
    lines = _lines(d)
    assert lines == [f"cluster.overrides.{field}: {rng} (got {value!r})"]


def test_inline_accelerator_figures_are_ranged():
    d = _default_json()
    acc = catalog.accelerators()["h100-sxm-80gb"].model_dump(mode="json")
    acc["peak_flop_per_s"] = {"bf16": 1e-300}
    acc["mamf_flop_per_s"] = None
    acc["hbm_bw_bytes_per_s"] = 0.0
    d["cluster"]["accelerator"] = acc
    lines = _lines(d)
    assert "cluster.accelerator.peak_flop_per_s.bf16: allowed 1e+11 to 1e+18 (got 1e-300)" in lines
    assert "cluster.accelerator.hbm_bw_bytes_per_s: allowed 1e+09 to 1e+15 (got 0.0)" in lines


def test_system_nvme_bandwidth_is_zero_or_in_range():
    sysd = catalog.systems()["dgx-h100"].model_dump(mode="json")
    d = _default_json()
    d["cluster"]["system"] = dict(sysd, local_nvme_write_bw_bytes_per_s=1e-3)
    assert any("local_nvme_write_bw_bytes_per_s = 0.001: allowed 0 (no local NVMe) or 1e+06 to 1e+13" in x
               for x in _lines(d))
    d["cluster"]["system"] = dict(sysd, local_nvme_bytes=0.0, local_nvme_write_bw_bytes_per_s=0.0,
                                  local_nvme_read_bw_bytes_per_s=0.0)
    validate_scenario(d)  # 0 = no local NVMe


def test_failure_rates_and_recovery_times_are_ranged():
    d = _default_json()
    prof = catalog.failure_profiles()[d["reliability"]["profile"]].model_dump(mode="json", by_alias=True)
    prof["classes"][0]["rate"] = 1e300
    prof["classes"][0]["restart_s"] = 1e300
    d["reliability"]["profile"] = prof
    lines = _lines(d)
    assert "reliability.profile.classes[0].rate: allowed 0 to 3,600 (got 1e+300)" in lines
    assert "reliability.profile.classes[0].restart_s: allowed 0 to 3.2e+07 (got 1e+300)" in lines


def test_every_catalogue_entry_is_inside_the_ranges():
    # the ranges are a few orders of magnitude around the catalogue: none of its parts is refused
    for acc in catalog.accelerators().values():
        schema.Accelerator.model_validate(acc.model_dump())
    for s in catalog.systems().values():
        schema.System.model_validate(s.model_dump())
    for name in planner.list_presets():
        planner.evaluate(planner.load_preset(name))


def test_share_link_ranges_are_the_schemas():
    keys = {f.key: f for f in share.CLUSTER_KEYS}
    for key, rng in (("price", schema.PRICE_USD_RANGE), ("nic", schema.LINK_BW_RANGE),
                     ("hostmem", schema.HOST_MEM_BYTES_RANGE), ("hbmu", schema.HBM_BYTES_RANGE),
                     ("pwr", schema.POWER_W_RANGE)):
        assert (keys[key].lo, keys[key].hi) == rng
    # a value the API takes at the bound makes a link that keeps it (was: dropped with a warning)
    d = _default_json()
    d["cluster"]["overrides"]["nic_bw_per_gpu_bytes_per_s"] = schema.LINK_BW_RANGE[0]
    sj = validate_scenario(d).model_dump(mode="json", by_alias=True)
    back, warnings = share.params_to_scenario(share.scenario_to_params(sj))
    assert back["cluster"]["overrides"]["nic_bw_per_gpu_bytes_per_s"] == schema.LINK_BW_RANGE[0]
    assert not [w for w in warnings if "nic" in w]


def test_cli_simulate_with_a_tiny_nic_exits_2_with_the_range():
    rc, out, err = _cli("simulate", "--preset", "default", "--trials", "10",
                        "--set", "cluster.overrides.nic_bw_per_gpu_bytes_per_s=1e-300")
    assert rc == 2
    assert "Traceback" not in err
    assert "cluster.overrides.nic_bw_per_gpu_bytes_per_s: allowed 1e+08 to 1e+15 (got 1e-300)" in err


def test_simulate_refuses_a_row_without_a_finite_step():
    out = engine.run_batch(batch.from_scenarios([planner.load_preset("default")]))
    out["step_time_s"] = np.array([np.nan])
    out["tokens_per_s"] = np.array([0.0])
    msg = simulate.too_many_failures(out, 0)
    assert msg is not None and msg.startswith("simulate: the step time is not a finite number of seconds")
    # the round cap of a run that cannot finish is an int64, not an OverflowError / ValueError
    assert simulate.round_cap(math.inf, np.array([3600.0]), np.array([True]), np.array([1.0]),
                              np.array([1e-4])) == 2**62
    assert simulate.round_cap(math.nan, np.array([3600.0]), np.array([True]), np.array([1.0]),
                              np.array([1e-4])) == 2**62


def _slow_405b_row():
    """Llama 3 405B on 16,384 GPUs of 1e11 FLOP/s (the range's floor) at 100x the failure rate:
    a step of about 12 h against a failure every ~2 min."""
    d = planner.load_preset("llama3-405b-h100-16k").model_dump(mode="json", by_alias=True)
    acc = catalog.accelerators()["h100-sxm-80gb"].model_dump(mode="json")
    acc["peak_flop_per_s"] = {p: 1e11 for p in acc["peak_flop_per_s"]}
    acc["mamf_flop_per_s"] = None
    d["cluster"]["accelerator"] = acc
    d["reliability"]["rate_scale"] = 100
    out = engine.run_batch(batch.from_scenarios([validate_scenario(d)]))
    return batch.row(out, 0)


def test_zero_goodput_at_the_one_step_floor_does_not_advise_a_shorter_interval():
    row = _slow_405b_row()
    step = row["step_time_s"]
    mtbf_s = 3600.0 / row["failure_rate_per_h"]
    assert step > 100 * mtbf_s  # the premise: a step far longer than the time between failures
    for k in ("host_memory", "pfs"):  # both saved tiers sit at the one-step floor
        assert row[f"ckpt_{k}_interval_opt_s"] == pytest.approx(step, rel=1e-9)
    row["goodput"] = 0.0  # (the renewal goodput is 2e-170 here; the reason is for the 0 case)
    why = reliability.zero_goodput_reason(row)
    assert why.startswith("goodput is 0: a checkpoint can be saved at most once a step")
    assert "Shorten the interval" not in why
    assert f"{step / 3600.0:.4g} h per step" in why


def test_sweep_reason_for_a_non_finite_step_is_not_out_of_memory(monkeypatch):
    sc = planner.load_preset("default")
    real = engine.evaluate

    def nan_step(s):
        rep = real(s)
        rep.results["step_time_s"] = float("nan")
        return rep

    monkeypatch.setattr(sweep._engine, "evaluate", nan_step)
    why = sweep.no_split_reason(sc, n_valid=5)
    assert why.startswith("no split has a finite step time")
    assert "out of memory" not in why


def test_scenario_file_with_a_byte_order_mark_is_read(tmp_path):
    p = tmp_path / "bom.json"
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps(_default_json()).encode("utf-8"))
    assert read_json_file(p)["cluster"]["n_gpus"] == 1024
    rc, out, err = _cli("evaluate", str(p), "--format", "json")
    assert rc == 0, err


def _one_row_csv(tmp_path, **cells):
    df = pd.read_csv(validation.OUT_OF_SAMPLE_CSV)
    r = df[df["run_id"] == "llama3_405b_seq8k_16384gpu"].iloc[[0]].copy()
    for k, v in cells.items():
        r[k] = v
    p = tmp_path / "one.csv"
    r.to_csv(p, index=False)
    return p


def test_validate_does_not_compare_a_published_figure_above_the_peak(tmp_path):
    # H100 SXM: highest peak 1,979 TFLOP/s (FP8 dense); 5,000 TFLOP/s per GPU is no run's
    row = _one_row_csv(tmp_path, tflops_per_gpu=5000)
    df = pd.read_csv(row)
    df2 = pd.concat([df, df.assign(run_id="ok_row", tflops_per_gpu=400)], ignore_index=True)
    df2.to_csv(row, index=False)
    rows, summary = validation.validate(row)
    bad = rows.set_index("run_id").loc["llama3_405b_seq8k_16384gpu"]
    assert bad["status"].startswith("not compared: the published tflops_per_gpu (5000) is 5,000 TFLOP/s per GPU, "
                                    "above the accelerator's highest peak (1,979 TFLOP/s)")
    assert not np.isfinite(bad["rel_err"])
    assert int(summary.set_index("group").loc["overall", "n"]) == 1  # the 5,000 row is not in the summary
    # tokens/s above the peak: 405B at ~2.4 TFLOP per token (6N), 10^6 tokens/s per GPU is 2.4 EFLOP/s
    p = _one_row_csv(tmp_path, tokens_per_s_per_gpu=1e6)
    with pytest.raises(ValueError, match="no row can be compared .*tokens_per_s_per_gpu .* means .* TFLOP/s per GPU "
                                         "of model FLOPs, above the accelerator's highest peak"):
        validation.validate(p)


def test_validate_says_which_metric_cell_it_could_not_read(tmp_path):
    p = _one_row_csv(tmp_path, tflops_per_gpu="fast", mfu_pct=41)
    rows, _ = validation.validate(p)
    r = rows.iloc[0]
    assert r["metric"] == "mfu" and r["status"] == "ok"
    assert "tflops_per_gpu 'fast' not read as a number (compared mfu)" in r["defaults"]


def test_validate_says_an_unknown_model_name_took_the_gpt_block(tmp_path):
    p = _one_row_csv(tmp_path, model="Foo 405B")
    rows, _ = validation.validate(p)
    assert "GPT block (model name not a known family" in rows.iloc[0]["defaults"]
    p = _one_row_csv(tmp_path, model="Llama 3 405B")
    rows, _ = validation.validate(p)
    assert "GPT block" not in rows.iloc[0]["defaults"]
