"""Published training runs against the model's predictions.

:func:`rows_to_scenarios` turns rows of a CSV with the columns of
``../shared/validation/calibration.csv`` into :class:`planner.Scenario` objects with an inline
:class:`planner.ModelSpec`; :func:`calibration_batch` gives the evaluated batch (model stats
included) and the published metric of each row; :func:`validate` compares prediction and
publication and summarises the relative error per source group and overall.

The default rule for settings a row does not publish — one rule, used everywhere: ``planner
validate``, ``tools/calibrate.py`` and the memory test (every run fits) all build their
scenarios through :func:`row_to_scenario`. Each field is decided by the row's own cells, then
by the framework of its source group (what that framework did by default), never per row:

* **micro-batch**: the cell; else the global batch / (dp · grad_accum) when the row publishes both; else 1. **vpp**: the cell's leading integer; else, when pp > 1
  and the row's source or notes name an interleaved schedule without its depth (Llama 3,
  Sec. 3.3.2), ``max(2, floor(L/pp))``: one layer per virtual stage, the median depth of the
  calibration file's published interleaved configurations
  (:data:`DEFAULT_LAYERS_PER_VIRTUAL_STAGE`); else 1. Schedule ``interleaved`` when vpp > 1,
  else the one the pp cell names (``zero bubble``, ``DualPipe``, ``GPipe``: :func:`_pipeline_cell`), else ``1f1b``. **layer split**: ``uneven`` (first stages
  take one extra layer, Megatron-Core ``--decoder-first-pipeline-num-layers``) when pp·vpp
  does not divide L, else ``even``.
* **global batch**: ``global_batch_seqs``, else ``global_batch_tokens / seq_len`` (a token count
  written in the sequences column, ``262,144 tokens``, is read as the tokens cell; so is a
  micro-batch in tokens, ``16K tokens``, in whole sequences); when
  neither is published, ``pp · micro-batch · dp`` (m = p micro-batches: the 1F1B worst case
  for activation memory) and the row is built for the memory check only — its throughput is
  not compared (status ``not compared: ...``), since step time depends on the batch.
* **recompute**: the cell's text (``full ...``, ``selective ...``, ``none``); a selective cell
  naming TorchTitan's per-op variant (``op-level SAC``, ``per op SAC``,
  ``selective_ac_option=op``) is ``op_sac``; empty = ``none`` (the FLOP counts of the
  empty-cell sources name no recompute).
* **sequence parallel**: the ``sp`` cell; else on when the recompute cell names sequence
  parallelism (Korthikanti et al. 2022 pair selective recompute with SP); else on when
  tp > 1 and the source is from 2023 on or of unknown year (Megatron-Core / NeMo recipes
  always pair TP with SP; SP was published in May 2022, arXiv:2205.05198, so earlier runs
  did not use it by default).
* **ZeRO stage** (:func:`parse_zero_stage`): the cell's leading integer, ``ZeRO-n``, or by name
  (FSDP ``FULL_SHARD`` 3, ``SHARD_GRAD_OP`` 2, distributed optimizer 1, DDP 0); empty = 0 for NARAYANAN21 / KORTHIKANTI22
  (Megatron-LM 2021–22 had no distributed optimizer: ``theoretical_memory_usage`` 18 B/param,
  Korthikanti Fig. 1), else 1: Megatron-Core ``--use-distributed-optimizer`` shards only the
  optimizer states; NeMo 24.07 recipes use either ``mcore_distributed_optim`` (the same
  optimizer) or Apex ``distributed_fused_adam`` — a ZeRO-2 *algorithm* (its docstring) but
  every NeMo recipe sets ``contiguous_grad_buffer: true``, which keeps the whole unsharded
  gradient buffer resident, so its memory is ZeRO-1's. ZeRO-2 is therefore not the default.
* **gradient dtype** (``training.grad_dtype``): fp32 — Megatron-LM forces fp32 gradient
  accumulation and all-reduce with bf16 (``arguments.py``: ``accumulate_allreduce_grads_in_fp32
  = True`` under ``--bf16``) and kept fp32 main grads with fp16 — except
  *MOSAIC_MPT*: bf16. llm-foundry's benchmark runs (``scripts/train/benchmarking/
  submit_benchmarks.py``, ``--fsdp_config_mixed_precision`` default ``PURE``) use Composer's
  ``PURE`` FSDP mixed precision: param, reduce and buffer dtype all bf16 (Composer's
  ``DEFAULT`` would reduce in fp32). The reduce-scatter therefore moves 2 B per parameter;
  in memory FSDP keeps fp32 sharded params + fp32 sharded grads + Adam m, v = 16 B/param
  over dp, which our split 2 (16-bit weights) + 2 (grads) + 12 (master, m, v) reproduces
  exactly (with fp32 grads it would count the master copy twice, 18 B). The README's own
  tables pair precision ``amp_bf16`` with MP Mode ``DEFAULT`` (fp32 reduce) and ``bf16`` with
  ``PURE``: for the ``amp_bf16`` rows the reduce-scatter moves 4 B, which one ``grad_dtype``
  field cannot state beside the 16 B/param memory; measured, reading them with fp32 reduce
  bytes moves the MosaicML group by < 0.1 point (median 5.69 %, max 34.5 %) and breaks the
  memory count, so bf16 stays (a stated simplification);
  *NEMO_24.07*: bf16. ``optim.grad_sync_dtype: bf16`` in the NeMo-Framework-Launcher
  Nemotron-4 340B recipe and in the NeMo 24.07 Llama 3.1 70B FP8 benchmark recipe; NeMo maps
  it to Megatron-Core ``grad_reduce_in_fp32 = False`` (``setup_mcore_distributed_parallel``).
  Older GPT-3 recipes (Apex optimizer, default ``grad_sync_dtype`` = fp32) would keep fp32
  grads; one rule per framework is kept and this is stated.
* **precision**: ``fp8`` when the cell names FP8; ``fp4`` when it names FP4 (NVFP4);
  ``fp16`` when it starts with fp16 (Narayanan
  2021 and Korthikanti 2022 trained GPT in fp16 mixed precision; same A100 peak and the same
  bytes as bf16 here); else ``bf16`` (``amp_bf16``, ``BF16 (inferred)``, empty) — or ``fp16``
  where the accelerator has no BF16 units (V100: 16-bit mixed precision there is fp16).
* **FP8 scaling** (``training.fp8_scaling``, FP8 rows only): ``rowwise`` where the precision
  cell names row-wise scaling plainly (torchao ``rowwise``, ``AXISWISE``, per-row / per-token /
  per-channel scales; :func:`parse_fp8_scaling`), else ``tensorwise``; a hedged or
  two-ways cell is refused with the cell quoted.
* **FP8 attention** (``training.fp8_attention``, FP8 / FP4 rows only, session 36): on where the
  precision cell states it (``FP8_DPA=True``, ``FP8 attention``, ``--fp8-dot-product-attention``,
  ``fp8_dot_product_attention``; :func:`parse_fp8_attention`), off otherwise (silence, a negation,
  ``FP8 attention not read``).
* **flash attention**: what the row's source / notes text states (:func:`_mentions`: ``no
  flash attention``, ``pre-FlashAttention``, ``FlashAttention was not used``, ``flash_attn=0``
  → off; ``FlashAttention``, ``--use-flash-attn`` → on; a citation says nothing); else off
  for NARAYANAN21 / KORTHIKANTI22 and other sources before 2023 (2021–22 Megatron-LM: fused
  softmax on the materialised scores), on for the others (Transformer Engine fused attention
  in Megatron-Core / NeMo; llm-foundry ``attn_impl: triton`` / ``flash``).
* **cross-entropy** (``training.cross_entropy``, memory only): ``eager`` for TorchTitan runs
  whose software predates 2025 (:func:`version_year`) or that do not state torch.compile on
  (its 2024 ``train.py`` ran ``F.cross_entropy`` eagerly on fp32 logits; since 2025
  ``torchtitan/components/loss.py`` compiles the loss with ``training.compile``); else
  ``fused``.
* **elementwise kernels** (``training.elementwise``, step time): ``eager`` for TorchTitan runs
  (TorchTitan named in the row's ``source``) that do not state torch.compile on (its Llama runs RMSNorm, RoPE and SwiGLU as PyTorch ops
  one kernel each, ``timing.RMSNORM_BYTES_EAGER_FWD``); else ``fused`` (Transformer Engine /
  Apex in the NVIDIA stacks; llm-foundry's MPT has a single-kernel LayerNorm and GeLU). No
  calibration row changes with it.
* **attention kernel**: ``flash2`` (FlashAttention-2 class) for MOSAIC_MPT (llm-foundry
  ``attn_impl: flash`` / ``triton``), ``native`` (FlashAttention-3 / cuDNN on Hopper) for the
  NVIDIA recipes; ``flash2`` for PyTorch SDPA (TorchTitan as the row's source names it, or a
  row stating SDPA, negations and comparisons aside) on Hopper and Blackwell before 2026 —
  PyTorch's default SDPA backend there is its FlashAttention-2 port: cuDNN attention was made
  opt-in in PyTorch 2.5.1 (pytorch/pytorch#138522; #142132 measures SDPA at 329 against
  cuDNN's 631 TFLOP/s on an H100) and is preferred again only from PyTorch 2.11's cuDNN
  9.15 — except TorchTitan on Blackwell from 2025 (it selects cuDNN on sm100 since
  pytorch/torchtitan#1196, May 2025), unless the row names cuDNN attention or
  FlashAttention-3 (a citation of its paper aside) or is an NVIDIA recipe; ``flash2`` also where the row names FlashAttention-2 (``flash-attn 2.x``,
  ``FA2``) as what ran, a citation of its paper excepted; it only acts on Hopper and Blackwell (``timing.FLASH2_FAMILIES``), so no
  calibration row changes with it.
* **TP communication overlap**: on for MCORE_R080_H100 (``--tp-comm-overlap`` published) and
  NEMO_24.07 (``ub_tp_comm_overlap: true`` in the recipes), off otherwise.
* **EP all-to-all overlap** (``parallelism.ep_comm_overlap``): as the row's text states it
  (:func:`ep_overlap_statement`: ``--overlap-moe-expert-parallel-comm``, ``moe_a2a_overlap``,
  ``1F1B overlap``); else on for a DualPipe schedule (DeepSeek-V3 §3.2.1), off otherwise. It
  hides only where the schedule allows (``timing.ep_overlap_possible``).
* **Node-aware expert dispatch** (``parallelism.ep_node_dispatch``, session 34): on where the row's
  text names DeepEP, HybridEP or Megatron-Core's flex dispatcher as what ran
  (:func:`node_dispatch_statement`), off otherwise; it changes only an EP group that spans NVLink
  domains (3 out-of-sample rows: Qwen3-235B on 256 H100 with DeepEP across four nodes −28 → −4 %,
  the same with its all-to-all overlapped −1 → +21 %, GPT-OSS 120B on 64 H100 −6 → +2 %).
* **DP communication overlap** (``parallelism.dp_comm_overlap``): off for MosaicML llm-foundry
  / Composer (PyTorch FSDP1; its micro-batch sweep ``larger_mb_1.md`` shows each micro-batch
  paying its all-gathers and reduce-scatter in full, docs/timing.md), on otherwise.
* **How a source is recognised** (the five calibration sources and any other alike): the
  settings above come from the row's own ``source`` / ``notes`` text (:func:`row_settings`),
  never from a table keyed by source — the framework (NVIDIA recipe, MosaicML llm-foundry,
  TorchTitan) from the ``source`` alone, so a comparison in the notes (``unlike NeMo``) names
  none; statements of what ran (SDPA, FlashAttention-2 / -3, cuDNN attention, torch.compile)
  from both, leaving out negated, compared (``instead of X``, ``faster than X``, ``vs. X``) and
  cited mentions: a source year (first arXiv id, else the earliest year
  named) before :data:`FLASH_FIRST_YEAR` = 2023 means no flash attention and ZeRO 0 for an
  empty cell (NARAYANAN21 / KORTHIKANTI22), a later or unknown year flash attention and ZeRO
  1; an NVIDIA recipe (NeMo, Megatron-Bridge) means TP overlap on and bf16 gradient
  reduction (NEMO_24.07); a published ``tp-comm-overlap`` flag means TP overlap on
  (MCORE_R080_H100), one given off (``TP_COMM_OVERLAP=False``) means off, also for an NVIDIA
  recipe (:func:`tp_overlap_statement`); MosaicML llm-foundry / Composer means bf16 gradients,
  FlashAttention-2 and DP collectives not overlapped (MOSAIC_MPT); outside the NVIDIA recipes a source year before 2024 also
  means FlashAttention-2-class attention (FlashAttention-3 and PyTorch's cuDNN attention
  arrived in 2024). The test checks that every compared calibration row gets the settings
  listed above for its source.
* **cells pasted from a launch config** (:func:`_config_cells`): Megatron-LM / NeMo flags and
  YAML keys, TorchTitan TOML, DeepSpeed JSON and HF Trainer arguments give the number of their
  key (``--tensor-model-parallel-size 8``, ``tensor_parallel_degree = 8``, ``"train_batch_size":
  2048``, ``per_device_train_batch_size=4``) to the key's column, also from another column's
  cell; ``--num-layers-per-virtual-pipeline-stage N`` (or ``N layers per virtual stage``) is a
  layer count: vpp = L / (pp·N); TorchTitan's ``data_parallel_shard_degree`` is FSDP (ZeRO-3 for an
  empty zero cell) and its ``local_batch_size`` the micro-batch only without pipelining;
  Megatron's ``--recompute-method block --recompute-num-layers N`` is ``recompute_layers`` N
  (every layer when N covers the chunk); a config value ``none`` / ``null`` / ``false`` turns
  its setting off (``mode = 'none'``, ``"bf16": {"enabled": false}``).
* **vocabulary**: empty = 51,200 (padded GPT-2 BPE, the value the file itself assumes for GPT
  rows); **KV heads**: empty = heads (MHA); **dp**: empty = gpu_count / (tp·pp·cp).
* **expert tensor parallelism** (``parallelism.etp``, Megatron-Core
  ``expert_tensor_parallel_size``): the optional ``etp`` column, read by its name like every
  column (its place in the header does not matter; the calibration file has none,
  ``validation/out_of_sample.csv`` has it last). No column, or an empty / unstated cell
  (``n/a``, ``-``, ``unknown``) = tp — Megatron-Core's default (``ModelParallelConfig`` sets it
  to ``tensor_model_parallel_size`` when None) — so a file without it reads exactly as before
  and adds nothing to the defaults column. A number, a labelled one (``ETP=1``, ``expert tensor
  parallel 1``) or a pasted ``--expert-tensor-parallel-size 1``; an ``ETP`` named in the tp or ep
  cell (``EP=32 (ETP=1)``, ``TP2-EP32-ETP1``) goes to an empty etp cell (a different number there
  makes it unclear). Refused, the row skipped with ``etp = ...`` in its status: text that is no
  number, a fraction, 0, ``no`` / ``none`` / ``off`` (1 or tp?) and an unclear cell; the
  schema's rules then apply (etp divides tp, etp·ep divides tp·cp·dp, etp ≠ tp only on a MoE
  model, with sequence parallelism), each refusal naming ``parallelism.etp``.
* **architecture** from the model name: ``llama`` and the other SwiGLU / GeGLU families
  (``mistral``, ``mixtral``, ``qwen``, ``deepseek``, ``baichuan``, ``internlm``, ``olmo``,
  ``yi``, ``phi-3``, ``stablelm``, ``glm``, ``dbrx``, ``aquila``, ``skywork``:
  :data:`_GATED_FAMILIES`) → gated MLP, RMSNorm, untied, no biases, rotary positions;
  ``palm``, ``gemma``, ``minicpm``, ``granite 3.x``, ``command r`` the same with tied
  embeddings; ``mpt`` → GeLU, LayerNorm, tied, no biases (ALiBi, no position table);
  ``nemotron`` → squared-ReLU (plain MLP), LayerNorm, untied, no biases (Nemotron-4 report:
  "no bias terms", untied embeddings, RoPE); otherwise GPT (GeLU, LayerNorm, biases, tied,
  learned absolute positions: Megatron-LM ``--position-embedding-type`` and NeMo
  ``position_embedding_type`` both default to ``learned_absolute``).
* **catalogue models**: a MoE row (or a row without layers / hidden) whose model name is a
  model preset's id or name, ignoring case and punctuation (``DeepSeekV3``, ``Qwen3_30B_a3B``),
  takes that preset's whole architecture (:func:`catalogue_model`): the CSV columns cannot
  state shared experts, leading dense layers, the expert width or MLA. Not when any published
  architecture cell (layers, hidden, heads, KV heads, vocab, ffn, experts, top-k) disagrees.
* **network**: the inter-node bandwidth the ``interconnect`` text states (``400 Gb/s per GPU``,
  ``4 x 100 Gb/s per node``, ``8x NDR 400 Gb/s``, ``1600 Gbps node-node``:
  :func:`network_bw_per_gpu`) overrides the system's NIC bandwidth per GPU; text that states
  none keeps the catalogue value.
* **GPU**: the system of the accelerator the name contains (``A100`` → ``dgx-a100-80gb``, or
  ``dgx-a100-40gb`` when the name says 40 GB; ``H100`` → ``dgx-h100``; ``H200``, ``H800``,
  ``B200``, ``B300``, ``GB200``/``GB300`` (NVL72), ``GH200``, ``MI300X``, ``MI325X``, ``MI350X``,
  ``MI355X``, Gaudi 2 / 3, ``A800`` (an A100 with 400 GB/s NVLink): see ``_GPU_SYSTEMS``; ``V100`` →
  ``dgx1-v100``, or ``dgx2-v100`` when the name or interconnect names a DGX-2 / HGX-2 or
  NVSwitch; ``MI250X`` → ``frontier-mi250x``, one GPU per GCD, as the Frontier papers count;
  an H100 named HBM2e / lower-TDP / 500 W → ``hgx-h100-96gb-hbm2e``).
* **node size**: a row that states fewer GPUs per node than the system's node-local NVLink
  domain holds (``4x H200 per node``) runs on that system cut to the stated node
  (:func:`_node_as_stated`: NVLink domain = the stated node, per-node host memory, NVMe and
  power scaled down), so collectives are placed as the row ran them.

An empty ``ffn`` of a row read as GPT (a name in none of the families of ``_arch``, no
catalogue model) is 4·hidden, the GPT-2 / GPT-3 / Megatron-LM GPT definition (Radford et al.
2019; Brown et al. 2020 Sec. 2.1: d_ff = 4·d_model); a listed gated family's width has no such
rule (the row is skipped), and a gated model whose name is in no list is read as GPT. Rows missing layers, hidden, heads, ffn, seq_len, the parallel split (tp, pp) or the
GPU count are skipped with the reason.

Published metric, counted as the source counts (validation/README.md):

* tokens/s per GPU where published (MosaicML, NeMo) and step time (Korthikanti; the same
  throughput) — compared as throughput;
* else TFLOP/s per GPU: Narayanan 2021 with ``model_stats.narayanan_flop_per_step`` (an HFU
  count, recompute included); Megatron-Core with ``model_flop_per_step`` (model FLOPs,
  attention in full), except the runs logged by 2025 Megatron-LM (:data:`MEGATRON_CAUSAL_TFLOPS_SOURCES`),
  whose ``num_floating_point_operations`` halves the attention core for the causal mask:
  ``model_flop_per_step_causal``;
* else MFU (``mfu_pct``) with ``model_flop_per_step`` over the 16-bit peak;
* else HFU (``hfu_pct``) with ``hardware_flop_per_step`` (recomputed FLOPs included) over the
  16-bit peak.

The relative error is ``predicted / published − 1`` of the throughput metric.
"""

from __future__ import annotations

import csv
import math
import os
import shlex
import re
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from . import batch as _batch
from . import catalog, model_stats
from .schema import Scenario, format_errors

#: Default calibration file, relative to the repository root (../shared/validation/).
DEFAULT_CSV = Path(__file__).resolve().parent.parent.parent / "shared" / "validation" / "calibration.csv"

GROUPS: dict[str, str] = {
    "NARAYANAN21_T1": "Narayanan",
    "KORTHIKANTI22": "Korthikanti",
    "MCORE_R080_H100": "Megatron-Core H100",
    "MOSAIC_MPT": "MosaicML FSDP",
    "NEMO_24.07": "NeMo FP8",
}
#: The framework settings of every row come from its own ``source`` / ``notes`` text
#: (:func:`row_settings`): one rule for the calibration file and for any other file.
#: First year whose runs outside the NVIDIA recipes are taken to use attention kernels native
#: to Hopper (FlashAttention-3, arXiv:2407.08608, July 2024; PyTorch's cuDNN SDPA backend).
NATIVE_ATTENTION_FIRST_YEAR = 2024
#: First year whose runs are taken to use FlashAttention-style fused attention and Megatron's
#: distributed optimizer by default (FlashAttention: Dao et al., arXiv:2205.14135, May 2022;
#: Megatron-LM ``--use-flash-attn`` and ``--use-distributed-optimizer`` in its 2023 releases;
#: MT-NLG, BLOOM, OPT and the 2021-22 Megatron papers predate both).
FLASH_FIRST_YEAR = 2023
_ARXIV = re.compile(r"arxiv[:\s/]*(\d{2})(\d{2})\.\d{4,5}", re.I)
_YEAR = re.compile(r"(?<!\d)(20[12]\d)(?!\d)")
#: An NVIDIA recipe named in a row's source: NeMo (also as the last part of an MLPerf
#: implementation folder / container tag, ``eos-dfw_n64_ngc25.01_nemo``, ``tyche_ngpu256_ngc25.04_nemo``:
#: an underscore is a word character, so ``\bnemo\b`` missed it before review 17g; not Nemotron) or
#: Megatron-Bridge.
_NVIDIA_RECIPES = re.compile(r"(?<![A-Za-z0-9])nemo(?![A-Za-z0-9])|megatron[- ]bridge", re.I)
_TP_OVERLAP_FLAG = re.compile(r"tp[-_]comm[-_]overlap", re.I)
#: The value a launch config gives the TP-overlap flag right after its name (``TP_COMM_OVERLAP=False``,
#: ``ub_tp_comm_overlap: false``, ``tp_comm_overlap = 0``; ``=True`` / ``: true`` / ``1``).
_TP_OVERLAP_VALUE = re.compile(r"""["']?\s*[:=]\s*["']?(false|off|no|none|null|0|true|on|yes|1)(?!\w|\.\d)""", re.I)


#: A row's text naming the expert-parallel all-to-all overlap: Megatron-Core's
#: ``--overlap-moe-expert-parallel-comm``, Megatron-Bridge's ``moe_a2a_overlap``, or its words
#: (``EP A2A overlap``, ``all-to-all overlap``, the MoE Model Zoo's ``1F1B overlap``: the combined
#: 1F1B schedule that runs one micro-batch's all-to-all beside another's compute).
_EP_OVERLAP_FLAG = re.compile(r"overlap[-_]moe[-_]expert[-_]parallel[-_]comm|moe[-_]a2a[-_]overlap|ep[-_]comm[-_]overlap"
                              r"|(?:ep[-_ ]|expert[-_ ])?(?:a2a|all[-_ ]to[-_ ]all)[-_ ]overlap|1f1b[-_ ]overlap", re.I)


#: A node-aware expert dispatcher named (``parallelism.ep_node_dispatch``): DeepEP, HybridEP,
#: Megatron-Core's flex dispatcher, ``--moe-enable-deepep`` (session 34).
_NODE_DISPATCH_FLAG = re.compile(r"\bdeep[-_ ]?ep\b|\bhybrid[-_ ]?ep\b|moe[-_]enable[-_]deepep|\bflex[-_ ]dispatcher", re.I)


def node_dispatch_statement(text: str) -> bool | None:
    """What a row's text states about a node-aware expert dispatcher (DeepEP, HybridEP, the flex
    dispatcher), read as :func:`tp_overlap_statement` reads its flag: on where one is named as what
    ran, off where negated (``not DeepEP``), None where none is named (the default: off)."""
    return _flag_statement(text, _NODE_DISPATCH_FLAG)


def tp_overlap_statement(text: str) -> bool | None:
    """What a row's text states about TP communication overlap: True for a flag given on
    (``--tp-comm-overlap``, ``TP_COMM_OVERLAP=True``, ``ub_tp_comm_overlap: true``), False for one
    given off (``TP_COMM_OVERLAP=False``, ``tp_comm_overlap: false``, ``=0``) or named negated
    (``no tp-comm-overlap``, ``without --tp-comm-overlap``); None when the text names no such
    flag or names it both ways. Before review 17g any mention counted as on, so MLPerf v5.1's
    ``TP_COMM_OVERLAP=False`` (NVIDIA llama31_405b FP4 configs) was read as TP overlap on."""
    return _flag_statement(text, _TP_OVERLAP_FLAG)


def ep_overlap_statement(text: str) -> bool | None:
    """What a row's text states about the expert all-to-all overlap
    (``parallelism.ep_comm_overlap``), read as :func:`tp_overlap_statement` reads its flag:
    ``--overlap-moe-expert-parallel-comm``, ``moe_a2a_overlap=True``, ``EP A2A overlap`` or ``1F1B
    overlap`` on; ``moe_a2a_overlap=False`` or a negated mention off; None when the text names
    none (or both ways). Until 2026-12-01 (review 18b) no row's text was read for it: the MoE
    Model Zoo's Qwen3-235B rows with and without "+1F1B overlap" were one scenario."""
    stated = _flag_statement(text, _EP_OVERLAP_FLAG)
    if stated is None and _EP_NOT_OVERLAPPED.search(text):
        return False
    return stated


#: Prose that says the expert all-to-all ran exposed (``the all-to-all is not overlapped``,
#: ``no EP all-to-all overlap``): off, where no flag is named (review 18d).
_EP_NOT_OVERLAPPED = re.compile(r"(?:all[-_ ]to[-_ ]all|a2a|EP\s+comm\w*)\s+(?:is|was|are|were)\s+(?:not|never)\s+"
                                r"overlapped|\bno\s+(?:EP\s+|expert\s+)?(?:all[-_ ]to[-_ ]all|a2a)\s+overlap", re.I)


#: Sentence boundaries for :func:`_flag_statement`: ``;`` and a full stop that is no decimal point.
_SENTENCE = re.compile(r";|\.(?!\d)")
#: Another row or run named beside a flag (:func:`_flag_statement`): ``next / other / previous row``,
#: ``the row below / above``, ``see also``; not ``this row``.
_FLAG_OTHER_ROW = re.compile(r"\b(?:next|other|another|separate|previous|following)\s+(?:row|run|line|entry)\b"
                             r"|\brows?\s+(?:below|above)\b|\bsee\s+also\b", re.I)
#: A comparison and at most three words before a parenthesis that holds a flag (``unlike
#: Megatron-Bridge presets (moe_a2a_overlap=True)``): the flag is the compared thing's.
_COMPARED_PAREN = re.compile(r"\b(?:unlike|compared\s+(?:to|with)|versus|vs\.?|rather\s+than|instead\s+of|than)"
                             r"\s+(?:[\w/.-]+\s+){0,3}$", re.I)
#: A flag given a number that is no on / off value (``a2a overlap = 0.5``): it states neither.
_FLAG_NUMBER = re.compile(r"""["']?\s*[:=]\s*["']?\d*\.\d""")
#: Words after a flag's name, in its clause, that turn it off (beside :data:`_NEG_AFTER`): ``is not
#: set`` / ``was not passed`` / ``not given``, ``turned off``, ``does not apply`` (review 18d).
_FLAG_OFF_AFTER = re.compile(r"^[\w\s-]{0,12}?\b(?:(?:is|was|are|were)\s+)?(?:not|never)\s+(?:set|passed|given|enabled|"
                             r"used|applied|on)\b|^\s*(?:turned|switched|set)\s+off\b|^\s*(?:does|did)\s*(?:not|n't)\s+apply\b",
                             re.I)


def _flag_statement(text: str, flag: re.Pattern) -> bool | None:
    """A flag's state in a row's text: the values given to it (``=True``, ``: false``) when there
    are any (a value beats prose about the flag: review 18b's ``moe_a2a_overlap=True (...), which no
    CSV column states`` read the "no" as a negation), else its plain or negated mentions
    (:func:`_mentions`, and :data:`_FLAG_OFF_AFTER`); None when it is not named, or named both
    ways. A mention in a clause about another row or run, or after a comparison (``the next row
    adds +1F1B overlap``, ``unlike ... (moe_a2a_overlap=True)``, ``compare with the
    moe_a2a_overlap=True row``: :data:`_OTHER_ROW`, :data:`_COMPARED_BEFORE`) states nothing about
    this row (review 18d), nor does a number given to the flag (``= 0.5``)."""
    on = off = False
    von = voff = False
    for m in flag.finditer(text):
        head = text[max(0, m.start() - 80):m.start()]
        tail = text[m.end():m.end() + 80]
        clause_after = _CLAUSE.split(tail)[0]
        # another row or run named before the flag in its sentence (``the next row adds ...``), or
        # after it in its clause (``... =True in the next row``); ``this row`` is this row
        if (_FLAG_OTHER_ROW.search(_SENTENCE.split(head)[-1]) or _FLAG_OTHER_ROW.search(clause_after)
                or re.search(r"^\s*(?:=\s*\w+\s+)?row\b", clause_after, re.I)):  # "the X=True row"
            continue
        # the flag as what the run is compared with: right after a comparison (``instead of X``), or in
        # a parenthesis right after one (``unlike Megatron-Bridge presets (X=True)``); a comparison
        # earlier in the clause compares something else (``Unlike NeMo we pass X``)
        if _COMPARED_BEFORE.search(head[-30:]):
            continue
        paren = re.search(r"\(\s*$", head)
        if paren and _COMPARED_PAREN.search(re.split(r"[,;]|\.(?!\d)", head[:paren.start()])[-1]):
            continue
        # "1F1B overlap" of pipeline point-to-point sends is no expert all-to-all overlap
        if m.group(0).lower().startswith("1f1b") and re.search(r"p2p|point[-\s]to[-\s]point",
                                                              _CLAUSE.split(head)[-1] + clause_after, re.I):
            continue
        if _FLAG_NUMBER.match(text, m.end()):
            continue
        v = _TP_OVERLAP_VALUE.match(text, m.end())
        if v:
            if v.group(1).lower() in ("true", "on", "yes", "1"):
                von = True
            else:
                voff = True
            continue
        if _FLAG_OFF_AFTER.match(clause_after):
            off = True
            continue
        plain, negated = _mentions(text[max(0, m.start() - 40):m.end() + 40],
                                   re.escape(m.group(0)))
        on, off = on or (plain and not negated), off or negated
    if von or voff:
        on, off = von, voff
    return None if on == off else on

#: A row's text that states flash attention off (``no flash attention``, ``without
#: FlashAttention``, ``pre-FlashAttention``, ``--no-flash-attn``, ``flash_attention: false``,
#: ``FlashAttention was not used``) or on (``FlashAttention``, ``--use-flash-attn``,
#: ``flash-attn``), by :func:`_mentions`: a statement beats the year rule, a negation beats
#: both; a citation (``FlashAttention paper``, ``FlashAttention (Dao et al.)``,
#: ``FlashAttention [12]``) states nothing, and so does text that names it both ways
#: (``without FlashAttention ... we use FlashAttention-2``: the year rule decides).
_FLASH_NAME = r"flash[-_ ]?attn|flash[-_ ]?attention"
_FLASH_CITED = re.compile(r"(?:" + _FLASH_NAME + r")(?:[-\s]?\d)?(?:'s)?\s*(?:paper|authors|\(?dao\b|et al|\[[^\]]*\]"
                          r"|\(\d|:\s+fast(?:er)?\s+(?:and\s+)?(?:memory|attention|accurate))",
                          re.I)
_BF16_GRAD_FRAMEWORKS = re.compile(r"llm-foundry|\bcomposer\b|mosaicml", re.I)
#: A source that names an interleaved pipeline schedule without its depth (not negated).
_INTERLEAVED = re.compile(r"(?<!no )(?<!not )(?<!non-)(?<!without )(?<!without an )(?<!without the )"
                          r"interleaved (?:1f1b |pipeline |pp )?schedul", re.I)
#: Layers per virtual stage taken when a row names an interleaved schedule but not its depth
#: (vpp = max(2, floor(L / (pp · this)))): the median over the calibration file's distinct
#: published interleaved configurations (Korthikanti 175B / 530B, NeMo GPT-3 175B, Llama 2
#: 13B / 70B, Nemotron-340B, Llama 3 70B: 4, 1, 2, 1, 1, 1, 4 layers).
DEFAULT_LAYERS_PER_VIRTUAL_STAGE = 1


#: A citation inside a source text: an arXiv id after ``fork of`` / ``as in`` / ``cf.`` /
#: ``following`` / ``citing`` in its clause (``fork of Megatron-LM (Shoeybi et al.,
#: arXiv:1909.08053)``), or the year of an ``et al.`` (``as in Narayanan et al. 2021``). Dropped
#: only when another date remains: it names someone else's work, not the run's date.
_CITED = re.compile(r"\b(?:fork\s+of|as\s+in|cf\.?|following|citing)\b[^;]*?\barxiv[:\s/]*\d{4}\.\d{4,5}"
                    r"|\bet\s+al\.?,?\s*\(?20[12]\d\)?", re.I)


def _is_na(cell) -> bool:
    """A cell pandas left empty: None or a float NaN (an empty string is text, see :func:`_blank`)."""
    return cell is None or (isinstance(cell, float) and math.isnan(cell))


def _year(text, pick) -> int | None:
    t = "" if text is None else str(text)
    uncited = _CITED.sub(" ", t)
    if _ARXIV.search(uncited) or _YEAR.search(uncited):
        t = uncited  # the run's own date beside a citation
    m = _ARXIV.search(t)
    if m:
        return 2000 + int(m.group(1))
    years = [int(y) for y in _YEAR.findall(t)]
    return pick(years) if years else None


def source_year(text) -> int | None:
    """Year of a row's source: the year of its first arXiv identifier (``arXiv:2104.04473`` →
    2021), else the earliest four-digit year 2010–2029 in the text, else None."""
    return _year(text, min)


def version_year(text) -> int | None:
    """Year of the software a row ran: its first arXiv identifier's year (experiments predate
    the paper), else the latest four-digit year 2010–2029 in the source (the newest version
    it names), else None."""
    return _year(text, max)


#: TorchTitan by name; its loss became a torch.compile region with ``training.compile`` in
#: 2025 (``torchtitan/components/loss.py``, ``build_cross_entropy_loss``); before, train.py's
#: ``loss_fn`` ran PyTorch's eager ``F.cross_entropy`` on the model's fp32 logits.
_TORCHTITAN = re.compile(r"torch\s?titan", re.I)
#: PyTorch's own FSDP named as the stack (``PyTorch FSDP``, ``FSDP2``, ``fully_shard``), and
#: the engines that bring their own fused kernels whatever torch.compile does.
_PYTORCH_FSDP = re.compile(r"\bFSDP2?\b|fully[_ ]shard", re.I)
_OTHER_ENGINES = re.compile(r"megatron|deepspeed|\bnemo\b|transformer engine|llm-foundry|composer", re.I)
#: Fused kernels a PyTorch run can name without torch.compile (Liger's Triton RMSNorm / RoPE /
#: SwiGLU / cross-entropy, Apex's fused norms, Unsloth, ``fused RMSNorm`` / ``fused cross-entropy``).
_FUSED_KERNELS = (r"\bliger\b|\bapex\b|\bunsloth\b|\bfused[-_ ]?(?:rms[-_ ]?norm|layer[-_ ]?norm|norms?|rope|rotary"
                  r"|swiglu|geglu|gelu|silu|mlp|cross[-_ ]?entropy|ce|loss|kernels?)\b")
#: PyTorch eager mode stated (``eager mode``, ``eager PyTorch``): nothing compiled.
_EAGER_MODE = r"\beager[-_ ](?:mode|pytorch|execution)\b|\bpytorch\s+eager\b"
TORCHTITAN_COMPILED_LOSS_YEAR = 2025
_COMPILE = (r"torch[. ]compile|--training\.compile|\btraining\.compile\b"
            r"|(?:\btorch_|--|\b)compile(?=\s*[=:]\s*(?:true|false|on|off|yes|no|enabled?|disabled|1|0)\b"
            r"|\s+(?:true|false)\b)|--compile\.enable\b(?!\s*[=:])"
            r"|\bcompiled (?:model|blocks?|layers?)\b|\[compile\]\s*enabled?\b"
            # TorchTitan's [compile] section and other launchers' keys (``compile.enable = true``,
            # ``compile enable=true``, ``--train.compile_model=true``, ``compile_loss=True``) and
            # the prose ``compile model+loss`` (review 19: read as no statement before, so such
            # TorchTitan rows ran eager elementwise ops and loss)
            r"|\bcompile[_.](?:model|loss|enabled?)\b(?=\s*[=:]\s*(?:true|false|on|off)\b)"
            r"|\bcompile\s+enabled?\b(?=\s*[=:]\s*(?:true|false|on|off)\b)"
            r"|\bcompile\s+(?:model\s*(?:\+|and|&)\s*loss|loss\s*(?:\+|and|&)\s*model)\b")
#: PyTorch's own attention (``F.scaled_dot_product_attention``), which TorchTitan runs. On
#: Hopper its default backend is PyTorch's FlashAttention-2 port: the cuDNN backend was made
#: opt-in in PyTorch 2.5.1 after the 2.5.0 bugs (pytorch/pytorch#138522, Oct 2024; #142132:
#: SDPA 329 vs cuDNN 631 TFLOP/s on an H100 at seq 4608, d_h 128, "This is expected"), and
#: PyTorch prefers cuDNN again only once the bundled cuDNN passes 9.15 (``check_prefer_cudnn_
#: attention`` in sdp_utils.cpp; PyTorch 2.11, 2026). TorchTitan asks for cuDNN itself on
#: Blackwell (sm100) since May 2025 (pytorch/torchtitan#1196) and not on Hopper.
_PYTORCH_SDPA = re.compile(r"\bsdpa\b|scaled_dot_product_attention", re.I)
#: FlashAttention-2 named as what ran (``FlashAttention-2``, ``flash-attn 2.x``, ``FA2``; a
#: citation of its paper says nothing): its kernels, not Hopper's native ones (FlashAttention-3
#: is a separate, Hopper-only package: arXiv:2407.08608).
_FA2_NAME = r"flash[-_ ]?(?:attn|attention)[-_ ]?(?:v)?2\b|flash[-_ ]?attn[-_ ]2\.\d|\bfa[-_ ]?2\b"
_CUDNN_OR_FA3 = r"cudnn[-_ ]?(?:sdpa|attention|fused attention|backend)|flash[-_ ]?attention[-_ ]?3|\bfa3\b"
#: Transformer Engine's cuDNN fused attention switched off (``NVTE_FUSED_ATTN=0``): TE then runs
#: its FlashAttention backend, the flash-attn package (FlashAttention-2 kernels; TE takes
#: FlashAttention-3 only where the separate Hopper package is installed and named: Transformer
#: Engine docs, "Attention backends", NVTE_FLASH_ATTN / NVTE_FUSED_ATTN). Read in the NVIDIA
#: recipes too, where a FlashAttention-2 named in prose is not (review 19: the DGX Cloud NeMo
#: recipes export it).
_TE_FUSED_ATTN_OFF = r"\bNVTE_FUSED_ATTN\s*[=:]\s*[\"']?0\b"
PYTORCH_CUDNN_ATTENTION_YEAR = 2026
TORCHTITAN_BLACKWELL_CUDNN_YEAR = 2025


def _family_of_gpu(r: dict) -> str | None:
    """Accelerator family of a row's GPU cell (``hopper``, ``blackwell``, …), None if unknown."""
    sid = system_for_gpu(r.get("gpu"), str(r.get("interconnect") or ""))
    if sid is None:
        return None
    from . import catalog
    system = catalog.systems().get(sid)
    acc = catalog.accelerators().get(system.accelerator) if system is not None else None
    return None if acc is None else acc.family


#: cuDNN's fused (flash-class: tiled, no materialised scores) attention named as what ran:
#: Transformer Engine's ``NVTE_FUSED_ATTN=1``, ``cuDNN fused attention``, ``cudnn_flash_te``
#: (MaxText), cuDNN FMHA / flash. Transformer Engine picks it over the flash-attn package when
#: ``NVTE_FLASH_ATTN=0``: that flag turns one flash-class backend off, not flash-class attention.
_CUDNN_FUSED_ATTN = (r"nvte_fused_attn\s*=\s*1\b|cudnn[-_ ]?(?:fused[-_ ]?(?:attention|attn)|flash\w*|fmha)")
#: Other flash-class (tiled, never materialising the scores) attention kernels named as what ran:
#: PyTorch SDPA (its flash / efficient backends; ``FusedSDPA``, Habana's), AMD's Composable-Kernel
#: fused attention (``CK fused attention``, ``fused attention via CK``). Read only where the year rule
#: turns flash attention on anyway (:func:`_flash_class_ran`), so it changes the defaults column's word,
#: not the value (review 49: 23 rows said "flash attention on (source year)", i.e. not stated, beside "SDPA").
#: A clause that fills in what its source does not state ("taken for what the source does not state:
#: attention = PyTorch SDPA; ..."), up to the sentence's end: not a statement of what ran.
_ASSUMED_CLAUSE = re.compile(r"(?:does not state|not stated|unstated|assum\w*|taken for)[^.]*", re.I)
_FLASH_CLASS_RAN = r"sdpa\b|\bck\b[-_ ]?fused[-_ ]?(?:attention|attn)|fused[-_ ]?(?:attention|attn)\s+(?:via|through|with)\s+ck\b"


def flash_statement(r: dict) -> bool | None:
    """What a row's ``source`` and ``notes`` text states about flash attention (True: it ran,
    False: it did not), a citation of the paper aside; None when the text says nothing (then
    the source-year rule of :func:`row_settings` decides). cuDNN's fused attention named as
    what ran (:data:`_CUDNN_FUSED_ATTN`, not negated nor a comparison) is flash-class attention
    whatever the text says of the flash-attn package (review 17e: NeMo's ``NVTE_FLASH_ATTN=0,
    NVTE_FUSED_ATTN=1`` read as attention without flash, twice the step time)."""
    text = _FLASH_CITED.sub(" ", " ".join(str(r.get(k) or "") for k in ("source", "notes")))
    stated = _stated(text, _FLASH_NAME)
    if stated is not True and _ran(text, _CUDNN_FUSED_ATTN) is True:
        return True
    if stated is None and _flash_class_ran(r, text):
        return True
    return stated


def _flash_class_ran(r: dict, text: str) -> bool:
    """Whether the text names a flash-class kernel other than FlashAttention / cuDNN as what ran
    (:data:`_FLASH_CLASS_RAN`): not in a sentence that fills in what the source does not state, says
    it was compared, or names SDPA's math backend (which materialises the scores), and only for a
    source of 2023 or later or of no known year — where the year rule turns flash attention on anyway,
    so this changes the defaults column's word, never the value (review 49b)."""
    year = source_year(r.get("source"))
    if year is not None and year < FLASH_FIRST_YEAR:
        return False
    kept = [seg for seg in re.split(r"[.;]\s", text)
            if not _ASSUMED_CLAUSE.search(seg) and not re.search(r"\bmath\b|comparison|compared|benchmark", seg, re.I)]
    return _ran(" . ".join(kept), _FLASH_CLASS_RAN) is True


def row_settings(r: dict) -> dict:
    """Framework settings a row leaves unpublished, by the default rule (module docstring):
    ``flash_attention``, ``zero_stage`` (for an empty cell), ``tp_comm_overlap``, ``grad_dtype``,
    ``attention_kernel``, ``cross_entropy``, ``elementwise`` (and ``elementwise_by_rule``: True
    where TorchTitan's rule, not a torch.compile statement, set it), ``dp_comm_overlap``.

    From the row's ``source`` and ``notes`` text: its year (:func:`source_year`; unknown =
    recent: before 2023 no flash attention and ZeRO-0), an NVIDIA recipe (NeMo,
    Megatron-Bridge: TP overlap on, bf16 gradient reduction, native attention kernels), a
    published TP-overlap flag, MosaicML llm-foundry / Composer (bf16 gradients,
    FlashAttention-2, DP collectives not overlapped: PyTorch FSDP1), or a year before 2024 (FlashAttention-2-class attention). On the
    calibration file this gives each source the settings of the module docstring (tested).
    TorchTitan runs whose software predates 2025 (:func:`version_year`), or that do not state
    torch.compile on, ran the eager cross-entropy (``cross_entropy = "eager"``); every other
    row the fused one. TorchTitan runs that do not state torch.compile on ran their norms, RoPE
    and activations as eager PyTorch ops (``elementwise = "eager"``), and so did (both) a
    PyTorch FSDP run outside Megatron, DeepSpeed, NeMo and llm-foundry whose text states
    torch.compile off; every other row fused
    kernels (Transformer Engine, Apex, llm-foundry's single-kernel LayerNorm and GeLU). PyTorch
    SDPA (TorchTitan, or a row naming SDPA) outside the NVIDIA recipes ran FlashAttention-2-class
    kernels on Hopper and Blackwell before 2026 — TorchTitan on Blackwell only before it chose
    cuDNN there (2025) — unless the row names cuDNN attention or FlashAttention-3
    (``attention_kernel = "flash2"``); so does a row outside the NVIDIA recipes that names
    FlashAttention-2 as what ran, and any row (NVIDIA recipes too) that switches Transformer
    Engine's fused attention off (``NVTE_FUSED_ATTN=0``: its flash-attn backend, FlashAttention-2;
    review 19). TorchTitan is the framework when the row's ``source`` names
    it; statements are read with their negations and comparisons (``no SDPA``, ``instead of
    FlashAttention-3``) and without citations of a paper."""
    text = " ".join(str(r.get(k) or "") for k in ("source", "notes"))
    year = source_year(r.get("source"))
    modern = year is None or year >= FLASH_FIRST_YEAR
    src = str(r.get("source") or "")
    nvidia = bool(_NVIDIA_RECIPES.search(src))
    mosaic = bool(_BF16_GRAD_FRAMEWORKS.search(src))
    native = nvidia or (not mosaic and (year is None or year >= NATIVE_ATTENTION_FIRST_YEAR))
    flash = flash_statement(r)
    flash = modern if flash is None else flash
    # The framework that produced the row is the one its source names (a TorchTitan comparison
    # in the notes of a NeMo row is not a TorchTitan run); statements in the text are read with
    # their negations (``no SDPA``, ``instead of FlashAttention-3``) and without citations.
    titan = not nvidia and bool(_ran(src, _TORCHTITAN.pattern))
    plain = _FLASH_CITED.sub(" ", text)
    fast_named = _ran(plain, _CUDNN_OR_FA3)
    # PyTorch SDPA (TorchTitan, or a row that names SDPA) runs FlashAttention-2-class kernels on
    # Hopper and Blackwell before PyTorch 2.11, except TorchTitan on Blackwell from 2025 (it asks
    # for cuDNN there); a row that names cuDNN attention or FlashAttention-3 keeps the native
    # kernels, and so do the NVIDIA recipes (Transformer Engine's own attention).
    if nvidia or not native or fast_named or not (titan or _ran(plain, _PYTORCH_SDPA.pattern)):
        sdpa_fa2 = False
    else:
        vyear = version_year(r.get("source")) or year or PYTORCH_CUDNN_ATTENTION_YEAR
        cutoff = (TORCHTITAN_BLACKWELL_CUDNN_YEAR if titan and _family_of_gpu(r) == "blackwell"
                  else PYTORCH_CUDNN_ATTENTION_YEAR)
        sdpa_fa2 = vyear < cutoff
    fa2_named = not nvidia and not fast_named and bool(_ran(plain, _FA2_NAME))
    te_flash2 = not fast_named and _ran(plain, _TE_FUSED_ATTN_OFF) is True
    native = native and not sdpa_fa2 and not fa2_named and not te_flash2
    compiled = _ran(text, _COMPILE)
    # Another PyTorch-native stack (PyTorch FSDP without Megatron, DeepSpeed, NeMo or
    # llm-foundry) that states torch.compile was not used runs the same eager ops: IBM's FSDP
    # blog (2024) lists "graph optimizations (e.g., fusing kernels, torch.compile)" among the
    # levers it did not use. Only a statement counts here (TorchTitan: also silence).
    # FSDP and the other engines count where the text names them as what ran (not negated nor
    # after a comparison: "compared with Megatron-LM"); so do fused-kernel libraries (Liger).
    native_uncompiled = (not titan and not nvidia and not mosaic  # cheap tests first: most rows stop here
                         and (compiled is False or (compiled is None and _ran(text, _EAGER_MODE) is True))
                         and _ran_mentions(text, _PYTORCH_FSDP.pattern)[0]
                         and not _ran_mentions(text, _OTHER_ENGINES.pattern)[0]
                         and not _ran_mentions(text, _FUSED_KERNELS)[0])
    titan_uncompiled = (titan and not compiled) or native_uncompiled
    tp_stated = tp_overlap_statement(text)  # a stated flag value beats the recipe default
    ep_stated = ep_overlap_statement(text)
    node_dispatch = node_dispatch_statement(text)
    titan_eager = native_uncompiled or titan and (
        (version_year(r.get("source")) or TORCHTITAN_COMPILED_LOSS_YEAR) < TORCHTITAN_COMPILED_LOSS_YEAR
        or not compiled)
    return {"flash_attention": flash, "zero_stage": 1 if modern else 0, "sp_default": modern,
            "cross_entropy": "eager" if titan_eager else "fused",
            "elementwise": "eager" if titan_uncompiled else "fused",
            # eager by the TorchTitan rule, not by a statement (the defaults column says so)
            "elementwise_by_rule": titan and compiled is None,
            "tp_comm_overlap": nvidia if tp_stated is None else tp_stated,
            "ep_comm_overlap": ep_stated,
            "ep_node_dispatch": bool(node_dispatch),
            "dp_comm_overlap": not mosaic,
            "grad_dtype": "bf16" if nvidia or mosaic else "fp32",
            "attention_kernel": "native" if native else "flash2"}


DEFAULT_VOCAB = 51200
REQUIRED_COLUMNS = (
    "run_id", "source_key", "model", "layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "seq_len",
    "moe_experts", "moe_topk", "global_batch_seqs", "gpu", "gpu_count", "precision", "tp", "pp", "dp",
    "cp", "sp", "ep", "vpp", "zero_stage", "recompute", "micro_batch", "tflops_per_gpu", "mfu_pct",
    "hfu_pct", "step_time_s", "tokens_per_s_per_gpu",
)

#: A qualifier before a number that leaves the number as the value (``~400``, ``about 380``,
#: ``up to 147`` — OPT's "up to 147 TFLOP/s" —, ``>180``, ``at least 180``).
_NUM_QUALIFIER = (r"(?:[~≈>≥]|(?i:about|around|approx(?:\.|imately)?|roughly|nearly|almost|up\s+to|over"
                  r"|at\s+least|ca\.))?")
_NUM = re.compile(r"^\s*" + _NUM_QUALIFIER + r"\s*([-+]?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?!\d)|\d+)"
                  r"(?:\.\d+)?(?:[eE][-+]?\d+)?)")
#: What may not follow a leading number without making it ambiguous: a unit multiplier, also
#: after a space (``8K``, ``4 M``, ``175B``), a decimal comma or an odd digit grouping (``1,5``,
#: ``30,00,000``, ``1_024``), a power (``2^11``).
_NUM_AMBIGUOUS_TAIL = re.compile(r"^(?:\s*[kKmMgGtTbB](?![a-zA-Z])|[,._]\d|\^|[ \u00a0\u202f]\d)")
#: What makes a leading number the start of a range or a ramp: an arrow to another number
#: (``192→4224``), or a dash / ``to`` and a second number that ends the cell, with at most a
#: unit and a comment in parentheses after it (``38–43%``, ``8 to 16``, ``16-32 GPUs``; not
#: ``380 - 3 run average`` nor ``430 — 16K GPUs``).
_RANGE_TAIL = re.compile(r"^\s*%?\s*(?:(?:→|->)\s*\d|(?:[-–—]|to\b)\s*[~≈]?\d[\d,.]*\s*"
                         r"(?:%|tokens?(?:/s)?|tok/s|TFLOP/?s|TFLOPS|ms|s|sec|min|seqs?|sequences)?"
                         r"(?:\s*/\s*\w+)*\s*(?:\(.*\))?\s*$)", re.I)


def _range_or_ramp(text: str) -> bool:
    """Whether a cell's leading number starts a range or a ramp (``38–43%``, ``192→4224``): an
    arrow, or a dash / ``to`` before a larger number (``1024 - 8 (hot spares)`` is no range)."""
    m = _NUM.match(text)
    if not m:
        return False
    tail = _RANGE_TAIL.match(text[m.end():])
    if tail is None:
        return False
    if re.match(r"\s*%?\s*(?:→|->)", text[m.end():]):
        return True
    second = re.search(r"\d[\d,]*(?:\.\d+)?", text[m.end():])
    first = float(re.sub(r"[,\s\u00a0\u202f]", "", m.group(1)))
    return second is not None and float(second.group(0).replace(",", "")) > first


def parse_number(cell) -> float:
    """Leading number of a cell (``"51200 (assumed)"`` → 51200.0, ``"16,384"`` and ``"16 384"``
    → 16384.0, ``"~400"`` → 400.0); NaN when there is none, or when what follows makes it
    ambiguous (``"8K"``, ``"4 M"``, ``"1,5"``, ``"30,00,000"``, ``"1_024"``, ``"2^11"``: a
    multiplier, a decimal comma or another grouping the column cannot be read by; a range or a
    ramp, ``"38–43%"``, ``"192→4224"``: which value ran is not said)."""
    if cell is None:
        return math.nan
    if isinstance(cell, (int, float, np.integer, np.floating)):
        return float(cell)
    text = str(cell)
    m = _NUM.match(text)
    if not m or _NUM_AMBIGUOUS_TAIL.match(text[m.end():]) or _range_or_ramp(text):
        return math.nan
    return float(re.sub(r"[,\s\u00a0\u202f]", "", m.group(1)))


#: Words that negate a setting named just before them, within its clause: ``no``, ``not``,
#: ``non-``, ``pre-``, ``without``, ``before``, ``disabled`` (whole words: ``precision``,
#: ``nodes`` and ``note`` negate nothing), up to two words apart (``without using X``).
_NEG_BEFORE = re.compile(r"(?:\b(?:no|not|non|never|without|w/o|pre|before|disabled?|disabling)\b|--no)"
                         r"[-_\s]*(?:[\w/]+[-_\s]+){0,2}$", re.I)
#: Words that negate a setting named just after them, within its clause and not inside a
#: parenthesis about something else (``flash attention (no dropout)`` keeps flash attention):
#: ``off``, ``false``, ``0``, ``none``, ``disabled``, ``unavailable``, ``unsupported``,
#: ``unused``, ``n/a``, ``no`` and ``not used / enabled / available / supported``, after
#: ``:`` / ``=`` / ``was`` / ``is``; never followed by a hyphen (``off-the-shelf``) nor by a
#: scope (``off for attention``: partial, not off); ``-free`` / ``-less`` (``NVSwitch-free``).
_NEG_AFTER = re.compile(
    r"^[\w-]{0,4}(?:\s+(?:was|were|is|are|has|have|been|being|kernels?|v?\d[\d.]*))*\s*(?:[:=]\s*)?"
    r"(?:(?:off|false|0|none|disabled|unavailable|unsupported|unused|n/a|no)(?![-\w/])"
    r"|not\s+(?:used|enabled|available|supported|applied)\b|n't\s+used\b"
    r"|(?:could|can|did)(?:\s*not|n't)\s+(?:be\s+)?(?:used|enabled|applied)\b)"
    r"(?!\s+(?:for|on|in|at|except|inside|within)\b)", re.I)
#: A parenthesis right after a name that holds only a negation (``torch.compile (off)``,
#: ``SDPA (disabled)``): the setting is off, where other parentheses are about something else.
_NEG_PAREN = re.compile(r"\s*\(\s*(?:off|false|no|none|disabled|unused|not\s+used|n/a|0|✗|✘)\s*\)", re.I)
#: Clause boundaries: ``,``, ``;``, a full stop that is not a decimal point, parentheses.
_CLAUSE = re.compile(r"[,;()]|\.(?!\d)")


#: A name the text says it does not know the state of (``torch.compile NOT stated``, ``flash
#: attention unknown``, ``no torch.compile stated``, ``unclear whether torch.compile``): no
#: statement either way, so the default rule decides (review 19c: such rows were read as the
#: setting on, or off, and the defaults column did not list the rule).
_UNSTATED_AFTER = re.compile(
    r"^[\w-]{0,4}\s*(?:[-–—:=,(]\s*)?(?:(?:status|state|setting|settings|use|usage|flag|mode|choice)\s+)?"
    r"(?:(?:is|was|were|are|left)\s+)?(?:not\s+(?:stated|given|published|reported|specified|"
    r"mentioned|known|documented)\b|unknown\b|unclear\b|unspecified\b|unstated\b)", re.I)
_STATED_AFTER = re.compile(r"^[\w-]{0,4}\s*(?:stated|given|published|reported|specified|mentioned|documented|listed)\b",
                           re.I)
_WHETHER_BEFORE = re.compile(r"\b(?:whether|if)\s+(?:(?:the|a|any)\s+)?$", re.I)


def _state_unknown(before: str, after: str) -> bool:
    """Whether a mention (``before``: its clause's text before it; ``after``: the text after it,
    across clause marks, so ``X, not stated`` and ``X (unknown)`` count) says the setting is not
    known (:data:`_UNSTATED_AFTER`; ``no X stated``; ``whether X``)."""
    return bool(_UNSTATED_AFTER.match(after) or _WHETHER_BEFORE.search(before)
                or (_STATED_AFTER.match(after) and re.search(r"\bno\s+$", before, re.I)))


def _mentions(text: str, pattern: str) -> tuple[bool, bool]:
    """(named plainly, named negated) over every match of ``pattern`` in ``text``: a match is
    negated by :data:`_NEG_BEFORE` just before it or :data:`_NEG_AFTER` just after it, within
    its clause (:data:`_CLAUSE`); a match the text calls unknown (:func:`_state_unknown`) counts
    neither way."""
    plain = negated = False
    for m in re.finditer(pattern, text, re.I):
        before = _CLAUSE.split(text[max(0, m.start() - 40):m.start()])[-1]
        after = _CLAUSE.split(text[m.end():m.end() + 40])[0]
        if _state_unknown(before, text[m.end():m.end() + 40]):
            continue
        if _NEG_BEFORE.search(before) or _NEG_AFTER.match(after) or re.match(r"[-\s]?(?:free|less)\b", after, re.I) \
                or _NEG_PAREN.match(text, m.end()):
            negated = True
        else:
            plain = True
    return plain, negated


def _stated(text: str, pattern: str) -> bool | None:
    """True / False when ``text`` names ``pattern`` only plainly / only negated; None when it
    does not name it, or names it both ways (``without X ... we use X``: ambiguous)."""
    plain, negated = _mentions(text, pattern)
    return None if plain == negated else plain


#: A comparison just before a name (``instead of X``, ``rather than X``, ``unlike X``, ``faster
#: than X``, ``vs. X``, ``versus X``, ``compared to / with X``, at most one word between):
#: X is what the run is compared with, not what it ran. Read only by :func:`_ran` (the
#: framework rules of :func:`row_settings`); the other parsers keep :data:`_NEG_BEFORE` alone.
_COMPARED_BEFORE = re.compile(r"\b(?:instead\s+of|rather\s+than|unlike|than|vs\.?|versus|against|compared\s+(?:to|with))"
                              r"[\s(]*(?:[\w/-]+\s+)?$", re.I)


def _ran_mentions(text: str, pattern: str) -> tuple[bool, bool]:
    """:func:`_mentions` without the mentions right after a comparison (``instead of X``, ``vs.
    X``, ``rather than X``, ``compared with X``: :data:`_COMPARED_BEFORE`): (named plainly,
    named negated)."""
    kept, last = [], 0
    for m in re.finditer(pattern, text, re.I):
        if _COMPARED_BEFORE.search(text[max(0, m.start() - 30):m.start()]):
            kept.append(text[last:m.start()] + " " * (m.end() - m.start()))
            last = m.end()
    return _mentions("".join(kept) + text[last:], pattern)


def _ran(text: str, pattern: str) -> bool | None:
    """:func:`_stated` for what a run used: mentions right after a comparison
    (:data:`_COMPARED_BEFORE`) are left out first (``SDPA instead of FlashAttention-3`` names
    SDPA only; :func:`_ran_mentions`)."""
    plain, negated = _ran_mentions(text, pattern)
    return None if plain == negated else plain


_RC_NONE = re.compile(r"^(?:none|null\b|no\b|no\(|off\b|false\b|0\b|without\b|disabled\b|[✗✘](?!\w))")
#: The key of a recompute setting pasted from a launch config, before its value: Megatron-LM's
#: ``--recompute-granularity``, NeMo's ``activations_checkpoint_granularity:``, TorchTitan's
#: ``[activation_checkpoint] mode =``; the value (``full``, ``selective``, ``'none'``, ``null``) is read.
_RC_CONFIG_KEY = re.compile(r"""^\s*(?:\[activation_checkpoint\]\s*)?(?:--)?(?:recompute[-_]granularity"""
                            r"""|activations?[-_]checkpoint(?:ing)?[-_]granularity|(?:activation_checkpoint\.)?mode)"""
                            r"""["']?\s*(?:[:=]\s*|\s+)["']?(\w+)["']?""", re.I)
#: Megatron's block method with its layer count (``--recompute-method block --recompute-num-layers
#: 4``, NeMo's ``activations_checkpoint_method: block`` / ``activations_checkpoint_num_layers: 4``):
#: the first N layers of each pipeline chunk recomputed in full.
_RC_BLOCK = re.compile(r"(?:recompute|checkpoint(?:ing)?)[-_]method[\"']?\s*[:= ]\s*[\"']?block\b", re.I)
_RC_NUM_LAYERS = re.compile(r"(?:recompute|checkpoint(?:ing)?)[-_]num[-_]layers[\"']?\s*[:= ]\s*[\"']?(\d+)\b", re.I)


def block_recompute_layers(cell) -> int | None:
    """N of a recompute cell that names Megatron's block method with its layer count
    (:data:`_RC_BLOCK`, :data:`_RC_NUM_LAYERS`): the first N layers of each pipeline chunk are
    recomputed, the others keep their activations (``parallelism.recompute_layers``); None for
    any other cell (the uniform method recomputes every layer, N being its group size)."""
    if _is_na(cell):
        return None
    text = str(cell)
    n = _RC_NUM_LAYERS.findall(text)
    if not _RC_BLOCK.search(text) or len(set(n)) != 1 or re.search(r"\buniform\b", text, re.I):
        return None
    return max(int(n[0]), 1)
#: Activation recomputation by name (``checkpointing``, ``--checkpoint-activations``,
#: ``recompute``, ``rematerialisation``), not a model checkpoint (``checkpoints``).
_RC_WORDS = r"checkpointing|checkpoint[-_ ]activations?|activation[-_ ]checkpoint\w*|recomput\w*|remat\w*"
_RC_FULL = re.compile(r"^(?:yes|true|on|enabled|1)\b")
#: Short names: selective / partial / SAC / "(core) attention only" → selective; AC, ckpt,
#: "every layer", "y", "✓" → full (whole-layer checkpointing).
_RC_SELECTIVE_WORDS = re.compile(r"^(?:partial|sac|(?:core[-_ ])?attention(?:[-_ ]only)?|core[-_ ]attention)\b")
_RC_FULL_WORDS = re.compile(r"^(?:ac|ckpt|act[-_ ]?ckpt|every[-_ ]layer|per[-_ ]layer|all[-_ ]layers|y|✓)(?:\b|$)")
#: TorchTitan's per-op selective activation checkpointing by name (``op-level SAC``, ``per op
#: SAC``, ``per-op selective``, ``op_sac``, ``selective_ac_option=op`` / ``: op`` / `` op``,
#: ``selective (op)``); ``op-level`` alone (``op-level kernels``) says nothing.
_RC_OPSAC = (r"\b(?:op[-_ ]level|per[-_ ]op)[-_ ](?:sac|ac|selective|activation|checkpoint\w*|recomput\w*)\b"
             r"|\bop[-_ ]sac\b|selective[-_]ac[-_]option\s*[=: ]\s*['\"]?op\b"
             r"|\b(?:selective|sac)\b[\s,:(=]{0,4}(?:ac\b[\s,:(=]{0,4})?\bop(?:[-_ ](?:level|policy))?\b"
             r"(?![-_ ]?(?:level|policy))(?!\s*[-_]?\s*(?:kernel|fusion|fused|timi[sz]|er))")
#: TorchTitan's layer-level selective checkpointing (every k-th block checkpointed in full;
#: its docs' A100 table calls it "selective layer"): read as full recompute of 1/k of the
#: layers, :func:`layer_sac_every`.
_RC_LAYER_SAC = re.compile(r"every\s+(?:\d+(?:st|nd|rd|th)?|other|second|third)\s+(?:layer|block)"
                           r"|selective[-_]ac[-_]option\s*[=: ]\s*['\"]?\d|layer[-_ ]level\s+(?:sac|ac|selective)"
                           r"|\bselective[-_ ]layer\b(?![-_ ]?norm)|\blayer[-_ ](?:sac|selective\s+ac)\b")
#: TorchTitan's default layer frequency: ``ActivationCheckpoint.selective_ac_option = "2"``
#: ("'int' (e.g., 2) for every nth layer, or 'op' for op level ac", torchtitan/config/job_config.py).
TORCHTITAN_LAYER_SAC_DEFAULT_EVERY = 2


def layer_sac_every(cell) -> int | None:
    """k of a recompute cell that states layer-level selective checkpointing — every k-th
    layer (block) checkpointed in full, the others keeping their activations (``every 2nd
    layer``, ``every other block``, ``selective_ac_option=3``, ``selective layer``,
    ``layer-level SAC``: TorchTitan's default k = :data:`TORCHTITAN_LAYER_SAC_DEFAULT_EVERY`
    when the cell gives none); None for any other cell, and for Megatron's ``uniform`` method
    (``full, uniform, every 4 layers``: groups of 4, every layer recomputed). The same work and
    memory as full recompute of ``ceil(layers / k)`` layers, which :func:`row_to_scenario` states as
    ``recompute = "full"`` with ``recompute_layers`` (Megatron's block method)."""
    if _is_na(cell):
        return None
    text = str(cell).strip().lower()
    if not _RC_LAYER_SAC.search(text) or _RC_NONE.search(text) or re.search(r"\buniform\b", text):
        return None  # Megatron's uniform method ("every 4 layers" a group) recomputes every layer
    m = (re.search(r"every\s+(\d+)(?:st|nd|rd|th)?\s+(?:layers?|blocks?)", text)
         or re.search(r"selective[-_]ac[-_]option\s*[=: ]\s*['\"]?(\d+)", text))
    if m:
        return max(int(m.group(1)), 1)
    if re.search(r"every\s+(?:other|second)\s+(?:layer|block)", text):
        return 2
    if re.search(r"every\s+third\s+(?:layer|block)", text):
        return 3
    return TORCHTITAN_LAYER_SAC_DEFAULT_EVERY
_UNSTATED = re.compile(r"^(?:n/?a\b.*|unknown|not (?:stated|published|given|reported|disclosed|specified|available)"
                       r"(?:\s+(?:in|by|on)\b[^\d]*)?|unpublished|undisclosed|unspecified|none"
                       r"|\?|[-–—]+)$")


def _unstated(cell) -> bool:
    """An empty cell or one that says the value is not published (``n/a``, ``unknown``, ``not
    stated``); ``none`` is a value (no recompute, ZeRO 0, no SP) and counts as stated."""
    text = "" if _is_na(cell) else str(cell).strip().lower()
    if text in ("", "nan"):
        return True
    return text != "none" and bool(_UNSTATED.match(text))


def parse_bool_cell(cell) -> bool | None:
    """A yes/no cell (``sp``): a leading number (0 → False), else ``yes`` / ``on`` / ``true`` /
    ``enabled`` / ``Y`` / ``✓`` / the name itself (``SP``, ``sequence parallel``) → True, ``no``
    / ``off`` / ``false`` / ``disabled`` / ``none`` / ``N`` / ``✗`` and the name negated (``SP
    off``) → False; None when empty or unstated. Raises ``ValueError`` for other text."""
    v = parse_number(cell)
    if not math.isnan(v):
        return bool(v)
    if _unstated(cell):
        return None
    text = re.sub(r"^--", "", str(cell).strip().lower())  # Megatron's flags: --sequence-parallel, --no-sequence-parallel
    if re.match(r"(?:sp\b|seq(?:uence)?[-_ ]parallel\w*)", text) and re.search(
            r"\b(?:no|not|off|false|disabled?|none|0)\b", text):
        return False  # "SP off", "sequence parallel: off", "sp=False"
    if re.match(r"(?:yes|on|true|enabled?|y\b|✓|✔|sp\b|seq(?:uence)?[-_ ]parallel\w*)", text):
        return True
    if re.match(r"(?:no|off|false|disabled?|none|n\b|✗|✘|x\b)", text):
        return False
    raise ValueError(f"'{cell}': expected yes / no, on / off, true / false or 1 / 0")


def parse_recompute(cell) -> str:
    """Recompute cell → ``"full"``, ``"selective"``, ``"op_sac"`` or ``"none"``.

    ``full`` or ``selective`` named plainly (not negated: ``not selective``, ``no full
    recompute``) decides, ``full`` when both are; ``selective`` that names TorchTitan's
    per-op variant (``op-level SAC``, ``per op SAC``, ``selective_ac_option=op``, ``op_sac``)
    is ``"op_sac"``; else ``"none ..."``, ``"no ..."``, ``off``,
    ``false``, ``0``, ``without ...``, or recomputation named only negated (``activation
    checkpointing: off``, ``recompute: none``, ``recomputation not used``) → none;
    checkpointing / recomputation / rematerialisation named plainly (not a model
    ``checkpoints``), or ``yes`` / ``true`` / ``on`` / ``1`` → full (Megatron's
    ``--checkpoint-activations`` and PyTorch activation checkpointing recompute whole layers).
    Empty, ``n/a``, ``unknown``, ``not stated`` → none (the default rule for an empty cell).
    Short names: ``partial`` / ``SAC`` / ``attention only`` → selective, ``AC`` / ``ckpt`` /
    ``every layer`` / ``Y`` → full, ``N`` / ``not used`` and negated short names (``ac: none``)
    → none. TorchTitan's layer-level SAC (every k-th layer in full, ``selective layer``) → full
    (of ``ceil(layers / k)`` layers: :func:`layer_sac_every`). Raises ``ValueError`` for any
    other text."""
    if _is_na(cell):
        return "none"
    text = str(cell).strip().lower()
    text = _RC_CONFIG_KEY.sub(r"\1", text)  # "--recompute-granularity full", "mode = 'none'": the value
    full, _ = _mentions(text, r"\bfull\b")
    selective, _ = _mentions(text, r"\bselective\b")
    if full and selective and re.search(r"full\s+(?:on|for|in)\s+(?:the\s+)?(?:first|last)?\s*\d+\s+layers?", text):
        return "selective"  # "selective + full on first 4 layers": selective in most layers
    if full:
        return "full"
    if re.search(r"recompute[_-]modules|\b(?:core[_ ]attn|moe[_ ]act|layernorm|mlp|attn|attention)\b[^;]*\bonly\b"
                 r"|\bonly\b[^;]*\b(?:mlp|attn|attention|layernorm|norm)\b|recompute\s*:\s*(?:core[_ ]attn|moe[_ ]act|layernorm|mlp)",
                 text) and not re.search(r"\b(?:no|none|not|off|without|disabled|fused|flash|fa\d|sdpa|cudnn|kernels?|via"
                                         r"|offload\w*|every\s+layer)\b", text):
        return "selective"  # a module list ("recompute_modules=[core_attn, mlp]", "MLP only"): part of each layer
    flag, flag_off = _mentions(text, r"--recompute-activations\b")
    if (flag or flag_off) and _RC_NONE.search(text):
        return "none"  # "none (--recompute-activations unset)"
    if flag or flag_off:  # Megatron-LM: --recompute-activations sets recompute_granularity = 'selective'
        return "selective" if flag and not flag_off else "none"
    if layer_sac_every(text) is not None:
        return "full"  # every k-th layer in full: row_to_scenario sets recompute_layers (layer_sac_every)
    none_first = text == "" or _RC_NONE.search(text) or _UNSTATED.match(text)
    op, _ = _mentions(text, _RC_OPSAC)
    if op and not none_first:
        return "op_sac"
    if selective:
        return "selective"
    if none_first or re.match(r"^(?:n|not used)\b", text):
        return "none"
    negated_anywhere = re.search(r"\b(?:none|no|not|off|false|disabled?|without)\b", text)
    if _RC_SELECTIVE_WORDS.match(text) or _RC_FULL_WORDS.match(text):
        if negated_anywhere:  # "ac: none", "SAC off", "attention recompute: none"
            return "none"
        return "selective" if _RC_SELECTIVE_WORDS.match(text) else "full"
    plain, negated = _mentions(text, _RC_WORDS)
    if plain or _RC_FULL.search(text):
        return "full"
    if negated:
        return "none"
    if re.fullmatch(r"\s*" + _RC_MODULE + r"(?:\s*(?:,|\+|&|/|\band\b)\s*" + _RC_MODULE + r")+\s*", text):
        return "selective"  # Megatron-Core --recompute-modules as a bare list ("norm, act", "layernorm, moe_act")
    raise ValueError(f"recompute '{cell}': expected text starting with full, selective or none")


#: A module name of Megatron-Core's ``--recompute-modules`` (core_attn, mlp, moe, moe_act,
#: layernorm, mla_up_proj, shared_experts) or its short form in a table (``norm``, ``act``).
_RC_MODULE = (r"(?:core[_ ]attn|attn|attention|mlp|moe(?:[_ ]act)?|act(?:ivation)?s?|(?:layer[_ ]?|rms[_ ]?)?norm"
              r"|(?:mla[_ ])?up[_ ]proj(?:ection)?|shared[_ ]experts?)")


_ZERO_N = re.compile(r"zero[-_ ]?(?:stage[-_ ]?)?([0-3])(?![\w-])|\bstage[-_ ]?([0-3])\b(?!\s+of\b)"
                     r"|^\s*z\s*=?\s*([0-3])(?![\w.-])|\bz([0-3])_gas\d"
                     # a config's key and value: DeepSpeed '"zero_optimization": {"stage": 3}', accelerate
                     # 'zero_stage: 2', '--zero_stage 3'
                     r"|(?:\b|_)stage[\"']?\s*(?:[:=]\s*|\s+)[\"']?([0-3])(?![\w.])(?!\s+of\b)", re.I)


#: A ZeRO / FSDP shard group smaller than the data-parallel degree, as the zero_stage cell states it
#: (hybrid sharding: states sharded within the group, replicated across groups — HSDP, MiCS,
#: InternEvo's hybrid ZeRO). In GPUs: "sharded within each 8-GPU node", "sharded across 128 GPUs",
#: "FSDP over the 8 GPUs of a node"; in data-parallel ranks: InternEvo's ``zero1=8``, MaxText's
#: ``ici_fsdp_parallelism=8 x dcn_fsdp_parallelism=16`` (the FSDP mesh axes' product). A bare
#: ``FSDP=N`` is not read: Megatron-Bridge's tables write FSDP=1 for "on" (review 49: the rows stated it
#: and every one was modelled as sharding over all of dp).
_SHARD_GROUP_GPUS = (
    re.compile(r"\bsharded\s+(?:with)?in\s+each\s+(\d+)[- ]gpu\s+node\b"),
    re.compile(r"\bsharded\s+across\s+(\d+)\s+gpus\b"),
    re.compile(r"\bfsdp\s+over\s+the\s+(\d+)\s+gpus\s+of\s+a\s+node\b"),
)
_ZERO1_GROUP = re.compile(r"\bzero1\s*=\s*(-?\d+(?:\.\d*)?)")
_MAXTEXT_FSDP = re.compile(r"\bici_fsdp_parallelism\s*=\s*(\d+)\s*(?:x|×|\*)\s*dcn_fsdp_parallelism\s*=\s*(\d+)\b(?!\.)")
#: Words just before a statement that make it a past one ("previously sharded across 64 GPUs"), beside the
#: negations of :data:`_NEG_BEFORE` ("not sharded across").
_TAKEN_BACK = re.compile(r"\b(?:previously|formerly|earlier|once)\b[-_\s]*(?:[\w/]+[-_\s]+){0,2}$", re.I)


def parse_shard_group(cell) -> tuple[int, str] | None:
    """The ZeRO / FSDP shard group a ``zero_stage`` cell states (hybrid sharding) and its unit, ``"gpus"``
    or ``"ranks"`` (data-parallel ranks), or None where it states none, states it negated, or states more
    than one (``zero1=8`` beside ``zero1=-1``, InternEvo's all-of-dp) (:data:`_SHARD_GROUP_GPUS`). The
    caller turns GPUs into ranks (÷ tp·cp, Megatron's order: TP innermost, then CP, then DP) and uses it
    as ``parallelism.dp_shard`` only where it is smaller than dp and divides it (the engine's HSDP: ZeRO
    collectives within the group, the gradient shard all-reduced over the dp/dp_shard replicas once per
    step, docs/timing.md)."""
    if _is_na(cell):
        return None
    text = str(cell).lower()
    found: set[tuple[int, str]] = set()
    for rx in _SHARD_GROUP_GPUS:
        for m in rx.finditer(text):
            before = _CLAUSE.split(text[max(0, m.start() - 40):m.start()])[-1]  # as _mentions reads a clause
            if not (_NEG_BEFORE.search(before) or _TAKEN_BACK.search(before)):
                found.add((int(m.group(1)), "gpus"))
    zero1 = [m.group(1) for m in _ZERO1_GROUP.finditer(text)]
    if zero1:
        if len(set(zero1)) > 1 or not zero1[0].isdigit() or int(zero1[0]) < 1:
            return None  # several, a fraction, or InternEvo's -1 / 0 (all of dp)
        found.add((int(zero1[0]), "ranks"))
    found |= {(int(m.group(1)) * int(m.group(2)), "ranks") for m in _MAXTEXT_FSDP.finditer(text)}
    found = {f for f in found if f[0] > 0}
    ranks = {f for f in found if f[1] == "ranks"}  # a config value first (zero1=8 beside "each 8-GPU node")
    pick = ranks or found
    return pick.pop() if len(pick) == 1 else None


#: Activation offload to host memory named in a recompute cell: Composer's ``activation_cpu_offload``,
#: "(checkpointed) activations offloaded to CPU / host" (review 49: read as recompute only, so the
#: stash was counted in HBM). Offload elsewhere (NVMe) or in general words is not read.
_ACT_OFFLOAD = re.compile(r"activations?[-_ ]cpu[-_ ]offload|activations?\s+offload(?:ed|ing)?\s+to\s+(?:the\s+)?"
                          r"(?:cpu|host)\b", re.I)


def parse_activation_offload(cell) -> bool:
    """Whether a ``recompute`` cell states that the (checkpointed) activations were offloaded to host
    memory (:data:`_ACT_OFFLOAD`, not negated, not compared, not named as what did not run):
    ``parallelism.offload_activations``."""
    if _is_na(cell):
        return False
    text = str(cell)
    if re.search(r"\b(?:not\s+used|unused|was\s+slower|considered|tried)\b", text, re.I):
        return False  # named, but as what did not run
    return _ran(text, _ACT_OFFLOAD.pattern) is True


def parse_zero_stage(cell) -> int | None:
    """ZeRO stage of a ``zero_stage`` cell; None when it states none (empty, ``n/a``).

    The cell's leading whole number (``"3 (FSDP FULL_SHARD)"``, whatever the words after it
    say); else ``ZeRO-2`` / ``ZeRO stage
    1`` / ``(stage 3)`` (``stage 2 of training`` is not a stage); else by name: FSDP
    ``NO_SHARD`` or sharding negated (``FSDP without sharding``) → 0, ``SHARD_GRAD_OP`` → 2,
    ``FULL_SHARD`` / ``HYBRID_SHARD`` / ``HSDP`` / plain ``FSDP`` / ``fully sharded`` → 3, the
    distributed optimizer → 1 (negated → 0), ``DDP`` / ``none`` / ``no`` / ``off`` → 0. Raises
    ``ValueError`` for two different stages (``ZeRO-2/3``), a fraction (``1.5``) or any other
    text. Also by name: a sharded optimizer / ``DistOpt`` → 1 (negated → 0), ZeRO-Offload → 2
    (built on ZeRO-2), ZeRO-Infinity / ZeRO++ / MiCS / hybrid sharding → 3, FSDP
    ``reshard_after_forward=False`` → 2, data parallel → 0."""
    v = parse_number(cell)
    if not math.isnan(v):
        if not math.isfinite(v) or v != int(v) or not 0 <= v <= 3:
            raise ValueError(f"zero_stage '{cell}': expected 0, 1, 2 or 3")
        if re.match(r"^\s*\d\s*/\s*\d", str(cell)):
            raise ValueError(f"zero_stage '{cell}': names more than one stage")
        return int(v)  # a leading whole number is the stage; the rest of the cell explains it
    if _is_na(cell):
        return None
    text = str(cell).strip().lower()
    if re.match(r"(?:none|no|off|false)\b", text) and not re.search(r"dist\w*\.?[-_ ]?opt|shard\w*[-_ ]optim", text):
        return 0
    if re.match(r"ddp\b", text) and not re.match(r"ddp\s*(?:\+|with|and|&)\s*(?:zero|dist\w*\.?\s*opt|shard\w*\s*optim|fsdp)",
                                                  text):
        return 0  # "DDP (FSDP for 70B)", "DDP without ZeRO-3": DDP unless it is combined ("DDP + ZeRO-1")
    if text == "" or _UNSTATED.match(text):
        return None
    if re.fullmatch(r"zero\s*(?:\(\s*(?:stage\s*)?(?:not stated|unknown|n/?a|unpublished|not published)\s*\))?", text):
        return 1  # "ZeRO" without its stage: at least the optimizer states are sharded
    stages = {int(next(g for g in m if g)) for m in _ZERO_N.findall(text)}  # DeepSpeed autotuning's "z = 1", "z1_gas1"
    if len(stages) > 1 or re.search(r"zero[-_ ]?\d\s*/\s*\d", text):
        raise ValueError(f"zero_stage '{cell}': names more than one stage")
    if stages:
        return stages.pop()
    if re.search(r"reshard_after_forward\s*[=:]\s*false", text):
        return 2  # FSDP2 keeping the gathered weights between forward and backward: ZeRO-2 memory
    if "no_shard" in text or _stated(text, r"shard\w*") is False:
        return 0
    if "shard_grad_op" in text or "grad_op" in text:
        return 2
    fsdp_off = re.search(r"fsdp\s*[=:]\s*(?:0|off|false|no)\b|fsdp\s+(?:off|disabled)\b", text) or \
        _stated(text, r"fsdp") is False
    if re.search(r"full_shard|hybrid[-_ ]shard\w*|hsdp|full(?:y)?[-_ ]shard|zero[-_ ]?infinity|zero\+\+|\bmics\b", text) or (
            not fsdp_off and "fsdp" in text):
        return 3
    if re.search(r"zero[-_ ]?offload", text):
        return 2  # ZeRO-Offload is built on ZeRO-2 (Ren et al. 2021 §4)
    sharded_opt = _stated(text, r"shard\w*[-_ ]optimi[sz]er|optimi[sz]er[-_ ](?:state[-_ ])?shard\w*"
                                r"|dist\.?[-_ ]?opt\w*|distributed[-_ ](?:fused[-_ ])?adam|distributed[-_ ]optim\b")
    if sharded_opt is not None:
        return 1 if sharded_opt else 0
    dist_opt = _stated(text, r"distributed[-_ ]optimi[sz]er")
    if dist_opt is not None:
        return 1 if dist_opt else 0
    if re.match(r"(?:ddp|dp|none|no|off|false|(?:pure|plain|vanilla)[-_ ]dp|data[-_ ]parallel(?:ism)?)\b", text) or fsdp_off:
        return 0  # "DDP", "DP only", "DP (no ZeRO)", "FSDP=0 (DDP)": after every sharded spelling above
    raise ValueError(f"zero_stage '{cell}': expected 0-3, ZeRO-n, FSDP (FULL_SHARD / SHARD_GRAD_OP / "
                     "NO_SHARD), distributed optimizer or none")


#: FP8 named as the GEMM precision, not as the format of a collective or of stored state
#: (``bf16 with fp8 all-gather``, ``FP8 dispatch``, ``fp8 optimizer states``).
_FP8_GEMM = (r"(?:fp|float)8(?![-_\s]*(?:all[-_ ]?gather|allgather|comm\w*|dispatch|optimi[sz]er|states?|kv\b"
             r"|params?\b))|e4m3|e5m2")


#: A setting a launch config turns off (``"bf16": {"enabled": false}``, ``enable_float8_linear =
#: false``, ``bf16=False``, ``fp8: null``): read as the key negated (``no bf16``).
_CONFIG_OFF = re.compile(r"""["']?([A-Za-z_][\w.-]*)["']?\s*[:=]\s*(?:\{\s*["']?enabled["']?\s*[:=]\s*)?["']?"""
                         r"""(?:false|off|null|none|0)(?![\w.])["']?(?:\s*\})?""", re.I)


def _config_off_key(m: re.Match) -> str:
    """``no KEY`` for a :data:`_CONFIG_OFF` match, KEY the last part of a dotted config path
    (``model.fp8=False`` → ``no fp8``, ``float8.enabled: false`` → ``no float8``): a clause
    ends at a full stop (:data:`_CLAUSE`), so ``no model.fp8`` left ``fp8`` named plainly and a
    bf16 row read as FP8 (review 17e: NeMo's ``model.fp8=False``)."""
    parts = [x for x in m.group(1).split(".") if x]
    while len(parts) > 1 and parts[-1].lower() in ("enabled", "enable", "use", "on", "active"):
        parts.pop()
    return "no " + (parts[-1] if parts else m.group(1))


def parse_precision(cell) -> str:
    """GEMM precision of a row's precision cell, first match wins, a negated name skipped
    (``BF16 (FP8 disabled)``, ``bf16, no fp8`` are bf16): ``fp4`` when the text names FP4
    (NVFP4, MXFP4); ``fp8`` when it names FP8 for the GEMMs (``fp8``, ``E4M3``, ``E5M2``; not
    ``fp8 all-gather`` / ``dispatch`` / ``optimizer states``); ``fp16`` when it starts with
    fp16; ``bf16`` when it names bf16 / bfloat16; ``fp16`` when it names fp16 / float16 /
    half; ``fp32`` for fp32 / tf32 / float32; ``bf16`` for a cell that states 16-bit mixed
    precision without its format (``mixed precision``, ``AMP``) or nothing (empty, ``n/a``,
    ``unknown``, ``not stated``: the default rule). Raises ``ValueError`` for any other text,
    and for a cell whose only precisions are negated (``fp8 (not fp16)`` names fp8 plainly; a
    cell like ``not fp16`` alone says nothing): an unreadable cell is never silently bf16."""
    if _is_na(cell):
        return "bf16"
    text = _CONFIG_OFF.sub(_config_off_key, str(cell).strip().lower())  # "bf16": {"enabled": false} → no bf16
    head = re.split(r"[;(]", text, maxsplit=1)[0].strip()
    if head and head != text and re.search(r"separately|separate\s+row|(?:next|other|another)\s+row|\brun\s*:", text) and \
            re.fullmatch(r"(?:amp[_ ])?(?:bf16|bfloat16|fp8|mxfp8|fp8[-_ ]\w+|nvfp4|fp4|fp16)"
                         r"(?:\s+(?:baseline|run|recipe|training|mixed(?:\s+precision)?))?", head):
        try:  # "BF16 (an FP8 recipe is listed separately)", "BF16 baseline; FP8 in next row"
            return parse_precision(head)
        except ValueError:
            pass
    if _mentions(text, r"fp4")[0]:  # NVFP4 / MXFP4
        return "fp4"
    if _mentions(text, _FP8_GEMM)[0]:
        return "fp8"
    if text.startswith("fp16"):
        return "fp16"
    if _mentions(text, r"bf16|bfloat16")[0]:
        return "bf16"
    if _mentions(text, r"fp16|(?<!b)float16|\bhalf\b")[0]:
        return "fp16"
    if text.startswith(("fp32", "tf32", "float32")):
        return "fp32"
    if any(_mentions(text, p)[1] for p in (r"fp4", _FP8_GEMM, r"bf16|bfloat16", r"fp16|(?<!b)float16")):
        raise ValueError(f"precision '{cell}': names no precision plainly, only negated ones")
    if text == "" or "16" in text or _UNSTATED.match(text) or re.search(r"\bmixed\b|\bamp\b", text):
        return "bf16"
    raise ValueError(f"precision '{cell}': expected bf16, fp16, fp8, fp4 or fp32 in the text")


#: Row-wise / tensor-wise FP8 scaling by name, not inside another word (``arrow-wise``), with
#: an optional ``scaling`` / ``scales`` / ``recipe`` after it so that a negation after the
#: phrase reads (``rowwise scaling off``): torchao's ``rowwise`` (also ``rowwise_with_gw_hp``)
#: and ``AXISWISE`` granularity, per-row / per-token / per-channel scales.
_SCALING_TAIL = r"(?:[-_ ](?:scal(?:ing|ed|es?)|recipe|granularity|quanti[sz]ation))?"
_ROWWISE = (r"(?<![A-Za-z])(?:row[-_ ]?wise|axis[-_ ]?wise|per[-_ ](?:row|token|channel))(?![A-Za-z])"
            + _SCALING_TAIL)
_TENSORWISE = r"(?<![A-Za-z])(?:tensor[-_ ]?wise|per[-_ ]tensor)(?![A-Za-z])" + _SCALING_TAIL
#: A clause that places a scaling in another row or run (``rowwise in the next row``,
#: ``tensorwise: separate run``, ``see also tensorwise row``) or gives it only as a comparison
#: or a result (``rowwise was 12 % slower``, ``tensorwise: 7689 tok/s``, ``tensorwise was
#: OOM``, ``not yet tested with tensorwise``): it names no setting of this row.
_OTHER_ROW = re.compile(r"\b(?:next|other|another|separate|previous|following)\s+(?:row|run|line|entry)\b"
                        r"|\bsee\s+also\b|\bseparate(?:ly)?\b|\brow\s*\)?\s*$", re.I)
_RESULT_WORDS = re.compile(r"\b(?:slower|faster|gives?|gave|was|were|is|OOM|tested|baseline|tok(?:ens)?/s|"
                           r"TFLOP/?s|MFU|speed-?ups?|better|worse)\b|%", re.I)
#: A hedge on a named scaling (``rowwise?``, ``probably rowwise``, ``rowwise (likely)``). The
#: row writer's ``assumed`` / ``inferred`` is not one: it states the writer's reading, as in
#: every other cell of the file's convention.
_HEDGE = re.compile(r"\?|\b(?:probabl[ey]|likely|unconfirmed|presum\w*|maybe|perhaps|possibl[ey]|"
                    r"guess\w*|unsure|uncertain|unknown|not\s+(?:stated|known|confirmed))\b", re.I)
#: Clauses of a precision cell: :data:`_CLAUSE`'s separators, brackets and dashes too.
_CLAUSES = re.compile(_CLAUSE.pattern + r"|[\[\]—–]|\s-\s")


#: An FP8 attention core named (``training.fp8_attention``): Transformer Engine's FP8 dot-product
#: attention as MLPerf's NVIDIA configs (``FP8_DPA``), Megatron-LM and NeMo name it.
_FP8_ATTENTION_FLAG = re.compile(r"\bfp8[-_ ]?dpa\b|fp8[-_ ]dot[-_ ]product[-_ ]attention|\bfp8[-_ ]attention\b", re.I)


def parse_fp8_attention(cell) -> bool:
    """Whether a row's precision cell states an FP8 attention core (``training.fp8_attention``):
    ``FP8_DPA=True``, ``FP8 attention via config_common_fp8attn.sh``, ``--fp8-dot-product-attention``
    (read as :func:`tp_overlap_statement` reads its flag: a value given to it beats prose, a negated
    or ``not set`` mention is off). Silence is off, and so is a mention that says the setting was not
    read (``FP8 attention not read``)."""
    if _is_na(cell):
        return False
    text = str(cell)
    if re.search(r"fp8[-_ ]attention\s+(?:was\s+)?not\s+(?:read|known|stated)", text, re.I):
        return False
    return bool(_flag_statement(text, _FP8_ATTENTION_FLAG))


def parse_fp8_scaling(cell) -> str:
    """FP8 scaling granularity of a row's precision cell (``training.fp8_scaling``):
    ``rowwise`` when the cell names row-wise scaling plainly (``Float8 rowwise scaling``,
    ``fp8 row-wise``, ``per-row`` / ``per-token`` / ``per-channel`` scales, torchao's
    ``rowwise_with_gw_hp`` and ``AXISWISE``), else ``tensorwise`` (one scale per tensor:
    Transformer Engine delayed / current scaling, torchao ``tensorwise``; MXFP8 / block scaling
    are modelled alike). Not statements: a negated mention (``not rowwise``, ``rowwise scaling
    off``), one right after a comparison (``instead of rowwise``, ``vs. rowwise``), and a clause
    that places the other scaling in another row or gives it as a comparison or result
    (``tensorwise; rowwise in the next row``, ``rowwise (tensorwise: 7689 tok/s)``) when the
    cell's other clauses name one scaling. Raises ``ValueError`` where which one ran cannot be
    placed: row-wise named with a hedge in its clause or in a short clause next to it
    (``rowwise?``, ``probably rowwise``, ``rowwise (likely)``; the writer's ``assumed`` /
    ``inferred`` is no hedge), both plainly and negated, or beside a plain tensor-wise in the
    same standing (``tensorwise and rowwise``)."""
    if _is_na(cell):
        return "tensorwise"
    text = str(cell)
    pieces = [c for c in _CLAUSES.split(text) if c.strip()]
    for k, c in enumerate(pieces):  # a hedge in its clause, or a short clause of its own next to it
        nxt = pieces[k + 1] if k + 1 < len(pieces) else ""
        if re.search(_ROWWISE, c, re.I) and (_HEDGE.search(c) or (len(nxt.split()) <= 3 and _HEDGE.search(nxt))):
            raise ValueError(f"precision '{cell}': row-wise FP8 scaling named with a hedge")
    if re.search(_ROWWISE + r"\s*\)?\s*\?", text, re.I):
        raise ValueError(f"precision '{cell}': row-wise FP8 scaling named with a hedge")
    row, row_neg = _ran_mentions(text, _ROWWISE)
    tensor = _ran_mentions(text, _TENSORWISE)[0]
    if row and row_neg:
        raise ValueError(f"precision '{cell}': names row-wise FP8 scaling both plainly and negated")
    if row and tensor:
        # the clauses that state this row's setting: not those about another row, a comparison
        # or a result; one scaling left among them is what ran
        kept = " ; ".join(c for c in pieces if not (_OTHER_ROW.search(c) or _RESULT_WORDS.search(c)))
        row_k, tensor_k = _ran_mentions(kept, _ROWWISE)[0], _ran_mentions(kept, _TENSORWISE)[0]
        if row_k != tensor_k:
            return "rowwise" if row_k else "tensorwise"
        raise ValueError(f"precision '{cell}': names both tensorwise and rowwise FP8 scaling")
    return "rowwise" if row else "tensorwise"


#: GPU name token -> system id, most specific first (``GB200`` before ``B200``, ``H200``
#: before ``H100`` ...): the first token found in the upper-cased name decides.
_GPU_SYSTEMS: tuple[tuple[str, str], ...] = (
    ("GB300", "gb300-nvl72"), ("GB200", "gb200-nvl72"), ("GH200", "gh200-quad"),
    ("B300", "dgx-b300"), ("B200", "dgx-b200"), ("H200", "dgx-h200"), ("H800", "hgx-h800"),
    ("H100", "dgx-h100"), ("MI355", "mi355x-8"), ("MI350", "mi350x-8"), ("MI300X", "mi300x-8"), ("GAUDI3", "gaudi3-8"),
    ("GAUDI2", "gaudi2-8"), ("MI325", "mi325x-8"), ("MI250", "frontier-mi250x"), ("A100", "dgx-a100-80gb"),
    ("A800", "hgx-a800"), ("V100", "dgx1-v100"), ("GRACE HOPPER", "gh200-quad"),
    # cloud instances by name (AWS p4d / p4de / p5 / p5e / p5en, GCP a2 / a3, Azure ND v4 / v5):
    # the 8-GPU baseboard of their GPU
    ("P5EN", "dgx-h200"), ("P5E", "dgx-h200"), ("P5", "dgx-h100"), ("P4DE", "dgx-a100-80gb"),
    ("P4D", "dgx-a100-40gb"), ("A3-ULTRA", "dgx-h200"), ("A3-", "dgx-h100"), ("A4-HIGHGPU", "dgx-b200"), ("A2-ULTRAGPU", "dgx-a100-80gb"),
    ("A2-HIGHGPU", "dgx-a100-40gb"), ("ND96AMSR", "dgx-a100-80gb"), ("ND96ASR", "dgx-a100-40gb"),
    ("ND96ISR_H100", "dgx-h100"), ("ND96ISR_H200", "dgx-h200"),
)
_A100_40GB = re.compile(r"(?<![\d.])40\s*G")
#: The HBM2e H100 at 500 W of Meta's TorchTitan hosts, named by its memory type or its power
#: limit (not by the Grand Teton platform name: Llama 3's Grand Teton H100s are 80 GB HBM3 at
#: 700 W, arXiv:2407.21783 Sec. 3.3.1).
_H100_GRAND_TETON = re.compile(r"HBM2E|LOWER[- ]TDP|500\s*W\b")
#: V100 in a DGX-2 / HGX-2 (16 GPUs over NVSwitch): the only V100 systems with an NVSwitch.
_V100_NVSWITCH = re.compile(r"DGX-?2|HGX-?2|NVSWITCH")
#: Variants of a token's system, tried in order: (test on the upper-cased name and the name +
#: interconnect text, the system it gives; None = no catalogue system).
_GPU_VARIANTS: dict[str, tuple[tuple[Callable[[str, str], bool], str | None], ...]] = {
    "dgx-a100-80gb": ((lambda name, both: bool(_A100_40GB.search(name) or re.search(
        r"(?<![A-Z0-9])(?:P4D(?!E)|A2-HIGHGPU|ND96ASR)", name)), "dgx-a100-40gb"),),
    "hgx-a800": ((lambda name, both: bool(_A100_40GB.search(name)), None),),
    "dgx-h100": ((lambda name, both: bool(_H100_GRAND_TETON.search(both))
                  and not re.search(r"HBM3|80\s*G", name), "hgx-h100-96gb-hbm2e"),),
    "dgx1-v100": ((lambda name, both: _mentions(both, _V100_NVSWITCH.pattern)[0], "dgx2-v100"),),
}


def system_for_gpu(name, context: str = "") -> str | None:
    """GPU name → system id (the 8-GPU baseboard system of that accelerator; GB200/GB300 → the
    NVL72 rack); None if unknown, and for a PCIe card (no PCIe system in the catalogue). A
    token matches when no digit follows it (``RTX A1000`` is not an A100); ``Gaudi-2`` and
    ``Gaudi®2`` are Gaudi 2. A100 is the 80 GB part unless the name says 40 GB; an A800 40 GB (no
    catalogue part: A100 40 GB memory with the A800's NVLink) gives None. V100 is a DGX-1 (8
    GPUs, hybrid cube-mesh) unless the name or ``context`` (the row's interconnect text) names
    a DGX-2 / HGX-2 or NVSwitch, not negated (``no NVSwitch`` stays a DGX-1): then a DGX-2 (16
    GPUs, NVSwitch). MI250X is a Frontier node of 8 GCDs: every published MI250X run counts
    GCDs as GPUs (PyTorch sees each GCD as one device); a plain ``MI250`` (362 vs 383 TFLOP/s
    per package, same memory) is read as the MI250X — 5 % of peak, not modelled. A 16 GB V100
    gets its memory from :func:`hbm_override_for_gpu`. An H100 named HBM2e, lower-TDP or 500 W
    (in the name or the interconnect text), unless the name says HBM3 or 80 GB, is the HBM2e
    H100 of TorchTitan's hosts (96 GB at 2.4 TB/s, 500 W: ``hgx-h100-96gb-hbm2e``); the platform
    name alone is not enough (Llama 3's Grand Teton H100s are the 80 GB HBM3, 700 W part). These
    refinements of a token's system are the rows of ``_GPU_VARIANTS``."""
    text = re.sub(r"GAUDI[-\s]?(\d)", r"GAUDI\1", re.sub(r"[®™]|\((?:R|TM)\)", "", str(name).upper()))
    if re.search(r"PCI[-\s]?E|PCI EXPRESS|H[12]00 NVL\b", text):  # H100 / H200 NVL: PCIe cards (bridged pairs / quads)
        return None  # no PCIe-card system in the catalogue (no NVLink domain of 8)
    both = text + " " + str(context or "").upper()
    for token, system in _GPU_SYSTEMS:
        # instance names (p5.48xlarge, a3-highgpu-8g, ND96asr_v4) must start a word; GPU
        # tokens may follow a count (8xA100)
        lead = r"(?<![A-Z0-9])" if token[:2] in ("P4", "P5", "A2", "A3", "ND") else ""
        if re.search(lead + re.escape(token) + r"(?!\d)", text):
            for test, variant in _GPU_VARIANTS.get(system, ()):
                if test(text, both):
                    return variant
            return system
    return None


def hbm_override_for_gpu(name) -> float | None:
    """HBM bytes a GPU name states where it differs from its catalogue part: a 16 GB V100
    (the catalogue's is the 32 GB SXM2) → 16 GiB; else None."""
    text = str(name).upper()
    if "V100" in text and re.search(r"(?<!\d)16\s*G(?:B|IB)\b", text):
        return 16.0 * 2**30
    return None


#: A line rate in bits per second: ``400 Gb/s``, ``1,600 Gbps``, ``3.2 Tb/s``. Case-sensitive on
#: purpose: ``GB/s`` (bytes, as NVLink is usually quoted) is not a line rate.
_RATE = (r"(?<![\d.,eE])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*([GT])(?-i:b/s|bps|bit/s|bits?|b)(?![\w/])")
# lower-case b: bits (GB/s is bytes, even in a re.I pattern); "100Gb" and "100 Gbit" without "/s"
# are rates too (review 15h: InternEvo's "4 * 100Gb RoCE per node" was not read)
_PER_GPU = (r"(?:\s+[A-Za-z][\w-]*){0,2}?\s+per[\s-](?:GPU|GCD|accelerator(?![\s-]+(?:node|server|host))"
            r"|HPU(?=[^;]*scale[\s-]?out))\b")
_PER_NODE = r"(?:\s+[A-Za-z][\w-]*){0,2}?\s+(?:per[\s-]node|node[\s-](?:to[\s-])?node)\b"
#: "[<k> x] <bw> [≤ 2 words] per GPU" (``dual-rail 2x200Gb/s per GPU``: k links per GPU)
_NET_PER_GPU = re.compile(r"(?:\b(\d+)\s*[x×*]\s*)?" + _RATE + _PER_GPU)
#: "<k> [NICs | HCAs | ports | links | rails | adapters] x [≤ 3 words, none naming GPUs] <bw>"
#: (k NICs of a node) and "<bw> x <k> [per node]"
_NET_K_NICS = re.compile(r"\b(\d+)\s*(?:(?:NIC|HCA|port|link|rail|adapter|card)s?\s*)?[x×*]\s*"
                         r"(?:(?![A-Za-z]*GPU)[A-Za-z][\w-]*\s+){0,3}" + _RATE, re.I)
_NET_BW_X_K = re.compile(_RATE + r"\s*[x×*]\s*(\d+)\b")
#: "<bw> [≤ 2 words] per node" / "<bw> node-node"
_NET_PER_NODE = re.compile(_RATE + _PER_NODE)
#: A network rate in bytes, after the network's name in its clause (review 18b: ``InfiniBand 8x50
#: GB/s``): ``<k> x <bw> GB/s`` is k NICs of a node, ``<bw> GB/s per GPU`` one GPU's share. GB/s alone
#: stays unread (how NVLink is quoted; a bare byte rate could be per NIC or per node).
_NET_BYTES = re.compile(r"\b(?:InfiniBand|IB|RoCE|Ethernet|NICs?|HCAs?|EFA|Slingshot|ConnectX-?\d*)\b"
                        r"(?:(?!NVLink|NVSwitch|Infinity|xGMI|\band\b)[^;,()+&]){0,24}?"
                        r"(?:\b(\d+)\s*[x×*]\s*(\d+(?:\.\d+)?)\s*(?-i:GB/s|GBps)|(\d+(?:\.\d+)?)\s*(?-i:GB/s|GBps)\s+per[\s-]GPU\b)",
                        re.I)


def _bits_per_s(number: str, prefix: str) -> float:
    return float(number.replace(",", "")) * (1e12 if prefix == "T" else 1e9)


def network_bw_per_gpu(text, gpus_per_node: int) -> float | None:
    """Inter-node bandwidth per GPU [bytes/s] a row's ``interconnect`` text states, else None.

    Recognises, first match wins: ``"400 Gb/s per GPU"`` (also ``per-GPU``, ``400 Gb/s
    InfiniBand per GPU``); ``"4 x 100 Gb/s per node"`` / ``"8x NDR 400 Gb/s"`` /
    ``"100 Gb/s x 4"`` (k NICs of a node: k·bw / gpus_per_node); ``"1600 Gbps node-node"`` /
    ``"3.2 Tb/s per node"`` (bw / gpus_per_node). Rates are bits per second with the
    prefix G or T (÷ 8 for bytes); ``GB/s`` (bytes: how NVLink is quoted) is not read as a
    network rate unless a network's name comes first in its clause and the rate is per GPU or
    ``k x`` NICs (``InfiniBand 8x50 GB/s``: 8·50e9 / gpus_per_node; ``RoCE 50 GB/s per GPU``),
    nor is a count of GPUs (``72 x B200 GPUs``) as a count of NICs. Text that
    states no rate this way (``"200Gbps"`` alone, ``"HDR IB"``) gives None: the catalogue's
    value stays; so does a rate above :data:`MAX_NIC_BITS_PER_GPU` per GPU (a typo, not a
    network)."""
    bw = _network_bw_per_gpu(text, gpus_per_node)
    return bw if bw is None or bw * 8.0 <= MAX_NIC_BITS_PER_GPU else None


#: The largest per-GPU scale-out rate read from a row's text: 3.2 Tb/s, four times the 800 Gb/s
#: ConnectX-8 of a GB300 / B300 GPU (hardware.md §3).
MAX_NIC_BITS_PER_GPU = 3.2e12


def _network_bw_per_gpu(text, gpus_per_node: int) -> float | None:
    t = "" if text is None else str(text)
    m = _NET_PER_GPU.search(t)
    if m:
        return int(m.group(1) or 1) * _bits_per_s(m.group(2), m.group(3)) / 8.0
    m = _NET_K_NICS.search(t)
    if m:
        return int(m.group(1)) * _bits_per_s(m.group(2), m.group(3)) / 8.0 / gpus_per_node
    m = _NET_BW_X_K.search(t)
    if m:
        return int(m.group(3)) * _bits_per_s(m.group(1), m.group(2)) / 8.0 / gpus_per_node
    m = _NET_PER_NODE.search(t)
    if m:
        return _bits_per_s(m.group(1), m.group(2)) / 8.0 / gpus_per_node
    m = _NET_BYTES.search(t)
    if m:
        return int(m.group(1)) * float(m.group(2)) * 1e9 / gpus_per_node if m.group(1) else float(m.group(3)) * 1e9
    return None


#: Model families with a gated (SwiGLU / GeGLU) MLP, RMSNorm and rotary positions, by name: each
#: family's own report or config (Llama, Mistral / Mixtral, Qwen 1-3, DeepSeek LLM / V2 / V3,
#: Baichuan 2, InternLM 2, OLMo, Yi, Phi-3, StableLM, GLM, DBRX, Aquila, Skywork, and the
#: Llama-architecture or SwiGLU / GeGLU families Grok, XVERSE, Hunyuan, Kimi, Jais, BTLM,
#: Solar, EXAONE, Orion, Arctic, Vicuna; untied embeddings). A family's norm and bias details are approximated (GLM-130B has LayerNorm and
#: biases, read as RMSNorm without). Any other name is read as GPT (``_arch``).
_GATED_FAMILIES = re.compile(
    r"llama|mistral|mixtral|qwen|deepseek|baichuan|internlm|olmo|(?<![a-z])yi(?![a-z])|(?<![a-z])phi-?3|eurollm"
    r"|stablelm(?![- ](?:base[- ])?alpha)"
    r"|(?<![a-z])(?:chat)?glm|dbrx|aquila|skywork|grok|xverse|hunyuan|kimi|(?<![a-z])jais|btlm"
    r"|stable[- ]?lm[- ]?2|(?<![a-z])solar(?![a-z])|exaone|(?<![a-z])orion(?![a-z])|arctic|vicuna"
    r"|(?<![a-z])phi[-_ ]?4(?![0-9])|(?<![a-z])moonlight(?![a-z])")
#: Gated families that tie the input and output embeddings: PaLM (Chowdhery et al. 2022 §2:
#: "shared input-output embeddings"), Gemma (Gemma report §2: tied), MiniCPM, Granite 3.x
#: (the Granite code models are GPT-BigCode: not matched, read as GPT), Command R (Cohere's
#: configs tie the embeddings; from memory, U). StableLM-Alpha (GPT-NeoX) is not matched.
_GATED_TIED_FAMILIES = re.compile(r"(?<![a-z])palm|gemma|minicpm|granite[- ]?3(?:\.\d+)?(?=[\s-]|$)|command[- ]?r"
                                  r"|smollm")


#: Model names that are GPT blocks by name (the fallback of :func:`_arch` for them is no default).
_GPT_NAMES = re.compile(r"gpt|megatron|bloom|(?<![a-z])opt(?![a-z])|turing|nlg|neox|pythia|starcoder|santacoder",
                        re.I)


def _arch(model_name: str) -> dict:
    n = str(model_name).lower()
    if _GATED_TIED_FAMILIES.search(n):
        return dict(gated_mlp=True, norm="rmsnorm", tied_embeddings=True, linear_bias=False)
    if _GATED_FAMILIES.search(n):
        return dict(gated_mlp=True, norm="rmsnorm", tied_embeddings=False, linear_bias=False)
    if "mpt" in n:
        return dict(gated_mlp=False, norm="layernorm", tied_embeddings=True, linear_bias=False, rope=False)
    if "nemotron" in n:
        return dict(gated_mlp=False, norm="layernorm", tied_embeddings=False, linear_bias=False)
    # GPT (Megatron-LM / NeMo GPT configs): hidden_dropout = attention_dropout = 0.1 by default,
    # the setting Korthikanti et al. 2022 Table 2 counts; Llama, MPT and Nemotron-4 use none.
    return dict(gated_mlp=False, norm="layernorm", tied_embeddings=True, linear_bias=True, dropout=0.1, gpt=True)


#: Largest relative change of a published global batch rounded to a multiple of dp ·
#: micro-batch (GPT-NeoX-20B: 1,538 on dp 12 → 1,536, 0.13 %); beyond it the row is refused.
BATCH_ROUNDING_MAX = 0.05
#: Published-throughput columns, in the order the first readable one is compared.
METRIC_COLUMNS = ("tokens_per_s_per_gpu", "step_time_s", "tflops_per_gpu", "mfu_pct", "hfu_pct")
#: Integer columns that must be at least 1 when given (dp ≤ 0 and vpp / ep 0 are read by
#: :func:`_clean_int_cells`).
_POSITIVE_COLUMNS = ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "seq_len", "moe_topk",
                     "global_batch_seqs", "global_batch_tokens", "gpu_count", "tp", "pp", "cp", "micro_batch", "etp")
#: A GPU count written in nodes (``64 nodes``, ``8 x 64 nodes``, ``64 nodes x 8``).
_NODES = re.compile(r"\bnodes?\b", re.I)


#: Words that count machines, not GPUs: nodes, hosts, servers, DGX / HGX boxes, cloud instances.
_MACHINES = re.compile(r"\b(?:nodes?|hosts?|servers?|machines?|instances?|boxes|systems?|VMs?|trays?)\b|dgx|hgx|xlarge"
                       r"|\bBM\.GPU\b"
                       r"|(?<![a-z0-9])(?:p4de?|p5e?n?)(?![a-z0-9])|(?<![a-z0-9])a[23]-\w|(?<![a-z0-9])nd\d", re.I)


#: A rack-scale NVLink domain as the unit of a count (``1 rack``, ``2 NVL72 racks``, ``1x NVL72``).
_RACKS = re.compile(r"\bracks?\b|\bNVL\d+\b", re.I)


def _machine_count(text: str) -> int | None:
    """The stand-alone number of machines a GPU-count text names (``64 nodes``, ``16 hosts``,
    ``8 VMs``); None when there is none. Digits inside a name (``H200 nodes``) are no count."""
    m = re.search(r"(?<![\w.,])(\d[\d,]*)\s*(?:nodes?|hosts?|servers?|machines?|instances?|VMs?)\b", text, re.I)
    return int(m.group(1).replace(",", "")) if m else None


def _gpu_count(cell, gpus_per_node: int, rack: int | None = None) -> int | None:
    """GPUs of a ``gpu_count`` cell (None: not a count the reader can place), first rule that
    applies: a range is refused (``16-32 GPUs``); the GPUs a run used (``(4 used)``, ``(only 28
    used)``, ``1016 of 1024 GPUs used``, ``single node (4 of 8 GPUs)``; beside more machines a
    per-node ``4/8`` or ``8 GPUs used`` is refused); a total in parentheses beside a machine or
    rack word (``1 NVL72 rack (64 GPUs used)``); ``single node`` / ``one DGX H100`` (one
    machine); racks × the NVLink domain on rack-scale systems (``2 NVL72 racks``, ``1x NVL72``,
    ``1 NVL36 rack``); a total after ``=`` (``2 × 8 = 16``); a count of GCDs (``1024 MI250X (2048
    GCDs)``); thousands written ``K`` (``16K H100`` = 16,384, ``10K`` = 10,000); machines × GPUs
    per machine (``96 nodes, 8 GPUs per node``, ``4 nodes of 8 GPUs``, ``96 nodes with 8 GPUs``,
    ``16 nodes, 8× MI300X each``; MI250X packages count two GCDs); a number of GPUs beside a
    machine or rack word (``768 GPUs, 96 nodes``, ``2 racks, 64 GPUs``; fewer GPUs than
    machines is per machine: ``64 nodes, 8 GPUs`` = 512); then, parenthesised text aside: a
    number with no machine word and no ``x`` beside it (``64``, ``64 (8 x 8)``, ``64 H100s (8
    nodes)``); a total in parentheses (``16 x 8 GPUs (128)``); the product of two stand-alone
    numbers around ``x`` / ``×`` (``2 nodes x 8 GPUs``, ``16 hosts x 8 GPUs``); one stand-alone
    number of machines (nodes, hosts, servers, DGX / HGX boxes, cloud instances, VMs, trays)
    times the system's GPUs per node (``128 nodes``, ``280 DGX A100 nodes``, ``16 x
    p5.48xlarge``). Digits inside a name (``A100``, ``80GB``, ``p5.48xlarge``, ``Gaudi 3``,
    ``MI300X``) are not numbers here. ``rack``: the system's NVLink domain when it spans more
    than one machine (NVL72), else None."""
    if cell is None or isinstance(cell, (int, float)):
        return _int(cell)
    text = str(cell).strip()
    plain = _NUM.match(text)
    if plain and plain.end() == len(text) and re.match(r"[-+\d]", text):
        return _int(text)  # one plain number, as every integer column reads it ("1 024", "1e3", "6.4e1")
    if _range_or_ramp(text) or (
            (rg := re.match(r"^\s*(\d[\d,]*)\s*(?:[-–—]|to\b)\s*(\d[\d,]*)\s*(?:GPUs?)?\s*$", text, re.I))
            and int(rg.group(2).replace(",", "")) > int(rg.group(1).replace(",", ""))):
        return None  # "16-32 GPUs": which count ran is not said
    machines_named = _MACHINES.search(text)
    single = re.match(r"\s*(?:a|one|single|1)\s+(?:node|host|server|machine|instance|box|DGX|HGX)\b", text, re.I)
    explicit = re.search(r"\b(?:only|just)\s+(\d[\d,]*)\s*(?:GPUs?\s+)?(?:used|in\s+use)"
                         r"(?:\s+(?:for|in)\s+(?:the\s+|this\s+)?(?:run|training|pre-?training|job|benchmark))?\s*(?:\)|$)"
                         r"|(?:\(|(?<!\d),)\s*(\d[\d,]*)\s*(?:GPUs?\s+)?(?:used|in\s+use)\s*(?:\)|$)", text, re.I)
    if explicit:  # "(4 used)", "(only 28 used)", ", 28 used": the GPUs the run used
        k = int((explicit.group(1) or explicit.group(2)).replace(",", ""))
        mach = _machine_count(text)
        if mach and k <= gpus_per_node and k < mach:
            return None  # "64 nodes, 8 GPUs used": per node or in all? not said
        return k
    used = re.search(r"(?<![\w.,/])(\d[\d,]*)\s*(?:of|/)\s*(\d[\d,]*)\s*(?:GPUs?)?\s*(?:used|in\s+use)?\s*\)?\s*$", text, re.I)
    n_mach = _machine_count(text)
    whole = bool(used and n_mach and int(used.group(2).replace(",", "")) == n_mach * gpus_per_node)
    if used and (not machines_named or single or whole):
        # "1016 of 1024 GPUs used", "single node (4 of 8 GPUs)", "2 nodes (12 of 16 GPUs used)"
        return int(used.group(1).replace(",", ""))
    if used and int(used.group(1).replace(",", "")) < int(used.group(2).replace(",", "")) == gpus_per_node:
        return None  # "16 nodes, 4/8 GPUs": part of each node, the total not said
    if re.search(r"\b(?:used|in\s+use)\b", text, re.I) and not re.search(r"\(\s*\d[\d,]*\s*GPUs?\s+used\s*\)", text, re.I):
        text = re.sub(r"\([^)]*\)", " ", text)  # "16 nodes (all 8 GPUs used)": the comment is about each node
    total = re.search(r"\(\s*(\d[\d,]*)\s*GPUs?(?:\s+(?:total|in\s+total|in\s+all))?\s*\)", text, re.I)
    if total and (_MACHINES.search(text) or _RACKS.search(text)):  # "1 NVL72 rack (64 GPUs used)"
        return int(total.group(1).replace(",", ""))
    packages = bool(re.search(r"\bMI250X?s?\b", text, re.I)) and not re.search(r"GCD", re.sub(r"\([^)]*\)", " ", text), re.I)
    text = re.sub(r"(?i)\bgaudi\s*\d\b|\bMI\s*\d{3}X?\b", "ACCEL", text)  # a name's digits are no count
    bare_nums = re.findall(r"(?<![A-Za-z\d.,])\d", re.sub(r"\([^)]*\)", " ", text))
    if not bare_nums and re.fullmatch(r"\s*(?:a|one|single)\s+(?:(?:node|host|server|machine|instance|box)\b.*"
                                      r"|(?:DGX|HGX)(?:[-\s]?[A-Z]?\d+\w*)?(?:\s+(?:node|box|system|server))?\s*)", text, re.I):
        return gpus_per_node  # "single node", "one DGX H100"
    if rack and _RACKS.search(text) and not _MACHINES.search(text):
        n = re.fullmatch(r"\s*(\d[\d,]*|a|one|single)\s*(?:[x×*]\s*)?(NVL\d+\s*)?(?:racks?)?\s*", text, re.I)
        if n and (n.group(2) or re.search(r"racks?", text, re.I)):  # "2 NVL72 racks", "1x NVL72", "one rack"
            k = n.group(1).lower()
            size = int(re.search(r"\d+", n.group(2)).group(0)) if n.group(2) else rack
            return (1 if k in ("a", "one", "single") else int(k.replace(",", ""))) * size
    m = re.fullmatch(r"[^=]*\d[^=]*\s[x×*]\s[^=]*\d[^=]*=\s*(\d[\d,]*)\s*(?:GPUs?|GCDs?)?\s*", text, re.I) or \
        re.fullmatch(r"[^=]*\d\s*[x×*]\s*\d[^=]*=\s*(\d[\d,]*)\s*(?:GPUs?|GCDs?)?\s*", text, re.I)
    if m:  # "2 × 8 = 16", "32 nodes × 8 = 256": the total of a product written out
        return int(m.group(1).replace(",", ""))
    m = (None if _MACHINES.search(re.sub(r"\([^)]*\)", " ", text)) else re.search(r"\(\s*(\d[\d,]*)\s*GCDs?\s*\)", text, re.I)) or (
        None if re.search(r"[x×*]|\bof\b", text) else
        re.match(r"\s*(\d[\d,]*)\s*(?:MI250X?\s*)?GCDs?\b(?!\s*(?:per|each|/))", text, re.I))
    if m:  # "1024 MI250X (2048 GCDs)", "2048 GCDs": the GCDs are the ranks counted here
        return int(m.group(1).replace(",", ""))
    m = re.match(r"^\s*(\d+)\s*[kK]\b", text)
    if m:  # "16K H100" (Llama 3): a power of two in binary thousands (16K = 16,384), else 10K = 10,000
        total = re.search(r"\(\s*(\d[\d,]*)\s*(?:GPUs?)?\s*\)", text, re.I)
        if total:
            return int(total.group(1).replace(",", ""))
        k = int(m.group(1))
        return k * (1024 if k & (k - 1) == 0 else 1000)
    outer = re.sub(r"\([^)]*\)", " ", text)
    per_node = re.search(r"(\d[\d,]*)\s*(?:GPUs?|GCDs?|accelerators?|devices?)\s*(?:per|/|each|a)\s*"
                         r"(?:node|host|server|machine|instance)", outer, re.I)
    machines = _machine_count(outer)
    if per_node and machines and not re.search(r"[x×*]", outer):  # "96 nodes, 8 GPUs per node"
        return int(per_node.group(1).replace(",", "")) * machines
    m = re.search(r"(?<![\w.,-])(\d[\d,]*|\bone|\ban?)\s+(?:nodes?|hosts?|servers?)\s*,?\s*(?:of|(?:each\s+)?(?:with|having))\s+"
                  r"(\d[\d,]*)\s*[x×]?\s*(?:GPUs?|(GCDs?)|accelerators?|ACCEL|[A-Z]+\d+\w*)", outer, re.I) or \
        re.search(r"(?<![\w.,-])(\d[\d,]*)\s+(?:nodes?|hosts?|servers?)\s*,\s*(\d[\d,]*)\s*[x×]?\s*(?:GPUs?|(GCDs?)|ACCEL)\s*each\b",
                  outer, re.I)
    if m and int(m.group(2).replace(",", "")) <= gpus_per_node and not re.search(r"\btotal\b", outer, re.I):
        # "4 nodes of 8 GPUs", "one node of 8 GPUs", "4 nodes of 4 MI250X" (packages of 2 GCDs)
        k = m.group(1).lower()
        return ((1 if k in ("one", "a", "an") else int(k.replace(",", ""))) * int(m.group(2).replace(",", ""))
                * (2 if packages and not m.group(3) else 1))
    gpus = re.findall(r"(?<![\w.,])(\d[\d,]*)\s*(?:GPUs?|accelerators?|devices?)\b(?!\s*(?:per|/|each)\b)", outer, re.I)
    if len(gpus) == 1 and (_MACHINES.search(outer) or _RACKS.search(outer)) and not re.search(
            r"[x×*]|\b(?:of|with|having|each|per)\b", outer, re.I):  # "768 GPUs, 96 nodes", "2 racks, 64 GPUs"
        g_ = int(gpus[0].replace(",", ""))
        mach = _machine_count(outer)
        if mach and g_ < mach and g_ <= gpus_per_node:
            return g_ * mach  # "64 nodes, 8 GPUs": GPUs per node
        return g_
    nums = [int(x.replace(",", "")) for x in
            re.findall(r"(?<![A-WYZa-wyz\d.,])(\d[\d,]*)(?![A-WYZa-wyz\d.])", outer)]
    product = len(nums) == 2 and re.search(r"\d[^x×*]*[x×*][^x×*]*\d", outer) is not None
    if not _MACHINES.search(outer) and not product:
        lead = re.match(r"(\d[\d,]*)(?![\d.])", text)
        return _int(lead.group(1)) if lead else _int(cell)
    m = re.search(r"\(\s*(\d[\d,]*)\s*(?:GPUs?)?\s*\)", text, re.I)
    if m:
        return int(m.group(1).replace(",", ""))
    if product:  # MI250X packages hold two GCDs, the ranks counted here ("256 nodes x 4 MI250X")
        return nums[0] * nums[1] * (2 if packages else 1)
    if len(nums) == 1:
        return nums[0] * gpus_per_node
    return None


#: The model name starts after a space or an "x" of its own ("8x H100", "8xH100"), never right after
#: the count: the "x" of "4x200Gbps per node" (4 links of 200 Gb/s) is not a letter of a GPU name.
_STATED_PER_NODE = re.compile(r"(?<![\w.,])(\d{1,2})\s*[x×]?\s*(GPUs?|GCDs?|accelerators?|devices?|(?<!\d)[A-Z]{1,2}\d{3}\w*)"
                              r"\s*(?:\d+\s*GB\s*)?(?:per|/|each\s+|in\s+each|a)\s*(?:node|host|server|machine)\b", re.I)


def _stated_gpus_per_node(r: dict) -> int | None:
    """GPUs per machine the row's ``gpu`` or ``interconnect`` text states (``4x H200 per node``,
    ``8 GPUs per host``; ``4 MI250X per node`` = 8 GCDs), one count only; None when it states none (a machine count in the
    ``gpu_count`` cell is then read with the catalogue system's GPUs per node)."""
    text = " ".join(str(r.get(k) or "") for k in ("gpu", "interconnect"))
    # an MI250X package holds two GCDs, the ranks counted (system_for_gpu)
    counts = {int(m.group(1)) * (2 if re.match(r"MI250", m.group(2), re.I) else 1)
              for m in _STATED_PER_NODE.finditer(text)}
    return counts.pop() if len(counts) == 1 and min(counts) >= 1 else None


#: Per-node figures of a catalogue system that scale with its GPUs (a smaller node of the same
#: kind carries its share of them); the per-GPU ones (NIC bandwidth) and the accelerator stay.
_PER_NODE_FIELDS = ("host_memory_bytes", "host_memory_bw_bytes_per_s", "local_nvme_bytes",
                    "local_nvme_write_bw_bytes_per_s", "local_nvme_read_bw_bytes_per_s", "node_power_w")


def _node_as_stated(system: str, stated: int | None, used: list, tp: int | None = None) -> str | dict:
    """The catalogue ``system`` id, or an inline system of ``stated`` GPUs per node where the row
    states fewer per node than the catalogue's node-local NVLink domain holds (``4x H200 per
    node`` on the 8-GPU ``dgx-h200``): placement follows the row — the NVLink domain is the
    stated node, so a DP / FSDP group beside TP 4 crosses the network from its second rank (until
    2026-12-02 the catalogue's 8-GPU node put two such ranks in one domain and halved their
    network traffic: KempnerForge 70B, TP 4 × FSDP on 4-GPU H200 nodes, came out 61-72 % fast).
    Per-node capacities (:data:`_PER_NODE_FIELDS`) are scaled by ``stated / gpus_per_node``
    (an assumption, said in ``used``, the derived fields' ``sources`` and ``uncertain``); a
    rack-scale domain (NVL72) keeps the catalogue's system, and so does a larger stated node
    (said in ``used``: whether NVLink spans it is not known). A stated node smaller than the
    row's TP is cut too, and ``used`` says that TP then spans nodes."""
    spec = catalog.systems()[system]
    if stated is None or stated == spec.gpus_per_node or spec.nvlink_domain_size != spec.gpus_per_node:
        return system
    if stated > spec.gpus_per_node:
        # a larger node of the same GPU: whether its NVLink reaches all of them is not known (a
        # DGX-2's NVSwitch does, two 8-GPU boards bridged do not): the catalogue's node is kept, said
        used.append(f"node of {stated} GPUs stated; placed on {system}'s {spec.gpus_per_node}-GPU NVLink "
                    "domain (whether NVLink spans the stated node is not known)")
        return system
    d = spec.model_dump(mode="json")
    frac = stated / spec.gpus_per_node
    derived = (f"derived by the validation reader: {system}'s figure x {stated}/{spec.gpus_per_node} "
               f"(the row's {stated}-GPU node)")
    for k in _PER_NODE_FIELDS:
        d[k] = d[k] * frac
        d.setdefault("sources", {})[k] = derived
    d["sources"]["gpus_per_node"] = d["sources"]["nvlink_domain_size"] = "the row's own statement"
    d["uncertain"] = sorted(set(d.get("uncertain") or []) | set(_PER_NODE_FIELDS))
    d.update(name=f"{spec.name}, {stated} GPUs per node (as the row states)", gpus_per_node=stated,
             nvlink_domain_size=stated,
             notes=(f"Derived by the validation reader from catalogue system '{system}' ({spec.gpus_per_node} GPUs "
                    f"per node): {stated} GPUs per node and an NVLink domain of {stated}, as the row states; host "
                    f"memory, its bandwidth, local NVMe and node power x {stated}/{spec.gpus_per_node} (assumed: "
                    "the same node kind, smaller); accelerator and NIC bandwidth per GPU as the catalogue's."))
    used.append(f"node of {stated} GPUs as stated ({system} has {spec.gpus_per_node}; NVLink domain "
                f"{stated}; host memory, NVMe and power per node × {stated}/{spec.gpus_per_node})"
                + (f"; TP {tp} spans {-(-tp // stated)} such nodes (over the network)" if tp and tp > stated else ""))
    return d


def _tokens(cell, seq_len: int | None) -> float:
    """Tokens per global batch: a plain number; ``4M`` / ``4 million`` tokens as 4·2^20 when
    that is a whole number of sequences (Llama 2's "4M tokens" = 1,024 × 4,096), else 4·10^6
    (then rounded to whole sequences); NaN otherwise."""
    text = "" if cell is None or isinstance(cell, (int, float)) else str(cell)
    prod = re.match(r"^\s*(\d[\d,]*)\s*[x×*]\s*(\d[\d,]*)\s*(?:tokens?)?\s*(?:\(.*\))?\s*$", text)
    if prod:  # "512 × 4096": sequences × tokens per sequence
        return float(int(prod.group(1).replace(",", "")) * int(prod.group(2).replace(",", "")))
    m = re.match(r"^\s*" + _NUM_QUALIFIER + r"\s*(\d+(?:\.\d+)?)\s*(m|million|k|thousand)\b(?!\s*b)",
                 text, re.I)
    if not m:
        return parse_number(cell)
    x = float(m.group(1))
    binary, decimal = (2.0**20, 1e6) if m.group(2).lower() in ("m", "million") else (1024.0, 1e3)
    if seq_len and (x * binary) % seq_len == 0:
        return x * binary
    return float(round(x * decimal))


#: Words that make a metric cell a comparison rather than a value, looked for outside
#: parentheses (``31.96% (vs 36.14% for 175B)`` and ``380 (2048x A100)`` are values).
_RELATIVE = re.compile(r"faster|slower|speed-?up|improve\w*|better|worse|higher|lower|gain|\d\s*[x×]\b"
                       r"|\bvs\.?\b|relative", re.I)
#: The label a metric column's number may carry in front (``MFU 38%`` in mfu_pct only).
_METRIC_LABELS = {"mfu_pct": r"MFU|model\s+FLOPs?\s+utili[sz]ation", "hfu_pct": r"HFU|hardware\s+FLOPs?\s+utili[sz]ation",
                  # "TFLOPS per GPU (with recompute) 150": the unit, its scope and a comment before the number
                  "tflops_per_gpu": r"(?:model\s+)?(?:TFLOP/?s|TFLOPS)(?:\s*(?:per|/)\s*GPU)?(?:\s*\([^)]*\))?",
                  "tokens_per_s_per_gpu": r"tok(?:en)?s?\s*/\s*s(?:ec)?(?:\s*/\s*GPU)?",
                  "step_time_s": r"(?:(?:global\s+)?step|iteration|iter)\s+time|time\s+per\s+(?:global\s+)?(?:step|iteration)"}
#: A unit written with a step-time label (``iteration time (ms) 4200``, ``step time [s]: 4.2``).
_STEP_LABEL_UNIT = re.compile(r"^\s*[(\[]\s*(ms|msec|s|sec|seconds?|min)\s*[)\]]\s*[:=]?\s*(?=[~≈>\d])", re.I)
#: A comment that makes the number itself a ratio (``1.3 (speedup vs baseline)``, ``0.92 (relative)``).
_RELATIVE_IN_COMMENT = re.compile(r"\([^)]*\b(?:speed-?ups?|relative)\b[^)]*\)|^\s*\+\s*\d|\(\s*vs\.?\b[^)]*\bbaseline\b",
                                  re.I)
#: A throughput in thousands or millions (``2.8k``, ``≈ 8.2K tokens/s``, ``1.2M``): tokens per second only.
_METRIC_K = re.compile(r"^\s*" + _NUM_QUALIFIER + r"\s*(\d+(?:\.\d+)?)\s*([kKM])(?![a-zA-Z])")


def parse_metric(col: str, cell) -> float:
    """A published-throughput cell: :func:`parse_number`, and for ``step_time_s`` a unit after
    the number (``10300 ms`` and ``10,300 ms`` = 10.3 s, ``2.1 min``; ``s`` / ``sec`` as
    written); tokens/s in thousands (``2.8k``). NaN for a comparison (``2.2x H100``, ``14 %
    faster``; words inside parentheses are the cell's comment, not a comparison)."""
    if isinstance(cell, str) and (_RELATIVE.search(re.sub(r"\([^)]*\)", " ", cell)) or _RELATIVE_IN_COMMENT.search(cell)):
        return math.nan  # "up to 50% faster", "3x", "1.3 (speedup)": a comparison, not the run's value
    label_unit = None
    if isinstance(cell, str) and col in _METRIC_LABELS:  # the column's own label first: "MFU 38%"
        if col == "step_time_s":  # "iteration time (ms) 4200": the label's unit
            lab = re.match(r"^\s*(?:" + _METRIC_LABELS[col] + r")", cell, re.I)
            u = _STEP_LABEL_UNIT.match(cell[lab.end():]) if lab else None
            if u:
                label_unit, cell = u.group(1).lower(), cell[lab.end() + u.end():]
        cell = re.sub(r"^\s*(?:" + _METRIC_LABELS[col] + r")\s*[:=]?\s*(?=[~≈>\d])", "", cell, flags=re.I)
    if col == "tokens_per_s_per_gpu" and isinstance(cell, str) and _METRIC_K.match(cell):
        k = _METRIC_K.match(cell)
        if re.match(r"\s*(?:[-–—]|to\b|→|->)\s*\d", cell[k.end():]):
            return math.nan  # "2.8k-3.1k": a range
        return float(k.group(1)) * (1e6 if k.group(2) == "M" else 1e3)  # "1.2M (whole job)": millions
    v = parse_number(cell)
    if isinstance(cell, str) and not math.isnan(v) and _NUM.match(cell):
        rest = cell[_NUM.match(cell).end():]
        # a second value given as an alternative ("1500/1600", "1500 or 1600"): which ran is not
        # said, as for a range (found by review: read as 1500 without a word)
        if re.match(r"\s*(?:/|\bor\b)\s*[~≈]?\s*\d", rest, re.I):
            return math.nan
        # a unit the column does not hold ("74%" as TFLOP/s, "738 TFLOP/s" or "37% MFU" as tokens/s;
        # found by review: read as the column's own unit and compared, +896 … +4,038 %)
        if _UNIT_CONTRADICTS.get(col) and re.match(_UNIT_CONTRADICTS[col], rest, re.I):
            return math.nan
    if col in ("mfu_pct", "hfu_pct") and 0.0 < v <= 1.0 and "%" not in str(cell):
        return v * 100.0  # "0.38": MFU written as a fraction (no run reaches only 1 % of peak)
    if col == "tflops_per_gpu" and isinstance(cell, str) and not math.isnan(v) and re.match(
            r"\s*P(?:FLOP|F/s|FLOPS)", cell[_NUM.match(cell).end():], re.I):
        per_gpu = re.fullmatch(r"\s*P(?:FLOP/?s|FLOPS|F/s)\s*(?:(?:per|/)\s*GPU)?\s*", cell[_NUM.match(cell).end():], re.I)
        return v * 1e3 if per_gpu else math.nan  # "1.544 PFLOP/s" per GPU; "1.5 PFLOP/s aggregate" is not
    if col != "step_time_s" or cell is None or isinstance(cell, (int, float)) or math.isnan(v):
        return v
    text = str(cell)
    rest = text[_NUM.match(text).end():]
    if re.match(r"\s*(?:it|iters?|iterations?|steps?)\s*/\s*s(?:ec\w*)?\b", rest, re.I):
        return 1.0 / v  # "2.5 it/s": a rate, not a time
    m = re.match(r"\s*(ms|msec|millisec\w*|min\w*|s|sec\w*)\b", rest, re.I)
    def _unit(u: str) -> str:
        u = u.lower()
        return "min" if u.startswith("min") else "ms" if u.startswith("m") else "s"
    if m and label_unit and _unit(m.group(1)) != _unit(label_unit):
        return math.nan  # "iteration time (ms) 4.2 s": two units
    if not m and not label_unit:
        return v
    x = v
    unit = m.group(1).lower() if m else label_unit
    return x / 1e3 if unit.startswith("m") and not unit.startswith("min") else x * 60.0 if unit.startswith("min") else x


#: After a metric cell's number, a unit that belongs to another column: the cell is not read
#: (``"74%"`` in tflops_per_gpu, ``"738 TFLOP/s"`` or ``"37% MFU"`` in tokens_per_s_per_gpu).
_UNIT_CONTRADICTS = {
    "tokens_per_s_per_gpu": r"\s*(?:%|[TPG]FLOP|[TPG]F/s|[TPG]FLOPS|MFU|HFU|s\b|sec|ms\b)",
    "tflops_per_gpu": r"\s*(?:%|tok|MFU|HFU|s\b|sec|ms\b)",
    "mfu_pct": r"\s*(?:[TPG]FLOP|[TPG]F/s|tok|s\b|sec|ms\b)",
    "hfu_pct": r"\s*(?:[TPG]FLOP|[TPG]F/s|tok|s\b|sec|ms\b)",
    "step_time_s": r"\s*(?:%|tok|[TPG]FLOP|[TPG]F/s|MFU|HFU)",
}


#: Integer columns of a row; a cell there must be a finite number below 2^53.
_INT_COLUMNS = ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "seq_len", "moe_experts", "moe_topk",
                "global_batch_seqs", "global_batch_tokens", "gpu_count", "tp", "pp", "dp", "cp", "ep", "vpp",
                "micro_batch", "etp")


def _int(x) -> int | None:
    v = parse_number(x)
    return None if not math.isfinite(v) or abs(v) >= 2.0**53 else int(round(v))


#: A label before an integer (``TP=8``, ``TP 8``, ``TP8``, ``GQA (8)``, ``GQA-8``, ``interleaved (5)``,
#: ``top-2``, ``EP: 8``).
_LABELLED_INT = re.compile(r"^\s*([A-Za-z][A-Za-z_ .-]*?)(\s*[=:(-]|(?<=top)[_ ]|\s*)\s*(\d[\d,]*)\s*\)?\s*"
                           r"(?:\([^)]*\)|,\s*(?:SP|sequence[ -]parallel\w*))?\s*$", re.I)
#: Columns whose label may stand without ``=`` / ``:`` / ``(`` (``TP 8``, ``EP8``, ``GQA 8``);
#: sizes (layers, hidden, vocab, sequence) need one, and so do FSDP / DDP (``FSDP2`` is a version).
_BARE_LABEL_COLUMNS = ("tp", "pp", "dp", "cp", "ep", "etp", "vpp", "kv_heads", "moe_topk", "moe_experts", "micro_batch",
                       "global_batch_seqs")
#: The labels a column's integer may carry (lower case, spaces and underscores as one):
#: ``TP=8`` in tp, ``GQA (8)`` in kv_heads, ``top-2`` in moe_topk; ``PP=4`` in tp or ``tokens:
#: 2097152`` in global_batch_seqs is refused.
_COLUMN_LABELS = {
    "tp": r"tp|tensor(?: model)? parallel\w*|mp", "pp": r"pp|pipeline(?: model)?(?: parallel\w*)?",
    "cp": r"cp|context(?: parallel\w*)?", "ep": r"ep|expert(?: parallel\w*)?",
    "etp": r"etp|expert tensor(?: model)?(?: parallel\w*)?(?: size)?",
    "dp": r"dp|data(?: parallel\w*)?|fsdp|ddp", "vpp": r"vpp|vp|v|virtual(?: pipeline)?(?: stages?)?|interleaved|chunks?",
    "micro_batch": r"mbs|micro(?: |-)?batch(?: size)?|micro", "kv_heads": r"kv|kv heads|gqa|mqa|query groups|num query groups|n kv|n kv heads|num kv heads",
    "moe_topk": r"top|topk|top k|k", "moe_experts": r"experts?|e|moe", "gpu_count": r"gpus?|n|count",
    "global_batch_seqs": r"gbs|batch|global batch(?: size)?|seqs|sequences", "seq_len": r"seq|seq len|sequence(?: length)?|ctx|context",
    "layers": r"layers?|l|n layers", "hidden": r"hidden(?: size)?|h|d model|dim", "heads": r"heads|a|n heads",
    "ffn": r"ffn(?: hidden size)?|d ff|intermediate(?: size)?", "vocab": r"vocab(?: size)?|v",
}
#: A sequence length or vocabulary in thousands (``4k``, ``32K``): 1,024 tokens per k for a
#: sequence (4k = 4,096), 1,000 for a vocabulary (32k = 32,000).
_K_SUFFIX = re.compile(r"^\s*" + _NUM_QUALIFIER + r"\s*(\d+(?:\.\d+)?)\s*[kK]\s*(?:tokens?)?\s*$")
#: A sequence length in millions of tokens (``1M``, ``1M tokens``): 1,048,576 per M.
_M_SUFFIX = re.compile(r"^\s*" + _NUM_QUALIFIER + r"\s*(\d+(?:\.\d+)?)\s*M\s*(?:tokens?)?\s*$")
#: "none" spellings for a degree: no interleaving / no context parallelism → 1.
_NO_DEGREE = re.compile(r"^\s*(?:no\b.*|none|off|false|disabled|-|—|n/?a)\s*$", re.I)
#: The same for TP and PP, where a bare dash or ``n/a`` stays "not published": ``none``, ``no``,
#: ``no TP``, ``not used``, ``off``, ``disabled`` → 1.
_NO_DEGREE_WORDS = re.compile(r"^\s*(?:no(?:\s+(?:tp|pp|mp|tensor|pipeline|model)\w*(?:\s+parallel\w*)?)?|none|off|false|disabled"
                              r"|not used|unused)\s*$", re.I)
#: A dense-MoE hybrid named in the experts or model cell (Snowflake Arctic's "Dense-MoE Hybrid":
#: a dense MLP residual beside the routed experts in every layer), which the schema cannot state.
_DENSE_MOE_HYBRID = re.compile(r"\bdense[-_ ]?(?:moe|mixture[-_ ]of[-_ ]experts)[-_ ]?hybrid\b|\bhybrid[-_ ]"
                               r"(?:dense[-_ ]?moe|moe)\b|\bresidual[-_ ](?:dense[-_ ])?(?:mlp|ffn)\b", re.I)
#: Shared experts beside the routed ones in an experts cell (``8 (+1 shared)``, ``64+2 shared``,
#: ``160 routed, 2 shared``, ``162 (160 routed + 2 shared)``).
_SHARED_EXPERTS = re.compile(r"(?:\+\s*|\b)(\d+)\s*shared", re.I)
_ROUTED_EXPERTS = re.compile(r"^(?=.*\bshared\b)(?:.*?)\b(\d+)\s*routed(?!\s*(?:experts?\s*)?(?:active|activated|per\s*tok|/\s*tok"
                             r"|each\s*tok|per\s+token))", re.I)


def _routed_total_stated(text: str) -> bool:
    """Whether an experts cell states a total larger than its routed count (``(256 total)``,
    ``(of 256)``, ``out of 256``)."""
    rc = _routed_count(text)
    if rc is None:
        return False
    sh = _SHARED_EXPERTS.search(text)
    limit = int(rc) + (int(sh.group(1)) if sh else 0)
    for x in _standalone_numbers(text):
        if "." in x or int(x.replace(",", "")) <= limit:
            continue
        if re.search(r"(?:total|\bof|out\s+of|from)\s*" + re.escape(x) + r"\b|\b" + re.escape(x) + r"\s*(?:total|in\s+total)",
                     text, re.I):
            return True
    return False


def _routed_count(text: str) -> str | None:
    """The routed-expert count of an experts cell when it accounts for the cell's leading number
    (``160 routed, 2 shared``, ``162 (160 routed + 2 shared)``, ``1 shared + 256 routed``); None
    when the routed number is the active experts per token (``256 experts, 1 shared, 8 routed``)."""
    m = _ROUTED_EXPERTS.search(text)
    if not m:
        return None
    routed, lead = int(m.group(1)), parse_number(text)
    sh = _SHARED_EXPERTS.search(text)
    shared = int(sh.group(1)) if sh else 0
    return None if math.isnan(lead) else str(routed) if routed + shared >= lead else None
#: A dense model in the MoE columns (``dense``, ``no``, ``none``, ``n/a``, ``-``, ``0``; one
#: expert in moe_experts).
_NO_MOE = re.compile(r"^\s*(?:dense\b.*|no\b.*|none|n/?a|-|—|0|false)\s*$", re.I)
#: Largest multiplier an FFN cell may write before ``h`` (``4h``, ``8/3 h``, ``2.6875h``): above it
#: the number is the width itself (``3072 hidden units``).
FFN_MULTIPLE_MAX = 16.0
#: An FFN width as a multiple of the hidden size (``4h``, ``4 x hidden``, ``8/3 × d_model``,
#: ``8/3 h``) or of a number (``8/3 × 4096``).
_FFN_MULTIPLE = re.compile(r"^\s*(\d+(?:\.\d+)?)(?:\s*/\s*(\d+(?:\.\d+)?))?\s*"
                           r"(?:(?:[x×*·]\s*)?(h|hidden(?:[ _]size)?|d[ _]?model|dim)\b|[x×*·]\s*(\d[\d,]*)\s*$)", re.I)


#: Pipeline schedules a pp cell may name, most specific first (``interleaved 1F1B`` is the
#: interleaved schedule): DeepSeek's DualPipe, zero bubble (ZB-H1 / ZB-H2), interleaved, GPipe, 1F1B.
_PP_SCHEDULES = (("dualpipe", r"\bdual[-_ ]?pipe\b"), ("zero_bubble", r"\bzero[-_ ]?bubble\b|\bZB[-_ ]?H[12]\b"),
                 ("interleaved", r"\binterleav\w*"), ("gpipe", r"\bgpipe\b"), ("1f1b", r"\b1F1B\b"))
#: The virtual stages a pp cell states beside the degree (``(VPP 4)``, ``virtual stages: 5``, ``VP=2``).
_VPP_IN_CELL = re.compile(r"\b(?:VPP|VP|virtual(?:[-_ ]pipeline)?(?:[-_ ](?:stages?|chunks?))?|model[-_ ]chunks?)"
                          r"\s*[=:]?\s*(\d+)\b"
                          r"|(?<![\w.])(\d+)\s+(?:virtual(?:[-_ ]pipeline)?[-_ ](?:stages?|chunks?)|model[-_ ]chunks?)\b", re.I)
#: Layers per virtual stage named in a pp cell (``3 layers per virtual stage``, ``layers per virtual
#: pipeline stage: 3``, ``num_layers_per_virtual_pipeline_stage=3``): a layer count, not a depth.
_LAYERS_PER_VSTAGE = re.compile(r"(?<![\w.])(\d+)\s+layers?[-_ ](?:per|/)[-_ ]?virtual(?:[-_ ]pipeline)?[-_ ](?:stages?|chunks?)\b"
                                r"|\b(?:num[-_ ])?layers?[-_ ]per[-_ ]virtual(?:[-_ ]pipeline)?[-_ ](?:stages?|chunks?)\b"
                                r"\s*[=:]?\s*(\d+)\b", re.I)
#: Pipeline schedules the schema has no entry for, named in a pp cell: refused, not run as 1F1B
#: (DualPipeV, the "cut-in-half" V-shaped DualPipe, has its own bubble).
_PP_UNMODELLED = re.compile(r"\bdual[-_ ]?pipe[-_ ]?v\b|\bV[-_ ]?shape[d]?\b", re.I)
#: A degree's own short label, for a cell that wraps ``CP=8`` in other words (``ring attention (CP=8)``).
_OWN_DEGREE_LABEL = {"tp": r"TP", "pp": r"PP", "dp": r"DP", "cp": r"CP", "ep": r"EP", "vpp": r"VPP|VP", "etp": r"ETP"}


def _blank(v) -> bool:
    return _is_na(v) or str(v).strip() == ""


def _pipeline_cell(out: dict) -> None:
    """A pp cell that names its schedule or its virtual stages beside the degree (``PP=8
    interleaved (VPP 4)``, ``PP=16 (zero bubble)``, ``DualPipe (PP=4)``, ``PP=8 (1F1B)``): the
    degree to ``pp``, the virtual stages to an empty ``vpp`` (a different number there makes the
    vpp unclear), the schedule to ``_schedule`` (zero bubble, DualPipe, GPipe; interleaved
    without a depth takes the default depth, as the vpp cell's ``interleaved``). Names that are
    negated or compared (``no interleaving``, ``vs. 1F1B``) are not schedules. A cell naming two
    of DualPipe / zero bubble / GPipe, or several PP degrees, is left for the strict reading."""
    cell = out.get("pp")
    if _blank(cell) or not re.search(r"[A-Za-z]", str(cell)):
        return
    text = str(cell)
    per_stage = {int(a or b) for a, b in _LAYERS_PER_VSTAGE.findall(text)}
    if per_stage:  # "4 (3 layers per virtual stage)": layers, not virtual stages; the depth from them
        text = _LAYERS_PER_VSTAGE.sub(" ", text)
        if len(per_stage) == 1 and _blank(out.get("vpp")):
            out["_layers_per_vstage"] = per_stage.pop()
        elif len(per_stage) != 1:
            out["vpp"] = f"unclear: {cell}"
        if not re.search(r"[A-Za-z]", re.sub(r"\bPP\b", " ", text, flags=re.I)):
            degrees = re.findall(r"(?<![\w.])(\d+)(?![\w.])", text)
            out["pp"] = degrees[0] if len(set(degrees)) == 1 else f"unclear: {cell}"
            return
    if _ran_mentions(text, _PP_UNMODELLED.pattern)[0]:
        out["pp"] = f"unclear: {text} (a pipeline schedule not modelled: 1f1b, interleaved, gpipe, zero_bubble, dualpipe)"
        return
    named = [name for name, pat in _PP_SCHEDULES if _ran_mentions(text, pat)[0]]
    vpps = {int(a or b) for a, b in _VPP_IN_CELL.findall(text)}
    if not named and not vpps:
        return
    rest = _VPP_IN_CELL.sub(" ", text)
    for _, pat in _PP_SCHEDULES:
        rest = re.sub(r"(?:\bwith\s+)?(?:" + pat + r")(?:[-_ ](?:schedule|pipeline|pipelining))?", " ", rest, flags=re.I)
    degrees = re.findall(r"\bPP\s*[=:]?\s*(\d+)\b", rest, re.I) or re.findall(r"(?<![\w.])(\d+)(?![\w.])", rest)
    if len(set(degrees)) != 1 or len([n for n in named if n in ("dualpipe", "zero_bubble", "gpipe")]) > 1:
        return
    out["pp"] = degrees[0]
    if vpps:
        vpp = out.get("vpp")
        if _blank(vpp):
            out["vpp"] = str(vpps.pop()) if len(vpps) == 1 else f"unclear: {text}"
        elif len(vpps) != 1 or _int(vpp) != next(iter(vpps)):
            out["vpp"] = f"unclear: vpp {vpp!r} beside pp {text!r}"
    special = [n for n in named if n in ("dualpipe", "zero_bubble", "gpipe")]
    if special:
        out["_schedule"] = special[0]
    elif "interleaved" in named and not vpps and _blank(out.get("vpp")):
        out["_interleaved_named"] = True


def _own_labelled_degree(col: str, text: str) -> str | None:
    """The degree of a parallelism cell that wraps the column's own label and number in other
    words (``ring attention (CP=8)``, ``Megatron CP, CP=4``): the number, when the label occurs
    once, no other number is in the cell and nothing negates it; else None."""
    pat = r"\b(?:" + _OWN_DEGREE_LABEL[col] + r")\s*[=:]?\s*(\d+)\b"
    hits = re.findall(pat, text, re.I)
    if len(hits) != 1 or len(re.findall(r"\d+", text)) != 1:
        return None
    if re.search(r"\b(?:no|not|off|disabled?|unused|without|instead|vs\.?|would)\b|\bw/o\b", text, re.I):
        return None
    return hits[0]


#: Top-k stated in an experts cell (``8 experts, top-2``, ``128 experts (top 8)``).
_TOPK_IN_EXPERTS = re.compile(r"\btop[-_ ]?k?\s*[=:]?\s*(\d+)\b", re.I)


#: A parallelism degree named by its word (``tensor 8``, ``pipeline-parallel 16``, ``data
#: parallel 64``, ``context 2``, ``expert 8``) → its column.
_DEGREE_WORDS = {"tensor": "tp", "pipeline": "pp", "data": "dp", "context": "cp", "expert": "ep"}
_DEGREE_ABBR = {"tp": "tp", "pp": "pp", "dp": "dp", "cp": "cp", "ep": "ep", "vpp": "vpp", "mp": "tp",
                **_DEGREE_WORDS}


def _degree_words(text: str) -> list[tuple[str, str]]:
    """(column, degree) pairs of a cell that names each degree by its word (``tensor 8 x
    pipeline 16``, ``tensor-parallel 8, pipeline-parallel 12``); [] unless every number of the
    cell outside parentheses follows such a word and nothing negates one."""
    outer = re.sub(r"\([^)]*\)", " ", text)
    hits = re.findall(r"\b(tensor|pipeline|data|context|expert)(?:[-_ ](?:model[-_ ])?parallel\w*)?(?:[-_ ]size)?"
                      r"\s*[=:]?\s*(\d+)\b", outer, re.I)
    if not hits or len(hits) != len(re.findall(r"\d+", outer)) or re.search(r"\b(?:no|not|without|off)\b", outer, re.I):
        return []
    return [(_DEGREE_WORDS[k.lower()], v) for k, v in hits]


def _degree_lists(text: str) -> list[tuple[str, str]]:
    """(column, degree) pairs of a cell that gives a list of degrees beside a list of their
    labels in the same order (``8/12/32 (TP/PP/DP)``, ``TP/PP/DP = 8/12/32``, ``(TP, PP, DP) =
    (8, 16, 64)``, ``8 x 16 x 64 (TP x PP x DP)``); [] unless both lists have the same length
    (at least two) and every label is a parallelism."""
    sep = r"\s*(?:/|,|(?<![a-z])x(?![a-z])|×|\*)\s*"  # the x of "expert" / "context" is no separator
    lab = r"(?:TP|PP|DP|CP|EP|VPP|MP|tensor|pipeline|data|context|expert)"
    labels = re.search(r"(?<![\w])(" + lab + r"(?:" + sep + lab + r")+)(?![\w])", text, re.I)
    nums = re.search(r"(?<![\w.])(\d+(?:" + sep + r"\d+)+)(?![\w.])", text)
    if not labels or not nums:
        return []
    ls = [x.lower() for x in re.split(sep, labels.group(1), flags=re.I)]
    ns = re.split(sep, nums.group(1), flags=re.I)
    first, second = sorted((labels.span(), nums.span()))
    leftover = text[:first[0]] + " " + text[first[1]:second[0]] + " " + text[second[1]:]
    if len(ls) != len(ns) or len(ls) < 2 or first[1] > second[0] or re.search(r"[^\s()=:\[\]]", leftover):
        return []  # another word or number in the cell: not a plain list of degrees
    return [(_DEGREE_ABBR[k], v) for k, v in zip(ls, ns)]


#: Keys of launch configurations pasted into a cell — Megatron-LM / NeMo flags and YAML keys,
#: TorchTitan TOML, DeepSpeed JSON, HF Trainer arguments — and the column whose number each
#: gives (compared lower-cased, a leading ``--``, quotes and a dotted prefix dropped, ``-`` read as
#: ``_``). ``_layers_per_vstage``: Megatron's ``--num-layers-per-virtual-pipeline-stage`` (layers,
#: not the virtual stages); ``_dp_shard``: TorchTitan's FSDP degree (-1: the remaining GPUs);
#: ``_local_batch``: TorchTitan's per-rank batch (the micro-batch unless pipelined).
_CONFIG_KEYS = {
    "tensor_model_parallel_size": "tp", "tensor_parallel_degree": "tp", "tensor_parallel_size": "tp",
    "pipeline_model_parallel_size": "pp", "pipeline_parallel_degree": "pp", "pipeline_parallel_size": "pp",
    "virtual_pipeline_model_parallel_size": "vpp", "num_layers_per_virtual_pipeline_stage": "_layers_per_vstage",
    "context_parallel_size": "cp", "context_parallel_degree": "cp",
    "expert_model_parallel_size": "ep", "expert_parallel_degree": "ep", "expert_parallel_size": "ep",
    "expert_tensor_parallel_size": "etp",
    "data_parallel_shard_degree": "_dp_shard", "data_parallel_size": "dp",
    "micro_batch_size": "micro_batch", "train_micro_batch_size_per_gpu": "micro_batch",
    "per_device_train_batch_size": "micro_batch", "local_batch_size": "_local_batch",
    "global_batch_size": "global_batch_seqs", "train_batch_size": "global_batch_seqs",
    "gradient_accumulation_steps": "grad_accum",
    "num_layers": "layers", "num_hidden_layers": "layers", "n_layers": "layers",
    "hidden_size": "hidden", "num_attention_heads": "heads", "n_heads": "heads",
    "num_query_groups": "kv_heads", "num_key_value_heads": "kv_heads", "n_kv_heads": "kv_heads",
    "ffn_hidden_size": "ffn", "intermediate_size": "ffn", "seq_length": "seq_len", "encoder_seq_length": "seq_len",
    "seq_len": "seq_len", "num_moe_experts": "moe_experts", "num_experts": "moe_experts",
    "num_local_experts": "moe_experts", "moe_router_topk": "moe_topk", "num_experts_per_tok": "moe_topk",
    "vocab_size": "vocab",
}
#: One ``key value`` assignment of a launch config: ``--micro-batch-size 1``, ``--tp=8``,
#: ``tensor_model_parallel_size: 4``, ``tensor_parallel_degree = 8``, ``"train_batch_size": 2048``,
#: ``per_device_train_batch_size=4``, ``model.tensor_model_parallel_size=4``.
_CONFIG_PAIR = re.compile(r"""(?<![\w.-])(?:--)?["']?([A-Za-z_][\w.-]*?)["']?\s*(?:[:=]\s*|\s+)["']?(-?\d+|null|none|~)["']?"""
                          r"""(?![\w.])""", re.I)


def _config_cells(out: dict) -> None:
    """Integer cells pasted from a launch configuration (:data:`_CONFIG_KEYS`): each assignment's
    number to its column — the cell's own, or an empty other one (a different number there makes
    that column unclear); a cell holding only another column's key is emptied (``--micro-batch-size
    1`` in the batch cell is the micro-batch, not the global batch). Read only when every number
    of the cell is the value of a known key and nothing but bare ``--flags`` is left; ``null`` is
    unset (no interleaving for the virtual stages)."""
    cols = _INT_COLUMNS + ("grad_accum",)
    for col in cols:
        cell = out.get(col)
        if _blank(cell) or not isinstance(cell, str) or not re.search(r"[A-Za-z]", cell):
            continue
        text = re.sub(r"\[[\w.]+\]", " ", cell)  # a TOML section header ("[parallelism]")
        pairs = [(re.sub(r"^.*\.", "", k).lower().replace("-", "_"), v.lower()) for k, v in _CONFIG_PAIR.findall(text)]
        leftover = _CONFIG_PAIR.sub(" ", text)
        if not pairs or any(k not in _CONFIG_KEYS for k, _ in pairs) \
                or not re.fullmatch(r"""[\s,;{}"']*(?:--[A-Za-z][\w-]*[\s,;{}"']*)*""", leftover):
            continue
        if re.search(r"(?<![\w-])--sequence[-_]parallel\b", leftover, re.I):
            out["_tp_sp"] = True
        got: dict[str, set] = {}
        for k, v in pairs:
            got.setdefault(_CONFIG_KEYS[k], set()).add(None if v in ("null", "none", "~") else int(v))
        if col not in got:
            out[col] = None  # another column's key only: this cell states nothing of its own
        for target, vals in got.items():
            if len(vals) > 1:
                v = f"unclear: {cell}"
            else:
                v = vals.pop()
            if target == "_layers_per_vstage":  # layers per virtual stage: the depth from the layers
                if isinstance(v, int) and v > 0 and _blank(out.get("vpp")):
                    out["_layers_per_vstage"] = v
                elif isinstance(v, str) or (isinstance(v, int) and v <= 0):
                    out["vpp"] = f"unclear: {cell}"
                continue
            if target == "_dp_shard":
                if isinstance(v, int) and v != 1:
                    out["_dp_fsdp"] = True  # FSDP over this many GPUs (-1: all the remaining ones)
                target, v = "dp", (None if isinstance(v, int) and v <= 0 else v)
            elif target == "_local_batch":
                out["_local_batch"] = True
                target = "micro_batch"
            elif target == "global_batch_seqs" and isinstance(v, int) and v <= 0:
                v = None  # TorchTitan's global_batch_size = -1: local batch x dp, not stated here
            elif target == "vpp" and v is None:
                v = 1  # virtual_pipeline_model_parallel_size: null — no interleaving
            v = None if v is None else str(v)
            if target == col or _blank(out.get(target)):
                out[target] = v
            elif v is not None and (_int(out.get(target)) is None or str(_int(out.get(target))) != v):
                out[target] = f"unclear: {out.get(target)!r} beside {cell!r}"


def _clean_int_cells(r: dict) -> dict:
    """The row with its integer cells made readable where the wording is unambiguous: a labelled
    number (``TP=8``, ``GQA (8)``, ``interleaved (5)``, ``top-2``), a sequence length or vocabulary
    in thousands (``4k`` = 4,096 tokens, ``32k`` = 32,000 words), ``MHA`` / ``MQA`` for the KV
    heads, ``no`` / ``none`` for a vpp or cp degree (1), ``auto`` / ``-1`` / text for dp (derived),
    0 for vpp (1), shared experts counted apart (``n_shared_experts``). Anything else is left as
    written for the strict reading of :func:`parse_number`."""
    out = dict(r)
    _config_cells(out)  # "--tensor-model-parallel-size 8", "tensor_parallel_degree = 8", "train_batch_size": 2048
    if re.search(r"\d\s*,\s*(?:SP|sequence[ -]parallel\w*)\s*$", str(r.get("tp") or ""), re.I):
        out["_tp_sp"] = True  # "TP=4, SP"
    # a whole split written in one cell ("TP8-PP8-CP2", "TP=4, PP=2, DP=8"): each degree to its
    # own column when that one is empty
    for col in ("tp", "pp", "dp", "cp", "ep", "vpp"):
        cell = out.get(col)
        if _is_na(cell) or str(cell).startswith("unclear:"):
            continue
        # "TP8/PP1", also run together ("tp8pp1", "TP8xPP2"; found by review 17a: refused as unreadable)
        pairs = re.findall(r"(?:(?<![A-Za-z])|(?<=\d[x×]))(ETP|TP|PP|DP|CP|EP|VPP)\s*[=:]?\s*(\d+)(?![\d.])",
                           re.sub(r"\([^)]*\)", " ", str(cell)), re.I)
        if len(pairs) < 2:  # "tensor 8 x pipeline 16", "8/12/32 (TP/PP/DP)", "(TP, PP, DP) = (8, 16, 64)"
            pairs = _degree_words(str(cell)) or _degree_lists(str(cell))
        if len({k.lower() for k, _ in pairs}) >= 2 and len({k.lower() for k, _ in pairs}) == len(pairs):
            for k, v in pairs:
                k = k.lower()
                other = out.get(k)
                if k == col or other is None or (isinstance(other, float) and math.isnan(other)) or str(other).strip() == "":
                    out[k] = v
                elif _int(other) is not None and _int(other) != int(v):
                    # "TP4/PP2" in tp beside pp = 1: two degrees for one column, refused naming both
                    # (found by review 17a: the PP2 was dropped without a word)
                    out[k] = f"unclear: {k} {other!r} beside {col} {cell!r}"
    # the expert TP named beside another degree ("EP=16 (ETP=1)", "TP=2 (ETP 1)"): to an empty etp
    # cell; a different number there makes the etp unclear (refused, naming both)
    said = {(col, int(v)) for col in ("tp", "ep") if not _blank(out.get(col))
            for v in re.findall(r"\bETP\s*[=:]?\s*(\d+)\b", str(out.get(col)), re.I)}
    if said:
        vals = {v for _, v in said}
        etp = out.get("etp")
        if _blank(etp):
            out["etp"] = str(vals.pop()) if len(vals) == 1 else "unclear: " + "; ".join(
                f"{c} {out.get(c)!r}" for c in sorted({c for c, _ in said}))
        elif len(vals) != 1 or _int(etp) != next(iter(vals)):
            out["etp"] = f"unclear: etp {etp!r} beside " + "; ".join(
                f"{c} {out.get(c)!r}" for c in sorted({c for c, _ in said}))
    _pipeline_cell(out)
    experts = out.get("moe_experts")
    if not _blank(experts) and _TOPK_IN_EXPERTS.search(str(experts)):
        # "8 experts, top-2": the top-k to an empty moe_topk; a different top-k there is unclear
        ks = {int(k) for k in _TOPK_IN_EXPERTS.findall(str(experts))}
        if _blank(out.get("moe_topk")):
            out["moe_topk"] = str(ks.pop()) if len(ks) == 1 else f"unclear: {experts}"
        elif len(ks) != 1 or _int(out.get("moe_topk")) != next(iter(ks)):
            out["moe_topk"] = f"unclear: top-k {out.get('moe_topk')!r} beside experts {experts!r}"
    # the global batch written as a token count in the sequences column ("262,144 tokens", "256K
    # tokens", "~4M tok"): the tokens column's reading (÷ seq_len), not 262,144 sequences (found by
    # review 17a: read as sequences without a word); an empty tokens column takes the cell
    gbs = out.get("global_batch_seqs")
    if not _blank(gbs) and _BATCH_IN_TOKENS.match(str(gbs)):
        if _blank(out.get("global_batch_tokens")):
            out["global_batch_tokens"] = str(gbs)
        out["global_batch_seqs"] = None
    for col in _INT_COLUMNS:
        cell = out.get(col)
        if _is_na(cell):
            continue
        text = str(cell).strip()
        if col in _OWN_DEGREE_LABEL and math.isnan(parse_number(text)) and not _LABELLED_INT.match(text) \
                and _own_labelled_degree(col, text) is not None:
            out[col] = text = _own_labelled_degree(col, text)  # "ring attention (CP=8)"
        if not math.isnan(parse_number(text)):
            if col in ("vpp", "ep") and parse_number(text) == 0:
                out[col] = "1"
            elif col == "vpp" and re.match(r"^\s*(\d+)\s*layers?\s*(?:per|/)\s*(?:virtual\s*)?(?:stage|chunk)", text, re.I):
                out[col] = None  # "2 layers per virtual stage": vpp from the layers (row_to_scenario)
                out["_layers_per_vstage"] = int(re.match(r"^\s*(\d+)", text).group(1))
            elif col == "dp" and parse_number(text) <= 0:
                out[col] = None  # TorchTitan's -1: all the remaining GPUs
            elif col == "moe_experts" and _routed_count(text) and _routed_total_stated(text):
                out[col] = "unclear: " + text  # "1 shared + 8 routed (256 total)": the 8 are active, not all
            elif col == "moe_experts" and _routed_count(text):  # "1 shared + 256 routed"
                out[col] = _routed_count(text)
                if _SHARED_EXPERTS.search(text):
                    out["_shared_experts"] = int(_SHARED_EXPERTS.search(text).group(1))
            elif col == "moe_experts" and re.search(r"\brouted\b", text, re.I) and (
                    (not _routed_count(text) and any(int(x) > parse_number(text)
                                                     for x in re.findall(r"\b(\d+)\s*routed\b", text, re.I)))
                    or _routed_total_stated(text)):
                out[col] = "unclear: " + text  # "1 shared + 256 routed (8 active)": refused, not a 1-expert model
            elif col == "moe_experts" and (_NO_MOE.match(text) or re.fullmatch(r"\s*1\s*(?:experts?)?\s*", text)):
                out["moe_experts"] = out["moe_topk"] = None  # a dense model
            elif col == "moe_topk" and parse_number(text) == 0 and _int(out.get("moe_experts")) is None:
                out["moe_topk"] = None  # top-k 0 beside no experts: a dense model
            elif col == "moe_experts" and _SHARED_EXPERTS.search(text):
                out["_shared_experts"] = int(_SHARED_EXPERTS.search(text).group(1))
            elif col == "ffn" and _FFN_MULTIPLE.match(text) and (
                    _FFN_MULTIPLE.match(text).group(3) or _FFN_MULTIPLE.match(text).group(4)) and (
                    float(_FFN_MULTIPLE.match(text).group(1)) <= FFN_MULTIPLE_MAX):
                out[col] = _ffn_multiple(text, out.get("hidden"))
            continue
        m = _LABELLED_INT.match(text)
        label = re.sub(r"[\s_-]+", " ", m.group(1).strip().lower()) if m else ""  # "tensor-parallel 8"
        if col == "dp" and (re.fullmatch(r"\s*(?:FSDP2?|HSDP)\s*", text, re.I) or (
                m and label in ("fsdp", "fsdp2", "hsdp") and not re.search(r"\b(?:no|not|off|disabled?|unused|without)\b",
                                                                         text, re.I))):
            out["_dp_fsdp"] = True
        sep = m.group(2) if m else ""
        if m and ((not sep.strip() and col not in _BARE_LABEL_COLUMNS)
                  or (sep == "" and label in ("fsdp", "ddp", "v", "e", "n"))):
            m = None  # "FSDP2", "v2", "context 2": a version or an odd cell, not a labelled degree
        comment = re.search(r"\(([^)]*)\)\s*$", text)
        sp_said = _sp_comment(comment.group(1)) if (m and comment and col == "tp") else None
        if sp_said is not None:
            out["_tp_sp"] = sp_said  # "TP=4 (no SP)", "TP=8 (SP on)", "TP=8 (SP=False)"
        elif m and comment and re.search(r"\b(?:no|not|off|disabled?|unused|without|false)\b|\bw/o\b", comment.group(1), re.I):
            m = None  # "VPP=5 (not used)", "TP=4 (SP, no comm overlap)": the labelled value is in doubt
        if m and col in _COLUMN_LABELS and re.fullmatch(_COLUMN_LABELS[col], label):
            out[col] = m.group(3)
            if col == "moe_experts" and _SHARED_EXPERTS.search(text):
                out["_shared_experts"] = int(_SHARED_EXPERTS.search(text).group(1))
        elif col == "seq_len" and _M_SUFFIX.match(text):  # "1M tokens": 1,048,576 (2^20), as 128k = 131,072
            out[col] = str(round(float(_M_SUFFIX.match(text).group(1)) * 1024 * 1024))
        elif col in ("seq_len", "vocab") and _K_SUFFIX.match(text):
            out[col] = str(round(float(_K_SUFFIX.match(text).group(1)) * (1024 if col == "seq_len" else 1000)))
        elif col == "kv_heads" and re.match(r"^\s*mha\b", text, re.I):
            out[col] = out.get("heads")
        elif col == "kv_heads" and re.match(r"^\s*mqa\b", text, re.I):
            out[col] = "1"
        elif col in ("vpp", "cp", "ep") and _NO_DEGREE.match(text):
            out[col] = "1"
        elif col in ("global_batch_seqs", "vocab") and re.fullmatch(
                r"\s*\d[\d,]*(?:\s*(?:→|->)\s*\d[\d,]*)+(?![\d.kKmM])\s*(?:[,;]?\s*[A-Za-z(][^→]*)?", text):
            # a ramp or a padding (192→4224 warm-up, 50257 → 51200): the value the run settled on
            chain = re.match(r"\s*(\d[\d,]*(?:\s*(?:→|->)\s*\d[\d,]*)+)", text).group(1)
            vals = [v.replace(",", "") for v in re.findall(r"\d[\d,]*", chain)]
            tail = text[len(chain) + text.index(chain):]
            said = [v for v in re.findall(r"(?<![\w.])\d[\d,]*(?![\w.])", tail) if v.replace(",", "") in vals] if re.search(
                r"measur\w*|report\w*|benchmark\w*|tim(?:ed|ing)|throughput\s+at", tail, re.I) else []
            out[col] = said[0].replace(",", "") if said else vals[-1]  # "2048 → 4096 (measured at 2048)"
        elif col == "global_batch_seqs" and (ramp := re.fullmatch(
                r"\s*ramp(?:ed|s|ing)?(?:[-\s]?up)?\s+(?:from\s+\d[\d,]*\s+)?(?:up\s+)?to\s+(\d[\d,]*)(?![\d.kKmM])"
                r"\s*(?:sequences|seqs|samples)?\s*(?:\([^)\d]*\))?\s*", text, re.I)):  # a number in the comment: refused
            out[col] = ramp.group(1).replace(",", "")  # "ramped to 1920": the batch the run settled on, as 192→1920
        elif col in ("tp", "pp") and _NO_DEGREE_WORDS.match(text):
            out[col] = "1"
        elif col == "vpp" and re.match(r"^\s*interleaved\b[^\d]*$", text, re.I):
            if _stated(text, r"interleaved") is True and not re.search(
                    r"not\s+used|unused|\bno\b|\boff\b|disabled|false", text, re.I):
                out[col] = None  # interleaved without its depth: the default rule's depth
                out["_interleaved_named"] = True
            else:
                out[col] = "1"  # "interleaved: no", "interleaved (not used)"
        elif col == "moe_experts" and _NO_MOE.match(text):
            out["moe_experts"] = out["moe_topk"] = None
        elif col == "moe_topk" and _NO_MOE.match(text):
            out[col] = None  # not published: the default top-1 (dense when there are no experts)
        elif col == "kv_heads" and re.match(r"^\s*MLA\b", text, re.I) and catalogue_model(out.get("model")) and \
                catalog.models()[catalogue_model(out.get("model"))].mla:
            out[col] = None  # multi-head latent attention: the catalogue model states it
        elif col == "vpp" and re.match(r"^\s*(\d+)\s*layers?\s*(?:per|/)\s*(?:virtual\s*)?(?:stage|chunk)", text, re.I):
            out[col] = None
            out["_layers_per_vstage"] = int(re.match(r"^\s*(\d+)", text).group(1))
        elif col == "kv_heads" and re.match(r"^\s*multi[- ]?query\b", text, re.I):
            out[col] = "1"
        elif col == "kv_heads" and re.match(r"^\s*multi[- ]?head\b", text, re.I):
            out[col] = out.get("heads")
        elif col == "ffn" and _FFN_MULTIPLE.match(text):
            out[col] = _ffn_multiple(text, out.get("hidden"))
        elif col == "moe_experts" and _routed_count(text) and _routed_total_stated(text):
            out[col] = "unclear: " + text
        elif col == "moe_experts" and _routed_count(text):
            out[col] = _routed_count(text)
            if _SHARED_EXPERTS.search(text):
                out["_shared_experts"] = int(_SHARED_EXPERTS.search(text).group(1))
        elif col == "dp" and re.match(r"^\s*(?:auto|derived|rest|fsdp|ddp|-)", text, re.I):
            out[col] = None
    # a micro-batch written as a token count ("16384 tokens", "16K tokens"): whole sequences of the
    # row's length, else refused (found by review 17a: "16384 tokens" was 16,384 sequences)
    mb = out.get("micro_batch")
    if not _blank(mb) and _BATCH_IN_TOKENS.match(str(mb)):
        s = _int(out.get("seq_len"))
        tok = _tokens(str(mb), s)
        out["micro_batch"] = (str(int(tok) // s) if s and math.isfinite(tok) and tok >= s and tok % s == 0 else
                              f"unclear: {mb} (a token count that is not a whole number of {s or '?'}-token sequences)")
    return out


#: A batch cell that counts tokens: one number (``262,144``, ``256K``, ``4M``, ``~4 million``)
#: and then the word ``tokens`` / ``tok`` (not ``tokens/s``); ``32 x 8192 tokens`` and ``32
#: (262,144 tokens)`` count sequences first and do not match.
_BATCH_IN_TOKENS = re.compile(r"^\s*" + _NUM_QUALIFIER + r"\s*\d[\d,]*(?:\.\d+)?\s*(?:[kKmM]|million|thousand)?\s*"
                              r"(?:tokens?|tok)\b(?!\s*(?:/|per\s+s(?:ec\w*)?\b))", re.I)


def _sp_comment(c: str) -> bool | None:
    """SP as an item of a TP cell's comment states it (``no SP``, ``SP off``, ``SP=False``, ``+SP``,
    ``w/ SP``, ``Megatron SP``, ``SP, overlap``); None when no item is about SP."""
    sp = r"(?:\+\s*|w/\s*|with\s+|megatron\s+)?(?:SP|seq(?:uence|\.)?[ -]?parallel\w*)"
    for item in re.split(r"[,;]", c):
        if re.fullmatch(r"\s*(?:no|without|w/o)\s+(?:SP|seq(?:uence|\.)?[ -]?parallel\w*)\s*", item, re.I):
            return False
        m = re.fullmatch(r"\s*" + sp + r"\s*(?:[:=]\s*|\s+)?(on|off|true|false|yes|no|y|n|0|1|enabled?|disabled?|none|✓|✔|✗|✘|-)?\s*", item, re.I)
        if m:
            return (m.group(1) or "on").lower() in ("on", "true", "yes", "y", "1", "enable", "enabled", "✓", "✔")
    return None


def _ffn_multiple(text: str, hidden) -> str:
    """An FFN cell written as a multiple (:data:`_FFN_MULTIPLE`) → the width as digits, rounded
    to a whole number; text the reader refuses when the hidden size it multiplies is unknown."""
    m = _FFN_MULTIPLE.match(text)
    mult = float(m.group(1)) / (float(m.group(2)) if m.group(2) else 1.0)
    base = _int(m.group(4)) if m.group(4) else _int(hidden)
    if base is None:
        return f"{text} (no hidden size to multiply)"
    return str(int(round(mult * base)))


_KEY = re.compile(r"[^a-z0-9]")


def catalogue_model(name) -> str | None:
    """Model preset id (``presets/models.json``) whose id or name equals the row's model name
    once lower-cased with everything but letters and digits removed, a comment in parentheses
    aside (``DeepSeekV3 (tokendrop)`` → ``deepseek-v3``, ``Qwen3_30B_a3B`` → ``qwen3-30b-a3b``),
    or is followed only by a size (``DeepSeek V3 671B``); None when none does."""
    if re.search(r"\([^)]*(?:\b(?:proxy|truncated|reduced|toy|subset|pruned|mini|tiny|scaled|small|shallow|half|depth"
                 r"|num_layers)\b|\d+-layer|\blayers?\s*[:=]|\blayers?\s+\d|\d+\s+of\s+\d+\s+layers?)", str(name), re.I):
        return None  # "Llama 3 70B (proxy, 4 layers)", "(scaled to 8B)", "(8 of 80 layers)": not the preset's shape
    full = _KEY.sub("", str(name).lower())
    key = _KEY.sub("", re.sub(r"\([^)]*\)", " ", str(name)).lower())
    if not key:
        return None
    keys = {mid: tuple(k for k in (_KEY.sub("", mid.lower()), _KEY.sub("", spec.name.lower()),
                                   _KEY.sub("", re.sub(r"\([^)]*\)", " ", spec.name).lower())) if k)
            for mid, spec in catalog.models().items()}
    layers = re.search(r"\([^)]*?(\d+)\s*layers?\b", str(name), re.I)
    for cand in (full, key):
        for mid, ks in keys.items():
            if cand in ks:
                if layers and int(layers.group(1)) != catalog.models()[mid].n_layers:
                    return None  # "(4 layers)": a cut-down model, not the preset
                experts = re.search(r"\([^)]*?(\d+)\s*experts?\b", str(name), re.I)
                spec = catalog.models()[mid]
                size = re.search(r"\([^)]*?(?<![\w.])(\d+(?:\.\d+)?)\s*([BM])\b(?!\s*(?:active|activated|tokens?|batch|acc))",
                                 str(name))
                if size and abs(float(size.group(1)) * (1e-3 if size.group(2) == "M" else 1.0)
                                / _preset_params_b(mid) - 1.0) > 0.1:
                    return None  # "Llama 3 70B (8B)": another size
                hid = re.search(r"\([^)]*?(?<!ffn )(?<!intermediate )\bhidden\s*[=:]?\s*(\d+)", str(name), re.I)
                topk = re.search(r"\([^)]*?\btop[-_ ]?(\d+)(?!\s*acc)", str(name), re.I)
                if (hid and int(hid.group(1)) != spec.hidden_size) or (
                        topk and (spec.moe is None or int(topk.group(1)) != spec.moe.top_k)):
                    return None  # "(hidden 4096)", "(top-1)": not the preset's shape
                if experts and (spec.moe is None or int(experts.group(1)) != spec.moe.n_experts):
                    return None  # "Mixtral 8x7B (2 experts)"
                return mid
    # a catalogue name followed only by its size, a version or a variant ("DeepSeek V3 671B",
    # "Mixtral 8x22B v0.1", "Qwen3-235B-A22B-Base"); a size must be the preset's (±10 %)
    for mid, ks in keys.items():
        for k in ks:
            rest = key[len(k):]
            m = re.fullmatch(r"(?=.)(\d+(?:\.\d+)?)?([bm])?(?:a\d+b)?(?:v\d+)?(?:base|instruct|chat)?", rest) \
                if key.startswith(k) else None
            if m and (not m.group(1) or (m.group(2) and abs(float(m.group(1)) * (1e-3 if m.group(2) == "m" else 1.0)
                                                          / _preset_params_b(mid) - 1.0) <= 0.1)):
                return mid
    return None


@lru_cache(maxsize=None)
def _preset_params_b(mid: str) -> float:
    """Total parameters of a catalogue model [billions] (one evaluation on an 8-GPU node)."""
    from . import engine  # noqa: PLC0415 - engine imports this module's neighbours

    r = engine.evaluate({"model": mid, "cluster": {"system": "dgx-h100", "n_gpus": 8}})
    return float(r.results["params_total"]) / 1e9


def _catalogue_architecture(r: dict) -> dict | None:
    """The catalogue architecture of a MoE row (or of a row missing layers, hidden or heads, or
    the ffn of a gated family, e.g. "Llama 2 7B" without its 11,008) whose model name is a catalogue model (:func:`catalogue_model`), as a ModelSpec dict; None
    otherwise, or when any published architecture cell (layers, hidden, heads, kv_heads, vocab,
    ffn — the dense or the expert width —, moe_experts, moe_topk) disagrees with the catalogue's.
    A CSV row cannot state shared experts, leading dense layers, expert width or MLA."""
    mid = catalogue_model(r.get("model"))
    if mid is None:
        return None
    spec = catalog.models()[mid]
    moe_row = _int(r.get("moe_experts")) is not None
    # a row missing part of its shape (layers, hidden, heads; ffn unless the GPT rule ffn = 4h
    # gives it; KV heads and vocabulary have default rules: MHA, Megatron's padded 51,200)
    bare = any(_int(r.get(c)) is None for c in ("layers", "hidden", "heads")) or (
        _int(r.get("ffn")) is None and not _arch(r.get("model", "")).get("gpt"))
    if not (moe_row or bare) or (moe_row and spec.moe is None):
        return None
    moe = spec.moe
    published = (("layers", spec.n_layers), ("hidden", spec.hidden_size), ("heads", spec.n_heads),
                 ("kv_heads", spec.n_kv_heads or spec.n_heads), ("vocab", spec.vocab_size),
                 ("ffn", (spec.ffn_hidden_size, moe.expert_ffn_hidden_size) if moe else spec.ffn_hidden_size),
                 ("moe_experts", moe.n_experts if moe else None), ("moe_topk", moe.top_k if moe else None))
    for col, val in published:
        cell = _int(r.get(col))
        if cell is not None and cell not in (val if isinstance(val, tuple) else (val,)):
            return None
    return spec.model_dump(exclude_none=True)


def row_to_scenario(r: dict, used: list | None = None) -> tuple[Scenario | None, str]:
    """One CSV row (dict) → (Scenario, "") or (None, reason it is skipped).

    Applies the default rule of the module docstring to every cell the row leaves empty; this
    is the only place that rule lives (validation, calibration and the memory test use it).
    ``used``: a list the settings the default rules filled are appended to, as ``"label value"``
    strings (``"micro-batch 1"``, ``"ZeRO 1"``, ``"vpp 12 (interleaved named)"``, ``"flash
    attention on (source year)"``) — only those no cell of the row stated (an FSDP dp cell
    states ZeRO 3; "TP=4, SP" states SP).
    """
    used = [] if used is None else used
    hybrid = " ".join(str(r.get(c) or "") for c in ("moe_experts", "model"))
    if _DENSE_MOE_HYBRID.search(hybrid):
        return None, (f"a dense-MoE hybrid ({hybrid.strip()!r}: a dense MLP beside the experts in every layer, as "
                      "Snowflake Arctic) is not modelled: run as a plain MoE it would leave the dense MLP out")
    r = _clean_int_cells(r)
    unreadable = []  # metric cells that are text: skipped only when no metric can be read
    for col in METRIC_COLUMNS:
        cell = r.get(col)
        v = parse_metric(col, cell)
        text = "" if _is_na(cell) else str(cell).strip()
        if math.isnan(v) and text and not _UNSTATED.match(text.lower()):
            unreadable.append(f"published {col} = {cell!r} " + (
                "is a range or a ramp: write the one value the run measured" if _range_or_ramp(text)
                else "is a comparison, not the run's own value" if _RELATIVE.search(re.sub(r"\([^)]*\)", " ", text))
                else "is not a number this column can read"))
            continue
        if not math.isnan(v) and not (math.isfinite(v) and v > 0):
            return None, f"published {col} = {cell!r} is not a positive finite number"
        if col == "tflops_per_gpu" and re.search(r"gflop|gf/s", text, re.I):
            return None, f"published {col} = {cell!r} is in another unit than TFLOP/s"
        if col in ("mfu_pct", "hfu_pct") and v >= 100.0:  # "1": 1 % or a fraction 1.0? "100": all of peak
            return None, f"published {col} = {cell!r} reads as {v:g} % of peak, which no run reaches: write the percent"
    if unreadable and all(math.isnan(parse_metric(c, r.get(c))) for c in METRIC_COLUMNS):
        return None, unreadable[0]
    seqs_given = not math.isnan(parse_number(r.get("global_batch_seqs")))
    for col in _INT_COLUMNS:
        if col == "global_batch_tokens" and seqs_given:
            continue  # the sequences decide; the tokens cell is not read
        cell = r.get(col)
        v = parse_number(cell) if col != "global_batch_tokens" else _tokens(cell, _int(r.get("seq_len")))
        if not math.isnan(v) and math.isfinite(v) and abs(v) >= 2.0**53 and v == round(v):
            # found by review: 9007199254740993 (a whole number) was "not a finite whole number"
            return None, f"{col} = {cell!r} is too large to be a count (below 2^53 = 9,007,199,254,740,992)"
        if not math.isnan(v) and (not math.isfinite(v) or abs(v) >= 2.0**53 or v != round(v)):
            return None, f"{col} = {cell!r} is not a finite whole number"
        text = "" if _is_na(cell) else str(cell).strip()
        if col == "etp" and re.fullmatch(r"(?:no\b.*|none|off|false|disabled)", text, re.I):
            # "none" / "no" / "off": no expert TP (1) or not stated (= tp)? Refused rather than guessed
            return None, (f"etp = {cell!r} is ambiguous: write 1 for experts not split by tensor parallelism, "
                          "or leave the cell empty for etp = tp (Megatron-Core's default)")
        if math.isnan(v) and text and not _UNSTATED.match(text.lower()) and not (
                col == "gpu_count" and (_NODES.search(text) or _gpu_count(text, 1) is not None)):
            if _range_or_ramp(text):
                return None, f"{col} = {cell!r} is a range or a ramp: write the one value the run used"
            eg = {"tp": "8", "pp": "4", "dp": "64", "cp": "2", "ep": "8", "etp": "1", "vpp": "2", "gpu_count": "1024",
                  "micro_batch": "1", "grad_accum": "8"}.get(col, "8192")
            return None, f"{col} = {cell!r} is not a number this column can read (write the number in full, e.g. {eg})"
        if col in ("tp", "pp", "dp", "cp", "ep", "etp", "vpp") and re.match(r"^\s*\d+\s*(?:/|[x×*])\s*\d", text):
            return None, f"{col} = {cell!r} names several degrees: write each in its own column (or label them, TP/PP/DP = 8/12/32)"
        if not math.isnan(v) and v < 1 and col in _POSITIVE_COLUMNS:
            return None, f"{col} = {cell!r} must be at least 1"
    system = system_for_gpu(r.get("gpu"), r.get("interconnect") or "")
    if system is None and _blank(r.get("gpu")):
        return None, "the gpu cell is empty: name the accelerator (e.g. H100-SXM5-80GB)"
    if system is None:  # before the architecture: a TPU row is refused for its accelerator
        return None, f"no system for GPU '{r.get('gpu')}'"
    cat = _catalogue_architecture(r)
    need = {"layers": r.get("layers"), "hidden": r.get("hidden"), "heads": r.get("heads"),
            "ffn": r.get("ffn"), "seq_len": r.get("seq_len")}
    if cat is not None:
        need.update(layers=cat["n_layers"], hidden=cat["hidden_size"], heads=cat["n_heads"],
                    ffn=cat["ffn_hidden_size"])
    elif _int(need["ffn"]) is None and _int(need["hidden"]) is not None and _arch(r.get("model", "")).get("gpt"):
        need["ffn"] = 4 * _int(need["hidden"])  # GPT-2 / GPT-3 / Megatron GPT: ffn = 4h by construction
    missing = [k for k, v in need.items() if _int(v) is None]
    if missing:
        # the sequence length is not architecture (review 38: an empty or "nan" seq_len read
        # "architecture not published: seq_len"); pandas reads "nan" as an empty cell
        arch = [k for k in missing if k != "seq_len"]
        parts = ([f"architecture not published: {', '.join(arch)}"] if arch else []) + (
            ["seq_len not published (the sequence length in tokens, e.g. 4096)"] if "seq_len" in missing else [])
        return None, "; ".join(parts)
    L, h, a, f, s = (_int(need[k]) for k in ("layers", "hidden", "heads", "ffn", "seq_len"))
    B = _int(r.get("global_batch_seqs"))
    if B is None:
        tok = _tokens(r.get("global_batch_tokens"), s)
        if math.isfinite(tok) and tok < s:
            return None, f"global_batch_tokens = {r.get('global_batch_tokens')!r} is less than one sequence of {s}"
        B = int(round(tok / s)) if math.isfinite(tok) else None
    sys_spec = catalog.systems()[system]
    rack = sys_spec.nvlink_domain_size if sys_spec.nvlink_domain_size > sys_spec.gpus_per_node else None
    n = _gpu_count(r.get("gpu_count"), _stated_gpus_per_node(r) or sys_spec.gpus_per_node, rack)
    machines = _machine_count(str(r.get("gpu_count") or "")) or (1 if re.match(
        r"\s*(?:a|one|single|1)\s+(?:node|host|server|machine)\b", str(r.get("gpu_count") or ""), re.I) else None)
    if system == "dgx1-v100" and n and machines and n == 16 * machines:
        # "16 GPUs (1 node)", "1 node x 16 V100": 16 V100 in one machine is a DGX-2 / HGX-2 (NVSwitch)
        system, sys_spec = "dgx2-v100", catalog.systems()["dgx2-v100"]
    if n is None and r.get("gpu_count") in (None, "") and r.get("gpu") and not re.search(
            r"\bper\b|\b(?:nodes?|hosts?|servers?|systems?|boxes)\b", str(r.get("gpu")), re.I):
        lead = re.match(r"^\s*(\d[\d,]*)\s*[x×]\s*\S", str(r.get("gpu")))
        n = int(lead.group(1).replace(",", "")) if lead else None  # "8x H100" in the gpu cell
    tp, pp = _int(r.get("tp")), _int(r.get("pp"))
    if n is None or tp is None or pp is None:
        missing = [k for k, v in (("tp", tp), ("pp", pp), ("gpu_count", n)) if v is None]
        return None, f"parallel split or GPU count not published: {', '.join(missing)} (write 1 for a degree not used)"
    cp = _int(r.get("cp")) or 1
    dp = _int(r.get("dp")) or (n // (tp * pp * cp))
    if r.get("_dp_fsdp") and tp * pp * cp * dp != n:
        dp = n // (tp * pp * cp)  # "FSDP 4" on 8 GPUs: a shard group, not the DP degree
    if dp < 1:
        return None, f"tp·pp·cp = {tp * pp * cp} exceeds the {n} GPUs"
    mbs = _int(r.get("micro_batch")) or 1
    if r.get("_local_batch") and pp > 1:
        return None, ("TorchTitan's local_batch_size is split into pipeline micro-batches "
                      "(pipeline_parallel_microbatch_size) when pp > 1: write the micro-batch")
    bcol = "global_batch_seqs" if seqs_given else "global_batch_tokens"
    scope = _batch_scope(r.get(bcol))
    if scope is not None and B is not None:  # "2 per GPU": one rank's batch, not the global one
        cell = r.get(bcol)
        if scope == "other":
            return None, f"{bcol} = {cell!r} is not the global batch (per node, host, …): write the global batch"
        if scope == "mixed":
            return None, f"{bcol} = {cell!r} states a per-GPU batch beside another figure: write the global batch"
        if scope == "gpu" and tp * pp * cp != 1:
            return None, (f"{bcol} = {cell!r} is per GPU and the GPUs are split tp·pp·cp = "
                          f"{tp * pp * cp}: write the global batch")
        ga_v = parse_number(r.get("grad_accum"))
        fractional = math.isfinite(ga_v) and ga_v != round(ga_v)  # "2.5": no count of steps (_micro_and_accum)
        ga = _int(r.get("grad_accum"))
        if fractional or (ga and ga > 1):  # HF's per_device_train_batch_size is the micro-batch; MosaicML's
            # per-device batch is micro-batch x accumulation: the published micro-batch says which
            if not fractional and _int(r.get("micro_batch")) is not None and B == mbs:
                B *= ga
            elif fractional or _int(r.get("micro_batch")) is None or B != mbs * ga:
                return None, (f"{bcol} = {cell!r} is per GPU beside grad_accum = {r.get('grad_accum')!r}: "
                              "the micro-batch or the step's batch? write the global batch")
        B *= dp
    if B is None and _micro_and_accum(r):  # "4 per GPU, 4 accumulation steps": mbs · ga · dp sequences
        B = mbs * _micro_and_accum(r) * dp
    if _int(r.get("micro_batch")) is None:
        # the micro-batch the published global batch and accumulation steps imply (B = mbs · ga · dp),
        # else 1 (the default rule)
        ga_v = parse_number(r.get("grad_accum"))
        ga = _int(r.get("grad_accum")) if math.isfinite(ga_v) and ga_v == round(ga_v) else None
        if ga and ga >= 1 and B is not None and B % (dp * ga) == 0 and B // (dp * ga) >= 1:
            mbs = B // (dp * ga)
            used.append(f"micro-batch {mbs} (global batch / (dp · grad_accum))")
        else:
            used.append("micro-batch 1")
    if B is None:  # memory worst case: m = p micro-batches in flight (not timed, see batch_published)
        B = pp * mbs * dp
    kv = _int(r.get("kv_heads")) or a
    V = _int(r.get("vocab")) or DEFAULT_VOCAB
    # architecture fills are defaults too (found by review: an empty vocab moved a row 4.8 %, an
    # empty kv_heads 7.8 %, and the defaults column did not say so)
    # only where the row's own cells build the model: a catalogue architecture replaces them
    # below (review 15e: DeepSeek-V3's row listed "vocab 51,200 (default)" while it ran 129,280)
    if cat is None and _int(r.get("kv_heads")) is None:
        used.append(f"kv_heads {a} (= heads: multi-head attention)")
    if cat is None and _int(r.get("vocab")) is None:
        used.append(f"vocab {DEFAULT_VOCAB:,} (default)")
    arch = _arch(r.get("model", ""))
    is_gpt = arch.pop("gpt", False)
    model = {"name": str(r.get("model", "model")), "n_layers": L, "hidden_size": h, "n_heads": a,
             "n_kv_heads": kv, "ffn_hidden_size": f, "vocab_size": V, **arch,
             "learned_pos_embeddings": s if is_gpt else 0}
    E = _int(r.get("moe_experts"))
    if E:
        model["moe"] = {"n_experts": E, "top_k": _int(r.get("moe_topk")) or 1, "expert_ffn_hidden_size": f}
        if r.get("_shared_experts"):
            model["moe"].update(n_shared_experts=int(r["_shared_experts"]), shared_expert_ffn_hidden_size=f)
    if cat is not None:
        model = cat
    elif is_gpt and not _GPT_NAMES.search(str(r.get("model", ""))):
        # a name no family rule knows takes the GPT block: said, as it moves the prediction (found by
        # review: "Llama 3 405B" renamed went from 446 to 434 TFLOP/s without a word)
        used.append("GPT block (model name not a known family: LayerNorm, GeLU MLP, biases, learned "
                    "positions, dropout 0.1)")
    rc_text = "" if r.get("recompute") is None else str(r.get("recompute")).lower()
    fw = row_settings(r)
    try:
        sp_cell = parse_bool_cell(r.get("sp"))
    except ValueError as e:
        return None, f"sp {e}"
    if sp_cell is None and r.get("_tp_sp") is not None:
        sp_cell = bool(r["_tp_sp"])  # "TP=4, SP", "TP=4 (no SP)"
    sp = sp_cell if sp_cell is not None else ("sequence parallel" in rc_text or (tp > 1 and fw["sp_default"]))
    if sp_cell is None and tp > 1 and "sequence parallel" not in rc_text:
        used.append(f"SP {'on' if sp else 'off'}")
    vpp = _int(r.get("vpp"))
    if vpp is None and r.get("_layers_per_vstage") and pp > 1:  # "2 layers per virtual stage"
        vpp = max(1, L // (pp * int(r["_layers_per_vstage"])))
    if vpp is None:
        text = " ".join(str(r.get(k) or "") for k in ("source", "notes"))
        deep = max(2, L // (pp * DEFAULT_LAYERS_PER_VIRTUAL_STAGE))
        named = pp > 1 and pp * deep <= L and (bool(_INTERLEAVED.search(text)) or bool(r.get("_interleaved_named")))
        vpp = deep if named else 1
        if pp > 1 and not r.get("_schedule"):
            used.append(f"vpp {vpp}" + (" (interleaved named, default depth)" if named else ""))
    if r.get("_schedule") and vpp > 1:
        return None, f"pp = {r.get('pp')!r} names the {r['_schedule']} schedule beside vpp = {vpp}: which one ran?"
    # A published batch that dp · micro-batch (· pp when interleaved) does not divide — papers
    # round it or ramp it — is taken as the nearest multiple (at least one).
    unit = dp * mbs * (pp if vpp > 1 else 1)
    if B % unit and abs(max(1, round(B / unit)) * unit - B) <= BATCH_ROUNDING_MAX * B:
        B = max(1, round(B / unit)) * unit
    try:
        zero = parse_zero_stage(r.get("zero_stage"))
        if zero is None and r.get("_dp_fsdp"):
            zero = 3  # "FSDP 8" in the dp cell: fully sharded
        if zero is None:
            zero = fw["zero_stage"]
            used.append(f"ZeRO {zero}")
        group = parse_shard_group(r.get("zero_stage")) if zero >= 1 else None
        shard = None
        if group is not None:  # a group of GPUs holds group / (tp·cp) data-parallel ranks
            shard = group[0] if group[1] == "ranks" else (group[0] // (tp * cp) if group[0] % (tp * cp) == 0 else None)
        dp_shard = shard if shard is not None and shard < dp and dp % shard == 0 else None
        prec = parse_precision(r.get("precision"))
        fp8_scaling = parse_fp8_scaling(r.get("precision")) if prec == "fp8" else "tensorwise"
        recompute = parse_recompute(r.get("recompute"))
        if _unstated(r.get("recompute")):
            used.append(f"recompute {recompute}")
    except ValueError as e:
        return None, str(e)
    sys_ = catalog.systems()[system]
    if prec == "bf16" and "bf16" not in catalog.accelerators()[sys_.accelerator].peak_flop_per_s:
        ptext = str(r.get("precision") or "").lower()
        if (_mentions(ptext, r"bf16|bfloat16")[0] and not _mentions(ptext, r"fp16|(?<!b)float16")[0]
                and not re.search(r"inferred|assumed|not stated|unsure|guess", ptext)):
            return None, (f"precision '{r.get('precision')}' on {r.get('gpu')}: the accelerator has no BF16 units "
                          "(fp16 is what ran; correct the row)")
        prec = "fp16"  # V100: no BF16 units; unstated 16-bit mixed precision there is fp16 (same bytes)
    # every k-th layer in full (TorchTitan's layer SAC): the first ceil(chunk / k) layers of each
    # pipeline chunk, the same count (Megatron's block method); k = 1 is full recompute; a
    # selective cell ("--recompute-activations, every 2nd layer") keeps every layer's selective
    k_every = layer_sac_every(r.get("recompute")) if recompute == "full" else None
    chunk = -(-L // (pp * vpp))
    rec_layers = -(-chunk // k_every) if k_every and k_every > 1 else None
    n_block = block_recompute_layers(r.get("recompute")) if recompute == "full" else None
    if n_block is not None:  # Megatron's block method: N layers of each chunk (all when N >= the chunk)
        rec_layers = n_block if n_block < chunk else None
    grad_dtype = fw["grad_dtype"]
    if grad_dtype == "bf16" and "bf16" not in catalog.accelerators()[sys_.accelerator].peak_flop_per_s:
        grad_dtype = "fp32"
    scen = {
        "name": str(r.get("run_id", "")),
        "model": model,
        "training": {"seq_len": s, "global_batch_size": B, "micro_batch_size": mbs, "precision": prec,
                     "grad_dtype": grad_dtype, "cross_entropy": fw["cross_entropy"],
                     "elementwise": fw["elementwise"], "fp8_scaling": fp8_scaling,
                     "fp8_attention": prec in ("fp8", "fp4") and parse_fp8_attention(r.get("precision"))},
        "parallelism": {"tp": tp, "pp": pp, "dp": dp, "cp": cp, "ep": _int(r.get("ep")) or 1, "vpp": vpp,
                        "etp": _int(r.get("etp")),  # empty / no column: None = tp (Megatron-Core's default)
                        "schedule": "interleaved" if vpp > 1 else r.get("_schedule") or "1f1b", "sequence_parallel": sp,
                        "zero_stage": zero, "dp_shard": dp_shard,
                        "offload_activations": parse_activation_offload(r.get("recompute")),
                        "recompute": recompute, "recompute_layers": rec_layers,
                        "flash_attention": fw["flash_attention"], "attention_kernel": fw["attention_kernel"],
                        "tp_comm_overlap": fw["tp_comm_overlap"], "dp_comm_overlap": fw["dp_comm_overlap"],
                        # stated, else on with DualPipe (its point: the all-to-all beside the other
                        # direction's compute, DeepSeek-V3 §3.2.1), else off
                        "ep_comm_overlap": (fw["ep_comm_overlap"] if fw["ep_comm_overlap"] is not None
                                            else r.get("_schedule") == "dualpipe"),
                        "ep_node_dispatch": fw.get("ep_node_dispatch", False),
                        "layer_split": "uneven" if L % (pp * vpp) else "even"},
        "cluster": {"system": _node_as_stated(system, _stated_gpus_per_node(r), used, tp), "n_gpus": n},
    }
    overrides = {}
    nic = network_bw_per_gpu(r.get("interconnect"), _stated_gpus_per_node(r) or sys_.gpus_per_node)
    if nic is not None:
        overrides["nic_bw_per_gpu_bytes_per_s"] = nic
    elif not _blank(r.get("interconnect")) and sys_.nic_bw_per_gpu_bytes_per_s is not None:
        # the text is there but states no rate read as one: say that the catalogue's is used (review
        # 15h: "4 * 100Gb RoCE per node" was ignored without a word in the defaults column)
        used.append(f"network {sys_.nic_bw_per_gpu_bytes_per_s * 8 / 1e9:g} Gb/s per GPU (the system's; no rate "
                    "read from the interconnect cell)")
    hbm = hbm_override_for_gpu(r.get("gpu"))
    if hbm is not None:
        overrides["hbm_usable_bytes"] = hbm
    if overrides:
        scen["cluster"]["overrides"] = overrides
    if fw["elementwise_by_rule"]:
        # the framework rule, not a statement (review 19: a TorchTitan row without a torch.compile
        # statement runs its norms, RoPE, SwiGLU and loss as eager PyTorch ops, −13 % on an 8-GPU
        # B200 row; the column did not say so)
        used.append("elementwise ops and loss eager (TorchTitan without a torch.compile statement)")
    if flash_statement(r) is None:  # the text names no attention kernel: the source-year rule
        year_known = not _is_na(r.get("source")) and str(r.get("source")).strip()
        used.append(f"flash attention {'on' if fw['flash_attention'] else 'off'} "
                    + ("(source year)" if year_known else "(no source given: the rule for a year not known)"))
    try:
        out = Scenario.model_validate(scen)
    except ValueError as e:  # pydantic.ValidationError is a ValueError
        return None, "invalid scenario: " + "; ".join(format_errors(e))
    if fw["ep_comm_overlap"] is None and out.model.moe is not None and (out.parallelism.ep or 1) > 1:
        # the EP-overlap rule moves a MoE row a lot (review 18d: 46 points on a DualPipe row): say it
        used.append("EP all-to-all overlap on (DualPipe)" if scen["parallelism"]["ep_comm_overlap"]
                    else "EP all-to-all overlap off (not stated)")
    return out, ""


def _semicolon_cell(v):
    """A non-integer cell of a ;-separated file: decimal commas made points (``137,0`` →
    ``137.0``); a comma followed by exactly three digits (``5,762``: 5.762 or 5,762?) marked
    ambiguous so the row is refused naming it; numbers without a comma as written. Integer
    columns are read as in any file (``16,384`` = 16,384)."""
    if not isinstance(v, str):
        return v
    if re.match(r"^\s*[~≈]?\s*-?\d{1,3}(?:,\d{3})+(?![\d,])", v):
        return f"ambiguous decimal comma: {v.strip()}"
    return re.sub(r"^(\s*[~≈]?\s*-?\d+),(\d+)(?![\d,])", r"\1.\2", v)


#: The first bytes of files that are not CSV text: what they are, for the message.
_NOT_CSV_MAGIC = ((b"PK\x03\x04", "a zip archive (an Excel .xlsx / OpenDocument workbook?)"),
                  (b"\xd0\xcf\x11\xe0", "an old Excel .xls workbook"),
                  (b"%PDF", "a PDF document"), (b"\x1f\x8b", "gzip-compressed (name it .csv.gz)"))


def _sniff_encoding(raw: bytes) -> str | None:
    """The text encoding the first bytes of a file show: ``utf-16`` for a UTF-16 byte-order mark
    (Excel's "Unicode Text"), ``utf-16-le`` / ``utf-16-be`` for UTF-16 without one (every other
    byte NUL), None for UTF-8 and the 8-bit encodings (read as before)."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    head = raw[:200]
    if len(head) >= 4 and head[1::2].count(0) >= len(head) // 2 * 0.9:
        return "utf-16-le"
    if len(head) >= 4 and head[0::2].count(0) >= len(head) // 2 * 0.9:
        return "utf-16-be"
    return None


def _not_a_csv(path, raw: bytes, df_columns) -> str:
    """The message for a file none of whose header cells is a calibration column: what the file
    looks like (a workbook, JSON, binary data, a title line above the header), in one line."""
    what = next((w for magic, w in _NOT_CSV_MAGIC if raw.startswith(magic)), None)
    if what is None and b"\x00" in raw[:4096]:
        what = "binary data, not text"
    if what is None and raw.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"["):
        what = "JSON, not CSV"
    if what is not None:
        return f"the file is {what}: save it as CSV (UTF-8) with the columns of calibration.csv"
    text = raw[:65536].decode("utf-8", errors="replace").splitlines()
    for k, line in enumerate(text[1:20], start=2):  # a title line above the header
        cells = {c.strip().strip('"').lower() for c in re.split(r"[,;\t]", line)}
        if {"run_id", "gpu", "tp"} <= cells:
            return (f"the header is on line {k}, not line 1: delete the line(s) above it "
                    "(the first line must name the columns of calibration.csv)")
    first = ", ".join(repr(str(c)) for c in list(df_columns)[:3])
    return (f"the first line names none of the columns of calibration.csv (it starts {first}); "
            f"expected a header with {', '.join(REQUIRED_COLUMNS[:4])}, ... (comma-, semicolon- or tab-separated)")


#: Column of a record that had more cells than the header (the reason it is skipped).
_READ_ERROR = "_read_error"
#: Column of a record that had fewer cells than the header (added to the reason if it is skipped).
_READ_NOTE = "_read_note"


def _csv_records(path: Path, enc: str | None, sep: str) -> list[tuple[int, int]] | None:
    """(first line, cells) of every record of the file, the header's included, as the csv module
    splits them (quoted cells kept together across lines; a blank line is a record of 0 cells);
    None when the file cannot be read that way."""
    out: list[tuple[int, int]] = []
    try:
        with open(path, newline="", encoding=enc or "utf-8", errors="replace") as fh:
            reader = csv.reader(fh, delimiter=sep)
            prev = 0
            for rec in reader:
                out.append((prev + 1, len(rec) if rec and (len(rec) > 1 or rec[0].strip()) else 0))
                prev = reader.line_num
    except (OSError, csv.Error, UnicodeError):
        return None
    return out


def _parser_error_text(e: Exception, records: list[tuple[int, int]] | None = None) -> str:
    """pandas' ParserError in words a CSV's author can act on (review 20: "EOF inside string
    starting at row 3" was shown as it came). pandas counts records there (a blank line is one, a
    quoted cell across lines is not another), so the line is looked up in ``records``
    (:func:`_csv_records`)."""
    text = " ".join(str(e).split())
    m = re.search(r"EOF inside string starting at row (\d+)", text)
    if m:
        row = int(m.group(1))
        line = records[row][0] if records is not None and row < len(records) else row + 1
        return (f"a quote (\") opened on line {line} is never closed (every quoted cell needs its "
                f"closing quote); pandas: {text}")
    return text


def _read(csv_path) -> pd.DataFrame:
    path = Path(csv_path) if csv_path is not None else DEFAULT_CSV
    if csv_path is None and not path.is_file():
        raise ValueError(f"the calibration file {path} is not there (it lives in ../shared/validation/ "
                         "beside the repository); give a file of the same columns with --csv")
    with open(path, "rb") as fh:  # the header line decides the separator
        raw = fh.read(65536)
    compressed = str(path).lower().endswith((".gz", ".bz2", ".zip", ".xz", ".zst", ".tar"))
    if not compressed and not raw.strip(b"\xef\xbb\xbf \t\r\n"):
        raise ValueError("the file is empty (expected a header with the columns of calibration.csv, then one row per run)")
    enc = None if compressed else _sniff_encoding(raw)
    bad: list[list[str]] = []  # records with more cells than the header, skipped with the reason
    _recs: list = []

    def records() -> list[tuple[int, int]] | None:  # the csv module's records, read once on demand
        if not _recs:
            _recs.append(None if compressed else _csv_records(path, enc, sep))
        return _recs[0]

    def read(**kw):
        if enc is not None:
            kw["encoding"] = enc

        def parse(**more):
            bad.clear()
            if "dtype" not in kw and "dtype" not in more and rid_cols:
                # run ids as written ("001", "1e3"), never numbers (review 18d: an all-numeric id
                # column read as 1.0 and 1000.0, so --run 001 found no run)
                more = {**more, "dtype": {c: str for c in rid_cols}}
            try:
                return pd.read_csv(path, **kw, **more)
            except UnicodeDecodeError:  # a file saved by a spreadsheet in Windows-1252 / Latin-1
                bad.clear()
                return pd.read_csv(path, **{**kw, "encoding": "cp1252", "encoding_errors": "replace"}, **more)

        def lenient():
            # a record with more cells than the header (an unquoted separator in a notes cell):
            # read the others, and keep that one as a row skipped with the reason; extra cells
            # that are all empty (a trailing separator) are dropped. The header line is read as a
            # row of its own, so that pandas never takes a longer first record's leading cells
            # for an index (which shifted every row's cells one column or more).
            columns = parse(nrows=0).columns
            width = len(columns)

            def keep_bad(fields):
                if all(not str(f).strip() for f in fields[width:]):
                    return fields[:width]
                bad.append(fields)
                return [f"\x00bad{len(bad) - 1}"] + [None] * (width - 1)

            try:
                d = parse(engine="python", header=None, names=list(range(width)), on_bad_lines=keep_bad,
                          **({} if "dtype" in kw else {"dtype": str}))
            except pd.errors.ParserError as e2:
                raise ValueError(f"the file cannot be read as CSV: {_parser_error_text(e2, records())}") from None
            d = d.iloc[1:]
            recs = records()
            if recs is not None and len(d) < sum(1 for _, n in recs[1:] if n):
                # pandas' python engine leaves out a record it cannot split (a quote opened in a
                # cell runs on over the next lines) without a word (review 20c: two runs vanished)
                line, n = next(((ln, n) for ln, n in recs[1:] if n > width), (None, None))
                where = (f"line {line} runs on over the lines after it ({n} cells where the header has {width})"
                         if line else "a record could not be split into cells")
                raise ValueError(f"the file cannot be read as CSV: {where}: a quote (\") opened in a cell and "
                                 "not closed where the cell ends?")
            d.index = d.index - 1
            d.columns = columns
            if "dtype" not in kw:  # numbers as the default reading gives them (run ids stay text)
                for c in d.columns:
                    if c in rid_cols:
                        continue
                    try:
                        d[c] = pd.to_numeric(d[c])
                    except (ValueError, TypeError):
                        pass
            return d

        try:
            d = parse()
        except pd.errors.EmptyDataError:
            raise ValueError("the file has no header line (expected the columns of calibration.csv)") from None
        except pd.errors.ParserError as e:
            if "Expected" not in str(e) or "fields" not in str(e):
                raise ValueError(f"the file cannot be read as CSV: {_parser_error_text(e, records())}") from None
            return lenient()
        return d if isinstance(d.index, pd.RangeIndex) else lenient()  # a first record longer than the header

    head = (raw.decode(enc, errors="replace") if enc else raw.decode("utf-8", errors="replace")).lstrip("\ufeff")
    head = head.splitlines()[0] if head.strip() else ""
    sep = max((",", ";", "\t"), key=head.count) if head.strip() else ","
    try:  # the header's own spelling of the run id column(s): read as text
        rid_cols = [c for c in next(csv.reader([head], delimiter=sep)) if c.strip().lower() == "run_id"]
    except (csv.Error, StopIteration):
        rid_cols = []
    df = read() if sep == "," else None
    if sep != ",":  # ; or tab separated
        semi = sep == ";"
        # a ;-separated file is written where the decimal mark is a comma: "137,0" is 137.0;
        # "5,762" (three digits after the comma) could be either and is refused
        df = read(sep=";", dtype=str) if semi else read(sep="\t")
        if semi:  # integer columns keep their thousands separators (a width is never 16.384)
            ints = {str(c) for c in df.columns if str(c).strip().lower() in _INT_COLUMNS}
            df = df.apply(lambda col: col if str(col.name) in ints or str(col.name).strip().lower() == "run_id"
                          else col.map(_semicolon_cell))  # run ids as written (review 18f: "2,5" read as 2.5)
    if bad:  # the place holders of the records too long for the header: their reason, and their run id
        first = df.columns[0]
        names = [str(c).strip().lower() for c in df.columns]
        marks = df[first].astype(str).str.startswith("\x00bad")
        df[_READ_ERROR] = None
        df[_READ_ERROR] = df[_READ_ERROR].astype(object)
        for i in df.index[marks]:
            fields = bad[int(str(df.at[i, first])[4:])]
            df.at[i, _READ_ERROR] = (f"the line has {len(fields)} cells where the header has {len(names)} "
                                     "(a separator inside a cell that is not quoted?)")
            for col in ("run_id", "source_key"):
                if col in names:
                    k = names.index(col)
                    df[df.columns[k]] = df[df.columns[k]].astype(object)
                    df.at[i, df.columns[k]] = fields[k] if k < len(fields) and str(fields[k]).strip() else None
            if first not in [df.columns[names.index(c)] for c in ("run_id", "source_key") if c in names]:
                df.at[i, first] = None
    # a record with fewer cells than the header (a line cut short, a quote left open above it):
    # pandas fills the missing cells with nothing, so the row would be skipped for "not
    # published" settings; the count goes with the reason (review 20)
    recs = records()
    counts = None if recs is None else [n for _, n in recs[1:] if n]
    width = len(df.columns) - (_READ_ERROR in df.columns)
    if counts is not None and len(counts) == len(df) and any(n < width for n in counts):
        df[_READ_NOTE] = [f"the line has {n} cells where the header has {width}: cut short, or a quote left open?" if n < width
                          else None for n in counts]
    # header cells as the calibration file writes them: trimmed, lower case ("GPU", "tp "); a
    # column whose name only differs in case from one already there is dropped (the exact name wins)
    names = [str(c).strip().lower() for c in df.columns]
    exact = {str(c) for c in df.columns}
    keep = [i for i, (c, n) in enumerate(zip(df.columns, names))
            if str(c) == n or n not in exact and names.index(n) == i]
    df = df.iloc[:, keep]
    df.columns = [names[i] for i in keep]
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if len(missing) == len(REQUIRED_COLUMNS):
        raise ValueError(_not_a_csv(path, raw, df.columns))
    if missing:
        raise ValueError(f"missing columns {', '.join(missing)} (expected the columns of calibration.csv)")
    # A header naming a column twice: pandas reads the second as "tp.1", which no rule reads, so its
    # cells were silently ignored (found by review). Named with both positions, as the file has them.
    seen: dict[str, int] = {}
    twice: list[str] = []
    for k, cell in enumerate(next(csv.reader([head], delimiter=sep), []), start=1):
        n = cell.strip().strip('"').strip()
        if n and n in seen:
            twice.append(f"'{n}' (columns {seen[n]} and {k})")
        elif n:
            seen[n] = k
    if twice:
        raise ValueError(f"the header names a column twice: {', '.join(twice)}; keep one of each (only the "
                         "first would be read)")
    # a row with no cell at all (",,,,", a spreadsheet's trailing rows) is no run: dropped as a
    # blank line is; the other rows keep their line numbers
    cells = df.drop(columns=[_READ_ERROR, _READ_NOTE], errors="ignore")
    blank = np.ones(len(df), dtype=bool)
    for k in range(cells.shape[1]):
        col = cells.iloc[:, k]
        blank &= col.isna().to_numpy(dtype=bool) | col.astype(str).str.strip().eq("").to_numpy(dtype=bool)
    df = df[~blank]
    if len(df) == 0:
        raise ValueError("the file has a header but no rows")
    # A row without a run id or source key is still a row: name it by its line, group it apart.
    for col, fill in (("run_id", lambda i: f"line {i + 2}"), ("source_key", lambda i: "(no source_key)")):
        empty = df[col].isna() | (df[col].astype(str).str.strip() == "")
        if empty.any():
            df[col] = df[col].astype(object)
            for i in df.index[empty]:
                df.at[i, col] = fill(i)
    return df


#: A batch cell that counts one GPU's share (``2 per GPU``, ``8/GPU``, ``4 per device``,
#: ``2 per H100``, ``2 on each GPU``), one data-parallel replica's (``2 per DP rank``,
#: ``2 per replica``), or another scope (``64 per node``).
_BATCH_UNIT = r"(?:seq(?:uence)?s?|samples?|sentences?|examples?|tokens?|tok)?"
_PER_GPU_BATCH = re.compile(r"^\W*" + _BATCH_UNIT + r"[-\s]*(?:\bper|/|(?:\bon\s+)?\beach)[-\s]*"
                            r"(?:GPU|GCD|HPU|device|accelerator|rank|chip|worker|process|[A-Z]{1,2}\d{3}\w*)s?\b", re.I)
_PER_REPLICA_BATCH = re.compile(r"^\W*" + _BATCH_UNIT + r"[-\s]*(?:\bper|/|(?:\bon\s+)?\beach)[-\s]*"
                                r"(?:(?:(?:model|DP|data[-\s]parallel)[-\s]+)?replica|(?:DP|data[-\s]parallel)[-\s]+(?:rank|group))s?\b", re.I)
_PER_OTHER_BATCH = re.compile(r"^\W*" + _BATCH_UNIT + r"[-\s]*(?:\bper\b|/|(?:\bon\s+)?\beach\b)\s*"
                              r"(?!(?:(?:optimi[sz]\w*|training|gradient|weight|global|mini)[-\s]*)?(?:step|iter|update|batch)"
                              r"|(?:of|with|containing)\b)[A-Za-z]", re.I)


def _batch_scope(cell) -> str | None:
    """What a global-batch cell's leading number counts, read after the number and an optional
    unit (``sequences``, ``tokens``), before any comment: None for the global batch (``1024``,
    ``64 (2 per GPU)``: the comment is about another figure); ``"gpu"`` (``2 per GPU``, ``2
    (per GPU)``), ``"replica"`` (``2 per DP rank``: × dp whatever the model parallelism);
    ``"mixed"`` when a per-GPU / per-replica number has another number beside it (``2 per GPU
    (global 1024)``, ``2 per GPU x 16 accum``); ``"other"`` for another scope (``64 per
    node``), not for a name of the global batch (``per training step``, ``per global batch``,
    ``each of 4096 tokens``)."""
    if cell is None or isinstance(cell, (int, float)):
        return None
    text = str(cell)
    m = _NUM.match(text)
    if not m:
        return None
    rest = text[m.end():]
    head = re.split(r"[(;,]", rest, maxsplit=1)[0]
    comment = rest[len(head):]
    scope = None
    for part in (head, comment if not re.search(r"\d", comment) else ""):
        if re.fullmatch(r"\W*", part):
            continue
        scope = ("replica" if _PER_REPLICA_BATCH.match(part) else "gpu" if _PER_GPU_BATCH.match(part)
                 else "other" if _PER_OTHER_BATCH.match(part) else None)
        if part is comment or scope is not None:
            break
    if scope in ("gpu", "replica") and re.search(r"\d", comment + re.sub(r"[A-Z]{1,2}\d{3}[\w-]*", " ", head)):
        return "mixed"  # "2 per GPU (global 1024)", "2 per GPU x 16 accum"
    return scope


def _micro_and_accum(r: dict) -> int | None:
    """The gradient-accumulation steps of a row that publishes both its micro-batch and its
    accumulation (``grad_accum`` 4 beside ``micro_batch`` 4): the global batch is then
    micro-batch × accumulation × dp; None when either is not published."""
    v = parse_number(r.get("grad_accum"))
    ga = _int(r.get("grad_accum")) if math.isfinite(v) and v == round(v) else None  # "2.5": no count of steps
    return ga if ga and ga >= 1 and _int(r.get("micro_batch")) else None


def batch_published(r: dict) -> bool:
    """Whether a row publishes its global batch (in sequences or tokens), read as
    :func:`row_to_scenario` reads it (``GBS 256``), or its micro-batch and gradient
    accumulation (which give it with dp)."""
    r = _clean_int_cells(r)
    return not (math.isnan(parse_number(r.get("global_batch_seqs")))
                and math.isnan(_tokens(r.get("global_batch_tokens"), _int(r.get("seq_len"))))
                and _micro_and_accum(r) is None)


#: Order of the settings in the defaults note (the order of the parallelism / training inputs).
_DEFAULT_ORDER = ("micro-batch", "recompute", "vpp", "ZeRO", "SP", "flash attention")


def _default_order(item: str) -> int:
    return next((i for i, k in enumerate(_DEFAULT_ORDER) if item.startswith(k)), len(_DEFAULT_ORDER))


def rows_to_scenarios(df: pd.DataFrame, defaults_out: list | None = None
                      ) -> tuple[list[Scenario], list[int], dict[int, str]]:
    """Rows → (scenarios, their row indices, {row index: reason} for the skipped rows).
    ``defaults_out``: a list that gets, per scenario, the settings the default rules filled
    (:func:`row_to_scenario`'s ``used``)."""
    scen, idx, skipped = [], [], {}
    first_of: dict[str, int] = {}
    for i, r in enumerate(df.to_dict("records")):
        r = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
        if r.get(_READ_ERROR):
            skipped[i] = r[_READ_ERROR]
            continue
        rid = str(r.get("run_id", "")).strip()
        if rid and rid in first_of:  # found by review: a repeated row was counted again in the summary
            skipped[i] = f"duplicate run_id (first on data row {first_of[rid] + 1}); only the first is compared"
            continue
        if rid:
            first_of[rid] = i
        r.pop(_READ_ERROR, None)
        short = r.pop(_READ_NOTE, None)
        used: list = []
        s, why = row_to_scenario(r, used)
        if s is None:
            skipped[i] = f"{why}; {short}" if short else why
        else:
            scen.append(s)
            idx.append(i)
            if defaults_out is not None:
                defaults_out.append("; ".join(sorted(used, key=_default_order)))
    return scen, idx, skipped


#: A TFLOP/s or MFU cell that says its count includes the recomputed forward (``117 TFLOPS
#: (HFU)``, ``43.3% (HFU)``, ``incl. recompute``): compared as hardware FLOPs.
_HFU_LABEL = re.compile(r"\s*%?\s*(?:TFLOP/?s|TFLOPS|TF/s|TF)?\s*[(\[,;]?\s*(?:HFU|hardware\s+FLOPs?)\s*[)\]]?\s*", re.I)
_HFU_INCL = re.compile(r"\b(?:incl(?:\.|uding|udes)?|counts?|counting)\s+(?:the\s+)?recomput\w*"
                       r"|\(\s*(?:with|w/)\s*(?:the\s+)?(?:activation\s+)?recomput\w*(?:\s+FLOPs?)?\s*\)", re.I)
_HFU_DOUBT = re.compile(r"\b(?:not|no|excl\w*|without|unknown|would|vs\.?|versus|instead)\b|n't", re.I)


def _aggregate_pflops(cell) -> float:
    """The ``aggregate_pflops`` cell in PFLOP/s: a bare number, or one with its unit (``15.1
    PFLOP/s``, ``1.2 EFLOPS`` = 1,200, ``502 TFLOP/s`` = 0.502); NaN for other text."""
    lead = None if cell is None or isinstance(cell, (int, float)) else re.match(
        r"\s*([EP])(?:FLOP/?s|FLOPS|F/s)\s*[:=]?\s*(?=\d)", str(cell), re.I)
    if lead:  # "PFLOP/s 502 (aggregate)": a whole-job unit written before the number ("TFLOPS 502" is a per-GPU label)
        v = parse_metric("aggregate_pflops", str(cell)[lead.end():])
        return v * (1e3 if lead.group(1).lower() == "e" else 1.0) if math.isfinite(v) else v
    v = parse_metric("aggregate_pflops", cell)
    if not math.isfinite(v) or cell is None or isinstance(cell, (int, float)):
        return v
    num = _NUM.match(str(cell))
    if num is None:
        return math.nan  # a label in front ("TFLOPS 502"): not this column's number
    unit = re.match(r"\s*([EPTG])(?:FLOP|FLOPS|F\b|FLOP/s)", str(cell)[num.end():], re.I)
    return v * {"e": 1e3, "p": 1.0, "t": 1e-3, "g": 1e-6}[unit.group(1).lower()] if unit else v


def _metric_unit(cell) -> str:
    """What follows a metric cell's number up to a comment (``tok/s per node`` of ``26,000 tok/s
    per node (8 GPUs)``); "" for a bare number."""
    if cell is None or isinstance(cell, (int, float)):
        return ""
    text = str(cell)
    m = _NUM.match(text)
    rest = re.sub(r"^\s*[kK](?![a-zA-Z])", "", text[m.end():]) if m else ""
    return re.split(r"[(;,]", rest, maxsplit=1)[0].strip() if m else ""


_SCOPE_WORDS = (r"\b(?:total|aggregate|whole|global|overall|combined|sum|summed|across|entire|fleet|end-to-end|system-wide"
                r"|cluster-wide|job-wide|node-level)\b|^\W*(?:job|cluster|system)\W*$|\b(?:the|full)\s+cluster\b"
                r"|\bsystem\s+throughput\b|\ball\s+(?:\d+\s+)?(?:GPUs|nodes|ranks)\b|\bnot\s+per\s+GPU"
                r"|(?:tok\w*/s|\d|^\W*)\s*(?:/|per)\s*node\b|\bper\s+(?:DGX|HGX|box|\d+\s*[x×]\s*\w+|\d+-GPU)"
                r"|\b(?:one|single)\s+node\b|\bcluster\s*$")
_PER_ACCEL = r"(?:/|per)\s*(?:GPU|GCD|HPU|device|accelerator|[A-Z]{1,2}\d{3}\w*)\b"


#: The unit of a throughput cell: tokens or samples (sequences) per second.
_RATE_UNIT = r"(?:tok(?:en)?s?|samples?|seq(?:uence)?s?)\s*(?:/|per)\s*s(?:ec\w*)?"


def _tokens_scope(cell) -> str | None:
    """What a tokens/s cell's number counts: ``"gpu"`` (per GPU, stated or plain), ``"node"``
    (``26,000 tok/s per node``, ``11.6k (per node)``), ``"total"`` (``92.8k tok/s total``,
    ``(total)``, ``(global)``, ``(whole job)``, ``534,644±1,138 aggregate``, ``5.29 samples/s (global)``), or None when it names a
    scope the reader cannot place (``across 64 GPUs``, ``(3k per GPU)`` beside it, ``(64 GPUs)``): not compared."""
    text = "" if cell is None or isinstance(cell, (int, float)) else str(cell)
    m = _NUM.match(text)
    if not m:
        return "gpu"
    rest = re.sub(r"^\s*[kKM](?![a-zA-Z])", "", text[m.end():])
    rest = re.sub(r"^\s*(?:±|\+/-)\s*\d[\d,]*(?:\.\d+)?\s*[kK]?(?![a-zA-Z])", "", rest)  # "534,644±1,138": mean ± spread
    unit = re.split(r"[(;,]", rest, maxsplit=1)[0]
    comment = rest[len(unit):]
    if re.search(_PER_ACCEL, unit, re.I):
        return "gpu"  # the unit says per GPU: comments do not change it
    for part in (unit, comment):
        if re.fullmatch(r"\W*(?:" + _RATE_UNIT + r")?\W*(?:per|/)\s*(?:node|host|server|instance)\W*", part, re.I):
            return "node"
        if re.fullmatch(r"\W*(?:" + _RATE_UNIT + r")?\W*(?:in\s+)?(?:total|aggregate|global|(?:for\s+)?(?:the\s+)?(?:whole|entire)\s+job"
                        r"|for\s+the\s+job)\W*", part, re.I):
            return "total"
    if re.search(_SCOPE_WORDS, rest, re.I) or re.search(r"^\W*job\W*$", comment, re.I):
        return None
    if re.search(r"\d[\d,.]*\s*[kK]?\s*(?:tok\w*/s\s*)?" + _PER_ACCEL, comment, re.I) and re.search(
            r"\d[\d,.]*\s*[kK]\b|tok", comment, re.I):
        return None  # "192k (3k per GPU)": the per-GPU figure is another number
    if re.search(r"(?<![\w.])\d[\d,]*\s*(?:[x×]\s*)?(?:GPUs?|nodes?|devices?|accelerators?|ranks?|DGX|HGX|"
                 r"[A-Z]{1,2}\d{3}\w*s?)\b(?!\s*(?:/|per)\b)", rest, re.I) or re.search(
            r"\b(?:across|over|on|for|with)\s+\d[\d,]*\s*(?:GPUs?|nodes?|ranks?|[A-Z]{1,2}\d{3})", unit, re.I):
        return None  # "(64 GPUs)", "on 8 nodes": the count the figure covers
    return "gpu"


def _standalone_numbers(text: str) -> list[str]:
    """Numbers of a cell that are not part of a name (``H100``, ``FP8``)."""
    return re.findall(r"(?<![A-Za-z\d.])\d[\d,]*(?:\.\d+)?", text)


def _cell_counts_recompute(cell) -> bool:
    """Whether a metric cell states that its FLOP count includes recomputation: the whole
    comment after the number is the label ``HFU`` / ``hardware FLOPs`` (``117 (HFU)``, ``43.3%
    HFU``), or it says ``incl. recompute`` / ``counts the recomputed forward`` with no negation,
    comparison or condition anywhere in the cell (``HFU not reported``, ``vs 190 HFU``,
    ``hardware FLOPs would be 180`` say nothing)."""
    if cell is None or isinstance(cell, (int, float)):
        return False
    text = str(cell)
    m = _NUM.match(text)
    rest = text[m.end():] if m else text
    if _HFU_LABEL.fullmatch(rest):
        return True
    if re.match(r"\s*hardware\s+(?:T?FLOP/?s|TFLOPS|FLOPs?)\b", rest, re.I) and not _HFU_DOUBT.search(text) and \
            len(_standalone_numbers(text)) == 1:
        return True  # "160 hardware TFLOP/s (full recompute)"
    return bool(_HFU_INCL.search(text)) and not _HFU_DOUBT.search(text) and len(_standalone_numbers(text)) == 1


def calibration_batch(csv_path=None):
    """The evaluable rows of a calibration CSV as one batch.

    Returns
    -------
    b : Batch — input columns and ``model_stats`` outputs, shape (N,) for the N usable rows.
    meta : DataFrame (N rows) — run_id, source_key, group, metric, published, flop_count
        (FLOP per step as the source counts, NaN for throughput metrics), batch_published
        (False: the global batch was filled by the default rule; metric "" — not compared).
    skipped : DataFrame — run_id, source_key, group, reason.
    """
    df = _read(csv_path)
    used: list[str] = []
    scen, idx, skipped = rows_to_scenarios(df, used)
    sub = df.iloc[idx].reset_index(drop=True)
    if not scen:
        reasons = [f"{df['run_id'].iloc[i]}: {why}" for i, why in list(skipped.items())[:5]]
        more = f" (and {len(skipped) - 5} more)" if len(skipped) > 5 else ""
        raise ValueError("no row of the CSV could be turned into a scenario: " + "; ".join(reasons) + more)
    b = _batch.from_scenarios(scen)
    b.update(model_stats.stats(b))
    metric, pub, count = [], [], []
    status_note, unread = [], []
    for j, r in enumerate(sub.to_dict("records")):
        src = str(r["source_key"])
        tok, st, tf, mfu, hfu = (parse_metric(c, r.get(c)) for c in METRIC_COLUMNS)
        unit = _metric_unit(r.get("tokens_per_s_per_gpu"))
        tok_cell = str(r.get("tokens_per_s_per_gpu") or "")
        if re.match(r"(?:samples?|seqs?|sequences?)\s*(?:/|per)\s*s(?:ec\w*)?\b", unit, re.I):
            # "12.5 samples/s/GPU": sequences per second per GPU; without "per GPU" the whole job's
            # or unclear: not compared
            per_gpu = re.search(r"(?:/|per)\s*GPU\b", unit, re.I)
            whole = _tokens_scope(tok_cell) in ("total", "node")  # "5.29 samples/s (global)", "71.6 samples/s total"
            tok = tok * float(b["seq_len"][j]) if per_gpu or whole else math.nan
        scope = _tokens_scope(tok_cell)
        if scope == "node":
            tok = tok / float(_stated_gpus_per_node(r) or b["gpus_per_node"][j])  # "26,000 tok/s per node", "11.6k/node"
        elif scope == "total":
            tok = tok / float(b["n_gpus"][j])  # "92.8k tok/s total": the whole job
        elif scope is None:
            tok = math.nan  # a scope the reader cannot place ("192k tok/s across 64 GPUs", "192k (3k per GPU)")
        if re.match(r"%?\s*(?:MFU\s+)?of\s+(?:the\s+)?FP8\s+(?:dense\s+)?peak", _metric_unit(r.get("mfu_pct")), re.I):
            acc = scen[j].resolved_accelerator()
            fp8 = acc.peak_flop_per_s.get("fp8")
            mfu = mfu * fp8 / float(b["peak_16bit_flop_per_s"][j]) if fp8 else math.nan  # MFU of the FP8 peak
        if not batch_published(r):
            metric.append(""); pub.append(math.nan); count.append(math.nan)
        elif not math.isnan(tok):
            metric.append("tokens_per_s_per_gpu"); pub.append(tok); count.append(math.nan)
        elif not math.isnan(st):
            metric.append("step_time_s"); pub.append(st); count.append(math.nan)
        elif not math.isnan(tf) and not (
                re.match(r"\s*[\d,.]+\s*hardware\b", str(r.get("tflops_per_gpu") or ""), re.I)
                and not _cell_counts_recompute(r.get("tflops_per_gpu"))):
            # (hardware FLOPs beside a comparison, "408.8 hardware (vs 350 model)": not compared;
            # the row's MFU / HFU below is, when it gives one)
            metric.append("tflops_per_gpu"); pub.append(tf)
            count.append(_tflops_count(r.get("tflops_per_gpu"), src, b, j))
        elif not math.isnan(mfu) and _cell_counts_recompute(r.get("mfu_pct")):
            metric.append("hfu"); pub.append(mfu / 100.0); count.append(float(b["hardware_flop_per_step"][j]))
        elif not math.isnan(mfu):
            metric.append("mfu"); pub.append(mfu / 100.0); count.append(float(b["model_flop_per_step"][j]))
        elif not math.isnan(hfu):
            metric.append("hfu"); pub.append(hfu / 100.0); count.append(float(b["hardware_flop_per_step"][j]))
        elif math.isfinite(agg := _aggregate_pflops(r.get("aggregate_pflops"))) and agg > 0:
            # the whole job's PFLOP/s only: per GPU in TFLOP/s, counted as the cell says
            metric.append("tflops_per_gpu"); pub.append(agg * 1e3 / float(b["n_gpus"][j]))
            count.append(_tflops_count(r.get("aggregate_pflops"), src, b, j))
        else:
            metric.append(""); pub.append(math.nan); count.append(math.nan)
        # a published figure above the part's highest peak (any precision) is no run's: a typo or a
        # whole-job figure; not compared, with the reason (found by review: 5000 TFLOP/s per H100
        # was compared, 1e300 gave an error of -100 % in the summary)
        note = ""
        if metric[-1] and metric[-1] not in ("mfu", "hfu"):
            acc = scen[j].resolved_accelerator()
            top = max(acc.peak_flop_per_s.values())
            flop_s = (pub[-1] * 1e12 if metric[-1] == "tflops_per_gpu"
                      else pub[-1] * float(b["model_flop_per_step"][j]) / (float(b["global_batch_size"][j])
                                                                          * float(b["seq_len"][j]))
                      if metric[-1] == "tokens_per_s_per_gpu"
                      else float(b["model_flop_per_step"][j]) / (pub[-1] * float(b["n_gpus"][j])))
            low = 1e-3 * min(acc.peak_flop_per_s.values())  # 0.1 % of the part's lowest peak
            if 0.0 < flop_s < low:  # found by review: 1e-300 tokens/s was compared (error 1.5e303)
                note = (f"not compared: the published {metric[-1]} ({pub[-1]:.4g}) means {flop_s / 1e12:.3g} TFLOP/s "
                        f"per GPU, below 0.1 % of the accelerator's lowest peak: a typo or another unit?")
                metric[-1], pub[-1], count[-1] = "", math.nan, math.nan
            elif flop_s > top:
                tf_ = pub[-1] if metric[-1] == "tflops_per_gpu" else flop_s / 1e12
                means = ("is" if metric[-1] == "tflops_per_gpu" else "means") + (
                    f" {tf_:,.0f}" if tf_ < 1e7 else f" {tf_:.3g}") + " TFLOP/s per GPU" + (
                    "" if metric[-1] == "tflops_per_gpu" else " of model FLOPs")
                note = (f"not compared: the published {metric[-1]} ({pub[-1]:.4g}) {means}, above the "
                        f"accelerator's highest peak ({top / 1e12:,.0f} TFLOP/s): a typo or a whole job's figure?")
                metric[-1], pub[-1], count[-1] = "", math.nan, math.nan
        status_note.append(note)
        # a metric cell above the one compared that could not be read is said, not passed over
        # (found by review: tflops_per_gpu "fast" beside an MFU compared the MFU without a word)
        order = {"tokens_per_s_per_gpu": 0, "step_time_s": 1, "tflops_per_gpu": 2, "mfu": 3, "hfu": 3}
        rank = order.get(metric[-1], 9)
        order.update({"mfu_pct": 3, "hfu_pct": 4})  # an unread MFU beside a compared HFU is said too
        rank = order.get(metric[-1], 9) if metric[-1] != "hfu" else 4
        skipped_cells = [c for c, v in zip(METRIC_COLUMNS, (tok, st, tf, mfu, hfu)) if order[c] < rank and math.isnan(v)
                         and not _is_na(r.get(c)) and str(r.get(c)).strip()
                         and not _UNSTATED.match(str(r.get(c)).strip().lower())
                         and not _RELATIVE.search(re.sub(r"\([^)]*\)", " ", str(r.get(c))))]
        unread.append("; ".join(f"{c} {str(r.get(c)).strip()!r} not read as a number (compared "
                                f"{metric[-1] or 'nothing'})" for c in skipped_cells))
    meta = pd.DataFrame({
        "run_id": sub["run_id"].astype(str), "source_key": sub["source_key"].astype(str),
        "group": [GROUPS.get(k, k) for k in sub["source_key"].astype(str)],
        "metric": metric, "published": pub, "flop_count": count,
        "batch_published": [batch_published(r) for r in sub.to_dict("records")],
        "defaults": [("; ".join(x for x in (d, u) if x)) for d, u in zip(_defaults_note(used, sub, b, metric, count),
                                                                         unread)],
        "status_note": status_note,
        # the run's own measured memory per GPU where it publishes one (column mem_per_gpu_gb; a
        # number, else NaN): beside the prediction in validate's rows (review 49)
        "mem_published": (pd.to_numeric(sub["mem_per_gpu_gb"], errors="coerce").to_numpy(dtype=float)
                          if "mem_per_gpu_gb" in sub else np.full(len(sub), np.nan)),
    })
    sk = df.iloc[sorted(skipped)]
    skipped_df = pd.DataFrame({
        "run_id": sk["run_id"].astype(str).tolist(), "source_key": sk["source_key"].astype(str).tolist(),
        "group": [GROUPS.get(k, k) for k in sk["source_key"].astype(str)],
        "reason": [skipped[i] for i in sorted(skipped)],
    })
    return b, meta, skipped_df


def _defaults_note(used: list[str], sub: pd.DataFrame, b, metric, flop_count) -> list[str]:
    """Per compared row, what the prediction assumed: the settings the default rules filled
    (``used``, :func:`rows_to_scenarios`'s ``defaults_out``: ``"micro-batch 1; recompute none;
    ZeRO 1"``), and "TFLOP/s as model FLOPs" where a TFLOP/s cell that names neither count is
    compared with model FLOPs on a run that recomputes ("117 (hardware FLOPs incl. recompute)"
    is compared with the hardware count, "117 (model FLOPs)" says so itself). "" when the row
    states everything."""
    out = []
    for j, r in enumerate(sub.to_dict("records")):
        parts = [used[j]] if used[j] else []
        if (metric[j] == "tflops_per_gpu"
                and float(b["hardware_flop_per_step"][j]) != float(b["model_flop_per_step"][j])
                and flop_count[j] == float(b["model_flop_per_step"][j])
                and not re.search(r"\bmodel\b|\bMFU\b", str(r.get("tflops_per_gpu") or r.get("aggregate_pflops") or ""),
                                  re.I)):
            parts.append("TFLOP/s as model FLOPs (the cell names no recompute)")
        if (metric[j] == "tflops_per_gpu" and str(r.get("source_key", "")).strip() in MEGATRON_CAUSAL_TFLOPS_SOURCES
                and flop_count[j] == float(b["model_flop_per_step_causal"][j])):
            parts.append(f"TFLOP/s as 2025 Megatron-LM counts them: model FLOPs with the causal half of the attention "
                         f"core, {flop_count[j]:.4g} per step (planner evaluate's tflops_per_gpu counts it in full)")
        out.append("; ".join(parts))
    return out


#: Sources whose TFLOP/s were logged by 2025 Megatron-LM, whose ``num_floating_point_operations``
#: (megatron/training/training.py) halves the attention core, "causal mask (only half of the mask is
#: non-zero)": counted with ``model_flop_per_step_causal``. The sources' own figures agree: the MoE
#: Model Zoo's Qwen3-235B 4K table gives 19.7 s × 245 TFLOP/s × 256 GPUs / (2,048 × 4,096 tokens) =
#: 147.3 GFLOP per token (17.6 s × 276: 148.2), this model's causal count 148.3 against 167.3 in full;
#: NVIDIA's DeepSeek-V3 GB200 guide states 249.8 GFLOP per token, the causal count 250.4 against 281.2.
#: Review 48f: counted in full, these rows' predicted TFLOP/s were 1/0.887 too high at 4K and up to
#: 1/0.548 at 128K, which hid large errors.
MEGATRON_CAUSAL_TFLOPS_SOURCES = frozenset({"MOEZOO_QWEN3_H100", "MOEZOO_QWEN3_GB200", "MCORE_DSV3_GB200"})


def _tflops_count(cell, src: str, b, j: int) -> float:
    """FLOP per step of row ``j`` as its TFLOP/s figure counts them (per GPU or the whole job's
    PFLOP/s alike): hardware FLOPs (recompute included) where the cell says so, Narayanan et
    al.'s formula for their Table 1 (it counts the recomputed forward), the causal model count for
    runs logged by 2025 Megatron-LM (:data:`MEGATRON_CAUSAL_TFLOPS_SOURCES`), else model FLOPs."""
    if _cell_counts_recompute(cell):
        return float(b["hardware_flop_per_step"][j])
    if src == "NARAYANAN21_T1":
        return float(model_stats.narayanan_flop_per_step(
            b["global_batch_size"][j], b["seq_len"][j], b["n_layers"][j], b["hidden_size"][j],
            b["vocab_size"][j]))
    if src in MEGATRON_CAUSAL_TFLOPS_SOURCES:
        return float(b["model_flop_per_step_causal"][j])
    return float(b["model_flop_per_step"][j])


def predicted_metric(meta: pd.DataFrame, b, step_time_s) -> np.ndarray:
    """The model's value of each row's published metric, counted as the source counts."""
    step = np.asarray(step_time_s, dtype=np.float64)
    n = b["n_gpus"].astype(np.float64)
    tokens = b["global_batch_size"].astype(np.float64) * b["seq_len"].astype(np.float64)
    count = meta["flop_count"].to_numpy(dtype=np.float64)
    mt = meta["metric"].to_numpy()
    return np.select(
        [mt == "tokens_per_s_per_gpu", mt == "step_time_s", mt == "tflops_per_gpu", (mt == "mfu") | (mt == "hfu")],
        [tokens / step / n, step, count / step / n / 1e12, count / (step * n * b["peak_16bit_flop_per_s"])],
        default=np.nan,
    )


def relative_error(meta: pd.DataFrame, predicted) -> np.ndarray:
    """Throughput error ``pred/pub − 1`` (for step time: ``pub/pred − 1``)."""
    pub = meta["published"].to_numpy(dtype=np.float64)
    pred = np.asarray(predicted, dtype=np.float64)
    return np.where(meta["metric"].to_numpy() == "step_time_s", pub / pred - 1.0, pred / pub - 1.0)


def summarise(rows: pd.DataFrame) -> pd.DataFrame:
    """Median, 90th percentile and max of |relative error| per group and overall."""
    ok = rows.dropna(subset=["rel_err"])
    out = []
    for name, g in list(ok.groupby("group", sort=False)) + [("overall", ok)]:
        e = g["rel_err"].abs().to_numpy()
        out.append({"group": name, "n": len(e), "median_abs_err": float(np.median(e)),
                    "p90_abs_err": float(np.percentile(e, 90)), "max_abs_err": float(np.max(e)),
                    "mean_signed_err": float(np.mean(g["rel_err"]))})
    return pd.DataFrame(out)


def _predict_csv(csv_path=None, consts: dict | None = None):
    """:func:`calibration_batch` of a CSV run through the memory and step-time stages: (batch,
    meta, skipped, timing outputs, each row's predicted published metric)."""
    from . import timing

    b, meta, skipped = calibration_batch(csv_path)
    try:
        from . import memory  # optional columns (activation offload); never required
        b.update(memory.stage(b))
    except Exception:  # noqa: BLE001 - memory stage absent or failing must not stop validation
        pass
    out = timing.stage(b, consts)
    return b, meta, skipped, out, predicted_metric(meta, b, out["step_time_s"])


def validate(csv_path=None, consts: dict | None = None, *, require_compared: bool = True
             ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Predicted vs published throughput for every row of a calibration-format CSV.

    Parameters
    ----------
    csv_path : path of a CSV with the columns of calibration.csv (default: the shared file).
    consts : step-time constants (default ``hardware/calibration.json``).
    require_compared : raise ``ValueError`` when no row can be compared (default); False gives
        the rows all the same (``planner validate --run`` shows a memory-check-only row).

    Returns
    -------
    rows : DataFrame — one row per CSV row: run_id, group, metric, published, predicted,
        rel_err (pred/pub − 1 of throughput), predicted step time, MFU, HFU, defaults (the
        settings the row leaves empty and the values the default rules gave them), mem_gib (predicted
        memory per GPU of the most loaded pipeline stage, GiB = 2^30 B) and fits (within the
        GPU's usable HBM; False flags a row whose unpublished settings were filled by default
        rules the run likely did not use — it is compared all the same), mem_published (the
        row's ``mem_per_gpu_gb`` as written, NaN where it publishes none; its unit and what was
        measured are the source's) and mem_pred_over_pub (mem_gib / mem_published), status.
    summary : DataFrame — per group and overall: n, median, p90 and max |rel_err|.
    """
    b, meta, skipped, out, pred = _predict_csv(csv_path, consts)
    rows = meta.drop(columns=["flop_count", "batch_published", "status_note", "mem_published"]).copy()
    rows["predicted"] = pred
    rows["rel_err"] = relative_error(meta, pred)
    rows["step_time_s"] = out["step_time_s"]
    rows["mfu"] = out["mfu"]
    rows["hfu"] = out["hfu"]
    # The memory model's verdict on the row as read: a published run did run, so "does not fit"
    # says a setting the row leaves out (recompute, activation offload, micro-batch) was filled
    # by a default rule the real run did not use, or that the memory model over-estimates it.
    # Compared all the same (the throughput model does not need the run to fit).
    if "mem_total_bytes" in b and "fits" in b:
        rows["mem_gib"] = np.asarray(b["mem_total_bytes"], dtype=float) / 2**30
        rows["fits"] = np.asarray(b["fits"], dtype=bool)
        # what the run measured (the CSV's mem_per_gpu_gb as written: GB or GiB as the row's notes
        # say, allocated / reserved / nvidia-smi as its source measured) and the ratio docs/memory.md
        # tabulates, the published figure read as GiB (review 49: the docs named this command for
        # ratios it did not print)
        pub_mem = meta["mem_published"].to_numpy(dtype=float)
        rows["mem_published"] = pub_mem
        with np.errstate(divide="ignore", invalid="ignore"):
            rows["mem_pred_over_pub"] = np.where(pub_mem > 0, rows["mem_gib"].to_numpy(dtype=float) / pub_mem, np.nan)
    rows["defaults"] = rows.pop("defaults")  # to the end, before status: the text columns last
    rows["status"] = np.where(np.isfinite(rows["rel_err"]), "ok",
                              np.where(meta["status_note"].to_numpy() != "", meta["status_note"].to_numpy(),
                                       np.where(meta["batch_published"].to_numpy(), "no published metric",
                                                "not compared: global batch not published (memory check only)")))
    if len(skipped):
        sk = skipped.rename(columns={"reason": "status"})
        sk["status"] = "skipped: " + sk["status"]
        rows = pd.concat([rows, sk], ignore_index=True)
    compared = np.isfinite(rows["rel_err"].to_numpy(dtype=float)).any()
    if not compared and not require_compared:
        return rows, pd.DataFrame(columns=["group", "n", "median_abs_err", "p90_abs_err", "max_abs_err",
                                           "mean_signed_err"])
    if not compared:
        counts = rows["status"].value_counts()
        raise ValueError("no row can be compared (" + "; ".join(f"{n} {st}" for st, n in counts.items())
                         + "): a row needs one of " + ", ".join(METRIC_COLUMNS) + " and its global batch")
    return rows, summarise(rows)


def run_scenario(run_id: str, csv_path=None) -> tuple[Scenario, str]:
    """The scenario one run of a calibration-format CSV is evaluated as, and its defaults.

    The same reading as :func:`validate` (:func:`rows_to_scenarios` on that row), so
    ``planner.evaluate`` of the scenario gives the row's predicted step time, with every part
    explained; the CLI's ``planner validate --run`` and the Validate page's "Open on the Plan
    page" use it.

    Parameters
    ----------
    run_id : the row's ``run_id`` (surrounding spaces ignored; the first row of that id, as
        :func:`validate` compares only the first).
    csv_path : path of a CSV with the columns of calibration.csv (default: the shared file).

    Returns
    -------
    scenario : :class:`Scenario` (named after the run).
    defaults : str — the settings the row leaves empty and the values the default rules gave
        them (``validate``'s ``defaults`` column; "" when the row publishes them all).

    Raises
    ------
    ValueError : no row has that id (the message names up to five close ids), or the row is
        skipped (the message gives :func:`validate`'s reason), or the file cannot be read.
    """
    import difflib

    df = _read(csv_path)
    want = str(run_id).strip()
    ids = df["run_id"].astype(str).str.strip().to_numpy() if "run_id" in df.columns else np.array([], dtype=str)
    hit = np.flatnonzero(ids == want)
    if not len(hit):
        names = [str(x) for x in ids]
        low = want.lower()  # case aside (review 19c: an upper-cased id got no suggestion)
        close = ([x for x in names if x.lower() == low]
                 or [x for x in names if low and x.lower().startswith(low)][:5]
                 or difflib.get_close_matches(low, names, n=5, cutoff=0.6))
        elsewhere = ""
        # the other of the project's two files, where a user may mean it (review 19c; either way, case aside)
        this = Path(csv_path).resolve() if csv_path is not None else DEFAULT_CSV.resolve()
        for other_path in (DEFAULT_CSV, OUT_OF_SAMPLE_CSV):
            try:
                if other_path.resolve() == this or not other_path.is_file():
                    continue
                other = _read(other_path)["run_id"].astype(str).str.strip()
                hit_other = other[other.str.lower().eq(low)]
                if len(hit_other):
                    try:
                        shown = os.path.relpath(other_path)
                    except ValueError:  # another drive (Windows)
                        shown = str(other_path)
                    shown = str(other_path) if shown.startswith("..") else shown
                    opt = "" if other_path == DEFAULT_CSV else f" --csv {shlex.quote(shown)}"  # the default file
                    elsewhere = (f"; {other_path.name} has run {hit_other.iloc[0]!r}: "
                                 f"planner validate{opt} --run {shlex.quote(hit_other.iloc[0])}")
                    close = []  # the run the user meant, not look-alikes here
                    break
            except (ValueError, OSError, KeyError):
                pass
        raise ValueError(f"no run with run_id {want!r} ({len(ids)} runs in the file, the ones validate skips for an unpublished setting included)"
                         + (f"; close: {', '.join(close)}" if close else "") + elsewhere)
    # the row validate compares: the first of the id that could be read (rows_to_scenarios passes
    # over an unreadable one before it counts the id as seen; review 18f)
    if _READ_ERROR in df.columns:
        readable = [i for i in hit if not df[_READ_ERROR].iloc[int(i)]]
        hit = readable or hit
    used: list = []
    scen, _, skipped = rows_to_scenarios(df.iloc[[int(hit[0])]], used)
    if not scen:
        raise ValueError(f"run {want!r} is skipped: {next(iter(skipped.values()), 'not readable')}")
    return scen[0], used[0]


def fits_note(rows: pd.DataFrame) -> str:
    """The lines :func:`validate`'s table output ends with about runs that do not fit in memory
    as read (``fits`` False): the compared ones, then the rows built but not compared (no
    published metric or batch: a memory check only); "" when every row fits."""
    if "fits" not in rows.columns:
        return ""
    bad = rows["fits"].eq(False)
    ok = rows["status"].eq("ok")
    over = rows[ok & bad]
    memo = rows[~ok & ~rows["status"].astype(str).str.startswith("skipped") & bad]  # no metric or no batch

    def names(df):
        return ", ".join(df["run_id"].astype(str).head(5)) + (", ..." if len(df) > 5 else "")
    out = ""
    if len(over):
        n, m = len(over), int(ok.sum())
        out += (f"\n{n} of {m} compared run{'s' if m != 1 else ''} {'does' if n == 1 else 'do'} not fit in memory as "
                f"read (fits = False: {names(over)}): a setting the default rules filled (the defaults column) may "
                "not be what the run used, or, where the row states everything, the memory model over-estimates "
                "it; the throughput is compared all the same.\n")
    if len(memo):
        k = len(memo)
        out += (f"{'' if out else chr(10)}{k} row{'s' if k != 1 else ''} not compared (memory check only) "
                f"{'does' if k == 1 else 'do'} not fit either (fits = False: {names(memo)}).\n")
    return out


# --- How far to trust a prediction: the published runs like it ------------------------------

#: The repository's out-of-sample file (runs never used by tools/calibrate.py).
OUT_OF_SAMPLE_CSV = Path(__file__).resolve().parent.parent / "validation" / "out_of_sample.csv"
#: Fewer matching runs than this: the band is their range (min … max), not the 10th–90th
#: percentile; and the out-of-sample runs alone are used only when at least this many match.
BAND_PERCENTILE_MIN_ROWS = 10


@lru_cache(maxsize=1)
def accuracy_rows() -> pd.DataFrame:
    """Every compared run of the calibration file and ``validation/out_of_sample.csv`` with its
    accelerator family, kind and throughput ratio ``predicted / published`` (for a step-time
    row: published / predicted step). A file that is absent is left out.

    Returns
    -------
    DataFrame — run_id, set ("calibration" / "out of sample"), family (``batch.FAMILIES``
    name), moe (bool), fp4 (bool: FP4 GEMMs), ratio (float, > 0). Computed once per process
    (about 0.3 s).
    """
    parts = []
    fp4 = _batch.PRECISIONS.index("fp4")
    for name, path in (("calibration", DEFAULT_CSV), ("out of sample", OUT_OF_SAMPLE_CSV)):
        if not Path(path).is_file():
            continue
        b, meta, _, _, pred = _predict_csv(path)
        err = relative_error(meta, pred)
        ok = np.isfinite(err)
        fam = np.asarray(b["accel_family"])
        parts.append(pd.DataFrame({
            "run_id": meta["run_id"].to_numpy()[ok], "set": name,
            "family": [_batch.FAMILIES[int(i)] for i in fam[ok]],
            "moe": np.asarray(b["n_experts"])[ok] > 0, "fp4": np.asarray(b["precision"])[ok] == fp4,
            "ratio": 1.0 + err[ok],
        }))
    cols = ["run_id", "set", "family", "moe", "fp4", "ratio"]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=cols)


def accuracy_band(family: str, moe: bool, fp4: bool = False) -> dict | None:
    """The model's throughput ÷ the published one on the validation runs like a scenario: the
    same accelerator family and the same kind (dense or MoE; FP4 apart). The out-of-sample runs
    alone where at least :data:`BAND_PERCENTILE_MIN_ROWS` match (the fitted calibration runs
    would flatter the band), else every matching run; where none matches, every run of that
    kind on other hardware (the ``scope`` says so).

    Returns
    -------
    dict — scope (str), n, n_out_of_sample (int), low, median, high (ratios): the 10th / 50th /
    90th percentile, or min / median / max below :data:`BAND_PERCENTILE_MIN_ROWS` runs
    (``percentiles`` says which), out_of_sample_only (bool); None when no validation file is
    present.
    """
    rows = accuracy_rows()
    if rows.empty:
        return None
    kind = ("MoE" if moe else "dense") + (" FP4" if fp4 else "")
    same_kind = rows[(rows["moe"] == bool(moe)) & (rows["fp4"] == bool(fp4))]
    sel = same_kind[same_kind["family"] == family]
    scope = f"{family}, {kind}"
    if sel.empty and len(same_kind):
        sel = same_kind
        scope = f"no published {family} {kind} run: every {kind} run on other hardware, a band that may not apply"
    elif sel.empty:  # no run of this kind at all (e.g. MoE FP4): the FP4 runs, else the MoE / dense runs
        sel = rows[rows["fp4"]] if fp4 else rows[rows["moe"] == bool(moe)]
        near = "FP4" if fp4 else ("MoE" if moe else "dense")
        scope = f"no published {kind} run: every {near} run, a band that may not apply"
        if sel.empty:
            return None
    oos = sel[sel["set"] == "out of sample"]
    only_oos = len(oos) >= BAND_PERCENTILE_MIN_ROWS
    if only_oos:
        sel = oos
    r = sel["ratio"].to_numpy()
    pct = len(r) >= BAND_PERCENTILE_MIN_ROWS
    lo, hi = (np.percentile(r, 10), np.percentile(r, 90)) if pct else (r.min(), r.max())
    return {"scope": scope, "n": int(len(r)), "n_out_of_sample": int((sel["set"] == "out of sample").sum()),
            "low": float(lo), "median": float(np.median(r)), "high": float(hi), "percentiles": pct,
            "out_of_sample_only": only_oos}


def accuracy_table() -> pd.DataFrame:
    """:func:`accuracy_band` of every (accelerator family, kind) with a validation run, one row
    each: family, kind, runs, out_of_sample_only, low, median, high, band ("10th–90th
    percentile" or "range"). Empty without validation files."""
    rows = accuracy_rows()
    out = []
    for (fam, moe, fp4), _ in rows.groupby(["family", "moe", "fp4"], sort=True):
        b = accuracy_band(fam, bool(moe), bool(fp4))
        out.append({"family": fam, "kind": ("MoE" if moe else "dense") + (" FP4" if fp4 else ""),
                    "runs": b["n"], "out_of_sample_only": b["out_of_sample_only"], "low": b["low"],
                    "median": b["median"], "high": b["high"],
                    "band": "10th–90th percentile" if b["percentiles"] else "range"})
    cols = ["family", "kind", "runs", "out_of_sample_only", "low", "median", "high", "band"]
    return pd.DataFrame(out, columns=cols)


def accuracy_note(scenario) -> str | None:
    """One sentence for the UI and the CLI: :func:`accuracy_band` of a scenario's accelerator
    family and model kind, or None without validation files."""
    s = scenario if isinstance(scenario, Scenario) else Scenario.model_validate(scenario)
    acc = s.resolved_accelerator()
    family = acc.family if acc.family in _batch.FAMILIES else acc.family or "other"
    band = accuracy_band(family, s.resolved_model().moe is not None, s.training.precision == "fp4")
    if band is None:
        return None
    how = "10th–90th percentile" if band["percentiles"] else "range"
    n, n_oos = band["n"], band["n_out_of_sample"]
    if n == 1:
        runs = "1 run, " + ("never used in the fit" if n_oos else "one of the calibration runs")
        ratio = (f"is {band['median']:.2f} on that run — one run is too few for a band, so read it as an "
                 "example, not a range")
    else:
        runs = (f"{n} runs never used in the fit" if band["out_of_sample_only"] or n_oos == n else
                f"{n} runs, {n_oos} of them never used in the fit")  # not "5 runs, 5 of them" (review 15o)
        ratio = f"is {band['low']:.2f}–{band['high']:.2f} ({how}), median {band['median']:.2f}"
    return (f"Accuracy on published runs like this one ({band['scope']}; {runs}): the model's throughput ÷ "
            f"the published one {ratio}. "
            "Above 1 the model is faster than the run was: read the prediction as what a well-tuned stack "
            "reaches (docs/timing.md, Validate page).")
