"""Review 50 (2026-12-07): a new user's check of the CLI, the API and the app.

- a plan that never finishes (steady-state goodput 0) is a verdict on stderr, as "Does not fit" is;
- Ctrl-C while the command line loads its libraries exits 130 with one line (no traceback), and
  Ctrl-C twice during a parallel run stops and reaps the workers instead of hanging at exit;
- the Monte Carlo's standard error of identical trials is exactly 0, not rounding noise;
- a name over 200 characters is refused in the house's words.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import planner

ROOT = Path(__file__).resolve().parents[1]


def _default_sigint() -> None:
    """preexec_fn of the Ctrl-C tests' processes: SIGINT at its default disposition. A test run
    started in the background of a shell (``pytest &``, CI runners) inherits SIGINT *ignored*,
    and Python then installs no KeyboardInterrupt handler at all, so the child would not see
    the Ctrl-C these tests send."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _env(**extra) -> dict:
    env = dict(os.environ)
    env.update(extra)
    return env


# --------------------------------------------------------------------------------------
# goodput 0 on stderr
# --------------------------------------------------------------------------------------
def test_a_plan_that_never_finishes_is_a_warning_on_stderr():
    """The default preset's link cut inside its checkpoint list keeps only the host-memory tier,
    which no node, GPU or cluster failure leaves readable (hardware/storage.json: survives process
    failures only), so every such failure restarts training from the beginning: goodput 0, an
    infinite time. The CLI says so on stderr, exit status 0, as it does for "Does not fit"."""
    link = "http://localhost:8501/?p=default&ck=host_memory%3Aauto"
    p = subprocess.run([sys.executable, "-m", "planner", "evaluate", "--link", link, "--format", "json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr
    warn = [ln for ln in p.stderr.splitlines() if ln.startswith("planner: warning: ")]
    assert len(warn) == 1 and warn[0].startswith("planner: warning: Goodput is 0: no enabled checkpoint tier "
                                                 "survives a failure of class gpu, node, cluster"), p.stderr
    import json
    res = json.loads(p.stdout)["results"]
    assert res["goodput"] == 0.0 and res["time_to_train_days"] == "inf"
    # the preset as it is (host memory + PFS): no verdict on stderr
    q = subprocess.run([sys.executable, "-m", "planner", "evaluate", "--preset", "default", "--format", "json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert q.returncode == 0 and "warning" not in q.stderr, q.stderr


# --------------------------------------------------------------------------------------
# Ctrl-C
# --------------------------------------------------------------------------------------
# A sitecustomize that sends this process SIGINT when the first import of pandas is looked up:
# Ctrl-C at a fixed point of the command line's loading (planner/__init__ → engine → pandas),
# where the reviewer's Ctrl-C 0.3 s after the start landed, without a race on the clock.
_SITECUSTOMIZE = textwrap.dedent("""
    import os, signal, sys

    class _CtrlCAtPandas:
        fired = False

        def find_spec(self, name, path=None, target=None):
            if name == "pandas" and not _CtrlCAtPandas.fired:
                _CtrlCAtPandas.fired = True
                os.kill(os.getpid(), signal.SIGINT)
            return None

    sys.meta_path.insert(0, _CtrlCAtPandas())
""")


@pytest.fixture
def ctrl_c_at_pandas(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    return _env(PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))


def test_ctrl_c_while_the_command_line_loads_exits_130_with_one_line(ctrl_c_at_pandas):
    """README: "130 on Ctrl-C". Before review 50 a Ctrl-C in the first ~0.6 s (while pandas
    loads) printed a 40-line traceback through ``import pandas``."""
    p = subprocess.run([sys.executable, "-m", "planner", "sweep", "--preset", "default"], capture_output=True,
                       text=True, cwd=ROOT, env=ctrl_c_at_pandas, timeout=300, preexec_fn=_default_sigint)
    assert (p.returncode, p.stderr, p.stdout) == (130, "planner: interrupted\n", "")
    script = Path(sys.executable).with_name("planner")  # the installed command (pyproject [project.scripts])
    if script.exists():
        q = subprocess.run([str(script), "sweep", "--preset", "default"], capture_output=True, text=True, cwd=ROOT,
                           env=ctrl_c_at_pandas, timeout=300, preexec_fn=_default_sigint)
        assert (q.returncode, q.stderr) == (130, "planner: interrupted\n")


def test_a_program_importing_the_engine_keeps_pythons_own_ctrl_c(ctrl_c_at_pandas, tmp_path):
    """Only the command line gets the quiet exit: a script that imports planner gets Python's
    KeyboardInterrupt, which it may catch (a library must not exit its caller's process)."""
    prog = tmp_path / "my_script.py"
    prog.write_text("try:\n    import planner\nexcept KeyboardInterrupt:\n    print('caught')\n")
    p = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True, cwd=tmp_path,
                       env=ctrl_c_at_pandas, timeout=300, preexec_fn=_default_sigint)
    assert (p.returncode, p.stdout.strip()) == (0, "caught"), p.stderr


def test_the_command_line_puts_pythons_handler_back():
    """After loading, planner.cli.main answers Ctrl-C itself (its ``except KeyboardInterrupt``):
    the load-time handler is gone once main runs."""
    code = ("import signal, sys\nsys.argv = ['planner', 'presets', 'models', '--format', 'csv']\n"
            "import planner, planner.cli\n"
            "loading = signal.getsignal(signal.SIGINT) is planner._interrupted_while_loading\n"
            "import io, contextlib\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    rc = planner.cli.main()\n"
            "print(loading, rc, signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300,
                       preexec_fn=_default_sigint)
    assert p.stdout.split() == ["True", "0", "True"], p.stderr


def test_two_ctrl_c_during_a_parallel_run_stop_and_reap_the_workers():
    """Two SIGINTs 50 ms apart (``timeout -s INT`` signals the process, then its group; or an
    impatient user) while forked workers run. Before review 50 the second one broke off the pool's
    polite shutdown: both workers stayed alive, waiting on the task queue, and the interpreter's
    exit joined them for ever (checked on c6c48d8: "interrupted 2", then no exit in 30 s).
    Now the workers are stopped and reaped before the KeyboardInterrupt leaves."""
    code = textwrap.dedent("""
        import multiprocessing, os, signal, threading, time
        from planner import engine

        def fn(x):
            time.sleep(0.3)
            return x

        def two():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            os.kill(os.getpid(), signal.SIGINT)

        try:
            try:
                for i, v in enumerate(engine.forked_results(fn, range(16), 2, None)):
                    if i == 0:
                        threading.Thread(target=two).start()
                    time.sleep(0.05)
                print("not interrupted", flush=True)
            except KeyboardInterrupt:
                print("interrupted", len(multiprocessing.active_children()), flush=True)
                time.sleep(0.5)  # where a second interrupt not yet delivered lands
        except KeyboardInterrupt:
            pass
    """)
    if not (sys.platform.startswith("linux") and "fork" in __import__("multiprocessing").get_all_start_methods()):
        pytest.skip("the forked pool is Linux-only (engine.workers_for: serial elsewhere)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                       preexec_fn=_default_sigint)
    assert (p.returncode, p.stdout.strip()) == (0, "interrupted 0"), (p.stdout, p.stderr)


def test_a_parallel_run_still_returns_every_result_in_order():
    """The SIGINT mask around the pool's start and the new stop path change nothing for a run
    that completes: every item, in order, and the pool's workers gone afterwards."""
    import multiprocessing

    from planner import engine

    got = list(engine.forked_results(abs, [-3, 1, -2, 5, -8], 2, None))
    assert got == [3, 1, 2, 5, 8]
    assert multiprocessing.active_children() == []
    import signal
    if hasattr(signal, "pthread_sigmask"):  # the mask is back as it was
        assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())


def test_a_worker_error_stops_the_other_workers():
    """A worker's exception reaches the caller; the other workers are stopped, not waited for
    (they would each have slept 20 s)."""
    import multiprocessing
    import time

    from planner import engine

    t0 = time.monotonic()
    with pytest.raises(ZeroDivisionError):
        list(engine.forked_results(_sleep_or_fail, [0, 20, 20, 20], 2, None))
    assert time.monotonic() - t0 < 15.0
    assert multiprocessing.active_children() == []


def _sleep_or_fail(x):
    import time

    if x == 0:
        return 1 / x
    time.sleep(x)
    return x


# --------------------------------------------------------------------------------------
# Monte Carlo standard error; the name's refusal
# --------------------------------------------------------------------------------------
def test_standard_error_of_identical_trials_is_zero():
    """std of n equal values is 0 (hand); np.std of ten equal values can be rounding noise (the
    CLI's table printed 6.2e-16 M$ for ten failure-free runs: review 50)."""
    from planner.simulate import summarize

    v = 1e7 / 3
    df = pd.DataFrame({"time_to_train_days": [201.6] * 10, "cost_usd": [v] * 10, "goodput": [0.97] * 10,
                       "n_failures": [0.0] * 10, "lost_work_h": [0.0] * 10, "recovery_h": [0.0] * 10})
    # the noise the shift removes (np.std's mean of ten equal values is not exactly that value)
    assert np.std(np.full(10, v), ddof=1) > 0.0 and np.std(np.full(10, 201.6), ddof=1) > 0.0
    se = summarize(df).set_index("metric")["mean_se"]
    assert (se == 0.0).all(), se
    # and unequal values keep the textbook value: x = 1, 2, 3, 4 → std(ddof=1) = sqrt(5/3), / sqrt(4)
    df2 = pd.DataFrame({"n_failures": [1.0, 2.0, 3.0, 4.0]})
    assert summarize(df2).set_index("metric").loc["n_failures", "mean_se"] == pytest.approx(np.sqrt(5 / 3) / 2,
                                                                                          rel=1e-15)


def test_simulate_cli_prints_zero_standard_error_without_failures():
    p = subprocess.run([sys.executable, "-m", "planner", "simulate", "--preset", "default", "--set",
                        "reliability.rate_scale=0", "--trials", "10", "--format", "json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr
    t = pd.DataFrame(__import__("json").loads(p.stdout))
    assert len(t) == 6 and (t["mean_se"] == 0.0).all(), t
    # ten identical runs: the mean is the runs' value, as P10 / P50 / P90 (no ulp apart)
    assert (t["mean"] == t["p50"]).all() and (t["p10"] == t["p90"]).all(), t


def test_a_long_name_is_refused_in_the_house_words():
    s = planner.load_preset("default").to_json_dict()
    s["name"] = "n" * 201
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(s)
    assert e.value.lines[0].startswith("name: 201 characters; allowed at most 200 (got 'nnn"), e.value.lines
    s["name"] = "n" * 200
    assert planner.evaluate(s).scenario["name"] == "n" * 200


@pytest.mark.parametrize("link, page, button", [
    ("http://localhost:8501/validate?v_set=calibration", "a Validate page link (…/validate?…)",
     "the Validate page's Open on the Plan page"),
    ("?v_set=calibration", "a Validate page link (v_set)", "the Validate page's Open on the Plan page"),
    ("http://localhost:8501/compare?c_n=2", "a Compare page link (…/compare?…)", "Compare's Open in Plan"),
])
def test_a_page_link_that_holds_no_plan_names_its_own_pages_button(link, page, button):
    """Review 50: a Validate page link was told to use "Compare's Open in Plan", a button the
    Validate page does not have (it has "Open on the Plan page", app_pages/validate.py)."""
    from planner import cli

    with pytest.raises(cli.UsageError) as e:
        cli.load_scenario_input(None, None, link=link)
    (line,) = e.value.lines
    assert line.startswith(f"--link: {page}") and button in line, line
    other = "Compare's Open in Plan" if "Validate" in button else "Open on the Plan page"
    assert other not in line
