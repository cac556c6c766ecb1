"""Review 16c: time, GPU-hours, cost and energy as a buyer checks them (planner/cost.py).

Expected values come from hand calculations with the formulas of docs/reliability.md §Cost and
from the price figures of ../shared/reference/hardware.md §4 (hardware.csv), never from the
code's own output.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import planner
from planner import catalog, cost
from planner.schema import InputError


def _row(**kw) -> dict:
    """A result row with the columns cost.notes / cost.explain read (default preset's hardware:
    DGX H100, 8 GPUs per node, 10.2 kW, $2.155)."""
    r = {"n_gpus": 1024, "gpus_per_node": 8, "nvlink_domain_size": 8, "hot_spare_nodes": 0,
         "price_per_gpu_hour_usd": 2.155, "tokens_per_s": 1e6, "goodput": 0.9, "tokens_total": 1e12,
         "node_power_w": 10_200.0, "utilisation_power_frac": 0.8, "pue": 1.2, "tdp_w": 700.0,
         "power_limit_w": 700.0}
    r.update(kw)
    wall_s = r["tokens_total"] / r["tokens_per_s"] / r["goodput"]
    r["time_to_train_days"] = wall_s / 86_400
    r["gpu_hours"] = r["n_gpus"] * wall_s / 3600
    r["cost_usd"] = r["gpu_hours"] * r["price_per_gpu_hour_usd"]
    r["energy_mwh"] = r["n_gpus"] / 8 * 10_200 * 0.8 * 1.2 * wall_s / 3600 / 1e6
    return r


def _price_note(notes: list[str]) -> str:
    return next(n for n in notes if n.startswith("Price per GPU-hour"))


# --- the price note: whose price it is ------------------------------------------------------------

def test_price_note_does_not_call_an_override_the_catalogues_figure():
    """Found by review 16c: the DeepSeek-V3 preset charges its report's own $2 per H800 GPU-hour
    (cluster.overrides; the catalogue's H800 figure is $2.155), but the note said "Price per
    GPU-hour: the catalogue's figure for the accelerator". The note now states the price charged
    and does not claim the catalogue as its origin."""
    rep = planner.evaluate(planner.load_preset("deepseek-v3-h800-2048"))
    assert rep.scenario["cluster"]["overrides"]["price_per_gpu_hour_usd"] == 2.0
    assert catalog.resolve_accelerator("h800-sxm-80gb").price_per_gpu_hour_usd == 2.155
    note = _price_note(rep.notes)
    assert not note.startswith("Price per GPU-hour: the catalogue's figure")
    assert note.startswith("Price per GPU-hour 2 USD:")
    assert "cluster.overrides.price_per_gpu_hour_usd" in note
    # cost = GPU-hours x $2 (the override), not x $2.155
    assert rep.results["cost_usd"] == pytest.approx(rep.results["gpu_hours"] * 2.0, rel=1e-12)
    assert "× $2 " in rep.explain["cost_usd"]


def test_price_note_with_the_override_flag():
    """With a ``price_override`` column (True where the scenario sets its own price) the note and the
    explain say which one it is."""
    own = _row(price_per_gpu_hour_usd=2.0, price_override=True)
    note = _price_note(cost.notes(own))
    assert note.startswith("Price per GPU-hour 2 USD: the scenario's own") and "not the catalogue's" in note
    assert "(the scenario's own price)" in cost.explain(own)["cost_usd"]
    cat = _row(price_override=False)
    note = _price_note(cost.notes(cat))
    assert note.startswith("Price per GPU-hour 2.155 USD: the catalogue's figure for the accelerator")
    assert "own price" not in cost.explain(cat)["cost_usd"]


def test_price_note_states_the_a100_basis_as_the_catalogue_has_it():
    """Found by review 16c: the note said "V100 / A100: AWS on-demand 2018-24", but the A100 entries
    charge $2.97, the midpoint of AWS p4d.24xlarge's Capacity Block $14.75/h and on-demand $32.77/h
    per 8 GPUs (hardware.md §4: $1.84 and $4.10); on-demand alone is $4.10."""
    a100 = catalog.resolve_accelerator("a100-sxm-40gb").price_per_gpu_hour_usd
    assert a100 == pytest.approx((14.75 / 8 + 32.77 / 8) / 2, abs=0.005)
    assert a100 < 32.77 / 8 - 1.0  # not the on-demand price
    note = _price_note(cost.notes(_row()))
    assert "A100: AWS on-demand" not in note and "V100 / A100: AWS on-demand" not in note
    assert "A100: midpoint of AWS's late-2024 Capacity Block and on-demand prices" in note
    assert "V100: AWS on-demand" in note


# --- a partly used node or rack: per-GPU billing, said -------------------------------------------

def test_partial_node_says_what_a_whole_node_bill_would_be():
    """Found by review 16c: 12 GPUs on DGX H100 nodes (8 GPUs) were charged 12 GPU-hours per hour
    without a word; a provider renting whole nodes (AWS p5.48xlarge = 8 H100) bills 2 nodes = 16
    GPUs, 16 / 12 = 1.333 x the cost. Hand check of the charged figures: 12 x wall_h GPU-hours,
    1.5 nodes' share of the energy."""
    d = planner.load_preset("default").to_json_dict()
    d["cluster"]["n_gpus"] = 12
    d["parallelism"].update(tp=4, pp=1, vpp=1, dp=None, schedule="1f1b")
    d["training"]["global_batch_size"] = 12
    rep = planner.evaluate(d)
    r = rep.results
    wall_h = d["training"]["tokens_total"] / r["tokens_per_s"] / r["goodput"] / 3600
    assert r["gpu_hours"] == pytest.approx(12 * wall_h, rel=1e-12)
    assert r["cost_usd"] == pytest.approx(12 * wall_h * 2.155, rel=1e-12)
    assert r["energy_mwh"] == pytest.approx(12 / 8 * 10_200 * 0.8 * 1.2 * wall_h / 1e6, rel=1e-12)
    note = next(n for n in rep.notes if n.startswith("The job's 12 GPUs"))
    assert "on 2 nodes of 8 (4 idle)" in note and "bills 16 GPUs, 1.333 × the cost" in note
    # whole nodes: no such note
    assert not any(n.startswith("The job's") for n in planner.evaluate(planner.load_preset("default")).notes)
    one = cost._partial_node_note(_row(n_gpus=1))
    assert one.startswith("The job's 1 GPU is on 1 node of 8 (7 idle)") and one.endswith("bills 8 GPUs, 8 × the cost.")


def test_nvl72_job_placed_64_to_a_rack_says_what_whole_racks_bill():
    """The step time places a job larger than one NVL72 rack 64 GPUs (16 trays) to a rack
    (planner.comm.placement_domain, NVIDIA's Slurm --segment 16): the Qwen3 preset's 256 GB200 GPUs
    occupy 4 racks of 72 = 288 GPUs. Cost counts the 256 used; the note gives the whole-rack bill,
    288 / 256 = 1.125 x."""
    rep = planner.evaluate(planner.load_preset("qwen3-235b-gb200-256"))
    note = next(n for n in rep.notes if n.startswith("The job's 256 GPUs"))
    assert "on 4 domains of 72 GPUs (32 idle)" in note and "bills 288 GPUs, 1.125 × the cost" in note
    # inside one rack: 64 of its 72 GPUs, 72 / 64 = 1.125 x (review 16i: one rack had no note);
    # 8-GPU nodes filled whole: no note
    one = cost._partial_node_note(_row(n_gpus=64, gpus_per_node=4, nvlink_domain_size=72))
    assert "on 1 domain of 72 GPUs (8 idle)" in one and "bills 72 GPUs, 1.125 × the cost" in one
    assert cost._partial_node_note(_row(n_gpus=16_384)) is None
    # 144 GPUs = 2 racks' worth, but placed 64 to a rack: 3 racks, 216 GPUs
    n = cost._partial_node_note(_row(n_gpus=144, gpus_per_node=4, nvlink_domain_size=72))
    assert "on 3 domains of 72 GPUs (72 idle)" in n and "bills 216 GPUs, 1.5 × the cost" in n


def test_partial_node_note_counts_the_spares_the_cost_pays():
    """12 GPUs on 8-GPU nodes + 2 spare nodes: the cost pays 12 + 16 = 28 GPUs (cost.paid_gpus); whole
    nodes bill 16 + 16 = 32, 32/28 = 1.143 × (review 48b: 16/12 = 1.333 × was printed)."""
    n = cost._partial_node_note(_row(n_gpus=12, hot_spare_nodes=2))
    assert "(28 GPUs)" in n and "bills 16 GPUs for the job and 16 for the spares, 32 GPUs, 1.143 × the cost" in n


# --- hand checks of the headline numbers ---------------------------------------------------------

def test_absurd_token_count_is_finite_and_proportional():
    """1e15 tokens (64 x Llama 3's 15.6e12) on the default preset: everything scales by exactly
    1e15 / 1.5e13 from the preset's own numbers, no warning, no inf; 1e16 is the schema's ceiling."""
    base = planner.evaluate(planner.load_preset("default")).results
    d = planner.load_preset("default").to_json_dict()
    d["training"]["tokens_total"] = 1e15
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = planner.evaluate(d).results
    k = 1e15 / 1.5e13
    for col in ("time_to_train_days", "gpu_hours", "cost_usd", "energy_mwh"):
        assert np.isfinite(big[col]) and big[col] == pytest.approx(base[col] * k, rel=1e-12), col
    # hand: 1e15 / tokens_per_s / goodput / 86400 days; 1,024 GPUs; $2.155; 128 nodes x 10.2 kW x 0.8 x 1.2
    days = 1e15 / big["tokens_per_s"] / big["goodput"] / 86_400
    assert big["time_to_train_days"] == pytest.approx(days, rel=1e-12)
    assert big["cost_usd"] == pytest.approx(1024 * days * 24 * 2.155, rel=1e-12)
    assert big["energy_mwh"] == pytest.approx(128 * 10_200 * 0.8 * 1.2 * days * 24 / 1e6, rel=1e-12)
    d["training"]["tokens_total"] = 1e17
    with pytest.raises(InputError, match=r"training\.tokens_total"):
        planner.evaluate(d)


@pytest.mark.parametrize("bad, word", [(0, "allowed 0.01 to 1,000,000"), (-2.0, "allowed 0.01"),
                                       (float("nan"), "finite")])
def test_price_override_zero_or_negative_is_refused_with_its_range(bad, word):
    d = planner.load_preset("default").to_json_dict()
    d["cluster"]["overrides"]["price_per_gpu_hour_usd"] = bad
    with pytest.raises(InputError) as e:
        planner.evaluate(d)
    assert any(line.startswith("cluster.overrides.price_per_gpu_hour_usd") and word in line for line in e.value.lines)


def test_custom_accelerator_without_a_price_is_refused_naming_the_field():
    d = planner.load_preset("default").to_json_dict()
    acc = catalog.resolve_accelerator("h100-sxm-80gb").model_dump(mode="json")
    acc.pop("price_per_gpu_hour_usd")
    d["cluster"]["accelerator"] = acc
    with pytest.raises(InputError) as e:
        planner.evaluate(d)
    assert any(line.startswith("cluster.accelerator.price_per_gpu_hour_usd") for line in e.value.lines)


_NUM = r"([0-9.]+(?:e[+-]?[0-9]+)?)"


@pytest.mark.parametrize("preset", ["default", "llama3-405b-h100-16k", "deepseek-v3-h800-2048",
                                    "qwen3-235b-gb200-256", "gpt3-175b-a100-1024"])
def test_every_cost_explain_reproduces_its_number(preset):
    """Each explain string, evaluated by hand from the numbers it prints (4 significant digits),
    gives the headline within the rounding (0.2 %)."""
    rep = planner.evaluate(planner.load_preset(preset))
    r, ex = rep.results, rep.explain
    m = re.fullmatch(rf"tokens {_NUM} / {_NUM} tok/s / goodput {_NUM} / 86400 = {_NUM} d", ex["time_to_train_days"])
    t, tps, g, days = map(float, m.groups())
    assert t / tps / g / 86_400 == pytest.approx(r["time_to_train_days"], rel=2e-3)
    assert days == pytest.approx(r["time_to_train_days"], rel=1e-3)
    m = re.search(rf"= ?([0-9]+) GPUs × {_NUM} h = {_NUM}$", ex["gpu_hours"]) or \
        re.fullmatch(rf"([0-9]+) GPUs × {_NUM} h = {_NUM}", ex["gpu_hours"])
    n, h, gh = map(float, m.groups())
    assert n * h == pytest.approx(r["gpu_hours"], rel=2e-3) and gh == pytest.approx(r["gpu_hours"], rel=1e-3)
    assert h == pytest.approx(r["time_to_train_days"] * 24, rel=1e-3)
    m = re.fullmatch(rf"{_NUM} GPU-h × \${_NUM}(?: \(the scenario's own price\))? = \${_NUM}", ex["cost_usd"])
    gh, p, c = map(float, m.groups())
    assert gh * p == pytest.approx(r["cost_usd"], rel=2e-3) and c == pytest.approx(r["cost_usd"], rel=1e-3)
    m = re.search(rf"× {_NUM} W.* × {_NUM} × PUE {_NUM} × {_NUM} h / 1e6 = {_NUM} MWh$", ex["energy_mwh"])
    w, u, pue, h, e = map(float, m.groups())
    nodes = r["energy_mwh"] / (w * u * pue * h / 1e6)
    n_gpus = rep.scenario["cluster"]["n_gpus"]
    gpn = catalog.resolve_system(rep.scenario["cluster"]["system"]).gpus_per_node
    assert nodes == pytest.approx(n_gpus / gpn, rel=3e-3)
    assert e == pytest.approx(r["energy_mwh"], rel=1e-3)


# --- catalogue prices against their cited source (hardware.md §4 / hardware.csv) ----------------

@pytest.mark.parametrize("acc, expected", [
    ("v100-sxm-32gb", 31.21 / 8),                     # AWS p3dn.24xlarge on-demand / 8
    ("a100-sxm-40gb", (14.75 / 8 + 32.77 / 8) / 2),   # AWS p4d Capacity Block .. on-demand, midpoint
    ("h100-sxm-80gb", (1.52 + 2.79) / 2),             # 2026 market: Vast spot 1.52 .. RunPod 2.79
    ("h200-sxm-141gb", (2.25 + 5.41) / 2),            # 2026 neocloud .. AWS p5e Capacity Block
    ("b200", (3.75 + 6.00) / 2),
    ("b300", (6.4 + 7.89) / 2),
    ("mi300x", (1.71 + 1.99) / 2),
    ("mi325x", (2.00 + 2.25) / 2),
    ("gaudi2", 65_000 / 8 * 2.155 / 27_500),          # list x the H100 cloud-to-list ratio
    ("gaudi3", 125_000 / 8 * 2.155 / 27_500),
    ("mi250x-gcd", 1.71 / 2),                         # half an MI250X package at the MI300X low end
])
def test_catalogue_price_matches_its_cited_source(acc, expected):
    assert catalog.resolve_accelerator(acc).price_per_gpu_hour_usd == pytest.approx(expected, abs=0.005)


# --- a node power below its own GPUs' draw ------------------------------------------------------

def test_node_power_below_its_gpus_draw_is_said():
    """Found by review 16c: an inline system with node_power_w = 1 W for 8 x 700 W H100 gave
    128 x 1 W x 0.8 x 1.2 x wall_h / 1e6 = 0.61 MWh for the default run (10.2 kW nodes: 6,255 MWh)
    without a word. No real node draws less than its GPUs: the note gives the bound, 5,600 W."""
    d = planner.load_preset("default").to_json_dict()
    sy = catalog.resolve_system("dgx-h100").model_dump(mode="json")
    sy.update(node_power_w=1.0, name="one-watt node")
    d["cluster"]["system"] = sy
    rep = planner.evaluate(d)
    r = rep.results
    wall_h = 1.5e13 / r["tokens_per_s"] / r["goodput"] / 3600
    assert r["energy_mwh"] == pytest.approx(128 * 1.0 * 0.8 * 1.2 * wall_h / 1e6, rel=1e-12)
    note = next(n for n in rep.notes if n.startswith("Node power 1 W"))
    assert "8 × 700 W = 5600 W" in note and "understated (at least 5600 ×)" in note and "node_power_w" in note


def _node_w(d: dict) -> float:
    """The node power the cost stage used (a key input column of evaluate_many since review 16c)."""
    return float(planner.evaluate_many([d])["node_power_w"].iloc[0])


def test_accelerator_other_than_the_systems_own_swaps_its_tdp_into_the_node_power():
    """cluster.accelerator = MI355X (8 x 1,400 W) on DGX H100 (10,200 W, sized for 8 x 700 W H100):
    the node power was kept at 10,200 W, below the GPUs' own 11,200 W. Now the GPU share is swapped:
    10,200 - 8 x 700 + 8 x 1,400 = 15,800 W (the catalogue's own mi355x-8 node figure), and no note."""
    d = planner.load_preset("default").to_json_dict()
    d["cluster"]["accelerator"] = "mi355x"
    rep = planner.evaluate(d)
    assert _node_w(d) == pytest.approx(10_200 - 8 * 700 + 8 * 1_400)
    assert catalog.resolve_system("mi355x-8").node_power_w == pytest.approx(15_800)
    assert not any(n.startswith("Node power") for n in rep.notes)
    # a B200 (1,000 W) in it: 10,200 - 5,600 + 8,000 = 12,600 W; under a 600 W limit the GPU share
    # scales by 600 / 1,000: 12,600 - 8,000 + 8,000 x 0.6 = 9,400 W
    d["cluster"]["accelerator"] = "b200"
    assert _node_w(d) == pytest.approx(12_600)
    d["cluster"].setdefault("overrides", {})["power_limit_w"] = 600
    assert _node_w(d) == pytest.approx(9_400)
    # the system's own accelerator named explicitly changes nothing
    d = planner.load_preset("default").to_json_dict()
    base = _node_w(d)
    d["cluster"]["accelerator"] = catalog.resolve_system(d["cluster"]["system"]).accelerator
    assert _node_w(d) == base == pytest.approx(10_200)


@pytest.mark.parametrize("system", sorted(catalog.systems()))
def test_no_catalogue_system_is_below_its_gpus_draw(system):
    """Every catalogue node power covers its GPUs at TDP (GH200 quad: exactly 4 x 680 W = 2,720 W),
    also at the lowest power limit (0.25 x TDP), so the note never shows for them."""
    s = catalog.resolve_system(system)
    a = catalog.resolve_accelerator(s.accelerator)
    assert s.node_power_w >= s.gpus_per_node * a.tdp_w
    from planner.batch import _node_power_w

    for frac in (1.0, 0.6, 0.25):
        lim = a.tdp_w * frac
        row = {"node_power_w": _node_power_w(s, a, lim if frac < 1 else None), "gpus_per_node": s.gpus_per_node,
               "power_limit_w": lim, "tdp_w": a.tdp_w}
        assert cost._low_node_power_note(row) is None, (system, frac)


def test_cost_notes_carry_no_dollar_sign_for_the_markdown_page():
    """The Plan page renders the notes as one markdown list, where two "$" make a formula: the
    cost notes write amounts in USD."""
    rows = [_row(), _row(price_override=True, price_per_gpu_hour_usd=2.0), _row(n_gpus=12, hot_spare_nodes=1),
            _row(node_power_w=1.0)]
    for r in rows:
        for n in cost.notes(r):
            assert "$" not in n, n
