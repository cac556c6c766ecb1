"""Session 36: the FP8 attention core (``training.fp8_attention``).

Expected figures are hand calculations from the model's stated formula (planner/timing.py
``core_flash``: time = causal FLOPs / (peak · ceiling · d_h/(d_h + knee) · k/(k + C)), the knee
scaled by peak / 16-bit peak) with the catalogue's cited numbers, never the code's output:

* hardware/accelerators.json: B200 dense BF16 2,250e12 and FP8 4,500e12 FLOP/s, head-dim knee 128
  (NVIDIA HGX B200 datasheet, sparse / 2); H100 SXM BF16 989.4e12, FP8 1,978.9e12 (NVIDIA H100
  datasheet), Hopper's knee 64 (FlashAttention-3 §3.1: 3.9 TFLOP/s of exp against 989 of matmul);
* hardware/calibration.json: MAMF fractions (hardware.md §6a) Hopper 16-bit 0.803 / FP8 0.709,
  Blackwell 0.776 / 0.763; fitted scales (tools/calibrate.py, refitted in session 37) Hopper 0.91
  (16-bit) / 0.80 (FP8), a family without a fitted scale 0.90 (16-bit) × Hopper's FP8 / 16-bit
  scale ratio 0.80 / 0.91 (FP8).

FP8 / 16-bit attention ceiling ratio (the family's GEMM ceilings):
  Hopper    (0.709 · 0.80) / (0.803 · 0.91)            = 0.567200 / 0.730730 = 0.776210
  Blackwell (0.763 · 0.90 · 0.80/0.91) / (0.776 · 0.90) = 0.763 · 0.879121 / 0.776 = 0.864393
Core forward speed-up at d_h = 128 (the ceiling, the per-query factor and the FLOPs cancel):
  t16 / t8 = (peak8 / peak16) · ratio · (d + knee) / (d + knee · peak8 / peak16)
  B200: 4500/2250 · 0.864393 · 256 / 384     = 1.152524
  H100: 1978.9/989.4 · 0.776210 · 192 / (128 + 64 · 1978.9/989.4) = 1.164345
The FP8 core keeps the 16-bit core's backward / forward ratio (session 37, timing.flash_bwd_over_fwd):
the forward's factor speeds up both passes.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

import planner
from planner import batch as _batch, cli, share, timing
from planner.export import deepspeed_config, megatron_args, torchtitan_toml
from planner.validation import parse_fp8_attention, row_to_scenario

ROOT = Path(__file__).resolve().parent.parent
CAL = json.loads((ROOT / "hardware" / "calibration.json").read_text())
ACC = json.loads((ROOT / "hardware" / "accelerators.json").read_text())

RATIO_HOPPER = (0.709 * 0.80) / (0.803 * 0.91)
RATIO_BLACKWELL = 0.763 * (0.80 / 0.91) / 0.776


def test_the_catalogue_and_calibration_figures_the_hand_counts_use():
    mamf, sc = CAL["mamf_frac"]["value"], CAL["gemm_eff_scale"]["value"]
    assert (mamf["hopper"]["16bit"], mamf["hopper"]["fp8"]) == (0.803, 0.709)
    assert (mamf["blackwell"]["16bit"], mamf["blackwell"]["fp8"]) == (0.776, 0.763)
    assert (sc["hopper_16bit"], sc["hopper_fp8"], sc["default"]) == (0.91, 0.80, 0.90)
    assert "blackwell_16bit" not in sc and "blackwell_fp8" not in sc
    b200, h100 = ACC["b200"], ACC["h100-sxm-80gb"]
    assert (b200["peak_flop_per_s"]["bf16"], b200["peak_flop_per_s"]["fp8"]) == (2250e12, 4500e12)
    assert b200["attention_dhead_knee"] == 128.0
    assert (h100["peak_flop_per_s"]["bf16"], h100["peak_flop_per_s"]["fp8"]) == (989.4e12, 1978.9e12)
    assert timing.ATTN_DHEAD_KNEE["hopper"] == 64.0
    # the hand ratios (module docstring)
    assert RATIO_HOPPER == pytest.approx(0.776210, abs=1e-6)
    assert RATIO_BLACKWELL == pytest.approx(0.864393, abs=1e-6)


def _scenario(system: str, *, precision="fp8", fp8_attention=False, seq=8192, **par) -> dict:
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["cluster"]["system"] = system
    d["cluster"].pop("accelerator", None)
    d["training"].update(precision=precision, fp8_attention=fp8_attention, seq_len=seq)
    d["parallelism"].update(par)
    return d


def _core(scenarios) -> np.ndarray:
    """The attention core's forward time per layer and micro-batch [s] of each scenario (one batch)."""
    b = _batch.from_scenarios([planner.Scenario.model_validate(s) for s in scenarios])
    b.update(planner.model_stats.stats(b))
    t = np.asarray(timing._terms(b)["_t_core"], dtype=float)
    return np.broadcast_to(t.reshape(-1) if t.ndim else t, (len(scenarios),)).copy()


@pytest.mark.parametrize(("system", "want"), [
    ("dgx-b200", 2.0 * RATIO_BLACKWELL * 256.0 / 384.0),
    ("dgx-h100", 1978.9 / 989.4 * RATIO_HOPPER * 192.0 / (128.0 + 64.0 * 1978.9 / 989.4)),
])
def test_fp8_core_speedup_by_hand(system, want):
    t16, t8 = _core([_scenario(system), _scenario(system, fp8_attention=True)])
    assert t16 / t8 == pytest.approx(want, rel=1e-9)
    assert want == pytest.approx(1.152524 if system == "dgx-b200" else 1.164345, abs=2e-6)


def test_fp8_attention_shortens_the_step_and_keeps_the_flop_counts():
    r16 = planner.evaluate(_scenario("dgx-b200"))
    r8 = planner.evaluate(_scenario("dgx-b200", fp8_attention=True))
    assert r8.results["step_time_s"] < r16.results["step_time_s"]
    assert r8.results["model_flop_per_step"] == r16.results["model_flop_per_step"]
    assert r8.results["mfu"] > r16.results["mfu"]
    # the GEMMs, the HBM-bound work and the collectives are the 16-bit run's: only the core moved
    assert r8.results["t_tp_comm_s"] == r16.results["t_tp_comm_s"]
    assert r8.results["mem_total_bytes"] == r16.results["mem_total_bytes"]


@pytest.mark.parametrize("change", [
    {"precision": "bf16"},  # no FP8 recipe: Transformer Engine runs the 16-bit core
    {"flash_attention": False},  # materialised scores
    {"attention_kernel": "flash2"},  # FlashAttention-2 has no FP8 path
    {"system": "mi300x-8"},  # AMD CDNA 3: FP8 attention kernels of its own, no figure here (review 36)
    {"system": "gaudi3-8"},  # Intel Gaudi 3: FP8 peak = BF16 peak
])
def test_fp8_attention_changes_nothing_where_it_cannot_run(change):
    prec = change.get("precision", "fp8")
    system = change.get("system", "dgx-b200")
    par = {k: v for k, v in change.items() if k not in ("precision", "system")}
    off = planner.evaluate(_scenario(system, precision=prec, **par))
    on = planner.evaluate(_scenario(system, precision=prec, fp8_attention=True, **par))
    assert on.results["step_time_s"] == off.results["step_time_s"]
    assert any("fp8_attention is set but changes nothing" in n for n in on.notes)
    assert not any("fp8_attention" in n for n in off.notes)


def test_a_batch_without_the_columns_is_costed_bit_for_bit_as_before():
    s = planner.Scenario.model_validate(_scenario("dgx-b200"))
    b = _batch.from_scenarios([s, s])
    b.update(planner.model_stats.stats(b))
    with_cols = timing.stage(dict(b))
    without = {k: v for k, v in b.items() if k not in ("fp8_attention", "peak_fp8_flop_per_s")}
    without_cols = timing.stage(without)
    assert np.array_equal(with_cols["step_time_s"], without_cols["step_time_s"])


def test_a_row_gives_the_same_bits_alone_and_beside_other_rows():
    rows = [_scenario("dgx-b200", fp8_attention=True), _scenario("dgx-h100"),
            _scenario("dgx-b200", precision="bf16", fp8_attention=True), _scenario("dgx-h100", fp8_attention=True)]
    together = _core(rows)
    alone = np.array([_core([r])[0] for r in rows])
    assert np.array_equal(together, alone)


def test_explain_and_notes_say_it():
    r = planner.evaluate(_scenario("dgx-b200", fp8_attention=True))
    e = r.explain["t_compute_s"]
    assert "native kernels in FP8" in e and "the FP8 peak 4500e12 FLOP/s" in e
    assert "× 0.864" in e and "head-dim knee 256 = 128 × FP8 / 16-bit peak" in e
    assert "1.153× the 16-bit core" in e  # the module docstring's hand figure, 1.152524
    assert any(n.startswith("FP8 attention (training.fp8_attention)") and "1.153× the 16-bit core here" in n
               for n in r.notes)
    h = planner.evaluate(_scenario("dgx-h100", fp8_attention=True))
    assert "1.164× the 16-bit core" in h.explain["t_compute_s"]  # 1978.9/989.4 · 0.776210 · 192/(128 + 128.006)


def test_share_link_carries_it_and_a_tampered_value_is_named():
    sj = _scenario("dgx-b200", fp8_attention=True)
    params = share.scenario_to_params(planner.Scenario.model_validate(sj).to_json_dict(), preset="default")
    assert params["f8a"] == "1"
    back, warnings = share.params_to_scenario(params)
    assert warnings == [] and back["training"]["fp8_attention"] is True
    back, warnings = share.params_to_scenario({**params, "f8a": "maybe", "gbs": "512"})
    assert len(warnings) == 1 and warnings[0].startswith("f8a='maybe' (training.fp8_attention)")
    assert back["training"]["global_batch_size"] == 512


def test_cli_set_and_bad_value(capsys):
    assert cli.main(["evaluate", "--preset", "llama3-8b-h100-64", "--set", "training.precision=fp8",
                     "--set", "training.fp8_attention=true", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["scenario"]["training"]["fp8_attention"] is True
    rc = cli.main(["evaluate", "--preset", "llama3-8b-h100-64", "--set", "training.fp8_attention=maybe"])
    err = capsys.readouterr().err
    assert rc == 2 and "training.fp8_attention" in err and "Traceback" not in err


def test_exports_say_where_the_setting_lives():
    s = _scenario("dgx-b200", fp8_attention=True)
    meg = megatron_args(s)
    assert "fp8-dot-product-attention" not in meg.text  # no such flag in arguments.py at MEGATRON_COMMIT
    assert any("TransformerConfig.fp8_dot_product_attention" in n for n in meg.notes)
    assert any("FP8 attention (training.fp8_attention)" in n for n in torchtitan_toml(s).notes)
    assert any("FP8 attention core" in n for n in deepspeed_config(s).notes)
    assert not any("fp8_attention" in n for n in megatron_args(_scenario("dgx-b200")).notes)
    assert any("planner's step time assumed it" in n for n in meg.notes)
    # set where the engine does not use it (flash off): the exports say the step time did not use it
    off = _scenario("dgx-b200", fp8_attention=True, flash_attention=False)
    for notes in (megatron_args(off).notes, torchtitan_toml(off).notes, deepspeed_config(off).notes):
        assert any("did not use it either" in n for n in notes)
        assert not any("assumed it" in n and "fp8_attention" in n for n in notes)


def _custom_part(fp8_over_bf16: float) -> dict:
    """The H100 SXM of the catalogue with its FP8 peak set to ``fp8_over_bf16`` × its BF16 peak and no
    MAMF of its own (the family's fractions apply)."""
    acc = planner.catalog.accelerators()["h100-sxm-80gb"].model_dump(mode="json")
    acc["peak_flop_per_s"]["fp8"] = acc["peak_flop_per_s"]["bf16"] * fp8_over_bf16
    acc["mamf_flop_per_s"] = None
    acc["name"] = "custom H100"
    return acc


def test_the_fp8_core_is_never_slower_than_the_16bit_one():
    # FP8 peak 1.1 × BF16: rate ρ · e8/e16 · (d + knee)/(d + ρ·knee) = 1.1 · 0.776210 · 192/198.4 = 0.8263 < 1
    want = 1.1 * RATIO_HOPPER * (128.0 + 64.0) / (128.0 + 1.1 * 64.0)
    assert want == pytest.approx(0.8263, abs=1e-4)
    sc = [_scenario("dgx-h100"), _scenario("dgx-h100", fp8_attention=True)]
    for d in sc:
        d["cluster"]["accelerator"] = _custom_part(1.1)
    t16, t8 = _core(sc)
    assert t8 == t16  # the 16-bit core is kept
    r = planner.evaluate(sc[1])
    assert r.results["step_time_s"] == planner.evaluate(sc[0]).results["step_time_s"]
    assert any(f"would run at {want:.3f}× the 16-bit one" in n for n in r.notes)
    assert f"kept off: the FP8 core would run at {want:.3f}× this one" in r.explain["t_compute_s"]
    # FP8 peak 3 × BF16: faster, at the hand rate 3 · 0.776210 · 192/320 = 1.397178
    for d in sc:
        d["cluster"]["accelerator"] = _custom_part(3.0)
    t16, t8 = _core(sc)
    assert t16 / t8 == pytest.approx(3.0 * RATIO_HOPPER * 192.0 / 320.0, rel=1e-9)


@pytest.mark.parametrize(("cell", "want"), [
    ("fp8 (config_common_8b.sh: FP8_HYBRID=True; config_common_fp8attn.sh: FP8_DPA=True, FP8 attention; "
     "config_common.sh not read)", True),  # MLPerf v5.1 HPE H200 (validation/out_of_sample.csv)
    ("fp4 (config sources config_common_fp4.sh, not read: FP4 format/recipe not stated in the files read; "
     "FP8 attention via config_common_fp8attn.sh)", True),
    ("fp8 --fp8-dot-product-attention", True),
    ("fp8 (FP8_DPA=False)", False),
    ("fp8, no FP8 attention", False),
    ("fp8; FP8 attention not read", False),
    ("fp8", False),
    (None, False),
])
def test_validation_reads_a_stated_fp8_attention(cell, want):
    assert parse_fp8_attention(cell) is want


def test_validation_rows_take_it_only_where_stated_and_fp8():
    import csv

    rows = {r["run_id"]: r for r in csv.DictReader((ROOT / "validation" / "out_of_sample.csv").open())}
    s, why = row_to_scenario(rows["mlperf_v5.1_hpe_h200_llama31_8b_64gpu_fp8"])
    assert s is not None, why
    assert s.training.fp8_attention is True
    s, why = row_to_scenario(rows["mlperf_v5.1_nvidia_gb300_llama31_8b_72gpu_fp8"])  # "FP8 attention not read"
    assert s is not None, why
    assert s.training.fp8_attention is False
    r = copy.deepcopy(rows["mlperf_v5.1_hpe_h200_llama31_8b_64gpu_fp8"])
    r["precision"] = "fp8 (config_common_8b.sh: FP8_HYBRID=True)"  # the same run, FP8 attention not stated
    s, why = row_to_scenario(r)
    assert s is not None, why
    assert s.training.fp8_attention is False
