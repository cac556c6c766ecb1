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

import os as _os
import signal as _signal
import sys as _sys


def _interrupted_while_loading(signum, frame):  # pragma: no cover (timing: a Ctrl-C in the first 0.6 s)
    _sys.stderr.write("planner: interrupted\n")
    raise SystemExit(130)


def _restore_sigint() -> None:
    """Python's own Ctrl-C handler (KeyboardInterrupt) back where :data:`_CLI_START` replaced it;
    :func:`planner.cli.main` calls it first, inside its own ``except KeyboardInterrupt``."""
    if _signal.getsignal(_signal.SIGINT) is _interrupted_while_loading:
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)


def _cli_start() -> bool:
    """Whether this process is the command line: the installed ``planner`` script (``sys.argv[0]``
    named exactly ``planner``), or ``python -m planner`` (while ``-m`` locates the package,
    ``sys.argv[0]`` is ``"-m"``, and ``sys.orig_argv`` names the module after it). Not a script
    of another name (``planner.v2.py``), nor ``python -m other`` whose package imports planner
    (review 50b: both matched the first rule, and their own ``except KeyboardInterrupt`` never ran)."""
    argv0 = _sys.argv[0] if _sys.argv else ""
    if _os.path.basename(argv0) in ("planner", "planner.exe"):
        return True
    if argv0 != "-m":
        return False
    orig = list(getattr(_sys, "orig_argv", ()))
    for i, a in enumerate(orig[1:], 1):
        if a == "-m":
            return i + 1 < len(orig) and orig[i + 1] == "planner"
        if a.startswith("-m") and not a.startswith("--"):  # -mplanner
            return a[2:] == "planner"
    return False


#: This process is the command line (:func:`_cli_start`). Ctrl-C while the engine's libraries load
#: (pandas: about 0.6 s) then exits with status 130 and one line, as it does later, instead of a
#: traceback through ``import pandas`` (review 50); :func:`planner.cli.main` restores Python's
#: handler. An import from any other program (a script, a notebook, the app) keeps Python's own.
_CLI_START = _cli_start()
if _CLI_START and _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
    try:
        _signal.signal(_signal.SIGINT, _interrupted_while_loading)
    except ValueError:  # not the main thread: signals are the main thread's
        pass

from . import _malloc  # noqa: E402

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
