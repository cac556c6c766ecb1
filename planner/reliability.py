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
* **Goodput, first order** (the ``goodput`` column; renewal argument, DESIGN §4.4)::

      goodput = 1 − Σ_k stall_k/τ_k − Σ_c λ_c·(R_c + τ_k(c)/2 + reload_k(c),c)

  clipped to [0, 1]; its three terms are ``ckpt_overhead_frac``, ``lost_work_frac`` and
  ``restart_frac`` (restart + repair + reload). τ_k is compute time between two saves of tier k.
* **Goodput, renewal (higher order)** (the ``goodput_renewal`` column, also the objective of
  the interval search): Daly's exponential-failure model [2] (eq. 20), generalised to several
  tiers by grouping the classes by recovery tier::

      1/goodput = (1 + Σ_k stall_k/τ_k) · exp(Σ_c λ_c·(R_c + reload_c)) · Π_k φ(Λ_k·(τ_k + stall_k))

  with ``φ(x) = (e^x − 1)/x`` and Λ_k the rate of the classes that recover from tier k. With one
  tier this is Daly's model exactly, so the optimum interval is Daly's optimum (and Young's
  when δ ≪ M). With several tiers the grouping is a stated simplification.
* **Intervals.** A NaN ``ckpt_{k}_interval_s`` is chosen by maximising the renewal goodput over
  a log-spaced grid, jointly over all free tiers of a row ((N, G), (N, G, G) ... arrays, rows
  chunked to bound memory), then refined by a coordinate search on narrowing grids.

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

import numpy as np

from . import checkpoint as ck
from .checkpoint import ckpt_interval_daly, ckpt_interval_young  # noqa: F401  (public names)
from .schema import FAILURE_CLASSES, TIER_KINDS

#: Failure classes whose restart waits ``repair_s`` for a replacement unless hot spares exist.
REPAIR_CLASSES: tuple[str, ...] = ("gpu", "node")
#: Interval search range [s]: at least one second (and one step), at most ~3 years.
INTERVAL_MIN_S = 1.0
INTERVAL_MAX_S = 1e8
#: Joint coarse grid points per free tier, by number of free tiers in a row.
COARSE_POINTS = {1: 64, 2: 24, 3: 12, 4: 8}
#: Refinement: points per coordinate grid, rounds (each narrows the span ~10x), sweeps per round.
FINE_POINTS = 21
FINE_ROUNDS = 4
FINE_SWEEPS = 2
#: Elements per (rows x grid) block: bounds the memory of the vectorised search.
GRID_BLOCK_ELEMENTS = 1_000_000


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


def _log_phi(x):
    """log((e^x − 1)/x), stable for x -> 0 and large x."""
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        small = x < 1e-8
        big = x > 50.0
        xs = np.where(small | big, 1.0, x)
        mid = np.log(np.expm1(xs) / xs)
        return np.where(small, x / 2.0, np.where(big, x - np.log(np.where(big, x, 1.0)), mid))


def expected_goodput(taus, stall_s, enabled, lam_per_s, recovery_s_, reload_s, survives):
    """Expected goodput of checkpoint intervals ``taus`` (first order and renewal).

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

    Returns
    -------
    dict of ndarray (n, *g)
        ``ckpt_overhead_frac``, ``lost_work_frac``, ``restart_frac``, ``goodput`` (first order,
        clipped to [0, 1]), ``log_wall_per_work`` (renewal model, log of 1/goodput),
        ``goodput_renewal``, ``tau_recovery_min_s`` (interval of the most frequent tier, any class).
    """
    taus = [np.asarray(t, dtype=float) for t in taus]
    shape = np.broadcast_shapes(*[t.shape for t in taus])
    nd = len(shape) - 1

    def ex(a):  # (n,) -> (n, 1, ..., 1)
        return a.reshape(a.shape + (1,) * nd)

    K, C = len(taus), lam_per_s.shape[1]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        overhead = np.zeros(shape)
        for k in range(K):
            overhead = overhead + np.where(ex(enabled[:, k]), ex(stall_s[:, k]) / taus[k], 0.0)
        lost = np.zeros(shape)
        restart = np.zeros(shape)
        log_w = np.log1p(overhead)
        lam_by_tier = [np.zeros(shape) for _ in range(K)]
        unsurvived = np.zeros(shape)
        for c in range(C):
            best_tau = np.full(shape, np.inf)
            best_reload = np.full(shape, np.inf)
            best_k = np.full(shape, -1, dtype=np.int8)
            for k in range(K):
                ok = ex(enabled[:, k] & survives[:, k, c])
                cand = np.where(ok, taus[k], np.inf)
                better = cand < best_tau
                best_tau = np.where(better, cand, best_tau)
                best_reload = np.where(better, ex(reload_s[:, k, c]), best_reload)
                best_k = np.where(better, np.int8(k), best_k)
            lam = ex(lam_per_s[:, c])
            has = lam > 0
            lost = lost + np.where(has, lam * best_tau / 2.0, 0.0)
            rec = np.where(has, lam * (ex(recovery_s_[:, c]) + best_reload), 0.0)
            restart = restart + rec
            log_w = log_w + rec
            for k in range(K):
                lam_by_tier[k] = lam_by_tier[k] + np.where(best_k == k, lam, 0.0)
            unsurvived = unsurvived + np.where(best_k < 0, lam, 0.0)
        for k in range(K):
            seg = taus[k] + ex(stall_s[:, k])
            x = np.where(lam_by_tier[k] > 0, lam_by_tier[k] * seg, 0.0)
            log_w = log_w + _log_phi(x)
        log_w = np.where(unsurvived > 0, np.inf, log_w)
        log_w = np.where(np.isnan(log_w), np.inf, log_w)
        g1 = np.clip(1.0 - overhead - lost - restart, 0.0, 1.0)
        g1 = np.where(np.isnan(g1), 0.0, g1)
        g_ren = np.exp(-log_w)
        tmin = np.full(shape, np.inf)
        for k in range(K):
            tmin = np.minimum(tmin, np.where(ex(enabled[:, k]), taus[k], np.inf))
    return {
        "ckpt_overhead_frac": overhead, "lost_work_frac": lost, "restart_frac": restart,
        "goodput": g1, "log_wall_per_work": log_w, "goodput_renewal": g_ren,
        "tau_recovery_min_s": tmin,
    }


def _take(p: dict, idx) -> dict:
    return {k: v[idx] for k, v in p.items()}


def _objective(p: dict, taus):
    return expected_goodput(taus, p["stall_s"], p["enabled"], p["lam_per_s"], p["recovery_s"],
                            p["reload_s"], p["survives"])["log_wall_per_work"]


def optimise_intervals(tau_given, free, lo, hi, p: dict) -> np.ndarray:
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


def stage(b) -> dict[str, np.ndarray]:
    """Pipeline stage 4: failures, checkpoint tiers, intervals and goodput.

    Parameters
    ----------
    b : Batch — inputs of :mod:`planner.batch`, ``params_total``; ``step_time_s`` if present.

    Returns
    -------
    dict of ndarray (N,)
        ``failure_rate_per_h``, ``mtbf_h``, ``failure_rate_{class}_per_h``, ``ckpt_bytes``,
        ``ckpt_shard_bytes``, ``ckpt_{kind}_save_s``, ``ckpt_{kind}_stall_s``,
        ``ckpt_{kind}_interval_opt_s`` (the interval in use: the optimum where the input is NaN,
        the given one otherwise; NaN for a disabled tier), ``ckpt_interval_s`` (most frequent
        enabled tier), ``ckpt_overhead_frac``, ``lost_work_frac``, ``restart_frac``, ``goodput``
        (first order), ``goodput_renewal`` (higher order), ``ckpt_host_mem_per_node_bytes``,
        ``host_fits_ckpt``.
    """
    tt = ck.tier_times(b)
    n = tt["ckpt_bytes"].shape[0]
    lam_h = failure_rates_per_h(b)
    p = {
        "stall_s": tt["stall_s"], "enabled": tt["enabled"], "lam_per_s": lam_h / 3600.0,
        "recovery_s": recovery_s(b), "reload_s": tt["reload_s"], "survives": tt["survives"],
    }
    K = len(TIER_KINDS)
    tau_in = np.stack([np.asarray(b[f"ckpt_{k}_interval_s"], dtype=float) for k in TIER_KINDS], axis=1)
    free = tt["enabled"] & np.isnan(tau_in)
    step_s = np.asarray(b["step_time_s"], dtype=float) if "step_time_s" in b else np.zeros(n)
    step_s = np.nan_to_num(step_s, nan=0.0)
    async_ = np.asarray(b["ckpt_async"], dtype=bool)
    lo = np.maximum.reduce([
        np.full((n, K), INTERVAL_MIN_S), np.broadcast_to(step_s[:, None], (n, K)),
        np.where(async_[:, None], tt["save_s"], 0.0),
    ])
    hi = np.maximum(np.full((n, K), INTERVAL_MAX_S), lo)
    tau = optimise_intervals(tau_in, free, lo, hi, p)
    tau = np.where(tt["enabled"], tau, np.nan)
    res = expected_goodput([tau[:, k] for k in range(K)], **{
        "stall_s": p["stall_s"], "enabled": p["enabled"], "lam_per_s": p["lam_per_s"],
        "recovery_s_": p["recovery_s"], "reload_s": p["reload_s"], "survives": p["survives"],
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
        out[f"ckpt_{kind}_save_s"] = tt["save_s"][:, k]
        out[f"ckpt_{kind}_stall_s"] = tt["stall_s"][:, k]
        out[f"ckpt_{kind}_interval_opt_s"] = tau[:, k]
    tmin = res["tau_recovery_min_s"]
    out["ckpt_interval_s"] = np.where(np.isinf(tmin), np.nan, tmin)
    for key in ("ckpt_overhead_frac", "lost_work_frac", "restart_frac", "goodput", "goodput_renewal"):
        out[key] = res[key]
    hm = TIER_KINDS.index("host_memory")
    replicas = np.asarray(b["ckpt_host_memory_replicas"], dtype=float)
    host_ckpt = np.where(tt["enabled"][:, hm], tt["ckpt_node_bytes"] * (1.0 + replicas), 0.0)
    out["ckpt_host_mem_per_node_bytes"] = host_ckpt
    used = host_ckpt + (np.asarray(b["host_mem_per_node_bytes"], dtype=float)
                        if "host_mem_per_node_bytes" in b else 0.0)
    out["host_fits_ckpt"] = used <= np.asarray(b["host_memory_bytes"], dtype=float)
    return out


def _g(x: float) -> str:
    return f"{x:.4g}"


def explain(row: dict) -> dict[str, str]:
    """Formula strings with the numbers of one scenario plugged in."""
    e: dict[str, str] = {}
    terms = []
    for fc in FAILURE_CLASSES:
        lam = row.get(f"failure_rate_{fc}_per_h", 0.0)
        if lam:
            terms.append(f"{fc} {_g(lam)}")
    e["failure_rate_per_h"] = (
        "Σ_c (r_gpu·n_gpus + r_node·n_nodes + r_job) = " + " + ".join(terms or ["0"])
        + f" = {_g(row['failure_rate_per_h'])} /h"
    )
    e["mtbf_h"] = f"1/λ = 1/{_g(row['failure_rate_per_h'])} = {_g(row['mtbf_h'])} h"
    e["ckpt_bytes"] = (
        f"{ck.CKPT_BYTES_PER_PARAM:g} B/param × {_g(row['params_total'])} params = {_g(row['ckpt_bytes'])} B"
    )
    e["goodput"] = (
        f"1 − overhead {_g(row['ckpt_overhead_frac'])} − lost work {_g(row['lost_work_frac'])}"
        f" − restart {_g(row['restart_frac'])} = {_g(row['goodput'])}"
    )
    e["ckpt_interval_s"] = f"most frequent enabled tier: {_g(row['ckpt_interval_s'])} s"
    return e


def notes(row: dict) -> list[str]:
    """Stated simplifications of this stage."""
    out = [
        "Checkpoint = 14 B/param (bf16 weights + fp32 master, m, v; no gradients), split evenly "
        "over all GPUs with ZeRO >= 1; with ZeRO-0 one DP replica writes.",
        "Goodput is first order (DESIGN §4.4); intervals maximise Daly's renewal model, "
        "generalised to several tiers (column goodput_renewal).",
        "Repair waits count for gpu/node failures only, and not with hot spares.",
    ]
    if not row.get("host_fits_ckpt", True):
        out.append("In-memory checkpoints do not fit in the node's host memory.")
    return out
