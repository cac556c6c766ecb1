"""Session 19 (main): FP8 GEMMs on Blackwell take Hopper's fitted FP8 / 16-bit ratio, and the
validation reader's torch.compile statements.

Expected values come from the data file's constants by hand (docs/timing.md, review 19):
Blackwell FP8 eff_max = MAMF fraction 0.763 × default scale 0.915 × (0.82 / 0.93) (review 20's refit;
0.905 × 0.82 / 0.91 before it).
"""

from __future__ import annotations

import copy
import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

import planner
from planner import timing, validation
from test_mamf import _terms  # the MAMF tests' scenario (tests/ is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
OOS = ROOT / "validation" / "out_of_sample.csv"
CAL_RAW = json.loads((ROOT / "hardware" / "calibration.json").read_text())
CAL = {k: v["value"] for k, v in CAL_RAW.items() if not k.startswith("_")}


def _b(system: str, precision: str, n_gpus: int = 8):
    """The 8B scenario of tests/test_mamf.py on ``system`` at ``precision``, as a batch of one."""
    return _terms(system, precision, n_gpus)[0]


def _eff(b, C=None) -> float:
    return float(np.asarray(timing._terms(b, C)["_eff_gemm_max"]).reshape(-1)[0])


def test_documented_constants_the_hand_figures_use():
    sc = CAL["gemm_eff_scale"]
    assert (sc["default"], sc["hopper_16bit"], sc["hopper_fp8"]) == (0.90, 0.91, 0.80)  # session 37's refit
    assert "blackwell_fp8" not in sc and "blackwell_16bit" not in sc
    assert CAL["mamf_frac"]["blackwell"]["fp8"] == 0.763


def test_b200_fp8_eff_max_is_the_hand_value():
    """0.763 × 0.90 × 0.80 / 0.91 = 0.60369 (B200 has no MAMF of its own in the catalogue; 0.763 × 0.915 ×
    0.82 / 0.93 = 0.61557 before session 37's refit)."""
    assert _eff(_b("dgx-b200", "fp8")) == pytest.approx(0.763 * 0.90 * 0.80 / 0.91, rel=1e-12)
    # BF16 keeps the 16-bit scale: 0.776 × 0.90
    assert _eff(_b("dgx-b200", "bf16")) == pytest.approx(CAL["mamf_frac"]["blackwell"]["16bit"] * 0.90, rel=1e-12)


def test_fp4_on_blackwell_takes_the_same_scale():
    e8, e4 = _eff(_b("dgx-b200", "fp8")), _eff(_b("dgx-b200", "fp4"))
    assert e4 == pytest.approx(e8, rel=1e-12)


def test_a_fitted_blackwell_fp8_scale_would_win_over_the_ratio():
    C = copy.deepcopy(CAL)
    C["gemm_eff_scale"]["blackwell_fp8"] = 0.7
    assert _eff(_b("dgx-b200", "fp8"), C) == pytest.approx(0.763 * 0.7, rel=1e-12)


def test_the_ratio_slows_a_gemm_bound_b200_fp8_step_and_nothing_else():
    """Against the old rule (Blackwell FP8 at the 16-bit default, emulated by a constant file
    that fits blackwell_fp8 = 0.915): the B200 FP8 compute time rises, by less than 1/0.882 (the
    attention core and elementwise work do not move); H100 FP8 and B200 BF16 stay bit-identical."""
    old = copy.deepcopy(CAL)
    old["gemm_eff_scale"]["blackwell_fp8"] = 0.915
    for system, prec, moves in (("dgx-b200", "fp8", True), ("dgx-b200", "bf16", False), ("dgx-h100", "fp8", False)):
        b = _b(system, prec)
        new_t = float(np.asarray(timing._terms(b)["t_compute_s"]).reshape(-1)[0])
        old_t = float(np.asarray(timing._terms(b, old)["t_compute_s"]).reshape(-1)[0])
        if moves:
            assert 1.0 < new_t / old_t < 0.93 / 0.82, (system, prec, new_t / old_t)
        else:
            assert new_t == old_t, (system, prec)


def test_amd_and_intel_fp8_keep_their_16bit_scale():
    s16, s8 = timing._family_scales(CAL)
    fam = list(timing.FAMILIES)
    for f in ("cdna2", "cdna3", "cdna4", "gaudi2", "gaudi3", "other"):
        assert s8[fam.index(f)] == s16[fam.index(f)], f
    assert timing.FP8_RATIO_FAMILIES == ("blackwell",)


def test_explain_names_the_ratio_where_it_applies():
    def eff_text(system, prec):
        d = planner.load_preset("default").to_json_dict()
        d["cluster"]["system"] = system
        d["training"]["precision"] = prec
        return planner.evaluate(d).explain["t_compute_s"]

    assert "Hopper's FP8 / 16-bit ratio 0.879" in eff_text("dgx-b200", "fp8")  # 0.80 / 0.91
    assert "ratio" not in eff_text("dgx-b200", "bf16")
    assert "ratio" not in eff_text("dgx-h100", "fp8")


# -- torch.compile statements (validation reader) -------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("TorchTitan B200, compile model+loss, float8", True),
    ("compile enable=true; components model, loss", True),
    ("[compile] enable = false", False),
    ("--train.compile_model=true", True),
    ("compile_loss=True", True),
    ("compile_model: off", False),
    ("no compile model+loss", False),
    ("compiler flags for the build", None),
    ("torch.compile ON", True),
])
def test_compile_statements(text, want):
    assert validation._ran(text, validation._COMPILE) is want


def _titan_row(extra_notes: str = "") -> str:
    with OOS.open(newline="") as fh:
        reader = csv.DictReader(fh)
        rows = [r for r in reader if r["run_id"] == "torchtitan_llama2_13b_64xa100_noac"]
        fields = reader.fieldnames
    assert len(rows) == 1
    r = dict(rows[0])
    r["notes"] = r["notes"] + extra_notes
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields)
    w.writeheader()
    w.writerow(r)
    return buf.getvalue()


@pytest.mark.parametrize("extra, listed, elementwise", [
    ("", True, "eager"),
    (" Launched with --training.compile.", False, "fused"),
    (" compile model+loss.", False, "fused"),
    (" torch.compile off.", False, "eager"),
])
def test_defaults_column_lists_the_eager_rule_only_when_unstated(tmp_path, extra, listed, elementwise):
    p = tmp_path / "one.csv"
    p.write_text(_titan_row(extra))
    rows, _ = validation.validate(p)
    assert len(rows) == 1 and rows["status"].iloc[0] == "ok"
    assert ("elementwise ops and loss eager (TorchTitan without a torch.compile statement)"
            in rows["defaults"].iloc[0]) is listed
    scen, defaults = validation.run_scenario("torchtitan_llama2_13b_64xa100_noac", p)
    assert defaults == rows["defaults"].iloc[0]
    assert scen.training.elementwise == elementwise


# -- Transformer Engine's fused attention switched off (review 19b) ------------------------------

def _oos_row(run_id: str) -> dict:
    import pandas as pd
    v = pd.read_csv(OOS, dtype=str, keep_default_na=False)
    r = v[v["run_id"] == run_id]
    assert len(r) == 1
    return r.iloc[0].to_dict()


@pytest.mark.parametrize("stated, kernel", [
    ("configure.sh exports NVTE_FUSED_ATTN=0", "flash2"),
    ("NVTE_FUSED_ATTN='0'", "flash2"),
    ("configure.sh: NVTE_FUSED_ATTN=1", "native"),
    ("fused attention via CK (NVTE_FUSED_ATTN_CK=1)", "native"),
    ("NVTE_FUSED_ATTN=0 but cuDNN attention named as what ran", "native"),
    ("", "native"),
    # review 19d: read as a statement, the YAML form too
    ("NVTE_FUSED_ATTN: 0", "flash2"),
    ("NVTE_FUSED_ATTN=0 was not used", "native"),
    ("whether NVTE_FUSED_ATTN=0 was set is unknown", "native"),
])
def test_te_fused_attention_off_is_flash_attention_2_in_an_nvidia_recipe(stated, kernel):
    r = _oos_row("dgxc_nemo24.11_h100_gpt3_175b_128gpu_bf16")
    r["notes"] = "Attention: " + stated + "."
    assert validation.row_settings({**r, "notes": ""})["attention_kernel"] == "native"  # an NVIDIA recipe
    assert validation.row_settings(r)["attention_kernel"] == kernel


def test_the_dgx_cloud_rows_that_export_it_run_slower_attention():
    """The 16 review-19b rows with NVTE_FUSED_ATTN=0 read FlashAttention-2 kernels: each predicts a
    longer step than the same row read with native kernels (the attention core is slower)."""
    rows, _ = validation.validate(OOS)
    with OOS.open(newline="") as fh:
        raw = {r["run_id"]: r for r in csv.DictReader(fh)}
    ids = [k for k, r in raw.items() if "NVTE_FUSED_ATTN=0" in r["notes"]]
    assert len(ids) == 16
    rid = ids[0]
    s, _ = validation.run_scenario(rid, OOS)
    assert s.parallelism.attention_kernel == "flash2"
    d = s.to_json_dict()
    d["parallelism"]["attention_kernel"] = "native"
    assert planner.evaluate(d).results["step_time_s"] < planner.evaluate(s).results["step_time_s"]
    assert float(rows.loc[rows["run_id"].eq(rid), "step_time_s"].iloc[0]) == pytest.approx(
        planner.evaluate(s).results["step_time_s"], rel=1e-12)


# -- review 19c: a setting the text calls unknown is no statement ---------------------------------

@pytest.mark.parametrize("text", ["torch.compile NOT stated", "torch.compile unknown", "no torch.compile stated",
                                  "unclear whether torch.compile was used", "torch.compile: not specified"])
def test_a_setting_called_unknown_is_no_statement(text):
    assert validation._ran(text, validation._COMPILE) is None


@pytest.mark.parametrize("text, want", [("torch.compile not used", False), ("no torch.compile", False),
                                        ("torch.compile (off)", False), ("torch.compile ON", True)])
def test_real_statements_still_count(text, want):
    assert validation._ran(text, validation._COMPILE) is want


def test_flash_attention_called_unknown_leaves_the_source_year_rule():
    assert validation.flash_statement({"notes": "flash attention not stated"}) is None
    assert validation.flash_statement({"notes": "flash attention unknown"}) is None
    assert validation.flash_statement({"notes": "no flash attention"}) is False


def test_the_eager_rule_is_listed_for_torchtitan_only(tmp_path):
    """A PyTorch FSDP row (IBM's blog) stating eager mode runs eager ops by its statement: no
    'TorchTitan without a torch.compile statement' default; a TorchTitan row saying 'torch.compile
    NOT stated' takes the rule and lists it."""
    with OOS.open(newline="") as fh:
        reader = csv.DictReader(fh)
        rows = {r["run_id"]: r for r in reader}
        fields = reader.fieldnames
    ibm = dict(rows["ibm_fsdp_llama2_7b_128xa100_80gb"])
    ibm["notes"] = ibm["notes"].replace("torch.compile not used", "PyTorch eager mode")
    tt = dict(rows["torchtitan_llama2_13b_64xa100_noac"])
    tt["run_id"] = "tt_unknown"
    tt["notes"] = tt["notes"] + " torch.compile NOT stated."
    p = tmp_path / "two.csv"
    with p.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows([ibm, tt])
    out, _ = validation.validate(p)
    d = dict(zip(out["run_id"], out["defaults"].fillna("")))
    rule = "elementwise ops and loss eager (TorchTitan without a torch.compile statement)"
    assert rule not in d["ibm_fsdp_llama2_7b_128xa100_80gb"]
    assert rule in d["tt_unknown"]
    s, _ = validation.run_scenario("ibm_fsdp_llama2_7b_128xa100_80gb", p)
    assert s.training.elementwise == "eager"  # stated eager mode


def test_run_hints_name_the_other_file_and_ignore_case():
    with pytest.raises(ValueError, match=r"out_of_sample\.csv has run 'mlperf_v4\.1_nvidia_b200_gpt3_175b_64gpu_fp8_preview': "
                                         r"planner validate --csv \S*out_of_sample\.csv --run mlperf_v4\.1"):
        validation.run_scenario("mlperf_v4.1_nvidia_b200_gpt3_175b_64gpu_fp8_preview")
    with pytest.raises(ValueError, match=r"close: mlperf_v4\.1_nvidia_b200_gpt3_175b_64gpu_fp8_preview"):
        validation.run_scenario("MLPERF_V4.1_NVIDIA_B200_GPT3_175B_64GPU_FP8_PREVIEW", OOS)
    with pytest.raises(ValueError, match=r"out_of_sample\.csv has run 'dgxc_grok1_h100_2L_8gpu_bf16'"):
        validation.run_scenario("DGXC_GROK1_H100_2L_8GPU_BF16")  # case aside in the other file too
    if validation.DEFAULT_CSV.is_file():  # the other way: a calibration id asked of the out-of-sample file
        with pytest.raises(ValueError) as e:
            validation.run_scenario("narayanan21_t1_1.7B", OOS)
        assert "calibration.csv has run 'narayanan21_t1_1.7B': planner validate --run narayanan21_t1_1.7B" in str(e.value)
        assert "close:" not in str(e.value)  # not look-alikes of this file


def test_run_view_says_a_run_does_not_fit():
    from test_cli import run
    rc, out, _ = run("validate", "--csv", str(OOS), "--run", "mcore_dsv3_gb200_256gpu_mxfp8_baseline_a2a")
    assert rc == 0 and "does not fit in memory as read" in out
    rc, out, _ = run("validate", "--csv", str(OOS), "--run", "torchtitan_llama2_13b_64xa100_noac")
    assert rc == 0 and "does not fit" not in out


def test_explain_names_the_numbers_of_eff_max():
    d = planner.load_preset("default").to_json_dict()
    d["cluster"]["system"] = "dgx-b200"
    d["training"]["precision"] = "fp8"
    text = planner.evaluate(d).explain["t_compute_s"]
    # 0.763 × 0.7912 = 0.604; 0.90 × 0.80 / 0.91 = 0.7912 (session 37's refit)
    assert ("GEMM eff_max 0.604 (the family's MAMF fraction 0.763 × the fitted scale 0.7912; the scale 0.7912 = "
            "the family's 16-bit scale 0.9 × Hopper's FP8 / 16-bit ratio 0.879)") in text
    d["training"]["precision"] = "fp4"  # FP4 GEMMs at the FP8 fraction: said so
    assert "the family's FP8 MAMF fraction 0.763 × the fitted scale 0.7912" in planner.evaluate(d).explain["t_compute_s"]
    d["training"]["precision"] = "fp8"
    d["cluster"]["overrides"] = {"power_limit_w": 800}  # the limit is a factor of its own, before the scale's origin
    text = planner.evaluate(d).explain["t_compute_s"]
    assert "× the fitted scale 0.7912 × power limit (800 W / TDP 1000 W)^0.237 = × 0.9485" in text
    assert text.index("power limit") < text.index("the scale 0.7912 =")
    assert 0.763 * 0.7912 == pytest.approx(0.604, abs=5e-4)


# -- review 19d: more ways of saying "unknown", TorchTitan's CLI flag, NVTE read as a statement -----

@pytest.mark.parametrize("text", ["torch.compile status not stated", "torch.compile setting not stated",
                                  "torch.compile - not stated", "torch.compile — not stated",
                                  "torch.compile (unknown)", "torch.compile, not stated"])
def test_more_unknown_forms(text):
    assert validation._ran(text, validation._COMPILE) is None


@pytest.mark.parametrize("text, want", [("--compile.enable", True), ("--compile.enable --model.converters float8", True),
                                        ("--compile.enable=false", False), ("compile: enabled", True),
                                        ("Compile: yes", True), ("compile=1", True), ("compile: 0", False)])
def test_more_compile_statements(text, want):
    assert validation._ran(text, validation._COMPILE) is want


@pytest.mark.parametrize("text", ["flash attention (unknown)", "flash attention status not stated",
                                  "flash-attention (not stated)"])
def test_flash_attention_unknown_forms(text):
    assert validation.flash_statement({"notes": text}) is None


def test_a_question_mark_is_no_unknown():
    assert validation.flash_statement({"notes": "FlashAttention? yes"}) is True
