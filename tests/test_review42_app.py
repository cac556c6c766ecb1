"""Review 42c: a scenario JSON imported on the Plan page with a shape the page has no widget for
(an unknown field inside a section, an unknown catalogue id, a section that is not an object) is
refused whole, naming the field, and the current scenario, boxes and link are kept — as a value out
of a box's range already was (tests/test_app_review_fixes.py).

Expected messages come from the schema's own vocabulary (the parallelism section's fields, the
catalogue's model ids in presets/models.json), never from the page's text pasted back."""

from __future__ import annotations

import copy
import json

import pytest

from planner import catalog, share
from planner.presets import preset_json
from test_app import _clear_caches, _run  # noqa: F401  (autouse cache clearing)
from test_app_review_fixes import PLAN, _upload, _with


@pytest.mark.parametrize(("path", "value", "needle"), [
    (("parallelism", "zzz"), 3, "parallelism.zzz: unknown field"),
    (("reliability", "qq"), 1, "reliability.qq: unknown field"),
    (("model",), "gpt-9", "model: unknown model id 'gpt-9'"),
    (("cluster", "system"), "dgx-z9", "cluster.system: unknown system id 'dgx-z9'"),
    (("parallelism",), 5, "parallelism: must be an object"),
    (("model",), {"name": "x"}, "model.n_layers: Field required"),
])
def test_import_refusals_name_the_shape_the_page_cannot_hold(path, value, needle):
    out = share.import_refusals(_with(preset_json("default"), path, value))
    assert any(needle in line for line in out), out


def test_unknown_model_id_lists_the_catalogue_ids():
    out = share.import_refusals(_with(preset_json("default"), ("model",), "gpt-9"))
    line = next(x for x in out if "gpt-9" in x)
    for mid in catalog.models():
        assert mid in line


def test_a_cross_field_error_is_not_a_refusal():
    sj = preset_json("default")
    sj["parallelism"].update(tp=3, dp=None)  # 3 fits the TP box; 3·PP·CP does not divide 1,024 GPUs
    assert share.import_refusals(sj) == []


@pytest.mark.parametrize(("path", "value", "needle"), [
    (("parallelism", "zzz"), 3, "parallelism.zzz"),
    (("model",), "gpt-9", "gpt-9"),
])
def test_plan_page_refuses_the_import_whole_and_keeps_the_scenario(path, value, needle):
    at = _run(PLAN, {"p": "default"})
    before = copy.deepcopy(at.session_state["scenario"])
    link_before = dict(at.query_params)
    _upload(at, "Import scenario JSON", "odd.json", json.dumps(_with(preset_json("default"), path, value)).encode())
    err = [e.value for e in at.sidebar.error if e.value.startswith("Import refused")]
    assert len(err) == 1 and needle in err[0], [e.value for e in at.sidebar.error]
    assert at.session_state["scenario"] == before
    assert dict(at.query_params) == link_before
    assert not at.main.error and at.metric
