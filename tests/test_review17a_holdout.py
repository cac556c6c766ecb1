"""Review 17a (hold-out runs): reader defects found while writing new published runs as CSV rows.

Each test builds one minimal row (Llama 3.1 8B, 8 GPUs, 8,192-token sequences, as in the MLPerf
Training llama31_8b runs) and changes one cell to a way of writing it that a source uses. The
expected values are hand arithmetic on the cell (tokens ÷ sequence length), not the reader's
output.
"""
import pytest

from planner.validation import row_to_scenario

SEQ = 8192


def _row(**cells):
    r = {
        "run_id": "t", "source_key": "T", "model": "Llama 3.1 8B", "params_b": "8.0", "layers": "32",
        "hidden": "4096", "heads": "32", "kv_heads": "8", "ffn": "14336", "vocab": "128256",
        "seq_len": str(SEQ), "global_batch_seqs": "32", "global_batch_tokens": "", "gpu": "8xMI325X",
        "gpu_count": "8", "precision": "fp8", "tp": "1", "pp": "1", "cp": "1", "micro_batch": "2",
        "grad_accum": "2", "tokens_per_s_per_gpu": "30000",
    }
    r.update(cells)
    return r


def _scenario(**cells):
    s, why = row_to_scenario(_row(**cells))
    assert s is not None, why
    return s


# --- the global batch written as a token count in the sequences column --------------------------

@pytest.mark.parametrize("cell, seqs", [
    ("262,144 tokens", 262_144 // SEQ),      # 32 sequences, not 262,144
    ("262144 tokens", 262_144 // SEQ),
    ("256K tokens", 256 * 1024 // SEQ),      # 32 (K = 1,024 when that is whole sequences)
    ("~0.25M tokens", (2**20 // 4) // SEQ),  # 32
    ("1M tok", 2**20 // SEQ),                # 128
])
def test_global_batch_in_tokens_in_the_sequences_column(cell, seqs):
    assert _scenario(global_batch_seqs=cell).training.global_batch_size == seqs


@pytest.mark.parametrize("cell", ["32 x 8192 tokens", "32 (262,144 tokens)", "32 sequences"])
def test_global_batch_in_sequences_still_reads_as_sequences(cell):
    assert _scenario(global_batch_seqs=cell).training.global_batch_size == 32


def test_tokens_column_decides_when_both_are_given():
    s = _scenario(global_batch_seqs="524,288 tokens", global_batch_tokens="524288")
    assert s.training.global_batch_size == 524_288 // SEQ  # 64


# --- the micro-batch written as a token count ---------------------------------------------------

@pytest.mark.parametrize("cell, mbs", [("16384 tokens", 16_384 // SEQ), ("16K tokens", 16 * 1024 // SEQ)])
def test_micro_batch_in_tokens(cell, mbs):
    assert _scenario(micro_batch=cell).training.micro_batch_size == mbs  # 2


def test_micro_batch_tokens_not_whole_sequences_is_refused():
    s, why = row_to_scenario(_row(micro_batch="5000 tokens"))
    assert s is None and "micro_batch" in why and "5000 tokens" in why


# --- a split run together in one cell --------------------------------------------------------------

@pytest.mark.parametrize("cell, tp, pp", [("tp8pp1", 8, 1), ("TP4xPP2", 4, 2), ("TP2PP4", 2, 4)])
def test_split_run_together(cell, tp, pp):
    s = _scenario(tp=cell, pp="", global_batch_seqs="32", micro_batch="2", grad_accum="")
    assert (s.parallelism.tp, s.parallelism.pp, s.parallelism.dp) == (tp, pp, 8 // (tp * pp))


def test_split_cell_contradicting_its_own_column_is_refused():
    # "TP4/PP2" in tp beside pp = 1: which pipeline degree ran is not said (was pp = 1, PP2 dropped)
    s, why = row_to_scenario(_row(tp="TP4/PP2", pp="1"))
    assert s is None and "pp" in why and "TP4/PP2" in why


def test_split_cell_agreeing_with_its_own_column_reads():
    s = _scenario(tp="TP4/PP2", pp="2", grad_accum="")
    assert (s.parallelism.tp, s.parallelism.pp) == (4, 2)
