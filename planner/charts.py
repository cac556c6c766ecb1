"""Altair chart builders for the dashboard (no streamlit import).

Each builder takes engine outputs (a :class:`planner.Report`'s fields, an ``evaluate_many``,
``sweep``, ``simulate`` or ``validation`` table) and returns an ``alt.Chart``. They only
reshape and convert units for display (bytes -> GiB = 2**30 B, seconds, days, USD); every
number plotted is an engine output. Axis titles carry the unit.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import altair as alt
import numpy as np
import pandas as pd

from .memory import gib_decimals

GIB = 2**30

#: Memory components stacked in the per-stage chart, bottom to top: (result column, label).
#: ``mem_buffers_bytes`` is the safety margin (communication buffers, ZeRO-3 prefetch,
#: allocator fragmentation), shown as its own component, never folded into another.
MEMORY_COMPONENTS: tuple[tuple[str, str], ...] = (
    ("mem_weights_bytes", "weights"),
    ("mem_grads_bytes", "gradients"),
    ("mem_optimizer_bytes", "optimizer states"),
    ("mem_activations_bytes", "activations"),
    ("mem_logits_bytes", "logits + loss"),
    ("mem_buffers_bytes", "margin (buffers, fragmentation)"),
)

#: Colour of each memory component, in MEMORY_COMPONENTS order. Set here rather than left to the
#: theme: Streamlit's palette drew "optimizer states" in the same red as the usable-HBM line
#: (review 2026-11-30). No red and no grey: those are the capacity lines'.
MEMORY_COLORS: tuple[str, ...] = ("#1f77b4", "#9ecae9", "#ff7f0e", "#2ca02c", "#9467bd", "#e7ba52")
#: Capacity lines of the memory chart: usable HBM (solid red, drawn on top) and physical HBM
#: (dashed grey): (label, colour, dash).
CAPACITY_LINES: tuple[tuple[str, str, list[int]], ...] = (
    ("usable HBM", "#d62728", [1, 0]),
    ("physical HBM", "#7f7f7f", [6, 4]),
)

#: Step-time parts, in pipeline order: (result column, label).
STEP_PARTS: tuple[tuple[str, str], ...] = (
    ("t_compute_s", "compute"),
    ("t_tp_comm_s", "TP comm"),
    ("t_cp_comm_s", "CP comm"),
    ("t_ep_comm_s", "EP all-to-all"),
    ("t_pp_bubble_s", "PP bubble"),
    ("t_pp_p2p_s", "PP p2p"),
    ("t_dp_comm_exposed_s", "DP comm (exposed)"),
    ("t_offload_s", "offload"),
    ("t_optimizer_s", "optimizer step"),
)


def _finite(x) -> bool:
    try:
        return bool(np.isfinite(float(x)))
    except (TypeError, ValueError):
        return False


def memory_stages_frame(stages: Sequence[dict]) -> pd.DataFrame:
    """Long table (stage, component, gib, order) from ``Report.stages`` (bytes per GPU)."""
    rows = []
    for st in stages:
        j = int(st.get("stage", len(rows)))
        for order, (col, label) in enumerate(MEMORY_COMPONENTS):
            v = st.get(col)
            if v is None or not _finite(v):
                continue
            rows.append({"stage": f"stage {j}", "stage_index": j, "component": label,
                         "gib": float(v) / GIB, "order": order})
    df = pd.DataFrame(rows, columns=["stage", "stage_index", "component", "gib", "order"])
    # the stage's whole bar (GiB), shown in every segment's tooltip beside the component
    df["stage_total_gib"] = df.groupby("stage_index")["gib"].transform("sum")
    return df


def memory_stages_chart(stages: Sequence[dict], hbm_usable_bytes: float | None,
                        hbm_bytes: float | None = None) -> alt.Chart:
    """Memory per GPU stacked by component, one bar per pipeline stage, with the usable
    HBM line (solid red, on top) and the physical HBM line (dashed grey); no component is red
    or grey (``MEMORY_COLORS``).

    Units: GiB (2**30 bytes) per GPU.
    """
    df = memory_stages_frame(stages)
    labels = [lab for _, lab in MEMORY_COMPONENTS]
    n = max(1, df["stage"].nunique())
    # decimals that tell each stage's total apart from the capacity lines: with a fixed one
    # decimal a peak 0.0007 GiB above the usable HBM read the same as it (review 15n)
    d = gib_decimals(*(df.drop_duplicates("stage_index")["stage_total_gib"] * GIB),
                     hbm_usable_bytes, hbm_bytes)
    gib_fmt = f".{d}f"
    bars = alt.Chart(df).mark_bar().encode(
        x=alt.X("stage:N", title="pipeline stage", sort=alt.SortField("stage_index")),
        y=alt.Y("sum(gib):Q", stack="zero", title="memory per GPU (GiB, 2³⁰ B)"),
        color=alt.Color("component:N", sort=labels, title="component",
                        scale=alt.Scale(domain=labels, range=list(MEMORY_COLORS)),
                        legend=alt.Legend(labelLimit=280)),
        order=alt.Order("order:Q"),
        tooltip=["stage:N", "component:N", alt.Tooltip("gib:Q", title="GiB", format=gib_fmt),
                 alt.Tooltip("stage_total_gib:Q", title="stage total, GiB", format=gib_fmt)],
    )
    layers = [bars]
    lines = []
    if hbm_usable_bytes is not None and _finite(hbm_usable_bytes):
        lines.append({"line": "usable HBM", "gib": float(hbm_usable_bytes) / GIB})
    if hbm_bytes is not None and _finite(hbm_bytes) and (
        hbm_usable_bytes is None or abs(float(hbm_bytes) - float(hbm_usable_bytes)) > 1
    ):
        lines.append({"line": "physical HBM", "gib": float(hbm_bytes) / GIB})
    if lines:
        style = {name: (colour, dash) for name, colour, dash in CAPACITY_LINES}
        # physical first, so the usable line (0.4 GiB below it on an H100) is drawn over it
        ldf = pd.DataFrame(sorted(lines, key=lambda d: d["line"] == "usable HBM"))
        dom = [d["line"] for d in lines]
        rule = alt.Chart(ldf).mark_rule(size=2).encode(
            y=alt.Y("gib:Q"),
            stroke=alt.Stroke("line:N", title="capacity",
                              scale=alt.Scale(domain=dom, range=[style[n][0] for n in dom])),
            strokeDash=alt.StrokeDash("line:N", title="capacity",
                                      scale=alt.Scale(domain=dom, range=[style[n][1] for n in dom])),
            tooltip=["line:N", alt.Tooltip("gib:Q", title="GiB", format=gib_fmt)],
        )
        layers.append(rule)
    return alt.layer(*layers).resolve_scale(color="independent").properties(
        height=320, width=max(160, 70 * n), title="Memory per GPU by pipeline stage (GiB)")


def step_time_frame(results: dict) -> pd.DataFrame:
    rows = []
    for order, (col, label) in enumerate(STEP_PARTS):
        v = results.get(col)
        if v is None or not _finite(v):
            continue
        rows.append({"part": label, "seconds": float(v), "order": order})
    return pd.DataFrame(rows, columns=["part", "seconds", "order"])


def step_time_chart(results: dict) -> alt.Chart:
    """One optimizer step split into its parts (seconds). Parts missing from the results are
    left out; the total is the engine's ``step_time_s``."""
    df = step_time_frame(results)
    labels = [lab for _, lab in STEP_PARTS]
    return alt.Chart(df).mark_bar().encode(
        y=alt.Y("part:N", sort=labels, title=None, axis=alt.Axis(labelOverlap=False, labelLimit=200)),
        x=alt.X("seconds:Q", title="time per optimizer step (s)"),
        color=alt.Color("part:N", sort=labels, legend=None),
        tooltip=["part:N", alt.Tooltip("seconds:Q", title="s", format=".3f")],
    ).properties(height=max(120, 30 * len(df)), title="Step-time breakdown (s)")


#: Characters a chart subtitle line may have: the Plan page's half-width chart is about 460 px wide
#: at 1,400 px (review h29a: 462 px) and Vega's subtitle font takes about 6.5 px a character.
SUBTITLE_CHARS_MAX = 70


def goodput_interval_chart(curve: pd.DataFrame, current: pd.DataFrame | None = None) -> alt.Chart:
    """Goodput against checkpoint interval, one line per tier, best point of each marked.

    ``curve`` columns: tier, interval_s, goodput (an ``evaluate_many`` run over scenarios that
    differ only in that tier's interval). ``current``: tier, interval_s, goodput of the
    scenario as set (optional).
    """
    df = curve.copy()
    df["tier"] = df["tier"].map(lambda t: TIER_LABELS.get(t, t))  # found by review: the legend read pfs
    df["interval_min"] = df["interval_s"] / 60.0
    df["goodput_pct"] = 100.0 * df["goodput"]
    x = alt.X("interval_min:Q", scale=alt.Scale(type="log"), title="checkpoint interval (minutes, log scale)")
    top_pct = float(df["goodput_pct"].max()) if len(df) else 0.0
    # goodput near 0 (review 44b: every label read "0.0000000000000…"): labels in exponent form
    axis = alt.Axis(format="~e") if 0.0 < top_pct < 0.01 else alt.Axis()
    y = alt.Y("goodput_pct:Q", title="goodput (% of wall time)", scale=alt.Scale(zero=False), axis=axis)
    line = alt.Chart(df).mark_line().encode(
        x=x, y=y, color=alt.Color("tier:N", title="tier"),
        tooltip=["tier:N", alt.Tooltip("interval_min:Q", title="interval (min)", format=".3g"),
                 alt.Tooltip("goodput_pct:Q", title="goodput (%)", format=".2f")])
    if len(df):
        # of equal best goodputs the longest interval: below one step (or the async save) the engine
        # counts every interval as that floor, so the curve is flat there and its first point is an
        # interval the job cannot save at (review 15n: ◆ at 10 s beside a 658 s step and the ○ there)
        top = df.groupby("tier")["goodput"].transform("max")
        tied = df[df["goodput"] >= top * (1.0 - 1e-12)]
        best = tied.loc[tied.groupby("tier")["interval_s"].idxmax()]
        # a line at goodput 0 everywhere has no optimum (a failure class no tier survives, or
        # recoveries that never end): no ◆ on it (review 16a: it sat at the grid's longest interval)
        best = best[best["goodput"] > 0.0]
        # nor at the grid's longest interval: the goodput still rises there, the tier is better not
        # saved (the engine's "not saved") or saved less often than the grid goes (review h27b: a ◆
        # at 7 days read "save host memory weekly" for a tier the engine does not save)
        edge = df.groupby("tier")["interval_s"].max()
        at_edge = best["interval_s"].to_numpy() >= edge.reindex(best["tier"]).to_numpy() * (1.0 - 1e-12)
        n_edge = int(at_edge.sum())
        best = best[~at_edge]
    else:
        best = df
        n_edge = 0
    opt = alt.Chart(best.assign(mark="optimum")).mark_point(shape="diamond", size=140, filled=True).encode(
        x=x, y=y, color=alt.Color("tier:N"),
        tooltip=["tier:N", "mark:N", alt.Tooltip("interval_min:Q", title="interval (min)", format=".3g"),
                 alt.Tooltip("goodput_pct:Q", title="goodput (%)", format=".2f")])
    layers = [line, opt]
    if current is not None and len(current):
        cur = current.copy()
        cur["tier"] = cur["tier"].map(lambda t: TIER_LABELS.get(t, t))
        cur["interval_min"] = cur["interval_s"] / 60.0
        cur["goodput_pct"] = 100.0 * cur["goodput"]
        # in the tier's colour (found by review: a black ○ on two overlapping lines did not say
        # whose interval it marks)
        layers.append(alt.Chart(cur.assign(mark="current setting")).mark_point(
            shape="circle", size=110, filled=False, strokeWidth=2.5).encode(
            x=x, y=y, color=alt.Color("tier:N"), tooltip=["tier:N", "mark:N", alt.Tooltip("interval_min:Q", title="interval (min)", format=".3g"),
                               alt.Tooltip("goodput_pct:Q", title="goodput (%)", format=".2f")]))
    zero = len(df) > 0 and not bool((df["goodput"] > 0.0).any())
    sub: str | list[str] = "goodput 0 at every interval: no optimum  ○ in use" if zero else "◆ optimum  ○ in use"
    if n_edge and not zero:
        # a line of its own (review h29a F7: one line of 89 characters was cut at the chart's
        # width, "... i.e. not saving that t…"); each at most SUBTITLE_CHARS_MAX
        sub = [sub, "no ◆: best at the longest interval shown, i.e. not saving that tier"]
    return alt.layer(*layers).properties(
        height=300, title=alt.TitleParams("Goodput vs checkpoint interval", subtitle=sub))


#: Units a duration axis may take, largest first: (name, seconds). Days in a year as the Plan
#: page's headlines count them (app_pages/_common.py, DAYS_PER_YEAR).
DURATION_UNITS: tuple[tuple[str, float], ...] = (
    ("years", 365.25 * 86400.0), ("days", 86400.0), ("h", 3600.0), ("min", 60.0), ("s", 1.0), ("ms", 1e-3))
#: A time to train at or above this many days is shown in years (the headlines' threshold).
YEARS_ABOVE_DAYS = 1000.0


#: An hours row (the Monte Carlo's work lost and recovery) reads in days from this many hours on.
HOURS_UP_TO_DAYS = 10_000.0


def duration_unit(top_s: float, own: str = "days") -> tuple[str, float]:
    """(unit, seconds per unit) for durations whose largest value is ``top_s`` seconds: ``own`` when
    the value reaches 1 of it (days: years from :data:`YEARS_ABOVE_DAYS` days on), else the largest
    unit the value reaches (ms below 1 s). The rule of the Plan page's Monte Carlo table
    (``app_pages/plan.py``, ``_mc_unit``), so the histogram and the table read in one unit."""
    sizes = dict(DURATION_UNITS)
    if own == "h" and _finite(top_s) and top_s >= HOURS_UP_TO_DAYS * 3600.0:
        # hours beyond 10,000 in days (then years), as the time to train reads (review 44b: "recovery,
        # h 117,789.6" beside "time to train, years")
        own = "days"
    if own == "days" and _finite(top_s) and top_s >= YEARS_ABOVE_DAYS * 86400.0:
        return "years", sizes["years"]
    if not _finite(top_s) or top_s <= 0 or top_s >= sizes[own]:
        return own, sizes[own]
    return next(((n, u) for n, u in DURATION_UNITS[1:] if top_s >= u), DURATION_UNITS[-1])


#: Decimals of a duration in each unit (the Plan page's Monte Carlo table's, ``app_pages/plan.py``).
DURATION_DECIMALS = {"years": 1, "days": 1, "h": 1, "min": 1, "s": 2, "ms": 1}

#: Units a cost column may take, largest first: (name, USD per unit); "M USD" is the usual one.
COST_UNITS: tuple[tuple[str, float], ...] = (("T USD", 1e12), ("B USD", 1e9), ("M USD", 1e6), ("k USD", 1e3), ("USD", 1.0))


def _top(values) -> float:
    v = pd.to_numeric(pd.Series(list(values), dtype=object), errors="coerce").to_numpy(dtype=float)
    v = np.abs(v[np.isfinite(v)])
    return float(v.max()) if len(v) else 0.0


def days_column(days: Iterable[float]) -> tuple[str, float, int]:
    """(unit, factor from days, decimals) for a column of times to train in days: days, years from
    1,000 days on (:func:`duration_unit`, the headlines' rule), and below one day the largest unit
    the longest value reaches (h, min, s). Found by review 17b: Explore's table for 10⁸ tokens on 8
    GPUs read "0.0" days and "0.00" M USD in every row, the column it is ranked on unreadable."""
    unit, size = duration_unit(_top(days) * 86400.0, "days")
    return unit, 86400.0 / size, DURATION_DECIMALS[unit]


def cost_column(usd: Iterable[float]) -> tuple[str, float, int]:
    """(unit, factor from USD, decimals) for a column of costs: T USD from $1 T on (two decimals; review 48b:
    "3,426 B USD" beside a "$3.43 T" headline), B USD from $1 B on (two decimals; review
    44b: "7,382.42" M USD beside a "$7.4 B" headline), M USD from $1 M on (two decimals),
    k USD from $1,000 (one decimal), else USD with two decimals, or below $1 as many as give the
    largest value three significant digits ($0.00340)."""
    top = _top(usd)
    if top == 0:  # no finite cost (or all zero): the usual unit
        return "M USD", 1e-6, 2
    name, size = next(((n, u) for n, u in COST_UNITS if top >= u), COST_UNITS[-1])
    if name == "USD" and 0 < top < 1:
        return name, 1.0, min(12, int(np.ceil(-np.log10(top))) + 2)
    return name, 1.0 / size, {"T USD": 2, "B USD": 2, "M USD": 2, "k USD": 1, "USD": 2}[name]


def time_to_train_hist(sim: pd.DataFrame, analytic_days: float | None = None, bins: int = 40) -> alt.Chart:
    """Monte Carlo distribution of the time to train, with the analytic expectation as a rule
    when given. The unit is chosen by size from the trials' mean and P10 / P50 / P90 (the
    quantities of the summary table, :func:`duration_unit`): a 1.2 s run is drawn in s, not as
    0.00001 days, a run of centuries in years (found by review: the axis said days under a table in
    s). Trials that never finish (not finite) are left out of the bars."""
    v = pd.to_numeric(sim["time_to_train_days"], errors="coerce").to_numpy(dtype=float)
    fin = v[np.isfinite(v)]
    if len(v):
        with np.errstate(invalid="ignore"):
            q = np.percentile(v, [10, 50, 90])
        marks = [float(np.mean(v)), *(float(x) for x in q)]
    else:
        marks = []
    top_s = max((abs(x) * 86400.0 for x in marks if _finite(x)), default=0.0)
    unit, size = duration_unit(top_s, "days")
    scale = 86400.0 / size
    df = pd.DataFrame({"t": fin * scale})
    title = f"time to train ({unit})"
    hist = alt.Chart(df).mark_bar(opacity=0.8).encode(
        x=alt.X("t:Q", bin=alt.Bin(maxbins=bins), title=title),
        y=alt.Y("count():Q", title="trials"),
        # the bar's range with its count (found by review: the tooltip said only "trials | 73")
        tooltip=[alt.Tooltip("t:Q", bin=alt.Bin(maxbins=bins), title=unit, format=".3g"),
                 alt.Tooltip("count():Q", title="trials")],
    )
    layers = [hist]
    if analytic_days is not None and _finite(analytic_days):
        layers.append(alt.Chart(pd.DataFrame({"t": [float(analytic_days) * scale], "what": ["analytic expectation"]}))
                      .mark_rule(color="#d62728", strokeDash=[6, 4], size=2)
                      .encode(x="t:Q", tooltip=["what:N", alt.Tooltip("t:Q", title=unit, format=".3g")]))
    return alt.layer(*layers).properties(height=260, title=f"Monte Carlo: time to train ({unit})")


#: Tooltip titles of a sweep row's split columns (the field's usual names, not the column ids;
#: found by review: the Explore charts' tooltips read micro_batch_size, zero_stage).
SPLIT_TITLES = {"tp": "TP", "pp": "PP", "dp": "DP", "cp": "CP", "ep": "EP", "vpp": "VPP",
                "micro_batch_size": "micro-batch", "zero_stage": "ZeRO stage", "recompute": "recompute",
                "schedule": "schedule"}


def _split_tips(d: pd.DataFrame, cols) -> list:
    return [alt.Tooltip(f"{c}:{'N' if c in ('recompute', 'schedule') else 'Q'}", title=SPLIT_TITLES.get(c, c))
            for c in cols if c in d.columns]


#: Readable names of the checkpoint tiers for chart legends (the ids stay in links and JSON).
TIER_LABELS = {"host_memory": "host memory", "local_nvme": "local NVMe", "pfs": "parallel file system",
               "object_store": "object store"}


def throughput_memory_scatter(df: pd.DataFrame, color_by: str = "tp") -> alt.Chart:
    """Sweep: tokens/s against peak memory per GPU, coloured by TP or PP."""
    d = df.copy()
    d["mem_gib"] = d["mem_total_bytes"] / GIB
    d["tokens_per_s_m"] = d["tokens_per_s"] / 1e6
    tips = _split_tips(d, ("tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch_size", "zero_stage", "recompute"))
    return alt.Chart(d).mark_circle(size=40, opacity=0.7).encode(
        x=alt.X("mem_gib:Q", title="peak memory per GPU (GiB)"),
        y=alt.Y("tokens_per_s_m:Q", title="throughput (million tokens/s)"),
        color=alt.Color(f"{color_by}:O", title=color_by.upper(), scale=alt.Scale(scheme="viridis")),
        tooltip=tips + [alt.Tooltip("mem_gib:Q", title="GiB", format=".1f"),
                        alt.Tooltip("tokens_per_s_m:Q", title="M tok/s", format=".3f")],
    ).properties(height=320, title="Throughput vs memory per GPU")


def pareto_cost_days_chart(df: pd.DataFrame, front_col: str = "pareto_time_cost") -> alt.Chart:
    """Sweep: cost (USD) against days to train, every feasible split grey, Pareto front
    (engine's ``pareto_time_cost`` flag) as a line."""
    d = df.copy()
    # units by size, as the Explore table's columns (days_column / cost_column; review 17b: a 10⁸-token
    # sweep's tooltips read "days 0.0", "M USD 0.00" on every point)
    t_unit, t_scale, t_dec = days_column(d["time_to_train_days"])
    c_unit, c_scale, c_dec = cost_column(d["cost_usd"])
    d["t_shown"] = d["time_to_train_days"] * t_scale
    d["cost_shown"] = d["cost_usd"] * c_scale
    c_title = {"M USD": "million USD"}.get(c_unit, c_unit)
    tips = _split_tips(d, ("tp", "pp", "dp", "cp", "micro_batch_size"))
    val_tips = [alt.Tooltip("t_shown:Q", title=t_unit, format=f",.{t_dec}f"),
                alt.Tooltip("cost_shown:Q", title=c_unit, format=f",.{c_dec}f")]
    base = alt.Chart(d).mark_circle(size=30, color="#9e9e9e", opacity=0.5).encode(
        x=alt.X("t_shown:Q", title=f"time to train ({t_unit})", scale=alt.Scale(zero=False)),
        y=alt.Y("cost_shown:Q", title=f"cost ({c_title})", scale=alt.Scale(zero=False)),
        tooltip=tips + val_tips)
    layers = [base]
    if front_col in d.columns:
        f = d[d[front_col].astype(bool)].sort_values("time_to_train_days")
        # Explicit point colour: Streamlit's chart theme would otherwise draw the points blue.
        layers.append(alt.Chart(f).mark_line(
            color="#d62728", point=alt.OverlayMarkDef(color="#d62728", size=70, filled=True)).encode(
            x="t_shown:Q", y="cost_shown:Q", tooltip=tips + val_tips))
    return alt.layer(*layers).properties(height=320, title=f"Cost vs time to train ({t_unit}; red: Pareto front)")


#: Metrics of the Compare page: (column, label with unit, scale for display).
COMPARE_METRICS: tuple[tuple[str, str, float], ...] = (
    ("mem_total_bytes", "peak memory per GPU (GiB)", 1 / GIB),
    ("step_time_s", "step time (s)", 1.0),
    ("mfu", "MFU (%)", 100.0),
    ("tokens_per_s", "throughput (M tokens/s)", 1e-6),
    ("goodput", "goodput (%)", 100.0),
    ("time_to_train_days", "time to train (days)", 1.0),
    ("cost_usd", "cost (M USD)", 1e-6),
)


#: How a scenario that does not fit in memory (``fits`` False) is told apart in the Compare chart.
NO_FIT = "does not fit in HBM"


#: The Compare chart's memory value of a scenario that fits in HBM but not in the node's host
#: memory (the engine's ``host_fits`` or ``host_fits_ckpt`` False): drawn as one that does not fit.
HOST_NO_FIT = "does not fit in host memory"


def _false(res: dict, key: str) -> bool:
    v = res.get(key)
    return v is not None and not isinstance(v, str) and not bool(v)


def compare_metrics(results: dict[str, dict]) -> list[tuple[str, str, float]]:
    """:data:`COMPARE_METRICS` with the time to train and the cost in a unit by size over the slots
    (:func:`days_column`, :func:`cost_column`): "time to train (min)", "cost (USD)" when every slot
    is short. Found by review 17b: two 10⁸-token runs were drawn as 0.0171 days and 0.000007 M USD."""
    t_unit, t_scale, _ = days_column([r.get("time_to_train_days") for r in results.values()])
    c_unit, c_scale, _ = cost_column([r.get("cost_usd") for r in results.values()])
    own = {"time_to_train_days": (f"time to train ({t_unit})", t_scale), "cost_usd": (f"cost ({c_unit})", c_scale)}
    return [(col, *own[col]) if col in own else (col, label, scale) for col, label, scale in COMPARE_METRICS]


def compare_frame(results: dict[str, dict]) -> pd.DataFrame:
    """Long table (scenario, metric, value, memory) over ``COMPARE_METRICS`` for ``{label: results}``;
    ``memory`` is "fits", :data:`NO_FIT` (the engine's ``fits`` False) or :data:`HOST_NO_FIT`
    (fits in HBM, but ``host_fits`` or ``host_fits_ckpt`` False; review 16d: such a slot was drawn
    as "memory: fits" while the page's caption called it pale)."""
    rows = []
    metrics = compare_metrics(results)
    for name, res in results.items():
        memory = (NO_FIT if _false(res, "fits") else
                  HOST_NO_FIT if _false(res, "host_fits") or _false(res, "host_fits_ckpt") else "fits")
        for col, label, scale in metrics:
            v = res.get(col)
            if v is None or not _finite(v):
                continue
            rows.append({"scenario": name, "metric": label, "value": float(v) * scale, "memory": memory})
    return pd.DataFrame(rows, columns=["scenario", "metric", "value", "memory"])


#: Colours of Compare's 2–4 slots (Tableau 10's blue, orange, green and purple): none red, the colour
#: of the "does not fit" outline.
COMPARE_COLORS = ["#4c78a8", "#f58518", "#54a24b", "#b279a2"]


def compare_chart(results: dict[str, dict]) -> alt.Chart:
    """Grouped bars: one small panel per metric (own y scale, unit in the panel title). A scenario
    that does not fit in memory is drawn pale (opacity 0.3) with a dashed red outline, so its
    time and cost never pass for the cheapest option."""
    df = compare_frame(results)
    # the host-memory value only when a scenario has it (a legend entry no bar uses is noise)
    dom = ["fits", NO_FIT] + ([HOST_NO_FIT] if (df["memory"] == HOST_NO_FIT).any() else [])
    mem = alt.Scale(domain=dom)
    pale = [1.0] + [0.3] * (len(dom) - 1)
    outline = ["transparent"] + ["#d62728"] * (len(dom) - 1)
    dash = [[1, 0]] + [[4, 2]] * (len(dom) - 1)
    # Vega's default 160 px cut "does not fit in host mem…" (review 16d)
    mem_legend = alt.Legend(orient="bottom", direction="vertical", labelLimit=320)
    return alt.Chart(df).mark_bar(strokeWidth=2).encode(
        x=alt.X("scenario:N", title=None, axis=alt.Axis(labels=False, ticks=False)),
        y=alt.Y("value:Q", title=None),
        # no red or pink among the slots' colours: a red outline means "does not fit" (review h27b: the
        # default palette gave slots 3 and 4 red and pink, whose solid bars read as a warning)
        color=alt.Color("scenario:N", title="scenario", scale=alt.Scale(range=COMPARE_COLORS),
                        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=480)),
        # one legend for the three channels of the same field, ordinal with its domain's order (found by
        # review: Vega warned "opacity should not be used with an unsorted discrete field" and of a
        # conflicting legend, two channels without a legend beside one with it)
        opacity=alt.Opacity("memory:O", title="memory", sort=dom,
                            scale=alt.Scale(domain=dom, range=pale), legend=mem_legend),
        stroke=alt.Stroke("memory:O", title="memory", sort=dom,
                          scale=alt.Scale(domain=dom, range=outline), legend=mem_legend),
        strokeDash=alt.StrokeDash("memory:O", title="memory", sort=dom,
                                  scale=alt.Scale(domain=dom, range=dash), legend=mem_legend),
        # four significant digits in plain notation (review 16d: ".3g" showed 23,330 days as "2.33e+4")
        tooltip=["scenario:N", "metric:N", alt.Tooltip("value:Q", format=",.4~r"), "memory:N"],
    # two panels a row (about 400 px with the axes): four in a row were 706 px, cut off in the main
    # column of an 800 px window, which Vega-Lite's fixed facet widths cannot reflow (review h27b)
    ).properties(width=150, height=150).facet(
        facet=alt.Facet("metric:N", title=None, sort=[lab for _, lab, _ in compare_metrics(results)]), columns=2,
    ).resolve_scale(y="independent")


#: Columns of the validation scatter's legend when it holds more than 20 groups (under the plot),
#: the most pixels a label may take and its font size: 200 px of 10 px capitals hold the 28
#: characters that tell every out-of-sample group apart (review h28d: 3 columns of 170 px cut a
#: third of the entries off at 800 px). Narrower plots give a label less (LEGEND_SYMBOL_PX).
LEGEND_COLUMNS = 2
LEGEND_LABEL_PX = 200
LEGEND_FONT_PX = 10
#: What a legend column takes besides its label (symbol, its offset and the column padding, px): a
#: label gets at most the plot's width / columns less this, so a narrow window ends a long name with
#: "…" inside its column instead of cutting the second column at the chart's edge (review 28: 4 names
#: cut at 800 px with the sidebar open).
LEGEND_SYMBOL_PX = 45
#: The validation scatter's plot height (px), the legend's rows added under it.
PLOT_HEIGHT_PX = 380


def validation_scatter(rows: pd.DataFrame, x: str, y: str, color: str | None = None,
                       unit: str = "", tooltip: Iterable[str] = ()) -> alt.Chart:
    """Predicted (y) against published (x) with the y = x line; log axes."""
    d = rows[[c for c in {x, y, color, *tooltip} if c and c in rows.columns]].copy()
    d = d[pd.to_numeric(d[x], errors="coerce").gt(0) & pd.to_numeric(d[y], errors="coerce").gt(0)]
    lo = float(min(d[x].min(), d[y].min())) if len(d) else 1.0
    hi = float(max(d[x].max(), d[y].max())) if len(d) else 10.0
    u = f" ({unit})" if unit else ""
    n_groups = int(d[color].nunique()) if color else 0
    # Every group in the legend: Vega drops a symbol legend's entries past its default limit (30), and
    # a right-hand legend taller than the chart was cut at about 20 (found by review: the out-of-sample
    # set's ~80 groups, ~20 in the legend). Above 20 groups the legend goes under the plot in columns.
    legend = (alt.Legend(orient="bottom", columns=LEGEND_COLUMNS, symbolLimit=0, labelLimit=alt.ExprRef(
                             expr=f"clamp(width / {LEGEND_COLUMNS} - {LEGEND_SYMBOL_PX}, 40, {LEGEND_LABEL_PX})"),
                         labelFontSize=LEGEND_FONT_PX)
              if n_groups > 20 else alt.Legend(symbolLimit=0))
    pts = alt.Chart(d).mark_point(size=70, opacity=0.8, filled=True).encode(
        x=alt.X(f"{x}:Q", title=f"published{u}", scale=alt.Scale(type="log")),
        y=alt.Y(f"{y}:Q", title=f"predicted{u}", scale=alt.Scale(type="log")),
        # more than 10 groups (the out-of-sample set has 25): a 20-colour scheme, and above 20 a shape
        # too (8 shapes × 20 colours: distinct up to 40), so no two groups look alike (Altair's
        # default palette has 10 colours)
        color=(alt.Color(f"{color}:N", title=color,
                         scale=alt.Scale(scheme="tableau20") if d[color].nunique() > 10 else alt.Undefined,
                         legend=legend)
               if color else alt.value("#1f77b4")),
        shape=(alt.Shape(f"{color}:N", title=color, legend=legend) if color and d[color].nunique() > 20
               else alt.value("circle")),
        # the relative error as the tables show it, in % (found by review: the tooltip said 0.0208 beside
        # the table's 2.08 %)
        # predicted / published with 4 significant digits and the unit, the run id as "run" (found by
        # review: "predicted | 22666.1482525" beside "published | 23559", no unit)
        tooltip=[alt.Tooltip(f"{c}:Q", format=".1%", title="rel. error") if c == "rel_err"
                 else alt.Tooltip(f"{c}:Q", format=",.4~g", title=f"{'published' if c == x else 'predicted'}{u}")
                 if c in (x, y) else alt.Tooltip(f"{c}:N", title="run") if c == "run_id" else c
                 for c in d.columns],
    )
    diag = alt.Chart(pd.DataFrame({"v": [lo / 1.2, hi * 1.2]})).mark_line(
        color="#7f7f7f", strokeDash=[4, 4]).encode(x="v:Q", y="v:Q")
    # Streamlit fits the whole chart, legend included, into the height: a legend under the plot adds
    # its rows (about 18 px each, plus its title) so the plot keeps its 380 px
    legend_px = (-(-n_groups // LEGEND_COLUMNS) * 18 + 40) if n_groups > 20 else 0
    return alt.layer(diag, pts).properties(height=PLOT_HEIGHT_PX + legend_px, title=f"Predicted vs published{u}; dashed: y = x")
