"""Review 16i: a critical read of the engine diff 485401a..HEAD (MTP, expert TP, async staging,
cost notes, evaluate_many tables).

Every expected value is a hand calculation from published architectures or catalogue figures:

* Llama 3 8B (Meta, "The Llama 3 Herd of Models", arXiv:2407.21783, Table 3 and config.json): 32
  layers, h 4,096, 32 heads, 8 KV heads of 128, SwiGLU FFN 14,336, vocabulary 128,256, untied
  embeddings, RMSNorm (one h-wide weight per norm).
* Qwen3-235B-A22B (Qwen3 technical report Table 2, config.json): 94 layers, h 4,096, 128 experts,
  top-8; the split of tests/test_review16e_etp.py (TP 4 × PP 2 × DP 16, EP 8, SP, mb 1, s 4,096).
* GB200 NVL72: 4 GPUs per compute tray (node), 72 GPUs per NVLink domain (rack).

Each defect below was xfail(strict=True) until its fix landed the same session; the comment above
each test keeps what it found.
"""

from __future__ import annotations

import copy

import pytest

import planner
from planner import cost
from planner import catalog

# --- Llama 3 8B, by hand -----------------------------------------------------------------------
H, L, KV, DH, F, V = 4096, 32, 8, 128, 14336, 128256
ATTN = 2 * H * H + 2 * H * KV * DH  # q, o (h × h) + k, v (h × kv·dh)
MLP = 3 * H * F  # SwiGLU: W1, W3, W2
NORMS = 2 * H  # two RMSNorm weights per layer
LAYER = ATTN + MLP + NORMS  # 218,112,000
EMB = V * H  # 525,336,576 (untied: the output head is as large)


def _llama8b(mtp_layers: int) -> dict:
    m = catalog.resolve_model("llama3-8b").model_dump(mode="json", exclude_none=True)
    m["mtp_layers"] = mtp_layers
    return {"model": m, "cluster": {"system": "dgx-h100", "n_gpus": 8},
            "training": {"seq_len": 4096, "global_batch_size": 16, "micro_batch_size": 1},
            "parallelism": {"tp": 1, "pp": 2, "dp": 4, "zero_stage": 1, "recompute": "full"}}


def test_llama8b_last_stage_weights_by_hand_alone():
    """Precondition of the next test (passes): PP 2, TP 1, no MTP: the last stage holds 16 layers, the
    output head V·h and the final norm h, in bf16: 2 B × (16·218,112,000 + 525,336,576 + 4,096)."""
    want = 2.0 * (16 * LAYER + EMB + H)
    assert LAYER == 218_112_000 and want == 8_030_265_344
    got = float(planner.evaluate_many([_llama8b(0)]).iloc[0]["mem_weights_bytes"])
    assert got == pytest.approx(want, rel=1e-12)


# Found by review 16i, fixed the same session: memory._common adds the MTP stage's copy of the input
# embedding (emb_copy · ((p > 1) & ~dual)) to p_mtp_ne without the factor D > 0, and _stage_parts
# adds p_mtp_ne on the last stage of every row once any row of the batch has mtp_layers > 0: a row
# WITHOUT MTP gains V·h/t parameters (weights, gradients, optimizer) on its last stage when batched
# beside an MTP row
def test_a_row_without_mtp_is_not_charged_an_embedding_copy_in_a_batch_with_mtp():
    want = 2.0 * (16 * LAYER + EMB + H)  # as alone: no MTP, no copy of the embedding
    df = planner.evaluate_many([_llama8b(0), _llama8b(1)])
    assert float(df.iloc[0]["mem_weights_bytes"]) == pytest.approx(want, rel=1e-12)
    # and the whole memory of that row equals its memory alone (4.96 GB apart today)
    alone = planner.evaluate_many([_llama8b(0)]).iloc[0]
    for col in ("mem_grads_bytes", "mem_optimizer_bytes", "mem_total_bytes"):
        assert float(df.iloc[0][col]) == pytest.approx(float(alone[col]), rel=1e-12), col


# --- Qwen3-235B under expert TP: the timing note on activation memory ---------------------------
QH, QTOPK, QL, QPP, QTP, SEQ = 4096, 8, 94, 2, 4, 4096


def _qwen(etp: int) -> dict:
    par = {"tp": QTP, "pp": QPP, "dp": 16, "ep": 8, "sequence_parallel": True, "zero_stage": 1,
           "recompute": "selective", "schedule": "1f1b", "etp": etp}
    return {"model": "qwen3-235b-a22b", "cluster": {"system": "dgx-h100", "n_gpus": 128},
            "training": {"seq_len": SEQ, "global_batch_size": 512, "micro_batch_size": 1}, "parallelism": par}


# Found by review 16i, fixed the same session: timing.notes (the 'Expert TP … ≠ TP …' note) still
# says 'not counted: … for etp > 1 the dispatched tokens the expert-TP all-gather replicates in
# activation memory', but since review 16h memory._common counts that gathered fc1 input (2h·r·etp/t
# per token
def test_expert_tp_note_does_not_deny_the_gathered_fc1_input_that_memory_counts():
    r1, r2 = planner.evaluate(_qwen(1)), planner.evaluate(_qwen(2))
    # by hand: the fc1 input grows by 2 B · h · top_k · (2 − 1)/tp per token: 2·4096·8/4 = 16,384 B,
    # × 4,096 tokens × 47 layers of the first stage × 2 micro-batches in flight (1F1B, PP 2)
    want = 2 * QH * QTOPK * (2 - 1) / QTP * SEQ * (QL // QPP) * 2
    assert want == 6_308_233_216
    got = r2.results["mem_activations_bytes"] - r1.results["mem_activations_bytes"]
    assert got == pytest.approx(want, rel=1e-9)  # memory counts it (passes)
    note = " ".join(n for n in r2.notes if n.startswith("Expert TP 2"))
    assert note  # the expert-TP note is there (passes)
    assert "replicates in activation memory" not in note


# --- cost: whole-rack billing of a job inside one NVL72 rack ----------------------------------

# Found by review 16i, fixed the same session: cost._partial_node_note gives the whole-rack bill
# only when the job spans more than one NVLink domain (n > dom); 64 GB200 GPUs in one 72-GPU NVL72
# rack (8 idle) get no note, while 128 GPUs (two racks of 64) get 'bills 144 GPUs, 1.125 ×'
def test_a_job_inside_one_nvl72_rack_gets_the_whole_rack_bill_note():
    # GB200 NVL72: 4 GPUs per tray, 72 per rack; 64 GPUs: 16 whole trays in one rack, 8 GPUs idle.
    row = {"n_gpus": 64, "gpus_per_node": 4, "nvlink_domain_size": 72, "hot_spare_nodes": 0}
    two = {**row, "n_gpus": 128}
    assert any("bills 144 GPUs, 1.125 ×" in n for n in cost.notes(two))  # 2 racks (passes)
    assert any("bills 72 GPUs, 1.125 ×" in n for n in cost.notes(row))  # 72 / 64 = 1.125


# --- evaluate_many: a key input column that exists only in some batches ------------------------

# Found by review 16i, fixed the same session: etp is a KEY_INPUT_COLUMNS entry, but batch.from_rows
# drops the column when every row has etp = tp, so evaluate_many(..., columns=['etp']) answers
# \"unknown 'etp'\" for such a batch and the value for a batch with one etp ≠ tp row: a valid column
# name depends on the neighbours
def test_evaluate_many_columns_etp_is_known_for_any_batch():
    mixed = planner.evaluate_many([_qwen(1), _llama8b(0)], columns=["tp", "etp"])
    assert list(mixed["etp"]) == [1, 1]  # Llama at TP 1: etp = tp = 1 (passes)
    alone = planner.evaluate_many([_llama8b(0)], columns=["tp", "etp"])
    assert list(alone["etp"]) == [1]
