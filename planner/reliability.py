"""Pipeline stage 4: failure rates, checkpoint tiers, optimum intervals and expected goodput.

Reads the reliability and checkpoint columns of :mod:`planner.batch`, ``params_total``
(stage 1) and, when present, ``step_time_s`` (stage 3: an interval is at least one step).
Checkpoint sizes and times come from :mod:`planner.checkpoint`.

Model (DESIGN §4.4):

* **Failure rate.** For each class c, ``λ_c = r_gpu·n_gpus + r_node·n_nodes + r_job`` [1/h]
  (a series system: Kokolis et al. [3]); ``λ = Σ_c λ_c``, ``MTBF = 1/λ``.
* **Recovery.** ``R_c = restart_s`` + ``repair_s`` for the classes that take hardware out
  (``REPAIR_CLASSES`` = gpu, node) unless ``hot_spare_nodes > 0``. The ``repair_s`` of other
  classes is not added (the issue's rule: only gpu/node wait for a repair).
* **Recovery tier.** A failure of class c reloads from the most frequent enabled tier that
  survives c (a replicated node-local tier survives gpu/node loss). Its interval sets the lost
  work (half an interval on average) and its read time the reload.
* **Goodput** (the ``goodput`` column, the headline; also the objective of the interval
  search): the renewal (higher-order) model. Daly's exponential-failure model [2] (eq. 20),
  generalised to several tiers by grouping the classes by recovery tier, and to several failure
  classes with different recovery times::

      1/goodput = (1 + Σ_k stall_k/τ_k) · e^{Σ_c λ_c·(R_c + reload_c)} · Π_k e^{Λ_k·L_k}·M_k·φ(Λ_k·(τ_k + stall_k))

  with ``φ(x) = (e^x − 1)/x``, Λ_k the rate of the classes that recover from tier k, ``L_k``
  the async save lag and ``M_k`` the missed-save factor (both 1 for synchronous saves; **Async
  saves** below). The
  recovery factor is ``1 + λ·E[B]`` with ``B`` the time from a failure until training resumes
  when failures keep arriving during a recovery: a new failure of class c' at time s extends
  the recovery to ``max(its end, s + R_c' + reload_c')`` (a second node is repaired beside the
  first; a software crash cannot lengthen a repair wait it falls inside). ``B`` is then the busy
  period of an M/G/∞ queue (arrivals at rate λ, service R_c + reload_c with probability
  λ_c/λ), whose mean is ``(e^{λ·E[S]} − 1)/λ`` (Takács 1962, *Introduction to the Theory of
  Queues*, ch. 3; P(empty) = e^{−λE[S]} = (1/λ)/(1/λ + E[B])), so the factor is
  ``e^{λ·E[S]} = e^{Σ_c λ_c(R_c + reload_c)}``; with one class it is Daly's ``e^{λR}``. (Until
  2026-12-02 a failure during a recovery restarted it with the new class's time — a 660 s
  software restart cut short a 2 h repair wait — with the factor ``1/Σ_c (λ_c/λ)e^{−λ(R_c +
  reload_c)}``, smaller by Jensen's inequality: at 30× the default preset's failure rate the
  time to train was 97.7 days against 117.3 with the waits kept (found by review, an
  independent event simulation).)
  With one tier and one class this is Daly's model exactly, so the optimum interval is Daly's
  optimum (and Young's when δ ≪ M). With several tiers the grouping is a stated simplification.
  It tracks the Monte Carlo of :mod:`planner.simulate` (docs/reliability.md: within 0.03 pp on
  the default preset up to 30x its failure rate, where the Monte Carlo still runs; within 0.1 pp
  up to λτ = 2 on one tier, sync saves up to 30 min included).
* **Async saves.** With ``ckpt_async`` a save stalls training for ``stall_k`` (device-to-host
  copy + interference) and is durable ``L_k = save_k − stall_k`` later (:func:`save_lag_s`).
  A failure of a class tier k recovers in that window finds the save unwritten and rolls back one
  save further. Per tier this is exact in the same renewal model: between two such failures the
  up time is exponential (mean ``1/Λ``) and the saves made durable number ``N`` with
  ``P(N >= j) = e^{−ΛL}·e^{−Λsj}`` (``s = τ + stall``), so the up time per durable save is
  ``(1/Λ)/E[N] = e^{ΛL}·(e^{Λs} − 1)/Λ``: the factor ``φ`` gains ``e^{Λ_k·L_k}``. It does not depend
  on τ (the optimum intervals are unchanged) and counts as lost work (first order ``+Σ_k Λ_k·L_k``).
  A failure of a class *another* tier recovers (rate ``λ_o = λ − Λ_k``) also stops the save in
  flight; its rollback goes past that save to the other tier's newer one, so the save is skipped,
  with probability ``p = 1 − e^{−λ_o·L_k}`` each. The newest durable save at a failure of tier k's
  classes is then ``N − K`` saves in, ``K`` the trailing skipped ones, and ``E[N − K]/E[N] =
  (1 − p)/(1 − p·e^{−Λ_k s_k})``; its reciprocal ``M_k = (1 − p·e^{−Λ_k s_k})/(1 − p)`` ≥ 1 is the
  missed-save factor (:func:`_log_missed`; it grows with
  τ, and the solver's stationarity condition has its derivative). Review 22 checked both against
  the Monte Carlo (docs/reliability.md): the Llama 3 405B preset with its PFS at 3 GB/s aggregate,
  PFS alone 0.7145 against 0.7143 ± 0.0002, with host memory 0.7574 against 0.7553 (the grouping
  error of synchronous saves is the same size: 0.5414 against 0.5390); until 2026-12-02 both
  factors were left out (0.864), and without ``M_k`` async ranked above sync at 10× the failure
  rate where the Monte Carlo ranks it below.
* **Loss breakdown** (``ckpt_overhead_frac``, ``lost_work_frac``, ``restart_frac``): the loss
  ``1 − goodput`` split in proportion to the renewal model's three factors, ``log(1 + Σ s/τ)``,
  ``Σ_k [log φ(Λ_k(τ_k + s_k)) + Λ_k·L_k + log M_k]`` and ``Σ_c λ_c(R_c + reload_c)`` (restart + repair + reload)
  (:func:`decompose_loss`). The three are in [0, 1] and ``1 − Σ = goodput`` at any failure
  rate (the first-order terms can add up to more than 1); they tend to the first-order terms
  when λτ, λR -> 0. A class no enabled tier survives gives goodput 0 and lost_work_frac 1.
* **Goodput, first order** (the ``goodput_first_order`` column; DESIGN §4.4)::

      goodput_first_order = 1 − Σ_k stall_k/τ_k − Σ_c λ_c·(R_c + τ_k(c)/2 + L_k(c) + reload_k(c),c)

  clipped to [0, 1]. Valid only where λ·τ and λ·R are small: it drifts by −7 pp at λτ = 1 and
  collapses to 0 when the sum exceeds 1 (e.g. MTBF 1.6 h with 2.2 h repairs) while the job
  still progresses.
* **Intervals.** A NaN ``ckpt_{k}_interval_s`` is chosen by maximising the renewal goodput.
  :func:`stage` solves the stationarity conditions of log(1/goodput) in closed form per step
  (fixed point, :meth:`_Block.solve`; ``ψ = d log φ/dx``)::

      s_u/(τ(Dτ + s_u)) = Σ_{k∈u} Λ_k·ψ(Λ_k(τ + s_k)),   D = 1 + Σ_{j∉u} s_j/τ_j

  from Young's start, re-assigning classes to tiers at each step, for a few candidate
  structures (orders of the tiers, a tier left unsaved, two tiers at one interval), keeping
  the best per row; rows are processed in cache-sized blocks, whole-array operations only.
  A free tier that recovers no class at the optimum (another tier saved more often survives
  everything it does) gets ``INTERVAL_MAX_S`` (1e8 s, "never"): that is the objective's own
  optimum (its saves would only cost stall time), so it is not saved in practice.
  :func:`stage_grid` / :func:`optimize_intervals_grid` keep the earlier search (joint
  log-spaced grid + coordinate refinement, ~1,000x slower) as the reference of the tests.
  A row's candidates, starts and stopping rule depend on that row alone, so a scenario gets the
  same intervals alone and in any batch (review 16a). Where the goodput is 0 at every interval (a
  class no enabled tier survives, recoveries that never end) both searches rank the intervals by
  the rest of the model (``log_wall_per_work_finite`` of :func:`expected_goodput`).
* **Host memory.** ``ckpt_host_mem_per_node_bytes``: the host-memory tier's copies where it is
  saved, plus, with async saves, one staging buffer of the node's share per other saved tier
  (``ckpt_async_staging_per_node_bytes``; :func:`planner.checkpoint.async_staging_bytes_per_node`,
  PyTorch DCP async_save, Megatron-LM FileSystemWriterAsync); ``host_fits_ckpt`` adds
  ``host_mem_per_node_bytes`` and compares with ``host_memory_bytes``.

References
----------
[1] J. W. Young, "A first order approximation to the optimum checkpoint interval",
    Commun. ACM 17(9), 1974. doi:10.1145/361147.361115
[2] J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart
    dumps", Future Generation Computer Systems 22(3), 2006. doi:10.1016/j.future.2004.11.016
[3] A. Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research
    Clusters", HPCA'25, arXiv:2410.21680.
[4] Llama Team, "The Llama 3 Herd of Models", arXiv:2407.21783, §3.3.4, Table 5.
"""

from __future__ import annotations

import contextvars
import itertools

import math
from typing import NamedTuple

import numpy as np

from . import checkpoint as ck
from .batch import OneRow, any_true
from .checkpoint import ckpt_interval_daly, ckpt_interval_young  # noqa: F401  (public names)
from .schema import FAILURE_CLASSES, TIER_KINDS

#: Failure classes whose restart waits ``repair_s`` for a replacement unless hot spares exist.
REPAIR_CLASSES: tuple[str, ...] = ("gpu", "node")
#: Interval search range [s]: at least one second (and one step), at most ~3 years.
INTERVAL_MIN_S = 1.0
INTERVAL_MAX_S = 1e8
#: Failure rates below this are taken as none [1/h] (10^-12 per hour: one failure in about 10^8
#: years); a numerical guard, since 1/λ overflows for rates near 1e-305 per hour.
RATE_FLOOR_PER_H = 1e-12
#: Joint coarse grid points per free tier, by number of free tiers in a row.
COARSE_POINTS = {1: 64, 2: 24, 3: 12, 4: 8}
#: Refinement: points per coordinate grid, rounds (each narrows the span ~10x), sweeps per round.
FINE_POINTS = 21
FINE_ROUNDS = 4
FINE_SWEEPS = 2
#: Elements per (rows x grid) block: bounds the memory of the vectorised search. Each cell holds
#: (tiers x failure classes) = 20 numbers in expected_goodput's per-class choice of tier, so a
#: block of 125,000 cells peaks at ~20 MB per such array (1,000,000 cells took stage_grid's
#: traced peak from 72 to 174 MiB once that choice became one array; found by review).
GRID_BLOCK_ELEMENTS = 125_000


def failure_rates_per_h(b) -> np.ndarray:
    """Failure rate of the job by class [1/h], shape (N, C).

    ``λ_c = fail_c_per_gpu_h·n_gpus + fail_c_per_node_h·n_nodes + fail_c_per_job_h``
    (series system, rates scaled by size; Kokolis et al. [3]).
    """
    n_gpus = np.asarray(b["n_gpus"], dtype=float)
    n_nodes = np.asarray(b["n_nodes"], dtype=float)
    return np.stack([
        np.asarray(b[f"fail_{c}_per_gpu_h"], dtype=float) * n_gpus
        + np.asarray(b[f"fail_{c}_per_node_h"], dtype=float) * n_nodes
        + np.asarray(b[f"fail_{c}_per_job_h"], dtype=float)
        for c in FAILURE_CLASSES
    ], axis=1)


def recovery_s(b) -> np.ndarray:
    """Detection + restart (+ repair wait) per failure class [s], shape (N, C).

    ``repair_s`` counts for ``REPAIR_CLASSES`` only, and only when ``hot_spare_nodes == 0``.
    """
    spare = np.asarray(b["hot_spare_nodes"]) > 0
    cols = []
    for c in FAILURE_CLASSES:
        r = np.asarray(b[f"fail_{c}_restart_s"], dtype=float)
        if c in REPAIR_CLASSES:
            r = r + np.where(spare, 0.0, np.asarray(b[f"fail_{c}_repair_s"], dtype=float))
        cols.append(r)
    return np.stack(cols, axis=1)


def save_lag_s(save_s, stall_s) -> np.ndarray:
    """How long each save is still being written after its stall ends [s]: ``save − stall``
    (async saves; 0 for synchronous ones, whose stall is the whole save), any shape.

    A tier's save that cannot be written (save time inf) gives inf (its failures then lose
    everything: goodput 0, as its infinite interval floor already gives); NaN (inf − inf) and
    negative values give 0."""
    with np.errstate(invalid="ignore"):
        lag = np.asarray(save_s, dtype=float) - np.asarray(stall_s, dtype=float)
    return np.where(np.isnan(lag), 0.0, np.maximum(lag, 0.0))


def _log_missed(lam_k, lam_o, lag, x):
    """log of the missed-save factor ``(1 − p·e^{−x})/(1 − p)`` of an async tier [-], any shape.

    A failure of a class another tier recovers (rate ``lam_o`` = λ − Λ_k [1/s]) while tier k's
    save is still being written (``lag`` = L_k [s]) stops that save; the rollback goes to the other
    tier, past it, so the save is skipped, with probability ``p = 1 − e^{−λ_o·L}`` each,
    independently. Over a cycle between two failures of tier k's own classes (``x = Λ_k(τ_k +
    s_k)``, ``b = e^{−x}``) the saves made durable number ``N`` with ``P(N >= j) = e^{−Λ_k L}·b^j``;
    the newest kept one is ``N − K`` with ``K`` the trailing skipped ones, and ``E[N − K]/E[N] =
    (1 − p)/(1 − p·b)`` (review 22: a geometric sum; first order ``λ_o·L·x``). So tier k's
    lost-work factor gains ``(1 − p·b)/(1 − p)``. 0 where ``lam_k`` or ``lag`` is 0."""
    lam_o = np.maximum(lam_o, 0.0)
    with np.errstate(invalid="ignore", over="ignore"):
        y = lam_o * lag                                     # −log(1 − p)
        p = -np.expm1(-y)
        out = np.log1p(-p * np.exp(-x)) + y
    return np.where((lam_k > 0) & (y > 0) & np.isfinite(out), out, np.where((lam_k > 0) & (y > 0), np.inf, 0.0))


def _log_phi(x):
    """log((e^x − 1)/x), stable for x -> 0 and large x (see :func:`_log_phi_fast`)."""
    x = np.asarray(x, dtype=float)
    if x.size == 0:
        return x.copy()
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _log_phi_fast(x)


def decompose_loss(log_overhead, log_restart, log_lost, log_w):
    """Split the lost fraction ``1 − G`` of the renewal goodput ``G = exp(−log_w)`` into
    checkpoint overhead, lost work and restart, in proportion to the renewal model's own
    factors (``log_w = log_overhead + log_restart + log_lost``).

    Parameters
    ----------
    log_overhead, log_restart, log_lost, log_w : ndarray, same shape
        ``log(1 + Σ_k s_k/τ_k)``, ``Σ_c λ_c·(R_c + reload_c)`` and
        ``Σ_k log φ(Λ_k(τ_k + s_k))`` (see :func:`expected_goodput`), and their sum.

    Returns
    -------
    (overhead, lost, restart) : three ndarray in [0, 1] with ``1 − Σ = G`` (to rounding).

    Notes
    -----
    Each share is ``(1 − G)·a_i/Σa``: the renewal model's decomposition of log(1/G) (a product
    of three factors), scaled to the lost fraction. It stays meaningful at any λτ (the first-order
    terms can add up to more than 1) and tends to the first-order terms when λτ, λR -> 0
    (log(1 + x) ≈ x, log φ(x) ≈ x/2). Where a factor is infinite (a failure class no enabled tier
    survives: lost work; recoveries that never end: restart) the whole loss, 1, is given to it
    (split evenly when both are).
    """
    a = [np.asarray(x, dtype=float) for x in (log_overhead, log_lost, log_restart)]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        loss = -np.expm1(-np.asarray(log_w, dtype=float))  # 1 − G, exact for small log_w
        tot = a[0] + a[1] + a[2]
        inf = [np.isinf(x) for x in a]
        n_inf = inf[0].astype(float) + inf[1] + inf[2]
        scale = np.where(tot > 0, loss / np.where(tot > 0, tot, 1.0), 0.0)
        out = []
        for x, xi in zip(a, inf):
            out.append(np.where(n_inf > 0, np.where(xi, 1.0 / np.maximum(n_inf, 1.0), 0.0), x * scale))
    return out[0], out[1], out[2]


def expected_goodput(taus, stall_s, enabled, lam_per_s, recovery_s_, reload_s, survives, lag_s=None):
    """Expected goodput of checkpoint intervals ``taus``: renewal model and first order.

    Parameters
    ----------
    taus : sequence of K arrays, each broadcastable to (n, *g)
        Compute time between saves of each tier [s] (ignored where the tier is disabled).
    stall_s : ndarray (n, K) — training stall per save [s].
    enabled : ndarray (n, K) bool
    lam_per_s : ndarray (n, C) — failure rate per class [1/s].
    recovery_s_ : ndarray (n, C) — restart (+ repair) per class [s].
    reload_s : ndarray (n, K, C) — reload time of tier k after class c [s].
    survives : ndarray (n, K, C) bool
    lag_s : ndarray (n, K), optional — how long a save is still being written after its
        stall ends [s] (``save − stall``: async saves; 0 or None: synchronous). A failure in that
        window finds the save not yet durable and rolls back one save further: tier k's lost-work
        factor becomes ``e^{Λ_k·L_k}·M_k·φ(Λ_k(τ_k + s_k))`` with the missed-save factor ``M_k``
        (module docstring, async saves; :func:`save_lag_s`, :func:`_log_missed`).

    Returns
    -------
    dict of ndarray (n, *g)
        ``goodput`` (renewal model, see the module docstring), ``log_wall_per_work`` (its
        log(1/goodput)), ``log_wall_per_work_finite`` (the same without the classes no enabled
        tier survives and with an infinite recovery factor taken as 1: finite where
        ``log_wall_per_work`` is inf at every interval, and the intervals' ranking there),
        ``ckpt_overhead_frac``, ``lost_work_frac``, ``restart_frac`` (its loss
        1 − goodput split by :func:`decompose_loss`), ``goodput_first_order`` (clipped to [0, 1])
        and its unclipped terms ``ckpt_overhead_frac_first_order``,
        ``lost_work_frac_first_order``, ``restart_frac_first_order``; ``tau_recovery_min_s``
        (interval of the most frequent enabled tier); ``log_recovery_factor`` and
        ``log_lost_work_factor``, the logs of the renewal model's recovery factor and of its
        Π_k φ (with ``log1p(overhead)`` they sum to ``log_wall_per_work``).
    """
    taus = [np.asarray(t, dtype=float) for t in taus]
    shape = np.broadcast_shapes(*[t.shape for t in taus])
    nd = len(shape) - 1

    def ex(a):  # (n, ...) -> (n, 1, ..., 1, ...): the grid axes after the row axis
        return a.reshape(a.shape[:1] + (1,) * nd + a.shape[1:])

    # Whole-array over the K tiers and C classes (trailing axes; K, C < 8, so numpy's sums over
    # them add in index order, as a loop would).
    K, C = len(taus), lam_per_s.shape[1]
    T = np.stack([np.broadcast_to(t, shape) for t in taus], axis=-1)  # (n, *g, K)
    en = ex(np.asarray(enabled, dtype=bool))                         # (n, 1.., K)
    lam = ex(lam_per_s)                                               # (n, 1.., C)
    lam_tot = lam_per_s.sum(axis=1)
    inv_lam = ex(np.where(lam_tot > 0, 1.0 / np.where(lam_tot > 0, lam_tot, 1.0), 0.0))[..., None]
    lam_tot = ex(lam_tot)[..., None]                                 # (n, 1.., 1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # a tier at the "never" interval (is_never_saved) is not saved: no stall
        overhead = np.where(en & ~is_never_saved(T), ex(stall_s) / T, 0.0).sum(axis=-1)
        # per class the enabled surviving tier saved most often (first of equals; none: −1)
        ok = ex(np.asarray(enabled, dtype=bool)[:, :, None] & np.asarray(survives, dtype=bool))
        cand = np.where(ok & ~np.isnan(T[..., None]), T[..., None], np.inf)  # (n, *g, K, C)
        best_tau = cand.min(axis=-2)                                             # (n, *g, C)
        best_k = np.where(best_tau < np.inf, cand.argmin(axis=-2), -1)
        reload_full = np.broadcast_to(ex(reload_s), cand.shape)
        best_reload = np.where(best_k >= 0, np.take_along_axis(
            reload_full, np.maximum(best_k, 0)[..., None, :], axis=-2)[..., 0, :], np.inf)
        has = lam > 0
        lost = np.where(has, lam * best_tau / 2.0, 0.0).sum(axis=-1)
        x = ex(recovery_s_) + best_reload
        # first order: a class no enabled tier survives restarts from scratch, with nothing to
        # reload (its whole loss is the lost work, λ·τ/2 with τ = ∞); review 24: its reload was
        # taken as ∞ too, and the explanation read "Σ_c λ_c(R_c + reload_c) = inf" beside a
        # restart share of 0
        restart = np.where(has, lam * (ex(recovery_s_) + np.where(best_k >= 0, best_reload, 0.0)), 0.0).sum(axis=-1)
        saved = has & (best_k >= 0)
        # Λ_k: the failure rate that tier k recovers (n, *g, K)
        lam_by_tier = np.where(best_k[..., None, :] == np.arange(K)[:, None], lam[..., None, :], 0.0).sum(axis=-1)
        unsurvived = np.where(best_k < 0, lam, 0.0).sum(axis=-1)
        seg = T + ex(stall_s)
        xk = np.where(lam_by_tier > 0, lam_by_tier * seg, 0.0)
        log_lost = _log_phi(xk).sum(axis=-1)
        if lag_s is not None:  # async: e^{Λ_k·L_k} and the missed saves per tier (module docstring)
            L = ex(np.asarray(lag_s, dtype=float))
            xl = np.where(lam_by_tier > 0, lam_by_tier * L, 0.0).sum(axis=-1)
            log_lost = log_lost + xl + _log_missed(lam_by_tier, lam_tot - lam_by_tier, L, xk).sum(axis=-1)
            lost = lost + xl
        log_ov = np.log1p(overhead)
        # recovery factor e^{Σ_c λ_c(R_c + reload_c)} (an M/G/∞ busy period: module docstring)
        log_rs = np.where(saved, lam * x, 0.0).sum(axis=-1)
        # the model without what makes the goodput 0 at every interval (a class no tier survives,
        # recoveries that never end): how the intervals are ranked where log_w is inf at all of
        # them, in the grid search as in the headline solver (review 16a)
        log_fin = log_ov + np.where(np.isinf(log_rs), 0.0, log_rs) + log_lost
        log_lost = np.where(unsurvived > 0, np.inf, log_lost)
        log_w = log_ov + log_rs + log_lost
        log_w = np.where(np.isnan(log_w), np.inf, log_w)
        g1 = np.clip(1.0 - overhead - lost - restart, 0.0, 1.0)
        g1 = np.where(np.isnan(g1), 0.0, g1)
        g_ren = np.exp(-log_w)
        f_ov, f_lw, f_rs = decompose_loss(log_ov, log_rs, log_lost, log_w)
        tmin = np.where(en, T, np.inf).min(axis=-1)
    return {
        "goodput": g_ren, "log_wall_per_work": log_w,
        "ckpt_overhead_frac": f_ov, "lost_work_frac": f_lw, "restart_frac": f_rs,
        "goodput_first_order": g1, "ckpt_overhead_frac_first_order": overhead,
        "lost_work_frac_first_order": lost, "restart_frac_first_order": restart,
        "tau_recovery_min_s": tmin, "log_recovery_factor": log_rs, "log_lost_work_factor": log_lost,
        "log_wall_per_work_finite": log_fin,
    }


def _take(p: dict, idx) -> dict:
    return {k: v[idx] for k, v in p.items()}


def _objective(p: dict, taus):
    """log(1/goodput) at ``taus``, shape (n, *g); a row where it is inf at every point of the grid
    (goodput 0 at every interval: a class no enabled tier survives, recoveries that never end) is
    ranked by ``log_wall_per_work_finite`` instead, the rest of the model, as the headline solver
    ranks it (review 16a: the grid took its first point, one step, for every free tier, the
    headline the optimum of the rest and "never" for a tier that recovers nothing)."""
    r = expected_goodput(taus, p["stall_s"], p["enabled"], p["lam_per_s"], p["recovery_s"],
                         p["reload_s"], p["survives"], p.get("lag_s"))
    lw = r["log_wall_per_work"]
    n = lw.shape[0]
    dead = np.isinf(lw).reshape(n, -1).all(axis=1)
    if not dead.any():
        return lw
    return np.where(dead.reshape((n,) + (1,) * (lw.ndim - 1)), r["log_wall_per_work_finite"], lw)


def optimize_intervals_grid(tau_given, free, lo, hi, p: dict) -> np.ndarray:
    """Choose the free intervals that maximise the renewal goodput.

    Parameters
    ----------
    tau_given : ndarray (N, K) — fixed intervals [s] (any value where ``free``).
    free : ndarray (N, K) bool — tiers whose interval is chosen here.
    lo, hi : ndarray (N, K) — search range [s].
    p : dict of the model arrays (see :func:`expected_goodput`), first axis N.

    Returns
    -------
    ndarray (N, K) — intervals [s]; ``tau_given`` where not free.

    Notes
    -----
    Rows are grouped by the number m of free tiers (a loop over m = 1..4, not over rows); each
    group is searched jointly on an (n, G, ..., G) log-spaced grid, rows chunked so a block holds
    at most ``GRID_BLOCK_ELEMENTS`` cells; then every free coordinate is refined on grids
    spanning ±1 grid step, each round 10x narrower (final resolution far below 0.1%).
    """
    tau = np.where(free, np.nan, tau_given).astype(float)
    n, K = tau.shape
    m_free = free.sum(axis=1)
    step = np.ones((n, K))
    lo = np.minimum(lo, hi)
    for m in range(1, K + 1):
        rows = np.flatnonzero(m_free == m)
        if rows.size == 0:
            continue
        G = COARSE_POINTS[m]
        u = np.linspace(0.0, 1.0, G)
        chunk = max(1, GRID_BLOCK_ELEMENTS // G**m)
        for s in range(0, rows.size, chunk):
            r = rows[s:s + chunk]
            nr = r.size
            order = np.argsort(~free[r], axis=1, kind="stable")[:, :m]  # (nr, m) slots of free axes
            lo_j = np.take_along_axis(lo[r], order, axis=1)
            hi_j = np.take_along_axis(hi[r], order, axis=1)
            grids = lo_j[:, :, None] * (hi_j / lo_j)[:, :, None] ** u  # (nr, m, G)
            taus = []
            for k in range(K):
                t = np.nan_to_num(tau[r, k], nan=1.0).reshape((nr,) + (1,) * m)
                for j in range(m):
                    shp = [nr] + [1] * m
                    shp[1 + j] = G
                    sel = (order[:, j] == k).reshape((nr,) + (1,) * m)
                    t = np.where(sel, grids[:, j, :].reshape(shp), t)
                taus.append(t)
            obj = _objective(_take(p, r), taus).reshape(nr, -1)
            best = np.unravel_index(np.argmin(obj, axis=1), (G,) * m)
            for j in range(m):
                tau[r, order[:, j]] = grids[np.arange(nr), j, best[j]]
                step[r, order[:, j]] = (hi_j[:, j] / lo_j[:, j]) ** (1.0 / (G - 1))
    # Coordinate refinement on narrowing grids.
    v = np.linspace(-1.0, 1.0, FINE_POINTS)
    for _ in range(FINE_ROUNDS):
        for _ in range(FINE_SWEEPS):
            for k in range(K):
                rows = np.flatnonzero(free[:, k])
                chunk = max(1, GRID_BLOCK_ELEMENTS // FINE_POINTS)
                for s in range(0, rows.size, chunk):
                    r = rows[s:s + chunk]
                    grid = np.clip(tau[r, k][:, None] * step[r, k][:, None] ** v,
                                   lo[r, k][:, None], hi[r, k][:, None])  # (nr, Gf)
                    taus = [tau[r, j][:, None] if j != k else grid for j in range(K)]
                    obj = _objective(_take(p, r), taus)
                    tau[r, k] = grid[np.arange(r.size), np.argmin(obj, axis=1)]
        step = step ** (2.0 / (FINE_POINTS - 1))
    return tau


#: Old name of :func:`optimize_intervals_grid`.
optimise_intervals = optimize_intervals_grid


# ---------------------------------------------------------------- fast stage (analytic solver)

#: Rows per block of :func:`stage`: one block's working arrays stay in the CPU caches.
BLOCK_ROWS = 24_576
#: Fixed-point iterations of the interval solver: at most this many per candidate (after the
#: Young step) ...
SOLVER_MAX_ITER = 12
#: ... stopping when (contraction rate) x (last relative step), an estimate of the remaining
#: relative error of τ, is below this (see _Block.solve). A relative error ε of τ costs about
#: ε² x (overhead + lost work) of goodput: far below 1e-9 here.
SOLVER_RTOL = 1e-5
#: ψ(x) is evaluated at max(x, _PSI_X_MIN) (ψ(x) = 1/2 + x/12 + O(x³): relative error <= 2e-7).
_PSI_X_MIN = 1e-6
#: Below this x (element by element) the series log φ = x/2 + x²/24 − x⁴/2880 + x⁶/181440
#: (next term −x⁸/9676800: relative error < 2e-15 of log φ) replaces the closed form (relative
#: error ~1e-16/x there): every row's log φ is accurate to ~1e-14 relative whatever the other
#: rows of its block, so the loss shares (relative to log φ) do not depend on the block.
_LOG_PHI_SERIES_X_MAX = 0.05
#: A candidate replaces the best so far only if its log(1/goodput) is lower by this much: two
#: candidates that reach the same optimum by different paths keep the first, so a row's result
#: does not depend on the other rows of its block.
_F_MARGIN = 1e-12
#: Floor of Σ Λψ in the interval update (a tier that recovers nothing goes to the maximum).
_LP_MIN = 1e-200
#: Relative offset that puts a higher-index tier just before a lower-index one (ties go to the
#: lower index).
_TIE_EPS = 1e-9
#: Longest sequence of free tiers tried in the last places (orders of the solver's starts).
_MAX_LAST = 3


def _tri(m):
    """A bool array as True / False when it is uniform, else the array (block shortcuts)."""
    if m.size == 1:  # a row alone (evaluate): one element is uniform; bool() is ~40x faster than all/any
        return bool(m)
    if m.all():
        return True
    if not m.any():
        return False
    return m


def _and(a, b):
    if a is False or b is False:
        return False
    if a is True:
        return b
    if b is True:
        return a
    return a & b


def _or(a, b):
    if a is True or b is True:
        return True
    if a is False:
        return b
    if b is False:
        return a
    return a | b


def _not(a):
    return (not a) if isinstance(a, bool) else ~a


def _pick(m, x, y):
    """``np.where(m, x, y)`` for a tri-state mask ``m``."""
    if m is True:
        return x
    if m is False:
        return y
    return np.where(m, x, y)


def _acc(acc, x):
    return x if acc is None else acc + x


def _psi(x):
    """ψ(x) = d/dx log φ(x) = e^x/(e^x − 1) − 1/x = 1 + 1/expm1(x) − 1/x, at max(x, 1e-6).

    ψ rises from 1/2 (x -> 0, series 1/2 + x/12 − x³/720) to 1 (x -> ∞).
    """
    xm = np.maximum(x, _PSI_X_MIN)
    return 1.0 + 1.0 / np.expm1(xm) - 1.0 / xm


def _log_phi_fast(x):
    """log φ(x) = log((e^x − 1)/x) = x + log((1 − e^{−x})/x), stable for all x >= 0; the series
    x/2 + x²/24 − x⁴/2880 + x⁶/181440 where x <= ``_LOG_PHI_SERIES_X_MAX`` (element by element;
    a block all on one side computes only that side)."""
    x2 = None
    ser = None
    # NaN-ignoring extremes: a NaN element must not switch its neighbours to the other form
    # (found by review: one NaN row moved another row's result by an ulp)
    if getattr(x, "size", 0) == 1:  # a row alone: its one value is both extremes (NaN too)
        xmax = xmin = x.item()
    else:
        xmax, xmin = float(np.fmax.reduce(x, axis=None)), float(np.fmin.reduce(x, axis=None))
    if xmin <= _LOG_PHI_SERIES_X_MAX:
        x2 = x * x
        ser = x * 0.5 + x2 * ((1.0 / 24.0) + x2 * ((-1.0 / 2880.0) + x2 * (1.0 / 181440.0)))
        if xmax <= _LOG_PHI_SERIES_X_MAX:
            return ser
    t = -np.maximum(x, 1e-300)
    closed = x + np.log(np.expm1(t) / t)
    return closed if ser is None else np.where(x <= _LOG_PHI_SERIES_X_MAX, ser, closed)


class _Group:
    """A failure class of a block (one class per group since review 16a: see _stage_block): its
    rate and per-tier terms.

    ``members`` lists (λ_c [1/s], R_c [s]) of its classes; ``lr[k]`` = Σ_c λ_c·reload_k (first
    order) and ``ey[k]`` = Σ_c λ_c·(R_c + reload_k) (the log of the renewal recovery factor),
    set by :meth:`_Block.__init__`.
    """

    __slots__ = ("lam", "ok", "reload", "lr", "ey", "members")

    def __init__(self, lam, ok, reload, members=None):
        self.lam, self.ok, self.reload, self.lr, self.ey = lam, ok, reload, {}, {}
        self.members = members if members is not None else []


class _Block:
    """The renewal model of one block of rows and its interval solver.

    Per-tier quantities are dicts over the tiers ``U`` enabled in at least one row of the block;
    masks that are uniform over the block are Python bools (``_tri``), so a block of like rows
    pays only for the terms it has. No loop over rows.
    """

    def __init__(self, n, U, s, lo, hi, free, tau_base, groups, unsurv, track_lo=False, lam_tot=None, en=None,
                 lag=None):
        self.n = n
        #: λ of every class [1/s] (n,) or None: the missed-save factor of async tiers (_log_missed)
        self.lam_all = lam_tot
        #: tier -> save lag L_k [s] (async: save − stall; absent or None: 0), see :func:`save_lag_s`
        self.lag = lag if lag is not None else {}
        #: tier -> rows where it is enabled (tri-state; every tier of U in every row if not given)
        self.en = en if en is not None else {k: True for k in U}
        #: With ``track_lo``: ``lo_reach`` (n,), the smallest value any lower bound was applied
        #: to, ``max(x, lo)``, over the whole solve (inf if none). Every lower bound here is
        #: ``max(step, c)`` for a c that does not depend on the step time, so the same rows with
        #: any step time <= lo_reach (and >= this one) give the same result, operation for
        #: operation (see :func:`stage`).
        self.track_lo, self.lo_reach = track_lo, (np.full(n, np.inf) if track_lo else None)
        self.U, self.s, self.lo, self.hi, self.free = U, s, lo, hi, free
        self.tau_base, self.groups, self.unsurv = tau_base, groups, unsurv
        # Recovery factor terms (log of e^{Σ_c λ_c(R_c + reload_c)}, the M/G/∞ busy period of
        # the module docstring): per group and tier, Σ_c λ_c·R_c + λ_g·reload_k
        for g in groups:
            g.lr = {k: g.lam * g.reload[k] for k in U if g.ok[k] is not False}
            if lam_tot is None:
                continue
            AR = None  # Σ_c λ_c·R_c
            for lam_c, R_c in g.members:
                AR = _acc(AR, lam_c * R_c)
            g.ey = {k: (g.lr[k] if AR is None else AR + g.lr[k]) for k in U if g.ok[k] is not False}

    def _max_lo(self, x, lo):
        """``np.maximum(x, lo)`` (x clipped at a lower bound), tracked in ``lo_reach``."""
        y = np.maximum(x, lo)
        if self.track_lo:
            np.minimum(self.lo_reach, y, out=self.lo_reach)
        return y

    # -- assignment of failure classes to recovery tiers ------------------------------------
    def assign(self, tau, want_reload=False):
        """Rate recovering from each tier, Λ_k [1/s] (None = 0), Σ_c λ_c·reload_c and
        Σ_c λ_c·(R_c + reload_c), the log of the recovery factor (None = 0; these two with
        ``want_reload``).

        Class group g recovers from the most frequent (smallest τ) enabled tier that survives
        it; equal intervals go to the lower tier index (as in :func:`expected_goodput`).

        The result depends on ``tau`` only through the order of the tiers' intervals. Where
        every row of the block agrees on that order (a row alone always does), it is computed
        once per order and kept (the solver re-assigns at every step, mostly in the same order;
        the dicts returned are fresh, their arrays shared and never written in place).
        """
        cache: dict = {}
        U = self.U
        for i, j in enumerate(U):  # tri-state (True / False where every row agrees), so the
            for k in U[i + 1:]:  # selects below take their scalar shortcuts (same values)
                cache[(j, k)] = _tri(np.asarray(tau[j] <= tau[k]))
        memo = key = None
        if all(v is True or v is False for v in cache.values()):
            memo = self.__dict__.setdefault("_assigned", {})
            key = (tuple(cache.values()), want_reload)
            hit = memo.get(key)
            if hit is not None:
                return (dict(hit[0]),) + hit[1:]

        def before(j, k):  # tier j saves more often than tier k (ties: lower index)
            return cache[(j, k)] if j < k else _not(cache[(k, j)])

        lam: dict = {k: None for k in self.U}
        rterm = yterm = None
        for g in self.groups:
            for k in self.U:
                a = g.ok[k]
                if a is False:
                    continue
                for j in self.U:
                    if j == k or g.ok[j] is False:
                        continue
                    a = _and(a, _not(_and(g.ok[j], before(j, k))))
                    if a is False:
                        break
                if a is False:
                    continue
                lam[k] = _acc(lam[k], _pick(a, g.lam, 0.0))
                if want_reload:
                    rterm = _acc(rterm, _pick(a, g.lr[k], 0.0))
                    yterm = _acc(yterm, _pick(a, g.ey[k], 0.0))
        res = (lam, rterm, yterm) if want_reload else (lam, rterm)
        if memo is not None:
            memo[key] = (dict(lam),) + res[1:]
        return res

    def objective(self, tau):
        """log(1/goodput) of the renewal model, shape (n,) (classes no tier survives aside), and
        its parts: ``lam`` (Λ_k per tier, None = 0), ``rterm`` (Σ_c λ_c·reload_c or None, first
        order), ``ov`` (Σ_k s_k/τ_k), ``lrs`` (log of the recovery factor, Σ_c λ_c(R_c +
        reload_c)), ``llw`` (lost work Σ_k [log φ(Λ_k(τ_k + s_k)) + Λ_k·L_k + log M_k], L_k the async save lag,
        M_k the missed-save factor)."""
        lam, rterm, yterm = self.assign(tau, want_reload=True)
        ov = None
        for k in self.U:  # a tier at the "never" interval is not saved: no stall
            ov = _acc(ov, self.s[k] / tau[k] * ~is_never_saved(tau[k]))
        lov = np.log1p(ov) if ov is not None else np.zeros(self.n)
        lrs = np.zeros(self.n) if yterm is None else yterm
        llw = np.zeros(self.n)
        for k in self.U:
            if lam[k] is not None:
                x = lam[k] * (tau[k] + self.s[k])
                llw = llw + _log_phi_fast(x)
                lg = self.lag.get(k)
                if lg is not None:  # async: e^{Λ_k·L_k} (constant between re-assignments of classes)
                    llw = llw + lam[k] * np.where(lam[k] > 0, lg, 0.0)
                    if self.lam_all is not None:  # and the saves other failures stop in flight
                        llw = llw + _log_missed(lam[k], self.lam_all - lam[k], lg, x)
        f = lov + lrs + llw
        # where f is inf (recoveries that never end, at this assignment): the rest of the model
        # ranks the candidates (see expected_goodput's log_wall_per_work_finite)
        ftb = lov + np.where(np.isinf(lrs), 0.0, lrs) + llw
        return f, {"lam": lam, "rterm": rterm, "ov": ov, "lrs": lrs, "llw": llw, "ftb": ftb}

    # -- solver -------------------------------------------------------------------------------
    def _set(self, tau, k, t):
        tau[k] = _pick(self.free[k], t, self.tau_base[k])

    def _unit(self, u):
        """Stall S_u [s] (floored at 1e-150), bounds and the rate the unit's tiers survive
        (cached: the same for every candidate)."""
        cache = self.__dict__.setdefault("_units", {})
        if u in cache:
            return cache[u]
        S = self.s[u[0]]
        lo, hi = self.lo[u[0]], self.hi[u[0]]
        for k in u[1:]:
            S = S + self.s[k]
            lo, hi = np.maximum(lo, self.lo[k]), np.maximum(hi, self.hi[k])
        S = S + 1e-150  # (> 0; and a unit that recovers nothing goes to the maximum: solve)
        ls = None
        for g in self.groups:
            a = False
            for k in u:
                a = _or(a, g.ok[k])
            if a is not False:
                ls = _acc(ls, _pick(a, g.lam, 0.0))
        # rows where the unit survives no class (ls = 0) start at the maximum, as a block with no
        # such class at all (ls None) does: a row's start must not depend on its block (review 16a)
        young = None if ls is None else np.where(ls > 0, np.minimum(
            self._max_lo(np.sqrt(2.0 * S / np.maximum(ls, _LP_MIN)), lo), hi), hi)
        cache[u] = (S, lo, hi, young, (4.0 * S, S * S, 2.0 * S), ls)
        return cache[u]

    def start(self, units, last=(), pin=None, init=None):
        """Start point of the solver.

        Young's τ = sqrt(2 S_u/Λ_u) for each unit (Λ_u: the rate the unit's tiers survive),
        or ``init[k]`` where given, except that the free tiers in the sequence ``last`` start at
        the maximum, in that order (the last one least frequent: they recover only what the
        others do not survive). ``pin`` maps a free tier to a fixed interval for this
        candidate. A unit ``(a, b)`` shares one interval with ``a`` just before ``b``.
        Returns (tau, info).
        """
        tau = dict(self.tau_base)
        for k, v in (pin or {}).items():
            tau[k] = _pick(self.free[k], v, self.tau_base[k])
        info = []
        for u in units:
            S, lo, hi, young, consts, ls = self._unit(u)
            mult = {k: 1.0 for k in u}
            if len(u) == 2 and u[0] > u[1]:
                mult[u[0]] = 1.0 - _TIE_EPS
            if young is None:
                t0 = hi
            elif all(k in last for k in u):
                # offset by the free tiers (in this row) at or after the unit's place in ``last``:
                # a tier of ``last`` free only in other rows of the block leaves this row's start
                # as it is alone (review 16a: the offsets counted every tier of the block)
                cnt = 0.0
                for j in last[max(last.index(k) for k in u):]:
                    cnt = _acc(cnt, _pick(self.free[j], 1.0, 0.0))
                t0 = np.where(ls > 0, hi * (1.0 - _TIE_EPS * cnt), hi)
            elif init is not None and u[0] in init:
                t0 = np.where(ls > 0, init[u[0]], hi)
            else:
                t0 = young
            for k in u:
                self._set(tau, k, t0 * mult[k])
            info.append([u, S, *consts, lo, hi, t0, mult])
        return tau, info

    def solve(self, tau, info):
        """Stationary intervals from a start point (:meth:`start`); ``info`` lists the units
        (tuples of free tiers sharing one interval). Returns dict k -> τ_k.

        Fixed-point iteration on the stationarity condition of log(1/G) in τ_u (C held at
        the previous iterate; Jacobi over the units)::

            S_u/(τ(Dτ + S_u)) = Σ_{k∈u} Λ_k·ψ(Λ_k(τ + s_k)) =: P,   D = C − Σ_{k∈u} s_k/τ_k
            =>  τ = 2 S_u / (P·(S_u + sqrt(S_u² + 4 D S_u/P)))    (root of Dτ² + S_uτ − S_u/P)

        then clipped to [lo, hi]; the classes are re-assigned to tiers at every step. The
        first step takes ψ = 1/2 (Young's τ ≈ sqrt(2 S_u/(D·Λ_u)), with the rates Λ_u the unit
        recovers at the start point). ψ ∈ [1/2, 1) varies slowly: d ln τ_new / d ln τ = −(1/2)·xψ'(x)/ψ(x),
        at most 0.11 in size (x/12 for small x), plus (1/2)·Σ s/τ through C. The iteration
        stops, row by row (a row's result does not depend on the other rows), when that rate
        times the row's last step is below ``SOLVER_RTOL`` (its remaining relative error of τ).
        """
        tau = dict(tau)
        if not info:
            return tau
        done = False  # rows whose iteration has stopped (a row's stop depends on it alone)
        # rows where a unit moves no tier (its tiers fixed or disabled there: free only in other
        # rows of the block) keep its start value, so they add no step to that row's stopping
        # rule (review 16a: such "ghost" steps decided when a row stopped, and its intervals moved
        # ~1e-6 with the batch)
        ghost = []
        for it in info:
            fm = False
            for k in it[0]:
                fm = _or(fm, self.free[k])
            ghost.append(_not(fm))
        for n_it in range(SOLVER_MAX_ITER + 1):
            lam, _r = self.assign(tau)
            ov = {k: self.s[k] / tau[k] for k in self.U}
            sov = None
            for k in self.U:
                sov = _acc(sov, ov[k])
            C = 1.0 + sov
            # x_k = Λ_k(τ_k + s_k) of every tier of the row (free or fixed: the same in a row alone
            # and in any block); the largest sets the contraction rate of the stopping rule
            xs, xr = {}, None
            if n_it > 0:
                for k in self.U:
                    if lam[k] is not None:
                        xs[k] = x = lam[k] * (tau[k] + self.s[k])
                        xr = x if xr is None else np.maximum(xr, x)
            err = None
            new = []
            for (u, S, S4, S2, S_2, lo, hi, t, mult), gh in zip(info, ghost):
                D = C - ov[u[0]]
                for k in u[1:]:
                    D = D - ov[k]
                P = None
                for k in u:
                    if lam[k] is None:
                        continue
                    if n_it == 0:  # Young (ψ = 1/2), with the coupling D
                        P = _acc(P, 0.5 * lam[k])
                    else:
                        P = _acc(P, lam[k] * _psi(xs[k]))
                        lg = self.lag.get(k)
                        if lg is not None and self.lam_all is not None:
                            # d/dτ of the missed-save factor log((1 − p·e^{−x})/(1 − p)): Λ_k·p·b/(1 − p·b)
                            pk = self._missed_p(k, lam[k], lg)
                            pb = pk * np.exp(-xs[k])
                            P = P + lam[k] * pb / (1.0 - pb)
                if P is None:
                    tn = hi
                else:
                    # P = 0 in a row (the unit recovers nothing there) gives the maximum, as P None
                    # does (S_u >= 1e-150: sqrt(S_u/D)·1e100 > INTERVAL_MAX_S)
                    P = np.maximum(P, _LP_MIN)
                    tn = S_2 / (P * (S + np.sqrt(S2 + S4 * D / P)))
                    tn = np.minimum(self._max_lo(tn, lo), hi)
                frz = _or(done, gh)
                if frz is not False:
                    tn = t if frz is True else np.where(frz, t, tn)
                if n_it > 0:
                    e = np.abs(tn / t - 1.0)
                    err = e if err is None else np.maximum(err, e)
                new.append(tn)
            for it, tn in zip(info, new):
                it[7] = tn
                for k in it[0]:
                    self._set(tau, k, tn * it[8][k])
            if n_it == 0:
                continue
            # contraction rate: (1/2)·xψ'/ψ <= min(x/12, 0.11) per step, (1/2)·Σ s/τ through C
            # 12·rate = x + 6·Σ s/τ (x/12 over-estimates the rate for x > 1.3: safe)
            rate12 = 6.0 * sov if xr is None else xr + 6.0 * sov
            done = _or(done, _tri(err * rate12 <= 12.0 * SOLVER_RTOL))  # NaN rows never stop early
            if done is True:
                break
        return tau

    def _missed_p(self, k, lam_k, lg):
        """``p = 1 − e^{−λ_o·L_k}`` of async tier k (λ_o = λ − Λ_k: the failures it does not
        recover, L_k its save lag; 0 · an unwritable tier's inf: 0), shape (n,). It depends on the
        solver's iterate only through Λ_k, whose array :meth:`assign` shares between the steps
        of one class-to-tier order: kept for the last Λ_k array seen (same object, same value)."""
        cache = self.__dict__.setdefault("_missed", {})
        hit = cache.get(k)
        if hit is not None and hit[0] is lam_k:
            return hit[1]
        lo_k = np.maximum(self.lam_all - lam_k, 0.0)
        pk = -np.expm1(-np.where(lo_k > 0, lo_k * lg, 0.0))
        cache[k] = (lam_k, pk)
        return pk

    def _before(self, tau, a, b):
        """True where tier a saves more often than tier b (ties: lower index), as assign."""
        return tau[a] <= tau[b] if a < b else tau[a] < tau[b]

    def optimum(self):
        """Intervals maximising the renewal goodput: (dict k -> τ_k, shape (n,) each, and the
        objective's parts there, see :meth:`objective`, with ``f`` the objective).

        Candidate structures (Python level, per block), each solved by :meth:`solve`; the best
        by the renewal objective is kept, row by row:

        1. every free tier on its own interval, from Young's start;
        2. orders: for each sequence Q of up to ``_MAX_LAST`` free tiers, the same but Q start
           at the maximum, in that order (the least frequent last). Q's tiers that then
           recover nothing stay at the maximum (the objective's optimum for a useless tier:
           "never" — it is not saved); the others settle in the last places. A start whose
           class-to-tier assignment (the rates Λ_k) equals an earlier start's in a row is not
           used in that row (with host memory + PFS, only "host memory last" remains);
        3. boundaries, where no candidate so far ended with free tier a before (after) tier b:
           a started just before (after) b, and a held at b's interval, just before (after)
           it (a shared interval when b is free): the optimum on the edge of the region where
           a recovers the classes both survive (where b does);
        4. for each pair of free tiers, the pair at one interval and the other free tiers
           started at the maximum (on the rows where both are free and a third tier is
           enabled).

        Each candidate is kept only on the rows it is defined for by that row alone (its tiers
        free, resp. fixed, in the row; not a duplicate of a start tried in the row), and its
        start and stopping rule in a row depend on that row alone, so a row gets the candidates,
        in the same order, and the same values, alone or in any block (review 16a: before,
        candidates built for other rows of the block moved a row's intervals by ~1e-6).
        """
        Fr = [k for k in self.U if self.free[k] is not False]
        if not Fr:
            tau = dict(self.tau_base)
            f, parts = self.objective(tau)
            parts["f"] = f
            return tau, parts
        units = [(k,) for k in Fr]
        en = self.en
        tau0, info = self.start(units)
        seen = [(self.assign(tau0)[0], True)]  # (Λ_k at a start, rows it was used in)
        best = self.solve(tau0, info)
        solved = [(best, True)]  # (a candidate's intervals, rows it was used in)
        best = dict(best)
        fbest, parts = self.objective(best)

        def merge(m, x, y):
            if x is None and y is None:
                return None
            return _pick(m, 0.0 if x is None else x, 0.0 if y is None else y)

        def all_free(ks):
            m = True
            for k in ks:
                m = _and(m, self.free[k])
            return m

        def any_free(ks):
            m = False
            for k in ks:
                m = _or(m, self.free[k])
            return m

        def consider(tau, only=True):
            """Keep ``tau`` where it is better, on the rows ``only`` (tri-state) it was tried for."""
            nonlocal fbest
            f, p = self.objective(tau)
            cmp = f < fbest - _F_MARGIN  # same optimum by another path: keep the first
            if np.isinf(fbest).any():  # goodput 0 at both: ranked by the rest of the model
                cmp = np.where(np.isinf(f) & np.isinf(fbest), p["ftb"] < parts["ftb"] - _F_MARGIN, cmp)
            better = _and(_tri(cmp), only)
            if better is False:
                return
            fbest = _pick(better, f, fbest)
            parts["ftb"] = _pick(better, p["ftb"], parts["ftb"])
            for k in self.U:
                if tau[k] is not best[k]:
                    best[k] = _pick(better, tau[k], best[k])
                parts["lam"][k] = merge(better, p["lam"][k], parts["lam"][k])
            parts["rterm"] = merge(better, p["rterm"], parts["rterm"])
            parts["ov"] = merge(better, p["ov"], parts["ov"])
            parts["lrs"] = _pick(better, p["lrs"], parts["lrs"])
            parts["llw"] = _pick(better, p["llw"], parts["llw"])

        def same_rates(l0, l1):
            """Rows where two starts give every tier the same recovered rate (None = 0)."""
            m = True
            for k in self.U:
                x, y = l0[k], l1[k]
                if x is None and y is None:
                    continue
                m = _and(m, _tri(np.asarray((0.0 if x is None else x) == (0.0 if y is None else y))))
                if m is False:
                    break
            return m

        for size in range(1, min(len(Fr), _MAX_LAST) + 1):
            for Q in itertools.permutations(Fr, size):
                use = all_free(Q)  # rows where every tier of Q is free
                if use is False:
                    continue
                tau0, info = self.start(units, last=Q)
                lam0 = self.assign(tau0)[0]
                for l_prev, used in seen:
                    use = _and(use, _not(_and(used, same_rates(lam0, l_prev))))
                    if use is False:
                        break
                if use is False:
                    continue
                seen.append((lam0, use))
                tau = self.solve(tau0, info)
                solved.append((tau, use))
                consider(tau, use)
        sep = solved[0][0]
        for a in Fr:
            for b in self.U:
                if b == a:
                    continue
                for side in ("before", "after"):
                    if side == "after" and self.free[b] is True:
                        continue  # = b just before a, tried when b is the free one
                    covered = None
                    for t, used in solved:
                        c = self._before(t, a, b) if side == "before" else self._before(t, b, a)
                        # only where a is saved at all: a tier left at the maximum (never saved) is
                        # "after" every other trivially and says nothing of the edge just after b
                        # (found by the grid test on single rows: local NVMe fixed at 230 s, PFS
                        # free — its optimum just after the NVMe's interval was never tried, 0.23
                        # points of goodput lost, unless another row of the block needed it)
                        c = c & (t[a] < self.hi[a])
                        if used is not True:  # a candidate says nothing of rows it was not used in
                            c = c & used
                        covered = c if covered is None else covered | c
                    # Kept only on the rows it is tried for: a free, b enabled (and, after b, b
                    # fixed), not covered; (pinned / shared candidates) b fixed, resp. free. Kept
                    # on every row of the block, a row's candidates depended on the other rows and
                    # its optimum moved with its batch by the solver's tolerance (found by a
                    # batch-independence property test)
                    need = _and(_and(self.free[a], en[b]), _tri(np.logical_not(covered)))
                    if side == "after":
                        need = _and(need, _not(self.free[b]))
                    if need is False:
                        continue
                    eps = (-1.0 if side == "before" else 1.0) * _TIE_EPS
                    near = np.minimum(self._max_lo(sep[b] * (1.0 + eps), self.lo[a]), self.hi[a])
                    for init in ({a: near}, {**best, a: near}):  # others from Young / best
                        tau0, info = self.start(units, init=init)
                        consider(self.solve(tau0, info), need)
                    if self.free[b] is not True:  # b fixed (in some rows): a held next to b
                        need_fixed = _and(need, _not(self.free[b]))
                        if need_fixed is False:
                            continue
                        tie = (a < b) == (side == "before")
                        pin = np.minimum(self._max_lo(self.tau_base[b] * (1.0 if tie else 1.0 + eps),
                                                      self.lo[a]), self.hi[a])
                        rest = [u for u in units if u[0] != a]
                        tau0, info = self.start(rest, pin={a: pin})
                        consider(self.solve(tau0, info), need_fixed)
                        # ... and the other free tiers started at the maximum (unsaved unless they
                        # pay): a tier pinned next to a fixed one can make them redundant, a basin
                        # the start above misses (found by the grid property test)
                        others = tuple(k for k in Fr if k != a)
                        need_others = _and(need_fixed, any_free(others)) if others else False
                        if need_others is not False:
                            tau0, info = self.start(rest, pin={a: pin}, last=others)
                            consider(self.solve(tau0, info), need_others)
                    if self.free[b] is not False and side == "before":  # b free: one interval
                        need_shared = _and(need, self.free[b])
                        if need_shared is not False:
                            tau0, info = self.start([(a, b)] + [u for u in units if u[0] not in (a, b)])
                            consider(self.solve(tau0, info), need_shared)
        # 4. two free tiers at one interval with the other free tiers started at the maximum
        # (unsaved unless they pay), on every row where both are free and a third tier is enabled
        # (free or fixed; review 16a, found by review 16i: this comment said "free"): the pair can
        # make the others redundant, a basin the starts above miss, and "covered" (a strictly
        # before or after b) says nothing of a shared interval (found by the grid property test:
        # local NVMe + object store at one interval with the PFS unsaved, 2.3e-4 of goodput above
        # the best candidate; 2 of 800 random blocks of 24 rows)
        for i, a in enumerate(Fr):
            for b in Fr[i + 1:]:
                others = tuple(k for k in Fr if k not in (a, b))
                # on the rows where both are free and a third tier is enabled, free or fixed:
                # structure 3's shared candidate runs only where no candidate ended with a before
                # b, and a row whose optimum is the pair at one interval beside a fixed tier was
                # found only when another row of its block had a third free tier (review 16a:
                # local NVMe + PFS free, host memory fixed at 385 s, 1.3e-4 of goodput below the
                # grid alone, test seed 599982112). Two tiers alone (host memory + PFS, the
                # presets): not run, as before (no goodput changed over 150 random blocks: review)
                third = False
                for k in self.U:
                    if k not in (a, b):
                        third = _or(third, en[k])
                use = _and(_and(self.free[a], self.free[b]), third)
                if use is False:
                    continue
                tau0, info = self.start([(a, b)] + [u for u in units if u[0] not in (a, b)], last=others)
                consider(self.solve(tau0, info), use)
        parts["f"] = fbest
        return best, parts


_STAGE_COLUMNS = (
    ["failure_rate_per_h", "mtbf_h"] + [f"failure_rate_{c}_per_h" for c in FAILURE_CLASSES]
    + ["ckpt_bytes", "ckpt_shard_bytes"]
    + [f"ckpt_{k}_{q}" for k in TIER_KINDS for q in ("save_s", "stall_s", "interval_opt_s")]
    + ["ckpt_interval_s", "ckpt_overhead_frac", "lost_work_frac", "restart_frac", "goodput",
       "goodput_first_order", "ckpt_host_mem_per_node_bytes", "ckpt_async_staging_per_node_bytes"]
)


#: Input columns that :func:`_stage_block` reads only through :func:`_writers`.
_WRITER_COLUMNS = ("zero_stage", "dp", "ep")


def _writers(ngpu, zero_stage, dp, ep=1):
    """Checkpoint writers (ranks that each write a shard), shape (n,) or scalar: every GPU
    with ZeRO >= 1 (the optimizer is sharded over DP), one DP replica times the EP size with
    ZeRO-0, at most every GPU (:func:`planner.checkpoint.ckpt_layout`). ``ngpu`` float array."""
    zero1 = _tri(np.asarray(zero_stage) >= 1)
    if zero1 is True:
        return ngpu
    nw = np.maximum(ngpu / np.maximum(np.asarray(dp, dtype=float), 1.0), 1.0)
    nw = np.minimum(nw * np.maximum(np.asarray(ep, dtype=float), 1.0), ngpu)
    return nw if zero1 is False else np.where(zero1, ngpu, nw)


def _stage_block(get, has, n, out, sl, zero_cols=frozenset(), track_lo=False):
    """Stage 4 on one block of rows: writes ``out[col][sl]`` for every output column.

    ``get(name)`` returns the block's slice of an input column; ``has(name)`` tells whether the
    batch has it; ``zero_cols`` names failure-rate columns that are 0 in every row (skipped). Same
    model as :func:`stage_grid` (checkpoint formulas of :mod:`planner.checkpoint`, written out
    here on the block to share the common terms).

    Returns, with ``track_lo``, the largest step time [s] (after the 1 s floor) for which each
    row's result would be the same, operation for operation (:attr:`_Block.lo_reach`); else None.
    """
    def F(name):
        return np.asarray(get(name), dtype=float)

    def Bm(name):
        return np.asarray(get(name), dtype=bool)

    ngpu, gpn = F("n_gpus"), F("gpus_per_node")
    ckpt = F("params_total") * ck.ckpt_bytes_per_param(get("precision") if has("precision") else None)
    nw = _writers(ngpu, get("zero_stage"), get("dp"), get("ep") if has("ep") else 1)
    shard = ckpt / nw
    node_bytes = np.minimum(gpn, nw) * shard
    # x/inf = 0: an unlimited link takes no time; the node's DRAM is shared (ck.host_copy_bw)
    link, dram = F("host_link_bw_bytes_per_s"), F("host_memory_bw_bytes_per_s")
    d2h = shard / ck.host_copy_bw(link, dram, node_bytes / shard)
    h2d = shard / ck.host_copy_bw(link, dram, np.minimum(gpn, ngpu))
    asyn = _tri(Bm("ckpt_async"))
    frac = F("ckpt_async_interference_frac") if asyn is not False else None
    step = np.fmax(F("step_time_s"), INTERVAL_MIN_S) if has("step_time_s") else np.full(n, INTERVAL_MIN_S)
    spare = _tri(np.asarray(get("hot_spare_nodes")) > 0)
    out["ckpt_bytes"][sl] = ckpt
    out["ckpt_shard_bytes"][sl] = shard

    # Per tier: save / stall (every tier, as stage_grid), reload and bounds (enabled tiers).
    netbw = None
    gs = tot = None
    U, en, s, lo, hi, free, base, rel, relp, repm, lag = [], {}, {}, {}, {}, {}, {}, {}, {}, {}, {}
    given_reach: list = []  # given intervals after the lower-bound clip (track_lo)
    for k, kind in enumerate(TIER_KINDS):
        save = np.maximum(np.maximum(d2h, node_bytes / F(f"ckpt_{kind}_write_bw_per_node_bytes_per_s")),
                          ckpt / F(f"ckpt_{kind}_agg_write_bw_bytes_per_s"), out=out[f"ckpt_{kind}_save_s"][sl])
        rep = F(f"ckpt_{kind}_replicas") if kind in ck.NODE_LOCAL_TIERS else None
        repm[k] = _tri(rep > 0) if rep is not None else False
        if repm[k] is not False:  # copies go to other nodes: at most n_nodes − 1
            rep = ck.peer_replicas(rep, F("n_nodes"))
            repm[k] = _tri(rep > 0)
        if repm[k] is not False:
            if netbw is None:
                netbw = F("nic_bw_per_gpu_bytes_per_s") * gpn * ck.link_eff()["network"]
            save = np.maximum(save, node_bytes * rep / netbw, out=save)
            # the node also stores its peers' copies (as checkpoint.ckpt_save_time; review 44)
            save = np.maximum(save, node_bytes * (1.0 + rep) / F(f"ckpt_{kind}_write_bw_per_node_bytes_per_s"),
                              out=save)
        stall = save
        if asyn is not False:
            with np.errstate(invalid="ignore"):  # 0 · inf (no slow-down, a tier that cannot be written): 0
                drain = np.where(frac > 0.0, frac * (save - d2h), 0.0)  # as checkpoint.ckpt_save_time (15i)
            stall = _pick(asyn, d2h + drain, save)
        out[f"ckpt_{kind}_stall_s"][sl] = stall
        if kind == "host_memory":
            hm_bytes = node_bytes * (1.0 + (rep if rep is not None else 0.0))
        e = _tri(Bm(f"ckpt_{kind}_enabled"))
        en[k] = e
        if e is False:
            out[f"ckpt_{kind}_interval_opt_s"][sl] = np.nan
            continue
        U.append(k)
        s[k] = _pick(e, stall, 0.0)
        if asyn is not False:  # async: the save is durable save − stall after its stall ends
            lg = _pick(e, save_lag_s(save, stall), 0.0)
            if any_true(lg > 0):
                lag[k] = lg
        lo_k = step if asyn is False else _pick(asyn, np.maximum(step, save), step)
        if e is not True:  # rows without this tier: their (maybe infinite) save time bounds nothing
            lo_k = _pick(e, lo_k, step)
        lo[k] = lo_k
        hi[k] = INTERVAL_MAX_S if float(lo_k.max()) <= INTERVAL_MAX_S else np.maximum(lo_k, INTERVAL_MAX_S)
        tin = F(f"ckpt_{kind}_interval_s")
        isn = _tri(np.isnan(tin))
        free[k] = _and(e, isn)
        # a given interval below the lower bound (one step; a running async save) cannot be kept:
        # the job saves at the bound (notes() says so)
        b0 = _pick(isn, hi[k], tin if isn is True else np.maximum(tin, lo_k))
        base[k] = b0 if e is True else np.where(e, b0, hi[k])
        if track_lo and isn is not True:  # the clip holds for step times up to the value it gives
            fixed = _and(e, _not(isn))
            if fixed is not False:
                given_reach.append(np.broadcast_to(_pick(fixed, b0, np.inf), (n,)))
        if gs is None:
            gs, tot = np.minimum(gpn, ngpu) * shard, ngpu * shard  # a job smaller than a node reads only its own GPUs
        r = np.maximum(np.maximum(h2d, gs / F(f"ckpt_{kind}_read_bw_per_node_bytes_per_s")),
                       tot / F(f"ckpt_{kind}_agg_read_bw_bytes_per_s"))
        if kind in ck.NODE_LOCAL_TIERS:
            # ZeRO-0: one DP replica wrote (nw < n_gpus), so a stage's nodes without its copy (its
            # writers' nodes and their peer copies) fetch their GPUs' shards over the network, as
            # from a peer replica (ck.node_local_fetch; review h30a C6: counted as a local read)
            fetch = _tri(ck.node_local_fetch(nw, ngpu, F("pp"), gpn, F("n_nodes"),
                                             rep if rep is not None else 0.0))
            if fetch is not False:
                if netbw is None:
                    netbw = F("nic_bw_per_gpu_bytes_per_s") * gpn * ck.link_eff()["network"]
                r = _pick(fetch, np.maximum(r, gs / netbw), r)
        rel[k] = r
        if repm[k] is not False:
            relp[k] = np.maximum(r, gs / netbw)

    # Failure classes: rates, recovery, and groups of classes that recover alike.
    nnode = F("n_nodes")
    lam_tot = None
    rest = None
    groups: dict = {}
    unsurv = None
    for c, fc in enumerate(FAILURE_CLASSES):
        lam_h = None
        for unit, mult in (("gpu", ngpu), ("node", nnode), ("job", None)):
            col = f"fail_{fc}_per_{unit}_h"
            if col in zero_cols:
                continue
            term = F(col) if mult is None else F(col) * mult
            lam_h = term if lam_h is None else lam_h + term
        if lam_h is None:
            lam_h = np.zeros(n)
        # Numerical guard: a rate below RATE_FLOOR_PER_H (one failure in 10^8 years) is no
        # failure; near 1e-305 per hour 1/λ overflows and the interval optimum turns NaN.
        lam_h = np.where(lam_h < RATE_FLOOR_PER_H, 0.0, lam_h)
        out[f"failure_rate_{fc}_per_h"][sl] = lam_h
        lam_tot = _acc(lam_tot, lam_h)
        lam = lam_h / 3600.0
        R = F(f"fail_{fc}_restart_s")
        if fc in REPAIR_CLASSES and spare is not True:
            R = R + _pick(spare, 0.0, F(f"fail_{fc}_repair_s"))
        rest = _acc(rest, lam * R)
        ok, peer = {}, {}
        for k in U:
            kind = TIER_KINDS[k]
            native = _tri(Bm(f"ckpt_{kind}_survives_{fc}"))
            fp = False
            if fc in ck.NODE_LOSS_CLASSES and repm[k] is not False:
                fp = _and(_not(native), repm[k])
            ok[k] = _and(en[k], _or(native, fp))
            peer[k] = fp
        if all(ok[k] is False for k in U):
            unsurv = _acc(unsurv, lam)
            continue
        uniform = all(isinstance(ok[k], bool) and isinstance(peer[k], bool) for k in U)
        # One group per class, also where classes recover alike in every row of the block: merged,
        # their rates were summed in another order than in a block where they differ, and a
        # row's intervals moved by ~1e-12 with its batch (review 16a); ~10% slower on blocks of
        # like rows, exact
        reload = {k: _pick(peer[k], relp.get(k), rel[k]) for k in U if ok[k] is not False}
        groups[("class", c)] = _Group(lam, ok, reload, [(lam, R)])
        if not uniform:
            none_ok = True
            for k in U:
                none_ok = _and(none_ok, _not(ok[k]))
            if none_ok is not False:
                unsurv = _acc(unsurv, _pick(none_ok, lam, 0.0))

    out["failure_rate_per_h"][sl] = lam_tot
    np.divide(1.0, lam_tot, out=out["mtbf_h"][sl])  # 1/0 = inf: no failures

    blk = _Block(n, U, s, lo, hi, free, base, list(groups.values()), unsurv, track_lo,
                 lam_tot=lam_tot / 3600.0, en=en, lag=lag)
    tau, parts = blk.optimum()

    # Host memory held by checkpoints at the chosen intervals: the host-memory tier's copies
    # (where it is saved) and the async staging buffers of the other saved tiers (review 16a)
    hm_k = TIER_KINDS.index("host_memory")
    host_part, n_stage = 0.0, 0.0
    for k in U:
        saved = _and(en[k], _tri(~is_never_saved(tau[k])))
        if saved is False:
            continue
        if k == hm_k:
            host_part = _pick(saved, hm_bytes, 0.0)
        else:
            n_stage = n_stage + _pick(saved, 1.0, 0.0)
    staging = ck.async_staging_bytes_per_node(node_bytes, Bm("ckpt_async"), n_stage)
    out["ckpt_async_staging_per_node_bytes"][sl] = staging
    out["ckpt_host_mem_per_node_bytes"][sl] = host_part + staging

    # Outputs at the chosen intervals (expected_goodput's formulas).
    lam = parts["lam"]
    lost = tmin = None
    for k in U:
        t = tau[k]
        out[f"ckpt_{TIER_KINDS[k]}_interval_opt_s"][sl] = _pick(en[k], t, np.nan)
        tm = _pick(en[k], t, np.inf)
        tmin = tm if tmin is None else np.minimum(tmin, tm)
        if lam[k] is not None:
            lost = _acc(lost, lam[k] * t)
            if k in lag:  # async: first order Λ_k·L_k more (a failure before the save is durable)
                lost = lost + 2.0 * lam[k] * np.where(lam[k] > 0, lag[k], 0.0)
    ov = np.zeros(n) if parts["ov"] is None else parts["ov"]
    lost = np.zeros(n) if lost is None else 0.5 * lost
    restart = rest if parts["rterm"] is None else rest + parts["rterm"]
    logw, lov, lrs, llw = parts["f"], np.log1p(ov), parts["lrs"], parts["llw"]
    if unsurv is not None:
        bad = unsurv > 0
        lost = np.where(bad, np.inf, lost)
        restart = np.where(bad, np.inf, restart)
        logw = np.where(bad, np.inf, logw)
        llw = np.where(bad, np.inf, llw)
    logw = np.where(np.isnan(logw), np.inf, logw)
    f_ov, f_lw, f_rs = decompose_loss(lov, lrs, llw, logw)
    out["ckpt_overhead_frac"][sl] = f_ov
    out["lost_work_frac"][sl] = f_lw
    out["restart_frac"][sl] = f_rs
    g1 = np.minimum(np.maximum(1.0 - ov - lost - restart, 0.0), 1.0)
    out["goodput_first_order"][sl] = np.where(np.isnan(g1), 0.0, g1)
    np.exp(-logw, out=out["goodput"][sl])
    if tmin is None:
        out["ckpt_interval_s"][sl] = np.nan
    elif any(en[k] is True for k in U):
        out["ckpt_interval_s"][sl] = tmin
    else:  # rows with no enabled tier: NaN
        out["ckpt_interval_s"][sl] = np.where(np.isinf(tmin), np.nan, tmin)
    # A tier not in use has no save or stall: NaN ("does not apply"), as its interval (found by
    # review: the local NVMe columns read inf on a system without NVMe, where evaluate's contract
    # keeps inf for a run that never finishes). Written last: the model above used the values of
    # the rows where the tier is enabled only.
    for k, kind in enumerate(TIER_KINDS):
        e = en[k]
        if e is True:
            continue
        for q in ("save_s", "stall_s"):
            dst = out[f"ckpt_{kind}_{q}"][sl]
            if e is False:
                dst[:] = np.nan
            else:
                dst[~e] = np.nan
    if track_lo:
        for y in given_reach:
            np.minimum(blk.lo_reach, y, out=blk.lo_reach)
    return blk.lo_reach


#: The input columns :func:`_stage_block` reads, besides ``step_time_s`` (which only sets the
#: intervals' lower bound). Rows equal in all of them are one problem (see :func:`stage`).
_INPUT_COLUMNS: tuple[str, ...] = (
    ("n_gpus", "gpus_per_node", "n_nodes", "params_total", "precision", "zero_stage", "dp", "ep", "pp",
     "host_link_bw_bytes_per_s", "host_memory_bw_bytes_per_s", "nic_bw_per_gpu_bytes_per_s", "ckpt_async",
     "ckpt_async_interference_frac", "hot_spare_nodes")
    + tuple(f"ckpt_{k}_{q}" for k in TIER_KINDS for q in (
        "enabled", "interval_s", "write_bw_per_node_bytes_per_s", "agg_write_bw_bytes_per_s",
        "read_bw_per_node_bytes_per_s", "agg_read_bw_bytes_per_s"))
    + tuple(f"ckpt_{k}_replicas" for k in ck.NODE_LOCAL_TIERS)
    + tuple(f"ckpt_{k}_survives_{c}" for k in TIER_KINDS for c in FAILURE_CLASSES)
    + tuple(f"fail_{c}_{q}" for c in FAILURE_CLASSES
            for q in ("per_gpu_h", "per_node_h", "per_job_h", "restart_s", "repair_s"))
)
#: Batches of at least this many rows are grouped into distinct problems first (:func:`stage`).
DEDUP_MIN_ROWS = 64


def _codes(x: np.ndarray):
    """Dense codes 0..k−1 of the distinct values of column ``x`` (NaNs equal), and k; None when
    every row holds the same value."""
    n = x.shape[0]
    if x.strides == (0,) or (x[0] == x[-1] and (x == x[0]).all()):  # a broadcast scalar, or uniform
        return None
    if x.dtype == bool:
        return x.astype(np.int64), 2
    if x.dtype.kind in "iu":
        lo_v, hi_v = int(x.min()), int(x.max())
        if hi_v - lo_v <= 4 * n:  # small range: a table instead of a sort
            c = x - lo_v
            present = np.zeros(hi_v - lo_v + 1, dtype=bool)
            present[c] = True
            table = np.cumsum(present) - 1
            return table[c], int(table[-1]) + 1
    elif np.isnan(x[0]) and np.isnan(x).all():
        return None
    u, inv = np.unique(x, return_inverse=True)
    return inv.reshape(-1), int(u.size)


def _problems(b, n):
    """Group the rows into distinct stage-4 problems: rows equal in every ``_INPUT_COLUMNS``
    column (``step_time_s`` aside), with ZeRO stage and DP size compared through the writer
    count they give (:func:`_writers`, the only way the stage reads them). Returns (key (n,)
    int codes 0..K−1, K, the names of the columns that vary) or None when nearly every row is
    distinct."""
    key, k_tot = None, 1
    varying = []
    cols = []
    for name in _INPUT_COLUMNS:
        if name not in b:
            continue
        x = np.asarray(b[name])
        if name in _WRITER_COLUMNS:
            # ZeRO stage and DP size enter only through the writer count (below): gathered
            # for the problem's rows, not part of the key
            if not (x.strides == (0,) or (x[0] == x[-1] and (x == x[0]).all())):
                varying.append(name)
            continue
        cols.append((name, x))
    if any(name in varying for name in _WRITER_COLUMNS):
        cols.append(("", _writers(np.asarray(b["n_gpus"], dtype=float), b["zero_stage"], b["dp"],
                                  b["ep"] if "ep" in b else 1)))
    for name, x in cols:
        c = _codes(x)
        if c is None:
            continue
        if name:
            varying.append(name)
        codes, k = c
        if key is None:
            key, k_tot = codes, k
            continue
        if k_tot * k >= 2**62:  # re-number before the mixed-radix key overflows
            u, key = np.unique(key, return_inverse=True)
            key, k_tot = key.reshape(-1), int(u.size)
        key = key * k + codes
        k_tot *= k
        if k_tot > n:
            u, key = np.unique(key, return_inverse=True)
            key, k_tot = key.reshape(-1), int(u.size)
            if k_tot > n // 2:
                return None
    if key is None:
        return np.zeros(n, dtype=np.int64), 1, varying
    if k_tot > 4 * n:
        u, key = np.unique(key, return_inverse=True)
        return key.reshape(-1), int(u.size), varying
    present = np.zeros(k_tot, dtype=bool)
    present[key] = True
    table = np.cumsum(present) - 1
    return table[key], int(table[-1]) + 1, varying


def _rows_of(b, names, varying, idx):
    """Columns ``names`` of ``b`` at rows ``idx``: gathered where they vary, else (every row the
    same) the first ``idx.size`` rows, a view."""
    m = idx.size
    return {name: (np.asarray(b[name])[idx] if name in varying else np.asarray(b[name])[:m])
            for name in names}


def _stage_blocks(b, n, out, zero_cols, track_lo=False):
    """:func:`_stage_block` over the rows of ``b`` in blocks of ``BLOCK_ROWS``; with ``track_lo``
    the step time up to which each row's result holds (see :func:`_stage_block`), else None."""
    reach = np.empty(n) if track_lo else None
    for s0 in range(0, n, BLOCK_ROWS):
        sl = slice(s0, min(n, s0 + BLOCK_ROWS))
        r = _stage_block(lambda name: b[name][sl], lambda name: name in b, sl.stop - sl.start, out, sl,
                         zero_cols, track_lo)
        if track_lo:
            reach[sl] = r
    return reach


def _stage_dedup(b, n, out, zero_cols) -> bool:
    """Stage 4 once per distinct problem of the batch, results gathered back to the rows (see
    :func:`stage`); False (nothing written) when nearly every row is a problem of its own."""
    has_step = "step_time_s" in b
    step = np.fmax(np.asarray(b["step_time_s"], dtype=float), INTERVAL_MIN_S) if has_step else None
    if step is not None and not float(step.max()) <= INTERVAL_MAX_S:
        return False
    grp = _problems(b, n)
    if grp is None:
        return False
    key, K, varying = grp
    varying = set(varying) | {"params_total"}
    cols = [name for name in _INPUT_COLUMNS if name in b] + ["params_total"]
    if has_step:  # each problem at the smallest step time of its rows
        smin = np.full(K, np.inf)
        np.minimum.at(smin, key, step)
        hit = np.flatnonzero(step == smin[key])
        rep_row = np.empty(K, dtype=np.int64)
        rep_row[key[hit]] = hit  # a row of each problem that has that step time
    else:
        rep_row = np.empty(K, dtype=np.int64)
        rep_row[key] = np.arange(n)  # any row of each problem
    ub = _rows_of(b, cols, varying, rep_row)
    if has_step:
        ub["step_time_s"] = step[rep_row]
    uout = {c: np.empty(K) for c in _STAGE_COLUMNS}
    reach = _stage_blocks(ub, K, uout, zero_cols, track_lo=has_step)
    for c in _STAGE_COLUMNS:
        u = uout[c]
        if K == 1 or (u == u[0]).all():  # the same value for every problem: a fill, no gather
            out[c].fill(u[0])
        else:
            np.take(u, key, out=out[c])
    if has_step:
        # rows whose step time is above what their problem's result holds for: on their own
        rows = np.flatnonzero(step > reach[key])
        if rows.size:
            # ... once per distinct (problem, step time): splits that differ only in what the
            # timing does not see and the problem key does not hold (ZeRO 1 vs 2) tie
            k2, s2 = key[rows], step[rows]
            o = np.argsort(s2)
            o = o[np.argsort(k2[o], kind="stable")]  # by (problem, step): np.lexsort, faster
            new = np.ones(o.size, dtype=bool)
            new[1:] = (k2[o[1:]] != k2[o[:-1]]) | (s2[o[1:]] != s2[o[:-1]])
            inv = np.empty(o.size, dtype=np.int64)
            inv[o] = np.cumsum(new) - 1
            reps = rows[o[new]]
            sub = _rows_of(b, cols, varying, reps)
            sub["step_time_s"] = step[reps]
            sout = {c: np.empty(reps.size) for c in _STAGE_COLUMNS}
            _stage_blocks(sub, reps.size, sout, zero_cols)
            for c in _STAGE_COLUMNS:
                out[c][rows] = sout[c].take(inv)
    return True


def stage(b) -> dict[str, np.ndarray]:
    """Pipeline stage 4: failures, checkpoint tiers, intervals and goodput.

    Parameters
    ----------
    b : Batch — inputs of :mod:`planner.batch`, ``params_total``; ``step_time_s`` if present.

    Returns
    -------
    dict of ndarray (N,)
        ``failure_rate_per_h``, ``mtbf_h``, ``failure_rate_{class}_per_h``, ``ckpt_bytes``,
        ``ckpt_shard_bytes``, ``ckpt_{kind}_save_s``, ``ckpt_{kind}_stall_s`` (NaN for a tier not
        in use), ``ckpt_{kind}_interval_opt_s`` (the interval in use: the optimum where the input is NaN,
        the given one otherwise; NaN for a disabled tier), ``ckpt_interval_s`` (most frequent
        enabled tier), ``goodput`` (renewal model, higher order), ``ckpt_overhead_frac``,
        ``lost_work_frac``, ``restart_frac`` (its loss 1 − goodput split by
        :func:`decompose_loss`), ``goodput_first_order`` (DESIGN §4.4's first-order formula,
        clipped to [0, 1]), ``ckpt_host_mem_per_node_bytes`` (host memory the checkpoints hold
        per node: the host-memory tier's copies and the async staging buffers,
        the formula of :func:`ckpt_host_mem_per_node`, which the grid path calls and the headline
        path applies inline), ``ckpt_async_staging_per_node_bytes`` (the staging part),
        ``host_fits_ckpt`` (that plus ``host_mem_per_node_bytes`` <= ``host_memory_bytes``).

    Notes
    -----
    Distinct problems first (batches of ``DEDUP_MIN_ROWS`` rows or more): rows equal in every
    input column of the stage (``_INPUT_COLUMNS``; ZeRO stage and DP through the writer count
    they give) but ``step_time_s`` are one problem (a sweep chunk of one model and one system
    holds a handful: the split changes only the writer count, and the step time). Each problem
    is solved once, at the smallest step time of its rows, and its result copied to its rows (a
    gather, no loop over rows). The step time enters only as the lower bound ``max(step, c)``
    of an interval; the solver records the smallest value it clipped at a lower bound
    (:attr:`_Block.lo_reach`), and a row whose step time is above that is solved again on its
    own, once per distinct (problem, step time) (the same operations would not give the same
    values there): so every row's result is the one the solver gives that row, not an
    approximation.
    Rows are processed in blocks of ``BLOCK_ROWS`` (a loop over blocks, not rows) so that the
    working arrays stay in cache; within a block every step is a whole-array operation. The
    free intervals solve the stationarity conditions of the renewal objective (see
    :meth:`_Block.solve`) for a few candidate structures (:meth:`_Block.candidates`), keeping
    the best per row: the same optimum as :func:`optimize_intervals_grid` (the reference,
    :func:`stage_grid`) to solver tolerance, about 1000x faster.
    """
    n = len(b["n_gpus"])
    out = {c: np.empty(n) for c in _STAGE_COLUMNS}
    zero_cols = frozenset(
        col for col in (f"fail_{c}_per_{u}_h" for c in FAILURE_CLASSES for u in ("gpu", "node", "job"))
        if not any_true(b[col]))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if n < DEDUP_MIN_ROWS or not _stage_dedup(b, n, out, zero_cols):
            _stage_blocks(b, n, out, zero_cols)
    used = out["ckpt_host_mem_per_node_bytes"]
    if "host_mem_per_node_bytes" in b:
        used = used + np.asarray(b["host_mem_per_node_bytes"], dtype=float)
    out["host_fits_ckpt"] = used <= np.asarray(b["host_memory_bytes"], dtype=float)
    return out


def ckpt_host_mem_per_node(node_bytes, host_replicas, ckpt_async, enabled, tau):
    """Host memory held per node by checkpoints [B]: (total, async staging part), each (N,).

    The host-memory tier's copies, ``node_bytes · (1 + replicas)``, where it is enabled and saved,
    plus the staging buffers of the asynchronous saves of the other saved tiers,
    :func:`planner.checkpoint.async_staging_bytes_per_node` (review 16a: not counted before). A tier
    that is never saved (interval ``INTERVAL_MAX_S``: at the optimum it would recover no failure
    class, or the interval given is that long) keeps no copy and stages nothing (found by review:
    its copies were still counted, and a sweep refused every split for host memory the run would
    never use). ``enabled``, ``tau``: (N, K) over ``TIER_KINDS``; ``host_replicas`` the peer
    copies kept (:func:`planner.checkpoint.peer_replicas`)."""
    saved = np.asarray(enabled, dtype=bool) & ~is_never_saved(np.nan_to_num(tau, nan=INTERVAL_MAX_S))
    hm = TIER_KINDS.index("host_memory")
    nb = np.asarray(node_bytes, dtype=float)
    host = np.where(saved[:, hm], nb * (1.0 + np.asarray(host_replicas, dtype=float)), 0.0)
    n_stage = saved.sum(axis=1) - saved[:, hm]
    staging = ck.async_staging_bytes_per_node(nb, ckpt_async, n_stage)
    return host + staging, staging


def stage_grid(b) -> dict[str, np.ndarray]:
    """Reference stage 4: same columns as :func:`stage`, intervals from the grid search.

    Slow (about 1,400 rows/s); the reference for the tests of the fast solver of :func:`stage`.

    Parameters
    ----------
    b : Batch — inputs of :mod:`planner.batch`, ``params_total``; ``step_time_s`` if present.

    Returns
    -------
    dict of ndarray (N,) — the same columns as :func:`stage`.
    """
    tt = ck.tier_times(b)
    n = tt["ckpt_bytes"].shape[0]
    lam_h = failure_rates_per_h(b)
    p = {
        "stall_s": tt["stall_s"], "enabled": tt["enabled"], "lam_per_s": lam_h / 3600.0,
        "recovery_s": recovery_s(b), "reload_s": tt["reload_s"], "survives": tt["survives"],
        "lag_s": save_lag_s(tt["save_s"], tt["stall_s"]),
    }
    K = len(TIER_KINDS)
    tau_in = np.stack([np.asarray(b[f"ckpt_{k}_interval_s"], dtype=float) for k in TIER_KINDS], axis=1)
    free = tt["enabled"] & np.isnan(tau_in)
    lo = np.stack([interval_floor_s(b, tt, k) for k in range(K)], axis=1)  # one step; an async save
    hi = np.maximum(np.full((n, K), INTERVAL_MAX_S), lo)
    tau_in = np.where(np.isnan(tau_in), tau_in, np.maximum(tau_in, lo))  # a given interval the job cannot keep
    tau = optimize_intervals_grid(tau_in, free, lo, hi, p)
    tau = np.where(tt["enabled"], tau, np.nan)
    res = expected_goodput([tau[:, k] for k in range(K)], **{
        "stall_s": p["stall_s"], "enabled": p["enabled"], "lam_per_s": p["lam_per_s"],
        "recovery_s_": p["recovery_s"], "reload_s": p["reload_s"], "survives": p["survives"],
        "lag_s": p["lag_s"],
    })
    lam_total = lam_h.sum(axis=1)
    with np.errstate(divide="ignore", over="ignore"):
        mtbf_h = np.divide(1.0, lam_total, out=np.full(n, np.inf), where=lam_total > 0)
    out: dict[str, np.ndarray] = {"failure_rate_per_h": lam_total, "mtbf_h": mtbf_h}
    for c, fc in enumerate(FAILURE_CLASSES):
        out[f"failure_rate_{fc}_per_h"] = lam_h[:, c]
    out["ckpt_bytes"] = tt["ckpt_bytes"]
    out["ckpt_shard_bytes"] = tt["ckpt_shard_bytes"]
    for k, kind in enumerate(TIER_KINDS):
        on = tt["enabled"][:, k]  # a tier not in use: NaN, as in stage
        out[f"ckpt_{kind}_save_s"] = np.where(on, tt["save_s"][:, k], np.nan)
        out[f"ckpt_{kind}_stall_s"] = np.where(on, tt["stall_s"][:, k], np.nan)
        out[f"ckpt_{kind}_interval_opt_s"] = tau[:, k]
    tmin = res["tau_recovery_min_s"]
    out["ckpt_interval_s"] = np.where(np.isinf(tmin), np.nan, tmin)
    for key in ("ckpt_overhead_frac", "lost_work_frac", "restart_frac", "goodput", "goodput_first_order"):
        out[key] = res[key]
    replicas = ck.peer_replicas(b["ckpt_host_memory_replicas"], b["n_nodes"])
    out["ckpt_host_mem_per_node_bytes"], out["ckpt_async_staging_per_node_bytes"] = ckpt_host_mem_per_node(
        tt["ckpt_node_bytes"], replicas, b["ckpt_async"], tt["enabled"], tau)
    used = out["ckpt_host_mem_per_node_bytes"] + (np.asarray(b["host_mem_per_node_bytes"], dtype=float)
                                                  if "host_mem_per_node_bytes" in b else 0.0)
    out["host_fits_ckpt"] = used <= np.asarray(b["host_memory_bytes"], dtype=float)
    return out


#: Columns of :func:`goodput_vs_interval`'s result.
CURVE_COLUMNS: tuple[str, ...] = ("goodput", "goodput_first_order")



def _row_interval_floor(row: dict, k: int) -> tuple[float, str]:
    """:func:`interval_floor_s` of one scenario's row and tier ``k`` [s], and what sets it in words:
    "one step", "1 s, the model's shortest" (``INTERVAL_MIN_S``, a step being shorter) or "the async
    save's time"."""
    floor_s = float(interval_floor_s(OneRow(row), _row_tier_times(row), k)[0])
    step_s = float(row.get("step_time_s", np.nan) or np.nan)
    what = ("one step" if floor_s <= step_s * (1.0 + 1e-12) else
            f"{_g(INTERVAL_MIN_S)} s, the model's shortest" if floor_s <= INTERVAL_MIN_S * (1.0 + 1e-12) else
            "the async save's time")
    return floor_s, what


def interval_floor_s(b, tt: dict, k: int) -> np.ndarray:
    """The shortest interval tier ``k`` can be saved at, shape (N,) [s]: one step
    (``max(step_time_s, INTERVAL_MIN_S)``; ``INTERVAL_MIN_S`` without a step time) and, with
    async checkpoints, the save itself (the next save cannot start before the last one ends).
    ``tt`` is :func:`planner.checkpoint.tier_times` of ``b``. The stage clips the optimum and a
    given interval to it alike."""
    n = len(b["n_gpus"])
    step = (np.fmax(np.asarray(b["step_time_s"], dtype=float), INTERVAL_MIN_S) if "step_time_s" in b
            else np.full(n, INTERVAL_MIN_S))
    asyn = np.asarray(b["ckpt_async"], dtype=bool)
    return np.where(asyn, np.maximum(step, tt["save_s"][:, k]), step)

def goodput_vs_interval(b_row_batch, tier_kind: str, intervals_s) -> np.ndarray:
    """Goodput of one scenario against one tier's checkpoint interval (for the UI chart).

    Parameters
    ----------
    b_row_batch : Batch of one row — the inputs of stage 4 (``params_total`` from stage 1,
        ``step_time_s`` if present); stage outputs in it are ignored.
    tier_kind : str — one of ``TIER_KINDS``.
    intervals_s : array_like, shape (G,) — compute time between saves of that tier [s].

    Returns
    -------
    ndarray, shape (G, 2)
        Column 0 ``goodput`` (the renewal model, Daly's generalised to tiers: the stage's
        headline), column 1 ``goodput_first_order``, see ``CURVE_COLUMNS``, when the tier's interval is
        ``intervals_s[g]`` and every other tier's interval is the one :func:`stage` uses (the
        optimum where the scenario leaves it free, else the given one). The other tiers are not
        re-optimised per point, so the curve's maximum is the stage's optimum for this tier.
        A disabled tier gives a flat curve. Intervals below :func:`interval_floor_s` (one step,
        or an async save still running) are taken at that floor, as the stage takes them: the
        curve is flat below it.
    """
    if len(b_row_batch["n_gpus"]) != 1:
        raise ValueError("goodput_vs_interval takes a batch of one row")
    k = TIER_KINDS.index(tier_kind)
    res = stage(b_row_batch)
    tt = ck.tier_times(b_row_batch)
    grid = np.maximum(np.asarray(intervals_s, dtype=float).reshape(1, -1), interval_floor_s(b_row_batch, tt, k)[:, None])
    taus = [grid if j == k else np.nan_to_num(res[f"ckpt_{kind}_interval_opt_s"], nan=1.0)[:, None]
            for j, kind in enumerate(TIER_KINDS)]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r = expected_goodput(taus, tt["stall_s"], tt["enabled"], failure_rates_per_h(b_row_batch) / 3600.0,
                             recovery_s(b_row_batch), tt["reload_s"], tt["survives"],
                             save_lag_s(tt["save_s"], tt["stall_s"]))
    return np.stack([r["goodput"][0], r["goodput_first_order"][0]], axis=1)


def _g(x: float) -> str:
    return f"{x:.4g}"


def is_never_saved(interval_s) -> np.ndarray:
    """True where an interval is the solver's "never" (``INTERVAL_MAX_S`` or more): the tier is
    not saved to. A short interval (seconds) is a saved tier, however small."""
    if type(interval_s) is float:  # a row's Python float (explain, notes): no array round trip
        return np.bool_(interval_s >= INTERVAL_MAX_S * (1.0 - 1e-9))
    x = np.asarray(interval_s, dtype=float)
    return x >= INTERVAL_MAX_S * (1.0 - 1e-9)


def format_interval_s(interval_s: float) -> str:
    """A checkpoint interval [s] in words for display: "9.29 s", "15.5 min (930 s)", "2.5 h (9000 s)",
    "3.1 d (2.678e+05 s)", "not saved (…)" (``INTERVAL_MAX_S``), "disabled" (NaN). Three significant digits in the
    unit chosen, so a short interval is never rounded to "0 h"."""
    x = float(interval_s)
    if np.isnan(x):
        return "disabled"
    if is_never_saved(x):
        return (f"not saved (interval {INTERVAL_MAX_S:.0e} s = never)" if x <= INTERVAL_MAX_S * (1.0 + 1e-9)
                else f"every {x:.4g} s: never, in effect (≥ {INTERVAL_MAX_S:.0e} s)")
    if x < 60.0:
        return f"{x:.3g} s"
    if x < 3600.0:
        return f"{x / 60.0:.3g} min ({x:.4g} s)"
    if x < 2 * 86400.0:
        return f"{x / 3600.0:.3g} h ({x:.4g} s)"
    return f"{x / 86400.0:.3g} d ({x:.4g} s)"


#: While :func:`report` runs: (the row, a dict of what has been computed for it). The row's
#: model (:func:`_row_model`) and tier times (:func:`_row_tier_times`) are then computed once
#: for its explanation and its notes (four notes and the explanation each asked for them: 0.3–0.8
#: ms of a 5 ms evaluate). Keyed by the row object itself (same object, same values: nothing here
#: writes into a row); a ContextVar, so threads (the app's sessions) never share one.
_ROW_MEMO: contextvars.ContextVar = contextvars.ContextVar("clusterplan_reliability_row_memo", default=None)


def _memo(row: dict, name: str, fn):
    """``fn(row)``, or, inside :func:`report` for its row, the value computed once (an exception
    is not kept: every caller sees it, as without the memo)."""
    memo = _ROW_MEMO.get()
    if memo is None or memo[0] is not row:
        return fn(row)
    if name not in memo[1]:
        memo[1][name] = fn(row)
    return memo[1][name]


def _row_tier_times(row: dict) -> dict:
    """:func:`planner.checkpoint.tier_times` of one scenario's row (arrays of shape (1, ...));
    the callers only read them."""
    return _memo(row, "tier_times", lambda r: ck.tier_times(OneRow(r)))


def _row_model(row: dict):
    """The model of one scenario's row at its intervals: (expected_goodput's dict at (1,),
    recovery tier per class (C,) int (−1: none survives), λ_c [1/h] (C,), R_c [s] (C,)); the
    callers only read them."""
    return _memo(row, "model", _row_model_calc)


def _row_model_calc(row: dict):
    """:func:`_row_model`, computed."""
    b = OneRow(row)
    tt = _row_tier_times(row)
    lam_h = failure_rates_per_h(b)
    R = recovery_s(b)
    # one (K, 1) array, NaN (a disabled tier) as 1 s, its rows the tiers' (1,) intervals
    taus = list(np.nan_to_num(np.array([[float(row.get(f"ckpt_{k}_interval_opt_s", np.nan))] for k in TIER_KINDS]),
                              nan=1.0))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        res = expected_goodput(taus, tt["stall_s"], tt["enabled"], lam_h / 3600.0, R, tt["reload_s"],
                               tt["survives"], save_lag_s(tt["save_s"], tt["stall_s"]))
    tier = np.full(len(FAILURE_CLASSES), -1)
    for c in range(len(FAILURE_CLASSES)):
        best = np.inf
        for k in range(len(TIER_KINDS)):
            if tt["enabled"][0, k] and tt["survives"][0, k, c] and taus[k][0] < best:
                best, tier[c] = taus[k][0], k
    return {k: float(v[0]) for k, v in res.items()}, tier, lam_h[0], R[0]


def _row_log_wall_without(row: dict, keep) -> float:
    """``log_wall_per_work`` of one row's renewal model with the failure classes not in ``keep``
    ((C,) bools) left out (their rate 0): the run's wall time per compute second apart from the
    failures that restart it from the beginning (:func:`_restart_run`)."""
    keep = tuple(bool(k) for k in keep)

    def calc(r):
        b = OneRow(r)
        tt = _row_tier_times(r)
        lam_h = failure_rates_per_h(b) * np.array(keep)[None, :]
        taus = list(np.nan_to_num(np.array([[float(r.get(f"ckpt_{k}_interval_opt_s", np.nan))] for k in TIER_KINDS]),
                                  nan=1.0))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            res = expected_goodput(taus, tt["stall_s"], tt["enabled"], lam_h / 3600.0, recovery_s(b), tt["reload_s"],
                                   tt["survives"], save_lag_s(tt["save_s"], tt["stall_s"]))
        return float(np.ravel(res["log_wall_per_work"])[0])
    return _memo(row, f"log_wall_without_{keep}", calc)


class RestartRun(NamedTuple):
    """A run some failures restart from the beginning (:func:`_restart_run`)."""

    log_days: float       # natural log of the expected time to train [days] (finite past e^709)
    exact: bool           # no other failure process: the formula is exact
    restart: list         # the failure classes that restart the run (names)
    unsaved: list         # tiers (kinds) that recover some of them but save nothing within the run
    lam_h: float          # their rate Λ [1/h]
    log_lam_t: float = float("nan")  # log(Λ·T), T the run's wall time apart from them [s] (review 49)


def _restart_run(row: dict) -> RestartRun | None:
    """The finite run of a row some of whose failures restart training from the beginning: a class
    no enabled tier survives, or one whose tier saves nothing within the run (its interval at least
    the run's compute time W; review 41b: such a tier counted as surviving them, +9 % against the
    Monte Carlo; review 45d: also beside a tier that survives the other classes, where the renewal
    goodput is above 0). None where no class restarts the run.

    The rest of the model (those classes' rates 0, finite-run corrected) gives the run's wall time T
    apart from them; a run of length T that each such failure, of total rate Λ, restarts after its
    recovery R_c (failures during it extend it, as the renewal model's recovery factor) takes
    e^{Σ λ_c·R_c}·(e^{Λ·T} − 1)/Λ in expectation (Poisson failures on a job of T failure-free
    seconds: Daly 2006 eq. 5 with one segment and no save). Exact where no other class fails;
    otherwise T is random and taken at its mean, which puts the figure above the exact
    1/E[e^{−ΛT}] form (Jensen): within 1 % of the Monte Carlo at the catalogue's failure rates,
    +3 … +16 % at 30–100 × where the other failures' recoveries fill much of the run (review 41b),
    +97 % far beyond them (review 44h: node failures 0.2 per hour restarting a 10-interval run with a
    1 h reload; docs/reliability.md)."""
    def calc(r):
        try:
            work = float(r["tokens_total"]) / float(r["tokens_per_s"])
            res, tier, lam_h, R = _row_model(r)
        except (KeyError, ValueError, TypeError, ZeroDivisionError):
            return None
        if not (np.isfinite(work) and work > 0):
            return None
        C, K = len(FAILURE_CLASSES), len(TIER_KINDS)
        lost = {c for c in range(C) if tier[c] < 0 and lam_h[c] > 0}
        tau = np.array([np.nan if r.get(f"ckpt_{kind}_interval_opt_s") is None
                        else float(r[f"ckpt_{kind}_interval_opt_s"]) for kind in TIER_KINDS])
        unsaved = sorted({int(tier[c]) for c in range(C) if tier[c] >= 0 and lam_h[c] > 0
                          and not tau[tier[c]] < work})
        restart = lost | {c for c in range(C) if tier[c] in unsaved and lam_h[c] > 0}
        if not restart:
            return None
        keep = [c not in restart for c in range(C)]
        log_ws = _row_log_wall_without(r, keep)
        if not np.isfinite(log_ws):
            return RestartRun(float("inf"), False, [FAILURE_CLASSES[c] for c in sorted(restart)],
                              [TIER_KINDS[k] for k in unsaved], float(sum(lam_h[c] for c in restart)))
        lam_k = np.array([sum(float(lam_h[c]) for c in range(C) if tier[c] == k and keep[c]) for k in range(K)])
        stall = np.nan_to_num(np.array([float(r.get(f"ckpt_{kind}_stall_s", 0.0) or 0.0) for kind in TIER_KINDS]),
                              nan=0.0, posinf=np.inf)
        save = np.nan_to_num(np.array([float(r.get(f"ckpt_{kind}_save_s", 0.0) or 0.0) for kind in TIER_KINDS]),
                             nan=0.0, posinf=np.inf)
        lag = save_lag_s(save, stall) if r.get("ckpt_async") else np.zeros(K)
        log_rho = float(finite_run_log_ratio(work, tau, stall, lam_k / 3600.0, lag,
                                             _first_reload_x(r, tier, lam_h, keep)))
        lam_u_h = float(sum(float(lam_h[c]) for c in restart))
        rec_u = sum(float(lam_h[c]) * float(R[c]) for c in restart) / 3600.0
        log_x = np.log(lam_u_h / 3600.0) + np.log(work) + log_ws + log_rho  # log(Λ·T)
        # log of e^{rec_u}·expm1(Λ·T)/Λ, also where Λ·T is beyond e^709
        if log_x > 700.0:
            log_e = np.inf
        else:
            x = float(np.exp(log_x))
            log_e = x + np.log(-np.expm1(-x)) if x > 1.0 else np.log(np.expm1(x))
        log_days = rec_u + log_e - np.log(lam_u_h / 3600.0) - np.log(86_400.0)
        return RestartRun(float(log_days), not any(lam_k > 0), [FAILURE_CLASSES[c] for c in sorted(restart)],
                          [TIER_KINDS[k] for k in unsaved], lam_u_h, float(log_x))
    return _memo(row, "restart_run", calc)


#: Share of runs meeting no restarting failure, e^{−Λ·T}, from which the words for a run the Monte
#: Carlo cannot simulate say that most runs finish and the mean is a rare tail's (review 49).
RESTART_TAIL_FREE_MIN = 0.5


def _mostly_free(lam_t: float, t_s: float) -> tuple[float, str] | None:
    """(e^{−λ·T}, T in words) where that share of runs meeting no failure over T seconds is at least
    :data:`RESTART_TAIL_FREE_MIN` (Poisson's zero-count probability, Daly 2006 eq. 5's first term);
    None otherwise. Shared by :func:`failure_free_text` and :func:`restart_tail_text`."""
    if not (np.isfinite(lam_t) and lam_t >= 0 and np.isfinite(t_s) and t_s > 0):
        return None
    free = float(np.exp(-lam_t))
    if not free >= RESTART_TAIL_FREE_MIN:
        return None
    return free, (format_interval_s(t_s) if t_s < INTERVAL_MAX_S else f"{t_s / 86400.0:.3g} d")


def failure_free_text(row: dict) -> str | None:
    """Where a run mostly meets no failure at all — ``e^{−λ·W}`` ≥ :data:`RESTART_TAIL_FREE_MIN`, λ the
    job's failure rate, W its compute time (tokens / throughput; checkpoint stalls left out, so the share
    is a little high) — words saying so, for the Monte Carlo's refusal of a run whose expected failures
    come from a rare, very long recovery (review 49b: the same words as :func:`restart_tail_text`, for
    a run whose failures do not restart it). None otherwise."""
    try:
        lam_s = float(row["failure_rate_per_h"]) / 3600.0
        work = float(row["tokens_total"]) / float(row["tokens_per_s"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None
    got = _mostly_free(lam_s * work, work) if lam_s > 0 else None
    if got is None:
        return None
    return (f"most runs finish: about {100.0 * got[0]:.6g} % meet no failure and take about {got[1]} of compute; "
            "the expected failures come from the rare rest, whose recoveries the failures during them keep extending")


def restart_tail_text(row: dict) -> str | None:
    """Where a run some failures restart from the beginning (:func:`_restart_run`) mostly meets none
    of them — ``e^{−Λ·T} ≥`` :data:`RESTART_TAIL_FREE_MIN`, Λ their rate, T the run's wall time apart
    from them — words saying so: its expected time is then set by the rare runs that do meet one
    and wait out its recovery (review 49: a 1.16 s run with a 370-day restart was said not to finish
    "in practice", where 99.9993 % of runs finish in 1.16 s). None otherwise (then most runs do meet
    one)."""
    rr = _restart_run(row)
    if rr is None or not np.isfinite(rr.log_lam_t) or not rr.lam_h > 0:
        return None
    lam_t = float(np.exp(rr.log_lam_t))
    got = _mostly_free(lam_t, lam_t / (rr.lam_h / 3600.0))
    if got is None:
        return None
    return (f"most runs finish: about {100.0 * got[0]:.6g} % meet no failure that restarts the run and take "
            f"about {got[1]}; the expected time is set by the rare rest, which wait out a recovery and start again")


def finite_run_restarts(row: dict) -> bool:
    """Whether the row's finite-run figure is that of a run some failures restart from the
    beginning (:func:`_restart_run`): exact, or above the exact figure (T at its mean), never the
    grouped multi-tier form that can be far too low (:func:`finite_run`)."""
    return _restart_run(row) is not None


def finite_run_restart_classes(row: dict) -> list[str]:
    """The failure classes that restart the row's run from the beginning (:func:`_restart_run`):
    those no enabled tier survives, and those of a tier that saves nothing within the run; [] where
    none does."""
    rr = _restart_run(row)
    return [] if rr is None else list(rr.restart)


def finite_run_log10_days(row: dict) -> float:
    """log10 of :func:`finite_run_days`, finite also where the days are beyond the float range
    (a run many restarts long: e^{Λ·T} past e^709); NaN where it cannot be told."""
    rr = _restart_run(row)
    if rr is not None:
        return rr.log_days / np.log(10.0)
    d = finite_run_days(row)
    return float(np.log10(d)) if d > 0 else float("nan")


def saves_started(work_s, tau_s) -> np.ndarray:
    """Saves a run of ``work_s`` compute seconds starts with a tier every ``tau_s`` [s] of compute:
    ``⌈W/τ⌉ − 1``, one at each multiple of τ below W, none at the run's end (arrays, broadcast; 0
    where τ ≥ W). The stalls the finite-run figure and the Monte Carlo charge (review 47a, 47e)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.maximum(np.ceil(np.asarray(work_s, dtype=float) / np.asarray(tau_s, dtype=float)) - 1.0, 0.0)


def finite_run_log_ratio(work_s, tau_s, stall_s, lam_k_per_s, lag_s=None, reload_x=None) -> np.ndarray:
    """log of the finite-run correction ``ρ = Π_k ρ_k`` of the renewal model's time to train.

    The renewal goodput is a steady-state rate: it charges every tier's lost-work factor
    ``φ(x_k)``, ``x_k = Λ_k(τ_k + s_k)``, over the whole run, i.e. ``W/τ_k`` segments of
    ``(e^{x_k} − 1)`` each (Daly [2] eq. 20 with ``T_s/τ`` segments). A run of ``W = n·τ + f·τ``
    compute seconds has ``n`` whole segments and a last partial one of ``f·(τ + s)`` wall
    seconds, whose expected cost is ``e^{f·x} − 1`` (a failure there loses only the work since
    the last save, and no save ends the run), so the expected wall time of the same model is
    the steady-state one times

        ρ_k = (n·(e^{x} − 1) + (e^{f·x} − 1)) / ((n + f)·(e^{x} − 1)) <= 1

    (exact for one tier: the time to train of Daly's model for a finite run; with several
    tiers, each grouped tier's factor is corrected alone, as the grouping treats them).
    ρ_k -> 1 when x -> 0 or W ≫ τ; a tier saved less often than once per run (``n = 0``)
    gives ``expm1(W·x/τ)/((W/τ)·expm1(x))``: the run pays for what it does, not for a whole
    interval it never reaches (found by review: a 2-day run with the PFS saved every 11.6 days
    had an analytic time to train of 112 days against 3.56 in the Monte Carlo). The stalls are
    counted as the run takes them: ``n = ⌈N⌉ − 1`` saves (none at the run's end, none in a run
    shorter than one interval), so the failure-free wall time is ``E = W + n·s_k`` where the steady
    state charges ``N·(τ_k + s_k)``: the last segment runs to ``E``, the m = 0 form is
    ``e^{Λ_k·E} − 1``, and with ``Λ_k = 0`` ρ_k = ``E / (N·(τ_k + s_k))`` (review 47a, 47e; a tier at
    the "never" interval keeps ``N·s_k``).

    Parameters
    ----------
    work_s : array_like (...,) — compute time to train, failure free and without saves [s].
    tau_s, stall_s, lam_k_per_s : array_like (..., K) — each tier's interval [s], stall per
        save [s] and the failure rate it recovers, Λ_k [1/s] (0, NaN interval or a never-saved
        tier: ρ_k = 1).
    lag_s : array_like (..., K), optional — async save lag ``save − stall`` [s] (:func:`save_lag_s`).
        The steady state charges each segment ``e^{Λ_k·L_k}(e^{x} − 1)``. A finite run commits
        only the ``m = #{j >= 1 : j·s + L < N·s}`` saves durable before it ends (``s = τ + stall``,
        ``N = W/τ``) and then runs ``d = N·s − m·s − L`` more: with the chain of the module
        docstring (rolled back / just durable), its up time is ``[(e^{ΛL} − 1) + m·e^{ΛL}(e^x − 1)
        + e^{ΛL}(e^{Λd} − 1)]/Λ`` for ``m >= 1`` and ``(e^{N·x} − 1)/Λ`` for ``m = 0``, so
        ``ρ_k = that / (N·e^{ΛL}(e^x − 1)/Λ)``; with ``L = 0`` it is the formula above (review 22:
        the lag was charged on the last whole interval too, whose save the run never waits for:
        a run of 1.05 intervals at 5× the 405B preset's failure rate was 0.113 d against 0.052 d in
        the Monte Carlo). The missed-save factor (:func:`_log_missed`) is a steady-state term and
        is left as it is.
    reload_x : array_like (..., K), optional — ``y_k = Σ_c λ_c·D_{k,c}`` over the classes tier k
        recovers (``D`` its reload time): the part of the renewal model's recovery factor
        ``e^{Σ λ_c(R_c + D_{k,c})}`` that a failure before the tier's first durable save does not
        pay, there being no checkpoint to reload (the run restarts from its initial state, as
        :mod:`planner.simulate` does). That first period's up time, ``(e^{x + Λ·L} − 1)/Λ`` (the
        whole run when ``m = 0``), is charged ``e^{−y}`` of the steady-state factor (review 44: a
        run of 4.8 intervals with the reload as long as the MTBF was 84 d against 50 d in the
        Monte Carlo, one of 38 intervals 2.2 % above it).

    Returns
    -------
    ndarray (...,) — ``Σ_k log ρ_k`` (<= 0); add it to ``log_wall_per_work``.
    """
    w = np.asarray(work_s, dtype=float)[..., None]
    tau = np.asarray(tau_s, dtype=float)
    s = np.asarray(stall_s, dtype=float)
    lam = np.asarray(lam_k_per_s, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        valid = np.isfinite(tau) & (tau > 0) & np.isfinite(w) & (w > 0)
        use = (lam > 0) & valid
        tau1 = np.where(valid, tau, 1.0)
        segs = w / tau1                      # N
        s0 = np.where(np.isfinite(s), s, 0.0)
        s1 = tau1 + s0
        # The run starts n = ⌈N⌉ − 1 saves (at τ, 2τ, … below W: none at its end), so its failure-free
        # wall time is E = W + n·s where the steady state charges N·(τ + s) (review 47a / 47e: a 3 h run
        # with a sync 395 s PFS save every 4 h was given 3.299 h, "exact", against Daly's 3.208 h, and a
        # run of 1.99 intervals 1.35 % more than its one save). A tier at the "never" interval keeps N·s.
        stalls = valid & np.isfinite(s) & (s > 0) & ~is_never_saved(tau)
        n_saves = saves_started(w, tau1)
        E = np.where(stalls, w + n_saves * s0, segs * s1)
        x = np.where(use, lam * s1, 1.0)
        L = 0.0 if lag_s is None else np.where(use, np.asarray(lag_s, dtype=float), 0.0)
        L = np.where(np.isfinite(L), L, 0.0)
        xl = lam * L                         # Λ·L (0 for sync saves)
        # saves durable before the end (j·s + L < E) and the wall time after the last of them
        m = np.maximum(np.ceil((E - L) / s1) - 1.0, 0.0)
        xd = np.maximum(lam * (E - m * s1 - L), 0.0)   # Λ·d
        a = -np.expm1(-x)                    # 1 − e^{−x}
        # m >= 1: [(e^{xl} − 1) + m·e^{xl}(e^x − 1) + e^{xl}(e^{xd} − 1)] / (N·e^{xl}(e^x − 1)),
        # numerator and denominator divided by e^{x + xl} (xd <= x here: no overflow)
        num = m * a + (-np.expm1(-xl)) * np.exp(-x) + (-np.expm1(-xd)) * np.exp(xd - x)
        y = 0.0 if reload_x is None else np.where(use, np.nan_to_num(np.asarray(reload_x, dtype=float),
                                                                     nan=0.0, posinf=0.0), 0.0)
        # the first durable save's period, (e^{x + xl} − 1) divided as above, without the reload
        num = num - (-np.expm1(-y)) * (-np.expm1(-x - xl))
        log_m = np.log(num) - np.log(segs) - np.log(a)
        # m = 0: (e^{Λ·E} − 1) / (N·e^{xl}(e^x − 1)), divided by e^x (Λ·E may be far beyond e^709);
        # no save is durable within the run: no failure of this tier pays a reload
        nx = np.where(use, lam * E, 1.0)
        log_0 = nx + np.log(-np.expm1(-nx)) - x - np.log(segs) - xl - np.log(a) - y
        log_rho = np.where(m >= 1.0, log_m, log_0)
        log_rho = np.where(use & np.isfinite(log_rho), np.minimum(log_rho, 0.0), 0.0)
        # Λ_k = 0: the stalls alone, E / (N·(τ + s)) (the limit of the forms above)
        log_rho = np.where(stalls & ~use & (lam == 0), np.log(E) - np.log(segs * s1), log_rho)
    return log_rho.sum(axis=-1)


def _first_reload_x(row: dict, tier, lam_h, keep=None) -> np.ndarray:
    """Per tier k (K,), ``y_k = Σ_c λ_c·D_{k,c}`` over the classes k recovers (``keep``: only those),
    the reload part of the recovery factor (:func:`finite_run_log_ratio`'s ``reload_x``)."""
    K, C = len(TIER_KINDS), len(FAILURE_CLASSES)
    try:
        rl = np.asarray(_row_tier_times(row)["reload_s"], dtype=float)[0]  # (K, C)
    except (KeyError, ValueError, TypeError):
        return np.zeros(K)
    y = np.zeros(K)
    for c in range(C):
        k = int(tier[c])
        if k >= 0 and lam_h[c] > 0 and (keep is None or keep[c]) and np.isfinite(rl[k, c]):
            y[k] += float(lam_h[c]) / 3600.0 * float(rl[k, c])
    return y


def _finite_run(row: dict):
    """(finite-run days, per-tier log ρ_k (K,), compute time W [s], intervals (K,), Λ_k [1/h] (K,))
    of one row; (NaN, zeros, NaN, NaN, zeros) where the row lacks the inputs. See
    :func:`finite_run_days`."""
    K = len(TIER_KINDS)
    nothing = (float("nan"), np.zeros(K), float("nan"), np.full(K, np.nan), np.zeros(K))
    try:
        work = float(row["tokens_total"]) / float(row["tokens_per_s"])
        res, tier, lam_h, _R = _row_model(row)
    except (KeyError, ValueError, TypeError, ZeroDivisionError):
        return nothing
    log_w = res["log_wall_per_work"]
    if not (np.isfinite(work) and work > 0):
        return nothing
    lam_k = np.array([sum(float(lam_h[c]) for c in range(len(FAILURE_CLASSES)) if tier[c] == k) for k in range(K)])
    tau = np.array([np.nan if row.get(f"ckpt_{kind}_interval_opt_s") is None
                    else float(row[f"ckpt_{kind}_interval_opt_s"]) for kind in TIER_KINDS])
    # a tier not in use has NaN save / stall (no interval either): 0 here, it takes no part
    stall = np.nan_to_num(np.array([float(row.get(f"ckpt_{kind}_stall_s", 0.0) or 0.0) for kind in TIER_KINDS]),
                          nan=0.0, posinf=np.inf)
    save = np.nan_to_num(np.array([float(row.get(f"ckpt_{kind}_save_s", 0.0) or 0.0) for kind in TIER_KINDS]),
                         nan=0.0, posinf=np.inf)
    lag = save_lag_s(save, stall) if row.get("ckpt_async") else np.zeros(K)
    y = _first_reload_x(row, tier, lam_h)
    per_tier = np.array([float(finite_run_log_ratio(work, tau[k:k + 1], stall[k:k + 1], lam_k[k:k + 1] / 3600.0,
                                                    lag[k:k + 1], y[k:k + 1])) for k in range(K)])
    if np.isnan(log_w):
        return nothing
    rr = _restart_run(row)
    if rr is not None:  # failures that restart the run from the beginning (review 40a D7)
        with np.errstate(over="ignore"):
            return float(np.exp(rr.log_days)), per_tier, work, tau, lam_k
    if log_w == np.inf:  # recoveries that never end
        return float("inf"), per_tier, work, tau, lam_k
    with np.errstate(over="ignore"):
        return float(work * np.exp(log_w + per_tier.sum()) / 86_400.0), per_tier, work, tau, lam_k


def finite_run_days(row: dict) -> float:
    """Expected time to train [days] of one scenario's row with :func:`finite_run_log_ratio`'s
    correction for the run's last, partial interval of each tier: ``W·exp(log_wall_per_work +
    Σ_k log ρ_k)/86400``, ``W = tokens_total / tokens_per_s``. NaN where the row lacks the
    inputs; inf where a failure class no enabled tier survives (the renewal model's goodput 0).
    Can be finite where the headline ``time_to_train_days`` is inf only through an underflow
    of the steady-state goodput (an interval far longer than the run)."""
    return _finite_run(row)[0]


def finite_run(row: dict) -> tuple[float, bool]:
    """(:func:`finite_run_days`, exact): ``exact`` when at most one tier recovers failures (Λ_k > 0
    for one k), where the figure is Daly's finite-run expectation; with several, each tier is
    corrected alone and the figure leaves out that the other tiers' recoveries lengthen the time
    the run is exposed to the failures only one tier recovers: low, by orders of magnitude where
    those recoveries take most of the run (:func:`_short_run_note` says so)."""
    fin, _per_tier, _work, _tau, lam_k = _finite_run(row)
    rr = _restart_run(row)
    if rr is not None:
        return fin, rr.exact
    return fin, int(np.count_nonzero(np.asarray(lam_k) > 0)) <= 1


#: The headline time to train is said to overstate the finite-run one when it is this much
#: longer (relative).
FINITE_RUN_NOTE_REL = 0.01


def _zero_everywhere_text(res: dict, tier, lam_h) -> str | None:
    """Why the renewal goodput is 0 whatever the intervals, in a few words (for the interval
    explanations), or None: a failing class that no enabled tier survives (each such failure
    restarts training from the beginning), or a recovery factor ``e^{Σ_c λ_c(R_c + reload_c)}``
    large enough to put the goodput below the smallest float (e^−745) alone. ``res``, ``tier``,
    ``lam_h``: :func:`_row_model`'s."""
    lr = float(np.ravel(res["log_recovery_factor"])[0])
    if not (np.isinf(res["log_wall_per_work"]) or lr > _LOG_GOODPUT_UNDERFLOW):
        return None
    lost = [fc for c, fc in enumerate(FAILURE_CLASSES) if lam_h[c] > 0 and tier[c] < 0]
    if lost:
        return "no enabled tier survives a failure of class " + ", ".join(lost)
    if lr > _LOG_GOODPUT_UNDERFLOW:
        return (f"the recovery factor e^(Σ_c λ_c(R_c + reload_c)) = e^{lr:.4g} alone puts the goodput below "
                "the smallest float: recoveries take many times the mean time between failures, and "
                "failures during them extend them")
    return None


#: log(1/goodput) above which exp(−x) is 0 in float64 (the smallest subnormal is e^−745.13).
_LOG_GOODPUT_UNDERFLOW = 745.2


def goodput_zero_at_every_interval(row: dict) -> bool:
    """True where one scenario's row has goodput 0 whatever its checkpoint intervals (a failing
    class no enabled tier survives, or recoveries so long that the goodput underflows): its goodput-vs-interval curve
    is 0 everywhere, and its intervals are chosen on the rest of the model (review 16a), so a
    chart should mark no "optimum" on that curve."""
    if not row.get("goodput", 1.0) <= 0.0:
        return False
    try:
        res, tier, lam_h, _R = _row_model(row)
    except (KeyError, ValueError, TypeError):
        return False
    return _zero_everywhere_text(res, tier, lam_h) is not None


def _simulable(rate_h: float, days: float) -> bool:
    """Whether a run of ``days`` at ``rate_h`` failures per hour is within what the Monte Carlo
    simulates (:data:`planner.simulate.MAX_EXPECTED_FAILURES` failures per run)."""
    from .simulate import MAX_EXPECTED_FAILURES  # (simulate imports this module)
    return bool(np.isfinite(days) and rate_h * days * 24.0 <= MAX_EXPECTED_FAILURES)


def zero_goodput_reason(row: dict) -> str | None:
    """Why a scenario's goodput is 0 (no progress in expectation), in words; None if it is not."""
    if not row.get("goodput", 1.0) <= 0.0:
        return None
    try:
        _res, tier, lam_h, R = _row_model(row)
    except (KeyError, ValueError, TypeError):
        return "goodput is 0: failures come faster than the job can save and recover."
    lost = [fc for c, fc in enumerate(FAILURE_CLASSES) if lam_h[c] > 0 and tier[c] < 0]
    lam = float(lam_h.sum())
    # a recovery tier whose (fixed) interval is far longer than the time between failures: each
    # failure loses the work since its last save (φ(Λτ) overflows), not a recovery problem
    long_k = sorted({int(tier[c]) for c in range(len(FAILURE_CLASSES)) if lam_h[c] > 0 and tier[c] >= 0
                     and lam * float(row.get(f"ckpt_{TIER_KINDS[tier[c]]}_interval_opt_s", 0.0)) / 3600.0 > 30.0})
    if long_k and not lost:
        # every such tier already at the shortest interval it can be saved at (one step, or its
        # async save): no interval helps, the step itself outlasts the time between failures
        # (found by review: a 1e-30 B/s NIC advised "shorten the interval" at a 4.7e36 h floor)
        step = float(row.get("step_time_s", 0.0) or 0.0)
        floors = {k: max(step, float(row.get(f"ckpt_{TIER_KINDS[k]}_save_s", 0.0) or 0.0)
                         if row.get("ckpt_async", False) else step) for k in long_k}
        if all(float(row[f"ckpt_{TIER_KINDS[k]}_interval_opt_s"]) <= floors[k] * (1.0 + 1e-9) for k in long_k):
            fin = finite_run_days(row)
            # the async saves that set the floor, with their time (review 22: a 1,578 h save was unsaid)
            slow_saves = [(TIER_KINDS[k], floors[k]) for k in long_k if floors[k] > step * (1.0 + 1e-9)]
            how_often = (f"once a step ({_g(step / 3600.0)} h per step)" if not slow_saves else
                         f"once its async save has ended ({', '.join(f'{kind} {_g(t / 3600.0)} h' for kind, t in slow_saves)};"
                         f" a step is {_g(step / 3600.0)} h)")
            return (f"goodput is 0: a checkpoint can be saved at most {how_often} and the job fails every "
                    f"{_g(60.0 / lam)} min (λ = {_g(lam)}/h), so a "
                    "failure loses work faster than the job makes it, whatever the interval"
                    + (f" (in the steady state; for a run of this length the same model gives about {_g(fin)} d"
                       f"{_days_bill(row, fin)}, "
                       + ("which the Monte Carlo, planner.simulate, simulates)" if _simulable(lam, fin) else
                          "too many failures for the Monte Carlo to simulate: the run does not finish in practice)")
                       if np.isfinite(fin) else "")
                    + (". Faster checkpoint storage (a higher write bandwidth) or a lower failure rate is needed."
                       if slow_saves else ". A shorter step (faster hardware, more GPUs, a smaller global batch) or a "
                       "lower failure rate is needed."))
        tiers = ", ".join(f"{TIER_KINDS[k]} every {_g(float(row[f'ckpt_{TIER_KINDS[k]}_interval_opt_s']) / 3600.0)} h"
                          + (" (never, in effect)" if float(row[f'ckpt_{TIER_KINDS[k]}_interval_opt_s']) >= INTERVAL_MAX_S
                             else "") for k in long_k)
        fin = finite_run_days(row)
        if np.isfinite(fin):  # found by review: said of a 2-day run the Monte Carlo finishes in 3.6 days
            return (f"goodput is 0: the checkpoints that recover the failures are saved far less often than the job "
                    f"fails ({tiers}; a failure every {_g(60.0 / lam)} min, λ = {_g(lam)}/h), so in the steady state "
                    "each failure loses the work since the last save and the renewal model's goodput underflows to 0; "
                    f"this run is shorter than that: for a run of this length the same model gives about {_g(fin)} d"
                    f"{_days_bill(row, fin)} "
                    + ("(the Monte Carlo, planner.simulate, simulates it). " if _simulable(lam, fin) else
                       "(too many failures for the Monte Carlo to simulate). ")
                    + "Shorten the interval, or leave it empty for the optimum.")
        return (f"goodput is 0: the checkpoints that recover the failures are saved far less often than the job "
                f"fails ({tiers}; a failure every {_g(60.0 / lam)} min, λ = {_g(lam)}/h), so each failure loses the "
                "work since the last save and a run of this length does not finish in expectation. Shorten the "
                "interval, or leave it empty for the optimum.")
    if lost:
        # the finite run (review 40a D7: only the Monte Carlo gave a figure): _restart_run's
        # e^{Σ λ_c·R_c}·(e^{Λ·T} − 1)/Λ, in powers of ten past the float range (review 41b D3)
        rr = _restart_run(row)
        try:
            work_d = float(row["tokens_total"]) / float(row["tokens_per_s"]) / 86_400.0
        except (KeyError, ValueError, TypeError, ZeroDivisionError):
            work_d = float("nan")
        if rr is not None and np.isfinite(work_d) and not np.isnan(rr.log_days):
            lg = rr.log_days / np.log(10.0)
            days_txt = (f"{_g(float(np.exp(rr.log_days)))} d" if lg < 300 else
                        f"10^{lg:,.0f} d" if np.isfinite(lg) else "no end")
            fin = float(np.exp(rr.log_days)) if lg < 300 else float("inf")
            tail = restart_tail_text(row)  # review 49: most runs may well finish, the mean being a rare tail's
            sim_txt = ("the Monte Carlo (planner.simulate) simulates it" if _simulable(lam, fin) else
                       "too many failures for the Monte Carlo to simulate: " + (tail or "the run does not finish in practice"))
            more = [c for c in rr.restart if c not in lost]
            unsaved_txt = (f"; the {' and '.join(rr.unsaved)} tier saves nothing within the run (its interval is "
                           f"longer), so the {', '.join(more)} failures it recovers restart it too" if rr.unsaved and more
                           else "")
            run_txt = (f"{unsaved_txt}; for a run of this length ({_g(work_d)} d of compute) the same model, with each "
                       f"such failure restarting the run, gives about {days_txt} "
                       f"(e^(Σ λ_c·R_c)·(e^(Λ·T) − 1)/Λ, "
                       f"Λ = {_g(rr.lam_h)}/h, T the run's time apart from those failures"
                       + ("" if rr.exact else
                          ", taken at its mean: an upper estimate, within 1 % of the Monte Carlo at catalogue failure "
                          "rates, above it by up to 16 % (measured) where the other failures' recoveries fill much of "
                          "the run")
                       + f"){_days_bill(row, fin, clause=True)}; {sim_txt}")
        else:
            run_txt = (" (a run much shorter than the time between such failures can still finish: "
                       "planner.simulate shows how often)")
        return ("goodput is 0: no enabled checkpoint tier survives a failure of class "
                + ", ".join(lost) + " (" + ", ".join(f"{_g(lam_h[FAILURE_CLASSES.index(c)])}/h" for c in lost)
                + "), so each such failure restarts training from the beginning; the analytic model "
                "counts that as no progress in the steady state" + run_txt + ". Enable a tier that survives "
                + ("it " if len(lost) == 1 else "them ")
                + _survivor_advice(lost, row) + ".")
    lr = float(np.ravel(_res["log_recovery_factor"])[0])
    llw = float(np.ravel(_res["log_lost_work_factor"])[0])
    return (f"goodput is 0: with failures every {_g(60.0 / lam) if lam > 0 else 'inf'} min (λ = {_g(lam)}/h) "
            f"and recoveries of up to {_g(float(R.max()) / 60.0)} min (restart + repair + reload), which "
            f"failures during them extend, 1/goodput = (1 + Σ stall/τ) × e^{lr:.4g} (recoveries) × e^{llw:.4g} "
            "(work lost since the last saves) is beyond the float range: the run does not finish in "
            "practice. Shorten the restart / repair (hot spares), save more often, or lower the failure rate.")


#: An async tier's lag factors (log e^{Λ·L} + the missed-save factor) below this are not listed in
#: the goodput's explain (a host-memory copy to peers lags by milliseconds: 1e-6 of noise).
LAG_EXPLAIN_MIN = 1e-4


def _lag_terms(row: dict, tier, lam_h, min_log: float = LAG_EXPLAIN_MIN) -> list:
    """The async tiers whose save lag ``L_k = save − stall`` (:func:`save_lag_s`) costs at least
    ``min_log`` (log of the factor): dicts ``kind``, ``lam_k`` (Λ_k [1/h], the failures the tier
    recovers), ``lam_o`` (the others [1/h]), ``lag`` (L_k [s]), ``own`` (Λ_k·L_k), ``missed`` (log of
    the missed-save factor, :func:`_log_missed`), ``p`` (the chance that another failure stops a
    save in flight), ``x`` (Λ_k(τ_k + stall_k))."""
    if not row.get("ckpt_async"):
        return []
    lam_all = float(np.sum(lam_h))
    out = []
    for k, kind in enumerate(TIER_KINDS):
        iv = row.get(f"ckpt_{kind}_interval_opt_s")
        if iv is None or not np.isfinite(float(iv)):
            continue
        lk = float(sum(float(lam_h[c]) for c in range(len(FAILURE_CLASSES)) if tier[c] == k))
        stall = float(row.get(f"ckpt_{kind}_stall_s", 0.0) or 0.0)
        L = float(save_lag_s(float(row.get(f"ckpt_{kind}_save_s", 0.0) or 0.0), stall))
        if not (lk > 0.0 and L > 0.0):
            continue
        lo = max(lam_all - lk, 0.0)
        x = lk * (float(iv) + (stall if np.isfinite(stall) else 0.0)) / 3600.0
        own = lk * L / 3600.0
        missed = float(_log_missed(np.float64(lk), np.float64(lo), np.float64(L / 3600.0), np.float64(x)))
        if own + missed >= min_log:
            out.append({"kind": kind, "lam_k": lk, "lam_o": lo, "lag": L, "own": own, "missed": missed,
                        "p": float(-np.expm1(-lo * L / 3600.0)), "x": x})
    return out


def _exp_txt(y: float) -> str:
    """e^y as text: its value, or the exponent alone beyond the float range."""
    return f"{math.exp(y):.4g}" if y < 700.0 else f"e^{y:.6g} (beyond the float range)"


def _survivor_advice(lost: list, row: dict) -> str:
    """Which tiers would survive the failure classes ``lost`` (names), in words. Every catalogue
    tier survives a software or network failure (the node and its memory are kept); node-local
    copies with replicas survive a GPU or node loss, on a job of two nodes or more; a cluster-wide
    outage loses every node-local copy, replicated or not (hardware/storage.json). Review 24: the
    advice offered replicas for a cluster-class failure and to a one-node job, whose replicas are
    refused; review 41b: with no tier it said a software or network failure loses node-local copies."""
    node_loss = [c for c in lost if c in ck.NODE_LOSS_CLASSES]
    kept = [c for c in lost if c in ("software", "network")]
    wide = [c for c in lost if c not in ck.NODE_LOSS_CLASSES and c not in kept]
    try:
        multi = float(row.get("n_nodes", 2) or 1) > 1
    except (TypeError, ValueError):
        multi = True
    parts = []
    if kept:
        parts.append(f"any tier survives a {' or '.join(kept)} failure, host memory too")
    if node_loss and not wide:
        parts.append(f"a {' or '.join(node_loss)} failure needs "
                     + ("the parallel file system, or node-local copies with replicas" if multi else
                        "the parallel file system or the object store (node-local copies with replicas need a "
                        "second node, and this job has one)"))
    if wide:
        parts.append(f"a {' or '.join(node_loss + wide)} failure needs the parallel file system or the object store"
                     + ((": a cluster failure loses every node-local copy, replicated or not" if node_loss else
                         " (it loses every node-local copy, replicated or not)") if "cluster" in wide else ""))
    return "(" + "; ".join(parts) + ")"


def explain(row: dict) -> dict[str, str]:
    """Formula strings with the numbers of one scenario plugged in."""
    e: dict[str, str] = {}
    terms = []
    for fc in FAILURE_CLASSES:
        lam = row.get(f"failure_rate_{fc}_per_h", 0.0)
        if lam:
            terms.append(f"{fc} {_g(lam)}")
    scale = float(row["rate_scale"]) if row.get("rate_scale") is not None else 1.0
    scaled = "" if scale == 1.0 else f" × rate_scale {_g(scale)}"  # found by review: the scale was applied unsaid
    e["failure_rate_per_h"] = (
        f"Σ_c (r_gpu·n_gpus + r_node·n_nodes + r_job){scaled} = " + " + ".join(terms or ["0"])
        + f" = {_g(row['failure_rate_per_h'])} /h"
    )
    e["mtbf_h"] = f"1/λ = 1/{_g(row['failure_rate_per_h'])} = {_g(row['mtbf_h'])} h"
    e["ckpt_bytes"] = (
        f"{float(ck.ckpt_bytes_per_param(row.get('precision'))):g} B/param × {_g(row['params_total'])} params = "
        f"{_g(row['ckpt_bytes'])} B = {row['ckpt_bytes'] / 2**30:,.1f} GiB"
    )
    G = row["goodput"]
    fo, fl, fr = row["ckpt_overhead_frac"], row["lost_work_frac"], row["restart_frac"]
    e["goodput"] = (f"renewal model: 1 − overhead {_g(fo)} − lost work {_g(fl)} − restart {_g(fr)} "
                    f"= {_g(G)}")
    try:
        res, tier, lam_h, _R = _row_model(row)
    except (KeyError, ValueError, TypeError):
        res = None
    if res is not None:
        ov1, lw1, rs1 = (res["ckpt_overhead_frac_first_order"], res["lost_work_frac_first_order"],
                         res["restart_frac_first_order"])
        with np.errstate(over="ignore"):  # inf for a run that never finishes (goodput 0): shown as inf
            rec_f = np.exp(res["log_recovery_factor"])
            phi_f = np.exp(res["log_lost_work_factor"])
        lr = float(np.ravel(res["log_recovery_factor"])[0])
        lw = float(np.ravel(res["log_wall_per_work"])[0])
        # a factor beyond the float range is shown by its exponent (e^710 for a 710 h recovery at
        # λ = 1/h), never as inf beside a goodput above 0
        rec_txt = f"{float(rec_f):.6g}" if np.isfinite(rec_f) else f"e^{lr:.6g}"
        llw = float(np.ravel(res["log_lost_work_factor"])[0])
        phi_txt = (f"{float(phi_f):.6g}" if np.isfinite(phi_f) else f"e^{llw:.6g}" if np.isfinite(llw)
                   else "inf (a failure class no enabled tier survives)")
        inv_txt = (_g(1.0 / G) if G > 0 and np.isfinite(1.0 / G) else f"e^{lw:.6g}" if np.isfinite(lw) else "inf")
        lags = _lag_terms(row, tier, lam_h)
        lag_f = ("e^(Λ_k·L_k)·M_k·" if lags else "")
        lag_txt = ("; async saves are durable L_k = save − stall after their stall ends: a failure tier k recovers "
                   "before that rolls back one save further (e^(Λ_k·L_k)), one another tier recovers skips the "
                   "save (M_k = (1 − p·e^(−Λ_k(τ_k+stall_k)))/(1 − p), p = 1 − e^(−λ_other·L_k)): " + ", ".join(
                       f"{t['kind']} L = {_g(t['lag'])} s, Λ·L = {_g(t['own'])}, p = {_g(t['p'])}, "
                       f"M = {_exp_txt(t['missed'])}" for t in lags)
                   if lags else "")
        e["goodput"] = (
            "renewal model (Daly 2006, tiers grouped): 1/G = (1 + Σ stall/τ) · e^(Σ_c λ_c(R_c+reload_c))"
            f" · Π_k {lag_f}φ(Λ_k(τ_k+stall_k)) = {1.0 + ov1:.6g} × {rec_txt} × {phi_txt}"
            f" = {inv_txt} → goodput {_g(G)}{lag_txt}"
        )
        # the first-order lost work counts every async tier's lag, also one too small for the
        # explanation above (found by a fresh-user check: "Σ_c λ_c·τ_c/2 0.0003404" where λτ/2 is
        # 0.0003364 and the 4.0e-6 is Λ·L of the GB200 preset's PFS)
        lw1_lbl = ("(Σ_c λ_c·τ_c/2 + Σ_k Λ_k·L_k)" if lags or _lag_terms(row, tier, lam_h, min_log=0.0)
                   else "Σ_c λ_c·τ_c/2")
        share = ("share of the loss 1 − G = {:.4g} in proportion to the renewal factors "
                 "log(1 + Σ stall/τ) : Σ log φ{} : log recovery").format(
                     1.0 - G, " (+ Σ_k (Λ_k·L_k + log M_k), async)" if lags else "")
        e["ckpt_overhead_frac"] = f"{share} → overhead {_g(fo)} (first order Σ stall/τ = {_g(ov1)})"
        e["lost_work_frac"] = f"{share} → lost work {_g(fl)} (first order {lw1_lbl} = {_g(lw1)})"
        e["restart_frac"] = (f"{share} → restart + repair + reload {_g(fr)} "
                             f"(first order Σ_c λ_c(R_c + reload_c) = {_g(rs1)})" + _reload_text(row, tier))
        raw = 1.0 - ov1 - lw1 - rs1
        e["goodput_first_order"] = (
            f"1 − Σ stall/τ {_g(ov1)} − {lw1_lbl} {_g(lw1)} − Σ_c λ_c(R_c + reload_c) {_g(rs1)}"
            f" = {_g(raw)}"
            # the value once where nothing is clipped (review 24: "= 0.9351 = 0.9351")
            + ("" if 0.0 <= raw <= 1.0 else f" → clipped to [0, 1] = {_g(row['goodput_first_order'])}")
            + " (the first-order terms of docs/reliability.md, 'Goodput and intervals'; valid only where λ·τ and λ·R ≪ 1)"
        )
        dead = _zero_everywhere_text(res, tier, lam_h)
        for k, kind in enumerate(TIER_KINDS):
            iv = row.get(f"ckpt_{kind}_interval_opt_s", np.nan)
            if iv is None or np.isnan(iv):
                continue
            rec = [fc for c, fc in enumerate(FAILURE_CLASSES) if tier[c] == k and lam_h[c] > 0]
            giv = float(row.get(f"ckpt_{kind}_interval_s", np.nan))
            given = not np.isnan(giv)
            how = "given" if given else "chosen to maximise the renewal goodput"
            # the shortest interval the engine saves at (interval_floor_s, as the stage clips to it;
            # review 40c D6: its 1 s was unsaid where a step is shorter)
            step_s = float(row.get("step_time_s", np.nan) or np.nan)
            floor_s, floor_what = _row_interval_floor(row, k)
            if given and iv > giv * (1.0 + 1e-12):
                how = f"given {_g(giv)} s, raised to the shortest the job can save at: {floor_what}"
            # the optimum held at that floor (review 40a D3: 405B on 131,072 GPUs saved host memory every
            # step, 7 s, explained as a free optimum where Young's √(2δ/Λ) is 3.1 s)
            if not given and iv <= floor_s * (1.0 + 1e-9):
                how += (f", held at the shortest interval the job can save at ({floor_what}): the optimum "
                        "without that floor is shorter")
            if dead and not given:  # review 16a: the headline and the grid reference now agree here
                how = (f"the goodput is 0 at every interval ({dead}), so the interval is chosen to maximise "
                       "the rest of the renewal model (the failures the enabled tiers survive; recoveries "
                       "taken as ending)")
            if dead and not given and is_never_saved(iv):
                e[f"ckpt_{kind}_interval_opt_s"] = (
                    f"{format_interval_s(iv)}: the goodput is 0 at every interval ({dead}), and "
                    "at the intervals that maximise the rest of the model (the failures the enabled tiers "
                    "survive) this tier would recover no failure class that a tier saved more often does "
                    "not, so its saves would only stall")
            elif is_never_saved(iv) and given:  # the user's own interval (found by review: explained as the optimum's)
                e[f"ckpt_{kind}_interval_opt_s"] = (
                    f"every {_g(iv)} s (given): never, in effect; "
                    + (f"it is still the tier that recovers {', '.join(rec)}, from a save that far back"
                       if rec else "it recovers no failure class"))
            elif is_never_saved(iv) and not any(lam_h[c] > 0 for c in range(len(FAILURE_CLASSES))):
                e[f"ckpt_{kind}_interval_opt_s"] = (
                    f"{format_interval_s(iv)}: no failures are expected (failure rate 0), so no save pays for "
                    "its stall")
            elif is_never_saved(iv):
                e[f"ckpt_{kind}_interval_opt_s"] = (
                    f"{format_interval_s(iv)}: at the optimum this tier would recover no failure class "
                    "(a tier saved more often survives all it does), so its saves would only stall")
            else:
                # in steps too: frameworks take the interval in steps (Megatron-LM --save-interval,
                # TorchTitan [checkpoint] interval; review 40a D4), a save lands on a step's end
                n_st = iv / step_s if np.isfinite(step_s) and step_s > 0 else np.nan
                k_st = max(1, round(n_st)) if np.isfinite(n_st) else 0
                n_txt = "" if not np.isfinite(n_st) else f"{n_st:,.3g}" if n_st < 1000 else f"{n_st:,.0f}"
                steps_txt = f"; {n_txt} step{'' if n_txt == '1' else 's'} of {_g(step_s)} s" if n_txt else ""
                if steps_txt:
                    steps_txt += (", so every step in a framework that saves on step ends" if k_st == 1 else
                                  f", so every {k_st:,} steps in a framework that saves on step ends")
                e[f"ckpt_{kind}_interval_opt_s"] = (
                    f"{format_interval_s(iv)} ({how}{steps_txt}); recovers "
                    + (", ".join(rec) if rec else "no failure class")
                )
        for kind in TIER_KINDS:
            if row.get(f"ckpt_{kind}_enabled") and f"ckpt_{kind}_save_s" in row:
                e.update(_tier_time_text(row, kind))
        e.update(_host_mem_text(row))
        tm = row.get("ckpt_interval_s", np.nan)
        kinds = [kind for kind in TIER_KINDS if row.get(f"ckpt_{kind}_interval_opt_s", np.nan) == tm]
        e["ckpt_interval_s"] = (f"most frequent enabled tier ({', '.join(kinds) or 'none'}): "
                                f"{format_interval_s(tm)}")
    else:
        e["ckpt_interval_s"] = f"most frequent enabled tier: {format_interval_s(row['ckpt_interval_s'])}"
    return e



def _reload_text(row: dict, tier) -> str:
    """Each failure class's reload time from the tier that recovers it (found by a fresh-user check:
    reload showed only inside Σ λ(R + reload), so the ZeRO-0 network fetch could not be seen):
    "; reload_c: software, network from host_memory 0.0714 s; ..." ("" where it cannot be told)."""
    try:
        tt = _row_tier_times(row)
    except (KeyError, ValueError, TypeError):
        return ""
    groups: dict = {}
    for c, fc in enumerate(FAILURE_CLASSES):
        k = int(tier[c])
        if k < 0 or not float(row.get(f"failure_rate_{fc}_per_h", 0.0) or 0.0) > 0.0:
            continue
        groups.setdefault((k, float(tt["reload_s"][0, k, c])), []).append(fc)
    if not groups:
        return ""
    def fetched(k: int) -> bool:  # the row's own ZeRO-0 fetch (ck.node_local_fetch), not a generic remark
        kind = TIER_KINDS[k]
        if kind not in ck.NODE_LOCAL_TIERS:
            return False
        ngpu, gpn = float(row["n_gpus"]), float(row["gpus_per_node"])
        nw = float(np.ravel(ck.ckpt_layout(1.0, ngpu, gpn, float(row["dp"]), int(row["zero_stage"]),
                                           float(row.get("ep", 1) or 1))["n_writers"])[0])
        rep = ck.peer_replicas(float(row.get(f"ckpt_{kind}_replicas", 0) or 0), float(row["n_nodes"]))
        return bool(ck.node_local_fetch(nw, ngpu, float(row.get("pp", 1) or 1), gpn, float(row["n_nodes"]), rep))

    return ("; reload_c, the slowest of host copy, node read, aggregate read and any network fetch: "
            + "; ".join(f"{', '.join(fcs)} from {TIER_KINDS[k]} {_g(r)} s"
                        + (" (fetched over the network: ZeRO-0, the pipeline stage spans nodes without its copy)"
                           if fetched(k) else "")
                        for (k, r), fcs in groups.items()))


def _host_mem_text(row: dict) -> dict[str, str]:
    """The host memory the checkpoints hold per node, as formulas with the row's numbers
    (:func:`ckpt_host_mem_per_node`): the host-memory tier's copies and the async staging buffers
    (review 16a). Empty where the row lacks the columns."""
    try:
        total = float(row["ckpt_host_mem_per_node_bytes"])
        stg = float(row.get("ckpt_async_staging_per_node_bytes", 0.0) or 0.0)
        shard = float(row["ckpt_shard_bytes"])
        writers = float(row["ckpt_bytes"]) / shard if shard > 0 else 0.0
        gpn = float(row["gpus_per_node"])
    except (KeyError, TypeError, ValueError):
        return {}
    node_b = min(gpn, writers) * shard
    gb = 1e9

    def saved(kind: str) -> bool:
        iv = row.get(f"ckpt_{kind}_interval_opt_s")
        return bool(row.get(f"ckpt_{kind}_enabled")) and iv is not None and np.isfinite(float(iv)) \
            and not is_never_saved(float(iv))

    share = (f"node share {_g(node_b / gb)} GB (min({gpn:g} GPUs, {writers:g} writer{'' if writers == 1 else 's'}) × shard "
             f"{_g(shard / gb)} GB)")
    stage_tiers = [k for k in TIER_KINDS if k != "host_memory" and saved(k)]
    if row.get("ckpt_async") and stage_tiers:
        t_stg = (f"async: each save first copies the {share} into a host buffer and writes the tier from it "
                 "(PyTorch DCP async_save; Megatron-LM / NeMo FileSystemWriterAsync); one buffer per saved tier "
                 f"other than host memory ({', '.join(stage_tiers)}): {len(stage_tiers)} × {_g(node_b / gb)} GB "
                 f"= {_g(stg / gb)} GB per node")
    elif row.get("ckpt_async"):
        t_stg = "async, but no tier other than host memory is saved: no staging buffer, 0 B"
    else:
        t_stg = "synchronous saves write from GPU memory: no staging buffer, 0 B"
    hm = total - stg
    if saved("host_memory"):
        rep = float(ck.peer_replicas(float(row.get("ckpt_host_memory_replicas", 0) or 0),
                                     float(row.get("n_nodes", 1) or 1)))
        t_hm = f"host-memory tier: {share} × (1 + {rep:g} peer cop{'y' if rep == 1 else 'ies'}) = {_g(hm / gb)} GB"
    else:
        t_hm = ("host-memory tier: " + ("not saved (never), no copy" if row.get("ckpt_host_memory_enabled")
                                        else "disabled") + ", 0 B")
    return {
        "ckpt_async_staging_per_node_bytes": t_stg,
        "ckpt_host_mem_per_node_bytes": (f"{t_hm} + async staging {_g(stg / gb)} GB = {_g(total / gb)} GB = "
                                         f"{total / 2**30:,.2f} GiB per node (GB = 10⁹ B, GiB = 2³⁰ B); "
                                         "host_fits_ckpt adds the offloaded states and compares with the "
                                         "node's host memory"),
    }


def _tier_time_text(row: dict, kind: str) -> dict[str, str]:
    """The save and stall of one enabled tier as formulas with the row's numbers (found by review
    15a: ``ckpt_{tier}_save_s`` / ``_stall_s`` had no explanation and were shown nowhere). The same
    terms as :func:`planner.checkpoint.ckpt_save_time`, evaluated on this row's inputs."""
    gpn, ngpu = float(row["gpus_per_node"]), float(row["n_gpus"])
    lay = ck.ckpt_layout(np.array([float(row["ckpt_bytes"])]), ngpu, gpn, float(row["dp"]),
                         int(row["zero_stage"]), float(row.get("ep", 1) or 1))
    shard, node_b, total = float(lay["shard_bytes"][0]), float(lay["node_bytes"][0]), float(row["ckpt_bytes"])
    writers = node_b / shard
    link, dram = float(row["host_link_bw_bytes_per_s"]), float(row["host_memory_bw_bytes_per_s"])
    hbw = float(ck.host_copy_bw(link, dram, writers))
    wbw = float(row[f"ckpt_{kind}_write_bw_per_node_bytes_per_s"])
    abw = float(row[f"ckpt_{kind}_agg_write_bw_bytes_per_s"])
    d2h = shard / hbw if np.isfinite(hbw) else 0.0
    eff_h = float(ck.link_eff()["host"])
    terms = [f"shard {_g(shard / 1e9)} GB / host copy {_g(hbw / 1e9)} GB/s (min(link {_g(link / 1e9)} × {eff_h:g} "
             f"achieved, DRAM "
             f"{_g(dram / 1e9)} / {writers:g} GPU{'s' if writers != 1 else ''})) = {_g(d2h)} s",
             f"node share {_g(node_b / 1e9)} GB / write {_g(wbw / 1e9)} GB/s per node = {_g(node_b / wbw)} s"]
    if kind in ck.NODE_LOCAL_TIERS:
        rep = float(ck.peer_replicas(float(row.get(f"ckpt_{kind}_replicas", 0) or 0), float(row["n_nodes"])))
        if rep > 0:
            terms[1] = (f"node share {_g(node_b / 1e9)} GB × (1 + {rep:g} peer cop{'ies' if rep != 1 else 'y'} "
                        f"received) / write {_g(wbw / 1e9)} GB/s per node = {_g((1 + rep) * node_b / wbw)} s")
            eff_n = float(ck.link_eff()["network"])
            net = float(row["nic_bw_per_gpu_bytes_per_s"]) * gpn * eff_n
            terms.append(f"{rep:g} peer cop{'ies' if rep != 1 else 'y'} × {_g(node_b / 1e9)} GB / network "
                         f"{_g(net / 1e9)} GB/s per node ({gpn:g} GPUs × NIC × {eff_n:g} achieved) "
                         f"= {_g(rep * node_b / net)} s")
    if np.isfinite(abw):
        terms.append(f"whole checkpoint {_g(total / 1e9)} GB / aggregate {_g(abw / 1e9)} GB/s = {_g(total / abw)} s")
    save, stall = float(row[f"ckpt_{kind}_save_s"]), float(row[f"ckpt_{kind}_stall_s"])
    out = {f"ckpt_{kind}_save_s": "max(" + "; ".join(terms) + f") = {_g(save)} s (GB = 10⁹ B)"}
    if row.get("ckpt_async"):
        frac = float(row["ckpt_async_interference_frac"])
        out[f"ckpt_{kind}_stall_s"] = (f"async: device-to-host copy {_g(d2h)} s + interference {frac:g} × the drain "
                                       f"({_g(save)} − {_g(d2h)} s) = {_g(stall)} s per save")
    else:
        out[f"ckpt_{kind}_stall_s"] = f"synchronous: training waits for the whole save = {_g(stall)} s per save"
    return out


def spare_shortage_probability(nodes_in_repair: float, spares: int) -> float:
    """Probability that a node failure finds no hot spare free: ``P(N ≥ spares)`` for the number
    of nodes in repair ``N ~ Poisson(a)``, ``a`` = (repair-class failure rate) × (repair time)
    (an M/G/∞ queue: Little's law gives the mean, the count is Poisson for Poisson arrivals;
    Kleinrock, Queueing Systems Vol. 1, §3.6 / Takács). 1 with no spares. Scalar, one row."""
    a, s = float(nodes_in_repair), int(spares)
    if s <= 0 or a == math.inf:
        return 1.0
    if not a > 0.0:  # 0, or NaN (unknown: no note)
        return 0.0
    # In logs: log P(N = k) = −a + k·log a − log k!. Summing from e^(−a) up, as until 2026-12-01,
    # underflows for a > ~690 nodes in repair (e^(−a) < 1e-300 stopped the sum at once), so any
    # pool of spares read "probability 1" (found by review 17d: a = 1,000 with 2,000 spares, where
    # P < e^(−386)). Each sum starts at its largest term and stops once the terms are negligible
    # (they shrink at least geometrically away from the mode: ~9·sqrt(s) terms at most).
    def log_pmf(k: int) -> float:
        return -a + k * math.log(a) - math.lgamma(k + 1.0)

    if s - 1 <= a:  # P(N ≤ s − 1) from k = s − 1 down (its largest term): 1 − that, no cancellation
        k, r, tot = s - 1, 1.0, 1.0
        while k > 0:
            r *= k / a
            k -= 1
            tot += r
            if r < 1e-18 * tot:
                break
        return max(0.0, 1.0 - math.exp(log_pmf(s - 1)) * tot)
    k, r, tot = s, 1.0, 1.0  # the tail P(N ≥ s) from k = s up (its largest term)
    while True:
        k += 1
        r *= a / k
        tot += r
        if r < 1e-18 * tot:
            break
    return min(1.0, math.exp(log_pmf(s)) * tot)

def _short_run_note(row: dict) -> str | None:
    """The note for a run short against a recovering tier's interval: the headline time to train
    (steady state) is longer than the finite-run one (:func:`finite_run_days`) by more than
    ``FINITE_RUN_NOTE_REL``; None otherwise."""
    days = row.get("time_to_train_days")
    if days is None or np.isnan(float(days)):
        return None
    days = float(days)
    if np.isinf(days):  # goodput 0: zero_goodput_reason gives the finite-run figure
        return None
    # Cheap bound first (the model is not re-run for the usual long run): the last partial interval
    # lowers ρ_k by at most τ_k/W and the first interval's reload (finite_run_log_ratio's reload_x)
    # by at most (1 − e^{−y})(1 + e^{−x})/N <= 2τ_k/W (the interval is at least the async save, so
    # Λ·L <= x), so Π_k ρ_k >= 1 − 3·Σ_k τ_k/W over the tiers, and no note when 3·Σ_k τ_k/W <=
    # FINITE_RUN_NOTE_REL (review 44h: with the reload term a run of 100 async intervals was 1.9 %
    # shorter than its headline, and the bound τ_k/W skipped the note). A tier at the "never" interval counts where it is the only tier that
    # survives a failing class (found by review: the PFS at 1e8 s beside host memory, Λ_k > 0 and
    # ρ_k ≪ 1: a 2-day run showed 62,183 days and no note, while 9.9e7 s had one); else it recovers
    # nothing and has ρ_k = 1.
    def sole_survivor(kind: str) -> bool:
        # a never-saved tier matters only as the one saved-or-not tier that survives some failing
        # class (no other enabled tier saved in effect survives it)
        def saved(o: str) -> bool:
            iv = row.get(f"ckpt_{o}_interval_opt_s")
            return bool(row.get(f"ckpt_{o}_enabled")) and iv is not None and np.isfinite(float(iv)) \
                and not is_never_saved(float(iv))
        return any(float(row.get(f"failure_rate_{c}_per_h", 0.0) or 0.0) > 0.0
                   and row.get(f"ckpt_{kind}_survives_{c}")
                   and not any(saved(o) and row.get(f"ckpt_{o}_survives_{c}") for o in TIER_KINDS if o != kind)
                   for c in FAILURE_CLASSES)

    try:
        work = float(row["tokens_total"]) / float(row["tokens_per_s"])
        taus = [float(row[f"ckpt_{kind}_interval_opt_s"]) for kind in TIER_KINDS
                if row.get(f"ckpt_{kind}_interval_opt_s") is not None
                and (not is_never_saved(float(row[f"ckpt_{kind}_interval_opt_s"])) or sole_survivor(kind))]
    except (KeyError, ValueError, TypeError, ZeroDivisionError):
        return None
    taus = [t for t in taus if np.isfinite(t) and t > 0]
    if np.isfinite(work) and work > 0 and 3.0 * sum(taus) / work <= FINITE_RUN_NOTE_REL:
        return None
    fin, per_tier, work, tau, lam_k = _finite_run(row)
    if not np.isfinite(fin) or not fin < days * (1.0 - FINITE_RUN_NOTE_REL):
        return None
    k = int(np.argmin(per_tier))
    kind = TIER_KINDS[k]
    others = [TIER_KINDS[j] for j in range(len(TIER_KINDS)) if j != k and lam_k[j] > 0]
    rr = _restart_run(row)
    try:
        _res, tier, lam_h, _R = _row_model(row)
        y = _first_reload_x(row, tier, lam_h)
    except (KeyError, ValueError, TypeError, ZeroDivisionError):
        y = np.zeros(len(TIER_KINDS))
    # which of the steady state's two charges a finite run does not pay (review 44h: a run of exactly
    # 10 intervals, no partial one, was told its gap came from the partial interval)
    whole = abs(work / tau[k] - round(work / tau[k])) < 1e-9
    # each clause a charge of its own (review 47e: "… nothing to reload and the stall …" read as one)
    why_parts = []
    if not whole and lam_k[k] > 0:  # with Λ_k = 0 the steady state charges no lost work to that interval
        why_parts.append("charges the run's last, partial interval as a whole one")
    # the first interval's reload lowers the figure by about (1 − e^{−y_k})/N_k: named where that is at
    # least half the note's threshold
    if -np.expm1(-float(y[k])) * tau[k] / work >= 0.5 * FINITE_RUN_NOTE_REL:
        why_parts.append("charges a checkpoint reload to the failures before a tier's first save, which have "
                         "nothing to reload")
    # the stalls: the steady state charges W/τ of them, the run takes ⌈W/τ⌉ − 1 (none at its end; review
    # 47a, 47e); a tier at the "never" interval has none charged (is_never_saved)
    st_k = float(row.get(f"ckpt_{kind}_stall_s", 0.0) or 0.0)
    if np.isfinite(st_k) and st_k > 0 and not is_never_saved(tau[k]):
        n_k, taken = work / tau[k], float(saves_started(work, tau[k]))
        if taken == 0:
            why_parts.append(f"charges the stall of its saves ({_g(st_k)} s each), none of which the run reaches")
        elif (n_k - taken) * st_k / work >= 0.5 * FINITE_RUN_NOTE_REL:
            why_parts.append(f"charges {_g(n_k)} saves' stall ({_g(st_k)} s each) where the run takes "
                             f"{int(taken):,}, none at its end")
    why = (", ".join(why_parts[:-1]) + " and " + why_parts[-1]) if len(why_parts) > 1 else "".join(why_parts)
    if not why:
        why = "charges every interval as one of an endless run"
    return (f"The run is short against the {kind} checkpoint interval ({format_interval_s(tau[k])}; the run is "
            f"{_g(work / tau[k])} such intervals of compute): the analytic time to train, {_g(days)} d, is the renewal "
            f"model's steady-state rate, which {why}; the same "
            f"model for a run of this length (Daly's, finite run) gives about {_g(fin)} d"
            + _finite_run_bill(row, fin / days)
            # a tier that saves nothing within the run: its failures restart it (review 45d: the grouped
            # figure and the sentence below were used where the PFS every 1e6 s never saved in a 2-day run)
            + (f". The {' and '.join(rr.unsaved)} tier saves nothing within the run (its interval is longer), so "
               f"each {' or '.join(rr.restart)} failure restarts it from the beginning: e^(Σλ·R)·(e^(Λ·T) − 1)/Λ "
               "(Daly 2006 eq. 5, one segment, no save), "
               + ("exact" if rr.exact else "T the rest of the run at its mean, a little above the exact figure")
               if rr is not None and rr.unsaved else "")
            # found by review: 3.88 d against a Monte Carlo 4.22 d (host memory every 2 h, PFS every
            # 1e6 s, 10x the failure rate), 50 d for a run the Monte Carlo never finishes (100x)
            + (f". The {', '.join(others)} tier{'s' if len(others) > 1 else ''} recover{'' if len(others) > 1 else 's'} "
               f"the other failures, and their recoveries lengthen the time the run is exposed to the failures "
               f"only the {kind} tier recovers, which the grouping by tier leaves out: with frequent failures "
               "that figure is low, by orders of magnitude where those recoveries take most of the run"
               if others and rr is None else "")
            + ". The Monte Carlo (planner.simulate, the Plan page) simulates the run as it is.")


def _days_bill(row: dict, days: float, clause: bool = False) -> str:
    """The GPU-hours, cost and energy of ``days`` of wall time (cost.bill), for a goodput-0 scenario
    whose headlines are inf (so :func:`_finite_run_bill`'s ratio cannot be used); empty where the row
    lacks the cost inputs or the figure is not finite. Found by review 48b: the goodput-0 note gave a
    finite run's days but no analytic surface gave its cost."""
    from . import cost

    keys = ("n_gpus", "gpus_per_node", "price_per_gpu_hour_usd", "node_power_w", "utilisation_power_frac", "pue")
    if not np.isfinite(days) or any(row.get(k) is None for k in keys):
        return ""
    b = {k: np.asarray([float(row[k])]) for k in keys + ("hot_spare_nodes", "power_limit_w", "tdp_w") if row.get(k) is not None}
    try:
        _w, gh, usd, mwh = (float(x[0]) for x in cost.bill(b, np.asarray([days * 86_400.0])))
    except (KeyError, ValueError, TypeError):
        return ""
    if not (np.isfinite(gh) and np.isfinite(usd) and np.isfinite(mwh)):
        return ""
    if clause:  # after a parenthesis of its own: a clause, not a second parenthesis
        return f"; at that length, the wall time times a rate, about {_g(gh)} GPU-h, {_g(usd)} USD and {_g(mwh)} MWh"
    return f" (and, the wall time times a rate, about {_g(gh)} GPU-h, {_g(usd)} USD and {_g(mwh)} MWh)"


def _finite_run_bill(row: dict, ratio: float) -> str:
    """The GPU-hours, cost and energy at the finite-run length: the headline's × ``ratio``, as all
    three are the wall time times a rate (:mod:`planner.cost`); empty where the row has no cost
    columns. Found by review 26 (h26c): the note corrected the days but not the bill, 18 % too high
    on GPT-3 175B with a daily PFS save and a 5.8-day run."""
    vals = [row.get(k) for k in ("gpu_hours", "cost_usd", "energy_mwh")]
    if any(v is None or not np.isfinite(float(v)) for v in vals) or not np.isfinite(ratio):
        return ""
    gh, usd, mwh = (float(v) * ratio for v in vals)
    # USD, not "$": the Plan page renders notes as markdown (review 16c)
    return (f" (and, the wall time times a rate, about {_g(gh)} GPU-h, {_g(usd)} USD and {_g(mwh)} MWh, "
            f"where the headline gives {_g(float(vals[0]))} GPU-h, {_g(float(vals[1]))} USD and "
            f"{_g(float(vals[2]))} MWh)")


def _async_older_note(row: dict) -> str | None:
    """A note where the tier the model restores a failure class from (the one saved most often)
    holds, with its async save lag, an older durable save on average than another enabled tier
    that survives the class: ``(τ_k + stall_k)/2 + L_k`` against ``(τ_j + stall_j)/2 + L_j``. The
    renewal model (and its interval solver) picks the tier by interval; the Monte Carlo restores
    from the newest durable save (review 22: host memory given 3,600 s beside a 3 GB/s PFS at its
    1,894 s floor, analytic 0.7144 against the Monte Carlo's 0.7300). None where none is."""
    if not row.get("ckpt_async") or _max_lag_rate(row) <= 0.005:
        return None
    try:
        _res, tier_of, lam_c, _R = _row_model(row)
        tt = _row_tier_times(row)
    except (KeyError, ValueError, TypeError):
        return None

    def age(k):
        kind = TIER_KINDS[k]
        iv = row.get(f"ckpt_{kind}_interval_opt_s")
        if iv is None or not np.isfinite(float(iv)) or is_never_saved(float(iv)) or not tt["enabled"][0, k]:
            return np.inf
        stall = float(tt["stall_s"][0, k])
        return (float(iv) + stall) / 2.0 + float(save_lag_s(float(tt["save_s"][0, k]), stall))

    for c, fc in enumerate(FAILURE_CLASSES):
        k = int(tier_of[c])
        if k < 0 or not lam_c[c] > 0:
            continue
        a_k = age(k)
        better = [(age(j), j) for j in range(len(TIER_KINDS)) if j != k and tt["survives"][0, j, c]]
        better = [(a, j) for a, j in better if a < a_k * (1.0 - 1e-6)]
        if not better:
            continue
        a_j, j = min(better)
        cls = [f for cc, f in enumerate(FAILURE_CLASSES) if int(tier_of[cc]) == k and lam_c[cc] > 0
               and tt["survives"][0, j, cc]]
        lag_k = float(save_lag_s(float(tt["save_s"][0, k]), float(tt["stall_s"][0, k])))
        return (f"The {TIER_KINDS[k]} tier is saved more often than the {TIER_KINDS[j]} tier, so the goodput restores "
                f"the {', '.join(cls)} failures from it; but its async saves are durable only {_g(lag_k)} s after "
                f"their stall, so its newest durable save is on average {_g(a_k)} s old against {_g(a_j)} s for the "
                f"{TIER_KINDS[j]} tier, which survives them too. The goodput can be off by a point or more here "
                "(the model restores from the tier saved most often, a stated simplification); the Monte Carlo "
                "(planner.simulate, the Plan page) restores from the newest durable save.")
    return None


def _max_lag_rate(row: dict) -> float:
    """λ·max_k L_k over the saved tiers (λ the whole failure rate, L_k = save − stall): from the
    row alone (no model call), a bound of both logs of an async tier's note, Λ_k·L_k and the
    missed-save factor (``log((1 − p·b)/(1 − p)) <= −log(1 − p) = λ_other·L_k``)."""
    rate_h = float(row.get("failure_rate_per_h", 0.0) or 0.0)
    lag = 0.0
    for kind in TIER_KINDS:
        iv = row.get(f"ckpt_{kind}_interval_opt_s")
        if iv is None or not np.isfinite(float(iv)) or is_never_saved(float(iv)):
            continue
        lag = max(lag, float(save_lag_s(float(row.get(f"ckpt_{kind}_save_s", 0.0) or 0.0),
                                        float(row.get(f"ckpt_{kind}_stall_s", 0.0) or 0.0))))
    return rate_h * lag / 3600.0


#: Goodput gap between the tier-grouped renewal model and its stretched-exposure estimate
#: (:func:`_grouping_departures`) above which the notes no longer say the headline tracks the
#: Monte Carlo; also the size of a redundant tier's possible effect that gets a note.
GROUPING_NOTE_GAP = 0.005
#: ... and the same gap relative to the headline, which the time to train reads (review 23: at a
#: goodput of 0.116, 0.0031 below it is 2.7 % more days, and "tracks the Monte Carlo" was said;
#: 2 % until review h30a: with 1 % and the recovery term "tracks" was said on 12 of 30 random two-tier
#: scenarios, each within 2.1 % of the Monte Carlo; with 2 % and without it on 19, up to 28.5 %).
GROUPING_NOTE_REL = 0.01


def _grouping_departures(row: dict) -> dict:
    """Where the renewal model's grouping of failure classes by recovery tier departs from the
    Monte Carlo, for :func:`notes` (found by review 17d). Keys:

    * ``recovering``: [(kind, τ_k [s], Λ_k [1/h])] of the tiers that recover some failing class.
    * ``stretched``: the headline with the first-order loss the grouping leaves out: a failure that
      tier k restores also strikes during the recoveries and redone work of the failures that tiers
      saved more often restore (their rollbacks keep progress beyond k's last save), losing that
      progress too, τ_k/2 on average: ``log(1/G) + Σ_k Λ_k·(τ_k/2)·T_k``, ``T_k = exp(log(1/E_k) +
      Σ_{j faster} log φ_j) − 1`` the wall time per unit of compute those groups add (E_k: the
      recovery factor of their classes alone). (A rollback to a tier saved less often keeps nothing
      beyond k's last save, so it adds nothing.) Plus ``recovery_extra``.
    * ``recovery_extra``: the first-order wall time per unit of up time that the grouping's recovery
      factor leaves out where a failure that a faster tier restores strikes during a recovery from a
      slower tier k: the rollback to k left the faster tier nothing newer, so it reloads from k as
      well (when k survives it): ``Σ_c λ_c Σ_c' λ_c' [g(S_c, R_c' + reload_k,c') − g(S_c, R_c' +
      reload_c')] / F``, ``S_c = R_c + reload_c``, ``g(S, x) = ∫_0^S max(S, s + x) ds`` (``S² + x²/2``
      for x < S, ``S·x + S²/2`` above), ``F = e^{Σ_c λ_c(R_c + reload_c)}``, c' over the classes a
      tier saved more often than k restores. Review h30a: with a PFS that reads at 3 GB/s beside
      host memory (Llama 3 405B preset, 3× the rates) 0.0236, which brings the estimate from 0.548
      to 0.535 against a Monte Carlo of 0.527 (the headline 0.548 had read "tracks").
    * ``redundant``: [(kind, τ_j, by_kind, τ_k, classes, gain, f, idle)] for saved tiers j that
      survive failing classes which a more frequent tier k restores in the model: the grouping
      credits tier j with nothing for them (``idle``: j restores no class at all, its stalls buy
      nothing) while the Monte Carlo restarts from whichever of the two saved last, so the headline
      is *low* there, by roughly ``gain = G·(φ_k^(f·λ_j/Λ_k) − 1)``, the share ``f =
      2·mean(r(τ_k − r))/(τ_jτ_k)`` of the lost work of the classes j survives (rate λ_j of tier k's
      Λ_k) that j's saves spare (r: their offsets after k's last save; τ_k/(3τ_j) when uniform): the PFS every 2,000 s + object store every 3,000 s on the default preset at
      10x, 0.0065 against a Monte Carlo 0.0046 (±0.001); the Llama 3 405B preset at 10x, 0.037
      against 0.032; the PFS every 46.2 h + object store every 85.2 h at 2.9x, 0.066 against 0.055.
      Listed where τ_j is not a whole multiple of τ_k (else the saves coincide) and the gain is above
      :data:`GROUPING_NOTE_GAP`.
    * ``estimate``: ``stretched`` + every pair's gain. Used only to decide whether the notes may say
      the headline tracks the Monte Carlo (and quoted where it does not). Measured (review 17d,
      Monte Carlo 400–4,000 runs): default preset + host memory every 600 s (1 peer copy) + PFS daily
      at 10 / 30x, 0.6473 / 0.2562 against 0.6462 / 0.2535 (grouped headline 0.6621 / 0.3281); host
      memory every 120 s + PFS every 200 s at 100x, 0.1663 against 0.1668 (grouped 0.1668); over 241
      random multi-tier scenarios the mean |error| 0.0021–0.0032 (grouped 0.0050–0.0085), off by more
      than 0.005 (and 4 standard errors) on 7 (grouped 29), by more than 0.01 on 3, each with the
      slowest recovering tier at 48–206 MTBFs and a run a few such intervals long (the slow-tier and
      short-run notes apply there). NaN if not computable.
    """
    none = {"recovering": [], "stretched": float("nan"), "redundant": [], "estimate": float("nan"), "recovery_extra": 0.0}
    saved = [k for k in TIER_KINDS if row.get(f"ckpt_{k}_enabled", True)
             and row.get(f"ckpt_{k}_interval_opt_s") is not None
             and np.isfinite(float(row[f"ckpt_{k}_interval_opt_s"]))
             and not is_never_saved(float(row[f"ckpt_{k}_interval_opt_s"]))]
    if len(saved) < 2:  # one saved tier: one group, nothing to depart from (and a quick exit)
        g = row.get("goodput")
        g = float(g) if g is not None else float("nan")
        return {**none, "stretched": g, "estimate": g}
    try:
        res, tier, lam_h, R = _row_model(row)
        tt = _row_tier_times(row)
    except (KeyError, ValueError, TypeError):
        return none
    g = float(res["goodput"])
    if not (np.isfinite(g) and g > 0.0):
        return none
    K, C = len(TIER_KINDS), len(FAILURE_CLASSES)
    lam = np.asarray(lam_h, dtype=float) / 3600.0
    tau = np.array([float(row.get(f"ckpt_{k}_interval_opt_s") if row.get(f"ckpt_{k}_interval_opt_s") is not None
                          else np.nan) for k in TIER_KINDS])
    stall = np.where(np.isfinite(tt["stall_s"][0]), tt["stall_s"][0], 0.0)
    failing = lam > 0
    lam_k = np.array([lam[(tier == k) & failing].sum() for k in range(K)])
    rec = [k for k in range(K) if lam_k[k] > 0]
    x = np.array([lam_k[k] * (tau[k] + stall[k]) if lam_k[k] > 0 else 0.0 for k in range(K)])
    log_phi = np.where(lam_k > 0, _log_phi(x), 0.0)
    reload = np.array([tt["reload_s"][0, tier[c], c] if tier[c] >= 0 else 0.0 for c in range(C)])
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        log_w = float(res["log_wall_per_work"])
        for k in rec:
            # the groups restored from tiers saved more often than k: their rollbacks keep progress
            # beyond k's last save, so k's failures during their recoveries and redone work lose it
            # too (τ_k/2 on average, first order). (A rollback to a tier saved less often keeps
            # nothing beyond k's last save: k's failures then lose nothing more.)
            faster = np.array([tier[c] >= 0 and tau[tier[c]] < tau[k] for c in range(C)])
            o = failing & (tier != k) & faster
            lo = float(lam[o].sum())
            if lo <= 0.0:
                continue
            e_o = float(np.sum(lam[o] / lo * np.exp(-lo * (R[o] + reload[o]))))
            fast = [j for j in rec if j != k and tau[j] < tau[k]]
            # the wall time per unit of compute those groups add: their recoveries and redone work
            t_o = np.expm1((-np.log(e_o) if e_o > 0 else np.inf) + float(np.sum(log_phi[fast])))
            log_w += lam_k[k] * tau[k] / 2.0 * t_o
        # A failure of a class that a tier saved more often restores, striking while the job recovers
        # from a slower tier k (restart, repair wait, reload): the rollback to k left the faster tier
        # with no save beyond k's, so it reloads from k too (when k survives it), and the recovery ends
        # at s + R_c' + reload_k,c' rather than at s + R_c' + reload_f,c' (the busy period of the
        # recovery factor, module docstring, with each failure's own tier). First order, per unit of
        # up time: Σ_c λ_c Σ_c' λ_c' ∫_0^S [max(S, s + A) − max(S, s + a)] ds / F, S = R_c + reload_c,
        # A and a the two ends' offsets, F = e^{Σ λ_c(R_c + reload_c)} (review h30a E1: Llama 3 405B,
        # host memory + a PFS read at 3 GB/s at 3× the rates: headline 0.548, Monte Carlo 0.527, and
        # the grouping's correction without this term 0.548: "tracks the Monte Carlo" was said).
        def _busy(S, x):  # ∫_0^S max(S, s + x) ds for x >= 0
            return S * x + S * S / 2.0 if x >= S else S * S + x * x / 2.0

        F = float(np.exp(np.sum(np.where(failing & (tier >= 0), lam * (R + reload), 0.0))))
        recovery_extra = 0.0
        for c in range(C):
            if not (failing[c] and tier[c] >= 0):
                continue
            k, S = tier[c], float(R[c] + reload[c])
            for c2 in range(C):
                if (failing[c2] and tier[c2] >= 0 and tau[tier[c2]] < tau[k] and tt["survives"][0, k, c2]
                        and np.isfinite(S)):
                    A = float(R[c2] + tt["reload_s"][0, k, c2])
                    recovery_extra += float(lam[c] * lam[c2]) * (_busy(S, A) - _busy(S, float(R[c2] + reload[c2])))
        recovery_extra /= F
        log_w += recovery_extra
        stretched = float(np.exp(-log_w)) if np.isfinite(log_w) else 0.0
    redundant, gains = [], []
    for j in range(K):
        if not (tt["enabled"][0, j] and np.isfinite(tau[j]) and not is_never_saved(tau[j])):
            continue
        for k in rec:
            cls = [FAILURE_CLASSES[c] for c in range(C) if failing[c] and tier[c] == k and tt["survives"][0, j, c]]
            m = tau[j] / tau[k]
            if not cls or abs(m - round(m)) <= 1e-9 * m:
                continue
            # A save of tier j at offset r after tier k's last one is the newest for the τ_k − r until
            # k saves again and spares those failures r of lost work: Λ_k·r(τ_k − r)/τ_j per unit time,
            # i.e. the fraction f = 2·mean(r(τ_k − r))/(τ_jτ_k) of the group's first-order lost work
            # Λ_kτ_k/2 (τ_k/(3τ_j) for offsets uniform in [0, τ_k)); the offsets r_m = m·τ_j mod τ_k
            # of the first 1,000 saves (PFS 2,000 s, object store 3,000 s: r = 1,000, 0, ...).
            r_off = np.mod(np.arange(1, 1001) * tau[j], tau[k])
            f = min(1.0, 2.0 * float(np.mean(r_off * (tau[k] - r_off))) / (tau[j] * tau[k]))
            # only the classes tier j survives: their share of the group's lost work (first order)
            share = float(sum(lam[FAILURE_CLASSES.index(fc)] for fc in cls)) / lam_k[k]
            with np.errstate(over="ignore"):
                gain = g * float(np.expm1(f * share * log_phi[k]))
            gains.append(gain)
            if gain > GROUPING_NOTE_GAP:
                redundant.append((TIER_KINDS[j], float(tau[j]), TIER_KINDS[k], float(tau[k]), cls, gain, f,
                                  bool(lam_k[j] == 0)))
    return {"recovering": [(TIER_KINDS[k], float(tau[k]), float(lam_k[k] * 3600.0)) for k in rec],
            "stretched": stretched, "redundant": redundant, "estimate": stretched + float(np.sum(gains)),
            "recovery_extra": recovery_extra}


def report(row: dict) -> tuple[dict[str, str], None, list[str]]:
    """(:func:`explain`, None, :func:`notes`) of one scenario's row (``planner.evaluate``'s path;
    None: this stage has no per-pipeline-stage table), computing the row's model and tier times
    once for both (the same values as the two calls; :data:`_ROW_MEMO`)."""
    token = _ROW_MEMO.set((row, {}))
    try:
        return explain(row), None, notes(row)
    finally:
        _ROW_MEMO.reset(token)


def _node_size_note(row: dict) -> str | None:
    """A note where the failure profile's per-node rates come from nodes of another size than the
    system's and the job's GPUs take another number of nodes than in the source fleet (review h30a
    C3: the 8-GPU fleets' rates were applied to 4-GPU GB200 trays unsaid). The rates stay per node
    as given; the note states the consequence, ``ceil(n/g)/ceil(n/g_ref)`` times the node failures
    of the same GPUs in the source fleet, and those classes' share of λ."""
    ref = float(row.get("fail_node_gpus", 0.0) or 0.0)
    gpn = float(row.get("gpus_per_node", 0.0) or 0.0)
    rate_all = float(row.get("failure_rate_per_h", 0.0) or 0.0)
    if ref <= 0.0 or gpn <= 0.0 or gpn == ref or rate_all <= 0.0:
        return None
    per_node = {fc: float(row.get(f"fail_{fc}_per_node_h", 0.0) or 0.0) for fc in FAILURE_CLASSES}
    per_node = {fc: v for fc, v in per_node.items() if v > 0.0}
    if not per_node:
        return None
    n_gpus = float(row.get("n_gpus", 0.0) or 0.0)
    n_nodes = float(row.get("n_nodes", 1.0) or 1.0)
    nodes_ref = max(math.ceil(n_gpus / ref - 1e-9), 1)  # the same GPUs on the source fleet's nodes
    if n_nodes == nodes_ref:  # e.g. a job within one node of either size: the same node count
        return None
    pct = 100.0 * sum(per_node.values()) * n_nodes / rate_all
    pct_txt = f"{pct:.0f}" if pct >= 9.5 else f"{pct:.2g}"  # (".2g" printed 99.6 % as "1e+02")
    return (f"The failure profile's per-node rates ({', '.join(per_node)}: {pct_txt} % of λ here) were measured "
            f"on {ref:g}-GPU nodes; this system has {gpn:g} GPUs per node and each node takes the rate as given, so "
            f"the job's {n_gpus:g} GPUs on {n_nodes:g} nodes count {n_nodes / nodes_ref:.3g}× the node failures of "
            f"the same GPUs on the source fleet's {nodes_ref:g}. Whether nodes of {gpn:g} GPUs fail as often as "
            f"nodes of {ref:g} is not known (an assumption, either way); reliability.rate_scale scales every "
            "class, or give a custom profile.")


def _fleet_family_note(row: dict) -> str | None:
    """A note where the failure profile was measured on another accelerator family than the
    system's (review 46a: the default H100 fleet's rates applied to an MI300X system unsaid). The
    rates are applied as given; no fleet figure per family is published for most parts."""
    from .batch import FAMILIES
    ref = int(row.get("fail_accel_family", -1.0) if row.get("fail_accel_family") is not None else -1)
    own = row.get("accel_family")
    if ref < 0 or own is None or int(own) == ref or not 0 <= ref < len(FAMILIES):
        return None
    if float(row.get("failure_rate_per_h", 0.0) or 0.0) <= 0.0:
        return None
    art = "an" if FAMILIES[ref][0] in "aeiou" else "a"
    return (f"The failure profile's rates were measured on {art} {FAMILIES[ref]} fleet; this system's accelerators are "
            f"{FAMILIES[int(own)]} and take them as given (an assumption: their own field rates are not in "
            "hardware/failure_profiles.json). reliability.rate_scale scales every class, or give a custom profile.")


def notes(row: dict) -> list[str]:
    """Stated simplifications of this stage (and why goodput is 0, when it is)."""
    out = [
        "Checkpoint = 14 B/param (16-bit weights + fp32 master, m, v; no gradients; 12 B with fp32 / tf32 "
        "training, whose fp32 weights are the master copy), split evenly "
        "over all GPUs with ZeRO >= 1; with ZeRO-0 one DP replica writes (its experts over the EP ranks).",
        "Goodput is the renewal (higher-order) model: Daly 2006 generalised to several tiers by "
        "grouping failure classes by recovery tier (a simplification), with failures during a "
        "recovery extending it (an M/G/∞ busy period); the intervals maximise it. Its loss 1 − goodput is split into "
        "overhead / lost work / restart in proportion to the model's three factors. "
        "goodput_first_order is the first-order formula of docs/reliability.md (valid only where λ·τ, λ·R ≪ 1). "
        "A tier that would recover no failure class at the optimum is not saved (interval 1e8 s). "
        "An async save counts once it is durable (its save − stall after the stall: a factor e^(Λ·(save − stall)), "
        "and another for the saves that other tiers' failures stop in flight).",
        "Repair waits count for gpu/node failures only, and not with hot spares.",
    ]
    rate_all = float(row.get("failure_rate_per_h", 0.0) or 0.0)
    per_job = {fc: float(row.get(f"fail_{fc}_per_job_h", 0.0) or 0.0) for fc in FAILURE_CLASSES}
    job_h = sum(per_job.values())
    if rate_all > 0.0 and job_h > 0.5 * rate_all:
        # a per-job rate does not shrink with the job: on a small job it can be most of λ (the
        # llama3-h100 profile's cluster class, an assumption, is 74 % of λ on 8 GPUs)
        out.append(f"{100.0 * job_h / rate_all:.0f} % of the failure rate is per job, whatever its size ("
                   + ", ".join(f"{fc} {_g(v)}/h" for fc, v in per_job.items() if v > 0)
                   + "): on a job this small it outweighs the per-GPU and per-node failures. Check the failure "
                   "profile's source for that class (hardware/failure_profiles.json): a per-job rate is "
                   "often an assumption, not a measured figure.")
    node_note = _node_size_note(row)
    if node_note:
        out.append(node_note)
    fleet_note = _fleet_family_note(row)
    if fleet_note:
        out.append(fleet_note)
    why = zero_goodput_reason(row)
    if why:
        out.append(why[0].upper() + why[1:])
    short = _short_run_note(row)
    g1 = row.get("goodput_first_order")
    rate_h = float(row.get("failure_rate_per_h", 0.0) or 0.0)
    grp = _grouping_departures(row)
    # Several tiers recover failures and the slowest of them spans many MTBFs: the tier grouping is
    # optimistic there (docs/reliability.md: host memory + daily PFS, +0.2 / +1.5 / +7.5 pp against
    # the Monte Carlo at λ·τ_slow = 1.5 / 5 / 15). Only tiers that recover some class count (review
    # 17d: an object store saved every 85 h beside a PFS every 46 h that recovers the same classes
    # drew "optimistic by a few points" where the analytic goodput was 5.5 pp *below* the Monte Carlo).
    slow = max((t for _k, t, _l in grp["recovering"]), default=np.nan)
    slow_note = (len(grp["recovering"]) >= 2 and np.isfinite(rate_h) and rate_h * slow / 3600.0 > 3.0
                 and row.get("goodput", 0) > 0)
    stretched_gap = float(row.get("goodput", np.nan)) - grp["estimate"]
    older = _async_older_note(row)
    departs = short is not None or slow_note or bool(grp["redundant"]) or older is not None
    # the run the Monte Carlo would refuse (more failures than it simulates one by one): it cannot
    # check the headline there, and the notes that send the reader to it say so (review 40a D2:
    # "which tracks the Monte Carlo" was said of a run `planner simulate` refuses, the default
    # preset at 100 × the failure rate; review 40c D8: also where other notes followed)
    # (only where a note below may name the Monte Carlo: finite_run costs a model evaluation, and
    # evaluate() runs these notes on every call)
    days_mc = float(row.get("time_to_train_days", np.nan))
    mc_ok = rate_h <= 0.0 or _simulable(rate_h, days_mc)
    if not mc_ok:  # the finite run can be shorter, and the Monte Carlo sizes the run by it
        fin_days, fin_exact = finite_run(row)
        if np.isfinite(fin_days) and (fin_exact or finite_run_restarts(row)) and (not np.isfinite(days_mc)
                                                    or fin_days < days_mc * (1.0 - FINITE_RUN_NOTE_REL)):
            days_mc = fin_days  # (simulate.expected_days, conservative)
            mc_ok = _simulable(rate_h, days_mc)
    mc_refused = ""
    if not mc_ok:
        from .simulate import MAX_EXPECTED_FAILURES

        n_fail = rate_h * days_mc * 24.0
        mc_refused = ("the Monte Carlo cannot check it here: the run expects "
                      + (f"about {n_fail:,.0f} failures" if n_fail < 1e9 else f"about {n_fail:.3g} failures"
                         if np.isfinite(n_fail) else "no end of failures")
                      + f", more than the {MAX_EXPECTED_FAILURES:,} it simulates one by one.")
    # only with failures: at a zero failure rate (MTBF inf) the two differ by the save stalls alone
    # (1 − s/τ against τ/(τ + s)), and "Failures are frequent (MTBF inf h)" was said (review 17f)
    # (review h30a E2: an absolute 0.01 alone never fired below a goodput of 0.01, where the first
    # order is clipped to 0: a headline of 0.0093 against a Monte Carlo of 0.0074 had no note)
    g_head = float(row.get("goodput", g1) if row.get("goodput") is not None else g1) if g1 is not None else np.nan
    if g1 is not None and rate_h > 0.0 and abs(g_head - g1) > min(0.01, 0.1 * abs(g_head)):
        # (found by review: "which tracks the Monte Carlo" was said of a run 30 × shorter in the
        # Monte Carlo than the renewal model's steady state; the notes below say where it does not.
        # Review 17d: also of a run where the grouping by tier was 1.5 pp above the Monte Carlo, with
        # no other note: now only where the stretched-exposure estimate agrees within 0.005.)
        if not mc_ok:
            tail = "a steady-state rate; " + mc_refused + (
                " The notes below say where the analytic model departs from a real run." if departs else "")
        elif departs:
            tail = "a steady-state rate; the notes below say where it departs from the Monte Carlo."
        elif (np.isfinite(stretched_gap) and abs(stretched_gap) <= GROUPING_NOTE_GAP
              and abs(stretched_gap) <= GROUPING_NOTE_REL * float(row.get("goodput", 0.0))):
            tail = "which tracks the Monte Carlo."
        else:
            tail = ("a steady-state rate that groups failures by the tier they restore from, which is off here: a "
                    "first-order correction (a tier's failures also strike during the recoveries and redone work of "
                    "failures a tier saved more often restores, such failures during a recovery from a slower tier "
                    "reload from that tier, and a tier saved less often may hold a newer save than it) gives about "
                    f"{grp['estimate']:.3g}; the Monte Carlo (planner.simulate, the Plan page) "
                    "simulates the run as it is.")
        # against what: the interval of the slowest tier that restores failures (found by review,
        # session 21: "frequent (MTBF 579 h)" was said of a PFS saved every 1e6 s, λ·τ = 0.48)
        saved_iv = [float(v) for kind in TIER_KINDS
                    if (v := row.get(f"ckpt_{kind}_interval_opt_s")) is not None and np.isfinite(float(v))
                    and not is_never_saved(float(v))]
        t_max = max(saved_iv, default=np.nan)
        against = (f"; λ·τ = {_g(rate_h * t_max / 3600.0)} for the {format_interval_s(t_max)} interval of the "
                   "slowest tier saved" if np.isfinite(t_max) and rate_h * t_max / 3600.0 > 0.05 else "")
        # review 24: where the save stalls make the gap (a PFS saved every 1 s, MTBF 3,089 h), say so:
        # the first order subtracts Σ stall/τ of the wall time, the renewal model charges τ/(τ + stall)
        # Σ stall/τ over the saved tiers, from the row's own columns (expected_goodput's first-order
        # overhead: a disabled or never-saved tier stalls nothing)
        try:
            ov1 = sum(float(row[f"ckpt_{kind}_stall_s"]) / iv for kind in TIER_KINDS
                      if row.get(f"ckpt_{kind}_enabled")
                      and np.isfinite(iv := float(row.get(f"ckpt_{kind}_interval_opt_s", np.nan)))
                      and not is_never_saved(iv))
        except (KeyError, ValueError, TypeError):
            ov1 = np.nan
        stall_gap = ov1 * ov1 / (1.0 + ov1) if np.isfinite(ov1) and ov1 > 0.0 else 0.0
        # against the first order before its clip to [0, 1] (review 40a D1: clipped to 0 beside a
        # goodput near 0, any stall at all was "long", where the recoveries' e^24 made the loss)
        g1_raw = g1
        try:
            res_, _t, _l, _r = _row_model(row)
            g1_raw = float(np.ravel(1.0 - res_["ckpt_overhead_frac_first_order"] - res_["lost_work_frac_first_order"]
                                    - res_["restart_frac_first_order"])[0])
        except (KeyError, ValueError, TypeError):
            pass
        if not np.isfinite(g1_raw):
            g1_raw = g1
        if stall_gap >= 0.5 * abs(row.get("goodput", g1) - g1_raw):
            out.append(f"Checkpoint stalls are long against the intervals (Σ stall/τ = {_g(ov1)}; MTBF "
                       f"{_g(row.get('mtbf_h', np.nan))} h): the first-order goodput ({_g(g1)}) subtracts them "
                       "as a share of the wall time, 1 − Σ stall/τ; the headline uses the renewal model "
                       f"({_g(row['goodput'])}), which charges a stall s every τ of compute as τ/(τ + s), "
                       f"1/(1 + Σ stall/τ) = {_g(1.0 / (1.0 + ov1))} here, " + tail)
        else:
            out.append(f"Failures are frequent against the checkpoint intervals and recoveries (MTBF "
                       f"{_g(row.get('mtbf_h', np.nan))} h{against}): the first-order "
                       f"goodput ({_g(g1)}) is off; the headline uses the renewal model ({_g(row['goodput'])}), " + tail)
    if short is not None:
        mc_end = "The Monte Carlo (planner.simulate, the Plan page) simulates the run as it is."
        out.append(short if mc_ok or not short.endswith(mc_end)
                   else short[: -len(mc_end)] + mc_refused[0].upper() + mc_refused[1:])
    if slow_note:
        # with the first-order correction where it lowers the headline by more than 1 %: in relative terms,
        # as the time to train reads it (review 23: "optimistic by a few points" was said of a goodput of
        # 0.0070 whose Monte Carlo is about 0.0062, a time to train 13 % longer; the correction gave 0.0064).
        # The stretched-exposure part only: a redundant tier's gain has its own note below (review 23)
        g_h, est = float(row.get("goodput", np.nan)), float(grp["stretched"])
        head = (f"The slowest checkpoint tier that recovers failures saves every {_g(slow / 3600.0)} h, about "
                f"{_g(rate_h * slow / 3600.0)} mean times between failures: the analytic goodput groups failures by "
                "tier, which ")
        if np.isfinite(est) and 0.0 < est < g_h * 0.99:
            out.append(head + "is optimistic here: a first-order correction (the failures only that tier restores "
                       "also strike the recoveries and redone work of the others, whose failures during its own "
                       f"recoveries reload from it) gives about {est:.3g} against the "
                       f"headline {g_h:.3g}, a time to train about "
                       + (f"{100.0 * (g_h / est - 1.0):.0f} % longer" if g_h / est < 11.0 else
                          f"{g_h / est:,.3g} × as long")  # (review 40c: "about 43836331 % longer")
                       + "; the Monte Carlo (planner.simulate, the Plan page), which does not group them, can be "
                       "lower still (docs/reliability.md)" + (f" — but {mc_refused}" if not mc_ok else "."))
        else:
            out.append(head + "may be optimistic here; the Monte Carlo (planner.simulate, the Plan page) does not "
                       "group them" + (f" — but {mc_refused}" if not mc_ok else "."))
    for kind, t_j, by, t_k, cls, gain, f, idle in grp["redundant"]:
        out.append(f"The {kind} tier (every {format_interval_s(t_j)}) also survives the {', '.join(cls)} failures that "
                   f"the {by} tier (every {format_interval_s(t_k)}) recovers, and is saved less often: the analytic "
                   f"goodput restores those failures from the {by} tier only"
                   + (f" and charges the {kind} saves' stalls for nothing" if idle else "")
                   + ", while a real job (and the Monte Carlo) restarts from whichever of the two saved last, so the "
                   f"analytic goodput is low here, by roughly {gain:.2g} (first order: the {kind} saves newer than the "
                   f"{by} tier's last one spare about {f:.2g} of those failures' lost work). "
                   + (f"Leave the {kind} interval empty for the optimum, or check" if idle else "Check")
                   + " with the Monte Carlo (planner.simulate, the Plan page)"
                   + (f" — but {mc_refused}" if not mc_ok else "."))
    spares = int(row.get("hot_spare_nodes", 0) or 0)
    if spares > 0:  # the issue rule (a spare is always there) against a pool of spares being repaired
        a = sum(float(row.get(f"failure_rate_{c}_per_h", 0.0) or 0.0) / 3600.0
                * float(row.get(f"fail_{c}_repair_s", 0.0) or 0.0) for c in REPAIR_CLASSES)
        p_wait = spare_shortage_probability(a, spares)
        if p_wait > 0.01:
            out.append(f"Hot spares: the model takes a spare to be always at hand (no repair wait). With "
                       f"{spares} spare node{'s' if spares != 1 else ''} and about {_g(a)} nodes in repair at a time "
                       f"(failure rate × repair time, Little's law), a failure finds none free with probability "
                       f"{p_wait:.2g} (Poisson, M/G/∞): then it waits for a repair, which the goodput leaves out.")
    for k, kind in enumerate(TIER_KINDS):  # a given interval the job cannot keep (stage: clipped to interval_floor_s)
        given = float(row.get(f"ckpt_{kind}_interval_s", np.nan))
        used = float(row.get(f"ckpt_{kind}_interval_opt_s", np.nan))
        if np.isfinite(given) and np.isfinite(used) and used > given * (1.0 + 1e-12):
            try:
                what = _row_interval_floor(row, k)[1]
            except (KeyError, ValueError, TypeError):
                what = "one step, 1 s at least, or the async save still running"
            out.append(f"The {kind} checkpoint interval given ({_g(given)} s) is shorter than the job can save at "
                       f"({what}): counted at {_g(used)} s.")
    if row.get("ckpt_async") and _max_lag_rate(row) > 0.005:  # (Λ_k, λ_other ≤ λ: no note possible below)
        # async saves are durable save − stall after their stall ends; the renewal goodput charges
        # e^{Λ_k·L_k} and the missed-save factor (module docstring; until 2026-12-02 it left both out
        # and a note gave a first-order size: the 405B preset with a 3 GB/s file system was 0.864
        # against the Monte Carlo's 0.756, now 0.757)
        try:
            _res, tier_of, lam_c, _R = _row_model(row)
        except (KeyError, ValueError, TypeError):
            tier_of, lam_c = None, None
        if tier_of is not None:
            for t in _lag_terms(row, tier_of, lam_c, min_log=0.005):
                kind, own, missed = t["kind"], t["own"], t["missed"]
                out.append(
                    f"Async {kind} checkpoints are written for {_g(t['lag'])} s after their stall ends, and the goodput "
                    "counts what a failure in that window costs: one of the failures this tier recovers "
                    f"(Λ = {_g(t['lam_k'])}/h) rolls back one save further, × e^(Λ·(save − stall)) = e^{own:.4g} = "
                    f"{_exp_txt(own)}"
                    + (f"; one that another tier recovers ({_g(t['lam_o'])}/h) stops the save in flight, "
                       f"which is then skipped (p = {t['p']:.3g} per save), × {_exp_txt(missed)}" if t["lam_o"] > 0 else "")
                    + f". A faster {kind} write shortens the window.")
    if older is not None:
        out.append(older)
    iv_nv = float(row.get("ckpt_local_nvme_interval_opt_s", np.nan))
    cap = float(row.get("local_nvme_bytes", np.nan) or np.nan)
    if np.isfinite(iv_nv) and not is_never_saved(iv_nv) and np.isfinite(cap) and cap > 0:
        shard = float(row.get("ckpt_shard_bytes", 0.0) or 0.0)
        writers = float(row["ckpt_bytes"]) / shard if shard > 0 else 0.0
        node_b = min(float(row.get("gpus_per_node", 1)), writers) * shard
        rep = float(ck.peer_replicas(row.get("ckpt_local_nvme_replicas", 0) or 0, row.get("n_nodes", 1)))
        need = node_b * (1.0 + rep)
        if need > cap:  # found by review: never checked (host memory is: host_fits_ckpt)
            out.append(f"Local NVMe checkpoints do not fit: {need / 1e9:,.1f} GB per node (the node's share × "
                       f"(1 + {rep:g} peer copies)) > the drive's {cap / 1e9:,.1f} GB (GB = 1e9 B); the goodput "
                       "counts the tier as if they did.")
    ck_b = float(row.get("ckpt_host_mem_per_node_bytes", 0.0) or 0.0)
    stg_b = float(row.get("ckpt_async_staging_per_node_bytes", 0.0) or 0.0)
    if not row.get("host_fits_ckpt", True) and ck_b > 0 and (ck_b - stg_b > 0 or row.get("host_fits", True)):
        # (with no in-memory checkpoint held and the offloaded states alone over, the memory
        # stage's own note says so; found by review: a second note of 0.00 GiB of checkpoints)
        gib = 2.0 ** 30
        off_b = float(row.get("host_mem_per_node_bytes", 0.0) or 0.0)
        have = row.get("host_memory_bytes")
        parts = []
        if ck_b - stg_b > 0:
            parts.append(f"the host-memory tier's copies, peer copies included, {(ck_b - stg_b) / gib:,.2f} GiB")
        if stg_b > 0:  # review 16a: the async saves' host buffers were not counted
            parts.append(f"the async saves' staging buffers (each saved tier's node share, copied to host memory "
                         f"before it is written) {stg_b / gib:,.2f} GiB")
        out.append(f"Does not fit in host memory: the in-memory checkpoints need {ck_b / gib:,.2f} GiB per node ("
                   + "; ".join(parts) + ")"
                   + (f" beside the offloaded states' {off_b / gib:,.2f} GiB" if off_b > 0 else "")
                   + (f" > the node's {float(have) / gib:,.2f} GiB" if have is not None else "")
                   + " (GiB = 2^30 B); the goodput counts the checkpoints as if they did"
                   + (" (save synchronously, or spread the job over more nodes, to drop or shrink the staging buffers)"
                      if stg_b > 0 else "") + ".")
    return out
