"""Review 17f: the session's diff (reviews 17a-17d) read as a skeptical reviewer.

Expected values are hand calculations or independent computations written in the test (an explicit
rank layout, published hardware figures), never the code's own output.
"""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import planner
from planner import comm
from planner.sweep import scenario_for_row, sweep

ROOT = Path(__file__).resolve().parents[1]


def _rank_layout(n: int, stride: int, dom: int, job: int) -> tuple[int, int]:
    """(fewest members a cross-domain group has in one domain, most domains a group spans) from the
    ranks themselves: Megatron's order, groups of ``n`` ranks ``stride`` apart in aligned blocks of
    ``n·stride``; rank r in domain r // dom (the last domain may be partial)."""
    span = n * stride
    worst_g, worst_nd = n, 1
    for start in range(0, job, span):
        for o in range(stride):
            per = {}
            for i in range(n):
                d = (start + o + i * stride) // dom
                per[d] = per.get(d, 0) + 1
            if len(per) > 1:
                worst_g = min(worst_g, min(per.values()))
            worst_nd = max(worst_nd, len(per))
    return worst_g, worst_nd


# (n, stride, domain, job GPUs): blocks larger than the domain whose span is not a multiple of it, in
# jobs holding fewer blocks than there are offsets (gcd rule not reached), and a few that hold them all
_FEW_BLOCKS = [
    (54, 4, 64, 216),   # 216 GB200 in blocks of 64 per rack (64+64+64+24), TP 4 x DP 54: 24/4 = 6, not 8/4 = 2
    (88, 1, 64, 88),    # DP 88 at TP 1: 64 + 24 -> 24, not gcd(88, 64) = 8
    (22, 4, 64, 88),    # TP 4 x DP 22: 16 + 6 -> 6, not 2
    (11, 8, 64, 88),    # TP 8 x DP 11: 8 + 3 -> 3, not 1
    (14, 1, 8, 28),     # 2 blocks (offsets 0 and 6 of 0, 2, 4, 6): 8+6, then 2+8+4 -> 2
    (10, 2, 8, 20),     # review 17c's 20-GPU case: 4+1 members -> 1
    (12, 1, 8, 48),     # every offset present: the gcd rule, 4
    (6, 4, 16, 48),     # 24 over 16-GPU domains, 2 blocks: 4+2, 2+4 -> 2
]


@pytest.mark.parametrize("n, stride, dom, job", _FEW_BLOCKS)
def test_ragged_ring_members_per_domain_follow_the_blocks_the_job_holds(n, stride, dom, job):
    """Found by review 17f: review 17c's ragged rule (a block larger than the domain, span not a
    multiple of it: gcd(span, domain)/stride members on the worst group's short side) assumes every
    offset of a block inside a domain occurs, which needs at least domain / gcd(span, domain) blocks.
    A job with fewer (one DP block at PP 1 when the job does not fill whole domains: 216 GB200 GPUs
    placed 64 + 64 + 64 + 24) was charged 2 NICs per DP ring at TP 4 where the 24-GPU rack gives each
    group 6. With the job's size, group_layout counts the blocks the job holds."""
    assert n * stride > dom and (n * stride) % dom
    want_g, _ = _rank_layout(n, stride, dom, job)
    g, _nd = comm.group_layout(np.array([float(n)]), np.array([float(stride)]), np.array([float(dom)]),
                               np.array([float(job)]))
    assert float(g[0]) == want_g
    # scalars and mixed rows: each row as its own one-row call
    gs, _ = comm.group_layout(float(n), float(stride), float(dom), float(job))
    assert float(gs) == want_g
    gm, _ = comm.group_layout(np.array([float(n), 8.0, float(n)]), np.array([float(stride), 1.0, float(stride)]),
                              np.array([float(dom), 8.0, float(dom)]), np.array([float(job), 64.0, 1e6 * n * stride]))
    assert float(gm[0]) == want_g and float(gm[1]) == 8.0
    # a job of many blocks (every offset present): the gcd rule
    assert float(gm[2]) == float(np.gcd(n * stride, dom)) / stride


def test_dp_ring_of_216_gb200_gpus_runs_on_the_last_racks_6_nics_by_hand():
    """Llama 3 8B (8,030,261,248 parameters, Hugging Face meta-llama/Meta-Llama-3-8B) on 216 GB200
    (NVL72 racks, the job in blocks of 64 GPUs per rack: 64 + 64 + 64 + 24), TP 4 x PP 1 x DP 54,
    ZeRO-1, DP not overlapped. Each DP group is ranks o, o+4, ..., o+212: 16 in each full rack and
    24/4 = 6 in the last, whose 6 NICs carry its ring. Gradient reduce-scatter (fp32) of P/4:
    (53/54) · 4 B · P/4 / min(900 GB/s · 0.8, 6 · 50 GB/s · 0.92 = 276 GB/s) + 53 · 2 µs
    (hardware.md §6b link efficiencies 0.8 / 0.92, α 2 µs / 5 µs) = 0.02866 s; before review 17f
    the gcd rule's 2 NICs gave 0.08578 s."""
    d = {"model": "llama3-8b", "cluster": {"system": "gb200-nvl72", "n_gpus": 216},
         "training": {"seq_len": 8192, "global_batch_size": 216, "micro_batch_size": 1},
         "parallelism": {"tp": 4, "pp": 1, "dp": 54, "zero_stage": 1, "recompute": "none", "dp_comm_overlap": False}}
    r = planner.evaluate(d)
    P = 8_030_261_248
    assert r.results["params_total"] == P
    hand = 53 / 54 * 4.0 * (P / 4) / min(900e9 * 0.8, 6 * 50e9 * 0.92) + 53 * 2e-6
    shown = float(re.search(r"gradient reduce-scatter ([\d.e+-]+) s", r.explain["t_dp_comm_exposed_s"]).group(1))
    assert shown == pytest.approx(hand, rel=1e-3)
    # a batch: the 216-GPU row beside the default preset gives each its own one-row value
    t = planner.evaluate_many([d, planner.load_preset("default").to_json_dict()])
    assert t.iloc[0]["t_dp_comm_exposed_s"] == pytest.approx(r.results["t_dp_comm_exposed_s"], rel=1e-12)
    assert t.iloc[1]["step_time_s"] == pytest.approx(planner.evaluate(planner.load_preset("default")).results["step_time_s"],
                                                     rel=1e-12)


def test_sweep_rows_of_a_ragged_gb200_job_equal_evaluate():
    """The sweep's batch and evaluate() agree on the 216-GPU GB200 job (rows of every split; the DP
    rings of the TP 4 / TP 8 rows are ragged and one block long)."""
    d = {"model": "llama3-8b", "cluster": {"system": "gb200-nvl72", "n_gpus": 216},
         "training": {"seq_len": 8192, "global_batch_size": 432, "micro_batch_size": 1},
         "parallelism": {"tp": 4, "pp": 1, "dp": 54, "zero_stage": 1, "recompute": "none", "dp_comm_overlap": False}}
    s = planner.Scenario.model_validate(d)
    df = sweep(s, top=100_000)
    rows = df[df["fits"] & (df["tp"] >= 4) & (df["pp"] == 1)].head(40)
    assert len(rows) > 0
    ev = planner.evaluate_many([scenario_for_row(s, row) for _, row in rows.iterrows()])
    np.testing.assert_allclose(ev["step_time_s"].to_numpy(), rows["step_time_s"].to_numpy(), rtol=1e-12)


def test_no_frequent_failure_note_at_a_zero_failure_rate():
    """Found by review 17f: the default preset with rate_scale 0 (no failures) and synchronous object
    store saves every 3.6 s read "Failures are frequent (MTBF inf h): the first-order goodput (0.8726)
    is off ..., which tracks the Monte Carlo": the two goodputs differ by the save stalls alone
    (first order 1 − s/τ against the exact τ/(τ + s)); there is no failure to be frequent."""
    d = planner.load_preset("default").to_json_dict()
    d["reliability"]["rate_scale"] = 0.0
    d["checkpoint"]["async"] = False
    d["checkpoint"]["tiers"] = [{"tier": "object_store", "interval_s": 3.6}]
    r = planner.evaluate(d)
    assert r.results["failure_rate_per_h"] == 0.0
    assert abs(r.results["goodput"] - r.results["goodput_first_order"]) > 0.01  # the case that drew the note
    assert not [n for n in r.notes if "Failures are frequent" in n or "MTBF inf" in n]
    # with failures the note is still given (default preset at 77x: MTBF 0.63 h)
    d2 = planner.load_preset("default").to_json_dict()
    d2["reliability"]["rate_scale"] = 77.0
    assert [n for n in planner.evaluate(d2).notes if n.startswith("Failures are frequent")]


@pytest.mark.parametrize("url", ["http://my host:8501/", "http://localhost:8501/my app/", "http://localhost:8501/\tx"])
def test_link_base_url_with_a_space_is_refused(url):
    """Found by review 17f: --base-url 'http://my host:8501/' was written out as 'http://my
    host:8501/?p=...', a link that a terminal or chat cuts at the space (a host has no spaces; a path
    writes %20). Refused with the flag named; an IPv6 host and a %20 path are still taken."""
    cmd = [sys.executable, "-m", "planner.cli", "link", "--preset", "default", "--base-url"]
    p = subprocess.run(cmd + [url], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.startswith(f"planner: --base-url {url!r}: expected the dashboard's address") and "no spaces" in p.stderr
    for ok in ("http://[::1]:8501/", "http://localhost:8501/my%20app/"):
        q = subprocess.run(cmd + [ok], capture_output=True, text=True, cwd=ROOT)
        assert q.returncode == 0 and q.stdout.startswith(ok + "?p=default&")


# blocks smaller than the domain that do not divide it (a straddling block), in jobs that do not fill
# whole domains: the worst cut among the blocks present
_FEW_STRADDLE = [
    (5, 2, 16, 20),     # 20 H100 in a 16-GPU domain, TP 2 x PP 2 x DP 5: block 10-19 cut 16 | 4 -> 3 + 2 -> 2
    (38, 1, 64, 76),    # 76 GB200 (64 + 12), DP 38: block 38-75 cut 26 + 12 -> 12, not gcd(38, 64) = 2
    (19, 2, 64, 76),    # TP 2 x DP 19: 13 + 6 -> 6
    (12, 1, 16, 48),    # every offset present (48 fills 3 domains): the gcd rule, 4
]


@pytest.mark.parametrize("n, stride, dom, job", _FEW_STRADDLE)
def test_straddling_ring_members_follow_the_blocks_the_job_holds(n, stride, dom, job):
    """The straddle rule (a block smaller than the domain that does not divide it: gcd(span,
    domain)/stride members on the short side of the worst cut) has the same assumption as the
    ragged one; it is given the job's size too, so that a larger domain never counts fewer NICs than
    a smaller one (with the ragged rule alone corrected, 76 GB200 GPUs at DP 38 counted 6 NICs in
    32-GPU placement blocks and 2 in 64-GPU ones)."""
    assert n * stride < dom and dom % (n * stride)
    want_g, want_nd = _rank_layout(n, stride, dom, job)
    g, nd = comm.group_layout(float(n), float(stride), float(dom), float(job))
    assert (float(g), float(nd)) == (want_g, want_nd)


def test_a_larger_placement_block_never_counts_fewer_nics():
    """Invariant (explicit rank layout, not the code): over NVL72-style jobs of 76 to 300 GPUs in 4-GPU
    trays, a group that crosses domains in 64-GPU placement blocks has at least as many members on
    its short side as in 32-GPU blocks (a 36-GPU NVLink domain), unless it stays inside one."""
    for job in range(76, 301, 4):
        d32 = float(comm.placement_domain(36.0, 4.0, float(job)))
        d64 = float(comm.placement_domain(72.0, 4.0, float(job)))
        assert (d32, d64) == (32.0, 64.0)
        for stride in (1, 2, 4, 8):
            for n in range(2, job // stride + 1):
                if job % (n * stride):
                    continue
                g32, nd32 = comm.group_layout(float(n), float(stride), d32, float(job))
                g64, nd64 = comm.group_layout(float(n), float(stride), d64, float(job))
                assert float(nd32) > 1 or float(nd64) == 1
                if float(nd64) > 1:
                    assert float(g64) >= float(g32), (job, n, stride)
                    assert float(g64) == _rank_layout(n, stride, 64, job)[0]
