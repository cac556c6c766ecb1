"""Review 13g: what the documentation says against what the code does.

The expected values here come from the project's own documents (README.md, docs/*.md), which
are the sources being checked, and from hand derivations stated beside each test (divisors of a
layer count, the schema's documented bounds); never from the engine's output.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

import planner
from planner import catalog
from planner.schema import InputError

ROOT = Path(__file__).resolve().parents[1]
INPUTS_MD = (ROOT / "docs" / "inputs.md").read_text(encoding="utf-8")
SWEEP_MD = (ROOT / "docs" / "sweep.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _doc_example(rule_start: str) -> list[str]:
    """The backticked example messages in the docs/inputs.md rules table row starting with
    ``rule_start`` (the row's last cell), each cut at a trailing ``…`` (the doc abbreviates)."""
    rows = [ln for ln in INPUTS_MD.splitlines() if ln.startswith("| " + rule_start)]
    assert len(rows) == 1, rule_start
    last_cell = rows[0].rstrip(" |").rsplit(" | ", 1)[1]
    return [m.split("…")[0].rstrip() for m in re.findall(r"`([^`]+)`", last_cell)]


def _lines(preset: str, **sets) -> list[str]:
    d = planner.load_preset(preset).to_json_dict()
    for path, value in sets.items():
        node = d
        *head, leaf = path.split("__")
        if head[:1] == ["model"] and isinstance(d["model"], str):  # a catalogue id: its fields inline
            d["model"] = catalog.resolve_model(d["model"]).model_dump(mode="json")
        for k in head:
            node = node.setdefault(k, {})
        node[leaf] = value
    with pytest.raises(InputError) as e:
        planner.evaluate(d)
    return e.value.lines


# each case: (start of the rules-table row, which of its examples, the input that the example names)
CASES = [
    ("positive integers", 0, "default", dict(parallelism__tp=0)),
    ("counts 1 to 10,000,000", 0, "default", dict(parallelism__pp=100_001, parallelism__dp=None)),
    ("counts 1 to 10,000,000", 1, "default", dict(training__tokens_total=0)),
    ("hardware figures", 0, "default", dict(cluster__overrides={"nic_bw_per_gpu_bytes_per_s": 1e-300})),
    ("`dp` omitted", 0, "default", dict(parallelism__tp=3, parallelism__dp=None)),
    ("`dp` given", 0, "default", dict(parallelism__dp=16)),
    ("heads divisible by TP", 0, "default", dict(cluster__n_gpus=768, parallelism__tp=3, parallelism__dp=None)),
    # GPT-3: 96 heads, TP 8; 12 KV heads divide 96 but neither divide nor are divided by 8
    ("KV heads", 0, "gpt3-175b-a100-1024", dict(model__n_kv_heads=12)),
    ("experts divisible by EP", 0, "mixtral-8x7b-h100-64", dict(parallelism__ep=3)),
    ("global batch divisible", 0, "default", dict(training__global_batch_size=500)),
    ("layers vs `pp·vpp`", 0, "default", dict(cluster__n_gpus=768, parallelism__pp=3, parallelism__vpp=1, parallelism__dp=None,
                                               parallelism__schedule="1f1b", parallelism__layer_split="even")),
    ("`recompute_layers`", 0, "default", dict(parallelism__recompute_layers=4)),
    ("`training.elementwise`", 0, "default", dict(training__elementwise="compiled")),
    ("`training.fp8_scaling`", 0, "default", dict(training__fp8_scaling="colwise")),
]


@pytest.mark.parametrize("rule, k, preset, sets", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_inputs_doc_error_examples_are_the_messages_given(rule, k, preset, sets):
    """Found by review 13g: the KV-heads example left out the 'parallelism.tp = 8:' the message
    starts with; the PP / VPP ceilings (review 13e) and the tokens ceiling were not in the table."""
    want = _doc_example(rule)[k]
    lines = _lines(preset, **sets)
    assert any(ln.startswith(want) for ln in lines), (want, lines)


def test_inputs_doc_states_the_pipeline_ceilings_the_schema_refuses_beyond():
    """docs/inputs.md: pp 1 to 100,000 and vpp 1 to 1,000; one past each is refused naming the
    range, and the bound itself is accepted by the field."""
    assert "`parallelism.pp` 1 to 100,000" in INPUTS_MD and "`parallelism.vpp` 1 to 1,000" in INPUTS_MD
    assert any("parallelism.vpp: allowed 1 to 1,000" in ln for ln in _lines("default", parallelism__vpp=1_001))
    assert any("parallelism.pp: allowed 1 to 100,000" in ln for ln in _lines("default", parallelism__pp=100_001))


def test_sweep_doc_vpp_candidates_for_126_layers():
    """docs/sweep.md: VPP candidates 2 … vpp_max (16) are the powers of two and every divisor of
    n_layers. By hand for Llama 3 405B's 126 = 2·3²·7 layers: divisors 2, 3, 6, 7, 9, 14 and powers
    4, 8, 16 → {2, 3, 4, 6, 7, 8, 9, 14, 16}; the interleaved rows of the preset's sweep use only
    these, and vpp 7 (the preset's own, not a power of two) among them."""
    want = {2, 3, 4, 6, 7, 8, 9, 14, 16}
    df = planner.sweep(planner.load_preset("llama3-405b-h100-16k"), feasible_only=False)
    got = set(df.loc[df["schedule"] == "interleaved", "vpp"].astype(int))
    assert got <= want and 7 in got and 9 in got


def test_sweep_doc_candidate_caps_are_refused_with_the_range():
    """docs/sweep.md: a pp candidate above schema.PP_MAX (100,000) or a vpp candidate above
    schema.VPP_MAX (1,000) is refused."""
    s = planner.load_preset("default")
    with pytest.raises(InputError, match=r"1 to 1,000 \(parallelism\.vpp\)"):
        planner.sweep(s, vpp=[1_001], top=1)
    with pytest.raises(InputError, match=r"1 to 100,000 \(parallelism\.pp\)"):
        planner.sweep(s, pp=[100_001], top=1)
    assert "`schema.PP_MAX` (100,000" in SWEEP_MD and "`schema.VPP_MAX` = 1,000" in SWEEP_MD


def run_readme_python_block(tmp_path, monkeypatch) -> dict:
    """README.md's Python block run as written, in ``tmp_path`` holding the config.json it reads
    (Llama 3.1 8B's from tests/data/hf_configs.json): its namespace."""
    block = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    cfg = json.loads((ROOT / "tests" / "data" / "hf_configs.json").read_text())["llama-3.1-8b"]["config"]
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    exec(compile(block, "README.md", "exec"), ns)  # noqa: S102 - the documented example itself
    return ns


def test_readme_python_example_runs_as_written(tmp_path, monkeypatch):
    """README.md's Python block, run as written, gives the types its comments name."""
    ns = run_readme_python_block(tmp_path, monkeypatch)
    assert isinstance(ns["r"], planner.Report) and 0.0 < ns["r"].results["mfu"] < 1.0
    assert isinstance(ns["t"], pd.DataFrame) and len(ns["t"]) == 2
    assert isinstance(ns["df"], pd.DataFrame) and len(ns["df"]) == 20
    assert len(ns["mc"]) == 10_000
    assert isinstance(ns["m"], planner.ModelSpec) and ns["d"]["model"]["n_layers"] == 32


def test_cli_trials_help_gives_the_range_simulate_enforces(capsys):
    """README / docs/inputs.md: n_trials 1 to 1,000,000; the CLI's help says the same, and the
    API refuses one past each end."""
    from planner.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["simulate", "--help"])
    helptext = " ".join(capsys.readouterr().out.split())
    assert "1 to 1,000,000" in helptext and "(1 to 1,000,000)" in README
    s = planner.load_preset("default")
    for n in (0, 1_000_001):
        with pytest.raises(InputError, match=r"n_trials: an integer from 1 to 1,000,000"):
            planner.simulate(s, n_trials=n)
