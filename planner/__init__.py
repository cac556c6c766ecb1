"""clusterplan engine: will a training run fit, how fast, how often it fails, how to checkpoint,
and what goodput each dollar buys.

Headless (never imports streamlit)::

    import planner
    s = planner.load_preset("default")
    r = planner.evaluate(s)             # -> planner.Report
    t = planner.evaluate_many([s, ...]) # -> pandas.DataFrame
    df = planner.sweep(s)               # every valid split
    mc = planner.simulate(s, n_trials=10_000, seed=0)
"""

from __future__ import annotations

from . import _malloc

# glibc: keep the engine's 128 KiB temporaries on the heap instead of mmap / trim churn
# (planner/_malloc.py: the figures and the opt-out).
_malloc.tune()

from .catalog import CatalogError  # noqa: E402
from .engine import Report, evaluate, evaluate_many  # noqa: E402
from .hf_config import HFImport, import_hf_config, model_from_hf_config  # noqa: E402
from .presets import list_presets, load_preset  # noqa: E402
from .schema import InputError, ModelSpec, Scenario, format_errors  # noqa: E402

__all__ = [
    "CatalogError", "HFImport", "InputError", "ModelSpec", "Report", "Scenario", "evaluate", "evaluate_many",
    "format_errors", "import_hf_config", "list_presets", "load_preset", "model_from_hf_config", "simulate", "sweep",
]
__version__ = "0.1.0"


# The public functions share their names with their modules (planner.sweep.sweep,
# planner.simulate.simulate): import them last so the names bind to the functions.
from .simulate import simulate  # noqa: E402
from .sweep import sweep  # noqa: E402
