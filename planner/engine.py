"""The pipeline: columnar batch -> model stats -> memory -> step time -> checkpoint and
reliability -> cost, and the public ``evaluate`` / ``evaluate_many``.

Each stage is a pure function ``stage(b: Batch) -> Batch`` that reads the columns it needs
(inputs and earlier stages' outputs) and returns new columns; :func:`run_batch` merges them.
A stage module may also offer ``explain(row) -> dict[str, str]`` (a formula string with the
numbers plugged in, for one scenario) and the memory stage ``per_stage(b)`` (every pipeline
stage of one scenario).
"""

from __future__ import annotations

import importlib
import json
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import batch as _batch
from .batch import Batch
from .schema import InputError, Scenario, format_errors, validate_scenario

#: Stage modules in pipeline order; each exposes ``stage(b) -> dict of new columns``.
STAGE_MODULES: tuple[str, ...] = ("model_stats", "memory", "timing", "reliability", "cost")

#: Result columns of DESIGN §3, in display order.
RESULT_COLUMNS: tuple[str, ...] = (
    "params_total", "params_active", "model_flop_per_step",
    "mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes", "mem_activations_bytes",
    "mem_buffers_bytes", "mem_total_bytes", "hbm_bytes", "fits",
    "step_time_s", "t_compute_s", "t_tp_comm_s", "t_cp_comm_s", "t_ep_comm_s", "t_pp_bubble_s",
    "t_pp_p2p_s", "t_dp_comm_exposed_s", "t_offload_s", "t_optimizer_s", "tokens_per_s",
    "tflops_per_gpu", "mfu", "hfu",
    "failure_rate_per_h", "mtbf_h", "ckpt_bytes", "ckpt_interval_s", "ckpt_overhead_frac",
    "lost_work_frac", "restart_frac", "goodput",
    "time_to_train_days", "gpu_hours", "cost_usd", "energy_mwh",
)

#: Input columns kept beside the results in ``evaluate_many``'s table.
KEY_INPUT_COLUMNS: tuple[str, ...] = (
    "n_gpus", "tp", "pp", "dp", "dp_shard", "cp", "ep", "vpp", "micro_batch_size", "global_batch_size",
    "seq_len", "zero_stage", "recompute", "schedule", "sequence_parallel", "offload_optimizer",
)


def _stage_modules():
    mods = []
    for name in STAGE_MODULES:
        try:
            mods.append(importlib.import_module(f"planner.{name}"))
        except ModuleNotFoundError as e:  # a stage not built yet; tests check all are present
            if e.name != f"planner.{name}":
                raise
    return mods


#: Rows per chunk in :func:`run_batch`: small enough that a stage's temporaries stay in the
#: CPU caches (measured ~2x faster than one pass over 10^6 rows; benchmarks/bench_memory.py).
DEFAULT_CHUNK_ROWS = 16_384


def _run_stages(b: Batch) -> Batch:
    out = dict(b)
    for mod in _stage_modules():
        out.update(mod.stage(out))
    return out


def run_batch(b: Batch, *, chunk_rows: int = DEFAULT_CHUNK_ROWS, progress=None) -> Batch:
    """Run every stage over a batch; returns inputs and outputs as one dict of columns.

    Rows are independent (DESIGN §2), so a large batch is cut into chunks of ``chunk_rows``
    rows, each run through the same vectorised stages, and the columns are concatenated: the
    result is the same as one pass. ``progress(done_rows, total_rows)`` is called after each
    chunk.

    Shapes: every column (N,). No loop over rows. Raises ``ValueError`` for an empty batch.
    """
    n = _batch.size(b)
    if n == 0:
        raise ValueError("an empty batch: give at least one configuration")
    if n <= chunk_rows:
        out = _run_stages(b)
        if progress is not None:
            progress(n, n)
        return out
    parts = []
    for start in range(0, n, chunk_rows):
        parts.append(_run_stages(_batch.take(b, slice(start, start + chunk_rows))))
        if progress is not None:
            progress(min(start + chunk_rows, n), n)
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


class Report(BaseModel):
    """The evaluation of one scenario: the flat result columns of DESIGN §3 plus detail."""

    model_config = ConfigDict(extra="forbid")

    scenario: dict[str, Any]
    results: dict[str, float | bool] = Field(description="Every result column, SI units.")
    stages: list[dict[str, float]] = Field(
        default_factory=list, description="Memory per pipeline stage (bytes), first to last."
    )
    explain: dict[str, str] = Field(default_factory=dict, description="Formula strings with numbers plugged in.")
    notes: list[str] = Field(default_factory=list, description="Stated simplifications and fallbacks.")

    def __getattr__(self, item):  # r.mfu, r.step_time_s ...
        results = self.__dict__.get("results")
        if results is not None and item in results:
            return results[item]
        raise AttributeError(item)

    def to_series(self) -> pd.Series:
        return pd.Series(self.results)


def _py(v):
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return float(v)
    return v


def evaluate(scenario: Scenario | dict) -> Report:
    """Evaluate one scenario (a batch of one: the same vectorised code as a sweep).

    Parameters
    ----------
    scenario : Scenario or JSON-like dict (validated here, a Scenario object too; bad input
        raises :class:`planner.InputError`, a ``ValueError`` whose one-line messages, one per
        field, are in ``.lines``: ``parallelism.tp: ... (got 3)``).

    Returns
    -------
    Report (pydantic model) with
      * ``results``: dict of every result column (python floats / bools / str) — units in the
        names: ``*_bytes`` bytes (GiB = 2**30 B only for display), ``*_s`` seconds, ``*_h``
        hours, ``*_days``, ``*_flop*`` FLOP, ``*_usd`` dollars, ``*_mwh`` MWh, ``*_per_s`` /
        ``*_per_h`` rates; ``mfu``, ``hfu``, ``goodput`` fractions in [0, 1];
      * ``stages``: list (one dict per pipeline stage) of that stage's memory parts in bytes;
      * ``explain``: dict column -> the formula with the numbers plugged in;
      * ``notes``: list of the stated simplifications that apply to this scenario;
      * ``scenario``: the validated input as JSON.

    The models and their sources (papers, equations, tables): docs/memory.md (ZeRO, Korthikanti
    et al. 2022 activations), docs/timing.md (α-β collectives, Narayanan et al. 2021 bubbles,
    the fitted constants), docs/reliability.md (Young / Daly intervals, renewal goodput).

    Raises
    ------
    InputError — invalid scenario (field, value and allowed range named).
    """
    s = validate_scenario(scenario)
    b = _batch.from_scenarios([s])
    out = run_batch(b)
    row = _batch.row(out, 0)  # python scalars
    results = {k: row[k] for k in row if k not in b or k in ("hbm_bytes",)}
    explain: dict[str, str] = {}
    stages: list[dict[str, float]] = []
    notes: list[str] = []
    for mod in _stage_modules():
        if hasattr(mod, "explain"):
            explain.update(mod.explain(row))
        if hasattr(mod, "per_stage"):
            stages = mod.per_stage(out, 0)
        if hasattr(mod, "notes"):
            notes.extend(mod.notes(row))
    return Report(scenario=s.to_json_dict(), results=results, stages=stages, explain=explain, notes=notes)


def _unflatten(flat: dict[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for key, value in flat.items():
        if value is None or (isinstance(value, float) and np.isnan(value)):
            continue
        parts = str(key).split(".")
        cur = nested
        for p in parts[:-1]:
            cur = cur.setdefault(p, {})
        if isinstance(value, str) and value[:1] in "[{":
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                pass
        cur[parts[-1]] = _py(value)
    return nested


def to_batch(items: Sequence[Scenario | dict] | pd.DataFrame) -> tuple[Batch, list[str]]:
    """Scenarios, JSON dicts or a DataFrame of dotted scenario fields (``parallelism.tp``) ->
    (batch, names); a DataFrame of batch columns is refused (it would bypass validation).

    In a DataFrame of dotted fields an empty (NaN / None) cell means "not given": the
    schema's default applies (e.g. ``parallelism.dp`` derived). Raises ``ValueError`` naming
    the row and the fields of the first invalid row."""
    if isinstance(items, pd.DataFrame):
        if {"n_layers", "tp", "n_gpus"} <= set(items.columns):
            # found by review: a table of batch columns ran unvalidated (tp = 0 gave NaN, n_gpus = 0 inf)
            raise InputError(["evaluate_many: this table has the engine's batch columns (n_layers, tp, n_gpus, …), "
                              "which no schema checks; give dotted scenario fields (parallelism.tp, cluster.n_gpus, "
                              "…) or scenarios (planner.engine.run_batch runs a batch as it is, unchecked)"])
        scenarios = [_validate_row(i, _unflatten(r)) for i, r in enumerate(items.to_dict("records"))]
    else:
        scenarios = [_validate_row(i, s.model_dump(by_alias=True) if isinstance(s, Scenario) else s)
                     for i, s in enumerate(items)]
    return _batch.from_scenarios(scenarios), [s.name for s in scenarios]


def _validate_row(i: int, data) -> Scenario:
    """Validate row ``i``; a bad row raises :class:`InputError` (a ``ValueError``) naming the
    row and the fields, one line each in ``.lines``."""
    try:
        return Scenario.model_validate(data)
    except ValidationError as e:
        raise InputError([f"row {i}: {line}" for line in format_errors(e)]) from None
    except ValueError as e:  # a model id or a value pydantic did not wrap
        raise InputError([f"row {i}: {e}"]) from None


def evaluate_many(items: Iterable[Scenario | dict] | pd.DataFrame, *, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Evaluate many scenarios in one vectorised pass; one row each.

    Parameters
    ----------
    items : iterable of :class:`Scenario` / JSON-like dicts (mixed is fine), or a
        ``pandas.DataFrame`` of dotted scenario fields (``parallelism.tp``; an empty cell = the
        schema's default). Every row is validated (Scenario objects too); a table of the
        engine's batch columns is refused (:func:`run_batch` takes one unchecked).
    columns : sequence of str, optional — the result columns to return (default: ``name``,
        the key inputs ``KEY_INPUT_COLUMNS`` and every result column: ``RESULT_COLUMNS`` and
        the detail columns each stage adds).

    Returns
    -------
    pandas.DataFrame, one row per item in order (N rows). Units are in the column names:
    ``*_bytes`` bytes, ``*_s`` seconds, ``*_h`` hours, ``*_flop*`` FLOP, ``*_usd`` dollars,
    ``*_mwh`` MWh; ``mfu`` / ``hfu`` / ``goodput`` fractions. Formulas and their sources:
    docs/memory.md, docs/timing.md, docs/reliability.md.

    Raises
    ------
    InputError (a ``ValueError``) — not a list, an empty list, a table of batch columns, a row that fails validation
    (``row i: field: message``, one line each in ``.lines``), or an unknown name in ``columns``.
    """
    if isinstance(items, (Scenario, dict, str, bytes)) or items is None or not hasattr(items, "__iter__"):
        raise InputError([f"evaluate_many: give a list of scenarios (got {type(items).__name__}); "
                          "for a single scenario use planner.evaluate"])
    if not isinstance(items, pd.DataFrame):
        items = list(items)
    if len(items) == 0:
        raise InputError(["evaluate_many: no scenarios (an empty list or table): give at least one"])
    b, names = to_batch(items)
    out = run_batch(b)
    if columns is not None:
        if isinstance(columns, str):
            columns = [columns]
        unknown = [c for c in columns if c not in out]
        if unknown:
            raise InputError([f"evaluate_many: columns: unknown {', '.join(map(repr, unknown))}; allowed: any of "
                              f"{len(out)} columns, e.g. " + ", ".join(c for c in RESULT_COLUMNS[:8] if c in out)])
    return results_frame(out, names=names, columns=columns, inputs=b)


def results_frame(out: Batch, *, names=None, columns=None, inputs: Batch | None = None) -> pd.DataFrame:
    """The result columns of a run as a DataFrame (inputs named in KEY_INPUT_COLUMNS kept)."""
    if columns is None:
        keep = [c for c in KEY_INPUT_COLUMNS if c in out]
        keep += [c for c in RESULT_COLUMNS if c in out and c not in keep]
        input_keys = set(inputs) if inputs is not None else set()
        keep += [c for c in out if c not in keep and c not in input_keys]
    else:
        keep = list(columns)
    df = pd.DataFrame({c: out[c] for c in keep})
    if names is not None:
        df.insert(0, "name", list(names))
    return df
