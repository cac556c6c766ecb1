"""Latency of one scenario through ``planner.evaluate`` and where it goes.

Target (issue): one scenario through ``planner.evaluate(scenario)`` in <= 5 ms.

    .venv/bin/python benchmarks/bench_evaluate.py [--preset default] [--repeat 200]
    .venv/bin/python benchmarks/bench_evaluate.py --all [--repeat 200]   # every preset, one line each

Prints the median of ``--repeat`` calls of evaluate and of each of its parts: flattening the
scenario into a batch of one (``batch.from_scenarios``), every pipeline stage on that batch,
the row of python scalars, each stage's ``report`` (memory: explain, per_stage and notes
sharing their work, as evaluate calls it) or its ``explain`` / ``per_stage`` / ``notes``, and
the ``Report`` construction. The parts are timed separately (warm), so their sum differs a
little from the whole. The machine is shared: medians, not means.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import planner
from planner import batch as _batch
from planner import engine


def _median_us(fn, repeat: int) -> float:
    fn()  # warm
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default=None, help="a preset id (default: default)")
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--all", action="store_true", help="only the latency of every preset, one line each")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error(f"--repeat: allowed 1 or more (got {args.repeat})")
    if args.all and args.preset is not None:
        ap.error("--preset and --all: give one (--all times every preset)")
    args.preset = args.preset or "default"
    if args.all:
        _all_presets(args.repeat)
        return
    s = planner.load_preset(args.preset)
    r = args.repeat
    print(f"preset {args.preset}, cpus={os.cpu_count()}, median of {r} calls")

    parts: list[tuple[str, float]] = []
    parts.append(("batch.from_scenarios", _median_us(lambda: _batch.from_scenarios([s]), r)))
    b = _batch.from_scenarios([s])
    out = dict(b)
    for mod in engine._stage_modules():
        inp = dict(out)
        parts.append((f"stage {mod.__name__.split('.')[-1]}", _median_us(lambda: mod.stage(inp), r)))
        out.update(mod.stage(inp))
    parts.append(("row of python scalars", _median_us(lambda: {k: v.item(0) for k, v in out.items()}, r)))
    row = {k: v.item(0) for k, v in out.items()}
    for mod in engine._stage_modules():
        name = mod.__name__.split(".")[-1]
        if hasattr(mod, "report"):  # evaluate's path: explain + per_stage + notes sharing their work
            parts.append((f"report {name}", _median_us(lambda: mod.report(row), r)))
            continue
        if hasattr(mod, "explain"):
            if name == "timing":  # explain of the row stage() just ran (as in evaluate)
                mod.stage({k: v for k, v in out.items()})
            parts.append((f"explain {name}", _median_us(lambda: mod.explain(row), r)))
        if hasattr(mod, "per_stage"):
            parts.append((f"per_stage {name}", _median_us(lambda: mod.per_stage(out, 0), r)))
        if hasattr(mod, "notes"):
            parts.append((f"notes {name}", _median_us(lambda: mod.notes(row), r)))
    rep = planner.evaluate(s)
    parts.append(("Report(...)", _median_us(lambda: engine.Report(
        scenario=s.to_json_dict(), results=rep.results, stages=rep.stages, explain=rep.explain,
        notes=rep.notes), r)))
    for name, us in parts:
        print(f"  {name:28s} {us:9.1f} us")
    print(f"  {'sum of parts':28s} {sum(us for _, us in parts):9.1f} us")

    lat = []
    planner.evaluate(s)
    for _ in range(r):
        t0 = time.perf_counter()
        planner.evaluate(s)
        lat.append(time.perf_counter() - t0)
    med = float(np.median(lat))
    print(f"planner.evaluate({args.preset}): median {med * 1e3:.2f} ms, min {min(lat) * 1e3:.2f} ms "
          f"over {r} (target <= 5 ms): {'OK' if med <= 5e-3 else 'ABOVE TARGET'}")


def _latency_ms(s, repeat: int) -> tuple[float, float]:
    planner.evaluate(s)  # warm
    lat = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        planner.evaluate(s)
        lat.append(time.perf_counter() - t0)
    return float(np.median(lat)) * 1e3, float(np.min(lat)) * 1e3


def _all_presets(repeat: int) -> None:
    ids = list(planner.list_presets())
    print(f"planner.evaluate per preset, cpus={os.cpu_count()}, median / min of {repeat} calls (target <= 5 ms)")
    worst = 0.0
    for pid in ids:
        med, mn = _latency_ms(planner.load_preset(pid), repeat)
        worst = max(worst, med)
        print(f"  {pid:30s} median {med:6.2f} ms   min {mn:6.2f} ms   {'OK' if med <= 5.0 else 'ABOVE TARGET'}")
    print(f"largest median {worst:.2f} ms (target <= 5 ms): {'OK' if worst <= 5.0 else 'ABOVE TARGET'}")


if __name__ == "__main__":
    main()
