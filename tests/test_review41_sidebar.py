"""Review 40c D3, left in session 40, fixed in session 41: the sidebar's automatic switch of the
layer split to uneven (a model or PP·VPP whose layer count does not divide) stayed uneven after a
later model or split divided evenly again. It now goes back to even — only where the page made the
switch; a split the user or a loaded scenario chose stays."""

from __future__ import annotations

import pytest

from test_review40_sidebar import _clear_caches, _plan  # noqa: F401 - the autouse cache fixture and the page


def _notes(at):
    return [c.value for c in at.caption if c.value.startswith("Layer split")]


def test_an_automatic_switch_goes_back_to_even_when_the_split_divides_again():
    at = _plan()
    at.number_input(key="w_vpp").set_value(3).run()  # 80 mod 12 = 8: switched
    assert at.session_state["w_ls"] == "uneven"
    at.number_input(key="w_vpp").set_value(2).run()  # 80 = 8·10: divides again
    assert not at.exception
    assert at.session_state["w_ls"] == "even"
    assert _notes(at) == ["Layer split uneven → even again: 80 layers divide by PP·VPP = 4·2 = 8, "
                          "10 per virtual stage."]
    # a further change that still divides says nothing more
    at.number_input(key="w_vpp").set_value(5).run()  # 80 = 20·4
    assert at.session_state["w_ls"] == "even" and _notes(at) == []


def test_a_model_switch_and_back():
    at = _plan()
    at.selectbox(key="w_model").set_value("deepseek-v3").run()  # 61 layers: uneven
    assert at.session_state["w_ls"] == "uneven"
    at.selectbox(key="w_model").set_value("llama2-70b").run()  # 80 layers: even again
    assert not at.exception
    assert at.session_state["w_ls"] == "even"
    assert _notes(at)[0].startswith("Layer split uneven → even again: 80 layers divide by PP·VPP = 4·5 = 20")


def test_a_still_uneven_change_keeps_the_switch_and_updates_the_note():
    at = _plan()
    at.number_input(key="w_vpp").set_value(3).run()  # 80 mod 12 = 8
    at.number_input(key="w_pp").set_value(3).run()  # 80 mod 9 = 8: still uneven
    assert at.session_state["w_ls"] == "uneven"
    assert _notes(at) == ["Layer split even → uneven: 80 layers do not divide by PP·VPP = 3·3 = 9; the first 8 "
                          "of 9 virtual stages take 9 layers, the others 8."]
    at.number_input(key="w_pp").set_value(4).run()  # 4·3 = 12: still 8 left over
    at.number_input(key="w_vpp").set_value(5).run()  # 4·5 = 20 divides: back to even
    assert at.session_state["w_ls"] == "even"


@pytest.mark.parametrize("how", ["user", "user_after_switch"])
def test_a_split_the_user_chose_stays_uneven(how):
    at = _plan()
    if how == "user":
        at.selectbox(key="w_ls").set_value("uneven").run()
    else:
        at.number_input(key="w_vpp").set_value(3).run()  # switched by the page ...
        assert at.session_state["w_ls"] == "uneven"
        at.selectbox(key="w_ls").set_value("uneven").run()  # (unchanged: no on_change)
        at.selectbox(key="w_ls").set_value("even").run()
        at.selectbox(key="w_ls").set_value("uneven").run()  # ... then chosen by the user
    at.number_input(key="w_vpp").set_value(2).run()  # divides: the user's uneven stays
    assert not at.exception
    assert at.session_state["w_ls"] == "uneven" and _notes(at) == []
