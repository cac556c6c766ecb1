"""Validate page: published training runs against the engine's predictions."""

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # AppTest.from_file on this page alone
    sys.path.insert(0, _ROOT)

import pandas as pd  # noqa: E402
import streamlit as st  # noqa: E402

from app_pages import _common as C  # noqa: E402
from planner import charts  # noqa: E402

ss = st.session_state

UNITS = {
    "tflops_per_gpu": "TFLOP/s per GPU",
    "tokens_per_s_per_gpu": "tokens/s per GPU",
    "tokens_per_s": "tokens/s",
    "mfu": "MFU, fraction",
    "step_time_s": "s",
}
#: Button labels of the metric choice (the axis titles use UNITS).
LABELS = {"tflops_per_gpu": "TFLOP/s per GPU", "tokens_per_s_per_gpu": "tokens/s per GPU",
          "tokens_per_s": "tokens/s", "mfu": "MFU", "step_time_s": "step time (s)"}


@st.cache_data(max_entries=2, show_spinner="Evaluating the published runs ...")
def run_validation() -> tuple[pd.DataFrame, pd.DataFrame]:
    from planner.validation import validate

    return validate()


_KEYS = ("v_metric", "v_groups")
C.keep_page_widgets("validate", _KEYS)
st.title("How far to trust it")
st.caption("Published training runs (../shared/validation/calibration.csv) against the engine's "
           "predictions for the same model, batch, hardware and split. Relative error = predicted / published − 1.")
try:
    rows, summary = run_validation()
except Exception as e:  # noqa: BLE001
    st.error(f"The validation could not run: {e}")
    st.query_params.from_dict({})
    st.stop()

ok = rows[rows["status"].eq("ok")] if "status" in rows.columns else rows
metrics = [m for m in ok["metric"].dropna().unique()] if "metric" in ok.columns else []
groups = sorted(ok["group"].dropna().unique()) if "group" in ok.columns else []
qp = st.query_params
if "v_metric" not in ss:
    _w = []
    ss["v_metric"] = qp.get("v_metric") if qp.get("v_metric") in metrics else (metrics[0] if metrics else None)
    if qp.get("v_metric") not in (None, *metrics):
        _w.append(f"v_metric={qp.get('v_metric')!r} unknown; allowed {', '.join(metrics)}")
    wanted = [g for g in qp.get_all("v_group") if g in groups]
    bad = [g for g in qp.get_all("v_group") if g not in groups]
    if bad:
        _w.append(f"v_group {', '.join(map(repr, bad))} unknown; allowed {', '.join(groups)}")
    ss["v_groups"] = wanted or list(groups)
    ss["_v_warnings"] = _w
for _msg in ss.get("_v_warnings", []):
    st.warning(f"Link: {_msg}", icon=":material/link_off:")

st.subheader("Error per source group")
st.dataframe(summary, hide_index=True, key="v_summary",
             column_config={c: st.column_config.NumberColumn(format="percent") for c in summary.columns
                            if c.endswith("err")})

st.segmented_control("Published metric", metrics, key="v_metric", format_func=lambda m: LABELS.get(m, m))
# Pills, full width: every group stays visible (a multiselect hid chips behind "+1").
st.pills("Source groups", groups, selection_mode="multi", key="v_groups",
         help="Click a group to show or hide its runs.")
C.save_page_widgets("validate", _KEYS)
metric = ss.get("v_metric") or (metrics[0] if metrics else None)
st.query_params.from_dict({"v_metric": metric or "", "v_group": list(ss.get("v_groups") or [])})

sel = ok[ok["metric"].eq(metric) & ok["group"].isin(ss.get("v_groups") or groups)] if metric else ok.iloc[:0]
if len(sel):
    st.altair_chart(charts.validation_scatter(sel, "published", "predicted", color="group",
                                              unit=UNITS.get(metric, metric),
                                              tooltip=("run_id", "rel_err")), key="v_scatter")
else:
    st.info("No run in this selection.")

with st.expander(f"Every run ({len(rows)}; skipped rows say why)", expanded=False):
    st.dataframe(rows, hide_index=True, key="v_rows",
                 column_config={"rel_err": st.column_config.NumberColumn("rel. error", format="percent")})
