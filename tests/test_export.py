"""Launch-configuration export: every flag / key exists in the framework's source, values are
of the right type, and the numbers are the scenario's (by hand).

The framework names come from tests/data/framework_flags.json: each Megatron-LM flag read in
``megatron/training/arguments.py`` (commit 000c4ac2) with its type / action / choices, and the
TorchTitan keys of ``torchtitan/config/job_config.py`` (commit 6404b932).
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import tomllib
from pathlib import Path

import pytest

import planner
from planner.export import megatron_args, torchtitan_toml
from planner.schema import InputError

FLAGS = json.loads((Path(__file__).parent / "data" / "framework_flags.json").read_text())
MEG = FLAGS["megatron"]["flags"]
TT = FLAGS["torchtitan"]["keys"]
PRESETS = [p for p in planner.list_presets()]


def _parser() -> argparse.ArgumentParser:
    """An argparse parser with the verified Megatron flags (type int/float/str, store_true,
    choices), so an exported line that Megatron would refuse fails here too."""
    ap = argparse.ArgumentParser(allow_abbrev=False, exit_on_error=False)
    types = {"int": int, "float": float}
    for flag, f in MEG.items():
        if not f.get("exists"):
            continue
        if f.get("action") in ("store_true", "store_false"):
            ap.add_argument(flag, action=f["action"], dest=f.get("dest") or flag.lstrip("-").replace("-", "_"))
        else:
            ap.add_argument(flag, type=types.get(f.get("type"), str), choices=f.get("choices"))
    return ap


def _parse(text: str) -> argparse.Namespace:
    lines = [ln for ln in text.splitlines() if not ln.startswith("#")]
    return _parser().parse_args(shlex.split(" ".join(ln.rstrip("\\") for ln in lines)))


@pytest.mark.parametrize("pid", PRESETS)
def test_every_preset_exports_flags_megatron_accepts(pid):
    s = planner.load_preset(pid)
    ns = _parse(megatron_args(s).text)
    p, t = s.parallelism, s.training
    assert (ns.tensor_model_parallel_size, ns.pipeline_model_parallel_size, ns.context_parallel_size) == (p.tp, p.pp, p.cp)
    assert (ns.micro_batch_size, ns.global_batch_size, ns.seq_length) == (t.micro_batch_size, t.global_batch_size, t.seq_len)
    assert ns.train_iters == math.ceil(t.tokens_total / (t.global_batch_size * t.seq_len))


@pytest.mark.parametrize("pid", PRESETS)
def test_every_preset_exports_toml_with_verified_keys(pid):
    s = planner.load_preset(pid)
    doc = tomllib.loads(torchtitan_toml(s).text)
    known = {(v["section"].strip("[]"), v["key"]) for v in TT.values() if "section" in v and "key" in v}
    known |= {("job", "description"), ("model", "name"), ("model", "flavor"), ("model", "converters"),
              ("parallelism", "pipeline_parallel_schedule"), ("parallelism", "pipeline_parallel_microbatch_size"),
              ("activation_checkpoint", "selective_ac_option")}
    known |= {(v["section"].strip("[]"), k) for v in TT.values() if isinstance(v.get("keys"), dict) for k in v["keys"]}
    for section, body in doc.items():
        for key in body:
            assert (section, key) in known, (section, key)
    par = doc["parallelism"]
    p = s.parallelism
    assert par["data_parallel_shard_degree"] * par["data_parallel_replicate_degree"] == p.dp
    assert (par["tensor_parallel_degree"], par["pipeline_parallel_degree"], par["context_parallel_degree"]) == (p.tp, p.pp, p.cp)
    assert doc["training"]["global_batch_size"] == s.training.global_batch_size


def test_default_preset_by_hand():
    """Llama 3 70B (80 layers, 64 heads, 8 KV heads) on 1,024 H100: TP 8 × PP 4 × DP 32 with 5
    virtual stages, 512 × 8,192 tokens per step, 15T tokens → ceil(15e12 / 4,194,304) = 3,576,279."""
    ns = _parse(megatron_args(planner.load_preset("default")).text)
    assert (ns.num_layers, ns.hidden_size, ns.ffn_hidden_size, ns.num_attention_heads) == (80, 8192, 28672, 64)
    assert ns.group_query_attention and ns.num_query_groups == 8
    assert ns.num_virtual_stages_per_pipeline_rank == 5 and ns.sequence_parallel
    assert ns.use_distributed_optimizer and ns.recompute_granularity == "selective"
    assert ns.swiglu and ns.normalization == "RMSNorm" and ns.untie_embeddings_and_output_weights
    # --vocab-size V − 1: Megatron's _NullTokenizer adds its EOD token (vocab_size = given + 1,
    # megatron/training/tokenizer/tokenizer.py), so the model gets Llama 3's 128,256 (review 47f)
    assert ns.add_bias_linear is False and ns.vocab_size + 1 == 128256 and ns.bf16 and ns.train_iters == 3_576_279


def test_moe_mla_and_fp8_by_hand():
    """DeepSeek-V3: 256 experts top-8 of width 2048, 1 shared, first 3 layers dense, MLA ranks
    1536 / 512 with head dims 128 + 64 and 128; EP 64; FP8."""
    ex = megatron_args(planner.load_preset("deepseek-v3-h800-2048"))
    ns = _parse(ex.text)
    assert (ns.num_experts, ns.moe_router_topk, ns.moe_ffn_hidden_size) == (256, 8, 2048)
    assert ns.moe_shared_expert_intermediate_size == 2048 and ns.moe_layer_freq == "([0]*3+[1]*58)"
    assert ns.multi_latent_attention and (ns.q_lora_rank, ns.kv_lora_rank) == (1536, 512)
    assert (ns.qk_head_dim, ns.qk_pos_emb_head_dim, ns.v_head_dim) == (128, 64, 128)
    assert ns.expert_model_parallel_size == 64 and ns.fp8_format == "hybrid" and ns.bf16
    text = " ".join(ex.notes)
    assert "dualpipe" in text and "uneven" in text  # what Megatron cannot take as given is said


def test_hsdp_zero3_op_sac_and_sliding_window():
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["parallelism"].update(zero_stage=1, dp_shard=8, dp=None)
    ns = _parse(megatron_args(d).text)
    assert ns.use_distributed_optimizer and ns.num_distributed_optimizer_instances == 32 // 8
    doc = tomllib.loads(torchtitan_toml(d).text)
    assert (doc["parallelism"]["data_parallel_shard_degree"], doc["parallelism"]["data_parallel_replicate_degree"]) == (8, 4)
    d["parallelism"].update(zero_stage=3, dp_shard=None, recompute="op_sac")
    ex = megatron_args(d)
    ns = _parse(ex.text)
    assert ns.use_megatron_fsdp and ns.data_parallel_sharding_strategy == "optim_grads_params"
    assert ns.recompute_granularity is None and any("op_sac" in n for n in ex.notes)
    assert tomllib.loads(torchtitan_toml(d).text)["activation_checkpoint"] == {"mode": "selective",
                                                                                "selective_ac_option": "op"}
    # GPT-OSS: window 128 in every second layer -> --window-size 128,0 and one full layer per 2
    g = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    g["model"] = "gpt-oss-20b"
    g["parallelism"].update(tp=1, cp=1, dp=None, ep=1)
    ns = _parse(megatron_args(g).text)
    assert ns.window_size == "128,0" and ns.window_attn_skip_freq == "2"


def test_a_window_in_no_layer_is_exported_as_full_attention():
    """sliding_window_layer_frac = 0: no layer uses the window (docs/inputs.md: the window is used
    in a share ``sliding_window_layer_frac`` of the layers), so the model is full attention in
    every layer — no ``--window-size`` (which Megatron applies to every layer when
    ``--window-attn-skip-freq`` is absent), and the TorchTitan flavor of the same architecture
    without a window (found by an export property test: ``--window-size 4096,0`` was written)."""
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    m = planner.catalog.models()["llama3-8b"].model_dump(mode="json", exclude_none=True)
    m.update(name="llama3-8b, window in no layer", sliding_window=4096, sliding_window_layer_frac=0.0)
    d["model"] = m
    ex = megatron_args(d)
    ns = _parse(ex.text)
    assert ns.window_size is None and ns.window_attn_skip_freq is None
    assert not any("window" in n for n in ex.notes)
    doc = tomllib.loads(torchtitan_toml(d).text)
    assert (doc["model"]["name"], doc["model"]["flavor"]) == ("llama3", "8B")
    m.update(sliding_window_layer_frac=1.0)  # every layer: the window without a skip frequency
    ns = _parse(megatron_args(d).text)
    assert ns.window_size == "4096,0" and ns.window_attn_skip_freq is None


def test_bad_scenario_raises_input_error():
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"]["tp"] = 3
    with pytest.raises(InputError):
        megatron_args(d)


from test_cli import run as _run  # noqa: E402 - the CLI test's runner (tests/ is on sys.path)


def test_cli_export():
    rc, out, err = _run("export", "--preset", "llama3-8b-h100-64", "--to", "torchtitan")
    assert rc == 0, err
    assert tomllib.loads(out)["model"] == {"name": "llama3", "flavor": "8B"}
    rc, out, err = _run("export", "--preset", "default", "--set", "parallelism.tp=3")
    assert rc == 2 and "parallelism: tp·pp·cp = 3·4·1" in err and "Traceback" not in err


def test_torchtitan_flavor_is_found_by_architecture_and_vpp_is_noted():
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    cfg = json.loads((Path(__file__).parent / "data" / "hf_configs.json").read_text())["llama-3.1-8b"]["config"]
    d["model"] = planner.model_from_hf_config(cfg).model_dump(mode="json")  # same architecture as llama3-8b
    assert tomllib.loads(torchtitan_toml(d).text)["model"] == {"name": "llama3", "flavor": "8B"}
    mix = torchtitan_toml(planner.load_preset("mixtral-8x7b-h100-64"))
    assert tomllib.loads(mix.text)["model"]["name"] == "CHOOSE"  # never a dense family for an MoE model
    assert any("MoE model" in n for n in mix.notes)
    assert any("8 virtual stages per rank" in n for n in mix.notes)


def test_export_has_no_format_option():
    rc, _, err = _run("export", "--preset", "default", "--format", "json")
    assert rc == 2 and "unrecognized arguments: --format" in err


def _keys_ok(obj, spec, path=""):
    for k, v in obj.items():
        assert k in spec, f"{path}{k} is not a verified DeepSpeed key"
        if isinstance(v, dict):
            _keys_ok(v, spec[k], f"{path}{k}.")


@pytest.mark.parametrize("pid", PRESETS)
def test_deepspeed_config_has_verified_keys_and_a_consistent_batch(pid):
    from planner.export import deepspeed_config
    s = planner.load_preset(pid)
    cfg = json.loads(deepspeed_config(s).text)
    _keys_ok(cfg, FLAGS["deepspeed"]["keys"])
    # DeepSpeed's own check: train_batch_size = micro-batch × accumulation × DP size
    assert cfg["train_batch_size"] == cfg["train_micro_batch_size_per_gpu"] * cfg["gradient_accumulation_steps"] * s.parallelism.dp
    assert cfg["zero_optimization"]["stage"] == s.parallelism.zero_stage


def test_deepspeed_offload_mics_and_notes():
    from planner.export import deepspeed_config
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["parallelism"].update(zero_stage=3, dp_shard=8, offload_optimizer="nvme", dp=None)
    ex = deepspeed_config(d)
    z = json.loads(ex.text)["zero_optimization"]
    assert z["mics_shard_size"] == 8 * 2  # dp_shard · cp
    assert z["offload_optimizer"]["device"] == "nvme" and "nvme_path" in z["offload_optimizer"]
    assert any("CP 2" in n for n in ex.notes) and any("placeholder" in n for n in ex.notes)
    rc, out, err = _run("export", "--preset", "llama3-8b-h100-64", "--to", "deepspeed")
    assert rc == 0 and json.loads(out)["gradient_accumulation_steps"] == 16 and "note:" in err


def test_exports_never_write_what_the_framework_refuses_without_saying_so():
    from planner.export import deepspeed_config
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["parallelism"].update(zero_stage=0, offload_optimizer="cpu")
    ex = megatron_args(d)  # Megatron's precision-aware optimizer needs the distributed optimizer
    assert "--optimizer-cpu-offload" not in ex.text and any("ZeRO-0" in n for n in ex.notes)
    ds = deepspeed_config(d)
    assert "offload_optimizer" not in json.loads(ds.text)["zero_optimization"]
    assert any("needs ZeRO" in n for n in ds.notes)
    d = planner.load_preset("llama3-70b-h100-1024").to_json_dict()
    d["parallelism"]["zero_stage"] = 3  # DeepSpeed's PipelineEngine refuses ZeRO-2/3 with PP
    assert any("refuses ZeRO-2/3" in n for n in deepspeed_config(d).notes)
    gpt3 = torchtitan_toml(planner.load_preset("gpt3-175b-a100-1024"))
    assert tomllib.loads(gpt3.text)["model"]["name"] == "CHOOSE"  # LayerNorm / GELU / learned positions
    assert any("written as pure replication" in n and "DDP has not supported > 1D" in n for n in gpt3.notes)
    # and without FSDP TorchTitan turns mixed precision off under TP / PP (maybe_enable_amp)
    assert any("Mixed precision training is disabled" in n for n in gpt3.notes)
    qwen = torchtitan_toml(planner.load_preset("qwen3-235b-gb200-256"))
    assert any("float32 only" in n for n in qwen.notes)


def test_elementwise_kernels_reach_the_exports():
    """TorchTitan's training.compile compiles its blocks (fused norms / RoPE / SwiGLU) and, since
    2025, its loss: compile = true when the scenario has fused kernels, false when both are
    eager, with a note when they disagree; Megatron-LM has no eager mode (a note says so)."""
    base = planner.load_preset("llama31-8b-torchtitan-h100-8").to_json_dict()

    def with_(ew, ce):
        d = json.loads(json.dumps(base))
        d["training"].update(elementwise=ew, cross_entropy=ce)
        return d

    both_eager = torchtitan_toml(with_("eager", "eager"))
    assert tomllib.loads(both_eager.text)["training"]["compile"] is False
    both_fused = torchtitan_toml(with_("fused", "fused"))
    assert tomllib.loads(both_fused.text)["training"]["compile"] is True
    mixed = torchtitan_toml(with_("fused", "eager"))
    assert tomllib.loads(mixed.text)["training"]["compile"] is True
    assert any("no single TorchTitan setting" in n for n in mixed.notes)
    assert not any("no single TorchTitan setting" in n for n in both_eager.notes + both_fused.notes)
    meg = megatron_args(with_("eager", "eager"))
    assert any("elementwise 'eager'" in n and "no Megatron-LM setting" in n for n in meg.notes)
    assert not any("elementwise 'eager'" in n for n in megatron_args(with_("fused", "fused")).notes)


def test_alibi_model_exports_no_rope():
    """MPT (ALiBi: model.rope = false, no learned table): Megatron-LM has no ALiBi, so the
    position embedding is written as 'none' (one of the flag's choices) with a note; Llama keeps
    'rope'."""
    mpt = megatron_args(planner.load_preset("mpt-7b-a100-8"))
    assert "--position-embedding-type none" in mpt.text and any("ALiBi" in n for n in mpt.notes)
    assert "none" in MEG["--position-embedding-type"]["choices"]
    assert "--position-embedding-type rope" in megatron_args(planner.load_preset("default")).text
    # TorchTitan's llama3 flavors have RoPE: a Llama 3 70B without it is no llama3 flavor
    d = planner.load_preset("default").to_json_dict()
    d["model"] = {**planner.catalog.models()["llama3-70b"].model_dump(exclude_none=True), "rope": False}
    tt = tomllib.loads(torchtitan_toml(d).text)
    assert tt["model"]["name"] != "llama3" and tt["model"]["flavor"] == "custom"


def test_dp_comm_overlap_maps_to_the_frameworks_overlap_flags():
    # Megatron-LM: --overlap-grad-reduce / --overlap-param-gather (both off by default there,
    # tests/data/framework_flags.json); DeepSpeed: zero_optimization.overlap_comm.
    from planner.export import deepspeed_config

    d = planner.load_preset("default").to_json_dict()
    on = megatron_args(d).text
    assert "--overlap-grad-reduce" in on and "--overlap-param-gather" in on
    d["parallelism"]["dp_comm_overlap"] = False
    off = megatron_args(d).text
    assert "--overlap-grad-reduce" not in off and "--overlap-param-gather" not in off
    assert json.loads(deepspeed_config(d).text)["zero_optimization"]["overlap_comm"] is False
    d["parallelism"]["dp_comm_overlap"] = True
    assert json.loads(deepspeed_config(d).text)["zero_optimization"]["overlap_comm"] is True
    mpt = torchtitan_toml(planner.load_preset("mpt-7b-a100-8"))
    assert any(n.startswith("DP overlap off: TorchTitan's FSDP2") for n in mpt.notes)


def test_fp8_scaling_is_written_as_torchtitans_float8_recipe():
    s = planner.load_preset("llama31-8b-torchtitan-h100-8")
    d = s.to_json_dict()
    d["training"].update(precision="fp8", fp8_scaling="rowwise")
    rw = tomllib.loads(torchtitan_toml(planner.Scenario.model_validate(d)).text)
    assert rw["model"]["converters"] == ["float8"] and rw["float8"] == {"recipe_name": "rowwise"}
    allowed = TT["float8"]["keys"]["recipe_name"]
    assert "'rowwise'" in allowed and "'tensorwise'" in allowed
    # tensorwise with FSDP: torchao's float8 weight all-gather, the setup the planner was checked
    # against; TorchTitan's Float8Converter asserts that enable_fsdp_float8_all_gather is not set
    # together with recipe_name (components/quantization/float8.py), and with no recipe it runs
    # dynamic tensorwise scaling: no recipe_name (review 13)
    d["training"]["fp8_scaling"] = "tensorwise"
    tw = tomllib.loads(torchtitan_toml(planner.Scenario.model_validate(d)).text)
    assert tw["float8"] == {"enable_fsdp_float8_all_gather": True,
                            "precompute_float8_dynamic_scale_for_fsdp": True}
    # bf16: no float8 section
    d["training"]["precision"] = "bf16"
    assert "float8" not in tomllib.loads(torchtitan_toml(planner.Scenario.model_validate(d)).text)


def test_megatron_notes_a_sequence_cp_cannot_split():
    """Megatron's CP splits each sequence into 2·cp chunks and asserts seq_length % (2·cp) == 0."""
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    assert d["parallelism"]["cp"] == 2
    d["training"]["seq_len"] = 8190  # cp divides it, 2·cp = 4 does not
    assert any("not a multiple of 4" in n for n in megatron_args(d).notes)
    d["training"]["seq_len"] = 8192
    assert not any("2·cp" in n for n in megatron_args(d).notes)


def test_megatron_notes_a_sequence_sp_cannot_split():
    """Found by review: seq 8191 with TP 8 and SP was exported without a word; Megatron's
    reduce-scatter along the sequence asserts "First dimension of the tensor should be divisible
    by tensor parallel size" (core/tensor_parallel/mappings.py). With CP the first dimension on a
    rank is seq_len / cp: 8192 / 2 = 4096 splits over TP 8; 8200 / 2 = 4100 does not."""
    d = planner.load_preset("default").to_json_dict()
    assert d["parallelism"]["tp"] == 8 and d["parallelism"].get("sequence_parallel", True)
    d["training"]["seq_len"] = 8191
    assert any(n.startswith("sequence parallelism:") for n in megatron_args(d).notes)
    d["training"]["seq_len"] = 8192
    assert not any(n.startswith("sequence parallelism:") for n in megatron_args(d).notes)
    d["parallelism"]["cp"] = 2
    d["parallelism"].pop("dp", None)
    assert not any(n.startswith("sequence parallelism:") for n in megatron_args(d).notes)
    d["training"]["seq_len"] = 8200  # 2·cp = 4 divides it, tp = 8 does not divide 4,100
    assert any(n.startswith("sequence parallelism:") for n in megatron_args(d).notes)
    d["parallelism"]["sequence_parallel"] = False
    assert not any(n.startswith("sequence parallelism:") for n in megatron_args(d).notes)


def test_megatron_notes_expert_parallelism_with_fp16():
    """Megatron-LM ``validate_args`` (arguments.py at 000c4ac2): ``if args.expert_model_parallel_size
    > 1: ... assert not args.fp16, "Expert parallelism is not supported with fp16 training."``"""
    d = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
    assert d["parallelism"]["ep"] > 1
    d["training"]["precision"] = "fp16"
    ex = megatron_args(d)
    assert "--fp16" in ex.text and "--expert-model-parallel-size" in ex.text
    assert any("Expert parallelism is not supported with fp16 training." in n for n in ex.notes)
    d["training"]["precision"] = "bf16"
    assert not any("fp16" in n for n in megatron_args(d).notes)
    # no expert parallelism: nothing to say
    d["training"]["precision"] = "fp16"
    d["parallelism"]["ep"] = 1
    assert not any("Expert parallelism" in n for n in megatron_args(d).notes)


def test_exports_note_tp_above_the_kv_heads():
    """Llama 3 70B has 8 KV heads (config.json num_key_value_heads). Megatron-Core's
    TransformerConfig requires num_query_groups % tensor_model_parallel_size == 0 (before
    Megatron-LM PR #2565); TorchTitan's llama3 shards wk / wv column-wise and views whole heads:
    TP 16 runs in neither, TP 8 in both. The planner accepts TP 16 (replicated KV heads)."""
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"]["tp"] = 16
    d["parallelism"]["dp"] = d["parallelism"]["dp"] // 2
    meg = megatron_args(d)
    assert "--num-query-groups 8" in meg.text and "--tensor-model-parallel-size 16" in meg.text
    assert any("TP 16 > 8 KV heads" in n and "cannot run" in n for n in meg.notes)
    tt = torchtitan_toml(d)
    assert tomllib.loads(tt.text)["model"]["name"] == "llama3"
    assert any("TP 16 > 8 KV heads" in n for n in tt.notes)
    d["parallelism"]["tp"], d["parallelism"]["dp"] = 8, d["parallelism"]["dp"] * 2
    assert not any("KV heads" in n for n in megatron_args(d).notes + torchtitan_toml(d).notes)


def test_megatron_fsdp_writes_the_distributed_optimizer():
    """Megatron-LM docs/discussions/megatron-fsdp-user-guide/megatron-fsdp-user-guide.md, "Required
    Configurations": --use-megatron-fsdp, --data-parallel-sharding-strategy optim_grads_params,
    --no-gradient-accumulation-fusion, --use-distributed-optimizer, --ckpt-format fsdp_dtensor
    (Megatron-Bridge: "Megatron-FSDP always uses a distributed optimizer"); without
    --use-distributed-optimizer megatron/core/optimizer/__init__.py builds a
    Float16OptimizerWithFloat16Params. validate_args (arguments.py at 000c4ac2) asserts
    CUDA_DEVICE_MAX_CONNECTIONS != "1" with Megatron-FSDP and == "1" with TP or CP > 1 otherwise
    (before Blackwell)."""
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    for zs, strategy in ((2, "optim_grads"), (3, "optim_grads_params")):
        d["parallelism"]["zero_stage"] = zs
        ex = megatron_args(d)
        ns = _parse(ex.text)
        assert ns.use_megatron_fsdp and ns.use_distributed_optimizer and ns.ckpt_format == "fsdp_dtensor"
        assert ns.data_parallel_sharding_strategy == strategy
        assert any("--no-gradient-accumulation-fusion" in n for n in ex.notes)
        assert any("CUDA_DEVICE_MAX_CONNECTIONS" in n and "not 1" in n for n in ex.notes)
    d["parallelism"]["zero_stage"] = 1  # CP 2 without FSDP: the variable must be 1
    ex = megatron_args(d)
    assert any("CUDA_DEVICE_MAX_CONNECTIONS=1" in n for n in ex.notes)
    assert not any("no-gradient-accumulation-fusion" in n for n in ex.notes)


def test_megatron_notes_expert_and_tensor_parallelism_without_sequence_parallelism():
    """megatron/core/model_parallel_config.py ModelParallelConfig.__post_init__: "if
    self.expert_model_parallel_size > 1 and self.tensor_model_parallel_size > 1: if
    self.sequence_parallel is False: ... 'When using expert parallelism and tensor parallelism,
    sequence parallelism must be used'"."""
    d = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
    d["parallelism"].update(tp=2, dp=8, sequence_parallel=False)
    ex = megatron_args(d)
    assert not _parse(ex.text).sequence_parallel and _parse(ex.text).expert_model_parallel_size == 8
    assert any("sequence parallelism must be used" in n for n in ex.notes)
    d["parallelism"]["sequence_parallel"] = True
    ex = megatron_args(d)
    assert _parse(ex.text).sequence_parallel and not any("sequence parallelism must" in n for n in ex.notes)


def test_megatron_cpu_offload_notes_what_it_moves():
    """megatron/core/optimizer/__init__.py: optimizer_cpu_offload builds a HybridDeviceOptimizer
    (offload_fraction = --optimizer-offload-fraction, default 1.0) with CPU Adam: the fp32
    master weights and states move to the CPU with the gradients."""
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["parallelism"].update(offload_optimizer="cpu")
    assert any("HybridDeviceOptimizer" in n for n in megatron_args(d).notes)
    d["parallelism"].update(offload_master_weights=True, offload_grads=True)
    assert not any("HybridDeviceOptimizer" in n for n in megatron_args(d).notes)


def test_deepspeed_notes_moe_with_zero3():
    """deepspeed/runtime/engine.py _configure_zero_optimizer: ``elif zero_stage ==
    ZeroStageEnum.weights: assert not self.has_moe_layers, "MoE not supported with Stage 3"``."""
    from planner.export import deepspeed_config
    d = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
    d["parallelism"].update(zero_stage=3, pp=1, vpp=1, schedule="1f1b", dp=64)
    ex = deepspeed_config(d)
    assert json.loads(ex.text)["zero_optimization"]["stage"] == 3
    assert any("MoE not supported with Stage 3" in n for n in ex.notes)
    d["parallelism"]["zero_stage"] = 2
    assert not any("Stage 3" in n for n in deepspeed_config(d).notes)
    dense = planner.load_preset("mpt-7b-a100-8")  # ZeRO-3, dense
    assert not any("Stage 3" in n for n in deepspeed_config(dense).notes)


def test_torchtitan_notes_a_sequence_its_divisor_refuses():
    """Found by review. TorchTitan's parallelize_llama asserts ``seq_len %
    parallel_dims.seq_len_divisor == 0`` with ``ParallelDims.seq_len_divisor = tp * (cp * 2)``
    (torchtitan/distributed/parallel_dims.py; models/llama3/infra/parallelize.py at 018740b7):
    the ×2 holds with cp = 1 too. By hand: tp 1, cp 1 → 2 (8191 odd: refused, 8192 not); the
    default preset's tp 8 → 16 (8190 = 16·511 + 14: refused; 8192 = 16·512 not); llama3-8b's cp 2
    → 4 (8190 = 4·2047 + 2: refused although cp divides it; 8188 = 4·2047 not)."""

    def noted(pid, seq):
        d = planner.load_preset(pid).to_json_dict()
        d["training"]["seq_len"] = seq
        return [n for n in torchtitan_toml(d).notes if "seq_len_divisor" in n]

    assert any("= 2:" in n for n in noted("llama31-8b-torchtitan-h100-8", 8191))
    assert not noted("llama31-8b-torchtitan-h100-8", 8192)
    assert any("= 16:" in n for n in noted("default", 8190))
    assert not noted("default", 8192)
    assert any("= 4:" in n for n in noted("llama3-8b-h100-64", 8190))
    assert not noted("llama3-8b-h100-64", 8188)


def test_megatron_notes_unfused_attention_under_context_parallelism():
    """Found by review. Transformer Engine's get_attention_backend
    (transformer_engine/pytorch/attention/dot_product_attention/utils.py, NVIDIA/TransformerEngine
    at 002a3e57): "Disabling UnfusedDotProductAttention as it does not support context
    parallelism"; Megatron's local DotProductAttention asserts context_parallel_size == 1
    (megatron/core/transformer/dot_product_attention.py at 00caa53a). The planner's
    flash_attention = false is materialised scores, so the flag stays as planned, with a note."""
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    assert d["parallelism"]["cp"] == 2
    d["parallelism"]["flash_attention"] = False
    ex = megatron_args(d)
    assert _parse(ex.text).attention_backend == "unfused"
    assert any("unfused with context parallelism (CP 2)" in n for n in ex.notes)
    d["parallelism"]["flash_attention"] = True  # flash runs CP: nothing to say
    assert not any("context parallelism (CP" in n for n in megatron_args(d).notes)
    d["parallelism"].update(flash_attention=False, cp=1, dp=None)  # unfused without CP runs
    assert not any("context parallelism (CP" in n for n in megatron_args(d).notes)


def test_torchtitan_notes_expert_parallelism_that_does_not_fit_cp():
    """Found by review. TorchTitan's ParallelDims._validate: "EP would borrow all cp and some
    dp_shard degree: assert ep % cp == 0 and (dp_shard * cp) % ep == 0" (parallel_dims.py);
    job_config.py at 6404b932: context_parallel_degree <= expert_parallel_degree <=
    data_parallel_shard_degree * context_parallel_degree. Mixtral on 64 GPUs with pp 4, cp 4:
    dp = 64 / 16 = 4 = the shard degree (ZeRO-1); ep 2: 2 % 4 ≠ 0, refused; ep 8: 8 % 4 = 0 and
    16 % 8 = 0, accepted."""
    d = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
    d["parallelism"].update(cp=4, ep=2, vpp=1, schedule="1f1b", dp=None)
    tt = torchtitan_toml(d)
    assert tomllib.loads(tt.text)["parallelism"]["data_parallel_shard_degree"] == 4
    assert any(n.startswith("EP 2 with CP 4") and "ep % cp == 0" in n for n in tt.notes)
    d["parallelism"]["ep"] = 8
    assert not any(n.startswith("EP ") for n in torchtitan_toml(d).notes)


def test_torchtitan_says_what_it_runs_without_sequence_parallelism_or_flash_attention():
    """Found by review. apply_tp (models/llama3/infra/parallelize.py at 81c12433 and 018740b7)
    puts SequenceParallel() on the norms unconditionally, and job_config.py at 6404b932 has no
    key to turn it off; the llama3 model's attention (model.py at 6404b932) is
    F.scaled_dot_product_attention / FlexAttention, fused kernels first (models/attention.py at
    0012170a). So sequence_parallel = false with TP and flash_attention = false are notes; SP
    off without TP (llama3-8b-h100-64: tp 1) is nothing to say."""
    d = planner.load_preset("default").to_json_dict()
    assert d["parallelism"]["tp"] == 8
    d["parallelism"]["sequence_parallel"] = False
    assert any(n.startswith("sequence parallelism off with TP 8") for n in torchtitan_toml(d).notes)
    d["parallelism"]["sequence_parallel"] = True
    assert not any(n.startswith("sequence parallelism off") for n in torchtitan_toml(d).notes)
    small = planner.load_preset("llama3-8b-h100-64")
    assert small.parallelism.tp == 1 and not small.parallelism.sequence_parallel
    assert not any(n.startswith("sequence parallelism off") for n in torchtitan_toml(small).notes)
    d["parallelism"]["flash_attention"] = False
    assert any(n.startswith("flash_attention off") and "scaled_dot_product_attention" in n
               for n in torchtitan_toml(d).notes)
    d["parallelism"]["flash_attention"] = True
    assert not any(n.startswith("flash_attention off") for n in torchtitan_toml(d).notes)


def test_deepspeed_says_its_pipeline_runs_1f1b():
    """Found by review. DeepSpeed's PipelineEngine.train_batch builds ``schedule.TrainSchedule(
    micro_batches=..., stages=self.num_stages, stage_id=self.stage_id)`` whatever the config
    (deepspeed/runtime/pipe/engine.py, deepspeedai/DeepSpeed at 03f6f75c): 1F1B, one stage per
    rank. Every other schedule is a note, and the PP entry no longer names the scenario's."""
    from planner.export import deepspeed_config
    d = planner.load_preset("default").to_json_dict()
    assert d["parallelism"]["schedule"] == "interleaved" and d["parallelism"]["pp"] == 4
    ex = deepspeed_config(d)
    assert any(n.startswith("schedule 'interleaved' (5 virtual stages per rank)") and "TrainSchedule" in n
               and "(with vpp = 1)" in n for n in ex.notes)  # 1f1b alone is refused with vpp 5 (found by review)
    assert not any("schedule interleaved" in n for n in ex.notes)
    for sch in ("gpipe", "zero_bubble", "dualpipe"):
        d["parallelism"].update(schedule=sch, vpp=1)
        assert any(n.startswith(f"schedule '{sch}'") and "TrainSchedule" in n for n in deepspeed_config(d).notes)
    d["parallelism"]["schedule"] = "1f1b"
    assert not any(n.startswith("schedule '") for n in deepspeed_config(d).notes)


def test_torchtitan_zero0_with_cp_is_sharded_over_the_cp_ranks():
    """Found by review. TorchTitan: ParallelDims.fsdp_enabled = dp_shard_enabled or cp_enabled
    (parallel_dims.py), so with CP > 1 parallelize_llama applies fully_shard over the
    ("dp_replicate", "dp_shard_cp") mesh (parallelize.py at 81c12433); job_config.py at 6404b932:
    mixed precision "takes effect via fully_shard when data_parallel_shard_degree > 1 or
    context_parallel_degree > 1". Without CP but with TP / PP, its DDP path raises "DDP has not
    supported > 1D parallelism"; with DP alone it is DDP, as written (no note)."""
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["parallelism"]["zero_stage"] = 0
    notes = torchtitan_toml(d).notes
    assert any(n.startswith("ZeRO-0 with CP 2") and "over the dp_shard·cp = 2 ranks" in n for n in notes)
    assert not any("pure data-parallel" in n for n in notes)
    gpt3 = torchtitan_toml(planner.load_preset("gpt3-175b-a100-1024")).notes  # ZeRO-0, TP 8, PP 8, no CP
    assert any("DDP has not supported > 1D parallelism" in n for n in gpt3)
    ddp = planner.load_preset("llama31-8b-torchtitan-h100-8").to_json_dict()  # DP 8 only
    ddp["parallelism"]["zero_stage"] = 0
    assert not any(n.startswith("ZeRO-0") for n in torchtitan_toml(ddp).notes)
