"""Review 13b of the interfaces to other tools: ``planner export``, the Hugging Face config.json
import and ``planner validate --csv``. Each test failed before its fix.

Expected values come from the frameworks' sources (quoted in planner/export.py at each fix) and
from hand calculations on a published config.json, never from the code's own output.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pandas as pd
import pytest

import planner
from planner import model_stats, validation
from planner import batch as B
from planner.export import deepspeed_config, torchtitan_toml
from planner.hf_config import import_hf_config
from planner.schema import Scenario

FLAGS = json.loads((Path(__file__).parent / "data" / "framework_flags.json").read_text())


# ---- export: TorchTitan FP8 -------------------------------------------------------------------

def _fp8(preset: str, scaling: str) -> dict:
    d = planner.load_preset(preset).to_json_dict()
    d["training"].update(precision="fp8", fp8_scaling=scaling)
    return d


def test_torchtitan_tensorwise_fsdp_float8_all_gather_is_written_without_recipe_name():
    """TorchTitan's Float8Converter (torchtitan/components/quantization/float8.py of the job_config
    era at TORCHTITAN_COMMIT) asserts "using `float8_config.enable_fsdp_float8_all_gather` together
    with `float8_config.recipe_name` is not supported": the export wrote both, so the job failed at
    start. Without recipe_name TorchTitan builds Float8LinearConfig(enable_fsdp_float8_all_gather=…),
    dynamic tensor-wise scaling — the planner's 'tensorwise'."""
    tw = tomllib.loads(torchtitan_toml(_fp8("llama31-8b-torchtitan-h100-8", "tensorwise")).text)  # ZeRO-3
    assert tw["model"]["converters"] == ["float8"]
    assert tw["float8"] == {"enable_fsdp_float8_all_gather": True, "precompute_float8_dynamic_scale_for_fsdp": True}
    assert {"enable_fsdp_float8_all_gather", "precompute_float8_dynamic_scale_for_fsdp"} <= set(
        FLAGS["torchtitan"]["keys"]["float8"]["keys"])
    # row-wise (no all-gather): the recipe is named, as before
    rw = tomllib.loads(torchtitan_toml(_fp8("llama31-8b-torchtitan-h100-8", "rowwise")).text)
    assert rw["float8"] == {"recipe_name": "rowwise"}
    # tensorwise without ZeRO-3 (no all-gather written): the recipe is named
    ds = tomllib.loads(torchtitan_toml(_fp8("llama3-8b-h100-64", "tensorwise")).text)  # ZeRO-1
    assert ds["float8"] == {"recipe_name": "tensorwise"}


def test_torchtitan_fp8_moe_says_the_experts_stay_bf16():
    """Float8Converter.convert swaps nn.Linear modules only (convert_to_float8_training); TorchTitan's
    MoE experts are GroupedExperts parameters, converted only through the prototype
    [float8] moe_fqns_prototype (row-wise, PP = 1 and CP = 1): the planner's fp8 expert GEMMs were
    silently bf16 in the written job."""
    ds = torchtitan_toml(planner.load_preset("deepseek-v3-h800-2048"))  # fp8 MoE
    assert any(n.startswith("FP8 with MoE:") and "moe_fqns_prototype" in n for n in ds.notes)
    dense = torchtitan_toml(_fp8("llama3-8b-h100-64", "tensorwise"))
    assert not any(n.startswith("FP8 with MoE:") for n in dense.notes)
    mix = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()  # MoE in bf16: no FP8 note
    assert not any(n.startswith("FP8 with MoE:") for n in torchtitan_toml(mix).notes)


# ---- export: DeepSpeed with pipeline parallelism --------------------------------------------

def test_deepspeed_pipeline_gradient_reduction_is_not_overlapped_note():
    """deepspeed/runtime/pipe/engine.py: "We schedule the all-reduces, so disable it in
    super().backward() / self.enable_backward_allreduce = False" and runtime/engine.py
    _configure_zero_optimizer: "Pipeline parallelism does not support overlapped communication, will
    be disabled." The export wrote overlap_comm true for the default preset (PP 4, ZeRO-1) without
    saying that DeepSpeed runs the reduction after the backward."""
    d = planner.load_preset("default").to_json_dict()  # PP 4, ZeRO-1, dp_comm_overlap
    e = deepspeed_config(d)
    assert any(n.startswith("overlap_comm with PP 4:") and "ReduceGrads" in n for n in e.notes)
    d["parallelism"]["dp_comm_overlap"] = False  # the plan DeepSpeed runs: no note
    assert not any(n.startswith("overlap_comm with PP") for n in deepspeed_config(d).notes)
    no_pp = planner.load_preset("llama3-8b-h100-64")  # PP 1: DeepSpeed overlaps
    assert not any(n.startswith("overlap_comm with PP") for n in deepspeed_config(no_pp).notes)


# ---- Hugging Face import: Nemotron -----------------------------------------------------------

#: Nemotron-4 4B (Minitron-4B / Nemotron-Mini-4B) as NVIDIA/TensorRT-LLM's
#: tests/unittest/_torch/modeling/test_modeling_nemotron.py (Nemotron_4_4B_CONFIG) copies it.
NEMOTRON_4B = {
    "architectures": ["NemotronForCausalLM"], "bos_token_id": 2, "eos_token_id": 3, "hidden_act": "relu2",
    "hidden_size": 3072, "initializer_range": 0.0134, "intermediate_size": 9216, "max_position_embeddings": 4096,
    "model_type": "nemotron", "num_attention_heads": 24, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "norm_eps": 1e-05, "rope_theta": 10000, "partial_rotary_factor": 0.5, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "transformers_version": "4.48.0", "use_cache": True, "vocab_size": 256000,
    "kv_channels": 128,
}


def _params_total(model) -> float:
    s = Scenario.model_validate({"model": model.model_dump(mode="json", exclude_none=True),
                                 "cluster": {"system": "dgx-h100", "n_gpus": 8},
                                 "training": {"global_batch_size": 8, "seq_len": 2048},
                                 "parallelism": {"tp": 1, "pp": 1}})
    return float(model_stats.stats(B.from_scenarios([s]))["params_total"][0])


def test_nemotron_is_read_with_its_ungated_squared_relu_mlp():
    """Transformers' NemotronMLP is up_proj → relu² → down_proj (no gate) with LayerNorm1P; the
    import read 'nemotron' as an unknown Llama-style type (gated, RMSNorm): 5.10B, +22 %.
    Hand count: h = 3072, 24 heads × 128, 8 KV heads, f = 9216, V = 256,000, 32 layers, no biases,
    untied: attention 2·h·h + 2·h·1024 = 25,165,824; MLP 2·h·f = 56,623,104; two LayerNorms
    (weight and bias) 4·h = 12,288 → 81,801,216 per layer × 32 = 2,617,638,912; final norm 2·h =
    6,144; embeddings 2·V·h = 1,572,864,000 → 4,190,509,056 (the Minitron paper's 4.2B)."""
    imp = import_hf_config(NEMOTRON_4B)
    m = imp.model
    assert (m.gated_mlp, m.norm, m.linear_bias, m.tied_embeddings, m.rope) == (False, "layernorm", False, False, True)
    assert _params_total(m) == 4_190_509_056
    assert not any("not in the planner's list" in n for n in imp.notes)


# ---- validate --csv ----------------------------------------------------------------------------

def _rows_csv(tmp_path, name="r.csv", **cells) -> Path:
    cal = pd.read_csv(validation.DEFAULT_CSV)
    row = cal[cal["run_id"] == "nemo_24.07_DGX-H100_LLAMA3-70B_64_FP8"].copy()
    for k, v in cells.items():
        row[k] = v
    path = tmp_path / name
    row.to_csv(path, index=False)
    return path


def test_a_header_naming_a_column_twice_is_refused_naming_it(tmp_path):
    """pandas reads a second 'tp' column as 'tp.1', which nothing read: a user's corrected degree in
    the duplicate was silently ignored. Now refused, naming the column and both positions."""
    p = _rows_csv(tmp_path)
    text = p.read_text().splitlines()
    cols = text[0].split(",")
    k = cols.index("tp") + 1
    p.write_text("\n".join([text[0] + ",tp"] + [line + ",4" for line in text[1:]]) + "\n")
    with pytest.raises(ValueError, match=rf"names a column twice: 'tp' \(columns {k} and {len(cols) + 1}\)"):
        validation.validate(p)
    from test_cli import run
    rc, out, err = run("validate", "--csv", str(p))
    assert rc == 2 and "Traceback" not in err and "'tp' (columns" in err


def test_a_count_too_large_to_read_exactly_says_so(tmp_path):
    """9007199254740993 is a whole number; the message said "is not a finite whole number"."""
    p = _rows_csv(tmp_path, gpu_count="9007199254740993")
    with pytest.raises(ValueError, match=r"gpu_count = 9007199254740993 is too large to be a count"):
        validation.validate(p)
