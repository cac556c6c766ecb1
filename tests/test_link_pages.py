"""AppTest: share links read by the pages keep what they name (review of 2026-11-30). The link logic
itself is tested in test_share.py; these check that the pages pass links through to it whole
(repeated keys, Compare slot keys) and show its warnings."""

from __future__ import annotations

import pytest
from test_app import COMPARE, EXPLORE, PLAN, _clear_caches, _run  # noqa: F401  (the pages' AppTest helpers and cache fixture)


def _warnings(at) -> list[str]:
    return [w.value for w in at.warning]


@pytest.mark.parametrize("page", [PLAN, EXPLORE])
def test_a_link_naming_a_61_layer_model_opens_on_that_model(page):
    """The Explore URL for deepseek-v3 on the default preset's split: the page opens on
    DeepSeek-V3 (not Llama 3 70B) with the layer split made uneven and a warning saying so."""
    at = _run(page, {"m": "deepseek-v3", "tp": "8", "pp": "4", "vpp": "5", "ls": "even"})
    assert at.query_params["m"] == "deepseek-v3" and at.query_params["ls"] == "uneven"
    warns = _warnings(at)
    assert any(w.startswith("Link: ls='even'") and "n_layers = 61" in w for w in warns), warns
    assert not any("m: refused" in w for w in warns)
    if page == PLAN:
        # a valid scenario: no input error; DeepSeek-V3 on 1,024 H100 at that split does not fit
        # in memory, which the page states in its own error (the memory icon)
        assert at.selectbox(key="w_model").value == "deepseek-v3"
        assert all(e.icon == ":material/memory:" for e in at.error), [e.value for e in at.error]


def test_a_repeated_link_key_warns_on_plan():
    at = _run(PLAN, {"tp": ["2", "4"]})
    assert any("tp: given 2 times ('2', '4'); used the last, '4'" in w for w in _warnings(at)), _warnings(at)
    assert at.number_input(key="w_tp").value == 4 and at.query_params["tp"] == "4"


def test_an_empty_ckj_link_warns_on_plan():
    at = _run(PLAN, {"p": "default", "ckj": "[]"})
    assert any("ckj='[]'" in w and "ck=none" in w for w in _warnings(at))
    assert at.multiselect(key="w_tiers").value  # the preset's tiers, not "no checkpointing"


def test_compare_slot_link_keeps_its_model():
    at = _run(COMPARE, {"c_n": "2", "c_src1": "default", "c_src2": "link", "2.m": "llama3-8b", "2.n": "64"})
    cols = list(at.dataframe[0].value.columns)
    assert "llama3-8b · 64" in cols[1], cols
    assert any(w.startswith("Scenario 2: ls='even' → 'uneven'") for w in _warnings(at)), _warnings(at)


def test_compare_warns_about_keys_of_no_slot_and_repeated_slot_keys():
    at = _run(COMPARE, {"c_n": "2", "c_src1": "default", "c_src2": "link", "2.m": "llama3-8b", "2.n": "64",
                        "2.tp": ["2", "4"], "5.tp": "3", "9.m": "x"})
    warns = _warnings(at)
    assert any("'5.tp': no scenario slot '5'" in w for w in warns), warns
    assert any("'9.m': no scenario slot '9'" in w for w in warns), warns
    assert any(w.startswith("Scenario 2: tp: given 2 times") for w in warns), warns
    assert at.query_params["2.tp"] == "4"


@pytest.mark.parametrize("params, pp, vpp", [
    # 7 divides neither 2,048 nor 64: pp refused. DeepSeek's PP 16 holds vpp 3 (interleaved); Llama 3
    # 8B's PP 1 has no pipeline to interleave, so vpp is dropped, naming the refused pp.
    ({"p": "deepseek-v3-h800-2048", "pp": "7", "vpp": "3"}, 16, 3),
    ({"p": "llama3-8b-h100-64", "pp": "7", "vpp": "3"}, 1, 1),
])
def test_plan_link_with_a_refused_pp_opens_and_words_vpp_by_its_cause(params, pp, vpp):
    at = _run(PLAN, params)
    assert at.number_input(key="w_pp").value == pp and at.number_input(key="w_vpp").value == vpp
    assert at.query_params["pp"] == str(pp) and at.query_params.get("vpp", "1") == str(vpp)
    warns = _warnings(at)
    assert any(w.startswith("Link: pp: refused") and "7" in w and f"kept the base value pp={pp}" in w
               for w in warns), warns
    vpp_lines = [w for w in warns if w.startswith("Link: vpp")]
    if vpp == 3:
        assert vpp_lines == [] and at.selectbox(key="w_sch").value == "interleaved"
    else:
        assert len(vpp_lines) == 1 and "because the link's pp=7 was refused" in vpp_lines[0], warns
        assert "needs schedule" not in vpp_lines[0]
    assert not [e.value for e in at.error if e.icon != ":material/memory:"]  # a valid scenario, no input error


def test_compare_an_unknown_c_src_without_slot_keys_says_which_preset_it_shows():
    """Found by review: c_src1 holding a pasted query (not a preset id) warned "reading the slot's
    link instead", but the slot had no 1.* keys, so it silently showed the default scenario. With
    no slot keys the slot now shows its default preset (as when c_src1 is absent) and says so;
    with slot keys it still reads them."""
    at = _run(COMPARE, {"c_n": "2", "c_src1": "p=deepseek-v3-h800-2048&n=1024", "c_src2": "default"})
    assert not at.exception
    warns = [w for w in _warnings(at) if w.startswith("Link: c_src1=")]
    assert len(warns) == 1 and "has no 1.* keys" in warns[0] and "using preset 'default'" in warns[0], warns
    assert at.selectbox(key="c_src0").value == "default"
    at = _run(COMPARE, {"c_n": "2", "c_src1": "nope", "1.m": "llama3-8b", "1.n": "64"})
    warns = [w for w in _warnings(at) if w.startswith("Link: c_src1=")]
    assert len(warns) == 1 and "reading the slot's link (1.* keys) instead" in warns[0], warns
    assert at.selectbox(key="c_src0").value == "link" and at.query_params["1.m"] == "llama3-8b"
