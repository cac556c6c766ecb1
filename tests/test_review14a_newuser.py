"""Regression tests from review 14a: a new user on a fresh clone who knows only README.md
(the app started with scripts/app.sh, every README / docs command run as written).

Expected values come from the project's documents (README.md, docs/sweep.md), never from the
code's own output."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

import planner
from planner.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SWEEP_MD = (ROOT / "docs" / "sweep.md").read_text(encoding="utf-8")
DEFAULT_RECOMPUTE = {"none", "selective", "full"}  # docs/sweep.md, "What is enumerated": recompute


# --- README's sweep command ------------------------------------------------------------------

def _readme_recompute_lists() -> list[list[str]]:
    return [m.split(",") for m in re.findall(r"--recompute ([a-z_,]+)", README)]


def test_readme_recompute_option_keeps_the_default_modes():
    """README showed `planner sweep ... [--recompute selective,full,op_sac]` as the way to add
    op_sac; the list replaces the default none,selective,full (the CLI's help), so it silently
    dropped `none`, the recompute mode of docs/sweep.md's best 405B split."""
    lists = _readme_recompute_lists()
    assert lists, "README no longer shows --recompute"
    for modes in lists:
        assert DEFAULT_RECOMPUTE <= set(modes), modes
        assert "op_sac" in modes


def test_readme_sweep_command_finds_the_documented_best_split(capsys):
    """README's sweep line with its --recompute list, run as written (top 10): the best row is
    docs/sweep.md's best 405B split, "TP 4 × PP 64 × CP 4 × DP 16, zero-bubble, micro-batch 1, no
    recompute, ZeRO-1 (MFU 0.47, 67 days)" — with `selective,full,op_sac` it was a selective row."""
    line = next(l for l in README.splitlines() if "sweep --preset llama3-405b-h100-16k" in l)
    args = shlex.split(line.split("#")[0].replace("[", "").replace("]", ""))
    assert args[0].endswith("planner")
    assert ("TP 4 × PP 64 × CP 4 × DP 16, zero-bubble, micro-batch 1, no recompute, ZeRO-1 (MFU 0.47, 67 days"
            in " ".join(SWEEP_MD.split()))
    assert main(args[1:] + ["--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    best = rows[0]
    assert (best["tp"], best["pp"], best["cp"], best["dp"]) == (4, 64, 4, 16)
    assert (best["schedule"], best["micro_batch_size"], best["recompute"], best["zero_stage"]) == (
        "zero_bubble", 1, "none", 1)
    assert round(best["mfu"], 2) == 0.47 and round(best["time_to_train_days"]) == 67


def test_docs_sweep_recompute_list_replaces_the_default(capsys):
    """docs/sweep.md: `--recompute op_sac` sweeps op_sac alone."""
    assert "`--recompute op_sac` sweeps op_sac alone" in " ".join(SWEEP_MD.split())
    assert main(["sweep", "--preset", "default", "--recompute", "op_sac", "--top", "5",
                 "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 5 and {r["recompute"] for r in rows} == {"op_sac"}


def test_readme_python_block_evaluates_the_imported_model(tmp_path, monkeypatch):
    """README's Python block ended with the imported model put into the 70B variant (pp·vpp =
    20 stages), which `planner.evaluate` refused for Llama 3.1 8B's 32 layers; the block now
    sets the uneven split and evaluates it."""
    from test_review13g_docs import run_readme_python_block

    r8 = run_readme_python_block(tmp_path, monkeypatch)["r8"]
    assert isinstance(r8, planner.Report)
    # Llama 3.1 8B's published total, 8.03 B (docs/inputs.md: within 0.5 %)
    assert abs(r8.results["params_total"] / 8.03e9 - 1) < 0.005
    assert r8.scenario["parallelism"]["layer_split"] == "uneven" and r8.scenario["parallelism"]["tp"] == 4


# --- scripts/_venv.sh: the first-run install -------------------------------------------------

def _fake_python(path: Path, version: str, pip_fails: bool = False, no_pip: bool = False) -> Path:
    """A stand-in interpreter: answers the version probe with ``version`` (status 0 when it
    is 3.11 or newer, as the real probe), and `-m pip` / `-m venv` as told (``no_pip``: a venv
    made without pip, `-m pip --version` fails)."""
    ok = tuple(int(x) for x in version.split(".")) >= (3, 11)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "#!/usr/bin/env bash\n"
        f'if [ "$1" = "-c" ]; then echo {version}; exit {0 if ok else 1}; fi\n'
        'if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then mkdir -p "$3/bin"; '
        f'cp "$0" "$3/bin/python"; exit 0; fi\n'
        + ('if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then echo "No module named pip" >&2; exit 1; fi\n'
           if no_pip else 'if [ "$1" = "-m" ] && [ "$2" = "pip" ] && [ "$3" = "--version" ]; then exit 0; fi\n')
        + 'if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then '
        + ('echo "ERROR: Could not find a version that satisfies the requirement streamlit>=1.50" >&2; exit 1; '
           if pip_fails else "exit 0; ")
        + "fi\n"
        "exit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "_venv.sh", repo / "scripts" / "_venv.sh")
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    # app.sh's own line after the install, without starting a server
    (repo / "scripts" / "app.sh").write_text(
        '#!/usr/bin/env bash\nEXTRAS="" source "$(dirname "$0")/_venv.sh"\necho INSTALLED\n')
    return repo


def _run(repo: Path, python: Path | None = None):
    env = {k: v for k, v in os.environ.items() if k != "PYTHON"}
    if python is not None:
        env["PYTHON"] = str(python)
    return subprocess.run(["bash", "scripts/app.sh"], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=60)


def test_venv_script_refuses_an_old_python_before_creating_the_venv(tmp_path):
    """README: "fresh machine, Python >= 3.11". With python3 = 3.10 the script made a 3.10
    .venv, pip's refusal was swallowed (`|| true`) and a ModuleNotFoundError traceback followed
    — on every later run too, PYTHON=python3.11 or not, since .venv already existed."""
    repo = _checkout(tmp_path)
    r = _run(repo, _fake_python(tmp_path / "bin" / "python3.10", "3.10"))
    assert r.returncode == 1, r
    assert "3.10" in r.stderr and ">= 3.11" in r.stderr and "PYTHON=" in r.stderr
    assert not (repo / ".venv").exists()
    assert "INSTALLED" not in r.stdout


def test_venv_script_names_a_stale_old_venv(tmp_path):
    repo = _checkout(tmp_path)
    _fake_python(repo / ".venv" / "bin" / "python", "3.9")
    r = _run(repo, _fake_python(tmp_path / "bin" / "python3.12", "3.12"))
    assert r.returncode == 1, r
    assert ".venv uses Python 3.9" in r.stderr and "rm -rf .venv" in r.stderr


def test_venv_script_stops_when_pip_fails(tmp_path):
    """A failed `pip install -e .` (no package index reachable) went on as if installed:
    `|| true` hid pip's status. It now stops with status 1 and says so, writing no stamp (the
    next run tries again)."""
    repo = _checkout(tmp_path)
    r = _run(repo, _fake_python(tmp_path / "bin" / "python3.12", "3.12", pip_fails=True))
    assert r.returncode == 1, r
    assert "Could not find a version" in r.stdout + r.stderr  # pip's own message is shown
    assert "installing the project into .venv failed" in r.stderr
    assert not (repo / ".venv" / ".clusterplan-installed").exists()
    assert "INSTALLED" not in r.stdout


def test_venv_script_names_a_venv_without_pip(tmp_path):
    """Review 15g: a .venv made without pip (python3-venv missing on Debian) failed every later
    run with "a package index must be reachable", which blames the wrong thing."""
    repo = _checkout(tmp_path)
    r = _run(repo, _fake_python(tmp_path / "bin" / "python3.12", "3.12", no_pip=True))
    assert r.returncode == 1, r
    assert ".venv has no pip" in r.stderr and "rm -rf .venv" in r.stderr and "python3-venv" in r.stderr
    assert "package index" not in r.stderr and "INSTALLED" not in r.stdout


def test_venv_script_installs_once_with_a_good_python(tmp_path):
    repo = _checkout(tmp_path)
    py = _fake_python(tmp_path / "bin" / "python3.12", "3.12")
    r = _run(repo, py)
    assert r.returncode == 0 and "INSTALLED" in r.stdout, r
    stamp = repo / ".venv" / ".clusterplan-installed"
    assert stamp.exists()
    r2 = _run(repo, py)
    assert r2.returncode == 0 and "INSTALLED" in r2.stdout


# --- docs/inputs.md: the rule table's messages, as the CLI prints them ---------------------

INPUTS_MD = (ROOT / "docs" / "inputs.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("sets, start", [
    (["parallelism.tp=3"], "`parallelism: tp·pp·cp = 3·4·1 = 12"),
    (["cluster.overrides.power_limit_w=800"], "`cluster.overrides.power_limit_w = 800"),
    (["parallelism.tp=3", "cluster.n_gpus=96"], "`parallelism.tp = 3 must divide"),
])
def test_inputs_md_rule_messages_are_the_whole_cli_line(sets, start, capsys):
    """docs/inputs.md's example messages on the default preset, compared with the whole line the
    CLI prints (a user greps for it): two had lost their tails ("; choose n_gpus as a multiple
    of 12", the power-limit range's reason) and the heads rule's example was unreachable with
    the default's 1,024 GPUs (the divisibility error came first)."""
    doc = INPUTS_MD[INPUTS_MD.index(start) + 1:]
    doc = doc[:doc.index("`")]
    args = ["evaluate", "--preset", "default"]
    for s in sets:
        args += ["--set", s]
    assert main(args) == 2
    # one line per problem (review 49: tp = 3 on 1,024 GPUs also names the heads rules): the quote is
    # one of them, whole
    lines = [ln.removeprefix("planner: ") for ln in capsys.readouterr().err.strip().splitlines()]
    assert doc in lines, (doc, lines)


# --- scripts/test.sh: Chromium for the browser tests ----------------------------------------

def _test_sh_checkout(tmp_path: Path, tools: dict[str, str]) -> tuple[Path, dict]:
    """A checkout with the real scripts/test.sh + _venv.sh, a stand-in .venv whose `-m pytest`
    prints CLUSTERPLAN_CHROMIUM, and a PATH holding only the tools a fresh machine needs (no
    chromium, no apt-get) plus ``tools`` (name -> script body)."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    for f in ("_venv.sh", "test.sh"):
        shutil.copy(ROOT / "scripts" / f, repo / "scripts" / f)
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    py = _fake_python(repo / ".venv" / "bin" / "python", "3.12")
    body = py.read_text().replace(
        "exit 0\n",
        'if [ "$1" = "-m" ] && [ "$2" = "pytest" ]; then echo "PYTEST chromium=${CLUSTERPLAN_CHROMIUM:-unset}"; fi\nexit 0\n', 1)
    py.write_text(body)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("bash", "env", "sha256sum", "cut", "cat", "grep", "dirname", "mkdir", "cp"):
        (bindir / tool).symlink_to(shutil.which(tool))
    for name, script in tools.items():
        (bindir / name).write_text("#!/usr/bin/env bash\n" + script)
        (bindir / name).chmod(0o755)
    env = {"PATH": str(bindir), "HOME": str(tmp_path),
           "CLUSTERPLAN_CHROMIUM": str(tmp_path / "no" / "chromium")}
    return repo, env


def test_test_sh_says_how_to_get_chromium_when_it_cannot_install_it(tmp_path):
    """README: scripts/test.sh "installs ... Debian's Chromium for the browser tests": only as
    root with apt-get. Otherwise it said nothing and the browser tests failed later, one by one;
    it now says why and how before pytest starts."""
    repo, env = _test_sh_checkout(tmp_path, {"id": "echo 1000\n"})
    r = subprocess.run(["bash", "scripts/test.sh"], cwd=repo, env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r
    assert "PYTEST" in r.stdout
    assert "browser tests" in r.stderr and "apt-get install -y chromium" in r.stderr
    assert "CLUSTERPLAN_CHROMIUM" in r.stderr


def test_test_sh_points_the_browser_tests_at_a_chromium_on_path(tmp_path):
    """A chromium on PATH but not at the conftest's default path is handed to the tests."""
    repo, env = _test_sh_checkout(tmp_path, {"id": "echo 1000\n", "chromium": "exit 0\n"})
    r = subprocess.run(["bash", "scripts/test.sh"], cwd=repo, env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r
    assert f"PYTEST chromium={tmp_path / 'bin' / 'chromium'}" in r.stdout
    assert "warning" not in r.stderr
