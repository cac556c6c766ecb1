"""Review h27a (2026-12): the exports said or wrote what the frameworks would not run.

- Megatron-LM refused every uneven split as written (validate_args: "Number of layers should be
  divisible by the pipeline-model-parallel size"); the planner's split is now written as
  ``--pipeline-model-parallel-layout`` (and ``--num-virtual-stages-per-pipeline-rank`` left out:
  validate_args allows only one of the two).
- Megatron-FSDP with PP gets a note (its documentation lists TP, EP and CP; Megatron-LM #1455).
- DeepSpeed accumulated a bf16 model's gradients in bf16 (``get_data_types``: the model's dtype
  by default) where the planner counts fp32: ``data_types.grad_accum_dtype`` is written.
- TorchTitan: without an FSDP dimension under TP / PP it trains in float32 (``maybe_enable_amp``),
  ZeRO ≥ 1 with ``dp_shard = 1`` is replication (and with TP / PP refused), and the stage keys
  that give the planner's split are written, not only named in a note.

Expected values are by hand from the planner's layer rule (the first ``L mod S`` stages get one
more layer) and the frameworks' sources cited in planner/export.py.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib

import numpy as np
import pytest

import planner
from planner.export import deepspeed_config, megatron_args, megatron_layout, torchtitan_toml
from planner.model_stats import layers_on_rank


def _parse_layout(text: str) -> list[str]:
    """Megatron-Core's ``PipelineParallelLayerLayout.parse_str_to_list``
    (megatron/core/transformer/pipeline_parallel_layer_layout.py, NVIDIA/Megatron-LM at 00caa53a):
    commas dropped, ``(…)*n`` then ``x*n`` unrolled, stages split at ``|``."""
    text = text.replace(",", "")
    for pattern in (r"\(([^)]+)\)\*(\d+)", r"(.)\*(\d+)"):
        text = re.sub(pattern, lambda x: x.group(1) * int(x.group(2)), text)
    stages = text.split("|")
    assert all(set(st) <= set("ELtm") for st in stages), stages
    return stages


def _d(pid, **kw):
    d = planner.load_preset(pid).to_json_dict()
    for k, v in kw.items():
        sec, key = k.split("__")
        d[sec][key] = v
    return d


def test_layout_of_deepseek_v3_by_hand():
    # 61 layers over 16 stages: 61 = 16·3 + 13 → 13 stages of 4, 3 of 3; one MTP module at the end
    text = megatron_layout(61, 16, 1)
    stages = _parse_layout(text)
    assert len(stages) == 16
    assert [st.count("t") for st in stages] == [4] * 13 + [3] * 3
    assert stages[0].startswith("E") and stages[-1].endswith("mL")
    assert "".join(stages).count("E") == 1 and "".join(stages).count("L") == 1 and "".join(stages).count("m") == 1
    # Llama 3.1 405B, 126 layers over 16 × 7 = 112 stages: 14 of 2, 98 of 1
    stages = _parse_layout(megatron_layout(126, 112))
    assert [st.count("t") for st in stages] == [2] * 14 + [1] * 98


@pytest.mark.parametrize("seed", range(5))
def test_layout_puts_on_each_rank_the_layers_the_planner_counts(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        pp, vpp = int(rng.integers(2, 17)), int(rng.integers(1, 6))
        n = int(rng.integers(pp * vpp, 8 * pp * vpp + 1))
        stages = _parse_layout(megatron_layout(n, pp * vpp, int(rng.integers(0, 3))))
        assert len(stages) == pp * vpp
        for j in range(pp):  # stage k is virtual chunk k // pp of rank k mod pp (Megatron's order)
            held = sum(stages[j + k * pp].count("t") for k in range(vpp))
            assert held == int(layers_on_rank(n, pp, vpp, j)), (n, pp, vpp, j)


def test_megatron_writes_the_layout_for_uneven_splits_and_not_the_vpp_flag():
    ds = megatron_args(planner.load_preset("deepseek-v3-h800-2048"))  # 61 layers, PP 16
    assert "--pipeline-model-parallel-layout 'Et*4|" in ds.text
    d = _d("default", parallelism__vpp=3, parallelism__layer_split="uneven")  # 80 layers over 4 × 3 = 12
    ex = megatron_args(d)
    (line,) = [ln for ln in ex.text.splitlines() if ln.startswith("--pipeline-model-parallel-layout")]
    stages = _parse_layout(line.split("'")[1])
    # 80 = 12·6 + 8 → 8 stages of 7, 4 of 6; 12 stages / PP 4 = 3 virtual stages, as planned
    assert [st.count("t") for st in stages] == [7] * 8 + [6] * 4
    flags = [ln.split()[0] for ln in ex.text.splitlines() if ln.startswith("--")]
    assert "--num-virtual-stages-per-pipeline-rank" not in flags
    # an even split keeps the virtual-stage flag and writes no layout
    even = megatron_args(planner.load_preset("default"))
    assert "--num-virtual-stages-per-pipeline-rank 5" in even.text and "layout" not in even.text


def test_megatron_fsdp_with_pp_is_noted():
    ex = megatron_args(_d("default", parallelism__zero_stage=3))  # PP 4
    assert "--use-megatron-fsdp" in ex.text
    assert any("Megatron-FSDP with PP 4" in n and "#1455" in n for n in ex.notes)
    no_pp = megatron_args(_d("llama3-8b-h100-64", parallelism__zero_stage=3, parallelism__pp=1, parallelism__dp=None))
    assert not any("#1455" in n for n in no_pp.notes)


def test_deepspeed_writes_the_gradient_accumulation_dtype():
    cfg = json.loads(deepspeed_config(planner.load_preset("default")).text)  # bf16, ZeRO-1, fp32 gradients
    assert cfg["data_types"] == {"grad_accum_dtype": "fp32"}
    bf = json.loads(deepspeed_config(_d("default", training__grad_dtype="bf16")).text)
    assert bf["data_types"] == {"grad_accum_dtype": "bf16"}
    # ZeRO-0: DeepSpeed's _do_optimizer_sanity_check takes a bf16 model with fp32 accumulation (the
    # BFLOAT16 wrapper) and refuses the default bf16 one without PP (review 44f; review h27a had read it
    # the other way round and left the key out)
    z0 = deepspeed_config(_d("default", parallelism__zero_stage=0))
    assert json.loads(z0.text)["data_types"] == {"grad_accum_dtype": "fp32"}
    z0bf = deepspeed_config(_d("default", parallelism__zero_stage=0, training__grad_dtype="bf16"))
    assert any("Bfloat16 wrapper must use a gradient accumulation type of fp32" in n for n in z0bf.notes)
    fp16 = deepspeed_config(_d("default", parallelism__zero_stage=0, training__precision="fp16"))
    assert "data_types" not in json.loads(fp16.text)
    assert any("unsupported mix of model dtype" in n for n in fp16.notes)
    fp16z1 = deepspeed_config(_d("default", training__precision="fp16"))
    assert json.loads(fp16z1.text)["data_types"] == {"grad_accum_dtype": "fp32"}


def test_torchtitan_without_fsdp_under_tp_trains_in_fp32_and_says_so():
    ex = torchtitan_toml(_d("llama31-8b-torchtitan-h100-8", parallelism__tp=8, parallelism__dp=1))
    assert any("Mixed precision training is disabled" in n and "float32" in n for n in ex.notes)
    fsdp = torchtitan_toml(planner.load_preset("llama31-8b-torchtitan-h100-8"))  # FSDP over 8
    assert not any("Mixed precision training is disabled" in n for n in fsdp.notes)


def test_torchtitan_zero1_with_one_rank_shards_is_replication_and_refused_with_tp_pp():
    ex = torchtitan_toml(_d("default", parallelism__dp_shard=1))  # TP 8, PP 4, DP 32, ZeRO-1
    doc = tomllib.loads(ex.text)["parallelism"]
    assert (doc["data_parallel_shard_degree"], doc["data_parallel_replicate_degree"]) == (1, 32)
    assert not any("written as FSDP2" in n for n in ex.notes)
    assert any("shards nothing" in n for n in ex.notes)
    assert any("DDP has not supported > 1D" in n for n in ex.notes)


def test_torchtitan_writes_the_stage_keys_that_give_the_planners_split():
    # GPT-3 175B: 96 layers, PP 8, 1F1B: the default weights cut [12, 13, 12×5, 11]; 0 and 0 give 12 each
    gpt3 = tomllib.loads(torchtitan_toml(planner.load_preset("gpt3-175b-a100-1024")).text)["parallelism"]
    assert gpt3["pipeline_parallel_first_stage_less_layers"] == 0
    assert gpt3["pipeline_parallel_last_stage_less_layers"] == 0
    assert "pipeline_parallel_layers_per_stage" not in gpt3
    # Llama 3 70B: 80 layers over PP 4 × 5 = 20 stages of 4
    l70 = tomllib.loads(torchtitan_toml(planner.load_preset("llama3-70b-h100-1024")).text)["parallelism"]
    assert l70["pipeline_parallel_layers_per_stage"] == 4
    assert l70["pipeline_parallel_first_stage_less_layers"] == l70["pipeline_parallel_last_stage_less_layers"] == 0
    # Llama 3.1 405B: 126 layers over 112 stages: no equal share exists, nothing written (a note)
    big = torchtitan_toml(planner.load_preset("llama3-405b-h100-16k"))
    assert "layers_per_stage =" not in big.text
    assert any("module_fqns_per_model_part" in n for n in big.notes)


def test_export_help_names_the_default_target():
    out = subprocess.run([sys.executable, "-m", "planner", "export", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "megatron (the default)" in " ".join(out.stdout.split())


def test_torchtitan_interleaved_with_one_virtual_stage_is_written_as_1f1b():
    """Review h27d: Interleaved1F1B with layers_per_stage = 20 gave one stage per rank, which
    TorchTitan's multi-stage schedules refuse."""
    ex = torchtitan_toml(_d("default", parallelism__vpp=1))  # PP 4, interleaved, VPP 1
    doc = tomllib.loads(ex.text)["parallelism"]
    assert doc["pipeline_parallel_schedule"] == "1F1B"
    assert "pipeline_parallel_layers_per_stage" not in doc
    assert any("written as 1F1B" in n for n in ex.notes)
