"""Review 39B, left then, fixed in session 40: a sidebar change that makes the layer count no longer
divide PP·VPP under the even layer split chose nothing and stopped the page on the schema's message
(naming ``parallelism.layer_split``), where a share link with the same values switches to the uneven
split with a warning. Now the sidebar switches too and says so under the box."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from planner import catalog, share

PLAN = str(Path(__file__).resolve().parents[1] / "app_pages" / "plan.py")


@pytest.fixture(autouse=True)
def _clear_caches():
    st.cache_data.clear()
    yield


def _plan():
    at = AppTest.from_file(PLAN, default_timeout=120)
    at.run()
    assert not at.exception
    # the default preset (Llama 3 70B, 80 layers) runs PP 4 · VPP 5 = 20 virtual stages, even split
    assert (at.session_state["w_pp"], at.session_state["w_vpp"], at.session_state["w_ls"]) == (4, 5, "even")
    return at


def _notes(at):
    return [c.value for c in at.caption if c.value.startswith("Layer split even → uneven")]


def test_a_model_whose_layers_pp_vpp_does_not_divide_switches_to_the_uneven_split():
    at = _plan()
    at.selectbox(key="w_model").set_value("deepseek-v3").run()
    assert not at.exception
    assert catalog.models()["deepseek-v3"].n_layers == 61  # 61 = 3·20 + 1
    assert at.session_state["w_ls"] == "uneven"
    # hand count: 61 mod 20 = 1 virtual stage of 61 // 20 + 1 = 4 layers, the other 19 hold 3
    want = ("Layer split even → uneven: 61 layers do not divide by PP·VPP = 4·5 = 20; the first virtual "
            "stage takes 4 layers, the others 3.")
    assert _notes(at) == [want, want]  # under the model and under the layer split box
    assert not [e for e in at.error if "layer_split" in e.value]
    assert [m.label for m in at.metric][:1] == ["Fits in HBM"]  # the results are shown
    # the scenario is the one a link with the same model reads as (its split fitted the same way)
    link_sj, warns = share.params_to_scenario({"p": "default", "m": "deepseek-v3"})
    assert link_sj["parallelism"]["layer_split"] == "uneven" and any("ls='even' → 'uneven'" in w for w in warns)
    page = at.session_state["scenario"]["parallelism"]
    assert {k: page.get(k) for k in link_sj["parallelism"]} == link_sj["parallelism"]


def test_the_note_counts_the_longer_stages_and_a_divisible_model_keeps_the_even_split():
    at = _plan()
    at.selectbox(key="w_model").set_value("llama3-8b").run()  # 32 layers, PP·VPP 20: 32 mod 20 = 12
    assert at.session_state["w_ls"] == "uneven"
    assert _notes(at)[0].endswith("the first 12 of 20 virtual stages take 2 layers, the others 1.")
    at = _plan()
    at.selectbox(key="w_model").set_value("llama2-70b").run()  # 80 layers: 80 = 4·20
    assert at.session_state["w_ls"] == "even" and _notes(at) == []


def test_pp_vpp_and_custom_layers_switch_too_and_the_users_choice_stands():
    at = _plan()
    at.number_input(key="w_vpp").set_value(3).run()  # 80 mod (4·3 = 12) = 8
    assert at.session_state["w_ls"] == "uneven"
    assert _notes(at) == ["Layer split even → uneven: 80 layers do not divide by PP·VPP = 4·3 = 12; the first 8 "
                          "of 12 virtual stages take 7 layers, the others 6."]  # under the split box only
    # the user sets it back to even: the note goes and the schema's message stops the page (their choice)
    at.selectbox(key="w_ls").set_value("even").run()
    assert _notes(at) == []
    assert any("not divisible by pp·vpp = 12" in e.value for e in at.error)
    # custom model: the layer box
    at = _plan()
    at.selectbox(key="w_model").set_value("custom").run()
    at.number_input(key="w_m_layers").set_value(90).run()  # 90 mod 20 = 10
    assert at.session_state["w_ls"] == "uneven"
    assert len(_notes(at)) == 2
    # PP 8 with VPP 5 = 40 virtual stages on 80 layers: divides, nothing changes
    at = _plan()
    at.number_input(key="w_pp").set_value(8).run()
    assert at.session_state["w_ls"] == "even" and _notes(at) == []


def test_a_loaded_scenario_drops_the_note():
    at = _plan()
    at.selectbox(key="w_model").set_value("deepseek-v3").run()
    assert _notes(at)
    other = next(p for p in at.selectbox(key="w_preset").options if p != "default")
    at.selectbox(key="w_preset").set_value(other).run()
    assert _notes(at) == []
