"""Plan page: one scenario in full: fits? how fast? how reliable? how much?"""

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # AppTest.from_file on this page alone
    sys.path.insert(0, _ROOT)

import json  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import streamlit as st  # noqa: E402

import planner  # noqa: E402
from app_pages import _common as C  # noqa: E402
from planner import batch as pbatch  # noqa: E402
from planner import catalog, charts, engine, reliability  # noqa: E402
from planner.schema import Scenario  # noqa: E402

ss = st.session_state

#: Interval grid for the goodput curve: 10 seconds to 7 days, log-spaced.
CURVE_GRID_S = np.geomspace(10.0, 7 * 86400.0, 64)


@st.cache_data(max_entries=32, show_spinner=False)
def interval_curve(sj_json: str) -> pd.DataFrame:
    """Goodput (first order, the headline column) against each enabled tier's interval, from
    the engine's ``reliability.goodput_vs_interval``: the other tiers stay at the intervals the
    engine chose (or the user set)."""
    s = Scenario.model_validate(json.loads(sj_json))
    out = engine.run_batch(pbatch.from_scenarios([s]))
    col = reliability.CURVE_COLUMNS.index("goodput")
    frames = []
    for use in s.checkpoint.tiers:
        kind = catalog.resolve_storage(use.tier).kind
        tier_id = use.tier if isinstance(use.tier, str) else use.tier.name
        g = reliability.goodput_vs_interval(out, kind, CURVE_GRID_S)
        frames.append(pd.DataFrame({"tier": tier_id, "interval_s": CURVE_GRID_S, "goodput": g[:, col]}))
    if not frames:
        return pd.DataFrame(columns=["tier", "interval_s", "goodput"])
    return pd.concat(frames, ignore_index=True)


def _hbm(s: Scenario) -> tuple[float | None, float | None]:
    """Usable and physical HBM per GPU: the engine's own input columns for this scenario."""
    try:
        row = pbatch.scenario_row(s)
        return float(row["hbm_usable_bytes"]), float(row["hbm_bytes"])
    except Exception:
        return None, None


def _metric(col, label, results, key, kind, help_=None, delta=None, delta_color="normal"):
    col.metric(label, C.fmt(results, key, kind), help=help_, delta=delta, delta_color=delta_color)


# ---------------------------------------------------------------------------------------
_PAGE_KEYS = ("pl_mct", "pl_mcs")
C.keep_page_widgets("plan", _PAGE_KEYS)
sj = C.render_sidebar("plan")
if "pl_mct" not in ss:
    try:
        ss["pl_mct"] = int(st.query_params.get("pl_mct", 2000))
        ss["pl_mcs"] = int(st.query_params.get("pl_mcs", 0))
    except ValueError:
        st.warning("Link: pl_mct / pl_mcs must be whole numbers; using 2000 trials, seed 0")
        ss["pl_mct"], ss["pl_mcs"] = 2000, 0
    ss["pl_mct"] = int(min(max(ss["pl_mct"], 100), 100_000))
    ss["pl_mcs"] = int(min(max(ss["pl_mcs"], 0), 2**31 - 1))
C.write_url(sj, {"pl_mct": ss["pl_mct"], "pl_mcs": ss["pl_mcs"]})

st.title("Plan a training run")
C.show_link_warnings()
scen, errs = C.validate(sj)
if errs:
    st.error("This scenario is not valid; the other inputs are kept:\n\n" + "\n".join(f"- `{e}`" for e in errs),
             icon=":material/error:")
    C.render_io(sj, None)
    st.stop()

try:
    rep = C.evaluate_cached(C.sj_key(sj))
except Exception as e:  # noqa: BLE001 - an engine failure is shown, not raised
    st.error(f"The engine could not evaluate this scenario: {e}")
    C.render_io(sj, None)
    st.stop()
res = rep["results"]
C.render_io(sj, res)
usable, physical = _hbm(scen)

st.caption(
    f"{scen.resolved_model().name} on {scen.cluster.n_gpus:,} GPUs "
    f"({scen.cluster.system if isinstance(scen.cluster.system, str) else scen.cluster.system.name}) · "
    f"dp = {rep['scenario']['parallelism'].get('dp')} "
    "(derived) · memory in GiB (2³⁰ B); bandwidth and checkpoint sizes in GB (10⁹ B)."
)

# Headline numbers ------------------------------------------------------------------------
c = st.columns(5)
fits = res.get("fits")
c[0].metric("Fits in HBM", C.DASH if fits is None else ("yes" if fits else "no"),
            help="Peak memory of the most loaded pipeline stage, margin included, ≤ usable HBM.")
peak = C.num(res, "mem_total_bytes")
c[1].metric("Peak memory per GPU", C.fmt(res, "mem_total_bytes", "gib"),
            delta=None if usable is None else f"of {usable / C.GIB:,.1f} GiB usable",
            delta_color="off", delta_arrow="off", help="Most loaded pipeline stage; GiB = 2³⁰ bytes.")
_metric(c[2], "Step time", res, "step_time_s", "s", "One optimizer step.")
_metric(c[3], "MFU", res, "mfu", "pct", "Model FLOP/s ÷ (GPUs × dense 16-bit peak).")
_metric(c[4], "Throughput", res, "tokens_per_s", "tok", "Tokens per second, whole job.")
c = st.columns(5)
_metric(c[0], "MTBF (job)", res, "mtbf_h", "h", "Mean time between failures of the whole job.")
_metric(c[1], "Goodput", res, "goodput", "pct", "Expected fraction of wall time that advances training.")
_metric(c[2], "Days to train", res, "time_to_train_days", "days", "Wall time including failures and checkpoints.")
_metric(c[3], "Cost to train", res, "cost_usd", "usd", "GPU-hours × price per GPU-hour.")
_metric(c[4], "Energy", res, "energy_mwh", "mwh")

# Charts ----------------------------------------------------------------------------------
left, right = st.columns(2)
with left:
    st.subheader("Memory per GPU")
    if rep["stages"]:
        st.altair_chart(charts.memory_stages_chart(rep["stages"], usable, physical), key="pl_mem")
        st.caption("One bar per pipeline stage, stacked by component; the margin (buffers, "
                   "fragmentation) is its own component. Red dashed line: usable HBM.")
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
    if C.num(res, "goodput") is not None:
        try:
            curve = interval_curve(C.sj_key(sj))
        except Exception as e:  # noqa: BLE001
            curve = None
            st.info(f"The goodput curve is not available: {e}")
        if curve is not None and len(curve):
            cur_rows = []
            for use in scen.checkpoint.tiers:
                kind = catalog.resolve_storage(use.tier).kind
                iv = C.num(res, f"ckpt_{kind}_interval_opt_s")
                if iv is not None and not CURVE_GRID_S[0] <= iv <= CURVE_GRID_S[-1]:
                    st.caption(f"{use.tier if isinstance(use.tier, str) else use.tier.name}: the engine's interval "
                               f"({iv / 3600:,.0f} h) lies outside the plotted range (10 s to 7 days), so no ○ "
                               "is drawn: in effect this tier is not saved to and the other tiers carry the "
                               "checkpoints.")
                elif iv is not None:
                    cur_rows.append({"tier": use.tier if isinstance(use.tier, str) else use.tier.name,
                                     "interval_s": iv, "goodput": res["goodput"]})
            st.altair_chart(charts.goodput_interval_chart(curve, pd.DataFrame(cur_rows)), key="pl_gp")
            st.caption("Each line: the engine's goodput (first order) with that tier's interval varied and "
                       "the other tiers at their chosen intervals. ◆ best interval on the line, ○ the interval "
                       "in use (the engine maximises the higher-order renewal goodput, so ◆ and ○ can differ "
                       "slightly).")
    else:
        st.info("Goodput is not available from the engine yet.")
with right:
    st.subheader("Monte Carlo: time to train")
    m1, m2, m3 = st.columns([1, 1, 1])
    m1.number_input("Trials", min_value=100, max_value=100_000, step=500, key="pl_mct")
    m2.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key="pl_mcs")
    run_mc = m3.button("Run simulation", key="pl_mc_run", type="primary")
    C.save_page_widgets("plan", _PAGE_KEYS)
    mc_key = (C.sj_key(sj), int(ss["pl_mct"]), int(ss["pl_mcs"]))
    if run_mc:
        bar = st.progress(0.0, text="Simulating failures and restarts ...")

        def _progress(*a):
            frac = a[0] / a[1] if len(a) >= 2 and a[1] else (a[0] if a else 0.0)
            bar.progress(float(min(max(frac, 0.0), 1.0)))

        try:
            sim = planner.simulate(scen, n_trials=int(ss["pl_mct"]), seed=int(ss["pl_mcs"]), progress=_progress)
            ss["pl_mc"] = (mc_key, sim)
        except Exception as e:  # noqa: BLE001
            st.error(f"Monte Carlo failed: {e}")
        bar.empty()
    if ss.get("pl_mc") and ss["pl_mc"][0] == mc_key:
        sim = ss["pl_mc"][1]
        st.altair_chart(charts.time_to_train_hist(sim, C.num(res, "time_to_train_days")), key="pl_mc_hist")
        try:
            from planner.simulate import summarize

            st.dataframe(summarize(sim), hide_index=False, key="pl_mc_sum")
        except Exception:  # noqa: BLE001
            st.dataframe(sim.describe().T, key="pl_mc_sum")
        st.caption("Histogram: simulated runs; red dashed line: the analytic expectation.")
    else:
        st.caption("Press **Run simulation** to draw failure times and replay checkpoints and restarts.")

# Formulas and notes ----------------------------------------------------------------------
#: Headline numbers (label, result column, display kind) in the order of the metrics above.
HEADLINES = (
    ("Fits in HBM", "fits", "bool"),
    ("Peak memory per GPU", "mem_total_bytes", "gib"),
    ("Step time", "step_time_s", "s"),
    ("MFU", "mfu", "pct"),
    ("Throughput", "tokens_per_s", "tok"),
    ("MTBF (job)", "mtbf_h", "h"),
    ("Goodput", "goodput", "pct"),
    ("Days to train", "time_to_train_days", "days"),
    ("Cost to train", "cost_usd", "usd"),
    ("Energy", "energy_mwh", "mwh"),
)
UNITS_TEXT = ("Units: memory in **GiB = 2³⁰ B** (MiB = 2²⁰ B); bandwidths, message and checkpoint "
              "sizes in **GB = 10⁹ B** (MB = 10⁶ B, TB/s = 10¹² B/s); FLOP/s peaks and TFLOP/s in 10¹²; "
              "times in s (h = 3,600 s, d = 86,400 s); energy in MWh (= 3.6 × 10⁹ J); money in USD. "
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
    for label, key, kind in HEADLINES:
        f = _formula(explain, key)
        st.markdown(f"**{label}** = {C.fmt(res, key, kind)} &nbsp;(`{key}`)  \n"
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
    st.dataframe(pd.DataFrame({"column": list(res), "value": [str(v) for v in res.values()]}),
                 hide_index=True, key="pl_all")
