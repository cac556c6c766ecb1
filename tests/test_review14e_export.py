"""Review 14e: launch-configuration exports checked against the frameworks' own sources.

Expected values are hand-derived from the framework code read for this review:

* TorchTitan ``torchtitan/distributed/pipeline_parallel.py`` ``generate_llm_fqn_per_model_part``
  (``generate_split_points`` in ``distributed/pipeline.py`` at f3534d77 has the same arithmetic):
  ``n_layers + w_in + w_out`` effective layers shared out evenly, the remainder one each to the
  first stages, then ``w_in`` taken off the first stage and ``w_out`` off the last; the weights are
  ``pipeline_parallel_first_stage_less_layers`` / ``..._last_stage_less_layers``, ``int = 1`` in
  ``torchtitan/config/job_config.py`` at 6404b932, which also has ``pipeline_parallel_layers_per_stage``.
  Without it a multi-stage schedule gets 2 stages per rank.
* Megatron-LM ``megatron/training/arguments.py`` at 000c4ac2: ``validate_args`` reads
  ``--grad-reduce-in-bf16`` and sets ``accumulate_allreduce_grads_in_fp32`` only under
  ``if args.bf16:``; ``get_model`` builds the DDP buffers with
  ``grad_reduce_in_fp32 = args.accumulate_allreduce_grads_in_fp32``.
* DeepSpeed ``deepspeed/runtime/config.py`` at 3a890ec5 (``DeepSpeedConfig.__init__``: without an mpu
  the batch check divides the world size by ``config["sequence_parallel_size"]``);
  ``runtime/pipe/module.py`` (``PipelineModule(partition_method='parameters')``, ``'type:'``);
  ``runtime/activation_checkpointing/config.py`` (``ACT_CHKPT_CPU_CHECKPOINTING = 'cpu_checkpointing'``).
"""

from __future__ import annotations

import shlex

import planner
from planner.export import deepspeed_config, megatron_args, torchtitan_toml


def _d(pid: str, **par) -> dict:
    d = planner.load_preset(pid).to_json_dict()
    for k, v in par.items():
        sec, key = k.split("__")
        d[sec][key] = v
    return d


def _flags(text: str) -> list[str]:
    lines = [ln for ln in text.splitlines() if not ln.startswith("#")]
    return [w for w in shlex.split(" ".join(ln.rstrip("\\") for ln in lines)) if w.startswith("--")]


def test_torchtitan_names_its_default_first_and_last_stage_weights():
    # GPT-3 175B: 96 layers, PP 8, 1F1B (one stage per rank). TorchTitan's defaults (1, 1): 98 effective
    # layers, 98 // 8 = 12 rest 2 → 13, 13, 12 × 6; minus 1 on the first and the last stage →
    # [12, 13, 12, 12, 12, 12, 12, 11]; the planner's (and Megatron's) split is 12 on every stage.
    ex = torchtitan_toml(planner.load_preset("gpt3-175b-a100-1024"))
    (n,) = [n for n in ex.notes if n.startswith("pipeline split:")]
    assert "[12, 13, 12×5, 11]" in n and "the planner's [12×8]" in n
    assert "pipeline_parallel_first_stage_less_layers = 0 and pipeline_parallel_last_stage_less_layers = 0" in n
    # Qwen3-235B: 94 layers over PP 8, uneven. Defaults: 96 → 12 each, minus 1 first / last →
    # [11, 12×6, 11]; planner: 94 = 8·11 + 6 → [12×6, 11×2]. Weights 0 give exactly the planner's split,
    # so the old "cannot express it" note is wrong.
    q = torchtitan_toml(planner.load_preset("qwen3-235b-gb200-256"))
    (n,) = [n for n in q.notes if n.startswith("pipeline split:")]
    assert "[11, 12×6, 11]" in n and "[12×6, 11×2]" in n and "the first 6 stages one more" in n
    assert not any("cannot express" in n for n in q.notes)
    # Llama 3 8B, PP 2: 34 → 17, 17 → 16, 16 = the planner's split: nothing to say.
    ll = torchtitan_toml(_d("llama3-8b-h100-64", parallelism__pp=2, parallelism__cp=1, parallelism__dp=None))
    assert not any(n.startswith("pipeline split:") for n in ll.notes)


def test_torchtitan_interleaved_names_the_layers_per_stage_that_give_the_planners_split():
    # Llama 3 70B: 80 layers, PP 4 × 5 virtual stages = 20 stages of 4 layers; with weights 0,
    # ceil(80 / 4) = 20 stages, 20 / 4 = 5 per rank.
    ex = torchtitan_toml(planner.load_preset("llama3-70b-h100-1024"))
    (n,) = [n for n in ex.notes if n.startswith("interleaved with 5 virtual stages per rank")]
    assert "TorchTitan runs 2 stages per rank" in n
    assert "pipeline_parallel_layers_per_stage = 4" in n and "ceil(80 / 4) = 20 stages, 5 per rank" in n
    # Llama 3.1 405B: 126 layers over 16 × 7 = 112 stages: 126 = 112 + 14 → [2×14, 1×98]; no equal
    # layers per stage exists.
    big = torchtitan_toml(planner.load_preset("llama3-405b-h100-16k"))
    (n,) = [n for n in big.notes if n.startswith("interleaved with 7 virtual stages per rank")]
    assert "[2×14, 1×98]" in n and "module_fqns_per_model_part" in n


def test_torchtitan_names_expert_overlap_it_cannot_set():
    ex = torchtitan_toml(planner.load_preset("deepseek-v3-h800-2048"))  # ep_comm_overlap, ep_dispatch_fp8 on
    assert any("ep_comm_overlap" in n and "ep_dispatch_fp8" in n for n in ex.notes)
    plain = torchtitan_toml(_d("deepseek-v3-h800-2048", parallelism__ep_comm_overlap=False,
                               parallelism__ep_dispatch_fp8=False))
    assert not any("ep_comm_overlap" in n for n in plain.notes)


def test_deepspeed_names_what_the_model_code_must_set():
    ex = deepspeed_config(_d("llama3-70b-h100-1024", parallelism__offload_activations=True))
    assert any("\"cpu_checkpointing\": true" in n for n in ex.notes)  # activation offload, not silently dropped
    (split,) = [n for n in ex.notes if n.startswith("set in the model code")]
    assert "TP 8 (Megatron-DeepSpeed --tensor-model-parallel-size, with --sequence-parallel)" in split
    # 80 layers over DeepSpeed's 4 stages (one per rank): 20 each.
    assert "partition_method='type:" in split and "[20×4] per stage" in split and "'parameters'" in split
    cp = deepspeed_config(planner.load_preset("llama3-8b-h100-64"))  # CP 2
    assert any("\"sequence_parallel_size\": 2" in n for n in cp.notes)
    ds = deepspeed_config(planner.load_preset("deepseek-v3-h800-2048"))
    assert any("ep_comm_overlap" in n for n in ds.notes)


def test_megatron_gradient_dtype_follows_validate_args():
    # fp16 with the planner's fp32 gradient buffers (4 B): Megatron needs --accumulate-allreduce-grads-in-fp32.
    fl = _flags(megatron_args(_d("gpt3-175b-a100-1024", training__precision="fp16")).text)
    assert "--fp16" in fl and "--accumulate-allreduce-grads-in-fp32" in fl and "--grad-reduce-in-bf16" not in fl
    # bf16: Megatron sets it itself; --grad-reduce-in-bf16 only for bf16 gradients.
    fl = _flags(megatron_args(_d("gpt3-175b-a100-1024", training__precision="bf16")).text)
    assert "--bf16" in fl and "--accumulate-allreduce-grads-in-fp32" not in fl
    fl = _flags(megatron_args(_d("gpt3-175b-a100-1024", training__precision="bf16", training__grad_dtype="bf16")).text)
    assert "--grad-reduce-in-bf16" in fl
    # fp32 run with bf16 gradients: the flag would be ignored (read under "if args.bf16:"); noted, not written.
    ex = megatron_args(_d("gpt3-175b-a100-1024", training__precision="fp32", training__grad_dtype="bf16"))
    assert "--grad-reduce-in-bf16" not in _flags(ex.text)
    assert any(n.startswith("grad_dtype 'bf16' with precision 'fp32'") and "4 B" in n for n in ex.notes)


def test_megatron_mla_uses_the_fused_attention_backend():
    # DeepSeek-V3 MLA: Q/K head 128 + 64 = 192, V head 128. Transformer Engine get_attention_backend
    # (attention/dot_product_attention/utils.py, NVIDIA/TransformerEngine at a0b36d0c): "if head_dim_qk !=
    # head_dim_v: ... Disabling FlashAttention as it does not support MLA." — with --attention-backend flash
    # (the other backends off) no backend is left; fused (cuDNN) keeps no s×s scores, as planned.
    ex = megatron_args(planner.load_preset("deepseek-v3-h800-2048"))
    toks = _flags_and_values(ex.text)
    assert toks[toks.index("--attention-backend") + 1] == "fused"
    assert any("Q/K head 192, V head 128" in n for n in ex.notes)
    # ... and under CP the same file disables FusedAttention too ("does not support context parallelism with MLA").
    cp = megatron_args(_d("deepseek-v3-h800-2048", parallelism__cp=2, parallelism__dp=None))
    assert any(n.startswith("MLA with context parallelism (CP 2)") for n in cp.notes)
    # A model with equal head sizes on H100 with the native kernels: auto, Transformer Engine's choice,
    # cuDNN fused attention on Hopper+ (review 47h: flash switched cuDNN off, FlashAttention-2 then ran);
    # flash for the planner's flash2 kernels and on Ampere, whose native kernel is FlashAttention-2.
    ll = _flags_and_values(megatron_args(planner.load_preset("llama3-70b-h100-1024")).text)
    assert ll[ll.index("--attention-backend") + 1] == "auto"
    f2 = _flags_and_values(megatron_args(_d("llama3-70b-h100-1024", parallelism__attention_kernel="flash2")).text)
    assert f2[f2.index("--attention-backend") + 1] == "flash"


def _flags_and_values(text: str) -> list[str]:
    lines = [ln for ln in text.splitlines() if not ln.startswith("#")]
    return shlex.split(" ".join(ln.rstrip("\\") for ln in lines))
