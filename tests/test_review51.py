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


def test_export_notes_a_position_table_shorter_than_seq_len():
    from planner import export

    d = preset_json("gpt3-175b-a100-1024")
    d["training"]["seq_len"] = 4096
    d["training"]["global_batch_size"] = 768
    ex = export.megatron_args(d)
    assert "--max-position-embeddings 4096" in ex.text
    got = [n for n in ex.notes if "learned position table" in n]
    # (4,096 − 2,048) rows × hidden 12,288 (GPT-3 175B, Brown et al. 2020 Table 2.1) = 25,165,824
    assert len(got) == 1 and "2,048 rows, fewer than seq_len = 4,096" in got[0] and "25,165,824 more parameters" in got[0]
    d["training"]["seq_len"], d["training"]["global_batch_size"] = 2048, 1536
    assert not [n for n in export.megatron_args(d).notes if "learned position table" in n]


def test_export_says_one_step_in_the_singular():
    from planner import export

    d = preset_json("default")
    d["training"]["tokens_total"] = 1e6  # less than one global batch (4,194,304 tokens): one step
    text = "\n".join(export.megatron_args(d).notes)
    import re

    assert "the run's 1 step:" in text and not re.search(r"\b1 steps", text)


def test_report_keeps_integer_columns_integers():
    import json

    rep = planner.evaluate(preset_json("default"))
    assert type(rep.results["mem_worst_stage"]) is int
    assert [st["stage"] for st in rep.stages] == list(range(len(rep.stages)))
    assert all(type(st["stage"]) is int for st in rep.stages)
    assert type(rep.results["fits"]) is bool and type(rep.results["step_time_s"]) is float
    dumped = json.loads(rep.model_dump_json())
    assert dumped["stages"][0]["stage"] == 0 and '"stage":0.0' not in rep.model_dump_json()


def test_zero_bubble_text_names_op_sac_reruns_in_b():
    d = preset_json("mixtral-8x7b-h100-64")
    d["parallelism"].update(schedule="zero_bubble", recompute="op_sac", vpp=1)
    text = planner.evaluate(d).explain["t_pp_bubble_s"]
    assert "op_sac's re-run matmuls and elementwise ops are counted in B" in text


def test_steps_text_is_singular_for_one_step():
    from planner._export_checkpoint import _steps_text

    assert _steps_text(1) == "1 step"
    assert _steps_text(2) == "2 steps" and _steps_text(3576279) == "3,576,279 steps"


def test_position_table_warning_goes_to_stderr(capsys):
    from planner import cli

    assert cli.main(["evaluate", "--preset", "gpt3-175b-a100-1024", "--set", "training.seq_len=4096",
                     "--set", "training.global_batch_size=768", "--format", "json"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("planner: warning: The model's learned position table has 2,048 rows")
    assert cli.main(["evaluate", "--preset", "gpt3-175b-a100-1024", "--format", "json"]) == 0
    assert "position table" not in capsys.readouterr().err


def test_batch_of_two_recompute_modes_under_interleaved_moe_evaluates():
    """Review 51 (an older crash, from a99f41f): DeepSeek-V3 at pp 8, vpp 2, interleaved, in one batch
    with recompute none and selective: the rank, p, v and m alike in both rows but the kept
    activations not, and memory._interleaved_stash_mixed read them as one row ("cannot reshape
    array of size 2 into shape (1,)"). A batch must give each row's own result."""
    from copy import deepcopy

    d = preset_json("deepseek-v3-h800-2048")
    d["parallelism"].update(schedule="interleaved", vpp=2, pp=8, dp=None)
    d["cluster"]["n_gpus"] = 1024
    rows = []
    for rc in ("none", "selective", "full"):
        x = deepcopy(d)
        x["parallelism"]["recompute"] = rc
        rows.append(x)
    df = planner.evaluate_many(rows)
    for i, x in enumerate(rows):
        one = planner.evaluate(x).results
        for col in ("mem_total_bytes", "mem_activations_bytes", "step_time_s"):
            assert df[col].iloc[i] == one[col], (i, col)
