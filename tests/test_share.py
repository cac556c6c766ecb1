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
    assert "tp='0'" in text and "allowed 1 to 100,000" in text  # the TP box's range (share.WIDGET_DEGREE_MAX)
    assert "s='99999999'" in text and "4,194,304" in text
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
    sj["name"] = ""  # the preset's name describes its own cluster, not this one (review 15f)
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
    assert "tp='abc' (parallelism.tp): must be a whole number; allowed 1 to 100,000; kept the base value" in warnings
    assert "mrope='maybe' (model.rope): must be 1 or 0 (also true / false, yes / no, on / off); kept the base value" in warnings
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
    assert warnings == ["tp='４' (parallelism.tp): must be a whole number (ASCII digits); allowed 1 to 100,000; kept the base value"]


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
    # A second review found the last-part fallback reading the pp inside "tp·pp·cp = ..."; since
    # the 2026-11-30 review the split is fitted to the GPUs a link sets (docs/ui.md: GPUs before
    # the split), so n=1 with pp=2 keeps n = 1 and refuses pp, quoting the link's numbers, and
    # the preset's cp = 2 (not in the link) is changed with a warning of its own.
    sj, warnings = share.params_to_scenario({"p": "llama3-8b-h100-64", "n": "1", "pp": "2"})
    assert sj["cluster"]["n_gpus"] == 1 and sj["parallelism"]["pp"] == 1 and sj["parallelism"]["cp"] == 1
    assert len(warnings) == 2 and warnings[0].startswith("pp: refused") and "tp·pp·cp = 1·2·1 = 2" in warnings[0]
    assert "cluster.n_gpus = 1;" in warnings[0]
    assert warnings[1].startswith("cp=2 → 1: the base preset 'llama3-8b-h100-64' sets this")
    planner.Scenario.model_validate(sj)
    # ... and a key named only inside such a product is still refused when it is the only one
    # (a third review: restricting the match had left ?pp=3 and ?mbs=3 invalid)
    from planner.schema import Scenario

    for key, val in (("pp", "3"), ("mbs", "3")):
        sj, warnings = share.params_to_scenario({"p": "default", key: val})
        assert len(warnings) == 1 and warnings[0].startswith(f"{key}: refused")
        Scenario.model_validate(sj)


@pytest.mark.parametrize(("params", "kept", "refused", "changed"), [
    # a fourth review: the first named key is not always the wrong one, and some errors name no key;
    # since the 2026-11-30 review a link's model, GPUs and batch are kept and the split fitted to
    # them: the base preset's split values first (``changed``), then the link's own split keys
    ({"p": "default", "n": "256", "pp": "24", "mbs": "8"},
     {("cluster", "n_gpus"): 256, ("training", "micro_batch_size"): 8}, {"pp"}, set()),
    ({"p": "mixtral-8x7b-h100-64", "n": "128", "pp": "2048"}, {("cluster", "n_gpus"): 128}, {"pp"}, set()),
    ({"p": "qwen3-235b-gb200-256", "pp": "512", "cp": "16"}, {("parallelism", "cp"): 16}, {"pp"}, set()),
    # one micro-batch per DP rank cannot feed the preset's interleaved PP 4: its schedule changes
    ({"p": "default", "mbs": "16"}, {("training", "micro_batch_size"): 16, ("parallelism", "vpp"): 1,
                                     ("parallelism", "schedule"): "1f1b"}, set(), {"vpp", "sch"}),
    # 256 GPUs on PP 16 leave DP 16: the preset's EP 64 becomes the largest divisor that fits
    ({"p": "deepseek-v3-h800-2048", "n": "256"}, {("cluster", "n_gpus"): 256, ("parallelism", "ep"): 16},
     set(), {"ep"}),
    ({"p": "qwen3-235b-gb200-256", "tp": "8"}, {("parallelism", "tp"): 8, ("parallelism", "ep"): 4}, set(), {"ep"}),
])
def test_repair_keeps_what_the_repaired_scenario_accepts(params, kept, refused, changed):
    from planner.schema import Scenario

    sj, warnings = share.params_to_scenario(params)
    Scenario.model_validate(sj)
    assert {w.split(":", 1)[0] for w in warnings if ": refused" in w} == refused
    preset_notes = [w for w in warnings if ": refused" not in w]
    assert len(preset_notes) == (1 if changed else 0)
    if changed:  # one warning naming each preset value changed, old → new, and why
        head = preset_notes[0].split(":", 1)[0]
        assert {part.split("=", 1)[0] for part in head.split(", ")} == changed
        assert f"the base preset '{params['p']}'" in preset_notes[0]
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
    assert warns == ["tok='1e17' (training.tokens_total): out of range; allowed 1,000,000 to 1e16 tokens (the Plan page's box: 1e-6 to 10,000 trillion tokens); kept the base value"]


# ---- review 2026-11-30: the model a link names is kept; the split is fitted to it --------------
# docs/ui.md (Share links): model, system, GPU and batch keys are applied first, then the split
# keys; when the combination fails the split is changed (the base preset's values before the
# link's own split keys), each change with a warning naming old → new and the reason; only a
# key that is itself bad is refused, and a refused key's message is worded on the scenario the
# link asks for.


def _page_link(sj: dict, pid: str = "default") -> dict[str, str]:
    """The link a page writes for ``sj`` (app_pages/_common.write_url through _defaults_full:
    every field, schema defaults filled in, also when the scenario is not valid)."""
    import copy

    from planner.schema import Checkpoint, Parallelism, Reliability, Training

    full = copy.deepcopy(sj)
    for name, cls in (("training", Training), ("parallelism", Parallelism), ("checkpoint", Checkpoint),
                      ("reliability", Reliability)):
        full[name] = {**cls().model_dump(mode="json", by_alias=True), **(sj.get(name) or {})}
    return share.scenario_to_params(full, preset=pid)


def _split(sj: dict) -> tuple:
    s = planner.Scenario.model_validate(sj)
    p = s.parallelism
    return p.tp, p.pp, p.vpp, p.schedule, p.layer_split


def test_explore_link_with_a_61_layer_model_keeps_the_model():
    """Explore on deepseek-v3 (61 layers) writes the default preset's split (TP 8, PP 4, VPP 5,
    even layers) into its URL: reopened, DeepSeek-V3 stays and the layer split the link sets is
    changed to uneven (61 is not a multiple of pp·vpp = 20), with a warning saying so."""
    sj = preset_json("default")
    sj["model"] = "deepseek-v3"
    params = _page_link(sj)
    assert {k: params[k] for k in ("m", "tp", "pp", "vpp", "ls")} == {
        "m": "deepseek-v3", "tp": "8", "pp": "4", "vpp": "5", "ls": "even"}
    back, warnings = share.params_to_scenario(params)
    assert back["model"] == "deepseek-v3"
    assert _split(back) == (8, 4, 5, "interleaved", "uneven")  # only the layer split changed
    assert len(warnings) == 1
    w = warnings[0]
    assert w.startswith("ls='even' (parallelism.layer_split): changed to 'uneven'")
    assert "n_layers = 61" in w and "pp·vpp = 20" in w and "refused" not in w


def test_imported_custom_model_link_keeps_the_architecture():
    """A Hugging Face import on Plan (gemma-3-4b-it: 34 layers, 8 heads) travels as m=custom and
    the architecture keys; reopened, the architecture is kept, not swapped for Llama 3 70B."""
    import json
    from pathlib import Path

    from planner.hf_config import import_hf_config

    data = json.loads((Path(__file__).parent / "data" / "hf_configs.json").read_text())
    md = import_hf_config(data["gemma-3-4b-it"]["config"]).model.model_dump(mode="json", exclude_none=True)
    md["name"] = "gemma-3-4b-it"  # the page names the model after the uploaded file
    sj = preset_json("default")
    sj["model"] = md
    params = _page_link(sj)
    assert params["m"] == "custom" and params["mn"] == "gemma-3-4b-it" and params["ml"] == "34"
    back, warnings = share.params_to_scenario(params)
    s = planner.Scenario.model_validate(back)
    assert isinstance(back["model"], dict) and back["model"]["name"] == "gemma-3-4b-it"
    assert (s.model.n_layers, s.model.hidden_size, s.model.n_heads) == (md["n_layers"], md["hidden_size"],
                                                                      md["n_heads"])
    assert (s.parallelism.tp, s.parallelism.pp, s.parallelism.vpp) == (8, 4, 5)  # the link's split
    assert len(warnings) == 1 and warnings[0].startswith("ls='even'") and "n_layers = 34" in warnings[0]
    assert not any(w.startswith("m:") for w in warnings)


def test_a_model_without_mla_on_the_deepseek_preset_stays_without_mla():
    """A custom model with standard attention (an imported Llama config.json) on the DeepSeek-V3
    preset, whose model has MLA: the link reads back standard attention (``mlkv=0`` = none,
    docs/ui.md), not the base preset's MLA ranks (found by a round-trip property test: the
    link left the MLA keys out and the reader kept DeepSeek-V3's ranks, another parameter
    count and step time)."""
    pid = "deepseek-v3-h800-2048"
    sj = preset_json(pid)
    md = planner.catalog.models()["deepseek-v3"].model_dump(mode="json", exclude_none=True)
    for k in ("source", "published_params_total", "published_params_active", "mla"):
        md.pop(k, None)
    md["name"] = "deepseek-v3 with GQA"
    sj["model"] = md
    sj["name"] = ""  # the preset's name ("DeepSeek-V3 on 2,048 H800") no longer describes the model (review 15f)
    sj = _norm(sj)
    assert sj["model"]["mla"] is None
    params = share.scenario_to_params(sj, preset=pid)
    back, warnings = share.params_to_scenario(params)
    assert warnings == []
    assert _norm(back)["model"]["mla"] is None
    assert _norm(back) == sj
    a, b = planner.evaluate(sj).results, planner.evaluate(back).results
    assert (b["params_total"], b["step_time_s"]) == (a["params_total"], a["step_time_s"])
    assert params["mlkv"] == "0"


def test_one_bad_key_does_not_cost_the_link_its_model():
    """?p=default&m=llama3-8b&sys=dgx-a100-80gb&n=256&...&vpp=0&...: vpp=0 is refused (outside
    1 … 1000), the preset's VPP 5 cannot hold 32 layers on PP 4 with the link's even split, so
    that preset value is changed, not the model the link names."""
    params = _page_link(preset_json("default"))
    params.update(m="llama3-8b", sys="dgx-a100-80gb", n="256", vpp="0")
    back, warnings = share.params_to_scenario(params)
    assert back["model"] == "llama3-8b" and back["cluster"]["system"] == "dgx-a100-80gb"
    assert back["cluster"]["n_gpus"] == 256
    tp, pp, vpp, sch, ls = _split(back)
    assert (tp, pp, sch, ls) == (8, 4, "interleaved", "even") and 32 % (pp * vpp) == 0
    assert warnings[0] == "vpp='0' (parallelism.vpp): out of range; allowed 1 to 1,000; kept the base value"
    assert len(warnings) == 2 and warnings[1].startswith(f"vpp=5 → {vpp}: the base preset 'default' sets this")
    assert "n_layers = 32" in warnings[1] and "pp·vpp = 20" in warnings[1]


@pytest.mark.parametrize(("params", "model", "n_gpus"), [
    ({"m": "llama3-8b"}, "llama3-8b", 1024),
    ({"p": "default", "m": "llama3-8b"}, "llama3-8b", 1024),
    ({"m": "mixtral-8x7b"}, "mixtral-8x7b", 1024),
    ({"m": "llama3-8b", "n": "64"}, "llama3-8b", 64),  # a Compare slot
])
def test_short_links_keep_their_model(params, model, n_gpus):
    """A short link sets the model (and GPUs) only: the default preset's split (PP 4 · VPP 5 for
    80 layers) is the base value that gives way, with one warning naming it, old → new."""
    back, warnings = share.params_to_scenario(params)
    planner.Scenario.model_validate(back)
    assert back["model"] == model and back["cluster"]["n_gpus"] == n_gpus
    assert len(warnings) == 1 and "the base preset 'default' sets" in warnings[0]
    assert warnings[0].startswith("ls='even' → 'uneven'") and "n_layers = 32" in warnings[0]
    assert not any(w.startswith("m") for w in warnings)


def test_a_split_key_the_model_cannot_take_is_refused_not_the_model():
    """tp=7 with the link's own model (Llama 3 8B, 32 heads): the model stays, tp is refused with
    the model's numbers and the base TP comes back."""
    back, warnings = share.params_to_scenario({"m": "llama3-8b", "tp": "7", "n": "1024"})
    assert back["model"] == "llama3-8b" and back["parallelism"]["tp"] == 8
    refused = [w for w in warnings if w.startswith("tp:")]
    assert refused and "refused" in refused[0] and "kept the base value" in refused[0]
    planner.Scenario.model_validate(back)


def test_rcl_follows_the_split_it_is_laid_out_on():
    """rcl (full recompute of N layers per chunk) is laid out on the split: a value above the
    chunk is refused, the preset's PP·VPP is not bent to it."""
    back, warnings = share.params_to_scenario({"p": "default", "rc": "full", "rcl": "50"})
    assert _split(back)[:3] == (8, 4, 5) and back["parallelism"].get("recompute_layers") is None
    assert warnings == ["rcl: refused, parallelism.recompute_layers = 50 exceeds the layers of a pipeline chunk "
                        "(ceil(n_layers / (pp·vpp)) = 4); kept the base value"]


# ---- review 2026-11-30: a refused key's message quotes the link's numbers ----------------------


def test_refused_gpu_count_message_uses_the_links_batch():
    """n=1e3 with gbs=1024, mbs=2, TP·PP·CP = 8: DP would be 1000 / 8 = 125 and 1024 is not a
    multiple of 2·125: that is what the warning says (not the preset's 512 and 1·125)."""
    link = {"n": "1e3", "gbs": "1024", "mbs": "2", "tp": "2", "pp": "2", "cp": "2"}
    back, warnings = share.params_to_scenario(link)
    dp = 1000 // (2 * 2 * 2)
    assert warnings == [f"n: refused, training.global_batch_size = 1024 is not divisible by micro_batch_size·dp = "
                        f"2·{dp} = {2 * dp}; kept the base value"]
    s = planner.Scenario.model_validate(back)
    assert (s.training.global_batch_size, s.training.micro_batch_size, s.parallelism.tp, s.parallelism.pp,
            s.parallelism.cp) == (1024, 2, 2, 2, 2)


def test_refused_split_keys_are_checked_against_the_links_other_values():
    """tp=3&pp=7 with n=256&cp=2 on Llama 3 70B: both refused; tp's message is the link's own
    3·7·2 = 42, pp's is 7 on the TP in use (the base 8, tp=3 being refused) with the link's CP 2
    and 256 GPUs: 8·7·2 = 112 (not the preset's CP 1 and 1,024 GPUs)."""
    back, warnings = share.params_to_scenario({"tp": "3", "pp": "7", "n": "256", "cp": "2"})
    assert warnings == [
        "tp: refused, parallelism: tp·pp·cp = 3·7·2 = 42 does not divide cluster.n_gpus = 256; choose n_gpus as a "
        "multiple of 42; kept the base value tp=8",
        "pp: refused, parallelism: tp·pp·cp = 8·7·2 = 112 does not divide cluster.n_gpus = 256; choose n_gpus as a "
        "multiple of 112; kept the base value pp=4",  # the default preset: TP 8 x PP 4 (presets/scenarios.json)
    ]
    s = planner.Scenario.model_validate(back)
    assert (s.cluster.n_gpus, s.parallelism.cp) == (256, 2)


# ---- review 2026-11-30: minor link-reading gaps -------------------------------------------------


def test_empty_ckj_is_refused_like_an_empty_ck():
    """ckj=[] (an empty tier list) is refused with a warning, as ck= is: no checkpointing is
    ck=none (docs/ui.md), and the base preset's tiers are kept."""
    base, _ = share.params_to_scenario({"p": "default"})
    for key, raw in (("ckj", "[]"), ("ck", "")):
        sj, warnings = share.params_to_scenario({"p": "default", key: raw})
        assert len(warnings) == 1 and warnings[0].startswith(f"{key}='{raw}'") and "refused" in warnings[0]
        assert "'none' for no checkpointing" in warnings[0] or "no checkpointing is ck=none" in warnings[0]
        assert sj["checkpoint"]["tiers"] == base["checkpoint"]["tiers"] != []


def test_a_repeated_key_warns_and_uses_the_last_value():
    sj, warnings = share.params_to_scenario({"p": "default", "tp": ["2", "4"]})
    assert warnings == ["tp: given 2 times ('2', '4'); used the last, '4'"]
    assert sj["parallelism"]["tp"] == 4
    sj, warnings = share.params_to_scenario({"p": "default", "tp": ["4", "4"]})  # the same value twice
    assert warnings == [] and sj["parallelism"]["tp"] == 4
    # a pasted link (Compare) keeps the repeated values for the reader to warn about
    params = share.parse_link("http://x/?m=llama3-8b&tp=2&tp=4&n=64&n=64")
    assert params == {"m": "llama3-8b", "tp": ["2", "4"], "n": "64"}
    assert any(w.startswith("tp: given 2 times") for w in share.params_to_scenario(params)[1])
    assert share.unprefix_params({"1.tp": ["2", "4"], "1.n": ["64"]}, "1.") == {"tp": ["2", "4"], "n": "64"}
    assert share.last_value(["2", "4"]) == "4" and share.last_value(None) is None


def test_stray_compare_slot_keys_warn():
    warns = share.stray_slot_keys({"c_n": "2", "1.tp": "2", "4.m": "llama3-8b", "5.tp": "3", "9.m": "x"}, 4)
    assert len(warns) == 2
    assert warns[0].startswith("'5.tp': no scenario slot '5'") and warns[1].startswith("'9.m': no scenario slot '9'")
    assert all("1. to 4." in w and w.endswith("ignored") for w in warns)


from planner import catalog as _catalog  # noqa: E402
from planner.schema import Parallelism as _Parallelism  # noqa: E402

_split_links = hst.fixed_dictionaries(
    {"p": hst.sampled_from(sorted(planner.list_presets()))},
    optional={
        "m": hst.sampled_from(sorted(_catalog.models())),
        "n": hst.sampled_from(["1", "8", "64", "96", "256", "1000", "1024", "4096"]),
        "tp": hst.sampled_from(["1", "2", "3", "4", "8", "16"]),
        "pp": hst.sampled_from(["1", "2", "3", "4", "7", "8", "16"]),
        "vpp": hst.sampled_from(["1", "2", "5"]), "cp": hst.sampled_from(["1", "2", "4"]),
        "ep": hst.sampled_from(["1", "2", "8", "64"]),
        "sch": hst.sampled_from(["1f1b", "interleaved", "dualpipe", "gpipe"]),
        "ls": hst.sampled_from(["even", "uneven"]), "mbs": hst.sampled_from(["1", "2", "4"]),
        "gbs": hst.sampled_from(["256", "512", "1024"]),
    })


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_split_links)
def test_every_link_value_not_used_is_named_by_a_warning(params):
    """Links of catalogue models, GPU counts and splits: the scenario validates, and each link
    key whose value the scenario does not hold has a warning that starts with that key (a value
    is never dropped or changed without a word, docs/ui.md)."""
    sj, warnings = share.params_to_scenario(params)
    planner.Scenario.model_validate(sj)
    fields = {f.key: f for f in share.SCALAR_FIELDS}
    for key, raw in params.items():
        if key == "p":
            continue
        if key == "m":
            got = sj["model"]
        else:
            got = share._get(sj, fields[key].path)
            if got is None and key in share.SPLIT_KEYS:
                got = _Parallelism.model_fields[fields[key].path[-1]].default
        if str(got) != raw:
            assert any(w.startswith((f"{key}:", f"{key}=")) for w in warnings), (key, raw, got, warnings)
    if "m" in params and sj["model"] != params["m"]:
        assert any(w.startswith("m: refused") for w in warnings)


def test_a_system_refused_for_the_presets_precision_names_the_prec_key():
    """A link naming a V100 on a bf16 preset: the system is refused (the V100 has no bf16), and the
    warning says the precision is the preset's and how to set the link's own."""
    _sj, warns = share.params_to_scenario({"p": "default", "sys": "dgx1-v100"})[:2]
    line = next(w for w in warns if w.startswith("sys: refused"))
    assert "add prec=fp16" in line
    _sj, warns = share.params_to_scenario({"p": "default", "sys": "dgx1-v100", "prec": "fp16"})[:2]
    assert not any(w.startswith("sys: refused") for w in warns)


def test_a_links_vpp_takes_the_interleaved_schedule_and_layer_split_it_needs():
    """Found by review: the link's vpp=3 was refused where the preset's schedule / layer split
    (values the link does not set) could follow it. Llama 3 8B (32 layers) on the Mixtral preset's
    64 GPUs with pp=7 (does not divide 64: changed) and vpp=3: the page keeps vpp 3 on the
    interleaved schedule with an uneven layer split (32 is not a multiple of pp·vpp = 24)."""
    sj, warns = share.params_to_scenario({"p": "mixtral-8x7b-h100-64", "m": "llama3-8b", "pp": "7", "vpp": "3"})[:2]
    par = sj["parallelism"]
    assert par["vpp"] == 3 and par["schedule"] == "interleaved" and par["layer_split"] == "uneven"
    assert not any(w.startswith("vpp") for w in warns)
    assert any("ls='even' → 'uneven'" in w for w in warns)


# ---- review 2026-11-30: a refused pp no longer takes the link's vpp with it (or blames vpp) --------


def test_refused_pp_keeps_the_links_vpp_where_the_repaired_split_holds_it():
    """?p=deepseek-v3-h800-2048&pp=7&vpp=3: 7 does not divide 2,048 GPUs, so pp is refused and
    the preset's PP 16 stays. vpp=3 fits PP 16 (61 layers over 48 chunks, uneven) once the preset's
    DualPipe schedule follows it to interleaved and CP goes 1 -> 2: with CP 1, DP = 2048 / 16 = 128
    and 15,360 / 128 = 120 micro-batches, not a multiple of 16; with CP 2, 240 = 15 x 16."""
    sj, warns = share.params_to_scenario({"p": "deepseek-v3-h800-2048", "pp": "7", "vpp": "3"})
    s = planner.Scenario.model_validate(sj)
    p = s.parallelism
    assert (p.tp, p.pp, p.cp, p.vpp, p.schedule, p.layer_split) == (1, 16, 2, 3, "interleaved", "uneven")
    assert warns[0] == ("pp: refused, parallelism: tp·pp·cp = 1·7·2 = 14 does not divide cluster.n_gpus = 2048; "
                        "choose n_gpus as a multiple of 14; kept the base value pp=16")
    assert not any(w.startswith("vpp") for w in warns)  # kept: no word against it
    note = next(w for w in warns if "the base preset 'deepseek-v3-h800-2048' sets these" in w)
    assert note.startswith("cp=1 → 2, sch='dualpipe' → 'interleaved'")
    assert "micro-batches (120) to be a multiple of pp = 16" in note  # why CP changed, not only the schedule
    assert len(warns) == 2


def test_refused_pp_drops_the_links_vpp_saying_it_is_because_of_pp():
    """?p=llama3-8b-h100-64&pp=7&vpp=3: pp=7 does not divide 64 (1·7·2 = 14 with the preset's
    CP 2), so the preset's PP 1 stays; interleaving needs PP > 1, so vpp=3 cannot be kept. The
    warning says it is dropped because of the refused pp, not for the preset's 1F1B schedule
    (which would follow a kept vpp)."""
    sj, warns = share.params_to_scenario({"p": "llama3-8b-h100-64", "pp": "7", "vpp": "3"})
    s = planner.Scenario.model_validate(sj)
    assert (s.parallelism.pp, s.parallelism.vpp, s.parallelism.cp) == (1, 1, 2)
    assert warns == [
        "pp: refused, parallelism: tp·pp·cp = 1·7·2 = 14 does not divide cluster.n_gpus = 64; choose n_gpus as a "
        "multiple of 14; kept the base value pp=1",
        "vpp=3 (parallelism.vpp): dropped, vpp is 1, because the link's pp=7 was refused (pp is 1): "
        "parallelism.schedule = 'interleaved' needs pp > 1",
    ]
    assert not any("got '1f1b'" in w for w in warns)


def test_a_lone_vpp_on_a_preset_without_a_pipeline_names_the_pipeline_not_the_schedule():
    """?p=llama3-8b-h100-64&vpp=3: PP 1 has nothing to interleave; the schedule would follow the
    link's vpp, so the reason is PP, not '1f1b'."""
    sj, warns = share.params_to_scenario({"p": "llama3-8b-h100-64", "vpp": "3"})
    assert sj["parallelism"]["vpp"] == 1
    assert warns == ["vpp: refused, parallelism.schedule = 'interleaved' needs pp > 1; kept the base value vpp=1"]
