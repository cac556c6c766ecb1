"""Scenario validation: the rules of the foundation issue, each with the message it gives."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import planner
from planner import catalog
from planner.schema import Scenario, format_errors

BASE = {
    "model": "llama3-70b",
    "training": {"seq_len": 8192, "global_batch_size": 512, "micro_batch_size": 1},
    "parallelism": {"tp": 8, "pp": 4, "cp": 1},
    "cluster": {"system": "dgx-h100", "n_gpus": 1024},
}


def _with(**changes):
    d = copy.deepcopy(BASE)
    for path, value in changes.items():
        cur = d
        parts = path.split("__")
        for p in parts[:-1]:
            cur = cur.setdefault(p, {})
        cur[parts[-1]] = value
    return d


def _msg(data) -> str:
    with pytest.raises(ValidationError) as ei:
        Scenario.model_validate(data)
    return "\n".join(format_errors(ei.value))


def test_dp_is_derived():
    s = Scenario.model_validate(BASE)
    assert s.parallelism.dp == 1024 // 32


def test_defaults_fill_everything_but_model_and_system():
    s = Scenario.model_validate({"model": "llama3-8b", "cluster": {"system": "dgx-h100", "n_gpus": 8}})
    assert s.training.precision == "bf16"
    assert s.parallelism.dp == 8
    assert [t.tier for t in s.checkpoint.tiers] == ["host_memory", "pfs"]
    assert "model" in _msg({"cluster": {"system": "dgx-h100", "n_gpus": 8}})
    assert "cluster" in _msg({"model": "llama3-8b"})


def test_product_that_does_not_divide_is_an_error():
    m = _msg(_with(cluster__n_gpus=1000))
    assert "does not divide cluster.n_gpus = 1000" in m


def test_explicit_dp_must_match():
    m = _msg(_with(parallelism__dp=16))
    assert "tp·pp·cp·dp" in m and "≠ cluster.n_gpus = 1024" in m


def test_heads_divisible_by_tp():
    m = _msg(_with(parallelism__tp=3, cluster__n_gpus=3 * 4 * 8))
    assert "parallelism.tp = 3 must divide model.n_heads = 64" in m


def test_kv_heads_replicated_or_sharded():
    # Llama 3 70B has 8 KV heads: tp=16 replicates them (16 % 8 == 0) -> valid.
    Scenario.model_validate(_with(parallelism__tp=16, cluster__n_gpus=16 * 4 * 16))
    # A model with 12 KV heads and tp 8: neither divides -> error that says which.
    custom = dict(catalog.models()["llama3-70b"].model_dump())
    custom.update(n_heads=96, n_kv_heads=12, hidden_size=12288, name="custom")
    m = _msg(_with(model=custom))
    assert "n_kv_heads = 12 must be divisible by tp (sharded) or divide tp (replicated)" in m


def test_experts_divisible_by_ep():
    d = {"model": "mixtral-8x7b", "cluster": {"system": "dgx-h100", "n_gpus": 64},
         "parallelism": {"tp": 1, "pp": 1, "ep": 3}, "training": {"global_batch_size": 64}}
    assert "parallelism.ep = 3 must divide model.moe.n_experts = 8" in _msg(d)
    d["model"] = "llama3-8b"
    d["parallelism"]["ep"] = 2
    assert "needs an MoE model" in _msg(d)


def test_global_batch_divisible():
    m = _msg(_with(training__global_batch_size=500))
    assert "global_batch_size = 500 is not divisible by micro_batch_size·dp = 1·32 = 32" in m


def test_layers_not_divisible_by_pp_rule():
    m = _msg(_with(parallelism__pp=3, cluster__n_gpus=8 * 3 * 32, training__global_batch_size=96))
    assert "n_layers = 80 is not divisible by pp·vpp = 3" in m and "layer_split" in m
    s = Scenario.model_validate(
        _with(parallelism__pp=3, parallelism__layer_split="uneven", cluster__n_gpus=8 * 3 * 32,
              training__global_batch_size=96))
    assert s.parallelism.layer_split == "uneven"


def test_enum_message_lists_allowed_values():
    m = _msg(_with(parallelism__recompute="sometimes"))
    assert "parallelism.recompute" in m and "'selective'" in m and "sometimes" in m


def test_positive_integers():
    m = _msg(_with(parallelism__tp=0))
    # the whole range, not only the bound crossed (schema.COUNT_MAX above)
    assert "parallelism.tp: allowed 1 to 10,000,000 (got 0)" in m


def test_unknown_id_names_the_allowed_ones():
    m = _msg(_with(model="llama9-1t"))
    assert "model: unknown model id 'llama9-1t'" in m and "llama3-70b" in m
    m = _msg(_with(cluster__system="dgx-z9"))
    assert "cluster.system: unknown system id 'dgx-z9'" in m


def test_inline_model_and_system_accepted():
    model = catalog.models()["llama3-8b"].model_dump()
    system = catalog.systems()["dgx-h100"].model_dump()
    d = {"model": model, "cluster": {"system": system, "n_gpus": 16}, "parallelism": {"tp": 8}}
    s = Scenario.model_validate(d)
    assert s.parallelism.dp == 2


def test_extra_field_is_refused():
    m = _msg(_with(parallelism__tpp=2))
    assert "parallelism.tpp: unknown field; allowed: attention_kernel, cp, dp," in m and "tp_comm_overlap" in m


def test_json_round_trip_is_lossless():
    for name in planner.list_presets():
        s = planner.load_preset(name)
        text = json.dumps(s.to_json_dict())
        s2 = Scenario.model_validate(json.loads(text))
        assert s2 == s
        assert s2.to_json_dict() == s.to_json_dict()


def test_every_catalogue_entry_and_preset_validates():
    counts = catalog.validate_all()
    for kind in ("accelerators", "systems", "storage_tiers", "failure_profiles", "models", "scenarios"):
        assert counts[kind] > 0
    for name in planner.list_presets():
        planner.load_preset(name)


REQUIRED_IDS = {
    "accelerators": ["v100-sxm-32gb", "a100-sxm-40gb", "a100-sxm-80gb", "h100-sxm-80gb", "h100-pcie-80gb",
                     "h800-sxm-80gb", "h200-sxm-141gb", "b200", "b300", "gh200-96gb", "gh200-144gb", "gb200",
                     "gb300", "mi250x", "mi300x", "mi325x", "mi355x", "gaudi2", "gaudi3", "mi250x-gcd", "a800-sxm-80gb", "h100-sxm-96gb-hbm2e"],
    "systems": ["dgx-a100-40gb", "dgx-a100-80gb", "dgx-h100", "dgx-h200", "hgx-h800", "dgx-b200", "dgx-b300",
                "gb200-nvl72", "gb300-nvl72", "gh200-quad", "mi300x-8", "mi355x-8", "gaudi3-8", "dgx1-v100",
                "dgx2-v100", "hgx-a800", "frontier-mi250x", "mi325x-8", "gaudi2-8", "hgx-h100-96gb-hbm2e"],
    "storage_tiers": ["host_memory", "local_nvme", "pfs", "object_store"],
    "failure_profiles": ["llama3-h100", "opt175b-a100", "rsc-a100"],
    "models": ["llama3-8b", "llama3-70b", "llama3-405b", "llama2-7b", "llama2-13b", "llama2-70b", "gpt3-175b",
               "mpt-7b", "mpt-30b", "mpt-70b", "mixtral-8x7b", "mixtral-8x22b", "deepseek-v3", "gpt-oss-120b"],
}


@pytest.mark.parametrize("kind", sorted(REQUIRED_IDS))
def test_catalogue_ids(kind):
    table = {"accelerators": catalog.accelerators, "systems": catalog.systems,
             "storage_tiers": catalog.storage_tiers, "failure_profiles": catalog.failure_profiles,
             "models": catalog.models}[kind]()
    assert set(REQUIRED_IDS[kind]) <= set(table)


def test_scenario_presets_required():
    assert {"default", "llama3-405b-h100-16k"} <= set(planner.list_presets())
    s = planner.load_preset("llama3-405b-h100-16k")
    p = s.parallelism
    assert (p.tp, p.pp, p.dp, s.cluster.n_gpus, s.training.seq_len) == (8, 16, 128, 16384, 8192)
    assert s.training.global_batch_size * s.training.seq_len == 16 * 2**20


def test_broken_data_file_names_file_and_field(tmp_path, monkeypatch):
    from planner.schema import Accelerator

    bad = {"x": {**json.loads(catalog.data_path("hardware", "accelerators.json").read_text())["h100-sxm-80gb"]}}
    bad["x"]["hbm_bytes"] = -5
    p = tmp_path / "accelerators.json"
    p.write_text(json.dumps(bad))
    with pytest.raises(catalog.CatalogError) as ei:
        catalog._load_file(p, Accelerator)
    assert "accelerators.json" in str(ei.value) and "'x'" in str(ei.value) and "hbm_bytes" in str(ei.value)
    del bad["x"]["sources"]["tdp_w"]
    bad["x"]["hbm_bytes"] = 8.0e10
    p.write_text(json.dumps(bad))
    with pytest.raises(catalog.CatalogError, match="tdp_w"):
        catalog._load_file(p, Accelerator)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**9, 10**9) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=10,
)
paths = st.sampled_from([
    "model", "training.seq_len", "training.global_batch_size", "training.micro_batch_size", "training.precision",
    "parallelism.tp", "parallelism.pp", "parallelism.dp", "parallelism.cp", "parallelism.ep", "parallelism.vpp",
    "parallelism.zero_stage", "parallelism.recompute", "parallelism.schedule", "cluster.system", "cluster.n_gpus",
    "cluster.accelerator", "checkpoint.tiers", "checkpoint.async", "reliability.profile", "cluster", "parallelism",
])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes=st.lists(st.tuples(paths, json_values), max_size=3))
def test_malformed_scenarios_never_crash(changes):
    """Random and malformed JSON: accepted, or refused with a message naming a field."""
    d = copy.deepcopy(BASE)
    for path, value in changes:
        parts = path.split(".")
        cur = d
        for p in parts[:-1]:
            if not isinstance(cur.get(p), dict):
                cur[p] = {}
            cur = cur[p]
        cur[parts[-1]] = value
    try:
        Scenario.model_validate(d)
    except ValidationError as e:
        lines = format_errors(e)
        assert lines and all(isinstance(x, str) and x for x in lines)


def test_precision_must_exist_on_the_accelerator():
    """A100 has no FP8 tensor cores (hardware.md §1): fp8 there is refused, not run as bf16."""
    d = {"model": "llama3-8b", "cluster": {"system": "dgx-a100-80gb", "n_gpus": 8},
         "training": {"precision": "fp8", "global_batch_size": 8}}
    m = _msg(d)
    assert "training.precision = 'fp8' is not supported by" in m and "bf16" in m
    d["cluster"] = {"system": "dgx-h100", "n_gpus": 8}
    d["training"]["precision"] = "fp4"
    assert "'fp4' is not supported" in _msg(d)
    d["training"]["precision"] = "fp8"
    Scenario.model_validate(d)


def test_nvme_tier_needs_nvme():
    d = {"model": "llama3-8b", "cluster": {"system": "gh200-quad", "n_gpus": 8},
         "training": {"global_batch_size": 8}, "checkpoint": {"tiers": [{"tier": "local_nvme"}]}}
    assert "checkpoint.tiers[0].tier = local_nvme but system" in _msg(d)


def test_usable_hbm_above_the_parts_physical_hbm_is_refused_naming_the_field():
    d = planner.load_preset("default").to_json_dict()
    d["cluster"].setdefault("overrides", {})["hbm_usable_bytes"] = 1e14
    with pytest.raises(ValidationError) as e:
        Scenario.model_validate(d)
    msg = " ".join(format_errors(e.value))
    assert "cluster.overrides.hbm_usable_bytes" in msg and "80 GiB" in msg
    d["cluster"]["overrides"]["hbm_usable_bytes"] = 70 * 2**30  # below the H100's 80 GiB: fine
    assert Scenario.model_validate(d).cluster.overrides.hbm_usable_bytes == 70 * 2**30


# the ranges are the fields' annotations: PosInt ge=1 le=COUNT_MAX (10,000,000); seq_len ge=1 le=4,194,304
@pytest.mark.parametrize(("path", "field", "allowed"), [
    (("parallelism", "tp"), "parallelism.tp", "allowed 1 to 10,000,000"),
    (("parallelism", "dp"), "parallelism.dp", "allowed 1 to 10,000,000"),
    (("training", "seq_len"), "training.seq_len", "allowed 1 to 4,194,304")])
def test_true_is_not_a_number(path, field, allowed):
    """pydantic's lax mode read ``true`` as 1 (``--set parallelism.tp=true`` gave tp = 1); the
    refusal names the range, as every other message does (review h29a F2)."""
    d = planner.load_preset("default").to_json_dict()
    d[path[0]][path[1]] = True
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(d)
    # whole-number fields say so, as tp=2.5 does (review h29d)
    assert e.value.lines == [f"{field}: must be a whole number, {allowed} (got true)"]


def test_true_is_not_a_checkpoint_interval():
    d = planner.load_preset("default").to_json_dict()
    d["checkpoint"]["tiers"][0]["interval_s"] = True
    with pytest.raises(planner.InputError, match=r"checkpoint.tiers\[0\].interval_s: must be a number, allowed more than 0 \(got true\)"):
        planner.evaluate(d)


def test_local_nvme_without_bandwidth_is_refused_naming_the_field():
    """Found by review: an inline system with local NVMe but 0 B/s write bandwidth gave goodput 0
    and NaN lost work with a local_nvme tier. A drive that cannot be written holds no checkpoint."""
    d = planner.load_preset("default").to_json_dict()
    from planner import catalog
    sysd = catalog.systems()["dgx-h100"].model_dump()
    sysd["local_nvme_write_bw_bytes_per_s"] = 0.0
    d["cluster"]["system"] = sysd
    with pytest.raises(planner.InputError, match="local_nvme_write_bw_bytes_per_s = 0 with local_nvme_bytes"):
        planner.evaluate(d)


def test_tokens_total_has_a_documented_upper_bound():
    """training.tokens_total ≤ 1e16: far beyond the largest published pre-training runs (Llama 3
    405B 15.6T tokens, arXiv:2407.21783; Qwen3 36T, arXiv:2505.09388). 1e300 used to pass and
    export a 300-digit --train-iters; now one line names the field and the range."""
    d = planner.load_preset("default").to_json_dict()
    for ok in (3.6e13, 1e16):
        d["training"]["tokens_total"] = ok
        assert Scenario.model_validate(d).training.tokens_total == ok
    for bad in (1e300, 1.0000001e16):
        d["training"]["tokens_total"] = bad
        with pytest.raises(ValidationError) as e:
            Scenario.model_validate(d)
        (line,) = format_errors(e.value)
        assert line.startswith("training.tokens_total: ") and "allowed 1,000,000 to 1e+16 (got " in line
    field = Scenario.model_json_schema()["$defs"]["Training"]["properties"]["tokens_total"]
    assert field["maximum"] == 1e16 and "1e16" in field["description"] and "1.56e13" in field["description"]


def test_cli_export_refuses_a_300_digit_run():
    from test_cli import run

    rc, out, err = run("export", "--preset", "default", "--set", "training.tokens_total=1e300", "--to", "megatron")
    assert rc == 2 and out == "" and err.count("\n") == 1 and "training.tokens_total" in err
