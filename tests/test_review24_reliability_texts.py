"""Review 24 (reliability expert review): four texts of the reliability model.

1. The gap between the first-order and the renewal goodput was blamed on failures ("Failures are
   frequent ... (MTBF 3089 h)") where the save stalls make it: failure free, a stall s every τ of
   compute gives τ/(τ + s) = 1/(1 + s/τ) (the renewal model) against 1 − s/τ (first order).
2. The goodput-0 advice offered node-local copies with replicas for a cluster-class failure (it
   loses every node-local copy, replicated or not: hardware/storage.json) and to a one-node job
   (whose replicas the schema refuses).
3. The first-order explanation repeated its value ("= 0.9351 = 0.9351").
4. "1 writers"."""

from __future__ import annotations

import pytest

import planner


def _ev(preset: str, **sets):
    d = planner.load_preset(preset).to_json_dict()
    for path, v in sets.items():
        sec, key = path.split("__")
        d[sec][key] = v
    return planner.evaluate(d)


def test_stall_gap_is_not_blamed_on_failures():
    r = _ev("llama3-405b-h100-16k", reliability__rate_scale=0.001, checkpoint__async=False,
            checkpoint__tiers=[{"tier": "pfs", "interval_s": 1}])
    G, g1 = r.results["goodput"], r.results["goodput_first_order"]
    assert G - g1 > 0.1
    note = next(n for n in r.notes if n.startswith("Checkpoint stalls are long"))
    assert not any(n.startswith("Failures are frequent") for n in r.notes)
    # hand: Σ stall/τ = stall / interval (one tier; the interval is raised to one step)
    ov = r.results["ckpt_pfs_stall_s"] / r.results["ckpt_pfs_interval_opt_s"]
    assert g1 == pytest.approx(1.0 - ov, abs=1e-3)  # the failure terms are ~6e-5
    assert f"1/(1 + Σ stall/τ) = {1.0 / (1.0 + ov):.4g}" in note
    assert G == pytest.approx(1.0 / (1.0 + ov), rel=1e-3)


def test_frequent_failures_keep_their_note():
    r = _ev("default", reliability__rate_scale=30)
    assert any(n.startswith("Failures are frequent") for n in r.notes)
    assert not any(n.startswith("Checkpoint stalls are long") for n in r.notes)


@pytest.mark.parametrize("preset, tiers, want, not_want", [
    ("default", [{"tier": "host_memory", "replicas": 1}], "a cluster failure needs the parallel file system or the object store (it loses every node-local copy",
     "node-local copies with replicas)"),
    ("mpt-7b-a100-8", [{"tier": "host_memory"}], "need a second node, and this job has one", "e.g. the parallel"),
])
def test_goodput_zero_advice_offers_only_what_survives(preset, tiers, want, not_want):
    r = _ev(preset, checkpoint__tiers=tiers)
    assert r.results["goodput"] == 0.0
    txt = next(n for n in r.notes if n.startswith("Goodput is 0"))
    assert want in txt and not_want not in txt, txt


def test_first_order_explain_gives_its_value_once():
    r = planner.evaluate(planner.load_preset("llama3-405b-h100-16k"))
    t = r.explain["goodput_first_order"]
    v = f"{r.results['goodput_first_order']:.4g}"
    assert t.count(f"= {v}") == 1, t


def test_one_writer_is_singular():
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["model"] = "megatron-1.7b"
    d["cluster"]["n_gpus"] = 1
    d["parallelism"].update(cp=1, dp=None)
    d["training"]["global_batch_size"] = 8
    r = planner.evaluate(d)
    texts = " ".join(r.explain.values())
    assert "1 writers" not in texts and "1 writer)" in texts
