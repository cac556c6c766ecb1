"""App run time (AppTest script run), the dashboard's speed targets.

Targets (issue): Plan page <= 0.5 s for the ``default`` scenario; Explore page <= 2 s at
16,384 GPUs. Prints cold (first run in the process, empty st.cache_data) and warm (rerun,
caches filled) wall times. Run: ``.venv/bin/python benchmarks/bench_app.py``.
"""

from __future__ import annotations

import time
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


def _time(path: str, params: dict, reruns: int = 3) -> tuple[float, float]:
    st.cache_data.clear()
    at = AppTest.from_file(path, default_timeout=600)
    at.query_params.update(params)
    t0 = time.perf_counter()
    at.run()
    cold = time.perf_counter() - t0
    assert not at.exception, at.exception
    warm = []
    for _ in range(reruns):
        t0 = time.perf_counter()
        at.run()
        warm.append(time.perf_counter() - t0)
    return cold, min(warm)


def main() -> None:
    # Warm the imports (numpy, pandas, altair, the catalogue) outside the timings.
    AppTest.from_file(str(ROOT / "app_pages" / "validate.py"), default_timeout=600).run()
    rows = [
        ("Plan, default", str(ROOT / "app_pages" / "plan.py"), {"p": "default"}, 0.5),
        ("Plan, llama3-405b-h100-16k", str(ROOT / "app_pages" / "plan.py"), {"p": "llama3-405b-h100-16k"}, 0.5),
        ("Explore, 16,384 GPUs (focused)", str(ROOT / "app_pages" / "explore.py"),
         {"p": "llama3-405b-h100-16k", "ex_space": "focused"}, 2.0),
        ("Compare, 2 presets", str(ROOT / "app_pages" / "compare.py"), {}, None),
        ("Validate", str(ROOT / "app_pages" / "validate.py"), {}, None),
    ]
    print(f"{'page':34s} {'cold s':>8s} {'warm s':>8s} {'target s':>9s}")
    for name, path, params, target in rows:
        cold, warm = _time(path, params)
        tgt = f"{target:.1f}" if target else "-"
        print(f"{name:34s} {cold:8.3f} {warm:8.3f} {tgt:>9s}")


if __name__ == "__main__":
    main()
