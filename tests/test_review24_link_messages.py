"""Review 24 (new-user review): two malformed links were refused (status 2) with the wrong words.

* ``?P=default``: keys, but none of the dashboard's (keys are case-sensitive). The CLI said "no
  ?key=value query"; it now names the unknown key, as the Plan page does.
* ``http://localhost:8501/p=default&n=512``: the '?' left out. The whole address was read as the
  key ``http://localhost:8501/p`` ("unknown link parameter") and ``n=512`` applied on the Compare
  page; it is now no link at all, and the message says the '?' is missing."""

from __future__ import annotations

import pytest

from planner import share
from test_app import COMPARE, _run
from test_review15f_cli_links import _bad, _cli


@pytest.mark.parametrize("cmd", ["evaluate", "link"])
def test_unknown_keys_only_are_named(cmd):
    rc, out, err = _cli(cmd, "--link", "http://localhost:8501/?P=default")
    _bad(rc, out, err)
    assert "'P': unknown link parameter" in err and "none of its keys is one of the dashboard's" in err, err
    assert "case-sensitive" in err
    assert "no ?key=value query" not in err


@pytest.mark.parametrize("link", ["http://localhost:8501/p=default&n=512", "localhost:8501/p=default"])
@pytest.mark.parametrize("cmd", ["evaluate", "link"])
def test_an_address_without_its_question_mark_is_no_link(cmd, link):
    assert share.parse_link(link) == {}
    rc, out, err = _cli(cmd, "--link", link)
    _bad(rc, out, err)
    assert "not a share link" in err and "no '?' between the address and its query" in err, err
    assert "unknown link parameter" not in err


def test_a_bare_query_still_reads():
    assert share.parse_link("p=default&n=512") == {"p": "default", "n": "512"}
    assert share.parse_link("http://localhost:8501/?p=default&n=512") == {"p": "default", "n": "512"}


def test_compare_page_says_the_question_mark_is_missing():
    at = _run(COMPARE, {"c_n": "2", "c_src1": "default", "c_src2": "link", "2.x": "1"})
    at.text_input(key="c_link1").set_value("http://localhost:8501/p=default&n=512").run()
    assert not at.exception
    warns = [w.value for w in at.warning]
    assert any("is not a share link (no '?'" in w and "showing the default scenario" in w for w in warns), warns
    assert not any("unknown link parameter" in w for w in warns), warns


def test_link_says_it_carries_no_scenario_name():
    """Review 24: ``--set name=my-run`` came back from the link as the preset's name without a word."""
    rc, out, err = _cli("link", "--preset", "default", "--set", "name=my-run")
    assert rc == 0 and out.startswith("http://localhost:8501/?")
    assert "note: a share link carries no scenario name" in err and "'my-run'" in err, err
    rc, out, err = _cli("link", "--preset", "default")
    assert rc == 0 and "scenario name" not in err, err


def test_lower_case_unknown_keys_are_not_told_about_case():
    rc, out, err = _cli("evaluate", "--link", "?q=hello")
    _bad(rc, out, err)
    assert "none of its keys is one of the dashboard's" in err and "lower case" not in err, err


@pytest.mark.parametrize("link", ["http://localhost:8501/", "http://localhost:8501/plan"])
def test_an_address_with_no_query_is_not_told_of_a_missing_question_mark(link):
    rc, out, err = _cli("evaluate", "--link", link)
    _bad(rc, out, err)
    assert "not a share link" in err and "no '?' between" not in err, err


def test_compare_names_the_fragment():
    at = _run(COMPARE, {"c_n": "2", "c_src1": "default", "c_src2": "link", "2.x": "1"})
    at.text_input(key="c_link1").set_value("localhost:8501/#x=1").run()
    warns = [w.value for w in at.warning]
    assert any("follow the '#', the address's fragment" in w for w in warns), warns
