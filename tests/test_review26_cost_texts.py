"""Review 26 (h26c, a hand check of cost, energy and time to train; every figure was exact): how
the numbers are presented.

1. The price note names the catalogue price's date, source and, for a stand-in, the catalogue's own
   words (DESIGN §4.5: "catalogue default with date and source"); ``planner presets hardware``
   lists the date and source.
2. The short-run note gives the GPU-hours, cost and energy at the finite-run length, not only the
   days (all three are the wall time times a rate).
3. The app's energy keeps three significant digits; the "Days to train" help says what the box does.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import planner
from planner import catalog

ROOT = Path(__file__).resolve().parents[1]


def _price_note(rep) -> str:
    (n,) = [x for x in rep.notes if x.startswith("Price per GPU-hour")]
    return n


def test_price_note_names_date_source_and_a_stand_in():
    """MI355X (catalogue: $2.25, 2026, source 'price-surveys', uncertain, "proxy = MI325X 2026 high
    end $2.25 (U, likely low for this part)"): the note says all of it, in USD (no "$", which the
    Plan page's markdown would take for a formula)."""
    d = planner.load_preset("default").to_json_dict()
    d["cluster"]["system"] = "mi355x-8"
    n = _price_note(planner.evaluate(d))
    acc = catalog.accelerators()["mi355x"]
    # the source names the proxy since review 46a: "price-surveys (proxy: the MI325X high end)"
    assert acc.price_date == "2026" and acc.sources["price_per_gpu_hour_usd"].startswith("price-surveys (proxy")
    assert "price_per_gpu_hour_usd" in acc.uncertain
    assert "(mi355x), dated 2026, source 'price-surveys (proxy: the MI325X high end)'" in n
    assert "marked uncertain" in n and "proxy = MI325X 2026 high end 2.25 USD" in n and "likely low" in n
    assert "$" not in n


def test_price_note_of_a_sourced_part_and_of_an_override():
    acc = catalog.accelerators()["h100-sxm-80gb"]
    n = _price_note(planner.evaluate(planner.load_preset("default")))
    assert f"(h100-sxm-80gb), dated {acc.price_date}, source '{acc.sources['price_per_gpu_hour_usd']}'" in n
    # the DeepSeek-V3 preset's own $2: no catalogue date or source is claimed for it
    n2 = _price_note(planner.evaluate(planner.load_preset("deepseek-v3-h800-2048")))
    assert "the scenario's own" in n2 and "dated" not in n2


def test_presets_hardware_lists_the_price_date_and_source():
    out = subprocess.run([sys.executable, "-m", "planner", "presets", "hardware", "--format", "json"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    # the system rows and (review 48g) the accelerator rows; storage tiers and failure profiles follow
    rows = [r for r in json.loads(out) if r.get("accelerator")]
    assert {r["kind"] for r in rows} == {"system", "accelerator"}
    for r in rows:
        a = catalog.accelerators()[r["accelerator"]]
        assert r["price_date"] == a.price_date
        assert r["price_source"].startswith(a.sources["price_per_gpu_hour_usd"])
        assert r["price_source"].endswith("(uncertain)") == ("price_per_gpu_hour_usd" in a.uncertain)


def test_short_run_note_gives_the_bill_at_the_finite_run_length():
    """GPT-3 175B, PFS saved daily, 1.413e10 tokens (h26c's case): steady state 5.773 d; the finite
    run about 4.884 d (h26c's own Daly calculation gave 4.866 of 5.752 d before session 37's refit
    lengthened the step 0.4 %; the ratio is the same, 4.884/5.773 = 0.8460 = 4.866/5.752; the Monte
    Carlo 4.895 d then). Since review 44 a failure before the first PFS save pays no reload (there is
    no checkpoint yet): 4.882 d, ratio 0.8457 (the Monte Carlo: 4.874 ± 0.016 d, 40,000 trials, seed 3).
    GPU-hours, cost and energy are the wall time times a rate, so each × 0.8457: about 3.564e5 USD,
    not 4.214e5."""
    d = planner.load_preset("gpt3-175b-a100-1024").to_json_dict()
    d["checkpoint"]["tiers"][1]["interval_s"] = 86400.0
    d["training"]["tokens_total"] = 1.413e10
    rep = planner.evaluate(d)
    r = rep.results
    (n,) = [x for x in rep.notes if x.startswith("The run is short")]
    fin = float(re.search(r"gives about ([\d.]+) d", n).group(1))
    assert fin == pytest.approx(4.882, abs=0.001)
    # h26c's Daly ratio, 4.866 / 5.752, less the first segment's reload (review 44)
    assert fin / r["time_to_train_days"] == pytest.approx(0.8457, abs=2e-4)
    gh, usd, mwh = (float(x) for x in re.search(
        r"about ([\d.e+]+) GPU-h, ([\d.e+]+) USD and ([\d.e+]+) MWh, where the headline", n).groups())
    ratio = fin / r["time_to_train_days"]
    assert gh == pytest.approx(r["gpu_hours"] * ratio, rel=2e-3)
    assert usd == pytest.approx(r["cost_usd"] * ratio, rel=2e-3)
    assert mwh == pytest.approx(r["energy_mwh"] * ratio, rel=2e-3)
    assert usd == pytest.approx(3.565e5, rel=3e-3)
    assert "$" not in n


@pytest.mark.parametrize(("x", "text"), [(12.31, "12.3 MWh"), (10.49, "10.5 MWh"), (5.483, "5.48 MWh"),
                                         (5483.2, "5,483 MWh"), (123.4, "123 MWh"), (0.0123, "12.3 kWh"),
                                         (0.5, "500 kWh"), (0.00542, "5.42 kWh")])
def test_energy_keeps_three_significant_digits(x, text):
    sys.path.insert(0, str(ROOT))
    from app_pages import _common as C

    assert C.fmt_mwh(x) == text


def test_days_help_says_below_one_day():
    text = (ROOT / "app_pages" / "plan.py").read_text()
    assert "below 1 day in h, min or s" in text and "below 0.01 day" not in text


def test_cost_per_million_tokens():
    """USD per million trained tokens = cost / tokens_total × 1e6 (the default preset's $1.1074e7 over
    1.5e13 tokens is $0.738; h26c: $1.0964e7, $0.731 before session 37's refit); in the results, the
    explanation and the CLI table."""
    rep = planner.evaluate(planner.load_preset("default"))
    r = rep.results
    assert r["cost_per_m_tokens_usd"] == pytest.approx(r["cost_usd"] / 1.5e13 * 1e6, rel=1e-12)
    assert r["cost_per_m_tokens_usd"] == pytest.approx(0.738, abs=5e-4)
    assert "per million trained tokens" in rep.explain["cost_per_m_tokens_usd"]
    out = subprocess.run([sys.executable, "-m", "planner", "evaluate", "--preset", "default", "--format", "table"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert re.search(r"cost_per_m_tokens_usd\s+0\.7382 USD", out)  # $0.73824: 4 digits
    # a run that never finishes (goodput 0): inf, as its cost
    d = planner.load_preset("default").to_json_dict()
    d["checkpoint"]["tiers"] = [{"tier": "host_memory", "interval_s": None, "replicas": 0}]
    r0 = planner.evaluate(d).results
    assert r0["cost_usd"] == float("inf") and r0["cost_per_m_tokens_usd"] == float("inf")


@pytest.mark.parametrize(("tokens", "days", "cost"), [
    (None, r"209\.1 days", r"11\.07 M USD"),    # 1.5e13 tokens: 209.09 days, $1.1074e7
    ("1e9", r"20\.07 min", r"738\.2 USD"),    # 1e9 / 8.6112e5 tok/s / 0.96423 = 1,204.4 s; × 1,024 GPUs
    ("1e6", r"1\.204 s", r"0\.7382 USD"),    # / 3600 × $2.155 = $738.24
    # 209.09 days × 1e16/1.5e13 / 365.25; $1.1074e7 × 666.7 = $7.382e9, in B USD from $1 B (review 44b)
    ("1e16", r"381\.6 years", r"7\.382 B USD"),
])
def test_cli_table_picks_the_unit_by_size(tokens, days, cost):
    """h26c: the evaluate table printed "1.38e-05 days" and "1.096e+07 USD" where the sweep table
    and the app pick the unit by size; the expected figures are the default preset's tokens per
    second and goodput (8.6112e5 tok/s since session 37's refit, 8.697e5 before; 0.96423; 0.9643 before the
    checkpoint copies ran at the links' achieved rates, review h30a C2) and its 2.155 USD per GPU-hour on
    1,024 GPUs."""
    args = [sys.executable, "-m", "planner", "evaluate", "--preset", "default", "--format", "table"]
    if tokens:
        args += ["--set", f"training.tokens_total={tokens}"]
    out = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, check=True).stdout
    lines = {ln.split()[0]: ln for ln in out.splitlines() if ln.strip()}
    assert re.search(rf"^time_to_train_days\s+{days}\s", lines["time_to_train_days"])
    assert re.search(rf"^cost_usd\s+{cost}\s", lines["cost_usd"])
