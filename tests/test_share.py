"""Share links: planner.share round trips, tampered links, range refusals (no streamlit)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst

import planner
from planner import share
from planner.presets import preset_json


def _norm(sj: dict) -> dict:
    return planner.Scenario.model_validate(sj).to_json_dict()


@pytest.mark.parametrize("pid", list(planner.list_presets()))
def test_preset_round_trip(pid):
    """A link written for a preset reads back to the same validated scenario."""
    sj = preset_json(pid)
    params = share.scenario_to_params(_norm(sj), preset=pid)
    assert all(isinstance(v, str) for v in params.values())
    back, warnings = share.params_to_scenario(params)
    assert warnings == []
    assert _norm(back) == _norm(sj)


def test_compact_keys_for_default():
    params = share.scenario_to_params(_norm(preset_json("default")), preset="default")
    # The spec's examples: compact keys, values as strings.
    assert params["m"] == "llama3-70b" and params["sys"] == "dgx-h100"
    assert params["n"] == "1024" and params["tp"] == "8" and params["pp"] == "4"
    assert "dp" not in params  # derived, not pinned
    assert params["tok"] == "1.5e13"


def test_custom_model_round_trip():
    sj = preset_json("default")
    model = {"name": "my-30b", "n_layers": 40, "hidden_size": 7168, "n_heads": 56, "n_kv_heads": 8,
             "ffn_hidden_size": 20480, "vocab_size": 128256, "gated_mlp": True, "tied_embeddings": False}
    sj["model"] = model
    params = share.scenario_to_params(_norm(sj), preset="default")
    assert params["m"] == "custom" and params["ml"] == "40" and params["mh"] == "7168" and params["ma"] == "56"
    back, warnings = share.params_to_scenario(params)
    assert warnings == []
    assert _norm(back)["model"] == _norm(sj)["model"]


def test_moe_custom_model_round_trip():
    sj = preset_json("default")
    sj["model"] = {"name": "moe", "n_layers": 32, "hidden_size": 4096, "n_heads": 32, "n_kv_heads": 8,
                   "ffn_hidden_size": 14336, "vocab_size": 32000,
                   "moe": {"n_experts": 8, "top_k": 2, "expert_ffn_hidden_size": 14336}}
    sj["parallelism"] = {"tp": 8, "pp": 4, "ep": 8, "schedule": "1f1b", "ep_comm_overlap": True}
    params = share.scenario_to_params(_norm(sj))
    assert params["me"] == "8" and params["mtk"] == "2" and params["epo"] == "1"
    back, warnings = share.params_to_scenario(params)
    assert warnings == [] and _norm(back)["model"]["moe"]["n_experts"] == 8
    assert _norm(back)["parallelism"] == _norm(sj)["parallelism"]
    # Off (the default) is also carried, so a preset with the overlap on can be switched off.
    back, warnings = share.params_to_scenario({**params, "epo": "0"})
    assert warnings == [] and _norm(back)["parallelism"]["ep_comm_overlap"] is False


def test_sliding_window_custom_model_round_trip():
    """A custom model's sliding window (GPT-OSS: 128 tokens in alternate layers) travels in the
    link (msw, mswf) and comes back unchanged."""
    sj = preset_json("default")
    sj["model"] = {"name": "swa", "n_layers": 36, "hidden_size": 2880, "n_heads": 64, "n_kv_heads": 8,
                   "head_dim": 64, "ffn_hidden_size": 2880, "vocab_size": 201088,
                   "sliding_window": 128, "sliding_window_layer_frac": 0.5}
    sj["parallelism"] = {"tp": 8, "pp": 4, "schedule": "1f1b"}
    params = share.scenario_to_params(_norm(sj))
    assert params["msw"] == "128" and params["mswf"] == "0.5"
    back, warnings = share.params_to_scenario(params)
    assert warnings == []
    assert _norm(back)["model"]["sliding_window"] == 128 and _norm(back)["model"]["sliding_window_layer_frac"] == 0.5


def test_hardware_overrides_round_trip():
    sj = preset_json("default")
    sj["cluster"]["overrides"] = {"price_per_gpu_hour_usd": 1.85, "nic_bw_per_gpu_bytes_per_s": 25e9}
    params = share.scenario_to_params(_norm(sj), preset="default")
    assert params["price"] == "1.85" and params["nic"] == "2.5e10"
    back, warnings = share.params_to_scenario(params)
    assert warnings == [] and _norm(back)["cluster"]["overrides"] == _norm(sj)["cluster"]["overrides"]


def test_checkpoint_tiers_round_trip():
    sj = preset_json("default")
    sj["checkpoint"] = {"tiers": [{"tier": "host_memory", "interval_s": 600, "replicas": 1},
                                  {"tier": "pfs", "interval_s": None}]}
    params = share.scenario_to_params(_norm(sj), preset="default")
    assert params["ck"] == "host_memory:600:1,pfs:auto:0"
    back, _ = share.params_to_scenario(params)
    assert _norm(back)["checkpoint"]["tiers"] == _norm(sj)["checkpoint"]["tiers"]


def test_unknown_value_warns_and_keeps_the_rest():
    back, warnings = share.params_to_scenario({"m": "gpt-9", "tp": "4", "n": "512"})
    assert any(w.startswith("m=") and "gpt-9" in w and "allowed" in w for w in warnings)
    assert back["model"] == preset_json("default")["model"]  # kept the base
    assert back["parallelism"]["tp"] == 4 and back["cluster"]["n_gpus"] == 512


def test_out_of_range_is_refused_with_the_range():
    back, warnings = share.params_to_scenario({"tp": "0", "s": "99999999", "pue": "7"})
    text = " ".join(warnings)
    assert "tp='0'" in text and "allowed 1 to 100000" in text  # the TP box's range (share.WIDGET_DEGREE_MAX)
    assert "s='99999999'" in text and "4194304" in text
    assert "pue='7'" in text and "1 to 3" in text
    assert _norm(back) == _norm(preset_json("default"))


def test_unknown_key_and_garbage_values_warn():
    back, warnings = share.params_to_scenario({"zzz": "1", "n": "lots", "sp": "maybe", "sch": "fast"})
    text = " ".join(warnings)
    assert "'zzz'" in text and "n='lots'" in text and "sp='maybe'" in text and "sch='fast'" in text
    assert _norm(back) == _norm(preset_json("default"))


def test_cross_field_error_reverts_only_the_named_key():
    """tp = 7 does not divide Llama 3 70B's 64 heads: tp is refused, n is kept."""
    back, warnings = share.params_to_scenario({"tp": "7", "n": "2048"})
    assert any(w.startswith("tp:") and "kept the base value" in w for w in warnings)
    assert not any(w.startswith("n:") for w in warnings)
    s = planner.Scenario.model_validate(back)
    assert s.parallelism.tp == preset_json("default")["parallelism"]["tp"] and s.cluster.n_gpus == 2048


def test_system_without_the_precision_is_refused_naming_the_precision():
    """A V100 has no BF16 units (hardware.md §1): a link to a DGX-1 on the default bf16 is
    refused with the reason, and the same link with prec=fp16 is taken whole."""
    back, warnings = share.params_to_scenario({"sys": "dgx1-v100"})
    assert len(warnings) == 1 and warnings[0].startswith("sys: refused")
    assert "training.precision = 'bf16' is not supported" in warnings[0] and "fp16" in warnings[0]
    assert planner.Scenario.model_validate(back).cluster.system == preset_json("default")["cluster"]["system"]
    back, warnings = share.params_to_scenario({"sys": "dgx1-v100", "prec": "fp16", "tp": "8", "n": "512"})
    assert warnings == []
    s = planner.Scenario.model_validate(back)
    assert (s.cluster.system, s.training.precision) == ("dgx1-v100", "fp16")


def test_unknown_preset_falls_back_to_default():
    back, warnings = share.params_to_scenario({"p": "nope"})
    assert warnings and "p='nope'" in warnings[0]
    assert _norm(back) == _norm(preset_json("default"))


def test_parse_link_and_prefix():
    assert share.parse_link("http://x:8501/compare?m=llama3-8b&n=64") == {"m": "llama3-8b", "n": "64"}
    assert share.parse_link("?tp=2") == {"tp": "2"} and share.parse_link("") == {}
    p = share.prefix_params({"tp": "2"}, "1.")
    assert p == {"1.tp": "2"} and share.unprefix_params({**p, "2.tp": "4"}, "1.") == {"tp": "2"}


def test_fmt_number_round_trips():
    for x in (1.5e13, 3600.0, 0.02, 1.0 / 3.0, 25e9, 7, 1e-7):
        assert float(share.fmt_number(x)) == x


_text = hst.text(max_size=30)
_keys = hst.one_of(hst.sampled_from(share.ALL_KEYS), _text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hst.dictionaries(_keys, hst.one_of(_text, hst.lists(_text, max_size=3)), max_size=8))
def test_tampered_links_never_raise(params):
    sj, warnings = share.params_to_scenario(params)
    assert isinstance(sj, dict) and isinstance(warnings, list)
    assert all(isinstance(w, str) for w in warnings)


@settings(max_examples=40, deadline=None)
@given(hst.text(max_size=80))
def test_random_pasted_links_never_raise(text):
    assert isinstance(share.parse_link(text), dict)


def test_dropout_and_architecture_fields_round_trip():
    sj = preset_json("default")
    sj["model"] = {"name": "gpt-ish", "n_layers": 40, "hidden_size": 2048, "n_heads": 16, "head_dim": 160,
                   "ffn_hidden_size": 8192, "vocab_size": 50257, "gated_mlp": False, "tied_embeddings": True,
                   "norm": "layernorm", "linear_bias": True, "learned_pos_embeddings": 2048, "dropout": 0.1}
    params = share.scenario_to_params(_norm(sj), preset="default")
    assert params["mdo"] == "0.1" and params["md"] == "160" and params["mnorm"] == "layernorm"
    assert params["mt"] == "1" and params["mb"] == "1" and params["mpos"] == "2048"
    back, warnings = share.params_to_scenario(params)
    assert warnings == [] and _norm(back)["model"] == _norm(sj)["model"]
    _, warnings = share.params_to_scenario({**params, "mdo": "1"})
    assert any(w.startswith("mdo='1'") and "0.99" in w for w in warnings)


def _inline_objects():
    from planner import catalog

    system = catalog.systems()["dgx-h100"].model_dump(mode="json", by_alias=True, exclude_none=True)
    system["name"] = "my-h100-cluster"
    system["nic_bw_per_gpu_bytes_per_s"] = 25e9
    acc = catalog.accelerators()["h100-sxm-80gb"].model_dump(mode="json", by_alias=True, exclude_none=True)
    acc["name"] = "h100-derated"
    acc["hbm_usable_bytes"] = 70 * 2**30
    prof = catalog.failure_profiles()["llama3-h100"].model_dump(mode="json", by_alias=True, exclude_none=True)
    prof["name"] = "my-fleet"
    tier = catalog.storage_tiers()["pfs"].model_dump(mode="json", by_alias=True, exclude_none=True)
    tier["name"] = "slow-pfs"
    tier["aggregate_write_bw_bytes_per_s"] = 1e11
    return system, acc, prof, tier


def test_inline_system_accelerator_profile_and_tier_round_trip():
    """Objects that are not in the catalogue travel as compact JSON (sysj, accj, fpj, ckj)."""
    system, acc, prof, tier = _inline_objects()
    sj = preset_json("default")
    sj["cluster"]["system"] = system
    sj["cluster"]["accelerator"] = acc
    sj["reliability"] = {"profile": prof, "hot_spare_nodes": 2, "rate_scale": 1.5}
    sj["checkpoint"] = {"tiers": [{"tier": "host_memory", "interval_s": 300, "replicas": 1},
                                  {"tier": tier, "interval_s": 7200}]}
    params = share.scenario_to_params(_norm(sj), preset="default")
    assert {"sysj", "accj", "fpj", "ckj"} <= set(params) and not {"sys", "acc", "fp", "ck"} & set(params)
    import json as _json

    assert len(params["sysj"]) < len(_json.dumps(_norm(sj)["cluster"]["system"]))  # compact separators
    back, warnings = share.params_to_scenario(params)
    assert warnings == []
    assert _norm(back) == _norm(sj)


def test_tampered_inline_json_is_refused_with_a_warning():
    system, *_ = _inline_objects()
    import json as _json

    bad = dict(system)
    bad["nic_bw_per_gpu_bytes_per_s"] = -1
    cases = {"sysj": "{not json", "accj": "[1, 2]", "fpj": _json.dumps({"name": "x"}),
             "ckj": _json.dumps([{"tier": {"name": "t"}}])}
    back, warnings = share.params_to_scenario(cases)
    for k in cases:
        assert any(w.startswith(f"{k}=") and "kept the base value" in w for w in warnings), k
    assert _norm(back) == _norm(preset_json("default"))
    back, warnings = share.params_to_scenario({"sysj": _json.dumps(bad)})
    assert any("nic_bw_per_gpu_bytes_per_s" in w for w in warnings)
    assert share.params_to_scenario({"sysj": "[" * 100_000})[1]  # too long / too deep: a warning, no raise


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hst.sampled_from(["sysj", "accj", "fpj", "ckj"]),
       hst.recursive(hst.none() | hst.booleans() | hst.floats() | hst.text(max_size=8),
                     lambda c: hst.lists(c, max_size=3) | hst.dictionaries(hst.text(max_size=8), c, max_size=3),
                     max_leaves=10))
def test_tampered_inline_json_never_raises(key, obj):
    import json as _json

    sj, warnings = share.params_to_scenario({key: _json.dumps(obj)})
    assert isinstance(sj, dict) and all(isinstance(w, str) for w in warnings)


def test_empty_ck_is_refused_not_read_as_no_checkpointing():
    """``ck=`` (empty) is a broken link, not ``ck=none``: warn naming the key and what is allowed,
    keep the base preset's tiers (docs/ui.md: an unparsable value keeps the base value)."""
    base, _ = share.params_to_scenario({"p": "default"})
    sj, warnings = share.params_to_scenario({"p": "default", "ck": ""})
    assert len(warnings) == 1 and "ck=''" in warnings[0] and "'none'" in warnings[0]
    assert sj["checkpoint"]["tiers"] == base["checkpoint"]["tiers"] != []
    sj_none, w_none = share.params_to_scenario({"p": "default", "ck": "none"})
    assert w_none == [] and sj_none["checkpoint"]["tiers"] == []


def test_op_sac_recompute_round_trips_and_bad_value_is_named():
    """TorchTitan's per-op SAC is a link value like the other recompute modes; an unknown one
    is refused naming the key and the allowed values, the rest of the link kept."""
    sj = preset_json("default")
    sj["parallelism"]["recompute"] = "op_sac"
    params = share.scenario_to_params(_norm(sj), preset="default")
    assert params["rc"] == "op_sac"
    back, warnings = share.params_to_scenario(params)
    assert warnings == [] and back["parallelism"]["recompute"] == "op_sac"
    back, warnings = share.params_to_scenario({**params, "rc": "op"})
    assert len(warnings) == 1 and "rc" in warnings[0] and "op_sac" in warnings[0]
    assert back["cluster"]["n_gpus"] == 1024


def test_bad_link_value_names_the_key_and_the_field():
    """A tampered value names the link key and the scenario field it would set, with what is
    allowed; the other keys still apply."""
    sj, warnings = share.params_to_scenario({"p": "default", "ew": "compiled", "tp": "abc", "m": "custom",
                                             "mrope": "maybe", "gbs": "256"})
    assert "ew='compiled' (training.elementwise): allowed: fused, eager; kept the base value" in warnings
    assert "tp='abc' (parallelism.tp): must be a whole number; kept the base value" in warnings
    assert "mrope='maybe' (model.rope): must be 1 or 0; kept the base value" in warnings
    assert sj["training"]["global_batch_size"] == 256 and sj["training"].get("elementwise", "fused") == "fused"


@pytest.mark.parametrize(("key", "raw"), [("nic", "1"), ("hbmu", "1e6"), ("hostmem", "1"), ("price", "0.001"),
                                          ("pwr", "0.5")])
def test_link_values_below_the_plan_widgets_minimum_are_refused_with_a_warning(key, raw):
    # the Plan page's widgets cannot show them (0.1 GB/s, 0.1 GiB, 0.01 USD, 1 W): a link must not
    # silently fall back to the catalogue value there while the share module keeps them
    scen, warnings = share.params_to_scenario({"p": "default", key: raw})
    assert len(warnings) == 1 and warnings[0].startswith(f"{key}='{raw}'") and "kept the base value" in warnings[0]
    base, _ = share.params_to_scenario({"p": "default"})
    assert scen == base


def test_link_numbers_in_other_scripts_digits_are_refused():
    # float('４') == 4.0 in Python; a link carries ASCII numbers only
    scen, warnings = share.params_to_scenario({"p": "default", "tp": "４"})
    assert warnings == ["tp='４' (parallelism.tp): must be a whole number (ASCII digits); kept the base value"]


def test_link_checkpoint_interval_refused_says_what_was_used():
    scen, warnings = share.params_to_scenario({"p": "default", "ck": "pfs:abc:x"})
    assert any("used 'auto' (the optimum)" in w for w in warnings) and any("used 0" in w for w in warnings)
    pfs = [t for t in scen["checkpoint"]["tiers"] if t["tier"] == "pfs"]
    assert pfs and pfs[0]["interval_s"] is None and pfs[0]["replicas"] == 0


@pytest.mark.parametrize(("field", "value"), [("hbm_usable_bytes", 0.1 * 2**30), ("host_memory_bytes", 0.1 * 2**30),
                                              ("nic_bw_per_gpu_bytes_per_s", 0.1 * 1e9),
                                              ("price_per_gpu_hour_usd", 0.01)])
def test_the_plan_widgets_smallest_override_round_trips_through_a_link(field, value):
    # widget minimums (app_pages/_common.py): 0.1 GiB, 0.1 GB/s, 0.01 USD
    d = planner.load_preset("default").to_json_dict()
    d["cluster"].setdefault("overrides", {})[field] = value
    scen, warnings = share.params_to_scenario(share.scenario_to_params(d, preset="default"))
    assert warnings == [] and scen["cluster"]["overrides"][field] == value


def test_fp8_scaling_round_trips_and_a_tampered_value_is_named():
    """training.fp8_scaling travels as f8s; an unknown value is refused naming the key, the
    field and the allowed values, and the link's other keys still apply."""
    sj = preset_json("default")
    sj["training"].update(precision="fp8", fp8_scaling="rowwise")
    params = share.scenario_to_params(_norm(sj), preset="default")
    assert params["f8s"] == "rowwise"
    back, warnings = share.params_to_scenario(params)
    assert warnings == [] and back["training"]["fp8_scaling"] == "rowwise"
    back, warnings = share.params_to_scenario({**params, "f8s": "colwise", "gbs": "512"})
    assert warnings == ["f8s='colwise' (training.fp8_scaling): allowed: tensorwise, rowwise; kept the base value"]
    assert back["training"]["global_batch_size"] == 512 and back["training"]["precision"] == "fp8"


@pytest.mark.parametrize(("params", "refused"), [
    ({"offw": "1"}, "offw"),  # the preset leaves the field out: the default applies, not None
    ({"offg": "1"}, "offg"),  # the message names the field by its last part only
    ({"sys": "dgx1-v100", "prec": "fp16", "gd": "bf16"}, "gd"),
    ({"rc": "full", "rcl": "50"}, "rcl"),  # recompute_layers is not recompute: rc stays
])
def test_refused_link_keys_fall_back_to_a_valid_scenario(params, refused):
    """Found by a fresh-user review: a refused key whose field the preset does not set was put
    back as None (the page then failed), a field named by its last part was not blamed, and
    ``parallelism.recompute`` was blamed for ``parallelism.recompute_layers``."""
    from planner.schema import Scenario

    sj, warnings = share.params_to_scenario({"p": "default", **params})
    Scenario.model_validate(sj)  # valid: nothing None left behind
    assert len(warnings) == 1 and warnings[0].startswith(f"{refused}: refused")
    if "rc" in params:
        assert sj["parallelism"]["recompute"] == "full"


def test_a_product_of_degrees_in_a_message_does_not_blame_one_degree():
    # found by a second review: the last-part fallback read the pp inside "tp·pp·cp = ..." and
    # refused a valid pp=2 before the n that broke the product
    sj, warnings = share.params_to_scenario({"p": "llama3-8b-h100-64", "n": "1", "pp": "2"})
    assert len(warnings) == 1 and warnings[0].startswith("n: refused")
    assert sj["parallelism"]["pp"] == 2
    # ... but a key named only inside such a product is still refused when it is the only one
    # (a third review: restricting the match had left ?pp=3 and ?mbs=3 invalid)
    from planner.schema import Scenario

    for key, val in (("pp", "3"), ("mbs", "3")):
        sj, warnings = share.params_to_scenario({"p": "default", key: val})
        assert len(warnings) == 1 and warnings[0].startswith(f"{key}: refused")
        Scenario.model_validate(sj)


@pytest.mark.parametrize(("params", "kept", "refused"), [
    # a fourth review: the first named key is not always the wrong one, and some errors name no key
    ({"p": "default", "n": "256", "pp": "24", "mbs": "8"}, {("cluster", "n_gpus"): 256}, {"pp", "mbs"}),
    ({"p": "mixtral-8x7b-h100-64", "n": "128", "pp": "2048"}, {("cluster", "n_gpus"): 128}, {"pp"}),
    ({"p": "qwen3-235b-gb200-256", "pp": "512", "cp": "16"}, {("parallelism", "cp"): 16}, {"pp"}),
    ({"p": "default", "mbs": "16"}, {}, {"mbs"}),
    ({"p": "deepseek-v3-h800-2048", "n": "256"}, {}, {"n"}),
    ({"p": "qwen3-235b-gb200-256", "tp": "8"}, {}, {"tp"}),
])
def test_repair_keeps_what_the_repaired_scenario_accepts(params, kept, refused):
    from planner.schema import Scenario

    sj, warnings = share.params_to_scenario(params)
    Scenario.model_validate(sj)
    assert {w.split(":", 1)[0] for w in warnings} == refused
    for path, value in kept.items():
        assert share._get(sj, path) == value


def test_link_tokens_take_the_schema_bound():
    """The Tokens box and a link's tok take the schema's bound on training.tokens_total (1e16):
    a link value above it is refused with the range, not accepted by the link and then refused
    by the schema (or the other way round)."""
    from planner.schema import TOKENS_TOTAL_MAX

    assert share.TOKENS_MAX == TOKENS_TOTAL_MAX == 1e16
    sj, warns = share.params_to_scenario({"p": "default", "tok": "1e16"})
    assert sj["training"]["tokens_total"] == 1e16 and not warns
    planner.Scenario.model_validate(sj)
    sj, warns = share.params_to_scenario({"p": "default", "tok": "1e17"})
    assert sj["training"]["tokens_total"] == 15e12
    assert warns == ["tok='1e17' (training.tokens_total): out of range; allowed 1e6 to 1e16; kept the base value"]
