"""Session 44: the Transformers class defaults of deepseek_v2 and llama4_text MoE files, and the
review findings of session 44 (each test names the rule or source of its expected value)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import planner
from planner import import_hf_config
from test_hf_config import _params

DATA = Path(__file__).parent / "data" / "hf_configs14"


def _cfg(name: str) -> dict:
    d = json.loads((DATA / f"{name}.json").read_text())
    d.pop("_source", None)
    return d


def test_llama4_text_without_moe_or_ffn_keys_takes_llama4textconfig_defaults():
    """Llama4TextConfig (transformers/models/llama4/configuration_llama4.py): num_local_experts 16,
    num_experts_per_tok 1, intermediate_size 8192, intermediate_size_mlp 16384 -- Scout's own values,
    so a Scout text_config without those four keys is Scout: 17B active parameters (Meta's Llama 4
    announcement, "17B active parameters, 16 experts")."""
    full = _cfg("llama4_scout")
    stripped = dict(full)
    stripped["text_config"] = {k: v for k, v in full["text_config"].items()
                               if k not in ("num_local_experts", "num_experts_per_tok", "intermediate_size",
                                            "intermediate_size_mlp")}
    imp = import_hf_config(stripped)
    m = imp.model
    assert (m.moe.n_experts, m.moe.top_k, m.moe.expert_ffn_hidden_size, m.ffn_hidden_size) == (16, 1, 8192, 16384)
    assert _params(m) == _params(import_hf_config(full).model)
    assert _params(m)[1] == pytest.approx(17e9, rel=0.03)
    assert any("llama4_text class defaults" in n and "num_local_experts = 16" in n for n in imp.notes)


def test_llama4_text_dense_layers_default_to_intermediate_size_mlp():
    """Maverick-style interleaving (interleave_moe_layer_step 2) without intermediate_size_mlp: the
    dense layers are Llama4TextConfig's 16,384 wide, not the experts' intermediate_size."""
    cfg = _cfg("llama4_maverick")
    cfg["text_config"] = {k: v for k, v in cfg["text_config"].items() if k != "intermediate_size_mlp"}
    assert import_hf_config(cfg).model.ffn_hidden_size == 16384


def test_deepseek_v2_without_expert_width_takes_1407_not_the_dense_width():
    """DeepseekV2Config: moe_intermediate_size 1407 (both Transformers' class and DeepSeek's own
    configuration_deepseek.py); before, the dense intermediate_size (10,944) was taken for each expert."""
    cfg = {k: v for k, v in _cfg("deepseek_v2_lite").items() if k != "moe_intermediate_size"}
    imp = import_hf_config(cfg)
    assert imp.model.moe.expert_ffn_hidden_size == 1407
    assert imp.model.ffn_hidden_size == 10944


@pytest.mark.parametrize("key, value, field", [("n_routed_experts", 64, "n_experts"),
                                               ("n_shared_experts", 2, "n_shared_experts"),
                                               ("first_k_dense_replace", 0, "first_dense_layers")])
def test_deepseek_v2_routing_keys_take_deepseekv2config_defaults(key, value, field):
    """DeepseekV2Config: n_routed_experts 64, n_shared_experts 2, first_k_dense_replace 0."""
    base = _cfg("deepseek_v2_lite")
    cfg = {k: v for k, v in base.items() if k != key}
    if key != "first_k_dense_replace":  # Lite states 1; keep it to see the key under test move alone
        assert getattr(import_hf_config(base).model.moe, field) == value
    imp = import_hf_config(cfg)
    assert getattr(imp.model.moe, field) == value
    assert any(f"{key} = {value}" in n for n in imp.notes)


def test_deepseek_v2_without_top_k_is_refused_naming_the_missing_default():
    """DeepseekV2Config's num_experts_per_tok defaults to None: no top-k to assume."""
    cfg = {k: v for k, v in _cfg("deepseek_v2_lite").items() if k != "num_experts_per_tok"}
    with pytest.raises(planner.InputError, match="without num_experts_per_tok .deepseek_v2's Transformers class "
                                                 "has no default"):
        import_hf_config(cfg)


def test_class_defaults_note_warns_when_the_file_runs_its_own_code():
    cfg = {k: v for k, v in _cfg("deepseek_v2_lite").items() if k != "n_shared_experts"}
    cfg["auto_map"] = {"AutoConfig": "configuration_deepseek.DeepseekV2Config"}
    notes = import_hf_config(cfg).notes
    assert any("auto_map names its own configuration code" in n for n in notes)


def test_a_memory_size_range_names_bytes_and_gib():
    """schema.HBM_BYTES_RANGE is 0.1 GiB (0.1 × 2^30 = 107,374,182.4 B) to 1e14 B = 93,132.3 GiB
    (1e14 / 2^30 = 93,132.257...): the message gives the unit and the GiB the Plan page uses."""
    from test_cli import run
    rc, out, err = run("evaluate", "--preset", "default", "--set", "cluster.overrides.hbm_usable_bytes=5")
    assert rc == 2
    assert "hbm_usable_bytes: allowed 107,374,182.4 to 1e+14 bytes (0.1 to 93,132.3 GiB) (got 5)" in err
