"""A part's own maximum achievable matmul FLOP/s (MAMF) and the power rule.

Sources: the MAMF table of ../shared/reference/hardware.md §6a (stas-accel: the best large
GEMM measured per accelerator), read from the file itself; the power rule
``MAMF(P) = MAMF(P_ref) · (P / P_ref)^κ`` (planner.timing.MAMF_POWER_EXPONENT) with κ from
that table's same-die pairs; the GEMM efficiency ``eff_max = MAMF / peak × scale`` of
docs/timing.md, with the fitted scale of hardware/calibration.json.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import planner
from planner import batch, catalog, model_stats, timing
from planner.schema import Accelerator

ROOT = Path(__file__).resolve().parents[1]
HW_MD = ROOT.parent / "shared" / "reference" / "hardware.md"
CAL = json.loads((ROOT / "hardware" / "calibration.json").read_text())
CAL_VALUES = {k: v["value"] for k, v in CAL.items() if not k.startswith("_")}
T = 1e12


def _mamf_table() -> dict[str, tuple[float | None, float | None]]:
    """Device → (BF16, FP8) MAMF [TFLOP/s] from the §6a table of hardware.md."""
    text = HW_MD.read_text()
    sec = text[text.index("### 6a."):]
    sec = sec[:sec.index("\n\n", sec.index("|---"))]
    out = {}
    for line in sec.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or cells[0] in ("Device", "") or cells[0].startswith("---"):
            continue

        def num(c):
            m = re.match(r"([\d,]+(?:\.\d+)?)", c)
            return float(m.group(1).replace(",", "")) if m else None
        out[cells[0]] = (num(cells[1]), num(cells[3]))
    return out


MAMF = _mamf_table()
ACC = catalog.accelerators()


def test_the_table_is_read():
    assert MAMF["H100 SXM"] == (794.5, 1402.6)
    assert MAMF["B200"] == (1745.0, 3432.5)


def test_power_exponent_from_the_same_die_pairs():
    """κ = ln(GB200 / B200) / ln(1200 W / 1000 W) from the measured table; the A100 PCIe / SXM
    pair (300 W / 400 W) gives the same exponent within 0.01."""
    gb200, b200 = MAMF["GB200"][0], MAMF["B200"][0]
    kappa = math.log(gb200 / b200) / math.log(ACC["gb200"].tdp_w / ACC["b200"].tdp_w)
    assert timing.MAMF_POWER_EXPONENT == pytest.approx(kappa, abs=5e-4)
    pcie, sxm = MAMF["A100 PCIe"][0], MAMF["A100 SXM"][0]
    assert math.log(pcie / sxm) / math.log(300 / 400) == pytest.approx(timing.MAMF_POWER_EXPONENT, abs=0.01)
    assert float(timing.mamf_at_power(b200 * T, 1000, 1200)) == pytest.approx(gb200 * T, rel=1e-3)


@pytest.mark.parametrize("acc, device, precisions", [
    ("gb200", "GB200", ("bf16", "fp8")),
    ("b300", "B300", ("bf16", "fp8")),
    ("h200-sxm-141gb", "H200", ("fp8",)),
])
def test_measured_entries_are_the_table(acc, device, precisions):
    bf16, fp8 = MAMF[device]
    want = {"bf16": bf16, "fp8": fp8}
    own = ACC[acc].mamf_flop_per_s
    assert set(own) == set(precisions)
    for p in precisions:
        assert own[p] == pytest.approx(want[p] * T, rel=1e-9)


@pytest.mark.parametrize("acc, ref_acc, device", [
    ("h100-sxm-96gb-hbm2e", "h100-sxm-80gb", "H100 SXM"),  # TorchTitan's 500 W H100
    ("gb300", "b300", "B300"),                             # Blackwell Ultra at 1,400 W
])
def test_derived_entries_follow_the_power_rule(acc, ref_acc, device):
    bf16, fp8 = MAMF[device]
    p, p_ref = ACC[acc].tdp_w, ACC[ref_acc].tdp_w
    own = ACC[acc].mamf_flop_per_s
    for prec, ref in (("bf16", bf16), ("fp8", fp8)):
        want = ref * T * (p / p_ref) ** timing.MAMF_POWER_EXPONENT
        assert own[prec] == pytest.approx(want, rel=2e-4)  # stored to 0.1 TF
    assert "mamf_flop_per_s" in ACC[acc].uncertain


def test_500w_h100_by_hand():
    """794.5 TF × (500/700)^0.237 = 794.5 × 0.92341 = 733.6 TF (by hand: ln(5/7) = −0.33647,
    × 0.237 = −0.079744, exp = 0.92335)."""
    assert ACC["h100-sxm-96gb-hbm2e"].mamf_flop_per_s["bf16"] == pytest.approx(733.6e12, abs=0.06e12)


def _accel_dict(key):
    d = ACC[key].model_dump(mode="json")
    d["sources"]["mamf_flop_per_s"] = "a test value"
    return d


def test_schema_refuses_mamf_above_peak_or_without_a_peak():
    d = _accel_dict("b200")
    d["mamf_flop_per_s"] = {"bf16": 3.0e15}
    with pytest.raises(ValueError, match=r"mamf_flop_per_s\['bf16'\].*exceeds the peak"):
        Accelerator.model_validate(d)
    d = _accel_dict("a100-sxm-80gb")
    d["mamf_flop_per_s"] = {"fp8": 2.0e14}
    with pytest.raises(ValueError, match="mamf_flop_per_s has 'fp8' but peak_flop_per_s has no 'fp8'"):
        Accelerator.model_validate(d)


def _terms(system, precision="bf16", n_gpus=8):
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["cluster"] = {"system": system, "n_gpus": n_gpus}
    d["training"]["global_batch_size"] = 64
    d["training"]["precision"] = precision
    d["parallelism"].update(tp=1, pp=1, cp=1, dp=None, zero_stage=1)
    b = batch.from_scenarios([planner.Scenario.model_validate(d)])
    b.update(model_stats.stats(b))
    return b, timing._terms(b)


def _scale(key):
    """The fitted scale of ``key`` as docs/timing.md states the rule: the family's own fit, else
    the ``default``; a Blackwell FP8 (and FP4) GEMM without its own fit takes its 16-bit scale
    × Hopper's FP8 / 16-bit ratio (0.915 × 0.82 / 0.93 since review 20's refit; review 19)."""
    sc = CAL["gemm_eff_scale"]["value"]
    if key in sc:
        return sc[key]
    if key == "blackwell_fp8":
        return sc.get("blackwell_16bit", sc["default"]) * sc["hopper_fp8"] / sc["hopper_16bit"]
    return sc["default"]


def test_blackwell_fp8_scale_is_hoppers_ratio_of_its_16bit_one():
    """Hand value from the data file: 0.90 × 0.80 / 0.91 = 0.791209 (docs/timing.md, review 19; session
    37's refit; 0.915 × 0.82 / 0.93 = 0.80677 before it, 0.905 × 0.82 / 0.91 = 0.81555 before review 20's);
    the AMD and Intel families keep their 16-bit scale for FP8 (their stacks were not measured)."""
    s16, s8 = timing._family_scales(CAL_VALUES)
    fam = list(timing.FAMILIES)
    assert CAL_VALUES["gemm_eff_scale"]["default"] == 0.90  # the documented value the hand figure uses
    assert s8[fam.index("blackwell")] == pytest.approx(0.791209, abs=5e-7)
    assert s8[fam.index("hopper")] == 0.80 and s16[fam.index("hopper")] == 0.91
    for f in ("cdna3", "cdna4", "gaudi2", "gaudi3"):
        assert s8[fam.index(f)] == s16[fam.index(f)] == 0.90, f
    assert timing.fp8_scale_ratio({"gemm_eff_scale": {"default": 0.9}}) == 1.0


@pytest.mark.parametrize("system, acc, precision, scale_key", [
    ("gb200-nvl72", "gb200", "bf16", "blackwell_16bit"),
    ("gb200-nvl72", "gb200", "fp8", "blackwell_fp8"),
    ("hgx-h100-96gb-hbm2e", "h100-sxm-96gb-hbm2e", "bf16", "hopper_16bit"),
    ("dgx-h200", "h200-sxm-141gb", "fp8", "hopper_fp8"),
])
def test_own_mamf_sets_eff_max(system, acc, precision, scale_key):
    """eff_max = the part's MAMF / its peak × the family's fitted scale (docs/timing.md)."""
    _, t = _terms(system, precision)
    a = ACC[acc]
    want = a.mamf_flop_per_s[precision] / a.peak_flop_per_s[precision] * _scale(scale_key)
    assert float(np.asarray(t["_eff_gemm_max"]).reshape(-1)[0]) == pytest.approx(want, rel=1e-12)


def test_without_own_mamf_the_family_fraction_stays():
    """H200 BF16 (no BF16 MAMF published) and H100 SXM: Hopper's 0.803 × the fitted scale."""
    want = CAL["mamf_frac"]["value"]["hopper"]["16bit"] * _scale("hopper_16bit")
    for system in ("dgx-h200", "dgx-h100"):
        _, t = _terms(system, "bf16")
        assert float(np.asarray(t["_eff_gemm_max"]).reshape(-1)[0]) == pytest.approx(want, rel=1e-12)


def test_the_500w_limit_slows_a_compute_bound_step():
    """Same peaks and network; only the MAMF (and HBM) differ: the GEMM-bound compute of a
    large-batch 8B step on the 500 W part takes at least 1/0.9234 − 3 % longer than on 700 W."""
    _, t700 = _terms("dgx-h100")
    _, t500 = _terms("hgx-h100-96gb-hbm2e")
    ratio = float(np.asarray(t500["t_compute_s"]).reshape(-1)[0] / np.asarray(t700["t_compute_s"]).reshape(-1)[0])
    assert 1.0 / 0.9234 * 0.97 < ratio < 1.25


def test_rows_with_and_without_own_mamf_in_one_batch():
    """A mixed batch gives each row exactly the number of its own one-row batch."""
    rows = []
    for system in ("dgx-h100", "gb200-nvl72", "hgx-h100-96gb-hbm2e"):
        d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
        d["cluster"] = {"system": system, "n_gpus": 8}
        d["training"]["global_batch_size"] = 64
        d["parallelism"].update(tp=1, pp=1, cp=1, dp=None, zero_stage=1)
        rows.append(planner.Scenario.model_validate(d))
    _mixed_equals_single(rows)


def _mixed_equals_single(rows) -> np.ndarray:
    """Step times of a mixed batch; asserts each equals its own one-row batch's."""
    b = batch.from_scenarios(rows)
    b.update(model_stats.stats(b))
    mixed = timing.stage(b)["step_time_s"]
    for i, s in enumerate(rows):
        one = batch.from_scenarios([s])
        one.update(model_stats.stats(one))
        assert mixed[i] == pytest.approx(float(timing.stage(one)["step_time_s"][0]), rel=1e-12)
    return mixed


# --- cluster.overrides.power_limit_w: the power rule on any part --------------------------------

def _scenario(system="dgx-h100", power_limit_w=None, n_gpus=64):
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["cluster"] = {"system": system, "n_gpus": n_gpus}
    if power_limit_w is not None:
        d["cluster"]["overrides"] = {"power_limit_w": power_limit_w}
    return d


def _eff_max(d):
    b = batch.from_scenarios([planner.Scenario.model_validate(d)])
    b.update(model_stats.stats(b))
    return float(np.asarray(timing._terms(b)["_eff_gemm_max"]).reshape(-1)[0])


def test_power_limit_scales_eff_max_by_the_rule():
    """H100 SXM (700 W) at 500 W: 0.803 × 0.91 × (500/700)^0.237 (hand: 0.73073 × 0.92335 =
    0.67472 with session 37's refit scale 0.91, as before review 20's; 0.68955 with the scale 0.93
    between them), the same ceiling as the catalogue's 500 W part (same rule, stored to 0.1 TF)."""
    want = CAL["mamf_frac"]["value"]["hopper"]["16bit"] * _scale("hopper_16bit") * (500 / 700) ** 0.237
    assert want == pytest.approx(0.67472, abs=2e-5)
    assert _eff_max(_scenario(power_limit_w=500)) == pytest.approx(want, rel=1e-12)
    assert _eff_max(_scenario("hgx-h100-96gb-hbm2e")) == pytest.approx(want, rel=2e-4)


def test_power_limit_at_the_tdp_is_no_limit():
    a = planner.evaluate(_scenario()).results
    b = planner.evaluate(_scenario(power_limit_w=700)).results
    for k, v in a.items():
        if isinstance(v, float) and np.isfinite(v):
            assert b[k] == v, k


def test_power_limit_lowers_node_power_by_the_saved_watts():
    """DGX H100: 10,200 W per node; at 500 W per GPU the node draws 10,200 − 8 × 200 = 8,600 W
    (cost.energy_mwh: n_nodes · node W · utilisation · PUE · hours / 1e6)."""
    d = _scenario(power_limit_w=500)
    r = planner.evaluate(d).results
    s = planner.Scenario.model_validate(d)
    hours = r["time_to_train_days"] * 24.0
    want = 8 * 8600.0 * s.cluster.utilisation_power_frac * s.cluster.pue * hours / 1e6
    assert r["energy_mwh"] == pytest.approx(want, rel=1e-12)


def test_power_limit_slows_the_step_and_explains_it():
    full = planner.evaluate(_scenario())
    capped = planner.evaluate(_scenario(power_limit_w=500))
    assert capped.results["step_time_s"] > full.results["step_time_s"]
    assert capped.results["t_compute_s"] / full.results["t_compute_s"] < 1 / 0.92335 + 1e-9
    assert "power limit (500 W / TDP 700 W)^0.237 = × 0.9234" in capped.explain["t_compute_s"]


@pytest.mark.parametrize("limit", [800, 174, 1e-9, -5])
def test_power_limit_outside_quarter_tdp_to_tdp_is_refused_naming_the_field(limit):
    """H100 SXM: allowed 0.25 × 700 = 175 W to 700 W."""
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(_scenario(power_limit_w=limit))
    assert "power_limit_w" in str(e.value)
    if limit > 0:
        assert f"cluster.overrides.power_limit_w = {limit:g} is outside" in str(e.value)
        assert "allowed: 175 <= power_limit_w <= 700 W" in str(e.value)


def test_power_limit_note_and_extrapolation_warning():
    notes = " ".join(planner.evaluate(_scenario(power_limit_w=600)).notes)
    assert "Power limit 600 W of a 700 W part" in notes and "extrapolation" not in notes
    notes = " ".join(planner.evaluate(_scenario(power_limit_w=350)).notes)
    assert "below 0.7·TDP" in notes and "extrapolation" in notes


def test_power_limit_scales_the_roofline_ridge_too():
    """q = k·R·bytes/2 with R = peak·clock / HBM bw: memory-bound GEMMs keep their speed."""
    b700 = _terms("dgx-h100")[1]["_q"]
    d = _scenario(power_limit_w=500)
    b = batch.from_scenarios([planner.Scenario.model_validate(d)])
    b.update(model_stats.stats(b))
    q500 = timing._terms(b)["_q"]
    assert float(np.asarray(q500).reshape(-1)[0] / np.asarray(b700).reshape(-1)[0]) == pytest.approx(
        (500 / 700) ** 0.237, rel=1e-12)


def test_power_limit_with_an_accelerator_override_keeps_node_power_positive():
    """DGX A100 node (6,500 W) with a B300 (1,100 W TDP) at 300 W. Since review 16c the B300's TDP
    is swapped into the node first: 6,500 − 8 × 400 (the A100s) + 8 × 1,100 = 12,100 W; the GPUs'
    share min(8 × 1,100, 12,100) = 8,800 W then scales by 300/1,100: 12,100 − 8,800 + 2,400 =
    5,700 W (until then 6,500 × 300/1,100 = 1,772.7 W, the A100 node's power taken as the B300s')."""
    d = _scenario("dgx-a100-80gb", power_limit_w=300)
    d["cluster"]["accelerator"] = "b300"
    s = planner.Scenario.model_validate(d)
    b = batch.from_scenarios([s])
    assert float(b["node_power_w"][0]) == pytest.approx(6500 - 8 * 400 + 8 * 1100 - 8 * 1100 + 8 * 300, rel=1e-12)
    assert float(b["node_power_w"][0]) > 0


def test_fp4_takes_the_parts_fp8_mamf():
    """GB200 lists BF16 and FP8 MAMF only: FP4 GEMMs at its FP8 fraction 3,615.6 / 5,000
    (the family tables give FP4 the FP8 efficiency too), never above FP8's."""
    _, t8 = _terms("gb200-nvl72", "fp8")
    _, t4 = _terms("gb200-nvl72", "fp4")
    e8 = float(np.asarray(t8["_eff_gemm_max"]).reshape(-1)[0])
    assert float(np.asarray(t4["_eff_gemm_max"]).reshape(-1)[0]) == pytest.approx(e8, rel=1e-12)
    assert e8 == pytest.approx(3615.6 / 5000 * _scale("blackwell_fp8"), rel=1e-12)


def test_power_limit_share_link_round_trip_and_tampering():
    from planner import share
    d = _scenario(power_limit_w=450)
    params = share.scenario_to_params(d, preset="llama3-8b-h100-64")
    assert params["pwr"] == "450"
    back, warnings = share.params_to_scenario(params)
    assert warnings == [] and back["cluster"]["overrides"]["power_limit_w"] == 450
    for bad in ("-5", "abc", "0"):
        back, warnings = share.params_to_scenario({**params, "pwr": bad})
        assert any(w.startswith("pwr=") for w in warnings), (bad, warnings)
        assert back["cluster"]["n_gpus"] == 64
    for bad in ("900", "100"):  # above the H100's 700 W; below its 175 W floor
        back, warnings = share.params_to_scenario({**params, "pwr": bad})
        assert any(w.startswith("pwr") and "power_limit_w" in w for w in warnings), warnings
        assert back["cluster"]["n_gpus"] == 64
        planner.Scenario.model_validate(back)


def test_power_limit_in_a_mixed_batch():
    rows = [planner.Scenario.model_validate(_scenario(power_limit_w=p)) for p in (None, 500, 350)]
    mixed = _mixed_equals_single(rows)
    assert mixed[0] < mixed[1] < mixed[2]


def test_exports_name_the_power_limit():
    from planner import export
    d = _scenario(power_limit_w=500)
    for fn in (export.megatron_args, export.torchtitan_toml, export.deepspeed_config):
        assert any("nvidia-smi -pl 500" in n for n in fn(d).notes), fn.__name__
    for fn in (export.megatron_args, export.torchtitan_toml):  # JSON has no comments
        assert "# note: GPU power limit 500 W" in fn(d).text, fn.__name__
    assert not any("nvidia-smi" in n for n in export.megatron_args(_scenario()).notes)


def test_energy_explain_names_the_limit():
    r = planner.evaluate(_scenario(power_limit_w=500))
    assert "8600 W (GPUs' share at 500 W of 700 W TDP)" in r.explain["energy_mwh"]
