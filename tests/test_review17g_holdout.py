"""Review 17g (held-out MLPerf Training large-scale rows): reader defects found while reading
NVIDIA's MLPerf gpt3 / llama31_405b submissions (mlcommons/training_results_v3.1 ... v5.1).

1. A TP-overlap flag given OFF (``TP_COMM_OVERLAP=False`` in NVIDIA's v5.1 llama31_405b FP4
   configs) was read as TP overlap ON: any mention of ``tp_comm_overlap`` counted as on.
2. A NeMo implementation named the MLPerf way (folder / container tag ``eos-dfw_n64_ngc25.01_nemo``)
   was not recognised as an NVIDIA recipe: ``\\bnemo\\b`` does not match after an underscore.
"""
import pytest

from planner import validation as v

MLPERF_NEMO_SOURCE = ("mlcommons/training_results_v5.0: NVIDIA/results/eos-dfw_n64_ngc25.01_nemo/"
                      "llama31_405b/result_0.txt; NVIDIA/benchmarks/llama31_405b/implementations/"
                      "eos-dfw_n64_ngc25.01_nemo/config_DGXH100_64x8x288xtp8pp8cp2.sh")


def _row(source, notes, **over):
    r = {"run_id": "r", "source_key": "K", "model": "Llama 3.1 405B", "layers": "126", "hidden": "16384",
         "heads": "128", "kv_heads": "8", "ffn": "53248", "vocab": "128256", "seq_len": "8192",
         "global_batch_seqs": "1152", "gpu": "H100-SXM5-80GB", "gpu_count": "512", "precision": "fp8",
         "tp": "8", "pp": "8", "dp": "4", "cp": "2", "vpp": "8", "micro_batch": "1",
         "tokens_per_s_per_gpu": "333.7", "source": source, "notes": notes}
    r.update(over)
    return r


@pytest.mark.parametrize("notes, expected", [
    ("config: TP_COMM_OVERLAP=False, ASYM_PP_EMBED=True", False),   # v5.1 llama31_405b FP4 configs
    ("ub_tp_comm_overlap: false", False),
    ("tp_comm_overlap = 0", False),
    ("no tp-comm-overlap", False),
    ("config: TP_COMM_OVERLAP=True", True),
    ("flags: --overlap-grad-reduce --tp-comm-overlap; PP overlap default.", True),
    ("ub_tp_comm_overlap: true", True),
])
def test_tp_overlap_flag_value_is_read(notes, expected):
    # a source outside the NVIDIA recipes: the flag alone decides
    got = v.row_settings({"source": "some cluster blog 2025", "notes": notes})["tp_comm_overlap"]
    assert got is expected


def test_tp_overlap_given_off_beats_nvidia_recipe_default():
    s = v.row_settings({"source": "NVIDIA NeMo performance recipe 2025", "notes": "TP_COMM_OVERLAP=False"})
    assert s["tp_comm_overlap"] is False
    # silence keeps the NVIDIA-recipe default (on), as before
    assert v.row_settings({"source": "NVIDIA NeMo performance recipe 2025", "notes": ""})["tp_comm_overlap"] is True


def test_tp_overlap_off_reaches_the_scenario():
    sc, _ = v.row_to_scenario(_row("some cluster blog 2025", "TP_COMM_OVERLAP=False"))[:2]
    assert sc.parallelism.tp_comm_overlap is False
    sc, _ = v.row_to_scenario(_row("some cluster blog 2025", "TP_COMM_OVERLAP=True"))[:2]
    assert sc.parallelism.tp_comm_overlap is True


def test_mlperf_nemo_folder_is_an_nvidia_recipe():
    s = v.row_settings({"source": MLPERF_NEMO_SOURCE, "notes": ""})
    # NVIDIA-recipe defaults (module docstring): TP overlap on, bf16 gradient reduction
    assert s["tp_comm_overlap"] is True
    assert s["grad_dtype"] == "bf16"


def test_nemotron_is_not_nemo():
    s = v.row_settings({"source": "Nemotron-4 340B Technical Report, arXiv:2406.11704", "notes": ""})
    assert s["tp_comm_overlap"] is False
    assert s["grad_dtype"] == "fp32"
