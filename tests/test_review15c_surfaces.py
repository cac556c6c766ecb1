"""Review 15c: the same scenario through every surface (Python API, CLI, Plan / Explore pages, share
links) gives the same numbers, in the same units.

Expected values come from the scenario's definition and hand arithmetic (512 GPUs / (TP 8 · PP 4)
= DP 16; days = tokens / (tokens/s · goodput) / 86,400; 1 % = 0.01; 44,364,686,667 B / 2³⁰ =
41.3178 GiB), or from another surface of the same scenario, never from a constant copied from
the code's output."""

from __future__ import annotations

import ast
import io
import json
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

import planner
from planner import share
from planner.cli import main, pct_text

from test_app import EXPLORE, PLAN, _clear_caches, _run, metrics  # noqa: F401

#: "Llama 3 70B on 512 H100 for 15T tokens": the default preset (Llama 3 70B, DGX H100, 15e12
#: tokens, TP 8 · PP 4) on 512 GPUs, as the Plan page writes its link.
Q512 = "p=default&n=512"


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def _table(out: str) -> dict[str, tuple[str, str]]:
    """``evaluate``'s table: row name -> (value, unit)."""
    rows = {}
    for line in out.split("\n\n")[0].splitlines():
        m = re.match(r"^(\S+)\s+(\S+) ?(\S*)", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3))
    return rows


# ---- share links in the CLI ---------------------------------------------------------------------

def test_cli_reads_a_share_link_as_the_plan_page_does():
    """`planner evaluate --link URL`: the scenario the app opens for the link (the CLI took no link;
    a colleague's link had to be retyped as --set flags)."""
    rc, out, err = _cli("evaluate", "--link", f"http://localhost:8501/?{Q512}", "--format", "json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["scenario"]["cluster"]["n_gpus"] == 512
    assert d["scenario"]["parallelism"]["dp"] == 512 // (8 * 4)  # DP derived, 16
    r = d["results"]
    assert r["time_to_train_days"] == pytest.approx(15e12 / (r["tokens_per_s"] * r["goodput"]) / 86400.0, rel=1e-9)
    # the Plan page of the same link shows the same days and cost
    m = metrics(_run(PLAN, dict(parse_qsl(Q512))))
    assert m["Days to train"] == f"{r['time_to_train_days']:,.1f} days"
    assert m["Cost to train"] == f"${r['cost_usd'] / 1e6:,.2f} M"
    assert m["Peak memory per GPU"].startswith(f"{r['mem_total_bytes'] / 2**30:,.1f} GiB")


def test_cli_link_refuses_what_the_app_would_warn_about():
    """A value the app would refuse (its "Link:" warning, the base value kept) is bad input here:
    status 2, the key named, no traceback; a Compare link names no single scenario."""
    rc, out, err = _cli("evaluate", "--link", f"?{Q512}&tp=3")
    assert rc == 2 and out == "" and err.startswith("planner: --link: tp") and "Traceback" not in err
    rc, _, err = _cli("evaluate", "--link", "?c_n=2&1.p=default&2.p=default&2.n=512")
    assert rc == 2 and "Compare page link" in err
    rc, _, err = _cli("evaluate", "--link", "garbage text")
    assert rc == 2 and "not a share link" in err
    rc, _, err = _cli("evaluate", "--preset", "default", "--link", f"?{Q512}")
    assert rc == 2 and "not both" in err


def test_planner_link_opens_the_same_numbers_on_the_plan_page():
    """`planner link` writes the Plan page's link of a CLI scenario: the page opens it without a
    warning, keeps it as its own address, and shows the CLI's numbers."""
    rc, url, err = _cli("link", "--preset", "default", "--set", "cluster.n_gpus=512")
    assert rc == 0, err
    params = dict(parse_qsl(urlsplit(url.strip()).query))
    assert params["n"] == "512" and params["p"] == "default"
    at = _run(PLAN, params)
    assert not at.warning
    assert {k: v for k, v in at.query_params.items() if not k.startswith("pl_")} == params
    rc, out, _ = _cli("evaluate", "--link", url.strip(), "--format", "json")
    r = json.loads(out)["results"]
    assert metrics(at)["Days to train"] == f"{r['time_to_train_days']:,.1f} days"


def test_simulate_link_runs_the_plan_pages_monte_carlo():
    """A Plan link carries its Monte Carlo boxes (pl_mct trials, pl_mcs seed): `simulate --link` runs
    those runs, not 10,000 others; a flag given wins."""
    link = "?p=llama3-8b-h100-64&pl_mct=300&pl_mcs=7"
    rc, out, err = _cli("simulate", "--link", link, "--format", "json")
    assert rc == 0, err
    assert "--trials 300" in err and "--seed 7" in err
    from planner.simulate import summarize

    want = summarize(planner.simulate(planner.load_preset("llama3-8b-h100-64"), n_trials=300, seed=7))
    got = {r["metric"]: r for r in json.loads(out)}
    for rec in want.to_dict("records"):
        assert got[rec["metric"]]["mean"] == pytest.approx(rec["mean"], rel=1e-12)
    rc, _, err = _cli("simulate", "--link", link, "--trials", "200", "--format", "json")
    assert rc == 0 and "--trials" not in err and "--seed 7" in err


# ---- Explore page <-> planner sweep -------------------------------------------------------------

def test_cli_and_explore_page_share_one_search_space_definition():
    """The page's "Search space" box and `planner sweep --link` read planner.sweep.SEARCH_SPACES
    (one definition, not a copy that could drift), with the page's link defaults and ranges."""
    import sys
    sw = sys.modules["planner.sweep"]  # the module (planner.sweep the attribute is the function)
    src = Path(EXPLORE).read_text(encoding="utf-8")
    assert "SPACES = SEARCH_SPACES" in src and "HEADROOM_MAX_PCT = EXPLORE_HEADROOM_MAX_PCT" in src
    assert set(sw.SEARCH_SPACES) == {"focused", "full"}
    assert sw.SEARCH_SPACES["focused"]["cp_max"] == 4 and sw.SEARCH_SPACES["focused"]["zero_stages"] == (1,)
    assert set(sw.EXPLORE_DEFAULTS) == {"ex_obj", "ex_space", "ex_top", "ex_head", "ex_ties"}
    rc, _, err = _cli("sweep", "--link", "?p=default&ex_space=huge", "--format", "json")
    assert rc == 2 and "ex_space='huge'" in err and "allowed: focused, full" in err
    rc, _, err = _cli("sweep", "--link", f"?p=default&ex_top={sw.EXPLORE_TOP_MAX + 1}", "--format", "json")
    assert rc == 2 and f"1 to {sw.EXPLORE_TOP_MAX}" in err


def test_sweep_of_an_explore_link_ranks_the_pages_rows():
    """The Explore page's default space ("focused": ZeRO-1, CP ≤ 4, VPP ≤ 4, micro-batch ≤ 4, no
    offload) could not be asked of `planner sweep`, which ranked other splits for the same
    scenario. An Explore link, or the flags spelling the space out, now give the page's table."""
    q = {"p": "llama3-8b-h100-64", "ex_top": "5"}
    at = _run(EXPLORE, q)
    page = at.dataframe[0].value
    rc, out, err = _cli("sweep", "--link", "?p=llama3-8b-h100-64&ex_top=5", "--format", "json")
    assert rc == 0, err
    rows = json.loads(out)
    assert len(rows) == len(page) == 5
    for r, (_, p) in zip(rows, page.iterrows()):
        assert (r["tp"], r["pp"], r["cp"], r["micro_batch_size"], r["zero_stage"], r["recompute"], r["schedule"]) == (
            p["TP"], p["PP"], p["CP"], p["mb"], p["ZeRO"], p["recomp."], p["sched."])
        assert r["time_to_train_days"] == pytest.approx(p["days"], rel=1e-12)
    assert int(at.metric[0].value.replace(",", "")) == _n_feasible(
        "--preset", "llama3-8b-h100-64", "--zero-stages", "1", "--recompute", "selective,full", "--offload", "none",
        "--schedules", "1f1b,interleaved", "--cp-max", "4", "--vpp-max", "4", "--micro-batch-max", "4")


def _n_feasible(*argv: str) -> int:
    rc, out, err = _cli("sweep", *argv, "--top", "1")
    assert rc == 0, err
    return int(re.search(r"n_feasible = (\d+)", out).group(1))


def test_sweep_space_flags_are_checked():
    rc, _, err = _cli("sweep", "--preset", "default", "--zero-stages", "1,5")
    assert rc == 2 and "--zero-stages '1,5': a comma-separated list of 0, 1, 2, 3" in err
    rc, _, err = _cli("sweep", "--preset", "default", "--cp-max", "0")
    assert rc == 2 and "--cp-max 0: allowed 1 to 100,000" in err
    rc, _, err = _cli("sweep", "--link", "?p=default&ex_space=huge")
    assert rc == 2 and "ex_space='huge'" in err and "focused, full" in err


# ---- units and rounding in the CLI's tables -----------------------------------------------------

def test_evaluate_table_shows_each_tiers_interval_as_the_plan_page():
    """"How often will a 16k-GPU run fail and what checkpoint interval?": the Plan page lists every
    tier's interval (host memory and PFS); the table showed only the most frequent tier's."""
    rc, out, err = _cli("evaluate", "--preset", "llama3-405b-h100-16k")
    assert rc == 0, err
    rows = _table(out)
    js = json.loads(_cli("evaluate", "--preset", "llama3-405b-h100-16k", "--format", "json")[1])["results"]
    for kind in ("host_memory", "pfs"):
        val, unit = rows[f"ckpt_{kind}_interval_opt_s"]
        assert unit == "s" and float(val) == pytest.approx(js[f"ckpt_{kind}_interval_opt_s"], rel=5e-4)
    md = " ".join(m.value for m in _run(PLAN, {"p": "llama3-405b-h100-16k"}).markdown if "Intervals in use" in m.value)
    assert f"**parallel file system**: every {js['ckpt_pfs_interval_opt_s']:.1f} s" in md
    assert float(rows["mtbf_h"][0]) == pytest.approx(1 / js["failure_rate_per_h"], rel=5e-4)


def test_evaluate_table_peak_and_usable_hbm_never_read_equal_beside_fits_no():
    """Usable HBM set 0.001 GiB below the peak: the table showed "41.32 GiB", "fits no" and only the
    physical 80 GiB; now the usable HBM is a row and both carry the decimals that tell them apart."""
    usable = 44_364_686_667  # bytes = 41.31783 GiB
    rc, out, err = _cli("evaluate", "--preset", "default", "--set", "cluster.n_gpus=512",
                        "--set", f"cluster.overrides.hbm_usable_bytes={usable}")
    assert rc == 0
    rows = _table(out)
    assert rows["fits"][0] == "no"
    peak, use = rows["mem_total_bytes"], rows["hbm_usable_bytes"]
    assert peak[1] == use[1] == "GiB" and peak[0] != use[0] and float(peak[0]) > float(use[0])
    assert float(use[0]) == pytest.approx(41.3178, abs=10 ** -(len(use[0].split(".")[1])))
    assert rows["hbm_bytes"] == ("80", "GiB")  # the physical 80 GiB of an H100 SXM, still shown


def test_shares_are_percent_in_every_table():
    """evaluate wrote MFU and goodput in % but ckpt_overhead_frac as 0.0002469; sweep and simulate
    wrote mfu 0.5966 and goodput 0.9932 (Explore and Plan: %); a 0.04 % goodput read 0.0 %."""
    assert (pct_text(0.0004), pct_text(0.4224), pct_text(0.0)) == ("0.04", "42.2", "0.0")
    js = json.loads(_cli("evaluate", "--preset", "default", "--format", "json")[1])["results"]
    rows = _table(_cli("evaluate", "--preset", "default")[1])
    for col in ("mfu", "goodput", "ckpt_overhead_frac", "restart_frac"):
        val, unit = rows[col]
        assert unit == "%" and float(val) == pytest.approx(100 * js[col], abs=0.051 if 100 * js[col] >= 0.1 else 1e-3)
    rc, out, _ = _cli("sweep", "--preset", "llama3-8b-h100-64", "--top", "1", "--objective", "goodput_tokens_per_s")
    head, line = out.splitlines()[1].split(), out.splitlines()[2].split()
    row = dict(zip(head, line))
    top = json.loads(_cli("sweep", "--preset", "llama3-8b-h100-64", "--top", "1", "--objective",
                          "goodput_tokens_per_s", "--format", "json")[1])[0]
    assert "mfu" not in head and "goodput" not in head
    assert float(row["mfu_pct"]) == pytest.approx(100 * top["mfu"], rel=1e-3)
    assert float(row["goodput_pct"]) == pytest.approx(100 * top["goodput"], rel=1e-3)
    assert float(row["gp_Mtok_per_s"]) == pytest.approx(top["tokens_per_s"] * top["goodput"] / 1e6, rel=1e-3)
    out = _cli("simulate", "--preset", "llama3-8b-h100-64", "--trials", "200")[1]
    summ = {r["metric"]: r for r in json.loads(_cli("simulate", "--preset", "llama3-8b-h100-64", "--trials", "200",
                                                    "--format", "json")[1])}
    line = next(ln.split() for ln in out.splitlines() if ln.strip().startswith("goodput_pct"))
    assert float(line[1]) == pytest.approx(100 * summ["goodput"]["mean"], rel=1e-3)
