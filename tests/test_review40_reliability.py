"""Review 40a (a fresh user hand-checking the reliability, checkpoint and goodput figures): no
formula or unit error; the notes and explanations it found wrong, each failing before its fix."""

from __future__ import annotations

import math
import re

import pytest

import planner
from planner import reliability as rel
from planner.simulate import MAX_EXPECTED_FAILURES


def _eval(pid, **sets):
    d = planner.load_preset(pid).to_json_dict()
    for k, v in sets.items():
        sec, field = k.split("__")
        d[sec][field] = v
    if "cluster__n_gpus" in sets:
        d["parallelism"].pop("dp", None)  # derived, as `--set cluster.n_gpus` does
    return planner.evaluate(d)


def _note(rep, head):
    return [n for n in rep.notes if n.startswith(head)]


def test_a_goodput_lost_to_recoveries_is_not_blamed_on_the_stalls():
    """D1: 405B at 100 × the failure rate on 65,536 GPUs. By hand from the row: the stalls' factor
    1 + Σ stall/τ is about 1.009, the recoveries' e^(Σ λ(R + reload)) is e^24: the loss is the
    recoveries'. The first order was clipped to 0 and any stall passed the test."""
    rep = _eval("llama3-405b-h100-16k", reliability__rate_scale=100.0, cluster__n_gpus=65536,
                training__global_batch_size=8192)
    r = rep.results
    stall_factor = 1.0 + sum(r[f"ckpt_{k}_stall_s"] / r[f"ckpt_{k}_interval_opt_s"] for k in rel.TIER_KINDS
                             if r.get(f"ckpt_{k}_enabled") and not rel.is_never_saved(r[f"ckpt_{k}_interval_opt_s"]))
    # the hand check's premise: 1/G = stalls' factor × the rest, and the rest is ~3e10
    assert stall_factor < 1.02 and 1.0 / r["goodput"] / stall_factor > 1e9
    assert not _note(rep, "Checkpoint stalls are long")
    assert len(_note(rep, "Failures are frequent against the checkpoint intervals and recoveries")) == 1


def test_the_note_does_not_say_the_monte_carlo_tracks_a_run_it_refuses():
    """D2: the default preset at 100 × the failure rate: `planner simulate` refuses it, so the note
    says the Monte Carlo cannot check it, with the failures the refusal counts; at 10 × it runs and
    the note keeps "which tracks the Monte Carlo"."""
    rep = _eval("default", reliability__rate_scale=100.0)
    r = rep.results
    (note,) = _note(rep, "Failures are frequent")
    n_hand = r["failure_rate_per_h"] * r["time_to_train_days"] * 24.0  # λ × T, failures per run
    assert n_hand > MAX_EXPECTED_FAILURES
    assert "which tracks the Monte Carlo" not in note
    m = re.search(r"the Monte Carlo cannot check it here: the run expects about ([\d,]+) failures", note)
    assert m and int(m[1].replace(",", "")) == round(n_hand)
    from planner.cli import main
    import io
    from contextlib import redirect_stderr, redirect_stdout
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        rc = main(["simulate", "--preset", "default", "--set", "reliability.rate_scale=100", "--trials", "10"])
    assert rc == 2 and f"about {m[1]} failures per run expected" in err.getvalue()
    rep10 = _eval("default", reliability__rate_scale=10.0)
    (note10,) = _note(rep10, "Failures are frequent")
    assert note10.endswith("which tracks the Monte Carlo.")


def test_an_optimum_held_at_one_step_says_so():
    """D3: 405B on 131,072 GPUs: host memory saved every step. Young's √(2δ/Λ) with Λ the rate of
    the classes host memory recovers is below one step, so the engine's optimum is the floor."""
    rep = _eval("llama3-405b-h100-16k", cluster__n_gpus=131072, training__global_batch_size=16384)
    r = rep.results
    lam_h = sum(r[f"failure_rate_{c}_per_h"] for c in ("software", "network"))  # the classes it recovers
    young_s = math.sqrt(2.0 * r["ckpt_host_memory_stall_s"] / (lam_h / 3600.0))
    assert young_s < r["step_time_s"]
    assert r["ckpt_host_memory_interval_opt_s"] == pytest.approx(r["step_time_s"], rel=1e-9)
    text = rep.explain["ckpt_host_memory_interval_opt_s"]
    assert "held at the shortest interval the job can save at (one step)" in text
    # a free optimum says nothing of a floor
    assert "held at" not in rep.explain["ckpt_pfs_interval_opt_s"]
    assert r["ckpt_pfs_interval_opt_s"] > 1.5 * r["step_time_s"]


def test_each_interval_is_also_given_in_steps():
    """D4: frameworks take the interval in steps (Megatron-LM --save-interval, TorchTitan
    [checkpoint] interval): the explanation gives τ / step and the nearest whole number of steps."""
    rep = _eval("llama3-405b-h100-16k")
    r = rep.results
    for kind in ("host_memory", "pfs"):
        iv, step = r[f"ckpt_{kind}_interval_opt_s"], r["step_time_s"]
        text = rep.explain[f"ckpt_{kind}_interval_opt_s"]
        assert f"{iv / step:,.3g} steps of " in text
        assert f"so every {max(1, round(iv / step)):,} steps in a framework" in text


def test_the_one_second_floor_is_named_and_one_step_is_singular():
    """Review 40c D6/D7: the engine saves at most once a second (reliability.INTERVAL_MIN_S) and once a
    step; a given 0.01 s interval is raised to that floor, named as such."""
    rep = _eval("llama3-8b-h100-64")
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["checkpoint"]["tiers"] = [{"tier": "pfs", "interval_s": 0.01}]
    rep = planner.evaluate(d)
    r = rep.results
    step = r["step_time_s"]
    assert step > rel.INTERVAL_MIN_S and r["ckpt_pfs_interval_opt_s"] == pytest.approx(step, rel=1e-12)
    text = rep.explain["ckpt_pfs_interval_opt_s"]
    assert "given 0.01 s, raised to the shortest the job can save at: one step" in text
    assert f"; 1 step of {rel._g(step)} s, so every step in a framework" in text
    # 30,000 s: a plain whole number of steps, not 3.91e+03
    d["checkpoint"]["tiers"] = [{"tier": "pfs", "interval_s": 30000.0}]
    text = planner.evaluate(d).explain["ckpt_pfs_interval_opt_s"]
    n = 30000.0 / step
    assert f"(given; {n:,.0f} steps of " in text


def test_notes_that_point_to_the_monte_carlo_say_when_it_cannot_run():
    """Review 40c D8: at 60 × the failure rate with host memory every 600 s and the PFS every 1e6 s,
    `planner simulate` refuses the run (λ·T far above MAX_EXPECTED_FAILURES), yet the short-run and
    slow-tier notes sent the reader to it; and "about 43836331 % longer" is now a ratio."""
    d = planner.load_preset("default").to_json_dict()
    d["reliability"]["rate_scale"] = 60.0
    d["checkpoint"]["tiers"] = [{"tier": "host_memory", "interval_s": 600.0}, {"tier": "pfs", "interval_s": 1e6}]
    rep = planner.evaluate(d)
    mc_notes = [n for n in rep.notes if "Monte Carlo" in n]
    assert mc_notes and all("the monte carlo cannot check it here" in n.lower() for n in mc_notes), mc_notes
    assert not any("simulates the run as it is" in n for n in rep.notes)
    assert not any(re.search(r"\d{4,} % longer", n) for n in rep.notes)


def test_a_step_shorter_than_a_second_names_the_one_second_floor():
    """The engine saves at most once every INTERVAL_MIN_S = 1 s (interval_floor_s): with a step of
    about 0.5 s a given 0.01 s interval is counted at 1 s, and both the explanation and the note say
    what set it (they said "one step or the async save")."""
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["cluster"]["n_gpus"] = 65536
    d["parallelism"].pop("dp", None)
    d["training"].update(global_batch_size=65536, seq_len=1024)
    d["checkpoint"]["tiers"] = [{"tier": "pfs", "interval_s": 0.01}]
    rep = planner.evaluate(d)
    r = rep.results
    assert r["step_time_s"] < rel.INTERVAL_MIN_S and r["ckpt_pfs_interval_opt_s"] == rel.INTERVAL_MIN_S
    assert "raised to the shortest the job can save at: 1 s, the model's shortest" in \
        rep.explain["ckpt_pfs_interval_opt_s"]
    assert any(n.startswith("The pfs checkpoint interval given (0.01 s) is shorter than the job can save at "
                            "(1 s, the model's shortest): counted at 1 s") for n in rep.notes)
