"""Monte Carlo of a whole training run with failures, checkpoints and recoveries.

The reference for the analytic goodput of :mod:`planner.reliability` (DESIGN §4.4): its headline
``goodput`` (renewal model) and ``goodput_first_order``. Vectorised
over trials: one loop over failure *rounds*, each round advancing every unfinished trial to its
next failure (or to the end of training) at once.

Model of one trial (stated simplifications in brackets):

* Training needs ``work_s = tokens_total / tokens_per_s`` seconds of compute. Saves of tier k
  happen each time progress crosses a multiple of ``τ_k`` below ``work_s`` and stall training by
  ``stall_k``; [the stalls are spread evenly: progress advances at ``1 / (1 + Σ_k n_k·stall_k/work_s)`` per wall
  second, counting the ``⌈work_s/τ_k⌉ − 1`` saves the run starts]; a tier whose interval is at least
  ``work_s`` saves nothing and stalls nothing. A save becomes durable ``save_k`` wall seconds after its start (sync or async).
* Failures arrive as a Poisson process of rate λ = Σ_c λ_c in wall time (also during a
  recovery, which then ends at the later of its own end and the new failure's: an M/G/∞ busy
  period, as the analytic model's recovery factor); the class is drawn with probability λ_c/λ.
* On a failure of class c the job rolls back to the most recent durable save of any enabled
  tier that survives c (tiers lost by an earlier failure hold only saves taken since), waits
  ``R_c`` (restart + repair) and reloads from that tier. With no such save it restarts
  from the beginning.

Returns one row per trial.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from . import batch as _batch
from . import checkpoint as ck
from . import cost as _cost
from . import reliability as rel
from . import schema as _schema
from .schema import FAILURE_CLASSES, TIER_KINDS, InputError, Scenario, is_whole_number, validate_scenario

#: Safety cap on failure rounds, as a multiple of the expected number of failures (+ a floor).
MAX_ROUNDS_FACTOR = 10.0
#: The same for a run some failures restart from the beginning: its failure count is about
#: geometric, P(more than c × the mean) ≈ e^−c, so 10 × cut about one trial in 22,000 short and
#: made the mean inf (review 41b: 2 of 40,000); e^−40 is 4e-18.
RESTART_ROUNDS_FACTOR = 40.0
MAX_ROUNDS_FLOOR = 10_000
#: Most failures per simulated run the Monte Carlo takes on: each failure is one round of the
#: loop (about 0.3 ms per round for 1,000 trials), so a run the analytic model expects to fail
#: more often than this (e.g. a 16k-GPU run at 100x the failure rate: ~10^7 failures) is refused
#: up front with the analytic figures instead of running for hours.
MAX_EXPECTED_FAILURES = 200_000
#: Most trials × failures per run (one Monte Carlo round each) ``simulate`` runs, about 17 minutes at
#: 10⁷ rounds a second on a 2-core machine (``too_many_rounds``; the README's million trials of the
#: Llama 3 405B preset are 6·10⁸). The Plan page's own budget is 10⁸ (``app_pages/plan.py``).
MAX_TRIAL_ROUNDS = 1e10


def _progress_rate(tau_s, enabled, stall_s, work_s=np.inf) -> tuple[float, np.ndarray, np.ndarray]:
    """(progress per wall second, τ with disabled tiers at inf, the enabled mask) of one
    configuration: the saves' stalls spread evenly over progress, ``1 / (1 + Σ_k n_k·stall_k/W)``
    with ``n_k = ⌈W/τ_k⌉ − 1`` the saves a run of ``W = work_s`` compute seconds starts (none at its
    end; ``1 / (1 + Σ_k stall_k/τ_k)`` for an endless run). A tier whose interval is at least the
    run saves nothing within it (as :func:`restarts_from_beginning`): no stall, nothing to roll back
    to (review 47a: a 3 h run with a sync 395 s save every 4 h was slowed by 395/14,400 for saves it
    never takes; review 47e: a run of 1.99 intervals by 1.99 saves' stall for its one)."""
    tau = np.asarray(tau_s, dtype=float)
    # a tier at the "never" interval (reliability.is_never_saved) is not saved, as in the analytic
    # model: no stall, nothing to restart from
    en = (np.asarray(enabled, dtype=bool) & np.isfinite(tau) & (tau > 0) & ~rel.is_never_saved(tau)
          & (tau < work_s))
    tau = np.where(en, tau, np.inf)
    # a disabled tier's stall may be inf or NaN (a system without local NVMe): masked, never divided
    stall = np.where(en, np.asarray(stall_s, dtype=float), 0.0)
    if np.isfinite(work_s) and work_s > 0:
        n_saves = np.where(en, rel.saves_started(work_s, tau), 0.0)
        return 1.0 / (1.0 + float(np.sum(stall * n_saves)) / work_s), tau, en
    return 1.0 / (1.0 + float(np.sum(stall / tau))), tau, en


def restarts_from_beginning(work_s, tau_s, enabled, lam_per_s, survives) -> bool:
    """Whether some failing class restarts the run from the beginning: no enabled tier that saves
    within the run (interval below the compute time ``work_s``, not "never") survives it."""
    tau = np.asarray(tau_s, dtype=float)
    saves = (np.asarray(enabled, dtype=bool) & np.isfinite(tau) & (tau > 0) & (tau < work_s)
             & ~rel.is_never_saved(tau))
    kept = (np.asarray(survives, dtype=bool) & saves[:, None]).any(axis=0)
    return bool(np.any((np.asarray(lam_per_s, dtype=float) > 0) & ~kept))


def round_cap(work_s, tau_s, enabled, stall_s, lam_per_s, expected_failures=None, restarts: bool = False) -> int:
    """Failure rounds after which :func:`simulate_params` gives up on a trial (time inf):
    ``MAX_ROUNDS_FACTOR`` (``RESTART_ROUNDS_FACTOR`` where failures restart the run from the
    beginning: :func:`restarts_from_beginning`) × the larger of λ × the failure-free wall time and
    ``expected_failures`` (the analytic model's, when finite), + ``MAX_ROUNDS_FLOOR``."""
    rate, _, _ = _progress_rate(tau_s, enabled, stall_s, work_s)
    expected = float(np.sum(lam_per_s)) * work_s / rate
    if expected_failures is not None and np.isfinite(expected_failures):
        expected = max(expected, float(expected_failures))
    cap = (RESTART_ROUNDS_FACTOR if restarts else MAX_ROUNDS_FACTOR) * expected + MAX_ROUNDS_FLOOR
    # inf / NaN (a run that cannot finish) or beyond an int64: capped (too_many_failures refuses
    # such runs before they are simulated)
    return int(cap) if cap < 2.0**62 else 2**62


def simulate_params(work_s, tau_s, enabled, stall_s, save_s, lam_per_s, recovery_s, reload_s,
                    survives, *, n_trials=10_000, seed=0, expected_failures: float | None = None,
                    progress: Callable[[float], None] | None = None) -> pd.DataFrame:
    """Monte Carlo of one configuration from its model parameters.

    Parameters
    ----------
    work_s : float — compute time to train, failure free and without saves [s].
    tau_s : array (K,) — compute time between saves per tier [s] (ignored where disabled).
    enabled : array (K,) bool
    stall_s : array (K,) — training stall per save [s].
    save_s : array (K,) — wall time until a save is durable [s].
    lam_per_s : array (C,) — failure rate per class [1/s].
    recovery_s : array (C,) — restart (+ repair) per class [s].
    reload_s : array (K, C) — reload time of tier k after class c [s].
    survives : array (K, C) bool
    n_trials : int
    seed : int — for ``np.random.default_rng``; the same seed and ``n_trials`` give the same result
        (the draws are vectorised over the trials still running, so another ``n_trials`` changes
        every trial).
    expected_failures : float or None — failures per run the analytic model expects (λ × its
        wall time); the round cap is ``MAX_ROUNDS_FACTOR`` × the larger of this and λ × the
        failure-free wall time, + ``MAX_ROUNDS_FLOOR``.
    progress : callable(fraction) or None — called after each round with the finished fraction.

    Returns
    -------
    pandas.DataFrame, one row per trial: ``time_to_train_days``, ``goodput`` (work / wall),
    ``n_failures``, ``n_failures_{class}``, ``lost_work_h`` (compute redone), ``recovery_h``
    (restart, repair and reload), ``finished`` (False if the round cap was hit: time inf).
    """
    rng = np.random.default_rng(seed)
    rate, tau, en = _progress_rate(tau_s, enabled, stall_s, work_s)
    stall = np.asarray(stall_s, dtype=float)
    lam_c = np.asarray(lam_per_s, dtype=float)
    rec_c = np.asarray(recovery_s, dtype=float)
    reload = np.asarray(reload_s, dtype=float)
    surv = np.asarray(survives, dtype=bool) & en[:, None]
    K, C = reload.shape
    lam = float(lam_c.sum())
    # Progress made between a save's start and its durability: training goes on only for the part
    # of the save that does not stall it (async: save − stall; a sync save stalls for all of it,
    # so nothing is made meanwhile). Until 2026-11-30 the whole save time counted, so a sync save
    # cost every failure an extra δ of lost work (−3 pp against Daly at δ = 30 min, M = 10 h).
    with np.errstate(invalid="ignore"):  # a disabled tier's inf − inf (masked below)
        lag = np.where(en, np.maximum(np.asarray(save_s, dtype=float) - stall, 0.0) * rate, 0.0)
    cum_p = np.cumsum(lam_c / lam) if lam > 0 else np.ones(C)
    cum_p[-1] = 1.0
    n = int(n_trials)
    P = np.zeros(n)            # progress (compute seconds done and kept)
    t = np.zeros(n)            # wall time
    pend = np.zeros(n)         # recovery time still to wait before progress resumes
    # Tier k holds valid saves only at positions strictly above this (the last rollback target).
    # Strict, not ``>= target + 1e-9``: found by review 15j, that epsilon is below half an ulp
    # from 2^23 s (97 days of compute) on, so a tier destroyed by a failure was credited with a save
    # at the rollback point and the next failure reloaded from it (13.07 days against the exact
    # 13.65 with the times scaled by 1,024: host memory free to reload, the PFS 3,000 s).
    valid_from = np.zeros((n, K))
    # Newest durable save of tier k kept across a rollback (the one reloaded, or an older one of
    # another tier): progress restarts at or after it, so ``floor((q - lag) / τ)`` alone would
    # miss it while progress is back within ``lag`` of it (a failure during the restart).
    durable = np.zeros((n, K))
    lost = np.zeros(n)
    recov = np.zeros(n)
    nfail = np.zeros((n, C), dtype=np.int64)
    finished = np.zeros(n, dtype=bool)
    active = np.arange(n)
    max_rounds = round_cap(work_s, tau_s, enabled, stall_s, lam_c, expected_failures,
                           restarts_from_beginning(work_s, tau_s, enabled, lam_c, survives))
    rounds = 0
    while active.size and rounds < max_rounds:
        rounds += 1
        a = active
        x = rng.exponential(1.0 / lam, size=a.size) if lam > 0 else np.full(a.size, np.inf)
        r = pend[a]
        during = x < r
        p0 = P[a]
        q = np.where(during, p0, p0 + (x - r) * rate)
        fin = (~during) & (q >= work_s)
        # Trials that finish before their next failure.
        af = a[fin]
        t[af] += r[fin] + (work_s - p0[fin]) / rate
        recov[af] += r[fin]
        P[af] = work_s
        finished[af] = True
        # Failures (during a recovery or while training).
        fl = ~fin
        af = a[fl]
        if af.size:
            qf = q[fl]
            t[af] += x[fl]
            recov[af] += np.minimum(x[fl], r[fl])
            c = np.searchsorted(cum_p, rng.random(af.size), side="right")
            c = np.minimum(c, C - 1)
            np.add.at(nfail, (af, c), 1)
            target = np.zeros(af.size)
            tier = np.full(af.size, -1)
            for k in range(K):
                if not en[k]:
                    continue
                cand = np.floor((qf - lag[k]) / tau[k]) * tau[k]
                cand = np.where(cand > valid_from[af, k], cand, 0.0)
                cand = np.where(surv[k, c], np.maximum(cand, durable[af, k]), 0.0)
                # What tier k holds after this failure (nothing if class c destroys it); never
                # above the rollback target, which is the newest of all tiers' saves.
                durable[af, k] = cand
                better = (cand > 0) & (cand > target)
                target = np.where(better, cand, target)
                tier = np.where(better, k, tier)
            # Progress resumes at the rollback target: every tier's saves beyond it are gone or not
            # yet retaken (a tier that does not survive class c lost them all; its newest save
            # before the target is gone too: ``durable`` is 0 for it), and what each tier still
            # holds at or below it is in ``durable``. Saves taken from here on are valid. (Until
            # 2026-11-30 a lost tier counted as empty up to the *failure* position: after a
            # rollback to an old PFS save, host memory stayed useless until progress passed the
            # failure point again — 0.40 against the analytic 0.67 on a two-tier run.)
            valid_from[af, :] = target[:, None]
            lost[af] += qf - target
            P[af] = target
            reload_t = np.where(tier >= 0, reload[np.maximum(tier, 0), c], 0.0)
            # A failure during a recovery extends it to the later of the two ends (a second node is
            # repaired beside the first; a software crash inside a repair wait does not shorten it):
            # the recovery is an M/G/∞ busy period, as in the analytic model (planner.reliability).
            # Until 2026-12-02 the recovery restarted with the new failure's time (found by review).
            left = np.maximum(r[fl] - x[fl], 0.0)
            pend[af] = np.maximum(left, rec_c[c] + reload_t)
        active = a[fl]
        if progress is not None:
            progress(1.0 - active.size / n)
    t[active] = np.inf
    if progress is not None and active.size:
        progress(1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        goodput = np.where(np.isfinite(t) & (t > 0), work_s / t, np.where(np.isfinite(t), 1.0, 0.0))
    df = pd.DataFrame({
        "time_to_train_days": t / 86_400.0,
        "goodput": goodput,
        "n_failures": nfail.sum(axis=1),
    })
    for j, fc in enumerate(FAILURE_CLASSES[:C]):
        df[f"n_failures_{fc}"] = nfail[:, j]
    df["lost_work_h"] = lost / 3600.0
    df["recovery_h"] = recov / 3600.0
    df["finished"] = finished
    return df


def params_from_batch(out: _batch.Batch, i: int = 0) -> dict:
    """Model parameters of row ``i`` of an evaluated batch, for :func:`simulate_params`.

    Needs the columns of stages 1 to 4 and ``tokens_per_s`` (stage 3, timing).
    """
    missing = [c for c in ("step_time_s", "tokens_per_s") if c not in out]
    if missing:
        raise RuntimeError(
            "simulate needs the step time: columns " + ", ".join(missing)
            + " are missing (the timing stage, planner/timing.py, is not available)"
        )
    if "goodput" not in out:
        raise RuntimeError("simulate needs the reliability stage (planner/reliability.py) columns")
    row = _batch.take(out, [i])
    tt = ck.tier_times(row)
    tau = np.array([float(out[f"ckpt_{k}_interval_opt_s"][i]) for k in TIER_KINDS])
    return {
        "work_s": float(out["tokens_total"][i]) / float(out["tokens_per_s"][i]),
        "tau_s": tau,
        "enabled": tt["enabled"][0],
        "stall_s": tt["stall_s"][0],
        "save_s": tt["save_s"][0],
        "lam_per_s": rel.failure_rates_per_h(row)[0] / 3600.0,
        "recovery_s": rel.recovery_s(row)[0],
        "reload_s": tt["reload_s"][0],
        "survives": tt["survives"][0],
        "expected_failures": (float(out["failure_rate_per_h"][i]) * expected_days(out, i) * 24.0
                              if "time_to_train_days" in out else None),
    }


def expected_days(out: _batch.Batch, i: int = 0, *, conservative: bool = False) -> float:
    """The analytic expected time to train of row ``i`` [days] for a run of its length: the
    renewal model's finite-run form (:func:`planner.reliability.finite_run_days`) where it is
    shorter than the headline by more than ``FINITE_RUN_NOTE_REL`` (where the scenario's notes say
    so), else the headline ``time_to_train_days`` (a steady-state rate, which charges the last,
    partial interval as a whole one: found by review, a 2-day run with the PFS saved every 116
    days was expected to take 3e23 days and the Monte Carlo refused it, while it takes 3.6).

    ``conservative``: where several tiers recover failures the finite-run figure can be far too
    low (:func:`planner.reliability.finite_run`), so the headline, an upper bound, is kept: what
    the refusal and the trial sizing use (found by review: at 100× the failure rate, host memory
    every 600 s beside a PFS every 1e6 s, the finite-run figure was 50 days for a run the Monte
    Carlo never finishes, and the run was no longer refused)."""
    days = float(out["time_to_train_days"][i])
    row = _batch.row(out, i)
    fin, exact = rel.finite_run(row)
    shorter = np.isfinite(fin) and (np.isinf(days) or fin < days * (1.0 - rel.FINITE_RUN_NOTE_REL))
    # a run failures restart from the beginning: its figure is exact or above the exact one (T at
    # its mean), so it is conservative too (review 41b D4: a run the note said the Monte Carlo
    # simulates was refused on the round cap)
    return fin if shorter and (exact or not conservative or rel.finite_run_restarts(row)) else days


def simulate_batch_row(out: _batch.Batch, i: int = 0, n_trials: int = 10_000, seed: int = 0,
                       progress: Callable[[float], None] | None = None) -> pd.DataFrame:
    """Monte Carlo of row ``i`` of an evaluated batch (see :func:`simulate_params`), with each
    run's bill beside its time to train: ``gpu_hours`` (hot spares' GPUs paid), ``cost_usd`` and
    ``energy_mwh``, the cost stage's formulas (:func:`planner.cost.bill`) at the run's own wall
    time (review h27c, 2026-12: the Monte Carlo gave no cost distribution); inf for a run that
    never finishes."""
    df = simulate_params(**params_from_batch(out, i), n_trials=n_trials, seed=seed, progress=progress)
    if all(k in out for k in ("price_per_gpu_hour_usd", "node_power_w", "pue")):
        _wall, gh, usd, mwh = _cost.bill(_batch.take(out, [i]), df["time_to_train_days"].to_numpy() * 86_400.0)
        at = df.columns.get_loc("time_to_train_days") + 1
        df.insert(at, "energy_mwh", mwh)
        df.insert(at, "cost_usd", usd)
        df.insert(at, "gpu_hours", gh)
    return df


#: Most trials one call simulates (measured 2026-11-30 on a 2-core machine for the Llama 3 405B preset, ~580
#: failures per run: 100,000 trials 9.2 s, 1,000,000 about 100 s; the time grows with the failures per run,
#: see MAX_EXPECTED_FAILURES).
MAX_TRIALS = 1_000_000
#: Seeds accepted: ``np.random.default_rng`` takes any non-negative integer; one int64.
MAX_SEED = 2**63 - 1


def check_trials_seed(n_trials, seed) -> list[str]:
    """Problems with ``n_trials`` / ``seed`` as ``name: message (got value)`` lines; [] if fine."""
    out = []
    if not (is_whole_number(n_trials) and 1 <= n_trials <= MAX_TRIALS):
        out.append(f"n_trials: an integer from 1 to {MAX_TRIALS:,} (got {_schema._shown_value(n_trials, False)})")
    if not (is_whole_number(seed) and 0 <= seed <= MAX_SEED):
        # (review 44a: a 5,000-digit seed was a ValueError from its own repr)
        out.append(f"seed: an integer from 0 to 2^63 − 1 (got {_schema._shown_value(seed, False)})")
    return out


def simulate(scenario: Scenario | dict, n_trials: int = 10_000, seed: int = 0,
             progress: Callable[[float], None] | None = None) -> pd.DataFrame:
    """Monte Carlo of the whole run of one scenario.

    Parameters
    ----------
    scenario : Scenario or JSON-like dict
    n_trials : int — number of simulated runs, 1 to :data:`MAX_TRIALS`.
    seed : int — ``np.random.default_rng(seed)``, 0 to 2^63 − 1; reproducible.
    progress : callable(fraction) or None — progress callback for long runs.

    Returns
    -------
    pandas.DataFrame, one row per trial (see :func:`simulate_params`), with each run's
    ``gpu_hours``, ``cost_usd`` and ``energy_mwh`` after ``time_to_train_days``
    (:func:`simulate_batch_row`).

    Raises
    ------
    planner.InputError (a ValueError) for a bad scenario, ``n_trials`` or ``seed``, one line per field.
    RuntimeError if the step time is not available (timing stage missing).
    """
    from .engine import run_batch

    bad = check_trials_seed(n_trials, seed)
    if progress is not None and not callable(progress):  # found by review: a TypeError after the whole run
        bad = [*bad, f"simulate: progress = {progress!r}: give a function of the finished fraction, or None"]
    if bad:
        raise InputError(bad)
    n_trials, seed = int(n_trials), int(seed)  # 1e3 passed the check as a whole number
    s = validate_scenario(scenario)
    out = run_batch(_batch.from_scenarios([s]))
    too_many = too_many_failures(out, 0)
    if too_many:
        raise InputError([too_many])
    if (why := too_many_rounds(out, 0, n_trials)) is not None:
        raise InputError([why])
    return simulate_batch_row(out, 0, n_trials=n_trials, seed=seed, progress=progress)


def too_many_rounds(out: _batch.Batch, i: int, n_trials: int) -> str | None:
    """Why ``n_trials`` runs of row ``i`` are too many to simulate: trials × the failures per run
    (:func:`expected_rounds`, one loop round each) above :data:`MAX_TRIAL_ROUNDS`, naming the most
    trials that stay within it; None otherwise. Review 45a: a million trials of a run of 69,000
    failures (the default preset at 10¹⁶ tokens) were accepted by the CLI and the API, about 39 hours
    on a 2-core machine (the Plan page cuts its trials at 10⁸ rounds)."""
    try:
        n = float(expected_rounds(out, i))
    except Exception:  # noqa: BLE001 - only a size check; the run itself says what is wrong
        return None
    if not (np.isfinite(n) and n > 0 and n_trials * n > MAX_TRIAL_ROUNDS):
        return None
    most = max(1, int(MAX_TRIAL_ROUNDS // n))
    return (f"n_trials: at most {most:,} for this run (got {n_trials:,}): each run fails about {_big(n)} times and "
            f"every failure is simulated, and trials × failures is capped at {MAX_TRIAL_ROUNDS:.0e} (about "
            f"{MAX_TRIAL_ROUNDS / 1e7 / 60:,.0f} minutes at 10⁷ a second on a 2-core machine); the analytic time "
            "to train and goodput (planner evaluate) need no trials")


def expected_rounds(out: _batch.Batch, i: int = 0) -> float:
    """Failures per run the Monte Carlo of row ``i`` will simulate (one loop round each): λ × the
    analytic wall time where that is finite, else (the run never finishes in expectation) the
    round cap it gives up at, ``MAX_ROUNDS_FACTOR`` × λ × the failure-free wall time +
    ``MAX_ROUNDS_FLOOR``."""
    rate_h = float(out["failure_rate_per_h"][i])
    n = rate_h * expected_days(out, i, conservative=True) * 24.0
    if np.isfinite(n):
        return n
    p = params_from_batch(out, i)
    return float(round_cap(p["work_s"], p["tau_s"], p["enabled"], p["stall_s"], p["lam_per_s"],
                           restarts=restarts_from_beginning(p["work_s"], p["tau_s"], p["enabled"], p["lam_per_s"],
                                                            p["survives"])))


def _big(x: float) -> str:
    """A count or a number of days as text: with thousands separators, or in e-notation from 1e9
    (not a 36-digit count: found by review)."""
    return f"{x:,.0f}" if x < 1e9 else f"{x:.3g}"


def too_many_failures(out: _batch.Batch, i: int = 0) -> str | None:
    """Why row ``i`` is too long to simulate (more than :data:`MAX_EXPECTED_FAILURES` failures per
    run, :func:`expected_rounds`: each is one round of the Monte Carlo), with the analytic
    figures to use instead, or that its step time is not finite; None when it can be simulated."""
    step, tps = float(out["step_time_s"][i]), float(out["tokens_per_s"][i])
    if not (np.isfinite(step) and step > 0 and np.isfinite(tps) and tps > 0):
        # no finite step: nothing to simulate (found by review: a NIC of 1e-300 B/s, before the
        # schema's ranges, divided by a zero throughput here)
        return (f"simulate: the step time is not a finite number of seconds ({step:g} s, {tps:g} tokens/s), so a "
                "run never finishes and there is nothing to simulate; check the hardware figures and overrides")
    rate_h = float(out["failure_rate_per_h"][i])
    row = _batch.row(out, i)
    if rel.finite_run_restarts(row):
        # failures restart the run from the beginning (review 40a D7): its finite-run figure, exact or
        # an upper estimate, sizes it — also past the float range (review 41b D3: 1e320 days overflowed
        # to inf, and the Monte Carlo ran its round cap for minutes), naming the classes
        lg = rel.finite_run_log10_days(row)
        n_fail = rate_h * 24.0 * 10.0 ** lg if lg < 300 else np.inf
        if not n_fail > MAX_EXPECTED_FAILURES:
            return None
        cls = rel.finite_run_restart_classes(row)
        days_txt = (_big(10.0 ** lg) if lg < 300 else f"10^{lg:,.0f}" if np.isfinite(lg) else "no end of")
        g0 = float(out["goodput"][i]) if "goodput" in out else 0.0
        lead = "the analytic goodput is 0, and " if not g0 > 0 else ""
        return (f"simulate: {lead}the model for a run of this length, with each "
                f"{', '.join(cls[:-1]) + ' or ' + cls[-1] if len(cls) > 1 else cls[0]} failure restarting it (no tier "
                "that saves within the run survives "
                f"{'it' if len(cls) == 1 else 'them'}), gives about {days_txt} days"
                + (f", about {_big(n_fail)} failures per run" if np.isfinite(n_fail) else "")
                + f" (MTBF {1 / rate_h:.3g} h): more failures than the {MAX_EXPECTED_FAILURES:,} the Monte Carlo "
                "simulates one by one; " + (rel.restart_tail_text(row) or "the run does not finish in practice"))
    days = expected_days(out, i, conservative=True)
    n = expected_rounds(out, i)
    if not np.isfinite(days):
        # the headline never finishes and the round cap may be small, but the finite-run figure (a
        # lower bound where several tiers recover failures) can already need far more failures than
        # the Monte Carlo takes on: refused (review 22: a 1,578 h async PFS save, 5.6e238 days,
        # ran 15,684 rounds of 1,000 trials for minutes with no output)
        low = expected_days(out, i, conservative=False)
        n_low = rate_h * low * 24.0
        if np.isfinite(low) and n_low > MAX_EXPECTED_FAILURES:
            return (f"simulate: the analytic goodput is 0 and even the renewal model for a run of this length needs "
                    f"about {_big(low)} days, about {_big(n_low)} failures per run (MTBF {1 / rate_h:.3g} h), more than the "
                    f"{MAX_EXPECTED_FAILURES:,} the Monte Carlo simulates one by one; the run does not finish in "
                    "practice")
    if not n > MAX_EXPECTED_FAILURES:
        return None
    n_txt = _big(n)
    if not np.isfinite(days):
        why = rel.zero_goodput_reason(_batch.row(out, i)) or "goodput is 0"
        return (f"simulate: the analytic model expects this run never to finish ({why}); the Monte Carlo would "
                f"simulate about {n_txt} failures per run before giving up, more than the {MAX_EXPECTED_FAILURES:,} "
                "it takes on")
    head = float(out["time_to_train_days"][i])
    model = (f"at goodput {float(out['goodput'][i]):.3g}, the analytic model" if days == head
             else "by the analytic model for a run of this length")
    d_txt = _big(days)
    stands = ("the analytic time to train and goodput stand for it" if days == head else
              f"the analytic model's {d_txt} days stand for it (its notes say why the headline is longer)")
    tail = rel.failure_free_text(row)  # review 49b: most runs may meet no failure at all
    return (f"simulate: about {n_txt} failures per run expected (MTBF {1 / rate_h:.3g} h over {d_txt} days "
            f"{model}), more than the {MAX_EXPECTED_FAILURES:,} the Monte Carlo simulates one by one; {stands} "
            "(docs/reliability.md compares the two where both run)" + (f"; {tail}" if tail else ""))


def unfinished_note(df: pd.DataFrame) -> str | None:
    """A sentence for runs the simulator gave up on (``finished`` False: the round cap of
    :func:`round_cap` was hit, time to train inf; the sentence gives the cap, the failures of such a
    run), or None when every trial finished."""
    if "finished" not in df or bool(df["finished"].all()):
        return None
    unf = ~df["finished"].astype(bool)
    k, n = int(unf.sum()), len(df)
    # An unfinished run failed in every round, so its failures are the cap itself (found by review
    # 15j: "10× the failures the run should take" beside 15,410 failures, 28× the 541 of the run's
    # failure-free length, for a run the analytic model never expects to finish).
    cap = f" {int(df.loc[unf, 'n_failures'].max()):,} failures each," if "n_failures" in df else ""
    return (f"{k:,} of {n:,} simulated runs never finished (time to train ∞): they were stopped after{cap} "
            f"the simulator's cap ({MAX_ROUNDS_FACTOR:g}× the failures expected over the run's failure-free wall "
            f"time, or over the analytic time to train where longer and finite, {RESTART_ROUNDS_FACTOR:g}× where "
            f"failures restart the run from the beginning, + {MAX_ROUNDS_FLOOR:,}). "
            "The failures come faster than the run can make progress between them: recoveries that the failures "
            "during them keep extending, or checkpoints saved too rarely (or none that survives the common failure "
            "classes), so that each failure loses the work since a long-ago save. The analytic model's notes name "
            "the cause for this scenario.")


def _se(x: np.ndarray) -> float:
    """Standard error of the mean of ``x`` (n >= 2 finite values), ``std(ddof=1)/sqrt(n)``, with the
    deviations taken from ``x[0]`` (the variance does not change with a shift): equal values give
    exactly 0, where ``np.std`` of them gave rounding noise, 6.2e-16 M$ for 10 failure-free runs
    (review 50)."""
    return float(np.std(x - x[0], ddof=1) / np.sqrt(x.size))


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """P10 / P50 / P90 and mean of the main per-trial columns, one row per metric.

    Columns: ``metric``, ``mean``, ``mean_se``, ``p10``, ``p50``, ``p90``. ``mean_se`` is the
    standard error of the mean, ``std(ddof=1)/sqrt(n)`` — the uncertainty of the mean from the
    number of trials, where P10–P90 is the spread of single runs (review 49: no surface stated
    it); for the pooled goodput, by the delta method on ``1/mean(1/g)``: ``G²·std(1/g)/sqrt(n)``.
    NaN with one trial or where a run never finishes. The rows are
    ``time_to_train_days``, ``cost_usd`` (where the runs have it), ``goodput``, ``n_failures``,
    ``lost_work_h``, ``recovery_h``.
    The goodput row's ``mean`` is the pooled goodput, the work of all runs over their wall time:
    every run does the same work W, so it is W / mean(T), the harmonic mean of the per-run
    goodputs W/T (0 when a run never finishes) — the quantity the headline ``goodput``
    (W / E[T]) estimates. The plain mean of the per-run W/T is larger (Jensen's inequality),
    by a visible amount on runs of a few failures (review 14c, docs/reliability.md).
    """
    rows = []
    for m in ("time_to_train_days", "cost_usd", "goodput", "n_failures", "lost_work_h", "recovery_h"):
        if m not in df:
            continue
        v = df[m].to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):  # inf − inf between two unfinished trials
            q = np.percentile(v, [10, 50, 90])
        if not np.isnan(v).any():
            # A NaN here comes from an unfinished run's inf in numpy's interpolation: inf − inf
            # (the quantile is inf), or inf × 0 where the quantile falls exactly on the last finite
            # value (found by review 15j: 10 finished runs of 1 to 10 days and one unfinished gave
            # P90 inf for the 10th value, 10 days, while goodput's P10 read 0.1 = 1/10).
            pos = np.array([10, 50, 90]) / 100.0 * (v.size - 1)
            exact = np.sort(v)[np.floor(pos).astype(int)]
            q = np.where(np.isnan(q), np.where(pos == np.floor(pos), exact, np.inf), q)
        p10, p50, p90 = (float(x) for x in q)
        finite = v.size > 1 and bool(np.isfinite(v).all())
        if m == "goodput":  # pooled: W / mean(T) = 1 / mean(1 / g); a run that never finishes → 0
            # equal values (one trial): that value itself, not 1 / (1 / g), an ulp off the
            # percentiles beside it (review 14j: 1 trial gave mean 0.9750138071025605, P50 ...604)
            mean = (0.0 if (v <= 0.0).any() else float(v[0]) if (v == v[0]).all()
                    else float(1.0 / np.mean(1.0 / v)))
            se = float(mean ** 2 * _se(1.0 / v)) if finite and (v > 0.0).all() else float("nan")
        else:
            # about the first value, as _se: equal values give that value itself, not an ulp off the
            # percentiles beside it (review 50: cost mean 10677586.182613816 beside P50 ...814)
            mean = float(v[0] + np.mean(v - v[0])) if finite else float(np.mean(v))
            se = _se(v) if finite else float("nan")
        rows.append({"metric": m, "mean": mean, "mean_se": se, "p10": p10, "p50": p50, "p90": p90})
    return pd.DataFrame(rows, columns=["metric", "mean", "mean_se", "p10", "p50", "p90"])
