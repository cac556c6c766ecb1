"""Compare page: two to four scenarios side by side, each from a preset or a share link."""

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # AppTest.from_file on this page alone
    sys.path.insert(0, _ROOT)

from urllib.parse import urlencode  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import streamlit as st  # noqa: E402

from app_pages import _common as C  # noqa: E402
from planner import batch as pbatch  # noqa: E402
from planner import charts, share  # noqa: E402

ss = st.session_state
LINK = "link"
MAX_SLOTS = 4
#: Presets offered in the slots when the link names none (those that exist are used, in order).
DEFAULT_SLOTS = ("default", "llama3-405b-h100-16k", "gpt3-175b-a100-1024", "mixtral-8x7b-h100-64")

#: Width in px of each scenario column by the number of slots, and of the row names: four slots and
#: the row names fit the 818 px a 1,280 px window leaves the table with the sidebar open (a longer
#: header is cut with "…"; hovering it shows the whole label and the scenario's split).
COL_WIDTH = {2: 300, 3: 220, 4: 164}
INDEX_WIDTH = 150
#: Longest model or system name in a scenario's label (characters).
LABEL_NAME_MAX = 60
#: Rows that a scenario which does not fit in memory marks with NO_FIT_MARK: the numbers that would
#: otherwise make it look fast or cheap. Goodput too (review 16d: the error above the table says "the
#: step time, throughput, goodput, days, cost and energy in its column (marked ✗)", goodput was not).
NO_FIT_ROWS = ("step_time_s", "mfu", "mfu_precision_peak", "tokens_per_s", "goodput", "time_to_train_days", "gpu_hours", "cost_usd",
               "energy_mwh")
NO_FIT_MARK = "✗"
#: What the chart's memory legend says of a scenario that fits in HBM but not in host memory.
HOST_NO_FIT = charts.HOST_NO_FIT
#: The marked rows as the caption names them.
NO_FIT_WORDS = "step time, MFU, throughput, goodput, time to train, GPU-hours, cost and energy"

#: Rows of the metrics table: (result column, label, display kind for C.fmt).
TABLE_ROWS = (
    ("fits", "fits in HBM", "bool"),
    ("host_fits", "fits in host memory", "bool"),
    ("mem_total_bytes", "peak memory per GPU", "gib"),
    ("step_time_s", "step time", "s"),
    ("mfu", "MFU", "pct"),
    ("tokens_per_s", "throughput", "tok"),
    ("mtbf_h", "MTBF (job)", "h"),
    ("goodput", "goodput", "pct"),
    ("time_to_train_days", "time to train", "days"),
    ("gpu_hours", "GPU-hours", "gpuh"),
    ("cost_usd", "cost to train", "usd"),
    ("energy_mwh", "energy", "mwh"),
)
#: The row added under MFU when a scenario's GEMM precision has another peak than the 16-bit one (FP8 / FP4, or
#: TF32 / FP32): its MFU of that peak. Short: the 150 px name column cut "MFU of its precision's peak" (review 34).
MFU_PRECISION_ROW = ("mfu_precision_peak", "MFU, own precision", "pct")


def _slot_prefix(i: int) -> str:
    return f"{i + 1}."


def _init_from_url() -> None:
    if ss.get("_c_loaded"):
        return
    qp = st.query_params.to_dict()
    qp_all = {k: st.query_params.get_all(k) for k in st.query_params}  # a repeated key: share warns
    presets = C.preset_ids()
    warnings = share.stray_slot_keys(qp, MAX_SLOTS)  # 5.tp=3: no such slot, not ignored silently
    warnings += share.foreign_page_keys(qp, "compare")  # tp=4, zzz=1: not read here (review 17b)
    try:
        n = int(qp.get("c_n", 2))
        if not 2 <= n <= MAX_SLOTS:
            raise ValueError
    except ValueError:
        warnings.append(f"c_n={share._show(qp.get('c_n'))}: refused; allowed 2 to {MAX_SLOTS}; using 2")
        n = 2
    ss["c_n"] = n
    defaults = [p for p in DEFAULT_SLOTS if p in presets] + [p for p in presets if p not in DEFAULT_SLOTS]
    for i in range(MAX_SLOTS):
        src = qp.get(f"c_src{i + 1}")
        params = share.unprefix_params(qp_all, _slot_prefix(i))
        if src is None:
            src = LINK if params else (defaults[i % len(defaults)] if defaults else LINK)
        if src != LINK and src not in presets:
            shown = src if len(src) <= 60 else src[:59] + "…"
            if params or not defaults:
                warnings.append(f"c_src{i + 1}={shown!r}: unknown preset; reading the slot's link "
                                f"({_slot_prefix(i)}* keys) instead")
                src = LINK
            else:  # found by review: "reading the slot's link" with no link showed the default preset
                src = defaults[i % len(defaults)]
                warnings.append(f"c_src{i + 1}={shown!r}: unknown preset, and the link has no "
                                f"{_slot_prefix(i)}* keys for this slot; using preset {src!r} (a link goes "
                                f"in its keys: {_slot_prefix(i)}tp=4, or in the slot's share-link box)")
        elif src != LINK and params:
            base = share.last_value(params.get("p"))
            if base is not None and base != src:
                # review 16d: c_src1=default with 1.p=mixtral-… showed 'default' without a word (and
                # with other keys besides, Mixtral): the slot's choice wins, with a warning
                warnings.append(f"c_src{i + 1}={src!r} and {_slot_prefix(i)}p={share.one_line_show(str(base))} "
                                f"name different presets; the slot shows preset {src!r}"
                                + (" with its other keys" if set(params) - {"p"} else ""))
                params = {**params, "p": src}
            if _changes_preset(src, params):
                # a preset slot with keys of its own (2.sys=...): the preset is the base they change
                params = {**params, "p": src}
                src = LINK
        ss[f"c_src{i}"] = src
        ss[f"c_link{i}"] = "?" + urlencode(params, doseq=True) if params else ""
    ss["_c_warnings"] = warnings
    ss["_c_loaded"] = True


def _changes_preset(pid: str, params: dict) -> bool:
    """Whether a slot's link keys change preset ``pid`` (the page writes a preset slot's own
    keys into the URL too; only keys that differ make it a link slot)."""
    from planner.presets import preset_json

    own = share.scenario_to_params(C._defaults_full(preset_json(pid)), preset=pid)  # as the page writes it
    return any(own.get(k) != v for k, v in params.items() if k != "p")


def _slot_scenario(i: int) -> tuple[dict, list[str], str | None]:
    src = ss.get(f"c_src{i}")
    if src == LINK:
        text = str(ss.get(f"c_link{i}", "") or "").strip()
        # a link copied with the quotes a shell needs (README: "quote a link you pass on") or the <…> of
        # Markdown and mail: the pair is not part of it (review 16d: n="512'" was refused, 1,024 GPUs shown)
        while len(text) >= 2 and (text[0], text[-1]) in (("'", "'"), ('"', '"'), ("<", ">"), ("`", "`")):
            text = text[1:-1].strip()
        if not text:  # nothing pasted yet: the caption under the box says so (review 34: it warned "'' is not a link")
            sj, warns = share.params_to_scenario({})
            return sj, warns, None
        if "=" not in text:  # no key=value at all: not a link (review 14a: it read as "unknown parameter")
            sj, warns = share.params_to_scenario({})
            return sj, [f"{share.one_line_show(text)} is not a share link (a link carries ?key=value parameters); "
                        "showing the default scenario"] + warns, None
        params = share.parse_link(text)
        if not params:  # an address with no query ('…:8501/p=default', the '?' left out; review 24)
            sj, warns = share.params_to_scenario({})
            head, _, frag = text.partition("#")
            why = ("its key=value parameters follow the '#', the address's fragment, not its query"
                   if "=" in frag and "=" not in head else "no '?' between the address and its key=value parameters")
            return sj, [f"{share.one_line_show(text)} is not a share link ({why}); showing the default scenario"
                        ] + warns, None
        # a page's own keys (Plan's pl_*, Explore's ex_*, ...) in a link copied from that page say
        # nothing about the scenario: left out without a warning
        page_keys = [k for k in params if str(k).startswith(C.PAGE_PREFIXES)]
        params = {k: v for k, v in params.items() if not str(k).startswith(C.PAGE_PREFIXES)}
        if page_keys and not params:
            # nothing but page keys (review 16d: a Validate link, v_set=…&v_metric=…, showed the default
            # scenario without a word)
            sj, warns = share.params_to_scenario({})
            keys = ", ".join(share.one_line_show(str(k)) for k in page_keys[:3])
            return sj, [f"{share.one_line_show(text)} holds no scenario, only a page's own settings ({keys}"
                        f"{', …' if len(page_keys) > 3 else ''}); showing the default scenario (a Plan page "
                        "link holds one)"] + warns, None
        if params and not any(share.is_link_key(k) for k in params):
            # key=value pairs, none of them a share link's (review 14j: a pasted search URL said only
            # "'q': unknown link parameter ignored" and showed the default scenario without a word)
            sj, warns = share.params_to_scenario({})
            keys = ", ".join(share.one_line_show(str(k)) for k in list(params)[:3])
            return sj, [f"{share.one_line_show(text)} is not a share link (none of its parameters, {keys}"
                        f"{', …' if len(params) > 3 else ''}, is one of this app's); showing the default scenario"
                        ] + warns, None
        sj, warns = share.params_to_scenario(params)
        return sj, warns, share.last_value(params.get("p"))
    sj, warns = share.params_to_scenario({"p": src})
    return sj, warns, src


def _drop_warnings(*prefixes: str) -> None:
    """on_change of a box: the link's warnings about the value the user has now replaced (review 46g:
    "c_n='7': refused" stayed through later edits), as the Validate page drops its own."""
    ss["_c_warnings"] = [w for w in ss.get("_c_warnings", []) if not w.startswith(prefixes)]


def _open(i: int) -> None:
    sj, _, pid = _slot_scenario(i)
    C.init_state()
    C.open_in_plan(sj)
    if pid:
        ss["preset_id"] = pid
        ss[C.PRESET_KEY] = pid
    ss["_c_goto_plan"] = True


# ---------------------------------------------------------------------------------------
if ss.pop("_c_goto_plan", False):
    st.switch_page("app_pages/plan.py")

_KEYS = ("c_n",) + tuple(f"c_src{i}" for i in range(MAX_SLOTS)) + tuple(f"c_link{i}" for i in range(MAX_SLOTS))
if C.page_url_moved("compare", _KEYS, own=lambda k: k.startswith("c_") or "." in k):
    # Back / Forward: the link is read again, as on the page's first run
    ss["_c_loaded"] = False
    for _k in _KEYS:
        ss.pop(_k, None)
C.keep_page_widgets("compare", _KEYS)
_init_from_url()
# a slot's widgets are not drawn while "Scenarios" is below its number, and Streamlit drops the state
# of a widget that a run does not draw: re-set as plain state, slots 3 and 4 keep their preset or link
# through 4 → 2 → 4 (review 16d: they came back as empty link slots showing the default scenario).
# Only those: a widget drawn this run and set here gets its value sent back to the browser, which
# could land in a box while the next value is typed (review 46g: "4" then "3" typed fast read "43").
_cn = ss.get("c_n")
_drawn = int(_cn) if share.box_value_error("c_n", _cn, 2, MAX_SLOTS, whole=True) is None else 0
for _i in range(_drawn, MAX_SLOTS):
    for _k in (f"c_src{_i}", f"c_link{_i}"):
        if _k in ss:
            ss[_k] = ss[_k]
st.title("Compare scenarios")
for w in share.capped_warnings(ss.get("_c_warnings", [])):  # not 200 boxes (review 17b)
    st.warning(f"Link: {C.md_text(w)}", icon=":material/link_off:")

presets = C.preset_ids()
# no browser-side bounds (review h27b, D4: an out-of-range entry stayed red in the box, unsent): named here
st.columns([1, 3])[0].number_input("Scenarios (2 to 4)", step=1, key="c_n", on_change=_drop_warnings,
                                   args=("c_n=",))
if _n_err := share.box_value_error("Scenarios (2 to 4)", ss.get("c_n"), 2, MAX_SLOTS, whole=True, where="link key c_n"):
    st.error(f"{C.code(_n_err)}; the scenarios are kept.", icon=":material/error:")
    C.save_page_widgets("compare", _KEYS)
    # the URL holds what the box holds, as the sidebar's boxes do (review h28d: it kept c_n=2, so a
    # reload quietly showed two scenarios; opened, the link's c_n is refused with a warning)
    st.query_params.from_dict({**st.query_params.to_dict(), "c_n": str(ss.get("c_n"))})
    C.note_page_url("compare", _KEYS)
    st.stop()
n = int(ss["c_n"])
cols = st.columns(n)
slots = []
url: dict[str, str] = {"c_n": str(n)}
for i in range(n):
    with cols[i]:
        # the preset id alone (review 16d: "preset: " pushed the end of every id but "default" out of a
        # 4-slot box at 1,280 px, "preset: deepseek-v3-h80"); the help says what the choices are
        st.selectbox(f"Scenario {i + 1}", [LINK] + presets, key=f"c_src{i}", on_change=_drop_warnings,
                     args=(f"c_src{i + 1}=", f"{i + 1}."),
                     format_func=lambda v: "from a share link" if v == LINK else v,
                     help="A scenario preset (`planner presets scenarios`), or a share link pasted below.")
        if ss[f"c_src{i}"] == LINK:
            st.text_input("Share link (or its ?query)", key=f"c_link{i}", on_change=_drop_warnings,
                          args=(f"c_src{i + 1}=", f"{i + 1}."),
                          placeholder="http://localhost:8501/?m=llama3-70b&n=1024&tp=8 ...")
            if not str(ss.get(f"c_link{i}") or "").strip():
                st.caption("No link pasted yet: this column shows the default preset until one is.")
        sj, warns, pid = _slot_scenario(i)
        for w in share.capped_warnings(warns):
            st.warning(f"Scenario {i + 1}: {C.md_text(w)}")
        st.button("Open in Plan", key=f"c_open{i}", on_click=_open, args=(i,))
    slots.append((sj, pid))
    url[f"c_src{i + 1}"] = ss[f"c_src{i}"]
    if ss[f"c_src{i}"] == LINK and not str(ss.get(f"c_link{i}") or "").strip():
        continue  # an empty link box stays empty when the link is opened (review 46d: it came back filled)
    url.update(share.prefix_params(share.scenario_to_params(C._defaults_full(sj), preset=pid), _slot_prefix(i)))
C.save_page_widgets("compare", _KEYS)
st.query_params.from_dict(url)  # always: this rerun's query string can be older than the browser's
C.note_page_url("compare", _KEYS)

def _split_text(par: dict, training: dict) -> str:
    """The split of a (validated, defaults filled) scenario: TP·PP·CP·DP, micro-batch, recompute."""
    dp = par.get("dp")
    return (f"TP{par.get('tp', 1)}·PP{par.get('pp', 1)}·CP{par.get('cp', 1)}·DP{dp if dp is not None else '?'}"
            + _ep_text(par) + f" · mbs {training.get('micro_batch_size', '?')} · {par.get('recompute', '?')}")


def _ep_text(par: dict) -> str:
    """" · EP n" for a split with expert parallelism (a MoE model), else "": the split row of a MoE
    slot names its expert-parallel degree (review 16d: Mixtral's EP 8 was only in "other differences",
    cut at 1,280 px); a dense model's EP is 1."""
    try:
        ep = int(par.get("ep") or 1)
    except (TypeError, ValueError):
        return ""
    return f" · EP {ep}" if ep > 1 else ""


#: Link keys already in the header or the first rows (model, GPUs, system, split with EP, micro-batch,
#: recompute) or not describing the scenario (the base preset).
_HEADER_KEYS = {"p", "m", "n", "sys", "tp", "pp", "cp", "dp", "ep", "mbs", "rc"}
#: The differing link keys that say most about a run first in "other differences" (a 4-slot cell shows
#: about 25 characters at 1,280 px; review 16d: in alphabetical order it read "ak=native ce=fused ep8=0 e…"):
#: global batch, sequence length, tokens, precision, ZeRO stage, schedule, interleaving, price, checkpoints,
#: offload; the rest alphabetically after them.
_DIFF_FIRST = ("gbs", "s", "tok", "prec", "z", "sch", "vpp", "price", "ck", "off")

labels, results, reports, slot_params, details, other = [], {}, {}, [], {}, {}
no_fit: list[int] = []  # slots that do not fit in memory (HBM or host)
hbm_no_fit: list[int] = []  # of those, the slots that do not fit in HBM
host_mem: dict[str, float | None] = {}  # host memory per node of each slot (the engine's input column)
slot_caps: dict[str, dict] = {}  # each slot's capacities for the CSV (planner.batch.capacities)
never: list[int] = []  # slots whose analytic time to train is not finite
# with a custom (inline) model in any slot, the catalogue models are compared field by field too (review 16
# new-user: a preset slot beside a custom copy of its model listed every architecture key as differing);
# preset models alone stay named in the headers, their architecture keys not repeated
_any_inline = any(not isinstance(sj.get("model"), str) for sj, _ in slots)
for i, (sj, pid) in enumerate(slots):
    slot_params.append(share.scenario_to_params(C._defaults_full(share.inline_model(sj) if _any_inline else sj),
                                                preset=None))
differing = sorted({k for k in set().union(*slot_params) if k not in _HEADER_KEYS
                    and len({sp.get(k) for sp in slot_params}) > 1},
                   key=lambda k: (_DIFF_FIRST.index(k) if k in _DIFF_FIRST else len(_DIFF_FIRST), k))
for i, (sj, _) in enumerate(slots):
    scen, errs = C.validate(sj)
    model = sj.get("model") if isinstance(sj.get("model"), str) else (sj.get("model") or {}).get("name", "custom")
    cl = sj.get("cluster") or {}
    system = cl.get("system") if isinstance(cl.get("system"), str) else (cl.get("system") or {}).get("name")
    # names from a link or an import: one line, at most LABEL_NAME_MAX characters each (a header, a
    # chart legend and the CSV's scenario column; a 10,000-character name was the whole header and tooltip)
    model, system = C.one_line(model, LABEL_NAME_MAX), C.one_line(system, LABEL_NAME_MAX)
    label = f"{i + 1}: {model} · {cl.get('n_gpus')} × {system}"
    if errs:
        labels.append(label)
        st.error(f"Scenario {i + 1} is not valid: " + "; ".join(C.code(e) for e in errs))
        continue
    try:
        rep = C.evaluate_cached(C.sj_key(sj))
    except Exception as e:  # noqa: BLE001
        labels.append(label)
        st.error(f"Scenario {i + 1}: the engine failed: {C.md_text(e)}")
        continue
    _caps = pbatch.capacities(scen)  # None where unreadable: the message then says "the host memory"
    _host = _caps["host_mem_capacity_per_node_bytes"]
    if C.does_not_fit(rep["results"]):
        # marked where it is read first: the header starts with it (a long header is cut at the end)
        label = f"{i + 1}: {NO_FIT_MARK} no fit · {model} · {cl.get('n_gpus')} × {system}"
        no_fit.append(i)
        hbm_no_fit.append(i)
        st.error(f"Scenario {i + 1}: " + C.no_fit_text(rep["results"], None, len(rep["stages"]) or None,
                                                       what=f"in its column (marked {NO_FIT_MARK})"),
                 icon=":material/memory:")
    elif C.host_does_not_fit(rep["results"]):
        label = f"{i + 1}: {NO_FIT_MARK} host memory · {model} · {cl.get('n_gpus')} × {system}"
    if C.host_does_not_fit(rep["results"]):  # found by review: Compare showed such a slot as fine
        if i not in no_fit:
            no_fit.append(i)
        st.error(f"Scenario {i + 1}: " + C.host_no_fit_text(rep["results"], _host,
                                                            what=f"in its column (marked {NO_FIT_MARK})",
                                                            scenario=scen),
                 icon=":material/memory:")
    host_mem[label] = _host
    # the header stays short (4 slots fit a 1,280 px window; review 2026-11-30): the split, the
    # micro-batch, the recompute and the other differing fields are rows of the table
    extra = [f"{k}={C.one_line(slot_params[i].get(k, '(default)'), LABEL_NAME_MAX)}" for k in differing]
    details[label] = (_split_text(rep["scenario"].get("parallelism") or {}, rep["scenario"].get("training") or {})
                      + (" · " + " ".join(extra) if extra else ""))
    other[label] = " ".join(extra) if extra else "—"
    labels.append(label)
    results[label] = rep["results"]
    reports[label] = rep
    slot_caps[label] = _caps
    if C.never_finishes(rep["results"]):
        never.append(i)
        st.warning(f"Scenario {i + 1}: " + C.never_finishes_text(rep["results"], rep.get("explain"),
                                                                    rep.get("notes"), monte_carlo="plan"),
                   icon=":material/warning:")

if results:
    def _split_rows(rep: dict) -> list[str]:
        par, tr = rep["scenario"].get("parallelism") or {}, rep["scenario"].get("training") or {}
        return [f"{par.get('tp')}·{par.get('pp')}·{par.get('cp')}·{par.get('dp')}{_ep_text(par)}",
                str(tr.get("micro_batch_size")), str(par.get("recompute"))]

    def _cell(res: dict, col: str, kind: str, host: float | None = None, v: str | None = None) -> str:
        v = C.fmt(res, col, kind) if v is None else v
        if col == "host_fits":
            if not C.host_does_not_fit(res):
                return v
            need = (C.num(res, "host_mem_per_node_bytes") or 0.0) + (
                0.0 if res.get("host_fits_ckpt") is None or bool(res.get("host_fits_ckpt"))
                else C.num(res, "ckpt_host_mem_per_node_bytes") or 0.0)
            d = C.gib_decimals(need, host) if host is not None else 1  # two figures that differ read apart
            return f"no {NO_FIT_MARK}" + (f" ({need / C.GIB:,.{d}f} of {host / C.GIB:,.{d}f} GiB per node)"
                                           if host is not None else "")
        if not C.does_not_fit(res) and not C.host_does_not_fit(res):
            return v
        usable, peak = C.usable_hbm_bytes(res), C.num(res, "mem_total_bytes")
        # as many decimals as tell the peak from the usable HBM (found by review 15c: "no ✗ (41.3 of
        # 41.3 GiB)" where the Plan page reads "41.32 GiB of 41.31 GiB usable")
        d = C.gib_decimals(peak, usable) if peak is not None and usable is not None else 1
        if col == "fits" and C.does_not_fit(res):
            return (f"no {NO_FIT_MARK}" + (f" ({peak / C.GIB:,.{d}f} of {usable / C.GIB:,.{d}f} GiB)"
                                            if peak is not None and usable is not None else ""))
        if col == "mem_total_bytes" and C.does_not_fit(res) and peak is not None:
            return f"{peak / C.GIB:,.{d}f} GiB {NO_FIT_MARK}"
        return f"{v} {NO_FIT_MARK}" if col in NO_FIT_ROWS and v != C.DASH else v

    _w = COL_WIDTH.get(len(results), COL_WIDTH[MAX_SLOTS])
    # an FP8 / FP4 (or TF32 / FP32) scenario: its MFU of its own precision's peak under the 16-bit MFU (review 34), for
    # every column once one scenario has it (the others then repeat their 16-bit figure)
    _rows = TABLE_ROWS
    if any(C.num(res, "mfu_precision_peak") is not None and C.num(res, "mfu") is not None
           and not np.isclose(C.num(res, "mfu_precision_peak"), C.num(res, "mfu"), rtol=1e-9, atol=0.0)
           for res in results.values()):
        _i = [c for c, _, _ in TABLE_ROWS].index("mfu") + 1
        _rows = TABLE_ROWS[:_i] + (MFU_PRECISION_ROW,) + TABLE_ROWS[_i:]
    # cost, energy, throughput: one unit a row, the unit of its largest value (review h29a F6: "6,227 MWh"
    # beside "36.8 GWh"); durations keep each cell's own (C.fmt_row)
    _row_text = {col: dict(zip(results, C.fmt_row([res.get(col) for res in results.values()], kind)))
                 for col, _, kind in _rows}
    table = pd.DataFrame(
        # "other differences" ends with "…" where the column cuts it (the header's hover has all of it)
        {lab: _split_rows(reports[lab]) + [C.cut_to_width(other[lab], _w)]
         + [_cell(res, col, kind, host_mem.get(lab), _row_text[col][lab]) for col, _, kind in _rows]
         for lab, res in results.items()},
        index=["split TP·PP·CP·DP", "micro-batch", "recompute", "other differences"]
        + [name for _, name, _ in _rows])
    st.subheader("Side by side")
    # the help tooltip is markdown: the label holds the link's names, the details its values (pfs:auto:0)
    _cfg = {lab: st.column_config.TextColumn(lab, help=C.md_text(f"{lab} · {details[lab]}"), width=_w)
            for lab in results}
    _cfg["_index"] = st.column_config.TextColumn("", width=INDEX_WIDTH)
    st.dataframe(table, key="c_table", width="stretch", height=35 * (len(table) + 1) + 3,  # every row, no scroll
                 column_config=_cfg)
    _dash = bool((table.loc[[name for _, name, _ in _rows]] == C.DASH).to_numpy().any())
    st.caption("Column = scenario: number · model · GPUs × system (hover a header for all of it); its split, "
               "micro-batch and recompute are the first rows, then every other field that differs between the "
               "scenarios, as its link key (cut with … where the column ends: the header's hover has them all; "
               "docs/ui.md). Cost, energy and throughput: one unit a row, the unit of its largest value. Memory in GiB (2³⁰ B); durations in "
               "s, min or h by size, time to train in days (years above 1,000 days). Every number is the "
               "engine's result for that scenario, under the simplifications listed per scenario below the chart"
               + (f"; {NO_FIT_MARK} marks a scenario that does not fit in GPU or host memory (the error above): its "
                  f"{NO_FIT_WORDS} assume that it fits" if no_fit else "")
               + ("; — marks a number the engine reports as infinite or not a number"
                  + (" (see the warning above)" if never else "") if _dash else "") + ".")
    st.altair_chart(charts.compare_chart(results), key="c_chart")
    if no_fit:
        _host_slots = [i for i in no_fit if i not in hbm_no_fit]
        _which = [f"{what} (scenario {', '.join(str(i + 1) for i in sl)})"
                  for what, sl in ((charts.NO_FIT, hbm_no_fit), (HOST_NO_FIT, _host_slots)) if sl]
        st.caption("Pale bars with a dashed red outline: " + " or ".join(_which)
                   + "; their numbers assume that it fits.")
    # a metric the engine gives as infinite or not a number has no bar (review 16d: the goodput-0
    # scenario's empty "cost" panel read as the cheapest run)
    _nobar = [f"scenario {lab.split(':')[0]}: {', '.join(missing)}"
              for lab, res in results.items()
              if (missing := [name.split(" (")[0] for col, name, _ in charts.COMPARE_METRICS
                              if C.num(res, col) is None])]
    if _nobar:
        st.caption("No bar for " + "; ".join(_nobar) + ": the engine gives no finite value (— in the table); "
                   "not zero.")
    # each slot's capacities beside its results, as `planner evaluate --format csv` writes them
    csv = pd.DataFrame([{"scenario": f"{lab} · {details[lab]}", **res, **slot_caps.get(lab, {})}
                        for lab, res in results.items()]).to_csv(index=False)
    st.download_button("Results as CSV", csv, file_name="compare.csv", mime="text/csv", key="c_csv", on_click="ignore")
    # the engine's stated simplifications, as the Plan page's formula view lists them (review 46d: the
    # page showed none, e.g. the 8-GPU fleet's per-node rates applied to 4-GPU GB200 trays)
    _notes = {lab: list(reports[lab].get("notes") or []) for lab in results}
    _shared_notes = [n for n in next(iter(_notes.values())) if all(n in v for v in _notes.values())]
    with st.expander("Stated simplifications per scenario", expanded=False):
        st.caption("What the engine assumes for each scenario (the Plan page's formula view lists the same); "
                   "those that differ between the scenarios first.")
        for lab, ns in _notes.items():
            own = [n for n in ns if n not in _shared_notes]
            st.markdown(f"**{C.md_text(lab, whole=False)}**")
            st.markdown("\n".join(f"- {n}" for n in own) if own
                        else "_None beyond those of every scenario._")
        if _shared_notes:
            st.markdown("**Every scenario**")
            st.markdown("\n".join(f"- {n}" for n in _shared_notes))
else:  # review 16d: with every slot refused the page ended on the errors, with no word of what to do
    st.info(f"Nothing to compare: none of the {n} scenarios could be evaluated (the errors above say why). "
            "Choose another preset in a slot, or paste another share link.", icon=":material/info:")
