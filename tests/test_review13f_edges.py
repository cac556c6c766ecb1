"""Review 13f: the engine at the edges of what the schema accepts.

Scenarios built from the presets with fields at and near their allowed extremes; each test
states what must hold there (no RuntimeWarning escaping, inf only where the run never finishes,
a refusal that names the field and its whole range). Expected values come from the stated
bounds and hand calculations, never from the engine's own earlier output.
"""

from __future__ import annotations

import math
import warnings

import pytest

import planner
from planner import schema
from planner.schema import InputError


def _default() -> dict:
    return planner.load_preset("default").to_json_dict()


def _one_class_profile(rate_per_job_h: float, restart_s: float) -> dict:
    """A failure profile with a single job-wide class ('cluster', which every tier survives)."""
    return {"name": "one class", "reference": "test", "source": "test",
            "classes": [{"class": "cluster", "rate": rate_per_job_h, "per": "job_hour",
                         "restart_s": restart_s, "repair_s": 0.0, "source": "test"}]}


def _strict_evaluate(d):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning escaping to the user fails the test
        return planner.evaluate(d)


# ---------------------------------------------------------------------------------------------
# cost: a goodput above 0 but near 1e-300
# ---------------------------------------------------------------------------------------------


def test_cost_of_a_tiny_goodput_has_no_spurious_overflow():
    """One failure an hour with a restart of 690 hours (2.484e6 s, within RECOVERY_S_MAX): the
    renewal goodput is about e^-690 ≈ 5e-300 (the recovery factor e^(λR)), above 0. The wall time
    tokens / tokens_per_s / goodput is then ~4e306 s — a float — and so are the GPU-hours
    1,024 · wall / 3600 ≈ 1e306 and the energy; they must come out finite and consistent with the
    formulas (docs/reliability.md, Cost), with no RuntimeWarning (1,024 · wall alone would
    overflow). (Until 2026-12-02: 710 hours, the old recovery factor held near 1e-300.)

    Found by review: ``n_gpus · wall`` was formed first and overflowed (1,024 × 1.7e307 >
    1.8e308): a RuntimeWarning, ``gpu_hours`` = ``cost_usd`` = ``energy_mwh`` = inf beside a finite
    ``time_to_train_days`` of 2e302, and the explain said 'goodput is 0'."""
    d = _default()
    d["reliability"]["profile"] = _one_class_profile(1.0, 2.484e6)
    r = _strict_evaluate(d).results
    g, rate = r["goodput"], r["tokens_per_s"]
    assert 0.0 < g < 1e-290
    wall_s = 1.5e13 / rate / g  # the preset's 15T tokens
    assert math.isfinite(wall_s)
    assert r["time_to_train_days"] == pytest.approx(wall_s / 86_400.0, rel=1e-12)
    assert r["gpu_hours"] == pytest.approx(1024.0 * (wall_s / 3600.0), rel=1e-12)
    assert math.isfinite(r["gpu_hours"]) and math.isfinite(r["cost_usd"]) and math.isfinite(r["energy_mwh"])
    price = planner.catalog.resolve_accelerator("h100-sxm-80gb").price_per_gpu_hour_usd
    assert r["cost_usd"] == pytest.approx(1024.0 * (wall_s / 3600.0) * price, rel=1e-12)
    # 128 DGX H100 nodes × node power × 0.8 utilisation × PUE 1.2 × wall hours / 1e6
    node_w = planner.catalog.resolve_system("dgx-h100").node_power_w
    assert r["energy_mwh"] == pytest.approx(128.0 * node_w * 0.8 * 1.2 * (wall_s / 3600.0 / 1e6), rel=1e-12)


def test_cost_beyond_the_float_range_is_inf_in_all_four_and_says_why():
    """The same run at the highest price the schema takes (1e6 USD per GPU-hour): the cost,
    ~5e306 GPU-h × 1e6, is beyond the largest float (1.8e308). The run never finishes in
    practice, so time, GPU-hours, cost and energy are all inf (not a finite time beside an
    infinite cost), without a RuntimeWarning, and the explain and notes name the goodput above 0
    instead of saying it is 0."""
    d = _default()
    d["reliability"]["profile"] = _one_class_profile(1.0, 2.484e6)
    d["cluster"]["overrides"]["price_per_gpu_hour_usd"] = 1e6
    rep = _strict_evaluate(d)
    r = rep.results
    assert r["goodput"] > 0.0
    for k in ("time_to_train_days", "gpu_hours", "cost_usd", "energy_mwh"):
        assert r[k] == math.inf, k
    for k in ("time_to_train_days", "cost_usd"):
        assert "goodput is 0" not in rep.explain[k]
        assert "largest float" in rep.explain[k]
    note = next(n for n in rep.notes if n.startswith("Time, GPU-hours, cost and energy are infinite"))
    assert "above 0" in note and "nan" not in note.lower().split()


def test_cost_tiny_goodput_through_evaluate_many_matches_evaluate():
    """The batch path (evaluate_many) gives the same cost columns as evaluate, without warnings."""
    d = _default()
    d["reliability"]["profile"] = _one_class_profile(1.0, 2.484e6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = planner.evaluate_many([d, _default()])
    r = _strict_evaluate(d).results
    for k in ("time_to_train_days", "gpu_hours", "cost_usd", "energy_mwh"):
        assert t[k].iloc[0] == pytest.approx(r[k], rel=1e-12)
        assert math.isfinite(t[k].iloc[1])


# ---------------------------------------------------------------------------------------------
# schema: pipeline depth and virtual stages the engine can hold
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("field, value, allowed", [
    ("pp", schema.PP_MAX + 1, "allowed 1 to 100,000"),
    ("pp", 10_000_000, "allowed 1 to 100,000"),
    ("vpp", schema.VPP_MAX + 1, "allowed 1 to 1,000"),
    ("vpp", 5_000_000, "allowed 1 to 1,000"),
])
def test_pipeline_depth_beyond_the_engine_is_refused_with_its_range(field, value, allowed):
    """pp and vpp up to 10,000,000 were admitted (pp·vpp <= n_layers <= 1e7), but evaluate lists
    every pipeline stage's memory (pp = 1e6: 4.3 s and 1.7 GB, so 1e7 ~17 GB) and counts an MoE
    model's dense layers per rank over its virtual stages (vpp = 5e6: ~70 s). Refused, naming the
    field and the range (schema.PP_MAX, VPP_MAX: the Plan page's widget bounds)."""
    d = _default()
    d["parallelism"][field] = value
    with pytest.raises(InputError) as e:
        planner.evaluate(d)
    assert f"parallelism.{field}: {allowed} (got {value})" in str(e.value)


def test_deepest_pipeline_allowed_evaluates():
    """pp = PP_MAX (100,000 stages of one layer of a tiny model, one GPU each) is evaluated: one
    memory entry per stage, every layer on its own stage, finite step time."""
    n = schema.PP_MAX
    d = _default()
    d["model"] = {"name": "deep", "n_layers": n, "hidden_size": 64, "n_heads": 4,
                  "ffn_hidden_size": 64, "vocab_size": 64}
    d["parallelism"].update(tp=1, pp=n, dp=None, cp=1, vpp=1, schedule="1f1b")
    d["cluster"]["n_gpus"] = n
    d["training"].update(seq_len=16, global_batch_size=1)
    rep = _strict_evaluate(d)
    assert len(rep.stages) == n
    assert math.isfinite(rep.results["step_time_s"]) and rep.results["step_time_s"] > 0


def test_most_virtual_stages_allowed_with_moe_dense_layers_evaluates():
    """vpp = VPP_MAX on pp 2 of a 2,000-layer MoE model whose first layer is dense: rank 0 holds
    1,000 layers (one per virtual stage), the dense one among them; the per-rank dense count runs
    over the 1,000 virtual stages and gives 1 dense layer on rank 0 in all."""
    v = schema.VPP_MAX
    d = _default()
    d["model"] = {"name": "moe", "n_layers": 2 * v, "hidden_size": 64, "n_heads": 4,
                  "ffn_hidden_size": 64, "vocab_size": 64,
                  "moe": {"n_experts": 2, "top_k": 1, "expert_ffn_hidden_size": 64, "first_dense_layers": 1}}
    d["parallelism"].update(tp=1, pp=2, dp=None, cp=1, vpp=v, schedule="interleaved")
    d["cluster"]["n_gpus"] = 2
    d["training"].update(seq_len=16, global_batch_size=2)
    r = _strict_evaluate(d).results
    assert r["n_dense_layers"] == 1.0 and r["n_moe_layers"] == 2 * v - 1
    assert math.isfinite(r["step_time_s"])


# ---------------------------------------------------------------------------------------------
# schema: refusals name the whole range
# ---------------------------------------------------------------------------------------------


def _refusal(d) -> str:
    with pytest.raises(InputError) as e:
        planner.evaluate(d)
    return str(e.value)


@pytest.mark.parametrize("value", [0.0, -1.0, "inf", "nan"])
def test_tokens_total_refusal_names_both_bounds(value):
    """training.tokens_total is at least 1e6 and at most 1e16 (TOKENS_TOTAL_MIN, TOKENS_TOTAL_MAX,
    the bounds of the sidebar's box since review 42a); 0, a negative value, inf and NaN said only
    "greater than 0" / "a finite number" without the 1e16 ceiling (found by review)."""
    d = _default()
    d["training"]["tokens_total"] = value
    msg = _refusal(d)
    assert msg.startswith("training.tokens_total: ")
    assert "allowed 1,000,000 to 1e+16" in msg


@pytest.mark.parametrize("value", ["inf", "nan", float("inf")])
def test_non_finite_value_of_a_ranged_field_names_the_range(value):
    """cluster.pue is 1 to 3: inf or NaN said "input should be less than or equal to 3" only."""
    d = _default()
    d["cluster"]["pue"] = value
    msg = _refusal(d)
    assert msg.startswith("cluster.pue: ") and "allowed 1 to 3" in msg


def test_open_bound_is_named_open_whichever_side_is_crossed():
    """model.dropout is 0 <= p < 1: a value below 0 crossed the closed bound, yet 1 is still
    excluded (the message said "allowed 0 to 1")."""
    d = _default()
    m = planner.catalog.resolve_model("llama3-70b").model_dump(mode="json")
    m["dropout"] = -0.5
    d["model"] = m
    assert "model.dropout: allowed 0, up to less than 1 (got -0.5)" in _refusal(d)


@pytest.mark.parametrize("value", [0.0, -5.0])
def test_power_limit_at_or_below_zero_names_the_parts_range(value):
    """cluster.overrides.power_limit_w is ranged against the part: 0.25·TDP to TDP, 175 to 700 W on
    the default preset's H100 SXM (TDP 700 W). 0 said "greater than 0", and 1 W then the real
    range; now 0 and below get the part's range at once."""
    d = _default()
    d["cluster"]["overrides"]["power_limit_w"] = value
    msg = _refusal(d)
    assert msg.startswith("cluster.overrides.power_limit_w = ")
    assert "175 <= power_limit_w <= 700 W" in msg


def test_attention_core_of_fp32_and_tf32_runs_at_their_own_peak():
    """Found by review: the attention core (and the router) ran at the 16-bit tensor peak whatever
    the precision, so an fp32 MPT-7B at seq 65,536 reached 2.31 × its fp32 peak (mfu_precision_peak
    2.31; TF32 1.03). The core's efficiency is the same fraction of the peak in use, so its time
    scales with peak16 / peak of the precision (A100: 312 / 19.5 TFLOP/s fp32, 312 / 156 TF32,
    NVIDIA A100 datasheet), and no precision can exceed its own peak."""
    import re

    import planner

    def core_ms(prec):
        d = planner.load_preset("mpt-7b-a100-8").to_json_dict()
        d["training"].update(precision=prec, seq_len=65_536)
        rep = planner.evaluate(d)
        assert rep.results["mfu_precision_peak"] <= 1.0, (prec, rep.results["mfu_precision_peak"])
        ms = float(re.search(r"attn core ([\d.e+]+) ms", rep.explain["t_compute_s"]).group(1))
        return ms, rep.results

    bf, r16 = core_ms("bf16")
    # Review 17c: the head-dim knee (A100: 32, exp vs 16-bit matmul throughput) scales with the
    # core's own peak, so the fp32 knee is 32 × 19.5/312 = 2 and the TF32 one 16: at d_h 128 the
    # ratio is peak16/peak × (128/(128+32)) / (128/(128+knee)).
    def knee_factor(knee):
        return (128.0 / 160.0) / (128.0 / (128.0 + knee))

    ms, _ = core_ms("tf32")
    assert ms == pytest.approx(bf * 312.0 / 156.0 * knee_factor(16.0), rel=0.01), ("tf32", ms, bf)
    # fp32 (session 37): at its own rate, bf × 312/19.5 × knee_factor(2), with its backward (2.5·128 +
    # 2)/(128 + 2) = 2.477 × the forward, the flash core's step compute (1 + 2.477) × that would exceed
    # the materialised scores' (1 + 2) × theirs, so it is costed as theirs (review 17c's invariant, on
    # rows below the 16-bit peak since review 37): a core at least the flash rate's
    flash_rate = bf * 312.0 / 19.5 * knee_factor(2.0)
    d = planner.load_preset("mpt-7b-a100-8").to_json_dict()
    d["training"].update(precision="fp32", seq_len=65_536)
    e = planner.evaluate(d).explain["t_compute_s"]
    assert "costed as the materialised scores' core" in e
    ms, _ = core_ms("fp32")
    assert flash_rate * 0.99 <= ms <= flash_rate * (1 + 2.477) / 3.0 * 1.01, (ms, flash_rate)


def test_monte_carlo_on_a_system_without_local_nvme_raises_no_warning():
    """Found by review: `planner simulate --preset default --set cluster.system=gh200-quad` printed
    "RuntimeWarning: invalid value encountered in divide": the local-NVMe tier a GH200 node lacks
    has an infinite save / stall (inf / inf) before the mask took it out. The run is the same as
    with the tier disabled: no warning, every trial finishes."""
    d = planner.load_preset("default").to_json_dict()
    d["cluster"]["system"] = "gh200-quad"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mc = planner.simulate(d, n_trials=200, seed=0)
    assert mc["finished"].all()
