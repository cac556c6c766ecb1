"""Fit the free constants of the step-time model on ../shared/validation/calibration.csv ONLY.

Usage::

    .venv/bin/python tools/calibrate.py            # fit and print, do not write
    .venv/bin/python tools/calibrate.py --write    # fit and write hardware/calibration.json

Method: coordinate search (no scipy). Each free constant in turn is set to the best value of
a grid inside its physical bounds, holding the others; rounds repeat until no constant moves
(at most ``--rounds``). The loss is the mean over source groups of
``median |e| + 0.5 · p90 |e|`` where ``e = predicted / published − 1`` of throughput, so that
every group counts the same however many rows it has (MosaicML has 61 of 98) and outliers
count as well as the middle. Sourced constants (MAMF fractions, link efficiencies, latencies,
HBM efficiency) are never fitted. Scenarios come from the project's single default rule for
unpublished settings, ``planner.validation.row_to_scenario``.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner import timing, validation  # noqa: E402

#: (path in the constants dict, lower bound, upper bound, grid points) — physical bounds.
FREE = [
    (("gemm_eff_scale", "ampere_16bit"), 0.5, 1.15, 66),
    (("gemm_eff_scale", "hopper_16bit"), 0.5, 1.15, 66),
    (("gemm_eff_scale", "hopper_fp8"), 0.4, 1.15, 76),
    (("gemm_ridge_mult",), 0.0, 4.0, 81),
    (("attn_eff_rel",), 0.2, 1.0, 81),
    (("tp_overlap_frac",), 0.0, 1.0, 41),
    (("dp_overlap_frac",), 0.0, 1.0, 41),
]


def _get(C, path):
    for k in path[:-1]:
        C = C[k]
    return C[path[-1]]


def _set(C, path, value):
    for k in path[:-1]:
        C = C[k]
    C[path[-1]] = float(value)


def group_stats(meta, err):
    out = {}
    for g in meta["group"].unique():
        e = np.abs(err[(meta["group"] == g).to_numpy()])
        e = e[np.isfinite(e)]
        out[g] = (float(np.median(e)), float(np.percentile(e, 90)), float(np.max(e)), len(e))
    return out


def loss(meta, err):
    st = group_stats(meta, err)
    return float(np.mean([m + 0.5 * p90 for m, p90, _, _ in st.values()]))


def fit(csv=None, rounds=6, verbose=True):
    b, meta, skipped = validation.calibration_batch(csv)
    C = timing.load_calibration()

    def evaluate(C):
        out = timing.stage(b, C)
        pred = validation.predicted_metric(meta, b, out["step_time_s"])
        return validation.relative_error(meta, pred)

    best = loss(meta, evaluate(C))
    if verbose:
        print(f"start loss {best:.4f}")
    for r in range(rounds):
        moved = False
        for path, lo, hi, npts in FREE:
            cur = _get(C, path)
            for val in np.linspace(lo, hi, npts):
                trial = copy.deepcopy(C)
                _set(trial, path, val)
                lv = loss(meta, evaluate(trial))
                if lv < best - 1e-9:
                    best, C, moved = lv, trial, True
            if verbose and _get(C, path) != cur:
                print(f"  round {r}: {'.'.join(path)} {cur:.4g} -> {_get(C, path):.4g}  loss {best:.4f}")
        if not moved:
            break
    sc = C["gemm_eff_scale"]
    sc["default"] = float(np.mean([sc["ampere_16bit"], sc["hopper_16bit"]]))
    err = evaluate(C)
    meta = meta.assign(n_skipped=len(skipped))
    return C, meta, err, best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default=None, help="calibration CSV (default: ../shared/validation/calibration.csv)")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--write", action="store_true", help="write the fitted values to hardware/calibration.json")
    args = ap.parse_args(argv)
    C, meta, err, best = fit(args.csv, args.rounds)
    print(f"\nfinal loss {best:.4f}")
    for path, *_ in FREE:
        print(f"  {'.'.join(path):32s} = {_get(C, path):.4g}")
    print(f"  gemm_eff_scale.default          = {C['gemm_eff_scale']['default']:.4g}")
    print("\ngroup                 n  median   p90    max")
    for g, (m, p90, mx, n) in group_stats(meta, err).items():
        print(f"  {g:20s} {n:3d}  {m:6.3f}  {p90:6.3f}  {mx:6.3f}")
    if args.write:
        path = ROOT / "hardware" / "calibration.json"
        raw = json.loads(path.read_text(encoding="utf-8"))
        for name in ("gemm_eff_scale", "gemm_ridge_mult", "attn_eff_rel", "tp_overlap_frac", "dp_overlap_frac"):
            v = C[name]
            raw[name]["value"] = {k: round(x, 4) for k, x in v.items()} if isinstance(v, dict) else round(v, 4)
        raw["_fit"] = {
            "how": "tools/calibrate.py coordinate search, loss = mean over source groups of median|e| + 0.5*p90|e|",
            "data": (f"../shared/validation/calibration.csv: {int(np.isfinite(err).sum())} rows compared, "
                     f"{int((~np.isfinite(err)).sum())} built but not compared (no published batch), "
                     f"{int(meta['n_skipped'].iloc[0])} skipped; scenarios from planner.validation.row_to_scenario"),
            "loss": round(best, 4),
        }
        path.write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
