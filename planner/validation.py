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

* **micro-batch**: the cell, else 1. **vpp**: the cell's leading integer, else 1; schedule
  ``interleaved`` when vpp > 1, else ``1f1b``. **layer split**: ``uneven`` (first stages
  take one extra layer, Megatron-Core ``--decoder-first-pipeline-num-layers``) when pp·vpp
  does not divide L, else ``even``.
* **global batch**: ``global_batch_seqs``, else ``global_batch_tokens / seq_len``; when
  neither is published, ``pp · micro-batch · dp`` (m = p micro-batches: the 1F1B worst case
  for activation memory) and the row is built for the memory check only — its throughput is
  not compared (status ``not compared: ...``), since step time depends on the batch.
* **recompute**: the cell's text (``full ...``, ``selective ...``, ``none``); empty = ``none``
  (the FLOP counts of the empty-cell sources name no recompute).
* **sequence parallel**: the ``sp`` cell; else on when the recompute cell names sequence
  parallelism (Korthikanti et al. 2022 pair selective recompute with SP); else on when
  tp > 1 (Megatron-Core / NeMo recipes always pair TP with SP).
* **ZeRO stage**: the cell's leading integer; empty = 0 for NARAYANAN21 / KORTHIKANTI22
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
  exactly (with fp32 grads it would count the master copy twice, 18 B);
  *NEMO_24.07*: bf16. ``optim.grad_sync_dtype: bf16`` in the NeMo-Framework-Launcher
  Nemotron-4 340B recipe and in the NeMo 24.07 Llama 3.1 70B FP8 benchmark recipe; NeMo maps
  it to Megatron-Core ``grad_reduce_in_fp32 = False`` (``setup_mcore_distributed_parallel``).
  Older GPT-3 recipes (Apex optimizer, default ``grad_sync_dtype`` = fp32) would keep fp32
  grads; one rule per framework is kept and this is stated.
* **precision**: ``fp8`` when the cell names FP8; ``fp16`` when it starts with fp16 (Narayanan
  2021 and Korthikanti 2022 trained GPT in fp16 mixed precision; same A100 peak and the same
  bytes as bf16 here); else ``bf16`` (``amp_bf16``, ``BF16 (inferred)``, empty).
* **flash attention**: off for NARAYANAN21 / KORTHIKANTI22 (2021–22 Megatron-LM: fused
  softmax on the materialised scores), on for the others (Transformer Engine fused attention
  in Megatron-Core / NeMo; llm-foundry ``attn_impl: triton`` / ``flash``).
* **TP communication overlap**: on for MCORE_R080_H100 (``--tp-comm-overlap`` published) and
  NEMO_24.07 (``ub_tp_comm_overlap: true`` in the recipes), off otherwise.
* **vocabulary**: empty = 51,200 (padded GPT-2 BPE, the value the file itself assumes for GPT
  rows); **KV heads**: empty = heads (MHA); **dp**: empty = gpu_count / (tp·pp·cp).
* **architecture** from the model name: ``llama`` → SwiGLU (gated MLP), RMSNorm, untied, no
  biases; ``mpt`` → GeLU, LayerNorm, tied, no biases (ALiBi, no position table);
  ``nemotron`` → squared-ReLU (plain MLP), LayerNorm, untied, no biases (Nemotron-4 report:
  "no bias terms", untied embeddings, RoPE); otherwise GPT (GeLU, LayerNorm, biases, tied,
  learned absolute positions: Megatron-LM ``--position-embedding-type`` and NeMo
  ``position_embedding_type`` both default to ``learned_absolute``).
* **GPU**: a name with ``A100`` → system ``dgx-a100-80gb``; ``H100`` → ``dgx-h100``.

Rows missing layers, hidden, heads, ffn, seq_len, the parallel split (tp, pp) or the GPU count are
skipped with the reason.

Published metric, counted as the source counts (validation/README.md):

* tokens/s per GPU where published (MosaicML, NeMo) and step time (Korthikanti; the same
  throughput) — compared as throughput;
* else TFLOP/s per GPU: Narayanan 2021 with ``model_stats.narayanan_flop_per_step`` (an HFU
  count, recompute included); Megatron-Core with ``model_flop_per_step`` (model FLOPs,
  attention in full);
* else MFU (``mfu_pct``) with ``model_flop_per_step`` over the 16-bit peak.

The relative error is ``predicted / published − 1`` of the throughput metric.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from . import batch as _batch
from . import model_stats
from .schema import Scenario

#: Default calibration file, relative to the repository root (../shared/validation/).
DEFAULT_CSV = Path(__file__).resolve().parent.parent.parent / "shared" / "validation" / "calibration.csv"

GROUPS: dict[str, str] = {
    "NARAYANAN21_T1": "Narayanan",
    "KORTHIKANTI22": "Korthikanti",
    "MCORE_R080_H100": "Megatron-Core H100",
    "MOSAIC_MPT": "MosaicML FSDP",
    "NEMO_24.07": "NeMo FP8",
}
_NO_FLASH = {"NARAYANAN21_T1", "KORTHIKANTI22"}
_NO_DISTOPT = {"NARAYANAN21_T1", "KORTHIKANTI22"}
_TP_OVERLAP = {"MCORE_R080_H100", "NEMO_24.07"}
#: Frameworks whose gradients are reduced and kept in bf16 (see the module docstring):
#: MosaicML llm-foundry / Composer FSDP ``PURE`` mixed precision; NeMo 24.07
#: ``optim.grad_sync_dtype: bf16``. Everything else: fp32 (Megatron-LM).
_BF16_GRADS = {"MOSAIC_MPT", "NEMO_24.07"}
DEFAULT_VOCAB = 51200
REQUIRED_COLUMNS = (
    "run_id", "source_key", "model", "layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "seq_len",
    "moe_experts", "moe_topk", "global_batch_seqs", "gpu", "gpu_count", "precision", "tp", "pp", "dp",
    "cp", "sp", "ep", "vpp", "zero_stage", "recompute", "micro_batch", "tflops_per_gpu", "mfu_pct",
    "hfu_pct", "step_time_s", "tokens_per_s_per_gpu",
)

_NUM = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")


def parse_number(cell) -> float:
    """Leading number of a cell (``"51200 (assumed)"`` → 51200.0); NaN when there is none."""
    if cell is None:
        return math.nan
    if isinstance(cell, (int, float, np.integer, np.floating)):
        return float(cell)
    m = _NUM.match(str(cell))
    return float(m.group(1)) if m else math.nan


def parse_recompute(cell) -> str:
    """``"full (activation c..."`` → ``"full"``; ``"selective ..."`` → ``"selective"``; else ``"none"``."""
    if cell is None or (isinstance(cell, float) and math.isnan(cell)):
        return "none"
    text = str(cell).lower()
    if text.startswith("full") or " full" in text[:12]:
        return "full"
    if "selective" in text:
        return "selective"
    return "none"


def system_for_gpu(name) -> str | None:
    """GPU name → system id (A100 → dgx-a100-80gb, H100 → dgx-h100); None if unknown."""
    text = str(name).upper()
    if "A100" in text:
        return "dgx-a100-80gb"
    if "H100" in text:
        return "dgx-h100"
    return None


def _arch(model_name: str) -> dict:
    n = str(model_name).lower()
    if "llama" in n or "mistral" in n or "mixtral" in n:
        return dict(gated_mlp=True, norm="rmsnorm", tied_embeddings=False, linear_bias=False)
    if "mpt" in n:
        return dict(gated_mlp=False, norm="layernorm", tied_embeddings=True, linear_bias=False)
    if "nemotron" in n:
        return dict(gated_mlp=False, norm="layernorm", tied_embeddings=False, linear_bias=False)
    # GPT (Megatron-LM / NeMo GPT configs): hidden_dropout = attention_dropout = 0.1 by default,
    # the setting Korthikanti et al. 2022 Table 2 counts; Llama, MPT and Nemotron-4 use none.
    return dict(gated_mlp=False, norm="layernorm", tied_embeddings=True, linear_bias=True, dropout=0.1, gpt=True)


def _int(x) -> int | None:
    v = parse_number(x)
    return None if math.isnan(v) else int(round(v))


def row_to_scenario(r: dict) -> tuple[Scenario | None, str]:
    """One CSV row (dict) → (Scenario, "") or (None, reason it is skipped).

    Applies the default rule of the module docstring to every cell the row leaves empty; this
    is the only place that rule lives (validation, calibration and the memory test use it).
    """
    src = str(r.get("source_key", ""))
    need = {"layers": r.get("layers"), "hidden": r.get("hidden"), "heads": r.get("heads"),
            "ffn": r.get("ffn"), "seq_len": r.get("seq_len")}
    missing = [k for k, v in need.items() if _int(v) is None]
    if missing:
        return None, f"architecture not published: {', '.join(missing)}"
    L, h, a, f, s = (_int(need[k]) for k in ("layers", "hidden", "heads", "ffn", "seq_len"))
    B = _int(r.get("global_batch_seqs"))
    if B is None:
        tok = _int(r.get("global_batch_tokens"))
        B = tok // s if tok else None
    n = _int(r.get("gpu_count"))
    tp, pp = _int(r.get("tp")), _int(r.get("pp"))
    if n is None or tp is None or pp is None:
        return None, "parallel split (tp, pp) or GPU count not published"
    cp = _int(r.get("cp")) or 1
    dp = _int(r.get("dp")) or (n // (tp * pp * cp))
    mbs = _int(r.get("micro_batch")) or 1
    if B is None:  # memory worst case: m = p micro-batches in flight (not timed, see batch_published)
        B = pp * mbs * dp
    system = system_for_gpu(r.get("gpu"))
    if system is None:
        return None, f"no system for GPU '{r.get('gpu')}'"
    kv = _int(r.get("kv_heads")) or a
    V = _int(r.get("vocab")) or DEFAULT_VOCAB
    arch = _arch(r.get("model", ""))
    is_gpt = arch.pop("gpt", False)
    model = {"name": str(r.get("model", "model")), "n_layers": L, "hidden_size": h, "n_heads": a,
             "n_kv_heads": kv, "ffn_hidden_size": f, "vocab_size": V, **arch,
             "learned_pos_embeddings": s if is_gpt else 0}
    E = _int(r.get("moe_experts"))
    if E:
        model["moe"] = {"n_experts": E, "top_k": _int(r.get("moe_topk")) or 1, "expert_ffn_hidden_size": f}
    rc_text = "" if r.get("recompute") is None else str(r.get("recompute")).lower()
    sp_cell = parse_number(r.get("sp"))
    sp = bool(sp_cell) if not math.isnan(sp_cell) else ("sequence parallel" in rc_text or tp > 1)
    vpp = _int(r.get("vpp")) or 1
    zero = _int(r.get("zero_stage"))
    if zero is None:
        zero = 0 if src in _NO_DISTOPT else 1
    prec_text = str(r.get("precision") or "").lower()
    prec = "fp8" if "fp8" in prec_text else "fp16" if prec_text.startswith("fp16") else "bf16"
    scen = {
        "name": str(r.get("run_id", "")),
        "model": model,
        "training": {"seq_len": s, "global_batch_size": B, "micro_batch_size": mbs, "precision": prec,
                     "grad_dtype": "bf16" if src in _BF16_GRADS else "fp32"},
        "parallelism": {"tp": tp, "pp": pp, "dp": dp, "cp": cp, "ep": _int(r.get("ep")) or 1, "vpp": vpp,
                        "schedule": "interleaved" if vpp > 1 else "1f1b", "sequence_parallel": sp,
                        "zero_stage": zero, "recompute": parse_recompute(r.get("recompute")),
                        "flash_attention": src not in _NO_FLASH, "tp_comm_overlap": src in _TP_OVERLAP,
                        "layer_split": "uneven" if L % (pp * vpp) else "even"},
        "cluster": {"system": system, "n_gpus": n},
    }
    try:
        return Scenario.model_validate(scen), ""
    except ValueError as e:  # pydantic.ValidationError is a ValueError
        msg = str(e).splitlines()
        return None, "invalid scenario: " + (msg[1].strip() if len(msg) > 1 else msg[0])


def _read(csv_path) -> pd.DataFrame:
    path = Path(csv_path) if csv_path is not None else DEFAULT_CSV
    df = pd.read_csv(path)
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: missing columns {', '.join(missing)} (expected the columns of calibration.csv)")
    return df


def batch_published(r: dict) -> bool:
    """Whether a row publishes its global batch (in sequences or tokens)."""
    return not (math.isnan(parse_number(r.get("global_batch_seqs")))
                and math.isnan(parse_number(r.get("global_batch_tokens"))))


def rows_to_scenarios(df: pd.DataFrame) -> tuple[list[Scenario], list[int], dict[int, str]]:
    """Rows → (scenarios, their row indices, {row index: reason} for the skipped rows)."""
    scen, idx, skipped = [], [], {}
    for i, r in enumerate(df.to_dict("records")):
        r = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
        s, why = row_to_scenario(r)
        if s is None:
            skipped[i] = why
        else:
            scen.append(s)
            idx.append(i)
    return scen, idx, skipped


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
    scen, idx, skipped = rows_to_scenarios(df)
    sub = df.iloc[idx].reset_index(drop=True)
    if not scen:
        raise ValueError("no row of the CSV could be turned into a scenario")
    b = _batch.from_scenarios(scen)
    b.update(model_stats.stats(b))
    metric, pub, count = [], [], []
    for j, r in enumerate(sub.to_dict("records")):
        src = str(r["source_key"])
        tok = parse_number(r.get("tokens_per_s_per_gpu"))
        st = parse_number(r.get("step_time_s"))
        tf = parse_number(r.get("tflops_per_gpu"))
        mfu = parse_number(r.get("mfu_pct"))
        if not batch_published(r):
            metric.append(""); pub.append(math.nan); count.append(math.nan)
        elif not math.isnan(tok):
            metric.append("tokens_per_s_per_gpu"); pub.append(tok); count.append(math.nan)
        elif not math.isnan(st):
            metric.append("step_time_s"); pub.append(st); count.append(math.nan)
        elif not math.isnan(tf):
            metric.append("tflops_per_gpu"); pub.append(tf)
            if src == "NARAYANAN21_T1":
                count.append(float(model_stats.narayanan_flop_per_step(
                    b["global_batch_size"][j], b["seq_len"][j], b["n_layers"][j], b["hidden_size"][j],
                    b["vocab_size"][j])))
            else:
                count.append(float(b["model_flop_per_step"][j]))
        elif not math.isnan(mfu):
            metric.append("mfu"); pub.append(mfu / 100.0); count.append(float(b["model_flop_per_step"][j]))
        else:
            metric.append(""); pub.append(math.nan); count.append(math.nan)
    meta = pd.DataFrame({
        "run_id": sub["run_id"].astype(str), "source_key": sub["source_key"].astype(str),
        "group": [GROUPS.get(k, k) for k in sub["source_key"].astype(str)],
        "metric": metric, "published": pub, "flop_count": count,
        "batch_published": [batch_published(r) for r in sub.to_dict("records")],
    })
    sk = df.iloc[sorted(skipped)]
    skipped_df = pd.DataFrame({
        "run_id": sk["run_id"].astype(str).tolist(), "source_key": sk["source_key"].astype(str).tolist(),
        "group": [GROUPS.get(k, k) for k in sk["source_key"].astype(str)],
        "reason": [skipped[i] for i in sorted(skipped)],
    })
    return b, meta, skipped_df


def predicted_metric(meta: pd.DataFrame, b, step_time_s) -> np.ndarray:
    """The model's value of each row's published metric, counted as the source counts."""
    step = np.asarray(step_time_s, dtype=np.float64)
    n = b["n_gpus"].astype(np.float64)
    tokens = b["global_batch_size"].astype(np.float64) * b["seq_len"].astype(np.float64)
    count = meta["flop_count"].to_numpy(dtype=np.float64)
    mt = meta["metric"].to_numpy()
    return np.select(
        [mt == "tokens_per_s_per_gpu", mt == "step_time_s", mt == "tflops_per_gpu", mt == "mfu"],
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


def validate(csv_path=None, consts: dict | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Predicted vs published throughput for every row of a calibration-format CSV.

    Parameters
    ----------
    csv_path : path of a CSV with the columns of calibration.csv (default: the shared file).
    consts : step-time constants (default ``hardware/calibration.json``).

    Returns
    -------
    rows : DataFrame — one row per CSV row: run_id, group, metric, published, predicted,
        rel_err (pred/pub − 1 of throughput), predicted step time, MFU, HFU, status.
    summary : DataFrame — per group and overall: n, median, p90 and max |rel_err|.
    """
    from . import timing

    b, meta, skipped = calibration_batch(csv_path)
    try:
        from . import memory  # optional columns (activation offload); never required
        b.update(memory.stage(b))
    except Exception:  # noqa: BLE001 - memory stage absent or failing must not stop validation
        pass
    out = timing.stage(b, consts)
    pred = predicted_metric(meta, b, out["step_time_s"])
    rows = meta.drop(columns=["flop_count", "batch_published"]).copy()
    rows["predicted"] = pred
    rows["rel_err"] = relative_error(meta, pred)
    rows["step_time_s"] = out["step_time_s"]
    rows["mfu"] = out["mfu"]
    rows["hfu"] = out["hfu"]
    rows["status"] = np.where(np.isfinite(rows["rel_err"]), "ok",
                              np.where(meta["batch_published"].to_numpy(), "no published metric",
                                       "not compared: global batch not published (memory check only)"))
    if len(skipped):
        sk = skipped.rename(columns={"reason": "status"})
        sk["status"] = "skipped: " + sk["status"]
        rows = pd.concat([rows, sk], ignore_index=True)
    return rows, summarise(rows)
