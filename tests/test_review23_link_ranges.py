"""``planner link`` refuses a scenario the Plan page's boxes cannot hold (review 23).

The schema takes wider values than the dashboard's boxes (and so the link reader): 1,000 training
tokens, 100,001 hot spares, a 1e9 s checkpoint interval. ``planner link`` wrote them into a link
that ``evaluate --link`` and the Plan page then refused, keeping the preset's value instead (the
page showed 15T tokens for ``tok=1000``). Now it exits 2 naming the field and the page's range,
as the page's JSON import does (``share.widget_range_errors``); values inside the ranges still
round-trip.
"""

from __future__ import annotations

import json

import pytest
from test_cli import run  # the CLI test's runner (tests/ is on sys.path)


@pytest.mark.parametrize("setting", ["training.tokens_total=1000", "training.tokens_total=999999"])
def test_tokens_below_a_million_are_refused_everywhere(setting):
    """Since review 42a the schema's own bound is the page's, 1e6 (schema.TOKENS_TOTAL_MIN): the
    link and evaluate refuse alike, naming the range."""
    for cmd in ("link", "evaluate"):
        rc, out, err = run(cmd, "--preset", "default", "--set", setting)
        assert rc == 2 and out == "" and "training.tokens_total: allowed 1,000,000 to 1e+16" in err, (cmd, err)


@pytest.mark.parametrize("setting, field, allowed", [
    ("reliability.hot_spare_nodes=100001", "reliability.hot_spare_nodes = 100001", "0 to 100,000"),
    ('checkpoint.tiers=[{"tier": "pfs", "interval_s": 1e9}]', "checkpoint.tiers[0].interval_s = 1e9",
     "allowed 0.6 to 6e8 s"),
    ('checkpoint.tiers=[{"tier": "pfs", "interval_s": 0.01}]', "checkpoint.tiers[0].interval_s = 0.01",
     "allowed 0.6 to 6e8 s"),
])
def test_link_refuses_what_the_page_cannot_hold(setting, field, allowed):
    rc, out, err = run("link", "--preset", "default", "--set", setting)
    assert rc == 2 and out == ""
    assert field in err and allowed in err and "Traceback" not in err
    # the same scenario still evaluates: only the link is refused
    rc, out, err = run("evaluate", "--preset", "default", "--set", setting, "--format", "json")
    assert rc == 0, err


@pytest.mark.parametrize("setting, key, expect", [
    ("training.tokens_total=1e6", "training.tokens_total", 1e6),
    ("reliability.hot_spare_nodes=100000", "reliability.hot_spare_nodes", 100000),
    ('checkpoint.tiers=[{"tier": "pfs", "interval_s": 0.6}]', "checkpoint.tiers", 0.6),
])
def test_values_at_the_page_ranges_bounds_round_trip(setting, key, expect):
    rc, link, err = run("link", "--preset", "default", "--set", setting)
    assert rc == 0, err
    rc, out, err = run("evaluate", "--link", link.strip(), "--format", "json")
    assert rc == 0, err
    sc = json.loads(out)["scenario"]
    sect, name = key.split(".")
    got = sc[sect][name]
    if name == "tiers":
        got = [t["interval_s"] for t in got if t.get("interval_s") is not None]
        assert len(got) == 1
        got = got[0]
    assert got == pytest.approx(expect)
