"""A number read back as the app shows it ("$11.01 M ✗", "79.65 GiB", "17.7 min"), shared by the
AppTest and browser tests that check the pages' numbers against the engine or the CLI."""
from __future__ import annotations

import re


def parse_shown(text: str, scale: dict[str, float]) -> tuple[float, float]:
    """(value × ``scale[unit]``, half a unit of the last digit shown, same unit) of a shown number;
    thousands separators and a no-fit mark ✗ are ignored, a leading $ joins the unit ("$ M")."""
    t = text.replace(",", "").replace("✗", "").strip()
    m = re.fullmatch(r"(\$)?([0-9.]+)\s*(.*)", t)
    assert m, f"unreadable number {text!r}"
    dollar, num, unit = m.groups()
    unit = (f"$ {unit}".strip() if dollar else unit).strip()
    assert unit in scale, f"unit {unit!r} of {text!r}"
    decimals = len(num.split(".")[1]) if "." in num else 0
    return float(num) * scale[unit], 0.5 * 10.0**-decimals * scale[unit]


GIB = 2**30
#: A shown unit -> its size in SI (durations in s, money in $, energy in MWh): every unit the pages
#: write (Plan's headline boxes, Compare's table).
UNITS_SI: dict[str, float] = {
    "GiB": GIB, "s": 1.0, "ms": 1e-3, "min": 60.0, "h": 3600.0, "%": 0.01, "days": 86400.0,
    "years": 365.25 * 86400.0, "M tok/s": 1e6, "k tok/s": 1e3, "tok/s": 1.0, "B tok/s": 1e9,
    "$": 1.0, "$ k": 1e3, "$ M": 1e6, "$ B": 1e9, "$ T": 1e12, "MWh": 1.0, "GWh": 1e3, "kWh": 1e-3,
    "GPU-h": 1.0,
}
#: Compare's table row -> (engine column, the column's unit in SI).
COMPARE_ROWS: dict[str, tuple[str, float]] = {
    "peak memory per GPU": ("mem_total_bytes", 1.0), "step time": ("step_time_s", 1.0), "MFU": ("mfu", 1.0),
    "throughput": ("tokens_per_s", 1.0), "MTBF (job)": ("mtbf_h", 3600.0), "goodput": ("goodput", 1.0),
    "time to train": ("time_to_train_days", 86400.0), "GPU-hours": ("gpu_hours", 1.0), "cost to train": ("cost_usd", 1.0),
    "energy": ("energy_mwh", 1.0)}
