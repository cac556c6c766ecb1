"""Validated inputs: the scenario (model + training + parallelism + cluster + checkpoint +
reliability) and the catalogue entries it refers to.

Every input to the engine passes through these pydantic models. The JSON layout and field
names follow DESIGN.md §3. Units are SI and carried in the field names (`_bytes`, `_s`,
`_flop_per_s`, `_bytes_per_s`, `_w`, `_usd`, `_per_h`).

Cross-field rules live in one after-validator per model; each message names the field path,
the value and what is allowed. :func:`format_errors` turns a ``ValidationError`` into the one
line per problem that the CLI and the UI show.
"""

from __future__ import annotations

import json
import math
import re
import types
import typing
from typing import Annotated, Any, ClassVar, Literal, Union

import numpy as np
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

#: Longest name a scenario, model, accelerator, system, storage tier or failure profile may have
#: (the catalogue's longest is 66 characters). Names are shown in the dashboard, the CLI and the
#: exports; control, bidirectional-override and zero-width characters are refused in them (found
#: by review: a name holding an ESC sequence cleared the terminal, a right-to-left override
#: reversed the page's text, a 10,000-character name filled the Compare page's header); newlines
#: and tabs fold to spaces. The pages and the CLI also render every name as plain text, one line.
NAME_MAX_CHARS = 200
#: Between the problems of one scenario-wide check (Scenario._cross_checks) in its ValueError:
#: format_errors gives each its own line.
CROSS_CHECK_SEP = "\n"
#: Characters that change how text is read without being seen: C0 / C1 controls (ESC sequences,
#: line breaks), the Arabic letter mark, zero-width characters and marks, line / paragraph
#: separators, bidirectional embeddings, overrides and isolates, word joiners and the BOM. One
#: set for the schema's names, the dashboard (app_pages/_common.py), the exports and the CLI.
INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def one_line(text: Any, limit: int | None = NAME_MAX_CHARS) -> str:
    """``text`` as one line: white space (line breaks, tabs) folded to single spaces, the other
    :data:`INVISIBLE` characters removed, cut at ``limit`` characters with "…" (None: no cut).
    What a name from a config.json becomes, and how the pages and exports show user text."""
    t = " ".join(INVISIBLE.sub("", " ".join(str(text).split())).split())
    return t if limit is None or len(t) <= limit else t[: max(limit - 1, 0)].rstrip() + "…"



def _check_name(v: str) -> str:
    # white space (newlines, tabs) folds to single spaces: a name is one line (a pasted name keeps
    # its words); the other invisible characters are refused
    v = " ".join(v.split()) if any(c.isspace() and c != " " for c in v) else v
    m = INVISIBLE.search(v)
    if m:
        raise ValueError(f"a name may not hold control, bidirectional-override or zero-width characters "
                         f"(U+{ord(m.group(0)):04X} at position {m.start() + 1})")
    return v


#: A display name: at most NAME_MAX_CHARS characters, no invisible or control characters.
Name = Annotated[str, StringConstraints(max_length=NAME_MAX_CHARS), AfterValidator(_check_name)]

#: Largest count any integer field takes (layers, GPUs, batch, replicas, ...).
COUNT_MAX = 10_000_000
PosInt = Annotated[int, Field(ge=1, le=COUNT_MAX)]
NonNegInt = Annotated[int, Field(ge=0, le=COUNT_MAX)]
PosFloat = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegFloat = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Fraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
#: Physical ranges of the hardware figures a scenario can state (inline accelerators, systems and
#: storage tiers, ``cluster.overrides``; share links take the same): a few orders of magnitude
#: around the catalogue's own values (hardware/*.json: 1.6e13–1.5e16 FLOP/s, HBM 34–309 GB at
#: 0.9–8 TB/s, NICs 6–100 GB/s per GPU, host links 16–450 GB/s, 250–1,400 W, 0.64–7.14 USD/h), so
#: a slip such as 1e-9 for 1e9 is refused with its range instead of giving inf / NaN results
#: downstream (found by review: a NIC of 1e-300 B/s crashed ``simulate``).
FLOP_RATE_RANGE = (1e11, 1e18)          # peak / MAMF FLOP/s per GPU (0.1 TFLOP/s to 1 EFLOP/s)
HBM_BYTES_RANGE = (0.1 * 2**30, 1e14)   # HBM per GPU (0.1 GiB to 100 TB)
HBM_BW_RANGE = (1e9, 1e15)              # HBM bandwidth per GPU [B/s]
LINK_BW_RANGE = (1e8, 1e15)             # NVLink / PCIe / NIC / host-memory bandwidths [B/s] (0.1 GB/s up)
HOST_MEM_BYTES_RANGE = (0.1 * 2**30, 1e16)  # host memory per node
NVME_BYTES_MAX = 1e16                   # local NVMe per node (0 = none)
NVME_BW_RANGE = (1e6, 1e13)             # local NVMe bandwidth per node [B/s] (0 = none)
STORAGE_BW_RANGE = (1e6, 1e16)          # checkpoint tier bandwidth, per node or aggregate [B/s]
POWER_W_RANGE = (1.0, 1e5)              # TDP / power limit per GPU [W]
NODE_POWER_W_RANGE = (1.0, 1e7)         # whole-node power [W]
PRICE_USD_RANGE = (0.01, 1e6)           # price per GPU-hour [USD]
#: Failure rates per GPU-, node- or job-hour (the catalogue's are 1e-6 to 1e-2) and the restart /
#: repair time of a class (minutes to days in the catalogue): one failure a second per unit, a year.
FAILURE_RATE_MAX = 3600.0
RECOVERY_S_MAX = 3.2e7
FlopRate = Annotated[float, Field(ge=FLOP_RATE_RANGE[0], le=FLOP_RATE_RANGE[1], allow_inf_nan=False)]
LinkBw = Annotated[float, Field(ge=LINK_BW_RANGE[0], le=LINK_BW_RANGE[1], allow_inf_nan=False)]
StorageBw = Annotated[float, Field(ge=STORAGE_BW_RANGE[0], le=STORAGE_BW_RANGE[1], allow_inf_nan=False)]
HbmBytes = Annotated[float, Field(ge=HBM_BYTES_RANGE[0], le=HBM_BYTES_RANGE[1], allow_inf_nan=False)]
HostMemBytes = Annotated[float, Field(ge=HOST_MEM_BYTES_RANGE[0], le=HOST_MEM_BYTES_RANGE[1], allow_inf_nan=False)]
PowerW = Annotated[float, Field(ge=POWER_W_RANGE[0], le=POWER_W_RANGE[1], allow_inf_nan=False)]
PriceUsd = Annotated[float, Field(ge=PRICE_USD_RANGE[0], le=PRICE_USD_RANGE[1], allow_inf_nan=False)]
#: Most pipeline stages (``parallelism.pp``) and virtual stages per GPU (``parallelism.vpp``) a
#: scenario may ask for. Published runs use pp <= 64 (Megatron-LM's 1T model, Narayanan et al.
#: 2021 Table 1; Llama 3 405B: 16) and vpp <= 12 (Nemotron-4 340B in the calibration file; the presets use <= 8); the bounds are the Plan page's
#: widget bounds (share.WIDGET_DEGREE_MAX, share.WIDGET_VPP_MAX). Found by review: the engine's
#: work grows with both — ``evaluate`` lists every pipeline stage's memory (pp = 1e6 took 4.3 s and
#: 1.7 GB, so the admitted 1e7 about 17 GB) and counts each rank's dense layers of an MoE model
#: over its virtual stages (vpp = 5e6 about 70 s) — so pp = vpp = 10,000,000, which the schema
#: admitted (pp·vpp <= n_layers <= 1e7), could exhaust memory instead of answering.
PP_MAX = 100_000
VPP_MAX = 1_000
#: Largest multi-token-prediction depth accepted (ModelSpec.mtp_layers): DeepSeek-V3 trains with D = 1
#: (report §2.2, §4.2); Gloeckle et al. 2024 (arXiv:2404.19737) study up to 8 future tokens. 16 leaves
#: room for experiments without admitting a typo such as 100.
MTP_LAYERS_MAX = 16
#: Most tokens a scenario may train on (training.tokens_total; share links and the sidebar's
#: box take the same bound): 1e16, about 280 times Qwen3's 36T (3.6e13, arXiv:2505.09388) and 640
#: times Llama 3's 15.6T (arXiv:2407.21783), the largest published pre-training runs.
TOKENS_TOTAL_MAX = 1.0e16
#: Fewest tokens a scenario may train on: one million, under two global batches of the smallest
#: published runs (MPT-125M: 256 × 2,048 = 524,288 tokens a step); the sidebar's box and share links
#: took this bound already, the schema "more than 0", so 0.5 tokens ran from the CLI (review 42a).
TOKENS_TOTAL_MIN = 1.0e6

Precision = Literal["fp32", "tf32", "fp16", "bf16", "fp8", "fp4"]
Recompute = Literal["none", "selective", "full", "op_sac"]
Schedule = Literal["1f1b", "interleaved", "gpipe", "zero_bubble", "dualpipe"]
OffloadTarget = Literal["none", "cpu", "nvme"]
AttentionKernel = Literal["native", "flash2"]
FailureClass = Literal["software", "gpu", "node", "network", "cluster"]
TierKind = Literal["host_memory", "local_nvme", "pfs", "object_store"]
#: Accelerator families with their own constants (hardware/calibration.json); ``planner.batch.FAMILIES``.
AcceleratorFamily = Literal["volta", "ampere", "hopper", "blackwell", "cdna2", "cdna3", "cdna4", "gaudi2", "gaudi3",
                            "other"]
HostLinkKind = Literal["pcie3", "pcie4", "pcie5", "pcie6", "nvlink-c2c"]

FAILURE_CLASSES: tuple[str, ...] = ("software", "gpu", "node", "network", "cluster")
TIER_KINDS: tuple[str, ...] = ("host_memory", "local_nvme", "pfs", "object_store")


def _scalar_types(annotation) -> tuple:
    """The types a field takes, ``Annotated`` and ``None`` aside: ``(int,)`` for ``int``,
    ``int | None`` and ``Annotated[int, ...] | None``; ``()`` for anything else than a plain
    type or a union of them (a container, a Literal: no lax-type rule applies)."""
    if typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    if isinstance(annotation, type):
        return (annotation,)
    if typing.get_origin(annotation) not in (Union, types.UnionType):
        return ()
    return tuple(typing.get_args(a)[0] if typing.get_origin(a) is Annotated else a
                 for a in typing.get_args(annotation) if a is not type(None))


def _numeric_only(annotation) -> bool:
    """True for an int / float annotation (or an Optional of one), not bool or a union with
    str / models: where pydantic's lax mode would read ``true`` as 1."""
    args = _scalar_types(annotation)
    return bool(args) and all(a in (int, float) for a in args)


def _int_only(annotation) -> bool:
    """True for an int annotation (or an Optional of one): a field :func:`_numeric_only` holds
    that takes whole numbers only (review h29d: tp=true said "must be a number" beside tp=2.5's
    "must be a whole number")."""
    args = _scalar_types(annotation)
    return bool(args) and all(a is int for a in args)


def _bool_only(annotation) -> bool:
    """True for a bool annotation (or an Optional of one)."""
    args = _scalar_types(annotation)
    return bool(args) and all(a is bool for a in args)


def _lax_number(v) -> bool:
    """A value pydantic's lax mode would read as a number that a number field refuses: a bool, or
    text other than nan / inf (those keep the field's own "must be a finite number")."""
    return isinstance(v, (bool, np.bool_)) or (
        isinstance(v, str) and v.strip().lower().lstrip("+-") not in ("nan", "inf", "infinity"))


#: The lax-type rules of each (model class, field), read once from its annotation: validation runs
#: on every evaluate and share link, and reading the annotations each time was a third of one
#: evaluate's time (review 49). ``(numeric, int_only, bool_only, literal int options or None,
#: dict of numbers)``.
_LAX_RULES: dict[tuple[type, str], tuple[bool, bool, bool, "list[str] | None", bool]] = {}


def _lax_rules(cls, name: str) -> tuple[bool, bool, bool, "list[str] | None", bool]:
    """The rules :meth:`_Strict._no_lax_types` applies to field ``name`` of ``cls`` (cached)."""
    rules = _LAX_RULES.get((cls, name))
    if rules is None:
        ann = cls.model_fields[name].annotation
        lit_args = typing.get_args(ann) if typing.get_origin(ann) is Literal else ()
        int_literal = bool(lit_args) and all(type(a) is int for a in lit_args)
        rules = (_numeric_only(ann), _int_only(ann), _bool_only(ann),
                 [str(a) for a in lit_args] if int_literal else None,
                 typing.get_origin(ann) is dict and _numeric_only(typing.get_args(ann)[1]))
        _LAX_RULES[(cls, name)] = rules
    return rules


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False, populate_by_name=True)

    @field_validator("*", mode="before")
    @classmethod
    def _no_lax_types(cls, v, info):
        # pydantic's lax mode reads true / false as 1 / 0 for a number field (``--set
        # parallelism.tp=true`` became tp = 1), the text "8" as 8 and "no" / "off" / 0 as false
        # (review 38: a scenario file with "n_gpus": "8" and "flash_attention": "off" ran with no
        # word, where the Hugging Face import refuses the same): refused, naming the field
        if info.field_name not in cls.model_fields:
            return v
        numeric, int_only, bool_only, int_literal, dict_numeric = _lax_rules(cls, info.field_name)
        if isinstance(v, np.bool_):  # numpy's bool (a pandas / sweep table cell) is a bool (review 38b)
            v = bool(v)
        if numeric and _lax_number(v):
            kind = "a whole number" if int_only else "a number"
            # str(v): numpy's text (np.str_) quoted as the text it is (review 40c D10)
            raise ValueError(f"{kind}, not {str(v).lower()}" if isinstance(v, bool)
                             else f"{kind}, not the text {str(v)!r}")
        if numeric and isinstance(v, (complex, np.complexfloating)):
            # numpy's complex is read by pydantic as its real part, with a warning (review 40c D9:
            # tp = np.complex128(4+1j) ran as TP 4); Python's complex was refused already
            kind = "a whole number" if int_only else "a number"
            raise ValueError(f"{kind}, not the complex number {complex(v)}")
        if bool_only and v is not None and not isinstance(v, bool):
            raise ValueError(f"must be true or false (got {v!r})")
        if int_literal is not None and isinstance(v, (bool, str)):  # zero_stage: false read as 0
            raise ValueError(f"must be {', '.join(int_literal[:-1])} or {int_literal[-1]} "
                             f"(got {repr(v) if isinstance(v, str) else str(v).lower()})")
        if dict_numeric and isinstance(v, dict):
            # peak_flop_per_s / mamf_flop_per_s: each value a number, as a number field's
            bad = [f"{k}: a number, not {'the text ' + repr(x) if isinstance(x, str) else str(x).lower()}"
                   for k, x in v.items() if _lax_number(x)]
            if bad:
                raise ValueError("; ".join(bad))
        return v


class _Sourced(_Strict):
    """A catalogue entry: every number it sets must name a source key in ``sources``."""

    sources: dict[str, str] = Field(
        default_factory=lambda: {"*": "user input"},
        description="Source key for each numeric field (keys of ../shared/reference/hardware.md §8, "
        "validation/reliability_facts.csv fact_id, or a paper). Catalogue files must give it; an "
        "inline object typed by a user defaults to {'*': 'user input'}."
    )
    uncertain: list[str] = Field(default_factory=list, description="Fields marked (U) in the source.")
    notes: str = ""

    @model_validator(mode="after")
    def _every_number_has_a_source(self):
        missing = []
        for name in type(self).model_fields:
            if name in ("sources", "uncertain", "notes"):
                continue
            value = getattr(self, name)
            if isinstance(value, bool) or value is None:
                continue
            if isinstance(value, (int, float)) or (
                isinstance(value, dict) and value and all(isinstance(v, (int, float)) for v in value.values())
            ):
                if name not in self.sources and "*" not in self.sources:
                    missing.append(name)
        if missing:
            raise ValueError(f"numbers without a source: {', '.join(missing)} (add them to 'sources')")
        return self


# --------------------------------------------------------------------------------------
# Catalogue entries
# --------------------------------------------------------------------------------------


class Accelerator(_Sourced):
    """One accelerator (per GPU; GB200/GB300 per GPU of the NVL72 rack)."""

    name: Name
    vendor: str
    family: AcceleratorFamily = Field(
        description="Architecture family, keys the GEMM-efficiency curve (e.g. 'hopper'); 'other' for a part "
        "of none of them (the generic constants). Any other name is refused: it used to run silently on "
        "'other' (review 15o: 'Hopper' made the default preset's step 11 % slower without a word).")
    peak_flop_per_s: dict[Precision, FlopRate] = Field(
        description="Dense (no sparsity) peak FLOP/s by precision."
    )
    hbm_bytes: HbmBytes = Field(description="Physical HBM capacity [bytes].")
    hbm_usable_bytes: HbmBytes = Field(description="HBM visible to the framework [bytes].")
    hbm_bw_bytes_per_s: Annotated[float, Field(ge=HBM_BW_RANGE[0], le=HBM_BW_RANGE[1], allow_inf_nan=False)]
    scaleup_bw_bytes_per_s: LinkBw = Field(description="Scale-up (NVLink / IF) bandwidth per GPU, one direction.")
    scaleup_domain_size: PosInt = Field(description="GPUs in one scale-up domain on the reference system.")
    host_link: HostLinkKind
    host_link_bw_bytes_per_s: LinkBw = Field(description="Host link bandwidth per GPU, one direction.")
    tdp_w: PowerW
    price_per_gpu_hour_usd: PriceUsd
    price_date: str
    mamf_flop_per_s: dict[Precision, FlopRate] | None = Field(
        None,
        description="Maximum achievable matmul FLOP/s of this part by precision (stas00's MAMF: the best "
        "large GEMM measured, or derived from a measured part of the same die by the power rule "
        "planner.timing.MAMF_POWER_EXPONENT); replaces the family's MAMF fraction for this part. None = "
        "the family's fraction (hardware/calibration.json mamf_frac).",
    )
    attention_dhead_knee: Annotated[float, Field(ge=1, le=1e4, allow_inf_nan=False)] | None = Field(
        None,
        description="Flash-attention head-dimension knee: the head dim at which one score element's "
        "exp (special-function units) takes as long as its 4·d_h matmul FLOPs, i.e. (matmul FLOP "
        "per clock per SM / exp per clock per SM) / 4; None = the family's value "
        "(planner.timing.ATTN_DHEAD_KNEE).",
    )

    @model_validator(mode="after")
    def _check(self):
        if self.hbm_usable_bytes > self.hbm_bytes:
            raise ValueError(
                f"hbm_usable_bytes = {self.hbm_usable_bytes:g} exceeds hbm_bytes = {self.hbm_bytes:g}"
            )
        if "bf16" not in self.peak_flop_per_s and "fp16" not in self.peak_flop_per_s:
            raise ValueError("peak_flop_per_s needs a 'bf16' or 'fp16' entry")
        for prec, v in (self.mamf_flop_per_s or {}).items():
            peak = self.peak_flop_per_s.get(prec)
            if peak is None:
                raise ValueError(f"mamf_flop_per_s has '{prec}' but peak_flop_per_s has no '{prec}' entry")
            if v > peak:
                raise ValueError(f"mamf_flop_per_s['{prec}'] = {v:g} exceeds the peak {peak:g}")
        return self


class System(_Sourced):
    """A node type and its network: the unit a cluster is built from."""

    name: Name
    accelerator: str = Field(description="Accelerator id in hardware/accelerators.json.")
    gpus_per_node: PosInt
    nvlink_domain_size: PosInt = Field(description="GPUs in one scale-up (NVLink) domain: 8 on DGX, 72 on NVL72.")
    nic_bw_per_gpu_bytes_per_s: LinkBw = Field(description="Scale-out network bandwidth per GPU, one direction.")
    host_memory_bytes: HostMemBytes = Field(description="Host (CPU) memory per node [bytes].")
    host_memory_bw_bytes_per_s: LinkBw = Field(description="Host memory bandwidth per node.")
    local_nvme_bytes: Annotated[float, Field(ge=0, le=NVME_BYTES_MAX, allow_inf_nan=False)] = Field(
        description="Local NVMe capacity per node; 0 = none.")
    local_nvme_write_bw_bytes_per_s: Annotated[float, Field(ge=0, le=NVME_BW_RANGE[1], allow_inf_nan=False)] = Field(
        description=f"0 (none) or {NVME_BW_RANGE[0]:g} to {NVME_BW_RANGE[1]:g} B/s.")
    local_nvme_read_bw_bytes_per_s: Annotated[float, Field(ge=0, le=NVME_BW_RANGE[1], allow_inf_nan=False)] = Field(
        description=f"0 (none) or {NVME_BW_RANGE[0]:g} to {NVME_BW_RANGE[1]:g} B/s.")
    node_power_w: Annotated[float, Field(ge=NODE_POWER_W_RANGE[0], le=NODE_POWER_W_RANGE[1], allow_inf_nan=False)] = Field(
        description="Whole-node power at full load [W].")
    in_network_reduction: bool = Field(False, description="NVLS (NVLink SHARP) in-network reduction available: speeds up all-reduces inside one NVLink domain.")
    scaleup_topology: Literal["switched", "full_mesh"] = Field(
        "switched", description="How the scale-up domain is wired: 'switched' (NVSwitch: any group of GPUs gets each GPU's "
        "whole scale-up bandwidth) or 'full_mesh' (no switch, one direct link to each of the other "
        "nvlink_domain_size − 1 GPUs: AMD Instinct Infinity Fabric, Intel Gaudi RoCE, the 4-GH200 node; a group of g "
        "GPUs uses g − 1 of those links, a point-to-point send one).")

    #: Settings that change the model without being numbers: a catalogue file names their source too
    #: (review 48c: in_network_reduction scaled every in-domain all-reduce with no source given;
    #: checked by planner.catalog's loader, so an inline system copied from an older export still reads).
    SOURCED_SETTINGS: ClassVar[tuple[str, ...]] = ("in_network_reduction", "scaleup_topology")

    @model_validator(mode="after")
    def _check(self):
        if self.scaleup_topology == "full_mesh" and self.in_network_reduction:
            raise ValueError("in_network_reduction = true with scaleup_topology = 'full_mesh': in-network reduction "
                             "(NVLS) needs a switch; set one of them the other way")
        if self.nvlink_domain_size % self.gpus_per_node and self.gpus_per_node % self.nvlink_domain_size:
            raise ValueError(
                f"nvlink_domain_size = {self.nvlink_domain_size} and gpus_per_node = {self.gpus_per_node}: "
                "one must divide the other"
            )
        for f in ("local_nvme_write_bw_bytes_per_s", "local_nvme_read_bw_bytes_per_s"):
            v = getattr(self, f)
            if 0 < v < NVME_BW_RANGE[0]:
                raise ValueError(f"{f} = {v:g}: allowed 0 (no local NVMe) or {NVME_BW_RANGE[0]:g} to "
                                 f"{NVME_BW_RANGE[1]:g} B/s")
        if self.local_nvme_bytes > 0:  # a drive that can neither be written nor read holds no checkpoint
            for f in ("local_nvme_write_bw_bytes_per_s", "local_nvme_read_bw_bytes_per_s"):
                if getattr(self, f) <= 0:
                    raise ValueError(f"{f} = 0 with local_nvme_bytes = {self.local_nvme_bytes:g}: a node with local "
                                     "NVMe needs its read and write bandwidth (> 0); set local_nvme_bytes = 0 for none")
        return self


class StorageTier(_Sourced):
    """A checkpoint tier. Per-node bandwidths left null are taken from the system
    (host memory bandwidth, local NVMe bandwidth)."""

    name: Name
    kind: TierKind
    scope: Literal["node", "shared"] = Field(description="'node': each node has its own; 'shared': one for the job.")
    write_bw_per_node_bytes_per_s: StorageBw | None = None
    read_bw_per_node_bytes_per_s: StorageBw | None = None
    aggregate_write_bw_bytes_per_s: StorageBw | None = Field(None, description="Shared by all writers; null = no limit.")
    aggregate_read_bw_bytes_per_s: StorageBw | None = None
    survives: list[FailureClass] = Field(description="Failure classes after which a checkpoint here can be reloaded.")

    @model_validator(mode="after")
    def _kind_matches_scope(self):
        # The engine places a tier by its kind (host memory and local NVMe sit in each node, a PFS
        # or object store is one store for the job); a scope that says otherwise would be ignored
        # (review 15a: a 'pfs' tier with scope 'node' got no network cost and no replica term).
        want = "node" if self.kind in ("host_memory", "local_nvme") else "shared"
        if self.scope != want:
            raise ValueError(f"scope = '{self.scope}' does not fit kind = '{self.kind}', which needs scope "
                             f"'{want}' (host_memory and local_nvme are per node; pfs and object_store "
                             "are shared by the job)")
        if want == "shared":
            # a node tier's null bandwidth is the system's (host memory, NVMe); a shared store has no
            # such figure, so one with neither a per-node nor an aggregate rate was infinitely fast
            # (found by review, session 21: an inline PFS saved a 405B checkpoint in its device-to-host
            # copy alone, with no note)
            for way in ("write", "read"):
                if (getattr(self, f"{way}_bw_per_node_bytes_per_s") is None
                        and getattr(self, f"aggregate_{way}_bw_bytes_per_s") is None):
                    raise ValueError(
                        f"{way}_bw_per_node_bytes_per_s and aggregate_{way}_bw_bytes_per_s are both null: a "
                        f"shared tier ({self.kind}) needs at least one of them (bytes/s; e.g. the catalogue's "
                        + ("'pfs': 25e9 write / 40e9 read per node, 2e12 in aggregate)" if self.kind == "pfs" else
                           "'object_store': 12.5e9 per node, no aggregate limit)"))
        return self


class FailureClassRate(_Strict):
    failure_class: FailureClass = Field(alias="class")
    rate: Annotated[float, Field(ge=0, le=FAILURE_RATE_MAX, allow_inf_nan=False)] = Field(
        description="Failures per unit-hour (unit given by `per`).")
    per: Literal["gpu_hour", "node_hour", "job_hour"]
    restart_s: Annotated[float, Field(ge=0, le=RECOVERY_S_MAX, allow_inf_nan=False)] = Field(
        description="Detection + restart time for this class [s].")
    repair_s: Annotated[float, Field(ge=0, le=RECOVERY_S_MAX, allow_inf_nan=False)] = Field(
        0.0, description="Extra wait for a replacement node when no hot spare exists [s].")
    source: str
    uncertain: bool = False


class FailureProfile(_Strict):
    """Field failure rates by class, from a published fleet."""

    name: Name
    classes: list[FailureClassRate]
    reference: str = Field(description="The fleet and period the rates come from.")
    source: str
    notes: str = ""
    node_gpus: PosInt | None = Field(
        None, description="GPUs per node of the fleet the per-node rates were measured on (None: not stated); "
        "a system with other node sizes gets a note (the rates are applied per node as given).")
    accelerator_family: AcceleratorFamily | None = Field(
        None, description="Accelerator family of the fleet the rates were measured on (None: not stated); a "
        "system of another family gets a note (the rates are applied to its parts as given).")

    @field_validator("classes")
    @classmethod
    def _unique(cls, v):
        seen = [c.failure_class for c in v]
        dup = {c for c in seen if seen.count(c) > 1}
        if dup:
            raise ValueError(f"failure class listed twice: {sorted(dup)}")
        return v


class MoESpec(_Strict):
    n_experts: PosInt
    top_k: PosInt
    expert_ffn_hidden_size: PosInt
    n_shared_experts: NonNegInt = 0
    shared_expert_ffn_hidden_size: PosInt | None = Field(
        None, description="Defaults to expert_ffn_hidden_size."
    )
    first_dense_layers: NonNegInt = Field(0, description="Leading layers that use a dense MLP instead of MoE.")
    capacity_factor: Annotated[float, Field(ge=1, le=16)] = Field(
        1.0, description="Load-imbalance factor applied to expert compute and all-to-all (>= 1)."
    )
    max_nodes_per_token: PosInt | None = Field(
        None,
        description="Node-limited routing: each token goes to experts on at most this many nodes "
        "and crosses the network once per node (DeepSeek-V3 §2.1.2: 4). None = no limit.",
    )

    @model_validator(mode="after")
    def _check(self):
        if self.top_k > self.n_experts:
            raise ValueError(f"top_k = {self.top_k} exceeds n_experts = {self.n_experts}")
        return self


class MLASpec(_Strict):
    """Multi-head latent attention (DeepSeek-V2/V3), counted exactly for parameters.

    FLOPs and activation memory treat the decompressed heads like ordinary MHA with
    ``qk_nope_head_dim + qk_rope_head_dim`` for Q/K and ``v_head_dim`` for V (an approximation)."""

    q_lora_rank: NonNegInt = Field(description="0 = no Q compression.")
    kv_lora_rank: PosInt
    qk_nope_head_dim: PosInt
    qk_rope_head_dim: PosInt
    v_head_dim: PosInt


class ModelSpec(_Strict):
    """A decoder-only transformer. Parameter counting: DESIGN §4.1."""

    name: Name
    n_layers: PosInt
    hidden_size: PosInt
    n_heads: PosInt
    n_kv_heads: PosInt | None = Field(None, description="Defaults to n_heads (MHA).")
    head_dim: PosInt | None = Field(None, description="Defaults to hidden_size / n_heads.")
    ffn_hidden_size: PosInt
    vocab_size: PosInt
    gated_mlp: bool = True
    tied_embeddings: bool = False
    norm: Literal["rmsnorm", "layernorm"] = "rmsnorm"
    linear_bias: bool = False
    learned_pos_embeddings: NonNegInt = Field(0, description="Rows of a learned position table (GPT-2/3); 0 = RoPE/ALiBi.")
    rope: bool = Field(
        True,
        description="Rotary position embedding on queries and keys (Llama, Mistral, Qwen, DeepSeek, GPT-NeoX); "
        "false for ALiBi (MPT, BLOOM) or no position encoding. A model with a learned position table "
        "(learned_pos_embeddings > 0) has no RoPE whatever this says. Read only by the step time of eager "
        "elementwise kernels (training.elementwise).",
    )
    dropout: Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)] = Field(
        0.0,
        description="Dropout probability (hidden and attention). 0 (Llama, Mistral, MPT, DeepSeek, "
        "Nemotron-4) keeps no dropout masks; GPT-3 / Megatron 2021-22 used 0.1, whose masks "
        "Korthikanti et al. 2022 Table 2 counts.",
    )
    sliding_window: PosInt | None = Field(
        None, description="Attention window [tokens] of the sliding-window layers (Mistral 7B: 4096, "
        "Gemma 2: 4096, GPT-OSS: 128); None = full attention in every layer.")
    sliding_window_layer_frac: Fraction = Field(
        1.0, description="Share of the layers that use the sliding window: 1 = all (Mistral 7B), "
        "0.5 = alternating (Gemma 2, GPT-OSS); the rest attend to the whole sequence.")
    moe: MoESpec | None = None
    mla: MLASpec | None = None
    mtp_layers: Annotated[int, Field(ge=0, le=MTP_LAYERS_MAX)] = Field(
        0,
        description="Multi-token-prediction depth D (DeepSeek-V3 report §2.2; Megatron-Core mtp_num_layers; "
        "Hugging Face num_nextn_predict_layers): D sequential MTP modules on the last pipeline stage, each "
        "one transformer block of the model's MoE-layer kind (dense for a dense model), a 2h×h projection, "
        "three RMSNorms and the shared embedding and output head, with its own cross-entropy over the "
        "vocabulary. Counted in parameters, model FLOPs, step time and memory. 0 = none (DeepSeek-V3 "
        "trained with 1).",
    )
    source: str = ""
    published_params_total: PosFloat | None = None
    published_params_active: PosFloat | None = None

    @model_validator(mode="after")
    def _check(self):
        kv = self.n_kv_heads or self.n_heads
        if kv > self.n_heads or self.n_heads % kv:
            raise ValueError(f"n_kv_heads = {kv} must divide n_heads = {self.n_heads}")
        if self.head_dim is None and self.hidden_size % self.n_heads and self.mla is None:
            raise ValueError(
                f"hidden_size = {self.hidden_size} is not divisible by n_heads = {self.n_heads}; set head_dim"
            )
        if self.moe is not None and self.moe.first_dense_layers > self.n_layers:
            raise ValueError(
                f"moe.first_dense_layers = {self.moe.first_dense_layers} exceeds n_layers = {self.n_layers}"
            )
        return self

    @property
    def kv_heads(self) -> int:
        return self.n_kv_heads or self.n_heads

    @property
    def d_head(self) -> int:
        return self.head_dim or self.hidden_size // self.n_heads


# --------------------------------------------------------------------------------------
# Scenario
# --------------------------------------------------------------------------------------


class Training(_Strict):
    seq_len: Annotated[int, Field(ge=1, le=4_194_304)] = 4096
    global_batch_size: PosInt = Field(1024, description="Sequences per optimizer step.")
    micro_batch_size: PosInt = Field(1, description="Sequences per micro-batch per DP rank.")
    precision: Precision = Field(
        "bf16", description="GEMM precision. fp8 / fp4: GEMMs at that peak, bf16 weights + fp32 master / optimizer "
        "kept, the attention core and MoE router at the 16-bit peak; fp32 / tf32: 4-byte weights, activations and "
        "communication, and every matmul, the attention core and router included, at that precision's own peak "
        "(docs/timing.md, docs/memory.md).")
    fp8_scaling: Literal["tensorwise", "rowwise"] = Field(
        "tensorwise",
        description="FP8 scaling granularity, for the step time of fp8 runs: 'tensorwise' = one scale "
        "per tensor (Transformer Engine delayed / current scaling, torchao 'tensorwise'; MXFP8 and "
        "block scaling are modelled alike); 'rowwise' = torchao's row-wise recipe, which casts every "
        "linear's operands along both axes: timing.FP8_ROWWISE_BYTES HBM bytes per cast element "
        "(derived from torchao's Llama 3 8B table: +25 % tensorwise vs +10 % rowwise over bf16). "
        "No effect unless precision is fp8.",
    )
    fp8_attention: bool = Field(
        False,
        description="FP8 attention core (Transformer Engine / cuDNN FP8 fused attention: Megatron-Core's "
        "TransformerConfig.fp8_dot_product_attention, NeMo / Megatron-Bridge fp8_dot_product_attention, FP8_DPA "
        "in NVIDIA's MLPerf configs): the flash core's QKᵀ and PV matmuls "
        "at the FP8 peak with the family's FP8 / 16-bit GEMM ceiling ratio, while the softmax's exp units "
        "do not speed up (the head-dim knee scales with the peak): 1.16× the 16-bit core on B200, 1.17× on "
        "H100, 1.30× on B300 at d_h 128 (docs/timing.md); where the FP8 core would be slower the 16-bit one "
        "is kept. For the step time only (activation memory unchanged). No effect unless precision is fp8 "
        "or fp4, flash attention is on with the native kernels and the part is an NVIDIA Hopper or "
        "Blackwell GPU (a note says so).",
    )
    grad_dtype: Literal["fp32", "bf16", "fp16"] = Field(
        "fp32",
        description="Gradient accumulation / reduction buffer: 'fp32' 4 B per parameter (Megatron's default "
        "under --bf16), 'bf16' or 'fp16' 2 B ('fp16' with precision 'fp16' only: an fp16 model's own "
        "gradient buffers, as in the ZeRO paper's 2Ψ + 2Ψ + 12Ψ and on fp16-only parts such as V100).")
    cross_entropy: Literal["fused", "eager"] = Field(
        "fused",
        description="Loss kernel, for the logits' memory on the last stage: 'fused' = vocab-parallel / "
        "fused / compiled cross-entropy keeping fp32 logits, 4 B per logit (Korthikanti et al. 2022 "
        "§4); 'eager' = PyTorch eager F.cross_entropy on fp32 logits, 12 B per logit at the start "
        "of the backward (the saved log-softmax, its incoming gradient and the logits' gradient), "
        "16 B with TP > 1 (PyTorch's loss_parallel() backward), and with PP > 1 + 4 B × the "
        "micro-batches (PyTorch pipelining's last stage keeps every micro-batch's logits until the "
        "step ends).",
    )
    elementwise: Literal["fused", "eager"] = Field(
        "fused",
        description="Elementwise kernels, for the step time: 'fused' = one read and one write per "
        "fused op (Transformer Engine / Apex / torch.compile: norms, RoPE, residual adds, "
        "activation); 'eager' = PyTorch eager, one kernel per op: an RMSNorm as cast, pow, mean, "
        "multiply, cast, multiply (36 B per hidden element instead of 4), RoPE as an fp32 complex "
        "multiply (20 B per query / key element), SwiGLU as silu then multiply (10 B per FFN "
        "element instead of 6). LayerNorm and GeLU are single kernels either way. The extra "
        "activation memory of eager ops is not counted, except under op_sac: eager PyTorch keeps "
        "the output of W2 (saved by the policy, read by no backward) until the backward.",
    )
    tokens_total: float = Field(
        1.0e12, ge=TOKENS_TOTAL_MIN, allow_inf_nan=False, json_schema_extra={"maximum": TOKENS_TOTAL_MAX},
        description="Tokens to train, at least 1e6 and at most 1e16: far beyond any published run (Llama 3 "
        "405B: 15.6T = 1.56e13, Llama Team arXiv:2407.21783; Qwen3: 36T = 3.6e13, arXiv:2505.09388), "
        "a bound that keeps a mistyped exponent from becoming a run of 10^300 tokens.",
    )

    @field_validator("tokens_total")
    @classmethod
    def _tokens_total_at_most(cls, v: float) -> float:
        if v > TOKENS_TOTAL_MAX:
            # worded as the other bound's message ("allowed 1,000,000 to 1e+16 (got 0)")
            got = f"{v:g}" if float(f"{v:g}") == v else repr(v)  # not rounded onto the bound (review 40c D11)
            raise ValueError(f"{_range_text(('training', 'tokens_total'))} (got {got}); 1e+16 is far beyond "
                             "any published run: Llama 3 trained on 1.56e13, Qwen3 on 3.6e13")
        return v


class Parallelism(_Strict):
    tp: PosInt = 1
    pp: Annotated[int, Field(ge=1, le=PP_MAX)] = Field(
        1, description=f"Pipeline stages, 1 to {PP_MAX:,} (schema.PP_MAX: far beyond any published run's 64).")
    dp: PosInt | None = Field(None, description="Derived from n_gpus / (tp·pp·cp) when omitted.")
    cp: PosInt = 1
    ep: PosInt = 1
    etp: PosInt | None = Field(
        None,
        description="Expert tensor parallelism (Megatron-Core --expert-tensor-parallel-size): the routed "
        "experts' GEMMs split over etp ranks while attention and dense layers use tp; the expert group "
        "etp·ep, the expert data-parallel group tp·cp·dp/(etp·ep). None = tp (Megatron's default). MoE "
        "only; must divide tp, and etp·ep must divide tp·cp·dp (Megatron-Core parallel_state: world_size "
        "% (etp·ep·pp) == 0); etp < tp needs sequence parallelism. Recipes run etp = 1 with tp > 1 "
        "(Megatron-Bridge Qwen3 MoE: expert_tensor_parallel_size=1).",
    )
    vpp: Annotated[int, Field(ge=1, le=VPP_MAX)] = Field(
        1, description=f"Virtual pipeline stages per GPU (interleaved 1F1B), 1 to {VPP_MAX:,} (schema.VPP_MAX).")
    sequence_parallel: bool = True
    zero_stage: Literal[0, 1, 2, 3] = Field(1, description="1 = Megatron distributed optimizer; 3 = FSDP.")
    dp_shard: PosInt | None = Field(
        None,
        description="ZeRO / FSDP sharding group in DP ranks; None = all of dp (full sharding). Smaller = "
        "hybrid sharding (HSDP): states sharded over dp_shard·cp ranks, replicated dp/dp_shard times, "
        "gradients all-reduced across the replicas once per step (PyTorch FSDP HYBRID_SHARD, TorchTitan "
        "data_parallel_shard_degree, DeepSpeed MiCS, Megatron num_distributed_optimizer_instances).",
    )
    recompute: Recompute = Field(
        "selective",
        description="Activation recompute: 'selective' = the attention core (Korthikanti et al. 2022); "
        "'full' = whole layers from their inputs; 'op_sac' = TorchTitan's per-op selective "
        "checkpointing (every second matmul of a block recomputed, attention and the rest of the "
        "matmuls saved, norms and activations recomputed).",
    )
    recompute_layers: PosInt | None = Field(
        None,
        description="With recompute = 'full': recompute only this many layers of each pipeline chunk "
        "(the first ones) and keep the others' activations (Megatron --recompute-method block "
        "--recompute-num-layers); None = every layer.",
    )
    schedule: Schedule = Field(
        "1f1b",
        description="Pipeline schedule: 1f1b; interleaved (with vpp); gpipe; zero_bubble (ZB-H1, Qi et al. 2024: bubble "
        "(p−1)(F + R), a third of 1F1B's without recompute, at least the critical path's below m = p; 1F1B's "
        "activation memory); dualpipe (DeepSeek-V3 §3.2.1: two pipelines in opposite "
        "directions, bubble (pp/2 − 1)(F&B + B − 3W), two stages' parameters and pp + 1 micro-batches of "
        "activations per rank; needs an even pp and an even number of micro-batches, at least 2·pp).")
    offload_optimizer: OffloadTarget = "none"
    offload_master_weights: bool = Field(
        False,
        description="With offload_optimizer = cpu / nvme: the GPU frees its fp32 master and receives only the "
        "16-bit weights after the CPU step (DeepSpeed ZeRO-Offload; Megatron-Core with the precision-aware "
        "optimizer). Off: the GPU keeps its own fp32 master as well, refreshed from the host (4 B per parameter "
        "up). The host holds the master, Adam m, v and the gradients either way: the CPU step needs them.")
    offload_grads: bool = Field(
        False,
        description="With offload_optimizer = cpu / nvme: the GPU frees its gradient partition once copied to "
        "the host (ZeRO-2/3; ZeRO-0/1 reduce the whole accumulated gradient on the GPU, so it stays). The copy "
        "the CPU step reads is on the host either way.")
    offload_activations: bool = Field(False, description="Swap stashed activations to host memory (KARMA).")
    flash_attention: bool = True
    attention_kernel: AttentionKernel = Field(
        "native",
        description="Fused-attention kernel generation (with flash_attention): 'native' = written "
        "for the GPU (FlashAttention-2 on Ampere; FlashAttention-3 / cuDNN on Hopper); 'flash2' = "
        "FlashAttention-2-class kernels everywhere, ~0.6 of native speed on Hopper (35 % of the H100 "
        "peak against FA2's 73 % on A100: FA3 and FA2 papers, arXiv:2407.08608, 2307.08691). PyTorch's F.scaled_dot_product_attention "
        "(TorchTitan, plain PyTorch / Hugging Face models) runs its FlashAttention-2 backend on "
        "Hopper and Blackwell unless the cuDNN backend is asked for (opt-in since PyTorch 2.5.1, "
        "pytorch#138522; preferred by default from PyTorch 2.11): choose 'flash2' there.",
    )
    tp_comm_overlap: bool = False
    dp_comm_overlap: bool = Field(
        True,
        description="Overlap the data-parallel collectives with compute: gradient reduce(-scatter) with "
        "the backward, ZeRO parameter all-gathers with the forward (ZeRO-3 / FSDP: each micro-batch's "
        "gathers prefetched behind the layer before). On for FSDP2, DeepSpeed overlap_comm and "
        "Megatron's --overlap-grad-reduce / --overlap-param-gather. Off: every DP collective adds to "
        "the step in full, as measured for PyTorch FSDP1 in MosaicML Composer / llm-foundry (2023), "
        "whose per-micro-batch cost equals the modelled all-gathers and reduce-scatter (docs/timing.md).",
    )
    ep_comm_overlap: bool = Field(
        False,
        description="Hide the expert all-to-all behind the computation of another micro-batch "
        "(DeepSeek-V3 DualPipe; Megatron-Core MoE a2a overlap). Only for MoE with ep > 1.",
    )
    ep_dispatch_fp8: bool = Field(
        False,
        description="Expert dispatch (and its backward counterpart) sent in FP8, 1 byte per "
        "element; the combine stays BF16 (DeepSeek-V3 §3.3.2). Only for MoE with ep > 1.",
    )
    ep_node_dispatch: bool = Field(
        False,
        description="Node-aware expert dispatch (DeepEP's internode kernels; Megatron-Core's flex "
        "dispatcher with DeepEP or HybridEP): a token crosses the network once per destination node, "
        "then NVLink forwards it to that node's experts, instead of once per routed expert. Only for "
        "MoE with ep > 1 across nodes.",
    )
    layer_split: Literal["even", "uneven"] = Field(
        "even",
        description="'even': layers must divide by pp·vpp; 'uneven': the first L mod (pp·vpp) "
        "virtual stages take one extra layer.",
    )


#: Lowest power limit accepted, as a fraction of the TDP. The GPUs' own floor is of this order:
#: NVIDIA DGX B200 User Guide, ch. 7 "Managing Power Capping", Redfish ``PowerLimitWatts``
#: example of a 700 W GPU: ``AllowableMin`` 200, ``AllowableMax`` 700 (0.29); 0.25 keeps every
#: part's floor inside the range. The power rule was derived on ratios 0.75–1.2, so anything
#: below about 0.7·TDP is an extrapolation (a note says so).
POWER_LIMIT_MIN_FRAC = 0.25


class ClusterOverrides(_Strict):
    price_per_gpu_hour_usd: PriceUsd | None = None
    nic_bw_per_gpu_bytes_per_s: LinkBw | None = None
    host_memory_bytes: HostMemBytes | None = None
    hbm_usable_bytes: HbmBytes | None = None
    # ranged against the part's TDP in Scenario._check, 0 and below too (found by review: 0 said
    # "allowed more than 0", and 1 W then "allowed 175 <= power_limit_w <= 700 W")
    power_limit_w: Annotated[float, Field(allow_inf_nan=False)] | None = Field(
        None,
        description="Power limit per GPU (nvidia-smi -pl) [W], from 0.25·TDP to the part's TDP: the sustained "
        "matmul ceiling × (limit / TDP)^0.237 (the power rule, planner.timing.MAMF_POWER_EXPONENT) and the "
        "GPUs' share of the node's power × limit / TDP. null = the part's TDP.",
    )


class Cluster(_Strict):
    system: Union[str, System]
    n_gpus: PosInt
    accelerator: Union[str, Accelerator, None] = Field(None, description="Overrides the system's accelerator.")
    overrides: ClusterOverrides = Field(default_factory=ClusterOverrides)
    pue: Annotated[float, Field(ge=1, le=3)] = Field(
        1.2,
        description="Power usage effectiveness of the facility (total power / IT power), applied to energy "
        "only. Default 1.2: between a hyperscaler's fleet (Google 1.10, 2023 environmental report) and the "
        "industry average 1.56-1.58 (Uptime Institute Global Data Center Survey 2023 / 2024); set your site's.")
    utilisation_power_frac: Fraction = Field(
        0.8,
        description="Average power draw as a fraction of the node's full-load power (node_power_w). Default 0.8: "
        "BLOOM's energy, 433 MWh (A100-hours × 400 W TDP) + 257 MWh of the nodes' idle draw over 1,082,990 "
        "A100-hours = 637 W per GPU-hour (Luccioni et al., JMLR 2023), is 0.78 of a DGX A100's 6.5 kW / 8 GPUs.")


class CheckpointTierUse(_Strict):
    tier: Union[str, StorageTier]
    interval_s: PosFloat | None = Field(None, description="null = choose the optimum.")
    replicas: NonNegInt = Field(0, description="Peer-node copies (host memory; Gemini / REFT).")


class Checkpoint(_Strict):
    tiers: list[CheckpointTierUse] = Field(
        default_factory=lambda: [
            CheckpointTierUse(tier="host_memory", interval_s=None),
            CheckpointTierUse(tier="pfs", interval_s=None),
        ]
    )
    async_: bool = Field(True, alias="async")
    async_interference_frac: Fraction = Field(
        0.02, description="Slow-down of steps while an async save drains (stated assumption)."
    )


class Reliability(_Strict):
    profile: Union[str, FailureProfile] = "llama3-h100"
    hot_spare_nodes: NonNegInt = 0
    rate_scale: Annotated[float, Field(ge=0, le=100)] = Field(1.0, description="Multiplies every failure rate.")



def _divisors(n: int) -> list[int]:
    """The divisors of ``n`` ≥ 1, ascending (O(√n))."""
    import math

    small = [k for k in range(1, math.isqrt(n) + 1) if n % k == 0]
    return sorted({d for k in small for d in (k, n // k)})


def dotted_path(path) -> str:
    """A field path in the dotted form: the form the error messages use,
    ``checkpoint.tiers[0].interval_s``, is ``checkpoint.tiers.0.interval_s`` ([-1], [x] too: "needs
    an index from 0 to ...", review 20). Read by ``--set`` and by ``evaluate_many``'s columns."""
    return re.sub(r"\[\s*([^\[\]]*?)\s*\]", r".\1", str(path))


def precision_error(training, acc) -> str | None:
    """Why ``training``'s precision or gradient dtype cannot run on accelerator ``acc`` (its
    ``peak_flop_per_s`` lacks the precision, BF16 gradients without BF16 units, or FP16 gradients
    with another precision), or None.
    Shared by the scenario's checks and the sweep's per-system ones."""
    if training.precision not in acc.peak_flop_per_s:
        return (f"training.precision = '{training.precision}' is not supported by {acc.name} "
                f"(it has dense {', '.join(acc.peak_flop_per_s)} units); choose one of those")
    if training.grad_dtype == "bf16" and "bf16" not in acc.peak_flop_per_s:
        return (f"training.grad_dtype = 'bf16' is not supported by {acc.name} (no BF16 units); use fp32"
                + (" or fp16" if training.precision == "fp16" else ""))
    if training.grad_dtype == "fp16" and training.precision != "fp16":
        # review 47b: fp16 gradients are an fp16 model's own buffers (Megatron --fp16 without
        # --accumulate-allreduce-grads-in-fp32, DeepSpeed's default grad_accum_dtype = the model's)
        return (f"training.grad_dtype = 'fp16' needs training.precision = 'fp16' (it is "
                f"'{training.precision}'); use fp32" + (" or bf16" if "bf16" in acc.peak_flop_per_s else ""))
    return None


def tier_kind_dup_error(kinds: list[str]) -> str | None:
    """The message for checkpoint tier kinds listed more than once (each kind is one tier: its own
    interval and survival rule), or None. Shared by :class:`Scenario`'s check and the Plan page's
    import (``share.import_refusals``), which needs it also behind another cross-field error."""
    dup = sorted({k for k in kinds if kinds.count(k) > 1})
    return f"checkpoint.tiers: tier kind {dup} listed twice; use each kind at most once" if dup else None


def split_product_error(tp: int, pp: int, cp: int, dp: int, n_gpus: int) -> str | None:
    """The message for a given DP whose split does not fill the cluster (tp·pp·cp·dp ≠ n_gpus), or
    None; shared as :func:`tier_kind_dup_error` is."""
    if tp * pp * cp * dp == n_gpus:
        return None
    return f"parallelism: tp·pp·cp·dp = {tp}·{pp}·{cp}·{dp} = {tp * pp * cp * dp} ≠ cluster.n_gpus = {n_gpus}"


def replicas_error(checkpoint: Checkpoint, n_nodes: int, where: str = "the job has") -> str | None:
    """The message for a node-local tier whose ``replicas`` exceed ``n_nodes − 1`` (each copy goes
    to another node), or for a shared tier (parallel file system, object store) with replicas at all,
    or None. ``where`` words the node count (the sweep names its GPU count)."""
    from . import catalog  # local import: catalog imports this module

    for i, use in enumerate(checkpoint.tiers):
        tier = catalog.resolve_storage(use.tier)
        if use.replicas > 0 and tier.scope != "node":  # found by review: accepted and ignored
            return (f"checkpoint.tiers[{i}].replicas = {use.replicas}: replicas are copies of a node-local tier on "
                    f"peer nodes; tier '{use.tier if isinstance(use.tier, str) else tier.name}' is shared storage that "
                    "outlives any node; allowed 0")
        if use.replicas > n_nodes - 1 and tier.scope == "node":
            return (f"checkpoint.tiers[{i}].replicas = {use.replicas}: each copy goes to another node and {where} "
                    f"{n_nodes} node{'s' if n_nodes != 1 else ''}; allowed 0 to {n_nodes - 1}")
    return None

class Scenario(_Strict):
    """One training run to evaluate. Every field has a default except the model and the system."""

    name: Name = ""
    model: Union[str, ModelSpec]
    training: Training = Field(default_factory=Training)
    parallelism: Parallelism = Field(default_factory=Parallelism)
    cluster: Cluster
    checkpoint: Checkpoint = Field(default_factory=Checkpoint)
    reliability: Reliability = Field(default_factory=Reliability)

    @model_validator(mode="after")
    def _cross_checks(self):
        from . import catalog  # local import: catalog imports this module

        p, t, c = self.parallelism, self.training, self.cluster
        model = catalog.resolve_model(self.model, loc=("model",))
        system = catalog.resolve_system(c.system, loc=("cluster", "system"))
        if c.accelerator is not None:
            catalog.resolve_accelerator(c.accelerator, loc=("cluster", "accelerator"))
        acc = catalog.resolve_accelerator(
            c.accelerator if c.accelerator is not None else system.accelerator, loc=("cluster", "accelerator"))
        # catalogue ids first: an unknown one is its own error, reported alone (the checks below read them)
        tiers = [catalog.resolve_storage(use.tier, loc=("checkpoint", "tiers", i, "tier"))
                 for i, use in enumerate(self.checkpoint.tiers)]
        catalog.resolve_failure_profile(self.reliability.profile, loc=("reliability", "profile"))
        # every other problem that does not follow from another is named, one line each (review 49: a
        # second problem appeared only once the first was fixed); joined by CROSS_CHECK_SEP, which
        # format_errors splits
        errs: list[str] = []
        if err := precision_error(self.training, acc):
            errs.append(err)
        lim = c.overrides.power_limit_w
        lo = POWER_LIMIT_MIN_FRAC * acc.tdp_w
        if lim is not None and not lo <= lim <= acc.tdp_w:
            errs.append(
                f"cluster.overrides.power_limit_w = {lim:g} is outside {acc.name}'s range; allowed: "
                f"{lo:g} <= power_limit_w <= {acc.tdp_w:g} W ({POWER_LIMIT_MIN_FRAC:g}·TDP to the TDP: "
                "a limit above the TDP, or far below it, is not modelled)"
            )
        hbm_u = c.overrides.hbm_usable_bytes
        if hbm_u is not None and hbm_u > acc.hbm_bytes:
            errs.append(
                f"cluster.overrides.hbm_usable_bytes = {hbm_u:g} exceeds {acc.name}'s physical HBM; allowed "
                f"{HBM_BYTES_RANGE[0] / 2**30:g} to {acc.hbm_bytes / 2**30:g} GiB ({_num(HBM_BYTES_RANGE[0])} to "
                f"{_num(acc.hbm_bytes)} bytes)"  # one unit per range (review 15n: "0.1 GiB <= ... <= 8.58993e+10 bytes")
            )
        for i, tier in enumerate(tiers):
            if tier.kind == "local_nvme" and system.local_nvme_bytes <= 0:
                errs.append(
                    f"checkpoint.tiers[{i}].tier = local_nvme but system '{system.name}' has no local NVMe; "
                    "use host_memory, pfs or object_store"
                )
        if err := replicas_error(self.checkpoint, -(-self.cluster.n_gpus // system.gpus_per_node)):
            errs.append(err)
        if err := tier_kind_dup_error([t.kind for t in tiers]):
            errs.append(err)

        n = c.n_gpus
        mp = p.tp * p.pp * p.cp
        dp_ok = True  # the checks that need the data-parallel degree run only where it is known
        if p.dp is None:
            if n % mp:
                errs.append(
                    f"parallelism: tp·pp·cp = {p.tp}·{p.pp}·{p.cp} = {mp} does not divide "
                    f"cluster.n_gpus = {n}; choose n_gpus as a multiple of {mp}"
                )
                dp_ok = False
            else:
                object.__setattr__(p, "dp", n // mp)
        elif err := split_product_error(p.tp, p.pp, p.cp, p.dp, n):
            errs.append(err)
            dp_ok = False  # the stated dp is not the split's: what follows from it would repeat this
        dp = p.dp if p.dp is not None else 1
        if p.dp_shard is not None and dp_ok:
            if dp % p.dp_shard:
                errs.append(f"parallelism.dp_shard = {p.dp_shard} must divide dp = {dp}")
            if p.dp_shard < dp and p.zero_stage == 0:
                errs.append(f"parallelism.dp_shard = {p.dp_shard} < dp = {dp} needs zero_stage 1, 2 or 3 "
                                 "(ZeRO-0 shards nothing)")
            if p.dp_shard < dp and p.ep > 1 and model.moe is not None:  # a dense model's ep is refused below
                errs.append(f"parallelism.dp_shard = {p.dp_shard} < dp = {dp} with ep = {p.ep}: hybrid "
                                 "sharding of expert-parallel models is not modelled; use dp_shard = dp or ep = 1")
            if p.dp_shard < dp and p.etp is not None and p.etp != p.tp and model.moe is not None:
                errs.append(f"parallelism.dp_shard = {p.dp_shard} < dp = {dp} with etp = {p.etp} ≠ tp = "
                                 f"{p.tp}: hybrid sharding with expert TP ≠ TP is not modelled; use dp_shard = dp "
                                 "or etp = tp (or leave etp unset)")
        if p.recompute_layers is not None:
            if p.recompute != "full":
                errs.append(f"parallelism.recompute_layers = {p.recompute_layers} needs recompute = 'full' "
                                 f"(got '{p.recompute}')")
            chunk = -(-model.n_layers // (p.pp * p.vpp))
            if p.recompute_layers > chunk and p.pp * p.vpp <= model.n_layers:  # else pp·vpp > n_layers, below
                errs.append(f"parallelism.recompute_layers = {p.recompute_layers} exceeds the layers of a "
                                 f"pipeline chunk (ceil(n_layers / (pp·vpp)) = {chunk})")
        if model.n_heads % p.tp:
            errs.append(f"parallelism.tp = {p.tp} must divide model.n_heads = {model.n_heads}")
        # KV heads: sharded when tp divides them, else replicated (each TP rank keeps a copy).
        if model.kv_heads % p.tp and p.tp % model.kv_heads:
            errs.append(
                f"parallelism.tp = {p.tp}: model.n_kv_heads = {model.kv_heads} must be divisible by tp "
                f"(sharded) or divide tp (replicated)"
            )
        if model.moe is None:
            if p.ep != 1:
                errs.append(f"parallelism.ep = {p.ep} needs an MoE model; allowed: 1")
            if p.etp is not None and p.etp != p.tp:
                errs.append(f"parallelism.etp = {p.etp} needs an MoE model (expert tensor parallelism splits "
                                 f"the routed experts); allowed for a dense model: unset or = tp ({p.tp})")
        else:
            if model.moe.n_experts % p.ep:
                errs.append(
                    f"parallelism.ep = {p.ep} must divide model.moe.n_experts = {model.moe.n_experts}"
                )
            if p.etp is None or p.etp == p.tp:
                if dp_ok and (dp * p.cp) % p.ep:
                    errs.append(
                        f"parallelism.ep = {p.ep} must divide dp·cp = {dp * p.cp} (experts are laid out "
                        "over the data-parallel ranks)"
                        + ("; with parallelism.etp < tp the expert group etp·ep may take TP ranks too"
                           if p.tp > 1 else "")
                    )
            else:
                # Megatron-Core parallel_state.initialize_model_parallel: expert_tensor_model_pipeline_
                # parallel_size = etp·ep·pp must divide world_size (a RuntimeError), i.e. etp·ep | tp·cp·dp.
                # The planner also needs etp | tp (the expert-TP group inside the TP group: the token
                # all-gather of the dispatcher runs on TP's link; etp > tp is not modelled).
                if p.tp % p.etp:
                    errs.append(
                        f"parallelism.etp = {p.etp} must divide tp = {p.tp} (allowed: a divisor of tp, "
                        f"{', '.join(str(k) for k in _divisors(p.tp))}; expert TP "
                        "above TP or not dividing it is not modelled)")
                if dp_ok and not p.tp % p.etp and (p.tp * p.cp * dp) % (p.etp * p.ep):  # etp ∤ tp: said above
                    errs.append(
                        f"parallelism: etp·ep = {p.etp}·{p.ep} = {p.etp * p.ep} must divide tp·cp·dp = "
                        f"{p.tp}·{p.cp}·{dp} = {p.tp * p.cp * dp} (Megatron-Core initialize_model_parallel: "
                        "world_size must be divisible by etp·ep·pp; the expert data-parallel size is "
                        "tp·cp·dp/(etp·ep))")
                if p.tp > 1 and not p.sequence_parallel:
                    errs.append(
                        f"parallelism.etp = {p.etp} ≠ tp = {p.tp} needs sequence_parallel = true (Megatron-Core's "
                        "MoELayer refuses MoE training with TP > 1 without sequence parallelism; with it each "
                        "TP rank dispatches its own tokens)")
        m_ok = dp_ok and not t.global_batch_size % (t.micro_batch_size * dp)  # a whole number of micro-batches
        if dp_ok and t.global_batch_size % (t.micro_batch_size * dp):
            errs.append(
                f"training.global_batch_size = {t.global_batch_size} is not divisible by "
                f"micro_batch_size·dp = {t.micro_batch_size}·{dp} = {t.micro_batch_size * dp}"
            )
        if t.seq_len % p.cp:
            errs.append(f"parallelism.cp = {p.cp} must divide training.seq_len = {t.seq_len}")
        if p.vpp > 1 and p.schedule != "interleaved":
            errs.append(f"parallelism.vpp = {p.vpp} needs schedule = 'interleaved' (got '{p.schedule}'): "
                             "set vpp = 1, or the interleaved schedule (the Plan page's 'interleaved 1F1B (VPP)')")
        if p.schedule == "interleaved" and p.pp == 1:
            errs.append("parallelism.schedule = 'interleaved' needs pp > 1")
        if p.schedule == "dualpipe":
            m_dp = t.global_batch_size // (t.micro_batch_size * dp)
            if p.pp < 2 or p.pp % 2:
                errs.append(f"parallelism.schedule = 'dualpipe' needs an even pp >= 2 (got pp = {p.pp}): "
                                 "DualPipe runs two pipelines in opposite directions")
            if m_ok and (m_dp % 2 or m_dp < 2 * p.pp):
                errs.append(f"parallelism.schedule = 'dualpipe' needs an even number of micro-batches, at "
                                 f"least 2·pp = {2 * p.pp} (DeepSeek's dualpipe.py: num_chunks % 2 == 0 and "
                                 f"num_chunks >= num_ranks·2); global_batch_size / (micro_batch_size·dp) = {m_dp}")
        stages = p.pp * p.vpp
        if stages > model.n_layers:
            errs.append(
                f"parallelism: pp·vpp = {stages} exceeds model.n_layers = {model.n_layers}"
            )
        if stages <= model.n_layers and model.n_layers % stages and p.layer_split == "even":
            errs.append(
                f"parallelism: model.n_layers = {model.n_layers} is not divisible by pp·vpp = {stages}; "
                "set parallelism.layer_split = 'uneven' to give the first stages one extra layer"
            )
        if m_ok and p.schedule == "interleaved" and (t.global_batch_size // (t.micro_batch_size * dp)) % p.pp:
            errs.append(
                f"parallelism.schedule = 'interleaved' needs the number of micro-batches "
                f"({t.global_batch_size // (t.micro_batch_size * dp)}) to be a multiple of pp = {p.pp}"
            )
        if p.offload_optimizer == "nvme" and system.local_nvme_bytes <= 0:
            errs.append(
                f"parallelism.offload_optimizer = 'nvme' but system '{system.name}' has no local NVMe"
            )
        if (p.offload_master_weights or p.offload_grads) and p.offload_optimizer == "none":
            errs.append(
                "parallelism.offload_master_weights / offload_grads need offload_optimizer = 'cpu' or 'nvme'"
            )
        if errs:
            raise ValueError(CROSS_CHECK_SEP.join(errs))
        return self

    # Convenience -------------------------------------------------------------------------
    def resolved_model(self) -> ModelSpec:
        from . import catalog

        return catalog.resolve_model(self.model)

    def resolved_accelerator(self) -> Accelerator:
        """The accelerator the scenario runs on: ``cluster.accelerator`` if given, else its system's
        (ids resolved from the catalogue, inline entries as given)."""
        from . import catalog

        c = self.cluster
        return catalog.resolve_accelerator(
            c.accelerator if c.accelerator is not None else catalog.resolve_system(c.system).accelerator)

    def to_json_dict(self) -> dict[str, Any]:
        """The scenario as JSON-ready data (aliases such as ``async`` restored)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=False)


# --------------------------------------------------------------------------------------
# Error formatting
# --------------------------------------------------------------------------------------


def _models_in(ann) -> list:
    """Pydantic models an annotation holds: ``X``, ``X | None``, ``str | X``, ``list[X]``."""
    models = [a for a in (typing.get_args(ann) or (ann,)) if isinstance(a, type) and issubclass(a, BaseModel)]
    for a in typing.get_args(ann):  # list[Model]
        models += [x for x in typing.get_args(a) if isinstance(x, type) and issubclass(x, BaseModel)]
    return models


def _at_loc(loc: tuple) -> tuple[Any, list] | None:
    """What an error location ``loc`` inside a :class:`Scenario` points at: (the model class there,
    or None for a plain field; the constraint metadata of the last field, or of a dict's values
    for a dict key), or None where ``loc`` names no field. List indexes and pydantic's union-branch
    tags are skipped (a list element is the list's model)."""
    cls: Any = Scenario
    ann: Any = None
    meta: list = []
    for part in loc:
        if isinstance(part, int) or str(part)[:1].isupper() or str(part).startswith(("function-", "union[")):
            continue
        if ann is not None and typing.get_origin(ann) is dict:  # a dict's key: its value type's bounds
            val = typing.get_args(ann)[1]
            meta = [m for a in typing.get_args(val)[1:] for m in getattr(a, "metadata", [a])]
            ann = cls = None
            continue
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
            return None
        field = cls.model_fields.get(part) or next(
            (f for f in cls.model_fields.values() if f.alias == part), None)
        if field is None:
            return None
        ann, meta = field.annotation, list(field.metadata)
        extra = field.json_schema_extra
        if isinstance(extra, dict) and isinstance(extra.get("maximum"), (int, float)):
            # an upper bound checked by a validator (training.tokens_total): named in the range too
            # (found by review: tokens_total = 0 said only "greater than 0", not the 1e16 ceiling)
            import annotated_types as _at

            meta.append(_at.Le(extra["maximum"]))
        args = [a for a in (typing.get_args(ann) or ()) if a is not type(None)]
        if typing.get_origin(ann) in (Union, types.UnionType) and len(args) == 1:
            ann = args[0]  # Optional[X]
        if typing.get_origin(ann) is Annotated:
            meta += [m for a in typing.get_args(ann)[1:] for m in getattr(a, "metadata", [a])]
            ann = typing.get_args(ann)[0]
        models = _models_in(ann)
        cls = models[0] if models else None
    return cls, meta


def _allowed_fields(loc: tuple) -> list[str]:
    """Field names of the model at ``loc`` inside a :class:`Scenario` (``()`` → the sections);
    [] where the location is not a model (a dict, a list element of unknown type)."""
    at = _at_loc(loc)
    cls = at[0] if at else None
    if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
        return []
    return sorted(n if f.alias is None else f.alias for n, f in cls.model_fields.items())


def _bound_meta(loc: tuple) -> tuple[float | None, bool, float | None, bool]:
    """(lower, lower is open, upper, upper is open) of the number field at ``loc`` inside a
    :class:`Scenario`, from its annotation (``ge`` / ``gt``, ``le`` / ``lt``; a dict's values: its
    value type's); None for a missing bound."""
    import annotated_types as at

    found = _at_loc(loc)
    meta = found[1] if found else []
    lo_m = next((m for m in meta if isinstance(m, (at.Ge, at.Gt))), None)
    hi_m = next((m for m in meta if isinstance(m, (at.Le, at.Lt))), None)
    lo = None if lo_m is None else (lo_m.ge if isinstance(lo_m, at.Ge) else lo_m.gt)
    hi = None if hi_m is None else (hi_m.le if isinstance(hi_m, at.Le) else hi_m.lt)
    return lo, isinstance(lo_m, at.Gt), hi, isinstance(hi_m, at.Lt)


def _bounds_at(loc: tuple) -> tuple[float | None, float | None]:
    """(lower, upper) bound of the number field at ``loc`` inside a :class:`Scenario` (``ge`` /
    ``gt`` and ``le`` / ``lt``, from its annotation; a dict's values: its value type's), or
    (None, None) where ``loc`` is not such a field. :func:`_range_text` says which are open."""
    lo, _, hi, _ = _bound_meta(loc)
    return lo, hi


def _num(x: float) -> str:
    """A bound as the user would type it: 4,194,304, 0.01, 1e+08; one that six significant digits
    would round (0.1 GiB = 107,374,182.4 B printed "1.07374e+08", which is itself refused: found by
    review 23) in as many decimals as it needs."""
    x = float(x)
    if x.is_integer() and abs(x) <= 1e7:
        return f"{int(x):,}"
    g = f"{x:g}"
    if float(g) == x:
        return g
    if 1e-3 <= abs(x) < 1e15:
        for d in range(0, 12):
            s = f"{x:,.{d}f}"
            if float(s.replace(",", "")) == x:
                return s
    return repr(x)


def _range_text(loc: tuple, kind: str = "") -> str:
    """``allowed 1 to 4,194,304`` for the field at ``loc``; an open bound (``gt`` / ``lt`` in the
    field's annotation) reads "more than" / "less than" (found by review: the open side was taken
    from the bound crossed, so model.dropout = -1 read "allowed 0 to 1", 1 being excluded), a
    missing one is left out. ``kind`` (the pydantic error type) is no longer needed."""
    lo, lo_open, hi, hi_open = _bound_meta(loc)
    left = None if lo is None else (f"more than {_num(lo)}" if lo_open else _num(lo))
    right = None if hi is None else (f"less than {_num(hi)}" if hi_open else _num(hi))
    if left is None:
        return f"allowed up to {right}" if right is not None else "out of range"
    if right is None:
        return f"allowed {left}" if lo_open else f"allowed {left} or more"
    text = f"allowed {left} to {right}" if not (lo_open or hi_open) else f"allowed {left}, up to {right}"
    field = str(loc_fields(loc)[-1]) if loc_fields(loc) else ""
    if field.endswith("_bytes") and not (lo_open or hi_open):
        # a memory size names its unit, and the GiB the Plan page's boxes use (review 43: "allowed
        # 107,374,182.4 to 1e+14" left the fractional byte count, 0.1 GiB, to decode)
        gib = [f"{v:,.6g}" if v < 1e6 else f"{v:,.0f}" for v in (lo / 2**30, hi / 2**30)]
        text += f" bytes ({gib[0]} to {gib[1]} GiB)"
    return text


#: Parts of a pydantic error location that name no field: the ``str`` branch of an id-or-object
#: union, the validators and the classes of a nested model.
_LOC_TAGS = frozenset({"str", "System", "Accelerator", "ModelSpec", "StorageTier", "FailureProfile"})


def loc_fields(loc: tuple) -> tuple:
    """A pydantic error location without its union branches, validators and class names: the
    fields and list indices only (``('cluster', 'system', 'function-after[…]')`` →
    ``('cluster', 'system')``)."""
    return tuple(x for x in loc if not (isinstance(x, str) and (x in _LOC_TAGS or x.startswith(("function-", "union[")))))


def _loc_str(loc: tuple) -> str:
    parts = []
    for x in loc_fields(loc):
        parts.append(f"[{x}]" if isinstance(x, int) else ("." if parts else "") + str(x))
    return "".join(parts) or "(scenario)"


def is_whole_number(v) -> bool:
    """True for a Python or numpy integer (``bool`` excluded), or a float with no fractional part
    up to 2^53 (``1000.0``, ``1e3``: what pydantic's lax mode takes for the scenario's integer
    fields, so ``n_trials=1e3`` is read as ``tp=8.0`` is): what counts, trials, seeds and row
    limits of the public API accept. Callers convert with ``int()`` after the check."""
    import numpy as np

    if isinstance(v, (bool, np.bool_)):
        return False
    if isinstance(v, (int, np.integer)):
        return True
    return isinstance(v, (float, np.floating)) and bool(np.isfinite(v)) and float(v).is_integer() \
        and abs(float(v)) <= 2.0**53


class InputError(ValueError):
    """Bad input to the public API (``planner.evaluate``, ``sweep``, ``simulate``): the message is
    one line, every problem as ``field.path: message (got value)`` joined by ``; `` (the lines
    of :func:`format_errors`, also in ``.lines``), without pydantic's internals."""

    def __init__(self, lines: list[str]):
        self.lines = list(lines)
        super().__init__("; ".join(self.lines))

    def __reduce__(self):  # pickled whole (from a worker process), not rebuilt from the message
        return (type(self), (self.lines,))


class JsonTextError(ValueError):
    """A JSON text :func:`loads_json` refuses although ``json`` reads it (a key given twice, an
    integer of more than 400 digits)."""


class _DuplicateKey(JsonTextError):
    """A JSON object that names a key twice (json.loads keeps the last without a word)."""


def _pairs_once(pairs: list) -> dict:
    """``object_pairs_hook`` of :func:`read_json_file`: refuses a key given twice in one object
    (review 20: ``"n_gpus": 1024, "n_gpus": 512`` ran with 512, which the user never meant)."""
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(f"key '{k}' given twice in one object ({_short_json(out[k])}, then {_short_json(v)}); "
                                "give it once")
        out[k] = v
    return out


def _short_json(v: Any) -> str:
    import json
    t = json.dumps(v, ensure_ascii=False)
    return t if len(t) <= 40 else t[:37] + "..."


class _NumberTooLong(JsonTextError):
    """An integer of a JSON text past any field's range (and Python's int-conversion limit)."""


#: Deepest nesting of objects and lists an input file may have: a scenario nests 5 levels, a Hugging
#: Face config.json 3 or 4. Deeper, Python's recursion limit was met later, in a copy of the data,
#: as a RecursionError traceback (review 43a: a value nested 600 lists deep).
JSON_DEPTH_MAX = 64


def _depth_at_most(v: Any, limit: int) -> bool:
    stack = [(v, 1)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, (dict, list)):
            if d > limit:
                return False
            stack.extend((y, d + 1) for y in (x.values() if isinstance(x, dict) else x))
    return True


def loads_json(text: str) -> Any:
    """``json.loads`` as every input file is read: a key given twice in one object, integers of
    more than 400 digits and nesting deeper than :data:`JSON_DEPTH_MAX` are refused (a
    ``ValueError`` with a message a user can act on)."""
    import json

    try:
        data = json.loads(text, object_pairs_hook=_pairs_once, parse_int=_json_int)
    except RecursionError:
        raise JsonTextError(f"nested too deeply (more than {JSON_DEPTH_MAX} levels of objects and lists)") from None
    if not _depth_at_most(data, JSON_DEPTH_MAX):
        raise JsonTextError(f"nested too deeply (more than {JSON_DEPTH_MAX} levels of objects and lists)")
    return data


def _json_int(text: str) -> int:
    """``parse_int`` of :func:`read_json_file`: Python refuses to convert integers of more than
    4,300 digits with advice about ``sys.set_int_max_str_digits`` (review 20); no field takes one."""
    digits = len(text.lstrip("-"))
    if digits > 400:
        raise _NumberTooLong(f"a whole number of {digits:,} digits, beyond any field's allowed range")
    return int(text)


def read_json_file(path: "str | Path", what: str = "a JSON file") -> Any:
    """The parsed content of a JSON file (``"-"``: standard input); :class:`InputError` naming the
    file and the problem (missing, a folder, not UTF-8, unreadable, not valid JSON) — never a
    traceback.
    ``what`` completes the hints, e.g. ``"a scenario JSON file"``."""
    import json
    from pathlib import Path

    if not str(path).strip():
        raise InputError([f"no file given (an empty path); give {what}"])
    p = Path(path)
    try:
        if str(path) == "-":  # standard input, as the command line reads '-' (review 42a)
            import sys

            data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode("utf-8")
            path = "- (standard input)"
            text = data.decode("utf-8-sig")
        else:
            # utf-8-sig: a byte-order mark (Windows Notepad writes one) is dropped, as the CSV reader does
            text = p.read_text(encoding="utf-8-sig")
        if not text.strip():  # review 48g: "Expecting value at line 2" for an empty pipe
            raise InputError([f"{path}: empty (no JSON in it); give {what}"])
        return loads_json(text)
    except InputError:
        raise
    except JsonTextError as e:  # a key given twice, a 5,000-digit integer
        raise InputError([f"{path}: {e}"]) from None
    except FileNotFoundError:
        raise InputError([f"{path}: no such file"]) from None
    except IsADirectoryError:
        raise InputError([f"{path}: is a folder; give {what}"]) from None
    except UnicodeDecodeError:
        raise InputError([f"{path}: not UTF-8 text; give {what}"]) from None
    except OSError as e:
        raise InputError([f"{path}: cannot be read ({e.strerror})"]) from None
    except json.JSONDecodeError as e:
        raise InputError([f"{path}: not valid JSON ({e.msg} at line {e.lineno})"]) from None
    except ValueError as e:  # e.g. an integer too long for Python's int conversion
        raise InputError([f"{path}: not valid JSON ({e})"]) from None
    except RecursionError:  # [[[[…]]]] nested past Python's recursion limit
        raise InputError([f"{path}: not valid JSON (nested too deeply)"]) from None


def validate_scenario(data: "Scenario | dict") -> "Scenario":
    """A :class:`Scenario` from a Scenario or a JSON-like dict; raises :class:`InputError`
    (a ``ValueError``) naming each bad field.

    A Scenario object is validated again (from its own dump): fields set after it was built
    (``s.parallelism.tp = 3``) or through ``model_copy(update=...)`` skip pydantic's checks,
    and an invalid split would otherwise be evaluated (0.1 ms per scenario)."""
    if isinstance(data, Scenario):
        data = data.model_dump(by_alias=True)
    try:
        return Scenario.model_validate(data)
    except ValidationError as e:
        raise InputError(format_errors(e)) from None


#: What an "id or inline object" field takes, by the object's class (pydantic's "Input should be a
#: valid dictionary or instance of ModelSpec" named a class the user never sees: review h29a F2).
_ID_OR_OBJECT = {
    "ModelSpec": "a model preset id (planner presets models) or an object with the model's fields",
    "System": "a system id (planner presets hardware) or an object with the system's fields",
    "Accelerator": ("an accelerator id (planner presets hardware), an object with the accelerator's fields, "
                    "or null (the system's own)"),
    "StorageTier": "a storage tier id (planner presets hardware) or an object with the tier's fields",
    "FailureProfile": "a failure profile id (planner presets hardware) or an object with the profile's fields",
}


def _shown_value(value: Any, json_spelling: bool) -> str:
    """A value as the message quotes it: Python's repr, or with ``json_spelling`` null / true /
    false for None / True / False, as the user typed them in JSON or ``--set`` (review h29a F2:
    ``--set parallelism.tp=null`` said "(got None)")."""
    if json_spelling:
        if value is None or isinstance(value, bool):
            return json.dumps(value)
        if isinstance(value, (list, dict)):
            try:
                return json.dumps(value, allow_nan=False, ensure_ascii=False)
            except (TypeError, ValueError, RecursionError):
                pass
    # a numpy scalar as the number it holds: nan, 3.0, 7 (was "np.float64(nan)", numpy 2's repr)
    if type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        try:
            value = value.item()
        except (TypeError, ValueError):
            pass
    try:
        return repr(value)
    except ValueError:
        # Python refuses to print an int of more than 4,300 digits (review 44a: n_gpus = 10**5000
        # from the API was a ValueError traceback in the message's own formatting)
        if isinstance(value, int):
            digits = int(math.log10(abs(value))) + 1
            return f"a {'negative ' if value < 0 else ''}whole number of {digits:,} digits"
        return f"a {type(value).__name__} holding a number too large to print"


def _not_a_scenario(value: Any) -> str:
    """The message for a whole scenario that is not a Scenario or dict: a string gets a pointer to
    :func:`planner.load_preset` (review h29a F3: ``planner.evaluate("default")`` said only "Input
    should be a valid dictionary or instance of Scenario")."""
    head = "the scenario must be a planner.Scenario or a dict of its fields"
    if not isinstance(value, str):
        return head
    try:
        from . import catalog

        ids = catalog.scenario_presets_raw()
    except Exception:  # a broken catalogue: the pointer without the check
        ids = {}
    got = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    if value.strip() in ids:
        return f"{head}, not a string (got {got}): a preset id? use planner.load_preset({value.strip()!r})"
    return (f"{head}, not a string (got {got}), and no preset id: planner.list_presets() lists the ids, "
            "planner.load_preset(id) loads one")


def format_errors(err: ValidationError | ValueError, prefix: str = "", json_spelling: bool = False) -> list[str]:
    """One human line per problem: ``field.path: message (got value)``.

    Used by the CLI (exit status 2), the UI (``st.error`` / ``st.warning``) and share links.
    For union fields (id or inline object) only the most specific branch is reported.
    ``json_spelling``: the input was JSON (a file, ``--set``): values read null / true / false,
    not Python's None / True / False.
    """
    if not isinstance(err, ValidationError):
        return [f"{prefix}{err}"]
    lines: list[str] = []
    seen: set[str] = set()
    errors = err.errors(include_url=False)
    # For "id or inline object" unions pydantic reports every branch; keep the string branch
    # when the input was a string, the object branch otherwise.
    for e in errors:
        loc = tuple(e.get("loc", ()))
        inp = e.get("input")
        if "str" in loc and not isinstance(inp, str) and e.get("type") != "extra_forbidden":
            continue  # the string branch of an "id or inline object" union, given an object
        if any(str(x)[:1].isupper() for x in loc if isinstance(x, str)) and isinstance(inp, str) and len(loc) > 1:
            # object branch of a union that got a string
            if loc[-1] not in ("str",):
                pass
        msg = e.get("msg", "invalid")
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, ") :]
        if e.get("type") == "value_error" and CROSS_CHECK_SEP in msg:  # several problems of one check
            for part in msg.split(CROSS_CHECK_SEP):
                where_p = _loc_str(loc)
                line = f"{prefix}{where_p}: {part}" if where_p != "(scenario)" else f"{prefix}{part}"
                if line not in seen:
                    seen.add(line)
                    lines.append(line)
            continue
        where = _loc_str(loc)
        shown = ""
        # a list or object where a number / string / flag is expected is shown too (found by
        # review: --set parallelism.tp=[8] said "should be a valid integer" without the value)
        scalar_expected = str(e.get("type", "")) in ("int_type", "float_type", "bool_type", "string_type",
                                                      "int_parsing", "float_parsing", "bool_parsing")
        if e.get("type") not in ("value_error", "assertion_error", "missing") and (
                scalar_expected or not isinstance(inp, (dict, list))):
            r = _shown_value(inp, json_spelling)
            shown = f" (got {r[:57] + '...' if len(r) > 60 else r})"
        union_class = next((str(x).rsplit(", ", 1)[-1].rstrip("]") for x in loc[-1:]
                            if str(x).rsplit(", ", 1)[-1].rstrip("]") in _ID_OR_OBJECT), None)
        if e.get("type") == "model_type" and not loc:
            msg = _not_a_scenario(inp)
            if isinstance(inp, str):
                shown = ""  # quoted in the message, before the pointer
        elif e.get("type") == "model_type" and union_class:
            msg = f"must be {_ID_OR_OBJECT[union_class]}"
        elif e.get("type") == "model_type":
            # pydantic's "instance of Training" names a class the user never sees (review h29c F-3)
            fields = _allowed_fields(loc)
            msg = ("must be an object (JSON {…}) of its fields"
                   + (f": {', '.join(fields[:8])}{', …' if len(fields) > 8 else ''}" if fields else ""))
        elif e.get("type") == "value_error" and msg.startswith(("a number, not ", "a whole number, not ")):
            # --set parallelism.tp=true: the range too, as a number of the wrong kind names it
            kind, got = msg.split(", not ", 1)
            rng = (_range_text(loc, '') if _bounds_at(loc) != (None, None)
                   else _RANGE_WORDS.get(str(loc[-1])) if loc else None)  # review 42a: power_limit_w=abc
            msg = f"must be {kind}" + (f", {rng}" if rng else "") + f" (got {got})"
        if e.get("type") == "extra_forbidden":
            head = _loc_str(loc[:-1])  # the unknown key itself is always named (even 'str')
            where = f"{head}.{loc[-1]}" if head != "(scenario)" else str(loc[-1])
            allowed = _allowed_fields(loc[:-1])
            if allowed:
                msg = f"unknown field; allowed: {', '.join(allowed)}"
        elif e.get("type") in ("less_than_equal", "greater_than_equal", "less_than", "greater_than") and (
                None not in _bounds_at(loc)) and not (isinstance(inp, str) and str(inp).strip().lower() in (
                "nan", "inf", "-inf", "+inf", "infinity")):
            # name the whole range, not only the bound crossed (found by review: "Input should be
            # greater than or equal to 100000000" left the upper bound to guess)
            msg = _range_text(loc, str(e.get("type")))
        elif e.get("type") in ("less_than_equal", "greater_than_equal", "less_than", "greater_than") and isinstance(
                inp, (str, float)) and str(inp).strip().lower() in ("nan", "inf", "-inf", "+inf", "infinity"):
            # the whole range where the field has both bounds (found by review: pue = inf said
            # only "less than or equal to 3")
            msg = (f"must be a finite number; {_range_text(loc, '')}" if None not in _bounds_at(loc)
                   else f"must be a finite number; {msg[0].lower()}{msg[1:]}")
        elif e.get("type") == "finite_number" and None not in _bounds_at(loc):
            msg = f"must be a finite number; {_range_text(loc, '')}"
        elif e.get("type") in ("less_than_equal", "greater_than_equal", "less_than", "greater_than") and (
                None in _bounds_at(loc)) and _bounds_at(loc) != (None, None):
            msg = _range_text(loc, str(e.get("type")))
        elif e.get("type") == "int_parsing_size" and _bounds_at(loc) != (None, None):
            # review 20: --set parallelism.tp=1e30 said "Unable to parse input string as an
            # integer, exceeded maximum size" without the range
            msg = f"out of range; {_range_text(loc, '')}"
        elif str(e.get("type", "")) in ("int_type", "int_parsing", "int_from_float", "float_type",
                                         "float_parsing") and _bounds_at(loc) != (None, None):
            # a number of the wrong kind names the range too (found by review 16f: --set
            # model.n_layers=2.5 said "should be a valid integer" without what is allowed), in the words
            # the other refusals use (review h29c: "Input should be a valid integer" beside "must be a number")
            msg = ("must be a whole number" if msg.startswith("Input should be a valid integer")
                   else "must be a number" if msg.startswith("Input should be a valid number") else msg)
            msg = f"{msg}, {_range_text(loc, '')}"
        elif e.get("type") == "missing" and _bounds_at(loc) != (None, None):
            # a required number names its range too (found by review 16c: an inline accelerator
            # without a price said only "Field required")
            msg = f"{msg} ({_range_text(loc, '')})"  # no "; ": that separates whole problems
        elif e.get("type") == "string_too_long" and isinstance(inp, str):
            # in the house's words, as a share link's refusal of the same name (review 50: pydantic's
            # "String should have at most 200 characters")
            msg = f"{len(inp):,} characters; allowed at most {int((e.get('ctx') or {}).get('max_length', 0)):,}"
        elif e.get("type") == "missing" and tuple(loc) in _MISSING_WORDS:
            # a required catalogue choice says what it takes (review 48g: "model: Field required")
            msg = f"{msg} ({_MISSING_WORDS[tuple(loc)]()})"
        if msg.startswith("Input should be "):  # pydantic's words, in the ones the other refusals use
            msg = "must be " + msg[len("Input should be "):]  # (review h29d: "Input should be 'a', 'b'")
            if msg.startswith("must be a valid boolean"):
                msg = "must be true or false"
            msg = msg.replace("must be a valid string", "must be a string").replace("must be a valid list",
                                                                                     "must be a list")
        line = f"{prefix}{where}: {msg}{shown}" if where != "(scenario)" else f"{prefix}{msg}{shown}"
        if line not in seen:
            seen.add(line)
            lines.append(line)
    return lines


def _ids(kind: str) -> str:
    """The catalogue's ids of ``kind`` (models, systems), comma-separated, for a refusal's text."""
    from . import catalog  # local import: catalog imports this module

    try:
        return ", ".join(getattr(catalog, kind)())
    except Exception:  # noqa: BLE001 - the message stays useful without the list
        return "see planner presets hardware"


#: What a required field that has no range takes, in words, by its location (review 48g).
_MISSING_WORDS = {
    ("model",): lambda: ("a catalogue model id (planner presets models: " + _ids("models")
                         + ") or an inline architecture object"),
    ("cluster",): lambda: "an object with system (a catalogue id) and n_gpus",
    ("cluster", "system"): lambda: "a catalogue system id (" + _ids("systems") + ") or an inline system object",
}


#: The range, in words, of a field whose bounds depend on another field (checked in
#: ``Scenario._check``, so the annotation has none for :func:`_range_text` to read).
_RANGE_WORDS = {
    "power_limit_w": f"allowed {POWER_LIMIT_MIN_FRAC:g}·TDP to the accelerator's TDP in W (H100 SXM: 175 to 700), "
                     "or null for the TDP",
}


def scenario_from_json(data: Any) -> Scenario:
    """Validate JSON-like data into a :class:`Scenario` (raises ``ValidationError``)."""
    return Scenario.model_validate(data)


def _finite(x: float) -> bool:
    return math.isfinite(x)
