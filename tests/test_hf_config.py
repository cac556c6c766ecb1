"""Hugging Face config.json import: published configs → the planner's model.

Expected values come from sources independent of the importer:
* the catalogue presets (presets/models.json), each written from the model's paper or card;
* published parameter counts (the presets' ``published_params_*``, each with its source);
* GPT-2 small by hand: V·h + n_pos·h + L·(12h² + 13h) + 2h = 124,439,808.
The configs themselves are copies of the published config.json files (tests/data/hf_configs.json,
each entry naming where it was read); DeepSeek-V3's is written below from the DeepSeek-V3
technical report (arXiv:2412.19437 §4.2) with DeepseekV3Config's key names.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner import batch as B
from planner import catalog, model_stats
from planner.hf_config import import_hf_config, model_from_hf_config
from planner.schema import InputError, Scenario

DATA = json.loads((Path(__file__).parent / "data" / "hf_configs.json").read_text())

#: DeepSeek-V3 (arXiv:2412.19437 §4.2: 61 layers, hidden 7168, 128 heads, MLA ranks 1536 / 512,
#: per-head 128 + 64 (rope) and 128 (V), 1 shared + 256 routed experts of width 2048, 8 active,
#: first 3 layers dense (width 18432), vocabulary 129K (129,280), 1 MTP module, node-limited
#: routing to 4 of 8 groups), with the key names of Transformers' DeepseekV3Config.
DEEPSEEK_V3 = {
    "model_type": "deepseek_v3", "architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 7168,
    "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61,
    "num_attention_heads": 128, "num_key_value_heads": 128, "n_shared_experts": 1,
    "n_routed_experts": 256, "num_experts_per_tok": 8, "first_k_dense_replace": 3, "moe_layer_freq": 1,
    "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "v_head_dim": 128, "vocab_size": 129280, "tie_word_embeddings": False, "n_group": 8, "topk_group": 4,
    "num_nextn_predict_layers": 1, "hidden_act": "silu", "attention_bias": False,
}


def _params(model) -> tuple[float, float]:
    s = Scenario.model_validate({"model": model.model_dump(mode="json", exclude_none=True),
                                 "cluster": {"system": "dgx-h100", "n_gpus": 8},
                                 "training": {"global_batch_size": 8, "seq_len": 2048},
                                 "parallelism": {"tp": 1, "pp": 1}})
    st = model_stats.stats(B.from_scenarios([s]))
    return float(st["params_total"][0]), float(st["params_active"][0])


_ARCH = ("n_layers", "hidden_size", "n_heads", "ffn_hidden_size", "vocab_size", "gated_mlp",
         "tied_embeddings", "norm", "linear_bias", "learned_pos_embeddings", "sliding_window")


@pytest.mark.parametrize("fixture, preset", [
    ("llama-3.1-8b", "llama3-8b"),      # Llama 3.1 8B has Llama 3 8B's architecture (Llama 3 paper Table 3)
    ("mixtral-8x7b", "mixtral-8x7b"),
    ("qwen3-30b-a3b", "qwen3-30b-a3b"),
    ("gpt-oss-120b", "gpt-oss-120b"),
])
def test_published_configs_give_the_catalogue_architecture(fixture, preset):
    m = model_from_hf_config(DATA[fixture]["config"])
    ref = catalog.models()[preset]
    for f in _ARCH:
        assert getattr(m, f) == getattr(ref, f), f
    assert m.kv_heads == ref.kv_heads and m.d_head == ref.d_head
    assert m.sliding_window_layer_frac == ref.sliding_window_layer_frac
    if ref.moe is None:
        assert m.moe is None
    else:
        for f in ("n_experts", "top_k", "expert_ffn_hidden_size", "n_shared_experts", "first_dense_layers"):
            assert getattr(m.moe, f) == getattr(ref.moe, f), f


@pytest.mark.parametrize("fixture, preset", [
    ("llama-3.1-8b", "llama3-8b"), ("mixtral-8x7b", "mixtral-8x7b"),
    ("qwen3-30b-a3b", "qwen3-30b-a3b"), ("gpt-oss-120b", "gpt-oss-120b"),
])
def test_imported_parameter_counts_match_the_published_ones(fixture, preset):
    ref = catalog.models()[preset]
    total, active = _params(model_from_hf_config(DATA[fixture]["config"]))
    assert total == pytest.approx(ref.published_params_total, rel=0.005)
    if preset == "mixtral-8x7b":  # Mixtral paper: 12.9B active (the other cards' "active" counts
        # leave out the embedding table, a different convention, so only totals are compared)
        assert active == pytest.approx(ref.published_params_active, rel=0.005)


def test_deepseek_v3_mla_moe_and_what_is_left_out():
    imp = import_hf_config(DEEPSEEK_V3)
    m = imp.model
    assert (m.mla.q_lora_rank, m.mla.kv_lora_rank, m.mla.qk_nope_head_dim, m.mla.qk_rope_head_dim,
            m.mla.v_head_dim) == (1536, 512, 128, 64, 128)
    assert (m.moe.n_experts, m.moe.top_k, m.moe.expert_ffn_hidden_size, m.moe.n_shared_experts,
            m.moe.shared_expert_ffn_hidden_size, m.moe.first_dense_layers) == (256, 8, 2048, 1, 2048, 3)
    assert m.mtp_layers == 1  # num_nextn_predict_layers: 1
    total, active = _params(m.model_copy(update={"mtp_layers": 0}))
    assert total == pytest.approx(671e9, rel=0.005)      # report: 671B total (MTP excluded)
    # the MTP module by hand: one MoE block (MLA 187,107,328 + 256 routed and 1 shared expert of
    # 3·7168·2048 + router 256·7168 + 2 norms 2·7168) + eh_proj 2·7168² + 3 norms 3·7168
    mla = 7168 * 1536 + 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 + 512 * 128 * 256 + 128 * 128 * 7168
    block = mla + 257 * 3 * 7168 * 2048 + 256 * 7168 + 2 * 7168
    assert _params(m)[0] - total == block + 2 * 7168**2 + 3 * 7168 == 11_610_067_968
    assert active == pytest.approx(37e9, rel=0.02)       # report: 37B activated (rounded)
    text = " ".join(imp.notes)
    assert "multi-token-prediction" in text and "max_nodes_per_token" in text


def test_gpt2_by_hand():
    m = model_from_hf_config(DATA["gpt2"]["config"])
    assert (m.gated_mlp, m.norm, m.linear_bias, m.tied_embeddings) == (False, "layernorm", True, True)
    assert m.ffn_hidden_size == 4 * 768 and m.learned_pos_embeddings == 1024
    assert m.dropout == pytest.approx(0.1)  # resid_pdrop / attn_pdrop 0.1 in the file
    V, P, L, h = 50257, 1024, 12, 768
    assert _params(m)[0] == pytest.approx(V * h + P * h + L * (12 * h * h + 13 * h) + 2 * h, abs=1)  # 124,439,808


def test_mistral_window_qwen2_tied_and_shared_expert():
    mis = model_from_hf_config(DATA["mistral-7b-v0.1"]["config"])
    assert (mis.sliding_window, mis.sliding_window_layer_frac) == (4096, 1.0)  # every layer, window 4096
    q = import_hf_config(DATA["qwen2.5-0.5b"]["config"])
    assert q.model.tied_embeddings is True and q.model.sliding_window is None  # use_sliding_window false
    assert any("Q/K/V" in n for n in q.notes)
    moe = model_from_hf_config(DATA["qwen2-57b-a14b"]["config"]).moe
    cfg = DATA["qwen2-57b-a14b"]["config"]
    assert (moe.n_shared_experts, moe.shared_expert_ffn_hidden_size) == (1, cfg["shared_expert_intermediate_size"])
    assert moe.expert_ffn_hidden_size == cfg["moe_intermediate_size"]


def test_name_and_path_argument(tmp_path):
    f = tmp_path / "config.json"
    f.write_text(json.dumps({**DATA["llama-3.1-8b"]["config"], "_name_or_path": "my-org/my-8b"}))
    m = model_from_hf_config(f)
    assert m.name == "my-org/my-8b" and "my-org/my-8b" in m.source
    assert model_from_hf_config(f, name="mine").name == "mine"


def test_multimodal_text_config_is_read_with_a_note():
    cfg = {"model_type": "llava", "text_config": dict(DATA["llama-3.1-8b"]["config"]), "vision_config": {}}
    imp = import_hf_config(cfg)
    assert imp.model.n_layers == 32 and any("vision" in n for n in imp.notes)


@pytest.mark.parametrize("cfg, expected", [
    ({"model_type": "llama", "hidden_size": 4096}, "no layer count"),
    ({**DATA["llama-3.1-8b"]["config"], "num_attention_heads": "32"}, "num_attention_heads: expected a positive integer"),
    ({**DATA["llama-3.1-8b"]["config"], "num_hidden_layers": 0}, "num_hidden_layers: expected a positive integer"),
    ({**DATA["llama-3.1-8b"]["config"], "num_key_value_heads": 5}, "model.n_kv_heads"),
    ({"model_type": "t5", "d_model": 512}, "encoder-decoder"),
    ({"model_type": "mamba", "hidden_size": 768}, "state-space"),
    ({**DATA["mixtral-8x7b"]["config"], "num_experts_per_tok": None}, "without num_experts_per_tok"),
    ([1, 2], "expected a JSON object"),
])
def test_bad_configs_name_the_key(cfg, expected):
    with pytest.raises(InputError) as e:
        import_hf_config(cfg)
    assert expected in str(e.value)


def test_unknown_model_type_is_read_with_a_note():
    cfg = {**DATA["llama-3.1-8b"]["config"], "model_type": "brand_new"}
    imp = import_hf_config(cfg)
    assert imp.model.gated_mlp and any("brand_new" in n and "Llama-style" in n for n in imp.notes)
    gelu = {**DATA["gpt2"]["config"], "model_type": "brand_new_gpt", "activation_function": "gelu"}
    with pytest.raises(InputError, match="no FFN size"):  # no family default for an unknown type
        import_hf_config(gelu)
    assert import_hf_config({**gelu, "n_inner": 3072}).model.gated_mlp is False


from test_cli import run as _run  # noqa: E402 - the CLI test's runner (tests/ is on sys.path)


def test_cli_hf_config_replaces_the_model(tmp_path):
    f = tmp_path / "config.json"
    f.write_text(json.dumps(DATA["llama-3.1-8b"]["config"]))
    rc, out, err = _run("evaluate", "--hf-config", str(f), "--format", "json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["results"]["params_total"] == pytest.approx(8.03e9, rel=0.005)
    assert data["scenario"]["cluster"]["n_gpus"] == 8 and data["scenario"]["parallelism"]["tp"] == 1
    assert "no scenario given" in err
    # with a preset: its split is kept, and --set applies after the import
    rc, out, err = _run("evaluate", "--preset", "llama3-8b-h100-64", "--hf-config", str(f),
                        "--set", "model.dropout=0.1", "--format", "json")
    assert rc == 0, err
    sc = json.loads(out)["scenario"]
    assert sc["model"]["dropout"] == 0.1 and sc["cluster"]["n_gpus"] == 64
    # the preset's name described its own model: the imported one names the scenario (found by
    # review: an export still said "Llama 3 8B on 64 H100" for another model)
    rc, out, err = _run("evaluate", "--preset", "llama3-8b-h100-64", "--hf-config", str(f), "--format", "json")
    sc = json.loads(out)["scenario"]
    assert sc["name"] == sc["model"]["name"] == "llama (config.json)"


def test_cli_bad_hf_config_is_one_line_per_problem(tmp_path):
    f = tmp_path / "config.json"
    f.write_text(json.dumps({"model_type": "llama", "hidden_size": "big"}))
    rc, out, err = _run("evaluate", "--hf-config", str(f))
    assert rc == 2 and "Traceback" not in err
    assert "--hf-config config.json hidden_size: expected a positive integer up to 10,000,000 (got 'big')" in err
    rc, _, err = _run("sweep", "--hf-config", str(tmp_path / "missing.json"))
    assert rc == 2 and "no such file" in err


@pytest.mark.parametrize("fixture, rel_total, rel_active", [
    ("llama-4-maverick", 0.005, 0.02),   # card: 400B total, 17B active (rounded)
    ("dbrx-instruct", 0.005, 0.02),      # card: 132B total, 36B active (rounded)
    ("gemma-3-4b-it", 0.005, None),      # report: 675M + 3,209M = 3.884B (text model)
])
def test_nested_and_interleaved_families_match_their_published_counts(fixture, rel_total, rel_active):
    e = DATA[fixture]
    imp = import_hf_config(e["config"])
    total, active = _params(imp.model)
    assert total == pytest.approx(e["published_params_total"], rel=rel_total)
    if rel_active:
        assert active == pytest.approx(e["published_params_active"], rel=rel_active)


def test_llama4_interleaved_moe_shared_expert_and_chunked_attention_note():
    imp = import_hf_config(DATA["llama-4-maverick"]["config"])
    moe = imp.model.moe
    # 48 layers, MoE every 2nd: 24 MoE + 24 dense (width intermediate_size_mlp = 16384)
    assert (moe.first_dense_layers, imp.model.ffn_hidden_size) == (24, 16384)
    assert (moe.n_shared_experts, moe.shared_expert_ffn_hidden_size, moe.expert_ffn_hidden_size) == (1, 8192, 8192)
    text = " ".join(imp.notes)
    assert "chunked attention" in text and "1 of every 2 layers" in text and "multimodal" in text


def test_gemma3_text_config_takes_the_class_defaults_with_a_note():
    imp = import_hf_config(DATA["gemma-3-4b-it"]["config"])
    m = imp.model
    assert (m.n_heads, m.kv_heads, m.d_head, m.vocab_size) == (8, 4, 256, 262_208)
    assert m.sliding_window == 1024 and m.sliding_window_layer_frac == pytest.approx(5 / 6)  # 5 local : 1 global
    assert any("class defaults" in n for n in imp.notes)


def test_bloom_n_embed_and_opt_projection_note():
    # BLOOM paper (arXiv:2211.05100) Table 3: 176B = 70 layers, hidden 14,336, 112 heads,
    # vocabulary 250,880; 176,247,271,424 parameters.
    bloom = {"model_type": "bloom", "n_embed": 14336, "n_layer": 70, "num_attention_heads": 112,
             "vocab_size": 250880}
    assert _params(model_from_hf_config(bloom))[0] == pytest.approx(176_247_271_424, rel=1e-6)
    opt = import_hf_config(DATA["opt-350m"]["config"])
    assert any("word_embed_proj_dim = 512" in n for n in opt.notes)


@pytest.mark.parametrize("cfg, expected", [
    ({"model_type": "granitemoehybrid", "hidden_size": 1536}, "hybrid Mamba"),
    ({**DATA["llama-3.1-8b"]["config"], "layer_types": ["mamba"] * 32}, "'mamba' layers are not modelled"),
    ({**DATA["llama-3.1-8b"]["config"], "tie_word_embeddings": "false"}, "tie_word_embeddings: expected true or false"),
    ({**DATA["gpt2"]["config"], "n_positions": "abc"}, "n_positions: expected a positive integer"),
    ({**DATA["qwen3-30b-a3b"]["config"], "mlp_only_layers": ["a", 1]}, "mlp_only_layers: expected a list"),
    ({**DATA["mixtral-8x7b"]["config"], "num_experts": 16}, "expert counts disagree"),
    ({**DATA["llama-3.1-8b"]["config"], "sliding_window": "4096"}, "sliding_window: expected a positive integer"),
    ({**DATA["llama-3.1-8b"]["config"], "attention_dropout": 1.5}, "attention_dropout: expected a number"),
    ({"model": "llama3-8b", "cluster": {"system": "dgx-h100", "n_gpus": 8}}, "planner scenario"),
    ({"model_type": ["llama"]}, "model_type: expected a string"),
])
def test_more_bad_configs_name_the_key(cfg, expected):
    with pytest.raises(InputError) as e:
        import_hf_config(cfg)
    assert expected in str(e.value)


def test_error_lines_name_the_file(tmp_path):
    f = tmp_path / "my-model.json"
    f.write_text("[1, 2]")
    with pytest.raises(InputError, match="my-model.json: expected a JSON object"):
        import_hf_config(f)


def test_partial_biases_qwen2_window_layers_and_json_text():
    cfg = {**DATA["llama-3.1-8b"]["config"], "mlp_bias": True}
    imp = import_hf_config(cfg)
    assert imp.model.linear_bias and any("mlp_bias = true" in n for n in imp.notes)
    # Qwen2: with use_sliding_window the window applies to layers >= max_window_layers
    # (Qwen2Attention): 28 of 32 full -> 4/32 of the layers slide.
    q = {"model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 32,
         "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936,
         "use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 28}
    m = model_from_hf_config(q)
    assert m.sliding_window == 4096 and m.sliding_window_layer_frac == pytest.approx(4 / 32)
    assert model_from_hf_config(json.dumps(DATA["gpt2"]["config"])).n_layers == 12  # the file's text


def test_alibi_families_have_no_rope():
    """ALiBi instead of RoPE (only the eager elementwise step time reads it): BLOOM and MPT always
    (Transformers' BloomModel / MptModel build an ALiBi bias and have no rotary embedding),
    Falcon when its alibi key is true (FalconConfig default false, then rotary); a non-boolean
    alibi is refused by name."""
    bloom = {"model_type": "bloom", "n_embed": 1024, "n_layer": 4, "num_attention_heads": 16, "vocab_size": 1000}
    assert model_from_hf_config(bloom).rope is False
    mpt = {"model_type": "mpt", "d_model": 1024, "n_layers": 4, "n_heads": 16, "vocab_size": 1000,
           "expansion_ratio": 4}
    assert model_from_hf_config(mpt).rope is False
    assert model_from_hf_config({**mpt, "attn_config": {"alibi": False}}).rope is False
    falcon = {"model_type": "falcon", "hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 16,
              "vocab_size": 1000}
    assert model_from_hf_config(falcon).rope is True
    assert model_from_hf_config({**falcon, "alibi": True}).rope is False
    with pytest.raises(InputError, match=r"alibi: expected true or false"):
        model_from_hf_config({**falcon, "alibi": "true"})
    assert model_from_hf_config(DATA["llama-3.1-8b"]["config"]).rope is True


def test_llama_without_tie_key_is_untied_like_its_config_class():
    """Transformers' LlamaConfig defaults tie_word_embeddings to False: Llama 3 8B's file without
    the key is 8,030,261,248 parameters (32 layers × 218,112,000 + 2 × 128,256 × 4,096 + 4,096;
    the published count), not 7.5 B with a tied head."""
    cfg = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
           "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256}
    imp = import_hf_config(cfg)
    assert imp.model.tied_embeddings is False
    assert any("tie_word_embeddings absent: untied" in n for n in imp.notes)
    import planner

    d = planner.load_preset("default").to_json_dict()
    d["model"] = imp.model.model_dump(mode="json")
    d["parallelism"].update(tp=8, pp=1, vpp=1, schedule="1f1b", dp=None)
    b = B.from_scenarios([Scenario.model_validate(d)])
    assert float(model_stats.stats(b)["params_total"][0]) == 8_030_261_248
    gemma = import_hf_config({**cfg, "model_type": "gemma", "head_dim": 128})
    assert gemma.model.tied_embeddings is True


def test_cli_sweep_replaces_a_preset_split_that_does_not_suit_the_imported_model(tmp_path):
    """Llama 3.1 8B (32 layers) into the default preset (TP 8 · PP 4 · VPP 5 = 20 stages, made for
    Llama 3 70B's 80 layers): evaluate refuses the split, but a sweep replaces it: it starts
    from the plainest split the schema accepts (planner.sweep.plain_base, as the Explore page)
    and says so in one line."""
    f = tmp_path / "llama31_8b.json"
    f.write_text(json.dumps(DATA["llama-3.1-8b"]["config"]))
    rc, _, err = _run("evaluate", "--preset", "default", "--hf-config", str(f))
    assert rc == 2 and "pp·vpp = 20" in err
    rc, out, err = _run("sweep", "--hf-config", str(f), "--preset", "default", "--gpus", "64", "--top", "2",
                        "--format", "json")
    assert rc == 0, err
    rows = json.loads(out)
    assert len(rows) == 2 and all(r["n_gpus"] == 64 for r in rows)
    replaced = [ln for ln in err.splitlines() if "the sweep replaces the split" in ln]
    assert len(replaced) == 1 and "pp·vpp = 20" in replaced[0] and "tp = 2, pp = 1" in replaced[0]
    assert "Traceback" not in err


@pytest.mark.parametrize("n_experts, top_k", [(1, 2), (8, 9), (1, 8)])
def test_more_experts_per_token_than_experts_is_refused(n_experts, top_k):
    """A token is routed to at most every expert: Mixtral's config with num_experts_per_tok above
    num_local_experts is refused in the file's names, with one expert too (read as a dense MLP
    it hid a file that cannot describe a trained model); one expert, top-1 is a dense MLP."""
    cfg = {**DATA["mixtral-8x7b"]["config"], "num_local_experts": n_experts, "num_experts_per_tok": top_k}
    with pytest.raises(InputError) as e:
        import_hf_config(cfg)
    assert str(e.value) == (f"config.json num_experts_per_tok = {top_k} exceeds num_local_experts = {n_experts}: "
                            f"a token is routed to at most every expert (allowed 1 to {n_experts})")
    moe = import_hf_config({**cfg, "num_experts_per_tok": 1}).model.moe
    assert moe is None if n_experts == 1 else (moe.n_experts, moe.top_k) == (n_experts, 1)


def test_a_count_beyond_the_schema_bound_names_the_range():
    # found by review: 1e30 layers said "expected a positive integer", which 1e30 is
    with pytest.raises(InputError, match=r"num_hidden_layers: expected a positive integer up to "
                                                 r"10,000,000 \(got 1e\+30\)"):
        model_from_hf_config({**DATA["llama-3.1-8b"]["config"], "num_hidden_layers": 1e30})


def test_architectures_name_the_model_type_when_model_type_is_absent(tmp_path):
    """Found by review: a Llama config without ``model_type`` was read as an unknown type with
    PretrainedConfig's tied embeddings; ``LlamaConfig`` defaults to untied (Transformers)."""
    cfg = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
           "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256}
    imp = import_hf_config(cfg)
    assert imp.model.tied_embeddings is False and imp.model.gated_mlp is True
    assert any("read as 'llama' from architectures" in n for n in imp.notes)
    # GPT-NeoX by its class name: ungated MLP, LayerNorm; T5 by its class name: refused
    neox = import_hf_config({**cfg, "architectures": ["GPTNeoXForCausalLM"], "intermediate_size": 16384})
    assert neox.model.gated_mlp is False
    with pytest.raises(InputError, match="encoder-decoder"):
        import_hf_config({**cfg, "architectures": ["T5ForConditionalGeneration"]})


def test_a_deeply_nested_file_is_an_input_error(tmp_path):
    """[[[…]]] past the recursion limit raised RecursionError from the API."""
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError, match="nested too deeply"):
        model_from_hf_config(deep)
    with pytest.raises(InputError, match="nested too deeply"):
        import_hf_config('{"a":' + "[" * 100_000 + "]" * 100_000 + "}")


_STORED = json.loads((Path(__file__).parent / "data" / "hf_configs.json").read_text())


@pytest.mark.parametrize("name", sorted(_STORED))
def test_every_stored_config_reads_the_same_without_model_type(name):
    """The architecture class names the type when model_type is gone (found by review: DBRX,
    Gemma 3 and Llama 4 failed or became a generic Llama)."""
    cfg = _STORED[name]
    cfg = cfg.get("config", cfg)
    bare = json.loads(json.dumps(cfg))
    bare.pop("model_type", None)
    if isinstance(bare.get("text_config"), dict):
        bare["text_config"].pop("model_type", None)
    a = import_hf_config(cfg).model.model_dump()
    b = import_hf_config(bare).model.model_dump()
    for k in ("name", "source"):
        a.pop(k, None)
        b.pop(k, None)
    assert a == b
