"""Session 51: the new-user report's open items (learned position table shorter than the
sequence, sweep JSON counts, share-link schemes) and their surfaces."""

from __future__ import annotations

import planner
from planner.presets import preset_json


def _position_notes(rep):
    return [n for n in rep.notes if "learned position table" in n]


def test_learned_position_table_shorter_than_the_sequence_is_noted():
    # GPT-3's learned position table has n_ctx = 2,048 rows (Brown et al. 2020, Table 2.1); at
    # seq_len 4,096 positions 2,049-4,096 have no embedding
    d = preset_json("gpt3-175b-a100-1024")
    from planner import catalog
    assert catalog.models()[d["model"]].learned_pos_embeddings == 2048
    d["training"]["seq_len"] = 4096
    d["training"]["global_batch_size"] = 768  # the same tokens per step (1536 × 2048 / 4096)
    notes = _position_notes(planner.evaluate(d))
    assert len(notes) == 1
    assert "2,048 rows, fewer than seq_len = 4,096" in notes[0]
    assert "model.learned_pos_embeddings" in notes[0]


def test_no_position_note_at_or_below_the_table_nor_for_rope_models():
    d = preset_json("gpt3-175b-a100-1024")
    assert d["training"]["seq_len"] == 2048
    assert _position_notes(planner.evaluate(d)) == []  # 2,048 positions, 2,048 rows: no note
    d["training"]["seq_len"] = 1024
    d["training"]["global_batch_size"] = 3072
    assert _position_notes(planner.evaluate(d)) == []
    # a RoPE model (no table) at any length: no note
    r = preset_json("llama3-8b-h100-64")
    r["training"]["seq_len"] = 32768
    r["training"]["global_batch_size"] = 32
    assert _position_notes(planner.evaluate(r)) == []
