"""Explore page: every valid split of the sidebar's model and cluster."""

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # AppTest.from_file on this page alone
    sys.path.insert(0, _ROOT)

import copy  # noqa: E402
import json  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import streamlit as st  # noqa: E402

import planner  # noqa: E402
from app_pages import _common as C  # noqa: E402
from planner import charts, share  # noqa: E402
from planner.batch import RECOMPUTE, SCHEDULES  # noqa: E402
from planner.sweep import (EXPLORE_DEFAULTS, EXPLORE_HEADROOM_MAX_PCT, EXPLORE_PAGE_KEYS,  # noqa: E402
                           EXPLORE_TOP_MAX, SEARCH_SPACES,
                           distinct_results, no_split_reason, no_valid_split_reason, row_expert_tp,
                           sweep_start)
from planner.share import EXPLORE_COLOR_CHOICES  # noqa: E402
from planner.timing import ep_overlap_possible  # noqa: E402

ss = st.session_state

OBJECTIVES = {
    "time_to_train": "fewest days to train",
    "cost": "lowest cost",
    "goodput_tokens_per_s": "most useful tokens/s (goodput × throughput)",
    "mfu": "highest MFU",
}
#: Search spaces offered (planner.sweep.SEARCH_SPACES: options of planner.sweep.build_space).
SPACES = SEARCH_SPACES
SPACE_HELP = ("focused: ZeRO-1, selective or full recompute, no offload, 1F1B or interleaved (VPP ≤ 4), "
              "CP ≤ 4, micro-batch ≤ 4. full: the engine's whole default space plus op_sac recompute "
              "(TorchTitan's per-op selective checkpointing) and the GPipe and DualPipe schedules (slower).")
#: The top-K table's column that each objective ranks on. Goodput × throughput has a column of its own,
#: shown only under that objective (found by review: the table said it was ranked on goodput %, which was
#: 96.4 % in every row of the default preset's sweep; the rows were in MFU order).
RANK_COLUMN = {"time_to_train": "days", "cost": "M USD", "goodput_tokens_per_s": "gp·Mtok/s", "mfu": "MFU %"}
SPLIT_COLUMNS = ("TP", "PP", "DP", "CP", "EP", "VPP", "mb", "ZeRO", "recomp.", "sched.")
#: Points sent to the scatter charts (best first; every Pareto point is added).
MAX_POINTS = 3000
#: Most HBM the page lets a sweep keep free, in % of the usable HBM (planner.sweep).
HEADROOM_MAX_PCT = EXPLORE_HEADROOM_MAX_PCT
SPLIT_FIELDS = ("tp", "pp", "cp", "ep", "vpp", "zero_stage", "recompute", "schedule",
                "sequence_parallel", "offload_optimizer")


@st.cache_data(max_entries=8, show_spinner=False)
def run_sweep(sj_json: str, objective: str, space: str, gpus: int | None = None, headroom_pct: int = 0) -> pd.DataFrame:
    """Every feasible split, best first (planner.sweep); ``gpus``: the GPU count to sweep when the
    scenario it starts from holds another (see :func:`sweep_start`); ``headroom_pct``: the share of
    usable HBM every split must leave free, in % (``planner.sweep``'s ``min_headroom``)."""
    sj = json.loads(sj_json)
    return planner.sweep(sj, gpus=gpus, objective=objective, feasible_only=True,
                         min_headroom=headroom_pct / 100.0, **SPACES[space])


@st.cache_data(max_entries=8, show_spinner=False)
def distinct_sweep(sj_json: str, objective: str, space: str, gpus: int | None = None, headroom_pct: int = 0) -> pd.DataFrame:
    """:func:`run_sweep`'s table with one row per result (``planner.sweep.distinct_results``),
    cached like it: a rerun for a colour or pick-box change does not filter the table again."""
    return distinct_results(run_sweep(sj_json, objective, space, gpus, headroom_pct))


@st.cache_data(max_entries=8, show_spinner=False)
def empty_reason(sj_json: str, space: str, gpus: int, n_valid: int, headroom_pct: int = 0,
                 objective: str = "time_to_train") -> str:
    """Why the sweep of ``space`` on ``gpus`` GPUs found no split, naming the fields and what would work
    (planner.sweep.no_valid_split_reason / no_split_reason, told this page's search space and GPU
    count); when the space is not the widest, how many splits the widest space finds on the same
    GPUs (found by review: the focused space found none for Llama 3 70B on 16 H100 and the page
    advised CPU offload, which that space never tries; the full space has 1,256 splits that fit since the VPP candidates include the layers' divisors; 927 before)."""
    sj = json.loads(sj_json)
    scen = planner.Scenario.model_validate(copy.deepcopy(sj))
    opts = SPACES[space]
    if n_valid == 0:
        return no_valid_split_reason(scen, gpus, uneven_how="sidebar: Parallelism → Layer split over stages: uneven",
                                     **opts)
    # with the page's "HBM left free" (review 14j: the reason and both hints were counted without it)
    why = no_split_reason(sj, n_valid, gpus=gpus, min_headroom=headroom_pct / 100.0, objective=objective, **opts)
    wide = list(SPACES)[-1]
    if space != wide and why.startswith("every valid split runs out of memory"):
        k = len(run_sweep(sj_json, "time_to_train", wide, gpus, headroom_pct))
        if k:
            why += (f". On these {gpus:,} GPUs the {wide} search space (Search space: {wide}: ZeRO 0–3, optimizer "
                    f"offload to the CPU, every recompute mode) finds {k:,} splits that fit"
                    + (f" with {headroom_pct} % of the usable HBM left free" if headroom_pct else ""))
    return why


def _sweep_base(sj: dict) -> dict:
    """The scenario the sweep starts from (a copy: the sweep overwrites its split)."""
    return copy.deepcopy(sj)


def row_scenario(sj: dict, row: dict) -> dict:
    """The sidebar scenario with one sweep row's split (and system / GPUs)."""
    out = copy.deepcopy(sj)
    par = out.setdefault("parallelism", {})
    for f in SPLIT_FIELDS:
        if f in row and row[f] is not None:
            v = row[f]
            par[f] = v.item() if hasattr(v, "item") else v
    par.pop("dp", None)
    par.pop("dp_shard", None)  # sweep rows shard over all DP ranks (HSDP is not swept)
    par.pop("recompute_layers", None)  # ... and fully recompute every layer (partial is not swept)
    if "micro_batch_size" in row:
        out.setdefault("training", {})["micro_batch_size"] = int(row["micro_batch_size"])
    cl = out.setdefault("cluster", {})
    cur = cl.get("system")
    cur_id = cur if isinstance(cur, str) else (cur or {}).get("name") if isinstance(cur, dict) else None
    if "system" in row and isinstance(row["system"], str) and row["system"] != cur_id:
        # another system's row; an inline sidebar system's rows carry its name and keep the inline
        # object (review 15l: its name was set as a catalogue id, an unknown system in Plan)
        cl["system"] = row["system"]
    if "n_gpus" in row:
        cl["n_gpus"] = int(row["n_gpus"])
    if par.get("schedule") != "interleaved":
        par["vpp"] = 1
    if par.get("etp") is not None:
        # expert TP as the sweep ran the row (planner.sweep.scenario_for_row): gcd(etp, tp) for an MoE
        # model, = tp for a dense one (review h27d: a TP 1 row of Mixtral at etp 2 opened in Plan on
        # "etp = 2 must divide tp = 1")
        try:
            moe = planner.Scenario.model_validate(copy.deepcopy(sj)).resolved_model().moe is not None
        except (ValueError, TypeError):
            moe = True
        par["etp"] = row_expert_tp(par["etp"], int(par.get("tp") or 1), moe)
    if par.get("offload_optimizer", "none") == "none":  # master weights / grads go with the optimizer
        par["offload_master_weights"] = False
        par["offload_grads"] = False
    if par.get("ep_comm_overlap"):
        # the expert all-to-all overlap only where the sweep row had it (planner.sweep.scenario_for_row;
        # review 14j: a swept plain-1F1B PP 4 row of Mixtral opened in Plan with the overlap still on,
        # 2.98 s per step where the table said 3.08 s)
        gbs = (out.get("training") or {}).get("global_batch_size")
        if gbs is None:
            gbs = planner.Scenario.model_validate(copy.deepcopy(sj)).training.global_batch_size
        mbs = int(out["training"].get("micro_batch_size") or 1)
        dp = int(row["dp"]) if row.get("dp") is not None else 1
        if not bool(ep_overlap_possible(int(par.get("pp", 1)), SCHEDULES.index(par.get("schedule", "1f1b")),
                                         int(gbs) // max(mbs * dp, 1), RECOMPUTE.index(par.get("recompute", "none")),
                                         int(par.get("vpp") or 1))):  # vpp = 1 interleaved is 1F1B (review 17c)
            par["ep_comm_overlap"] = False
    return out


def _row_to_open(i: int) -> dict | None:
    """The scenario of row ``i`` of this run's sweep (None when there is no such row)."""
    top = ss.get("_ex_top_rows") or []
    if not 0 <= i < len(top):
        return None
    sj = row_scenario(ss[C.SCENARIO_KEY], top[i])
    if ss.get("_ex_layer_split") == "uneven":  # the sweep ran on uneven splits (its fallback base)
        sj.setdefault("parallelism", {})["layer_split"] = "uneven"
    return sj


def _on_table_select() -> None:
    sel = ss.get("ex_table")
    rows = []
    try:
        rows = list(sel.selection.rows) if sel is not None else []
    except AttributeError:
        rows = list((sel or {}).get("selection", {}).get("rows", []))
    if rows:  # opened once this run's sweep is known (below), never from a stale table
        ss["_ex_open_req"] = _request(int(rows[0]))


def pick_index(value, labels: list[str]) -> int:
    """Row index of the "Or pick a row" box's value. The box holds an int; a browser that still
    shows an earlier sweep's row sends that row's label instead ("#0: TP 4 · … · 182.2 days"), which
    Streamlit passes on as the value when it is no longer an option (review 2026-11-30: int() of
    it raised). A current label maps to its row, anything else to row 0."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value) if 0 <= int(value) < max(len(labels), 1) else 0
    if isinstance(value, str) and value in labels:
        return labels.index(value)
    return 0


def _on_open_button() -> None:
    # Only the request is kept here: a callback runs before the page, with the rows of the last
    # run that finished. A click while a new sweep was still computing (another GPU count) opened
    # the old sweep's row, its old GPU count included (found by a browser test under load: Plan
    # opened with n=1024 after GPUs 2048). The row is opened below, from this run's sweep.
    ss["_ex_open_req"] = _request(pick_index(ss.get("ex_pick", 0), ss.get("_ex_pick_labels") or []))


def _request(i: int) -> tuple[int, str | None]:
    """Row ``i`` and the label it had on the table the user clicked (the last finished run's)."""
    labels = ss.get("_ex_pick_labels") or []
    return i, (labels[i] if 0 <= i < len(labels) else None)


# ---------------------------------------------------------------------------------------
_open_req = ss.pop("_ex_open_req", None)  # taken now: a page that stops early does not keep it
if (_open_sj := ss.pop("_ex_open_sj", None)) is not None:  # set below, loaded before any widget
    C.open_in_plan(_open_sj)
    st.switch_page("app_pages/plan.py")

_PAGE_KEYS = EXPLORE_PAGE_KEYS  # planner.sweep: the CLI's --link checks the same keys
C.keep_page_widgets("explore", _PAGE_KEYS)
sj = C.render_sidebar("explore", _PAGE_KEYS)
qp = st.query_params
if "ex_obj" not in ss:
    _w: list[str] = []
    ss["ex_obj"] = C.link_choice("ex_obj", list(OBJECTIVES), EXPLORE_DEFAULTS["ex_obj"], _w)
    ss["ex_space"] = C.link_choice("ex_space", list(SPACES), EXPLORE_DEFAULTS["ex_space"], _w)
    ss["ex_color"] = C.link_choice("ex_color", list(EXPLORE_COLOR_CHOICES), EXPLORE_COLOR_CHOICES[0], _w)
    ss["ex_top"] = C.link_int("ex_top", 1, EXPLORE_TOP_MAX, int(EXPLORE_DEFAULTS["ex_top"]), _w)
    ss["ex_head"] = C.link_int("ex_head", 0, HEADROOM_MAX_PCT, int(EXPLORE_DEFAULTS["ex_head"]), _w)
    ss["ex_ties"] = C.link_choice("ex_ties", ["0", "1"], EXPLORE_DEFAULTS["ex_ties"], _w) == "1"
    _w += share.unknown_own_page_keys(qp.keys(), "explore", _PAGE_KEYS)
    ss["_ex_warnings"] = _w
C.write_url(sj, {"ex_obj": ss["ex_obj"], "ex_space": ss["ex_space"], "ex_color": ss["ex_color"],
                 "ex_top": ss["ex_top"], "ex_head": ss["ex_head"], "ex_ties": "1" if ss["ex_ties"] else "0"})

st.title("Explore every split")
C.show_link_warnings()
for _msg in ss.get("_ex_warnings", []):
    st.warning(f"Link: {C.md_text(_msg)}", icon=":material/link_off:")
box_errs = C.sidebar_box_errors()
if box_errs:  # a sidebar box outside its range: no sweep from a value the page does not take (review h27b, D4)
    st.error(C.errors_text(box_errs), icon=":material/error:")
    st.stop()
scen, errs = C.validate(sj)
if errs:
    # The sweep replaces the split: a split that does not suit the sidebar's model or GPU count
    # (a new model, another GPU count, an imported config) is no reason to refuse. Sweep from the
    # same scenario on the plainest split; only errors that remain there stop the page.
    # the plainest split the scenario accepts (planner.sweep.plain_base, as `planner sweep` does)
    found = sweep_start(sj)
    if found is None:
        st.error("The sidebar scenario is not valid, so there is nothing to sweep from:\n\n"
                 + "\n".join(f"- {C.code(e)}" for e in errs), icon=":material/error:")
        st.stop()
    base, scen, sweep_gpus = found
    # filled once the sweep is done: "pick a row" only when there is one (review 45b: the advice stood
    # above a "No split found" warning with no table)
    _replace_info = (st.empty(), "The sidebar's split does not suit this model / GPU count ("
                     + "; ".join(C.code(e) for e in errs) + "); the sweep below tries every split instead.")
    sweep_src = base
else:
    sweep_src, sweep_gpus = sj, None
    _replace_info = None


def _show_replace_info(rows: bool | None) -> None:
    """The replaced-split note, with "pick a row" only when the sweep has rows (None: not run)."""
    if _replace_info is not None:
        tail = {True: " Pick a row (or Open in Plan) to load a valid one.", False: " None passes either (below).",
                None: ""}[rows]
        _replace_info[0].info(_replace_info[1] + tail, icon=":material/info:")


ss["_ex_layer_split"] = (sweep_src.get("parallelism") or {}).get("layer_split")

c1, c2, c3, c5, c4 = st.columns([2, 1, 1, 1, 1])
c1.selectbox("Rank by", list(OBJECTIVES), key="ex_obj", format_func=OBJECTIVES.get)
c2.selectbox("Search space", list(SPACES), key="ex_space", help=SPACE_HELP)
# no browser-side bounds (review h27b, D4: an out-of-range entry stayed red in the box, unsent): checked below
c3.number_input("Top K", step=5, key="ex_top")
c5.number_input("HBM left free, %", step=5, key="ex_head",
                help="Share of the usable HBM every split must leave free (planner.sweep's min_headroom). The "
                     "memory estimate is within 8 % of half the published peaks in the out-of-sample file, "
                     "but 36–80 % below a quarter of them (DeepEP MoE runs, PP 16, KempnerForge, a ZeRO-3 run; "
                     "docs/memory.md): a margin guards against that; 0 ranks splits up to the last byte.")
c4.segmented_control("Colour by", list(EXPLORE_COLOR_CHOICES), key="ex_color", format_func=str.upper, required=True)
C.save_page_widgets("explore", _PAGE_KEYS)
# the ranges a link takes (C.link_int above, `planner sweep --link`): a value outside them is named, not swept
_box_errs = [e for e in (
    share.box_value_error("Top K", ss.get("ex_top"), 1, EXPLORE_TOP_MAX, whole=True, where="link key ex_top"),
    share.box_value_error("HBM left free, %", ss.get("ex_head"), 0, HEADROOM_MAX_PCT, whole=True,
                          where="link key ex_head")) if e]
if _box_errs:
    _show_replace_info(None)
    st.error(C.errors_text(_box_errs, "A box above holds a value outside its range"), icon=":material/error:")
    st.stop()

st.caption(f"{C.plain(scen.resolved_model().name)} on {sweep_gpus or scen.cluster.n_gpus:,} GPUs of "
           f"{C.plain(scen.cluster.system if isinstance(scen.cluster.system, str) else scen.cluster.system.name)}: "
           "every TP · PP · CP · EP · micro-batch · ZeRO · recompute · schedule the engine accepts"
           + (f" — ZeRO sharded over all DP ranks: the scenario's hybrid sharding (dp_shard = "
              f"{scen.parallelism.dp_shard}) is not swept" if scen.parallelism.dp_shard not in (None, scen.parallelism.dp)
              else "")
           + (f" — full recompute of every layer: the scenario's {scen.parallelism.recompute_layers} layers per "
              "chunk is not swept" if scen.parallelism.recompute_layers else "")
           + (f" — expert TP gcd({scen.parallelism.etp}, TP) on each split: the scenario's etp = "
              f"{scen.parallelism.etp} where it divides the split's TP (etp is not swept)"
              if scen.parallelism.etp is not None and scen.resolved_model().moe is not None else "")
           + (" — CP stays 1: flash attention is off in this scenario, and no framework runs materialised-score "
              "attention under context parallelism (turn flash attention on to sweep CP)"
              if not scen.parallelism.flash_attention else "") + ".")
with st.spinner("Sweeping every split ..."):
    try:
        df = run_sweep(C.sj_key(_sweep_base(sweep_src)), ss["ex_obj"], ss["ex_space"], sweep_gpus, int(ss["ex_head"]))
    except Exception as e:  # noqa: BLE001
        _show_replace_info(None)
        st.error(f"The sweep failed: {C.md_text(e)}")
        st.stop()

_show_replace_info(df is not None and len(df) > 0)
if df is None or not len(df):
    n_valid = int(df.attrs.get("n_configurations", 0)) if df is not None else 0
    why = empty_reason(C.sj_key(_sweep_base(sweep_src)), ss["ex_space"], sweep_gpus or scen.cluster.n_gpus, n_valid,
                       int(ss["ex_head"]), ss["ex_obj"])
    if ss.get("_ex_layer_split") == "uneven" and (sj.get("parallelism") or {}).get("layer_split") != "uneven":
        # review 47g: the counts were read as the sidebar's, which keeps an even split and so sweeps fewer
        why = (why.rstrip(".") + ". These counts are for uneven layer splits, which this sweep ran (its fallback "
               "base); with the sidebar's even split a GPU count gives as many or fewer: set Parallelism → Layer split over "
               "stages: uneven to sweep them.")
    if why.startswith("every valid split runs out of memory"):
        # the engine's own hint (planner.sweep.no_split_reason), as `planner sweep` prints it (found by
        # review: the page advised full recompute, which the sweep already tries), for this page's space
        st.warning("No split of this model fits this cluster: " + why)
    else:
        st.warning("No split found: " + why)
    st.stop()

st.metric("Feasible splits", f"{len(df):,}")
pts = df.head(MAX_POINTS)
extra = [c for c in ("pareto_time_cost", "pareto_throughput_memory") if c in df.columns]
if extra:
    pts = pd.concat([pts, df[df[extra].any(axis=1)]]).drop_duplicates(subset=None)
left, right = st.columns(2)
with left:
    st.altair_chart(charts.throughput_memory_scatter(pts, ss.get("ex_color") or "tp"), key="ex_scatter")
with right:
    st.altair_chart(charts.pareto_cost_days_chart(pts), key="ex_pareto")
    if "pareto_time_cost" in df.columns and int(df["pareto_time_cost"].astype(bool).sum()) == 1:
        st.caption("Every split here runs on the same GPUs at the same price, so cost grows in proportion "
                   "to days and the Pareto front is a single point: the fastest split.")
if len(df) > MAX_POINTS:
    st.caption(f"Charts show the best {MAX_POINTS:,} splits plus every Pareto point; the table ranks all {len(df):,}.")

st.toggle("One row per result", key="ex_ties",
          help="Hide the splits whose step time, memory per GPU, days and cost all equal a better-ranked "
               "row's: DP 64 × CP 1 × micro-batch 1 and DP 8 × CP 8 × micro-batch 8, for example, often tie "
               "(the same tokens per GPU, the ring hidden), so a top 20 can hold only a few distinct results.")
ranked = distinct_sweep(C.sj_key(_sweep_base(sweep_src)), ss["ex_obj"], ss["ex_space"], sweep_gpus,
                        int(ss["ex_head"])) if ss["ex_ties"] else df
top = ranked.head(int(ss["ex_top"])).reset_index(drop=True)
if ss["ex_ties"] and len(ranked) < len(df):
    st.caption(f"{len(df) - len(ranked):,} of the {len(df):,} feasible splits tie a better-ranked one and are "
               "hidden from the table.")
ss["_ex_top_rows"] = top.to_dict("records")
def _pick_label(i: int, r: dict) -> str:
    """The pick box's label of table row ``i``: every split field that can tell two rows apart
    (review 14m: VPP, ZeRO and recompute were left out, so two rows could share a label)."""
    sched = r["schedule"] + (f" (VPP {r['vpp']})" if int(r["vpp"]) > 1 else "")
    extra = (f" · EP {r['ep']}" if int(r["ep"]) > 1 else "") + (
        f" · offload {r['offload_optimizer']}" if r["offload_optimizer"] != "none" else "")
    return (f"#{i + 1}: TP {r['tp']} · PP {r['pp']} · CP {r['cp']} · mb {r['micro_batch_size']} · "
            f"ZeRO {r['zero_stage']} · {r['recompute']} · {sched}{extra} · {C.fmt_days(float(r['time_to_train_days']))}")


_labels = [_pick_label(i, r) for i, r in enumerate(top.to_dict("records"))]
_stale_click = _open_req is not None and _open_req[1] is not None and (
    _open_req[0] >= len(_labels) or _labels[_open_req[0]] != _open_req[1])
if _stale_click:  # the table changed under the click (a sweep still computing): say so, open nothing
    st.warning(f"The sweep changed while you clicked: the row you chose ({_open_req[1]}) is not in this "
               "table any more"
               + (f"; row #{_open_req[0] + 1} is now {_labels[_open_req[0]].split(': ', 1)[-1]}"
                  if _open_req[0] < len(_labels) else "")
               + ". Pick a row again.", icon=":material/sync_problem:")
elif _open_req is not None and (_sj_open := _row_to_open(int(_open_req[0]))) is not None:
    # Open in Plan / a table row, on this run's sweep; the widgets take it on the next run's top
    ss["_ex_open_sj"] = _sj_open
    st.rerun()
# The split, then the results led by the column the table is ranked on, so that at 1,280 px (818 px
# of table with the sidebar open) the ranking column and the key results are never the ones cut off
# (review 2026-11-30: 974 px of columns hid goodput, days and M USD). Step time and throughput are
# left out: in one sweep (same model, GPUs, batch and price) both are fixed multiples of 1 / MFU, so
# MFU ranks the same rows (the scatter chart and the CSV have tokens/s; Plan has the step time).
_is_moe = scen.resolved_model().moe is not None or bool((top["ep"] != 1).any())
_T, _T_SCALE, _T_DEC = charts.days_column(top["time_to_train_days"])
_CU, _CU_SCALE, _CU_DEC = charts.cost_column(top["cost_usd"])
_cols = {
    "TP": top["tp"], "PP": top["pp"], "DP": top["dp"], "CP": top["cp"], "EP": top["ep"], "VPP": top["vpp"],
    "mb": top["micro_batch_size"], "ZeRO": top["zero_stage"], "recomp.": top["recompute"],
    "sched.": top["schedule"],
    # the time and cost columns in a unit by size (charts.days_column / cost_column): "days" and "M USD"
    # for a pre-training run, h / min and k USD / USD for a short one (review 17b: 10⁸ tokens on 8 GPUs
    # read 0.0 days and 0.00 M USD in every row, the ranking column unreadable)
    _T: top["time_to_train_days"] * _T_SCALE,
    _CU: top["cost_usd"] * _CU_SCALE,
    "goodput %": 100 * top["goodput"],
    "MFU %": 100 * top["mfu"],
    "GiB": top["mem_total_bytes"] / C.GIB,
}
if ss["ex_obj"] == "goodput_tokens_per_s":  # the ranked quantity: goodput × tokens/s (planner.sweep)
    _cols["gp·Mtok/s"] = top["goodput_tokens_per_s"] / 1e6
if not _is_moe:  # a dense model: EP is 1 in every row
    del _cols["EP"]
_rank_col = {"days": _T, "M USD": _CU}.get(RANK_COLUMN.get(ss["ex_obj"]), RANK_COLUMN.get(ss["ex_obj"]))
if _rank_col in _cols:  # the ranking column first among the results
    _cols = {k: v for k, v in _cols.items() if k in SPLIT_COLUMNS} | {_rank_col: _cols[_rank_col]} | {
        k: v for k, v in _cols.items() if k not in SPLIT_COLUMNS and k != _rank_col}
show = pd.DataFrame(_cols)
if "offload_optimizer" in top.columns and (top["offload_optimizer"] != "none").any():
    # only when a shown row offloads (the full space with offload in the sidebar): a row that moves
    # its optimizer to the host must say so (review 2026-11-30)
    show.insert(show.columns.get_loc("sched.") + 1, "offload", top["offload_optimizer"])
#: Column help (units live here, so the headers stay short and the table fits the page).
TABLE_HELP = {
    "TP": "tensor parallel", "PP": "pipeline stages", "DP": "data parallel (derived)", "CP": "context parallel",
    "EP": "expert parallel", "VPP": "virtual stages per GPU", "mb": "micro-batch, sequences",
    "ZeRO": "ZeRO stage", "recomp.": "activation recompute", "sched.": "pipeline schedule",
    "GiB": "peak memory per GPU, GiB (2³⁰ B)",
    "MFU %": "model FLOP utilisation, % of the dense 16-bit peak (an FP8 / FP4 split can pass 100; the CSV's "
             "mfu_precision_peak divides by the precision's own peak); in one sweep throughput and step time follow it",
    "goodput %": "expected fraction of wall time that advances training, %",
    "days": "wall-clock days to train (failures included)", "M USD": "cost to train, millions of USD",
    "offload": "optimizer states (and what the sidebar offloads with them) on the host: none / cpu / nvme",
    "gp·Mtok/s": "useful throughput: goodput × tokens/s of the whole cluster, millions of tokens/s (what "
                 "this ranking maximises)",
}
#: Column widths in px: every column of a dense model's sweep fits the 818 px a 1,280 px window leaves
#: the table with the sidebar open (the row-selection markers take about 40 px; no index column).
#: A MoE model adds EP and still fits; an offloading row adds "offload", or a MoE sweep ranked by useful
#: throughput "gp·Mtok/s" (846 px, review 34): then GiB scrolls.
_WIDTH = {"TP": 34, "PP": 34, "DP": 48, "CP": 34, "EP": 34, "VPP": 38, "mb": 34, "ZeRO": 44, "recomp.": 68,
          "sched.": 86, "days": 62, "M USD": 62, "goodput %": 72, "MFU %": 54, "GiB": 46, "offload": 60, "gp·Mtok/s": 64}
_FMT = {_T: f"%.{_T_DEC}f", _CU: f"%.{_CU_DEC}f", "goodput %": "%.1f", "MFU %": "%.1f", "GiB": "%.1f",
        "gp·Mtok/s": "%.3f"}
if _T != "days":
    TABLE_HELP[_T] = f"wall-clock time to train, {_T} (failures included)"
    _WIDTH[_T] = _WIDTH["days"]
if _CU != "M USD":
    TABLE_HELP[_CU] = ("cost to train, " + {"k USD": "thousands of USD", "B USD": "billions of USD", "T USD": "trillions of USD"}.get(_CU, "USD"))
    _WIDTH[_CU] = _WIDTH["M USD"]
_cfg = {c: st.column_config.NumberColumn(c, help=TABLE_HELP[c], format=_FMT[c], width=_WIDTH[c])
        for c in _FMT if c in show.columns}
_cfg.update({c: st.column_config.NumberColumn(c, help=TABLE_HELP[c], width=_WIDTH[c])
             for c in ("TP", "PP", "DP", "CP", "EP", "VPP", "mb", "ZeRO") if c in show.columns})
_cfg.update({c: st.column_config.TextColumn(c, help=TABLE_HELP[c], width=_WIDTH[c])
             for c in ("recomp.", "sched.", "offload") if c in show.columns})
st.subheader(f"Top {len(top)} by {OBJECTIVES[ss['ex_obj']]}")
st.caption(f"Best first; ranked on **{_rank_col}** (the first result column). Select a row to open it on the Plan "
           "page. Hover a column header for its meaning and unit (GiB = 2³⁰ B)."
           + ("" if _is_moe else " EP is 1 throughout (a dense model), so it has no column."))
st.dataframe(show, hide_index=True, key="ex_table", on_select=_on_table_select, selection_mode="single-row",
             width="stretch", column_config=_cfg)
ss["_ex_pick_labels"] = _labels
# A new sweep (another model, GPU count, objective, space or top K) starts the box at its row 0.
# Set through session state, so the browser is sent the new label: it kept showing (and sending
# back) the old sweep's label otherwise, and "Open in Plan" read that string (review 2026-11-30).
_sweep_id = (C.sj_key(_sweep_base(sweep_src)), ss["ex_obj"], ss["ex_space"], len(top), sweep_gpus, int(ss["ex_head"]),
             bool(ss["ex_ties"]))
if ss.get("_ex_pick_sweep") != _sweep_id or pick_index(ss.get("ex_pick"), _labels) != ss.get("ex_pick"):
    ss["ex_pick"] = 0
ss["_ex_pick_sweep"] = _sweep_id
c1, c2 = st.columns([3, 1])
c1.selectbox("Or pick a row", list(range(len(top))), key="ex_pick", format_func=lambda i: _labels[i])
c2.button("Open in Plan", key="ex_open", on_click=_on_open_button, type="primary")
# deferred: the CSV is written when the button is clicked, not on every rerun (a full DeepSeek-V3
# sweep is 746,655 rows: about a minute and 0.5 GB of text, which made every click slow)
st.download_button(f"Sweep as CSV ({len(df):,} rows)", data=lambda: df.to_csv(index=False), file_name="sweep.csv",
                   mime="text/csv", key="ex_csv", on_click="ignore",
                   help="Every feasible split of the sweep, best first; written when clicked (large sweeps take "
                        "a while).")
