"""Review 15b: the hardware catalogue (hardware/accelerators.json, systems.json, storage.json,
failure_profiles.json) audited against vendor datasheets and ../shared/reference/hardware.csv /
hardware.md.

Expected values are datasheet figures (cited at each test) or the reference CSV's columns, never
the planner's own output. Conventions (hardware.md §0): dense peaks (NVIDIA datasheets print 2:4
sparse FLOP/s, halved here), HBM vendor "GB" = GiB, bandwidths in bytes/s ONE direction (NVIDIA's
"900 GB/s" NVLink is both directions added), NIC Gb/s / 8 = bytes/s.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from planner import batch as B
from planner import catalog
from planner.schema import validate_scenario

ROOT = Path(__file__).resolve().parent.parent
REF = ROOT.parent / "shared" / "reference"
GIB = 2**30
MIB = 2**20
TF = 1e12


def _raw(name: str) -> dict:
    d = json.loads((ROOT / "hardware" / f"{name}.json").read_text())
    return {k: v for k, v in d.items() if not k.startswith("_")}


def _csv_rows() -> dict[str, dict]:
    with open(REF / "hardware.csv", newline="") as f:
        return {r["device_id"]: r for r in csv.DictReader(f)}


def _f(x: str) -> float | None:
    try:
        return float(x)
    except ValueError:
        return None


# catalogue id -> hardware.csv device_id
CSV_ID = {
    "v100-sxm-32gb": "v100_sxm2_32gb", "a100-sxm-40gb": "a100_sxm_40gb", "a100-sxm-80gb": "a100_sxm_80gb",
    "h100-sxm-80gb": "h100_sxm_80gb", "h100-pcie-80gb": "h100_pcie_80gb", "h800-sxm-80gb": "h800_sxm_80gb",
    "h200-sxm-141gb": "h200_sxm_141gb", "b200": "b200_sxm", "b300": "b300_sxm",
    "gh200-96gb": "gh200_96gb_hbm3", "gh200-144gb": "gh200_144gb_hbm3e", "gb200": "gb200_nvl72",
    "gb300": "gb300_nvl72", "mi250x": "mi250x", "mi300x": "mi300x", "mi325x": "mi325x", "mi355x": "mi355x",
    "gaudi2": "gaudi2", "gaudi3": "gaudi3",
}


# ---------------------------------------------------------------------------------------
# Defects found by this review (each failed before its fix)


def test_b300_host_link_is_the_host_cpus_pcie_gen5():
    """DGX B300's host CPUs are two Xeon 6 6776P with 88 PCIe **5.0** lanes each (heise online,
    heise.de/-10395118, 2025). The B300's PCIe Gen6 x16 (hardware.csv: 'PCIe Gen6 x16 (GPU-CX8)')
    ends at the on-board ConnectX-8; host DRAM (optimizer offload, host-memory checkpoints) is
    reached through the CPU's Gen5 x16 root port: 32 GT/s x 16 lanes x 128/130 / 8 = 63.0e9 B/s
    per direction, not Gen6's 121e9 (was: pcie6, 121e9)."""
    gen5_x16 = 32e9 * 16 * 128 / 130 / 8
    assert gen5_x16 == pytest.approx(63.0e9, rel=2e-3)
    acc = catalog.accelerators()["b300"]
    assert acc.host_link == "pcie5"
    assert acc.host_link_bw_bytes_per_s == pytest.approx(gen5_x16, rel=2e-3)
    # the engine row of a DGX B300 scenario carries it
    d = {"model": "llama3-8b", "cluster": {"system": "dgx-b300", "n_gpus": 8},
         "parallelism": {"tp": 1, "pp": 1}, "training": {"global_batch_size": 8}}
    row = B.scenario_row(validate_scenario(d))
    assert row["host_link_bw_bytes_per_s"] == pytest.approx(63e9)
    assert row["host_link_c2c"] is False


@pytest.mark.parametrize("acc_id", ["gb200", "gb300"])
def test_grace_blackwell_c2c_is_shared_by_the_two_gpus(acc_id):
    """GB200 / GB300: NVLink-C2C is 900 GB/s bidirectional per Grace CPU, 'shared by its 2 GPUs'
    (hardware.md §3a; NVIDIA: 900 GB/s between the Grace CPU and the Blackwell GPUs). The field is
    per GPU, one direction, and the engine applies it to every GPU at once (offload, checkpoint
    copies), so 900 / 2 directions / 2 GPUs = 225e9 (was 450e9, one GPU alone on the link).
    GH200 has the whole link for its one GPU: 450e9."""
    assert catalog.accelerators()[acc_id].host_link_bw_bytes_per_s == pytest.approx(900e9 / 2 / 2)
    assert catalog.accelerators()["gh200-96gb"].host_link_bw_bytes_per_s == pytest.approx(900e9 / 2)


def test_mi300x_usable_hbm_is_the_rocm_smi_total():
    """rocm-smi on an MI300X: 'VRAM Total Memory (B): 205822885888' (= hipDeviceProp
    totalGlobalMem; captures in public repositories), 191.69 GiB of the 192 GiB physical. The
    catalogue said usable = physical (was 206158430208)."""
    acc = catalog.accelerators()["mi300x"]
    assert acc.hbm_usable_bytes == 205_822_885_888
    assert acc.hbm_bytes == 192 * GIB
    assert "hbm_usable_bytes" not in acc.uncertain


def test_gh200_uses_its_measured_mamf():
    """hardware.md §6a (stas-accel MAMF table): GH200 828.6 TFLOP/s BF16 (83.8 % of 989), FP8
    1,535. Every other part with its own row there either carries it (GB200, B300, H200 FP8,
    MI300X) or is its family's reference (H100, B200, A100, MI325X, MI355X, Gaudi); GH200 fell back
    to the H100-derived Hopper fractions (0.803 / 0.709: 794.5 / 1,402.6 TF)."""
    acc = catalog.accelerators()["gh200-96gb"]
    assert acc.mamf_flop_per_s == {"bf16": 828.6 * TF, "fp8": 1535 * TF}
    d = {"model": "llama3-8b", "cluster": {"system": "gh200-quad", "n_gpus": 4},
         "parallelism": {"tp": 1, "pp": 1}, "training": {"global_batch_size": 4}}
    row = B.scenario_row(validate_scenario(d))
    assert row["mamf_frac_16bit"] == pytest.approx(828.6 / 989.4)


# ---------------------------------------------------------------------------------------
# Datasheet pins (dense = datasheet sparse / 2; bandwidth one direction)


@pytest.mark.parametrize(("acc_id", "prec", "sparse_tflops", "per"), [
    # NVIDIA H100 datasheet (SXM5): BF16 1,979 / FP8 3,958 / TF32 989 TFLOPS "with sparsity"
    ("h100-sxm-80gb", "bf16", 1979, 1), ("h100-sxm-80gb", "fp8", 3958, 1), ("h100-sxm-80gb", "tf32", 989, 1),
    # H100 PCIe product brief: BF16 1,513 / FP8 3,026 sparse
    ("h100-pcie-80gb", "bf16", 1513, 1), ("h100-pcie-80gb", "fp8", 3026, 1),
    # A100 datasheet: BF16 624 / TF32 312 sparse
    ("a100-sxm-80gb", "bf16", 624, 1), ("a100-sxm-40gb", "tf32", 312, 1),
    # HGX B200 (8 GPUs): TF32 18 / BF16 36 / FP8 72 / FP4 144 PFLOPS sparse
    ("b200", "tf32", 18000, 8), ("b200", "bf16", 36000, 8), ("b200", "fp8", 72000, 8), ("b200", "fp4", 144000, 8),
    # GB200 NVL72 (72 GPUs): TF32 180 / BF16 360 / FP8 720 / FP4 1,440 PFLOPS sparse
    ("gb200", "tf32", 180000, 72), ("gb200", "bf16", 360000, 72), ("gb200", "fp8", 720000, 72),
    ("gb200", "fp4", 1440000, 72),
    # AMD MI300X / MI355X: FP16 2,614.9 / 5,033.2 sparse; FP8 5,229.8 / 10,066 sparse
    ("mi300x", "bf16", 2614.9, 1), ("mi300x", "fp8", 5229.8, 1), ("mi355x", "bf16", 5033.2, 1),
])
def test_dense_peak_is_half_the_sparse_datasheet_figure(acc_id, prec, sparse_tflops, per):
    peak = catalog.accelerators()[acc_id].peak_flop_per_s[prec]
    assert peak == pytest.approx(sparse_tflops * TF / 2 / per, rel=1.5e-3)


@pytest.mark.parametrize(("acc_id", "dense_pflops", "per"), [
    # Blackwell Ultra FP4 is quoted dense (0.75 x sparse, hardware.md §0): HGX B300 108 PF / 8,
    # GB300 NVL72 1,080 PF / 72
    ("b300", 108, 8), ("gb300", 1080, 72),
])
def test_blackwell_ultra_fp4_is_the_quoted_dense_figure(acc_id, dense_pflops, per):
    assert catalog.accelerators()[acc_id].peak_flop_per_s["fp4"] == pytest.approx(dense_pflops * 1e15 / per)


@pytest.mark.parametrize(("acc_id", "bidir_gbps"), [
    # NVLink 2 / 3 / 4 / 5 per GPU, both directions added: V100 300, A100 600, H100/H200 900,
    # B200/B300/GB200/GB300 1,800 GB/s; H800 / A800 export caps 400 GB/s; MI300X 7 x 128 GB/s
    # Infinity Fabric = 896; Gaudi 3 21 x 200 GbE = 1,050 GB/s
    ("v100-sxm-32gb", 300), ("a100-sxm-80gb", 600), ("a800-sxm-80gb", 400), ("h100-sxm-80gb", 900),
    ("h800-sxm-80gb", 400), ("h200-sxm-141gb", 900), ("b200", 1800), ("b300", 1800), ("gb200", 1800),
    ("gb300", 1800), ("mi300x", 896), ("gaudi3", 21 * 200 / 8 * 2),
])
def test_scaleup_is_one_direction_of_the_bidirectional_datasheet_figure(acc_id, bidir_gbps):
    assert catalog.accelerators()[acc_id].scaleup_bw_bytes_per_s == pytest.approx(bidir_gbps * 1e9 / 2)


@pytest.mark.parametrize(("acc_id", "hbm_gib", "usable_mib"), [
    # vendor "GB" = GiB of stacks (hardware.md §0); usable = nvidia-smi totals (nvsmi captures)
    ("h100-sxm-80gb", 80, 81_559), ("h800-sxm-80gb", 80, 81_559), ("h200-sxm-141gb", 144, 143_771),
    ("b200", 192, 183_359), ("gb200", 192, 189_471), ("a100-sxm-80gb", 80, 81_920),
    # A100-SXM4-40GB: nvidia-smi '0MiB / 40960MiB' (public captures)
    ("a100-sxm-40gb", 40, 40_960),
])
def test_hbm_capacity_is_binary_and_usable_is_the_nvidia_smi_total(acc_id, hbm_gib, usable_mib):
    acc = catalog.accelerators()[acc_id]
    assert acc.hbm_bytes == hbm_gib * GIB
    assert acc.hbm_usable_bytes == usable_mib * MIB


@pytest.mark.parametrize(("sys_id", "nics", "gbps_each"), [
    # per node: DGX-1 4x EDR 100G, DGX-2 8x 100G, DGX A100 8x HDR 200G, DGX H100/H200 and DGX B200
    # 8x NDR 400G, DGX B300 8x ConnectX-8 800G, GB200 tray 4x 400G, GB300 tray 4x 800G,
    # Frontier 4x Slingshot-11 200G, GH200 quad 4x 200G, Gaudi 2 8 cards x 3x 100 GbE,
    # Gaudi 3 8 cards x 3x 200 GbE (hardware.md §3)
    ("dgx1-v100", 4, 100), ("dgx2-v100", 8, 100), ("dgx-a100-80gb", 8, 200), ("dgx-h100", 8, 400),
    ("dgx-h200", 8, 400), ("dgx-b200", 8, 400), ("dgx-b300", 8, 800), ("gb200-nvl72", 4, 400),
    ("gb300-nvl72", 4, 800), ("frontier-mi250x", 4, 200), ("gh200-quad", 4, 200),
    ("gaudi2-8", 24, 100), ("gaudi3-8", 24, 200),
])
def test_nic_bandwidth_per_gpu_is_node_line_rate_in_bytes(sys_id, nics, gbps_each):
    s = catalog.systems()[sys_id]
    assert s.nic_bw_per_gpu_bytes_per_s * s.gpus_per_node == pytest.approx(nics * gbps_each * 1e9 / 8)


@pytest.mark.parametrize(("sys_id", "domain", "gpn"), [
    ("dgx-h100", 8, 8), ("dgx-b200", 8, 8), ("dgx-b300", 8, 8), ("gb200-nvl72", 72, 4),
    ("gb300-nvl72", 72, 4), ("dgx2-v100", 16, 16), ("gh200-quad", 4, 4), ("frontier-mi250x", 8, 8),
])
def test_nvlink_domain_sizes(sys_id, domain, gpn):
    """NVL72: 18 compute trays x 4 GPUs in one 72-GPU NVLink domain; DGX: 8; DGX-2: 16 over 12
    NVSwitch; GH200 quad node: 4; Frontier: 8 GCDs (hardware.md §2, §3)."""
    s = catalog.systems()[sys_id]
    assert (s.nvlink_domain_size, s.gpus_per_node) == (domain, gpn)


# ---------------------------------------------------------------------------------------
# The catalogue against the reference CSV, column by column


@pytest.mark.parametrize("acc_id", sorted(CSV_ID))
def test_accelerator_matches_reference_csv(acc_id):
    """Dense peaks, HBM bandwidth, one-direction scale-up, domain size and TDP equal
    hardware.csv's columns; the price is the midpoint of its cloud range where it has one.
    Documented departures: MI250X fp32 is the 95.7 TF matrix rate (CSV: 47.9 vector; the
    catalogue's 'fp32' is the best FP32 GEMM rate, _about)."""
    acc = catalog.accelerators()[acc_id]
    r = _csv_rows()[CSV_ID[acc_id]]
    cols = {"fp32": "fp32_tflops", "tf32": "tf32_tflops_dense", "bf16": "bf16_tflops_dense",
            "fp16": "fp16_tflops_dense", "fp8": "fp8_tflops_dense", "fp4": "fp4_tflops_dense"}
    for prec, col in cols.items():
        want = _f(r[col])
        if acc_id == "mi250x" and prec == "fp32":
            want = 95.7
        got = acc.peak_flop_per_s.get(prec)
        assert (got is None) == (want is None), (prec, got, want)
        if want is not None:
            assert got == pytest.approx(want * TF, rel=1e-6), prec
    assert acc.hbm_bw_bytes_per_s == pytest.approx(_f(r["hbm_bw_TBps"]) * 1e12)
    assert acc.scaleup_bw_bytes_per_s == pytest.approx(_f(r["scaleup_bw_per_accel_uni_GBps"]) * 1e9)
    assert acc.scaleup_domain_size == int(_f(r["scaleup_domain_size_accels"]))
    assert acc.tdp_w == pytest.approx(_f(r["tdp_W"]))
    lo, hi = _f(r["cloud_usd_per_accel_hr_low"]), _f(r["cloud_usd_per_accel_hr_high"])
    if lo is not None and hi is not None:
        # the CSV rounds to cents (V100: $31.21/h / 8 = $3.90125, CSV 3.9)
        assert acc.price_per_gpu_hour_usd == pytest.approx((lo + hi) / 2, abs=0.005)
    assert acc.price_date.strip()
    usable = _f(r["hbm_usable_GiB"])
    if usable is not None:
        assert acc.hbm_usable_bytes / GIB == pytest.approx(usable, abs=0.05)


def test_mamf_matches_the_reference_table():
    """Every part-specific mamf_flop_per_s that is a measurement equals hardware.md §6a's table
    (MI300X: the current 668.4 run)."""
    rows = _csv_rows()
    for acc_id in ("gb200", "b300", "h200-sxm-141gb", "gh200-96gb", "mi300x"):
        acc = catalog.accelerators()[acc_id]
        r = rows[CSV_ID[acc_id]]
        for prec, col in (("bf16", "mamf_bf16_tflops"), ("fp8", "mamf_fp8_tflops")):
            want = _f(r[col])
            if want is not None:
                assert acc.mamf_flop_per_s[prec] == pytest.approx(want * TF), (acc_id, prec)


# ---------------------------------------------------------------------------------------
# Sources, units, and the loader / CLI reading what the files say


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _numeric_fields(entry: dict) -> list[str]:
    return [k for k, v in entry.items()
            if _is_number(v) or (isinstance(v, dict) and v and all(_is_number(x) for x in v.values()))]


def _section8_keys() -> set[str]:
    md = (REF / "hardware.md").read_text()
    sec = md.split("## 8. Sources")[1].split("## 9.")[0]
    keys = set()
    for k in re.findall(r"^\| ([a-z0-9][a-z0-9\-/ ]*?) \|", sec, re.M):
        keys.update(p.strip() for p in k.split(" / "))
    return keys


def _fact_ids() -> set[str]:
    with open(ROOT.parent / "shared" / "validation" / "reliability_facts.csv", newline="") as f:
        return {r["fact_id"] for r in csv.DictReader(f)}


# a source that names no §8 key or fact_id must say where the number comes from in words
_CITATION = re.compile(r"https?://|\.(com|net|de|org)/|arXiv|derived|assumed|assumption|DESIGN\.md|"
                       r"torchtitan|TorchTitan|Intel|rocm-smi|null:", re.I)


def _cites(text: str, keys: set[str]) -> bool:
    toks = set(re.findall(r"[a-z0-9][a-z0-9_\-]*", text))
    return bool(toks & keys) or bool(_CITATION.search(text))


@pytest.mark.parametrize("name", ["accelerators", "systems", "storage"])
def test_every_catalogue_number_has_a_source(name):
    """Every number in every entry (a scalar, or a table of numbers such as peak_flop_per_s) has
    a non-empty entry in 'sources' that cites a hardware.md §8 key, a reliability_facts.csv
    fact_id, or names its origin (URL, paper, 'derived: ...', 'assumed ...'); the pydantic
    default {'*': 'user input'} is not allowed in a catalogue file. 'uncertain' names only fields
    of the entry."""
    keys = _section8_keys() | _fact_ids()
    missing = []
    for k, e in _raw(name).items():
        src = e.get("sources", {})
        assert "*" not in src, f"{name}.json {k}: wildcard source"
        for field in _numeric_fields(e):
            text = str(src.get(field, "")).strip()
            if not text or not _cites(text, keys):
                missing.append(f"{k}.{field}: {text!r}")
        for u in e.get("uncertain", []):
            assert u in e, f"{name}.json {k}: uncertain names '{u}', not a field"
    assert not missing, missing


def test_every_failure_rate_has_a_source():
    keys = _fact_ids() | _section8_keys()
    for k, p in _raw("failure_profiles").items():
        assert p["source"].strip() and p["reference"].strip(), k
        for c in p["classes"]:
            assert c["source"].strip(), (k, c["class"])
            assert _cites(c["source"], keys) or "assumption" in c["source"], (k, c["class"], c["source"])


def test_the_source_check_catches_a_missing_source():
    """The check above is not vacuous: an entry that drops one source is caught."""
    keys = _section8_keys() | _fact_ids()
    e = json.loads(json.dumps(_raw("accelerators")["h100-sxm-80gb"]))
    del e["sources"]["tdp_w"]
    assert "tdp_w" in _numeric_fields(e)
    assert not _cites(str(e["sources"].get("tdp_w", "")), keys)


# every numeric field name carries its unit, or is a count / dimensionless by name
_UNIT_SUFFIX = ("_bytes", "_bytes_per_s", "_flop_per_s", "_w", "_usd", "_s")
_COUNTS = {"scaleup_domain_size", "gpus_per_node", "nvlink_domain_size", "attention_dhead_knee"}


@pytest.mark.parametrize("name", ["accelerators", "systems", "storage"])
def test_numeric_field_names_carry_their_unit(name):
    for k, e in _raw(name).items():
        for field in _numeric_fields(e):
            assert field in _COUNTS or field.endswith(_UNIT_SUFFIX), f"{name}.json {k}.{field}"


@pytest.mark.parametrize(("name", "loader"), [
    ("accelerators", catalog.accelerators), ("systems", catalog.systems), ("storage", catalog.storage_tiers),
])
def test_loader_reads_what_the_file_says(name, loader):
    """No default, alias or coercion changes a catalogue number between the file and the model."""
    loaded = loader()
    for k, e in _raw(name).items():
        m = loaded[k]
        for field in _numeric_fields(e):
            got = getattr(m, field)
            want = e[field]
            if isinstance(want, dict):
                assert {p: float(v) for p, v in got.items()} == {p: float(v) for p, v in want.items()}, (k, field)
            else:
                assert float(got) == float(want), (k, field)
        for field in ("host_link", "accelerator", "kind", "scope", "in_network_reduction"):
            if field in e:
                assert getattr(m, field) == e[field], (k, field)


def test_cli_hardware_listing_shows_the_file_values():
    out = subprocess.run([sys.executable, "-m", "planner.cli", "presets", "hardware", "--format", "json"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    rows = [r for r in json.loads(out) if r.get("system")]
    acc, sysd = _raw("accelerators"), _raw("systems")
    assert {r["system"] for r in rows} == set(sysd)
    for r in rows:
        s = sysd[r["system"]]
        a = acc[s["accelerator"]]
        assert r["accelerator"] == s["accelerator"]
        assert r["gpus_per_node"] == s["gpus_per_node"] and r["nvlink_domain"] == s["nvlink_domain_size"]
        assert r["nic_GBps_per_gpu"] == pytest.approx(s["nic_bw_per_gpu_bytes_per_s"] / 1e9)
        peaks = a["peak_flop_per_s"]
        assert r["dense_16bit_TFLOPs"] == pytest.approx(peaks.get("bf16", peaks.get("fp16")) / 1e12)
        assert r["hbm_usable_GiB"] == pytest.approx(a["hbm_usable_bytes"] / GIB, abs=0.05)
        assert r["usd_per_gpu_h"] == pytest.approx(a["price_per_gpu_hour_usd"])
