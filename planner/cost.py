"""Pipeline stage 5: wall time to train, GPU-hours, dollars and energy (DESIGN §4.5).

Formulas (per configuration, arrays of shape (N,))::

    wall_s             = tokens_total / tokens_per_s / goodput
    time_to_train_days = wall_s / 86400
    gpu_hours          = (n_gpus + hot_spare_nodes · gpus_per_node) · wall_s / 3600
    cost_usd           = gpu_hours · price_per_gpu_hour_usd
    cost_per_m_tokens_usd = cost_usd / tokens_total · 1e6
    energy_mwh         = (n_gpus / gpus_per_node) · node_power_w · utilisation_power_frac · pue · wall_s/3600 / 1e6

``node_power_w`` is the whole node's power (GPUs, CPUs, NICs, fans) as published by the
vendor, charged in proportion to the GPUs used (a job on 1 GPU of an 8-GPU node is charged an
eighth of the node, as its GPU-hours are; found by review: the whole node was charged, 9.8 kWh
per GPU-hour against 1.2 on a full node); for whole nodes this is ``n_nodes``; where it is missing (0 or NaN) ``gpus_per_node · tdp_w`` is used instead (GPU power
only: an underestimate). Power draw is taken as the constant ``utilisation_power_frac`` of it
for the whole wall time, failures and restarts included (a simplification: idle nodes draw
less). Hot spare nodes (``reliability.hot_spare_nodes``) are reserved for the whole run, so
their GPU-hours are paid: ``gpu_hours`` and ``cost_usd`` count them (found by review: spares
were free, so more spares always looked cheaper); their power is not counted in the energy (an
idle node's draw is not modelled). ``goodput = 0`` (no progress in expectation, e.g. a
frequent failure class that no enabled checkpoint tier survives) gives infinite time and cost;
:func:`notes` and :func:`explain` then say why (:func:`planner.reliability.zero_goodput_reason`).
So does a goodput above 0 so small that the time, GPU-hours, cost or energy exceeds the largest
float (about 1.8e308; a goodput near 1e-300, e.g. recoveries of ~700 mean times between
failures): all four are then inf together, the run never finishes in practice, and the notes
say so with the goodput. The products are taken in an order whose intermediates stay below the
result (``n · (wall / 3600)``, ``power · (wall_h / 1e6)``). Found by review: ``n · wall / 3600``
overflowed with a RuntimeWarning to an infinite ``gpu_hours`` of a finite 4.9e306 beside a
finite ``time_to_train_days`` of 2e302, and the explain blamed a goodput of 0.

Billing is per GPU used: a job that leaves GPUs of its last node idle (12 GPUs on 8-GPU nodes), or
of the NVL72 racks the step time places it on (64 to a rack, :func:`planner.comm.placement_domain`),
is charged for the GPUs it uses; :func:`notes` then gives what whole nodes or racks would bill
(found by review 16c: said nowhere). The price note states the price charged and, where the batch
carries ``price_override``, whether it is the scenario's own or the catalogue's (found by review
16c: it called the DeepSeek-V3 preset's own $2 "the catalogue's figure", and the A100's $2.97,
a Capacity Block / on-demand midpoint, "AWS on-demand").

Reads ``tokens_per_s`` (stage 3, timing) and ``goodput`` (stage 4: the renewal model's expected
goodput, the headline; not the first-order ``goodput_first_order``, which collapses to 0 when
failures are frequent). While the timing stage is missing, the columns are NaN and
:func:`notes` says why.
"""

from __future__ import annotations

import re

import numpy as np

from . import catalog
from .reliability import zero_goodput_reason

SECONDS_PER_DAY = 86_400.0
SECONDS_PER_HOUR = 3_600.0
W_H_PER_MWH = 1e6
#: ``cost_per_m_tokens_usd`` is per million trained tokens (review 26, h26c: the README's "how much
#: useful work does each dollar buy?" had no figure; the tokens are the useful work, the goodput's
#: losses are in the cost).
TOKENS_PER_MILLION = 1e6


def wall_time_s(tokens_total, tokens_per_s, goodput):
    """Wall time to train [s]: ``tokens_total / tokens_per_s / goodput``; inf where goodput = 0."""
    t = np.asarray(tokens_total, dtype=float)
    r = np.asarray(tokens_per_s, dtype=float)
    g = np.asarray(goodput, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a goodput of 1e-300: inf
        w = t / r / g
    return np.where((g <= 0) & (t > 0), np.inf, w)


def energy_mwh(n_nodes, node_power_w, utilisation_power_frac, pue, wall_s, *, gpus_per_node=None, tdp_w=None):
    """Facility energy [MWh] = n_nodes · node_power_w · utilisation_power_frac · pue · wall_h / 1e6
    (``n_nodes`` may be fractional: the GPUs' share of a partly used node).

    Falls back to ``gpus_per_node · tdp_w`` where ``node_power_w`` is 0 or NaN (if given).
    """
    p = np.asarray(node_power_w, dtype=float)
    if gpus_per_node is not None and tdp_w is not None:
        fallback = np.asarray(gpus_per_node, dtype=float) * np.asarray(tdp_w, dtype=float)
        p = np.where(np.isfinite(p) & (p > 0), p, fallback)
    wall_h = np.asarray(wall_s, dtype=float) / SECONDS_PER_HOUR
    power_w = np.asarray(n_nodes, dtype=float) * p * np.asarray(utilisation_power_frac, dtype=float) \
        * np.asarray(pue, dtype=float)
    # no power drawn: no energy, however long (found by review: 0 W for a run that never finishes
    # gave 0 · inf = NaN and a RuntimeWarning)
    with np.errstate(invalid="ignore", over="ignore"):  # beyond the float range: inf (stage() says why)
        return np.where(power_w == 0, 0.0, power_w * (wall_h / W_H_PER_MWH))  # NaN power stays NaN


def paid_gpus(b) -> np.ndarray:
    """GPUs paid for over the run, shape (N,): the job's ``n_gpus`` plus the hot spare
    nodes' GPUs (``hot_spare_nodes · gpus_per_node``; 0 where the column is absent)."""
    n = np.asarray(b["n_gpus"], dtype=float)
    if "hot_spare_nodes" not in b:
        return n
    return n + np.asarray(b["hot_spare_nodes"], dtype=float) * np.asarray(b["gpus_per_node"], dtype=float)


def stage(b) -> dict[str, np.ndarray]:
    """Stage 5: ``time_to_train_days``, ``gpu_hours``, ``cost_usd``, ``energy_mwh`` and
    ``cost_per_m_tokens_usd`` (``cost_usd / tokens_total · 1e6``: USD per million trained tokens,
    the failures' and checkpoints' losses included through the wall time), shape (N,).

    NaN columns where ``tokens_per_s`` (timing stage) or ``goodput`` is not available yet.
    """
    n = len(b["n_gpus"])
    nan = np.full(n, np.nan)
    rate = np.asarray(b["tokens_per_s"], dtype=float) if "tokens_per_s" in b else nan
    goodput = np.asarray(b["goodput"], dtype=float) if "goodput" in b else nan
    wall = wall_time_s(b["tokens_total"], rate, goodput)
    wall, gpu_hours, cost, energy = bill(b, wall)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        per_m = cost / np.asarray(b["tokens_total"], dtype=float) * TOKENS_PER_MILLION
    return {
        "time_to_train_days": wall / SECONDS_PER_DAY,
        "gpu_hours": gpu_hours,
        "cost_usd": cost,
        "energy_mwh": energy,
        "cost_per_m_tokens_usd": per_m,
    }


def bill(b, wall):
    """GPU-hours, dollars and energy of a wall time: ``(wall_s, gpu_hours, cost_usd, energy_mwh)``,
    the formulas of the module docstring; ``b``'s columns broadcast against ``wall`` [s] (a batch
    of N rows with N wall times, or one row with a wall time per Monte Carlo run). Where one of
    them is beyond the float range, all four are inf (energy stays 0 where no power is drawn)."""
    wall = np.asarray(wall, dtype=float)
    with np.errstate(over="ignore"):  # a goodput near 1e-300: beyond the float range, handled below
        # wall / 3600 first: paid_gpus · wall overflowed where the GPU-hours themselves are a float
        gpu_hours = paid_gpus(b) * (wall / SECONDS_PER_HOUR)
        cost = gpu_hours * np.asarray(b["price_per_gpu_hour_usd"], dtype=float)
    energy = energy_mwh(np.asarray(b["n_gpus"], dtype=float) / np.asarray(b["gpus_per_node"], dtype=float),
                        b["node_power_w"], b["utilisation_power_frac"], b["pue"],
                        wall, gpus_per_node=b["gpus_per_node"],
                        tdp_w=b["power_limit_w"] if "power_limit_w" in b else b["tdp_w"])
    # One of them beyond the float range: the run never finishes in practice, and all four say so
    # (inf), not a finite time beside an infinite cost (energy stays 0 where no power is drawn).
    never = np.isinf(wall) | np.isinf(gpu_hours) | np.isinf(cost) | np.isinf(energy)
    if never.any():
        wall = np.where(never, np.inf, wall)
        gpu_hours = np.where(never, np.inf, gpu_hours)
        cost = np.where(never, np.inf, cost)
        energy = np.where(never & (energy != 0.0), np.inf, energy)
    return wall, gpu_hours, cost, energy


def _never_reason(row: dict) -> str:
    """Why a row's time to train is infinite, in words: the goodput of 0 (reliability's reason),
    or a goodput above 0 too small for the time, GPU-hours, cost or energy to be a float."""
    why = zero_goodput_reason(row)
    if why:
        return why
    g = row.get("goodput", 0.0)
    if g is not None and g > 0.0:
        return (f"goodput is {_g(g)}, above 0 but so small that the expected time (tokens / tokens_per_s / "
                "goodput), its GPU-hours, cost or energy exceed the largest float (1.8e308): the run never "
                "finishes in practice (failures and recoveries take nearly all the time; see the goodput's "
                "explain)")
    return "goodput is 0"


def _never_short(row: dict) -> str:
    """:func:`_never_reason` cut to its first clause where reliability's goodput-0 note (which
    :func:`planner.reliability.notes` adds) gives the rest — the time, GPU-hours, cost, energy and
    cost per token explanations and the note here each repeated the whole of it, seven times in the
    CLI's output (review 41b D8)."""
    why = _never_reason(row)
    if zero_goodput_reason(row) is None:
        return why
    cut = min((i for i in (why.find("; "), why.find(". ")) if i > 0), default=len(why))
    return why[:cut] + (" (the note 'Goodput is 0' gives the rest)" if cut < len(why) else "")


def _g(x: float) -> str:
    return f"{x:.4g}"


def _w(x: float) -> str:
    """A power in W: whole watts in plain digits from 1,000 W on ("10200 W"; ``.4g`` wrote "1.02e+04 W",
    review h27b; no thousands separator, so the formula's numbers still parse as numbers), else
    four significant digits."""
    x = float(x)
    return f"{x:.0f}" if np.isfinite(x) and abs(x) >= 1000 else _g(x)


def explain(row: dict) -> dict[str, str]:
    """Formula strings with one scenario's numbers plugged in."""
    days = row.get("time_to_train_days", np.nan)
    if days is not None and np.isinf(days):
        why = _never_short(row)
        s = f"tokens / tokens_per_s / goodput {_g(row.get('goodput', 0.0))} = inf: {why}"
        out = {k: s for k in ("time_to_train_days", "gpu_hours", "cost_usd", "energy_mwh", "cost_per_m_tokens_usd")}
        if row.get("energy_mwh") == 0.0:  # no power drawn (utilisation 0): no energy, however long
            out["energy_mwh"] = f"utilisation {_g(row['utilisation_power_frac'])}: no power drawn, 0 MWh however long"
        return out
    if not np.isfinite(days if days is not None else np.nan):
        return {}
    wall_h = row["time_to_train_days"] * 24.0
    # an inline accelerator's own price is the scenario's too, as _price_note says (review 48b)
    own = (" (the scenario's own price)" if row.get("price_override") or int(row.get("accelerator_index", 0) or 0) < 0
           else "")
    return {
        "time_to_train_days": (
            f"tokens {_g(row['tokens_total'])} / {_g(row['tokens_per_s'])} tok/s / goodput "
            f"{_g(row['goodput'])} / 86400 = {_g(row['time_to_train_days'])} d"
        ),
        "gpu_hours": f"{_paid_text(row)} × {_g(wall_h)} h = {_g(row['gpu_hours'])}",
        "cost_usd": (f"{_g(row['gpu_hours'])} GPU-h × ${_g(row['price_per_gpu_hour_usd'])}{own} "
                     f"= ${_g(row['cost_usd'])}"),
        "energy_mwh": (
            f"{_nodes_text(row)} × {_w(row['node_power_w'])} W{_limited(row)} × {_g(row['utilisation_power_frac'])}"
            f" × PUE {_g(row['pue'])} × {_g(wall_h)} h / 1e6 = {_g(row['energy_mwh'])} MWh"
        ),
        **({"cost_per_m_tokens_usd": (
            f"${_g(row['cost_usd'])} / {_g(row['tokens_total'])} tokens × 1e6 = ${_g(row['cost_per_m_tokens_usd'])} "
            "per million trained tokens (the goodput's losses, failures and checkpoints, are in the cost)")}
           if "cost_per_m_tokens_usd" in row else {}),
    }


def _nodes_text(row: dict) -> str:
    """The nodes charged for energy: whole nodes, or the GPUs' share of a partly used one."""
    n, gpn = int(row["n_gpus"]), int(row["gpus_per_node"])
    if n % gpn == 0:
        return f"{n // gpn} node{'s' if n // gpn != 1 else ''}"  # found by review: "1 nodes"
    return f"{n}/{gpn} = {n / gpn:.4g} nodes (the GPUs' share)"


def _paid_text(row: dict) -> str:
    spares = int(row.get("hot_spare_nodes") or 0)
    n = int(row["n_gpus"])
    gpus = f"{n} GPU{'s' if n != 1 else ''}"  # found by review: "1 GPUs"
    if spares <= 0:
        return gpus
    gpn = int(row["gpus_per_node"])
    return (f"({gpus} + {spares} hot spare node{'s' if spares != 1 else ''} × {gpn}) = "
            f"{n + spares * gpn} GPUs")


def _limited(row: dict) -> str:
    """The node-power note of a GPU power limit (batch._node_power_w), or ''."""
    plim, tdp = row.get("power_limit_w"), row.get("tdp_w")
    if not (plim and tdp and plim < tdp):
        return ""
    return f" (GPUs' share at {_g(plim)} W of {_g(tdp)} W TDP)"


def notes(row: dict) -> list[str]:
    """Stated simplifications and missing inputs."""
    # the job's share of its nodes, as energy_mwh's explanation (review 16 new-user: "whole-node power"
    # beside an explanation of 12/8 = 1.5 nodes)
    out = ["Energy: node power (the whole node at full load: GPUs, CPUs, NICs, fans) × the job's share of "
           "nodes (n_gpus / gpus_per_node) × utilisation × PUE for the whole wall time (idle time included).",
           _price_note(row)]
    if int(row.get("hot_spare_nodes") or 0) > 0:
        out.append("Hot spare nodes are paid for the whole run (in GPU-hours and cost); their power is not "
                   "counted in the energy (an idle node's draw is not modelled).")
        try:
            spares, nodes = int(row["hot_spare_nodes"]), float(row["n_nodes"])
        except (KeyError, TypeError, ValueError):
            spares, nodes = 0, float("inf")
        if spares > nodes:
            # review 44a: a million spares for a 128-node job billed $84 B without a word
            out.append(f"The {spares:,} hot spare nodes are more than the job's own {nodes:,.0f}: a spare stands in "
                       "for a node under repair, and no more nodes than the job's can be under repair at once, so the "
                       "rest are paid for and never used (a few per cent of the job's nodes is the usual reserve).")
    part = _partial_node_note(row)
    if part:
        out.append(part)
    low = _low_node_power_note(row)
    if low:
        out.append(low)
    tok, per = row.get("tokens_total"), row.get("tokens_per_step")
    try:
        short = float(tok) < float(per)
    except (TypeError, ValueError):
        short = False
    if short:
        # wall = tokens / throughput is continuous: below one optimizer step it is a fraction of one
        # (review 16d: 1e6 tokens read 1.80 s beside a 7.51 s step)
        out.append(f"The run's {_g(float(tok))} tokens are less than one optimizer step's {_g(float(per))} "
                   f"(global batch × sequence length): the time, GPU-hours, cost and energy are that fraction "
                   f"({_g(float(tok) / float(per))}) of one step's, which a real run cannot stop at.")
    if "tokens_per_s" not in row:
        out.append("Cost columns are NaN: the timing stage (tokens_per_s) is not available.")
    days = row.get("time_to_train_days", np.nan)
    if days is not None and np.isinf(days):
        what = "Time, GPU-hours and cost are" if row.get("energy_mwh") == 0.0 else "Time, GPU-hours, cost and energy are"
        if zero_goodput_reason(row) is not None:
            # review 41c: "are infinite: goodput is 0: …" beside a note giving a finite run figure
            out.append(f"{what} infinite (inf in the CLI table, JSON and CSV, — on the Plan page's headline numbers; the cost per "
                       "million tokens too): the steady-state goodput is 0 (the note 'Goodput is 0' gives why, "
                       "and the expected time of a run this long where the model has one).")
        else:
            out.append(f"{what} infinite: {_never_short(row)}")
    return out


#: Where the catalogue's prices come from (hardware/accelerators.json and ../shared/reference/
#: hardware.md §4): V100 = AWS p3dn.24xlarge on-demand / 8 ($3.90); A100 = the midpoint of AWS
#: p4d.24xlarge's late-2024 Capacity Block ($1.84) and on-demand ($4.10) prices per GPU; H100 = the
#: midpoint of the 2026 market range (Vast spot $1.52 to RunPod on-demand $2.79); H200 = AWS p5e
#: Capacity Block 2024 ($5.41) to a 2026 neocloud ($2.25). Found by review 16c: the note said "V100 /
#: A100: AWS on-demand", which is $4.10 for an A100 against the $2.97 charged.
CATALOGUE_PRICE_BASIS = (
    "V100: AWS on-demand, 2018–24; A100: midpoint of AWS's late-2024 Capacity Block and on-demand prices; "
    "H100: midpoint of the 2026 market, spot to on-demand; H200: AWS Capacity Block 2024 to a 2026 neocloud; "
    "several parts are stand-ins marked uncertain")


def _price_note(row: dict) -> str:
    """Where the row's price per GPU-hour comes from, with its value.

    ``price_override`` (a batch column: True where ``cluster.overrides.price_per_gpu_hour_usd`` is
    set) tells the scenario's own price from the catalogue's; without that column the note names
    both possible origins. Found by review 16c: the note always said "the catalogue's figure", also
    for the DeepSeek-V3 preset, whose $2 is its own override (the catalogue's H800 figure is $2.155).
    """
    price = row.get("price_per_gpu_hour_usd")
    # USD, not "$": the Plan page renders notes as markdown, where two "$" make a formula (review 16c)
    val = f" {_g(price)} USD" if price is not None and np.isfinite(price) else ""
    tail = (f"the catalogue's figures come from different years and markets ({CATALOGUE_PRICE_BASIS}), so compare "
            "costs across generations with your own prices (cluster.overrides.price_per_gpu_hour_usd); one price "
            "for the whole run: reserved, committed or spot rates are yours to enter.")
    over = row.get("price_override")
    if over is not None and bool(over):
        return (f"Price per GPU-hour{val}: the scenario's own (cluster.overrides.price_per_gpu_hour_usd), not the "
                f"catalogue's; {tail}")
    idx = row.get("accelerator_index")
    if over is not None and idx is not None and int(idx) < 0:
        # an inline (or edited) accelerator: its own price, not a catalogue figure (review 46e: --set
        # cluster.accelerator.price_per_gpu_hour_usd=3 was called "the catalogue's figure")
        return (f"Price per GPU-hour{val}: the scenario's inline accelerator's own "
                f"(cluster.accelerator.price_per_gpu_hour_usd), not a catalogue figure; {tail}")
    if over is not None:
        return (f"Price per GPU-hour{val}: the catalogue's figure for the accelerator (hardware/accelerators.json"
                f"{_catalogue_price_text(row)}); {tail}")
    return (f"Price per GPU-hour{val}: cluster.overrides.price_per_gpu_hour_usd where the scenario sets it, else "
            f"the catalogue's figure for the accelerator (hardware/accelerators.json, with its source); {tail}")


def _catalogue_price_text(row: dict) -> str:
    """``, <part>, dated <year>, source '<key>' (...)`` and, for a stand-in, its catalogue note: the
    price's date, source and proxy status of the row's catalogue accelerator (``accelerator_index``;
    empty for an inline part or a row without the column). Found by review 26 (h26c): DESIGN §4.5
    asks for the catalogue default "with date and source", and a proxy price such as the MI355X's
    (the MI325X's, "likely low for this part") was called "the catalogue's figure … with its source"."""
    idx = row.get("accelerator_index")
    accs = list(catalog.accelerators().items())
    if idx is None or not 0 <= int(idx) < len(accs):
        return ", with its source"
    key, acc = accs[int(idx)]
    src = (acc.sources or {}).get("price_per_gpu_hour_usd")
    text = f": {acc.name} ({key}), dated {acc.price_date}" + (
        f", source '{src}' (../shared/reference/hardware.md §8)" if src else "")
    if "price_per_gpu_hour_usd" in (acc.uncertain or []):
        i = (acc.notes or "").find("Price:")
        # the price's own sentence: the notes go on to the attention knee and the MAMF (B200, GB200,
        # H200, ...), which review 46a found quoted as the price's words
        said = re.split(r"(?<=\.)\s+(?=[A-Z])", acc.notes[i:].strip(), maxsplit=1)[0] if i >= 0 else ""
        # USD, not "$": the Plan page renders notes as markdown (review 16c); the amount with its
        # k / M suffix and range ("$3-4M" → "3-4M USD"), without a trailing comma or full stop
        # (review 46a: "~3 USDM", "65 USDk", "2.97, USD")
        said = re.sub(r"\$(\d(?:[\d,.]*\d)?(?:[-–]\d(?:[\d,.]*\d)?)?[kMB]?)", r"\1 USD", said)
        text += "; marked uncertain" + (f": “{said}”" if said else "")
    return text


def _partial_node_note(row: dict) -> str | None:
    """A job that leaves GPUs of the nodes (or NVLink racks) it occupies idle: GPU-hours, cost and
    energy count the GPUs it uses (per-GPU billing), not the whole nodes or racks a provider renting
    by the node or rack bills; the note gives that bill as a factor. Found by review 16c: 12 GPUs on
    8-GPU nodes were charged 12 GPU-hours an hour without a word, where an instance such as AWS's
    p5.48xlarge (8 GPUs) bills 16; and 256 GB200 GPUs, which the step time places 64 to a rack
    (:func:`planner.comm.placement_domain`) on 4 NVL72 racks, were charged 256 GPUs, not 288."""
    try:
        n, gpn = int(row["n_gpus"]), int(row["gpus_per_node"])
        dom = int(row.get("nvlink_domain_size") or gpn)
        rack = int(row.get("rack_domain_size") or dom)
    except (KeyError, TypeError, ValueError):
        return None
    if n <= 0 or gpn <= 0:
        return None
    if rack != dom and rack > gpn and n > gpn:
        # another part in the system's slots (cluster.accelerator) with a smaller scale-up domain: the
        # step runs on that part's domain, but the provider still rents the system's racks (review 48:
        # B200s in GB200 NVL72 slots were billed by 8-GPU "racks")
        racks = -(-n // rack)
        whole = racks * rack
        where = f"on {racks} rack{'s' if racks != 1 else ''} of {rack} GPUs ({whole - n} idle)"
        unit = f"whole {rack}-GPU racks"
    elif dom > gpn and n > gpn:  # NVLink racks (NVL72), one or several: filled in blocks, as the step time assumes (review 16i: one rack was left out)
        from .comm import placement_domain

        block = int(placement_domain(np.array([dom]), np.array([gpn]), np.array([n]))[0])
        racks = -(-n // block)
        whole = racks * dom
        where = (f"placed {block} to an NVLink domain (as the step time assumes) on {racks} "
                 f"domain{'s' if racks != 1 else ''} of {dom} GPUs ({whole - n} idle)")
        unit = f"whole {dom}-GPU domains (racks)"
    else:
        if n % gpn == 0:
            return None
        nodes = -(-n // gpn)
        whole = nodes * gpn
        where = f"on {nodes} node{'s' if nodes != 1 else ''} of {gpn} ({whole - n} idle)"
        unit = "whole nodes"
    if whole == n:
        return None
    spare_gpus = max(int(row.get("hot_spare_nodes") or 0), 0) * gpn
    gpus, are = (f"{n} GPUs", "are") if n != 1 else ("1 GPU", "is")  # not "1 GPUs"
    if not spare_gpus:
        return (f"The job's {gpus} {are} {where}: GPU-hours, cost and energy count the {gpus} used (per-GPU "
                f"billing); a provider that rents {unit} bills {whole} GPUs, {whole / n:.4g} × the cost.")
    # the cost shown already pays the spares (paid_gpus): the factor is over what it pays (review 48b: 12 GPUs +
    # one 8-GPU spare node read 16/12 = 1.333 ×, where whole nodes bill 16 + 8 of the 20 paid, 1.2 ×)
    paid, billed = n + spare_gpus, whole + spare_gpus
    return (f"The job's {gpus} {are} {where}: GPU-hours and cost count the {gpus} used and the {spare_gpus} hot "
            f"spares' ({paid} GPUs), energy the {gpus} used (per-GPU billing); a provider that rents {unit} bills "
            f"{whole} GPUs for the job and {spare_gpus} for the spares, {billed} GPUs, {billed / paid:.4g} × the cost.")


def _low_node_power_note(row: dict) -> str | None:
    """A node power below its own GPUs' draw (``gpus_per_node · power_limit_w``), which no real node
    has: the energy is understated, at least by that ratio. Found by review 16c: an inline system
    with ``node_power_w`` = 1 W for 8 × 700 W H100 gave 0.61 MWh for the default run (6,255 MWh with
    DGX H100's 10.2 kW) without a word. (A ``cluster.accelerator`` other than the system's own has
    its TDP swapped into the node power, ``batch._node_power_w``, so it does not trip this.)"""
    try:
        p = float(row["node_power_w"])
        gpn = float(row["gpus_per_node"])
        lim = float(row.get("power_limit_w") or row["tdp_w"])
    except (KeyError, TypeError, ValueError):
        return None
    gpus = gpn * lim
    if not (np.isfinite(p) and p > 0 and np.isfinite(gpus)) or p >= gpus * (1.0 - 1e-12):
        return None
    return (f"Node power {_w(p)} W is below its own GPUs' draw, {int(gpn)} × {_g(lim)} W = {_w(gpus)} W: the "
            f"energy is understated (at least {_g(gpus / p)} ×). Check the system's node_power_w (the whole node "
            "at full load: GPUs, CPUs, NICs, fans).")
