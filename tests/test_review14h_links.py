"""Review 14a's findings outside its own files (share links, Compare, the scenario import).

Expected texts come from the fields' definitions: the schema's ranges (``n_gpus`` 1 to
10,000,000, ``seq_len`` 1 to 4,194,304, usable HBM 0.1 GiB = 107,374,182.4 B to 1e14 B) and the
Plan page's box units (usable HBM in GiB: 1e14 / 2^30 = 93,132.257 GiB, to one decimal rounded
down so the bound shown is itself allowed: 93,132.2), never from the code's own output."""

from __future__ import annotations

import json

import pytest

from planner import share

from test_app import COMPARE, PLAN, _clear_caches, _run  # noqa: F401
from test_app_review_fixes import _upload


def _warnings(query: str) -> list[str]:
    return share.params_to_scenario(share.parse_link(query))[1]


def test_link_range_refusals_group_digits_and_name_the_unit():
    w = _warnings("p=default&n=-5&s=0&hbmu=1e30")
    assert "n='-5' (cluster.n_gpus): out of range; allowed 1 to 10,000,000; kept the base value" in w
    assert "s='0' (training.seq_len): out of range; allowed 1 to 4,194,304; kept the base value" in w
    assert ("hbmu='1e30' (cluster.overrides.hbm_usable_bytes): out of range; allowed 107374182.4 to 1e14 bytes "
            "(the Plan page's box: 0.1 to 93,132.2 GiB), or none (the catalogue value); kept the base value") in w
    # a price bound reads 1,000,000 (review 14j: "1e6")
    assert any(x.startswith("price='1e9'") and "allowed 0.01 to 1,000,000, or none (the catalogue value);" in x
               for x in _warnings("p=default&price=1e9"))


def test_an_optional_field_refusal_says_what_none_means():
    """Review h28d: Max nodes per token = -1 was "allowed 0 to 100,000" on the page (its box: 0 = no
    limit) and "allowed 1 to 100,000" from the link, which writes no limit as ``none``: the link's
    refusal names that spelling and its meaning (the schema: "None = no limit")."""
    w = _warnings("p=default&m=custom&me=8&mnl=-1")
    assert ("mnl='-1' (model.moe.max_nodes_per_token): out of range; allowed 1 to 100,000, or none "
            "(no limit); kept the base value") in w
    w = _warnings("p=default&etp=0")
    assert any(x.startswith("etp='0'") and "allowed 1 to 100,000, or none (= TP);" in x for x in w), w


def test_a_refused_tier_list_does_not_also_claim_its_parts_fallback():
    """ck=pfs:xx:1: the interval 'xx' alone would fall back to 'auto', but replicas 1 on the
    shared file system refuses the whole list, which keeps the base tiers: the first warning
    no longer says "used 'auto'"."""
    w = _warnings("p=default&ck=pfs:xx:1")
    assert any(x.startswith("ck: refused") and x.endswith("kept the base value") for x in w), w
    assert not any("used 'auto'" in x for x in w), w
    assert any(x.startswith("ck: interval 'xx' for tier 'pfs' refused") for x in w), w
    # the fallback is still said where it happens
    w2 = _warnings("p=default&ck=pfs:xx")
    assert any(x.endswith("used 'auto' (the optimum)") for x in w2), w2


def test_compare_slot_with_text_that_is_not_a_link_says_so():
    at = _run(COMPARE, {"c_n": "2", "c_src1": "default", "c_src2": "link", "2.x": "1"})
    at.text_input(key="c_link1").set_value("garbage text no url").run()
    warns = [w.value for w in at.warning]
    assert any("is not a share link" in w and "garbage text no url" in w for w in warns), warns
    assert not any("unknown link parameter" in w for w in warns), warns


@pytest.mark.parametrize("payload", [b"{not json", b"[1, 2]"])
def test_scenario_import_error_names_the_file(payload):
    at = _run(PLAN, {"p": "default"})
    _upload(at, "Import scenario JSON", "my_run.json", payload)
    err = " ".join(e.value for e in at.sidebar.error)
    assert "my\\_run\\.json is not a scenario JSON" in err or "my_run.json is not a scenario JSON" in err, err
    assert "current scenario is kept" in err
