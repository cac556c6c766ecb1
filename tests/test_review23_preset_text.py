"""Figures the scenario presets' descriptions quote from the planner's own output (review 23).

A description is shown by ``planner presets`` and on the dashboard, so a figure it quotes from
the planner ("Predicted ~403 TFLOP/s/GPU") must be what ``planner.evaluate`` gives today. These
tests check the *text* against the engine, as the docs tests do for docs/*.md; whether the
engine is right is tested against published runs in test_review13e_presets.py. Found by review:
three descriptions still quoted figures from before later model changes (416 against 403.5
TFLOP/s, 5,406 against 5,147 tokens/s, 6,730 against 6,713 tokens/s).
"""

from __future__ import annotations

import re

import pytest

import planner


def _desc(name: str) -> str:
    return planner.list_presets()[name]


def _num(s: str) -> float:
    return float(s.replace(",", ""))


def _ev(name: str, **par) -> dict:
    d = planner.load_preset(name).to_json_dict()
    for path, v in par.items():
        sect, key = path.split("__")
        d[sect][key] = v
    return planner.evaluate(d).results


def _n(name: str) -> int:
    return planner.load_preset(name).to_json_dict()["cluster"]["n_gpus"]


def _quoted(name: str, pattern: str) -> tuple[str, ...]:
    m = re.search(pattern, _desc(name))
    assert m, f"{name}: the description no longer says {pattern!r}; update this test with it"
    return m.groups()


def test_405b_tflops_and_first_stage_memory():
    tf, = _quoted("llama3-405b-h100-16k", r"Predicted ~([\d,.]+) TFLOP/s/GPU")
    gib, = _quoted("llama3-405b-h100-16k", r"first stage at ~([\d.]+) GiB")
    r = _ev("llama3-405b-h100-16k")
    assert round(r["tflops_per_gpu"]) == _num(tf)  # "~403": the figure rounded
    assert round(r["mem_total_bytes"] / 2**30) == _num(gib)
    z1, = _quoted("llama3-405b-h100-16k", r"\((\d+) GiB with ZeRO-1's whole gradients\)")
    assert round(_ev("llama3-405b-h100-16k", parallelism__zero_stage=1)["mem_total_bytes"] / 2**30) == _num(z1)


def test_qwen3_tokens_per_gpu_and_its_shortfall():
    pct, pred, pub = _quoted("qwen3-235b-gb200-256",
                             r"predicts ([\d.]+) % less throughput .*?\(([\d,]+) vs ([\d,]+) tokens/s per GPU")
    tok = _ev("qwen3-235b-gb200-256")["tokens_per_s"] / _n("qwen3-235b-gb200-256")
    assert round(tok) == _num(pred)
    assert 100 * (1 - _num(pred) / _num(pub)) == pytest.approx(_num(pct), abs=0.05)


def test_torchtitan_8b_memory_and_throughput():
    name = "llama31-8b-torchtitan-h100-8"
    gib, = _quoted(name, r"Predicted memory ([\d.]+) GiB")
    tok, pct, pub = _quoted(name, r"about ([\d,]+) tokens/s/GPU, ([\d.]+) % above the published ([\d,]+)")
    r = _ev(name)
    assert round(r["mem_total_bytes"] / 2**30, 1) == _num(gib)
    t = r["tokens_per_s"] / _n(name)
    assert round(t) == _num(tok)
    assert 100 * (_num(tok) / _num(pub) - 1) == pytest.approx(_num(pct), abs=0.05)


def test_mixtral_tflops():
    pred, pct = _quoted("mixtral-8x7b-h100-64", r"the model predicts about (\d+) \(\+(\d+) %\)")
    pub, = _quoted("mixtral-8x7b-h100-64", r"Published: (\d+) TFLOP/s per GPU")
    tf = _ev("mixtral-8x7b-h100-64")["tflops_per_gpu"]
    assert round(tf) == _num(pred)
    assert round(100 * (_num(pred) / _num(pub) - 1)) == _num(pct)


def test_gpt3_pp16_step_time():
    s, = _quoted("gpt3-175b-a100-1024", r"the model gives about (\d+) s with --set parallelism.pp=16 "
                                         r"--set parallelism.dp=8")
    assert round(_ev("gpt3-175b-a100-1024", parallelism__pp=16, parallelism__dp=8)["step_time_s"]) == _num(s)


def test_deepseek_memory_without_recompute():
    gib, = _quoted("deepseek-v3-h800-2048", r"without recomputation the estimate \((\d+) GiB with DualPipe\)")
    r = _ev("deepseek-v3-h800-2048", parallelism__recompute="none")
    assert round(r["mem_total_bytes"] / 2**30) == _num(gib)
