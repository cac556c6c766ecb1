"""Review 17e: published runs outside the validation files (NVIDIA dgxc-benchmarking recipes:
MaxText, PaXML and NeMo 24.09 on DGX H100), and two ways of writing a cell that the reader
misread while they were entered.

1. A config key turned off under a dotted path (NeMo's ``model.fp8=False``) was read as FP8:
   ``_CONFIG_OFF`` rewrote it to ``no model.fp8``, and the full stop ends a clause, so ``fp8``
   stood plainly. The BF16 row then predicted the FP8 step time.
2. Transformer Engine's ``NVTE_FLASH_ATTN=0, NVTE_FUSED_ATTN=1`` (cuDNN fused attention, the
   NeMo recipes' setting) was read as attention without flash: materialised 8k x 8k scores,
   the Llama 3.1 8B step predicted at 18.8 s against a published 9.7 s.

Expected values are what the cells say, read by hand: ``bf16 (model.fp8=False)`` is a BF16
run; cuDNN's fused attention is a tiled (flash-class) kernel that never materialises the
scores (cuDNN developer guide, "Fused Flash Attention").
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from planner import validation as v

ROOT = Path(__file__).resolve().parent.parent


def _columns() -> list[str]:
    with open(ROOT / "validation" / "out_of_sample.csv", newline="", encoding="utf-8") as f:
        return next(csv.reader(f))


def _row(**cells) -> dict:
    """A NeMo-style Llama 3.1 8B row on 8 H100 (TP 1, PP 1, CP 2; NeMo 24.09 DGX Cloud recipe)."""
    r = {c: "" for c in _columns()}
    r.update(run_id="r", source_key="K", model="Llama 3.1 8B", params_b="8.03", layers="32", hidden="4096",
             heads="32", kv_heads="8", ffn="14336", vocab="128256", seq_len="8192", global_batch_seqs="128",
             gpu="H100 80GB SXM (DGX H100, DGX Cloud)", gpu_count="8", precision="bf16", tp="1", pp="1",
             dp="4", cp="2", ep="1", micro_batch="1", grad_accum="32", step_time_s="12.91",
             source="NVIDIA/dgxc-benchmarking llama3.1/README_8b.md (NeMo 24.09 container, 2024)")
    r.update(cells)
    return r


def _write(tmp_path: Path, rows: list[dict]) -> Path:
    p = tmp_path / "rows.csv"
    with open(p, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=_columns())
        w.writeheader()
        w.writerows(rows)
    return p


@pytest.mark.parametrize("cell, expected", [
    ("bf16 (model.fp8=False)", "bf16"),          # NeMo launcher override
    ("bf16 (mixed_precision.fp8: null)", "bf16"),
    ("bf16 (float8.enabled: false)", "bf16"),    # the trailing 'enabled' names no precision
    ("fp8 (model.fp8=True, fp8_hybrid=True)", "fp8"),
    ('"bf16": {"enabled": false}, fp16', "fp16"),  # the undotted form, as before
])
def test_dotted_config_key_turned_off_is_negated(cell, expected):
    assert v.parse_precision(cell) == expected


def test_bf16_row_with_dotted_fp8_off_is_not_predicted_as_fp8(tmp_path):
    rows = [_row(run_id="bf16", precision="bf16 (model.fp8=False)"),
            _row(run_id="fp8", precision="fp8 (model.fp8=True)", step_time_s="9.67")]
    scen = {r["run_id"]: v.row_to_scenario(r)[0] for r in rows}
    assert scen["bf16"].training.precision == "bf16"
    assert scen["fp8"].training.precision == "fp8"
    out, _ = v.validate(_write(tmp_path, rows))
    st = dict(zip(out["run_id"], out["step_time_s"]))
    assert st["fp8"] < st["bf16"]  # FP8 GEMMs at twice the peak: the same step cannot tie


@pytest.mark.parametrize("notes, expected", [
    ("NVTE_FLASH_ATTN=0, NVTE_FUSED_ATTN=1 (cuDNN fused attention)", True),
    ("NVTE_FUSED_ATTN=1", True),
    ("attention=cudnn_flash_te", True),
    ("cuDNN fused attention", True),
    ("NVTE_FUSED_ATTN=0, no flash attention", False),   # nothing flash-class ran
    ("no cuDNN fused attention", None),                 # a negation states nothing that ran
    ("--xla_gpu_enable_cudnn_fmha=false", None),
])
def test_cudnn_fused_attention_is_flash_class(notes, expected):
    assert v.flash_statement({"notes": notes}) is expected


def test_nemo_fused_attention_row_runs_flash(tmp_path):
    row = _row(notes="configure.sh: NVTE_FUSED_ATTN=1, NVTE_FLASH_ATTN=0 (cuDNN fused attention)")
    scen, why = v.row_to_scenario(row)
    assert scen is not None, why
    assert scen.parallelism.flash_attention is True
    # the same row with flash stated plainly predicts the same step
    plain = _row(run_id="plain", notes="flash attention")
    out, _ = v.validate(_write(tmp_path, [row, plain]))
    a, b = out["step_time_s"].tolist()
    assert a == pytest.approx(b, rel=1e-12)

