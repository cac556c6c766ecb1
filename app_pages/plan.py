"""Plan page: one scenario in full: fits? how fast? how reliable? how much?"""

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # AppTest.from_file on this page alone
    sys.path.insert(0, _ROOT)

import json  # noqa: E402
import math  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import streamlit as st  # noqa: E402

import planner  # noqa: E402
from app_pages import _common as C  # noqa: E402
from planner import batch as pbatch  # noqa: E402
from planner import catalog, charts, engine, reliability, share  # noqa: E402
from planner.schema import Scenario  # noqa: E402

ss = st.session_state

#: Interval grid for the goodput curve: 10 seconds to 7 days, log-spaced.
CURVE_GRID_S = np.geomspace(10.0, 7 * 86400.0, 64)


@st.cache_data(max_entries=32, show_spinner=False)
def mc_refusal_of(sj_json: str) -> str | None:
    """Why ``planner.simulate`` would refuse this scenario (too many failures per run to simulate
    one by one: ``planner.simulate.too_many_failures``), or None."""
    from planner.simulate import too_many_failures

    try:
        s = Scenario.model_validate(json.loads(sj_json))
        return too_many_failures(engine.run_batch(pbatch.from_scenarios([s])), 0)
    except Exception:  # noqa: BLE001 - only a hint; simulate checks again when run
        return None


def curve_grid(in_use_s) -> np.ndarray:
    """Intervals the goodput curve is drawn at: :data:`CURVE_GRID_S` (10 s to 7 days), widened to
    reach every interval in use that is saved (finite, below the engine's never-saved value) and
    with those intervals themselves on the grid, so each tier's ○ lies on its line and the ◆ (the
    line's best point) is never worse than it. Found by review: Llama 3.1 405B on 131,072 GPUs
    saves host memory every 7.40 s, below the plotted 10 s: no ○ was drawn and the ◆ sat at the
    10 s edge, 0.013 points of goodput below the engine's own optimum."""
    iv = np.asarray([x for x in in_use_s if x is not None and math.isfinite(x) and 0 < x < 0.999 * C.NEVER_SAVED_S],
                    dtype=float)
    if not len(iv):
        return CURVE_GRID_S
    lo, hi = min(CURVE_GRID_S[0], float(iv.min())), max(CURVE_GRID_S[-1], float(iv.max()))
    return np.unique(np.concatenate([np.geomspace(lo, hi, len(CURVE_GRID_S)), iv]))


@st.cache_data(max_entries=32, show_spinner=False)
def interval_curve(sj_json: str) -> pd.DataFrame:
    """Goodput (the headline ``goodput`` column) against each enabled tier's interval, from
    the engine's ``reliability.goodput_vs_interval``: the other tiers stay at the intervals the
    engine chose (or the user set). The grid: :func:`curve_grid` of the intervals in use."""
    s = Scenario.model_validate(json.loads(sj_json))
    out = engine.run_batch(pbatch.from_scenarios([s]))
    col = reliability.CURVE_COLUMNS.index("goodput")
    kinds = [catalog.resolve_storage(use.tier).kind for use in s.checkpoint.tiers]
    in_use = []
    for kind in kinds:
        c = f"ckpt_{kind}_interval_opt_s"
        in_use.append(float(np.asarray(out[c], dtype=float)[0]) if c in out else None)
    grid = curve_grid(in_use)
    frames = []
    for use, kind in zip(s.checkpoint.tiers, kinds):
        tier_id = use.tier if isinstance(use.tier, str) else use.tier.name
        g = reliability.goodput_vs_interval(out, kind, grid)
        frames.append(pd.DataFrame({"tier": tier_id, "interval_s": grid, "goodput": g[:, col]}))
    if not frames:
        return pd.DataFrame(columns=["tier", "interval_s", "goodput"])
    return pd.concat(frames, ignore_index=True)


def _host_memory(s: Scenario) -> float | None:
    """Host memory per node: the engine's own input column for this scenario (override or system)."""
    try:
        return float(pbatch.scenario_row(s)["host_memory_bytes"])
    except Exception:  # noqa: BLE001 - the message then says "the host memory"
        return None


def _hbm(s: Scenario) -> tuple[float | None, float | None]:
    """Usable and physical HBM per GPU: the engine's own input columns for this scenario."""
    try:
        row = pbatch.scenario_row(s)
        return float(row["hbm_usable_bytes"]), float(row["hbm_bytes"])
    except Exception:
        return None, None


def _why_missing(results: dict, key: str) -> str | None:
    """Why a headline shows "—": absent column, or the engine's inf / NaN, with the reason."""
    if key not in results:
        return "Not produced by the engine (yet)."
    bad = C.nonfinite(results, key)
    if bad is None:
        return None
    if key == "mtbf_h" and (bad == "inf" or C.num(results, "failure_rate_per_h") == 0):
        return ("No failures at this failure-rate scale (reliability.rate_scale = 0 or no failure class): the "
                "mean time between failures is infinite.")
    if C.never_finishes(results) and key in ("time_to_train_days", "cost_usd", "energy_mwh", "goodput"):
        return (f"The engine reports {bad}: the analytic model's steady state gives no finite time to train for this "
                "run (goodput 0; the warning above quotes the engine's reason and, where it has one, its figure for a "
                "run of this length; the Monte Carlo below simulates the run).")
    return (f"The engine reports {bad} (not a number it can state) for this scenario; see the Formulas "
            "expander for the inputs.")


def _metric(col, label, results, key, kind, help_, delta=None, delta_color="normal", delta_arrow="auto",
            value: str | None = None):
    """One headline number; a missing or non-finite engine value shows "—" and says why."""
    why = _why_missing(results, key)
    help_full = help_ if why is None else f"{help_}\n\n**Shown as —:** {why}"
    x = C.num(results, key)
    if x is not None and kind in ("days", "usd", "mwh"):  # a value shown in another unit: the exact one too
        exact = exact_text(x, kind)
        if C.fmt(results, key, kind) != exact:
            help_full += f"\n\nExactly: {exact}."
    col.metric(label, C.fmt(results, key, kind) if value is None else value, help=help_full, delta=delta,
               delta_color=delta_color, delta_arrow=delta_arrow)
    return why


def exact_text(x: float, kind: str) -> str:
    """A days / USD / MWh headline in its engine unit for the help's "Exactly:" line: days with one
    decimal from 1 day on, USD whole from $10 on, MWh whole from 1,000 MWh on, smaller amounts with
    four significant digits (never an exponent). Found by review: a 3.9 min run's help said
    "Exactly: 0.0 days" and a $0.19 one "Exactly: $0", fewer digits than the headline itself."""
    unit = {"days": " days", "usd": "", "mwh": " MWh"}[kind]
    whole = {"days": (1.0, 1), "usd": (10.0, 0), "mwh": (1000.0, 0)}[kind]  # from this on: fixed decimals
    body = (f"{x:,.{whole[1]}f}" if abs(x) >= whole[0] else f"{x:.4g}") if x != 0 else "0"
    if "e" in body:  # below 10⁻⁴: the digits without an exponent a reader may miss
        body = np.format_float_positional(x, precision=4, unique=False, fractional=False, trim="-")
    return f"${body}" if kind == "usd" else f"{body}{unit}"


# GiB with as many decimals as tell the peak and the usable HBM apart (shared with the no-fit
# message: app_pages/_common.py)
gib_decimals, gib_text = C.gib_decimals, C.gib_text


#: Rows of the Monte Carlo summary: planner.simulate.summarize's metric -> (label, scale, decimals).
MC_SUMMARY_ROWS = {
    "time_to_train_days": ("days to train", 1.0, 1),
    "goodput": ("goodput, %", 100.0, 1),
    "n_failures": ("failures", 1.0, 0),
    "lost_work_h": ("work lost, h", 1.0, 1),
    "recovery_h": ("recovery, h", 1.0, 1),
}
MC_SUMMARY_HELP = {
    "mean": ("mean over the trials; for goodput the pooled value, all the trials' work over their "
             "wall time (work ÷ mean time to train), which the headline goodput estimates"), "P10": "10th percentile of the trials", "P50": "median (50th percentile)",
    "P90": "90th percentile of the trials",
}


def _mc_cell(v: float, decimals: int) -> str:
    if not math.isfinite(v):
        return "never" if v > 0 else C.DASH
    return f"{v:,.{decimals}f}"


#: Rows of the Monte Carlo summary holding a duration: metric -> (what, its unit in the engine, in s).
MC_DURATION_ROWS = {"time_to_train_days": ("time to train", 86400.0), "lost_work_h": ("work lost", 3600.0),
                    "recovery_h": ("recovery", 3600.0)}
#: Decimals of a Monte Carlo duration row by its unit (the unit itself: ``charts.duration_unit``, the
#: histogram's rule, so the table and the chart read in one unit).
MC_UNIT_DECIMALS = {"years": 1, "days": 1, "h": 1, "min": 1, "s": 2, "ms": 1}


def _mc_unit(values_s: list[float], engine_unit: str) -> tuple[str, float, int]:
    """(unit, seconds per unit, decimals) of a duration row: :func:`planner.charts.duration_unit` of
    its largest finite value (the row's own unit, days for the time to train and h for the others,
    when the value reaches 1 of it, else the largest unit it reaches; a time to train of 1,000 days or
    more in years, as the headline: found by review, "380 years" above a row of 138,619.3 days)."""
    finite = [abs(v) for v in values_s if math.isfinite(v)]
    name, size = charts.duration_unit(max(finite, default=0.0), engine_unit)
    return name, size, MC_UNIT_DECIMALS[name]


def mc_summary_table(summ: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """``planner.simulate.summarize`` for the page: readable row names with their unit, goodput in %
    like the headline, a fixed number of decimals per row, and columns narrow enough that P90 shows in
    half of a 1,280 px window (the metric names and fractions were cut off there). A duration row
    picks its unit by size, as the headlines do: a 1.2 s run reads "time to train, s 1.21", not
    "days to train 0.0" (review)."""
    rows, index = [], []
    for rec in summ.to_dict("records"):
        label, scale, dec = MC_SUMMARY_ROWS.get(rec["metric"], (str(rec["metric"]).replace("_", " "), 1.0, 2))
        if rec["metric"] == "cost_usd":  # each run's bill at its own wall time, in the headline's unit
            unit, scale, dec = charts.cost_column([float(rec[c]) for c in ("mean", "p10", "p50", "p90")])
            label = f"cost, {unit}"
        if rec["metric"] in MC_DURATION_ROWS:
            what, unit_s = MC_DURATION_ROWS[rec["metric"]]
            secs = [float(rec[c]) * unit_s for c in ("mean", "p10", "p50", "p90")]
            own = "days" if unit_s == 86400.0 else "h"
            name, size, dec = _mc_unit(secs, own)
            if name != own:  # the row's usual label ("days to train", "work lost, h") when its unit is kept
                label = f"{what}, {name}"
            scale = unit_s / size
        index.append(label)
        cells = {col.upper() if col.startswith("p") else col: _mc_cell(float(rec[col]) * scale, dec)
                 for col in ("mean", "p10", "p50", "p90")}
        m = float(rec["mean"])
        if rec["metric"] == "n_failures" and math.isfinite(m) and 0 < m < 10:
            # a mean of 0.4 failures read "0" beside non-zero work lost (review 15n): two significant digits
            cells["mean"] = f"{m:.2g}"
        rows.append(cells)
    df = pd.DataFrame(rows, index=index, columns=["mean", "P10", "P50", "P90"])
    cfg = {c: st.column_config.TextColumn(c, help=MC_SUMMARY_HELP[c], width=64, alignment="right") for c in df.columns}
    cfg["_index"] = st.column_config.TextColumn("", width=132)  # "time to train, years" whole (review 15n: 110 cut it)
    return df, cfg


def _mean_pm(mean: float, se: float) -> str:
    """``mean ± se`` with the mean to the standard error's precision (two significant digits of the
    error: 209.09 ± 0.049, not 209 ± 0.049)."""
    dec = max(0, 1 - math.floor(math.log10(se))) if se > 0 else 1
    return f"{mean:,.{dec}f} ± {se:.{dec}f}"


def mc_se_text(summ: pd.DataFrame, n_trials: int) -> str | None:
    """The uncertainty of the Monte Carlo's means from its number of trials (``summarize``'s
    ``mean_se``), for the line under its table, in the unit of the table's row (:func:`_mc_unit`): the
    P10–P90 columns are the spread of single runs, not how well the means are known (review 49). None
    where no standard error is defined (one trial, a run that never finishes)."""
    if "mean_se" not in summ:
        return None
    by = summ.set_index("metric")
    parts = []
    if "time_to_train_days" in by.index and math.isfinite(float(by.loc["time_to_train_days", "mean_se"])):
        rec = by.loc["time_to_train_days"]
        name, size, _dec = _mc_unit([float(rec[c]) * 86400.0 for c in ("mean", "p10", "p50", "p90")], "days")
        parts.append(f"time to train {_mean_pm(float(rec['mean']) * 86400.0 / size, float(rec['mean_se']) * 86400.0 / size)}"
                     f" {name}")
    if "goodput" in by.index and math.isfinite(float(by.loc["goodput", "mean_se"])):
        parts.append(f"goodput {_mean_pm(100.0 * float(by.loc['goodput', 'mean']), 100.0 * float(by.loc['goodput', 'mean_se']))} %")
    if not parts:
        return None
    return (f"Means ± their standard error over the {n_trials:,} trials (std / √n; the uncertainty of the "
            f"mean, not the spread of runs): {'; '.join(parts)}.")


def _clamp_widget(key: str, lo: int, hi: int, default: int) -> None:
    """on_change of a Monte Carlo number box: an emptied box gets its last value back, a value out
    of range the nearest bound, so the box, the session and the URL always agree."""
    v = ss.get(key)
    last = ss.get(f"_last_{key}", default)
    # the link's refusal of this box ("pl_mct='5': refused; ... using 2000") is about a value the user
    # has now replaced: drop it (found by review: it stayed on screen beside the new value)
    ss["_pl_warnings"] = [w for w in ss.get("_pl_warnings", []) if not w.startswith(f"{key}=")]
    if v is None:
        ss[key] = last
        ss["_pl_mc_note"] = f"{'Trials' if key == 'pl_mct' else 'Seed'}: empty; kept {last:,}"
        return
    c = int(min(max(int(v), lo), hi))
    if c != v:
        ss["_pl_mc_note"] = f"{'Trials' if key == 'pl_mct' else 'Seed'} {int(v):,} is outside {lo:,} to {hi:,}; set to {c:,}"
    ss[key] = c


# ---------------------------------------------------------------------------------------
_PAGE_KEYS = ("pl_mct", "pl_mcs")
C.keep_page_widgets("plan", _PAGE_KEYS)
sj = C.render_sidebar("plan", _PAGE_KEYS)
MCT_RANGE, MCS_RANGE = share.PLAN_MC_TRIALS_RANGE, share.PLAN_MC_SEED_RANGE  # planner.share: the CLI reads them too
MCT_DEFAULT = share.PLAN_MC_TRIALS_DEFAULT
#: Most trial × failure rounds the page simulates at once (about 20 s on one core).
MC_PAGE_BUDGET = 1e8
if "pl_mct" not in ss:
    _w: list[str] = []
    ss["pl_mct"] = C.link_int("pl_mct", *MCT_RANGE, MCT_DEFAULT, _w)
    ss["pl_mcs"] = C.link_int("pl_mcs", *MCS_RANGE, share.PLAN_MC_SEED_DEFAULT, _w)
    _w += share.unknown_own_page_keys(st.query_params.keys(), "plan", _PAGE_KEYS)
    ss["_pl_warnings"] = _w
for _k, _rng, _d in (("pl_mct", MCT_RANGE, MCT_DEFAULT), ("pl_mcs", MCS_RANGE, share.PLAN_MC_SEED_DEFAULT)):
    if ss.get(_k) is None:  # never let an emptied box reach the URL or the simulation
        ss[_k] = ss.get(f"_last_{_k}", _d)
    else:
        # Re-seeded on every run, before anything can st.stop: a run that does not draw the boxes (an
        # invalid scenario stops the page above them) would otherwise leave them to re-mount empty
        # while the URL kept the value (review 2026-11-30); a value set here is sent to the box.
        ss[_k] = int(ss[_k])
    ss[f"_last_{_k}"] = int(ss[_k])
C.write_url(sj, {"pl_mct": ss["pl_mct"], "pl_mcs": ss["pl_mcs"]})

st.title("Plan a training run")
C.show_link_warnings()
for _msg in ss.get("_pl_warnings", []):
    st.warning(f"Link: {C.md_text(_msg)}", icon=":material/link_off:")
# a sidebar box outside its range (review h27b, D4: the boxes have no browser-side bounds) is named first, in
# the box's words and unit; the scenario's own rules are judged once every box is in range
box_errs = C.sidebar_box_errors()
scen, errs = (None, box_errs) if box_errs else C.validate(sj)
if errs:
    st.error(C.errors_text(errs) if box_errs else C.errors_text(errs, "This scenario is not valid"),
             icon=":material/error:")
    C.render_io(sj, None)
    st.stop()

try:
    rep = C.evaluate_cached(C.sj_key(sj))
except Exception as e:  # noqa: BLE001 - an engine failure is shown, not raised
    st.error(f"The engine could not evaluate this scenario: {C.md_text(e)}")
    C.render_io(sj, None)
    st.stop()
res = rep["results"]
C.render_io(sj, res)
usable, physical = _hbm(scen)

st.caption(
    f"{C.plain(scen.resolved_model().name)} on {scen.cluster.n_gpus:,} GPU{'' if scen.cluster.n_gpus == 1 else 's'} "
    f"({C.plain(scen.cluster.system if isinstance(scen.cluster.system, str) else scen.cluster.system.name)}) · "
    f"dp = {int(rep['scenario']['parallelism'].get('dp') or 0):,} "
    + ("(derived) " if sj.get("parallelism", {}).get("dp") is None else "")
    + "· memory and checkpoint sizes in GiB (2³⁰ B); bandwidths in GB/s (10⁹ B/s)."
)

_pid = ss.get("preset_id")
_about = C.preset_about(_pid, sj, scen)
if _about:  # the preset's assumptions and the published figures to hold the numbers against (review h29a);
    _desc, _src, _changed = _about  # only while this is still its run: the same model and system (review h29c)
    with st.expander(f"About the preset '{_pid}': its assumptions, published figures and sources"):
        st.markdown(C.md_text(_desc, None))
        if _src:
            st.caption("Sources: " + C.md_text(_src, None))
        st.caption("Inputs changed since the preset was loaded (share-link keys, docs/ui.md): "
                   + C.md_text(", ".join(_changed), None) + ". The text above describes the preset as it was."
                   if _changed else "The scenario is the preset as loaded.")

# Headline numbers ------------------------------------------------------------------------
#: (label, result column, display kind, help: what it is and its unit), in page order.
HEADLINES = (
    ("Fits in HBM", "fits", "bool", "Peak memory of the most loaded pipeline stage, margin included, ≤ usable "
     "HBM (yes / no)."),
    ("Peak memory per GPU", "mem_total_bytes", "gib", "Most loaded pipeline stage, margin included; "
     "GiB = 2³⁰ bytes."),
    ("Step time", "step_time_s", "s", "Wall time of one optimizer step (s, min or h by size)."),
    ("MFU", "mfu", "pct", "Model FLOP/s ÷ (GPUs × dense 16-bit peak FLOP/s), in %."),
    ("Throughput", "tokens_per_s", "tok", "Tokens per second, whole job (M = 10⁶, B = 10⁹)."),
    ("MTBF (job)", "mtbf_h", "h", "Mean time between failures of the whole job (s, min or h by size). Unexpected "
     "failures only: planned interruptions (maintenance, upgrades; Llama 3 405B: 47 of its 466 in 54 days) are "
     "not modelled."),
    ("Goodput", "goodput", "pct", "Expected fraction of wall time that advances training, in %: "
     "checkpoint stalls, lost work and restarts removed."),
    ("Days to train", "time_to_train_days", "days", "Wall-clock days (86,400 s) to train the tokens, failures "
     "and checkpoints included; above 1,000 days in years (365.25 days), below 1 day in h, min or s."),
    ("Cost to train", "cost_usd", "usd", "GPU-hours × price per GPU-hour, in USD (M = 10⁶, B = 10⁹, T = 10¹²)."),
    ("Energy", "energy_mwh", "mwh", "Facility energy to train: nodes × node power × average draw × PUE × wall time, "
     "in MWh (1 MWh = 3.6 × 10⁹ J; kWh below 1 MWh, GWh from 10,000 MWh, TWh from 10⁶ MWh)."),
)
if _no_fit := C.no_fit_text(res, usable, len(rep["stages"]) or None):
    st.error(_no_fit, icon=":material/memory:")
elif _tight := next((n for n in rep.get("notes") or [] if n.startswith("Tight fit")), None):
    # fits, but past Fujii et al.'s 80 % rule (the engine's own note, planner.memory.notes; review 49)
    st.info(C.md_text(_tight, None), icon=":material/memory:")
if _no_host := C.host_no_fit_text(res, _host_memory(scen), scenario=scen):  # found by review: never said on Plan
    st.error(_no_host, icon=":material/memory:")
mc_refusal = mc_refusal_of(C.sj_key(sj))  # the Monte Carlo's own refusal (> 200,000 failures per run), or None
if C.never_finishes(res):
    st.warning(C.never_finishes_text(res, rep.get("explain"), rep.get("notes"), mc_refusal=mc_refusal),
               icon=":material/warning:")
missing = []
_peak = C.num(res, "mem_total_bytes")
_gd = gib_decimals(_peak, usable)
# rows of four: at 1,280 px with the sidebar open, five columns clipped values ("0.87 M t…")
for row in (HEADLINES[:4], HEADLINES[4:8], HEADLINES[8:]):
    c = st.columns(4)
    for col, (label, key, kind, help_) in zip(c, row):
        if key == "fits":
            fits = res.get("fits")
            over = None
            if C.does_not_fit(res) and usable is not None and _peak is not None:
                over = f"{C.gib_over_text(_peak, usable, _gd)} over"
            col.metric(label, C.DASH if fits is None else ("yes" if fits else "no"), help=help_,
                       delta=over, delta_color="inverse", delta_arrow="off")  # red when it does not fit
        elif key == "mem_total_bytes":
            # peak and usable with the decimals that tell them apart (a peak just over the usable HBM
            # never reads as equal to it beside "no")
            why = _metric(col, label, res, key, kind, help_,
                          delta=None if usable is None else f"of {usable / C.GIB:,.{_gd}f} GiB usable",
                          delta_color="inverse" if C.does_not_fit(res) else "off", delta_arrow="off",
                          value=None if _peak is None else f"{_peak / C.GIB:,.{_gd}f} GiB")
        elif key == "cost_usd":
            # the GPU-hours the cost is priced on, the figure published runs state (review h29a: only in
            # the expanders, where Llama 3's 30.84 M and DeepSeek-V3's 2.664 M are the comparison)
            _gh = C.num(res, "gpu_hours")
            why = _metric(col, label, res, key, kind, help_ + " The GPU-hours below include hot spares.",
                          delta=None if _gh is None else C.fmt(res, "gpu_hours", "gpuh"), delta_color="off", delta_arrow="off")
        elif key == "mfu":
            # an FP8 / FP4 run: MFU of the 16-bit peak (the comparable figure, can pass 100 %) and of the
            # GEMM precision's own peak below it, as the sweep table's mfu_prec_pct (session-33 check)
            _mf, _mp = C.num(res, "mfu"), C.num(res, "mfu_precision_peak")
            _prec = str(scen.training.precision).upper()
            _two = _mf is not None and _mp is not None and not np.isclose(_mf, _mp, rtol=1e-9, atol=0.0)
            why = _metric(col, label, res, key, kind,
                          help_ + (f" Below it: the same model FLOP/s ÷ the {_prec} peak (mfu_precision_peak)."
                                   if _two else ""),
                          delta=f"{C.fmt(res, 'mfu_precision_peak', 'pct')} of {_prec} peak" if _two else None,
                          delta_color="off", delta_arrow="off")
        else:
            why = _metric(col, label, res, key, kind, help_)
        if key != "fits" and why:
            missing.append(f"{label}: {why}")
if missing and not C.never_finishes(res):
    st.caption("— : " + " · ".join(missing))
if _short := C.short_run_headline_text(rep.get("notes")):
    st.info(_short, icon=":material/info:")
_acc = C.accuracy_note_cached(C.sj_key(sj))
if _acc:
    st.caption(_acc)

# Charts ----------------------------------------------------------------------------------
left, right = st.columns(2)
with left:
    st.subheader("Memory per GPU")
    if rep["stages"]:
        st.altair_chart(charts.memory_stages_chart(rep["stages"], usable, physical), key="pl_mem")
        st.caption("One bar per pipeline stage, stacked by component; the margin (buffers, "
                   "fragmentation) is its own component. Red line: usable HBM"
                   + ("; grey dashed line: physical HBM." if physical is not None and usable is not None
                      and abs(physical - usable) > 1 else "."))
    else:
        st.info("Per-stage memory is not available from the engine yet.")
with right:
    st.subheader("Step time")
    if len(charts.step_time_frame(res)):
        st.altair_chart(charts.step_time_chart(res), key="pl_step")
        st.caption(f"Total step time (engine): {C.fmt(res, 'step_time_s', 's')}; "
                   "overlapped communication is not shown.")
    else:
        st.info("The step-time breakdown is not available from the engine yet.")

left, right = st.columns(2)
with left:
    st.subheader("Checkpoint interval")
    if "goodput" not in res:
        st.info("Goodput is not available from the engine yet.")
    elif C.num(res, "goodput") is None:
        st.warning(f"Goodput is shown as —: {_why_missing(res, 'goodput')}", icon=":material/warning:")
    else:
        try:
            curve = interval_curve(C.sj_key(sj))
        except Exception as e:  # noqa: BLE001
            curve = None
            st.info(f"The goodput curve is not available: {C.md_text(e)}")
        cur_rows, in_use = [], []
        lo_s, hi_s = ((float(curve["interval_s"].min()), float(curve["interval_s"].max()))
                      if curve is not None and len(curve) else (CURVE_GRID_S[0], CURVE_GRID_S[-1]))
        no_failures = C.num(res, "failure_rate_per_h") == 0
        for use in scen.checkpoint.tiers:
            kind = catalog.resolve_storage(use.tier).kind
            name = use.tier if isinstance(use.tier, str) else use.tier.name
            # the chart legend's name (charts.TIER_LABELS; review 15n: "pfs" here, "parallel file system" there);
            # an inline tier's name is the link's / the import's text
            shown = C.md_text(charts.TIER_LABELS.get(name, name) if isinstance(use.tier, str) else name, 60,
                              whole=False)
            iv = C.num(res, f"ckpt_{kind}_interval_opt_s")
            if no_failures and iv is not None and 0.999 * C.NEVER_SAVED_S <= iv <= 1.001 * C.NEVER_SAVED_S:
                # the solver's "never" with no failure at all: no other tier covers anything (found by
                # review: every tier read "another tier covers every failure class")
                in_use.append(f"**{shown}**: not saved (no failures to recover from: the failure rate is 0)")
            else:
                in_use.append(f"**{shown}**: {C.fmt_interval(iv)}")
                given = use.interval_s
                if given is not None and iv is not None and iv > given * (1.0 + 1e-9) and iv < 0.999 * C.NEVER_SAVED_S:
                    # the engine raised a given interval to the shortest the job can save at; said here,
                    # not only in the Formulas expander (review 15n: "every 6.47 s" beside a box of 0.02 min)
                    in_use[-1] += (f" (you set {C.fmt_duration(given)}; raised to the shortest it can save at: "
                                   "one step or the async save)")
                save, stall = C.num(res, f"ckpt_{kind}_save_s"), C.num(res, f"ckpt_{kind}_stall_s")
                if iv is not None and iv < 0.999 * C.NEVER_SAVED_S and save is not None and stall is not None:
                    # how long a save takes and what training pays for it (found by review 15a: shown nowhere;
                    # the formulas are in the Formulas expander, ckpt_<tier>_save_s / _stall_s)
                    in_use[-1] += (f" (a save takes {C.fmt_duration(save)}"
                                   + (f"; training stalls {C.fmt_duration(stall)}" if stall < save else
                                      ", training waits for it") + ")")
            if iv is not None and iv >= 0.999 * C.NEVER_SAVED_S:
                pass  # in effect not saved to: no ○
            elif iv is not None and not lo_s * (1 - 1e-12) <= iv <= hi_s * (1 + 1e-12):
                in_use[-1] += f" (outside the plotted {C.fmt_duration(lo_s)} to {C.fmt_duration(hi_s)}: no ○)"
            elif iv is not None:
                cur_rows.append({"tier": name, "interval_s": iv, "goodput": res["goodput"]})
        if curve is not None and len(curve):
            st.altair_chart(charts.goodput_interval_chart(curve, pd.DataFrame(cur_rows)), key="pl_gp")
            st.caption("Each line: the engine's expected goodput (the headline number: Daly's renewal model "
                       "over the tiers) with that tier's interval varied and the other tiers at their chosen "
                       "intervals. ◆ best interval on the line, ○ the interval in use (the engine's optimum "
                       "unless you set one)."
                       + (" No failures (failure rate 0): every save only costs time, so each line rises to its "
                          "longest interval." if no_failures else "")
                       + (" Goodput is 0 at every plotted interval (the reason is above), so no line has an "
                          "optimum (no ◆); the intervals in use are chosen on the rest of the model."
                          if not bool((curve["goodput"] > 0.0).any()) else ""))
        if in_use:
            st.markdown("Intervals in use: " + " · ".join(in_use))
        elif not scen.checkpoint.tiers:
            st.caption("No checkpoint tier: every failure restarts training from the beginning.")
with right:
    st.subheader("Monte Carlo: time to train")
    # two boxes side by side, the button under them: at 1,280 px a third column cut the button's label
    # to "Run sim…" (review 2026-11-30)
    m1, m2 = st.columns(2)  # wide enough boxes for 100,000 trials and a 10-digit seed
    # No min / max in the box itself: the browser would keep an out-of-range entry on screen without
    # sending it (box and URL disagree) and reset an emptied box to the minimum. The callback clamps.
    m1.number_input("Trials", value=None, step=500, key="pl_mct", placeholder=str(MCT_DEFAULT),
                    on_change=_clamp_widget, args=("pl_mct", *MCT_RANGE, MCT_DEFAULT),
                    help=f"Simulated runs, {MCT_RANGE[0]:,} to {MCT_RANGE[1]:,} here, typed in full (5000, not 5e3: "
                         "the box reads 5e3 as 5); the time grows with the "
                         "trials and with the failures per run (about 9 s for 100,000 runs of ~580 failures on a 2-core machine; a run "
                         "expected to fail more than 200,000 times is not simulated). `planner simulate --trials` "
                         "and planner.simulate take up to 1,000,000.")
    m2.number_input("Seed", value=None, step=1, key="pl_mcs", placeholder="0",
                    on_change=_clamp_widget, args=("pl_mcs", *MCS_RANGE, share.PLAN_MC_SEED_DEFAULT),
                    help="Random seed: the same seed and number of trials give the same draws (here up to 2³¹ − 1; the CLI and API "
                         "take up to 2⁶³ − 1).")
    run_mc = st.button("Run simulation", key="pl_mc_run", type="primary", disabled=bool(mc_refusal))
    if "_pl_mc_note" in ss:
        st.caption(ss.pop("_pl_mc_note"))
    C.save_page_widgets("plan", _PAGE_KEYS)
    mc_key = (C.sj_key(sj), int(ss["pl_mct"]), int(ss["pl_mcs"]))
    if mc_refusal:  # known before the button: say it once, run nothing (found by review: three messages)
        st.warning("Not simulated. " + C.mc_refusal_text(mc_refusal), icon=":material/block:")
        run_mc = False
    if run_mc:
        bar = st.progress(0.0, text="Simulating failures and restarts ...")

        _last = [-1.0]

        def _progress(*a):
            # called once per failure round (tens of thousands at high failure rates): redraw only
            # when the bar moves by 1 % (unthrottled, the redraws took 90 of 105 s; review 2026-11-30)
            frac = float(min(max(a[0] / a[1] if len(a) >= 2 and a[1] else (a[0] if a else 0.0), 0.0), 1.0))
            if frac - _last[0] >= 0.01 or frac >= 1.0:
                _last[0] = frac
                bar.progress(frac)

        # Work grows with trials × failures per run (one loop round per failure): above
        # MC_PAGE_BUDGET trial-failures (about 20 s here) the page runs fewer trials and says so.
        trials = int(ss["pl_mct"])
        try:  # failures per run the Monte Carlo will simulate (its round cap when the run never finishes)
            from planner.simulate import expected_rounds

            n_fail = float(expected_rounds(engine.run_batch(pbatch.from_scenarios([scen])), 0))
        except Exception:  # noqa: BLE001 - the estimate only sizes the run; simulate still checks
            n_fail = 0.0
        if math.isfinite(n_fail) and n_fail > 0 and trials * n_fail > MC_PAGE_BUDGET:
            trials = max(MCT_RANGE[0], int(MC_PAGE_BUDGET // n_fail))
        try:
            sim = planner.simulate(scen, n_trials=trials, seed=int(ss["pl_mcs"]), progress=_progress)
            ss["pl_mc"] = (mc_key, sim)
        except planner.InputError as e:  # e.g. too many failures per run to simulate one by one
            st.warning("Not simulated. " + " ".join(C.mc_refusal_text(x) for x in e.lines))
        except Exception as e:  # noqa: BLE001
            st.error(f"Monte Carlo failed: {C.md_text(e)}")
        bar.empty()
    if ss.get("pl_mc") and ss["pl_mc"][0] == mc_key:
        sim = ss["pl_mc"][1]
        # fewer trials than asked (the budget above), read off the result on every rerun that draws it
        # (review 45b: the caption was written only by the run that clicked the button, so after a page
        # switch or a download the table stayed and its trial count went unsaid)
        if len(sim) < mc_key[1]:
            fails = float(sim["n_failures"].mean()) if "n_failures" in sim else float("nan")
            st.caption(f"Ran {len(sim):,} trials, not {mc_key[1]:,}: each run fails about {fails:,.0f} times and "
                       "every failure is simulated, so more would keep the page busy for minutes (`planner "
                       "simulate` runs up to 10¹⁰ trials × failures, `simulate.MAX_TRIAL_ROUNDS`; the share link "
                       f"still asks for {mc_key[1]:,}).")
        from planner.simulate import unfinished_note

        if note := unfinished_note(sim):
            st.warning(note)
        analytic_days = C.num(res, "time_to_train_days")
        # the analytic expectation for a run of this length (planner.simulate.expected_days: the
        # finite-run form where the notes say the steady-state headline is longer; found by review: a
        # 2-day run with the PFS saved every 11.6 days drew its line at 112 days beside bars at 3.6)
        finite_days = None
        try:
            from planner.simulate import expected_days

            x = float(expected_days(engine.run_batch(pbatch.from_scenarios([scen])), 0))
            if math.isfinite(x) and x != analytic_days:
                finite_days = x
        except Exception:  # noqa: BLE001 - the headline's line then
            finite_days = None
        line_days = finite_days if finite_days is not None else analytic_days
        st.altair_chart(charts.time_to_train_hist(sim, line_days), key="pl_mc_hist")
        try:
            from planner.simulate import summarize

            _summ_raw = summarize(sim)
            summ, summ_cfg = mc_summary_table(_summ_raw)
            st.dataframe(summ, key="pl_mc_sum", column_config=summ_cfg)
            if _se_txt := mc_se_text(_summ_raw, len(sim)):
                st.caption(_se_txt)
        except Exception:  # noqa: BLE001
            st.dataframe(sim.describe().T, key="pl_mc_sum")
        if finite_days is not None:
            head_txt = (f"the headline, {C.fmt(res, 'time_to_train_days', 'days')}, is the steady-state rate: the notes "
                        "below say why it is longer" if C.num(res, "time_to_train_days") is not None else
                        "the steady-state goodput is 0, so the headline has no finite time: the warning at the top "
                        "gives the engine's reason")  # review 41b D6: "the headline, —, ... longer"
            st.caption("Histogram: simulated runs; red dashed line: the analytic expectation for a run of this "
                       f"length ({C.fmt_days(finite_days)}; {head_txt}).")
        elif analytic_days is not None:
            st.caption("Histogram: simulated runs; red dashed line: the analytic expectation "
                       f"({C.fmt(res, 'time_to_train_days', 'days')}).")
        else:
            st.caption("Histogram: simulated runs. No analytic line: the analytic model gives no finite time "
                       "to train for this run (see the warning at the top).")
    elif not mc_refusal:
        st.caption("Press **Run simulation** to draw failure times and replay checkpoints and restarts.")

# Formulas and notes ----------------------------------------------------------------------
UNITS_TEXT = ("Units: memory and checkpoint sizes in **GiB = 2³⁰ B** (MiB = 2²⁰ B); bandwidths and message "
              "sizes in **GB = 10⁹ B** (MB = 10⁶ B, TB/s = 10¹² B/s); FLOP/s peaks and TFLOP/s in 10¹²; "
              "times in s (h = 3,600 s, d = 86,400 s, years of 365.25 d); energy in MWh (= 3.6 × 10⁹ J); "
              "money in USD (M = 10⁶, B = 10⁹). "
              "Result columns are SI: `_bytes` in B, `_s` in s, `_h` in h, `_frac`/MFU/goodput as fractions.")


def _formula(explain: dict, key: str) -> str | None:
    if key in explain:
        return explain[key]
    if key == "fits" and "mem_total_bytes" in explain:
        return "fits = peak memory per GPU ≤ usable HBM, with " + explain["mem_total_bytes"]
    return None


with st.expander("Formulas: every number with its inputs plugged in", expanded=False):
    explain = rep["explain"] or {}
    st.markdown(UNITS_TEXT)
    st.markdown("**Headline numbers**")
    for label, key, kind, _ in HEADLINES:
        f = _formula(explain, key)
        shown = (f"{_peak / C.GIB:,.{_gd}f} GiB" if key == "mem_total_bytes" and _peak is not None
                 else C.fmt(res, key, kind))
        st.markdown(f"**{label}** = {shown} &nbsp;(`{key}`)  \n"
                    + (f"`{f}`" if f else "_no formula string from the engine yet_"))
    others = [k for k in explain if k not in {h[1] for h in HEADLINES}]
    if others:
        st.markdown("**Intermediate results**")
        for k in others:
            st.markdown(f"`{k}` = {C.fmt_col(res, k)}  \n`{explain[k]}`")
    st.markdown("**Stated simplifications**")
    if rep["notes"]:
        st.markdown("\n".join(f"- {n}" for n in rep["notes"]))
    else:
        st.markdown("_The engine states none for this scenario._")

with st.expander("All result columns (SI units)", expanded=False):
    # NaN: the value does not apply (a tier not in use); inf as the engine gives it (found by a
    # fresh-user check: "nan" read as a failure)
    st.dataframe(pd.DataFrame({"column": list(res), "value": [
        "— (does not apply)" if isinstance(v, float) and v != v else str(v) for v in res.values()]}),
                 hide_index=True, key="pl_all")
    st.caption("In this table, — : does not apply (e.g. the save and stall of a checkpoint tier not in use); "
               "inf: a run that never finishes (goodput 0), or an MTBF without failures, as `planner evaluate` "
               "writes them. The headline numbers above show — for any value they cannot state as a number "
               "and say why in their help.")
