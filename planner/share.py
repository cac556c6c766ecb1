"""Share links: a scenario <-> flat URL query parameters with compact keys.

Pure functions, no streamlit import. The dashboard writes :func:`scenario_to_params` into
``st.query_params`` on every run and reads a link back with :func:`params_to_scenario`, so a
link opened in a fresh session reproduces the same scenario and hence the same numbers.

Format (every value a string; numbers in SI units exactly as in the scenario JSON, written
in the shortest form that round-trips, e.g. ``tok=1.5e13``, ``nic=5e10``):

=========  ==============================================  ==========================
key        scenario field                                  values
=========  ==============================================  ==========================
p          base scenario preset the rest is applied to      preset id (default ``default``)
m          model                                           model id, or ``custom``
ml mh ...  custom model architecture (see ``MODEL_KEYS``)  used only with ``m=custom``
sys n acc  cluster.system, n_gpus, accelerator override    ids / int
price ...  cluster.overrides (``CLUSTER_KEYS``)            SI floats; absent = catalogue
s gbs ...  training (``TRAINING_KEYS``)
tp pp ...  parallelism (``PARALLEL_KEYS``)
ck         checkpoint.tiers: ``tier:interval_s:replicas``  ``host_memory:auto:0,pfs:3600:0``
ca cif     checkpoint async, interference fraction
fp rs hs   reliability profile, rate scale, hot spares
sysj accj  inline (not catalogued) system / accelerator    compact JSON of the object
fpj ckj    inline failure profile / tier list              compact JSON (``ckj`` replaces ``ck``)
=========  ==============================================  ==========================

Inline objects (a scenario imported from JSON with its own hardware, failure profile or
storage tier) have no compact keys field by field; they travel as compact JSON in one key
and are validated with the schema's class when read.

Reading never raises: an unknown key, an unparsable value or a value outside its range is
dropped with a warning naming the key, the value and the allowed values or range, and the
base value is kept; a key given twice with different values warns (the last is used). After
the per-key checks the assembled scenario is validated (:class:`planner.schema.Scenario`).
When a cross-field rule fails, the link's keys win over the base preset's: the split
(:data:`SPLIT_KEYS`) is fitted to the model, system, GPUs and batch, changing the preset's split
values before the link's own split keys, each change with a warning (old → new and why); only
when no split fits is a link key refused (the other keys before ``n``, the system and the
model). Every warning is worded on the scenario returned (see :func:`_repair`; docs/ui.md).
"""

from __future__ import annotations

import copy
import json
import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence
from urllib.parse import parse_qsl, urlsplit

from pydantic import ValidationError

from . import catalog
from . import schema as _schema
from .schema import TOKENS_TOTAL_MAX, TOKENS_TOTAL_MIN, Scenario, format_errors

__all__ = [
    "scenario_to_params", "params_to_scenario", "parse_link", "prefix_params", "unprefix_params",
    "last_value", "is_link_key", "stray_slot_keys", "widget_range_errors", "import_refusals", "ALL_KEYS", "SPLIT_KEYS", "DEFAULT_PRESET",
]

DEFAULT_PRESET = "default"
_INT_MAX = 10_000_000
_FLOAT_MAX = 1e30
#: Ranges the Plan page's widgets take (app_pages/_common.py reads these): a link value outside
#: them is refused with a warning naming the key and the range, never clamped by the widget into
#: another scenario without a word (review 2026-11-30: ``tok=1e5`` became 1e6, ``mbs=200000``
#: became 1, ``me=200000`` a dense model).
WIDGET_DEGREE_MAX = 100_000      # TP, PP, CP, EP, micro-batch, head dim, MoE counts, hot spares
WIDGET_VPP_MAX = _schema.VPP_MAX  # the schema's ceiling (PP's is schema.PP_MAX = WIDGET_DEGREE_MAX)
TOKENS_MIN, TOKENS_MAX = TOKENS_TOTAL_MIN, TOKENS_TOTAL_MAX  # tokens to train (the box: 1e-6 … 1e4 trillion; the schema's bounds)
DROPOUT_MAX = 0.99
#: The Plan page's Monte Carlo boxes (link keys ``pl_mct``, ``pl_mcs``): range and default of each.
#: The page and ``planner simulate --link`` read these (one definition: review 15f found the CLI
#: running 5 trials from a link the page refuses).
PLAN_MC_TRIALS_RANGE, PLAN_MC_TRIALS_DEFAULT = (100, 100_000), 2000
PLAN_MC_SEED_RANGE, PLAN_MC_SEED_DEFAULT = (0, 2**31 - 1), 0
#: The Explore page's "Colour by" choices (link key ``ex_color``).
EXPLORE_COLOR_CHOICES: tuple[str, ...] = ("tp", "pp")
#: Link keys that belong to one page of the dashboard, not to the scenario: Plan's Monte Carlo
#: boxes, Explore's controls, Compare's slots, Validate's (the pages and ``--link`` read these).
PAGE_PREFIXES: tuple[str, ...] = ("pl_", "ex_", "c_", "v_")
CK_INTERVAL_MIN_S, CK_INTERVAL_MAX_S = 0.6, 6e8  # checkpoint interval (the box: 0.01 … 1e7 minutes)
CK_REPLICAS_MAX = 1000  # peer copies per checkpoint tier (link ``ck``, the Plan page's "peer copies" box)


@dataclass(frozen=True)
class Field:
    """One link key: where it goes in the scenario JSON and what it may hold."""

    key: str
    path: tuple[str, ...]
    kind: str  # "int" | "optint" | "float" | "bool" | "choice" | "str" | "optfloat" (opt*: "none" = null)
    lo: float | None = None
    hi: float | None = None
    choices: tuple[Any, ...] = ()
    lo_open: bool = False  # lo excluded (x > lo)


def _i(key, path, lo=1, hi=_INT_MAX):
    return Field(key, path, "int", lo, hi)


def _f(key, path, lo=0.0, hi=_FLOAT_MAX, lo_open=True):
    return Field(key, path, "float", lo, hi, lo_open=lo_open)


def _b(key, path):
    return Field(key, path, "bool")


def _c(key, path, choices):
    return Field(key, path, "choice", choices=tuple(choices))


#: Custom-model architecture keys (path relative to the model object).
MODEL_KEYS: tuple[Field, ...] = (
    Field("mn", ("name",), "str"),
    _i("ml", ("n_layers",)),
    _i("mh", ("hidden_size",)),
    _i("ma", ("n_heads",)),
    Field("mk", ("n_kv_heads",), "optint", 1, _INT_MAX),
    Field("md", ("head_dim",), "optint", 1, WIDGET_DEGREE_MAX),
    _i("mf", ("ffn_hidden_size",)),
    _i("mv", ("vocab_size",)),
    _b("mg", ("gated_mlp",)),
    _b("mt", ("tied_embeddings",)),
    _c("mnorm", ("norm",), ("rmsnorm", "layernorm")),
    _b("mb", ("linear_bias",)),
    _i("mpos", ("learned_pos_embeddings",), lo=0),
    _b("mrope", ("rope",)),
    Field("mdo", ("dropout",), "float", 0.0, DROPOUT_MAX),
    Field("msw", ("sliding_window",), "optint", 1, _INT_MAX),
    Field("mswf", ("sliding_window_layer_frac",), "float", 0.0, 1.0),
    # multi-token-prediction depth (DeepSeek-V3: 1); the schema's range
    _i("mtp", ("mtp_layers",), lo=0, hi=_schema.MTP_LAYERS_MAX),
    # MoE (me = 0 means dense: the moe object is removed)
    _i("me", ("moe", "n_experts"), lo=0, hi=WIDGET_DEGREE_MAX),
    _i("mtk", ("moe", "top_k"), hi=WIDGET_DEGREE_MAX),
    _i("mef", ("moe", "expert_ffn_hidden_size"), hi=WIDGET_DEGREE_MAX),
    _i("mse", ("moe", "n_shared_experts"), lo=0, hi=WIDGET_DEGREE_MAX),
    Field("msf", ("moe", "shared_expert_ffn_hidden_size"), "optint", 1, _INT_MAX),
    _i("mfd", ("moe", "first_dense_layers"), lo=0, hi=WIDGET_DEGREE_MAX),
    Field("mcf", ("moe", "capacity_factor"), "float", 1.0, 16.0),
    Field("mnl", ("moe", "max_nodes_per_token"), "optint", 1, WIDGET_DEGREE_MAX),
    # MLA (mlkv = 0 means no MLA: the mla object is removed)
    _i("mlq", ("mla", "q_lora_rank"), lo=0),
    _i("mlkv", ("mla", "kv_lora_rank"), lo=0),
    _i("mlqn", ("mla", "qk_nope_head_dim")),
    _i("mlqr", ("mla", "qk_rope_head_dim")),
    _i("mlv", ("mla", "v_head_dim")),
)

CLUSTER_KEYS: tuple[Field, ...] = (
    _i("n", ("cluster", "n_gpus")),
    # lower bounds = the Plan page widgets' minimums (0.01 USD, 0.1 GB/s, 0.1 GiB, 1 W): a link value the
    # page could not show is refused with a warning instead of dropped, and the smallest one round-trips
    # (the schema's ranges: a link carries what the engine accepts, and nothing else)
    Field("price", ("cluster", "overrides", "price_per_gpu_hour_usd"), "optfloat", *_schema.PRICE_USD_RANGE),
    Field("nic", ("cluster", "overrides", "nic_bw_per_gpu_bytes_per_s"), "optfloat", *_schema.LINK_BW_RANGE),
    Field("hostmem", ("cluster", "overrides", "host_memory_bytes"), "optfloat", *_schema.HOST_MEM_BYTES_RANGE),
    Field("hbmu", ("cluster", "overrides", "hbm_usable_bytes"), "optfloat", *_schema.HBM_BYTES_RANGE),
    Field("pwr", ("cluster", "overrides", "power_limit_w"), "optfloat", *_schema.POWER_W_RANGE),
    Field("pue", ("cluster", "pue"), "float", 1.0, 3.0),
    Field("util", ("cluster", "utilisation_power_frac"), "float", 0.0, 1.0),
)

TRAINING_KEYS: tuple[Field, ...] = (
    _i("s", ("training", "seq_len"), hi=4_194_304),
    _i("gbs", ("training", "global_batch_size")),
    _i("mbs", ("training", "micro_batch_size"), hi=WIDGET_DEGREE_MAX),
    _c("prec", ("training", "precision"), ("fp32", "tf32", "fp16", "bf16", "fp8", "fp4")),
    _c("gd", ("training", "grad_dtype"), ("fp32", "bf16", "fp16")),
    _c("f8s", ("training", "fp8_scaling"), ("tensorwise", "rowwise")),
    _b("f8a", ("training", "fp8_attention")),
    _c("ce", ("training", "cross_entropy"), ("fused", "eager")),
    _c("ew", ("training", "elementwise"), ("fused", "eager")),
    _f("tok", ("training", "tokens_total"), lo=TOKENS_MIN, hi=TOKENS_MAX, lo_open=False),
)

PARALLEL_KEYS: tuple[Field, ...] = (
    _i("tp", ("parallelism", "tp"), hi=WIDGET_DEGREE_MAX),
    _i("pp", ("parallelism", "pp"), hi=WIDGET_DEGREE_MAX),
    _i("dp", ("parallelism", "dp")),
    _i("cp", ("parallelism", "cp"), hi=WIDGET_DEGREE_MAX),
    _i("ep", ("parallelism", "ep"), hi=WIDGET_DEGREE_MAX),
    # expert TP (absent = tp, Megatron's default); 1 to WIDGET_DEGREE_MAX, the schema checks etp | tp
    Field("etp", ("parallelism", "etp"), "optint", 1, WIDGET_DEGREE_MAX),
    _i("vpp", ("parallelism", "vpp"), hi=WIDGET_VPP_MAX),
    _b("sp", ("parallelism", "sequence_parallel")),
    _c("z", ("parallelism", "zero_stage"), (0, 1, 2, 3)),
    Field("dps", ("parallelism", "dp_shard"), "optint", 1, _INT_MAX),
    _c("rc", ("parallelism", "recompute"), ("none", "selective", "full", "op_sac")),
    Field("rcl", ("parallelism", "recompute_layers"), "optint", 1, _INT_MAX),
    _c("sch", ("parallelism", "schedule"), ("1f1b", "interleaved", "gpipe", "zero_bubble", "dualpipe")),
    _c("off", ("parallelism", "offload_optimizer"), ("none", "cpu", "nvme")),
    _b("offw", ("parallelism", "offload_master_weights")),
    _b("offg", ("parallelism", "offload_grads")),
    _b("offa", ("parallelism", "offload_activations")),
    _b("fa", ("parallelism", "flash_attention")),
    _c("ak", ("parallelism", "attention_kernel"), ("native", "flash2")),
    _b("tpo", ("parallelism", "tp_comm_overlap")),
    _b("dpo", ("parallelism", "dp_comm_overlap")),
    _b("epo", ("parallelism", "ep_comm_overlap")),
    _b("ep8", ("parallelism", "ep_dispatch_fp8")),
    _b("epn", ("parallelism", "ep_node_dispatch")),
    _c("ls", ("parallelism", "layer_split"), ("even", "uneven")),
)

CKPT_KEYS: tuple[Field, ...] = (
    _b("ca", ("checkpoint", "async")),
    Field("cif", ("checkpoint", "async_interference_frac"), "float", 0.0, 1.0),
)

REL_KEYS: tuple[Field, ...] = (
    Field("rs", ("reliability", "rate_scale"), "float", 0.0, 100.0),
    _i("hs", ("reliability", "hot_spare_nodes"), lo=0, hi=WIDGET_DEGREE_MAX),
)

SCALAR_FIELDS: tuple[Field, ...] = CLUSTER_KEYS + TRAINING_KEYS + PARALLEL_KEYS + CKPT_KEYS + REL_KEYS
#: Keys holding catalogue ids (validated against the catalogue).
ID_KEYS: tuple[str, ...] = ("p", "m", "sys", "acc", "fp", "ck")
#: Keys holding an inline object as compact JSON: key -> (scenario path, schema class name).
JSON_KEYS: dict[str, tuple[tuple[str, ...], str]] = {
    "sysj": (("cluster", "system"), "System"),
    "accj": (("cluster", "accelerator"), "Accelerator"),
    "fpj": (("reliability", "profile"), "FailureProfile"),
    "ckj": (("checkpoint", "tiers"), "CheckpointTierUse"),
}
#: Longest inline JSON value read from a link (characters).
JSON_MAX_CHARS = 20_000
ALL_KEYS: tuple[str, ...] = ID_KEYS + tuple(JSON_KEYS) + tuple(f.key for f in MODEL_KEYS) + tuple(f.key for f in SCALAR_FIELDS)
_MODEL_KEY_SET = {f.key for f in MODEL_KEYS}
_MODEL_FIELD = {f.key: f for f in MODEL_KEYS}

# --------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------


def fmt_number(x: float | int) -> str:
    """Shortest decimal string that parses back to exactly ``x`` (``1.5e13``, ``3600``, ``0.02``)."""
    if isinstance(x, bool):
        return "1" if x else "0"
    if isinstance(x, int):
        return str(x)
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        cand = [str(int(x))]
    else:
        cand = [repr(x)]
    for prec in range(1, 18):
        s = f"{x:.{prec}g}"
        if float(s) == x:
            cand.append(s)
            break
    best = min(cand, key=len)
    if "e" in best:
        mant, exp = best.split("e")
        best = f"{mant}e{int(exp)}"
    return best


def _fmt_value(f: Field, v: Any) -> str | None:
    if v is None:
        return None
    if f.kind == "bool":
        return "1" if v else "0"
    if f.kind == "choice":
        return str(v)
    if f.kind == "str":
        return str(v)
    if f.kind in ("int", "optint"):
        try:
            return str(int(v))
        except (TypeError, ValueError, OverflowError):  # NaN / inf from a page's box: written as it is
            return str(v)
    return fmt_number(v)


_ABSENT = object()


def _get(d: Mapping, path: tuple[str, ...], default: Any = None) -> Any:
    """The value at ``path``, or ``default`` where the path is absent (``_ABSENT`` tells an
    absent field from an explicit null)."""
    cur: Any = d
    for p in path:
        if not isinstance(cur, Mapping) or p not in cur:
            return default
        cur = cur[p]
    return cur


def _set(d: dict, path: tuple[str, ...], value: Any) -> None:
    cur = d
    for p in path[:-1]:
        nxt = cur.get(p)
        if not isinstance(nxt, dict):
            nxt = {}
            cur[p] = nxt
        cur = nxt
    cur[path[-1]] = value


def _tier_id(t: Any) -> str | None:
    if isinstance(t, str):
        return t
    return None


def inline_model(sj: dict) -> dict:
    """``sj`` with a catalogue model id replaced by that model's whole architecture (a copy; ``sj``
    itself when the id is unknown or the model is already inline), so that the link keys of a preset
    model and of a custom model with the same architecture are the same keys with the same values.
    Compare's "other differences" uses it (review 16 new-user: a preset slot beside a custom slot of
    the same model listed every architecture key as "(base)" against its value)."""
    m = sj.get("model") if isinstance(sj, Mapping) else None
    if not isinstance(m, str):
        return sj
    try:
        spec = catalog.resolve_model(m)
    except Exception:  # noqa: BLE001 - an unknown id: the scenario as given (its own error is shown)
        return sj
    return {**sj, "model": spec.model_dump(mode="json", exclude_none=True)}


def scenario_to_params(scenario_json: Mapping[str, Any], preset: str | None = None) -> dict[str, str]:
    """The whole scenario as compact query parameters.

    Parameters
    ----------
    scenario_json : the scenario as JSON-like data (``Scenario.to_json_dict()`` or the raw
        dict the UI builds; need not be valid), or a :class:`~planner.schema.Scenario`; the
        checkpoint's ``async_`` (the field's Python name) is read as ``async``.
    preset : the preset the user started from, written as ``p`` (the base that keys not in
        the link are taken from, e.g. inline hardware objects).

    Returns
    -------
    dict of key -> string value; ``None`` fields (catalogue defaults, derived ``dp``) are left out.
    """
    sj = scenario_json
    if hasattr(sj, "to_json_dict"):  # a Scenario object: its JSON names
        sj = sj.to_json_dict()
    ck = sj.get("checkpoint") if isinstance(sj, Mapping) else None
    if isinstance(ck, Mapping) and "async_" in ck and "async" not in ck:
        # the field's Python name (Scenario.model_dump() without by_alias): the link's "ca" reads "async"
        # (review 47g: the key was dropped and the link reopened with the preset's async saves)
        sj = {**sj, "checkpoint": {**{k: v for k, v in ck.items() if k != "async_"}, "async": ck["async_"]}}
    out: dict[str, str] = {}
    if preset:
        out["p"] = str(preset)
    model = sj.get("model")
    if isinstance(model, str):
        out["m"] = model
    elif isinstance(model, Mapping):
        out["m"] = "custom"
        for f in MODEL_KEYS:
            v = _get(model, f.path)
            s = _fmt_value(f, v)
            if s is None and f.kind == "optint" and isinstance(_get(model, f.path[:-1]) if f.path[:-1] else model, Mapping):
                s = "none"  # explicit null: the base model may set it
            if s is not None:
                out[f.key] = s
        if not isinstance(model.get("moe"), Mapping):
            out["me"] = "0"
        if not isinstance(model.get("mla"), Mapping):
            # mlkv=0 = standard attention: without it a link read on a base model with MLA (the
            # DeepSeek-V3 preset) kept that model's MLA ranks, as me=0 keeps a dense model dense
            out["mlkv"] = "0"
    cluster = sj.get("cluster") or {}
    if isinstance(cluster.get("system"), str):
        out["sys"] = cluster["system"]
    elif isinstance(cluster.get("system"), Mapping):
        out["sysj"] = _json(cluster["system"])
    if isinstance(cluster.get("accelerator"), str):
        out["acc"] = cluster["accelerator"]
    elif isinstance(cluster.get("accelerator"), Mapping):
        out["accj"] = _json(cluster["accelerator"])
    for f in SCALAR_FIELDS:
        if f.key == "dp":
            continue  # derived from n_gpus / (tp·pp·cp); writing it would pin it
        s = _fmt_value(f, _get(sj, f.path))
        if s is not None:
            out[f.key] = s
    tiers = _get(sj, ("checkpoint", "tiers"))
    if isinstance(tiers, list) and all(isinstance(u, Mapping) and _tier_id(u.get("tier")) for u in tiers):
        parts = []
        for u in tiers:
            iv = u.get("interval_s")
            parts.append(f"{u['tier']}:{'auto' if iv is None else fmt_number(iv)}:{int(u.get('replicas') or 0)}")
        out["ck"] = ",".join(parts) if parts else "none"
    elif isinstance(tiers, list):
        out["ckj"] = _json(tiers)
    prof = _get(sj, ("reliability", "profile"))
    if isinstance(prof, str):
        out["fp"] = prof
    elif isinstance(prof, Mapping):
        out["fpj"] = _json(prof)
    return out


def _json(obj: Any) -> str:
    """Compact, key-sorted JSON of an inline object (no spaces)."""
    return json.dumps(obj, separators=(",", ":"), sort_keys=True, default=str, ensure_ascii=False)


# --------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------


def _range_text(f: Field) -> str:
    """A link value's allowed range for a refusal: whole-number bounds with thousands separators
    (``1 to 10,000,000``, as the CLI and the schema say it), others in their shortest form; a key
    whose Plan box is in another unit also gives the box's range in that unit (review 14a:
    ``hbmu`` said "107374182.4 to 1e14" and no unit, beside a box in GiB)."""
    def one(x: float | None) -> str:
        return "" if x is None else _bound_text(x)

    text = f"{one(f.lo)} < value ≤ {one(f.hi)}" if f.lo_open else f"{one(f.lo)} to {one(f.hi)}"
    if f.key in _BOX_UNITS and f.lo is not None and f.hi is not None:
        text += f" {_SI_UNITS.get(f.key, '')} {_box_range(f)}".replace("  ", " ")
    if f.kind in ("optint", "optfloat"):  # "none" is read too (review h28d: mnl=-1 said "1 to
        text += f", or none ({_NONE_MEANS.get(f.key, 'the default')})"  # 100,000" beside the page's 0 = no limit)
    return text


#: What "none" in an optional link field stands for (the schema field's own description).
_NONE_MEANS = {"mk": "= attention heads", "md": "hidden ÷ heads", "msw": "full attention",
               "msf": "= the expert FFN", "mnl": "no limit", "etp": "= TP", "dps": "all of DP",
               "rcl": "every layer", "price": "the catalogue value", "nic": "the catalogue value",
               "hostmem": "the catalogue value", "hbmu": "the catalogue value", "pwr": "the catalogue value"}


def _bound_text(x: float) -> str:
    """A range bound as people read it: a whole number below 10^9 with thousands separators
    (``10,000,000``; review 14j: "price 0.01 to 1e6"), else its shortest form (``1e14``, ``0.01``)."""
    x = float(x)
    if x.is_integer() and abs(x) < 1e9:
        return f"{int(x):,}"
    return fmt_number(x)


def _box_range(f: Field) -> str:
    """``(the Plan page's box: lo to hi unit)`` for a key whose box is in another unit, the bounds
    as the box's own message gives them (:func:`_box_bound`: rounded inward, so the number shown is
    itself allowed): ``0.1 to 93,132.2 GiB`` (1e14 B is 93,132.257 GiB; review 14j: "93130"; review
    h28d: "93,132.3", nearest, is refused by the box)."""
    scale, unit = _BOX_UNITS[f.key]
    return f"(the Plan page's box: {_box_bound(f.lo / scale, True)} to {_box_bound(f.hi / scale, False)} {unit})"


def _parsed(fields, flat: Mapping[str, str], warnings: list[str], prefix: tuple[str, ...] = ()):
    """(field, value) for each of ``fields`` present in the link whose value parses; a value
    that does not is a warning naming the key and the scenario field it sets (``ew
    (training.elementwise)='x': …``; the base value is kept) and is skipped."""
    for f in fields:
        if f.key not in flat:
            continue
        val, err = _parse_value(f, flat[f.key])
        if err:
            where = ".".join(prefix + f.path)
            warnings.append(f"{f.key}={_show(flat[f.key])} ({where}): {err}; kept the base value")
            continue
        yield f, val


def _parse_value(f: Field, raw: str) -> tuple[Any, str | None]:
    """(value, error text). Never raises."""
    r = raw.strip()
    if f.kind == "str":
        if len(r) > _schema.NAME_MAX_CHARS:  # review 49: cut to 200 without a word, where --set refused it
            return None, (f"{len(r):,} characters; allowed at most {_schema.NAME_MAX_CHARS} (a name, as the "
                          "scenario's name fields take)")
        return r, None
    if f.kind == "bool":
        low = r.lower()
        if low in ("1", "true", "yes", "on"):
            return True, None
        if low in ("0", "false", "no", "off"):
            return False, None
        return None, "must be 1 or 0 (also true / false, yes / no, on / off)"
    if f.kind == "choice":
        for c in f.choices:
            if r == str(c):
                return c, None
        return None, "allowed: " + ", ".join(str(c) for c in f.choices)
    if f.kind in ("optfloat", "optint") and r.lower() in ("", "none", "default"):
        return None, None
    whole = f.kind in ("int", "optint")
    # every refusal of a number names the range too (review 15f: "tp='abc': must be a whole number"
    # said nothing of what is allowed)
    rng = f"; allowed {_range_text(f)}" if f.lo is not None or f.hi is not None else ""
    if not r.isascii():  # float() also reads other scripts' digits ('４'): a link holds ASCII numbers
        return None, ("must be a number written in ASCII digits" if not whole
                      else "must be a whole number (ASCII digits)") + rng
    if "_" in r:  # float() and int() read Python's digit grouping, '1_6' as 16 (review 39)
        return None, ("must be a number" if not whole else "must be a whole number") + " without '_'" + rng
    try:
        x = float(r) if not whole else None
        if whole:
            xf = float(r)
            if math.isinf(xf) and r.lstrip("+-")[:1].isdigit():  # 100,000 digits: a number, out of range
                return None, "out of range" + rng
            if not math.isfinite(xf) or not xf.is_integer():
                return None, "must be a whole number" + rng
            x = int(xf)
    except (ValueError, OverflowError):
        return None, ("must be a number" if not whole else "must be a whole number") + rng
    if not math.isfinite(x):
        return None, ("out of range" if r.lstrip("+-")[:1].isdigit() else "must be finite") + rng
    if f.lo is not None and (x < f.lo or (f.lo_open and x == f.lo)):
        return None, f"out of range; allowed {_range_text(f)}"
    if f.hi is not None and x > f.hi:
        return None, f"out of range; allowed {_range_text(f)}"
    return x, None


def _show(raw: str) -> str:
    r = repr(raw)
    return r if len(r) <= 40 else r[:37] + "...'"


def one_line_show(raw: str) -> str:
    """A pasted text quoted for a warning, at most 40 characters (as link values are shown)."""
    return _show(str(raw))


def _last(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        v = v[-1] if v else ""
    return v if isinstance(v, str) else str(v)


def _safe_catalog(fn) -> dict:
    try:
        return fn()
    except Exception:  # a broken data file must not break a link
        return {}


def _base_scenario(pid: str | None, warnings: list[str]) -> tuple[dict, str]:
    from .presets import preset_json

    presets = _safe_catalog(catalog.scenario_presets_raw)
    if pid is not None and pid not in presets:
        warnings.append(
            f"p={_show(pid)}: unknown scenario preset; using '{DEFAULT_PRESET}' "
            f"(allowed: {', '.join(sorted(presets)) or 'none loaded'})"
        )
        pid = None
    pid = pid or DEFAULT_PRESET
    try:
        return preset_json(pid), pid
    except Exception:
        return {"model": "llama3-70b", "cluster": {"system": "dgx-h100", "n_gpus": 1024}}, pid


def _parse_tiers(raw: str, tiers_cat: Mapping) -> tuple[list | None, list[str]]:
    errs: list[str] = []
    r = raw.strip()
    if r == "":
        # An empty value is not "no checkpointing" (that is ``ck=none``): refuse it, keep the base.
        return None, [f"ck={_show(raw)}: empty; refused (allowed: 'none' for no checkpointing, or "
                      f"tier:interval_s|auto:replicas,... with tiers {', '.join(sorted(tiers_cat))}); "
                      "kept the base value"]
    if r.lower() == "none":
        return [], errs
    out = []
    seen = set()
    for part in r.split(","):
        bits = part.split(":")
        tid = bits[0].strip()
        if tid not in tiers_cat:
            errs.append(f"ck: unknown storage tier {_show(tid)} (allowed: {', '.join(sorted(tiers_cat))})")
            continue
        if tid in seen:
            errs.append(f"ck: tier '{tid}' listed twice; kept the first")
            continue
        if len(bits) > 3:  # review 20: "pfs:60:0:junk" kept the first three fields without a word
            errs.append(f"ck: entry {_show(part)} has {len(bits)} fields; allowed tier:interval_s|auto:replicas "
                        f"(3 fields); used {_show(':'.join(bits[:3]))}")
        if len(bits) > 1 and not bits[1].strip():  # "pfs:", "pfs::0": a link cut short, or a field left out
            errs.append(f"ck: empty interval for tier '{tid}' (entry {_show(part)}); allowed a number of seconds "
                        "or 'auto'; used 'auto' (the optimum)")
        if len(bits) > 2 and not bits[2].strip():
            errs.append(f"ck: empty replicas for tier '{tid}' (entry {_show(part)}); allowed 0 to {CK_REPLICAS_MAX}; used 0")
        iv: float | None = None
        if len(bits) > 1 and bits[1].strip().lower() not in ("", "auto", "opt"):
            try:
                iv = float(bits[1])
                if not math.isfinite(iv) or not CK_INTERVAL_MIN_S <= iv <= CK_INTERVAL_MAX_S:
                    raise ValueError
            except (ValueError, OverflowError):
                # digits grouped as the other link ranges (review 14j: "0.6 to 6e+08 seconds")
                errs.append(f"ck: interval {_show(bits[1])} for tier '{tid}' refused; allowed {CK_INTERVAL_MIN_S:g} to "
                            f"{CK_INTERVAL_MAX_S:,.0f} seconds (the Plan page's {CK_INTERVAL_MIN_S / 60:g} to "
                            f"{CK_INTERVAL_MAX_S / 60:,.0f} minutes) or 'auto'; used 'auto' (the optimum)")
                iv = None
        rep = 0
        if len(bits) > 2 and bits[2].strip():
            try:
                rep = int(bits[2])
                if rep < 0 or rep > CK_REPLICAS_MAX:
                    raise ValueError
            except ValueError:
                errs.append(f"ck: replicas {_show(bits[2])} for tier '{tid}' refused; allowed 0 to {CK_REPLICAS_MAX}; used 0")
                rep = 0
        seen.add(tid)
        out.append({"tier": tid, "interval_s": iv, "replicas": rep})
    if not out and r:
        # review 14j: ck=foo:1:1 said "unknown storage tier 'foo'" and kept the base tiers silently
        errs = list(dict.fromkeys(errs))
        errs[-1] += "; no tier left in the list, kept the base value"
        return None, errs
    return out, errs


#: Link keys whose field the Plan page has no box for, or derives: not judged by
#: :func:`widget_range_errors` (``dp`` is derived from the GPUs and the split; a name is free text).
_NO_BOX_KEYS = frozenset({"dp", "mn"})


def _range_words(f: Field) -> str:
    """A field's range in words, as the Plan page's box takes it (``1 to 100,000``)."""
    def one(x: float | None) -> str:
        return "" if x is None else _bound_text(x)

    if f.kind == "bool":
        return "true or false"
    if f.kind == "choice":
        return ", ".join(repr(c) if isinstance(c, str) else str(c) for c in f.choices)
    text = f"more than {one(f.lo)} and at most {one(f.hi)}" if f.lo_open else f"{one(f.lo)} to {one(f.hi)}"
    if f.kind in ("int", "optint"):
        text = "a whole number " + text
    if f.key in _BOX_UNITS and f.lo is not None and f.hi is not None:
        text += f" {_box_range(f)}"
    if f.kind in ("optint", "optfloat"):
        text += ", or null"
    return text


#: Link keys whose Plan box is not in the field's SI unit: key -> (scale, the box's unit).
_BOX_UNITS = {"hostmem": (2.0**30, "GiB per node"), "hbmu": (2.0**30, "GiB"), "nic": (1e9, "GB/s per GPU"),
              "tok": (1e12, "trillion tokens")}
#: The link value's own (SI) unit for those keys.
_SI_UNITS = {"hostmem": "bytes", "hbmu": "bytes", "nic": "bytes/s", "tok": "tokens"}


def _raw_of(f: Field, v: Any) -> str | None:
    """A JSON value as the string a link would carry, for :func:`_parse_value`; None when the
    value is absent (null where the field allows it)."""
    if v is None:
        return None
    if f.kind == "bool":
        return ("1" if v else "0") if isinstance(v, bool) else str(v)
    if isinstance(v, bool):  # true for a number: not a number the box can hold
        return str(v)
    if isinstance(v, float) and f.kind in ("float", "optfloat"):
        return repr(v) if not math.isfinite(v) else fmt_number(v)
    if isinstance(v, float) and f.kind == "choice" and v.is_integer() and any(
            isinstance(c, int) for c in f.choices):  # zero_stage 1.0, which the schema reads as 1 (review 43b)
        return str(int(v))
    return str(v) if isinstance(v, (int, float, str)) else json.dumps(v, default=str)[:60]


def _value_text(v: Any) -> str:
    if isinstance(v, float) and math.isfinite(v):
        return fmt_number(v)
    t = json.dumps(v, default=str) if not isinstance(v, str) else repr(v)
    return t if len(t) <= 40 else t[:37] + "..."


def widget_range_errors(scenario_json: Any) -> list[str]:
    """Every field of a scenario whose value the Plan page's boxes cannot hold exactly, one line
    each: the field, its value and the range the page (and a share link) accepts.

    The ranges are the link keys' (:data:`MODEL_KEYS` for an inline model, :data:`SCALAR_FIELDS`,
    the checkpoint interval :data:`CK_INTERVAL_MIN_S` … :data:`CK_INTERVAL_MAX_S` and 0 … :data:`CK_REPLICAS_MAX` peer
    copies), which are the sidebar widgets' ranges: a value outside them would be swapped by the
    widget for another one (review: an imported ``seq_len`` of 10⁸ became 1). An import with any
    such value is refused whole (app_pages/_common.py); cross-field rules are left to the schema.

    Never raises: a value of the wrong type is reported like one out of range; a scenario that is
    not a JSON object gives one line.
    """
    try:
        return _widget_range_errors(scenario_json)
    except Exception as e:  # noqa: BLE001 - an import must never raise
        return [f"scenario: could not be read ({type(e).__name__})"]


#: Schema messages of a whole-scenario rule that name an unknown catalogue id (raised where the
#: scenario resolves its ids, so pydantic places them at the scenario, as it does a cross-field rule).
_UNKNOWN_ID = re.compile(r": unknown [\w -]+ id '")
#: Sections a cross-field rule may be placed at: a nested model's own check (the custom model's
#: "n_kv_heads must divide n_heads"; an inline accelerator's "hbm_usable_bytes exceeds hbm_bytes",
#: system's, storage tier's or failure profile's — review 43b: these were refused as values the page
#: cannot hold, where a catalogue choice on the page fixes them) or a list entry (``tiers[0]``).
_SECTIONS = frozenset({"model", "training", "parallelism", "cluster", "checkpoint", "reliability", "overrides",
                       "moe", "mla", "accelerator", "system", "tier", "profile"})


def _cross_field(err: dict) -> bool:
    """True for a pydantic error that is a rule across fields (each value one the page can hold):
    a ``value_error`` placed at the scenario or at a section, not at one field, and not an unknown id."""
    loc = _schema.loc_fields(tuple(err.get("loc", ())))
    return (err.get("type") == "value_error" and (not loc or loc[-1] in _SECTIONS or isinstance(loc[-1], int))
            and not _UNKNOWN_ID.search(str(err.get("msg", ""))))


def _union_noise(err: dict, errs: list[dict]) -> bool:
    """The ``str`` branch's complaint of an id-or-object field given an object (``"model": {…}``):
    pydantic reports both branches; the object's own errors are the ones that count."""
    loc = tuple(err.get("loc", ()))
    return bool(loc) and loc[-1] == "str" and any(tuple(o.get("loc", ()))[:len(loc) - 1] == loc[:-1] and o is not err
                                                 and tuple(o.get("loc", ()))[-1:] != ("str",) for o in errs)


def _page_cannot_hold(sj: Mapping) -> list[str]:
    """A checkpoint tier kind listed twice (the Plan page has one row, one widget key, per kind: two
    made a StreamlitDuplicateElementKey on every run) and a ``parallelism.dp`` other than
    ``n_gpus / (tp·pp·cp)`` (the page derives DP: the file's dp 16 showed results for 32), in the
    schema's words. Never raises; a value of the wrong type is left to the other checks."""
    out: list[str] = []
    tiers = _get(sj, ("checkpoint", "tiers"))
    if isinstance(tiers, list):
        kinds = []
        for u in tiers:
            t = u.get("tier") if isinstance(u, Mapping) else None
            try:
                kinds.append(t.get("kind") if isinstance(t, Mapping) else catalog.resolve_storage(t).kind)
            except Exception:  # noqa: BLE001 - an unknown id is named by the schema's own message
                continue
        err = _schema.tier_kind_dup_error([str(k) for k in kinds if k is not None])
        if err:
            out.append(f"{err} (the Plan page has one row per tier kind)")
    par = sj.get("parallelism") if isinstance(sj.get("parallelism"), Mapping) else {}
    n = _get(sj, ("cluster", "n_gpus"))
    vals = [par.get(k, 1) for k in ("tp", "pp", "cp")] + [par.get("dp"), n]
    if all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 10**7 for v in vals):
        err = _schema.split_product_error(*vals)
        if err:
            out.append(f"{err}: the Plan page derives DP from cluster.n_gpus / (tp·pp·cp); set parallelism.dp to "
                       "null (or to that quotient) to import this file")
    return out


def import_refusals(scenario_json: Any) -> list[str]:
    """Why the Plan page must refuse an imported scenario JSON whole, one line each (``[]``: it may
    be loaded, cross-field rules left to the schema's messages on the page).

    Refused: a value its boxes cannot hold (:func:`widget_range_errors`), and any value the schema
    refuses on its own — an unknown field inside a section (``parallelism.zzz``), an unknown
    model, system, accelerator, storage tier or profile id (``"model": "gpt-9"`` would otherwise
    turn into a custom model of ones), a value of the wrong type (``"tp": "4"``, ``"system": null``,
    ``"name": 5``), a section that is not an object, a custom model without a required field. Loaded,
    such a scenario was half-taken by the page's widgets: the boxes kept or converted what they
    could, and results were shown for a scenario the file never described, or the page stayed broken
    with no box to fix the field (reviews 42c, 43a). Also refused, two rules across fields the page
    cannot hold: a checkpoint tier kind listed twice (one row per kind) and a ``dp`` that disagrees
    with ``n_gpus / (tp·pp·cp)`` (the page derives DP; review 44). Loaded with the schema's message:
    any other rule across fields whose values each fit their box (TP 3 on 1,024 GPUs with ``dp``
    null), which the user fixes on the page.

    Never raises.
    """
    out = widget_range_errors(scenario_json)
    if not isinstance(scenario_json, Mapping):
        return out
    # two rules across fields the page's boxes cannot hold either (review 44b), checked here on
    # their own: the schema stops at its first cross-field error, so behind another one (a power
    # limit above the TDP) they went unseen (review 44g)
    out += _page_cannot_hold(scenario_json)
    try:
        Scenario.model_validate(copy.deepcopy(dict(scenario_json)))
    except ValidationError as e:
        errs = e.errors()
        if any(not _cross_field(x) for x in errs if not _union_noise(x, errs)):
            # a field the box-range check named already is not named twice (review 43b: tokens_total)
            named = {re.split(r" = |: ", line, maxsplit=1)[0] for line in out}
            out += [m for m in format_errors(e, json_spelling=True)
                    if m not in out and re.split(r" = |: ", m, maxsplit=1)[0] not in named]
    except Exception as e:  # noqa: BLE001 - an import must never raise
        out.append(f"scenario: could not be read ({type(e).__name__})")
    return out


def _widget_range_errors(sj: Any) -> list[str]:
    if not isinstance(sj, Mapping):
        return ["scenario: must be a JSON object"]
    out: list[str] = []

    def judge(f: Field, where: str, v: Any) -> None:
        if f.key in _NO_BOX_KEYS:
            return
        raw = _raw_of(f, v)
        if raw is None:  # null: an optional field's default; a field with no null its box can hold
            if v is None and not f.kind.startswith("opt"):  # (review h29c: "async": null put None in a
                out.append(f"{where} = null: allowed {_range_words(f)}")  # checkbox, a TypeError on the page)
            return
        _val, err = _parse_value(f, raw)
        if err:
            out.append(f"{where} = {_value_text(v)}: allowed {_range_words(f)}")

    def present(d: Any, path: tuple[str, ...]) -> bool:
        return _get(d, path, _ABSENT) is not _ABSENT

    model = sj.get("model")
    if "model" in sj and not isinstance(model, (str, Mapping)):  # the Model section holds an id or fields
        out.append(f"model = {_value_text(model)}: allowed a model preset id (planner presets models) or an "
                   "object with the model's fields")  # (review h29c: "model": 4 became a default custom model)
    if isinstance(model, Mapping):
        for f in MODEL_KEYS:
            if f.path[0] in ("moe", "mla") and not isinstance(model.get(f.path[0]), Mapping):
                continue
            if present(model, f.path):
                judge(f, _path_text(("model",) + f.path), _get(model, f.path))
    for f in SCALAR_FIELDS:
        if present(sj, f.path):
            judge(f, _path_text(f.path), _get(sj, f.path))
    tiers = _get(sj, ("checkpoint", "tiers"))
    if isinstance(tiers, list):
        lo_min, hi_min = CK_INTERVAL_MIN_S / 60.0, CK_INTERVAL_MAX_S / 60.0
        for i, u in enumerate(tiers):
            if not isinstance(u, Mapping):
                continue
            iv = u.get("interval_s")
            if iv is not None:
                ok = (isinstance(iv, (int, float)) and not isinstance(iv, bool) and math.isfinite(float(iv))
                      and CK_INTERVAL_MIN_S <= float(iv) <= CK_INTERVAL_MAX_S)
                if not ok:
                    out.append(f"checkpoint.tiers[{i}].interval_s = {_value_text(iv)}: allowed "
                               f"{fmt_number(CK_INTERVAL_MIN_S)} to {fmt_number(CK_INTERVAL_MAX_S)} s (the Plan "
                               f"page's {fmt_number(lo_min)} to {hi_min:,.0f} minutes), or null for the optimum")
            rep = u.get("replicas")
            if rep is not None and not (isinstance(rep, int) and not isinstance(rep, bool) and 0 <= rep <= CK_REPLICAS_MAX):
                if not (isinstance(rep, float) and rep.is_integer() and 0 <= rep <= CK_REPLICAS_MAX):
                    out.append(f"checkpoint.tiers[{i}].replicas = {_value_text(rep)}: allowed 0 to {CK_REPLICAS_MAX:,} "
                               "(a whole number)")
    return out


#: Every link key's :class:`Field`, by key (the Plan page's boxes read their ranges here).
FIELDS: dict[str, Field] = {f.key: f for f in MODEL_KEYS + SCALAR_FIELDS}


def box_scale(key: str) -> tuple[float, str]:
    """(SI units per box unit, the box's unit) of link key ``key``'s Plan page box: ``(1e9, "GB/s
    per GPU")`` for ``nic``; ``(1.0, "")`` for a box in the field's own unit."""
    return _BOX_UNITS.get(key, (1.0, ""))


def _box_bound(x: float, up: bool) -> str:
    """A range bound in a box's unit, to at most six significant digits, rounded inward (``up``: the
    lower bound, rounded up) so that the number shown is itself allowed (HBM: 1e14 B is
    93,132.257... GiB, shown 93,132.2, not 93,132.3)."""
    x = float(x)
    if x == 0 or not math.isfinite(x):
        return fmt_number(x)
    if abs(x) >= 1.0 and abs(x) < 1e12:  # one decimal at most, grouped (93,132.2)
        t = (math.ceil(x * 10) if up else math.floor(x * 10)) / 10
        return f"{t:,.1f}".removesuffix(".0")
    t = float(f"{x:.6g}")
    if (up and t < x) or (not up and t > x):
        step = 10.0 ** (math.floor(math.log10(abs(x))) - 5)
        t = float(f"{(math.ceil(x / step) if up else math.floor(x / step)) * step:.6g}")
    return _bound_text(t)


def box_value_error(label: str, value: Any, lo: float, hi: float, *, whole: bool = False, unit: str = "",
                    where: str = "", empty: str | None = None, scale: float = 1.0, lo_open: bool = False) -> str | None:
    """The message for a value typed in one of the Plan page's number boxes that is outside the
    range the page (and a share link) takes, None when it is inside: the box's label, the value as
    typed and the allowed range, both in the box's unit, then the scenario field (``where``).

    ``lo`` and ``hi`` are in the field's own (SI) unit; ``value`` is in the box's, ``scale`` SI units
    per box unit (the box of ``cluster.overrides.nic_bw_per_gpu_bytes_per_s`` is in GB/s: 1e9). The
    value is compared in SI after the same 12-digit rounding the sidebar applies when it writes the
    scenario, so a value at a bound is judged as the link and the schema judge it. ``empty``: what an
    empty box means, for a box that may be empty (None: it may not). Never raises: NaN, ±inf, a
    number too large for a float and a value that is not a number are refused like any other.

    >>> box_value_error("GPUs", 0, 1, 10_000_000, whole=True, where="cluster.n_gpus")
    'GPUs = 0: allowed a whole number 1 to 10,000,000 (cluster.n_gpus)'
    >>> box_value_error("NIC bandwidth override", 0.05, 1e8, 1e15, unit="GB/s per GPU", scale=1e9)
    'NIC bandwidth override = 0.05 GB/s per GPU: allowed 0.1 to 1,000,000 GB/s per GPU'
    >>> box_value_error("TP", 8, 1, 100_000, whole=True) is None
    True
    """
    u = f" {unit}" if unit else ""
    rng = (f"more than {_box_bound(lo / scale, True)} and at most" if lo_open else f"{_box_bound(lo / scale, True)} to")
    rng = ("a whole number " if whole else "") + f"{rng} {_box_bound(hi / scale, False)}{u}"
    tail = (f", or empty ({empty})" if empty else "") + (f" ({where})" if where else "")
    if value is None:
        return None if empty else f"{label}: empty; allowed {rng}{tail}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{label} = {_value_text(value)}: not a number; allowed {rng}{tail}"
    try:
        v = float(value)
    except OverflowError:  # an int beyond the float range
        v = math.inf if value > 0 else -math.inf
    # grouped as the bounds are (review h28d: "= 1000001: allowed 0.01 to 1,000,000")
    # (review 42c: 2⁵³ − 1, the most a number box can hold, showed ungrouped beside "10,000,000")
    shown = (f"{value:,}" if isinstance(value, int) and abs(value) < 10**18
             else f"{int(v):,}" if math.isfinite(v) and v.is_integer() and 1e15 <= abs(v) < 1e18
             else f"{v:,.12g}" if math.isfinite(v) and 1e-4 <= abs(v) < 1e15 else fmt_number(v) if math.isfinite(v)
             else repr(v))
    if not math.isfinite(v):
        return f"{label} = {shown}: must be a finite number; allowed {rng}{tail}"
    if whole and not v.is_integer():
        return f"{label} = {shown}: must be a whole number; allowed {rng}{tail}"
    si = v if scale == 1.0 else float(f"{v * scale:.12g}")
    if si < lo or (lo_open and si == lo) or si > hi:
        return f"{label} = {shown}{u}: allowed {rng}{tail}"
    return None


def field_box_error(key: str, value: Any, label: str, *, lo: float | None = None, empty: str | None = None,
                    where: str | None = None) -> str | None:
    """:func:`box_value_error` for the box of link key ``key``: its range (:data:`FIELDS`; ``lo``
    replaces the lower bound, for a box whose 0 means "none"), whole-number kind and the box's unit
    (:func:`box_scale`), and its scenario field path (``where`` replaces it)."""
    f = FIELDS[key]
    scale, unit = box_scale(key)
    return box_value_error(label, value, f.lo if lo is None else lo, f.hi, whole=f.kind in ("int", "optint"),
                           unit=unit, where=where if where is not None else _path_text(f.path), empty=empty,
                           scale=scale, lo_open=f.lo_open and lo is None)


def _load_json(raw: str) -> tuple[Any, str | None]:
    if len(raw) > JSON_MAX_CHARS:
        return None, f"longer than {JSON_MAX_CHARS} characters"
    try:
        return json.loads(raw), None
    except (ValueError, RecursionError) as e:
        return None, f"not JSON ({type(e).__name__})"


def _at_scenario_path(e: ValidationError, loc: tuple) -> ValidationError:
    """``e`` (raised by a part of a scenario validated on its own) with every error located at
    ``loc`` inside the scenario, so :func:`format_errors` names the scenario field and reads its
    allowed fields and ranges there (found by review: an unknown key in ``ckj`` was answered with
    the scenario's sections, "allowed: checkpoint, cluster, model, ..."); ``e`` itself when the
    errors cannot be rebuilt."""
    try:
        errs = []
        for d in e.errors(include_url=False):
            item = {"type": d["type"], "loc": tuple(loc) + tuple(d.get("loc", ())), "input": d.get("input")}
            if "ctx" in d:
                item["ctx"] = d["ctx"]
            errs.append(item)
        return ValidationError.from_exception_data(e.title, errs)
    except Exception:  # noqa: BLE001 - a link must never raise; the unlocated lines are still right
        return e


def _schema_error(cls_name: str, obj: Any, loc: tuple = ()) -> str | None:
    """Why ``obj`` is not a valid ``planner.schema.<cls_name>``, its errors named at ``loc``, the
    place it takes in a scenario (``("checkpoint", "tiers", 0)``); None when it is valid."""
    from . import schema

    try:
        getattr(schema, cls_name).model_validate(copy.deepcopy(obj))
        return None
    except ValidationError as e:
        lines = format_errors(_at_scenario_path(e, loc))
        shown: list[str] = []
        for line in lines:  # whole lines only, the rest counted (a cut line named half a field)
            if shown and sum(len(x) + 2 for x in shown) + len(line) > 400:
                break
            shown.append(line[:400])
        more = len(lines) - len(shown)
        return ("not a valid " + cls_name + ": " + "; ".join(shown)
                + (f"; and {more} more problem{'s' if more > 1 else ''}" if more else ""))
    except Exception as e:  # noqa: BLE001 - a link must never raise
        return f"not a valid {cls_name}: {type(e).__name__}"


def _parse_json_object(raw: str, cls_name: str, loc: tuple = ()) -> tuple[dict | None, str | None]:
    """An inline object from compact JSON, validated with ``planner.schema.<cls_name>`` (its errors
    named at ``loc``, its place in the scenario)."""
    obj, err = _load_json(raw)
    if err:
        return None, err
    if not isinstance(obj, dict):
        return None, f"must be a JSON object ({cls_name})"
    err = _schema_error(cls_name, obj, loc)
    return (None, err) if err else (obj, None)


def _parse_json_tiers(raw: str) -> tuple[list | None, str | None]:
    """``ckj``: the whole checkpoint tier list as JSON (for inline storage tiers)."""
    obj, err = _load_json(raw)
    if err:
        return None, err
    if not isinstance(obj, list) or len(obj) > 16:
        return None, "must be a JSON list of at most 16 tier uses"
    if not obj:
        # like an empty ck=: "no checkpointing" is written ck=none, an empty list is a broken link
        return None, "an empty tier list; refused (no checkpointing is ck=none)"
    for i, u in enumerate(obj):
        if not isinstance(u, dict):
            return None, "each tier use must be a JSON object"
        err = _schema_error("CheckpointTierUse", u, ("checkpoint", "tiers", i))
        if err:
            return None, err
    # the ranges `ck` and the Plan page's boxes take (review 46d: ckj let 0.01 s and 1e12 s through),
    # the value as given (review 46e: a rounded one read as the bound)
    if errs := widget_range_errors({"checkpoint": {"tiers": obj}}):
        return None, errs[0]
    return obj, None


def _model_base(model: Any) -> dict | None:
    if isinstance(model, Mapping):
        return copy.deepcopy(dict(model))
    if isinstance(model, str):
        m = _safe_catalog(catalog.models).get(model)
        if m is not None:
            d = m.model_dump(mode="json", exclude_none=True)
            for k in ("source", "published_params_total", "published_params_active"):
                d.pop(k, None)
            d["name"] = f"custom ({model})"
            return d
    return None


def params_to_scenario(params: Mapping[str, Any]) -> tuple[dict, list[str]]:
    """Scenario JSON from link parameters, plus one warning per ignored or refused value.

    Never raises (tested with random strings). See the module docstring for the format.

    Returns
    -------
    (scenario_json, warnings). ``scenario_json`` validates as a :class:`Scenario` unless a
    cross-field rule fails that no link key explains; that error is then among ``warnings``.
    """
    warnings: list[str] = []
    try:
        flat = {str(k): _last(v) for k, v in dict(params).items()}
        for k, v in dict(params).items():  # tp=2&tp=4: the last one is used, never without a word
            if isinstance(v, (list, tuple)) and len({str(x) for x in v}) > 1:
                name = k if k in ALL_KEYS else _show(str(k))
                given = ", ".join(_show(str(x)) for x in v[:5]) + (f", … {len(v) - 5:,} more" if len(v) > 5 else "")
                warnings.append(f"{name}: given {len(v)} times ({given}); used the last, {_show(flat[str(k)])}")
    except Exception:
        return _base_scenario(None, [])[0], ["link: unreadable query parameters ignored"]
    sj, pid = _base_scenario(flat.get("p"), warnings)
    base0 = copy.deepcopy(sj)  # what the base preset's name describes
    applied: dict[str, tuple[tuple[str, ...], Any]] = {}  # key -> (path, base value) for repair

    slot_keys: dict[str, list[str]] = {}
    for k in flat:
        if k not in ALL_KEYS:
            slot = re.fullmatch(r"([1-9])\.(\w+)", k)
            if slot and slot.group(2) in ALL_KEYS:
                slot_keys.setdefault(slot.group(1), []).append(k)
            else:
                warnings.append(f"{_show(k)}: unknown link parameter ignored")
    for n_slot, keys in slot_keys.items():
        # a Compare link pasted where one scenario is read: one line per scenario, not one per key
        # (found by review: forty "'1.tp': unknown link parameter ignored" lines, none saying why)
        shown = ", ".join(keys[:3]) + (f", … ({len(keys)} keys)" if len(keys) > 3 else "")
        warnings.append(f"{shown}: the Compare page's keys of its scenario {n_slot}, ignored; a link here holds "
                        "one scenario: use that scenario's Open in Plan and copy the Plan page's link")

    # Model
    mval = flat.get("m")
    models = _safe_catalog(catalog.models)
    custom_keys = [k for k in flat if k in _MODEL_KEY_SET]
    if mval is not None:
        mval = mval.strip()
        if mval == "custom":
            base = _model_base(sj.get("model"))
            if base is None:
                warnings.append("m=custom: no base model to start from; kept the preset's model")
            else:
                applied["m"] = (("model",), copy.deepcopy(sj.get("model")))
                sj["model"] = base
        elif mval in models:
            applied["m"] = (("model",), copy.deepcopy(sj.get("model")))
            sj["model"] = mval
        else:
            warnings.append(
                f"m={_show(mval)}: unknown model; kept '{sj.get('model') if isinstance(sj.get('model'), str) else 'preset model'}' "
                f"(allowed: {', '.join(sorted(models))}, custom)"
            )
    if custom_keys:
        model = sj.get("model")
        if not isinstance(model, dict):
            warnings.append(
                f"{', '.join(custom_keys)}: architecture fields are used only with m=custom; ignored"
            )
        else:
            # Each architecture key is recorded like any other link key (path, base value), so that a
            # cross-field error is blamed on the key at fault and only that key goes back to the base
            # model's value (review: ma=7 against the base model's 8 KV heads cost the link its whole
            # custom model, the valid ml and mh with it, without a word about them).
            model_applied: dict[str, tuple[tuple[str, ...], Any]] = {}
            for f, val in _parsed(MODEL_KEYS, flat, warnings, ("model",)):
                if f.key == "me" and val == 0:
                    model_applied[f.key] = (("model", "moe"), copy.deepcopy(model.get("moe")))
                    model.pop("moe", None)
                    continue
                if f.key == "mlkv" and val == 0:
                    model_applied[f.key] = (("model", "mla"), copy.deepcopy(model.get("mla")))
                    model.pop("mla", None)
                    continue
                if f.path[0] in ("moe", "mla") and not isinstance(model.get(f.path[0]), dict):
                    model[f.path[0]] = {}
                model_applied.setdefault(f.key, (("model",) + f.path, copy.deepcopy(_get(model, f.path))))
                _set(model, f.path, val)
            moe = model.get("moe")
            if isinstance(moe, dict) and not {"n_experts", "top_k", "expert_ffn_hidden_size"} <= set(moe):
                warnings.append("me/mtk/mef: an MoE model needs n_experts, top_k and expert FFN size; kept dense")
                model.pop("moe", None)
            mla = model.get("mla")
            if isinstance(mla, dict) and not {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"} <= set(mla):
                warnings.append("mlq/mlkv/...: MLA needs all five fields; kept standard attention")
                model.pop("mla", None)
            for key, (path, base_v) in model_applied.items():
                if len(path) > 2 and not isinstance(model.get(path[1]), dict):
                    continue  # its MoE / MLA section was dropped above, with a warning
                applied[key] = (path, base_v)

    # Catalogue ids
    def _id(key: str, path: tuple[str, ...], table: Mapping, what: str, allow_none: bool = False):
        if key not in flat:
            return
        v = flat[key].strip()
        if allow_none and v in ("", "none", "default"):
            applied[key] = (path, copy.deepcopy(_get(sj, path)))
            _set(sj, path, None)
            return
        if v in table:
            applied[key] = (path, copy.deepcopy(_get(sj, path)))
            _set(sj, path, v)
        else:
            warnings.append(f"{key}={_show(v)}: unknown {what}; kept the base value (allowed: {', '.join(sorted(table))})")

    _id("sys", ("cluster", "system"), _safe_catalog(catalog.systems), "system")
    _id("acc", ("cluster", "accelerator"), _safe_catalog(catalog.accelerators), "accelerator", allow_none=True)
    _id("fp", ("reliability", "profile"), _safe_catalog(catalog.failure_profiles), "failure profile")

    for key, (path, cls_name) in JSON_KEYS.items():
        if key not in flat or key == "ckj":
            continue
        obj, err = _parse_json_object(flat[key], cls_name, path)
        if err:
            warnings.append(f"{key}={_show(flat[key])}: {err}; kept the base value")
            continue
        applied[key] = (path, copy.deepcopy(_get(sj, path)))
        _set(sj, path, obj)

    for f, val in _parsed(SCALAR_FIELDS, flat, warnings):
        applied[f.key] = (f.path, copy.deepcopy(_get(sj, f.path)))
        _set(sj, f.path, val)

    if "ck" in flat:
        tiers, errs = _parse_tiers(flat["ck"], _safe_catalog(catalog.storage_tiers))
        warnings.extend(errs)
        if tiers is not None:
            applied["ck"] = (("checkpoint", "tiers"), copy.deepcopy(_get(sj, ("checkpoint", "tiers"))))
            _set(sj, ("checkpoint", "tiers"), tiers)
    if "ckj" in flat:
        tiers_j, err = _parse_json_tiers(flat["ckj"])
        if err:
            warnings.append(f"ckj={_show(flat['ckj'])}: {err}; kept the base value")
        else:
            applied["ckj"] = (("checkpoint", "tiers"), copy.deepcopy(_get(sj, ("checkpoint", "tiers"))))
            _set(sj, ("checkpoint", "tiers"), tiers_j)

    # Derived dp: the preset may pin dp; drop it when the link changes the cluster or split
    # but does not give dp itself.
    if "dp" not in flat and any(k in applied for k in ("n", "tp", "pp", "cp")):
        par = sj.get("parallelism")
        if isinstance(par, dict):
            par.pop("dp", None)

    sj = _repair(sj, applied, warnings, pid)
    # A preset's name describes its model and cluster: a link that changes either drops it, as
    # `planner ... --set` and the Plan page do (review 15f: a 1,024-GPU link exported "... on 16,384 H100").
    from .presets import drop_stale_name

    drop_stale_name(sj, base0)
    if any(w.startswith("ck: refused") for w in warnings):
        # the whole tier list went back to the base: a part's own fallback ("used 'auto'", "used 0")
        # did not happen (review 14a: ck=pfs:xx:1 said "used 'auto'", then "refused ... kept the base")
        warnings = [re.sub(r"; used ('auto' \(the optimum\)|0|'[^']*')$", "", w) if w.startswith("ck: ") else w
                    for w in warnings]
    # each warning once (found by review: ck=::::,,, gave the same "unknown storage tier ''" four times)
    return sj, list(dict.fromkeys(warnings))


def _path_text(path: tuple[str, ...]) -> str:
    return ".".join(path)


def _link_errors(sj: dict) -> list[str] | None:
    """The validation error lines of a scenario dict, None when it is valid. Never raises."""
    try:
        Scenario.model_validate(copy.deepcopy(sj))
        return None
    except ValidationError as e:
        return format_errors(e)
    except Exception as e:  # noqa: BLE001 - a link must never raise
        return [str(e)]


def _revert(sj: dict, key: str, path: tuple, base, applied: dict) -> None:
    """Put the base value of a link key back (drop the field where the base did not set it,
    so the default applies); a changed split or size re-derives dp unless the link set it."""
    if base is None:
        parent = _get(sj, path[:-1]) if len(path) > 1 else sj
        if isinstance(parent, dict):
            parent.pop(path[-1], None)
    else:
        _set(sj, path, copy.deepcopy(base))
    if key in ("n", "tp", "pp", "cp") and "dp" not in applied:
        par = sj.get("parallelism")
        if isinstance(par, dict):
            par.pop("dp", None)


# ---- Split fitting --------------------------------------------------------------------
#
# The split (TP, PP, CP, EP, VPP, schedule, layer split, ZeRO shard group, a pinned DP) is laid
# out on the model, GPUs and batch; it does not define them. When the assembled scenario
# fails and a change of the split alone makes it valid, the split is changed: first the base
# preset's values the link does not set, then the link's own split keys. The model, system,
# GPU count and batch the link sets are kept (review 2026-11-30: a link naming a 32- or 61-layer
# model on the default preset's pp·vpp = 20 lost its model to Llama 3 70B).

#: Link keys of the split, in the order their messages are worded (a key's warning is checked
#: against the link values of the keys after it: ``tp=3&pp=7`` names 3·7 for tp, 8·7 for pp).
SPLIT_KEYS: tuple[str, ...] = ("tp", "pp", "cp", "ep", "etp", "vpp", "sch", "ls", "dps", "dp")
#: The order changes are tried in (least disruptive first: the layer split, the interleaving,
#: EP and CP before the TP·PP grid).
_SPLIT_SEARCH: tuple[str, ...] = ("ls", "vpp", "sch", "ep", "etp", "cp", "dps", "dp", "tp", "pp")
_PAR_FIELDS = {f.key: f for f in PARALLEL_KEYS}
#: Link keys that depend on the split rather than the other way round (N layers recomputed per
#: pipeline chunk): a value the fitted split cannot hold is refused, the split is not bent to it.
_POST_SPLIT_KEYS: tuple[str, ...] = ("rcl",)
_LINK_COST = 100  # changing a split key the link sets costs more than any number of preset values
#: What a change of one split field costs: the schedule side (layer split, interleaving, ZeRO
#: group) before EP, before the GPU grid (TP, PP, CP), so ``mbs=16`` on the default preset ends
#: 1F1B on the same TP·PP rather than CP 4.
_SPLIT_WEIGHT = {"ls": 1, "sch": 1, "vpp": 1, "dps": 1, "dp": 1, "ep": 2, "etp": 2, "cp": 3, "tp": 3, "pp": 3}


def _par_default(key: str) -> Any:
    from .schema import Parallelism

    try:
        return Parallelism.model_fields[_PAR_FIELDS[key].path[-1]].default
    except Exception:  # noqa: BLE001
        return None


def _split_get(sj: dict, key: str) -> Any:
    """The effective value of a split field (schema default where the scenario leaves it out)."""
    v = _get(sj, _PAR_FIELDS[key].path)
    return _par_default(key) if v is None else v


def _split_put(sj: dict, key: str, value: Any) -> None:
    """Set a split field; None drops it (the schema default: dp derived, all DP ranks shard)."""
    path = _PAR_FIELDS[key].path
    if value is None:
        par = sj.get("parallelism")
        if isinstance(par, dict):
            par.pop(path[-1], None)
    else:
        _set(sj, path, value)


def _split_show(key: str, v: Any) -> str:
    if v is None:
        v = _par_default(key)
    if v is None:
        return {"dp": "derived", "etp": "tp (unset)"}.get(key, "all DP ranks")
    return repr(v) if isinstance(v, str) else str(v)


def _divisors_below(x: Any, most: int = 4) -> list[int]:
    """The largest divisors of ``x`` below it (at most ``most``), 1 always among them."""
    try:
        x = int(x)
    except (TypeError, ValueError, OverflowError):
        return []
    if x <= 1:
        return []
    small = [d for d in range(1, math.isqrt(x) + 1) if x % d == 0]
    divs = sorted({d for s in small for d in (s, x // s)} - {x}, reverse=True)
    return divs[:most - 1] + [1] if len(divs) >= most else divs


def _split_alternatives(key: str, cur: Any, base: Any = None, n_gpus: Any = None) -> list[Any]:
    """Values to try for one split field instead of ``cur``, most alike first: the base value
    (for a link key), then the layer split that allows any PP·VPP, 1F1B or interleaving, the
    divisors of the GPU count nearest ``cur`` (TP, PP, CP), smaller degrees (EP, VPP), the
    derived DP / unsharded ZeRO group."""
    out: list[Any] = []
    if base is not None:
        out.append(base)
    eff_cur = _par_default(key) if cur is None else cur
    if key == "ls":
        out.append("uneven")
    elif key == "sch":
        out.extend(("1f1b", "interleaved"))
    elif key in ("tp", "pp", "cp") and isinstance(n_gpus, int) and not isinstance(n_gpus, bool) \
            and 1 <= n_gpus <= _INT_MAX and isinstance(eff_cur, int) and eff_cur >= 1:
        divs = [d for d in range(1, math.isqrt(n_gpus) + 1) if n_gpus % d == 0]
        divs = sorted({d for x in divs for d in (x, n_gpus // x)} - {eff_cur},
                      key=lambda d: (abs(math.log(d / eff_cur)), d))
        out.extend(divs[:4])
    elif key in ("vpp", "ep", "cp", "tp", "pp"):
        out.extend(_divisors_below(cur))
    elif key in ("dps", "dp", "etp"):
        out.append(None)  # derived DP, all DP ranks shard, expert TP = TP
    seen, res = set(), []
    for v in out:
        e = _par_default(key) if v is None else v
        if e == eff_cur or repr(e) in seen:
            continue
        seen.add(repr(e))
        res.append(v)
    return res


def _names_split_key(key: str, text: str) -> bool:
    """Whether a validation message names the split field of ``key`` ("parallelism.tp", the tp
    of "tp·pp·cp = ...", "schedule = ...")."""
    name = _PAR_FIELDS[key].path[-1]
    return bool(re.search(rf"(?<![\w]){re.escape(name)}(?!\w)", text.replace("·", " ")))


def _split_copy(sj: dict) -> dict:
    """A copy of ``sj`` whose split fields may be changed (the parallelism section is copied, the
    rest shared: validation copies what it reads)."""
    out = dict(sj)
    if isinstance(sj.get("parallelism"), dict):
        out["parallelism"] = dict(sj["parallelism"])
    return out


def _valid(sj: dict) -> bool:
    return _link_errors(sj) is None


def _tp_cap(sj: dict) -> tuple[int, Any] | None:
    """(the system's NVLink domain, the scenario's own TP): the split fitter may move TP to at
    most the domain (the sweep's rule, ``tp ≤ nvlink_domain_size``) and may keep the scenario's
    own TP where that is larger already (a link that asks for TP across nodes keeps it); None
    when the system cannot be read (no cap). Found by review (session 21): with the cap at
    ``max(domain, own TP)`` a tampered ``tp=1e3&gbs=511`` raised it to 1,000 and TP 64 was fitted;
    before any cap, ``?p=default&gbs=511`` on 1,024 GPUs (odd, so DP must be 1) fitted TP 64 ·
    PP 16 across eight DGX nodes, 689 days, with only a warning, while the Explore page found no
    split. The batch is now refused instead."""
    try:
        from . import catalog

        from .batch import _fabric

        cl = sj.get("cluster") or {}
        system = catalog.resolve_system(cl.get("system"))
        acc = catalog.resolve_accelerator(cl.get("accelerator") or system.accelerator)
        dom = int(_fabric(system, acc)[0])  # an accelerator override's own domain, as the sweep's (review 48c)
    except Exception:  # noqa: BLE001 - an unreadable system: the schema reports it
        return None
    return dom, _get(sj, _PAR_FIELDS["tp"].path)


def _within_cap(sj: dict, cap: tuple[int, Any] | None) -> bool:
    tp = _split_get(sj, "tp")
    return cap is None or not isinstance(tp, int) or tp <= cap[0] or tp == cap[1]


def _plain_start(sj: dict, cap: tuple[int, Any] | None = None) -> dict | None:
    """The scenario on the first plain split (planner.sweep.plain_splits: TP dividing the heads
    and GPUs, PP the GPUs left; no CP/EP/interleaving, 1F1B, uneven layer split, DP derived)
    that validates, with TP at most ``cap`` (:func:`_tp_cap`); None when none does (the fault is
    not in the split)."""
    from .sweep import plain_splits

    for tp, pp in plain_splits(sj, limit=100):
        if cap is not None and tp > cap[0] and tp != cap[1]:
            continue
        cand = _split_copy(sj)
        for key, v in (("tp", tp), ("pp", pp), ("cp", 1), ("ep", 1), ("etp", None), ("vpp", 1), ("sch", "1f1b"),
                       ("ls", "uneven"), ("dps", None), ("dp", None)):
            _split_put(cand, key, v)
        if _valid(cand):
            return cand
    return None


def _fit_split(sj: dict, link_split: Mapping[str, Any], bases: Mapping[str, Any],
               post_split: Any = ()) -> dict | None:
    """``sj`` with its split changed so it validates, or None when no split does.

    ``post_split``: link keys laid out on the split (``rcl``): left out while the split is
    fitted and put back after; the result may then fail on them alone (the caller refuses them).

    ``link_split``: the split keys the link sets (key -> link value), changed only when the
    base preset's values cannot be; ``bases``: key -> the base preset's value of a link key.
    Tries one field, then two (fewest link keys first), then rebuilds from a plain split and
    puts back, one at a time, the link's values and then the preset's."""
    try:
        # Keys laid out on the split (recompute N layers per chunk) follow it, never drive it.
        post = {k: _get(sj, _PAR_FIELDS[k].path) for k in _POST_SPLIT_KEYS if k in post_split}
        if post:
            sj = _split_copy(sj)
            for k in post:
                _split_put(sj, k, None)
        fit = sj if _valid(sj) else _fit_split_only(sj, link_split, bases)
        if fit is None or not post:
            return fit
        fit = _split_copy(fit)
        for k, v in post.items():
            _split_put(fit, k, v)
        return fit
    except Exception:  # noqa: BLE001 - a link must never raise
        return None


def _fit_split_only(sj: dict, link_split: Mapping[str, Any], bases: Mapping[str, Any],
                    frozen: Mapping[str, Any] | None = None) -> dict | None:
    """See :func:`_fit_split`. ``frozen``: split keys held at the given values (never changed;
    None when the split cannot fit with them)."""
    frozen = dict(frozen or {})
    cap = _tp_cap(sj)

    def holds(s: dict) -> bool:
        return all(_split_get(s, k) == (_par_default(k) if v is None else v) for k, v in frozen.items())

    def fits(s: dict) -> bool:  # valid, with TP within the cap (_tp_cap)
        return _within_cap(s, cap) and _valid(s)

    try:
        if "dp" not in link_split and "dp" not in frozen and _get(sj, _PAR_FIELDS["dp"].path) is not None:
            sj = _split_copy(sj)  # a preset's pinned DP follows the split (derived, as the page shows it)
            _split_put(sj, "dp", None)
            if fits(sj):
                return sj
        start = _plain_start(sj, cap)
        if start is None:
            return None
        n_gpus = _get(sj, ("cluster", "n_gpus"))
        # no CP > 1 invented where flash attention is off: no framework runs materialised-score
        # attention under CP, and the sweep offers none (review 24: a GPT-3 link with gbs 24 was
        # fitted to CP 2 with flash off)
        no_cp = _get(sj, ("parallelism", "flash_attention")) is False

        def offered(key: str, v: Any) -> bool:
            return not (no_cp and key == "cp" and v is not None and v > 1)

        singles = []
        for key in _SPLIT_SEARCH:
            if key in frozen:
                continue
            cur = _get(sj, _PAR_FIELDS[key].path)
            is_link = key in link_split
            base = bases.get(key) if is_link else None
            for v in _split_alternatives(key, cur, base, n_gpus):
                if not offered(key, v):
                    continue
                singles.append(((_LINK_COST if is_link else 0) + _SPLIT_WEIGHT[key], key, v))
        cands = [((c,), ((k, v),)) for c, k, v in singles]
        for i, (ci, ki, vi) in enumerate(singles):
            for cj, kj, vj in singles[i + 1:]:
                if kj != ki:
                    cands.append(((ci, cj), ((ki, vi), (kj, vj))))
        cands.sort(key=lambda c: sum(c[0]))  # stable: the search order within a cost
        for _cost, changes in cands:
            trial = _split_copy(sj)
            for k, v in changes:
                _split_put(trial, k, v)
            if fits(trial):
                return trial
        # Rebuild: from the plain split, put back the link's values, then the preset's.
        cand = start
        targets = [(k, _get(sj, _PAR_FIELDS[k].path)) for k in _link_first(link_split)]
        for _round in range(3):
            changed = False
            for key, want in targets:
                have = _split_get(cand, key)
                alts = [] if key in frozen else [v for v in _split_alternatives(key, want, None, n_gpus)
                                                 if offered(key, v)]
                for v in [want] + alts:
                    if (_par_default(key) if v is None else v) == have:
                        break
                    trial = _split_copy(cand)
                    _split_put(trial, key, v)
                    if fits(trial):
                        cand, changed = trial, True
                        break
                    # a link's VPP needs the interleaved schedule (and maybe an uneven layer split):
                    # values the link did not set follow it (found by review: vpp=3 on a DualPipe
                    # preset was refused for the preset's schedule)
                    if key == "vpp" and key in link_split and v == want:
                        hit = next((t2 for t2 in _vpp_follow(trial, link_split) if fits(t2)), None)
                        if hit is not None:
                            cand, changed = hit, True
                            break
            if not changed:
                break
        return cand if holds(cand) else None
    except Exception:  # noqa: BLE001 - a link must never raise
        return None


def _vpp_follow(sj: dict, link_split: Mapping[str, Any]) -> list[dict]:
    """``sj`` (with the link's VPP above 1) with the values that VPP needs and the link does not
    set following it: the interleaved schedule, then also an uneven layer split. Empty when the
    VPP is 1 or the link sets the schedule."""
    if (_split_get(sj, "vpp") or 1) <= 1 or "sch" in link_split:
        return []
    extras = [[("sch", "interleaved")]]
    if "ls" not in link_split:
        extras.append([("sch", "interleaved"), ("ls", "uneven")])
    out = []
    for ex in extras:
        t2 = _split_copy(sj)
        for k2, v2 in ex:
            _split_put(t2, k2, v2)
        out.append(t2)
    return out


def _restore_link_split(sj: dict, link_split: Mapping[str, Any], bases: Mapping[str, Any]) -> dict:
    """Put back each link split key the fitted ``sj`` changed where the split still fits with it
    and with every other link split key as it is now, the base preset's values (the link does not
    set them) following: ``pp=7&vpp=3`` on 2,048 GPUs refuses pp (7 does not divide 2,048) and
    keeps vpp 3 on the preset's PP 16 with the interleaved schedule (review 2026-11-30: the pair
    search reverted both link keys, and vpp was then blamed on the preset's DualPipe schedule)."""
    for k in _link_first(link_split):
        if k not in link_split:
            break
        want = link_split[k]
        if _split_get(sj, k) == (_par_default(k) if want is None else want):
            continue
        trial = _split_copy(sj)
        _split_put(trial, k, want)
        if _valid(trial):
            sj = trial
            continue
        frozen = {j: _split_get(trial, j) for j in link_split}
        try:
            fit = _fit_split_only(trial, link_split, bases, frozen)
        except Exception:  # noqa: BLE001 - a link must never raise
            fit = None
        if fit is not None and _valid(fit):
            sj = fit
    return sj


def _link_first(link_split: Mapping[str, Any]) -> list[str]:
    return [k for k in SPLIT_KEYS if k in link_split] + [k for k in SPLIT_KEYS if k not in link_split]


def _first_error(sj: dict) -> str | None:
    lines = _link_errors(sj)
    return lines[0] if lines else None


def nearest_split(sj: dict) -> tuple[dict, str] | None:
    """The nearest split that makes the scenario ``sj`` (JSON dict) valid, and what it changes.

    The same search a share link's split goes through (:func:`_fit_split`: one field, then two,
    the layer split, interleaving, schedule, EP and CP before TP and PP; then a rebuild from a
    plain split), with every changed field that the result accepts after all put back. Returns
    ``(scenario, "vpp 5 → 1")`` with the changed fields by their parallelism field names, or None
    when ``sj`` is valid already, no split makes it valid (the fault is elsewhere: the batch, the
    GPU count) or the nearest one changes more than two fields (a rebuilt grid is no suggestion).
    Used by the dashboard to name a split that fits an imported model without changing the one
    the user set."""
    try:
        if _valid(sj):
            return None
        ref = {k: _get(sj, _PAR_FIELDS[k].path) for k in SPLIT_KEYS}
        fit = _fit_split(sj, {}, {})
        if fit is None or not _valid(fit):
            return None
        fit, _ = _split_warnings(fit, ref, {}, {}, "")  # puts back each value the fit accepts
        diff = [k for k in SPLIT_KEYS if _split_get(fit, k) != (_par_default(k) if ref[k] is None else ref[k])
                and k != "dp"]
        if not diff or len(diff) > 2:  # a rebuilt grid (TP 64 for a global batch of 7) is no suggestion
            return None
        return fit, ", ".join(f"{_PAR_FIELDS[k].path[-1]} {_split_show(k, ref[k])} → "
                              f"{_split_show(k, _get(fit, _PAR_FIELDS[k].path))}" for k in diff)
    except Exception:  # noqa: BLE001 - a suggestion must never raise
        return None


def _split_warnings(sj: dict, ref: Mapping[str, Any], link_split: Mapping[str, Any],
                    bases: Mapping[str, Any], pid: str) -> tuple[dict, list[str]]:
    """Put back every split value the valid ``sj`` accepts after all, then one warning per link
    split key changed (checked against the link values of the keys after it) and one for the
    base preset's values changed. ``ref``: each split key's value before fitting."""
    def changed(s: dict) -> list[str]:
        return [k for k in _link_first(link_split)
                if _split_get(s, k) != (_par_default(k) if ref[k] is None else ref[k])
                and (k != "dp" or k in link_split)]

    for _round in range(len(SPLIT_KEYS)):
        again = False
        for k in changed(sj):
            trial = _split_copy(sj)
            _split_put(trial, k, ref[k])
            if _valid(trial):
                sj, again = trial, True
        if not again:
            break
    out = []
    diff = changed(sj)
    link_diff = [k for k in SPLIT_KEYS if k in diff and k in link_split]
    for k in link_diff:
        # the link value on the split in use, with the link's values of the split keys after it
        # (tp=3&pp=7: "3·7·2", the scenario the link asks for), else alone; the first message
        # that names the key's field
        later = [j for j in link_diff if SPLIT_KEYS.index(j) > SPLIT_KEYS.index(k)]
        reasons = []
        for keys in ([k, *later], [k]):
            trial = _split_copy(sj)
            for j in keys:
                _split_put(trial, j, ref[j])
            # the values the link's VPP needs and the link does not set would follow it: the
            # reason is what is left then (vpp=3 on PP 1 is not refused for the 1F1B schedule)
            follow = [e for t in _vpp_follow(trial, link_split) if (e := _first_error(t)) is not None]
            if k == "vpp" and follow:
                reasons.append(follow[-1])
            elif (r := _first_error(trial)) is not None:
                reasons.append(r)
        reason = next((r for r in reasons if _names_split_key(k, r)), reasons[-1] if reasons else
                      "the split did not fit the rest of the link")
        # an earlier link split key the split could not take, that this key's reason names:
        # this key is dropped because of it (pp=7 refused: vpp=3 has no pipeline to interleave)
        cause = None if _names_split_key(k, reason) else next(
            (j for j in link_diff if SPLIT_KEYS.index(j) < SPLIT_KEYS.index(k) and _names_split_key(j, reason)), None)
        base = bases.get(k)
        now = _get(sj, _PAR_FIELDS[k].path)
        if cause is not None:
            c_now, c_base = _split_get(sj, cause), bases.get(cause)
            how = ("was refused" if c_now == (_par_default(cause) if c_base is None else c_base)
                   else "was changed")
            out.append(f"{k}={_split_show(k, ref[k])} ({_path_text(_PAR_FIELDS[k].path)}): dropped, {k} is "
                       f"{_split_show(k, now)}, because the link's {cause}={_split_show(cause, ref[cause])} {how} "
                       f"({cause} is {_split_show(cause, c_now)}): {reason}")
        elif _split_get(sj, k) == (_par_default(k) if base is None else base):
            out.append(f"{k}: refused, {reason}; kept the base value {k}={_split_show(k, now)}")
        else:
            out.append(f"{k}={_split_show(k, ref[k])} ({_path_text(_PAR_FIELDS[k].path)}): changed to "
                       f"{_split_show(k, _get(sj, _PAR_FIELDS[k].path))} so the split fits the rest of the link; "
                       f"{reason}")
    preset_diff = [k for k in SPLIT_KEYS if k in diff and k not in link_split]
    if preset_diff:
        trial = _split_copy(sj)
        for k in preset_diff:
            _split_put(trial, k, ref[k])
        reason = _first_error(trial) or "the split did not fit the link"
        # several values changed for different reasons: each one's (the preset's value alone put back)
        own = {}
        for k in preset_diff:
            one = _split_copy(sj)
            _split_put(one, k, ref[k])
            own[k] = _first_error(one)
        if len(preset_diff) > 1 and all(own.values()) and len(set(own.values())) > 1:
            reason = "; ".join(f"{k}: {own[k]}" for k in preset_diff)
        what = ", ".join(f"{k}={_split_show(k, ref[k])} → {_split_show(k, _get(sj, _PAR_FIELDS[k].path))}"
                         for k in preset_diff)
        out.append(f"{what}: the base preset '{pid}' sets {'these' if len(preset_diff) > 1 else 'this'}, the link "
                   f"does not; changed so the split fits the link's model, GPUs and batch; {reason}")
    return sj, out


def _repair(sj: dict, applied: dict, warnings: list[str], pid: str = DEFAULT_PRESET) -> dict:
    """Make the assembled scenario valid, keeping what the link sets where it can.

    1. The split (:data:`SPLIT_KEYS`) is fitted to the rest of the scenario: the base preset's
       values first, then the link's own split keys (:func:`_fit_split`); ``rcl`` follows the
       fitted split and is refused when it does not fit it.
    2. Only when no split fits, one of the link's other keys is reverted to its base value: the
       first whose base value alone lets the split fit, trying the batch and the other keys
       before ``n``, the accelerator, the system and the model (:func:`_revert_one`); else the
       key the validation message names (:func:`_blame`). Then 1. again.
    3. Every reverted key whose link value the repaired scenario accepts after all (with the
       split fitted) is put back; every changed split value the result accepts is put back.
    4. Warnings are worded on the final scenario: a refused key's message is its link value
       checked against the values in use (and the link's later split keys), never an
       intermediate state the page does not show (review 2026-11-30: ``n=1e3`` quoted the
       preset's batch, not the link's).
    """
    if "etp" in applied and _link_errors(sj) is not None:
        # expert TP means nothing for a dense model: a stray etp is dropped, not fitted (as a split
        # key it would move the preset's TP to its value: ?p=default&etp=2 ran Llama 3 70B at TP 2,
        # out of memory; review 38)
        try:
            from . import catalog
            dense = catalog.resolve_model(sj.get("model")).moe is None
        except Exception:  # noqa: BLE001 - a model the link got wrong is the model key's warning
            dense = False
        etp_path = applied["etp"][0]
        if dense and _get(sj, etp_path) not in (None, _get(sj, _PAR_FIELDS["tp"].path)):
            warnings.append(f"etp: dropped: expert tensor parallelism applies to MoE models only, and the "
                            f"model is dense (its experts' TP would be {_get(sj, etp_path)}); TP is kept")
            _set(sj, etp_path, None)
            applied.pop("etp")
    link_keys = set(applied)  # every key the link set (before those that changed nothing are dropped)
    link_split = {k: _get(sj, applied[k][0]) for k in SPLIT_KEYS if k in applied}
    bases = {k: applied[k][1] for k in link_split}
    ref = {k: _get(sj, _PAR_FIELDS[k].path) for k in SPLIT_KEYS}
    # Only keys that changed the base can be to blame.
    applied = {k: v for k, v in applied.items() if _get(sj, v[0]) != v[1]}
    post = tuple(k for k in _POST_SPLIT_KEYS if k in applied)
    refused: list[tuple[str, tuple, Any]] = []  # key, path, the link's value

    def fitted(s: dict) -> dict | None:
        if _valid(s):
            return s
        f = _fit_split(s, link_split, bases, post)
        return f if f is not None and _valid(f) else None

    for _ in range(len(applied) + 1):
        lines = _link_errors(sj)
        if lines is None:
            break
        fit = _fit_split(sj, link_split, bases, post)
        if fit is not None and _valid(fit):
            sj = fit
            break
        if fit is not None:  # the split fits; what is laid out on it does not
            sj, lines = fit, _link_errors(fit) or lines
        key = _revert_one(sj, {k: v for k, v in applied.items() if k not in SPLIT_KEYS}, applied, fitted)
        if key is None:
            key = _blame(sj, lines, {k: v for k, v in applied.items() if k not in SPLIT_KEYS}, applied, fitted)
        if key is None:
            key = _blame(sj, lines, applied, applied, fitted)
        if key is None:
            warnings.extend(f"link: {ln}" for ln in lines)
            return sj
        path, base = applied.pop(key)
        refused.append((key, path, copy.deepcopy(_get(sj, path))))
        if key in link_split:  # fitted from its base value from now on
            ref[key] = base
            link_split.pop(key)
        _revert(sj, key, path, base, applied)
        if key == "m":  # the architecture keys went with the custom model (their own warning says so)
            for k in [k for k in applied if k in _MODEL_KEY_SET]:
                applied.pop(k)
                refused.append((k, (), None))
    if not _valid(sj):
        return sj
    # keep what the repaired scenario accepts after all (with the split fitted to it)
    kept_back = set()
    for key, path, value in reversed(refused):
        if key in SPLIT_KEYS or not path or (path[0] == "model" and len(path) > 1
                                               and not isinstance(sj.get("model"), dict)):
            continue
        trial = copy.deepcopy(sj)
        _set(trial, path, copy.deepcopy(value))
        trial = fitted(trial)
        if trial is not None:
            sj = trial
            kept_back.add(key)
    sj = _restore_link_split(sj, link_split, bases)
    sj, split_notes = _split_warnings(sj, ref, link_split, bases, pid)
    for key, path, value in refused:
        if key in kept_back:
            continue
        if not path or (path[0] == "model" and len(path) > 1 and not isinstance(sj.get("model"), dict)):
            warnings.append(f"{key}: dropped, because the link's m=custom was refused (see m); the model is "
                            "the base preset's")
            continue
        trial = copy.deepcopy(sj)
        _set(trial, path, copy.deepcopy(value))
        reason = _first_error(trial) or "the rest of the link did not fit it"
        hint = ""
        if "training.precision" in reason and "prec" not in link_keys:  # the preset's precision, not the link's
            hint = " (the precision is the base preset's: add prec=fp16, or another the part supports, to the link)"
        elif key in _MODEL_KEY_SET:
            # another architecture field in the reason that the link does not set: the base model's
            others = [f for f in MODEL_KEYS if f.key != key and f.key not in link_keys
                      and re.search(rf"(?<![\w.]){re.escape(f.path[-1])} = ", reason)]
            if others:
                hint = (" (the base model's " + ", ".join(
                    f"{_path_text(('model',) + f.path)} = {_get(sj, ('model',) + f.path)}" for f in others)
                        + ": the link does not set " + ("it" if len(others) == 1 else "them") + "; add "
                        + ", ".join(f"{f.key}=…" for f in others) + " to change it)")
        shown = f"{key}={_show(_fmt_value(_MODEL_FIELD[key], value) or 'none')} ({_path_text(path)})" \
            if key in _MODEL_KEY_SET and key in _MODEL_FIELD else key
        warnings.append(f"{shown}: refused, {reason}; kept the base value{hint}")
    warnings.extend(split_notes)
    return sj


#: The keys a link's scenario is built on, most basic first: when the link's keys cannot all be
#: kept, the first of the others, then GPUs, system, model, that alone is in the way is refused.
_PRIMARY_KEYS: tuple[str, ...] = ("m", "sysj", "sys", "accj", "acc", "n")


def _revert_one(sj: dict, pool: dict, applied: dict, fitted) -> str | None:
    """The link key of ``pool`` whose base value alone makes the scenario valid (with the split
    fitted): the link's other keys first, then n, the accelerator, the system, the model last."""
    arch = [k for k in pool if k in _MODEL_KEY_SET]
    order = ([k for k in pool if k not in _PRIMARY_KEYS and k not in _MODEL_KEY_SET]
             + [k for k in reversed(_PRIMARY_KEYS) if k in pool and k != "m"] + arch + (["m"] if "m" in pool else []))
    for key in order:
        path, base = pool[key]
        trial = copy.deepcopy(sj)
        _revert(trial, key, path, base, applied)
        if fitted(trial) is not None:
            return key
    return None


def _blame(sj: dict, lines: list[str], pool: dict, applied: dict, fitted) -> str | None:
    """The link key to revert for validation error ``lines``: the one of ``pool`` whose field
    path appears first in the message; a key named only by the last part of its path ("offload_
    grads need ...", the pp of "tp·pp·cp = ...") only when no key is named in full (review:
    n=1&pp=2 blamed the valid pp before n); else the first whose base value makes the scenario
    valid (with the split fitted)."""
    text = " ".join(lines)
    best = fallback = None
    for key, (path, _base) in pool.items():
        names = [_path_text(path)]
        if key == "m":
            names.append("model.")
        if key in ("ck", "ckj"):
            names.append("checkpoint.")
        # "training.precision = 'bf16' is not supported by <accelerator>": a new system or
        # accelerator without that precision's units is to blame unless the link set it.
        if key in ("sys", "acc") and "prec" not in applied:
            names.append("is not supported by")
        # Messages such as "parallelism: tp·pp·cp = 8·4·1" name the field by its last part.
        if path[0] == "parallelism":
            names.append(f" {path[-1]}·")
            names.append(f"·{path[-1]} ")
        # a whole name: "parallelism.recompute" is not "parallelism.recompute_layers"
        hits = [m.start() for n in names
                for m in [re.search(re.escape(n) + (r"(?!\w)" if n[-1:].isalnum() or n[-1:] == "_" else ""), text)]
                if m]
        pos = min(hits, default=-1)
        if pos >= 0 and (best is None or pos < best[0]):
            best = (pos, key)
        if not hits and len(path) > 1 and (m := re.search(rf"(?<![\w.]){re.escape(path[-1])}(?!\w)", text)):
            if fallback is None or m.start() < fallback[0]:
                fallback = (m.start(), key)
    best = best or fallback
    if best is not None:
        return best[1]
    for key, (path, base) in pool.items():  # no key named: the first whose base value alone fits
        trial = copy.deepcopy(sj)
        _revert(trial, key, path, base, applied)
        if fitted(trial) is not None:
            return key
    return None


# --------------------------------------------------------------------------------------
# Helpers for links pasted as text and for several scenarios in one URL (Compare page)
# --------------------------------------------------------------------------------------


def parse_link(text: str) -> dict[str, str | list[str]]:
    """Query parameters of a pasted link or bare query string (``?m=...&n=...``). Never raises.

    A key given more than once with different values maps to the list of its values, so that
    :func:`params_to_scenario` warns (and uses the last) rather than the link silently losing one."""
    t = (text or "").strip()
    if not t:
        return {}
    try:
        # what follows a '#' is the address's fragment (a heading's anchor, #plan-a-training-run), never
        # part of the query, as a browser reads it (found by review 15f: 'localhost:8501/?n=512#x' read
        # n as '512#x', and '#x?n=512', with no query, as n=512); a '#' in a value is written %23
        t = t.split("#", 1)[0]
        if "?" not in t and "/" in t.split("=", 1)[0]:
            # an address with no query ('http://localhost:8501/p=default&n=512': the '?' left out):
            # no parameters, not the key 'http://localhost:8501/p' (review 24)
            return {}
        if "?" in t:
            t = urlsplit(t).query if "://" in t else t.split("?", 1)[1]
        out: dict[str, list[str]] = {}
        for k, v in parse_qsl(t, keep_blank_values=True):
            out.setdefault(k, []).append(v)
        return {k: _collapse(v) for k, v in out.items()}
    except Exception:
        return {}


def _collapse(values: Any) -> str | list[str]:
    """One value for a key given once (or always with the same value), else the list."""
    if isinstance(values, (list, tuple)):
        vals = [v if isinstance(v, str) else str(v) for v in values]
        return vals[-1] if len(set(vals)) == 1 else (vals or "")
    return values if isinstance(values, str) else str(values)


def last_value(v: Any) -> str | None:
    """The value a link uses for a key read by :func:`parse_link` / :func:`unprefix_params` (the
    last of repeated values); None for None."""
    return None if v is None else _last(v)


def is_link_key(key: Any) -> bool:
    """Whether ``key`` is one of this app's share-link keys, bare or with a scenario slot's
    ``N.`` prefix (``tp``, ``2.tp``)."""
    k = str(key)
    return k in ALL_KEYS or (len(k) > 2 and k[0] in "123456789" and k[1] == "." and k[2:] in ALL_KEYS)


def stray_slot_keys(params: Mapping[str, Any], n_slots: int) -> list[str]:
    """Warnings for keys shaped like a scenario slot's (``N.key``) whose prefix names no slot
    ``1.`` … ``n_slots.`` (Compare page: ``5.tp=3`` with four slots would be ignored silently)."""
    ok = tuple(f"{i}." for i in range(1, n_slots + 1))
    out = []
    for k in params:
        k = str(k)
        if "." in k and not k.startswith(ok):
            out.append(f"{_show(k)}: no scenario slot '{k.split('.', 1)[0]}' (allowed prefixes 1. to {n_slots}.); "
                       "ignored")
    return out


#: Most warnings about one link a page shows, one box each; the rest are counted in one more box (as
#: ``planner --link`` lists at most 20 lines, ``cli.LINK_LINES_MAX``).
LINK_WARNINGS_MAX = 20


def capped_warnings(lines: Sequence[str], limit: int = LINK_WARNINGS_MAX) -> list[str]:
    """``lines`` as a page shows them: the first ``limit``, then one line counting the rest. Found by
    review 17b: a link of 200 unknown keys drew 200 warning boxes above the numbers."""
    lines = list(lines)
    if len(lines) <= limit:
        return lines
    more = len(lines) - limit
    return lines[:limit] + [f"… and {more:,} more problem{'s' if more > 1 else ''} in the link, not listed "
                            "(unknown or refused keys like those above)"]


#: The keys of their own that the Compare and Validate pages read (neither shows one scenario).
COMPARE_PAGE_KEYS = ("c_n", "c_src1", "c_src2", "c_src3", "c_src4")
VALIDATE_PAGE_KEYS = ("v_set", "v_metric", "v_group", "v_run")


#: A page's own whole-number link value: ASCII digits, an optional sign, nothing else (``int()``
#: also reads ``1_000`` and other scripts' digits, ``٨``; review 39: ``pl_mct=1_000`` ran 1,000).
_PAGE_INT_RE = re.compile(r"[+-]?[0-9]+")


def page_int(text: Any, lo: int, hi: int) -> int:
    """A page's own whole-number link value (``pl_mct``, ``ex_top`` ...) in ``[lo, hi]``, as every
    page and the CLI read it; ValueError for anything else (surrounding blanks are allowed)."""
    t = str(text).strip()
    if not _PAGE_INT_RE.fullmatch(t):
        raise ValueError(text)
    x = int(t)
    if not lo <= x <= hi:
        raise ValueError(text)
    return x


def unknown_own_page_keys(keys, page: str, own: Sequence[str]) -> list[str]:
    """Warnings for the keys of a Plan (``page="plan"``, prefix ``pl_``) or Explore (``"explore"``,
    ``ex_``) link that carry the page's prefix but are none of its keys (``pl_mtc`` for ``pl_mct``),
    as :func:`foreign_page_keys` warns on Compare and Validate (found by review 39: they were
    dropped without a word, so a typo ran the defaults). Never raises."""
    prefix = {"plan": "pl_", "explore": "ex_"}[page]
    name = {"plan": "Plan", "explore": "Explore"}[page]
    return [f"{_show(str(k))}: not a key of the {name} page (allowed: {', '.join(own)}); ignored"
            for k in keys if str(k).startswith(prefix) and str(k) not in own]


def foreign_page_keys(params: Mapping[str, Any], page: str) -> list[str]:
    """Warnings for the keys of a Compare (``page="compare"``) or Validate (``"validate"``) page
    link that the page does not read, so none is ignored silently, as Plan and Explore warn of an
    unknown key: a scenario key without a slot prefix on Compare (``tp=4``: its slots read
    ``1.tp``), any scenario key on Validate, an unknown key of the page's own prefix (``c_zzz``,
    ``v_x``) and any other unknown key. The other pages' own keys (``pl_*``, ``ex_*``, and on
    Validate ``c_*`` and slot keys) are passed over silently, as Plan and Explore pass over each
    other's; Compare's slot keys are checked by :func:`stray_slot_keys` and each slot's link. Found
    by review 17b: ``/compare?zzz=1`` and ``/validate?p=default&tp=3`` said nothing. Never raises."""
    own = COMPARE_PAGE_KEYS if page == "compare" else VALIDATE_PAGE_KEYS
    own_prefix = "c_" if page == "compare" else "v_"
    name = "Compare" if page == "compare" else "Validate"
    out = []
    for k in params:
        k = str(k)
        if k in own or re.fullmatch(r"[1-9]\..*", k) and page == "compare":
            continue
        if k.startswith(own_prefix):
            out.append(f"{_show(k)}: not a key of the {name} page (allowed: {', '.join(own)}); ignored")
        elif k.startswith(PAGE_PREFIXES) or (page == "validate" and re.fullmatch(r"[1-9]\..*", k)):
            continue  # another page's own key
        elif k in ALL_KEYS and page == "compare":
            out.append(f"{_show(k)}: a scenario key without a slot prefix; this page reads each scenario's "
                       f"keys as 1.{k}, 2.{k}, …; ignored")
        elif k in ALL_KEYS:
            out.append(f"{_show(k)}: a scenario key; the Validate page shows no scenario (open the link on "
                       "Plan); ignored")
        else:
            out.append(f"{_show(k)}: unknown link parameter ignored")
    return out


def prefix_params(params: Mapping[str, str], prefix: str) -> dict[str, str]:
    """``{"tp": "8"}`` -> ``{"a.tp": "8"}`` for prefix ``"a."`` (several scenarios in one URL)."""
    return {f"{prefix}{k}": v for k, v in params.items()}


def unprefix_params(params: Mapping[str, Any], prefix: str) -> dict[str, str | list[str]]:
    """Inverse of :func:`prefix_params`: the keys that start with ``prefix``, prefix removed (a key
    repeated with different values keeps the list, as :func:`parse_link` does)."""
    return {k[len(prefix):]: _collapse(v) for k, v in params.items() if isinstance(k, str) and k.startswith(prefix)}
