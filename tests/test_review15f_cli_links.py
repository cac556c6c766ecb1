"""Review 15f: the command line's share links (`--link`, `planner link`, the Explore and Plan page
keys) attacked with tampered links.

House rule: a tampered share link is bad input: one line naming the key and what it allows,
status 2, never a traceback, as the app warns about it. Expected values come from the pages'
own ranges (app_pages/plan.py: Trials 100–100,000, Seed 0–2³¹−1, default 2,000 trials, seed 0;
docs/ui.md says the same), from the URL rules a browser follows (what follows '#' is the
fragment, not the query), or from another surface of the same scenario, never from a constant
copied from the command's output."""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import planner
from planner import share
from planner import cli
from planner.cli import main
from planner.presets import list_presets

ROOT = Path(__file__).resolve().parents[1]


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def _bad(rc: int, out: str, err: str) -> None:
    assert rc == 2 and out == "" and "Traceback" not in err
    assert all(line.startswith(("planner: ", "note: ")) for line in err.splitlines()), err


# ---- the Plan page's Monte Carlo keys ---------------------------------------------------------

def test_plan_mc_ranges_are_the_plan_pages():
    """The CLI and the Plan page read one definition of the Monte Carlo boxes (planner.share), and
    the figures are the page's: Trials 100–100,000 (default 2,000), Seed 0–2³¹−1 (default 0)."""
    from planner import share
    src = (ROOT / "app_pages" / "plan.py").read_text(encoding="utf-8")
    assert "MCT_RANGE, MCS_RANGE = share.PLAN_MC_TRIALS_RANGE, share.PLAN_MC_SEED_RANGE" in src
    assert "MCT_DEFAULT = share.PLAN_MC_TRIALS_DEFAULT" in src
    assert cli.PLAN_MC_KEYS["pl_mct"][2:] == (*share.PLAN_MC_TRIALS_RANGE, share.PLAN_MC_TRIALS_DEFAULT) == (100, 100_000, 2000)
    assert cli.PLAN_MC_KEYS["pl_mcs"][2:] == (*share.PLAN_MC_SEED_RANGE, share.PLAN_MC_SEED_DEFAULT) == (0, 2**31 - 1, 0)


@pytest.mark.parametrize("query, key, allowed", [
    ("pl_mct=5", "pl_mct='5'", "100 to 100,000"),              # the page: refused, runs 2,000
    ("pl_mct=200000", "pl_mct='200000'", "100 to 100,000"),
    ("pl_mct=1e4", "pl_mct='1e4'", "100 to 100,000"),          # int('1e4') fails on the page too
    ("pl_mct=", "pl_mct=''", "100 to 100,000"),
    ("pl_mcs=99999999999", "pl_mcs='99999999999'", "0 to 2,147,483,647"),
    ("pl_mcs=-1", "pl_mcs='-1'", "0 to 2,147,483,647"),
    ("pl_mcs=NaN", "pl_mcs='NaN'", "0 to 2,147,483,647"),
])
def test_simulate_link_refuses_what_the_plan_page_refuses(query, key, allowed):
    """Before: pl_mct=5 ran 5 trials, pl_mcs=99999999999 that seed, status 0 (the page refuses
    both with a "Link:" warning); pl_mcs=-1 was reported as "--seed -1" without the link's key."""
    rc, out, err = _cli("simulate", "--link", f"?p=llama3-8b-h100-64&{query}", "--format", "json")
    _bad(rc, out, err)
    assert key in err and allowed in err, err


def test_simulate_link_without_trials_runs_the_plan_pages_default():
    """A Plan link with a seed but no trials: the page runs its default 2,000 trials, not 10,000."""
    rc, out, err = _cli("simulate", "--link", "?p=llama3-8b-h100-64&pl_mcs=3", "--format", "json")
    assert rc == 0, err
    assert "--trials 2,000" in err and "--seed 3" in err
    from planner.simulate import summarize

    want = summarize(planner.simulate(planner.load_preset("llama3-8b-h100-64"), n_trials=2000, seed=3))
    got = {r["metric"]: r for r in json.loads(out)}
    for rec in want.to_dict("records"):
        assert got[rec["metric"]]["mean"] == rec["mean"]
    # a link without any Plan key keeps the command's own default (10,000), as documented
    rc, _, err = _cli("simulate", "--link", "?p=llama3-8b-h100-64", "--trials", "100", "--format", "json")
    assert rc == 0 and "2,000" not in err


def test_planner_link_carries_the_plan_links_monte_carlo():
    """`planner link --link` of a Plan link dropped its Monte Carlo boxes: the page then ran 2,000
    trials with seed 0 instead of the link's 300 with seed 7."""
    rc, url, err = _cli("link", "--link", "?p=llama3-8b-h100-64&pl_mct=300&pl_mcs=7")
    assert rc == 0, err
    q = dict(parse_qsl(urlsplit(url.strip()).query))
    assert q["pl_mct"] == "300" and q["pl_mcs"] == "7"
    rc, _, err = _cli("simulate", "--link", url.strip(), "--format", "json")
    assert rc == 0 and "--trials 300" in err and "--seed 7" in err
    from test_app import PLAN, _run

    at = _run(PLAN, q)  # the page opens it as its own address, without a warning
    assert not at.warning
    assert at.number_input(key="pl_mct").value == 300 and at.number_input(key="pl_mcs").value == 7
    assert dict(at.query_params.items()) == q


def test_sweep_with_two_inputs_says_only_that():
    """`sweep --preset X --link <Explore link>` printed the link's "the sweep ranks as the page does"
    note before refusing the two inputs."""
    rc, out, err = _cli("sweep", "--preset", "default", "--link", "?p=default&ex_top=3")
    _bad(rc, out, err)
    assert err.count("\n") == 1 and "give one input" in err


# ---- links that name no scenario ------------------------------------------------------------

@pytest.mark.parametrize("link, words", [
    ("http://localhost:8501/validate?v_set=calibration&v_metric=mfu&v_group=none", "Validate page link"),
    ("?c_n=2&c_src1=default&c_src2=default", "Compare page link"),
    ("?", "not a share link"),
    ("?&&", "not a share link"),
    ("http://localhost:8501/#plan?p=default&n=512", "before the '#'"),
])
def test_a_link_with_no_scenario_is_refused(link, words):
    """Before: each ran the default preset with status 0 (a Validate link holds no scenario; the
    query after a '#' is the fragment, which a browser never sends)."""
    for cmd in ("evaluate", "link"):
        rc, out, err = _cli(cmd, "--link", link)
        _bad(rc, out, err)
        assert words in err, err


def test_a_fragment_after_the_query_is_not_part_of_the_last_value():
    """A heading's anchor copied with the address (#plan-a-training-run): the browser and the app
    read n=512; parse_link read n as '512#plan-a-training-run' when the link had no scheme."""
    assert share.parse_link("localhost:8501/?p=default&n=512#plan-a-training-run") == {"p": "default", "n": "512"}
    assert share.parse_link("?n=512#x") == {"n": "512"}
    assert share.parse_link("?mn=a%23b") == {"mn": "a#b"}  # a '#' in a value is written %23
    want = json.loads(_cli("evaluate", "--link", "?p=default&n=512", "--format", "json")[1])["results"]
    for link in ("localhost:8501/?p=default&n=512#plan-a-training-run",
                 "http://localhost:8501/?p=default&n=512#plan-a-training-run"):
        rc, out, err = _cli("evaluate", "--link", link, "--format", "json")
        assert rc == 0, err
        assert json.loads(out)["results"] == want


# ---- the Explore page's keys ----------------------------------------------------------------

@pytest.mark.parametrize("query, words", [
    ("ex_color=zz", "allowed: tp, pp"),               # the page: refused, colours by tp
    ("ex_top=5&ex_top=7", "given 2 times"),           # the page used the last without a word
    ("ex_top=600", "1 to 500"),
    ("ex_head=5.0", "0 to 50"),
])
def test_explore_keys_the_page_refuses_are_refused_by_every_command(query, words):
    for cmd in ("sweep", "evaluate"):
        rc, out, err = _cli(cmd, "--link", f"?p=default&{query}", "--format", "json")
        _bad(rc, out, err)
        assert words in err, err


# ---- planner link ---------------------------------------------------------------------------

def test_link_base_url_with_a_fragment_keeps_the_query_a_query():
    """--base-url 'http://host/#top' wrote http://host/#top?p=..., whose query a browser never sends."""
    rc, url, err = _cli("link", "--preset", "default", "--set", "cluster.n_gpus=512", "--base-url", "http://h:1/app/#top")
    assert rc == 0, err
    parts = urlsplit(url.strip())
    assert parts.fragment == "" and url.startswith("http://h:1/app/?p=default&")
    assert dict(parse_qsl(parts.query))["n"] == "512"


_VARIANTS = ([], ["--set", "training.tokens_total=8.2e12"], ["--set", "cluster.pue=1.2345678901234567"],
             ["--set", "reliability.rate_scale=0.3333333333333333"],
             ["--set", "cluster.overrides.price_per_gpu_hour_usd=2.345678901234567"])


@pytest.mark.parametrize("preset", sorted(list_presets()))
def test_planner_link_round_trips_every_preset_bit_for_bit(preset):
    """`planner link` → `evaluate --link`: the same results, every float equal (the link writes the
    shortest decimal that parses back to the same double)."""
    for v in _VARIANTS:
        rc, ev, err = _cli("evaluate", "--preset", preset, *v, "--format", "json")
        assert rc == 0, err
        rc, url, err = _cli("link", "--preset", preset, *v)
        assert rc == 0, err
        rc, ev2, err = _cli("evaluate", "--link", url.strip(), "--format", "json")
        assert rc == 0, err
        assert json.loads(ev2)["results"] == json.loads(ev)["results"]
        assert _cli("link", "--link", url.strip())[1] == url  # a link of a link is the same link


# ---- tampered links: never a traceback ------------------------------------------------------

_KEYS = ["p", "m", "n", "tp", "pp", "tok", "ck", "sysj", "mn", "1.tp", "pl_mct", "pl_mcs", "ex_top", "ex_obj",
         "ex_space", "ex_head", "ex_ties", "ex_color", "v_set", "c_n", "zz", ""]
_VALUES = st.one_of(st.sampled_from(["", "NaN", "inf", "-1", "0", "1e400", "9" * 40, "default", "８", "%", "%zz",
                                     "a#b", "1.5", " 8 ", "none", "focused", "cost", "0", "1"]),
                    st.text(max_size=12))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_KEYS), _VALUES), max_size=5),
       st.sampled_from(["", "?", "http://localhost:8501/?", "http://evil.example:1/x?", "localhost:8501/explore?"]),
       st.sampled_from(["", "#frag", "#x?n=8"]))
def test_tampered_links_give_status_0_or_2_never_a_traceback(pairs, head, tail):
    link = head + "&".join(f"{k}={v}" for k, v in pairs) + tail
    rc, out, err = _cli("evaluate", "--link", link, "--format", "csv")
    assert rc in (0, 2), (link, rc, err)
    assert "Traceback" not in err
    if rc == 2:
        assert out == "" and err.startswith("planner: ")


# ---- help and docs --------------------------------------------------------------------------

def test_help_texts_say_what_a_link_brings_and_to_quote_it(capsys):
    for cmd, words in (("sweep", ("ex_obj", "ex_space", "ex_top", "ex_head", "ex_ties")),
                       ("simulate", ("pl_mct", "pl_mcs", "2,000")), ("link", ("quote",))):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "Quote it in a shell" in text or "quote it in a shell" in text
        for w in words:
            assert w in text, (cmd, w)


def test_a_very_long_tampered_link_gives_a_short_answer():
    """50,000 unknown keys gave 50,000 lines (2.9 MB) on stderr, and a page key repeated 20,001 times
    one line of 169 kB; now 20 lines and a count, and the first five values."""
    rc, out, err = _cli("evaluate", "--link", "?p=default&" + "&".join(f"x{i}=1" for i in range(50_000)))
    _bad(rc, out, err)
    lines = err.splitlines()
    assert len(lines) == 21 and lines[0] == "planner: --link: 'x0': unknown link parameter (the dashboard would ignore it)"
    assert lines[-1] == "planner: --link: … and 49,980 more problems in the link"
    rc, out, err = _cli("evaluate", "--link", "?p=default&" + "&".join(f"ex_top={i}" for i in range(1, 20_002)))
    _bad(rc, out, err)
    assert err == "planner: --link: ex_top: given 20,001 times ('1', '2', '3', '4', '5', …); give it once\n"
