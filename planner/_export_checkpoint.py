"""The checkpoint part of the launch-configuration exports (:mod:`planner.export`).

The engine chooses each checkpoint tier's interval in seconds (the renewal-model optimum of
docs/reliability.md, or the user's ``interval_s``); frameworks take it in optimizer steps and save
at a step's end. :func:`checkpoint_plan` converts, and the three writers put the steps where each
framework reads them — for the checkpoints the framework will actually take: a tier it cannot hold
is left out of the plan it writes (TorchTitan has no node-local tier), and a launch that saves
synchronously (Megatron-FSDP's ``fsdp_dtensor`` format; this DeepSpeed file) gets the optimum for
synchronous saves, each with a note giving the planner's goodput both ways (review 41a: the async
optimum of the 405B preset, written for a synchronous Megatron-FSDP launch, cost 3.8 days).

Framework facts used here, each recorded with its source in ``tests/data/framework_flags.json``:

* Megatron-LM (``arguments.py`` at 000c4ac2; ``training.py`` / ``checkpointing.py`` at the stored
  86df799d / 699abf15): ``--save-interval`` (int), ``--async-save`` (only the ``torch_dist``
  format), ``--non-persistent-save-interval`` with ``--non-persistent-ckpt-type local`` (needs
  nvidia_resiliency_ext and ``--non-persistent-local-ckpt-dir``; ``in_memory`` is refused by
  ``validate_args``); every interval save needs ``--save`` (and ``--save`` needs
  ``--save-interval``); the non-persistent save is skipped on a step the persistent one takes;
  the end of training saves when the last step is not a ``--save-interval`` step.
* TorchTitan (``job_config.py`` class ``Checkpoint`` at 6404b932): ``enable_checkpoint``,
  ``interval`` (steps), ``async_mode`` (disabled / async / async_with_pinned_mem), one ``folder``
  under ``[job] dump_folder``.
* DeepSpeed: the config's ``checkpoint`` section holds ``tag_validation``, ``load_universal``,
  ``use_node_local_storage`` and ``parallel_write``, no interval; ``engine.save_checkpoint(save_dir)``
  must be called by every process (its docstring).
"""

from __future__ import annotations

import math
from typing import Callable, Iterable, NamedTuple

from .schema import Scenario, validate_scenario

#: Tiers a framework writes as its persistent checkpoint, and the node-local ones.
PERSISTENT_KINDS = ("pfs", "object_store")
LOCAL_KINDS = ("host_memory", "local_nvme")
_WORDS = {"host_memory": "host memory", "local_nvme": "local NVMe", "pfs": "parallel file system",
          "object_store": "object store"}


class TierPlan(NamedTuple):
    """One enabled checkpoint tier's interval as the planner evaluates it, in a framework's terms."""

    kind: str          # schema.TIER_KINDS: host_memory, local_nvme, pfs, object_store
    interval_s: float  # the interval in use [s]: the given one (raised to the floor), or the optimum
    why: str           # where it comes from: "the planner's optimum", "the given 60 s", ...
    never: bool        # the solver's "never" (reliability.INTERVAL_MAX_S): not saved to
    steps: int         # in optimizer steps: max(1, round(interval_s / step_time_s), ceil(floor / step)); 0 if never
    replicas: int      # peer-node copies (checkpoint.tiers[i].replicas)


class CheckpointPlan(NamedTuple):
    """The enabled tiers (in the scenario's order) of one evaluated scenario, with its step time
    [s], goodput (fraction) and time to train [days]."""

    tiers: list[TierPlan]
    step_time_s: float
    goodput: float
    time_to_train_days: float

    def saved(self, kinds: Iterable[str]) -> list[TierPlan]:
        """The tiers of ``kinds`` that are saved to, the most frequent first."""
        kinds = tuple(kinds)
        return sorted((t for t in self.tiers if t.kind in kinds and not t.never), key=lambda t: t.interval_s)


def tier_kind(tier) -> str:
    """A checkpoint tier's kind (a catalogue name or an inline tier)."""
    from . import catalog

    return catalog.resolve_storage(tier).kind


def checkpoint_plan(scenario: Scenario | dict, *, kinds: Iterable[str] | None = None,
                    sync: bool = False) -> CheckpointPlan:
    """Each enabled checkpoint tier's interval in optimizer steps, as frameworks take it.

    The intervals are the engine's (``planner.evaluate``: ``ckpt_{kind}_interval_opt_s``, the
    renewal-model optimum of docs/reliability.md, or the user's ``interval_s`` raised to the
    shortest the job can save at) over the step time, rounded to the nearest whole step, at least 1
    and never below that shortest interval (an async save longer than a step: ``ceil(save / step)``):
    Megatron-LM (``--save-interval``) and TorchTitan (``[checkpoint] interval``) save at a step's end
    every N steps; near the optimum the goodput is flat, so rounding costs little.

    Parameters
    ----------
    scenario : a :class:`Scenario` or its JSON dict (validated; :class:`InputError` when bad).
    kinds : the tier kinds the launch holds (default: all): the others are left out of the
        scenario before it is evaluated, so the intervals are the optimum without them.
    sync : evaluate with synchronous saves (``checkpoint.async = false``): a launch that cannot
        save asynchronously.

    Returns
    -------
    CheckpointPlan : the tiers, the step time [s], the goodput and the time to train [days] of the
        scenario so changed.
    """
    from . import engine  # (import here: the other exports need no evaluation)
    from .reliability import INTERVAL_MAX_S, INTERVAL_MIN_S

    s = validate_scenario(scenario)
    if kinds is not None or (sync and s.checkpoint.async_):
        sj = s.to_json_dict()
        if kinds is not None:
            keep = tuple(kinds)
            sj["checkpoint"]["tiers"] = [u for u, use in zip(sj["checkpoint"]["tiers"], s.checkpoint.tiers)
                                         if tier_kind(use.tier) in keep]
        if sync:
            sj["checkpoint"]["async"] = False
        s = validate_scenario(sj)
    r = engine.evaluate(s).results
    step_s = float(r["step_time_s"])
    out: list[TierPlan] = []
    for use in s.checkpoint.tiers:
        kind = tier_kind(use.tier)
        iv = float(r[f"ckpt_{kind}_interval_opt_s"])
        if math.isnan(iv) or any(t.kind == kind for t in out):
            continue
        never = iv >= INTERVAL_MAX_S * (1.0 - 1e-9)
        ok_step = step_s > 0 and math.isfinite(step_s)
        # the shortest interval the engine saves at (reliability.interval_floor_s): one step (at least
        # INTERVAL_MIN_S) and, with async saves, the save itself
        floor = max(step_s if ok_step else INTERVAL_MIN_S, INTERVAL_MIN_S)
        save_s = float(r.get(f"ckpt_{kind}_save_s", float("nan")))
        if s.checkpoint.async_ and math.isfinite(save_s) and save_s > floor:
            floor, floor_what = save_s, "the async save's time"
        else:
            floor_what = "one step" if ok_step and floor <= step_s * (1.0 + 1e-12) else f"{INTERVAL_MIN_S:g} s"
        # the nearest whole step, never below the floor (review 44f: an async save of 3.27 s on a 2.84 s
        # step rounded to every step, a new save starting before the last one ends)
        steps = 0 if never or not ok_step else max(1, round(iv / step_s), math.ceil(floor / step_s * (1.0 - 1e-12)))
        if use.interval_s is not None:
            why = (f"the given {use.interval_s:.4g} s, raised to {floor_what}" if iv > use.interval_s * (1.0 + 1e-12)
                   else "the given")
        else:
            why = ("the planner's optimum" if never or iv > floor * (1.0 + 1e-9) else
                   f"the planner's optimum, held at {floor_what}")
        out.append(TierPlan(kind, iv, why, never, steps, int(use.replicas)))
    return CheckpointPlan(out, step_s, float(r["goodput"]), float(r["time_to_train_days"]))


def _steps_text(n: int) -> str:
    """"1 step", "3,576,279 steps"."""
    return "1 step" if n == 1 else f"{n:,} steps"


def _every(n: int) -> str:
    return "every step" if n == 1 else f"every {_steps_text(n)}"


def _when(t: TierPlan, plan: CheckpointPlan, n_steps: int, past_end: str) -> str:
    """"every 6 steps (the planner's optimum 43.37 s over 6.889 s a step)"."""
    more = f"; more than the run's {_steps_text(n_steps)}: {past_end}" if t.steps > n_steps else ""
    sep = ": " if "," in t.why else " "  # "the given 0.001 s, raised to one step: 4.871 s over ..."
    return f"{_every(t.steps)} ({t.why}{sep}{t.interval_s:.4g} s over {plan.step_time_s:.4g} s a step{more})"


def _g(x: float) -> str:
    if not (math.isfinite(x) and x > 0):
        return "0 in the steady state"
    return f"{x:.4f}" if x >= 5e-5 else f"{x:.2g}"


def _gd(plan: CheckpointPlan) -> str:
    """"goodput 0.9217, 80.44 d", or at goodput 0 a pointer to the evaluate note's run figure
    (review 41c: "goodput 0.0000, inf d" for a run that finishes in 0.29 d)."""
    if plan.goodput > 0 and math.isfinite(plan.time_to_train_days):
        return f"goodput {plan.goodput:.4f}, {plan.time_to_train_days:.4g} d"
    return "goodput 0 in the steady state: planner evaluate's note 'Goodput is 0' gives the run's time"


def _never_notes(plan: CheckpointPlan, how_final: str, who: str = "the planner's plan") -> list[str]:
    notes = []
    for t in plan.tiers:
        if t.never:
            notes.append(f"checkpoint tier {_WORDS[t.kind]}: "
                         + ("given an interval the planner reads as never" if t.why.startswith("the given") else
                            "the planner's optimum never saves to it (its saves would only stall; see the "
                            "interval's explanation)") + "; not written.")
    if plan.tiers and not any(not t.never for t in plan.tiers):
        notes.append(f"{who} saves no checkpoint during the run; " + how_final)
    return notes


def _sync_note(s: Scenario, plan: CheckpointPlan, why: str) -> list[str]:
    """A note where the launch saves synchronously and the scenario's saves are async."""
    if not s.checkpoint.async_ or not plan.tiers:
        return []
    a = checkpoint_plan(s)
    given = any(t.why.startswith("the given") for t in plan.tiers)
    what = ("the given ones" if given else
            "the planner's optimum for synchronous saves")
    return [f"{why}: the checkpoint intervals here are {what} ({_gd(plan)}; with the scenario's async saves "
            + (_gd(a) if a.goodput > 0 else "goodput 0 too") + ")."]


def megatron_checkpoint(s: Scenario, arg: Callable, fsdp_format: bool, notes: list[str], n_steps: int) -> None:
    """The checkpoint flags of the Megatron export (``arg(flag, value)`` appends one) and their notes.

    The persistent tier saved most often (PFS or object store) is ``--save-interval N`` with
    ``--async-save`` for an async scenario in the ``torch_dist`` format; with Megatron-FSDP
    (``fsdp_dtensor``) the launch saves synchronously and N is the synchronous optimum. The path is
    the user's: a note says to add ``--save DIR``. The node-local tier saved most often is Megatron's
    non-persistent ``local`` checkpoint: its flags are in a note (they need nvidia_resiliency_ext and
    a directory), with the ``--save-interval`` to use without it where that differs."""
    run_async = s.checkpoint.async_ and not fsdp_format
    plan = checkpoint_plan(s, sync=not run_async)
    if not plan.tiers:
        notes.append("no checkpoint tier in the scenario: no checkpoint flags written.")
        return
    if s.checkpoint.async_ and not run_async:
        notes += _sync_note(s, plan, "--async-save runs only with --ckpt-format torch_dist (its help), not the "
                                     "fsdp_dtensor format Megatron-FSDP needs, so this launch saves synchronously")
    pers, locs = plan.saved(PERSISTENT_KINDS), plan.saved(LOCAL_KINDS)
    end = "saved at the end only (Megatron's final save)"
    if pers:
        p = pers[0]
        arg("--save-interval", p.steps)
        if run_async:
            arg("--async-save")
        notes.append(f"checkpoints: --save-interval {p.steps} = the {_WORDS[p.kind]} tier "
                     f"{_when(p, plan, n_steps, end)}; add --save DIR (and --load DIR to resume) with your path: "
                     "Megatron saves on an interval only with --save set.")
        for o in pers[1:]:
            notes.append(f"Megatron's --save holds one persistent tier: the {_WORDS[o.kind]} {_every(o.steps)} is not "
                         f"written (the {_WORDS[p.kind]} is saved more often).")
    if locs:
        lo = locs[0]
        where = ("/dev/shm/clusterplan_local_ckpt (a tmpfs: host memory)" if lo.kind == "host_memory" else
                 "/path/to/local_nvme/ckpt (a directory on the node's NVMe: yours)")
        flags = (f"--non-persistent-save-interval {lo.steps} --non-persistent-ckpt-type local "
                 f"--non-persistent-local-ckpt-dir {where}")
        if pers:
            text = (f"checkpoint tier {_WORDS[lo.kind]} {_when(lo, plan, n_steps, 'never saved')}: Megatron holds a "
                    f"node-local tier as a non-persistent 'local' checkpoint — add {flags}; not written: it needs "
                    "nvidia_resiliency_ext (validate_args).")
            if lo.steps % pers[0].steps == 0:
                text += (" Every such step is also a --save-interval step, and Megatron skips the non-persistent save "
                         "on those (training.py), so it would never run: it adds nothing here.")
            else:
                alone = checkpoint_plan(s, kinds=PERSISTENT_KINDS, sync=not run_async)
                pa = alone.saved(PERSISTENT_KINDS)
                if pa and pa[0].steps != pers[0].steps:
                    text += (f" Without it, use --save-interval {pa[0].steps} (the optimum with the "
                             f"{_WORDS[pa[0].kind]} alone: goodput {_g(alone.goodput)} against {_g(plan.goodput)} with "
                             "both).")
        else:
            text = (f"checkpoint tier {_WORDS[lo.kind]} {_when(lo, plan, n_steps, 'never saved')}: Megatron holds a "
                    f"node-local tier as a non-persistent 'local' checkpoint — add {flags}, with --save DIR and a "
                    f"--save-interval above the run's {_steps_text(n_steps)} (Megatron saves only with --save, which needs "
                    "--save-interval: validate_args; such an interval saves the persistent checkpoint at the end "
                    "only); not written: it needs nvidia_resiliency_ext.")
        if lo.replicas:
            text += (f" The plan's {lo.replicas} peer-node cop{'y is' if lo.replicas == 1 else 'ies are'} not "
                     "written.")
        notes.append(text)
        for o in locs[1:]:
            notes.append(f"Megatron's non-persistent checkpoint holds one node-local tier: the {_WORDS[o.kind]} "
                         f"{_every(o.steps)} is not written (the {_WORDS[lo.kind]} is saved more often).")
    notes += _never_notes(plan, "none written; add --save DIR for Megatron's final save of the trained model.")


def torchtitan_checkpoint(s: Scenario, notes: list[str], n_steps: int) -> list[str]:
    """The ``[checkpoint]`` section of the TorchTitan export (lines) and its notes: one folder, so
    the persistent tier saved most often, at the optimum without the node-local tiers (TorchTitan
    has none; their interval and the goodput with them in a note); ``async_mode = "async"`` for an
    async scenario."""
    if not s.checkpoint.tiers:
        notes.append("no checkpoint tier in the scenario: [checkpoint] not written (TorchTitan's default: no "
                     "checkpoints).")
        return []
    plan = checkpoint_plan(s, kinds=PERSISTENT_KINDS)
    pers = plan.saved(PERSISTENT_KINDS)
    out: list[str] = []
    has_local = any(tier_kind(u.tier) in LOCAL_KINDS for u in s.checkpoint.tiers)
    if pers:
        p = pers[0]
        out = ["", "[checkpoint]", "enable_checkpoint = true", f"interval = {p.steps}"]
        if s.checkpoint.async_:
            out.append('async_mode = "async"')
        notes.append(f"checkpoints: [checkpoint] interval = {p.steps} = the {_WORDS[p.kind]} tier "
                     f"{_when(p, plan, n_steps, 'no save within the run')}, saved in "
                     "{job.dump_folder}/{checkpoint.folder} (folder default 'checkpoint'): point [job] dump_folder "
                     f"at the {_WORDS[p.kind]} (a path every node writes to).")
        for o in pers[1:]:
            notes.append(f"TorchTitan's [checkpoint] has one folder: the {_WORDS[o.kind]} {_every(o.steps)} is not "
                         f"written (the {_WORDS[p.kind]} is saved more often).")
    if has_local:
        full = checkpoint_plan(s)
        locs = full.saved(LOCAL_KINDS)
        it = "them" if len(locs) > 1 else "it"
        if locs:
            named = ", ".join(f"{_WORDS[t.kind]} {_every(t.steps)}" for t in locs)
            same = abs(plan.goodput - full.goodput) < 5e-5
            cmp = (f"goodput {_g(plan.goodput)} either way" if same else
                   f"goodput {_g(plan.goodput)} without {it}, {_g(full.goodput)} with {it}")
            if not pers:
                tail = f"this launch saves no checkpoint the plan relies on ({cmp})."
            elif pers[0].why.startswith("the planner's optimum"):
                tail = f"the interval above is the optimum without {it}: {cmp}."
            else:  # review 41c: a given interval was called "the optimum without it"
                tail = f"the interval above is the given one: {cmp}."
            notes.append(f"checkpoint tier{'s' if len(locs) > 1 else ''} {named} of the plan: TorchTitan's "
                         "[checkpoint] has one folder and no node-local tier; not written, so " + tail)
        # a node-local tier the plan never saves to is named, as the other exports do (review 41c)
        notes += [n for n in _never_notes(full, "") if any(n.startswith(f"checkpoint tier {_WORDS[k]}:")
                                                            for k in LOCAL_KINDS)]
    notes += _never_notes(plan, "[checkpoint] not written.", "this TorchTitan launch (one folder, no node-local "
                          "tier)")
    return out


def deepspeed_checkpoint_notes(s: Scenario, n_steps: int) -> list[str]:
    """The checkpoint intervals of a DeepSpeed export, as notes: DeepSpeed's config has no save
    interval; the training loop calls ``engine.save_checkpoint`` on every rank. This file sets no
    asynchronous checkpoint engine, so the steps are the synchronous optimum."""
    plan = checkpoint_plan(s, sync=True)
    if not plan.tiers:
        return ["no checkpoint tier in the scenario: no checkpoint interval to set."]
    saved = plan.saved(PERSISTENT_KINDS + LOCAL_KINDS)
    notes: list[str] = []
    if saved:
        dirs = {"host_memory": "in host memory (a tmpfs such as /dev/shm)", "local_nvme": "on the node's NVMe",
                "pfs": "on the parallel file system", "object_store": "on the object store"}
        calls = "; ".join(f"{_when(t, plan, n_steps, 'no save within the run')} with DIR {dirs[t.kind]}"
                          for t in sorted(saved, key=lambda t: (t.kind in LOCAL_KINDS, t.interval_s)))
        local = any(t.kind in LOCAL_KINDS for t in saved)
        notes.append("checkpoints: DeepSpeed's config has no save interval (its \"checkpoint\" section holds "
                     "tag_validation, load_universal, use_node_local_storage and parallel_write): call "
                     "engine.save_checkpoint(DIR) on every rank (DeepSpeed: all processes must call it) " + calls
                     + (" (\"checkpoint\": {\"use_node_local_storage\": true} for a node-local DIR)" if local else "")
                     + ".")
    notes += _sync_note(s, plan, "this file sets no asynchronous checkpoint engine, so the saves are synchronous")
    notes += _never_notes(plan, "no save to schedule.")
    return notes
