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
    # review 43a: values of the wrong type were half-taken by the widgets (kept, converted or swapped)
    (("cluster", "system"), None, "cluster.system: must be a system id"),
    (("checkpoint", "tiers"), [{"tier": None}, {"tier": "pfs", "interval_s": None}], "checkpoint.tiers[0].tier"),
    (("parallelism", "tp"), "4", "parallelism.tp: must be a whole number"),
    (("parallelism", "sequence_parallel"), "yes", "parallelism.sequence_parallel: must be true or false"),
    (("reliability", "profile"), None, "reliability.profile"),
    (("name",), 5, "name: must be a string"),
])
def test_import_refusals_name_the_shape_the_page_cannot_hold(path, value, needle):
    out = share.import_refusals(_with(preset_json("default"), path, value))
    assert any(needle in line for line in out), out


def test_unknown_model_id_lists_the_catalogue_ids():
    out = share.import_refusals(_with(preset_json("default"), ("model",), "gpt-9"))
    line = next(x for x in out if "gpt-9" in x)
    for mid in catalog.models():
        assert mid in line


@pytest.mark.parametrize("change", [
    lambda sj: sj["parallelism"].update(tp=3, dp=None),  # 3 fits the TP box; 3·PP·CP does not divide 1,024 GPUs
    lambda sj: sj["training"].update(global_batch_size=511),  # not divisible by DP 32
    # a custom model whose n_kv_heads = 8 does not divide n_heads = 7: a rule of the model section
    lambda sj: sj.update(model={**catalog.models()["llama3-8b"].model_dump(mode="json", exclude_none=True),
                                "n_heads": 7}),
    # review 43b: an inline system's own rule (its NVLink domain of 3 does not divide its 8 GPUs per
    # node) is a rule across fields too; choosing a catalogue system on the page fixes it
    lambda sj: sj["cluster"].update(system={**catalog.systems()["dgx-h100"].model_dump(mode="json", exclude_none=True),
                                            "nvlink_domain_size": 3}),
])
def test_a_cross_field_error_is_not_a_refusal(change):
    sj = preset_json("default")
    change(sj)
    assert share.import_refusals(sj) == []


def test_the_plan_page_refuses_a_system_of_the_wrong_type():
    """Review 43a: "system": null loaded the file's other values onto the first catalogue system."""
    at = _run(PLAN, {"p": "default"})
    before = copy.deepcopy(at.session_state["scenario"])
    sj = preset_json("default")
    sj["cluster"].update(system=None, n_gpus=512)
    _upload(at, "Import scenario JSON", "sys.json", json.dumps(sj).encode())
    err = [e.value for e in at.sidebar.error if e.value.startswith("Import refused")]
    assert len(err) == 1 and "cluster.system" in err[0]
    assert at.session_state["scenario"] == before


def test_a_file_nested_too_deep_is_not_a_scenario():
    at = _run(PLAN, {"p": "default"})
    before = copy.deepcopy(at.session_state["scenario"])
    v: object = 8
    for _ in range(600):
        v = [v]
    sj = preset_json("default")
    sj["parallelism"]["tp"] = v
    _upload(at, "Import scenario JSON", "deep.json", json.dumps(sj).encode())
    assert any("nested too deeply (more than 64 levels" in e.value for e in at.sidebar.error), [e.value for e in at.sidebar.error]
    assert at.session_state["scenario"] == before


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


def test_a_whole_float_zero_stage_loads_as_the_schema_reads_it():
    """Review 43b: "zero_stage": 1.0, which the schema and the CLI read as 1, was refused by the
    page as "zero_stage = 1: allowed 0, 1, 2, 3"."""
    sj = preset_json("default")
    sj["parallelism"]["zero_stage"] = 1.0
    assert share.import_refusals(sj) == []
    at = _run(PLAN, {"p": "default"})
    sj["cluster"]["n_gpus"] = 512  # a change the page shows once loaded
    sj["parallelism"]["dp"] = None
    _upload(at, "Import scenario JSON", "z.json", json.dumps(sj).encode())
    assert not [e for e in at.sidebar.error if e.value.startswith("Import refused")]
    assert at.session_state["scenario"]["cluster"]["n_gpus"] == 512
    assert int(at.session_state["scenario"]["parallelism"]["zero_stage"]) == 1
    assert not at.main.error and at.metric
