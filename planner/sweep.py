"""Explore every split: enumerate the valid parallel layouts of a scenario and evaluate them
all in one vectorised pass through the engine (:func:`planner.engine.run_batch`).

Enumeration
-----------
A split is (TP, PP, CP, EP, DP, VPP, micro-batch size, schedule, ZeRO stage, recompute mode,
offload target), with sequence parallelism on whenever TP > 1 and DP derived as
``n_gpus / (tp·pp·cp)``. Small candidate lists are built per dimension (divisors, powers of
two); their product is formed with ``np.meshgrid`` / ``np.repeat`` and filtered with boolean
masks. There is no Python loop over configurations.

The validity rules are those of :meth:`planner.schema.Scenario._cross_checks`:

* ``tp·pp·cp`` divides ``n_gpus`` (DP derived; never rounded);
* ``tp`` divides ``n_heads``; ``n_kv_heads`` divisible by ``tp`` (sharded) or ``tp``
  divisible by ``n_kv_heads`` (replicated);
* ``tp <= nvlink_domain_size`` unless ``allow_tp_beyond_nvlink=True`` (a sweep rule, not a
  schema rule: Megatron-style TP across the scale-out network is almost never worth it);
* ``cp`` divides ``seq_len`` (``cp`` a power of two up to ``cp_max``); ``cp = 1`` where flash
  attention is off (no framework runs materialised-score attention under CP: review 24);
* MoE: ``ep`` divides ``n_experts`` and ``dp·cp``; dense: ``ep = 1``;
* ``micro_batch_size·dp`` divides ``global_batch_size``;
* ``vpp > 1`` only with the interleaved schedule, which needs ``pp > 1`` and a number of
  micro-batches ``m = B/(b·dp)`` that is a multiple of ``pp``;
* ``pp·vpp <= n_layers``; layers must divide ``pp·vpp`` unless an uneven split is allowed
  (then ``uneven_layers`` is set, as ``layer_split = "uneven"`` does in the schema);
* NVMe offload needs local NVMe on the system.

Redundant rows are never generated: with ``pp = 1`` only the ``1f1b`` schedule is kept (the
pipeline schedule has no effect without a pipeline), and interleaving is enumerated with
``vpp >= 2`` only (``interleaved`` with ``vpp = 1`` is 1F1B).

Layout of the row space
-----------------------
The product is built in two levels so that sweeps larger than memory stream in chunks with
the same result:

* the *structural* level (system × cluster size × TP × PP × CP × EP × micro-batch size ×
  schedule/VPP), materialised and masked (small: 10^3–10^5 rows);
* the *inner* level (ZeRO stage × recompute × offload), identical for every structural row.

Row ``r`` of the sweep is structural row ``r // n_inner`` with inner combination
``r % n_inner``; a chunk of rows is decoded with integer arithmetic, its batch columns are
the base scenario's scalars broadcast (``np.broadcast_to``, no copy) plus the split columns,
and it goes through :func:`planner.engine.run_batch` exactly as ``planner.evaluate`` would.

Feasibility and ranking
-----------------------
Rows that pass the rules are evaluated; a row is infeasible when its memory does not fit
(``fits`` False: ``"OOM on stage k"``, k the most loaded pipeline stage, 0-based, from
``mem_worst_stage`` when the memory stage gives it) or the host memory is exceeded
(``host_fits`` False). Reasons are small int codes internally (:data:`REASONS`), strings only
in the returned table. The table is ranked by one of :data:`OBJECTIVES` and carries two Pareto
flags: (time to train, cost) both minimised, and (tokens/s maximised, HBM headroom =
``hbm_usable_bytes − mem_total_bytes`` maximised).
"""

from __future__ import annotations

import contextlib
import copy
import math
from dataclasses import dataclass, field
from collections.abc import Iterable
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from . import batch as _batch
from . import catalog
from . import engine as _engine
from .batch import OFFLOAD, RECOMPUTE, SCHEDULES, Batch
from .timing import ep_overlap_possible
from .schema import InputError, is_whole_number, precision_error, replicas_error
from .engine import RESULT_COLUMNS, run_batch
from .schema import Scenario, validate_scenario

#: Ranking objectives, by name: time_to_train (days, minimised), cost (USD, minimised),
#: goodput_tokens_per_s (tokens_per_s·goodput, maximised), mfu (maximised).
OBJECTIVES: tuple[str, ...] = ("time_to_train", "cost", "goodput_tokens_per_s", "mfu")

#: Named search spaces (options of :func:`build_space`): the Explore page's "Search space" box and
#: ``planner sweep``'s ``--link`` of an Explore link (``ex_space``) read this one definition.
SEARCH_SPACES: dict[str, dict] = {
    "focused": dict(zero_stages=(1,), recompute=("selective", "full"), offload=("none",),
                    schedules=("1f1b", "interleaved"), cp_max=4, vpp_max=4, micro_batch_max=4),
    # every schedule: "full" is a superset of the default space, which adds the scenario's own (GPipe
    # too; review 48e: a GPipe scenario's own schedule dropped out of "full")
    "full": dict(recompute=("none", "selective", "full", "op_sac"),
                 schedules=("1f1b", "interleaved", "gpipe", "zero_bubble", "dualpipe")),
}
#: The Explore page's link keys, their defaults (what the page shows when a key is absent) and
#: ranges; the page and ``planner sweep --link`` read them.
EXPLORE_DEFAULTS: dict[str, str] = {"ex_obj": "time_to_train", "ex_space": "focused", "ex_top": "20",
                                    "ex_head": "0", "ex_ties": "0"}
#: Every link key of the Explore page: its controls above and "Colour by" (charts only;
#: planner.share.EXPLORE_COLOR_CHOICES).
EXPLORE_PAGE_KEYS: tuple[str, ...] = ("ex_obj", "ex_space", "ex_top", "ex_color", "ex_head", "ex_ties")
EXPLORE_TOP_MAX = 500
#: Most HBM the Explore page lets a sweep keep free, in % of the usable HBM.
EXPLORE_HEADROOM_MAX_PCT = 50

#: Default search space (all may be overridden through ``**space_options`` of :func:`sweep`).
DEFAULT_ZERO_STAGES: tuple[int, ...] = (0, 1, 2, 3)
DEFAULT_RECOMPUTE: tuple[str, ...] = ("none", "selective", "full")
DEFAULT_OFFLOAD: tuple[str, ...] = ("none", "cpu")
DEFAULT_SCHEDULES: tuple[str, ...] = ("1f1b", "interleaved", "zero_bubble")
#: Largest context-parallel degree tried by default (powers of two 1, 2, 4, ... up to this).
DEFAULT_CP_MAX = 16
#: Largest virtual-pipeline degree tried by default (powers of two 2, 4, ... up to this).
DEFAULT_VPP_MAX = 16

# ---- reason codes -------------------------------------------------------------------------
R_OK = 0
R_GPUS = 1
R_HEADS = 2
R_KV = 3
R_NVLINK = 4
R_CP_SEQ = 5
R_EP_EXPERTS = 6
R_EP_DP = 7
R_BATCH = 8
R_STAGES = 9
R_LAYERS = 10
R_INTERLEAVE = 11
R_NVME = 12
R_HOST = 13
R_NOT_EVALUATED = 14
R_DUALPIPE = 15
R_CKPT_NVME = 16
R_MEM_TIGHT = 17
R_HEADROOM = 18
R_CP_FLASH = 19
R_SP_SEQ = 20
#: Most (system, GPU count) × tp × pp × cp × ep layouts, and layouts × micro-batch sizes, a space may
#: build before its rules filter them (review 48e: unbounded candidate lists were killed for memory).
SPACE_ROWS_MAX = 50_000_000

#: Codes from R_OOM on mean "OOM on stage (code − R_OOM)".
R_OOM = 32

#: Reason strings by code (codes >= R_OOM are "OOM on stage k"; see :func:`reason_strings`).
REASONS: tuple[str, ...] = (
    "",
    "tp·pp·cp does not divide n_gpus",
    "tp does not divide n_heads",
    "tp incompatible with n_kv_heads (neither divides the other)",
    "group larger than the NVLink domain (tp > nvlink_domain_size)",
    "cp does not divide seq_len (or 2·cp does not, with cp > 1: causal load balancing's 2·cp chunks)",
    "ep does not divide n_experts",
    "ep does not divide dp·cp (with parallelism.etp set: etp·ep does not divide tp·cp·dp)",
    "batch does not divide (global_batch_size % (micro_batch_size·dp))",
    "pp·vpp exceeds n_layers",
    "n_layers not divisible by pp·vpp (uneven split not allowed)",
    "interleaved schedule needs micro-batches to be a multiple of pp",
    "nvme offload needs local NVMe",
    "host memory exceeded",
    "not evaluated (non-finite result)",
    "dualpipe needs an even pp and an even number of micro-batches, at least 2·pp",
    "checkpoint tier local_nvme needs local NVMe (the system has none)",
    "memory rule 'conservative': model states + activations above 80 % of usable HBM (Fujii et al. 2024)",
    "less HBM left free than min_headroom",
    "cp > 1 needs flash attention (no backend runs materialised-score attention under CP)",
    "sequence parallelism needs tp to divide seq_len / cp (Megatron-LM and TorchTitan refuse it)",
)

#: Columns of the returned table before the result columns.
SPLIT_COLUMNS: tuple[str, ...] = (
    "system", "n_gpus", "tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch_size", "zero_stage",
    "recompute", "schedule", "sequence_parallel", "offload_optimizer",
)
#: Further result columns kept when a stage provides them.
EXTRA_RESULT_COLUMNS: tuple[str, ...] = (
    "hbm_usable_bytes", "mem_headroom_bytes", "mem_worst_stage", "host_mem_per_node_bytes",
    "ckpt_host_mem_per_node_bytes", "host_mem_capacity_per_node_bytes", "host_fits", "host_fits_ckpt",
    "goodput_tokens_per_s",
    # MFU of the GEMM precision's own peak (an FP8 / FP4 split's mfu, of the 16-bit peak, can pass 1)
    "mfu_precision_peak",
    # the cost inputs, so a row's cost and energy can be reproduced (engine.KEY_INPUT_COLUMNS; review 48b)
    "price_per_gpu_hour_usd", "node_power_w", "pue", "utilisation_power_frac", "hot_spare_nodes",
)


def _reason_table(codes: np.ndarray) -> np.ndarray:
    """The reason strings indexed by code, long enough for every code in ``codes``."""
    codes = np.asarray(codes, dtype=np.int64)
    n_oom = int(max(codes.max(initial=R_OOM) - R_OOM + 1, 1))
    table = np.array(
        list(REASONS) + [""] * (R_OOM - len(REASONS)) + [f"OOM on stage {k}" for k in range(n_oom)],
        dtype=object,
    )
    table[R_OOM - 1] = "OOM"  # unused slot kept distinct
    return table


def reason_strings(codes: np.ndarray) -> np.ndarray:
    """Reason strings for an int array of reason codes (one string per element)."""
    codes = np.asarray(codes, dtype=np.int64)
    return _reason_table(codes)[codes]


# ---- small helpers ------------------------------------------------------------------------


def _divisors(n: int) -> np.ndarray:
    """All positive divisors of ``n`` (ascending), shape (d,)."""
    n = int(n)
    small = np.arange(1, math.isqrt(n) + 1)
    small = small[n % small == 0]
    return np.unique(np.concatenate([small, n // small]))


def _vpp_candidates(n_layers: int, vpp_max: int) -> np.ndarray:
    """Default VPP candidates 2 ... ``min(vpp_max, n_layers)``: the powers of two and every
    divisor of ``n_layers``. An even split needs ``pp·vpp`` to divide the layers, so ``vpp``
    divides them: every even interleaved split up to ``vpp_max`` is enumerated (Llama 3 70B's 80
    layers on PP 4 with VPP 5, the NeMo / Megatron-Bridge recipe and the default preset, had been
    missed by the powers of two alone; found by review), and uneven splits keep the powers of two."""
    hi = min(int(vpp_max), int(n_layers))
    divs = [v for v in range(2, hi + 1) if n_layers % v == 0]
    return np.asarray(sorted(set(_pow2_upto(hi, start=2).tolist()) | set(divs)), dtype=np.int64)


def _pow2_upto(limit: int, start: int = 1) -> np.ndarray:
    limit = max(int(limit), 0)
    out = []
    v = start
    while v <= limit:
        out.append(v)
        v *= 2
    return np.asarray(out, dtype=np.int64)


def _system_id(value) -> str:
    return value if isinstance(value, str) else getattr(value, "name", "inline")


# ---- Pareto front ---------------------------------------------------------------------------


#: pareto_front: above this many points, first drop those dominated by a subsample's front
#: (one point in _PARETO_PREFILTER_STEP).
_PARETO_PREFILTER_MIN = 2048
_PARETO_PREFILTER_STEP = 16


def _dense_rank(v: np.ndarray) -> np.ndarray:
    """0-based rank of each value among the distinct values of ``v`` (finite), shape (n,)."""
    o = np.argsort(v)
    vs = v[o]
    new = np.empty(v.size, dtype=bool)
    new[:1] = True
    np.not_equal(vs[1:], vs[:-1], out=new[1:])
    r = np.empty(v.size, dtype=np.int64)
    r[o] = np.cumsum(new) - 1
    return r


def pareto_front(x, y, minimize=(True, True)) -> np.ndarray:
    """Non-dominated points of a 2-D set, sort-based, O(n log n).

    Parameters
    ----------
    x, y : array_like, shape (n,)
        The two objectives. Non-finite values are never on the front and dominate nothing.
    minimize : (bool, bool)
        Per objective, True to minimise, False to maximise.

    Returns
    -------
    mask : np.ndarray of bool, shape (n,)
        True where no other point is at least as good in both objectives and strictly better
        in one. Identical points do not dominate each other (all copies are on the front).

    Notes
    -----
    Sort by (x, y) ascending (after negating maximised objectives). Within a group of equal x
    only the points with the group's smallest y can be non-dominated; such a point is
    dominated by an earlier group (strictly smaller x) iff that group's smallest y is <= its
    y. So a group is on the front iff its smallest y is strictly below the running minimum
    of all earlier groups (Kung, Luccio & Preparata 1975, the 2-D case).
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"pareto_front: x and y must be 1-D of one shape (got {x.shape}, {y.shape})")
    xs = x if minimize[0] else -x
    ys = y if minimize[1] else -y
    mask = np.zeros(x.shape, dtype=bool)
    ok = np.flatnonzero(np.isfinite(xs) & np.isfinite(ys))
    if ok.size == 0:
        return mask
    xo, yo = xs[ok], ys[ok]
    if xo.size > _PARETO_PREFILTER_MIN:
        # Drop points dominated by a point of the front of a subsample (exact: a point
        # dominated by a dropped point is also dominated by the point that dropped it).
        # The subsample's front is a staircase (x rising, y falling); the point of it with the
        # largest x <= a point's x has the smallest y of those, so it decides.
        sub = np.arange(0, xo.size, _PARETO_PREFILTER_STEP)
        fs = sub[pareto_front(xo[sub], yo[sub])]
        fo = fs[np.argsort(xo[fs])]
        fx, fy = xo[fo], yo[fo]
        i = np.searchsorted(fx, xo, side="right") - 1
        has = i >= 0
        i = np.maximum(i, 0)
        qx, qy = fx[i], fy[i]
        dom = has & (qy <= yo) & ((qx < xo) | (qy < yo))
        if dom.any():
            keep = np.flatnonzero(~dom)
            ok, xo, yo = ok[keep], xo[keep], yo[keep]
    # order by (x, y): lexsort((yo, xo)), computed as one int64 argsort of dense ranks (faster;
    # points equal in both are interchangeable, so their relative order does not matter)
    ry = _dense_rank(yo)
    order = np.argsort(_dense_rank(xo) * (int(ry.max()) + 1) + ry)
    xs_s, ys_s = xo[order], yo[order]
    new_group = np.empty(xs_s.size, dtype=bool)
    new_group[0] = True
    new_group[1:] = xs_s[1:] != xs_s[:-1]
    starts = np.flatnonzero(new_group)
    gmin = ys_s[starts]  # sorted by y within a group: the first is the smallest
    prev_min = np.empty_like(gmin)
    prev_min[0] = np.inf
    prev_min[1:] = np.minimum.accumulate(gmin)[:-1]
    group_front = gmin < prev_min
    gid = np.cumsum(new_group) - 1
    on = group_front[gid] & (ys_s == gmin[gid])
    mask[ok[order[on]]] = True
    return mask


# ---- the row space ------------------------------------------------------------------------


@dataclass
class SplitSpace:
    """The enumerated row space: structural rows (materialised) × inner combinations (lazy).

    Attributes
    ----------
    groups : list of (system id, n_gpus, base row dict)
    base : dict of column -> np.ndarray shape (n_groups,), the base row of each group
    varying : set of base columns that differ between groups
    struct : dict of split column -> np.ndarray shape (n_struct,), plus ``group`` and ``reason``
    inner : dict of column -> np.ndarray shape (n_inner,): zero_stage, recompute, offload_optimizer
    """

    groups: list
    base: dict
    varying: set
    struct: dict
    inner: dict
    base_offload_master: bool = False
    base_offload_grads: bool = False
    #: Some group's scenario overlaps the expert all-to-all (``ep_comm_overlap``).
    base_ep_overlap: bool = False
    #: The scenario's own expert TP (``parallelism.etp``; None = tp on every row): rows take
    #: gcd(etp, tp).
    base_etp: int | None = None
    group_has_nvme: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    #: Broadcast views (stride 0) of the base columns that do not vary, of length
    #: ``_bcast_len``; a chunk's column is a slice of one (no copy, no per-call broadcast).
    _bcast: dict = field(default_factory=dict, repr=False)
    _bcast_len: int = field(default=0, repr=False)

    def broadcast_columns(self, n: int) -> dict:
        """Read-only broadcast views (stride 0) of the non-varying base columns, length >= n."""
        if n > self._bcast_len:
            self._bcast = {name: np.broadcast_to(vals[0], (n,)) for name, vals in self.base.items()
                           if name not in self.varying}
            self._bcast_len = n
        return self._bcast

    @property
    def n_struct(self) -> int:
        return int(self.struct["tp"].size)

    @property
    def n_inner(self) -> int:
        return int(self.inner["zero_stage"].size)

    @property
    def n_rows(self) -> int:
        return self.n_struct * self.n_inner

    def count_valid(self) -> int:
        """Rows passing every rule (NVMe-offload rows on systems without NVMe excluded)."""
        ok = self.struct["reason"] == R_OK
        n_nvme = int(np.count_nonzero(self.inner["offload_optimizer"] == OFFLOAD.index("nvme")))
        per_group_inner = self.n_inner - np.where(self.group_has_nvme, 0, n_nvme)
        return int(np.sum(per_group_inner[self.struct["group"][ok]]))

    def rows(self, start: int, stop: int) -> tuple[Batch, np.ndarray, np.ndarray]:
        """Batch columns of rows ``start:stop`` (global row numbers).

        Returns
        -------
        (batch, reason, group): the batch (every input column, shape (k,)), the rule reason
        code of each row (0 = valid) and its group index.
        """
        r = np.arange(start, stop, dtype=np.int64)
        s = r // self.n_inner
        i = r - s * self.n_inner
        k = r.size
        g = self.struct["group"][s]
        bc = self.broadcast_columns(k)
        varying = self.varying
        b: Batch = {name: (vals[g] if name in varying else bc[name][:k]) for name, vals in self.base.items()}
        for name in ("tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch_size", "schedule",
                     "sequence_parallel", "uneven_layers"):
            b[name] = self.struct[name][s]
        b.pop("dp_shard", None)  # the sweep shards over all DP ranks (HSDP is not swept): no column = dp
        # Expert TP (parallelism.etp, not swept): the scenario's, where it divides the row's tp, i.e.
        # gcd(etp, tp) (etp = 1, parallel folding, on every row); the scenario's etp unset: no
        # column, etp = tp. The EP rule is the schema's etp·ep | tp·cp·dp with etp = gcd(etp, tp)
        # (build_space; ep | dp·cp without etp, review 45f), and SP is on wherever tp > 1. Found by review h27c (2026-12): every row had etp = tp, silently.
        b.pop("etp", None)
        if self.base_etp is not None:
            b["etp"] = row_expert_tp(self.base_etp, b["tp"], True)
        b.pop("recompute_layers", None)  # and recomputes every layer with full recompute
        zero = self.inner["zero_stage"][i]
        off = self.inner["offload_optimizer"][i]
        b["zero_stage"] = zero
        b["recompute"] = self.inner["recompute"][i]
        b["offload_optimizer"] = off
        b["offload_master_weights"] = (off != 0) & self.base_offload_master
        b["offload_grads"] = (off != 0) & self.base_offload_grads
        if self.base_ep_overlap:
            # the expert all-to-all overlap needs a second micro-batch's work beside it: PP 1
            # (Megatron-Core's combined 1F1B), interleaved (MCore: "if PP > 1, set VPP") or
            # DualPipe; on a plain 1F1B / zero-bubble / GPipe pipeline it is off (review 14g)
            n_micro = np.asarray(b["global_batch_size"]) // np.maximum(b["micro_batch_size"] * b["dp"], 1)
            b["ep_comm_overlap"] = np.asarray(b["ep_comm_overlap"], dtype=bool) & ep_overlap_possible(
                b["pp"], b["schedule"], n_micro, b["recompute"], b["vpp"])
        reason = self.struct["reason"][s].copy()
        nvme_bad = (off == OFFLOAD.index("nvme")) & ~self.group_has_nvme[g]
        reason[(reason == R_OK) & nvme_bad] = R_NVME
        return b, reason, g


def _base_scenario_for(s: Scenario, system_id, n_gpus: int) -> Scenario:
    """A copy of ``s`` on another system / cluster size (not re-validated: the split is
    overwritten row by row). A different system drops the accelerator override and the
    cluster overrides, which belong to the original hardware."""
    c = s.cluster
    upd = {"n_gpus": int(n_gpus)}
    if system_id is not None and _system_id(c.system) != _system_id(system_id):
        upd.update(system=system_id, accelerator=None, overrides=type(c.overrides)())
    return s.model_copy(update={"cluster": c.model_copy(update=upd)})


def _sh(v) -> str:
    """A value as an error message quotes it (a 5,000-digit integer by its size: review 44g, its
    repr was a ValueError)."""
    from .schema import _shown_value
    return _shown_value(v, False)


def _as_options(v, name: str) -> tuple:
    """An inner option's candidates, one value or a sequence of them, as a tuple; repeats dropped
    (order kept). A scalar of any type is one candidate (review 46e: ``zero_stages=2.0`` and
    ``recompute=1.5`` were TypeErrors; the caller then names what is allowed)."""
    if isinstance(v, (str, bytes)) or np.isscalar(v) or v is None:
        return (v,)
    try:
        vals = tuple(v)
    except TypeError:
        raise InputError([f"sweep: {name} = {_sh(v)}: give one value or a list of them"]) from None
    return tuple(dict.fromkeys(vals))


def _int_candidates(name: str, x) -> np.ndarray:
    """Candidate degrees given by the caller (one integer or a list of them) as int64 (K,);
    anything else (a string, a bool, a fraction, more than ``COUNT_MAX``) raises
    :class:`InputError` naming ``name``."""
    from .schema import COUNT_MAX
    vals = [x] if np.isscalar(x) or isinstance(x, str) else list(x)
    if not vals or not all(is_whole_number(v) and 1 <= v <= COUNT_MAX for v in vals):
        raise InputError([f"sweep: {name} = {_sh(x)}: give a positive integer up to {COUNT_MAX:,} or a list of them"])
    return np.asarray([int(v) for v in vals], dtype=np.int64)


def default_options(scenario: Scenario) -> dict[str, tuple[str, ...]]:
    """The default candidates of the inner options and the schedules: :data:`DEFAULT_RECOMPUTE`,
    :data:`DEFAULT_OFFLOAD`, :data:`DEFAULT_SCHEDULES`, each followed by the scenario's own mode
    when it is not one of them (``op_sac`` recompute, ``nvme`` offload, the ``dualpipe`` or
    ``gpipe`` schedule). Found by review 14g: the published splits of the DeepSeek-V3 preset
    (DualPipe, DeepSeek-V3 report §3.2.1) and the TorchTitan Llama 3.1 8B preset (per-op SAC) were
    not in their own default sweep, so the sweep could not rank the layout it was compared with."""
    p = scenario.parallelism

    def plus(default, value):
        return tuple(default) + (() if value in default else (value,))

    return {"recompute": plus(DEFAULT_RECOMPUTE, p.recompute),
            "offload": plus(DEFAULT_OFFLOAD, p.offload_optimizer),
            "schedules": plus(DEFAULT_SCHEDULES, p.schedule)}


def build_space(
    scenario: Scenario,
    *,
    gpus: int | Sequence[int] | None = None,
    systems: Sequence[str] | None = None,
    tp: Sequence[int] | None = None,
    pp: Sequence[int] | None = None,
    cp: Sequence[int] | None = None,
    ep: Sequence[int] | None = None,
    micro_batch_size: Sequence[int] | None = None,
    vpp: Sequence[int] | None = None,
    zero_stages: Sequence[int] = DEFAULT_ZERO_STAGES,
    recompute: Sequence[str] | None = None,
    offload: Sequence[str] | None = None,
    schedules: Sequence[str] | None = None,
    cp_max: int = DEFAULT_CP_MAX,
    vpp_max: int = DEFAULT_VPP_MAX,
    micro_batch_max: int | None = None,
    allow_tp_beyond_nvlink: bool = False,
    allow_uneven: bool | None = None,
    include_invalid: bool = False,
) -> SplitSpace:
    """Enumerate the split space of a scenario (see the module docstring for the rules).

    Parameters
    ----------
    scenario : Scenario
        The base: model, training, cluster, checkpoint and reliability settings are kept; the
        split fields are overwritten per row.
    gpus : int or list of int, optional
        Cluster sizes (default: the scenario's ``cluster.n_gpus``).
    systems : list of system ids, optional
        Systems to compare (default: the scenario's system).
    tp, pp, cp, ep, micro_batch_size, vpp : lists of int, optional
        Candidate values; default: TP divisors of n_gpus up to n_heads, PP divisors of n_gpus
        up to n_layers, CP powers of two up to ``cp_max``, EP divisors of n_experts (1 for a
        dense model), micro-batch sizes the divisors of global_batch_size (up to
        ``micro_batch_max``), VPP (interleaved only) 2 ... ``vpp_max``: the powers of two and the
        divisors of n_layers (:func:`_vpp_candidates`: every even interleaved split). Every
        candidate is then checked against the rules.
    zero_stages, recompute, offload, schedules : candidates of the inner options; recompute,
        offload and schedules not given (None) are the defaults (:data:`DEFAULT_RECOMPUTE`,
        :data:`DEFAULT_OFFLOAD`, :data:`DEFAULT_SCHEDULES`) plus the scenario's own mode
        (:func:`default_options`), so the scenario's own split is always in the default space.
        A PP 1 split has no pipeline to schedule: it is kept, as ``1f1b`` (plain gradient
        accumulation), whichever schedules are given.
    allow_tp_beyond_nvlink : allow TP groups larger than the NVLink domain.
    allow_uneven : allow pp·vpp not dividing n_layers (default: the scenario's
        ``parallelism.layer_split == "uneven"``).
    include_invalid : keep rows that break a rule (with their reason code) instead of
        dropping them.
    """
    own = default_options(scenario)
    if zero_stages is None:  # None = the default, as for recompute / offload / schedules (review 46e)
        zero_stages = DEFAULT_ZERO_STAGES
    recompute, offload, schedules = (own[name] if v is None else v for name, v in
                                     (("recompute", recompute), ("offload", offload), ("schedules", schedules)))
    zero_stages, recompute, offload, schedules = (_as_options(x, name) for x, name in (
        (zero_stages, "zero_stages"), (recompute, "recompute"), (offload, "offload"), (schedules, "schedules")))
    for name, vals, allowed in (
        ("recompute", recompute, RECOMPUTE), ("offload", offload, OFFLOAD), ("schedules", schedules, SCHEDULES),
    ):
        bad = [v for v in vals if v not in allowed]
        if bad:
            raise InputError([f"sweep: {name} {bad}: allowed: {', '.join(allowed)}"])
    # found by review: True was taken as ZeRO stage 1, and allow_uneven = "no" (a non-empty string)
    # as True, so "no" allowed uneven layer splits
    bad = [z for z in zero_stages if isinstance(z, (bool, np.bool_)) or z not in (0, 1, 2, 3)]
    flags = [f"sweep: {name} = {_sh(v)}: give True or False" + (" (or None: the scenario's layer_split)"
                                                               if name == "allow_uneven" else "")
             for name, v in (("allow_tp_beyond_nvlink", allow_tp_beyond_nvlink), ("allow_uneven", allow_uneven),
                             ("include_invalid", include_invalid))
             if not (isinstance(v, (bool, np.bool_)) or (v is None and name == "allow_uneven"))]
    if flags:
        raise InputError(flags)
    if bad:
        raise InputError([f"sweep: zero_stages {bad}: allowed: 0, 1, 2, 3"])
    if not (zero_stages and recompute and offload and schedules):
        raise InputError(["sweep: zero_stages, recompute, offload and schedules need at least one value each"])

    p = scenario.parallelism
    model = scenario.resolved_model()
    if allow_uneven is None:
        allow_uneven = p.layer_split == "uneven"
    gpu_list = [scenario.cluster.n_gpus] if gpus is None else ([gpus] if np.isscalar(gpus) else list(gpus))
    if not gpu_list or any(int(n) < 1 for n in gpu_list):
        raise InputError([f"sweep: gpus = {_sh(gpus)}: give positive GPU counts"])
    from .schema import COUNT_MAX
    if any(int(n) > COUNT_MAX for n in gpu_list):  # the CLI's --gpus range (review 38: 10**8 gave an
        # empty table whose reason blamed the global batch)
        raise InputError([f"sweep: gpus = {_sh(gpus)}: allowed 1 to {COUNT_MAX:,} GPUs"])
    # a size or system given twice is swept once (found by review: every row came twice, so a
    # top-K table showed each split twice); the first mention keeps its place in the order
    gpu_list = list(dict.fromkeys(int(n) for n in gpu_list))
    sys_list = [scenario.cluster.system] if systems is None else list(dict.fromkeys(systems))
    if not sys_list:
        raise InputError(["sweep: systems is empty"])
    for sid in sys_list:
        try:
            system = catalog.resolve_system(sid, loc=("systems",))
        except ValueError as e:
            raise InputError([f"sweep: {e}"]) from None
        if systems is not None and _system_id(sid) != _system_id(scenario.cluster.system):
            # the scenario's own system passed the schema; another one drops the accelerator
            # override (found by review: bf16 on a V100 system raised KeyError 'bf16')
            acc = catalog.resolve_accelerator(system.accelerator, loc=("systems",))
            if err := precision_error(scenario.training, acc):
                raise InputError([f"sweep: systems: {_system_id(sid)}: {err}"])

    # --- base rows, one per (system, n_gpus) group ------------------------------------------
    groups = []
    rows = []
    for sid in sys_list:
        for n in gpu_list:
            base_s = _base_scenario_for(scenario, sid if systems is not None else None, int(n))
            row = _batch.scenario_row(base_s)
            # as the schema: copies need other nodes (the base is not re-validated per GPU count)
            if err := replicas_error(base_s.checkpoint, int(row["n_nodes"]),
                                     f"{n} GPUs of {_system_id(base_s.cluster.system)} are"):
                raise InputError([err])
            groups.append((_system_id(base_s.cluster.system), int(n), row))
            rows.append(row)
    base = {k: np.asarray([r[k] for r in rows], dtype=_batch._dtype_for(k)) for k in rows[0]}
    varying = {k for k, v in base.items() if v.size > 1 and not np.all((v == v[0]) | ((v != v) & (v[0] != v[0])))}
    group_has_nvme = base["local_nvme_bytes"] > 0

    L = model.n_layers
    heads = model.n_heads
    kv = model.kv_heads
    E = model.moe.n_experts if model.moe is not None else 0
    seq = scenario.training.seq_len
    B = scenario.training.global_batch_size

    # --- structural level 1: layouts (group × tp × pp × cp × ep) ---------------------------
    n_g = len(groups)
    g_n = np.asarray([n for _, n, _ in groups], dtype=np.int64)
    g_nvl = base["nvlink_domain_size"].astype(np.int64)
    all_n_div = np.unique(np.concatenate([_divisors(n) for n in g_n]))
    if not (is_whole_number(cp_max) and cp_max >= 1):
        raise InputError([f"sweep: cp_max = {_sh(cp_max)}: give a positive integer (1 = no CP)"])
    if not (is_whole_number(vpp_max) and vpp_max >= 1):
        raise InputError([f"sweep: vpp_max = {_sh(vpp_max)}: give a positive integer (1 = no interleaving)"])
    if micro_batch_max is not None and not (is_whole_number(micro_batch_max) and micro_batch_max >= 1):
        raise InputError([f"sweep: micro_batch_max = {_sh(micro_batch_max)}: give a positive integer or None"])
    # ceilings, not candidates: any larger value means no limit below the schema's (review 44g: 10**5000
    # overflowed int64 in the candidate arrays)
    cp_max, vpp_max = min(int(cp_max), 2**40), min(int(vpp_max), 2**40)
    micro_batch_max = None if micro_batch_max is None else min(int(micro_batch_max), 2**40)
    from .schema import PP_MAX, VPP_MAX

    # the schema's ceilings (a row beyond them would not validate as a scenario; found by review:
    # vpp=[2048] gave rows that Plan refused)
    vpp_max = min(int(vpp_max), VPP_MAX)
    if vpp is not None:
        vpp = _int_candidates("vpp", vpp)
        if np.any(vpp > VPP_MAX):
            raise InputError([f"sweep: vpp candidates {vpp[vpp > VPP_MAX].tolist()}: allowed 1 to {VPP_MAX:,} "
                              "(parallelism.vpp)"])
    tp_c = _int_candidates("tp", tp) if tp is not None else all_n_div[all_n_div <= heads]
    pp_c = _int_candidates("pp", pp) if pp is not None else all_n_div[(all_n_div <= L) & (all_n_div <= PP_MAX)]
    if pp is not None and np.any(pp_c > PP_MAX):
        raise InputError([f"sweep: pp candidates {pp_c[pp_c > PP_MAX].tolist()}: allowed 1 to {PP_MAX:,} "
                          "(parallelism.pp)"])
    if cp is not None:
        cp_c = _int_candidates("cp", cp)
    else:  # powers of two, and the scenario's own degree within cp_max (a CP of 3 or 6 is valid)
        cp_c = np.union1d(_pow2_upto(cp_max), [p.cp] if p.cp <= cp_max else []).astype(np.int64)
    if ep is not None:
        ep_c = _int_candidates("ep", ep)
    else:
        ep_c = _divisors(E) if E > 0 else np.asarray([1], dtype=np.int64)
    if E == 0:
        if ep is not None and np.any(ep_c != 1):
            # as the other impossible candidates are refused, not dropped without a word (review 47c)
            raise InputError([f"sweep: ep candidates {ep_c[ep_c != 1].tolist()}: the model is dense (no routed "
                              "experts), and EP applies to MoE models only; give 1 or leave ep unset"])
        ep_c = np.asarray([1], dtype=np.int64)
    for name, arr in (("tp", tp_c), ("pp", pp_c), ("cp", cp_c), ("ep", ep_c)):
        if arr.size == 0 or np.any(arr < 1):
            raise InputError([f"sweep: {name} candidates {arr.tolist()}: give positive integers"])

    if not include_invalid:
        # a degree that divides no swept GPU count (or a CP that does not divide seq_len) can never pass
        # the rules: dropped before the product, exactly (review 48e: tp = pp = range(1, 20_001), each
        # value allowed, built a 2·10⁹-row meshgrid and the process was killed)
        def divides_some(a):
            return a[np.any(g_n[None, :] % a[:, None] == 0, axis=1)]
        tp_c, pp_c, cp_c = divides_some(tp_c), divides_some(pp_c), cp_c[seq % cp_c == 0]
        ep_c = ep_c[E % ep_c == 0] if E > 0 else ep_c
    n_level1 = n_g * tp_c.size * pp_c.size * cp_c.size * ep_c.size
    if n_level1 > SPACE_ROWS_MAX:
        raise InputError([f"sweep: {n_level1:,} (system, GPU count) × tp × pp × cp × ep candidate combinations "
                          f"(tp {tp_c.size:,}, pp {pp_c.size:,}, cp {cp_c.size:,}, ep {ep_c.size:,} values{' that can pass' if not include_invalid else ''}): "
                          f"allowed at most {SPACE_ROWS_MAX:,}; give fewer candidates"])
    G, TP, PP, CP, EP = (a.ravel() for a in np.meshgrid(
        np.arange(n_g), tp_c, pp_c, cp_c, ep_c, indexing="ij"))
    n_of = g_n[G]
    mp = TP * PP * CP
    DP = np.where(n_of % mp == 0, n_of // np.maximum(mp, 1), 0)
    dpsafe = np.maximum(DP, 1)
    r1 = np.full(G.size, R_OK, dtype=np.int16)

    def _set(mask, code):
        r1[(r1 == R_OK) & mask] = code

    _set(n_of % mp != 0, R_GPUS)
    _set(heads % TP != 0, R_HEADS)
    _set((kv % TP != 0) & (TP % kv != 0), R_KV)
    if not allow_tp_beyond_nvlink:
        _set(TP > g_nvl[G], R_NVLINK)
    # CP > 1 cuts each sequence into 2·CP chunks for causal load balancing (Megatron-Core
    # get_batch_on_this_cp_rank, PyTorch's load-balanced context_parallel): 2·CP must divide seq_len
    # (review 48, new-user check: 2,835 CP 2 rows at seq 8,190, which both refuse)
    _set((seq % CP != 0) | ((CP > 1) & (seq % (2 * CP) != 0)), R_CP_SEQ)
    # the sweep runs sequence parallelism with every TP > 1, which splits each rank's seq / cp tokens over
    # TP: Megatron-LM (the SP reduce-scatter, "dim_size[0] % world_size == 0") and TorchTitan
    # (seq_len_divisor) refuse a TP that does not divide them (review 48e: 3,741 of GPT-3 175B's 14,117
    # feasible splits at 768 GPUs were TP 3 / 6 at seq 2,048, each with the engine's note that no
    # framework runs it)
    _set((TP > 1) & ((seq // np.maximum(CP, 1)) % TP != 0), R_SP_SEQ)
    if not p.flash_attention:
        # found by review 24: the GPT-3 175B preset (flash attention off, as its 2021 run) swept to CP 4
        # with materialised scores, a split no framework runs (Transformer Engine disables unfused
        # attention under CP; Megatron's local attention asserts cp = 1; PyTorch's context_parallel
        # needs the flash / efficient kernels): planner export says so, and so does the sweep
        _set(CP > 1, R_CP_FLASH)
    if E > 0:
        _set(E % EP != 0, R_EP_EXPERTS)
        if p.etp is not None:  # the schema's rule with expert TP (the rows' row_expert_tp): etp·ep | tp·cp·dp
            _set((TP * CP * dpsafe) % (row_expert_tp(p.etp, TP, True) * EP) != 0, R_EP_DP)
        else:
            _set((dpsafe * CP) % EP != 0, R_EP_DP)
    # a local_nvme checkpoint tier on a system without NVMe (the schema refuses it for one
    # scenario; a sweep over systems meets it per system)
    ckpt_nvme_bad = np.asarray(base["ckpt_local_nvme_enabled"], dtype=bool) & ~group_has_nvme
    if ckpt_nvme_bad.any():
        _set(ckpt_nvme_bad[G], R_CKPT_NVME)
    if not include_invalid:
        keep = r1 == R_OK
        G, TP, PP, CP, EP, DP, r1 = G[keep], TP[keep], PP[keep], CP[keep], EP[keep], DP[keep], r1[keep]
        dpsafe = np.maximum(DP, 1)

    # --- structural level 2: × micro-batch size × (schedule, vpp) --------------------------
    mbs_c = _int_candidates("micro_batch_size", micro_batch_size) if micro_batch_size is not None else _divisors(B)
    if micro_batch_max is not None:
        if mbs_c.size and not np.any(mbs_c <= micro_batch_max):  # review 48e: "give positive integers" for [8]
            raise InputError([f"sweep: micro_batch_max = {micro_batch_max:,} excludes every micro_batch_size "
                              f"candidate {_sh(mbs_c.tolist())}: raise it or give smaller candidates"])
        mbs_c = mbs_c[mbs_c <= micro_batch_max]
    if mbs_c.size == 0 or np.any(mbs_c < 1):
        raise InputError([f"sweep: micro_batch_size candidates {mbs_c.tolist()}: give positive integers"])
    if not include_invalid:  # B % (mbs·dp) == 0 needs mbs | B: the others can never pass (review 48e)
        mbs_c = mbs_c[B % mbs_c == 0]
        if mbs_c.size == 0:
            raise InputError([f"sweep: no micro_batch_size candidate divides training.global_batch_size = {B:,}"])
    if G.size * mbs_c.size > SPACE_ROWS_MAX:
        raise InputError([f"sweep: {G.size:,} split layouts × {mbs_c.size:,} micro-batch sizes: allowed at most "
                          f"{SPACE_ROWS_MAX:,} combinations; give fewer candidates"])
    sv_sched, sv_vpp = [], []
    for name in schedules:
        code = SCHEDULES.index(name)
        if name == "interleaved":
            if vpp is None:  # and the scenario's own depth within vpp_max (an uneven one: 405B's 5)
                vpp_c = np.union1d(_vpp_candidates(L, vpp_max), [p.vpp] if 2 <= p.vpp <= vpp_max else [])
            else:
                vpp_c = [v for v in vpp if v >= 2]
            for v in vpp_c:
                sv_sched.append(code)
                sv_vpp.append(int(v))
        else:
            sv_sched.append(code)
            sv_vpp.append(1)
    # Without a pipeline the schedule is moot (one stage: plain gradient accumulation), written
    # 1f1b: PP 1 splits are kept whatever schedules are asked for (review 42a: --schedules gpipe
    # dropped every PP 1 split, then said every valid split ran out of memory).
    f1b_asked = "1f1b" in schedules
    if not f1b_asked:
        sv_sched.append(SCHEDULES.index("1f1b"))
        sv_vpp.append(1)
    sv_sched = np.asarray(sv_sched, dtype=np.int64)
    sv_vpp = np.asarray(sv_vpp, dtype=np.int64)
    n1, nm, ns = G.size, mbs_c.size, sv_sched.size
    i1, im, isv = (a.ravel() for a in np.meshgrid(np.arange(n1), np.arange(nm), np.arange(ns), indexing="ij"))
    MB = mbs_c[im]
    SCH = sv_sched[isv]
    VPP = sv_vpp[isv]
    pp2 = PP[i1]
    dp2 = dpsafe[i1]
    # Redundant rows, never generated: a schedule other than 1F1B without a pipeline (and 1F1B with
    # one where it was not asked for).
    is_1f1b = SCH == SCHEDULES.index("1f1b")
    keep = np.where(pp2 > 1, ~is_1f1b | f1b_asked, is_1f1b)
    i1, MB, SCH, VPP, pp2, dp2 = i1[keep], MB[keep], SCH[keep], VPP[keep], pp2[keep], dp2[keep]
    r2 = r1[i1].copy()

    def _set2(mask, code):
        r2[(r2 == R_OK) & mask] = code

    _set2(B % (MB * dp2) != 0, R_BATCH)
    stages = pp2 * VPP
    _set2(stages > L, R_STAGES)
    if not allow_uneven:
        _set2(L % stages != 0, R_LAYERS)
    m = B // (MB * dp2)
    _set2((SCH == SCHEDULES.index("interleaved")) & (m % pp2 != 0), R_INTERLEAVE)
    _set2((SCH == SCHEDULES.index("dualpipe")) & ((pp2 % 2 != 0) | (m % 2 != 0) | (m < 2 * pp2)), R_DUALPIPE)
    if not include_invalid:
        keep = r2 == R_OK
        i1, MB, SCH, VPP, stages, r2 = i1[keep], MB[keep], SCH[keep], VPP[keep], stages[keep], r2[keep]

    tp2 = TP[i1]
    struct = {
        "group": G[i1],
        "tp": tp2,
        "pp": PP[i1],
        "dp": DP[i1],
        "cp": CP[i1],
        "ep": EP[i1],
        "vpp": VPP,
        "micro_batch_size": MB,
        "schedule": SCH,
        "sequence_parallel": tp2 > 1,
        "uneven_layers": np.asarray(p.layer_split == "uneven") | (L % stages != 0),
        "reason": r2,
    }
    struct["uneven_layers"] = np.broadcast_to(struct["uneven_layers"], tp2.shape).copy()
    # DualPipe rows last (a stable partition; the others keep their order): the memory and step
    # models evaluate DualPipe's extra rank candidates for a whole chunk as soon as it holds one
    # DualPipe row, and the schedule is the fastest-varying dimension above, so every chunk held
    # some (DeepSeek-V3's default sweep, with its own DualPipe: 4.5 s; grouped: about 2.5 s).
    dual = struct["schedule"] == SCHEDULES.index("dualpipe")
    if dual.any() and not dual.all():
        order = np.concatenate([np.flatnonzero(~dual), np.flatnonzero(dual)])
        struct = {k: v[order] for k, v in struct.items()}

    # --- inner level: zero × recompute × offload ------------------------------------------
    z, rc, off = (a.ravel() for a in np.meshgrid(
        np.asarray(list(zero_stages), dtype=np.int64),
        np.asarray([RECOMPUTE.index(x) for x in recompute], dtype=np.int64),
        np.asarray([OFFLOAD.index(x) for x in offload], dtype=np.int64),
        indexing="ij"))
    # ZeRO-0 with the optimizer offloaded is not generated: no framework runs it (DeepSpeed's offload needs
    # ZeRO >= 1, Megatron's CPU offload the distributed optimizer, TorchTitan's ZeRO-0 replicates; the
    # export says so; review 48e: 2,408 of the default preset's feasible rows)
    ok = ~((z == 0) & (off != OFFLOAD.index("none")))
    if not ok.any():
        raise InputError(["sweep: zero_stages [0] with offload only to the CPU / NVMe: no framework offloads the "
                          "optimizer without ZeRO (DeepSpeed needs ZeRO >= 1, Megatron the distributed optimizer); "
                          "add a ZeRO stage >= 1 or offload 'none'"])
    z, rc, off = z[ok], rc[ok], off[ok]
    inner = {"zero_stage": z, "recompute": rc, "offload_optimizer": off}
    return SplitSpace(
        groups=groups, base=base, varying=varying, struct=struct, inner=inner,
        base_offload_master=bool(p.offload_master_weights), base_offload_grads=bool(p.offload_grads),
        base_ep_overlap=bool(np.any(base.get("ep_comm_overlap", False))),
        base_etp=p.etp if p.etp is not None and bool(np.any(base.get("n_experts", 0))) else None,
        group_has_nvme=group_has_nvme,
    )


_SPACE_KEYS = (
    "tp", "pp", "cp", "ep", "micro_batch_size", "vpp", "zero_stages", "recompute", "offload", "schedules",
    "cp_max", "vpp_max", "micro_batch_max", "allow_tp_beyond_nvlink", "allow_uneven", "include_invalid",
)


#: Keyword arguments of :func:`sweep` besides the split-space options.
_SWEEP_KEYS = ("gpus", "systems", "objective", "top", "feasible_only", "chunk_size", "progress", "memory_rule",
               "min_headroom")

#: :func:`sweep`'s ``memory_rule``: "fits" (the memory estimate, margin included, within usable HBM;
#: the default) or "conservative" (also ``fits_conservative``: model states + activations + logits
#: at most 80 % of usable HBM, the rule under which none of Fujii et al. 2024's 454 Llama runs ran
#: out of memory; docs/memory.md).
MEMORY_RULES: tuple[str, ...] = ("fits", "conservative")


def _check_space_options(opts: dict, fixed: Sequence[str] = ("gpus", "systems"), where: str = "sweep") -> None:
    """:class:`InputError` naming every unknown keyword and listing the accepted ones (``fixed``,
    the function's own keywords, then :data:`_SPACE_KEYS`)."""
    bad = sorted(set(opts) - set(_SPACE_KEYS))
    if bad:
        raise InputError([f"{where}: unknown option(s) {', '.join(map(repr, bad))}; accepted: "
                          f"{', '.join((*fixed, *_SPACE_KEYS))}"])


def count_splits(scenario: Scenario, *, gpus=None, systems=None, **space_options) -> int:
    """Number of valid splits (rows passing every rule) without evaluating them."""
    _check_space_options(space_options, where="count_splits")
    space_options.pop("include_invalid", None)
    return build_space(scenario, gpus=gpus, systems=systems, **space_options).count_valid()


def enumerate_splits(scenario: Scenario, *, gpus=None, systems=None, **space_options) -> Batch:
    """Every valid split as a :data:`planner.batch.Batch` (materialised; for large spaces use
    :func:`sweep`, which streams chunks). With ``include_invalid=True`` every generated row is
    returned and the column ``sweep_reason`` (int code, see :data:`REASONS`) says which rule it
    breaks; ``sweep_group`` is the index into the (system, n_gpus) groups in both cases."""
    _check_space_options(space_options, where="enumerate_splits")
    space = build_space(scenario, gpus=gpus, systems=systems, **space_options)
    b, reason, g = space.rows(0, space.n_rows)
    if not space_options.get("include_invalid", False):
        keep = reason == R_OK
        b = {k: np.asarray(v)[keep] for k, v in b.items()}
        reason, g = reason[keep], g[keep]
    else:
        b = {k: np.asarray(v).copy() if not v.flags.writeable else v for k, v in b.items()}
        b["sweep_reason"] = reason
    b["sweep_group"] = g
    return b



def _limits_text(memory_rule: str, min_headroom) -> str:
    """The sweep's memory limits beyond "fits", in words ("" when none)."""
    parts = []
    try:
        h = float(min_headroom)
    except (TypeError, ValueError):
        h = 0.0
    if h > 0.0:
        parts.append(f"min_headroom = {h:g} (at least {100 * h:g} % of usable HBM left free)")
    if memory_rule == "conservative":
        parts.append("memory_rule = 'conservative' (model states + activations at most 80 % of usable HBM)")
    return " and ".join(parts)


def _n_fit_without_limits(scenario, gpus, systems, space_options: dict, objective: str = "time_to_train") -> int | None:
    """Feasible splits of the same search space with memory_rule 'fits' and no headroom (None when
    that sweep cannot run: a hint only)."""
    opts = {k: v for k, v in space_options.items() if k in _SPACE_KEYS and k != "include_invalid"}
    try:
        df = sweep(scenario, gpus=gpus, systems=systems, top=1, objective=objective, **opts)
    except Exception:  # noqa: BLE001 - a hint only
        return None
    return int(df.attrs.get("n_feasible", 0))


def _fail_counts(scenario, gpus, systems, memory_rule: str, min_headroom: float, space_options: dict) -> dict | None:
    """Why the rule-valid splits of a sweep fail (:func:`_scan`'s counts: ``oom`` rows out of HBM,
    ``host`` rows that fit in HBM and the memory limits but not in host memory, ``host_need_min``
    the least host memory per node those need), by one scan of the same space (None when it cannot
    run: a hint only)."""
    opts = {k: v for k, v in space_options.items() if k in _SPACE_KEYS and k != "include_invalid"}
    try:
        space = build_space(validate_scenario(scenario), gpus=gpus, systems=systems, **opts)
        return _scan_space(space, chunk_size=250_000, objective="time_to_train", top=1, feasible_only=True,
                           memory_rule=memory_rule, min_headroom=float(min_headroom), include_invalid=False)["fail"]
    except Exception:  # noqa: BLE001 - a hint only
        return None


def _gib(x: float) -> str:
    return f"{x / 2**30:,.1f} GiB"


def _flash_cp_hint(scenario, space_options: dict) -> str:
    """The sentence that says CP > 1 was left out because flash attention is off (the rule
    ``R_CP_FLASH``), where the space would otherwise try it; else ''. Review 24: a flash-off sweep
    that found nothing said only "a larger-memory system or a smaller model is needed", where flash
    attention and CP would have given 12,191 splits that fit."""
    try:
        sc = validate_scenario(scenario)
    except ValueError:
        return ""
    if sc.parallelism.flash_attention:
        return ""
    cp = space_options.get("cp")
    cps = [int(sc.parallelism.cp)] if cp is None else ([cp] if np.isscalar(cp) else list(cp))
    if cp is None and int(space_options.get("cp_max", DEFAULT_CP_MAX) or 1) > 1:
        cps.append(2)
    if not any(int(c) > 1 for c in cps):
        return ""
    return (" CP > 1 was not tried: parallelism.flash_attention is off, and no framework runs "
            "materialised-score attention under context parallelism; with flash attention on the sweep "
            "also splits the sequence (CP)")


def no_split_reason(scenario, n_valid: int, *, gpus: int | None = None, systems: Sequence[str] | None = None,
                    memory_rule: str = "fits", min_headroom: float = 0.0, swept_gpus=None,
                    fail_counts: dict | None = None, objective: str = "time_to_train", **space_options) -> str:
    """Why a sweep found nothing, in words, for a sweep of ``scenario`` that returned no row:
    no split passes the divisibility rules (``n_valid`` 0); the scenario has no finite time to
    train whatever the split (its checkpoint tiers survive no failure of some class, or
    failures outpace recovery: the engine's own reason, from :func:`planner.evaluate`); no finite
    step time; else every valid split runs out of memory.

    ``space_options`` (the options the sweep was given: ``zero_stages``, ``recompute``,
    ``offload`` ...) make the out-of-memory text name what the sweep tried (found by review: the
    dashboard's focused space, ZeRO-1 without offload, was told that the sweep tries CPU offload
    and that setting ``offload_optimizer = cpu`` would help; it overrode that setting on every
    row). With ``gpus`` (the one GPU count swept) the text also names the fewest GPUs, doubling
    from ``gpus``, at which a split of the same space fits (:func:`fewest_gpus_that_fit`).

    ``memory_rule`` and ``min_headroom`` (as the sweep was given them): when splits fit in memory
    without them, the text says so and which option to lower (found by review 14j: a sweep with
    ``min_headroom`` 0.99 was told "every valid split runs out of memory" and that 128 GPUs give
    37,022 splits that fit, both counted without the headroom). ``swept_gpus``: the GPU count or
    list the sweep ran on (default ``gpus``; else the scenario's own), for that check.

    When splits fit in HBM but not in host memory (offloaded optimizer states, in-memory checkpoint
    copies), the text says so, with how many and the least host memory per node they need, not "out
    of memory" (review 15l: a CPU-offload space on nodes with little host memory was told to offload
    more). ``fail_counts``: the sweep's own counts (:func:`_scan`), else one scan of the space counts
    them. ``objective``: the sweep's; an ``mfu`` sweep ranks splits without a finite time to train,
    so a goodput of 0 is not why it found nothing (review 15l: Llama 3 405B on 8 GPUs with a host-memory
    checkpoint tier alone was told "no split has a finite time to train" where no split fits in HBM)."""
    if n_valid == 0:
        return ("no split satisfies the divisibility rules (heads, layers, batch) at this GPU count: "
                "try a count with more small factors." + _flash_cp_hint(scenario, space_options)).rstrip(".")
    try:
        rep = _engine.evaluate(scenario)
    except ValueError:
        rep = None
    if rep is not None and not rep.results.get("goodput", 1.0) > 0.0 and objective in _TIME_OBJECTIVES:
        why = next((n for n in rep.notes if n.lower().startswith("goodput is 0")), "goodput is 0")
        return f"no split has a finite time to train. {why}"
    step = float(rep.results.get("step_time_s", 1.0)) if rep is not None else 1.0
    if not (math.isfinite(step) and step > 0.0):  # found by review: told "out of memory" on a NaN step
        return (f"no split has a finite step time (the scenario's own: {step:g} s): check the hardware figures "
                "and overrides")

    def _tried(name, default):
        v = space_options.get(name)
        if v is None:
            return tuple(default)
        return _as_options(v, name)

    try:  # what a sweep without these options tried: the defaults and the scenario's own modes
        own = default_options(validate_scenario(scenario))
    except ValueError:
        own = {"recompute": DEFAULT_RECOMPUTE, "offload": DEFAULT_OFFLOAD}
    zero = _tried("zero_stages", DEFAULT_ZERO_STAGES)
    rec = _tried("recompute", own["recompute"])
    off = _tried("offload", own["offload"])
    default_space = not any(k in space_options for k in ("zero_stages", "recompute", "offload"))
    tried = (f"recompute ({', '.join(rec)}{' by default' if default_space else ''}) and optimizer offload "
             f"({', '.join(off)})" + ("" if default_space else f" with ZeRO stage {', '.join(map(str, zero))}"))
    limits = _limits_text(memory_rule, min_headroom)
    if limits:
        n_fit = _n_fit_without_limits(scenario, gpus if swept_gpus is None else swept_gpus, systems, space_options,
                                      objective)
        if n_fit:
            fix = []
            if float(min_headroom) > 0.0:
                fix.append("lower min_headroom (planner sweep --min-headroom; the Explore page's 'HBM left free, %')")
            if memory_rule != "fits":
                fix.append("use memory_rule = 'fits' (planner sweep --memory-rule fits)")
            return (f"no split meets {limits}: {n_fit:,} valid splits fit in memory without "
                    f"{'it' if len(fix) == 1 else 'them'}. To rank those, " + " or ".join(fix))
    if fail_counts is None:
        fail_counts = _fail_counts(scenario, gpus if swept_gpus is None else swept_gpus, systems, memory_rule,
                                   min_headroom, space_options)
    n_host = int(fail_counts["host"]) if fail_counts else 0
    if n_host:
        try:
            have = (f"the {_gib(float(_batch.scenario_row(validate_scenario(scenario))['host_memory_bytes']))} "
                    if systems is None else "")
        except (ValueError, KeyError):
            have = ""
        n_oom = int(fail_counts["oom"])
        text = (f"no split fits in host memory: {n_host:,} valid splits fit in HBM"
                f"{' and meet ' + limits if limits else ''} but need more host memory per node than {have}each "
                f"node has (the least any of them needs: {_gib(fail_counts['host_need_min'])} per node, for "
                "offloaded optimizer states and in-memory checkpoint copies; the system's host_memory_bytes, or cluster.overrides.host_memory_bytes)"
                + (f", and the other {n_oom:,} run out of HBM" if n_oom else "")
                + ". Try a system with more host memory, offloading less ('none' among the optimizer offload "
                "targets, or offload_optimizer = nvme, which stages through a small host buffer) or more GPUs")
        # not: offload more; nor the two flags: the CPU step needs the master, m, v and the gradients
        # on the host whatever they say (review 39; they only free the GPU's copies)
    elif any(o != "none" for o in off):
        text = ("every valid split runs out of memory: try more GPUs or a larger-memory system. "
                f"The sweep chooses {tried}, but takes offload_master_weights, offload_grads and "
                "offload_activations from the scenario: set those, with offload_optimizer = cpu (e.g. "
                "parallelism.offload_optimizer = cpu and parallelism.offload_master_weights = true), to let it "
                "offload more (host memory permitting)")
    else:
        text = ("every valid split runs out of memory: try more GPUs or a larger-memory system. "
                f"The sweep tried {tried} only: it offloads nothing, whatever the scenario's offload settings; "
                "a search space with more ZeRO stages and optimizer offload = cpu may fit")
    if gpus is not None:
        try:
            found = fewest_gpus_that_fit(scenario, int(gpus), systems=systems, memory_rule=memory_rule,
                                         min_headroom=min_headroom, objective=objective, **space_options)
        except Exception:  # noqa: BLE001 - a hint only
            found = None
        if found is not None and found[0] is not None:
            text += (f". With this search space{' and ' + limits if limits else ''}, {found[0]:,} GPUs (cluster.n_gpus, "
                     f"doubling from {int(gpus):,}) "
                     f"give {found[1]:,} splits that fit")
        elif found is not None:
            text += (f". No GPU count from {int(gpus):,} to {found[1]:,} (doubling) fits with this search space: "
                     "a larger-memory system (cluster.system) or a smaller model is needed")
    hint = _flash_cp_hint(scenario, space_options)
    return text + ("." + hint if hint else "")


#: :func:`fewest_gpus_that_fit`: most doublings tried, and most rows evaluated over all of them.
FIT_HINT_DOUBLINGS = 12
FIT_HINT_MAX_ROWS = 2_000_000


def fewest_gpus_that_fit(scenario, gpus: int, *, systems: Sequence[str] | None = None,
                         max_doublings: int = FIT_HINT_DOUBLINGS, max_rows: int = FIT_HINT_MAX_ROWS,
                         memory_rule: str = "fits", min_headroom: float = 0.0, objective: str = "time_to_train",
                         **space_options) -> tuple[int | None, int] | None:
    """The fewest GPUs among ``2·gpus, 4·gpus, ...`` (at most ``max_doublings`` doublings, at most
    10,000,000 GPUs) at which some split of the same search space fits: ``(n_gpus, feasible
    splits)``; ``(None, last count tried)`` when none does; None when the rows to evaluate would
    exceed ``max_rows`` before an answer (a hint must stay cheap: :func:`count_splits` first).
    Each count is one :func:`sweep` with ``top=1`` (and ``memory_rule`` / ``min_headroom`` and
    ``objective``, as the sweep being explained had them: an ``mfu`` sweep counts splits without a
    finite time to train)."""
    s = validate_scenario(scenario)
    opts = {k: v for k, v in space_options.items() if k in _SPACE_KEYS and k != "include_invalid"}
    rows = 0
    g = int(gpus)
    last = g
    for _ in range(int(max_doublings)):
        g *= 2
        if g > 10_000_000:
            break
        k = count_splits(s, gpus=g, systems=systems, **opts)
        rows += k
        if rows > max_rows:
            return None
        last = g
        if k == 0:
            continue
        df = sweep(s, gpus=g, systems=systems, top=1, memory_rule=memory_rule, min_headroom=min_headroom,
                   objective=objective, **opts)
        if df.attrs.get("n_feasible", 0) > 0:
            return g, int(df.attrs["n_feasible"])
    return None, last

# ---- a base split for a scenario whose own split does not suit it --------------------------


def plain_splits(scenario_json: dict, limit: int = 400) -> list[tuple[int, int]]:
    """(TP, PP) pairs to try as a sweep's starting split when the scenario's own split does not
    suit its model or GPU count (a sweep replaces the split, so that is no reason to refuse).

    TP is a divisor of the heads and of the GPUs, PP a divisor of the GPUs left (at most the
    layers); fewest model-parallel GPUs first, then the smaller PP. DP must still divide the
    global batch: :func:`plain_base` lets the schema check each pair.

    Parameters
    ----------
    scenario_json : a scenario as its JSON dict (the model a catalogue id or an inline object).
    limit : most pairs returned.

    Returns
    -------
    list of (tp, pp), at most ``limit``; ``[(1, 1)]`` when the model or the GPU count cannot be
    read (the schema then reports the fault).
    """
    m = scenario_json.get("model")
    try:
        m = catalog.models()[m].model_dump() if isinstance(m, str) else dict(m or {})
        heads, layers = int(m["n_heads"]), int(m["n_layers"])
        n = int((scenario_json.get("cluster") or {}).get("n_gpus") or 1)
    except Exception:  # noqa: BLE001 - an unreadable model: the schema's own error is reported
        return [(1, 1)]
    pairs = [(t, q) for t in range(1, min(heads, n) + 1) if heads % t == 0 and n % t == 0
             for q in range(1, min(layers, n // t) + 1) if (n // t) % q == 0]
    return sorted(pairs, key=lambda x: (x[0] * x[1], x[1]))[:limit]


def plain_base(scenario_json: dict) -> tuple[dict, Scenario] | None:
    """The scenario on the first of :func:`plain_splits` that the schema accepts: that TP and PP,
    no EP / interleaving, DP derived, ZeRO over all DP ranks, full recompute of every layer (when
    full), ``layer_split = "uneven"`` (so a PP that does not divide the layers is allowed, here and
    in the sweep started from it). The rest of the scenario is kept.

    The scenario's own CP degree and schedule (1F1B for an interleaved one: VPP is reset) are kept
    when some pair accepts them, else CP 1 and 1F1B: the sweep adds a scenario's own CP and schedule
    to its candidates (:func:`default_options`), so a DualPipe or GPipe scenario whose split did not
    suit it still has its schedule swept (review 15l: ``--set parallelism.schedule=dualpipe`` on
    the default preset, whose VPP 5 refuses it, swept no DualPipe row). The scenario's micro-batch
    size is kept when a pair accepts it, else 1 (the sweep sets it row by row; review 15l: a
    micro-batch of 3 that divides no share of a batch of 512 was refused instead of swept).

    Used by ``planner sweep`` and the dashboard's Explore page when the scenario's split does
    not suit the model or the GPU count.

    Returns
    -------
    (scenario JSON dict, validated :class:`Scenario`), or None when no plain split is valid (the
    fault lies elsewhere: the caller reports the scenario's own errors).
    """
    own = scenario_json.get("parallelism") or {}
    sched = own.get("schedule", "1f1b")
    sched = "1f1b" if sched in (None, "interleaved") else sched
    cp = own.get("cp", 1)
    tries = [(cp, sched), (1, "1f1b")] if (cp, sched) != (1, "1f1b") else [(1, "1f1b")]
    mbs = (scenario_json.get("training") or {}).get("micro_batch_size")
    pairs = plain_splits(scenario_json)
    etp_own = own.get("etp")
    for cp_, sched_ in tries:
        for mb in ((None, 1) if mbs not in (None, 1) else (None,)):
            for tp, pp in pairs:
                cand = copy.deepcopy(scenario_json)
                # the scenario's expert TP where the plain TP takes it (rows run gcd(etp, tp)): dropped, the
                # API and a --set n_gpus sweep ran etp = tp where `--gpus` kept it (review 45f)
                etp_ = etp_own if isinstance(etp_own, int) and etp_own > 0 and tp % etp_own == 0 else None
                cand["parallelism"] = {**(cand.get("parallelism") or {}), "tp": tp, "pp": pp, "cp": cp_, "ep": 1,
                                       "vpp": 1, "dp": None, "dp_shard": None, "etp": etp_, "schedule": sched_,
                                       "recompute_layers": None, "layer_split": "uneven"}
                if mb is not None and isinstance(cand.get("training"), dict):
                    cand["training"] = {**cand["training"], "micro_batch_size": mb}
                try:
                    return cand, Scenario.model_validate(copy.deepcopy(cand))
                except (ValueError, TypeError):  # pydantic's ValidationError is a ValueError
                    continue
    return None


def replaced_split(scenario_json: dict, error: ValueError) -> tuple[Scenario, int | None, str] | None:
    """A sweep of a scenario whose own split is refused (``error``): (:func:`sweep_start`'s scenario, its
    GPUs to sweep or None, the note that says so), or None when the fault is not in the split
    (``error``: the refusal, an InputError or the CLI's UsageError, its ``.lines`` quoted). The
    rule of ``planner sweep`` and of :func:`sweep` in Python alike (review 44a: the API refused what
    the CLI swept)."""
    found = sweep_start(scenario_json)
    if found is None:
        return None
    base, scenario, start_gpus = found
    p = base["parallelism"]
    note = (f"the scenario's split does not suit it ({'; '.join(error.lines)}); the sweep replaces the split, "
            f"starting from tp = {p['tp']}, pp = {p['pp']} with layer_split = 'uneven' (pp·vpp need not divide "
            "n_layers)")
    return scenario, start_gpus, note


def sweep_start(scenario_json: dict) -> tuple[dict, Scenario, int | None] | None:
    """Where a sweep of a scenario whose own split is not valid starts: :func:`plain_base`, or,
    when no split of its GPU count is valid at all (found by review: 1,000 GPUs and a global
    batch of 512 have none), the same scenario on the largest power of two of GPUs below whose
    plain split is valid, with the GPU count to sweep (the scenario's own), so that the sweep's
    result, empty or not, says why.

    Returns
    -------
    (scenario JSON, validated :class:`Scenario`, GPUs to sweep or None for the scenario's own),
    or None when the fault is not in the split (the caller reports the scenario's own errors).
    """
    found = plain_base(scenario_json)
    if found is not None:
        return found[0], found[1], None
    n = (scenario_json.get("cluster") or {}).get("n_gpus")
    # a whole number as JSON has it, not one the schema refuses (review 48, new-user check: the text
    # "64" was read as 64 here and swept with a note, where evaluate refuses it, status 2)
    if not isinstance(n, int) or isinstance(n, bool):
        return None
    if not 1 <= n <= 10_000_000:
        return None
    g = 1 << (n.bit_length() - 1)
    while g >= 1:
        if g != n:
            trial = copy.deepcopy(scenario_json)
            trial["cluster"]["n_gpus"] = g
            found = plain_base(trial)
            if found is not None:
                return found[0], found[1], n
        g //= 2
    return None


#: What each divisibility rule asks of the scenario's fields, for :func:`no_valid_split_reason`
#: (format fields: heads, kv, seq, gbs, layers, n).
_RULE_TEXT = {
    R_HEADS: "TP does not divide model.n_heads = {heads}",
    R_KV: "TP does not suit model.n_kv_heads = {kv} (neither divides the other)",
    R_NVLINK: "TP is larger than the system's NVLink domain",
    R_CP_SEQ: ("CP does not divide training.seq_len = {seq}, or CP > 1 and 2·CP does not (each sequence is cut into "
               "2·CP chunks for causal load balancing, which Megatron-Core and TorchTitan assert; evaluate accepts such "
               "a split with a note)"),
    R_SP_SEQ: ("TP does not divide training.seq_len / CP = {seq} / CP (the sweep runs sequence parallelism with "
               "TP > 1, which Megatron-Core's sequence-parallel reduce-scatter refuses then; evaluate accepts such a "
               "split, and the Megatron export notes it)"),
    R_CP_FLASH: ("CP > 1 needs flash attention (parallelism.flash_attention is off; no framework runs "
                 "materialised-score attention under CP)"),
    R_BATCH: ("micro-batch × DP does not divide training.global_batch_size = {gbs} "
              "(DP = cluster.n_gpus ÷ (TP·PP·CP) = {n} ÷ (TP·PP·CP))"),
    R_STAGES: "PP·VPP exceeds model.n_layers = {layers}",
    R_LAYERS: "model.n_layers = {layers} is not divisible by PP·VPP",
}


def no_valid_split_reason(scenario: Scenario, gpus: int, *, systems: Sequence[str] | None = None,
                          uneven_how: str = "parallelism.layer_split = 'uneven', or the sweep's allow_uneven=True",
                          **space_options) -> str:
    """Why no split of ``gpus`` GPUs passes the sweep's rules, naming the fields that limit it:
    the rules broken by the splits whose TP·PP·CP divides the GPU count
    (:func:`build_space` with ``include_invalid``, counted per split layout; the last rule checked
    first), then what a
    global batch equal to the GPU count or the nearest powers of two of GPUs would allow
    (:func:`count_splits` over the same ``space_options``), and, for an even layer split, how many
    splits an uneven one allows (``uneven_how``: how to ask for it, in the caller's words; review
    47c: only the CLI said so). Never raises."""
    space_options = {k: v for k, v in space_options.items() if k != "include_invalid"}
    m = scenario.resolved_model()
    vals = {"heads": m.n_heads, "kv": m.n_kv_heads or m.n_heads, "seq": scenario.training.seq_len,
            "gbs": scenario.training.global_batch_size, "layers": m.n_layers, "n": f"{gpus:,}"}
    try:
        # counted on the structural rows, each standing for its n_inner (ZeRO × recompute × offload)
        # rows, plus the one rule an inner row adds (NVMe offload where the group has no NVMe,
        # SplitSpace.rows): materialising every row (enumerate_splits) took 9–24 GB, or was killed,
        # for Llama 3 405B at 30,000 or 720,720 GPUs and DeepSeek-V3 at 10,000 (review 45a, 45f)
        space = build_space(scenario, gpus=gpus, systems=systems, include_invalid=True, **space_options)
        reason = np.asarray(space.struct["reason"])
        codes, counts = np.unique(reason, return_counts=True)
        tally = {int(k): int(c) * space.n_inner for k, c in zip(codes, counts)}
        n_nvme = int(np.count_nonzero(space.inner["offload_optimizer"] == OFFLOAD.index("nvme")))
        nvme_bad = int(np.count_nonzero((reason == R_OK) & ~np.asarray(space.group_has_nvme)[space.struct["group"]]))
        if n_nvme and nvme_bad:
            tally[R_NVME] = tally.get(R_NVME, 0) + nvme_bad * n_nvme
            tally[R_OK] -= nvme_bad * n_nvme
        codes, counts = list(tally), list(tally.values())
    except Exception:  # noqa: BLE001 - the general words then
        return no_split_reason(scenario, 0)
    # the rules are checked in code order: the highest code stops the splits that met every other rule
    rules = sorted(((int(k), int(c)) for k, c in zip(codes, counts) if k not in (R_OK, R_GPUS)), reverse=True)
    text = f"no split of cluster.n_gpus = {gpus:,} GPUs passes the sweep's rules: "
    if rules:
        text += ("of the splits whose TP·PP·CP divides the GPU count, "
                 + "; ".join(f"{c:,} break the rule: " + _RULE_TEXT.get(k, REASONS[k]).format(**vals)
                             for k, c in rules))
    else:
        text += f"no TP·PP·CP of the search space divides {gpus:,}"
    text += "."
    hints = []
    if any(k == R_BATCH for k, _ in rules):
        try:
            alt = scenario.model_copy(deep=True)
            alt.training.global_batch_size = gpus
            if (k := count_splits(alt, gpus=gpus, systems=systems, **space_options)):
                hints.append(f"a global batch of {gpus:,} sequences (training.global_batch_size) gives {k:,} "
                             "valid splits")
        except Exception:  # noqa: BLE001 - a hint only
            pass
    for g in sorted({1 << (gpus.bit_length() - 1), 1 << gpus.bit_length()} - {gpus}):
        try:
            if (k := count_splits(scenario, gpus=g, systems=systems, **space_options)):
                hints.append(f"{g:,} GPUs give {k:,}")
        except Exception:  # noqa: BLE001 - a hint only
            pass
    if hints:
        text += " So the limit is the global batch and the GPU count together: " + "; ".join(hints) + "."
    # the rule already listed says it (with its count); else (no CP split reached it) the hint
    hint = "" if any(k == R_CP_FLASH for k, _ in rules) else _flash_cp_hint(scenario, space_options)
    text += (hint + "." if hint else "")
    if scenario.parallelism.layer_split != "uneven" and not space_options.get("allow_uneven"):
        try:
            opts = {k: v for k, v in space_options.items() if k != "allow_uneven"}
            if (k := count_splits(scenario, gpus=gpus, systems=systems, allow_uneven=True, **opts)):
                text += f" An uneven layer split ({uneven_how}) gives {k:,} valid splits."
        except Exception:  # noqa: BLE001 - a hint only
            pass
    return text


# ---- evaluation ----------------------------------------------------------------------------


def _objective_key(out: Batch, objective: str, n: int) -> np.ndarray:
    """Sort key (smaller is better) for an objective; NaN where the inputs are missing."""
    nan = np.full(n, np.nan)

    def col(name):
        return np.asarray(out[name], dtype=np.float64) if name in out else None

    if objective == "time_to_train":
        v = col("time_to_train_days")
        if v is None:
            st = col("step_time_s")
            v = nan if st is None else st
        return v
    if objective == "cost":
        v = col("cost_usd")
        return nan if v is None else v
    if objective == "goodput_tokens_per_s":
        tps = col("tokens_per_s")
        gp = col("goodput")
        if tps is None:
            return nan
        return -(tps * (gp if gp is not None else 1.0))
    if objective == "mfu":
        v = col("mfu")
        return nan if v is None else -v
    raise InputError([f"sweep: objective {_sh(objective)}: allowed: {', '.join(OBJECTIVES)}"])


#: Objectives that rank by the time to train (or what it prices): a row that never finishes
#: (goodput 0: no checkpoint tier survives some failure class) cannot be ranked by them.
_TIME_OBJECTIVES = ("time_to_train", "cost", "goodput_tokens_per_s")


#: Result columns whose equality makes two swept splits the same result (:func:`distinct_results`).
TIE_COLUMNS = ("step_time_s", "mem_total_bytes", "time_to_train_days", "cost_usd")


def distinct_results(df: pd.DataFrame) -> pd.DataFrame:
    """A ranked sweep table without the rows whose :data:`TIE_COLUMNS` all equal (to 12
    significant digits) those of a better-ranked row: one row per result, the best-ranked split of
    each kept, in order. Splits such as DP 64 × CP 1 × micro-batch 1 and DP 8 × CP 8 × micro-batch 8
    often tie exactly (the same tokens per GPU, the CP ring hidden), so a top 20 could hold only a
    few distinct results (review 14g). Used by the Explore page's "One row per result" and
    ``planner sweep --distinct``."""
    cols = [c for c in TIE_COLUMNS if c in df.columns]
    if not cols or not len(df):
        return df
    # Vectorised (review 14m: a per-value f"{x:.12g}" took 1.6 s on a 746,655-row sweep, on every
    # rerun of the page): x = m · 10^e with 1 <= |m| < 10, the key is (round(m · 10^11), e), i.e. x
    # to 12 significant digits; 0, inf and NaN keep e = 0 (NaN keys equal each other, as before).
    x = df[cols].to_numpy(dtype=np.float64, na_value=np.nan)
    ok = np.isfinite(x) & (x != 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        e = np.where(ok, np.floor(np.log10(np.abs(np.where(ok, x, 1.0)))), 0.0)
        m = np.where(ok, np.round(x / np.power(10.0, e) * 1e11), x)
    carry = ok & (np.abs(m) >= 1e12)  # 9.9999999999995 rounds up to 10.0000000000
    m = np.where(carry, m / 10.0, m)
    e = np.where(carry, e + 1.0, e)
    key = pd.DataFrame(np.concatenate([m, e], axis=1))
    out = df.loc[~key.duplicated(keep="first").to_numpy()]
    out.attrs.update(df.attrs)
    return out


def _headroom_ok(out: Batch, min_headroom: float) -> np.ndarray:
    """Rows whose memory estimate leaves at least ``min_headroom`` of the usable HBM free:
    ``mem_total_bytes <= (1 − min_headroom) · hbm_usable_bytes`` (bool, shape (n,))."""
    total = np.asarray(out["mem_total_bytes"], dtype=np.float64)
    usable = np.asarray(out["hbm_usable_bytes"] if "hbm_usable_bytes" in out else out["hbm_bytes"], dtype=np.float64)
    return total <= (1.0 - float(min_headroom)) * usable


def _reasons_after_eval(out: Batch, rule_reason: np.ndarray, objective: str = "time_to_train",
                        memory_rule: str = "fits", min_headroom: float = 0.0) -> np.ndarray:
    """Combine rule reasons with memory / host-memory feasibility of the evaluated rows; a
    non-finite step time is never feasible, a non-finite time to train only under an objective
    of :data:`_TIME_OBJECTIVES` (MFU does not depend on it; found by review: with no checkpoint
    tier an MFU sweep reported no feasible split; a goodput-weighted throughput is 0 on every
    such row, so it ranks nothing and is refused with the time objectives)."""
    reason = rule_reason.astype(np.int16, copy=True)
    ok = reason == R_OK
    if "fits" in out:
        oom = ok & ~np.asarray(out["fits"], dtype=bool)
        if "mem_worst_stage" in out:
            stage = np.nan_to_num(np.asarray(out["mem_worst_stage"], dtype=np.float64), nan=0.0)
            code = R_OOM + np.clip(stage, 0, 30000).astype(np.int16)
        else:
            code = np.full(reason.shape, R_OOM - 1, dtype=np.int16)  # "OOM"
        reason[oom] = code[oom]
        ok = reason == R_OK
    if memory_rule == "conservative" and "fits_conservative" in out:
        reason[ok & ~np.asarray(out["fits_conservative"], dtype=bool)] = R_MEM_TIGHT
        ok = reason == R_OK
    if min_headroom > 0.0 and "fits" in out:
        reason[ok & ~_headroom_ok(out, min_headroom)] = R_HEADROOM
        ok = reason == R_OK
    for name in ("host_fits", "host_fits_ckpt"):  # offloaded states; in-memory checkpoints
        if name in out:
            reason[ok & ~np.asarray(out[name], dtype=bool)] = R_HOST
            ok = reason == R_OK
    for name in ("step_time_s", "time_to_train_days")[:2 if objective in _TIME_OBJECTIVES else 1]:
        if name in out:
            bad = ok & ~np.isfinite(np.asarray(out[name], dtype=np.float64))
            reason[bad] = R_NOT_EVALUATED
            ok = reason == R_OK
    return reason


def _take_rows(b: Batch, idx: np.ndarray) -> Batch:
    """Rows ``idx`` of every column. A broadcast column (stride 0: one value for every row, as
    :meth:`SplitSpace.rows` makes the base scenario's columns) stays a broadcast view of the
    new length instead of being gathered (the same values, no copy)."""
    n = int(idx.size)
    out: Batch = {}
    for name, v in b.items():
        v = np.asarray(v)
        if v.strides == (0,) and v.ndim == 1 and v.shape[0] >= n:
            out[name] = v[:n]
        else:
            out[name] = v.take(idx)
    return out


def _concat_rows(parts: list[Batch], bcast: dict) -> Batch:
    """Row-wise concatenation of batches with the same columns. A column that is one broadcast
    value in every part stays a broadcast view (a slice of ``bcast[name]`` when that is long
    enough and holds the same value)."""
    if len(parts) == 1:
        return parts[0]
    n = sum(_batch.size(p) for p in parts)
    out: Batch = {}
    for name in parts[0]:
        vs = [np.asarray(p[name]) for p in parts]
        view = _uniform_view(vs, bcast.get(name), n)
        out[name] = view if view is not None else np.concatenate(vs)
    return out


def _uniform_view(vs: list, big, n: int):
    """When every part of a column is a broadcast view (stride 0) of one value (NaN counts as
    equal to NaN), an (n,) view of that value — a slice of the preallocated broadcast column
    ``big`` when it holds the same value — else None (the column must be copied)."""
    v0 = vs[0]
    x0 = v0[0]

    def same(x):
        return x == x0 or (x != x and x0 != x0)

    if not all(v.strides == (0,) and v.dtype == v0.dtype and same(v[0]) for v in vs):
        return None
    if big is not None and big.shape[0] >= n and big.dtype == v0.dtype and same(big[0]):
        return big[:n]
    return np.broadcast_to(v0[:1], (n,))


def _gather_rows(parts: list, bcast: dict) -> Batch:
    """Rows ``idx`` of each batch of ``parts`` (a list of ``(batch, idx)``, ``idx`` None for
    every row), concatenated row-wise: :func:`_take_rows` then :func:`_concat_rows` in one
    pass (each column gathered straight into its place in the result, no intermediate copy).
    Broadcast columns stay broadcast views as in :func:`_concat_rows`."""
    if len(parts) == 1:
        b, idx = parts[0]
        return b if idx is None else _take_rows(b, idx)
    sizes = [(_batch.size(b) if idx is None else int(idx.size)) for b, idx in parts]
    n = sum(sizes)
    out: Batch = {}
    for name in parts[0][0]:
        vs = [np.asarray(b[name]) for b, _ in parts]
        view = _uniform_view(vs, bcast.get(name), n)
        if view is not None:
            out[name] = view
            continue
        dt = np.result_type(*vs)
        dst = np.empty(n, dtype=dt)
        a = 0
        for v, (_, idx), k in zip(vs, parts, sizes):
            if v.dtype != dt:
                v = v.astype(dt)
            if idx is None:
                dst[a:a + k] = v[:k]
            else:
                np.take(v, idx, out=dst[a:a + k])
            a += k
        out[name] = dst
    return out


def _evaluate_chunk(b: Batch, rule_reason: np.ndarray) -> Batch:
    """Run the engine on the rule-valid rows of a chunk; invalid rows get NaN results."""
    valid = rule_reason == R_OK
    if np.all(valid):
        return run_batch(b)
    k = valid.size
    if not np.any(valid):
        return dict(b)
    vidx = np.flatnonzero(valid)
    res = run_batch(_take_rows(b, vidx))
    out = dict(b)
    for name, v in res.items():
        if name in b:
            continue
        v = np.asarray(v)
        if v.dtype == bool:
            full = np.zeros(k, dtype=bool)
        elif np.issubdtype(v.dtype, np.integer):
            full = np.full(k, -1, dtype=v.dtype)
        else:
            full = np.full(k, np.nan, dtype=np.float64)
        full[vidx] = v
        out[name] = full
    return out


def _result_names(out: Batch) -> list[str]:
    names = [c for c in RESULT_COLUMNS if c in out]
    # the logits' part of the memory, after the activations as evaluate lists it: without it the
    # parts did not add up to mem_total_bytes (review 44a: 7,848 of the default sweep's 26,172 rows)
    if "mem_logits_bytes" in out and "mem_activations_bytes" in names and "mem_logits_bytes" not in names:
        names.insert(names.index("mem_activations_bytes") + 1, "mem_logits_bytes")
    names += [c for c in EXTRA_RESULT_COLUMNS if c in out and c not in names]
    return names


def _add_derived(out: Batch) -> None:
    if "hbm_usable_bytes" in out and "mem_total_bytes" in out:
        out["mem_headroom_bytes"] = np.asarray(out["hbm_usable_bytes"], dtype=np.float64) - np.asarray(
            out["mem_total_bytes"], dtype=np.float64)
    if "host_memory_bytes" in out:  # the capacity host_fits compares with (planner.batch.CAPACITY_COLUMNS)
        out["host_mem_capacity_per_node_bytes"] = np.asarray(out["host_memory_bytes"], dtype=np.float64)
    if "tokens_per_s" in out:
        gp = np.asarray(out["goodput"], dtype=np.float64) if "goodput" in out else 1.0
        out["goodput_tokens_per_s"] = np.asarray(out["tokens_per_s"], dtype=np.float64) * gp


def _miss_ratio(out: Batch, n: int) -> np.ndarray:
    """How far each row is from fitting, for ranking the rows that do not (``feasible_only=False``):
    the larger of peak memory / usable HBM and host memory per node / the node's host memory (at
    most 1 fits; a row out by a memory rule or headroom can be below 1); inf where unknown."""
    gpu = _col_or_nan(out, "mem_total_bytes", n) / _col_or_nan(out, "hbm_usable_bytes", n)
    need = _col_or_nan(out, "host_mem_per_node_bytes", n)
    if "ckpt_host_mem_per_node_bytes" in out:
        need = need + np.nan_to_num(_col_or_nan(out, "ckpt_host_mem_per_node_bytes", n))
    with np.errstate(divide="ignore", invalid="ignore"):
        host = need / _col_or_nan(out, "host_mem_capacity_per_node_bytes", n)
    r = np.fmax(gpu, host)
    return np.where(np.isfinite(r), r, np.inf)


def _col_or_nan(out: Batch, name: str, n: int) -> np.ndarray:
    return np.asarray(out[name], dtype=np.float64) if name in out else np.full(n, np.nan)


def _stable_argsort(key: np.ndarray) -> np.ndarray:
    """``np.argsort(key, kind="stable")`` for a float key without NaN, faster: an unstable
    argsort, then the runs of equal keys put back in index order by one int64 sort of
    ``run·n + index`` (unique values, so any sort order of them is the stable one)."""
    n = key.size
    o = np.argsort(key)
    if n < 2:
        return o
    ks = key[o]
    tie = ks[1:] == ks[:-1]
    if not tie.any():
        return o
    run = np.empty(n, dtype=np.int64)
    run[0] = 0
    np.cumsum(~tie, out=run[1:])
    comp = run * n + o
    comp.sort()
    return comp % n


_STR_DTYPE = None


def _str_column(table: Sequence[str], codes: np.ndarray):
    """``table[codes]`` as a column of strings for the DataFrame, shape (n,).

    pandas (>= 3) stores strings in Arrow arrays; building one from a Python object array
    costs ~60 ns per row, so when pandas' default string dtype is Arrow-backed the column is
    made with an Arrow ``take`` from the small table instead (same values, same dtype).
    Otherwise (or for an empty column) the object array, as pandas would get it anyway."""
    global _STR_DTYPE
    codes = np.asarray(codes, dtype=np.int64)
    if codes.size:
        if _STR_DTYPE is None:
            _STR_DTYPE = pd.Series(["x"]).dtype
        dt = _STR_DTYPE
        if isinstance(dt, pd.StringDtype) and dt.storage == "pyarrow":
            import pyarrow as pa

            arr = pa.array(list(table), type=pa.large_string()).take(pa.array(codes))
            try:
                return pd.arrays.ArrowStringArray(arr, dtype=dt)
            except TypeError:  # an older pandas without the dtype argument
                pass
    return np.asarray(list(table), dtype=object)[codes]


def sweep(
    scenario: Scenario,
    *,
    gpus: int | Sequence[int] | None = None,
    systems: Sequence[str] | None = None,
    objective: str = "time_to_train",
    top: int | None = None,
    feasible_only: bool = True,
    chunk_size: int = 250_000,
    progress: Callable[[int, int], None] | None = None,
    memory_rule: str = "fits",
    min_headroom: float = 0.0,
    **space_options,
) -> pd.DataFrame:
    """Evaluate every valid split of a scenario and rank them.

    Parameters
    ----------
    scenario : Scenario (or JSON-like dict)
    gpus : int or list of int, optional — cluster sizes to try (default the scenario's).
    systems : list of system ids, optional — systems to compare (default the scenario's).
    objective : one of :data:`OBJECTIVES`.
    top : int, optional — keep only the best ``top`` rows.
    feasible_only : drop rows that do not fit (memory, host memory); when False they are kept,
        ranked after every feasible row, nearest miss first (the larger of peak memory / usable HBM and
        host memory / the node's; then by the objective), with ``infeasible_reason`` set.
    chunk_size : most rows per engine pass (the pass is also capped at
        ``engine.DEFAULT_CHUNK_ROWS``, the cache-friendly size); a sweep of any size streams
        through in chunks with the same result, memory bounded by the chunk, the shown rows
        and five numbers per feasible row (for the Pareto fronts).
    progress : callable ``progress(done_rows, total_rows)`` called after each chunk (rows
        counted in the whole enumerated space).
    memory_rule : "fits" (default: the estimate, margin included, within usable HBM) or
        "conservative" (also ``fits_conservative``, :data:`MEMORY_RULES`): a row beyond it is
        infeasible with its own reason. Found by review 14g: the best DeepSeek-V3 split used
        79.64 of 79.65 GiB, the best Qwen3-235B split 183.6 of 185.0 GiB and GPT-3 175B's 79.1 of
        80 GiB, where the estimate's error on the published peaks of validation/out_of_sample.csv
        is several per cent.
    min_headroom : fraction of the usable HBM a row must leave free, 0 (default) to below 1:
        ``mem_total_bytes <= (1 − min_headroom) · hbm_usable_bytes``, else infeasible ("less HBM
        left free than min_headroom"). 0.1 leaves 10 % of the usable HBM free.
    **space_options : passed to :func:`build_space` (candidate lists, ``allow_uneven``,
        ``allow_tp_beyond_nvlink``, ``include_invalid`` ...).

    Returns
    -------
    pandas.DataFrame, one row per split, sorted by the objective (best first), columns:
    :data:`SPLIT_COLUMNS`, the result columns present (DESIGN §3 order, plus
    ``hbm_usable_bytes``, ``mem_headroom_bytes``, ``mem_worst_stage``, ``host_fits``,
    ``goodput_tokens_per_s`` when available), ``infeasible_reason`` ('' when feasible),
    ``pareto_time_cost`` and ``pareto_throughput_memory`` (bool; computed over all feasible
    rows of the sweep, not only the rows shown). Units as in :func:`planner.evaluate`: in the
    column names (``*_bytes``, ``*_s``, ``*_days``, ``*_usd``), fractions for mfu / goodput.

    A scenario whose own split does not suit its model or GPU count (``pp·vpp`` not dividing the
    layers of another model, TP not dividing the GPUs) is swept from the plainest split it accepts,
    as ``planner sweep`` does: ``attrs["note"]`` says so, and a ``UserWarning`` with the same text.

    Raises
    ------
    InputError (a ``ValueError``, one line per problem in ``.lines``) — an invalid scenario (a fault
    not in its split), an
    unknown objective or system, candidate degrees that are not positive integers (``tp="16"``,
    ``cp_max=0``), bad ``gpus`` / ``top``, an unknown keyword (``foo=1``: named, with the
    accepted ones); an empty result (nothing fits) is not an error: its ``attrs["reason"]``
    says why (:func:`no_split_reason`).

    Notes
    -----
    Speed (``benchmarks/bench_sweep.py``). Rows are independent (DESIGN §2), so the engine's
    stages may see any subset of rows in any grouping with the same per-row results. With
    ``feasible_only`` the rows that the memory stage finds not to fit (``fits`` or
    ``host_fits`` False: they can never be shown nor enter a Pareto front) are dropped before
    the later stages (timing, reliability, cost), and the surviving rows of several chunks are
    gathered into one batch of two to three chunks for those stages (their per-call costs
    amortised over more rows; memory bounded by those chunks). Ranking, top-K and Pareto flags
    work on numpy arrays; the DataFrame is built once, for the returned rows only. With ``top``
    and at least ``engine.PARALLEL_MIN_ROWS`` rows the chunks run on forked worker processes
    (:func:`planner.engine.resolve_workers`: every usable CPU, ``CLUSTERPLAN_WORKERS``, serial in
    a threaded process), each returning its candidates; the table is the same (docs/sweep.md).
    """
    start_note = None
    try:
        scenario = validate_scenario(scenario)
    except InputError as e:
        # The sweep replaces the split: one that does not suit the model or the GPU count is no
        # reason to refuse; start from the plainest split the scenario accepts, as `planner sweep`
        # and the Explore page do (review 44a: the API refused what the CLI swept)
        data = (scenario.model_dump(mode="json", by_alias=True) if isinstance(scenario, Scenario)
                else copy.deepcopy(dict(scenario)) if isinstance(scenario, dict) else None)
        found = replaced_split(data, e) if data is not None else None
        if found is None:
            raise
        scenario, start_gpus, start_note = found
        if start_gpus is not None and gpus is None:
            gpus = start_gpus  # no split of the scenario's own GPU count is valid: still swept, to say why
    if objective not in OBJECTIVES:
        raise InputError([f"sweep: objective {_sh(objective)}: allowed: {', '.join(OBJECTIVES)}"])
    bad = []
    if top is not None and not (is_whole_number(top) and top >= 1):
        bad.append(f"sweep: top = {_sh(top)}: give a positive whole number of rows (or None for all)")
    if not (is_whole_number(chunk_size) and chunk_size >= 1):
        bad.append(f"sweep: chunk_size = {_sh(chunk_size)}: give a positive whole number of rows")
    if gpus is not None:
        g_list = list(gpus) if isinstance(gpus, Iterable) and not isinstance(gpus, (str, bytes)) else [gpus]
        if not g_list or not all(is_whole_number(g) and g >= 1 for g in g_list):
            bad.append(f"sweep: gpus = {_sh(gpus)}: give a positive whole number of GPUs or a list of them")
    if systems is not None and (isinstance(systems, (str, bytes)) or not all(isinstance(x, str) for x in systems)):
        bad.append(f"sweep: systems = {_sh(systems)}: give a list of system ids, e.g. ['dgx-h100']")
    if not (isinstance(memory_rule, str) and memory_rule in MEMORY_RULES):
        bad.append(f"sweep: memory_rule = {_sh(memory_rule)}: allowed: {', '.join(MEMORY_RULES)}")
    if (isinstance(min_headroom, (bool, np.bool_)) or not isinstance(min_headroom, (int, float, np.integer, np.floating))
            or not 0.0 <= float(min_headroom) < 1.0):
        bad.append(f"sweep: min_headroom = {_sh(min_headroom)}: give a fraction of usable HBM from 0 to below 1 "
                   "(e.g. 0.1)")
    if not isinstance(feasible_only, (bool, np.bool_)):  # found by review: "no" was taken as True
        bad.append(f"sweep: feasible_only = {_sh(feasible_only)}: give True or False")
    if progress is not None and not callable(progress):  # found by review: a raw TypeError later
        bad.append(f"sweep: progress = {_sh(progress)}: give a function of (rows done, rows in all), or None")
    inv = space_options.get("include_invalid", False)
    if not isinstance(inv, (bool, np.bool_)):  # checked before feasible_only overrides it
        bad.append(f"sweep: include_invalid = {_sh(inv)}: give True or False")
    if bad:
        raise InputError(bad)
    top = None if top is None else int(top)  # 5.0 passed the check as a whole number
    chunk_size = int(chunk_size)
    _check_space_options(space_options, fixed=_SWEEP_KEYS)
    if feasible_only:
        space_options["include_invalid"] = False
    space = build_space(scenario, gpus=gpus, systems=systems, **space_options)
    total = space.n_rows
    st = _scan_space(space, chunk_size=chunk_size, objective=objective, top=top, feasible_only=feasible_only,
                     memory_rule=memory_rule, min_headroom=min_headroom,
                     include_invalid=bool(space_options.get("include_invalid", False)), progress=progress)
    src_parts, pos_parts, key_parts = st["src_parts"], st["pos_parts"], st["key_parts"]
    reason_parts, group_parts, fpos_parts = st["reason_parts"], st["group_parts"], st["fpos_parts"]
    par_t, par_c, par_tps, par_hr = st["par_t"], st["par_c"], st["par_tps"], st["par_hr"]
    n_feas, names, probe = st["n_feas"], st["names"], st["probe"]

    if names is None and probe is not None:  # no row fits: the columns the stages would give
        for mod in st["post"]:
            probe.update(mod.stage(probe))
        _add_derived(probe)
        names = _result_names(probe)
    if names is None:  # no configuration at all: learn the columns from the base scenario (one row)
        base = _engine.run_batch(_batch.from_scenarios([scenario]))
        _add_derived(base)
        names = _result_names(base)

    # Rank every candidate: by key, ties in enumeration order (candidates are in row order).
    if key_parts:
        key2_parts = st.get("key2_parts") or []
        if key2_parts:  # feasible_only=False: then the rows that do not fit, nearest miss first
            order = np.lexsort((np.concatenate(st["key3_parts"]), np.concatenate(key2_parts),
                                np.concatenate(key_parts)))
        else:
            order = _stable_argsort(np.concatenate(key_parts))
        if top is not None:
            order = order[:top]
        reason_s = np.concatenate(reason_parts)[order]
        group_s = np.concatenate(group_parts)[order]
        fpos_s = np.concatenate(fpos_parts)[order]
        take = np.concatenate(pos_parts)[order]

        def column(c, dtype=None):
            if all(c in p for p in src_parts):
                vs = [np.asarray(p[c]) for p in src_parts]
                if vs[0].size and _uniform_view(vs, None, 1) is not None:
                    # one broadcast value everywhere (stride 0): a new filled column, no gather
                    v = np.full(take.size, vs[0][0], dtype=np.result_type(*vs))
                else:
                    v = vs[0] if len(vs) == 1 else np.concatenate(vs)
                    v = v.take(take)
            else:  # a column some batch lacks: NaN there (as a float column)
                v = np.concatenate([np.asarray(p[c], dtype=np.float64) if c in p
                                    else np.full(_batch.size(p), np.nan) for p in src_parts]).take(take)
            return v if dtype is None else v.astype(dtype, copy=False)
        n_out = order.size
    else:
        reason_s = group_s = fpos_s = np.zeros(0, dtype=np.int64)
        n_out = 0

        def column(c, dtype=None):
            v = np.zeros(0)
            return v if dtype is None else v.astype(dtype)

    # Pareto flags over every feasible row of the sweep.
    cat = (lambda xs: np.concatenate(xs) if xs else np.zeros(0))
    front_tc = pareto_front(cat(par_t), cat(par_c), (True, True))
    front_tm = pareto_front(cat(par_tps), cat(par_hr), (False, False))
    shown_ok = reason_s == R_OK
    fp = np.where(shown_ok, fpos_s, 0).astype(np.int64)
    on_tc = shown_ok & front_tc[fp] if n_feas else np.zeros(n_out, dtype=bool)
    on_tm = shown_ok & front_tm[fp] if n_feas else np.zeros(n_out, dtype=bool)

    sys_ids = [gr[0] for gr in space.groups]
    data = {
        "system": _str_column(sys_ids, group_s) if n_out else np.zeros(0, dtype=object),
        "n_gpus": column("n_gpus", np.int64),
        "tp": column("tp", np.int64),
        "pp": column("pp", np.int64),
        "dp": column("dp", np.int64),
        "cp": column("cp", np.int64),
        "ep": column("ep", np.int64),
        "vpp": column("vpp", np.int64),
        "micro_batch_size": column("micro_batch_size", np.int64),
        "zero_stage": column("zero_stage", np.int64),
        "recompute": _str_column(RECOMPUTE, column("recompute", np.int64)),
        "schedule": _str_column(SCHEDULES, column("schedule", np.int64)),
        "sequence_parallel": column("sequence_parallel", bool),
        "offload_optimizer": _str_column(OFFLOAD, column("offload_optimizer", np.int64)),
    }
    for c in names:
        data[c] = column(c)
    data["infeasible_reason"] = (_str_column(_reason_table(reason_s), reason_s) if n_out
                                 else np.zeros(0, dtype=object))
    data["pareto_time_cost"] = on_tc
    data["pareto_throughput_memory"] = on_tm
    df = pd.DataFrame(data, copy=False)
    # the splits evaluated: every rule-valid row (found by review 15l: NVMe-offload rows on a system
    # without NVMe, never generated nor evaluated, were counted, so `planner sweep` told of "2,196
    # valid splits evaluated" where 1,464 were); with include_invalid every generated row
    df.attrs["n_configurations"] = total if space_options.get("include_invalid", False) else space.count_valid()
    df.attrs["n_feasible"] = int(n_feas)
    df.attrs["objective"] = objective
    if df.empty:  # why, in words (what the CLI prints; found by review: Python got no reason)
        n_valid = space.count_valid()
        if total and not n_valid:
            # found by review: offload=("nvme",) on a system without NVMe was "out of memory"
            no_nvme = [sid for (sid, _, _), has in zip(space.groups, space.group_has_nvme) if not has]
            df.attrs["reason"] = (f"no split is valid: offload = nvme needs local NVMe, and {', '.join(no_nvme)} "
                                  "has none (add 'cpu' or 'none' to offload)")
        elif not n_valid and len({n for _, n, _ in space.groups}) == 1:
            # which rules stop the splits, naming the fields, and what would work (as the CLI says;
            # found by review: Python got "try a count with more small factors" alone)
            detail = no_valid_split_reason(scenario, space.groups[0][1], systems=systems, **space_options)
            df.attrs["reason"] = ("no split satisfies the divisibility rules (heads, layers, batch) at this GPU "
                                  "count. " + detail[:1].upper() + detail[1:])
        else:
            # the space swept, for the check without the memory limits (review 14j: the reason said
            # "runs out of memory" where only min_headroom / memory_rule left no split)
            opts = {k: v for k, v in space_options.items() if k != "include_invalid"}
            df.attrs["reason"] = no_split_reason(scenario, n_valid, systems=systems, swept_gpus=gpus,
                                                 memory_rule=memory_rule, min_headroom=float(min_headroom),
                                                 fail_counts=st["fail"], objective=objective, **opts)
    if start_note is not None:
        df.attrs["note"] = start_note
        import warnings
        warnings.warn(start_note, UserWarning, stacklevel=2)
    return df


def _scan_space(space: "SplitSpace", *, chunk_size: int, objective: str, top, feasible_only: bool,
                memory_rule: str, min_headroom, include_invalid: bool, progress=None) -> dict:
    """Evaluate every row of ``space`` in chunks (:func:`_scan`, or :func:`_scan_parallel` on
    forked workers with ``top``): what :func:`sweep` ranks, and :func:`_fail_counts` counts."""
    total = space.n_rows
    # The engine runs fastest on cache-sized pieces (engine.DEFAULT_CHUNK_ROWS); cutting the
    # sweep at that size here also keeps the engine from concatenating the input columns.
    step = min(int(chunk_size), int(getattr(_engine, "DEFAULT_CHUNK_ROWS", chunk_size)))
    mods = _engine._stage_modules()
    mod_names = [m.__name__ for m in mods]
    # Stages run per enumerated chunk (``pre``) and, with ``feasible_only``, on the rows that
    # fit in memory only (``post``, gathered over chunks).
    if feasible_only and "planner.memory" in mod_names:
        cut = mod_names.index("planner.memory") + 1
    else:
        cut = len(mods)
    pre, post = mods[:cut], mods[cut:]
    drop_invalid = feasible_only or not include_invalid
    space.broadcast_columns(3 * step if post else step)

    scan_kw = dict(step=step, pre=pre, post=post, objective=objective, top=top, memory_rule=memory_rule,
                   min_headroom=float(min_headroom) if not isinstance(min_headroom, (bool, np.bool_)) else 0.0,
                   feasible_only=feasible_only, drop_invalid=drop_invalid)
    starts = range(0, total, step)
    # Worker processes only with ``top``: each returns its candidates and the Pareto inputs of its
    # feasible rows (without ``top`` every row's columns would travel back).
    # (CLUSTERPLAN_WORKERS is read only where workers could run: with top, over more than one chunk)
    workers = _engine.resolve_workers(None, len(starts), total) if top is not None and len(starts) > 1 else 1
    if workers > 1 and _engine._FORK_LOCK.acquire(blocking=False):  # else another thread's run holds them
        try:
            st = _scan_parallel(space, starts, workers, scan_kw, progress)
        finally:
            _engine._FORK_LOCK.release()
    else:
        st = _scan(space, starts, progress=progress, **scan_kw)
    st["post"] = post
    return st


def _scan(space: "SplitSpace", starts, *, step: int, pre, post, objective: str, top, feasible_only: bool,
          drop_invalid: bool, progress=None, memory_rule: str = "fits", min_headroom: float = 0.0) -> dict:
    """Evaluate the chunks of ``space`` that begin at the rows ``starts`` (in order): memory
    first, the later stages on the rows that fit, then each evaluated batch's reasons, ranking
    key, Pareto inputs and candidate rows. Returns those as lists in row order, with positions
    counted from 0 (:func:`_merge_scans` joins the scans of consecutive ranges)."""
    # Per flushed batch: where the shown candidates' columns come from.
    src_parts: list[dict] = []   # column dicts (full batch, or the gathered candidates with top)
    pos_parts: list[np.ndarray] = []  # candidate positions in the concatenation of src_parts
    key_parts, reason_parts, group_parts, fpos_parts = [], [], [], []
    # without feasible_only, the rows that do not fit rank after every row that fits, among themselves
    # nearest miss first (:func:`_miss_ratio`), then by the objective (−inf / inf for the rows that fit; review
    # 34: they kept enumeration order, and ``top`` kept arbitrary ones rather than the nearest misses)
    key2_parts: list[np.ndarray] = []
    key3_parts: list[np.ndarray] = []
    src_rows = 0
    par_t, par_c, par_tps, par_hr = [], [], [], []
    n_feas = 0
    names: list[str] | None = None
    probe: Batch | None = None   # one pruned row: learns the result columns when none survive
    # Why rule-valid rows failed, for the reason of an empty sweep (:func:`no_split_reason`): rows
    # out of HBM, rows that fit in HBM (and the memory limits) but not in host memory, and the
    # least host memory per node such a row needs (review 15l: every split of a CPU-offload space
    # over host memory was reported as "runs out of memory", with advice to offload more).
    fail = {"oom": 0, "host": 0, "host_need_min": math.inf}

    def host_fail(need: np.ndarray) -> None:
        fail["host"] += int(need.size)
        if need.size:
            fail["host_need_min"] = min(fail["host_need_min"], float(np.min(need)))

    def finish(out: Batch, gidx: np.ndarray, g: np.ndarray, rule_reason: np.ndarray) -> None:
        """Reasons, ranking key, Pareto inputs and the candidate rows of an evaluated batch."""
        nonlocal names, n_feas, src_rows
        _add_derived(out)
        # the result columns, learned from a batch that was evaluated (found by review: a first
        # chunk of rule-invalid rows only, with include_invalid, gave a table without results;
        # a batch before that one shows NaN there, as column() fills a column a batch lacks)
        if names is None and bool(np.any(rule_reason == R_OK)):
            names = _result_names(out)
        batch_names = names if names is not None else _result_names(out)
        n = gidx.size
        reason = _reasons_after_eval(out, rule_reason, objective, memory_rule, min_headroom)
        feas = reason == R_OK
        fail["oom"] += int(np.count_nonzero(reason >= R_OOM - 1))
        hf = reason == R_HOST
        if hf.any():
            need = _col_or_nan(out, "host_mem_per_node_bytes", n)[hf]
            if "host_fits_ckpt" in out:
                need = np.where(np.asarray(out["host_fits_ckpt"], dtype=bool)[hf], need,
                                need + _col_or_nan(out, "ckpt_host_mem_per_node_bytes", n)[hf])
            host_fail(np.nan_to_num(need, nan=0.0))
        raw = _objective_key(out, objective, n)
        key = np.where(feas & np.isfinite(raw), raw, np.inf)
        if feasible_only:
            key2 = key3 = None
        else:
            # −inf for the rows that fit: one without a finite objective (key inf) still ranks before
            # every row that does not fit, as the docstring says
            key2 = np.where(feas, -np.inf, _miss_ratio(out, n))
            key3 = np.where(~feas & np.isfinite(raw), raw, np.inf)
        # Pareto inputs of the feasible rows (compact: four numbers per row) and each row's
        # position among them.
        fpos = n_feas + np.cumsum(feas) - 1
        n_feas += int(np.count_nonzero(feas))
        par_t.append(_col_or_nan(out, "time_to_train_days", n)[feas])
        par_c.append(_col_or_nan(out, "cost_usd", n)[feas])
        par_tps.append(_col_or_nan(out, "tokens_per_s", n)[feas])
        par_hr.append(_col_or_nan(out, "mem_headroom_bytes", n)[feas])
        # Rows that may be shown.
        cidx = np.flatnonzero(feas) if feasible_only else np.arange(n)
        if top is not None and cidx.size > top and key2 is not None:
            # by (key, key2, key3, row number): np.lexsort is stable, the last key primary
            cidx = cidx[np.lexsort((key3[cidx], key2[cidx], key[cidx]))[:top]]
            cidx.sort()  # candidates stay in row order (the final ranking's ties)
        elif top is not None and cidx.size > top:
            # The batch's best ``top`` by (key, row number): ties kept in enumeration order.
            kc = key[cidx]
            kth = np.partition(kc, top - 1)[top - 1]
            better = kc < kth
            ties = np.flatnonzero(kc == kth)[: top - int(np.count_nonzero(better))]
            better[ties] = True
            cidx = cidx[better]
        if top is None:  # every candidate is shown: keep the batch, gather once at the end
            src_parts.append(out)
            pos_parts.append(src_rows + cidx)
            src_rows += n
        else:
            src_parts.append({c: np.asarray(out[c]).take(cidx) for c in _SHOWN_SPLIT if c in out}
                             | {c: np.asarray(out[c]).take(cidx) for c in batch_names if c in out})
            pos_parts.append(src_rows + np.arange(cidx.size))
            src_rows += cidx.size
        key_parts.append(key[cidx])
        if key2 is not None:
            key2_parts.append(key2[cidx])
            key3_parts.append(key3[cidx])
        reason_parts.append(reason[cidx])
        group_parts.append(g[cidx])
        fpos_parts.append(fpos[cidx])

    pending: list[tuple[Batch, np.ndarray, np.ndarray, np.ndarray]] = []
    n_pending = 0

    def flush() -> None:
        nonlocal n_pending
        if not pending:
            return
        out = _gather_rows([(p[0], p[4]) for p in pending], space.broadcast_columns(3 * step))
        gidx, g, rr = (np.concatenate([p[i] for p in pending]) for i in (1, 2, 3))
        pending.clear()
        n_pending = 0
        for mod in post:
            out.update(mod.stage(out))
        finish(out, gidx, g, rr)

    total = space.n_rows
    for start in starts:  # loop over chunks, not rows
        stop = min(start + step, total)
        b, rule_reason, g = space.rows(start, stop)
        gidx = np.arange(start, stop, dtype=np.int64)
        if drop_invalid:
            # NVMe rows on systems without NVMe are not generated.
            sel = rule_reason == R_OK
            if not np.all(sel):
                idx = np.flatnonzero(sel)
                b = _take_rows(b, idx)
                g, rule_reason, gidx = g[idx], rule_reason[idx], gidx[idx]
        if gidx.size:
            if not post:
                finish(_evaluate_chunk(b, rule_reason), gidx, g, rule_reason)
            else:
                out = dict(b)
                for mod in pre:
                    out.update(mod.stage(out))
                ok = np.asarray(out["fits"], dtype=bool) if "fits" in out else np.ones(gidx.size, bool)
                fail["oom"] += int(np.count_nonzero(~ok & (rule_reason == R_OK)))
                if memory_rule == "conservative" and "fits_conservative" in out:
                    ok = ok & np.asarray(out["fits_conservative"], dtype=bool)
                if min_headroom > 0.0 and "mem_total_bytes" in out:
                    ok = ok & _headroom_ok(out, min_headroom)
                if "host_fits" in out:
                    hf = ok & ~np.asarray(out["host_fits"], dtype=bool) & (rule_reason == R_OK)
                    if hf.any():
                        host_fail(_col_or_nan(out, "host_mem_per_node_bytes", gidx.size)[hf])
                    ok = ok & np.asarray(out["host_fits"], dtype=bool)
                idx = None  # rows of ``out`` that go on (None: every row)
                if not np.all(ok):
                    sel = np.flatnonzero(ok)
                    if probe is None and names is None:
                        probe = _take_rows(out, np.arange(1))
                    g, rule_reason, gidx = g[sel], rule_reason[sel], gidx[sel]
                    if 4 * sel.size < ok.size:
                        # few survivors: gather now (the memory held while pending stays bounded)
                        out = _take_rows(out, sel)
                    else:  # gathered at the flush, straight into the flushed batch
                        idx = sel
                if gidx.size:
                    pending.append((out, gidx, g, rule_reason, idx))
                    n_pending += gidx.size
                    if n_pending >= 2 * step:
                        flush()
        if progress is not None:
            progress(stop, total)
    flush()
    return dict(src_parts=src_parts, pos_parts=pos_parts, key_parts=key_parts, key2_parts=key2_parts,
                key3_parts=key3_parts,
                reason_parts=reason_parts,
                group_parts=group_parts, fpos_parts=fpos_parts, src_rows=src_rows, par_t=par_t, par_c=par_c,
                par_tps=par_tps, par_hr=par_hr, n_feas=n_feas, names=names, probe=probe, fail=fail)


def _merge_scans(scans: list[dict]) -> dict:
    """:func:`_scan` results of consecutive row ranges, in order, as one scan of their union:
    positions into the source parts and among the feasible rows offset by the rows before."""
    m = dict(src_parts=[], pos_parts=[], key_parts=[], key2_parts=[], key3_parts=[], reason_parts=[], group_parts=[],
             fpos_parts=[],
             src_rows=0, par_t=[], par_c=[], par_tps=[], par_hr=[], n_feas=0, names=None, probe=None,
             fail={"oom": 0, "host": 0, "host_need_min": math.inf})
    for st in scans:
        m["fail"] = {k: (min(m["fail"][k], st["fail"][k]) if k == "host_need_min" else m["fail"][k] + st["fail"][k])
                     for k in m["fail"]}
        m["pos_parts"] += [p + m["src_rows"] for p in st["pos_parts"]]
        m["fpos_parts"] += [f + m["n_feas"] for f in st["fpos_parts"]]
        for k in ("src_parts", "key_parts", "key2_parts", "key3_parts", "reason_parts", "group_parts", "par_t", "par_c", "par_tps",
                  "par_hr"):
            m[k] += st.get(k, [])  # key2 / key3: only without feasible_only
        m["src_rows"] += st["src_rows"]
        m["n_feas"] += st["n_feas"]
        if m["names"] is None:
            m["names"] = st["names"]
        if m["probe"] is None and m["names"] is None:
            m["probe"] = st["probe"]
    return m


def _fork_scan(i: int) -> dict:
    space, tasks, kw = _engine._CHILD_JOB
    return _scan(space, tasks[i], **kw)


def _scan_parallel(space: "SplitSpace", starts: range, workers: int, kw: dict, progress) -> dict:
    """:func:`_scan` over ``workers`` forked processes (:func:`planner.engine.forked_results`):
    the chunks in consecutive ranges (about four per worker, each at least three chunks so the
    later stages still see gathered batches), the scans joined in row order by
    :func:`_merge_scans`. The same table as one process: the candidates of a range are its
    best ``top`` (ties in row order), so the best ``top`` of their union are those of the
    whole space, and the Pareto inputs are concatenated in row order."""
    n_tasks = max(1, min(4 * workers, len(starts) // 3))
    bounds = np.linspace(0, len(starts), n_tasks + 1).round().astype(int)
    tasks = [starts[a:b] for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    total = space.n_rows
    scans = []
    # closed here, not by the garbage collector (engine.forked_results); strict: one result per task
    with contextlib.closing(_engine.forked_results(_fork_scan, range(len(tasks)), min(workers, len(tasks)),
                                                   (space, tasks, kw))) as results:
        for task, st in zip(tasks, results, strict=True):
            scans.append(st)
            if progress is not None:
                progress(min(task[-1] + kw["step"], total), total)
    return _merge_scans(scans)


#: Split columns of the table, as batch columns (gathered for the candidates with ``top``).
_SHOWN_SPLIT: tuple[str, ...] = (
    "n_gpus", "tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch_size", "zero_stage", "recompute",
    "schedule", "sequence_parallel", "offload_optimizer",
)


def row_expert_tp(etp, tp, moe: bool):
    """Expert TP of a sweep row (``parallelism.etp`` is not swept): the scenario's where it divides
    the row's TP, ``gcd(etp, tp)``, for an MoE model; None (= tp) where the scenario leaves it unset
    or the model is dense. Scalars or arrays (the rows' columns). The one rule of :meth:`SplitSpace.rows`,
    :func:`scenario_for_row` and the Explore page's "Open in Plan" (review h27c / h27d)."""
    if etp is None or not moe:
        return None
    if np.ndim(tp):
        tp_col = np.asarray(tp)
        return np.gcd(np.int64(etp), tp_col.astype(np.int64)).astype(tp_col.dtype)
    return math.gcd(int(etp), int(tp))


def scenario_for_row(scenario: Scenario, row) -> Scenario:
    """The single validated :class:`Scenario` of one sweep row (a row of the table returned by
    :func:`sweep`, or a dict with the same split keys): for "open in Plan" and for checks."""
    data = scenario.to_json_dict()
    # a row of another system than the scenario's (``systems=``: catalogue ids) drops the accelerator
    # override and the cluster overrides, as the sweep did (:func:`_base_scenario_for`); an inline
    # system is compared by its name (found by review 15l: a scenario with an inline system swept on
    # dgx-b200 rebuilt its rows on the inline system, 7.39 s per step where the row said 3.70 s)
    if "system" in row and row["system"] is not None:
        if str(row["system"]) != _system_id(scenario.cluster.system):
            data["cluster"]["system"] = str(row["system"])
            data["cluster"]["accelerator"] = None
            data["cluster"]["overrides"] = {}
    data["cluster"]["n_gpus"] = int(row["n_gpus"])
    par = data["parallelism"]
    for k in ("tp", "pp", "dp", "cp", "ep", "vpp", "zero_stage"):
        par[k] = int(row[k])
    par["dp_shard"] = None  # sweep rows shard over all DP ranks
    # ... and expert TP: the scenario's where it divides the row's tp, gcd(etp, tp); unset (= tp) otherwise
    # (an MoE model's only, as the rows: a dense model's etp can only be its tp; review h27d: Llama 3 8B at
    # tp 2 with etp 2 rebuilt its TP 4 row with etp 2 and was refused)
    par["etp"] = row_expert_tp(scenario.parallelism.etp, row["tp"], scenario.resolved_model().moe is not None)
    par["recompute_layers"] = None  # ... and recompute every layer with full recompute
    par["sequence_parallel"] = bool(row["sequence_parallel"])
    par["recompute"] = str(row["recompute"])
    par["schedule"] = str(row["schedule"])
    par["offload_optimizer"] = str(row["offload_optimizer"])
    if par["offload_optimizer"] == "none":
        par["offload_master_weights"] = False
        par["offload_grads"] = False
    n_micro = data["training"]["global_batch_size"] // (int(row["micro_batch_size"]) * int(row["dp"]))
    if not bool(ep_overlap_possible(int(row["pp"]), SCHEDULES.index(par["schedule"]), n_micro,
                                     RECOMPUTE.index(par["recompute"]), int(row["vpp"]))):
        par["ep_comm_overlap"] = False  # as the sweep row (SplitSpace.rows)
    model = scenario.resolved_model()
    stages = int(row["pp"]) * int(row["vpp"])
    if model.n_layers % stages:
        par["layer_split"] = "uneven"
    data["training"]["micro_batch_size"] = int(row["micro_batch_size"])
    return Scenario.model_validate(data)
