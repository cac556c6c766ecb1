"""Predicted vs published throughput on ../shared/validation/calibration.csv.

Thresholds from the issue: per source group median |relative error| <= 10% and max <= 25%.
"""

import math
import re

import numpy as np
import pandas as pd
import pytest

from planner import validation

GROUPS = ["Narayanan", "Korthikanti", "Megatron-Core H100", "MosaicML FSDP", "NeMo FP8"]


@pytest.fixture(scope="module")
def result():
    return validation.validate()


def test_parsers():
    assert validation.parse_number("51200 (assumed)") == 51200
    assert validation.parse_number("3 (FSDP FULL_SHARD)") == 3
    assert math.isnan(validation.parse_number("n/a"))
    # thousands separators are one number, not the first group (16,384 GPUs is not 16)
    assert validation.parse_number("16,384") == 16384 and validation.parse_number("1,024 (128 nodes)") == 1024
    assert validation.parse_number("~400") == 400 and validation.parse_number("16 384") == 16384
    # a multiplier, a decimal comma or another grouping is ambiguous: not a number (review finding:
    # '8K' was read as 8 and compared, -99 %)
    for cell in ("8K", "16K", "4M", "175B", "1,5", "0,5", "8,5", "30,00,000", "1,234,56", "2^11"):
        assert math.isnan(validation.parse_number(cell)), cell
    assert validation.parse_recompute("full (activation checkpointing)") == "full"
    assert validation.parse_recompute("selective (attention core only) + sequence parallelism") == "selective"
    assert validation.parse_recompute(None) == "none"


#: GPU name (and interconnect text) -> system: the more specific name wins (GB200 is not a B200
#: node, H200 not an H100); V100 is a DGX-1 unless a DGX-2 or NVSwitch is named; MI250X is a
#: Frontier node counted in GCDs (hardware.md §3 reference nodes).
GPU_SYSTEMS = [
    ("A100-SXM4-80GB", "", "dgx-a100-80gb"), ("DGX-H100", "", "dgx-h100"), ("GB200 NVL72", "", "gb200-nvl72"),
    ("B200-SXM-180GB", "", "dgx-b200"), ("H200 SXM 141GB", "", "dgx-h200"), ("H800", "", "hgx-h800"),
    ("A100-SXM4-40GB", "", "dgx-a100-40gb"), ("AMD Instinct MI300X", "", "mi300x-8"), ("TPU v4", "", None),
    ("Tesla V100-SXM2-32GB", "4x IB EDR", "dgx1-v100"), ("V100-SXM3-32GB (DGX-2H)", "", "dgx2-v100"),
    ("V100 32GB", "NVSwitch, 8x 100 Gb/s per node", "dgx2-v100"), ("AMD MI250X (GCD)", "", "frontier-mi250x"),
    ("AMD Instinct MI325X", "", "mi325x-8"), ("Intel Gaudi 2", "", "gaudi2-8"), ("Gaudi2 HL-225H", "", "gaudi2-8"),
    ("Gaudi 3", "", "gaudi3-8"), ("A800-SXM4-80GB", "", "hgx-a800"),
    # TorchTitan's HBM2e H100 at 500 W; Llama 3's Grand Teton H100 is the standard 80 GB part
    ("H100 SXM, 95 GiB HBM2e (lower-TDP variant)", "", "hgx-h100-96gb-hbm2e"),
    ("H100", "Meta Grand Teton: 8 H100 (700 W, 80 GB HBM3)", "dgx-h100"),
    ("H100 80GB HBM3", "Grand Teton, 500 W", "dgx-h100"), ("V100", "NVSwitch-free", "dgx1-v100"),
    ("Gaudi-2", "", "gaudi2-8"), ("Intel Gaudi®2", "", "gaudi2-8"),
    # no PCIe-card system in the catalogue: skipped, not read as the SXM board
    ("Tesla V100 PCIe 16GB", "", None), ("A100 PCIe 40GB", "", None), ("H100 PCI-e", "", None),
    ("H100 PCI Express", "", None), ("H100 NVL", "", None), ("Intel(R) Gaudi(R) 2", "", "gaudi2-8"),
]


@pytest.mark.parametrize("name,context,system", GPU_SYSTEMS)
def test_gpu_name_to_system(name, context, system):
    assert validation.system_for_gpu(name, context) == system


def test_v100_rows_run_in_fp16():
    """V100 has no BF16 units (hardware.md §1): an empty or 16-bit precision cell is fp16 there,
    and the DGX-2's 16 GPUs share one NVSwitch domain; a Frontier node has 8 GCDs of 191.5
    TFLOP/s (half the 383 of an MI250X package) and 64 GiB each."""
    from planner import batch as _batch, catalog
    s, why = validation.row_to_scenario(_row(gpu="V100-SXM3-32GB (DGX-2H)", precision="", gpu_count=512,
                                             tp=8, pp=1, layers=72, hidden=3072, heads=32, ffn=12288,
                                             seq_len=1024, global_batch_seqs=512))
    assert s is not None, why
    assert s.training.precision == "fp16" and s.cluster.system == "dgx2-v100"
    b = _batch.from_scenarios([s])
    assert b["gpus_per_node"][0] == 16 and b["peak_flop_per_s"][0] == 125e12
    s, why = validation.row_to_scenario(_row(gpu="V100", precision="fp16 mixed", tp=8, pp=1, gpu_count=64))
    assert s is not None and s.training.precision == "fp16" and s.cluster.system == "dgx1-v100", why
    s, why = validation.row_to_scenario(_row(gpu="MI250X GCD", precision="bf16", gpu_count=1024))
    assert s is not None and s.training.precision == "bf16", why
    b = _batch.from_scenarios([s])
    assert b["peak_flop_per_s"][0] == 191.5e12 and b["hbm_bytes"][0] == 64 * 2**30
    gcd, oam = catalog.accelerators()["mi250x-gcd"], catalog.accelerators()["mi250x"]
    assert 2 * gcd.peak_flop_per_s["bf16"] == oam.peak_flop_per_s["bf16"]
    assert 2 * gcd.hbm_bw_bytes_per_s == oam.hbm_bw_bytes_per_s


def test_skipped_rows_have_reasons(result):
    rows, _ = result
    sk = rows[rows["status"].str.startswith("skipped")]
    assert len(sk) >= 1
    assert (sk["status"].str.len() > len("skipped: ")).all()
    assert "nemo_24.07_DGX-H100_Nemotron-8B_64_FP8" in set(sk["run_id"])


def test_every_group_present(result):
    _, summary = result
    assert set(GROUPS) <= set(summary["group"])


@pytest.mark.parametrize("group", GROUPS)
def test_median_error_within_10pct(result, group):
    _, summary = result
    row = summary.set_index("group").loc[group]
    assert row["median_abs_err"] <= 0.10, f"{group}: median |err| = {row['median_abs_err']:.3f}"


#: Measured shortfall, kept visible: remove the mark when MosaicML's max |error| is <= 25 %.
MOSAIC_MAX_XFAIL = pytest.mark.xfail(
    strict=True,
    reason="MosaicML FSDP max |err| 27.8% (760m seq512 +28%; mpt 30b seq8192 mbs1 +27%, 760m seq1024 +21%; "
    "28.5% before session 37's flash backward) "
    "vs target 25%: the published throughput of these runs falls where every group-wide term rises "
    "(760m: shorter sequences slower than seq2048, unlike every other MPT size; 30b seq8192: 23% below "
    "its seq4096 FLOP rate at an estimated 0.90 of HBM while the 0.99 MPT-3B run is not slowed); not "
    "tuned to single rows",
)


@pytest.mark.parametrize("group", [pytest.param(g, marks=MOSAIC_MAX_XFAIL) if g == "MosaicML FSDP" else g
                                   for g in GROUPS])
def test_max_error_within_25pct(result, group):
    _, summary = result
    row = summary.set_index("group").loc[group]
    assert row["max_abs_err"] <= 0.25, f"{group}: max |err| = {row['max_abs_err']:.3f}"


def test_unpublished_batch_is_built_but_not_compared(result):
    """Default rule: a row without a global batch is built (m = p, for the memory check) but its
    throughput is not compared, since the step time depends on the batch."""
    rows, _ = result
    r = rows.set_index("run_id").loc["korthikanti22_530B_2240gpu_seqsel"]
    assert r["status"].startswith("not compared")
    assert math.isnan(r["rel_err"])


def test_default_rule_per_framework():
    """One rule, decided by the row's cells then by its framework (planner.validation docstring)."""
    df = pd.read_csv(validation.DEFAULT_CSV)
    scen, idx, _ = validation.rows_to_scenarios(df)
    by = {s.name: s for s in scen}
    mpt = by["mpt_a100_80gb_amp_bf16_7b_seq2048_8gpu_mbs6"]
    assert (mpt.parallelism.zero_stage, mpt.training.grad_dtype) == (3, "bf16")   # Composer FSDP PURE
    nemo = by["nemo_24.07_DGX-H100_Nemotron-340B_128_FP8"]
    assert (nemo.parallelism.zero_stage, nemo.training.grad_dtype, nemo.training.precision) == (1, "bf16", "fp8")
    assert nemo.model.linear_bias is False and nemo.model.tied_embeddings is False
    mc = by["mcore080_h100_weak_70B"]
    assert (mc.parallelism.zero_stage, mc.training.grad_dtype, mc.parallelism.tp_comm_overlap) == (1, "fp32", True)
    old = by["narayanan21_t1_145.6B"]
    assert (old.parallelism.zero_stage, old.training.precision, old.parallelism.flash_attention) == (0, "fp16", False)
    ko = by["korthikanti22_175B_seqpar_selective"]
    assert ko.parallelism.sequence_parallel and ko.parallelism.recompute == "selective"
    assert ko.parallelism.vpp == 3 and ko.parallelism.schedule == "interleaved"


def test_reads_any_csv_with_the_columns(tmp_path):
    df = pd.read_csv(validation.DEFAULT_CSV)
    sub = df[df["source_key"] == "KORTHIKANTI22"]
    p = tmp_path / "k.csv"
    sub.to_csv(p, index=False)
    rows, summary = validation.validate(p)
    assert len(rows) == len(sub)
    assert list(summary["group"]) == ["Korthikanti", "overall"]


def test_missing_columns_is_an_error(tmp_path):
    p = tmp_path / "bad.csv"
    pd.DataFrame({"run_id": ["x"]}).to_csv(p, index=False)
    with pytest.raises(ValueError, match="missing columns"):
        validation.validate(p)


def test_source_year():
    # arXiv ids give the submission year (Narayanan et al. 2021: arXiv:2104.04473)
    assert validation.source_year("SC'21 / arXiv:2104.04473, Table 1 (commit x, 2021-04-08)") == 2021
    assert validation.source_year("MLSys'23 / arXiv:2205.05198, Table 5") == 2022
    assert validation.source_year("README (last change 495218376, 2024-04-22)") == 2024
    assert validation.source_year("docs/performance_summary.md, commit 070a0bb168") is None


#: Framework settings of each calibration source, as documented (planner/validation.py module
#: docstring, with its sources: Megatron-LM 2021-22 had no flash attention nor distributed
#: optimizer; Megatron-Core r0.8.0 publishes --tp-comm-overlap; NeMo 24.07 recipes set
#: ub_tp_comm_overlap and grad_sync_dtype bf16; llm-foundry runs flash-attn 2 with bf16 reduce;
#: sequence parallelism, Korthikanti et al. May 2022, is not the default of the 2021-22 runs).
DOCUMENTED = {
    "NARAYANAN21_T1": {"flash_attention": False, "zero_stage": 0, "tp_comm_overlap": False,
                       "grad_dtype": "fp32", "attention_kernel": "flash2", "sp_default": False, "cross_entropy": "fused", "elementwise": "fused", "elementwise_by_rule": False,
                   "dp_comm_overlap": True, "ep_comm_overlap": None, "ep_node_dispatch": False},
    "KORTHIKANTI22": {"flash_attention": False, "zero_stage": 0, "tp_comm_overlap": False,
                      "grad_dtype": "fp32", "attention_kernel": "flash2", "sp_default": False, "cross_entropy": "fused", "elementwise": "fused", "elementwise_by_rule": False,
                   "dp_comm_overlap": True, "ep_comm_overlap": None, "ep_node_dispatch": False},
    "MCORE_R080_H100": {"flash_attention": True, "zero_stage": 1, "tp_comm_overlap": True,
                        "grad_dtype": "fp32", "attention_kernel": "native", "sp_default": True, "cross_entropy": "fused", "elementwise": "fused", "elementwise_by_rule": False,
                   "dp_comm_overlap": True, "ep_comm_overlap": None, "ep_node_dispatch": False},
    "NEMO_24.07": {"flash_attention": True, "zero_stage": 1, "tp_comm_overlap": True,
                   "grad_dtype": "bf16", "attention_kernel": "native", "sp_default": True, "cross_entropy": "fused", "elementwise": "fused", "elementwise_by_rule": False,
                   "dp_comm_overlap": True, "ep_comm_overlap": None, "ep_node_dispatch": False},
    "MOSAIC_MPT": {"flash_attention": True, "zero_stage": 1, "tp_comm_overlap": False,
                   "grad_dtype": "bf16", "attention_kernel": "flash2", "sp_default": True, "cross_entropy": "fused", "elementwise": "fused", "elementwise_by_rule": False,
                   "dp_comm_overlap": False, "ep_comm_overlap": None, "ep_node_dispatch": False},
}


def test_one_text_rule_gives_each_calibration_source_its_documented_settings():
    """The framework rule reads only a row's source / notes text (no per-source table), and on
    every calibration row that is built and compared it gives the documented settings."""
    df = pd.read_csv(validation.DEFAULT_CSV)
    checked = 0
    for r in df.to_dict("records"):
        r = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
        if validation.row_to_scenario(r)[0] is None or all(
                math.isnan(validation.parse_number(r.get(c)))
                for c in ("tflops_per_gpu", "mfu_pct", "step_time_s", "tokens_per_s_per_gpu")):
            continue  # skipped, or nothing published to compare: not used by the fit
        assert validation.row_settings({**r, "source_key": "ANY"}) == DOCUMENTED[r["source_key"]], r["run_id"]
        checked += 1
    assert checked >= 90


def test_text_rule_on_other_sources():
    old = {"source_key": "X", "source": "Smith et al., arXiv:2201.11990, Table 2", "notes": ""}
    assert validation.row_settings(old) == {"flash_attention": False, "zero_stage": 0,
                                            "tp_comm_overlap": False, "grad_dtype": "fp32",
                                            "attention_kernel": "flash2", "sp_default": False, "cross_entropy": "fused", "elementwise": "fused", "elementwise_by_rule": False,
                                            "dp_comm_overlap": True, "ep_comm_overlap": None, "ep_node_dispatch": False}
    nemo = {"source_key": "Y", "source": "NVIDIA NeMo 25.09 performance summary", "notes": "Nemotron-4"}
    assert validation.row_settings(nemo) == {"flash_attention": True, "zero_stage": 1,
                                             "tp_comm_overlap": True, "grad_dtype": "bf16",
                                             "attention_kernel": "native", "sp_default": True, "cross_entropy": "fused", "elementwise": "fused", "elementwise_by_rule": False,
                                             "dp_comm_overlap": True, "ep_comm_overlap": None, "ep_node_dispatch": False}
    # TorchTitan: its 2024 versions ran the loss eagerly; from 2025 torch.compile compiles it too
    titan = lambda src, notes="": validation.row_settings({"source": src, "notes": notes})["cross_entropy"]  # noqa: E731
    assert titan("Liang et al., TorchTitan, arXiv:2410.06511 (ICLR 2025 version)", "torch.compile ON") == "eager"
    assert titan("pytorch/torchtitan docs/performance.md; torchtitan 9dec370 (2024/12/26)", "torch.compile ON") == "eager"
    assert titan("pytorch/torchtitan benchmarks (2025/06/13)", "--training.compile") == "fused"
    assert titan("pytorch/torchtitan benchmarks (2025/06/13)", "torch.compile OFF") == "eager"
    assert titan("pytorch/torchtitan benchmarks (2025/06/13)") == "eager"
    assert titan("Megatron-LM (2025)", "torch.compile OFF") == "fused"
    # sequence parallelism (Korthikanti et al., May 2022) is no default before 2023: a 2022 row
    # with tp > 1 and no sp cell runs without it
    s, why = validation.row_to_scenario(_row(source="Smith et al., arXiv:2201.11990", tp=8))
    assert s is not None and s.parallelism.sequence_parallel is False, why
    s, why = validation.row_to_scenario(_row(source="NVIDIA NeMo 25.09 performance summary", tp=8))
    assert s is not None and s.parallelism.sequence_parallel is True, why
    # llm-foundry on H100 (2024): FlashAttention-2 kernels, whatever the year
    foundry = {"source_key": "W", "source": "mosaicml/llm-foundry benchmarking README (2024)", "notes": ""}
    assert validation.row_settings(foundry)["attention_kernel"] == "flash2"
    assert validation.row_settings({"source_key": "V", "source": "arXiv:2407.21783", "notes": ""}
                                   )["attention_kernel"] == "native"
    # TorchTitan without torch.compile runs its norms, RoPE and SwiGLU as eager PyTorch ops
    ew = lambda src, notes="": validation.row_settings({"source": src, "notes": notes})["elementwise"]  # noqa: E731
    assert ew("pytorch/torchtitan docs/performance.md (2024/12/26)", "torch.compile OFF") == "eager"
    assert ew("pytorch/torchtitan docs/performance.md (2024/12/26)") == "eager"
    assert ew("pytorch/torchtitan docs/performance.md (2024/12/26)", "torch.compile ON") == "fused"
    assert ew("pytorch/torchtitan benchmarks (2025/06/13)", "--training.compile") == "fused"
    assert ew("Megatron-LM (2025)", "torch.compile OFF") == "fused"
    # another PyTorch-native FSDP stack that states torch.compile was not used: the same eager
    # ops and loss (IBM's FSDP blog lists torch.compile among the levers it did not use);
    # silence, or an engine with its own fused kernels, keeps the fused kernels
    ce = lambda src, notes="": validation.row_settings({"source": src, "notes": notes})["cross_entropy"]  # noqa: E731
    ibm = "PyTorch blog 'Maximizing training throughput using PyTorch FSDP' (2024)"
    assert ew(ibm, "no torch.compile") == "eager" and ce(ibm, "no torch.compile") == "eager"
    assert ew(ibm) == "fused" and ce(ibm) == "fused"
    assert ew(ibm, "torch.compile on") == "fused"
    assert ew("Megatron-DeepSpeed with FSDP-style ZeRO-3 (2023)", "no torch.compile") == "fused"
    assert ew("mosaicml/llm-foundry FSDP benchmarks (2024)", "no torch.compile") == "fused"
    assert ew("mosaicml/llm-foundry benchmarking README (2024)") == "fused"
    # PyTorch SDPA (TorchTitan): PyTorch's FlashAttention-2 backend on Hopper until cuDNN is
    # preferred again (pytorch#138522 made it opt-in in Oct 2024; PyTorch 2.11, 2026); on
    # Blackwell TorchTitan itself picks cuDNN from May 2025 (torchtitan#1196)
    sdpa = lambda src, notes="", gpu="H100 SXM": validation.row_settings(  # noqa: E731
        {"source": src, "notes": notes, "gpu": gpu})["attention_kernel"]
    assert sdpa("pytorch/torchtitan docs/performance.md; torch 1963fc8 (2024/12/23)") == "flash2"
    assert sdpa("Liang et al., TorchTitan, arXiv:2410.06511") == "flash2"
    assert sdpa("pytorch/torchtitan benchmarks (2025/06/13)", gpu="H200") == "flash2"
    assert sdpa("pytorch/torchtitan benchmarks (2026/03/01)") == "native"
    assert sdpa("pytorch/torchtitan benchmarks (2025/06/13)", gpu="B200") == "native"
    assert sdpa("pytorch/torchtitan benchmarks (2024/12/26)", gpu="B200") == "flash2"
    assert sdpa("pytorch/torchtitan benchmarks (2025/06/13)", "SDPA with the cuDNN attention backend") == "native"
    assert sdpa("some FSDP blog (2025)", "attention: PyTorch SDPA") == "flash2"
    assert sdpa("some FSDP blog (2025)", "attention: FlashAttention-3") == "native"
    assert sdpa("NVIDIA NeMo 24.07 performance summary (2024)", "SDPA") == "native"  # TE's own kernels
    # FlashAttention-2 named as what ran (not a citation of its paper): its kernels on Hopper too
    assert sdpa("nanotron benchmarks (2025)", "attention: FlashAttention-2 (flash-attn 2.5.8)") == "flash2"
    assert sdpa("nanotron benchmarks (2025)", "we use FA2") == "flash2"
    assert sdpa("nanotron benchmarks (2025)", "as in the FlashAttention-2 paper (Dao et al.)") == "native"
    assert sdpa("nanotron benchmarks (2025)", "FlashAttention-2 on A100, FlashAttention-3 on H100") == "native"
    assert sdpa("nanotron benchmarks (2025)", "no FlashAttention-2") == "native"
    # negated or comparative mentions state nothing; citations neither
    for notes in ("we did not use SDPA", "no SDPA", "SDPA disabled", "TE fused attention instead of SDPA"):
        assert sdpa("A paper 2024", notes) == "native", notes
    assert sdpa("pytorch/torchtitan docs (2024/12/26)", "unlike the FlashAttention-3 paper, SDPA") == "flash2"
    assert sdpa("pytorch/torchtitan docs (2024/12/26)", "FlashAttention-3 was not used") == "flash2"
    assert sdpa("pytorch/torchtitan docs (2024/12/26)", "we use FlashAttention-3 (Shah et al., 2024)") == "native"
    # comparisons name what a run is compared with, not what it ran (read by the framework rules
    # only: flash attention itself stays on, and the shared negation parser is unchanged)
    for notes in ("SDPA instead of FlashAttention-3", "slower than FlashAttention-3", "SDPA vs. cuDNN attention",
                  "SDPA (vs. FA3)", "FA2 vs. FA3", "SDPA compared with cuDNN attention", "SDPA rather than FA3"):
        got = validation.row_settings({"source": "pytorch/torchtitan docs (2024/12/26)", "notes": notes,
                                       "gpu": "H100 SXM"})
        assert (got["attention_kernel"], got["flash_attention"]) == ("flash2", True), (notes, got)
    assert ew("pytorch/torchtitan docs (2024/12/26)", "1.2x faster than eager with torch.compile") == "fused"
    assert ew("pytorch/torchtitan docs (2024/12/26)", "eager, 1.2x slower than torch.compile") == "eager"
    assert validation.parse_zero_stage("FSDP hybrid (vs full sharding)") == 3
    assert validation.parse_zero_stage("HSDP, compared to full sharding") == 3
    assert sdpa("A paper 2024", "FlashAttention-2 instead of FlashAttention-3") == "flash2"
    # the framework is the one the source names: a TorchTitan comparison in a row's notes is not
    # a TorchTitan run, and NVIDIA recipes keep Transformer Engine's attention whatever they name
    for src, notes in (("A paper 2024", "not TorchTitan; Transformer Engine"),
                       ("NVIDIA NeMo 24.07 performance summary, compared with TorchTitan 2024", ""),
                       ("A paper 2024", "faster than TorchTitan"),
                       ("Megatron-Bridge 25.11 docs", "TorchTitan comparison"),
                       ("NVIDIA NeMo 24.07", "flash-attn 2.5.8 installed"),
                       ("Megatron-Bridge 26.02", "FA2"),
                       ("NeMo 2024", "FlashAttention-2 through TE")):
        got = validation.row_settings({"source": src, "notes": notes, "gpu": "H100 SXM"})
        assert (got["attention_kernel"], got["elementwise"], got["cross_entropy"]) == ("native", "fused", "fused"), (
            src, notes, got)
    # a NeMo comparison in a TorchTitan row's notes does not make it an NVIDIA recipe
    got = validation.row_settings({"source": "TorchTitan 2024 (arXiv:2410.06511)", "notes": "unlike NeMo, no TP overlap",
                                   "gpu": "H100 SXM"})
    assert (got["tp_comm_overlap"], got["grad_dtype"], got["attention_kernel"]) == (False, "fp32", "flash2"), got
    # PyTorch SDPA outside TorchTitan on Blackwell: PyTorch prefers cuDNN only from 2.11 (2026)
    assert sdpa("some paper 2025", "PyTorch SDPA", gpu="B200") == "flash2"
    # torch.compile stated in other words
    for notes in ("compile = true", "training.compile = true", "torch compile enabled", "compiled model"):
        assert ew("pytorch/torchtitan docs/performance.md (2024/12/26)", notes) == "fused", notes
    # "Nemotron" alone is a model name, not the NeMo framework
    assert validation.row_settings({"source_key": "Z", "source": "Nemotron-4 340B report, 2024",
                                    "notes": ""})["tp_comm_overlap"] is False


def _row(**kw):
    base = {"run_id": "r", "source_key": "X", "model": "GPT 175B", "layers": 96, "hidden": 12288,
            "heads": 96, "ffn": 49152, "seq_len": 2048, "global_batch_seqs": 1536, "gpu": "A100-SXM4-80GB",
            "gpu_count": 1024, "tp": 8, "pp": 8, "source": "arXiv:2104.04473", "notes": ""}
    return {**base, **kw}


def test_vpp_default_rule():
    """Empty vpp: one layer per virtual stage (max(2, L // pp)) only when the row names an
    interleaved schedule (the median depth of the calibration file's published interleaved
    configurations: 4, 1, 2, 1, 1, 1, 4 layers per virtual stage)."""
    def vpp_of(**kw):
        s, why = validation.row_to_scenario(_row(**kw))
        assert s is not None, why
        return s.parallelism.vpp, s.parallelism.schedule
    assert vpp_of(notes="") == (1, "1f1b")
    # Llama 3 (arXiv:2407.21783 Sec. 3.3.2) names the schedule, not its depth
    # 96 layers over pp 8: 12 virtual stages of one layer each
    assert vpp_of(notes="Pipeline: interleaved schedule with V stages per rank, V not published") == (12, "interleaved")
    # Narayanan et al.'s row says the setting is unknown, and a negation names no schedule
    assert vpp_of(notes="Micro-batch size and interleaving (vpp) not given in Table 1.") == (1, "1f1b")
    assert vpp_of(notes="run without the interleaved schedule") == (1, "1f1b")
    # a published cell wins; no pipeline, no interleaving
    assert vpp_of(notes="interleaved schedule", vpp="3") == (3, "interleaved")
    assert vpp_of(notes="interleaved schedule", pp=1, tp=8) == (1, "1f1b")


def test_out_of_sample_file_is_fully_evaluated():
    """validation/out_of_sample.csv (published runs outside the calibration file, never used by
    the fit; docs/timing.md reports the errors) must stay buildable: every row evaluated with a
    finite prediction under the default rule."""
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "validation" / "out_of_sample.csv"
    rows, summary = validation.validate(path)
    assert len(rows) >= 15
    assert not rows["status"].str.startswith("skipped").any(), rows.loc[rows["status"] != "ok", "status"]
    assert np.isfinite(rows["rel_err"]).all()
    assert summary.iloc[-1]["group"] == "overall"


def test_unreadable_cells_skip_the_row_with_a_reason():
    """A cell the default rule cannot read is a skipped row with the cell named, never a
    silent default (review finding: precision 'int3' and recompute 'weird' were read as bf16 / none)."""
    s, why = validation.row_to_scenario(_row(precision="int3"))
    assert s is None and "precision 'int3'" in why
    s, why = validation.row_to_scenario(_row(recompute="weird"))
    assert s is None and "recompute 'weird'" in why
    s, why = validation.row_to_scenario(_row(layers=-5))
    assert s is None and why == "layers = -5 must be at least 1"
    s, why = validation.row_to_scenario(_row(heads=100))  # 100 heads: tp = 8 does not divide them
    assert s is None and why.startswith("invalid scenario: ") and "n_heads" in why and "[type=" not in why
    s, why = validation.row_to_scenario(_row(tp=3))  # 96 heads / 3 fine, but 1024 GPUs / (3·8) is not whole
    assert s is None and "[type=" not in why and "input_value" not in why
    assert validation.parse_recompute("none (no activation checkpointing)") == "none"
    assert validation.parse_precision("amp_bf16") == "bf16"
    assert validation.parse_precision("FP8-CS") == "fp8"
    assert validation.parse_precision("NVFP4") == "fp4"


def test_hfu_only_row_is_compared_as_hfu(tmp_path):
    """A row that publishes only an HFU (% of peak with recomputed FLOPs, e.g. Frontier's "GPU
    throughput") is compared on HFU: hardware FLOP per step (model + recompute) over the 16-bit
    peak. With full recompute the hardware count is the model count plus one more forward
    (x 4/3 of 6N-style training FLOPs, Korthikanti et al. 2022 Sec. 5), so the predicted HFU
    is 4/3 of the predicted MFU on the same row."""
    row = _row(recompute="full", hfu_pct="40")
    df = pd.DataFrame([{c: row.get(c, "") for c in validation.REQUIRED_COLUMNS}])
    p = tmp_path / "hfu.csv"
    df.to_csv(p, index=False)
    rows, _ = validation.validate(p)
    r = rows.iloc[0]
    assert r["metric"] == "hfu" and r["published"] == pytest.approx(0.40)
    assert r["predicted"] == pytest.approx(r["hfu"])
    assert 1.30 < r["hfu"] / r["mfu"] < 1.34  # 4/3 of the matmul FLOPs; embedding / logits FLOPs are not recomputed


def test_negated_settings_read_as_off():
    """A setting named and negated is off (review findings: 'BF16 (FP8 disabled)' read as fp8,
    'activation checkpointing: off' as full recompute, 'pre-FlashAttention baseline' as flash
    on, 'no NVSwitch' as a DGX-2, 'FSDP (NO_SHARD)' as ZeRO-3)."""
    pr, rc, zs = validation.parse_precision, validation.parse_recompute, validation.parse_zero_stage
    assert pr("BF16 (FP8 disabled)") == pr("bf16, no fp8") == pr("fp8 not used; bf16") == "bf16"
    assert pr("NVFP4 (with FP8 fallback layers)") == "fp4"
    for cell in ("activation checkpointing: off", "activation checkpointing disabled", "gradient checkpointing off",
                 "recompute: none", "activation recomputation not used"):
        assert rc(cell) == "none", cell
    assert zs("FSDP (NO_SHARD)") == zs("no distributed optimizer") == zs("without distributed optimizer") == 0
    flash = lambda notes, src="Megatron-LM (2024)": validation.row_settings({"source": src, "notes": notes})["flash_attention"]  # noqa: E731
    for notes in ("pre-FlashAttention baseline", "before FlashAttention was released", "FlashAttention was not used",
                  "without using FlashAttention", "non-flash attention", "flash attention: no",
                  "FlashAttention unavailable", "FlashAttention was disabled", "flash_attn=0", "no --use-flash-attn"):
        assert flash(notes) is False, notes
    for notes in ("FlashAttention, ALiBi", "Megatron-LM --use-flash-attn", "FlashAttention and no recompute"):
        assert flash(notes, "arXiv:2104.04473") is True, notes
    # a citation states nothing: the year rule decides
    assert flash("baseline from the FlashAttention paper (Dao et al. 2022)", "arXiv:2104.04473") is False
    assert flash("baseline from the FlashAttention paper (Dao et al. 2022)") is True
    sg = validation.system_for_gpu
    assert sg("V100", "DGX-1, no NVSwitch (hybrid cube-mesh)") == sg("V100", "Summit (no NVSwitch)") == "dgx1-v100"
    assert sg("RTX A1000") is None and sg("A800 40GB") is None and sg("8xA100") == "dgx-a100-80gb"
    assert validation.hbm_override_for_gpu("V100-SXM2-16GB") == 16 * 2**30
    assert validation.hbm_override_for_gpu("V100-SXM2-32GB") is None
    s, why = validation.row_to_scenario(_row(gpu="V100-SXM2-16GB", precision="fp16", tp=8, pp=1, gpu_count=64))
    assert s is not None and s.cluster.overrides.hbm_usable_bytes == 16 * 2**30, why


#: (parser, cell, reading) as other papers word them; review findings of a second pass:
#: negation words must be whole words ('precision', 'nodes', 'note' negate nothing), a
#: parenthesis about something else negates nothing, a scope ('off for attention') is not off,
#: and fp8 named for a collective is not the GEMM precision.
WORDINGS = [
    ("precision", "mixed precision fp8", "fp8"), ("precision", "pretraining in FP8", "fp8"),
    ("precision", "note that fp8 is used", "fp8"), ("precision", "fp8 (not fp16)", "fp8"),
    ("precision", "FP8 (no delayed scaling)", "fp8"), ("precision", "FP8 off-the-shelf", "fp8"),
    ("precision", "fp8 not for attention", "fp8"), ("precision", "bf16 with fp8 all-gather", "bf16"),
    ("recompute", "activation checkpointing (no offload)", "full"),
    ("recompute", "activation checkpointing off for attention", "full"),
    ("recompute", "gradient checkpointing (not selective)", "full"),
    ("recompute", "no full recompute; selective", "selective"),
    ("recompute", "no recompute on the last stage, full elsewhere", "full"),
    ("recompute", "selective (op-level SAC per TransformerBlock)", "op_sac"),
    ("recompute", "selective (per op SAC, --activation_checkpoint.selective_ac_option=op)", "op_sac"),
    ("recompute", "selective_ac_option = 'op'", "op_sac"), ("recompute", "op_sac", "op_sac"),
    ("recompute", "selective, not op-level", "selective"), ("recompute", "full (per-op policy unused)", "full"),
    ("recompute", "--activation_checkpoint.selective_ac_option op", "op_sac"),
    ("recompute", "selective-ac-option=op", "op_sac"), ("recompute", "selective (op)", "op_sac"),
    ("recompute", "selective_ac_option: op", "op_sac"), ("recompute", "per-op selective activation checkpointing", "op_sac"),
    # review findings: a none cell, a negated op-level SAC and 'op-level' without SAC are not op_sac
    ("recompute", "none (op-level SAC disabled)", "none"), ("recompute", "off (op-level SAC)", "none"),
    ("recompute", "0 (op-level)", "none"), ("recompute", "n/a (op-level)", "none"),
    ("recompute", "none (per-op profiling only)", "none"), ("recompute", "recompute: none (op-level kernels)", "none"),
    ("recompute", "selective; op-level SAC not used", "selective"), ("recompute", "selective (op-level kernels)", "selective"),
    ("zero_stage", "FSDP, no sharding", 0), ("zero_stage", "ZeRO (stage 1)", 1),
    ("zero_stage", "ZeRO-Offload (stage 2)", 2), ("zero_stage", "HSDP", 3),
    ("zero_stage", "now with distributed optimizer", 1), ("zero_stage", "distributed optimizer (no overlap)", 1),
    ("number", "4 K", None), ("number", "8 k tokens", None), ("number", "1_024", None),
    ("sp", "no", False), ("sp", "off", False), ("sp", "yes", True),
]
_PARSERS = {"precision": validation.parse_precision, "recompute": validation.parse_recompute,
            "zero_stage": validation.parse_zero_stage, "sp": validation.parse_bool_cell,
            "number": lambda c: None if math.isnan(validation.parse_number(c)) else validation.parse_number(c)}


@pytest.mark.parametrize("parser,cell,reading", WORDINGS)
def test_wordings_read_as_they_say(parser, cell, reading):
    assert _PARSERS[parser](cell) == reading


@pytest.mark.parametrize("parser,cell", [("precision", "not fp16"), ("recompute", "CPU offload of checkpoints"),
                                         ("zero_stage", "ZeRO-2/3"), ("zero_stage", "2 / 3"),
                                         ("zero_stage", "1.5"), ("sp", "maybe")])
def test_ambiguous_cells_are_refused(parser, cell):
    with pytest.raises(ValueError):
        _PARSERS[parser](cell)


def test_flash_words_in_context():
    """'pretraining with FlashAttention-2' and 'flash attention (no dropout)' keep it on; a
    version number is not a clause end ('flash-attn 2.3.3 disabled' is off); a citation
    ('FlashAttention [12]') and text naming it both ways leave the year rule."""
    flash = lambda notes, src="Megatron-LM (2024)": validation.row_settings({"source": src, "notes": notes})["flash_attention"]  # noqa: E731
    for notes in ("pretraining with FlashAttention-2", "64 nodes with FlashAttention", "flash attention (no dropout)",
                  "FlashAttention-2 off-the-shelf", "Note that FlashAttention-2 is used throughout"):
        assert flash(notes, "arXiv:2104.04473") is True, notes
    for notes in ("flash-attn 2.3.3 disabled", "FlashAttention v2.0 was not used", "FlashAttention unsupported"):
        assert flash(notes) is False, notes
    both = "prior work without FlashAttention reported 40% MFU; we use FlashAttention-2"
    assert flash(both) is True and flash(both, "arXiv:2104.04473") is False
    assert flash("unlike FlashAttention [12], scores are materialised", "arXiv:2201.11990") is False
    assert validation.system_for_gpu("V100", "8 nodes of DGX-2") == "dgx2-v100"
    assert validation.hbm_override_for_gpu("V100 (DGX-2, 16 GPUs)") is None


def test_unreadable_or_implausible_cells_skip_the_row_naming_the_cell():
    """inf / 1e400 in an integer column, a range for a sequence length and a stated bf16 on a
    V100 are skipped with the cell named (review: 1e400 crashed the run, '8K' was compared as 8
    tokens, bf16 on V100 ran silently as fp16). An MFU written as a fraction is read as one
    (test_third_party_cell_wording)."""
    for kw, text in ((dict(layers="1e400"), "layers = '1e400' is not a finite whole number"),
                     (dict(tp=float("inf")), "tp = inf is not a finite whole number"),
                     (dict(tp="inf"), "tp = 'inf' is not a number this column can read"),
                     (dict(seq_len="8K-32K"), "seq_len = '8K-32K' is not a number this column can read"),
                     (dict(gpu="V100", precision="bf16", tp=8, pp=1, gpu_count=64),
                      "the accelerator has no BF16 units"),
                     (dict(tp="1.5"), "tp = '1.5' is not a finite whole number"),
                     (dict(mfu_pct="38–43%"), "mfu_pct = '38–43%' is a range or a ramp"),
                     (dict(tokens_per_s_per_gpu="2.2x H100 per GPU"), "is a comparison"),
                     (dict(tp=None, pp=None), "not published: tp, pp (write 1 for a degree not used)"),
                     # "not disclosed" is a blank, not an unreadable number (review: the reason was
                     # "write it in full, e.g. 8192")
                     (dict(tp="not disclosed", pp="Not specified"), "not published: tp, pp"),
                     (dict(pp="four"), "pp = 'four' is not a number this column can read (write the number in full, e.g. 4)"),
                     (dict(tflops_per_gpu="470 GFLOP/s"), "in another unit than TFLOP/s"),
                     (dict(sp="maybe"), "sp 'maybe'")):
        s, why = validation.row_to_scenario(_row(**kw))
        assert s is None and text in why, (kw, why)


def test_architecture_families_by_name():
    """Gated families by name (their reports / configs); tied embeddings for PaLM and Gemma;
    a name matching no family is GPT; 'Delphi-3B' is not Phi-3, 'Kuaiyi' not Yi."""
    a = validation._arch
    assert a("StableLM-3B")["gated_mlp"] and a("GLM-130B")["gated_mlp"] and a("DBRX")["gated_mlp"]
    assert a("PaLM 540B")["tied_embeddings"] and a("Gemma 7B")["tied_embeddings"] and a("Gemma 7B")["gated_mlp"]
    assert not a("Llama 3 8B")["tied_embeddings"]
    for name in ("Delphi-3B", "Kuaiyi", "Granite-3B-Code", "OPT-175B", "BLOOM 176B"):
        assert a(name).get("gpt") and not a(name)["gated_mlp"], name


def test_cell_wording_of_other_sources():
    """Other papers word the same settings differently; each reads as what it says, and a cell
    that states nothing takes the empty-cell default."""
    rc, pr = validation.parse_recompute, validation.parse_precision
    assert rc("activation checkpointing") == rc("Activation recomputation") == rc("yes") == "full"
    assert rc("--checkpoint-activations") == rc("gradient checkpointing on every layer") == "full"
    assert rc("no") == rc("without recomputation") == rc("off") == rc("false") == "none"
    assert rc("n/a") == rc("unknown") == rc("not stated") == "none"
    assert rc("selective activation recomputation") == "selective"
    assert pr("mixed fp16") == pr("float16") == pr("FP16 mixed") == pr("half") == "fp16"
    assert pr("bfloat16") == pr("bf16/fp16 mixed") == pr("mixed precision") == pr("AMP") == pr("n/a") == "bf16"
    assert pr("fp16/bf16 mixed (unsure)") == "fp16"  # the calibration file's Narayanan rows
    assert pr("FP8 (E4M3 forward, E5M2 backward)") == pr("e4m3") == "fp8"
    assert pr("TF32") == "fp32"
    zs = validation.parse_zero_stage
    assert zs("3 (FSDP FULL_SHARD)") == zs("ZeRO-3") == zs("FSDP") == zs("PyTorch FSDP HYBRID_SHARD") == 3
    assert zs("ZeRO stage 2") == zs("FSDP SHARD_GRAD_OP") == 2
    assert zs("1 (ZeRO-1)") == zs("Megatron distributed optimizer") == zs("zero1") == 1
    assert zs("DDP") == zs("none") == zs("0 (DeepSpeed ZeRO disabled)") == 0
    assert zs(None) is None and zs("") is None and zs("n/a") is None
    with pytest.raises(ValueError, match="zero_stage 'sharded-ish'"):
        zs("sharded-ish")
    with pytest.raises(ValueError, match="zero_stage '5'"):
        zs("5")
    s, why = validation.row_to_scenario(_row(zero_stage="ZeRO-3"))
    assert s is not None and s.parallelism.zero_stage == 3, why
    with pytest.raises(ValueError, match="precision 'int3'"):
        pr("int3")


def test_a_header_only_csv_is_a_clear_error(tmp_path):
    p = tmp_path / "empty.csv"
    p.write_text(",".join(validation.REQUIRED_COLUMNS) + "\n")
    with pytest.raises(ValueError, match="no rows"):
        validation.validate(p)


def test_moe_row_naming_a_catalogue_model_takes_its_architecture():
    """A CSV row cannot state shared experts, leading dense layers or MLA: a MoE row whose
    model name is a preset's (ignoring case and punctuation) takes the preset's architecture
    (DeepSeek-V3: 1 shared expert, 3 dense layers, MLA, experts of width 2048 — arXiv:2412.19437
    §4.2); a dense row with its own columns keeps them; a row whose layers disagree does not."""
    assert validation.catalogue_model("DeepSeekV3") == "deepseek-v3"
    assert validation.catalogue_model("Qwen3_30B_a3B") == "qwen3-30b-a3b"
    assert validation.catalogue_model("GPT 175B") is None
    moe = dict(model="DeepSeekV3", layers=61, hidden=7168, heads=128, ffn=2048, vocab=129280, moe_experts=256,
               moe_topk=8, seq_len=4096, global_batch_seqs=2048, gpu="DGX-B200", gpu_count=256, tp=1, pp=16,
               ep=8, source="Megatron-Bridge performance-summary.md")
    s, why = validation.row_to_scenario(_row(**moe))
    assert s is not None, why
    m = s.model
    assert (m.moe.n_shared_experts, m.moe.first_dense_layers, m.moe.expert_ffn_hidden_size) == (1, 3, 2048)
    assert m.mla is not None and m.ffn_hidden_size == 18432  # the dense layers' width, not the CSV's expert width
    s, why = validation.row_to_scenario(_row(**{**moe, "layers": 60}))
    assert s is not None and s.model.mla is None  # disagreeing layer count: the CSV columns
    for bad in ({"moe_experts": 64}, {"moe_topk": 6}, {"heads": 64}, {"ffn": 9999}):
        s, why = validation.row_to_scenario(_row(**{**moe, **bad}))
        assert s is not None and s.model.mla is None, bad  # any disagreeing cell: the CSV columns
    s, why = validation.row_to_scenario(_row(model="Llama 3 70B", layers=80, hidden=8192, heads=64, ffn=28672, tp=8, pp=4))
    assert s is not None and s.model.name == "Llama 3 70B" and s.model.vocab_size == validation.DEFAULT_VOCAB


def test_stated_network_bandwidth_overrides_the_system():
    """Inter-node bandwidth per GPU from the interconnect text, by hand (Gb/s / 8 = GB/s):
    BLOOM's Jean Zay 4 x 100 Gb/s per 8-GPU node = 50 Gb/s = 6.25e9 B/s per GPU; '400 Gb/s per
    GPU' = 50e9; MosaicML's '1600 Gbps node-node' over 8 GPUs = 25e9; '8x NDR 400 Gb/s' = 50e9."""
    bw = validation.network_bw_per_gpu
    assert bw("inter-node Omni-Path, 4 x 100 Gb/s per node", 8) == 6.25e9
    assert bw("RoCE 400 Gb/s per GPU, 3-layer Clos", 8) == 50e9
    assert bw("1600 Gbps node-node RoCE", 8) == 25e9
    assert bw("DGX H100 (NVLink4/NVSwitch; 8x NDR 400 Gb/s)", 8) == 50e9
    assert bw("not stated", 8) is None and bw(None, 8) is None
    # bytes (GB/s, how NVLink is quoted) are not a line rate; a GPU count is not a NIC count
    assert bw("DGX H100: NVLink4 900 GB/s per GPU; 8x NDR 400 Gb/s", 8) == 50e9
    assert bw("72 x B200 GPUs 1800 Gb/s", 8) is None
    assert bw("1,600 Gbps node-node", 8) == 25e9 and bw("3.2 Tb/s per node", 8) == 50e9
    assert bw("100 Gb/s x 4 per node", 8) == 6.25e9 and bw("400 Gb/s InfiniBand per GPU", 8) == 50e9
    assert bw("1e3 Gb/s per GPU", 8) is None
    assert bw("9999999 Tb/s per GPU", 8) is None and bw("800 Gb/s per GPU", 8) == 100e9  # a typo is no network
    s, _ = validation.row_to_scenario(_row(interconnect="Omni-Path, 4 x 100 Gb/s per node"))
    assert s.cluster.overrides.nic_bw_per_gpu_bytes_per_s == 6.25e9
    s, _ = validation.row_to_scenario(_row(interconnect="Selene (NVLink/NVSwitch + HDR IB)"))
    assert s.cluster.overrides.nic_bw_per_gpu_bytes_per_s is None


def test_published_value_must_be_a_positive_number():
    """A published metric of inf, 0 or a negative number is not comparable: the row is skipped
    with the cell named (review finding: inf and -5 were reported as 'ok')."""
    for val in (float("inf"), "-5", 0.0):  # pandas reads a CSV "inf" as float inf
        s, why = validation.row_to_scenario(_row(tflops_per_gpu=val))
        assert s is None and "tflops_per_gpu" in why and repr(val) in why
    s, why = validation.row_to_scenario(_row(tflops_per_gpu="138 (Table 1)"))
    assert s is not None, why


# ---------------------------------------------------------------------------------------
# Other authors' wording (review: a stress test of 44 hand-written rows of published runs)
# ---------------------------------------------------------------------------------------
def _scen(**kw):
    s, why = validation.row_to_scenario(_row(**kw))
    assert s is not None, why
    return s


def test_zero_or_negative_degrees_are_refused_not_crashes():
    """tp, pp = 0 and seq_len = 0 (with a token batch) crashed with ZeroDivisionError; they are
    refused naming the cell. vpp 0 and ep 0 mean 1; dp -1 (TorchTitan's 'the rest') is derived."""
    for col in ("tp", "pp", "cp", "gpu_count", "micro_batch", "layers"):
        s, why = validation.row_to_scenario(_row(**{col: "0"}))
        assert s is None and col in why and "at least 1" in why, (col, why)
    s, why = validation.row_to_scenario(_row(seq_len="0", global_batch_seqs=None, global_batch_tokens="3145728"))
    assert s is None and "seq_len" in why
    assert _scen(vpp="0").parallelism.vpp == 1
    assert _scen(dp="-1").parallelism.dp == 1024 // 64
    assert _scen(dp="auto").parallelism.dp == 1024 // 64


def test_labelled_and_abbreviated_integers():
    assert _scen(tp="TP=8").parallelism.tp == 8
    assert _scen(vpp="interleaved (3)", layers=96).parallelism.vpp == 3
    assert _scen(vpp="no interleaving").parallelism.vpp == 1
    assert _scen(cp="no").parallelism.cp == 1
    assert _scen(kv_heads="MHA").model.n_kv_heads == 96
    assert _scen(kv_heads="GQA (8)").model.n_kv_heads == 8
    assert _scen(seq_len="2k").training.seq_len == 2048
    s = _scen(model="Mixtral 8x7B style", moe_experts="8 (+1 shared)", moe_topk="top-2")
    assert s.model.moe.n_experts == 8 and s.model.moe.top_k == 2 and s.model.moe.n_shared_experts == 1


def test_token_batches_gpu_counts_and_batches_that_do_not_divide():
    """'4M tokens' is 4·2^20 when that is whole sequences (Llama 2: 1,024 × 4,096); the
    sequence count wins over an unreadable tokens cell; a GPU count in nodes uses the system's
    8 GPUs per node; a published batch dp·micro-batch does not divide is taken to the nearest
    multiple (GPT-NeoX-20B: 1,538 on dp 12 → 1,536)."""
    s = _scen(seq_len=4096, global_batch_seqs=None, global_batch_tokens="4M tokens")
    assert s.training.global_batch_size == 1024
    assert _scen(global_batch_tokens="about 3M").training.global_batch_size == 1536
    assert _scen(gpu_count="8 × 128 nodes").cluster.n_gpus == 1024
    assert _scen(gpu_count="128 nodes").cluster.n_gpus == 1024
    assert _scen(gpu_count="128 nodes (1,024 GPUs)").cluster.n_gpus == 1024
    s = _scen(gpu_count=96, tp=2, pp=4, global_batch_seqs=1538)
    assert s.parallelism.dp == 12 and s.training.global_batch_size == 1536


def test_metric_cells_with_qualifiers_units_and_unreadable_neighbours(tmp_path):
    """'up to 147' (OPT) and 'about 380' read as the number; a step time in ms is converted;
    an unreadable MFU cell beside a readable throughput does not skip the row."""
    assert validation.parse_number("up to 147") == 147 and validation.parse_number("about 380") == 380
    assert validation.parse_number(">180") == 180 and validation.parse_number("≈ 41.0") == 41.0
    assert validation.parse_metric("step_time_s", "10300 ms") == pytest.approx(10.3)
    assert validation.parse_metric("step_time_s", "1.5 min") == 90.0
    # a time unit in the TFLOP/s column belongs to another column: not read (a later review: a cell
    # in another column's unit was read as this column's and compared)
    assert math.isnan(validation.parse_metric("tflops_per_gpu", "10300 ms"))
    rows = [_row(run_id="a", tflops_per_gpu="up to 140", mfu_pct="not reported"),
            _row(run_id="b", step_time_s="40100 ms"),
            _row(run_id="c", mfu_pct="TBD")]
    df = pd.DataFrame([{c: r.get(c, "") for c in validation.REQUIRED_COLUMNS} for r in rows])
    p = tmp_path / "w.csv"
    df.to_csv(p, index=False)
    out, _ = validation.validate(p)
    got = out.set_index("run_id")
    assert got.loc["a", "metric"] == "tflops_per_gpu" and got.loc["a", "published"] == 140
    assert got.loc["b", "metric"] == "step_time_s" and got.loc["b", "published"] == pytest.approx(40.1)
    assert got.loc["c", "status"].startswith("skipped") and "mfu_pct" in got.loc["c", "status"]


def test_files_from_other_tools(tmp_path):
    """Header cells in other case or with spaces, a semicolon separator and a Windows-1252
    file are read (the stress test's files were refused whole)."""
    row = {c: _row().get(c, "") for c in validation.REQUIRED_COLUMNS}
    row["tflops_per_gpu"] = 140
    df = pd.DataFrame([row])
    df.columns = [c.upper() + " " if c in ("gpu", "tp") else c for c in df.columns]
    p1, p2, p3 = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    df.to_csv(p1, index=False)
    df.to_csv(p2, index=False, sep=";")
    df.assign(notes="8 × A100 – café").to_csv(p3, index=False, encoding="cp1252")
    for p in (p1, p2, p3):
        out, _ = validation.validate(p)
        assert out.iloc[0]["status"] == "ok", (p, out.iloc[0]["status"])


GPU_NAMES_MORE = [("A100 80GB (2240 GPUs)", "dgx-a100-80gb"), ("p4d.24xlarge", "dgx-a100-40gb"),
                  ("p4de.24xlarge", "dgx-a100-80gb"), ("p5.48xlarge", "dgx-h100"), ("p5en.48xlarge", "dgx-h200"),
                  ("a2-ultragpu-8g", "dgx-a100-80gb"), ("a3-highgpu-8g", "dgx-h100"),
                  ("Grace Hopper", "gh200-quad"), ("ND96asr_v4", "dgx-a100-40gb"), ("8xA100 40GB", "dgx-a100-40gb")]


@pytest.mark.parametrize("name,system", GPU_NAMES_MORE)
def test_more_gpu_and_instance_names(name, system):
    assert validation.system_for_gpu(name) == system


@pytest.mark.parametrize("text,gbps", [("4 NICs × 200Gb/s per node", 100), ("dual-rail 2x200Gb/s per GPU", 400),
                                       ("2 × 200 Gbps per GPU", 400), ("8 HCAs x 400Gb/s", 400),
                                       ("4 x 100 Gb/s per node", 50), ("400 Gb/s per GPU", 400)])
def test_more_network_wordings(text, gbps):
    assert validation.network_bw_per_gpu(text, 8) * 8 / 1e9 == pytest.approx(gbps)


MORE_WORDINGS = [
    ("recompute", "partial", "selective"), ("recompute", "SAC", "selective"), ("recompute", "core attention", "selective"),
    ("recompute", "attention only", "selective"), ("recompute", "AC", "full"), ("recompute", "ckpt", "full"),
    ("recompute", "every layer", "full"), ("recompute", "Y", "full"), ("recompute", "N", "none"),
    ("recompute", "not used", "none"),
    ("zero_stage", "sharded optimizer", 1), ("zero_stage", "optimizer sharding", 1), ("zero_stage", "dist. optimizer", 1),
    ("zero_stage", "DistOpt", 1), ("zero_stage", "ZeRO-Offload", 2), ("zero_stage", "ZeRO-Infinity", 3),
    ("zero_stage", "ZeRO++", 3), ("zero_stage", "MiCS", 3), ("zero_stage", "hybrid sharding", 3),
    ("zero_stage", "data parallel", 0), ("zero_stage", "pure DP", 0),
    ("zero_stage", "FSDP (reshard_after_forward=False)", 2), ("zero_stage", "FSDP2 (reshard_after_forward=True)", 3),
    ("sp", "Y", True), ("sp", "N", False), ("sp", "✓", True), ("sp", "SP", True), ("sp", "sequence parallel", True),
]


@pytest.mark.parametrize("parser,cell,reading", MORE_WORDINGS)
def test_more_wordings_read_as_they_say(parser, cell, reading):
    assert _PARSERS[parser](cell) == reading


@pytest.mark.parametrize("name", ["Grok-1", "XVERSE-65B", "Hunyuan-Large", "Kimi K2", "Jais-30B", "BTLM-3B",
                                  "Stable LM 2 1.6B", "SOLAR-10.7B", "EXAONE 3.0", "Orion-14B", "Arctic", "Vicuna-13B"])
def test_more_gated_families(name):
    assert validation._arch(name)["gated_mlp"] is True


def test_gated_row_without_ffn_takes_the_catalogue_model():
    """A Llama 2 7B row without its ffn (the gated width has no rule) takes the catalogue
    model's (11,008, vocabulary 32,000) when its name matches; a GPT row keeps ffn = 4h."""
    s = _scen(model="Llama 2 7B", layers=32, hidden=4096, heads=32, ffn=None, tp=1, pp=1, gpu_count=64,
              global_batch_seqs=1024)
    assert s.model.ffn_hidden_size == 11008 and s.model.vocab_size == 32000
    s = _scen(ffn=None)
    assert s.model.ffn_hidden_size == 4 * 12288 and s.model.vocab_size == 51200
    s, why = validation.row_to_scenario(_row(model="Llama 2 9B", layers=32, hidden=4096, heads=32, ffn=None))
    assert s is None and "ffn" in why


def test_lenient_readings_do_not_misread(tmp_path):
    """Review of the lenient readings: a label must be the column's own (``PP=4`` in tp,
    ``GA=8`` in micro_batch, ``tokens: …`` in global_batch_seqs, ``group size: 4`` in kv_heads
    are refused), digits inside names are no GPU counts, a token batch under one sequence is
    refused, a batch is moved to a dp·mbs multiple only by ≤ 5 %, negated short names read
    as off, and comparisons ('up to 50 % faster') are no values."""
    for kw, col in ((dict(tp="PP=4"), "tp"), (dict(pp="TP (8)"), "pp"), (dict(micro_batch="GA=8"), "micro_batch"),
                    (dict(global_batch_seqs="tokens: 2097152"), "global_batch_seqs"),
                    (dict(kv_heads="group size: 4"), "kv_heads"), (dict(vpp="layers per virtual stage: 2"), "vpp")):
        s, why = validation.row_to_scenario(_row(**kw))
        assert s is None and col in why, (kw, why)
    g = lambda c: validation._gpu_count(c, 8)  # noqa: E731
    assert [g(c) for c in ("8 x DGX A100 nodes", "2 nodes x 8 GPUs", "4 x 8 GPUs", "16 x 8 GPUs (128)", "64 (8 x 8)",
                           "1024 (128x8)", "64 (8 nodes)", "64 H100s (8 nodes)", "8 x 80GB A100", "8x8")] == \
        [64, 16, 32, 128, 64, 1024, 64, 64, 8, 64]
    for tokens in ("1 million", "1 MB", "1000"):
        s, why = validation.row_to_scenario(_row(global_batch_seqs=None, global_batch_tokens=tokens))
        if tokens == "1 million":  # 2^20 tokens = 512 sequences of 2,048
            assert s is not None and s.training.global_batch_size == 512, why
        else:
            assert s is None and "global_batch_tokens" in why, (tokens, why)
    # 3.19M is not whole sequences as 3.19·2^20: 3,190,000 / 2,048 = 1,557.6 → 1,558 → dp 16 multiple 1,552
    assert _scen(global_batch_seqs=None, global_batch_tokens="3.19M").training.global_batch_size == 1552
    s, why = validation.row_to_scenario(_row(global_batch_seqs=100))  # dp 16 · mbs 1: 100 → 96 is 4 %
    assert s is not None and s.training.global_batch_size == 96
    s, why = validation.row_to_scenario(_row(global_batch_seqs=4, micro_batch=4))  # 4 → 64: refused
    assert s is None
    rc, sp, zs = validation.parse_recompute, validation.parse_bool_cell, validation.parse_zero_stage
    assert rc("attention recompute: none") == rc("ac: none") == rc("AC = none") == rc("SAC off") == "none"
    assert rc("SAC (op)") == "op_sac"
    assert sp("SP off") is sp("sequence parallel: off") is sp("sp=False") is False
    assert zs("dist-opt: no") == zs("DP + sharded optimizer off") == 0
    for cell in ("up to 50% faster", "up to 3x faster", "up to 2x", "50% faster", "1.3x vs. baseline"):
        assert math.isnan(validation.parse_metric("tflops_per_gpu", cell)), cell
    assert validation.system_for_gpu("A100 (p4d)") == "dgx-a100-40gb"
    # a file with both "TP" and "tp" keeps "tp"; a ;-separated file with decimal commas
    row = {c: _row().get(c, "") for c in validation.REQUIRED_COLUMNS}
    row["tflops_per_gpu"] = "137,0"
    df = pd.DataFrame([row]).assign(TP="99")
    p1, p2 = tmp_path / "dup.csv", tmp_path / "semi.csv"
    df.assign(tflops_per_gpu="137.0").to_csv(p1, index=False)
    df.to_csv(p2, index=False, sep=";")
    for p in (p1, p2):
        out, _ = validation.validate(p)
        assert out.iloc[0]["status"] == "ok" and out.iloc[0]["published"] == pytest.approx(137.0), p


def test_new_user_review_findings(tmp_path):
    """Fresh-clone review: machine counts are not GPU counts ('280 DGX A100 nodes' was read as
    280 GPUs: MT-NLG ran on 2,240), a ;-file's '5,762' is ambiguous (was read as 5.762), more
    op-level SAC wordings, layer-level SAC refused (no mode states it), TorchTitan's 'float8',
    a TPU row refused for its accelerator, an all-skipped file names its reasons."""
    g = lambda c: validation._gpu_count(c, 8)  # noqa: E731
    assert [g(c) for c in ("280 DGX A100 nodes", "16 x p5.48xlarge", "16 hosts x 8 GPUs", "16 servers",
                           "16 p5.48xlarge instances", "16 x DGX H100", "8 x A100", "512 GPUs")] == \
        [2240, 128, 128, 128, 128, 128, 8, 512]
    rc = validation.parse_recompute
    for cell in ("selective AC (op-level)", "selective (op-level)", "SAC: op", "SAC, op policy", "selective, op"):
        assert rc(cell) == "op_sac", cell
    assert rc("selective (operator fusion)") == rc("selective (optimizer states offloaded)") == "selective"
    # layer-level SAC (every k-th layer in full) is full recompute of ceil(layers / k) layers
    for cell in ("selective (every 2nd layer)", "selective_ac_option=2"):
        assert rc(cell) == "full" and validation.layer_sac_every(cell) == 2, cell
    assert validation.parse_precision("float8 (torchao)") == "fp8"
    assert validation.parse_precision("bf16 with float8 all-gather") == "bf16"
    s, why = validation.row_to_scenario(_row(gpu="TPU v4", ffn=None))
    assert s is None and why == "no system for GPU 'TPU v4'"
    row = {c: _row().get(c, "") for c in validation.REQUIRED_COLUMNS}
    df = pd.DataFrame([{**row, "run_id": "a", "tokens_per_s_per_gpu": "5,762"},
                       {**row, "run_id": "b", "tflops_per_gpu": "137,5", "hidden": "12,288"}])
    p = tmp_path / "semi.csv"
    df.to_csv(p, index=False, sep=";")
    out, _ = validation.validate(p)
    got = out.set_index("run_id")
    assert got.loc["a", "status"].startswith("skipped") and "ambiguous" in got.loc["a", "status"]
    assert got.loc["b", "published"] == pytest.approx(137.5)
    df.assign(gpu="TPU v4").to_csv(p, index=False)
    with pytest.raises(ValueError, match="TPU v4"):
        validation.validate(p)


# --- accuracy band: the published runs like a scenario ------------------------------------------

def _validated_with_columns():
    """validate() of both files joined with each run's CSV cells (gpu, moe_experts)."""
    parts = []
    for path in (None, validation.OUT_OF_SAMPLE_CSV):
        rows, _ = validation.validate(path)
        csv = pd.read_csv(path or validation.DEFAULT_CSV)[["run_id", "gpu", "moe_experts"]]
        parts.append(rows[rows["status"] == "ok"].merge(csv, on="run_id"))
    return pd.concat(parts, ignore_index=True)


def test_accuracy_band_is_the_percentiles_of_the_matching_out_of_sample_runs():
    """Ampere, dense: every compared out-of-sample A100 / A800 run without experts (ten or
    more, so the fitted calibration runs are left out), from the CSV cells and validate()'s own
    errors: 10th / 50th / 90th percentile of 1 + rel_err."""
    v = _validated_with_columns()
    oos = v["run_id"].isin(pd.read_csv(validation.OUT_OF_SAMPLE_CSV)["run_id"])
    amp = v[v["gpu"].str.contains("A100|A800") & v["moe_experts"].isna() & oos]
    r = 1.0 + amp["rel_err"].to_numpy()
    band = validation.accuracy_band("ampere", False)
    assert band["n"] == band["n_out_of_sample"] == len(r) > 50 and band["percentiles"] and band["out_of_sample_only"]
    assert band["low"] == pytest.approx(np.percentile(r, 10), rel=1e-12)
    assert band["median"] == pytest.approx(np.median(r), rel=1e-12)
    assert band["high"] == pytest.approx(np.percentile(r, 90), rel=1e-12)


def test_accuracy_band_of_fp4_runs_is_apart():
    """The four NVFP4 Megatron-Bridge rows (GB200 / GB300; the fourth from review 18c), review 17g's
    two MLPerf v5.1 FP4 GB200 rows and review 18c's / 18e's four MLPerf v5.1 FP4 B200 rows (Dell,
    Nebius) and review 19a's MLPerf v5.1 FP4 GB300 row: their own band, not the dense BF16 / FP8
    one; eleven runs, so the 10th-90th percentile (BAND_PERCENTILE_MIN_ROWS; the range before
    review 18e's three)."""
    v = _validated_with_columns()
    fp4 = v[v["run_id"].str.contains("nvfp4") | v["run_id"].str.startswith("mlperf_v5.1_nvidia_gb200")
            | v["run_id"].eq("mlperf_v5.1_nvidia_gb300_llama31_405b_512gpu_fp4")
            | v["run_id"].str.match(r"mlperf_v5\.1_(?:dell|nebius)_b[23]00_llama31_8b_\d+gpu_fp4$")  # B300: review 47d
            | v["run_id"].str.match(r"mlperf_v6\.0_nvidia_gb300_llama31_405b_\d+gpu_fp4$")]  # review 46f
    r = 1.0 + fp4["rel_err"].to_numpy()
    band = validation.accuracy_band("blackwell", False, fp4=True)
    assert band["n"] == len(r) == 14 > validation.BAND_PERCENTILE_MIN_ROWS and band["percentiles"]
    assert (band["low"], band["high"]) == pytest.approx((np.percentile(r, 10), np.percentile(r, 90)), rel=1e-12)


def test_accuracy_band_below_ten_runs_is_the_range():
    """Gaudi 2 dense (the five Intel Gaudi 2 rows): min … max, not percentiles. (Hopper MoE was
    the example until review 17a's NeMo AutoModel rows took it to 13 runs.)"""
    v = _validated_with_columns()
    g2 = v[v["gpu"].str.contains("Gaudi", case=False) & v["moe_experts"].isna()]
    r = 1.0 + g2["rel_err"].to_numpy()
    band = validation.accuracy_band("gaudi2", False)
    assert 0 < band["n"] == len(r) < validation.BAND_PERCENTILE_MIN_ROWS and not band["percentiles"]
    assert (band["low"], band["high"]) == pytest.approx((r.min(), r.max()), rel=1e-12)


def test_accuracy_band_of_a_kind_nobody_ran_falls_back_to_its_nearest_runs():
    """No MoE FP4 run exists: the FP4 runs stand in, and the scope says so."""
    rows = validation.accuracy_rows()
    assert not (rows["moe"] & rows["fp4"]).any()
    band = validation.accuracy_band("blackwell", True, fp4=True)
    assert band["scope"].startswith("no published MoE FP4 run: every FP4 run")
    # four NVFP4 Megatron-Bridge rows (one from review 18c), AMD's MLPerf v6.0 MXFP4 MI355X row
    # (review 17a), NVIDIA's two MLPerf v5.1 FP4 GB200 rows (review 17g) and Dell's and Nebius's
    # four MLPerf v5.1 FP4 B200 rows (reviews 18c, 18e), NVIDIA's MLPerf v5.1 FP4 GB300 row (review 19a),
    # MLPerf v6.0's MXFP4 MI350X (AMD, Cisco) and MiTAC MI355X rows (review 46c), NVIDIA's two MLPerf v6.0
    # NVFP4 GB300 Llama 3.1 405B rows (review 46f), Nebius's MLPerf v5.1 NVFP4 B300 row (review 47d)
    assert band["n"] == int(rows["fp4"].sum()) == 18
    band = validation.accuracy_band("ampere", True)  # Ampere has dense runs only
    assert band["scope"].startswith("no published ampere MoE run: every MoE run on other hardware")


def test_accuracy_band_without_a_run_of_the_family_uses_every_run_of_the_kind():
    # Gaudi 3 (CDNA3 had none until review 46's MLPerf v6.0 MI325X row: tests/test_review46.py)
    band = validation.accuracy_band("gaudi3", False)
    assert band["scope"].startswith("no published gaudi3 dense run: every dense run on other hardware")
    rows = validation.accuracy_rows()
    dense = rows[~rows["moe"] & ~rows["fp4"] & (rows["set"] == "out of sample")]
    assert band["n"] == len(dense)


def test_accuracy_note_names_the_scope_and_the_band():
    import planner
    note = validation.accuracy_note(planner.load_preset("gpt3-175b-a100-1024"))
    band = validation.accuracy_band("ampere", False)
    assert note.startswith(f"Accuracy on published runs like this one (ampere, dense; {band['n']} runs never "
                           "used in the fit)")
    assert f"is {band['low']:.2f}–{band['high']:.2f} (10th–90th percentile), median {band['median']:.2f}" in note


def test_layer_level_sac_is_full_recompute_of_every_kth_layer():
    """TorchTitan's layer SAC checkpoints every k-th block in full (its docs' A100 table: "selective
    layer"; default k = 2, ``selective_ac_option = "2"``): the count of Megatron's block method,
    ceil(layers per chunk / k), with recompute = "full"."""
    ev = validation.layer_sac_every
    assert [ev(c) for c in ("selective layer", "layer-level SAC", "every 3rd layer", "every other block",
                            "every third layer", "selective_ac_option='4'", "selective (every 2nd layer)")] == \
        [2, 2, 3, 2, 3, 4, 2]
    for c in ("selective", "selective op", "full", "none", "selective layers of attention", None, "no layer SAC"):
        assert ev(c) is None, c
    # Llama 3 8B (32 layers) on one stage, selective layer: 16 layers recomputed in full
    s, why = validation.row_to_scenario(_row(layers=32, hidden=4096, heads=32, kv_heads=8, ffn=14336, tp=1, pp=1,
                                             gpu_count=64, global_batch_seqs=64, recompute="selective layer"))
    assert s is not None, why
    assert (s.parallelism.recompute, s.parallelism.recompute_layers) == ("full", 16)
    # 30 layers over pp = 4: chunks of ceil(30/4) = 8 layers, every 3rd → ceil(8/3) = 3 per chunk
    s, why = validation.row_to_scenario(_row(layers=30, hidden=4096, heads=32, kv_heads=8, ffn=14336, tp=1, pp=4,
                                             gpu_count=64, global_batch_seqs=64, recompute="every 3rd layer"))
    assert s is not None, why
    assert (s.parallelism.recompute, s.parallelism.recompute_layers) == ("full", 3)
    # k = 1 is plain full recompute
    s, _ = validation.row_to_scenario(_row(recompute="selective_ac_option=1"))
    assert (s.parallelism.recompute, s.parallelism.recompute_layers) == ("full", None)


def test_accuracy_note_of_a_single_run_gives_no_band(monkeypatch):
    """One matching run is an example, not a band: the note says "1 run" and gives its ratio
    once instead of a range from a number to itself."""
    import planner
    one = pd.DataFrame({"run_id": ["r"], "set": ["out of sample"], "family": ["hopper"], "moe": [False],
                        "fp4": [False], "ratio": [0.9059]})
    monkeypatch.setattr(validation, "accuracy_rows", lambda: one)
    note = validation.accuracy_note(planner.load_preset("gpt3-175b-a100-1024").model_copy(
        update={"cluster": planner.Scenario.model_validate(
            {**planner.load_preset("gpt3-175b-a100-1024").to_json_dict(),
             "cluster": {"system": "dgx-h100", "n_gpus": 1024}}).cluster}))
    assert "(hopper, dense; 1 run, never used in the fit)" in note
    assert "is 0.91 on that run" in note and "0.91–0.91" not in note and "1 runs" not in note


def test_accuracy_table_rows_are_the_bands():
    t = validation.accuracy_table()
    assert {"hopper", "ampere", "blackwell"} <= set(t["family"])
    for r in t.to_dict("records"):
        b = validation.accuracy_band(r["family"], r["kind"].startswith("MoE"), r["kind"].endswith("FP4"))
        assert (r["runs"], r["low"], r["median"], r["high"]) == (b["n"], b["low"], b["median"], b["high"])


def test_cells_other_writers_use_are_read_as_they_say():
    """Wordings of a CSV written by someone else (a stress test of 53 hand-written rows of other
    published runs): each cell read as it states, none skipped or silently misread."""
    def built(**kw):
        s, why = validation.row_to_scenario(_row(**kw))
        assert s is not None, (kw, why)
        return s

    # an FFN width written as a multiple of the hidden size (GPT-NeoX "4h"; 8/3 of a number)
    assert built(ffn="4h").model.ffn_hidden_size == 4 * 12288
    assert built(ffn="4 x hidden").model.ffn_hidden_size == 4 * 12288
    assert validation._clean_int_cells({"ffn": "8/3 × 4096"})["ffn"] == str(round(8 / 3 * 4096))
    assert validation._clean_int_cells({"ffn": "16384"})["ffn"] == "16384"
    # labels without "=" and degrees written as words
    p = built(tp="TP 8", pp="PP8", kv_heads="GQA-8").parallelism
    assert (p.tp, p.pp) == (8, 8) and built(kv_heads="GQA 8").model.n_kv_heads == 8
    assert built(kv_heads="multi-query").model.n_kv_heads == 1
    assert built(tp="none", pp="no", gpu_count=64).parallelism.tp == 1
    # an interleaved schedule named in the vpp cell without its depth: the default rule's depth
    assert built(vpp="interleaved").parallelism.vpp == 12
    # a dense model spelled out in the MoE columns
    assert built(moe_experts="dense", moe_topk="0").model.moe is None
    # routed and shared experts
    c = validation._clean_int_cells({"moe_experts": "160 routed, 2 shared"})
    assert (c["moe_experts"], c["_shared_experts"]) == ("160", 2)
    c = validation._clean_int_cells({"moe_experts": "162 (160 routed + 2 shared)"})
    assert (c["moe_experts"], c["_shared_experts"]) == ("160", 2)
    # step time with a thousands separator; tokens/s in thousands; comments in parentheses
    assert validation.parse_metric("step_time_s", "10,300 ms") == pytest.approx(10.3)
    assert validation.parse_metric("tokens_per_s_per_gpu", "2.8k") == 2800.0
    assert validation.parse_metric("mfu_pct", "31.96% (vs 36.14% for 175B)") == 31.96
    assert validation.parse_metric("tokens_per_s_per_gpu", "380 tokens/s/GPU (2048x A100 80GB)") == 380.0
    # GPU counts
    for cell, n in (("2 × 8 = 16", 16), ("32 nodes × 8 = 256", 256), ("768 GPUs, 96 nodes", 768),
                    ("16 GPUs / 2 nodes", 16), ("16K H100", 16384), ("1024 MI250X (2048 GCDs)", 2048),
                    ("256 nodes x 4 MI250X", 2048), ("2 nodes x 8 GPUs", 16), ("128 nodes", 1024)):
        assert validation._gpu_count(cell, 8) == n, cell
    assert built(gpu_count="16K H100", gpu="H100 SXM", tp=8, pp=16).cluster.n_gpus == 16384
    # Megatron's flags: --recompute-activations is selective (arguments.py sets
    # recompute_granularity = 'selective'); --sequence-parallel
    assert validation.parse_recompute("--recompute-activations") == "selective"
    assert validation.parse_recompute("✗") == "none"
    assert validation.parse_bool_cell("--sequence-parallel") is True
    assert validation.parse_bool_cell("--no-sequence-parallel") is False
    assert validation.parse_zero_stage("DP only") == 0 and validation.parse_zero_stage("ZeRO") == 1
    # a paper's title is a citation, not a statement that the run used FlashAttention
    fa2 = {"source": "Dao 2023, FlashAttention-2: Faster Attention with Better Parallelism, Fig. 5",
           "notes": "PyTorch baseline without FlashAttention"}
    assert validation.row_settings(fa2)["flash_attention"] is False
    assert validation.row_settings({"source": "x (2024)", "notes": "flash attention: on"})["flash_attention"] is True
    # a Llama-style family named by its own name
    assert validation._arch("SmolLM3-3B")["gated_mlp"] is True


def test_hfu_cells_and_aggregate_throughput_are_counted_as_they_say(tmp_path):
    """A TFLOP/s or MFU cell that says its count includes recomputation is compared as hardware
    FLOPs; a row with only the job's aggregate PFLOP/s is compared per GPU."""
    rows = [_row(run_id="tf", tflops_per_gpu="117 (HFU)", recompute="full"),
            _row(run_id="tf_model", tflops_per_gpu="117", recompute="full"),
            _row(run_id="mfu", mfu_pct="43.3% (HFU)", recompute="full"),
            _row(run_id="agg", aggregate_pflops="120", recompute="full")]
    path = tmp_path / "rows.csv"
    pd.DataFrame(rows).reindex(columns=list(validation.REQUIRED_COLUMNS) + ["source", "notes", "aggregate_pflops"]
                               ).to_csv(path, index=False)
    b, meta, _ = validation.calibration_batch(path)
    m = meta.set_index("run_id")
    hw, model = b["hardware_flop_per_step"][0], b["model_flop_per_step"][0]
    assert hw > model  # full recompute: one forward more
    assert m.loc["tf", "metric"] == "tflops_per_gpu" and m.loc["tf", "flop_count"] == hw
    assert m.loc["tf_model", "flop_count"] == model
    assert m.loc["mfu", "metric"] == "hfu" and m.loc["mfu", "published"] == pytest.approx(0.433)
    assert m.loc["agg", "metric"] == "tflops_per_gpu"
    assert m.loc["agg", "published"] == pytest.approx(120e3 / 1024) and m.loc["agg", "flop_count"] == model


def test_new_cell_rules_keep_what_was_read_before():
    """Regressions a differential review of the rules above found (33,000 cell variants, old
    reader against new), each pinned: the cell's own meaning, not the new rule's."""
    z = validation.parse_zero_stage
    assert [z(c) for c in ("DP + ZeRO-1", "dp=8, ZeRO-2", "DP=64 (FSDP)", "DP with distributed optimizer",
                           "DP (no ZeRO)", "DDP")] == [1, 2, 3, 1, 0, 0]
    c = validation._clean_int_cells
    # an unpublished top-k keeps the experts (default top-1); "1 shared + 256 routed" is MoE
    assert c({"moe_experts": "8", "moe_topk": "-"}) == {"moe_experts": "8", "moe_topk": None}
    assert c({"moe_experts": "1 shared + 256 routed"})["moe_experts"] == "256"
    # FSDP2 / DDP2 in the dp cell name a version, not a degree; sizes need a separator
    assert c({"dp": "FSDP2"})["dp"] is None and c({"vocab": "v2"})["vocab"] == "v2"
    assert c({"seq_len": "context 2"})["seq_len"] == "context 2" and c({"moe_topk": "k2"})["moe_topk"] == "2"
    # a width followed by a word is the width
    assert c({"ffn": "3072 hidden units", "hidden": "768"})["ffn"] == "3072 hidden units"
    # words that do not state a degree of 1, and a negated interleaved schedule
    assert c({"tp": "no data"})["tp"] == "no data" and c({"tp": "n/a"})["tp"] == "n/a"
    assert c({"vpp": "interleaved: no"})["vpp"] == "1" and c({"vpp": "interleaved (not used)"})["vpp"] == "1"
    g = validation._gpu_count
    for cell, n in (("nodes=8", 64), ("64 GPUs, TP=8", 64), ("512 GPUs, DP=64", 512), ("256, dp=32", 256),
                    ("96 nodes, 8 GPUs per node", 768), ("4 nodes of 8 GPUs", 32), ("one node of 8 GPUs", 8),
                    ("128 nodes x 8 MI250X GCDs", 1024), ("1024 MI250X x 2 GCDs", 2048), ("16-32 GPUs", None),
                    ("10K", 10000), ("16K H100 (16,000)", 16000), ("8 x A100 = 8 GPUs", 8)):
        assert g(cell, 8) == n, cell
    # HFU only when the cell says its count includes recomputation
    hfu = validation._cell_counts_recompute
    assert [hfu(x) for x in ("117 (HFU)", "117 TFLOPS HFU", "117 (incl. recompute)", "147 (HFU not reported)",
                             "147 (excl. HFU)", "147 (model FLOPs; hardware FLOPs would be 180)",
                             "147 (discounting recompute)", "147 model TFLOP/s (vs 190 HFU)")] == [
        True, True, True, False, False, False, False, False]
    r = validation.parse_recompute
    assert [r(x) for x in ("no --recompute-activations", "--recompute-activations=false")] == ["none", "none"]
    fa = lambda notes: validation.row_settings({"source": "x (2024)", "notes": notes})["flash_attention"]  # noqa: E731
    assert fa("FlashAttention: Not used") is False and fa("FlashAttention: used") is True
    m = validation.parse_metric
    assert math.isnan(m("tflops_per_gpu", "1.3 (speedup vs baseline)")) and math.isnan(m("mfu_pct", "0.92 (relative)"))
    assert math.isnan(m("tokens_per_s_per_gpu", "2.8k-3.1k"))
    n = validation.parse_number
    assert [n(x) for x in ("380 – 2nd run", "43.2% — 2 runs averaged", "430 — 16K GPUs")] == [380.0, 43.2, 430.0]
    assert validation._aggregate_pflops("1.2 EFLOPS") == pytest.approx(1200.0)
    assert validation._aggregate_pflops("502 TFLOP/s") == pytest.approx(0.502)
    assert validation._arch("SmolLM3-3B")["tied_embeddings"] is True
    assert validation._arch("Moonlighting-GPT").get("gated_mlp") is not True


def test_second_stress_test_wordings_are_read_as_they_say(tmp_path):
    """A second stress test (59 rows: NVIDIA tables, MoE, AMD / Intel / cloud posts): units and
    labels in context, counts in racks / trays / VMs, comments that do not decide, citations
    that are not the run's date."""
    m = validation.parse_metric
    assert m("step_time_s", "2.5 it/s") == pytest.approx(0.4) and m("tflops_per_gpu", "1.544 PFLOP/s") == 1544.0
    assert m("mfu_pct", "MFU 38%") == 38.0
    p = validation.parse_precision
    assert [p(x) for x in ("MXFP8 (an NVFP4 run is listed separately)", "BF16 (an FP8 recipe is listed separately)",
                           "BF16 baseline; FP8 in next row", "BF16 (FP8 disabled)", "FP8-CS (FP8-MX)")] == [
        "fp8", "bf16", "bf16", "bf16", "fp8"]
    cm = validation.catalogue_model
    assert cm("DeepSeekV3 (tokendrop)") == cm("DeepSeek V3 671B") == cm("DeepSeek-V3-Base") == "deepseek-v3"
    assert cm("Qwen3_30B_a3B (tokendrop)") == "qwen3-30b-a3b" and cm("deepseek") is None
    g = validation._gpu_count
    for cell, gpn, rack, n in (("1 NVL72 rack (64 GPUs used)", 4, 72, 64), ("18 trays", 4, 72, 72),
                               ("1x NVL72", 4, 72, 72), ("2 NVL72 racks", 4, 72, 144), ("1,344 VMs (ND H100 v5)", 8, 8, 10752),
                               ("8 x BM.GPU.MI300X.8", 8, 8, 64), ("8 x Gaudi 3 servers", 8, 8, 64),
                               ("32 nodes of 8 MI300X", 8, 8, 256), ("single node", 8, 8, 8), ("one DGX H100", 8, 8, 8)):
        assert g(cell, gpn, rack) == n, cell
    z = validation.parse_zero_stage
    assert [z(x) for x in ("FSDP=0 (DDP)", "FSDP off", "distributed optimizer (FSDP=0)",
                           "no FSDP (DDP + dist. optimizer)", "FSDP")] == [0, 0, 1, 1, 3]
    r = validation.parse_recompute
    assert [r(x) for x in ("recompute_modules=[core_attn, mlp]", "activation checkpointing (attention only)",
                           "yes (MLP only)", "selective + full on first 4 layers", "full (activation checkpointing)")] == [
        "selective", "selective", "selective", "selective", "full"]
    y = validation.source_year
    assert y("AMD ROCm blog (2025); ROCm/Megatron-LM, a fork of Megatron-LM (Shoeybi et al., arXiv:1909.08053)") == 2025
    # "per" is an ordinary word ("per-GPU"): that arXiv id stays the source's date
    assert y("NeMo 24.12 recipes; selective recompute per arXiv:2205.05198") == 2022
    assert y("torchtitan 2025; parallelism as in Narayanan et al. 2021") == 2025
    c = validation._clean_int_cells
    assert c({"vpp": "VP=12"})["vpp"] == "12" and c({"ep": "EP=16 (ETP=1)"})["ep"] == "16"
    assert c({"kv_heads": "num_query_groups=8"})["kv_heads"] == "8" and c({"kv_heads": "MLA", "model": "DeepSeek-V3"})["kv_heads"] is None
    assert c({"kv_heads": "MLA", "model": "DeepSeek-V2"})["kv_heads"] == "MLA"  # no MLA dimensions to take
    assert {k: v for k, v in c({"tp": "TP8-PP8-CP2"}).items()} == {"tp": "8", "pp": "8", "cp": "2"}
    assert c({"dp": "FSDP 8"}) == {"dp": "8", "_dp_fsdp": True}
    assert validation._tokens("512 × 4096", 4096) == 512 * 4096
    def built(**kw):
        s, why = validation.row_to_scenario(_row(**kw))
        assert s is not None, (kw, why)
        return s
    assert built(vpp="2 layers per virtual stage").parallelism.vpp == 96 // (8 * 2)
    assert built(gpu="8x H100", gpu_count=None, tp=8, pp=1).cluster.n_gpus == 8
    assert built(dp="FSDP 128", tp=1, pp=8, zero_stage=None).parallelism.zero_stage == 3
    assert validation.network_bw_per_gpu("3x 200 Gb/s RoCE per HPU (scale-out)", 8) == pytest.approx(600e9 / 8)
    assert validation.system_for_gpu("H200 (a3-ultragpu-8g)") == "dgx-h200"
    assert validation.system_for_gpu("a4-highgpu-8g") == "dgx-b200"
    assert validation.batch_published(_row(global_batch_seqs="GBS 256"))


def test_second_round_rules_keep_what_was_read_before():
    """Regressions a second differential review found in the rules above (cells the old reader
    read right), each pinned."""
    g = validation._gpu_count
    for cell, gpn, rack, n in (("16 nodes (8 GPUs per node)", 8, None, 128), ("2 nodes (8 GPUs each)", 8, None, 16),
                               ("16 servers (8 GPUs each, 128 total)", 8, None, 128), ("16 MI300X nodes", 8, None, 128),
                               ("8 Gaudi3 nodes", 8, None, 64), ("4 Gaudi 3 servers", 8, None, 32),
                               ("one node of 4 GPUs", 8, None, 4), ("a node with 4 GPUs", 8, None, 4),
                               ("a DGX SuperPOD", 8, None, None), ("one rack", 8, None, None),
                               ("2 racks, 64 GPUs", 4, 72, 64), ("1 rack = 72 GPUs", 8, None, 72), ("1 NVL36 rack", 4, 72, 36),
                               ("4 nodes of 4 MI250X", 8, None, 32), ("128 nodes of 8 GCDs", 8, None, 1024)):
        assert g(cell, gpn, rack) == n, cell
    m = validation.parse_metric
    assert math.isnan(m("tflops_per_gpu", "1.5 PFLOP/s aggregate")) and math.isnan(m("mfu_pct", "HFU 45%"))
    assert math.isnan(m("tokens_per_s_per_gpu", "MFU 40%")) and math.isnan(m("step_time_s", "tokens/s 3000"))
    assert math.isnan(validation._aggregate_pflops("TFLOPS 502"))
    u = validation._metric_unit
    assert u("3,000 tok/s/GPU (24,000 per node)") == "tok/s/GPU" and u("3,050 tokens/s (0.37 samples/s)") == "tokens/s"
    assert u("35% (of BF16 peak; 17.5% of FP8 peak)") == "%"
    p = validation.parse_precision
    assert [p(x) for x in ("mixed precision (FP8)", "unknown (likely fp8)", "fp32 (bf16 compute)", "AMP; fp16",
                           "BF16; FP8 delayed scaling")] == ["fp8", "fp8", "bf16", "fp16", "fp8"]
    z = validation.parse_zero_stage
    assert [z(x) for x in ("no ZeRO-3", "none (ZeRO-1 not used)", "ZeRO++ (not FSDP)", "HSDP (FSDP off across nodes)")] == [
        0, 0, 3, 3]
    y = validation.source_year
    assert [y(x) for x in ("throughput per GPU (arXiv:2104.04473)", "based on Megatron-LM v2.5 (2021)",
                           "see Table 2 (2023)", "TorchTitan after the 2024 release")] == [2021, 2021, 2023, 2024]
    def sp(notes):
        s, why = validation.row_to_scenario(_row(notes=notes, source="x (2024)"))
        return s.parallelism.sequence_parallel
    assert sp("SP not applicable") is True and sp("selective recompute (the sequence parallelism paper's method)") is True
    assert sp("without sequence parallelism the activations would not fit") is True  # notes never decide SP
    s, _ = validation.row_to_scenario(_row(tp="TP=8, SP", source="Smith et al., arXiv:2201.11990"))
    assert s.parallelism.sequence_parallel is True  # stated in the tp cell, before the 2022 default
    r = validation.parse_recompute
    assert [r(x) for x in ("flash attention only, no checkpointing", "checkpointing, only in normal steps")] == ["none", "full"]
    assert validation._clean_int_cells({"tp": "TP=8 (vs TP=4, PP=2 in Table 3)"}) == {"tp": "8"}
    cm = validation.catalogue_model
    assert [cm(x) for x in ("DeepSeek-V3 16B (proxy)", "Llama 2 70B 7B", "Llama 2 (7B)", "GPT-3 (175B)")] == [
        None, None, "llama2-7b", "gpt3-175b"]
    assert validation.network_bw_per_gpu("8x 400 Gb/s per accelerator node", 8) == pytest.approx(50e9)
    assert validation.system_for_gpu("RTX A4-series") is None


def test_third_round_rules_keep_what_was_read_before():
    """Regressions a third differential review found (1,900 fresh variants), each pinned."""
    c = validation._clean_int_cells
    assert c({"moe_experts": "8 (2 routed per token)"})["moe_experts"] == "8 (2 routed per token)"
    assert validation.parse_number(c({"moe_experts": "8 experts, 2 routed per token"})["moe_experts"]) == 8
    assert c({"moe_experts": "1 shared + 256 routed"})["moe_experts"] == "256"
    z = validation.parse_zero_stage
    assert [z(x) for x in ("DDP (FSDP for 70B)", "DDP, ZeRO-3 in next row", "DDP + dist. optimizer")] == [0, 0, 1]
    p = validation.parse_precision
    assert [p(x) for x in ("BF16 weights; FP8 compute (vs BF16 baseline)", "BF16 baseline; FP8 this row",
                           "BF16 baseline; FP8 in next row")] == ["fp8", "fp8", "bf16"]
    g = validation._gpu_count
    for cell, n in (("128 nodes (8 GCDs each)", 1024), ("1024 (8 GCDs per node)", 1024), ("96 nodes with 8 GPUs", 768),
                    ("16 nodes, 8× MI300X each", 128), ("32 nodes of 8× MI300X", 256), ("1024 - 8 (hot spares)", 1024),
                    ("16-32 GPUs", None)):
        assert g(cell, 8) == n, cell
    h = validation._cell_counts_recompute
    assert not h("40% MFU (52% HFU incl. recompute)") and not h("400 (520 incl. recompute)") and h("117 (incl. recompute)")
    r = validation.parse_recompute
    assert r("none (--recompute-activations unset)") == "none"
    assert r("activation checkpointing (FA2 attention only)") == "full"
    assert validation.source_year("Table 1 per-GPU TFLOP/s, arXiv:2104.04473 (retrieved 2024)") == 2021
    n = validation.parse_number
    assert [n(x) for x in ("140 – 1024 GPUs", "5.8 - 2 (warmup)", "64 - 64")] == [140.0, 5.8, 64.0]
    assert math.isnan(n("10 - 20%")) and math.isnan(n("192→4224"))
    assert c({"global_batch_seqs": "192→4224 (warm-up)"})["global_batch_seqs"] == "4224"
    assert c({"vocab": "50257 → 51200"})["vocab"] == "51200"
    m = validation.parse_metric
    assert math.isnan(m("mfu_pct", "+3% (vs BF16)")) and math.isnan(m("tokens_per_s_per_gpu", "1.12 (vs 1.00 baseline)"))
    assert m("tokens_per_s_per_gpu", "3,100 (normalized per GPU)") == 3100.0
    assert validation._metric_unit("11.6k tok/s per node") == "tok/s per node"
    assert c({"vpp": "VPP=5 (not used)"})["vpp"] == "VPP=5 (not used)"
    assert c({"tp": "TP=4 (no SP)"}) == {"tp": "4", "_tp_sp": False}
    assert c({"moe_experts": "E=8 (2 shared)"}) == {"moe_experts": "8", "_shared_experts": 2}
    assert validation.catalogue_model("Llama 3 70B (proxy, 4 layers)") is None


def test_fourth_round_rules_keep_what_was_read_before():
    """Regressions a fourth differential review found, each pinned."""
    c = validation._clean_int_cells
    for cell in ("256 experts, 1 shared, 8 routed", "64 experts + 2 shared, 6 routed", "160 (+2 shared), 6 routed"):
        assert validation.parse_number(c({"moe_experts": cell})["moe_experts"]) in (256, 64, 160), cell
    g = validation._gpu_count
    for cell, n in (("16 nodes with 128 GPUs", None), ("32 servers having 256 GPUs", None), ("128 nodes (8 GCDs)", 1024),
                    ("64 nodes, 8 GPUs", 512), ("96 nodes with 8 GPUs", 768)):
        assert g(cell, 8) == n, cell
    z = validation.parse_zero_stage
    assert [z(x) for x in ("DDP without ZeRO-3", "DDP instead of FSDP", "DDP since FSDP OOMed", "DDP + ZeRO-1")] == [0, 0, 0, 1]
    p = validation.parse_precision
    assert [p(x) for x in ("BF16 optimizer states; FP8 GEMMs (recipe listed in appendix)",
                           "BF16 gradients; FP8 GEMMs (next row)")] == ["fp8", "fp8"]
    assert [c({"tp": x}).get("_tp_sp") for x in ("TP=8 (SP=False)", "TP=4 (SP=0)", "TP=8 (sequence length 2k)",
                                                   "TP=8 (SP on)")] == [False, False, None, True]
    assert c({"tp": "TP=4 (SP, no comm overlap)"}) == {"tp": "4", "_tp_sp": True}  # the negation is about overlap
    assert c({"global_batch_seqs": "1024→2048→4096"})["global_batch_seqs"] == "4096"
    assert validation._cell_counts_recompute("160 hardware TFLOP/s (H100)")
    assert validation.catalogue_model("DeepSeek-V3 (671B, 61 layers)") == "deepseek-v3"
    assert validation.catalogue_model("Llama 3 70B (4 layers)") is None


def test_fifth_round_rules_keep_what_was_read_before():
    """Regressions a fifth differential review found, each pinned: ambiguous cells are refused
    rather than guessed."""
    g = validation._gpu_count
    for cell, gpn, rack, n in (("16 H200 nodes with 8 GPUs", 8, None, None), ("64 DGX A100 nodes with 8 GPUs each", 8, None, None),
                               ("64 x DGX A100 nodes with 8 GPUs", 8, None, 512), ("64 DGX nodes with 8 GPUs", 8, None, None),
                               ("128 nodes of 4 MI250X (8 GCDs)", 8, None, 1024), ("8 nodes with 4 MI250X (8 GCDs)", 8, None, 64),
                               ("single node (4 of 8 GPUs)", 8, None, 4), ("1 node with 8 GPUs (4 used)", 8, None, 4),
                               ("2 nodes with 8 GPUs", 4, 72, None)):
        assert g(cell, gpn, rack) == n, cell
    c = validation._clean_int_cells
    assert c({"moe_experts": "E=64, 2 shared, 6 routed"})["moe_experts"] == "E=64, 2 shared, 6 routed"
    s, why = validation.row_to_scenario(_row(moe_experts="1 shared + 64 routed (6 active)", moe_topk="6"))
    assert s is not None and (s.model.moe.n_experts, s.model.moe.n_shared_experts, s.model.moe.top_k) == (64, 1, 6), why
    cm = validation.catalogue_model
    assert [cm(x) for x in ("Llama 3 70B (half depth)", "GPT-3 175B (scaled to 1.3B)", "Llama 3 70B (8 of 80 layers)",
                            "Mixtral 8x7B (2 experts)", "Mixtral 8x7B (8 experts, 32 layers)")] == [
        None, None, None, None, "mixtral-8x7b"]
    assert [c({"tp": x}).get("_tp_sp") for x in ("TP=8 (+SP)", "TP=8 (w/ SP)", "TP=8 (SP, overlap)",
                                                   "TP=4 (SP, no comm overlap)")] == [True, True, True, True]
    assert c({"dp": "FSDP=4 (off)"}) == {"dp": None}
    small = dict(model="GPT 200M", layers=16, hidden=1024, heads=16, ffn=4096)  # tokens/s a GPU can reach
    rows = [_row(run_id="k", tokens_per_s_per_gpu="92.8k tokens/s (64 GPUs)", **small),
            _row(run_id="node", tokens_per_s_per_gpu="11.6k/node", **small),
            _row(run_id="hw", tflops_per_gpu="160 hardware TFLOP/s (vs 140 model)")]
    import tempfile, os
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "rows.csv")
        pd.DataFrame(rows).reindex(columns=list(validation.REQUIRED_COLUMNS) + ["source", "notes"]).to_csv(path, index=False)
        b, meta, _ = validation.calibration_batch(path)
    m = meta.set_index("run_id")
    assert math.isnan(m.loc["k", "published"]) or m.loc["k", "metric"] == ""
    assert m.loc["node", "published"] == pytest.approx(11600 / 8)
    assert m.loc["hw", "metric"] == ""


def test_sixth_round_rules_keep_what_was_read_before(tmp_path):
    """Regressions a sixth differential review found, each pinned."""
    g = validation._gpu_count
    for cell, gpn, rack, n in (("16 nodes (all 8 GPUs used)", 8, None, 128), ("64 nodes (8 GPUs used per node)", 8, None, 512),
                               ("512 GPUs (8 used for eval)", 8, None, 512), ("4 of 8 GPUs used", 8, None, 4),
                               ("1016 of 1024 GPUs used", 8, None, 1016), ("1 node (4 of 8 GPUs used)", 4, 72, 4),
                               ("2 nodes (12 of 16 GPUs used)", 8, None, 12), ("128 nodes, all 8 GPUs used", 8, None, 1024)):
        assert g(cell, gpn, rack) == n, cell
    c = validation._clean_int_cells
    assert [c({"tp": x}).get("_tp_sp") for x in ("TP=4 (SP: N)", "TP=4 (SP ✗)", "TP=4 (SP: none)", "TP=4 (SP: -)")] == [False] * 4
    assert c({"global_batch_seqs": "1024 → 4k"})["global_batch_seqs"] == "1024 → 4k"  # refused, not 4
    assert c({"moe_experts": "1 shared + 256 routed (8 active)"})["moe_experts"] == "256"  # 8 active per token
    cm = validation.catalogue_model
    assert [cm(x) for x in ("Llama 3 70B (8B)", "GPT-3 175B (1.3B)", "Llama 3 70B (hidden 4096)", "Mixtral 8x7B (top-1)",
                            "Mixtral 8x7B (top-2)", "Llama 3 70B (70B)")] == [None, None, None, None, "mixtral-8x7b", "llama3-70b"]
    cells = ["3,000 tok/s/GPU (24,000 per node)", "3,000 (Eos cluster)", "192k tok/s across 64 GPUs", "192k tok/s (3k per GPU)",
             "11.6k/node", "3.2k samples/s"]
    # a 200M-parameter GPT (GPT-3 175B at 3,000 tokens/s per A100 would be 10x its peak: not compared)
    small = dict(model="GPT 200M", layers=16, hidden=1024, heads=16, ffn=4096)
    rows = [_row(run_id=f"r{i}", tokens_per_s_per_gpu=x, **small) for i, x in enumerate(cells)]
    path = tmp_path / "rows.csv"
    pd.DataFrame(rows).reindex(columns=list(validation.REQUIRED_COLUMNS) + ["source", "notes"]).to_csv(path, index=False)
    _, meta, _ = validation.calibration_batch(path)
    pub = meta["published"].tolist()
    assert pub[0] == 3000.0 and pub[1] == 3000.0 and pub[4] == pytest.approx(11600 / 8)
    assert all(math.isnan(v) for v in (pub[2], pub[3], pub[5]))


def test_seventh_round_rules_keep_what_was_read_before():
    """Regressions a seventh differential review found, each pinned."""
    t = validation._tokens_scope
    assert [t(x) for x in ("92.8k tok/s (total)", "92.8k (aggregate)", "11.6k (per node)", "11,600 tok/s (per node)",
                           "92.8k (whole cluster)", "92.8k (all GPUs)", "3,000 (Eos cluster)", "1,450 tok/s/H100",
                           "1,450 tok/s FP8", "1,450 (4 GPUs/node)", "1,450 tok/s over 100 steps", "1,450 ± 30")] == [
        "total", "total", "node", "node", None, None, "gpu", "gpu", "gpu", "gpu", "gpu", "gpu"]
    g = validation._gpu_count
    for cell, n in (("16 nodes (8/8 GPUs used)", 128), ("64 nodes (7/8 GPUs used)", None), ("2 nodes with 8 GPUs (only 12 used)", 12),
                    ("4 nodes with 8 GPUs, 28 used", 28), ("1024 GPUs (only 1016 used)", 1016),
                    ("2 nodes (12 of 16 GPUs used)", 12), ("nodes/GPUs: 64/512", None)):
        assert g(cell, 8) == n, cell
    c = validation._clean_int_cells
    assert c({"moe_experts": "1 shared + 8 routed (256 total)"})["moe_experts"].startswith("unclear")
    assert [c({"global_batch_seqs": x})["global_batch_seqs"] for x in (
        "2048 → 4096 (measured at 2048)", "192 → 4224 warm-up", "192→4224 over 1B tokens", "512 → 1024 after 100k steps")] == [
        "2048", "4224", "4224", "1024"]
    cm = validation.catalogue_model
    assert [cm(x) for x in ("Mixtral 8x7B (13B active)", "GPT-3 175B (300B tokens)", "Llama 3 70B (FFN hidden 28672)",
                            "Llama 3 70B (top-1 acc)")] == ["mixtral-8x7b", "gpt3-175b", "llama3-70b", "llama3-70b"]


def test_eighth_round_rules_keep_what_was_read_before():
    """Regressions an eighth differential review found, each pinned."""
    g = validation._gpu_count
    for cell, n in (("1,024 GPUs used", 1024), ("1,016 of 1,024 GPUs used", 1016), ("64 GPUs (only 8 used for eval)", 64),
                    ("2 nodes with 8 GPUs (only 12 used for the run)", 12), ("1024 GPUs (only 1016 used for training)", 1016),
                    ("512 GPUs, only 32 used for validation", 512), ("16 nodes, 4/8 GPUs", None), ("64 nodes, 8 GPUs used", None)):
        assert g(cell, 8) == n, cell
    t = validation._tokens_scope
    assert [t(x) for x in ("192k tok/s cluster-wide", "192k tok/s (64 H100)", "24k tok/s per 8xH100", "11.6k (single node)",
                           "192k (64 devices)", "3,000 (Eos cluster)")] == [None, None, None, None, None, "gpu"]
    c = validation._clean_int_cells
    assert c({"global_batch_seqs": "1024 → 2048 (from 1024)"})["global_batch_seqs"] == "2048"
    assert c({"vocab": "50257 → 51200 (padded from 50257)"})["vocab"] == "51200"
    assert [c({"moe_experts": x})["moe_experts"] for x in ("160 routed + 2 shared (162 total)", "256 routed + 1 shared, top-8 of 256",
                                                           "64 (2 shared, 6 routed active)")] == [
        "160", "256", "64 (2 shared, 6 routed active)"]


@pytest.mark.parametrize(("cell", "scaling"), [
    ("fp8 (Float8 rowwise scaling, torchao.float8; bf16 elsewhere)", "rowwise"),
    ("FP8 row-wise", "rowwise"),
    ("fp8, per-row scales", "rowwise"),
    ("fp8 (rowwise_with_gw_hp)", "rowwise"),
    ("fp8 (Float8 tensorwise dynamic scaling)", "tensorwise"),
    ("FP8-CS", "tensorwise"),
    ("FP8-MX", "tensorwise"),
    ("fp8 (not rowwise)", "tensorwise"),
    ("", "tensorwise"),
    # found by review: comparisons are no statement, and the name is not part of another word
    ("fp8 (vs. rowwise)", "tensorwise"),
    ("fp8 instead of rowwise", "tensorwise"),
    ("fp8 tensorwise rather than rowwise", "tensorwise"),
    ("fp8 rowwise (compared with tensorwise)", "rowwise"),
    ("fp8 arrow-wise", "tensorwise"),
    ("fp8 borrowwise", "tensorwise"),
    # second review: a negation after "scaling", torchao's AXISWISE, per-token / per-channel
    # scales, the other scaling placed in another row or given as a comparison / result
    ("fp8 (rowwise scaling: disabled)", "tensorwise"),
    ("FP8 (row-wise scaling not used)", "tensorwise"),
    ("fp8; rowwise scaling was not used", "tensorwise"),
    ("FP8 axiswise scaling", "rowwise"),
    ("fp8 (per-token activation, per-channel weight scales)", "rowwise"),
    ("fp8 (tensorwise; rowwise in the next row)", "tensorwise"),
    ("fp8 tensorwise w/ float8 all-gather; rowwise: see separate row", "tensorwise"),
    ("FP8 rowwise scaling (torchao); tensorwise numbers in the other row", "rowwise"),
    ("FP8 rowwise. Tensorwise: separate run.", "rowwise"),
    ("fp8 tensorwise (rowwise was 12% slower)", "tensorwise"),
    ("fp8 rowwise (tensorwise: 7689 tok/s)", "rowwise"),
    ("fp8 rowwise, not yet tested with tensorwise", "rowwise"),
    ("FP8 (rowwise, assumed)", "rowwise"),  # the writer's stated reading, as in every other cell
    ("MXFP8", "tensorwise"),
    ("FP8 (delayed scaling)", "tensorwise"),
])
def test_fp8_scaling_is_read_from_the_precision_cell(cell, scaling):
    assert validation.parse_fp8_scaling(cell) == scaling


def test_fp8_scaling_naming_both_is_refused_and_bf16_rows_ignore_it():
    with pytest.raises(ValueError, match="names both tensorwise and rowwise"):
        validation.parse_fp8_scaling("fp8 tensorwise and rowwise")
    with pytest.raises(ValueError, match="both plainly and negated"):
        validation.parse_fp8_scaling("fp8; without rowwise at first, then rowwise")
    for cell in ("fp8 (scaling not stated; rowwise?)", "fp8 (rowwise)?", "FP8 rowwise (?)", "fp8 (probably rowwise)",
                 "fp8 rowwise (likely)", "fp8 (rowwise, unconfirmed)"):
        with pytest.raises(ValueError, match="with a hedge"):
            validation.parse_fp8_scaling(cell)
    for cell in ("FP8 (row-wise scaled GEMMs, tensor-wise scaled all-gather)", "row-wise or tensor-wise (not stated)"):
        with pytest.raises(ValueError):
            validation.parse_fp8_scaling(cell)
    s, why = validation.row_to_scenario(_row(precision="fp8 tensorwise and rowwise"))
    assert s is None and "names both tensorwise and rowwise" in why
    s, _ = validation.row_to_scenario(_row(gpu="H100", precision="fp8 (rowwise scaling)"))
    assert s.training.precision == "fp8" and s.training.fp8_scaling == "rowwise"
    s, _ = validation.row_to_scenario(_row(gpu="H100", precision="bf16 (the rowwise FP8 run is the next row)"))
    assert s.training.precision == "bf16" and s.training.fp8_scaling == "tensorwise"


def test_a_csv_without_any_published_metric_is_one_clear_error(tmp_path):
    """Review 2026-11-30: `planner validate --csv` raised IndexError when no row had a metric."""
    from test_cli import run

    df = pd.read_csv(validation.DEFAULT_CSV).head(5)
    for c in validation.METRIC_COLUMNS + ("aggregate_pflops",):
        df[c] = None
    f = tmp_path / "none.csv"
    df.to_csv(f, index=False)
    with pytest.raises(ValueError, match="no row can be compared"):
        validation.validate(f)
    rc, out, err = run("validate", "--csv", str(f))
    assert rc == 2 and err.count("\n") == 1 and "no row can be compared" in err and out == ""


def test_aggregate_pflops_alone_is_counted_like_the_sources_tflops(tmp_path):
    """A Narayanan row with only its aggregate PFLOP/s is compared as its TFLOP/s per GPU would be
    (Narayanan's own FLOP formula, recompute included): the same predicted / published ratio."""
    df = pd.read_csv(validation.DEFAULT_CSV).head(3)
    full = validation.validate(_write(tmp_path, df, "a.csv"))[0].set_index("run_id")
    for c in validation.METRIC_COLUMNS:
        df[c] = None
    agg = validation.validate(_write(tmp_path, df, "b.csv"))[0].set_index("run_id")
    for rid in agg.index:
        assert agg.loc[rid, "metric"] == "tflops_per_gpu"
        # the aggregate is rounded in the source (e.g. 4.4 PFLOP/s for 32 x 137.5 TFLOP/s)
        assert agg.loc[rid, "rel_err"] == pytest.approx(full.loc[rid, "rel_err"], abs=0.01)


def _write(tmp_path, df, name):
    f = tmp_path / name
    df.to_csv(f, index=False)
    return f


def test_a_network_rate_in_bytes_is_not_read_as_bits():
    """'8x50 GB/s' is 8 links of 50 GB (bytes) per second: the text rule reads network rates in
    bits only (GB/s is how NVLink is quoted), so it states nothing here — the NIC-count pattern
    matched case-insensitively and read it as 8 x 50 Gb/s = 6.25 GB/s per GPU, an eighth of the
    truth. Bit rates in any case of the prefix still read. Since review 18b a byte rate after a
    network's name is read as bytes: 'InfiniBand 8x50 GB/s' = 8 · 50e9 / 8 GPUs = 50e9 per GPU
    (400 Gb/s NDR); without the name it stays unread."""
    nb = validation.network_bw_per_gpu
    for text in ("8 x 50 GB/s per node", "50 GB/s x 8", "8 NICs x 50 GBps"):
        assert nb(text, 8) is None, text
    assert nb("InfiniBand 8x50 GB/s", 8) == pytest.approx(8 * 50e9 / 8)
    assert nb("InfiniBand 8x400Gb/s", 8) == pytest.approx(400e9 / 8)
    assert nb("8 x 400 gbps", 8) == pytest.approx(400e9 / 8)
    assert nb("3.2 Tb/s per node", 8) == pytest.approx(3.2e12 / 8 / 8)


def test_pp_cell_with_virtual_stages_before_their_label_and_dualpipev():
    """'8 (interleaved, 2 virtual stages)' is pp 8 with 2 virtual stages, interleaved (it ran
    as plain 1F1B, silently: the count came before its label); DualPipeV — the V-shaped,
    cut-in-half DualPipe, with its own bubble — has no schedule here, so its row is refused
    instead of run as 1F1B."""
    base = {**_row(), "gpu_count": 1024, "tp": 8, "dp": None, "layers": 96}
    s, why = validation.row_to_scenario({**base, "pp": "8 (interleaved, 2 virtual stages)"})
    assert s is not None, why
    assert (s.parallelism.pp, s.parallelism.vpp, s.parallelism.schedule) == (8, 2, "interleaved")
    s, why = validation.row_to_scenario({**base, "pp": "8 (interleaved, 3 model chunks)"})
    assert (s.parallelism.pp, s.parallelism.vpp) == (8, 3), why
    for cell in ("16 (DualPipeV)", "DualPipe-V, PP=16"):
        s, why = validation.row_to_scenario({**base, "pp": cell})
        assert s is None and "not modelled" in why, (cell, why)
    s, why = validation.row_to_scenario({**base, "pp": "8 (DualPipe)"})
    assert s is not None and s.parallelism.schedule == "dualpipe", why


def test_a_dense_moe_hybrid_is_refused_not_run_as_plain_moe():
    """Snowflake Arctic is a "Dense-MoE Hybrid" (a dense MLP residual beside 128 experts in
    every layer): the schema cannot state it, and run as a plain MoE the dense MLP would be
    left out silently, so the row is refused with the reason. Shared experts are not a hybrid."""
    for cell in ("128 (dense-MoE hybrid residual)", "128 experts + residual dense MLP"):
        s, why = validation.row_to_scenario(_row(moe_experts=cell, moe_topk=2))
        assert s is None and "dense-MoE hybrid" in why, (cell, why)
    s, why = validation.row_to_scenario(_row(model="Snowflake Arctic (Dense-MoE Hybrid)", moe_experts=128, moe_topk=2))
    assert s is None and "dense-MoE hybrid" in why, why
    s, why = validation.row_to_scenario(_row(moe_experts="64 routed + 2 shared", moe_topk=6))
    assert s is not None, why


def test_h200_nvl_is_a_pcie_card_not_the_sxm_baseboard():
    """H200 NVL is NVIDIA's 600 W PCIe card (NVLink bridges of 2 or 4; ../shared/reference/
    hardware.md: "700 (H200 NVL PCIe: 600)"), like the H100 NVL: no catalogue system, so the row
    is skipped rather than run on the 700 W SXM baseboard."""
    assert validation.system_for_gpu("H200 NVL") is None
    assert validation.system_for_gpu("H100 NVL") is None
    assert validation.system_for_gpu("H200 SXM 141GB") == "dgx-h200"


def test_third_party_cell_wording():
    """Cells as a reader of a paper or blog writes them, each read as what it means: an MFU
    copied as a fraction (IBM's FSDP blog prints 0.57), a global batch given as micro-batch ×
    gradient accumulation (KempnerForge: batch/GPU 4, grad_accum 4, TP 4 × FSDP 8), machines
    counted with the GPUs per node the row states (40 nodes of 4 H200), a job's total tokens/s,
    and a per-GPU batch in the batch column."""
    # 0.57 is 57 %: no training run publishes 0.57 % of peak; a percent sign keeps the number
    assert validation.parse_metric("mfu_pct", "0.57") == pytest.approx(57.0)
    assert validation.parse_metric("hfu_pct", 0.45) == pytest.approx(45.0)
    assert validation.parse_metric("mfu_pct", "0.5%") == pytest.approx(0.5)
    assert validation.parse_metric("mfu_pct", "38") == pytest.approx(38.0)
    s, why = validation.row_to_scenario(_row(mfu_pct="0.517"))
    assert s is not None, why
    # micro-batch 4 × 4 accumulation steps × dp 8 = 128 sequences; published, so compared
    kf = dict(model="13B", layers=40, hidden=5120, heads=40, kv_heads=8, ffn=17920, seq_len=4096,
              gpu="H200 141GB", gpu_count=32, tp=4, pp=1, dp=8, micro_batch=4, grad_accum=4,
              global_batch_seqs=None, source="KempnerForge weak scaling, 2026")
    s, why = validation.row_to_scenario(_row(**kf))
    assert s is not None, why
    assert s.training.global_batch_size == 4 * 4 * 8
    assert validation.batch_published(_row(**kf))
    assert not validation.batch_published(_row(**{**kf, "grad_accum": None}))
    # 40 nodes of 4 H200 (the row says so) are 160 GPUs, not 40 × the catalogue's 8
    s, why = validation.row_to_scenario(_row(**{**kf, "gpu_count": "40 nodes", "dp": 40,
                                                "interconnect": "4x H200 per node, NVLink intra-node, InfiniBand"}))
    assert s is not None, why
    assert s.cluster.n_gpus == 160
    s, _ = validation.row_to_scenario(_row(**{**kf, "gpu_count": "4 nodes", "dp": None}))
    assert s.cluster.n_gpus == 32  # no per-node count stated: the catalogue's 8
    assert validation._stated_gpus_per_node({"interconnect": "4 MI250X per node"}) == 8  # 2 GCDs each
    assert validation._stated_gpus_per_node({"interconnect": "8x HDR InfiniBand 200 Gb/s per node"}) is None
    # the whole job's throughput, with a spread after it
    assert validation._tokens_scope("110,373 (whole job)") == "total"
    assert validation._tokens_scope("534,644±1,138 aggregate") == "total"
    assert validation._tokens_scope("3,700") == "gpu"
    # "2 per GPU" on 128 GPUs without model parallelism: 256 sequences; with TP it is refused
    ibm = dict(model="Llama 2 13B", layers=None, hidden=None, heads=None, ffn=None, seq_len=4096,
               gpu="A100 80GB", gpu_count=128, tp=1, pp=1, micro_batch=2, global_batch_seqs="2 per GPU")
    s, why = validation.row_to_scenario(_row(**ibm))
    assert s is not None, why
    assert s.training.global_batch_size == 256
    s, why = validation.row_to_scenario(_row(**{**ibm, "tp": 2}))
    assert s is None and "per GPU" in why


def test_third_party_cell_wording_review():
    """Review of the third-party wording rules, each cell read as what it means."""
    # an MFU of "1" is 1 % or a fraction 1.0 (= 100 %): neither is a run; 100 and above likewise
    for cell in ("1", "1.0", "100", "120"):
        s, why = validation.row_to_scenario(_row(mfu_pct=cell))
        assert s is None and "mfu_pct" in why, cell
    s, why = validation.row_to_scenario(_row(hfu_pct=1.0))
    assert s is None and "hfu_pct" in why
    assert validation.row_to_scenario(_row(mfu_pct="0.57"))[0] is not None
    # a batch cell: the leading number is global unless the words right after it scope it
    ibm = dict(model="Llama 2 13B", layers=None, hidden=None, heads=None, ffn=None, seq_len=4096,
               gpu="A100 80GB", gpu_count=128, tp=1, pp=1, micro_batch=2, grad_accum=None)
    gbs = lambda **kw: validation.row_to_scenario(_row(**{**ibm, **kw}))  # noqa: E731
    assert gbs(global_batch_seqs="512 (2 per GPU x 2 accumulation)")[0].training.global_batch_size == 512
    assert gbs(global_batch_seqs="2 per H100")[0].training.global_batch_size == 256
    assert gbs(global_batch_seqs="2 on each GPU")[0].training.global_batch_size == 256
    assert gbs(global_batch_seqs="2 per DP rank", tp=2)[0].training.global_batch_size == 128
    for cell in ("64 per node", "2 per GPU (global 1024)", "2 per device, 4M tokens global"):
        s, why = gbs(global_batch_seqs=cell)
        assert s is None and "global batch" in why, cell
    # "2 per device" beside 4 accumulation steps: HF's per-device batch is the micro-batch (2);
    # MosaicML's is micro-batch x accumulation (8); neither matching the micro-batch is refused
    assert gbs(global_batch_seqs="2 per GPU", grad_accum=4)[0].training.global_batch_size == 2 * 4 * 128
    assert gbs(global_batch_seqs="8 per GPU", grad_accum=4)[0].training.global_batch_size == 8 * 128
    s, why = gbs(global_batch_seqs="2 per GPU", grad_accum=4, micro_batch=None)
    assert s is None and "grad_accum" in why
    # 2.5 accumulation steps is no count: the batch is not published
    kf = dict(model="13B", layers=40, hidden=5120, heads=40, kv_heads=8, ffn=17920, seq_len=4096,
              gpu="H200 141GB", gpu_count=32, tp=4, pp=1, dp=8, micro_batch=4, grad_accum="2.5",
              global_batch_seqs=None, source="KempnerForge weak scaling, 2026")
    assert not validation.batch_published(_row(**kf))
    # the GPUs per node the row states also split a per-node NIC rate and a per-node throughput
    s, _ = validation.row_to_scenario(_row(**{**kf, "grad_accum": 4, "gpu_count": "8 nodes", "dp": None,
                                              "interconnect": "4x H200 per node; 4x 200 Gb/s HDR per node"}))
    assert s.cluster.n_gpus == 32
    assert s.cluster.overrides.nic_bw_per_gpu_bytes_per_s == pytest.approx(200e9 / 8)
    # a job's throughput in millions
    assert validation.parse_metric("tokens_per_s_per_gpu", "1.2M (whole job)") == pytest.approx(1.2e6)
    assert validation._tokens_scope("1.2M (whole job)") == "total"


def test_fsdp_uncompiled_statements_review():
    """torch.compile off as third parties write it, and what else makes the ops fused."""
    ew = lambda src, notes="": validation.row_settings({"source": src, "notes": notes})["elementwise"]  # noqa: E731
    ibm = "PyTorch blog 'Maximizing training throughput using PyTorch FSDP' (2024)"
    for off in ("torch.compile (off)", "compile=False", "torch_compile: false", "--compile false",
                "torch.compile could not be used", "PyTorch eager mode"):
        assert ew(ibm, off) == "eager", off
    assert ew("torchtitan (2025)", "torch.compile (off)") == "eager"
    assert ew("torchtitan (2025)", "compile=True") == "fused"
    # an engine named only as a comparison is not what ran; fused kernels named are
    assert ew(ibm, "no torch.compile; compared against Megatron-LM") == "eager"
    assert ew(ibm, "no torch.compile; Liger kernels (fused RMSNorm, SwiGLU, cross-entropy)") == "fused"
    assert ew(ibm, "no torch.compile; no Liger kernels") == "eager"
    assert ew("PyTorch DDP, no FSDP (2024)", "no torch.compile") == "fused"


def test_moe_pipeline_long_context_cell_wording():
    """Cells of MoE, pipeline-layout and long-context rows as a third party writes them, each
    read as what it means: the top-k written in the experts cell (not the default top-1), the
    pipeline schedule and virtual stages written in the pp cell, a CP degree wrapped in words,
    a sequence length in millions, Megatron-Core's recompute module list, an iteration time in
    milliseconds, and a longer "not stated" phrase."""
    moe = dict(model="Custom MoE", layers=24, hidden=2048, heads=16, kv_heads=16, ffn=1408, vocab=32000,
               seq_len=4096, global_batch_seqs=256, gpu="H100", gpu_count=64, tp=1, pp=1, ep=8,
               source="example 2025")
    # "128 experts, top-2" in the experts cell with moe_topk empty: two experts per token
    s, why = validation.row_to_scenario(_row(**moe, moe_experts="128 experts, top-2", moe_topk=None))
    assert s is not None, why
    assert (s.model.moe.n_experts, s.model.moe.top_k) == (128, 2)
    # a different top-k in its own column is refused, not resolved silently
    s, why = validation.row_to_scenario(_row(**moe, moe_experts="128 experts, top-2", moe_topk=4))
    assert s is None and "moe_topk" in why
    # the schedule and virtual stages a pp cell names
    dense = dict(model="GPT 175B", gpu_count=1024, tp=8, global_batch_seqs=1536, source="example 2025")
    s, why = validation.row_to_scenario(_row(**dense, pp="PP=8 interleaved (VPP 4)", vpp=None))
    assert s is not None, why
    assert (s.parallelism.pp, s.parallelism.vpp, s.parallelism.schedule) == (8, 4, "interleaved")
    s, why = validation.row_to_scenario(_row(**dense, pp="PP=8 interleaved (VPP 4)", vpp=2))
    assert s is None and "vpp" in why  # two depths: which one ran?
    s, why = validation.row_to_scenario(_row(**dense, pp="PP=8 (zero bubble)", vpp=None))
    assert s is not None, why
    assert (s.parallelism.pp, s.parallelism.schedule) == (8, "zero_bubble")
    s, why = validation.row_to_scenario(_row(**dense, pp="DualPipe (PP=8)", vpp=None))
    assert s is not None, why
    assert (s.parallelism.pp, s.parallelism.schedule) == (8, "dualpipe")
    s, why = validation.row_to_scenario(_row(**dense, pp="PP=8 (1F1B)", vpp=None))
    assert (s.parallelism.pp, s.parallelism.schedule) == (8, "1f1b")
    s, why = validation.row_to_scenario(_row(**dense, pp="PP=8 (zero bubble)", vpp=4))
    assert s is None and "zero_bubble" in why  # a zero-bubble schedule beside 4 virtual stages
    # a CP degree wrapped in words; a 1M-token sequence is 2^20 tokens (as 128k is 131,072)
    lc = dict(model="Llama 3 8B", layers=32, hidden=4096, heads=32, kv_heads=8, ffn=14336, vocab=128256,
              global_batch_seqs=8, gpu="B200", gpu_count=64, tp=1, pp=1, source="example 2025")
    s, why = validation.row_to_scenario(_row(**lc, seq_len="1M tokens", cp="ring attention (CP=8)"))
    assert s is not None, why
    assert (s.training.seq_len, s.parallelism.cp) == (1048576, 8)
    s, why = validation.row_to_scenario(_row(**lc, seq_len="1M", cp="no CP (CP=8 would not fit)"))
    assert s is None  # a negated degree stays unread
    # Megatron-Core --recompute-modules written as a bare list: part of each layer (selective)
    assert validation.parse_recompute("norm, act") == "selective"
    assert validation.parse_recompute("layernorm, moe_act") == "selective"
    assert validation.parse_recompute("no recompute, norm") == "none"
    # an iteration time in milliseconds, the unit in the label or after the number
    assert validation.parse_metric("step_time_s", "iteration time 4200 ms") == pytest.approx(4.2)
    assert validation.parse_metric("step_time_s", "iteration time (ms) 4200") == pytest.approx(4.2)
    assert math.isnan(validation.parse_metric("step_time_s", "iteration time (ms) 4.2 s"))
    # "not stated in the table" is an unstated cell (the default rule), not an unreadable one
    assert validation.parse_precision("not stated in the table") == "bf16"


def test_classic_paper_degree_cells_split_into_their_columns():
    """A whole split written in the tp cell the ways classic papers and their readers write it:
    degrees named by their word, or a list of degrees beside a list of their labels, in the
    labels' order (the labels decide, not the position); a bare list without labels names no
    single degree and is refused, never read as its first number."""
    c = validation._clean_int_cells
    for cell, want in (("tensor 8 x pipeline 16", ("8", "16", None)), ("8/12/32 (TP/PP/DP)", ("8", "12", "32")),
                       ("(TP, PP, DP) = (8, 16, 64)", ("8", "16", "64")), ("TP/PP/DP = 8/12/32", ("8", "12", "32")),
                       ("8 x 16 x 64 (TP x PP x DP)", ("8", "16", "64")), ("8/12/32 (PP/TP/DP)", ("12", "8", "32")),
                       ("tensor-parallel 8, pipeline-parallel 12", ("8", "12", None))):
        out = c({"tp": cell})
        assert (out["tp"], out.get("pp"), out.get("dp")) == want, cell
    assert c({"tp": "tensor-parallel 8"})["tp"] == "8" and c({"pp": "pipeline-parallel 4"})["pp"] == "4"
    assert c({"tp": "no model parallelism"})["tp"] == "1"
    s = _scen(tp="(TP, PP, DP) = (8, 16, 8)", pp=None)
    assert (s.parallelism.tp, s.parallelism.pp, s.parallelism.dp) == (8, 16, 8)
    for cell in ("8/12", "8 x 16", "8/12/32 (TP/PP)"):  # how many of which? not said
        s, why = validation.row_to_scenario(_row(tp=cell, pp=None))
        assert s is None, cell


def test_deepspeed_autotuning_zero_notation_and_batch_ramp():
    """DeepSpeed autotuning writes the ZeRO stage ``z = 1`` / ``z1_gas1_tmbspg3``; a batch
    ``ramped to 1920`` is the batch the run settled on (as ``192→1920``), but not when the cell
    says the figure was measured at another batch."""
    z = validation.parse_zero_stage
    assert [z(x) for x in ("z = 1", "z1", "Z=2", "z1_gas1_tmbspg3", "ZeRO-1 + PP", "DeepSpeed ZeRO stage 2")] == [1, 1, 2, 1, 1, 2]
    c = validation._clean_int_cells
    assert c({"global_batch_seqs": "ramped to 1920"})["global_batch_seqs"] == "1920"
    assert c({"global_batch_seqs": "ramped from 32 to 1,536 sequences"})["global_batch_seqs"] == "1536"
    s, _ = validation.row_to_scenario(_row(global_batch_seqs="ramped to 1920 (measured at 960)"))
    assert s is None


def test_classic_metric_wordings(tmp_path):
    """Metric cells as classic papers and blogs word them: the label spelled out before the
    number (``hardware FLOPs utilization 52%``, ``TFLOPS per GPU (with recompute) 150``), the
    unit before an aggregate (``PFLOP/s 502 (aggregate)`` = 502/3072 PFLOP/s per GPU), a figure
    ``(with recompute)`` counted as hardware FLOPs, and samples per second of the whole job
    (``(global)``, ``total``) as tokens per second per GPU; bare ``samples/s`` stays unplaced."""
    m = validation.parse_metric
    assert m("hfu_pct", "hardware FLOPs utilization 52%") == 52.0 and m("mfu_pct", "model FLOPs utilization 40%") == 40.0
    assert m("tflops_per_gpu", "TFLOPS per GPU (with recompute) 150") == 150.0
    assert validation._aggregate_pflops("PFLOP/s 502 (aggregate)") == 502.0
    assert validation._tokens_scope("5.29 samples/s (global)") == "total"
    assert validation._tokens_scope("71.6 samples/s total") == "total"
    cells = dict(r0=dict(tflops_per_gpu="150 TFLOPS per GPU (with recompute)"),
                 r1=dict(tflops_per_gpu="150 TFLOPS per GPU"),
                 r2=dict(aggregate_pflops="PFLOP/s 502 (aggregate)", gpu_count=3072),
                 r3=dict(tokens_per_s_per_gpu="5.29 samples/s (global)"),
                 r4=dict(tokens_per_s_per_gpu="5.29 samples/s"),
                 r5=dict(hfu_pct="hardware FLOPs utilization 52%"))
    rows = [_row(run_id=k, recompute="full", **v) for k, v in cells.items()]
    path = tmp_path / "rows.csv"
    pd.DataFrame(rows).reindex(columns=list(validation.REQUIRED_COLUMNS) + ["source", "notes", "aggregate_pflops"]).to_csv(
        path, index=False)
    b, meta, skipped = validation.calibration_batch(path)
    assert skipped.empty
    pub = dict(zip(meta["run_id"], meta["published"]))
    cnt = dict(zip(meta["run_id"], meta["flop_count"]))
    assert cnt["r0"] == pytest.approx(4 / 3 * cnt["r1"], rel=0.02)  # the recomputed forward counted
    assert pub["r2"] == pytest.approx(502e3 / 3072)
    assert pub["r3"] == pytest.approx(5.29 * 2048 / 1024)  # the whole job's samples per second, per GPU
    assert math.isnan(pub["r4"])
    assert dict(zip(meta["run_id"], meta["metric"]))["r5"] == "hfu" and pub["r5"] == pytest.approx(0.52)


def test_sixteen_v100_in_one_node_is_a_dgx2():
    """A GPU count that puts 16 V100 in one machine (``16 GPUs (1 node)``, ``1 node x 16
    V100``) is a DGX-2 / HGX-2 (NVSwitch), not two 8-GPU DGX-1s; 16 V100 on 2 nodes stay DGX-1."""
    for cell, system in (("16 GPUs (1 node)", "dgx2-v100"), ("1 node x 16 V100", "dgx2-v100"),
                         ("2 nodes x 8 GPUs", "dgx1-v100"), ("16", "dgx1-v100")):
        s = _scen(gpu="V100", gpu_count=cell, tp=1, pp=1, model="GPT-2 1.5B", layers=48, hidden=1600, heads=25, ffn=6400,
                  global_batch_seqs=16, seq_len=1024)
        assert (s.cluster.system, s.cluster.n_gpus) == (system, 16), cell


def _calib_rows(n=4) -> pd.DataFrame:
    """The first ``n`` calibration rows, every cell as written."""
    return pd.read_csv(validation.DEFAULT_CSV, dtype=str, keep_default_na=False).head(n)


def _compared(p) -> list:
    rows, _ = validation.validate(p)
    return sorted(rows.loc[rows["status"].eq("ok"), "run_id"])


def test_utf16_files_are_read_like_utf8(tmp_path):
    """Excel's "Unicode Text" is UTF-16 with a byte-order mark, tab-separated; other tools write
    UTF-16 without the mark. Both are text with the calibration columns: read as the UTF-8 file
    (found by a file stress test: every column was reported missing)."""
    df = _calib_rows()
    df.loc[0, "notes"] = "µ × ± – kept"
    (tmp_path / "u8.csv").write_text(df.to_csv(index=False), encoding="utf-8")
    want = _compared(tmp_path / "u8.csv")
    assert len(want) == 4
    (tmp_path / "u16.txt").write_bytes(df.to_csv(index=False, sep="\t").encode("utf-16"))
    (tmp_path / "u16le.csv").write_bytes(df.to_csv(index=False).encode("utf-16-le"))
    (tmp_path / "u16be.csv").write_bytes(df.to_csv(index=False).encode("utf-16-be"))
    for name in ("u16.txt", "u16le.csv", "u16be.csv"):
        assert _compared(tmp_path / name) == want, name


@pytest.mark.parametrize("content, message", [
    (b"", "the file is empty"),
    (b"\r\n\r\n", "the file is empty"),
    (b"PK\x03\x04\x14\x00\x00\x00rest of a workbook", "zip archive (an Excel .xlsx"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1old workbook", "old Excel .xls"),
    (b'[{"run_id": "a", "gpu": "H100"}]', "JSON, not CSV"),
    (b'{"rows": []}\n', "JSON, not CSV"),
    (bytes(range(256)), "binary data"),
    (b"hello world\nnot a csv\n", "names none of the columns of calibration.csv"),
])
def test_a_file_that_is_not_a_calibration_csv_says_what_it_is(tmp_path, content, message):
    """One short line naming what the file is, not the 31 missing column names."""
    p = tmp_path / "in.csv"
    p.write_bytes(content)
    with pytest.raises(ValueError, match=re.escape(message)) as e:
        validation.validate(p)
    assert "\n" not in str(e.value) and "run_id, source_key, model, layers, hidden, heads" not in str(e.value)


def test_a_title_line_above_the_header_is_named(tmp_path):
    p = tmp_path / "in.csv"
    p.write_text("Runs exported 2025-01-01\n" + _calib_rows().to_csv(index=False))
    with pytest.raises(ValueError, match="the header is on line 2"):
        validation.validate(p)


def test_a_line_with_more_cells_than_the_header_is_skipped_and_the_others_kept(tmp_path):
    """An unquoted separator in a notes cell gives a line more cells than the header: that row is
    skipped with the reason, the other rows are still compared (found by a file stress test:
    the whole file was refused with pandas' tokenizer error)."""
    df = _calib_rows()
    for sep, name in ((",", "c.csv"), (";", "s.csv")):
        lines = df.to_csv(index=False, sep=sep).splitlines(True)
        lines[2] = lines[2].rstrip("\n") + f"{sep}an unquoted{sep}note\n"  # the second run
        (tmp_path / name).write_text("".join(lines))
        rows, _ = validation.validate(tmp_path / name)
        assert len(rows) == 4
        ok = rows[rows["status"].eq("ok")]
        assert sorted(ok["run_id"]) == sorted(df["run_id"].drop(index=1)), name
        bad = rows[rows["run_id"].eq(df.loc[1, "run_id"])].iloc[0]
        assert bad["status"].startswith("skipped: the line has 44 cells where the header has 42"), bad["status"]
        assert bad["source_key"] == df.loc[1, "source_key"]


def test_empty_rows_are_dropped_and_an_empty_gpu_cell_is_named(tmp_path):
    """A row with no cell at all (a spreadsheet's trailing ',,,,' rows) is no run: dropped as a
    blank line is. A run with no gpu says so, not "no system for GPU 'None'"."""
    df = _calib_rows()
    text = df.to_csv(index=False) + "," * (len(df.columns) - 1) + "\n" + " ," * (len(df.columns) - 1) + "\n"
    (tmp_path / "e.csv").write_text(text)
    rows, _ = validation.validate(tmp_path / "e.csv")
    assert len(rows) == 4 and rows["status"].eq("ok").all()
    (tmp_path / "only.csv").write_text(",".join(df.columns) + "\n" + "," * (len(df.columns) - 1) + "\n")
    with pytest.raises(ValueError, match="header but no rows"):
        validation.validate(tmp_path / "only.csv")
    s, why = validation.row_to_scenario(_row(gpu=None))
    assert s is None and why.startswith("the gpu cell is empty") and "None" not in why


@pytest.mark.parametrize("cell, n", [("1 024", 1024), ("1\u202f024", 1024), ("1e3", 1000), ("1.024e3", 1024),
                                     ("6.4e1", 64), ("1,024", 1024), ("1024", 1024), (" 64 ", 64)])
def test_a_plain_gpu_count_is_read_as_every_integer_column_reads_it(cell, n):
    """parse_number reads '1 024' and '1e3' as 1024 and 1000; the gpu_count cell read them as 1
    (its leading digit) and the row then failed on a split that did not multiply to 1 GPU."""
    assert validation._gpu_count(cell, 8) == n


def test_a_trailing_separator_or_a_long_first_record_does_not_shift_the_cells(tmp_path):
    """pandas takes the leading cells of a first record longer than the header for an index and
    shifts every row's cells (found by a file stress test: a trailing comma on each line, as some
    exporters write, read cp from the sp column for every row and refused them all). Empty extra
    cells are dropped; a first record with real extra cells is skipped with the reason."""
    df = _calib_rows()
    want = sorted(df["run_id"])
    lines = df.to_csv(index=False).splitlines(True)
    (tmp_path / "t.csv").write_text(lines[0] + "".join(x.rstrip("\n") + ",,\n" for x in lines[1:]))
    assert _compared(tmp_path / "t.csv") == want
    (tmp_path / "f.csv").write_text(lines[0] + lines[1].rstrip("\n") + ",x,y\n" + "".join(lines[2:]))
    rows, _ = validation.validate(tmp_path / "f.csv")
    assert sorted(rows.loc[rows["status"].eq("ok"), "run_id"]) == want[:0] + sorted(df["run_id"][1:])
    first = rows[rows["run_id"].eq(df.loc[0, "run_id"])].iloc[0]
    assert first["status"].startswith("skipped: the line has 44 cells")


def test_review_wording_that_names_no_gpu_count_nor_another_batch_scope():
    """Counter-examples to the rules of this session's cell wording (review): each cell means
    what the reading below says, whatever the rule's pattern would otherwise catch."""
    # "4x200Gbps per node" is four 200 Gb/s links per node, not four GPUs per node: a DGX A100
    # keeps its 8 GPUs per node (16 nodes = 128 GPUs) and each GPU gets 800 / 8 = 100 Gb/s
    s, why = validation.row_to_scenario(_row(gpu_count="16 nodes", interconnect="4x200Gbps per node", dp=None))
    assert s is not None, why
    assert s.cluster.n_gpus == 128
    assert s.cluster.overrides.nic_bw_per_gpu_bytes_per_s == pytest.approx(100e9 / 8)
    assert validation._stated_gpus_per_node({"gpu": "A100", "interconnect": "8x400G per node"}) is None
    assert validation._stated_gpus_per_node({"gpu": "8xH100 per node", "interconnect": ""}) == 8
    # the global batch named in other words ("per training step", "each of 2048 tokens") is the
    # global batch, as the bare number is; "per node" stays another scope
    for cell in ("1536 sequences per training step", "1536 sequences per global batch", "1536 per mini-batch",
                 "1536 sequences each of 2048 tokens", "1536 (per optimization step)", "1536 per gradient step"):
        s, why = validation.row_to_scenario(_row(global_batch_seqs=cell))
        assert s is not None, (cell, why)
        assert s.training.global_batch_size == 1536, cell
    s, why = validation.row_to_scenario(_row(global_batch_seqs="1536 per node"))
    assert s is None and "not the global batch" in why


def test_review_recompute_cells_that_are_not_layer_level_sac():
    """Megatron's selective recompute of the layer norm, its --recompute-activations flag and
    its uniform method are not TorchTitan's every-k-th-layer SAC: no recompute_layers."""
    def rc(cell):
        s, why = validation.row_to_scenario(_row(recompute=cell))
        assert s is not None, (cell, why)
        return s.parallelism.recompute, s.parallelism.recompute_layers
    assert rc("selective layer norm") == ("selective", None)
    assert rc("selective layer-norm recompute") == ("selective", None)
    assert rc("--recompute-activations (every 2nd layer)") == ("selective", None)
    # uniform: the 12 layers of a stage in groups of 4, every layer recomputed
    assert rc("full (uniform method, every 4 layers)") == ("full", None)
    # TorchTitan's layer SAC still: every 2nd of the 12 layers per stage (96 layers / pp 8)
    assert rc("selective layer") == ("full", 6)


def test_review_degree_lists_with_expert_or_context_labels():
    """The x inside "expert" / "context" is no separator of a degree list: "8/1 (TP/expert)" is
    TP 8, EP 1; a list whose length does not match its labels is refused, never a traceback."""
    s, why = validation.row_to_scenario(_row(tp="8/1 (TP/expert)"))
    assert s is not None, why
    assert (s.parallelism.tp, s.parallelism.ep) == (8, 1)
    for cell in ("8/8/4 (TP/expert)", "8/2/4 (TP/context)"):
        s, why = validation.row_to_scenario(_row(tp=cell))
        assert s is None and "names several degrees" in why, (cell, why)


def test_review_a_per_gpu_batch_beside_a_fractional_accumulation_is_refused():
    """"2 per GPU" beside grad_accum 2.5: no whole number of accumulation steps, so neither the
    micro-batch reading (x 2.5) nor the step's reading holds: refused, not read as x 2."""
    s, why = validation.row_to_scenario(_row(tp=1, pp=1, gpu_count=64, global_batch_seqs="2 per GPU",
                                             micro_batch=2, grad_accum="2.5"))
    assert s is None and "grad_accum" in why, why


def _calib(run_id: str, **cells) -> dict:
    """The calibration row ``run_id`` as pandas reads it, with ``cells`` pasted over it."""
    df = pd.read_csv(validation.DEFAULT_CSV)
    return {**df.loc[df["run_id"].eq(run_id)].iloc[0].to_dict(), **cells}


#: NeMo 24.07 Llama 2 70B on 64 H100: TP 4, PP 4, DP 4, VPP 20, 80 layers, micro-batch 1, GBS 128.
_NEMO70 = "nemo_24.07_DGX-H100_LLAMA2-70B_64_FP8"
#: NeMo 24.07 GPT-3 175B on 128 H100: TP 4, PP 8, 96 layers.
_NEMO175 = "nemo_24.07_DGX-H100_GPT3-175B_128_FP8"
#: MosaicML MPT 3B on 8 A100: FSDP FULL_SHARD, micro-batch 1, grad_accum 2, GBS 16.
_MPT3B = "mpt_a100_80gb_amp_bf16_3b_seq65536_8gpu_mbs1"


@pytest.mark.parametrize("col, cell, want", [
    # Megatron-LM / NeMo arguments and YAML keys, TorchTitan TOML, DeepSpeed JSON, HF Trainer
    ("tp", "--tensor-model-parallel-size 4", ("parallelism.tp", 4)),
    ("tp", "tensor_model_parallel_size: 4", ("parallelism.tp", 4)),
    ("tp", "tensor_parallel_degree = 4", ("parallelism.tp", 4)),
    ("pp", "--pipeline-model-parallel-size 4", ("parallelism.pp", 4)),
    ("pp", "pipeline_parallel_degree = 4", ("parallelism.pp", 4)),
    ("vpp", "virtual_pipeline_model_parallel_size: 5", ("parallelism.vpp", 5)),
    ("vpp", "--virtual-pipeline-model-parallel-size 5", ("parallelism.vpp", 5)),
    ("micro_batch", "--micro-batch-size 2", ("training.micro_batch_size", 2)),
    ("micro_batch", '"train_micro_batch_size_per_gpu": 2', ("training.micro_batch_size", 2)),
    ("micro_batch", "per_device_train_batch_size=2", ("training.micro_batch_size", 2)),
    ("micro_batch", "local_batch_size = 2", None),  # TorchTitan's per-rank batch is split when pp > 1
    ("global_batch_seqs", "--global-batch-size 256", ("training.global_batch_size", 256)),
    ("global_batch_seqs", '"train_batch_size": 256', ("training.global_batch_size", 256)),
    ("cp", "--context-parallel-size 2", ("parallelism.cp", 2)),
    ("cp", "context_parallel_degree = 2", ("parallelism.cp", 2)),
])
def test_launch_config_cells_are_read_by_their_key(col, cell, want):
    """A cell pasted from a launch config gives the number of its key: it was refused as not a
    number ('--tensor-model-parallel-size 8'), whatever the framework."""
    s, why = validation.row_to_scenario(_calib(_NEMO70, **{col: cell}, **({"dp": None} if col == "cp" else {})))
    if want is None:
        assert s is None and "local_batch_size" in why, why
        return
    assert s is not None, (cell, why)
    obj = s
    for part in want[0].split("."):
        obj = getattr(obj, part)
    assert obj == want[1], (cell, obj)


def test_launch_config_cells_other_columns_and_layers_per_virtual_stage():
    """Megatron's --num-layers-per-virtual-pipeline-stage is a layer count, not the virtual
    stages (was read as vpp = 3): 96 layers / (pp 4 · 3) = 8 virtual stages; likewise in words.
    A key of another column fills that column (a micro-batch key in the batch cell is the
    micro-batch, not a global batch of 4); TorchTitan's data_parallel_shard_degree = -1 is FSDP
    over the remaining GPUs; DeepSpeed's gradient_accumulation_steps is read."""
    for cell in ("--pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 3",
                 "4 (3 layers per virtual stage)", "PP=4, layers per virtual stage 3"):
        s, why = validation.row_to_scenario(_calib(_NEMO175, pp=cell, vpp=None, dp=None))
        assert s is not None, (cell, why)
        assert (s.parallelism.pp, s.parallelism.vpp, s.parallelism.dp) == (4, 8, 8), cell
    s, why = validation.row_to_scenario(_calib(_MPT3B, global_batch_seqs='"train_micro_batch_size_per_gpu": 4',
                                               global_batch_tokens=None, micro_batch=None, grad_accum=None))
    assert s is not None and s.training.micro_batch_size == 4, why
    assert not validation.batch_published(_calib(_MPT3B, global_batch_seqs="per_device_train_batch_size=4",
                                                 global_batch_tokens=None, micro_batch=None, grad_accum=None))
    s, why = validation.row_to_scenario(_calib(_MPT3B, dp="data_parallel_shard_degree = -1", zero_stage=None,
                                               source="TorchTitan (pytorch/torchtitan, 2025)"))
    assert s is not None and (s.parallelism.dp, s.parallelism.zero_stage) == (8, 3), why
    s, why = validation.row_to_scenario(_calib(_MPT3B, grad_accum='"gradient_accumulation_steps": 8',
                                               global_batch_seqs=None, global_batch_tokens=None))
    assert s is not None and s.training.global_batch_size == 1 * 8 * 8, why  # micro 1 x accumulation 8 x dp 8
    s, why = validation.row_to_scenario(_calib(_NEMO70, tp="--tensor-model-parallel-size 4 --sequence-parallel",
                                               sp=None, source="Megatron-LM 2021"))
    assert s is not None and s.parallelism.sequence_parallel, why


def test_launch_config_recompute_zero_and_precision():
    """Megatron's block method with N layers is recompute_layers N (was every layer); the uniform
    method recomputes every layer; a config's none / null recompute is none (TorchTitan's mode =
    'none' was full); DeepSpeed's zero_optimization stage and NeMo's distributed_fused_adam are
    read; a precision a config turns off is not the precision (bf16 enabled: false was bf16)."""
    def rc(cell, **kw):
        s, why = validation.row_to_scenario(_calib(_NEMO70, recompute=cell, **kw))
        assert s is not None, (cell, why)
        return s.parallelism.recompute, s.parallelism.recompute_layers
    block = "--recompute-granularity full --recompute-method block --recompute-num-layers 4"
    assert rc(block, vpp=1) == ("full", 4)  # 20 layers per stage, the first 4 recomputed
    assert rc(block) == ("full", None)  # vpp 20: one layer per chunk, 4 >= it: every layer
    assert rc("activations_checkpoint_granularity: full, activations_checkpoint_method: block, "
              "activations_checkpoint_num_layers: 2", vpp=1) == ("full", 2)
    assert rc("--recompute-granularity full --recompute-method uniform --recompute-num-layers 1", vpp=1) == ("full", None)
    assert rc("--recompute-activations") == ("selective", None)
    assert rc("activations_checkpoint_granularity: selective") == ("selective", None)
    for cell in ("[activation_checkpoint] mode = 'none'", "activations_checkpoint_granularity: null"):
        assert rc(cell) == ("none", None), cell
    assert rc("[activation_checkpoint] mode = 'selective', selective_ac_option = 'op'") == ("op_sac", None)

    def zero(cell):
        s, why = validation.row_to_scenario(_calib(_MPT3B, zero_stage=cell))
        assert s is not None, (cell, why)
        return s.parallelism.zero_stage
    assert [zero(f'"zero_optimization": {{"stage": {k}}}') for k in (0, 1, 2, 3)] == [0, 1, 2, 3]
    assert zero("optim: name: distributed_fused_adam") == 1
    assert zero("--use-distributed-optimizer") == 1 and zero("--fsdp full_shard auto_wrap") == 3

    def prec(cell):
        s, why = validation.row_to_scenario(_calib(_MPT3B, precision=cell))
        return s.training.precision if s is not None else why
    assert prec('"bf16": {"enabled": false}, "fp16": {"enabled": true}') == "fp16"
    assert prec('"fp16": {"enabled": false}, "bf16": {"enabled": true}') == "bf16"
    assert "negated" in prec('"bf16": {"enabled": false}') and "negated" in prec("bf16=False")
    assert prec("bf16=True") == "bf16"
    s, why = validation.row_to_scenario(_calib(_NEMO70, precision="enable_float8_linear = true"))
    assert s is not None and s.training.precision == "fp8", why
    s, why = validation.row_to_scenario(_calib(_NEMO70, precision="enable_float8_linear = false"))
    assert s is None or s.training.precision != "fp8", why


def test_torchtitan_compile_section_states_compile():
    """TorchTitan's [compile] enable = true (its TOML since 2025) states torch.compile on, as
    compile = true does: fused elementwise kernels, not eager."""
    src = "TorchTitan (pytorch/torchtitan, 2025)"
    for notes, want in (("compile = true", "fused"), ("[compile] enable = true", "fused"),
                        ("[compile] enable = false", "eager")):
        s, why = validation.row_to_scenario(_calib(_MPT3B, source=src, notes=notes))
        assert s is not None and s.training.elementwise == want, (notes, why)


def test_validate_flags_runs_that_do_not_fit_as_read(result):
    """Every calibration run fits in memory as read (a published run ran); an out-of-sample row
    whose unpublished settings take the default rules can exceed HBM, and is flagged, not
    dropped: Llama 3 70B on 64 GB200 with FSDP, micro-batch 2 x 8,192 tokens, h 8,192, 80
    layers and no recompute (the row states none): Korthikanti et al.'s 34·s·b·h bytes of
    activations per layer (no TP) alone are 34 x 16,384 x 8,192 x 80 B = 340 GiB, beside 185
    GiB of HBM (the real recipe must recompute or offload; the row does not say which)."""
    rows, _ = result
    ok = rows[rows["status"].eq("ok")]
    assert ok["fits"].all() and (ok["mem_gib"] > 0).all()
    oos, _ = validation.validate(validation.OUT_OF_SAMPLE_CSV)
    r = oos.set_index("run_id").loc["mbridge_25.11_gb200_llama370b_64gpu_fp8cs"]
    assert r["status"] == "ok" and not r["fits"]
    assert r["mem_gib"] > 185.0  # GB200's usable HBM (hardware/accelerators.json: 185 GiB)


def test_validate_names_the_settings_the_default_rules_filled(result):
    """Each compared row says which of its settings the CSV leaves empty and what the default
    rules (docs/timing.md) made of them: Narayanan's 1.7B row states neither micro-batch nor
    ZeRO stage (-> 1 and 0, the pre-2023 Megatron rule; pp = 1 and tp = 1, so no vpp / SP);
    Korthikanti's rows state all but the ZeRO stage; Megatron-Core's weak-scaling rows leave
    micro-batch, recompute, vpp, ZeRO and SP empty (-> 1, none, 1, 1 and on with TP; the 7.1B
    row has pp = 1, so no vpp, the 70B row pp = 2). None of these rows' text names an attention
    kernel, so the source-year rule gives flash attention: off for the 2021-22 papers, on after."""
    rows, _ = result
    d = rows.set_index("run_id")["defaults"]
    assert d["narayanan21_t1_1.7B"] == "micro-batch 1; ZeRO 0; flash attention off (source year)"
    # an interconnect cell that states no rate ("Selene DGX A100 (NVLink/NVSwitch + HDR IB)", "DGX H100
    # (NVLink4/NVSwitch)") leaves the system's network, and says so (review 15h)
    net = "; network {} Gb/s per GPU (the system's; no rate read from the interconnect cell)"
    assert d["korthikanti22_22B_fullrecompute"] == "ZeRO 0; flash attention off (source year)" + net.format(200)
    assert d["mcore080_h100_weak_7.1B"] == ("micro-batch 1; recompute none; ZeRO 1; SP on; "
                                            "flash attention on (source year)" + net.format(400))
    assert d["mcore080_h100_weak_70B"] == ("micro-batch 1; recompute none; vpp 1; ZeRO 1; SP on; "
                                           "flash attention on (source year)" + net.format(400))
    # a row whose text names its attention kernel is not listed for it (MosaicML: FlashAttention)
    assert "flash" not in d["mpt_a100_80gb_bf16_70b_seq2048_64gpu_mbs8"]
    assert list(rows.columns[-2:]) == ["defaults", "status"]


def test_defaults_say_when_a_tflops_figure_is_read_as_model_flops(tmp_path):
    """A TFLOP/s cell that names no recompute is compared with model FLOPs even on a run that
    recomputes (review: '117 TFLOPS/GPU' of GPT-NeoX-20B was compared with model FLOPs, '117
    (hardware FLOPs incl. recompute)' with hardware FLOPs, and the output showed neither): the
    defaults column says so; with the hardware wording it does not, and the two predictions
    differ by the recompute's share (hardware / model FLOPs of the step)."""
    df = pd.read_csv(validation.OUT_OF_SAMPLE_CSV)
    r = df[df["run_id"] == "gptneox_20b_96xa100_40gb"]
    a, b = r.copy(), r.copy()
    a["tflops_per_gpu"], a["run_id"] = "117", "bare"
    b["tflops_per_gpu"], b["run_id"] = "117 (hardware FLOPs incl. recompute)", "hw"
    path = tmp_path / "neox.csv"
    pd.concat([a, b]).to_csv(path, index=False)
    rows, _ = validation.validate(path)
    rows = rows.set_index("run_id")
    assert "TFLOP/s as model FLOPs (the cell names no recompute)" in rows.loc["bare", "defaults"]
    assert "TFLOP/s as model" not in rows.loc["hw", "defaults"]
    bt = validation.calibration_batch(path)[0]
    ratio = float(bt["hardware_flop_per_step"][0] / bt["model_flop_per_step"][0])  # > 1: recompute
    assert ratio > 1.2
    assert rows.loc["hw", "predicted"] == pytest.approx(rows.loc["bare", "predicted"] * ratio, rel=1e-9)


def test_defaults_list_only_what_no_cell_states(tmp_path):
    """The defaults column comes from the parser itself (what the default rules filled), so a
    value stated in another cell, or a 'none' cell, is not listed (review: 'none' cells, an FSDP
    dp cell and 'TP=8, SP' were listed as defaults; a vpp the rule filled beside a labelled pp
    cell was not). Rows varied from Megatron-Core's weak-scaling 70B row (tp 8, pp 2, dp 48;
    micro-batch, recompute, vpp, ZeRO and SP empty)."""
    cal = pd.read_csv(validation.DEFAULT_CSV)
    base = cal[cal["run_id"] == "mcore080_h100_weak_70B"]
    variants = {
        "as_is": {},
        "none_cells": dict(recompute="none", zero_stage="none", sp="none"),
        "fsdp_dp": dict(dp="FSDP 48", zero_stage=None),
        "tp_sp": dict(tp="TP=8, SP"),
        "pp_label": dict(pp="PP=2"),
        "pp_interleaved": dict(pp="2 (interleaved)"),
        "pp_vpp": dict(pp="2 (interleaved, VPP 6)"),
        "ga": dict(grad_accum="4"),  # 384 = mbs · 4 · 48 -> mbs 2
        "hw_vs_model": dict(tflops_per_gpu="500 hardware (vs 419.7 model)"),
    }
    rows = []
    for name, kw in variants.items():
        r = base.copy()
        r["run_id"] = name
        for k, v in kw.items():
            r[k] = v
        rows.append(r)
    path = tmp_path / "variants.csv"
    pd.concat(rows).to_csv(path, index=False)
    out, _ = validation.validate(path)
    d = out.set_index("run_id")["defaults"]
    net = "; network 400 Gb/s per GPU (the system's; no rate read from the interconnect cell)"
    assert d["as_is"] == ("micro-batch 1; recompute none; vpp 1; ZeRO 1; SP on; "
                          "flash attention on (source year)" + net)
    assert d["none_cells"] == "micro-batch 1; vpp 1; flash attention on (source year)" + net
    assert "ZeRO" not in d["fsdp_dp"] and "SP" not in d["tp_sp"]
    assert "vpp 1" in d["pp_label"]
    assert "vpp 42 (interleaved named, default depth)" in d["pp_interleaved"]  # max(2, 84 // (2·1))
    assert "vpp" not in d["pp_vpp"]
    assert d["ga"].startswith("micro-batch 2 (global batch / (dp · grad_accum))")
    # a hardware TFLOP/s figure beside a comparison is not compared; the row's MFU is
    hw = out.set_index("run_id").loc["hw_vs_model"]
    assert hw["metric"] == "mfu" and hw["status"] == "ok" and hw["published"] == pytest.approx(0.42)


# ---- found by a review of `planner validate` (2026-11-30) ----

def _one_row_csv(tmp_path, **cells):
    import pandas as pd
    from planner import validation
    cal = pd.read_csv(validation.DEFAULT_CSV)
    row = cal[cal["run_id"] == "nemo_24.07_DGX-H100_LLAMA3-70B_64_FP8"].copy()
    for k, v in cells.items():
        row[k] = v
    path = tmp_path / "one.csv"
    row.to_csv(path, index=False)
    return path


@pytest.mark.parametrize(("col", "cell"), [("tokens_per_s_per_gpu", "738 TFLOP/s"), ("tokens_per_s_per_gpu", "37% MFU"),
                                           ("tokens_per_s_per_gpu", "1500/1600"), ("tokens_per_s_per_gpu", "1500 or 1600"),
                                           ("tflops_per_gpu", "74%")])
def test_a_metric_cell_with_another_columns_unit_or_two_values_is_not_read(col, cell):
    """'74%' was read as 74 TFLOP/s, '738 TFLOP/s' as 738 tokens/s (+107 %), '1500/1600' as 1500:
    a unit that belongs to another column, or an alternative, says the cell is not this column's
    one value."""
    from planner.validation import parse_metric
    assert math.isnan(parse_metric(col, cell))
    assert parse_metric("tokens_per_s_per_gpu", "1533 tok/s") == 1533.0
    assert parse_metric("tflops_per_gpu", "160 TFLOP/s") == 160.0


def test_an_implausibly_small_figure_and_a_duplicate_run_are_not_compared(tmp_path):
    """1e-300 tokens/s was compared (error 1.5e303 in the summary); a run_id given twice was
    counted twice. 1e-300 tokens/s of a 70B model is far below 0.1 % of an H100's peak."""
    import pandas as pd
    from planner import validation
    cal = pd.read_csv(validation.DEFAULT_CSV)
    bad = cal[cal["run_id"] == "nemo_24.07_DGX-H100_LLAMA3-70B_64_FP8"].copy()
    bad["run_id"], bad["tokens_per_s_per_gpu"] = "tiny", "1e-300"
    ok = cal[cal["run_id"] == "nemo_24.07_DGX-H100_LLAMA3-8B_8_FP8"]
    path = tmp_path / "tiny.csv"
    pd.concat([bad, ok]).to_csv(path, index=False)
    rows, _ = validation.validate(path)
    st = rows.set_index("run_id").loc["tiny", "status"]
    assert st.startswith("not compared") and "below 0.1 %" in st
    two = cal[cal["run_id"] == "nemo_24.07_DGX-H100_LLAMA3-70B_64_FP8"]
    path = tmp_path / "dup.csv"
    pd.concat([two, two]).to_csv(path, index=False)
    rows, summary = validation.validate(path)
    assert int(summary.loc[summary["group"] == "overall", "n"].iloc[0]) == 1
    assert any("duplicate run_id" in str(x) for x in rows["status"])


def test_architecture_fills_are_named_in_defaults(tmp_path):
    """An empty vocab (51,200) or kv_heads (= heads) moved a row by 4.8 / 7.8 % with the same
    defaults text as the complete row's."""
    from planner import validation
    rows, _ = validation.validate(_one_row_csv(tmp_path, vocab=None, kv_heads=None))
    d = rows["defaults"].iloc[0]
    assert "vocab 51,200 (default)" in d and "kv_heads 64 (= heads" in d
