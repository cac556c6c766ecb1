"""Validate page: published training runs against the engine's predictions."""

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # AppTest.from_file on this page alone
    sys.path.insert(0, _ROOT)

import pandas as pd  # noqa: E402
import streamlit as st  # noqa: E402

from app_pages import _common as C  # noqa: E402
from planner import charts, share, validation  # noqa: E402

ss = st.session_state

UNITS = {
    "tflops_per_gpu": "TFLOP/s per GPU",
    "tokens_per_s_per_gpu": "tokens/s per GPU",
    "tokens_per_s": "tokens/s",
    "mfu": "MFU, fraction",
    "hfu": "HFU, fraction",
    "step_time_s": "s",
}
#: Button labels of the metric choice (the axis titles use UNITS).
LABELS = {"tflops_per_gpu": "TFLOP/s per GPU", "tokens_per_s_per_gpu": "tokens/s per GPU",
          "tokens_per_s": "tokens/s", "mfu": "MFU", "hfu": "HFU", "step_time_s": "step time (s)"}

#: Run sets: link value -> (button label, CSV path for validate() — None = its default file,
#: file name shown in the caption). The first is the default.
SETS = {
    "calibration": ("calibration runs", None, "../shared/validation/calibration.csv"),
    "out_of_sample": ("out-of-sample runs", Path(_ROOT) / "validation" / "out_of_sample.csv",
                      "validation/out_of_sample.csv"),
}
DEFAULT_SET = next(iter(SETS))


@st.cache_data(max_entries=len(SETS), show_spinner="Evaluating the published runs ...")
def run_validation(run_set: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    from planner.validation import validate

    return validate(SETS[run_set][1])


def _choices(rows: pd.DataFrame) -> tuple[pd.DataFrame, list, list]:
    """Compared rows, their metrics (in order of appearance) and their groups (sorted)."""
    ok = rows[rows["status"].eq("ok")] if "status" in rows.columns else rows
    metrics = [m for m in ok["metric"].dropna().unique()] if "metric" in ok.columns else []
    groups = sorted(ok["group"].dropna().unique()) if "group" in ok.columns else []
    return ok, metrics, groups


def _most_published(ok: pd.DataFrame, groups) -> str | None:
    """The metric most of the chosen groups' runs publish (so the first view is never empty)."""
    if "metric" not in ok.columns or not len(ok):
        return None
    sub = ok[ok["group"].isin(list(groups))] if "group" in ok.columns else ok
    counts = (sub if len(sub) else ok)["metric"].value_counts()
    return str(counts.idxmax()) if len(counts) else None


def _on_set_change() -> None:
    """Show the new set's most published metric (the one most of its runs can be compared on)
    and all of its groups."""
    if ss.get("v_set") not in SETS:
        ss["v_set"] = DEFAULT_SET
    try:
        new_ok, new_metrics, new_groups = _choices(run_validation(ss["v_set"])[0])
    except Exception:  # noqa: BLE001 - the page body reports the failure
        return
    ss["v_metric"] = _most_published(new_ok, new_groups)
    ss["v_groups"] = list(new_groups)
    ss["v_open"] = None  # a run of the old set
    ss["_v_warnings"], ss["_v_set_warnings"] = [], []  # the link's warnings were about the old view


def _drop_link_warning(prefix: str) -> None:
    """on_change of the metric / group choice: the link's warning about that choice is about a value
    the user has now replaced (found by review: "v_metric='bogus' unknown" stayed after a metric was
    picked)."""
    ss["_v_warnings"] = [w for w in ss.get("_v_warnings", []) if not w.startswith(prefix)]


def _open_run() -> None:
    """on_click of "Open on the Plan page": the picked run's scenario as the model reads it
    (``validation.run_scenario``: the comparison's own reading) becomes the current scenario; the
    page then switches to Plan (below), which shows every part of its step with its formula."""
    rid = ss.get("v_open")
    if not rid:
        return
    run_set = ss.get("v_set") if ss.get("v_set") in SETS else DEFAULT_SET
    try:
        scen, _ = validation.run_scenario(str(rid), SETS[run_set][1])
    except Exception as e:  # noqa: BLE001 - shown on the page, never raised
        ss["_v_open_error"] = f"{rid}: {e}"
        return
    C.init_state()
    C.open_in_plan(scen.to_json_dict())
    ss["_v_goto_plan"] = True


_KEYS = ("v_set", "v_metric", "v_groups", "v_open")  # v_open kept across a page switch (review 46g)
if ss.pop("_v_goto_plan", False):  # set by "Open on the Plan page" (below)
    try:
        st.switch_page("app_pages/plan.py")
    except Exception:  # noqa: BLE001 - this page run on its own (streamlit run app_pages/validate.py): no Plan page
        ss["_v_open_error"] = ("the Plan page is not part of this app: start the dashboard with "
                               "`streamlit run app.py` (README), where the run opens on the Plan page")
if C.page_url_moved("validate", _KEYS, own=lambda k: k.startswith("v_")):
    # Back / Forward: the link is read again, as on a page's first run
    for _k in ("v_set", "v_metric", "v_groups", "v_open", "_v_set_warnings", "_v_warnings"):
        ss.pop(_k, None)
C.keep_page_widgets("validate", _KEYS)
qp = st.query_params
if "v_set" not in ss:  # from the link: on the first run, and again after Back / Forward (above)
    ss["v_set"] = qp.get("v_set") if qp.get("v_set") in SETS else DEFAULT_SET
    ss["_v_set_warnings"] = ([f"v_set={share._show(qp.get('v_set'))} unknown; allowed {', '.join(SETS)}"]
                             if qp.get("v_set") not in (None, *SETS) else [])
    # keys this page does not read (p=default, zzz=1) are said, not dropped silently (review 17b)
    ss["_v_set_warnings"] += share.foreign_page_keys(qp.to_dict(), "validate")
st.title("How far to trust it")
st.segmented_control("Runs", list(SETS), key="v_set", required=True, on_change=_on_set_change,
                     format_func=lambda s: SETS[s][0])
run_set = ss.get("v_set") if ss.get("v_set") in SETS else DEFAULT_SET
_caption = (f"Published training runs ({SETS[run_set][2]}) against the engine's predictions for the same "
            "model, batch, hardware and split. Relative error = predicted / published − 1 for throughput, TFLOP/s, MFU and HFU; published / predicted − 1 for step time (so + is always too fast).")
if run_set == "out_of_sample":
    _caption += (" These runs were never used to fit the model's constants: they were collected after "
                 "tools/calibrate.py fitted them (docs/timing.md, “Out of sample”).")
st.caption(_caption)
try:
    rows, summary = run_validation(run_set)
except Exception as e:  # noqa: BLE001
    st.error(f"The validation could not run: {C.md_text(e)}")
    st.query_params.from_dict({})
    st.stop()

ok, metrics, groups = _choices(rows)
if "v_metric" not in ss:
    _w = []
    _given = [g for g in qp.get_all("v_group") if g != "none"]  # "none": every group deselected
    wanted = [g for g in _given if g in groups]
    bad = [g for g in _given if g not in groups]
    if bad:
        _w.append(f"v_group {', '.join(map(share._show, bad[:8]))}{' …' if len(bad) > 8 else ''} unknown; allowed {', '.join(groups)}")
    ss["v_groups"] = [] if qp.get_all("v_group") == ["none"] else (wanted or list(groups))
    ss["v_metric"] = (qp.get("v_metric") if qp.get("v_metric") in metrics
                      else _most_published(ok, ss["v_groups"]))
    if qp.get("v_metric") not in (None, *metrics):
        _w.append(f"v_metric={share._show(qp.get('v_metric'))} unknown; allowed {', '.join(metrics)}")
    # v_run: the run picked in "Open a run on the Plan page" (a link to one run of the set)
    _want_run = qp.get("v_run")
    _ids_now = set(ok["run_id"].astype(str)) if "run_id" in ok.columns else set()
    # set either way: a popped key leaves the box showing its old pick, which the next edit sends back
    ss["v_open"] = _want_run if _want_run is not None and _want_run in _ids_now else None
    if _want_run is not None and _want_run not in _ids_now:
        _w.append(f"v_run={share._show(_want_run)}: no compared run of this set has that id "
                  f"({len(_ids_now)} runs; `planner validate --run` names close ids)")
    ss["_v_warnings"] = _w
for _msg in share.capped_warnings(ss.get("_v_set_warnings", []) + ss.get("_v_warnings", [])):
    st.warning(f"Link: {C.md_text(_msg)}", icon=":material/link_off:")

st.subheader("Error per source group")
# the relative error as the caption above defines it (a step time is published ÷ predicted − 1: found
# by review, the help said predicted ÷ published for every group, Korthikanti's step times included)
_REL = "relative error (predicted ÷ published − 1; for a step time published ÷ predicted − 1)"
_SUMMARY_LABELS = {"median_abs_err": ("median |error|", f"Median of the |{_REL}| over the group's runs"),
                   "p90_abs_err": ("p90 |error|", f"90th percentile of the |{_REL}|"),
                   "max_abs_err": ("max |error|", f"Largest |{_REL}|"),
                   "mean_signed_err": ("mean signed error", f"Mean {_REL}: above 0 the model is faster than the "
                                       "runs were")}
# in % with one fixed number of decimals: format="percent" dropped trailing zeros, "5.9%" beside
# "5.18%" (review h27b)
_shown = summary.copy()
_errs = [c for c in _shown.columns if c.endswith("err")]
_shown[_errs] = _shown[_errs].astype(float) * 100.0
st.dataframe(_shown, hide_index=True, key="v_summary",
             column_config={c: st.column_config.NumberColumn(_SUMMARY_LABELS.get(c, (c, None))[0],
                                                             help=_SUMMARY_LABELS.get(c, (c, None))[1], format="%.2f%%")
                            for c in _errs} | {"n": st.column_config.NumberColumn(
                                "runs", help="Runs of the group with a prediction (skipped rows say why below)")})

with st.expander("By accelerator family and kind: the band the Plan page shows", expanded=False):
    try:
        _acc = validation.accuracy_table()
    except Exception as e:  # noqa: BLE001 - shown, never raised
        _acc = None
        st.info(f"Not available: {e}")
    if _acc is not None and len(_acc):
        st.caption("Predicted ÷ published throughput over both run sets' runs of each accelerator family "
                   "and kind (dense, MoE, FP4); out-of-sample runs only where ten or more exist. Above 1 the "
                   "model is faster than the run was.")
        st.dataframe(_acc, hide_index=True, key="v_accuracy",
                     column_config={"low": st.column_config.NumberColumn(format="%.2f"),
                                    "median": st.column_config.NumberColumn(format="%.2f"),
                                    "high": st.column_config.NumberColumn(format="%.2f"),
                                    "out_of_sample_only": st.column_config.CheckboxColumn("out of sample only")})

st.segmented_control("Published metric", metrics, key="v_metric", required=True, format_func=lambda m: LABELS.get(m, m),
                     on_change=_drop_link_warning, args=("v_metric",))
# Pills, full width: every group stays visible (a multiselect hid chips behind "+1").
st.pills("Source groups", groups, selection_mode="multi", key="v_groups",
         help="Click a group to show or hide its runs.", on_change=_drop_link_warning, args=("v_group",))
C.save_page_widgets("validate", _KEYS)
metric = ss.get("v_metric") or (metrics[0] if metrics else None)
st.query_params.from_dict({"v_set": run_set, "v_metric": metric or "",
                           "v_group": list(ss.get("v_groups") or ["none"]),
                           **({"v_run": str(ss["v_open"])} if ss.get("v_open") else {})})
C.note_page_url("validate", _KEYS)

sel = ok[ok["metric"].eq(metric) & ok["group"].isin(ss.get("v_groups") or [])] if metric else ok.iloc[:0]
# a group whose runs publish another metric has no point on this chart: say which (found by review:
# five groups selected, two in the legend, and nothing said why)
_other = [g for g in (ss.get("v_groups") or []) if metric and not ok["metric"].eq(metric)[ok["group"].eq(g)].any()]
if _other and len(sel):
    st.caption(f"Not on this chart (their runs publish another metric: pick it above): {', '.join(_other)}.")
if len(sel):
    st.altair_chart(charts.validation_scatter(sel, "published", "predicted", color="group",
                                              unit=UNITS.get(metric, metric),
                                              tooltip=("run_id", "rel_err")), key="v_scatter")
elif not ss.get("v_groups"):
    st.info("No source group selected: click one above to show its runs.")
elif _other:  # every selected group publishes another metric (found by review: it said only "No run")
    st.info(f"No selected group publishes {LABELS.get(metric, metric)}: {', '.join(_other)} publish another "
            "metric (pick it above), or select a group that publishes this one.")
else:
    st.info("No run in this selection.")

if _fits_line := validation.fits_note(ok):  # the CLI's wording (planner.validation.fits_note)
    st.caption(_fits_line.strip())
with st.expander(f"Every run ({len(rows)}; skipped rows say why)", expanded=False):
    st.dataframe(rows, hide_index=True, key="v_rows",
                 column_config={"rel_err": st.column_config.NumberColumn("rel. error", format="percent"),
                                "mem_gib": st.column_config.NumberColumn(
                                    "memory / GPU (GiB)", format="%.1f",
                                    help="Predicted memory of the most loaded pipeline stage, GiB = 2^30 bytes"),
                                "fits": st.column_config.CheckboxColumn(
                                    "fits", help="Predicted memory within the GPU's usable HBM, as the row reads"),
                                "mem_published": st.column_config.NumberColumn(
                                    "published memory / GPU", format="%.1f",
                                    help="The run's own measured memory per GPU where its source publishes one "
                                         "(GB or GiB; allocated, reserved or nvidia-smi, as the source states)"),
                                "mem_pred_over_pub": st.column_config.NumberColumn(
                                    "memory predicted / published", format="%.3f",
                                    help="memory / GPU (GiB) over the published figure read as GiB "
                                         "(docs/memory.md tabulates these ratios by framework)"),
                                "defaults": st.column_config.TextColumn(
                                    "defaults",
                                    help="Settings the run's row leaves empty and the values the default rules "
                                         "gave them (docs/timing.md, 'The default rule for unpublished settings')")})

# One run, part by part: its scenario on the Plan page (the CLI's `planner validate --run RUN_ID`)
_ids = ok["run_id"].astype(str).tolist() if "run_id" in ok.columns else []
if _ids:
    _c1, _c2 = st.columns([3, 1], vertical_alignment="bottom")
    _c1.selectbox("Open a run on the Plan page", _ids, index=None, key="v_open",
                  on_change=_drop_link_warning, args=("v_run",),
                  placeholder=f"Pick one of the {len(_ids)} compared runs",
                  help="The run's scenario as the model reads it (the settings its row leaves empty filled by "
                       "the default rules, listed in the table's defaults column): the Plan page shows each part "
                       "of its step with its formula, its memory per stage and the rest. The same numbers as "
                       "`planner validate --run RUN_ID` on the command line.")
    _c2.button("Open on the Plan page", key="v_open_btn", on_click=_open_run, disabled=not ss.get("v_open"),
               icon=":material/calculate:")
if _open_err := ss.pop("_v_open_error", None):
    st.error(f"Could not open the run: {C.md_text(_open_err)}")
