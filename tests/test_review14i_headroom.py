"""The sweep's memory headroom from the CLI and the Explore page (review 14g's options,
``planner.sweep(min_headroom=..., memory_rule=...)``).

Expected values come from the definition: a row kept with ``min_headroom = f`` has
``mem_total_bytes <= (1 − f) · hbm_usable_bytes``; the catalogue's usable HBM of an H100 SXM
is the reference (hardware/accelerators.json), not the page's output."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

import planner
from planner.cli import main

from test_app import EXPLORE, _clear_caches, _run  # noqa: F401
from test_input_ranges import _cli

GIB = 2**30


def _usable_gib(preset: str) -> float:
    from planner import batch as B
    return float(B.scenario_row(planner.load_preset(preset))["hbm_usable_bytes"]) / GIB


def test_cli_min_headroom_keeps_that_share_free():
    rc, out, err = _cli("sweep", "--preset", "llama3-8b-h100-64", "--top", "200", "--format", "csv")
    assert rc == 0, err
    plain = pd.read_csv(io.StringIO(out))
    rc, out, err = _cli("sweep", "--preset", "llama3-8b-h100-64", "--top", "200", "--format", "csv",
                        "--min-headroom", "0.25")
    assert rc == 0, err
    kept = pd.read_csv(io.StringIO(out))
    limit = 0.75 * _usable_gib("llama3-8b-h100-64") * GIB
    assert len(kept) and (kept["mem_total_bytes"] <= limit).all()
    assert (plain["mem_total_bytes"] > limit).any()  # the option removed something


@pytest.mark.parametrize(("argv", "want"), [
    (("--min-headroom", "1"), "--min-headroom 1.0: allowed 0 to below 1"),
    (("--min-headroom", "-0.1"), "--min-headroom -0.1: allowed 0 to below 1"),
    (("--min-headroom", "nan"), "'nan' is not a number; allowed 0 to below 1"),
    (("--memory-rule", "loose"), "--memory-rule 'loose': allowed: fits, conservative"),
])
def test_cli_memory_options_refused_naming_the_option(argv, want):
    rc, out, err = _cli("sweep", "--preset", "llama3-8b-h100-64", *argv)
    assert rc == 2 and want in err, err


def test_cli_conservative_rule_keeps_only_conservative_fits():
    rc, out, err = _cli("sweep", "--preset", "llama3-8b-h100-64", "--top", "50", "--format", "json",
                        "--memory-rule", "conservative")
    assert rc == 0, err
    rows = json.loads(out)
    # fits_conservative (docs/memory.md): model states + activations + logits <= 80 % of usable HBM
    usable = _usable_gib("llama3-8b-h100-64") * GIB
    assert rows and all(r["mem_weights_bytes"] + r["mem_grads_bytes"] + r["mem_optimizer_bytes"]
                        + r["mem_activations_bytes"] + r.get("mem_logits_bytes", 0.0) <= 0.8 * usable * (1 + 1e-12)
                        for r in rows)
    # the rule removes feasible splits (not necessarily from the best 50)
    s = planner.load_preset("llama3-8b-h100-64")
    assert (planner.sweep(s, top=1, memory_rule="conservative").attrs["n_feasible"]
            < planner.sweep(s, top=1).attrs["n_feasible"])


def test_explore_headroom_box_filters_the_table_and_rides_in_the_link():
    at = _run(EXPLORE, {"p": "llama3-8b-h100-64", "ex_head": "20", "ex_top": "50"})
    assert not at.exception
    assert at.number_input(key="ex_head").value == 20
    assert at.query_params.get("ex_head") in ("20", ["20"])
    gib = [float(x) for x in at.dataframe[0].value["GiB"]]
    assert gib and max(gib) <= 0.8 * _usable_gib("llama3-8b-h100-64") + 0.05  # the table's GiB has 1 decimal
    # without it the best rows sit higher
    at0 = _run(EXPLORE, {"p": "llama3-8b-h100-64", "ex_top": "50"})
    gib0 = [float(x) for x in at0.dataframe[0].value["GiB"]]
    assert max(gib0) > 0.8 * _usable_gib("llama3-8b-h100-64")


def test_explore_headroom_link_value_out_of_range_is_refused():
    at = _run(EXPLORE, {"p": "llama3-8b-h100-64", "ex_head": "90"})
    assert at.number_input(key="ex_head").value == 0
    assert any("ex_head='90': refused; allowed a whole number 0 to 50" in w.value for w in at.warning)
