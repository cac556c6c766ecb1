"""Review 39 (a fresh user on links, the CLI and the sidebar): each case failed before its fix."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

import pytest

from planner import share
from planner.cli import main


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            rc = main(list(argv))
        except SystemExit as e:  # argparse's refusals
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def test_simulate_reads_any_link_as_the_plan_page_does():
    """docs/ui.md: a Plan link without pl_mct runs the page's 2,000 trials, seed 0 (it ran 10,000)."""
    rc, out, err = _cli("simulate", "--link", "?p=default", "--format", "csv")
    assert rc == 0, err
    assert len(out.strip().splitlines()) == 1 + share.PLAN_MC_TRIALS_DEFAULT == 2001
    assert "the Plan page's default" in err


@pytest.mark.parametrize("link,needle", [
    ("?p=default&pl_mtc=5000", "'pl_mtc': not a key of the Plan page (allowed: pl_mct, pl_mcs)"),
    ("?p=default&ex_n=abc", "'ex_n': not a key of the Explore page"),
    ("?p=default&v_set=calibration", "v_set: keys of the Compare / Validate page"),
    ("?p=default&c_n=2", "c_n: keys of the Compare / Validate page"),
    ("http://localhost:8501/compare?p=default&tp=4", "a Compare page link"),
    ("http://localhost:8501/validate/?p=default", "a Validate page link"),
])
def test_cli_refuses_keys_no_page_of_the_command_reads(link, needle):
    rc, _out, err = _cli("evaluate", "--link", link)
    assert rc == 2 and needle in err, err


@pytest.mark.parametrize("base", ["https://validate/", "https://compare", "http://h/plan/"])
def test_cli_reads_a_plan_link_whatever_its_host(base):
    """The page is the address's path, not its host (review 39c: 'https://validate/?p=…' was refused)."""
    rc, out, err = _cli("link", "--preset", "default", "--base-url", base)
    assert rc == 0, err
    rc, _out, err = _cli("evaluate", "--link", out.strip())
    assert rc == 0, err


def test_min_headroom_refuses_digit_grouping():
    rc, _out, err = _cli("sweep", "--preset", "llama3-8b-h100-64", "--top", "1", "--min-headroom", "0.0_5")
    assert rc == 2 and "no '_'" in err, err


@pytest.mark.parametrize("raw", ["1_6", "8_0", "1__6", "_8"])
def test_link_numbers_refuse_digit_grouping(raw):
    """float()/int() read '1_6' as 16; a link's numbers are plain ASCII digits."""
    sj, warns = share.params_to_scenario({"p": "default", "tp": raw})
    assert sj["parallelism"]["tp"] == 8  # the preset's, kept
    assert any("tp=" in w and "without '_'" in w for w in warns), warns


@pytest.mark.parametrize("raw,ok", [("1000", 1000), (" 1000 ", 1000), ("+5", 5), ("1_000", None), ("٨", None),
                                    ("1e3", None), ("", None), ("0", None)])
def test_page_int_reads_ascii_digits_in_range(raw, ok):
    if ok is None:
        with pytest.raises(ValueError):
            share.page_int(raw, 1, 1_000_000)
    else:
        assert share.page_int(raw, 1, 1_000_000) == ok


@pytest.mark.parametrize("argv", [("simulate", "--preset", "default", "--trials", "1_000"),
                                  ("sweep", "--preset", "default", "--gpus", "1_024", "--top", "1")])
def test_cli_whole_number_options_refuse_digit_grouping(argv):
    rc, _out, err = _cli(*argv)
    assert rc == 2 and "without '_'" in err, err


def test_unknown_own_page_keys_named():
    assert share.unknown_own_page_keys(["p", "pl_mct", "pl_zz", "ex_top"], "plan", ("pl_mct", "pl_mcs")) == [
        "'pl_zz': not a key of the Plan page (allowed: pl_mct, pl_mcs); ignored"]
    assert share.unknown_own_page_keys(["ex_zz", "pl_zz"], "explore", ("ex_top",)) == [
        "'ex_zz': not a key of the Explore page (allowed: ex_top); ignored"]


@pytest.mark.parametrize("key,label", [("w_dps", "ZeRO shard group (HSDP), DP ranks"),
                                       ("w_rcl", "Full recompute: layers per chunk")])
def test_sidebar_names_the_box_of_an_out_of_range_split_value(key, label):
    from streamlit.testing.v1 import AppTest

    from pathlib import Path
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("app_pages/plan.py").run()
    at.number_input(key=key).set_value(0).run()
    assert not at.exception
    text = " ".join(e.value for e in at.error)
    assert f"Parallelism → {label} = 0: allowed a whole number 1 to" in text, text


def test_plan_page_warns_of_an_unknown_pl_key():
    from pathlib import Path

    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=120)
    at.query_params["p"] = "default"
    at.query_params["pl_zz"] = "1"
    at.run()
    at.switch_page("app_pages/plan.py").run()
    assert not at.exception
    assert any("'pl_zz': not a key of the Plan page" in w.value for w in at.warning)
