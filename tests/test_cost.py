"""Cost stage (DESIGN §4.5): hand calculations from the stated formulas.

wall = tokens_total / tokens_per_s / goodput; GPU-hours = (n_gpus + hot spare nodes × GPUs per
node) × wall_h (the spares are reserved, so paid, for the whole run); dollars = GPU-hours ×
price; energy = n_nodes × node_power_w × utilisation_power_frac × pue × wall_h / 1e6 [MWh].
Throughput of Llama 3 405B from its Table 4 (400 TFLOP/s/GPU on 16,384 H100, 6N FLOPs/token).
"""

from __future__ import annotations

import numpy as np
import pytest

import planner
from planner import batch as B
from planner import cost


def _b():
    b = B.from_scenarios([planner.load_preset("llama3-405b-h100-16k")])
    b["tokens_per_s"] = np.array([16_384 * 400e12 / (6 * 405e9)])  # 2.697e6 tok/s
    b["goodput"] = np.array([0.9])
    return b


def test_hand_computed_405b():
    b = _b()
    out = cost.stage(b)
    wall_s = 15.6e12 / 2.6972e6 / 0.9  # 6.4265e6 s
    assert out["time_to_train_days"][0] == pytest.approx(wall_s / 86400, rel=1e-4)  # 74.4 d
    # the preset's 16 hot spare nodes of 8 GPUs are paid as well: 16,384 + 128 = 16,512 GPUs
    gpu_h = 16_512 * wall_s / 3600
    assert out["gpu_hours"][0] == pytest.approx(gpu_h, rel=1e-4)
    assert out["cost_usd"][0] == pytest.approx(gpu_h * b["price_per_gpu_hour_usd"][0], rel=1e-4)
    # 2,048 nodes × 10,200 W (DGX H100) × utilisation × PUE × wall_h / 1e6
    e = 2048 * 10_200 * b["utilisation_power_frac"][0] * b["pue"][0] * wall_s / 3600 / 1e6
    assert out["energy_mwh"][0] == pytest.approx(e, rel=1e-4)


def test_zero_goodput_is_infinite_time():
    b = _b()
    b["goodput"] = np.array([0.0])
    out = cost.stage(b)
    assert np.isinf(out["time_to_train_days"][0]) and np.isinf(out["cost_usd"][0])


def test_zero_goodput_says_why():
    from planner.engine import run_batch

    b = B.from_scenarios([planner.load_preset("default")])
    for k in ("pfs", "object_store", "local_nvme"):
        b[f"ckpt_{k}_enabled"] = np.array([False])  # host memory alone: lost with a gpu/node
    out = run_batch(b)
    row = {k: (v[0].item() if hasattr(v[0], "item") else v[0]) for k, v in out.items()}
    assert row["goodput"] == 0.0 and np.isinf(row["time_to_train_days"]) and np.isinf(row["cost_usd"])
    why = " ".join(cost.notes(row))
    # the cost note points to reliability's goodput-0 note, which gives the reason (session 41: each
    # repeated it whole, seven times in the CLI's output); the explanation keeps its first clause
    assert "are infinite (inf in the CLI table" in why and "the note 'Goodput is 0' gives why" in why
    from planner.reliability import zero_goodput_reason
    assert "survives" in zero_goodput_reason(row) and "gpu" in zero_goodput_reason(row)
    assert "survives" in cost.explain(row)["cost_usd"] and "gpu" in cost.explain(row)["cost_usd"]


def test_missing_timing_gives_nan():
    b = _b()
    del b["tokens_per_s"]
    out = cost.stage(b)
    assert np.isnan(out["cost_usd"][0])


def test_energy_fallback_to_tdp():
    # 1 node, 8 × 700 W, util 1, PUE 1, 1000 h -> 5.6 MWh
    assert float(cost.energy_mwh(1, 0.0, 1.0, 1.0, 3.6e6, gpus_per_node=8, tdp_w=700)) == pytest.approx(5.6)


def test_pipeline_end_to_end():
    from planner.engine import run_batch

    r = {k: v[0] for k, v in run_batch(B.from_scenarios([planner.load_preset("default")])).items()}
    assert r["time_to_train_days"] > 0 and np.isfinite(r["cost_usd"])
    assert r["gpu_hours"] == pytest.approx(1024 * r["time_to_train_days"] * 24)  # default: 1,024 GPUs


def test_no_power_drawn_is_no_energy_even_for_a_run_that_never_ends():
    # 0 W for an infinite wall time: 0 MWh, without a 0 · inf NaN or warning (found by review);
    # and the formula otherwise: 2 nodes x 10 kW x 0.8 x PUE 1.2 x 10 h = 192 kWh = 0.192 MWh
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e = cost.energy_mwh(np.array([2, 2]), np.array([1e4, 1e4]), np.array([0.0, 0.8]), np.array([1.2, 1.2]),
                            np.array([np.inf, 36000.0]))
    assert e[0] == 0.0
    assert e[1] == pytest.approx(0.192, rel=1e-12)
    # an unknown node power stays unknown (NaN), not 0
    assert np.isnan(cost.energy_mwh(2, np.nan, 0.8, 1.2, 36000.0))


def test_hot_spares_are_paid_but_draw_no_counted_power():
    """Found by review: spares were free, so 1,000,000 spare nodes cost the same as 16 and any
    cost ranking favoured more spares. Hand calculation with the 405B preset's numbers: the
    same wall time, (16,384 + s·8) GPUs paid; energy counts the job's 2,048 nodes only."""
    b = _b()
    wall_h = 15.6e12 / 2.6972e6 / 0.9 / 3600
    for spares in (0, 16, 1000):
        b["hot_spare_nodes"] = np.array([spares])
        out = cost.stage(b)
        assert out["gpu_hours"][0] == pytest.approx((16_384 + 8 * spares) * wall_h, rel=1e-4)
        assert out["cost_usd"][0] == pytest.approx(out["gpu_hours"][0] * b["price_per_gpu_hour_usd"][0], rel=1e-12)
        e = 2048 * 10_200 * b["utilisation_power_frac"][0] * b["pue"][0] * wall_h / 1e6
        assert out["energy_mwh"][0] == pytest.approx(e, rel=1e-4)


def test_spares_cost_shows_in_the_explain_and_notes():
    r = planner.evaluate(planner.load_preset("llama3-405b-h100-16k"))
    assert "(16384 GPUs + 16 hot spare nodes × 8) = 16512 GPUs" in r.explain["gpu_hours"]
    assert any(n.startswith("Hot spare nodes are paid") for n in r.notes)
    r0 = planner.evaluate(planner.load_preset("default"))  # no spares: no such note
    assert not any(n.startswith("Hot spare nodes are paid") for n in r0.notes)


def test_a_partly_used_node_is_charged_its_gpus_share_of_energy():
    """Found by review: one GPU of a DGX H100 was charged the whole 10,200 W node (9.8 kWh per
    GPU-hour against 1.2 kWh on a full node). Energy = n_gpus/gpus_per_node × node power ×
    utilisation × PUE × hours: 1/8 × 10,200 W × 0.8 × 1.2 × wall_h / 1e6 MWh; a whole node is
    unchanged (8/8)."""
    b = _b()
    wall_h = 15.6e12 / 2.6972e6 / 0.9 / 3600
    for n_gpus, n_nodes in ((1, 1), (8, 1), (12, 2)):
        b["n_gpus"], b["n_nodes"] = np.array([n_gpus]), np.array([n_nodes])
        out = cost.stage(b)
        e = n_gpus / 8 * 10_200 * b["utilisation_power_frac"][0] * b["pue"][0] * wall_h / 1e6
        assert out["energy_mwh"][0] == pytest.approx(e, rel=1e-4)
