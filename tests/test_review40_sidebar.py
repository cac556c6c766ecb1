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


def test_a_schedule_change_rechecks_the_note_and_vpp_0_is_not_vpp_1():
    """Review 40c D1: VPP 3 switched the split (80 layers, PP·VPP 12), then the 1F1B schedule set VPP
    to 1 and the note, now false, stayed. D2: VPP 0 (the box's own error) read as VPP 1."""
    at = _plan()
    at.number_input(key="w_vpp").set_value(3).run()
    assert len(_notes(at)) == 1
    at.selectbox(key="w_sch").set_value("1f1b").run()
    assert at.session_state["w_vpp"] == 1 and _notes(at) == []
    at = _plan()
    at.number_input(key="w_pp").set_value(3).run()  # 80 mod 15: switched
    at.selectbox(key="w_ls").set_value("even").run()
    at.number_input(key="w_vpp").set_value(0).run()  # 0 is refused by the box; nothing is switched
    assert at.session_state["w_ls"] == "even" and _notes(at) == []


@pytest.mark.parametrize("pid,mid,change", [
    ("llama3-405b-h100-16k", "llama3-70b", "vpp 7 → 1"),     # PP 16 · VPP 7 = 112 virtual stages > 80 layers
    ("deepseek-v3-h800-2048", "llama3-70b", "ep 64 → 1"),    # EP on a dense model
])
def test_a_catalogue_model_the_split_cannot_hold_gets_the_links_split(pid, mid, change):
    """Review 40c D4: choosing the model stopped the page on the schema's message while a link with
    the same model opens on the nearest split; now the sidebar takes that split and says so."""
    at = AppTest.from_file(PLAN, default_timeout=120)
    at.query_params["p"] = pid
    at.run()
    at.selectbox(key="w_model").set_value(mid).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    notes = [c.value for c in at.caption if c.value.startswith("Split changed so it fits")]
    assert len(notes) == 1 and f": {change} (what a share link" in notes[0]
    link_sj, _ = share.params_to_scenario({"p": pid, "m": mid})
    page = at.session_state["scenario"]["parallelism"]
    assert {k: page.get(k) for k in link_sj["parallelism"] if k != "dp"} == \
        {k: v for k, v in link_sj["parallelism"].items() if k != "dp"}
    # the note goes once the user changes the split
    at.number_input(key="w_tp").set_value(4).run()
    assert not [c for c in at.caption if c.value.startswith("Split changed so it fits")]


def test_an_imported_config_whose_layers_pp_vpp_does_not_divide_switches_too():
    """Review 40c D5 (AppTest; tests/e2e/test_review40_import.py drives the real uploader): Llama 3.1
    8B's 32 layers over PP 4 · VPP 5 = 20: 32 mod 20 = 12 virtual stages take 2 layers, 8 take 1."""
    import json

    at = _plan()
    cfg = json.loads((Path(__file__).resolve().parent / "data" / "hf_configs.json").read_text())["llama-3.1-8b"]
    up = next(u for u in at.get("file_uploader") if u.label == "Import a Hugging Face config.json")
    up.set_value(
        ("config.json", json.dumps(cfg["config"]).encode(), "application/json"))
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["w_ls"] == "uneven" and at.session_state["w_m_layers"] == 32
    assert "Layer split even → uneven: 32 layers do not divide by PP·VPP = 4·5 = 20; the first 12 of 20 virtual " \
           "stages take 2 layers, the others 1." in _notes(at)
    assert not [c.value for c in at.sidebar.caption if "split or batch is not valid" in c.value]
