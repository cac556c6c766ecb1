"""Review 40c D5: a config.json whose layer count PP·VPP does not divide under the even layer split
switches the sidebar to the uneven split and says so, as choosing a catalogue model does (the
import stopped the page on the schema's message). Real browser: AppTest cannot drive an uploader."""

from __future__ import annotations

import pytest

from .test_browser import TIMEOUT_MS, _settle, llama_config_file

pytestmark = pytest.mark.e2e


def test_an_imported_61_layer_config_switches_to_the_uneven_split(app_url, browser, tmp_path):
    from playwright.sync_api import expect

    f = llama_config_file(tmp_path, num_hidden_layers=61, _name_or_path="e2e/llama-61l")
    ctx = browser.new_context(viewport={"width": 1500, "height": 2200})
    page = ctx.new_page()
    page.goto(f"{app_url}/?p=default", wait_until="domcontentloaded")  # PP 4 · VPP 5 = 20, even split
    _settle(page)
    sb = page.get_by_test_id("stSidebar")
    up = sb.get_by_test_id("stFileUploader").filter(has_text="Hugging Face")
    up.locator("input[type=file]").set_input_files(str(f))
    expect(sb.get_by_label("Layers", exact=True)).to_have_value("61", timeout=TIMEOUT_MS)
    _settle(page)
    # 61 = 3·20 + 1: the first virtual stage takes 4 layers, the other 19 hold 3 (by hand)
    want = ("Layer split even → uneven: 61 layers do not divide by PP·VPP = 4·5 = 20; the first virtual "
            "stage takes 4 layers, the others 3.")
    expect(sb.get_by_text(want, exact=True).first).to_be_visible(timeout=TIMEOUT_MS)
    assert page.get_by_test_id("stAlertContentError").filter(has_text="layer_split").count() == 0
    assert "ls=uneven" in page.url
    ctx.close()
