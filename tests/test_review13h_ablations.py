"""Review 13h: the step-time and memory models' RELATIVE response to features the calibration
file barely exercises, against published ablations (the ratio with / without the feature on
the source's own configuration, not the absolute throughput).

Every expected value is a published number (source named per test); every tolerance says why
it is that wide. The configurations are the sources' own rows of the calibration file
(``../shared/validation/calibration.csv``) and of ``validation/out_of_sample.csv``, read by
``planner.validation.row_to_scenario`` and varied by one field.
"""

from __future__ import annotations

import copy
import csv
from pathlib import Path

import pytest

import planner
from planner import validation

ROOT = Path(__file__).resolve().parent.parent
OOS = ROOT / "validation" / "out_of_sample.csv"


def _row(path: Path, run_id: str) -> dict:
    with open(path, encoding="utf-8", newline="") as fh:
        for r in csv.DictReader(fh):
            if r["run_id"] == run_id:
                return r
    raise AssertionError(f"{run_id} not in {path}")


def _scenario(path: Path, run_id: str) -> dict:
    s, why = validation.row_to_scenario(_row(path, run_id))
    assert s is not None, why
    return s.to_json_dict()


def _with(d: dict, **kw) -> dict:
    d = copy.deepcopy(d)
    for k, v in kw.items():
        sec, key = k.split("__")
        d[sec][key] = v
    return d


def _res(d: dict) -> dict:
    return planner.evaluate(d).results


# ---------------------------------------------------------------- Korthikanti et al. 2022
# "Reducing Activation Recomputation in Large Transformer Models" (arXiv:2205.05198), 22B model
# of its Table 3 (h 6144, 64 heads, seq 2048, TP 8 on one DGX A100), the calibration file's row.
_K22 = "korthikanti22_22B_seqpar_selective"


def _k22() -> dict:
    return _scenario(validation.DEFAULT_CSV, _K22)


def _per_layer(d: dict, key: str, **kw) -> float:
    """One transformer layer's share of ``key``: the difference between 48 and 24 layers over 24
    (removes the embedding / output head / optimizer, which Table 4 does not time)."""
    a = _res(_with(d, model__n_layers=48, **kw))[key]
    b = _res(_with(d, model__n_layers=24, **kw))[key]
    return (a - b) / 24.0


_NONE = dict(parallelism__recompute="none", parallelism__sequence_parallel=False)


@pytest.mark.parametrize("name, kw, published_pct", [
    # Table 4: forward + backward time of one 22B layer, overhead over "baseline no recompute"
    # (19.6 ms): sequence parallelism 19.0 ms (-3 %), full recompute 27.2 ms (+39 %), selective
    # recompute 20.9 ms (+7 %), selective + sequence parallelism 20.3 ms (+4 %).
    ("sequence parallelism", dict(parallelism__recompute="none", parallelism__sequence_parallel=True), -3.0),
    ("full recompute", dict(parallelism__recompute="full", parallelism__sequence_parallel=False), 39.0),
    ("selective recompute", dict(parallelism__recompute="selective", parallelism__sequence_parallel=False), 7.0),
    ("selective + SP", dict(parallelism__recompute="selective", parallelism__sequence_parallel=True), 4.0),
])
def test_korthikanti_table4_layer_time_overheads(name, kw, published_pct):
    """Planner (this commit): -7.0 / +34.1 / +5.5 / -1.5 %. Tolerance 7 percentage points: the
    published percentages are rounded to 1 % from times rounded to 0.1 ms (±0.5 % each), and
    the model's per-layer base time is itself 12 % off (22.0 ms against 19.6 ms) — a
    relative error of that size on the baseline moves a +39 % overhead by about 5 points."""
    d = _k22()
    base = _per_layer(d, "step_time_s", **_NONE)
    x = _per_layer(d, "step_time_s", **kw)
    assert 100.0 * (x / base - 1.0) == pytest.approx(published_pct, abs=7.0), name


def test_korthikanti_table4_ordering():
    """Table 4's ordering, which the tolerance above alone would not pin: full recompute costs
    most, selective recompute far less, and sequence parallelism takes time off both."""
    d = _k22()
    t = {k: _per_layer(d, "step_time_s", parallelism__recompute=rc, parallelism__sequence_parallel=sp)
         for k, rc, sp in [("base", "none", False), ("sp", "none", True), ("full", "full", False),
                           ("sel", "selective", False), ("sel_sp", "selective", True)]}
    assert t["sp"] < t["base"] < t["sel"] < t["full"]
    assert t["sel_sp"] < t["sel"]
    # selective costs under a quarter of what full recompute costs (published (20.9-19.6)/(27.2-19.6) = 0.17)
    assert (t["sel"] - t["base"]) / (t["full"] - t["base"]) < 0.25


@pytest.mark.parametrize("kind, kw", [
    ("tp", dict(parallelism__recompute="none", parallelism__sequence_parallel=False)),
    ("tp+sp", dict(parallelism__recompute="none", parallelism__sequence_parallel=True)),
    ("tp+selective", dict(parallelism__recompute="selective", parallelism__sequence_parallel=False)),
    ("tp+sp+selective", dict(parallelism__recompute="selective", parallelism__sequence_parallel=True)),
    ("full", dict(parallelism__recompute="full", parallelism__sequence_parallel=False)),
])
def test_korthikanti_table2_activation_bytes_per_layer(kind, kw):
    """Table 2, activation bytes per layer (16-bit, with dropout): TP ``sbh(10 + 24/t + 5as/(ht))``,
    TP + SP ``sbh(34/t + 5as/(ht))``, TP + selective ``sbh(10 + 24/t)``, TP + SP + selective
    ``sbh·34/t``, full recompute ``2sbh`` (the layer input only). A formula, so exact (relative
    1e-9); the 22B row with dropout on, as the paper assumes (its 5as/h term holds the masks)."""
    d = _with(_k22(), model__dropout=0.1)
    s, b, h, a, t = 2048.0, float(d["training"]["micro_batch_size"]), 6144.0, 64.0, 8.0
    x = 5.0 * a * s / h
    per = {"tp": 10 + 24 / t + x / t, "tp+sp": 34 / t + x / t, "tp+selective": 10 + 24 / t,
           "tp+sp+selective": 34 / t, "full": 2.0}[kind]
    assert _per_layer(d, "mem_activations_bytes", **kw) == pytest.approx(per * s * b * h, rel=1e-9)


@pytest.mark.parametrize("size, published", [
    # Table 5: iteration time full recompute / present work (SP + selective): 1.42/1.10,
    # 18.13/13.75, 49.05/37.83, 94.42/71.49 s
    ("22B", 1.42 / 1.10), ("175B", 18.13 / 13.75), ("530B", 49.05 / 37.83), ("1T", 94.42 / 71.49),
])
def test_korthikanti_table5_full_over_selective_sp(size, published):
    """Planner 1.358 / 1.360 / 1.335 / 1.330 against 1.291 / 1.319 / 1.297 / 1.321. Tolerance
    0.08: these rows are in the calibration file (the fit saw both ends), each end within 6 %
    of its published time, and two independent 4 % misses in opposite directions move a ratio
    by 0.08."""
    full = _res(_scenario(validation.DEFAULT_CSV, f"korthikanti22_{size}_fullrecompute"))["step_time_s"]
    sel = _res(_scenario(validation.DEFAULT_CSV, f"korthikanti22_{size}_seqpar_selective"))["step_time_s"]
    assert full / sel == pytest.approx(published, abs=0.08)


# ---------------------------------------------------------------- TorchTitan (Liang et al. 2024)
@pytest.mark.parametrize("faster, slower, published", [
    # TorchTitan on 64 A100 (out_of_sample.csv, TORCHTITAN_A100): Llama 2 13B without activation
    # checkpointing 2,162 tok/s/GPU against per-op SAC 1,904 and per-layer SAC 1,914; Llama 3 8B
    # per-op SAC 2,973 against per-layer SAC 2,904.
    ("torchtitan_llama2_13b_64xa100_noac", "torchtitan_llama2_13b_64xa100_opsac", 2162.0 / 1904.0),
    ("torchtitan_llama2_13b_64xa100_noac", "torchtitan_llama2_13b_64xa100_layersac", 2162.0 / 1914.0),
    ("torchtitan_llama3_8b_64xa100_opsac", "torchtitan_llama3_8b_64xa100_layersac", 2973.0 / 2904.0),
])
def test_torchtitan_recompute_ablation_ratios(faster, slower, published):
    """Planner 1.137 / 1.161 / 1.037 against 1.136 / 1.130 / 1.024. Tolerance 0.05: the rows
    are single published runs (TorchTitan logs one throughput at a fixed step), and the
    layer-SAC rows checkpoint every other layer, which the model costs through its per-chunk
    layer count (the op / layer pairs differ by 2-3 % only, so a tighter bound would test noise)."""
    a = _res(_scenario(OOS, faster))["step_time_s"]
    b = _res(_scenario(OOS, slower))["step_time_s"]
    assert b / a == pytest.approx(published, abs=0.05)


@pytest.mark.parametrize("n_gpus", [8, 128])
def test_torchtitan_float8_over_bf16_ratio(n_gpus):
    """TorchTitan docs/performance.md (Dec 2024), Llama 3.1 8B FSDP + torch.compile: BF16 6,667 /
    6,514 and Float8 (tensorwise) 8,532 / 8,380 tok/s/GPU on 8 / 128 H100: 1.280 / 1.286.
    Planner 1.247 / 1.248. Tolerance 0.06: the Float8 all-gather and the casts are not in the
    calibration file (no FP8 run there uses torchao), and the paper's own re-run of the same
    configuration (arXiv:2410.06511 Table 1: 6,674 -> 9,409 on 8 GPUs, 1.41) differs from the
    docs by 0.13, so the published ratio itself is uncertain by more than this bound."""
    pre = f"torchtitan_perfmd_h100_dec2024_llama31_8b_{n_gpus}gpu_fsdp_compile_"
    bf16 = _res(_scenario(OOS, pre + "bf16"))["step_time_s"]
    fp8 = _res(_scenario(OOS, pre + "fp8"))["step_time_s"]
    published = {8: 8532.0 / 6667.0, 128: 8380.0 / 6514.0}[n_gpus]
    assert bf16 / fp8 == pytest.approx(published, abs=0.06)


def test_torchtitan_compile_fused_over_eager_elementwise():
    """torch.compile (fused elementwise, ``training.elementwise``) over eager: TorchTitan
    docs/performance.md (Dec 2024), Llama 3.1 8B FSDP on 8 H100, 5,762 -> 6,667 tok/s/GPU =
    1.157. Planner 1.180. Tolerance 0.05: compile also fuses what the eager byte count does not
    list (casts inside attention, the optimizer's foreach kernels)."""
    pre = "torchtitan_perfmd_h100_dec2024_llama31_8b_8gpu_fsdp_"
    eager = _res(_scenario(OOS, pre + "bf16"))["step_time_s"]
    fused = _res(_scenario(OOS, pre + "compile_bf16"))["step_time_s"]
    assert eager / fused == pytest.approx(6667.0 / 5762.0, abs=0.05)


# ---------------------------------------------------------------- MosaicML micro-batch sweep
@pytest.mark.parametrize("model, mbs, published", [
    # llm-foundry's throughput tables (MOSAIC_MPT_MB_SWEEP, 8 A100 80GB, seq 2048): MPT-7B at
    # micro-batch 6 / 2 against 1: 4,715 / 4,044 against 3,366; MPT-13B at 2 against 1:
    # 2,228 against 1,867 tok/s/GPU.
    ("7b", 6, 4715.0 / 3366.0), ("7b", 2, 4044.0 / 3366.0), ("13b", 2, 2228.0 / 1867.0),
])
def test_mosaic_micro_batch_ratio(model, mbs, published):
    """Planner 1.332 / 1.176 / 1.181 against 1.401 / 1.201 / 1.193. Tolerance 0.10: at
    micro-batch 1 the FSDP1 collectives (in series, ``dp_comm_overlap`` off) are a large share of
    the step and the model's collective time is fitted, not measured on these rows."""
    pre = f"mpt_mbsweep_a100_80gb_{model}_seq2048_8gpu_mbs"
    one = _res(_scenario(OOS, pre + "1"))["tokens_per_s"]
    many = _res(_scenario(OOS, pre + str(mbs)))["tokens_per_s"]
    assert many / one == pytest.approx(published, abs=0.10)
