"""Shared UI plumbing for the pages: session state <-> URL, the scenario sidebar, cached
engine calls and number formatting. No formula lives here: every number shown comes from
the engine (``planner.evaluate`` / ``evaluate_many`` / ``sweep`` / ``simulate``) or the
catalogue; this module only converts units for display (bytes -> GiB, s -> h).
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import streamlit as st
from pydantic import ValidationError

import re

import planner
from planner import batch as pbatch, catalog, charts, share
from planner import schema as _schema
from planner.cli import pct_text
from planner.schema import MoESpec, Parallelism, Scenario, Training, format_errors, loads_json

GIB = 2**30
GB = 1e9
DASH = "—"

SCENARIO_KEY = "scenario"  # canonical scenario JSON (may be invalid while the user edits)
PRESET_KEY = "w_preset"
WARN_KEY = "link_warnings"
LOADED_KEY = "_url_loaded"
URL_WRITTEN_KEY = "_url_written"  # the query string write_url wrote last (reread_moved_url)
URL_WIDGETS_KEY = "_url_written_widgets"  # the input widgets' values at that write

CUSTOM = "custom"
SYSTEMS_ACC = "(system's)"
#: Selectbox value standing for an inline (not catalogued) object from a link or imported JSON.
INLINE = "(inline)"
INLINE_TIER = "inline:"
#: URL keys that belong to one page, not to the scenario (planner.share; the CLI reads them too).
PAGE_PREFIXES = share.PAGE_PREFIXES


# --------------------------------------------------------------------------------------
# Catalogue lists (cached; the catalogue itself is lru-cached in planner.catalog)
# --------------------------------------------------------------------------------------


def _ids(fn: Callable[[], dict]) -> list[str]:
    try:
        return list(fn())
    except Exception:  # a broken data file shows up as an error elsewhere
        return []


def _architecture(m) -> dict:
    """A model's architecture for telling two models apart: its fields less the name, sources and
    published counts, with the defaults written out (KV heads = heads, head dim = hidden ÷ heads),
    so a preset's model and the same model written out field by field (the sidebar fills KV heads
    in: review h29d) compare equal."""
    d = m.model_dump(mode="json", exclude={"name", "source", "published_params_total", "published_params_active"})
    d["n_kv_heads"], d["head_dim"] = m.kv_heads, m.d_head
    return d


def preset_about(pid: str | None, sj: dict, scen: Scenario) -> tuple[str, str, list[str]] | None:
    """(description, source, link keys changed since) of the scenario preset ``pid`` (presets/
    scenarios.json: what it assumes where its source is silent, the published figures to compare
    with, and its sources), or None when there is none or the scenario is no longer its run: another
    model or system (review h29c: a Validate row, an imported JSON or a Compare slot opened on Plan sat
    under the last preset's text). The changed keys are the share link's (``share.FIELDS``)."""
    try:
        raw = catalog.scenario_presets_raw().get(pid) if pid else None
        if not raw:
            return None
        base = planner.load_preset(pid)
        if _architecture(base.resolved_model()) != _architecture(scen.resolved_model()) or (
                base.cluster.system != scen.cluster.system):
            return None
        mine = share.scenario_to_params(_defaults_full(sj), preset=pid)
        theirs = share.scenario_to_params(_defaults_full(planner.presets.preset_json(pid)), preset=pid)
        # the same architecture written out (m=custom and every m* key) is not a change (review h29d)
        model_keys = {"m"} | {f.key for f in share.MODEL_KEYS}
        changed = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k) and k not in model_keys)
        return raw.get("description", ""), raw.get("source", ""), changed
    except Exception:  # noqa: BLE001 - a broken data file shows up as an error elsewhere
        return None


def preset_ids() -> list[str]:
    try:
        return list(planner.list_presets())
    except Exception:
        return []


# --------------------------------------------------------------------------------------
# Formatting (display only)
# --------------------------------------------------------------------------------------


def num(results: dict, key: str) -> float | None:
    """A result as a float, or None when the column does not exist (yet) or is not finite."""
    v = results.get(key) if results else None
    if v is None or isinstance(v, str):
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def fmt(results: dict, key: str, kind: str = "g") -> str:
    """Format one result column for display; "—" when it is missing."""
    x = num(results, key)
    if x is None:
        if kind == "bool" and results and isinstance(results.get(key), bool):
            return "yes" if results[key] else "no"
        return DASH
    if kind == "bool":
        return "yes" if x else "no"
    if kind == "gib":
        return f"{x / GIB:,.1f} GiB"
    if kind == "s":
        return fmt_duration(x)
    if kind == "pct":  # below 1 % two significant digits (0.16 %, 0.023 %, not 0.2 % or 0.0 %)
        return pct_text(x).replace("-", "−") + " %"
    if kind == "gpuh":  # beyond 10¹² GPU-h as m.m×10ⁿ (review 44b: 27 digits were cut with "…")
        return f"{x:,.0f} GPU-h" if 10 <= abs(x) < 1e12 else f"{sci(x)} GPU-h" if abs(x) >= 1e12 else f"{x:.2g} GPU-h"
    if kind == "tok":  # about ten characters (found by review: "107.66 M tok/s" was cut at 1,280 px)
        if x >= 1e9:
            return f"{x / 1e9:.3g} B tok/s"
        if x >= 1e7:
            return f"{x / 1e6:,.0f} M tok/s"
        return f"{x / 1e6:,.2f} M tok/s" if x >= 1e5 else f"{x:,.0f} tok/s"
    if kind == "h":
        return fmt_duration(x * 3600.0)
    # small non-zero amounts keep two significant digits (0.012 days, $0.43, 3.1 kWh), never 0; very
    # large or very small ones change unit (years, $ B, GWh; s, kWh) so that a headline stays about
    # ten characters and its unit is never cut off (a metric box at 1,280 px holds about eleven)
    if kind == "days":
        return fmt_days(x)
    if kind == "usd":
        return fmt_usd(x)
    if kind == "tflops":
        return f"{x / 1e12:,.0f} TFLOP/s" if x > 1e6 else f"{x:,.0f} TFLOP/s"
    if kind == "mwh":
        return fmt_mwh(x)
    return f"{x:,.4g}"


#: Days in a (Julian) year, for durations of :data:`YEARS_ABOVE_DAYS` or more (the histogram's
#: threshold, ``planner.charts``).
DAYS_PER_YEAR = charts.DURATION_UNITS[0][1] / 86400.0
YEARS_ABOVE_DAYS = charts.YEARS_ABOVE_DAYS


def _row_units(kind: str) -> tuple[tuple[str, float], ...]:
    """(text after the number, size of that unit in the column's own unit) of each unit that
    :func:`fmt` can give a ``kind`` a side-by-side row puts in one unit (:func:`fmt_row`: cost,
    energy, throughput), longest text first; empty for any other kind (GiB, %, yes / no, and the
    durations, which keep each cell's own unit)."""
    if kind == "usd":
        return ((" T", 1e12), (" B", 1e9), (" M", 1e6), ("", 1.0))
    if kind == "mwh":
        return ((" TWh", 1e6), (" GWh", 1e3), (" MWh", 1.0), (" kWh", 1e-3), (" Wh", 1e-6))
    if kind == "tok":
        return ((" B tok/s", 1e9), (" M tok/s", 1e6), (" tok/s", 1.0))
    return ()


def _split_unit(text: str, kind: str) -> tuple[str, str, float] | None:
    """(number text, unit text, unit size) of a :func:`fmt` text, or None when it has no unit of
    :func:`_row_units` (a kind of one unit, "—")."""
    body = text[1:] if kind == "usd" and text.startswith("$") else text
    for unit, size in _row_units(kind):
        if body.endswith(unit):
            number = body[: len(body) - len(unit)] if unit else body
            if re.fullmatch(r"-?[\d,]+(\.\d+)?", number) or "×10" in number:
                return number, unit, size
    return None


def fmt_row(values: "list[float | None]", kind: str) -> list[str]:
    """One row of a side-by-side table: every cell in the unit :func:`fmt` gives the row's largest
    value (review h29a F6: Compare's energy row read "6,227 MWh" beside "36.8 GWh", its cost row
    "$103,117" beside "$5.01 M"). A cell whose own text is in that unit is :func:`fmt`'s; another is
    converted to it with at least three significant digits (``$0.103 M``, ``6.23 GWh``), in powers
    of ten (``×10``) where that would need more than six decimals, as the largest cell is when
    :func:`fmt` gives it so. Missing or non-finite values stay "—". Durations (``s``, ``h``,
    ``days``) keep each cell's own unit: "4.82 s" beside "17.7 min" reads right, where one unit made
    a step time "0.0804 min" (and a slot's cell changed with the other slots)."""
    own = [fmt({"x": v}, "x", kind) for v in values]
    finite = [abs(float(v)) for v in values if v is not None and num({"x": v}, "x") is not None]
    if not finite or not _row_units(kind):
        return own
    top = next(float(v) for v in values if num({"x": v}, "x") is not None and abs(float(v)) == max(finite))
    unit = _split_unit(fmt({"x": top}, "x", kind), kind)
    if unit is None:
        return own
    _number, text_unit, size = unit
    sci_row = "×10" in _number
    prefix = "$" if kind == "usd" else ""
    out = []
    for v, t in zip(values, own):
        x = num({"x": v}, "x")
        mine = _split_unit(t, kind)
        if x is None or (mine is not None and mine[1] == text_unit and ("×10" in mine[0]) == sci_row):
            out.append(t)
            continue
        y = x / size
        if y == 0:
            out.append(f"{prefix}0{text_unit}")
            continue
        d = max(0, 2 - math.floor(math.log10(abs(y))))
        out.append(f"{prefix}{sci(y, 3) if sci_row or d > 6 else f'{y:,.{d}f}'}{text_unit}")
    return out


#: Width in px of one character of a table cell (Streamlit's dataframe, Source Sans 14 px): Compare's
#: "gbs=2048 tok=1.56e13 z=2 vpp=7 hs=16 ls=uneven", 45 characters, measured 291 px wide in Chromium
#: at 1,400 px (review h29a's screenshot shots/compare_def.png); and the cell's padding, 8 px a side
#: (glide-data-grid's cellHorizontalPadding).
CELL_PX_PER_CHAR = 6.5
CELL_PADDING_PX = 16


def cut_to_width(text: str, width_px: float) -> str:
    """``text`` as a cell of ``width_px`` shows it whole: unchanged when it fits, else cut and ended
    with "…" (the data grid clips a long cell without one: review h29a F6, "gbs=15360 tok=1.48e13
    prec=fp8 sch=dualp"), at the last space that fits when one leaves at least half the cell."""
    n = max(1, int((width_px - CELL_PADDING_PX) / CELL_PX_PER_CHAR))
    if len(text) <= n:
        return text
    head = text[: n - 1]  # and "…"
    space = head.rfind(" ")
    if text[n - 1] != " " and space >= n // 2:  # not in the middle of a key=value
        head = head[:space]
    return head.rstrip() + "…"
_SUP = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def sci(x: float, digits: int = 2) -> str:
    """``x`` as ``m.m×10ⁿ`` (``digits`` significant digits), for numbers beyond the usual units."""
    m, e = f"{x:.{digits - 1}e}".split("e")
    return f"{m}×10{str(int(e)).translate(_SUP)}"


def fmt_days(x: float) -> str:
    """Days to train: ``36.4 days``; above 1,000 days in years (``63.9 years``, ``43k years``,
    ``1.2 M years``); below one day as a duration (``1.21 s``, ``17.7 min``, ``12.0 h``), the unit the
    Monte Carlo table and histogram pick (review 15n: the headline read "0.014 days" above a table in
    minutes; until 2026-12-01 only below 0.01 day)."""
    a = abs(x)
    if x == 0:
        return "0.0 days"
    if a < 1:
        return fmt_duration(x * 86400.0)
    if a < YEARS_ABOVE_DAYS:
        return f"{x:,.1f} days"
    y = x / DAYS_PER_YEAR
    if abs(y) < 100:
        return f"{y:,.1f} years"
    if abs(y) < 1e4:
        return f"{y:,.0f} years"
    if abs(y) < 1e6:
        return f"{y / 1e3:,.0f}k years"
    if abs(y) < 1e8:
        return f"{y / 1e6:.2g} M years"
    # beyond 10⁸ years only the order of magnitude reads in a headline box (review 44b: "1.2×10¹⁴¹
    # years" was cut to "1.2×10¹⁴¹ …" at 1,280 px, the unit lost); the ⓘ gives the exact days
    return f"≈10{str(round(math.log10(abs(y)))).translate(_SUP)} years"


def fmt_usd(x: float) -> str:
    """Money: ``$0.43``, ``$1,234``, ``$9.65 M``, ``$734.1 B``, ``$1.23 T``, then ``$4.2×10¹⁵``."""
    a = abs(x)
    if x == 0 or 10 <= a < 1e6:
        return f"${x:,.0f}"
    if a < 10:
        return f"${x:.2g}"
    if a < 1e9:
        return f"${x / 1e6:,.2f} M"
    if a < 1e12:
        return f"${x / 1e9:,.1f} B"
    if a < 1e15:
        return f"${x / 1e12:,.2f} T"
    return f"${sci(x)}"


def fmt_mwh(x: float) -> str:
    """Energy: ``5,483 MWh``, ``12.3 MWh``, ``5.48 MWh`` (three significant digits at least); from
    10,000 MWh in GWh, from 10⁶ MWh in TWh; below 1 MWh in kWh (below 1 kWh in Wh)."""
    a = abs(x)
    if x == 0:
        return "0 MWh"
    if a >= 1e6:
        t = x / 1e6
        if abs(t) >= 1e8:  # as fmt_days beyond 10⁸ years: the order of magnitude (review 44b)
            return f"≈10{str(round(math.log10(abs(t)))).translate(_SUP)} TWh"
        return f"{t:,.1f} TWh" if abs(t) < 100 else (f"{t:,.0f} TWh" if abs(t) < 1e4 else f"{sci(t)} TWh")
    if a >= 1e4:
        return f"{x / 1e3:,.1f} GWh" if a < 1e5 else f"{x / 1e3:,.0f} GWh"
    # at least three significant digits, as the other headlines (review 26, h26c: 10.49 read "10 MWh")
    if a >= 100:
        return f"{x:,.0f} MWh"
    if a >= 1:
        return f"{x:.3g} MWh"
    kwh = x * 1e3
    if abs(kwh) >= 1:
        return f"{kwh:,.0f} kWh" if abs(kwh) >= 100 else f"{kwh:.3g} kWh"
    wh = x * 1e6
    if abs(wh) >= 10:
        return f"{wh:,.0f} Wh"
    return f"{wh:.2g} Wh" if abs(wh) >= 0.01 else f"{sci(wh)} Wh"


def fmt_duration(x_s: float | None) -> str:
    """A duration in seconds with the unit chosen by magnitude: ms below 0.1 s, s below 2 min,
    min below 2 h, h above (never rounded to "0 h"). "—" when missing or not finite."""
    if x_s is None:
        return DASH
    try:
        x = float(x_s)
    except (TypeError, ValueError):
        return DASH
    if not math.isfinite(x):
        return DASH
    a = abs(x)
    if a == 0:
        return "0 s"
    if a < 0.1:
        return f"{x * 1e3:.3g} ms"
    if a < 120:
        return f"{x:,.2f} s" if a < 10 else f"{x:,.1f} s"
    if a < 7200:
        return f"{x / 60:,.1f} min"
    h = x / 3600
    return f"{h:,.1f} h" if abs(h) < 1000 else f"{h:,.0f} h"


#: The engine's "never saved" interval (a tier that recovers no failure class at the optimum).
try:
    from planner.reliability import INTERVAL_MAX_S as NEVER_SAVED_S
except Exception:  # noqa: BLE001 - the display falls back to the documented value
    NEVER_SAVED_S = 1e8
NOT_SAVED_TEXT = "not saved (another tier covers every failure class)"


def fmt_interval(x_s: float | None) -> str:
    """A checkpoint interval: the engine's never-saved value as words, else :func:`fmt_duration`."""
    try:
        if x_s is not None and float(x_s) >= 0.999 * NEVER_SAVED_S:
            if float(x_s) <= 1.001 * NEVER_SAVED_S:  # the solver's own "never"
                return NOT_SAVED_TEXT
            # a fixed interval beyond it (the user's): saved that rarely, i.e. never in effect
            return f"every {fmt_duration(float(x_s))}: never, in effect"
    except (TypeError, ValueError):
        pass
    d = fmt_duration(x_s)
    return d if d == DASH else f"every {d}"


def nonfinite(results: dict, key: str) -> str | None:
    """``"inf"`` / ``"nan"`` when the engine reported a non-finite number for ``key``, else None."""
    v = results.get(key) if results else None
    if v is None or isinstance(v, (str, bool)):
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isfinite(x) else ("nan" if x != x else ("inf" if x > 0 else "-inf"))


def never_finishes(results: dict) -> bool:
    """The engine says the run makes no progress: goodput 0, or days to train infinite."""
    g = num(results, "goodput")
    return (g is not None and g <= 0.0) or nonfinite(results, "time_to_train_days") in ("inf", "nan")


def does_not_fit(results: dict) -> bool:
    """The engine says the peak memory exceeds the usable HBM (``fits`` is False)."""
    v = results.get("fits") if results else None
    return v is not None and not isinstance(v, str) and not bool(v)


def usable_hbm_bytes(results: dict) -> float | None:
    """Usable HBM per GPU from the engine's own columns: peak + headroom (``mem_headroom_bytes``
    is usable − peak)."""
    peak, head = num(results, "mem_total_bytes"), num(results, "mem_headroom_bytes")
    return None if peak is None or head is None else peak + head


def gib_decimals(*values_bytes: float) -> int:
    """Decimals of GiB (2³⁰ B) that tell ``values_bytes`` apart: 1, or more (up to 6) while two
    different values would read the same. Found by review: a peak 0.02 GiB above the usable HBM read
    "40.5 GiB of 40.5 GiB usable" beside "Fits in HBM: no"."""
    from planner.memory import gib_decimals as _decimals

    return _decimals(*values_bytes, start=1, most=6)


def gib_text(x_bytes: float, decimals: int = 1) -> str:
    """Bytes as GiB with ``decimals`` decimals; a non-zero amount that would read 0 keeps two
    significant digits (0.02 GiB over, not 0.0)."""
    g = float(x_bytes) / GIB
    if g != 0 and round(g, decimals) == 0:
        return f"{g:.2g} GiB"
    return f"{g:,.{decimals}f} GiB"


def gib_over_text(peak_bytes: float, usable_bytes: float, decimals: int = 1) -> str:
    """How far ``peak_bytes`` is above ``usable_bytes``, as the difference of the two figures shown
    beside it at ``decimals`` decimals of GiB, so the three add up on the page (review h29a: "needs
    91.5 GiB … only 79.6 GiB … (11.8 GiB too much)", the exact 91.46 − 79.65 rounded on its own)."""
    def fig(x: float) -> float:  # the figure as the page writes it
        return float(f"{float(x) / GIB:.{decimals}f}")

    shown = fig(peak_bytes) - fig(usable_bytes)
    if round(shown, decimals) == 0:  # figures that read the same (gib_decimals avoids it): the exact amount
        return gib_text(peak_bytes - usable_bytes, decimals)
    return f"{shown:,.{decimals}f} GiB"


def no_fit_text(results: dict, usable_bytes: float | None = None, n_stages: int | None = None,
                what: str = "below") -> str | None:
    """The message for a scenario that does not fit in memory: peak vs usable HBM (GiB) and the
    stage, and that the other numbers assume it fits. None when it fits (or ``fits`` is absent)."""
    if not does_not_fit(results):
        return None
    peak = num(results, "mem_total_bytes")
    usable = usable_bytes if usable_bytes is not None else usable_hbm_bytes(results)
    stage = num(results, "mem_worst_stage")
    where = "the most loaded pipeline stage"
    if stage is not None:
        where += f" (stage {int(stage)}" + (f" of {n_stages})" if n_stages else ")")
    if peak is not None and usable is not None:
        d = gib_decimals(peak, usable)  # found by review: "40.5 GiB ... only 40.5 GiB ... (0.0 GiB too much)"
        need = (f"{where} needs {gib_text(peak, d)} per GPU but only {gib_text(usable, d)} of HBM is usable "
                f"({gib_over_text(peak, usable, d)} too much; GiB = 2³⁰ B)")
    else:
        need = f"{where} needs more memory per GPU than the usable HBM"
    return (f"**Does not fit in GPU memory:** {need}. As set, the memory model expects this run to stop with an "
            "out-of-memory error. It is a model: a framework that frees buffers sooner, or keeps fewer micro-batches "
            "in flight than the schedule modelled, can run above it (docs/memory.md gives its checks against "
            "published peaks). "
            f"The step time, MFU, throughput, goodput, days, GPU-hours, cost and energy {what} assume that it fits. "
            "More GPUs, "
            "a larger TP or PP, ZeRO-3, full recompute or offload lower the peak; Explore lists the splits that fit.")


def host_does_not_fit(results: dict) -> bool:
    """The engine says the node's host memory is exceeded: by the offloaded states (``host_fits``
    False) or by those and the in-memory checkpoints together (``host_fits_ckpt`` False)."""
    return any(results.get(k) is not None and not isinstance(results.get(k), str) and not bool(results.get(k))
               for k in ("host_fits", "host_fits_ckpt")) if results else False


def _host_fix_split(scenario, results: dict) -> str:
    """The split advice of :func:`host_no_fit_text` for the offloaded states: what lowers the bytes per
    node. A node holds min(gpus_per_node, n_gpus) × the per-GPU host bytes (review 47b): ZeRO-0 keeps a
    whole copy per DP rank (ZeRO ≥ 1 or TP / PP in place of DP help), ZeRO ≥ 1 shards over the job
    (only more nodes help), and an activation stash is split by CP / TP with SP or a smaller micro-batch,
    not by ZeRO (review 47h)."""
    p = getattr(scenario, "parallelism", None)
    zero = getattr(p, "zero_stage", None)
    act = num(results, "mem_act_offload_bytes") or 0.0
    per_gpu = None
    try:
        from planner import catalog as _cat
        gpn = _cat.resolve_system(scenario.cluster.system).gpus_per_node
        per_gpu = (num(results, "host_mem_per_node_bytes") or 0.0) / max(min(gpn, scenario.cluster.n_gpus), 1)
    except Exception:  # noqa: BLE001 - the general words then
        per_gpu = None
    acts = []
    if act > 0 and per_gpu and act >= 0.5 * per_gpu:
        acts.append("offload fewer activations (a smaller micro-batch, or CP / TP with sequence parallelism to split "
                    "them; ZeRO and more nodes leave them as they are)")
    if zero == 0:
        acts.append("use ZeRO ≥ 1 or a larger TP / PP in place of DP (ZeRO-0 keeps a whole copy on every DP rank; "
                    "more GPUs as DP make it worse)")
    elif zero is not None:
        acts.append("spread the job over more nodes (ZeRO shards the states over the job's GPUs, each node holding "
                    "its GPUs' share; more GPUs on the same node do not help)")
    else:
        acts.append("spread the job over more nodes (with ZeRO ≥ 1 each node holds its GPUs' share of the states; more "
                    "GPUs on the same node do not help), use ZeRO ≥ 1 or a larger TP / PP in place of DP where ZeRO is "
                    "0 (it keeps a whole copy on every DP rank)")
    return ", ".join(acts)


def host_no_fit_text(results: dict, host_memory_bytes: float | None, what: str = "below",
                     scenario=None) -> str | None:
    """The message for a scenario whose host (CPU) memory per node is exceeded: the bytes needed
    (``host_mem_per_node_bytes``, plus ``ckpt_host_mem_per_node_bytes`` for in-memory checkpoints)
    against the node's host memory, in GiB, and what would lower them (for ``scenario``, a
    :class:`planner.Scenario`, by its ZeRO stage and what dominates; general words without it). None
    when both fit (or the columns are absent)."""
    if not host_does_not_fit(results):
        return None
    off = num(results, "host_mem_per_node_bytes") or 0.0
    ck = num(results, "ckpt_host_mem_per_node_bytes") or 0.0
    have = f"{host_memory_bytes / GIB:,.1f} GiB" if host_memory_bytes is not None else "the host memory"
    states_over = results.get("host_fits") is not None and not bool(results.get("host_fits"))
    if states_over:
        need = (f"the offloaded states (optimizer, master weights, gradients or activations) need "
                f"{off / GIB:,.1f} GiB of host memory per node but the node has {have}")
        if ck > 0:
            need += f", before the in-memory checkpoints' {ck / GIB:,.1f} GiB"
        # review 47g: "use more GPUs or a larger TP / PP" did not help, or made it worse: a node holds its
        # GPUs' share, min(gpus_per_node, n_gpus) × the per-GPU states, which ZeRO ≥ 1 shards over DP
        fix = ("Offload less (or to NVMe), " + _host_fix_split(scenario, results)
               + ", or set a larger host memory override")
        stop = "As set, this run stops with a host out-of-memory error"
    else:
        stg = min(num(results, "ckpt_async_staging_per_node_bytes") or 0.0, ck)
        parts = []
        if ck - stg > 0:
            parts.append(("the in-memory checkpoints (host_memory tier, peer copies included)", ck - stg))
        if stg > 0:  # review 16a: async saves stage each shard in host memory before writing it
            parts.append(("the async saves' staging buffers", stg))
        # each size once (review h29d: "need 7.2 GiB per node (… buffers 7.2 GiB): 7.2 GiB")
        what_ck = (" and ".join(f"{w} {x / GIB:,.1f} GiB" for w, x in parts) if len(parts) > 1
                   else parts[0][0] if parts else "")
        need = (f"the checkpoints need {ck / GIB:,.1f} GiB per node for {what_ck}"
                + (f" on top of the offloaded states' {off / GIB:,.1f} GiB: {(ck + off) / GIB:,.1f} GiB"
                   if off > 0 else "") + f", but the node has {have}")
        # advice for the parts that are there (review 16 new-user: "drop the host_memory tier" for a tier
        # that held nothing), each a verb (review h29d: "Use save synchronously")
        acts = (["use fewer peer copies or drop the host_memory tier"] if ck - stg > 0 else []) + (
            ["save synchronously (no staging buffers; the host-memory tier may then be chosen instead)"]
            if stg > 0 else []) + [
            # ZeRO-0: one DP replica writes, a node holds min(gpus per node, TP·PP) shards of the whole
            # checkpoint (review 47h: 689.9 GiB at 1,024, 2,048 and 4,096 GPUs alike)
            "use ZeRO ≥ 1 (every DP rank then writes its shard) or TP · PP above the GPUs per node"
            if getattr(getattr(scenario, "parallelism", None), "zero_stage", None) == 0 else
            "spread the job over more nodes (each holds its GPUs' shards; more GPUs on the same node do not help)",
            "set a larger host memory override"]
        fix = ", ".join(acts[:-1]) + ", or " + acts[-1]
        fix = fix[0].upper() + fix[1:]
        stop = "As set, the checkpoints cannot be saved"
    return (f"**Does not fit in host memory:** {need} (GiB = 2³⁰ B). {stop}; the step time, MFU, throughput, "
            f"goodput, days, GPU-hours, cost and energy {what} assume that it fits. {fix}.")


def short_run_headline_text(notes: list | None) -> str | None:
    """Beside the headlines, where the engine's short-run note fires (``reliability._short_run_note``:
    the steady-state time to train above the finite-run one by more than 1 %): the run's own days and
    bill, read off that note, and where its reason is. Found by review 47g: the note was one bullet in
    the collapsed Formulas expander, the headlines 16 % above the run's own figure without a word."""
    note = next((n for n in notes or [] if str(n).startswith("The run is short against")), None)
    if note is None:
        return None
    m = re.search(r"gives about ([0-9.eE+-]+) d", note)
    if not m:
        return None
    try:
        days = float(m.group(1))
    except ValueError:
        return None
    when = fmt({"d": days}, "d", "days")
    bill = re.search(r"the wall time times a rate, about ([0-9.eE+-]+) GPU-h, ([0-9.eE+-]+) USD and "
                     r"([0-9.eE+-]+) MWh", note)
    bill_txt = ""
    if bill:
        try:  # in the headlines' own units (review 47h: "1.893e+07 USD" beside "$18.93 M")
            vals = {"g": float(bill.group(1)), "u": float(bill.group(2)), "e": float(bill.group(3))}
            bill_txt = f" ({fmt(vals, 'g', 'gpuh')}, {fmt(vals, 'u', 'usd')}, {fmt(vals, 'e', 'mwh')})"
        except ValueError:
            bill_txt = ""
    # the engine says where the Monte Carlo cannot check it (too many failures per run)
    mc = ("" if "Monte Carlo cannot check it" in note else
          "; the Monte Carlo below simulates the run as it is")
    return ("**A run short against its checkpoint interval:** the Days, Cost and Energy above are the renewal "
            f"model's steady-state rate; for a run of this length the same model gives about {when}{bill_txt}. "
            f"Why: the note under Formulas{mc}.")


def engine_zero_goodput_note(notes: list | None) -> str | None:
    """The engine's own reason for goodput 0 (``Report.notes``, from
    ``reliability.zero_goodput_reason``): the note that starts "Goodput is 0", if any."""
    for n in notes or []:
        if str(n).lstrip().lower().startswith("goodput is 0"):
            return str(n).strip()
    return None


def mc_refusal_text(refusal: str) -> str:
    """The Monte Carlo's refusal (``planner.simulate.too_many_failures`` / its InputError line)
    as a sentence for the page: without the ``simulate:`` prefix, one closing full stop."""
    t = refusal.strip()
    if t.lower().startswith("simulate:"):
        t = t[len("simulate:"):].strip()
    t = t[:1].upper() + t[1:]
    while t.endswith((".", ";", ",")):
        t = t[:-1].rstrip()
    return t.replace(").)", ")").replace("..", ".") + "."


def never_finishes_text(results: dict, explain: dict | None = None, notes: list | None = None,
                        monte_carlo: str = "below", mc_refusal: str | None = None) -> str:
    """Why the analytic model gives no finite time to train, in the engine's own words
    (``notes`` / ``explain``), and what the page still shows.

    The analytic goodput is 0 in several cases (``reliability.zero_goodput_reason``): recoveries
    that failures during them extend beyond the float range, checkpoints saved far less often than the job fails, or no
    tier that survives a class of failure, where each such failure restarts from the beginning.
    In the last case a run can still finish (the Monte Carlo shows how often), so the page does
    not claim that it never does: it says that the analytic model has no finite estimate and
    quotes the engine's reason."""
    explain = explain or {}
    reason = engine_zero_goodput_note(notes)
    # review 41b D6: the engine's note may give the finite-run figure (a run failures restart from
    # the beginning, session 41), which "no finite time" above it contradicted
    finite = bool(reason) and "for a run of this length" in reason
    parts = ["**The analytic model's steady state gives no finite time to train for this run (goodput 0)"
             + ("; the engine's note below gives the expected time for a run of this length" if finite else "")
             + ".**"]
    bits = []
    if (m := num(results, "mtbf_h")) is not None:
        bits.append(f"one failure every {fmt_duration(m * 3600.0)} for the whole job")
    for key, what in (("restart_frac", "recovery (restart + repair + reload)"), ("lost_work_frac", "lost work"),
                      ("ckpt_overhead_frac", "checkpoint stalls")):
        if (x := num(results, key)) is not None:
            bits.append(f"{what} {100 * x:,.1f} % of wall time")
    if bits:
        parts.append("In its terms: " + "; ".join(bits) + ".")
    if reason:
        parts.append(f"\n\nEngine: {reason}")
    else:
        # no such note: the other notes about this case, else the days formula
        specific = [str(n) for n in notes or [] if any(w in str(n) for w in ("infinite", "does not finish"))]
        for n in specific[:1]:
            parts.append(f"\n\nEngine: {n}")
        if not specific and "time_to_train_days" in explain:
            parts.append(f"\n\nEngine (`time_to_train_days`): `{explain['time_to_train_days']}`")
    if "goodput" in explain:
        parts.append(f"\n\nEngine (`goodput`): `{explain['goodput']}`")
    # (review 41c: the refusal was quoted here and again, whole, as the Monte Carlo panel's warning)
    mc = ("The Monte Carlo cannot simulate it either: its panel below says why." if mc_refusal else
          "The **Monte Carlo** below simulates the run failure by failure, restarts included: run it to see "
          "whether and when it finishes." if monte_carlo == "below" else
          "**Open in Plan** and run its Monte Carlo, which simulates the run failure by failure, restarts "
          "included, to see whether and when it finishes.")
    parts.append(f"\n\nSo days, cost and energy to train are shown as —. {mc}")
    return " ".join(parts)


#: Display kind of a result column, from its unit suffix (SI names; see the house rules).
_SUFFIX_KINDS = (("_bytes", "gib"), ("_days", "days"), ("_usd", "usd"), ("_mwh", "mwh"), ("_per_h", "per_h"),
                 ("_h", "h"), ("_s", "s"), ("_frac", "pct"))
_NAME_KINDS = {"mfu": "pct", "hfu": "pct", "mfu_precision_peak": "pct", "goodput": "pct", "goodput_first_order": "pct",
               "tokens_per_s": "tok",
               "tflops_per_gpu": "tflops", "fits": "bool", "gpu_hours": "gpuh"}


def fmt_col(results: dict, key: str) -> str:
    """A result column formatted with the unit its name states (``_bytes`` -> GiB, ``_s`` -> s ...)."""
    kind = _NAME_KINDS.get(key)
    if kind is None:
        kind = next((k for suf, k in _SUFFIX_KINDS if key.endswith(suf)), "g")
    if kind == "per_h":
        x = num(results, key)
        return DASH if x is None else f"{x:.4g} per h"
    if kind == "s" and "interval" in key:
        return fmt_interval(num(results, key))
    if key.endswith("_flop") or key.endswith("_flop_per_step"):
        x = num(results, key)
        return DASH if x is None else f"{x:.4g} FLOP"
    return fmt(results, key, kind)


# --------------------------------------------------------------------------------------
# Engine calls (cached, bounded)
# --------------------------------------------------------------------------------------


#: Longest user name shown in a sentence, a label or a table header (characters): the schema's.
NAME_MAX = _schema.NAME_MAX_CHARS
#: Longest user-derived message (a link warning, an import error) shown (characters).
MESSAGE_MAX = 3000


def one_line(text, limit: int | None = NAME_MAX) -> str:
    """``text`` as one line (``planner.schema.one_line``): white space folded, the characters that
    change how text reads without being seen (controls, bidirectional overrides, zero-width;
    ``schema.INVISIBLE``) stripped, never shown (review 13i), cut at ``limit`` with "…"."""
    return _schema.one_line(text, limit)


def plain(text, limit: int | None = NAME_MAX) -> str:
    """User text (a model or system name from a link or an import) safe inside st.caption /
    st.markdown and a widget label: one line (:func:`one_line`, at most ``limit`` characters),
    markdown, HTML, LaTeX ($) and colour directives (:red[...]) escaped, so a link cannot inject
    headers or formatted text into the page."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!$:|~<>&])", r"\\\1", one_line(text, limit))


#: Markdown that one character opens and closes (emphasis, strikethrough, LaTeX, code): harmless
#: while the text holds only one of it (nothing to pair with), so that one is left as it is.
_MD_PAIRED = (
    re.compile(r"\*"), re.compile(r"~"), re.compile(r"\$"), re.compile(r"`"),
    re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])"),  # an intraword _ (n_gpus) never pairs
)
_MD_ALWAYS = (
    (re.compile(r"<(?=[A-Za-z/!?])"), r"\\<"),  # an HTML tag or an <http://...> autolink
    (re.compile(r"&(?=#?[A-Za-z0-9]+;)"), r"\\&"),  # an entity (&#x202e; is a right-to-left override)
    (re.compile(r"\](?=[(\[])"), r"\\]"),  # the end of a link or image label: [text](url), ![alt](src)
    # a text directive (:red[...], :blue-background[...], a bare " :word", which Streamlit renders as
    # an empty span, dropping the word); only after a non-word character, as the directive itself
    # (escaping the colons of "pfs:auto:0" would split the text and let ":auto:" read as an emoji)
    (re.compile(r"(?<![A-Za-z0-9_]):(?=[A-Za-z])"), r"\\:"),
)


def md_text(text, limit: int | None = MESSAGE_MAX, *, whole: bool = True) -> str:
    """A message that quotes user text (a link warning, an import or validation error) safe
    inside st.warning / st.error / st.caption / a label / a tooltip: one line (:func:`one_line`, at
    most ``limit`` characters) in which no markdown construct can form — emphasis, strikethrough,
    code, LaTeX, links and images, HTML tags, entities, colour directives — while ordinary
    punctuation stays as it is (``cluster.n_gpus``, ``tp='abc'``, ``1.* keys``, ``[]``), so the
    message reads as in the CLI. ``whole``: the result is all the markdown of its paragraph (or
    follows plain words only), so a pairing character (``*`` ``~`` ``$`` `````` ``_``) that occurs
    once is left; pass False for text set inside other markdown (``**name**``), where every one is
    escaped. Not escapable (Streamlit rewrites the text after parsing): a bare URL (``www.x.com``)
    is still made a link, shown in full, and a known emoji shortcode (``:smile:``) an emoji."""
    t = one_line(text, limit).replace("\\", "\\\\")
    for pat in _MD_PAIRED:
        if not whole or len(pat.findall(t)) > 1:
            t = pat.sub(lambda m: "\\" + m.group(0), t)
    for pat, rep in _MD_ALWAYS:
        t = pat.sub(rep, t)
    return t


def code(text, limit: int | None = MESSAGE_MAX) -> str:
    """``text`` as one inline code span whatever it holds: one line (:func:`one_line`), fenced
    with one backtick more than its longest run of backticks (CommonMark), so a backtick in a
    name cannot close the span and let the rest be read as markdown."""
    t = one_line(text, limit)
    run = max((len(m) for m in re.findall(r"`+", t)), default=0)
    fence = "`" * (run + 1)
    pad = " " if run or t.startswith(" ") or t.endswith(" ") else ""
    return f"{fence}{pad}{t}{pad}{fence}"


def sj_key(sj: dict) -> str:
    return json.dumps(sj, sort_keys=True, default=str)


@st.cache_data(max_entries=64, show_spinner=False)
def evaluate_cached(sj_json: str) -> dict:
    """``planner.evaluate`` as a plain dict (results, stages, explain, notes, scenario)."""
    return planner.evaluate(json.loads(sj_json)).model_dump()


@st.cache_data(max_entries=64, show_spinner=False)
def accuracy_note_cached(sj_json: str) -> str | None:
    """``planner.validation.accuracy_note``: the published runs like this scenario; None when
    the validation files are absent or unreadable (the page then says nothing)."""
    from planner import validation

    try:
        return validation.accuracy_note(json.loads(sj_json))
    except (OSError, ValueError):
        return None


def validate(sj: dict) -> tuple[Scenario | None, list[str]]:
    try:
        return Scenario.model_validate(copy.deepcopy(sj)), []
    except ValidationError as e:
        # the page's scenario is JSON (an import, a link, the widgets): null / true / false as typed
        return None, [in_widget_units(m) for m in format_errors(e, json_spelling=True)]
    except Exception as e:  # noqa: BLE001 - show, never crash
        return None, [in_widget_units(str(e))]


#: Override fields whose sidebar box is not in bytes: (label of the box, scale, unit of the box).
_BOX_UNITS = {
    "hbm_usable_bytes": ("Usable HBM override", GIB, "GiB"),
    "host_memory_bytes": ("Host memory override", GIB, "GiB per node"),
    "nic_bw_per_gpu_bytes_per_s": ("NIC bandwidth override", GB, "GB/s per GPU"),
}
_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
#: ... or with thousands separators, as the schema prints a bound that six digits would round
#: (``107,374,182.4``, review 23)
_NUM_C = r"[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d*)?|\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"


def in_widget_units(msg: str) -> str:
    """An engine error about a sidebar box that is not in bytes, in the box's unit: the schema's
    ``cluster.overrides.hbm_usable_bytes = 2.14748e+11 ... <= 8.58993e+10 bytes (80 GiB)`` reads
    ``Usable HBM override = 200 GiB ... at most 80 GiB`` (the field name stays, in brackets)."""
    for field, (label, scale, unit) in _BOX_UNITS.items():
        path = f"cluster.overrides.{field}"
        if path not in msg:
            continue

        def _v(m, scale=scale):
            return f"{float(m.group(1)) / scale:,.4g}"

        msg = re.sub(rf"{re.escape(path)} = ({_NUM})", lambda m: f"{label} = {_v(m)} {unit}", msg)
        msg = re.sub(rf"0 < {field} <= ({_NUM}) bytes(?: \([^)]*\))?",
                     lambda m: f"more than 0 and at most {_v(m)} {unit}", msg)
        msg = re.sub(rf"{field} <= ({_NUM})(?: bytes)?(?: \([^)]*\))?",
                     lambda m: f"at most {_v(m)} {unit}", msg)
        # "allowed 0.1 to 80 GiB (1.07374e+08 to 8.58993e+10 bytes)": the box's unit only
        msg = re.sub(rf"(allowed {_NUM} to {_NUM} {re.escape(unit.split()[0])}) \({_NUM_C} to {_NUM_C} bytes\)", r"\1",
                     msg)
        msg += f" ({path} in JSON and links, in bytes)"
    return msg


# --------------------------------------------------------------------------------------
# State: URL -> session (once per session) and session -> URL (every run)
# --------------------------------------------------------------------------------------


def _preset_default() -> str:
    ids = preset_ids()
    return share.DEFAULT_PRESET if share.DEFAULT_PRESET in ids or not ids else ids[0]


def init_state() -> None:
    """Read the link once per session into the canonical scenario (before any widget)."""
    ss = st.session_state
    if ss.get(LOADED_KEY):
        return
    params = {k: st.query_params.get_all(k) for k in st.query_params}  # tp=2&tp=4: share warns
    scen_params = {k: v for k, v in params.items() if not k.startswith(PAGE_PREFIXES) and "." not in k}
    sj, warnings = share.params_to_scenario(scen_params)
    p = share.last_value(scen_params.get("p"))
    pid = p if p in preset_ids() else _preset_default()
    ss[SCENARIO_KEY] = sj
    ss["preset_id"] = pid
    ss[WARN_KEY] = warnings
    ss[LOADED_KEY] = True
    load_into_widgets(sj, pid)


def _page_value(key: str, warnings: list[str]) -> str | None:
    """A page's own link value (the last one), with a warning when the key is given more than once
    with different values, as the scenario keys get (review 15f: ``ex_top=5&ex_top=7`` used 7 without
    a word here, while ``planner sweep --link`` refuses it)."""
    v = st.query_params.get(key)
    every = st.query_params.get_all(key)
    if v is not None and len(set(every)) > 1:
        shown = ", ".join(share._show(x) for x in every[:5]) + (f", … {len(every) - 5:,} more" if len(every) > 5 else "")
        warnings.append(f"{key}: given {len(every):,} times ({shown}); used the last, {share._show(v)}")
    return v


def link_choice(key: str, allowed: list | tuple, default: Any, warnings: list[str]) -> Any:
    """A page's own link value ``key`` if it is one of ``allowed``; else ``default``, with a
    warning naming the key, the value and the allowed values."""
    v = _page_value(key, warnings)
    if v is None:
        return default
    if v in allowed:
        return v
    warnings.append(f"{key}={share._show(v)}: refused; allowed {', '.join(map(str, allowed))}; using {default}")
    return default


def link_int(key: str, lo: int, hi: int, default: int, warnings: list[str]) -> int:
    """A page's own whole-number link value in [lo, hi]; else ``default``, with a warning."""
    v = _page_value(key, warnings)
    if v is None:
        return default
    try:
        return share.page_int(v, lo, hi)  # ASCII digits only: not '1_000' (review 39)
    except ValueError:
        pass
    warnings.append(f"{key}={share._show(v)}: refused; allowed a whole number {lo:,} to {hi:,}; using {default}")
    return default


def show_link_warnings() -> None:
    for w in share.capped_warnings(st.session_state.get(WARN_KEY, [])):  # not 200 boxes (review 17b)
        st.warning(f"Link: {md_text(w)}", icon=":material/link_off:")


def write_url(sj: dict, extra: dict[str, str] | None = None) -> None:
    """The page's whole state into the URL (canonical, compact keys)."""
    params = share.scenario_to_params(_defaults_full(sj), preset=st.session_state.get("preset_id"))
    if extra:
        params.update({k: str(v) for k, v in extra.items() if v is not None})
    # always written: st.query_params holds the query string of this rerun's request, which can be older
    # than the address the browser shows (an interrupted run's write arrived after the request left);
    # the browser adds no history entry when the address is unchanged
    st.query_params.from_dict(params)
    st.session_state[URL_WRITTEN_KEY] = params
    st.session_state[URL_WIDGETS_KEY] = _widget_snapshot(tuple(extra or ()))


def _widget_snapshot(page_keys: tuple[str, ...]) -> dict:
    """The input widgets' values as the URL was written: the sidebar's (``w_*``, the preset box) and
    the page's own keys; file uploaders left out (their values are not plain data)."""
    ss = st.session_state
    plain = (bool, int, float, str, type(None), list, tuple)
    return {k: ss[k] for k in list(ss.keys())
            if isinstance(k, str) and ((k.startswith("w_") and k not in ("w_upload", "w_hf")) or k == PRESET_KEY
                                       or k in page_keys) and isinstance(ss[k], plain)}


def reread_moved_url(page_keys: tuple[str, ...] = ()) -> bool:
    """The browser's Back / Forward: a URL this session did not write.

    Each change of an input writes a new URL (a new history entry); Back brings an earlier one,
    and Streamlit re-syncs ``st.query_params`` to it on the rerun it sends. A rerun whose query
    string is not empty (a page switch clears it) and differs from the last one :func:`write_url`
    wrote is such a step: the link is read again as a new one — the scenario and the page's own
    keys (``page_keys``, popped so that the page reads them from the link) — instead of being
    overwritten by the state it left (review 45b: Back changed the address for a moment, then
    the page wrote the newer state over it). Call before :func:`init_state`. Returns whether it
    re-read."""
    ss = st.session_state
    written = ss.get(URL_WRITTEN_KEY)
    if not ss.get(LOADED_KEY) or written is None:
        return False
    now = st.query_params.to_dict()
    if not now or now == written:
        return False
    if not _is_history_step(ss.get(URL_WIDGETS_KEY) or {}):
        return False
    # another page's link (Compare's c_* and 1.* keys, Explore's ex_* on Plan, ...): not this page's
    # history; a page switch in AppTest keeps the old query string where a browser clears it
    if any("." in k or (k.startswith(PAGE_PREFIXES) and k not in page_keys) for k in now):
        return False
    ss[LOADED_KEY] = False
    ss.pop(URL_WRITTEN_KEY, None)
    for k in page_keys:
        ss.pop(k, None)
    return True


def _history_flag() -> bool | None:
    """Whether this rerun was sent by the browser's Back / Forward (Streamlit's own flag), None where unknown."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return getattr(ctx, "is_history_navigation", None) if ctx is not None else None


def _is_history_step(snap: dict) -> bool:
    """Whether this rerun, whose address differs from the one the page wrote last, is the browser's
    Back / Forward: Streamlit's own flag where it gives one (an edit whose request carried an older
    address is then never taken for Back: review 46g); else no input widget changed since that write
    (``snap``, the widgets' values at the write: an edit changes one, Back does not; review 45i)."""
    if (flag := _history_flag()) is not None:
        return flag
    ss = st.session_state
    return not any(k in ss and ss[k] != v for k, v in snap.items())  # (a widget not drawn may have left)


def _query_all() -> dict[str, list[str]]:
    """The query string now, every value of a repeated key (``to_dict`` keeps only the last)."""
    return {k: st.query_params.get_all(k) for k in st.query_params}


def note_page_url(page: str, keys: tuple[str, ...]) -> None:
    """Record the address a page of its own keys (Compare, Validate) has just written, and its
    widgets' values at that write, for :func:`page_url_moved`. Call after the page's
    ``st.query_params`` write."""
    ss = st.session_state
    ss[f"_url_written_{page}"] = (_query_all(), {k: ss[k] for k in keys if k in ss})


def page_url_moved(page: str, keys: tuple[str, ...], own=lambda k: False) -> bool:
    """The browser's Back / Forward on a page whose state is its own link keys (Compare,
    Validate): the rule of :func:`reread_moved_url` for those pages. True when this rerun's query
    string is not empty (a page switch clears it), differs from the one the page wrote last
    (:func:`note_page_url`), holds only this page's keys (``own(key)``), and is a history step
    (:func:`_is_history_step`, the rule Plan and Explore use).
    The caller then reads its keys from the link again. Call before :func:`keep_page_widgets`:
    a page switch is never a move (the page's saved widgets win, as before)."""
    ss = st.session_state
    rec = ss.get(f"_url_written_{page}")
    if rec is None or ss.get("_current_page") != page:
        return False
    written, snap = rec
    now = _query_all()
    if not now or now == written or not all(own(k) for k in now):
        return False
    return _is_history_step(snap)


# --------------------------------------------------------------------------------------
# Scenario <-> sidebar widgets
# --------------------------------------------------------------------------------------

#: (widget key, scenario path, to-widget converter, from-widget converter)
_SIMPLE: list[tuple[str, tuple[str, ...], Callable, Callable]] = []


def _reg(key, path, to_w=lambda v: v, from_w=lambda v: v):
    _SIMPLE.append((key, path, to_w, from_w))


def _sig12(x: float) -> float:
    """A value converted from a box's unit back to SI, to 12 significant digits: 8.2 trillion
    tokens is 8.2e12, not 8199999999999.999 (8.2 × 1e12 in binary floating point), so a link
    value survives the round trip through the box exactly (review 2026-11-30)."""
    return float(f"{float(x):.12g}")


def _opt_scale(scale):
    return (lambda v: None if v is None else float(v) / scale), (lambda v: None if v is None else _sig12(float(v) * scale))


_reg("w_n", ("cluster", "n_gpus"), int, int)
_to, _from = _opt_scale(1.0)
_reg("w_price", ("cluster", "overrides", "price_per_gpu_hour_usd"), _to, _from)
_to, _from = _opt_scale(GB)
_reg("w_nic", ("cluster", "overrides", "nic_bw_per_gpu_bytes_per_s"), _to, _from)
_to, _from = _opt_scale(GIB)
_reg("w_hbmu", ("cluster", "overrides", "hbm_usable_bytes"), _to, _from)
_reg("w_hostmem", ("cluster", "overrides", "host_memory_bytes"), _to, _from)
_to, _from = _opt_scale(1.0)
_reg("w_pwr", ("cluster", "overrides", "power_limit_w"), _to, _from)
_reg("w_pue", ("cluster", "pue"), float, float)
_reg("w_util", ("cluster", "utilisation_power_frac"), float, float)
_reg("w_tp", ("parallelism", "tp"), int, int)
_reg("w_pp", ("parallelism", "pp"), int, int)
_reg("w_cp", ("parallelism", "cp"), int, int)
_reg("w_ep", ("parallelism", "ep"), int, int)
_reg("w_etp", ("parallelism", "etp"), lambda v: None if v is None else int(v),
     lambda v: None if v is None else int(v))
_reg("w_vpp", ("parallelism", "vpp"), int, int)
_reg("w_z", ("parallelism", "zero_stage"), int, int)
_reg("w_dps", ("parallelism", "dp_shard"), lambda v: None if v is None else int(v),
     lambda v: None if v is None else int(v))
_reg("w_rcl", ("parallelism", "recompute_layers"), lambda v: None if v is None else int(v),
     lambda v: None if v is None else int(v))
_reg("w_rc", ("parallelism", "recompute"))
_reg("w_sch", ("parallelism", "schedule"))
_reg("w_sp", ("parallelism", "sequence_parallel"), bool, bool)
_reg("w_fa", ("parallelism", "flash_attention"), bool, bool)
_reg("w_ak", ("parallelism", "attention_kernel"))
_reg("w_tpo", ("parallelism", "tp_comm_overlap"), bool, bool)
_reg("w_dpo", ("parallelism", "dp_comm_overlap"), bool, bool)
_reg("w_epo", ("parallelism", "ep_comm_overlap"), bool, bool)
_reg("w_ep8", ("parallelism", "ep_dispatch_fp8"), bool, bool)
_reg("w_epn", ("parallelism", "ep_node_dispatch"), bool, bool)
_reg("w_off", ("parallelism", "offload_optimizer"))
_reg("w_offw", ("parallelism", "offload_master_weights"), bool, bool)
_reg("w_offg", ("parallelism", "offload_grads"), bool, bool)
_reg("w_offa", ("parallelism", "offload_activations"), bool, bool)
_reg("w_ls", ("parallelism", "layer_split"))
_reg("w_seq", ("training", "seq_len"), int, int)
_reg("w_gbs", ("training", "global_batch_size"), int, int)
_reg("w_mbs", ("training", "micro_batch_size"), int, int)
_reg("w_prec", ("training", "precision"))
_reg("w_gd", ("training", "grad_dtype"))
_reg("w_f8s", ("training", "fp8_scaling"))
_reg("w_f8a", ("training", "fp8_attention"), bool, bool)
_reg("w_ce", ("training", "cross_entropy"))
_reg("w_ew", ("training", "elementwise"))
_reg("w_tok", ("training", "tokens_total"), lambda v: float(v) / 1e12, lambda v: _sig12(float(v) * 1e12))
_reg("w_async", ("checkpoint", "async"), bool, bool)
_reg("w_cif", ("checkpoint", "async_interference_frac"), float, float)
_reg("w_rs", ("reliability", "rate_scale"), float, float)
_reg("w_hs", ("reliability", "hot_spare_nodes"), int, int)

_MODEL_FIELDS = [  # custom model widgets: (key, field, label)
    ("w_m_layers", "n_layers", "Layers"),
    ("w_m_hidden", "hidden_size", "Hidden size"),
    ("w_m_heads", "n_heads", "Attention heads"),
    ("w_m_kv", "n_kv_heads", "KV heads (GQA)"),
    ("w_m_ffn", "ffn_hidden_size", "FFN hidden size"),
    ("w_m_vocab", "vocab_size", "Vocabulary"),
]
_MOE_FIELDS = [
    ("w_m_experts", "n_experts", "Experts"),
    ("w_m_topk", "top_k", "Top-k"),
    ("w_m_eff", "expert_ffn_hidden_size", "Expert FFN"),
    ("w_m_shared", "n_shared_experts", "Shared experts"),
    ("w_m_fd", "first_dense_layers", "Dense first"),
]
MLA_HELP = ("Multi-head latent attention (DeepSeek-V2/V3) ranks and the sliding attention window "
            "(Mistral, Gemma 2, GPT-OSS) are not sidebar inputs: they are kept from the base model and "
            "travel in the share link (keys mlq, mlkv, mlqn, mlqr, mlv — mlkv=0 removes MLA; msw, mswf: "
            "window in tokens and share of windowed layers) and in scenario JSON.")


_OPTIONAL = ("w_price", "w_nic", "w_hbmu", "w_hostmem", "w_pwr", "w_dps", "w_etp", "w_rcl")


def _tier_key(use: Any) -> str | None:
    """Widget id of a checkpoint tier use: the catalogue id, or ``inline:<name>``."""
    t = use.get("tier") if isinstance(use, dict) else None
    if isinstance(t, str):
        return t
    if isinstance(t, dict):
        return INLINE_TIER + str(t.get("name", "tier"))
    return None


def _inline_stash(full: dict) -> dict:
    """Inline (not catalogued) objects of a scenario, kept so the sidebar can offer them."""
    cl = full.get("cluster") or {}
    out: dict[str, Any] = {}
    for name, v in (("sys", cl.get("system")), ("acc", cl.get("accelerator")),
                    ("fp", _get(full, ("reliability", "profile")))):
        if isinstance(v, dict):
            out[name] = copy.deepcopy(v)
    out["tiers"] = {k: copy.deepcopy(u) for u in (_get(full, ("checkpoint", "tiers")) or [])
                    if (k := _tier_key(u)) and k.startswith(INLINE_TIER)}
    return out


def _defaults_full(sj: dict) -> dict:
    """The scenario with schema defaults filled in (for seeding widgets), best effort."""
    try:
        return Scenario.model_validate(copy.deepcopy(sj)).to_json_dict()
    except Exception:
        pass
    # Invalid: fill defaults section by section from a default-valued scenario.
    from planner.schema import Checkpoint, Parallelism, Reliability, Training

    out = copy.deepcopy(sj)
    for name, cls in (("training", Training), ("parallelism", Parallelism), ("checkpoint", Checkpoint), ("reliability", Reliability)):
        base = cls().model_dump(mode="json", by_alias=True)
        base.update({k: v for k, v in (sj.get(name) or {}).items()})
        out[name] = base
    from planner.schema import Cluster

    cl = out.setdefault("cluster", {})
    for fname, field in Cluster.model_fields.items():  # every optional cluster field's default
        if not field.is_required() and fname not in cl:
            default = field.get_default(call_default_factory=True)
            cl[fname] = default.model_dump(mode="json") if hasattr(default, "model_dump") else default
    return out


def _get(d, path):
    cur = d
    for p in path:
        if not isinstance(cur, dict) or p not in cur:
            return None
        cur = cur[p]
    return cur


def _set(d, path, v):
    cur = d
    for p in path[:-1]:
        if not isinstance(cur.get(p), dict):
            cur[p] = {}
        cur = cur[p]
    cur[path[-1]] = v


def _model_dict(model: Any) -> dict:
    if isinstance(model, dict):
        return copy.deepcopy(model)
    try:
        m = catalog.models()[model]
    except Exception:
        return {}
    d = m.model_dump(mode="json", exclude_none=True)
    for k in ("source", "published_params_total", "published_params_active"):
        d.pop(k, None)
    d["name"] = f"custom ({model})"
    return d


def widget_values(sj: dict, pid: str | None = None) -> dict[str, Any]:
    """Every sidebar widget's value for a scenario."""
    full = _defaults_full(sj)
    vals: dict[str, Any] = {}
    for key, path, to_w, _ in _SIMPLE:
        v = _get(full, path)
        try:
            vals[key] = to_w(v) if v is not None or key in _OPTIONAL else None
        except (TypeError, ValueError):
            vals[key] = None
    model = full.get("model")
    vals["w_model"] = model if isinstance(model, str) else CUSTOM
    md = _model_dict(model)
    vals.update(_model_widget_values(md))
    cl = full.get("cluster") or {}
    sys_, acc = cl.get("system"), cl.get("accelerator")
    vals["w_sys"] = sys_ if isinstance(sys_, str) else (INLINE if isinstance(sys_, dict) else None)
    vals["w_acc"] = acc if isinstance(acc, str) else (INLINE if isinstance(acc, dict) else SYSTEMS_ACC)
    tiers = [u for u in (_get(full, ("checkpoint", "tiers")) or []) if _tier_key(u)]
    vals["w_tiers"] = [_tier_key(u) for u in tiers]
    for tid in _ids(catalog.storage_tiers):
        vals[f"w_ck_{tid}"], vals[f"w_ckr_{tid}"] = None, 0
    for u in tiers:
        k, iv = _tier_key(u), u.get("interval_s")
        vals[f"w_ck_{k}"] = None if iv is None else float(iv) / 60.0
        vals[f"w_ckr_{k}"] = int(u.get("replicas") or 0)
    prof = _get(full, ("reliability", "profile"))
    vals["w_fp"] = prof if isinstance(prof, str) else (INLINE if isinstance(prof, dict) else None)
    vals["_inline"] = _inline_stash(full)
    if pid is not None:
        vals[PRESET_KEY] = pid
    return vals


def _model_widget_values(md: dict) -> dict[str, Any]:
    vals: dict[str, Any] = {"w_m_name": str(md.get("name", "custom"))}
    for key, field, _ in _MODEL_FIELDS:
        v = md.get(field)
        if field == "n_kv_heads" and v is None:
            v = md.get("n_heads")
        vals[key] = int(v) if v is not None else 1
    hd = md.get("head_dim")
    vals["w_m_hd"] = int(hd) if hd else None
    vals["w_m_gated"] = bool(md.get("gated_mlp", True))
    vals["w_m_tied"] = bool(md.get("tied_embeddings", False))
    vals["w_m_norm"] = md.get("norm") if md.get("norm") in ("rmsnorm", "layernorm") else "rmsnorm"
    vals["w_m_bias"] = bool(md.get("linear_bias", False))
    vals["w_m_rope"] = bool(md.get("rope", True))
    vals["w_m_pos"] = int(md.get("learned_pos_embeddings") or 0)
    vals["w_m_do"] = float(md.get("dropout") or 0.0)
    vals["w_m_mtp"] = int(md.get("mtp_layers") or 0)
    moe = md.get("moe") or {}
    for key, field, _ in _MOE_FIELDS:
        v = moe.get(field)
        vals[key] = int(v) if v is not None else (0 if field in ("n_experts", "n_shared_experts",
                                                                  "first_dense_layers") else 1)
    vals["w_m_cf"] = float(moe.get("capacity_factor") or 1.0)
    vals["w_m_nodes"] = int(moe.get("max_nodes_per_token") or 0)
    if not moe:
        vals["w_m_topk"] = 2
        vals["w_m_eff"] = int(md.get("ffn_hidden_size", 1) or 1)
    return vals


def load_into_widgets(sj: dict, pid: str | None = None) -> None:
    """Set every sidebar widget from a scenario (only from a callback or before the widgets)."""
    ss = st.session_state
    ss[SCENARIO_KEY] = sj
    if pid is not None:
        ss["preset_id"] = pid
    ss.pop("_sch_note", None)  # the schedule / VPP note is about the widgets' last change, not a loaded scenario
    ss.pop("_ls_note", None)  # so is the layer split's
    ss.pop("_ls_auto", None)  # and its switch: the loaded scenario's split is the one chosen
    for k, v in widget_values(sj, pid).items():
        ss[k] = v


def _seed_missing() -> None:
    """Widgets not rendered on the previous page lost their state: refill from the canonical."""
    ss = st.session_state
    vals = widget_values(ss[SCENARIO_KEY], ss.get("preset_id"))
    for k, v in vals.items():
        if k not in ss:
            ss[k] = v


def _on_preset() -> None:
    pid = st.session_state[PRESET_KEY]
    try:
        from planner.presets import preset_json

        sj = preset_json(pid)
    except Exception as e:  # noqa: BLE001
        st.session_state["_preset_error"] = str(e)
        return
    st.session_state[WARN_KEY] = []
    _clear_hf_messages()
    load_into_widgets(sj, pid)


def _on_model() -> None:
    ss = st.session_state
    mid = ss["w_model"]
    _clear_hf_messages()
    if mid == CUSTOM:
        prev = ss.get(SCENARIO_KEY, {}).get("model")
        ss.update(_model_widget_values(_model_dict(prev)))
    _uneven_if_needed("model")
    if mid != CUSTOM:
        _fit_split_to_model()


def _fit_split_to_model() -> None:
    """After a catalogue model is chosen: a split the model cannot take (VPP·PP above its layers, EP
    on a dense model or above its experts, TP above its heads) is changed to the nearest one that
    fits (:func:`planner.share.nearest_split`, at most two fields), saying so under the model — what
    a share link with that model reads as (review 40c D4: on the 405B preset, Llama 3 70B stopped the
    page on "pp·vpp = 112 exceeds model.n_layers = 80" where the link opens with VPP 1). Nothing is
    changed where no near split fits (the page then shows the schema's message)."""
    ss = st.session_state
    sj = scenario_from_widgets()
    _, errs = validate(sj)
    if not errs:
        return
    near = share.nearest_split(sj)
    if near is None:
        return
    ls_note, ls_auto = ss.get("_ls_note"), ss.get("_ls_auto")
    load_into_widgets(near[0], ss.get("preset_id"))
    if ls_note is not None:
        ss["_ls_note"] = ls_note
    if ls_auto:
        ss["_ls_auto"] = True
    ss["_fit_note"] = (f"Split changed so it fits {_label(catalog.models, ss['w_model'])}: {near[1]} (what a share "
                       "link with this model reads as).")
    ss["_fit_note_sj"] = None  # kept while the scenario is the one fitted (_IMPORT_MESSAGES)


def _widget_layers() -> Any:
    """The layer count of the model the sidebar holds now: the preset's, or the custom box's."""
    ss = st.session_state
    mid = ss.get("w_model")
    if mid == CUSTOM:
        return ss.get("w_m_layers")
    m = catalog.models().get(mid)
    return None if m is None else m.n_layers


def _uneven_if_needed(cause: str) -> None:
    """on_change of the model, its layer count, PP and VPP: under the even layer split, a layer count
    that PP·VPP does not divide chooses the uneven split (the first L mod (PP·VPP) virtual stages take
    one extra layer) and says so — what a share link with the same values reads as (its split is
    fitted: ``planner.share``). Found by review 39B: choosing Llama 3 405B (126 layers) with PP 4 ·
    VPP 5 stopped the page on the schema's message, which named ``parallelism.layer_split``, not
    this box. Values the schema refuses anyway (PP·VPP above the layers, a box's bad value) are left
    to its message. ``cause``: "model" (the note is shown under the model too) or "split".

    A split switched here (``_ls_auto``; the user's own choice in the box, or a loaded scenario,
    clears it) goes back to even once a later model or split divides evenly again, saying so
    (review 40c D3: it stayed uneven, the same numbers but not the user's choice)."""
    ss = st.session_state
    ss.pop("_ls_note", None)
    auto = ss.get("w_ls") == "uneven" and ss.get("_ls_auto", False)
    if ss.get("w_ls") != "even" and not auto:
        ss.pop("_ls_auto", None)
        return
    vpp = ss.get("w_vpp")
    vpp = 1 if vpp is None else vpp  # 0: the box's error
    n_layers, pp = _widget_layers(), ss.get("w_pp")
    note = uneven_split_note(n_layers, pp, vpp)
    if note is not None:
        ss["w_ls"] = "uneven"
        ss["_ls_note"] = (cause, note)
        ss["_ls_auto"] = True
    elif auto and _whole_ge1(n_layers, pp, vpp) and n_layers % (pp * vpp) == 0:
        ss["w_ls"] = "even"
        ss.pop("_ls_auto", None)
        ss["_ls_note"] = (cause, f"Layer split uneven → even again: {n_layers:,} layers divide by PP·VPP = "
                                 f"{pp}·{vpp} = {pp * vpp}, {n_layers // (pp * vpp)} per virtual stage.")


def _whole_ge1(*values: Any) -> bool:
    """Whether every value is a whole number ≥ 1 (an int, not a bool)."""
    return all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in values)


def uneven_split_note(n_layers: Any, pp: Any, vpp: Any) -> str | None:
    """The note of a switch to the uneven layer split: ``n_layers`` that PP·VPP does not divide (and
    that is at least PP·VPP, which no split holds otherwise); None when none is needed, or when a value
    is not a whole number ≥ 1 (left to its box's or the schema's message)."""
    if not _whole_ge1(n_layers, pp, vpp):
        return None
    stages = pp * vpp
    if stages > n_layers or n_layers % stages == 0:
        return None
    return (f"Layer split even → uneven: {n_layers:,} layers do not divide by PP·VPP = {pp}·{vpp} = {stages}; "
            + ("the first virtual stage takes" if n_layers % stages == 1 else
               f"the first {n_layers % stages} of {stages} virtual stages take")
            + f" {n_layers // stages + 1} layers, the others {n_layers // stages}.")


def _on_layer_split() -> None:
    st.session_state.pop("_ls_note", None)  # the user's own choice now
    st.session_state.pop("_ls_auto", None)


def _on_schedule() -> None:
    """on_change of the pipeline schedule: VPP > 1 runs only with the interleaved schedule, so another
    schedule sets VPP to 1 and says so — what a share link with that pair reads as (``planner.share``:
    "changed to 1"). Found by review h27b: the widgets stopped the page with a schema error while the
    page's own link opened with numbers, two states for one input."""
    ss = st.session_state
    v = ss.get("w_vpp") or 1
    if ss.get("w_sch") != "interleaved" and v > 1:
        ss["w_vpp"] = 1
        ss["_sch_note"] = (f"VPP {v} → 1: only {_SCHED_LABELS['interleaved']} runs virtual stages "
                           f"({_SCHED_LABELS.get(ss.get('w_sch'), ss.get('w_sch'))} holds one stage per GPU).")
    else:
        ss.pop("_sch_note", None)
    _uneven_if_needed("split")  # VPP may have changed: the layer split's note is re-checked (review 40c)


def _on_vpp() -> None:
    """on_change of VPP: VPP > 1 under another schedule chooses the interleaved one, the only one with
    virtual stages, and says so (review h27d: the page stopped on the schema error)."""
    ss = st.session_state
    if (ss.get("w_vpp") or 1) > 1 and ss.get("w_sch") != "interleaved":
        old = _SCHED_LABELS.get(ss.get("w_sch"), ss.get("w_sch"))
        ss["w_sch"] = "interleaved"
        ss["_sch_note"] = f"schedule {old} → {_SCHED_LABELS['interleaved']}: VPP > 1 runs only with it."
    else:
        ss.pop("_sch_note", None)
    _uneven_if_needed("split")


def _whole(v: Any) -> Any:
    """A whole-number box's value as an int; a value that is not one (NaN, inf: only from session
    state, never from the box) as it is, for :func:`box_errors` to name and the schema to refuse."""
    try:
        return int(v)
    except (TypeError, ValueError, OverflowError):
        return v


def scenario_from_widgets() -> dict:
    """Scenario JSON from the sidebar widgets, keeping fields the widgets do not show."""
    ss = st.session_state
    sj = copy.deepcopy(ss[SCENARIO_KEY])
    for key, path, _, from_w in _SIMPLE:
        if key not in ss:
            continue
        v = ss[key]
        try:
            _set(sj, path, from_w(v) if v is not None else None)
        except (TypeError, ValueError, OverflowError):  # NaN / inf in a whole-number box: box_errors names it
            pass
    ov = _get(sj, ("cluster", "overrides")) or {}
    _set(sj, ("cluster", "overrides"), {k: v for k, v in ov.items() if v is not None})
    par = sj.setdefault("parallelism", {})
    par.pop("dp", None)  # derived from n_gpus / (tp·pp·cp)
    if par.get("vpp", 1) and par.get("vpp", 1) > 1 and par.get("schedule") != "interleaved":
        pass  # left to validation, which names the field
    # Model
    if ss.get("w_model") == CUSTOM:
        md = _model_dict(sj.get("model"))
        md["name"] = ss.get("w_m_name") or "custom"
        for key, field, _ in _MODEL_FIELDS:
            if key in ss and ss[key] is not None:
                md[field] = _whole(ss[key])
        if ss.get("w_m_hd") is not None:  # 0 or below is refused by box_errors, never read as "auto"
            md["head_dim"] = _whole(ss["w_m_hd"])
        else:
            md.pop("head_dim", None)
        md["gated_mlp"] = bool(ss.get("w_m_gated", True))
        md["tied_embeddings"] = bool(ss.get("w_m_tied", False))
        md["norm"] = ss.get("w_m_norm") or "rmsnorm"
        md["linear_bias"] = bool(ss.get("w_m_bias", False))
        md["rope"] = bool(ss.get("w_m_rope", True))
        md["learned_pos_embeddings"] = _whole(ss.get("w_m_pos") or 0)
        md["dropout"] = float(ss.get("w_m_do") or 0.0)
        md["mtp_layers"] = _whole(ss.get("w_m_mtp") or 0)
        ne = _whole(ss.get("w_m_experts") or 0)
        if ne != 0:  # below 0 is refused by box_errors (and the schema), never read as a dense model
            moe = dict(md.get("moe") or {})
            for key, field, _ in _MOE_FIELDS:
                if key in ss and ss[key] is not None:
                    moe[field] = _whole(ss[key])
            # the value typed, whatever it is (0 is refused by box_errors, not read as 1)
            moe["capacity_factor"] = float(ss["w_m_cf"]) if ss.get("w_m_cf") is not None else 1.0
            nodes = _whole(ss.get("w_m_nodes") or 0)
            if nodes != 0:  # 0 = no limit; below 0 is refused by box_errors
                moe["max_nodes_per_token"] = nodes
            else:
                moe.pop("max_nodes_per_token", None)
            md["moe"] = moe
        else:
            md.pop("moe", None)
        sj["model"] = md
    elif ss.get("w_model"):
        sj["model"] = ss["w_model"]
    # Hardware and profile ids (INLINE keeps the inline object from the link / JSON)
    inline = ss.get("_inline") or {}
    for wkey, path, stash in (("w_sys", ("cluster", "system"), "sys"), ("w_fp", ("reliability", "profile"), "fp")):
        v = ss.get(wkey)
        if v == INLINE and stash in inline:
            _set(sj, path, copy.deepcopy(inline[stash]))
        elif v and v != INLINE:
            _set(sj, path, v)
    acc = ss.get("w_acc")
    if acc == INLINE and "acc" in inline:
        _set(sj, ("cluster", "accelerator"), copy.deepcopy(inline["acc"]))
    elif acc and acc not in (SYSTEMS_ACC, INLINE):
        _set(sj, ("cluster", "accelerator"), acc)
    else:
        sj.get("cluster", {}).pop("accelerator", None)
    # Checkpoint tiers
    if "w_tiers" in ss:
        old = {_tier_key(u): u for u in (_get(sj, ("checkpoint", "tiers")) or []) if _tier_key(u)}
        old.update({k: u for k, u in (inline.get("tiers") or {}).items() if k not in old})
        tiers = []
        for k in ss["w_tiers"]:
            u = copy.deepcopy(old.get(k) or {"tier": k, "replicas": 0})
            iv = ss.get(f"w_ck_{k}")
            u["interval_s"] = None if iv is None else _sig12(float(iv) * 60.0)
            r = ss.get(f"w_ckr_{k}")
            if r is not None:
                u["replicas"] = int(r)
            tiers.append(u)
        _set(sj, ("checkpoint", "tiers"), tiers)
    # the preset's name describes its model and cluster: changed in the sidebar, it goes (as a link
    # or `--set` drops it; review 15f)
    pid = ss.get("preset_id")
    if pid:
        try:
            from planner.presets import drop_stale_name, preset_json

            drop_stale_name(sj, preset_json(pid))
        except Exception:  # noqa: BLE001 - an unknown preset keeps the name
            pass
    return sj


def _tier_scope(tid: str, inline_tiers: dict) -> str | None:
    """'node' or 'shared' for a catalogue or inline storage tier (None when unknown)."""
    try:
        if tid in inline_tiers:
            t = inline_tiers[tid].get("tier", inline_tiers[tid])
            return t.get("scope") if isinstance(t, dict) else None
        return catalog.storage_tiers()[tid].scope
    except Exception:  # noqa: BLE001 - an unknown tier keeps the input enabled; the engine judges
        return None


def _label(table: Callable[[], dict], i: str) -> str:
    """A catalogue choice as "name · id": the 300 px sidebar box cuts a long label without an
    ellipsis, so the name comes first and the id (the link and CLI key) takes the cut (review h27b:
    "dgx-h100 · NVIDIA DGX H10" read as another product)."""
    try:
        return f"{table()[i].name} · {i}"
    except Exception:
        return str(i)


#: Longest inline object name in a select box option (characters; the option is plain text).
OPTION_NAME_MAX = 80


def _inline_label(obj: Any) -> str:
    """A select box option for an inline object: its name as one line, at most
    :data:`OPTION_NAME_MAX` characters (Streamlit shows options as plain text, no markdown)."""
    name = obj.get("name", "unnamed") if isinstance(obj, dict) else "unnamed"
    return f"inline: {one_line(name, OPTION_NAME_MAX) or 'unnamed'} (from link / JSON)"


def _tier_option(i: str, inline_tiers: dict) -> str:
    """A Tiers option: the catalogue label, or an inline tier's id (``inline:<name>``) as one line."""
    return f"{one_line(i, OPTION_NAME_MAX)} (inline)" if i in inline_tiers else _label(catalog.storage_tiers, i)


#: The field's usual names for the schema's ids (the ids stay in links, JSON and the CLI).
#: Help of the whole-number boxes a user may fill with a large number. Streamlit's integer
#: number box keeps the digits before an exponent ("1e3" reads 1; review h27b): said where it bites.
WHOLE_BOX_HELP = "A whole number, typed in full (1000, not 1e3: this box reads 1e3 as 1, and 2.5 as 2)."
_SCHED_LABELS = {"1f1b": "1F1B", "interleaved": "interleaved 1F1B (VPP)", "gpipe": "GPipe",
                 "zero_bubble": "zero-bubble (ZB-H1)", "dualpipe": "DualPipe"}
_RC_LABELS = {"none": "none", "selective": "selective (attention core)", "full": "full (whole layers)",
              "op_sac": "per-op SAC (TorchTitan op_sac)"}
_OFF_LABELS = {"none": "none", "cpu": "CPU (host memory)", "nvme": "NVMe (ZeRO-Infinity)"}
_AK_LABELS = {"native": "native (written for the GPU)", "flash2": "FlashAttention-2 class"}


#: The sidebar's number boxes and the link key whose range (``planner.share.FIELDS``: the link's,
#: which reads the schema's constants) each takes: (widget key, link key, label in messages, what an
#: empty box means or None). The boxes have no browser-side bounds (review h27b, D4: Streamlit kept an
#: out-of-range entry red in the box without sending it, the range in a hover icon only, while the
#: page and its URL kept the old value); :func:`box_errors` names a value outside the range instead.
_MODEL_BOXES = (
    ("w_m_layers", "ml", "Model → Layers", None),
    ("w_m_hidden", "mh", "Model → Hidden size", None),
    ("w_m_heads", "ma", "Model → Attention heads", None),
    ("w_m_kv", "mk", "Model → KV heads (GQA)", None),
    ("w_m_ffn", "mf", "Model → FFN hidden size", None),
    ("w_m_vocab", "mv", "Model → Vocabulary", None),
    ("w_m_hd", "md", "Model → Head dim", "auto: hidden size ÷ attention heads"),
    ("w_m_pos", "mpos", "Model → Position rows", None),
    ("w_m_do", "mdo", "Model → Dropout probability", None),
    ("w_m_mtp", "mtp", "Model → MTP modules", None),
)
_MOE_BOXES = (  # read only with Experts ≠ 0 (Experts = 0: a dense model, the other MoE boxes unused)
    ("w_m_topk", "mtk", "Model → Top-k", None),
    ("w_m_eff", "mef", "Model → Expert FFN", None),
    ("w_m_shared", "mse", "Model → Shared experts", None),
    ("w_m_fd", "mfd", "Model → Dense first", None),
    ("w_m_cf", "mcf", "Model → Capacity factor", None),
)
_SCENARIO_BOXES = (
    ("w_n", "n", "Hardware → GPUs", None),
    ("w_price", "price", "Hardware → Price override, USD per GPU-hour", "the catalogue price"),
    ("w_nic", "nic", "Hardware → NIC bandwidth override", "the catalogue value"),
    ("w_hbmu", "hbmu", "Hardware → Usable HBM override", "the catalogue value"),
    ("w_hostmem", "hostmem", "Hardware → Host memory override", "the catalogue value"),
    ("w_pwr", "pwr", "Hardware → Power limit per GPU, W", "the part's TDP"),
    ("w_pue", "pue", "Hardware → PUE", None),
    ("w_util", "util", "Hardware → Average power draw, fraction of node power", None),
    ("w_tp", "tp", "Parallelism → TP", None),
    ("w_pp", "pp", "Parallelism → PP", None),
    ("w_cp", "cp", "Parallelism → CP", None),
    ("w_ep", "ep", "Parallelism → EP", None),
    ("w_vpp", "vpp", "Parallelism → VPP", None),
    ("w_etp", "etp", "Parallelism → Expert TP (MoE)", "= TP"),
    ("w_dps", "dps", "Parallelism → ZeRO shard group (HSDP), DP ranks", "all DP ranks"),  # review 39
    ("w_rcl", "rcl", "Parallelism → Full recompute: layers per chunk", "every layer"),
    ("w_seq", "s", "Training → Sequence length (tokens)", None),
    ("w_gbs", "gbs", "Training → Global batch (sequences)", None),
    ("w_mbs", "mbs", "Training → Micro-batch (sequences)", None),
    ("w_tok", "tok", "Training → Tokens to train", None),
)
_CKPT_REL_BOXES = (
    ("w_cif", "cif", "Checkpoints → Async-save slow-down (fraction of step time)", None),
    ("w_rs", "rs", "Reliability → Failure-rate scale", None),
    ("w_hs", "hs", "Reliability → Hot-spare nodes", None),
)


def box_errors() -> list[str]:
    """One line for each sidebar number box whose value is outside the range the page takes (the
    share link's, ``planner.share.FIELDS``), in the sidebar's order: the box's section and label, the
    value typed, the range, both in the box's unit, and the scenario field (``planner.share.
    box_value_error``). A NaN, an infinity or a negative override is named like any other value."""
    ss = st.session_state
    out: list[str] = []

    def check(key: str, link: str, label: str, empty: str | None, **kw) -> None:
        if key in ss and (e := share.field_box_error(link, ss[key], label, empty=empty, **kw)):
            out.append(e)

    if ss.get("w_model") == CUSTOM:
        for key, link, label, empty in _MODEL_BOXES:
            check(key, link, label, empty, where="model." + share.FIELDS[link].path[-1])
        check("w_m_experts", "me", "Model → Experts", None, where="model.moe.n_experts")
        if ss.get("w_m_experts") not in (0, None):  # MoE: its other boxes are read
            for key, link, label, empty in _MOE_BOXES:
                check(key, link, label, empty, where="model.moe." + share.FIELDS[link].path[-1])
            check("w_m_nodes", "mnl", "Model → Max nodes per token", None, lo=0,  # 0 = no limit
                  where="model.moe.max_nodes_per_token")
    for key, link, label, empty in _SCENARIO_BOXES:
        check(key, link, label, empty)
    for i, tid in enumerate(ss.get("w_tiers") or []):
        name = one_line(tid, 60)
        for e in (share.box_value_error(f"Checkpoints → {name}: interval", ss.get(f"w_ck_{tid}"),
                                        share.CK_INTERVAL_MIN_S, share.CK_INTERVAL_MAX_S, unit="minutes",
                                        scale=60.0, empty="the optimum", where=f"checkpoint.tiers[{i}].interval_s"),
                  share.box_value_error(f"Checkpoints → {name}: peer copies", ss.get(f"w_ckr_{tid}"), 0,
                                        share.CK_REPLICAS_MAX, whole=True, where=f"checkpoint.tiers[{i}].replicas")):
            if e:
                out.append(e)
    for key, link, label, empty in _CKPT_REL_BOXES:
        check(key, link, label, empty)
    return out


BOX_ERRORS_KEY = "_box_errors"


def sidebar_box_errors() -> list[str]:
    """The sidebar's :func:`box_errors` as of this run's :func:`render_sidebar`."""
    return list(st.session_state.get(BOX_ERRORS_KEY) or [])


def errors_text(errs: list[str], head: str = "A box in the sidebar holds a value outside its range") -> str:
    """The pages' error box for a list of messages: ``head``, that the other inputs are kept, then one
    bullet per message, each as code (escaped: a message may quote what was typed)."""
    return f"{head}; the other inputs are kept:\n\n" + "\n".join(f"- {code(e)}" for e in errs)


def render_sidebar(page: str, page_keys: tuple[str, ...] = ()) -> dict:
    """The scenario inputs, grouped Model · Hardware · Parallelism · Training · Checkpoints ·
    Reliability. Returns the scenario JSON they describe (not yet validated).

    The number boxes have no browser-side bounds (:func:`box_errors` names a value outside the
    range), and the decimal boxes show what was typed (``%g``, 6 significant digits): a rounding
    format showed an out-of-range price of 0.005 as the allowed "0.01" beside a message naming
    0.005, and pasting "0.01" over it sent nothing (review h28d). Usable HBM keeps 4 decimals.

    ``page`` names the calling page: widget identity is per page, so after a page switch every
    widget is refilled from the canonical scenario. ``page_keys``: the page's own link keys, read
    again with the scenario when the browser's Back / Forward brings another link
    (:func:`reread_moved_url`)."""
    moved = reread_moved_url(page_keys)
    init_state()
    if moved or st.session_state.get("_sidebar_page") != page:
        load_into_widgets(st.session_state[SCENARIO_KEY], st.session_state.get("preset_id"))
        st.session_state["_sidebar_page"] = page
    _seed_missing()
    ss = st.session_state
    sb = st.sidebar
    presets = preset_ids()
    if ss.get(PRESET_KEY) not in presets and presets:
        ss[PRESET_KEY] = presets[0]
    sb.selectbox("Start from a scenario preset", presets, key=PRESET_KEY, on_change=_on_preset,
                 help="Loads every input below from presets/scenarios.json.")
    if "_preset_error" in ss:
        sb.error(md_text(ss.pop("_preset_error")))

    models = _ids(catalog.models)
    with sb.expander("Model", expanded=True):
        opts = models + [CUSTOM]
        if ss.get("w_model") not in opts:
            ss["w_model"] = CUSTOM
        st.selectbox("Model", opts, key="w_model", on_change=_on_model,
                     format_func=lambda i: "custom (architecture fields)" if i == CUSTOM else _label(catalog.models, i))
        st.file_uploader("Import a Hugging Face config.json", type=["json"], key="w_hf", on_change=_on_hf_upload,
                         help="Reads the architecture (layers, widths, heads, GQA, MoE, MLA, sliding window, "
                         "biases, tied embeddings) from a Transformers config.json into the custom fields; "
                         "the rest of the scenario is kept. What the planner cannot hold is listed below.")
        if ss.get("_hf_error"):
            st.error(ss["_hf_error"])  # escaped where it is written (_on_hf_upload)
        for note in ss.get("_hf_notes") or []:
            st.caption(md_text(note))
        hf_split_box = st.empty()  # filled at the end, once it is known whether the note still holds
        if (ss.get("_ls_note") or ("",))[0] == "model":
            st.caption(ss["_ls_note"][1])
        if ss.get("w_model") == CUSTOM:
            st.text_input("Name", key="w_m_name")
            c1, c2 = st.columns(2)
            for j, (key, _, label) in enumerate(_MODEL_FIELDS):
                (c1 if j % 2 == 0 else c2).number_input(
                    label, step=1, key=key, **({"on_change": _uneven_if_needed, "args": ("model",)}
                                               if key == "w_m_layers" else {}))
            c1.number_input("Head dim", step=1, value=None, key="w_m_hd",
                            placeholder="auto", help="Empty = hidden size ÷ attention heads.")
            c2.number_input("Position rows", step=1, key="w_m_pos",
                            help="Rows of a learned position table (GPT-2/3); 0 = RoPE / ALiBi.")
            st.segmented_control("Norm", ["rmsnorm", "layernorm"], key="w_m_norm", width="stretch", required=True,
                                 help="LayerNorm has a bias vector per norm; RMSNorm does not.")
            st.number_input("Dropout probability", step=0.05, format="%g",
                            key="w_m_do", help="0 = no dropout masks (Llama, Mistral, DeepSeek); GPT-3 used 0.1, "
                            "whose masks add activation memory (Korthikanti et al. 2022, Table 2).")
            st.number_input("MTP modules (multi-token prediction)", step=1, key="w_m_mtp", help=_schema.ModelSpec.model_fields["mtp_layers"].description)
            st.checkbox("Gated MLP (SwiGLU)", key="w_m_gated")
            st.checkbox("Tied input / output embeddings", key="w_m_tied")
            st.checkbox("Biases in linear layers", key="w_m_bias")
            st.checkbox("Rotary position embedding (RoPE)", key="w_m_rope",
                        help="Off for ALiBi (MPT, BLOOM) or no position encoding; a learned position table "
                             "means no RoPE. Only the step time of eager elementwise kernels reads it.")
            st.caption("Mixture of experts (Experts = 0: dense model)")
            c1, c2 = st.columns(2)
            for j, (key, field, label) in enumerate(_MOE_FIELDS):
                (c1 if j % 2 == 0 else c2).number_input(label, step=1, key=key)
            c2.number_input("Capacity factor", step=0.25, format="%g",
                            key="w_m_cf", help="Load-imbalance factor on expert compute and all-to-all (≥ 1).")
            c1.number_input("Max nodes per token (0 = no limit)", step=1, key="w_m_nodes", help=MoESpec.model_fields["max_nodes_per_token"].description)
            st.caption("MLA: " + ("on (from the model this one was made from, or the imported file). " if isinstance(
                (ss.get(SCENARIO_KEY) or {}).get("model"), dict) and (ss.get(SCENARIO_KEY) or {})["model"].get("mla")
                else "none. ") + "MLA ranks are link / JSON only.", help=MLA_HELP)

    with sb.expander("Hardware", expanded=True):
        inline = ss.get("_inline") or {}
        systems = _ids(catalog.systems) + ([INLINE] if "sys" in inline else [])
        if ss.get("w_sys") not in systems and systems:
            ss["w_sys"] = systems[0]
        st.selectbox("System (node type)", systems, key="w_sys",
                     format_func=lambda i: _inline_label(inline.get("sys")) if i == INLINE else _label(catalog.systems, i))
        st.number_input("GPUs", step=8, key="w_n", help=WHOLE_BOX_HELP)
        accs = [SYSTEMS_ACC] + _ids(catalog.accelerators) + ([INLINE] if "acc" in inline else [])
        if ss.get("w_acc") not in accs:
            ss["w_acc"] = SYSTEMS_ACC
        st.selectbox("Accelerator override", accs, key="w_acc",
                     format_func=lambda i: _inline_label(inline.get("acc")) if i == INLINE else
                     ("the system's own" if i == SYSTEMS_ACC else _label(catalog.accelerators, i)))
        st.number_input("Price override, USD per GPU-hour", value=None, key="w_price", placeholder="catalogue price", format="%g")
        st.number_input("NIC bandwidth override, GB/s per GPU (1 GB = 10⁹ B)",
                        value=None, key="w_nic", placeholder="catalogue value", format="%g")  # 0.05 read "0.1" in "%.1f"
        st.number_input("Usable HBM override, GiB (1 GiB = 2³⁰ B)", value=None,
                        key="w_hbmu", placeholder="catalogue value", format="%.4f")  # 4 decimals: a peak 0.0007 GiB over the override must not read the same (review 15n)
        st.number_input("Host memory override, GiB per node", value=None,
                        key="w_hostmem", placeholder="catalogue value", format="%g")
        st.number_input("Power limit per GPU, W", value=None, key="w_pwr",
                        placeholder="the part's TDP", format="%g",
                        help="nvidia-smi -pl, from 0.25·TDP to the TDP. Below the TDP the matmul ceiling × "
                        "(limit / TDP)^0.237, a power rule derived from one measured same-die pair (GB200 / "
                        "B200; poorly determined, docs/timing.md), and the GPUs' share of node power × limit / TDP.")
        st.number_input("PUE", step=0.05, format="%g", key="w_pue",
                        help="Facility power ÷ IT power; energy only. Default 1.2: between a hyperscaler's fleet "
                        "(Google 1.10, 2023) and the industry average 1.56–1.58 (Uptime Institute survey 2023 / 2024).")
        st.number_input("Average power draw, fraction of node power", step=0.05,
                        format="%g", key="w_util", help="Average power as a fraction of whole-node power at full load. Default 0.8: BLOOM's "
                        "637 W per A100-hour (TDP + the nodes' idle draw; Luccioni et al., JMLR 2023) is 0.78 of a DGX A100's "
                        "6.5 kW / 8.")

    with sb.expander("Parallelism", expanded=True):
        c1, c2, c3 = st.columns(3)
        c1.number_input("TP", step=1, key="w_tp")
        c2.number_input("PP", step=1, key="w_pp", on_change=_uneven_if_needed, args=("split",))
        c3.number_input("CP", step=1, key="w_cp")
        c1.number_input("EP", step=1, key="w_ep")
        c2.number_input("VPP", step=1, key="w_vpp", on_change=_on_vpp,
                        help="Virtual stages per GPU (the interleaved schedule: a VPP above 1 chooses it).")
        c3.selectbox("ZeRO", [0, 1, 2, 3], key="w_z", help="1 = distributed optimizer; 3 = FSDP.")
        st.number_input("Expert TP (MoE)", step=1, value=None, key="w_etp",
                        placeholder="= TP", help=Parallelism.model_fields["etp"].description)
        st.number_input("ZeRO shard group (HSDP), DP ranks", min_value=None, max_value=None, step=1,
                        value=None, key="w_dps", placeholder="all DP ranks (full sharding)",
                        help=Parallelism.model_fields["dp_shard"].description)
        st.selectbox("Activation recompute", ["none", "selective", "full", "op_sac"], key="w_rc",
                     format_func=_RC_LABELS.get,
                     help="selective: the attention core is recomputed (Megatron, Korthikanti et al. 2022); "
                          "full: whole layers from their inputs; op_sac: TorchTitan's per-op selective "
                          "checkpointing (every second matmul of a block recomputed: K, O and W3 for Llama; "
                          "attention output saved; norms and activations recomputed).")
        st.number_input("Full recompute: layers per chunk", min_value=None, max_value=None, step=1, value=None,
                        key="w_rcl", placeholder="every layer",
                        help=Parallelism.model_fields["recompute_layers"].description)
        st.selectbox("Pipeline schedule", ["1f1b", "interleaved", "gpipe", "zero_bubble", "dualpipe"], key="w_sch",
                     format_func=_SCHED_LABELS.get, on_change=_on_schedule,
                     help=Parallelism.model_fields["schedule"].description)
        if ss.get("_sch_note"):
            st.caption(ss["_sch_note"])
        st.selectbox("Optimizer offload", ["none", "cpu", "nvme"], key="w_off", format_func=_OFF_LABELS.get)
        st.checkbox("Offload fp32 master weights", key="w_offw",
                    help=Parallelism.model_fields["offload_master_weights"].description)
        st.checkbox("Offload gradients", key="w_offg", help=Parallelism.model_fields["offload_grads"].description)
        st.checkbox("Offload activations", key="w_offa", help="Swap stashed activations to host memory (KARMA).")
        st.selectbox("Layer split over stages", ["even", "uneven"], key="w_ls", on_change=_on_layer_split,
                     help=Parallelism.model_fields["layer_split"].description)
        if ss.get("_ls_note"):
            st.caption(ss["_ls_note"][1])
        st.checkbox("Sequence parallel", key="w_sp")
        st.checkbox("Flash attention", key="w_fa")
        st.selectbox("Attention kernel", ["native", "flash2"], key="w_ak", format_func=_AK_LABELS.get,
                     help=Parallelism.model_fields["attention_kernel"].description)
        st.checkbox("Overlap TP communication", key="w_tpo")
        st.checkbox("Overlap DP communication", key="w_dpo",
                    help=Parallelism.model_fields["dp_comm_overlap"].description)
        st.checkbox("Overlap EP all-to-all", key="w_epo",
                    help=Parallelism.model_fields["ep_comm_overlap"].description)
        st.checkbox("FP8 expert dispatch", key="w_ep8",
                    help=Parallelism.model_fields["ep_dispatch_fp8"].description)
        st.checkbox("Node-aware expert dispatch (DeepEP)", key="w_epn",
                    help=Parallelism.model_fields["ep_node_dispatch"].description)
        st.caption("DP is derived: GPUs / (TP·PP·CP).")

    with sb.expander("Training", expanded=False):
        st.number_input("Sequence length (tokens)", step=1024, key="w_seq")
        st.number_input("Global batch (sequences)", step=1, key="w_gbs",
                        help=WHOLE_BOX_HELP)
        st.number_input("Micro-batch (sequences)", step=1, key="w_mbs")
        st.selectbox("GEMM precision", ["fp32", "tf32", "fp16", "bf16", "fp8", "fp4"], key="w_prec")
        st.selectbox("FP8 scaling", ["tensorwise", "rowwise"], key="w_f8s",
                     help=Training.model_fields["fp8_scaling"].description)
        st.checkbox("FP8 attention", key="w_f8a",
                    help=Training.model_fields["fp8_attention"].description)
        st.selectbox("Gradient accumulation dtype", ["fp32", "bf16", "fp16"], key="w_gd",
                     help=Training.model_fields["grad_dtype"].description)
        st.selectbox("Cross-entropy kernel", ["fused", "eager"], key="w_ce",
                     help="Memory of the logits on the last stage: fused / vocab-parallel / compiled loss "
                          "keeps fp32 logits, 4 B per logit; PyTorch eager F.cross_entropy on fp32 logits "
                          "peaks at 12 B per logit (log-softmax output + two gradients) at the start of the "
                          "backward, 16 B with TP (PyTorch's loss_parallel()), and with PP PyTorch "
                          "pipelining's last stage also keeps every micro-batch's logits (+ 4 B × the "
                          "micro-batches).")
        st.selectbox("Elementwise kernels", ["fused", "eager"], key="w_ew",
                     help="Step time of norms, RoPE and activations: fused (Transformer Engine, Apex, "
                          "torch.compile) reads and writes each once; eager PyTorch runs one kernel per op "
                          "(RMSNorm 36 B per hidden element instead of 4, fp32 RoPE 20 B per query / key "
                          "element, SwiGLU 10 B instead of 6 per FFN element), counted op by op on "
                          "TorchTitan's Llama. LayerNorm and GeLU are single kernels either way. Memory is "
                          "not changed.")
        st.number_input("Tokens to train (trillions, 10¹²)", step=0.5,
                        format="%g", key="w_tok")

    with sb.expander("Checkpoints", expanded=False):
        inline_tiers = (ss.get("_inline") or {}).get("tiers") or {}
        tiers = _ids(catalog.storage_tiers) + list(inline_tiers)
        ss["w_tiers"] = [t for t in ss.get("w_tiers", []) if t in tiers]
        _prev_replicas = {_tier_key(u): u.get("replicas") for u in
                          (_get(ss.get(SCENARIO_KEY) or {}, ("checkpoint", "tiers")) or []) if isinstance(u, dict)}
        st.multiselect("Tiers", tiers, key="w_tiers",
                       format_func=lambda i: _tier_option(i, inline_tiers))
        for tid in ss.get("w_tiers", []):
            for k, v in ((f"w_ck_{tid}", None), (f"w_ckr_{tid}", 0)):
                if k not in ss:
                    ss[k] = v
            c1, c2 = st.columns([3, 2])
            # the label is markdown: an inline tier's id holds the link's / the import's name
            c1.number_input(f"{md_text(tid, 60)}: interval, minutes", value=None, key=f"w_ck_{tid}", placeholder="optimum", format="%g",
                            help="Empty = the engine chooses the interval that maximises goodput.")
            shared = _tier_scope(tid, inline_tiers) == "shared"
            # Locked at 0 for a shared tier; one holding a refused count (an imported scenario JSON:
            # 'allowed 0') stays editable until it is 0 (found by review: it was locked at 3). Judged on
            # the last run's scenario: a disabled widget drops the value the browser sends with it.
            locked = shared and not _prev_replicas.get(tid)
            c2.number_input("peer copies", step=1, key=f"w_ckr_{tid}",
                            disabled=locked,
                            help=("A shared tier outlives any node: it takes no peer copies"
                                  + ("." if locked else " (set 0).") if shared else
                                  "Replicas on peer nodes (host memory; Gemini / REFT)."))
        st.checkbox("Asynchronous save", key="w_async")
        st.number_input("Async-save slow-down (fraction of step time)", step=0.01, format="%g", key="w_cif",
                        help="Steps run this much slower while an asynchronous save drains.")

    with sb.expander("Reliability", expanded=False):
        inline = ss.get("_inline") or {}
        profs = _ids(catalog.failure_profiles) + ([INLINE] if "fp" in inline else [])
        if ss.get("w_fp") not in profs and profs:
            ss["w_fp"] = profs[0]
        st.selectbox("Failure profile", profs, key="w_fp",
                     format_func=lambda i: _inline_label(inline.get("fp")) if i == INLINE else
                     _label(catalog.failure_profiles, i))
        st.number_input("Failure-rate scale (× profile)", step=0.25, format="%g", key="w_rs")
        st.number_input("Hot-spare nodes", step=1, key="w_hs")

    sj = scenario_from_widgets()
    ss[SCENARIO_KEY] = sj
    ss[BOX_ERRORS_KEY] = box_errors()  # the pages show them in place of the results (sidebar_box_errors)
    # The link's warnings describe the link as it was read: once an input differs from what the
    # link gave, they no longer apply (found by review: "... does not divide cluster.n_gpus = 8"
    # stayed on Explore after the GPUs were set to 1024)
    key = sj_key(sj)
    if "_link_sj" not in ss:
        ss["_link_sj"] = key
    elif ss.get(WARN_KEY) and key != ss["_link_sj"]:
        ss[WARN_KEY] = []
    # The same for what an import said about the scenario it loaded (found by review: "Import:
    # parallelism: tp·pp·cp·dp = 3·4·1·32 = 384 ≠ …" and the config.json's "the current split or
    # batch is not valid" stayed beside the results after TP / VPP were fixed): they are kept
    # while the scenario is the one the import gave, and go once an input differs from it.
    for msg, at in _IMPORT_MESSAGES:
        if at in ss:
            if ss[at] is None:
                ss[at] = key
            elif ss[at] != key:
                ss.pop(msg, None)
                ss.pop(at)
    if ss.get("_hf_split_note"):
        hf_split_box.caption(md_text(ss["_hf_split_note"]))
    elif ss.get("_fit_note"):
        hf_split_box.caption(md_text(ss["_fit_note"]))
    return sj


#: (message, scenario key it was written for) of the imports' messages about the scenario
#: loaded (the key is recorded on the first run after the import: None until then).
_IMPORT_MESSAGES = (("_upload_error", "_upload_error_sj"), ("_hf_split_note", "_hf_split_sj"),
                    ("_fit_note", "_fit_note_sj"))


def _clear_hf_messages() -> None:
    """A new scenario or model replaces the imported config.json's model: its notes go."""
    for k in ("_hf_error", "_hf_notes", "_hf_split_note", "_hf_split_sj", "_fit_note", "_fit_note_sj"):
        st.session_state.pop(k, None)


@st.cache_data(max_entries=16, show_spinner=False)
def _launch_exports(sj_json: str):
    """(Megatron-LM, TorchTitan, DeepSpeed) exports of a scenario JSON: cached, as each evaluates the
    scenario for its checkpoint steps (up to three times: the synchronous and the persistent-only
    plans) and the sidebar renders them on every rerun."""
    from planner.export import deepspeed_config, megatron_args, torchtitan_toml

    sj = json.loads(sj_json)
    return megatron_args(sj), torchtitan_toml(sj), deepspeed_config(sj)


def render_io(sj: dict, results: dict | None) -> None:
    """Scenario export / import (JSON) and results export (CSV), in the sidebar."""
    sb = st.sidebar
    with sb.expander("Export / import", expanded=False):
        st.download_button("Scenario as JSON", json.dumps(sj, indent=2), file_name="scenario.json",
                           mime="application/json", key="dl_json", on_click="ignore")
        if results:
            # the capacities the verdicts compare with, as `planner evaluate --format csv` writes them
            df = pd.DataFrame([{**results, **pbatch.capacities(sj)}])
            st.download_button("Results as CSV", df.to_csv(index=False), file_name="results.csv",
                               mime="text/csv", key="dl_csv", on_click="ignore")
            try:
                meg, tt, ds = _launch_exports(json.dumps(sj, sort_keys=True))
            except Exception as e:  # noqa: BLE001 - an invalid scenario has its error on the page
                st.caption(f"Launch configurations need a valid scenario ({md_text(e)}).")
            else:
                st.download_button("Megatron-LM arguments", meg.text, file_name="megatron_args.txt",
                                   mime="text/plain", key="dl_meg", on_click="ignore",
                                   help="Model, split, batch, precision, recompute and the checkpoint interval (in steps) as "
                                   "Megatron-LM flags; what Megatron cannot take as given is listed as '# note:' "
                                   "lines.")
                st.download_button("TorchTitan job TOML", tt.text, file_name="torchtitan.toml",
                                   mime="application/toml", key="dl_tt", on_click="ignore",
                                   help="The same for TorchTitan (the checkpoint interval in [checkpoint]); its notes are "
                                   "'# note:' lines.")
                st.download_button("DeepSpeed config JSON", ds.text, file_name="ds_config.json",
                                   mime="application/json", key="dl_ds", on_click="ignore",
                                   help="Batch, precision, ZeRO, offload and MiCS for DeepSpeed. What the file "
                                   "cannot carry (the split and recompute, set in the model code; the checkpoint "
                                   "steps, called in the training loop): " + " ".join(ds.notes))
        st.file_uploader("Import scenario JSON", type=["json"], key="w_upload", on_change=_on_upload)
        if "_upload_error" in st.session_state:
            st.error(st.session_state["_upload_error"])


def by_alias(data: dict) -> dict:
    """A scenario JSON with the schema's field names written as their aliases, the spelling the
    sidebar writes: ``checkpoint.async_`` → ``async`` and an inline failure profile's
    ``failure_class`` → ``class`` (review h29d: ``Scenario.model_dump(mode="json")`` keeps the
    names; the CLI reads both, the page kept ``async_`` beside the checkbox's ``async`` and the
    schema refused the pair, "checkpoint.async_: unknown field"). A key given both ways is left
    for the schema to refuse."""
    out = copy.deepcopy(data)
    ck = out.get("checkpoint")
    if isinstance(ck, dict) and "async_" in ck and "async" not in ck:
        ck["async"] = ck.pop("async_")
    prof = (out.get("reliability") or {}).get("profile") if isinstance(out.get("reliability"), dict) else None
    if isinstance(prof, dict) and isinstance(prof.get("classes"), list):
        for c in prof["classes"]:
            if isinstance(c, dict) and "failure_class" in c and "class" not in c:
                c["class"] = c.pop("failure_class")
    return out


def _on_upload() -> None:
    f = st.session_state.get("w_upload")
    st.session_state.pop("_upload_error", None)
    st.session_state.pop("_upload_error_sj", None)
    if f is None:
        return
    # the file's name as every message below quotes it: one line, at most 80 characters (review 14j:
    # three of the five messages quoted a 255-character name whole)
    name = one_line(f.name, 80)
    try:
        data = loads_json(f.getvalue().decode("utf-8-sig"))  # a key given twice is refused, as the CLI does
        if not isinstance(data, dict):
            raise ValueError("expected a JSON object")
    except Exception as e:  # noqa: BLE001
        st.session_state["_upload_error"] = md_text(f"Import: {name} is not a scenario JSON ({e}). "
                                                    "The current scenario is kept.")
        return
    if "model_type" in data or "architectures" in data:
        st.session_state["_upload_error"] = md_text(f"Import: {name} is a Hugging Face config.json, not a "
                                                    "scenario: use Model → Import a Hugging Face config.json. The "
                                                    "current scenario is kept.")
        return
    if "model" not in data and isinstance(data.get("scenario"), dict) and "results" in data:
        data = data["scenario"]  # `planner evaluate --format json` output: its scenario, as the CLI reads it
    data = by_alias(data)
    unknown = sorted(set(data) - set(Scenario.model_fields))
    if "model" not in data or "cluster" not in data or unknown:
        st.session_state["_upload_error"] = md_text(
            f"Import: {name} is not a scenario JSON (a scenario has 'model' and 'cluster'"
            + (f"; unknown top-level keys: {', '.join(one_line(k, 60) for k in unknown[:8])}" if unknown else "")
            + "). The current scenario is kept.")
        return
    # A value the sidebar's boxes cannot hold would be swapped by the box for another one (found by
    # review: seq_len 10⁸ became 1 and the page showed results for it), and an unknown field or id
    # left the page broken (review 42c: parallelism.zzz; "model": "gpt-9" became a custom model of
    # ones): the import is refused whole, naming every such field; the current scenario is kept.
    bad = share.import_refusals(data)
    if bad:
        st.session_state["_upload_error"] = (
            md_text(f"Import refused: {name} has values the Plan page cannot hold; the current scenario is kept.")
            + "\n\n" + "\n".join(f"- {code(b)}" for b in bad))
        st.session_state["_upload_error_sj"] = None  # goes once an input differs from the current scenario
        return
    _, errs = validate(data)
    if errs:  # each value representable, a cross-field rule fails: loaded so the named fields can be fixed
        st.session_state["_upload_error"] = md_text(f"Import: {name}: " + "; ".join(errs))
        st.session_state["_upload_error_sj"] = None  # until an input differs from the imported scenario
    _clear_hf_messages()
    load_into_widgets(data)


def _on_hf_upload() -> None:
    """Load a Hugging Face config.json's architecture into the custom model fields."""
    from planner.hf_config import import_hf_config
    from planner.schema import InputError

    ss = st.session_state
    f = ss.get("w_hf")
    _clear_hf_messages()
    if f is None:
        return
    name = one_line(f.name, 80)  # as the scenario import quotes it (review 14j)
    try:
        data = loads_json(f.getvalue().decode("utf-8-sig"))  # a key given twice is refused, as the CLI does
        imp = import_hf_config(data, name=None)
    except InputError as e:  # (a ValueError: before the JSON errors below)
        ss["_hf_error"] = md_text(f"{name}: " + "; ".join(line.removeprefix("config.json").lstrip(": ")
                                                            for line in e.lines))
        return
    except (UnicodeDecodeError, json.JSONDecodeError, _schema.JsonTextError) as e:  # not JSON, a key twice, 5,000 digits
        ss["_hf_error"] = md_text(f"{name}: not a JSON file ({e})")
        return
    except Exception as e:  # noqa: BLE001 - never a stack trace in the UI
        ss["_hf_error"] = md_text(f"{name}: could not be read as a Hugging Face config.json "
                                  f"({type(e).__name__}: {e})")
        return
    sj = scenario_from_widgets()
    md = imp.model.model_dump(mode="json", exclude_none=True)
    stem = Path(f.name).stem
    if md["name"].endswith("(config.json)") and stem != "config":
        md["name"] = stem  # the file's own name beats "<model_type> (config.json)"
    sj["model"] = md
    # the architecture the custom fields cannot hold (experts above the box's 100,000, a head dim of
    # 10⁶): refused whole, the current model kept (found by review: it became a dense model / "auto")
    bad = share.widget_range_errors({"model": md})
    if bad:
        ss["_hf_error"] = (md_text(f"{name}: refused, the Model section cannot hold these values; the current "
                                   "model is kept.") + "\n\n" + "\n".join(f"- {code(b)}" for b in bad))
        return
    notes = [f"{name}: {n}" for n in imp.notes]
    # a layer count PP·VPP does not divide under the even split: the uneven split, as choosing a
    # catalogue model does (_uneven_if_needed; review 40c D5: the import stopped the page instead)
    par = sj.get("parallelism") or {}
    ls_note = None
    if par.get("layer_split", "even") == "even":
        ls_note = uneven_split_note(md.get("n_layers"), par.get("pp", 1), par.get("vpp") or 1)
        if ls_note:
            par["layer_split"] = "uneven"
    _, errs = validate(sj)
    if errs:  # shown until an input differs from the scenario the import gave
        near = share.nearest_split(sj)  # named, not applied: the split is the user's (a link's is fitted)
        ss["_hf_split_note"] = ("With this model the current split or batch is not valid (the error is shown "
                                "above the results): "
                                + (f"the nearest split that fits changes {near[1]}; or " if near else "")
                                + "change TP / PP / VPP or the batch, set the layer split to uneven, or let "
                                "Explore find a split.")
        ss["_hf_split_sj"] = None
    ss["_hf_notes"] = notes
    load_into_widgets(sj, ss.get("preset_id"))
    if ls_note:
        ss["_ls_note"] = ("model", ls_note)  # (after load_into_widgets, which drops the last change's note)
        ss["_ls_auto"] = True


def open_in_plan(sj: dict) -> None:
    """Make ``sj`` the current scenario (widgets included); the caller switches page."""
    load_into_widgets(sj)
    st.session_state[WARN_KEY] = []


def keep_page_widgets(page: str, keys: tuple[str, ...]) -> None:
    """Widget identity is per page: after a page switch, put this page's widget values back
    from the copy saved on its last run. Call at the top of the page, before its widgets."""
    ss = st.session_state
    saved = ss.get(f"_saved_{page}")
    if ss.get("_current_page") != page and saved:
        for k, v in saved.items():
            ss[k] = v
    ss["_current_page"] = page


def save_page_widgets(page: str, keys: tuple[str, ...]) -> None:
    ss = st.session_state
    ss[f"_saved_{page}"] = {k: ss[k] for k in keys if k in ss}
