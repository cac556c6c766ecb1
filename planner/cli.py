"""Command line: ``planner evaluate | sweep | simulate | export | link | presets | validate``.

Each scenario command reads a preset, a scenario JSON file or a share link of the dashboard
(``--link``, read by :func:`planner.share.params_to_scenario` as the app reads it); ``planner link``
writes one.

Bad input exits with status 2 and one line per problem naming the field, the value and what
is allowed; never a traceback. ``sweep`` with no split that fits exits with status 1 (like
``grep`` finding nothing), its reason on stderr and an empty table on stdout.
"""

from __future__ import annotations

import argparse
import copy
import decimal
import json
import math
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
from pydantic import ValidationError

from . import catalog
from . import share as _share
from .schema import InputError
from .presets import list_presets, preset_json
from .schema import INVISIBLE as _schema_invisible
from .schema import COUNT_MAX, Scenario, dotted_path, format_errors


class UsageError(Exception):
    """Bad input: reported on one line each, exit status 2."""

    def __init__(self, lines: list[str]):
        super().__init__("\n".join(lines))
        self.lines = lines


# ----------------------------------------------------------------------------------- input

def _parse_value(text: str, path: str = "") -> Any:
    from .schema import JsonTextError, loads_json

    try:
        return loads_json(text)  # as input files are read: a key given twice, 5,000 digits refused
    except json.JSONDecodeError:
        return text.strip()  # "recompute= full" as "full", as " 512" reads 512 (review 34)
    except JsonTextError as e:  # review 20c: 5,000 digits raised Python's int-conversion limit as a traceback
        raise UsageError([f"--set {path or 'value'}: {e}"]) from None
    except RecursionError:  # nested past the recursion limit: not a value the schema could take
        raise UsageError([f"--set value nested too deeply to be read as JSON ({len(text):,} characters)"]) from None


def _expand_id(where: str, value: str, path: str) -> dict:
    """The catalogue object behind an id at ``where`` (model, cluster.system, ...), as JSON."""
    generic = where.split(".")
    key = ".".join("N" if x.isdigit() else x for x in generic)
    tables = {"model": catalog.models, "cluster.system": catalog.systems,
              "cluster.accelerator": catalog.accelerators, "reliability.profile": catalog.failure_profiles,
              "checkpoint.tiers.N.tier": catalog.storage_tiers}
    if key not in tables:
        raise UsageError([f"--set {path}: '{where}' is {value!r}, not an object"])
    table = tables[key]()
    if value not in table:
        raise UsageError([f"--set {path}: '{where}' = {value!r} is not a catalogue id; "
                          f"allowed: {', '.join(sorted(table))}"])
    return table[value].model_dump(mode="json", by_alias=True)


#: A ``--set`` path in the dotted form (schema.dotted_path, shared with evaluate_many's columns).
_dotted_path = dotted_path


def apply_sets(data: dict, sets: Sequence[str]) -> dict:
    """Apply ``path=value`` overrides (``parallelism.tp=4``, ``checkpoint.tiers.0.interval_s=60``
    or ``checkpoint.tiers[0].interval_s=60``; the value is parsed as JSON when it can be, else
    taken as a string). Setting the model or the cluster's system, size or accelerator drops
    the preset's name unless ``name`` is set too (:func:`planner.presets.drop_stale_name`, the rule
    share links and the Plan page's sidebar follow)."""
    from .presets import drop_stale_name

    before = copy.deepcopy(data)
    given: dict[str, str] = {}  # path → the value it was given
    for i_set, item in enumerate(sets or ()):
        if "=" not in item:
            raise UsageError([f"--set {item!r}: expected path=value, e.g. parallelism.tp=4"])
        path, value = item.split("=", 1)
        path = _dotted_path(path)
        parts = [p for p in path.strip().split(".")]
        if not path.strip() or any(not p for p in parts):
            raise UsageError([f"--set {item!r}: the path before '=' names no field, e.g. parallelism.tp=4"])
        key = ".".join(p.strip() for p in parts)
        if key in given:  # review 46e: the last value won without a word, as --preset twice did
            raise UsageError([f"--set {key}: given twice ({given[key]!r}, then {value!r}); give it once"])
        given[key] = value
        cur = data
        for depth, p in enumerate(parts[:-1]):
            where = ".".join(parts[: depth + 1])
            if isinstance(cur, list):
                if not p.isdigit() or int(p) >= len(cur):
                    raise UsageError([f"--set {path}: '{where}' " + (f"needs an index from 0 to {len(cur) - 1}" if cur
                                      else "is an index into an empty list (set the whole list instead)")])
                nxt = cur[int(p)]
            else:
                nxt = cur.get(p)
                if nxt is None:
                    nxt = {}
                    cur[p] = nxt
            if isinstance(nxt, str) and not isinstance(cur, list):
                # a catalogue id such as model="llama3-8b": expand it to its object to edit a field
                mid = nxt
                nxt = _expand_id(where, nxt, path)
                if where == "model":  # an edited catalogue model is no longer the published one (as
                    # share links do; found by review: n_layers=40 kept "Llama 3 70B" and its 70.6B)
                    for k in ("source", "published_params_total", "published_params_active"):
                        nxt.pop(k, None)
                    nxt["name"] = f"custom ({mid})"
                cur[p] = nxt
            if not isinstance(nxt, (dict, list)):
                raise UsageError([f"--set {path}: '{where}' is not an object (it is {nxt!r})"])
            cur = nxt
        last = parts[-1]
        if isinstance(cur, list):
            if not last.isdigit() or int(last) >= len(cur):
                raise UsageError([f"--set {path}: " + (f"needs an index from 0 to {len(cur) - 1}" if cur
                                  else "is an index into an empty list (set the whole list instead)")])
            new, old = _parse_value(value, path), cur[int(last)]
            cur[int(last)] = new
        else:
            new, old = _parse_value(value, path), cur.get(last)
            cur[last] = new
        if isinstance(old, dict) and isinstance(new, dict):
            # a whole object replaces the old one (the JSON value is the object, not a patch): said,
            # with the fields it drops (review 39B: --set 'parallelism={"tp": 4}' put PP, VPP, ZeRO,
            # recompute back to their defaults without a word; review 40c: a list item too, not the
            # fields a later --set gives, and a field with no default is dropped, not defaulted)
            dotted = ".".join(parts)
            later = {_dotted_path(s2.split("=", 1)[0]).strip() for s2 in sets[i_set + 1:] if "=" in s2}
            lost = [k for k in old if k not in new and f"{dotted}.{k}" not in later]
            if lost:
                print(f"note: --set {path.strip()}={{…}} replaces the whole object; the fields it does not give "
                      f"are dropped ({', '.join(lost)}): each takes its default where it has one "
                      f"(--set {path.strip()}.FIELD=VALUE sets one field)", file=sys.stderr)
        # Changing the split or the cluster size re-derives dp unless the user set it.
        if parts[0] == "parallelism" and parts[-1] in ("tp", "pp", "cp") or path.strip() == "cluster.n_gpus":
            if not any(s.split("=", 1)[0].strip() == "parallelism.dp" for s in sets):
                if isinstance(data.get("parallelism"), dict):
                    data["parallelism"].pop("dp", None)
    # a preset's name describes its model and cluster: changing either drops it (exports and tables
    # then name the model) unless the name is set too
    if not any(s.split("=", 1)[0].strip() == "name" for s in sets or ()):
        drop_stale_name(data, before)
    return data


#: The scenario commands' inputs: the messages when none is given, or two that exclude each other.
NO_INPUT = ("no scenario given: give --preset NAME, FILE.json or --hf-config CONFIG.json, or --link URL (a share "
            "link of the dashboard); --hf-config also goes with the others, replacing the model")
TWO_INPUTS = ("give one input: --preset NAME, FILE.json or --link URL, not both of any two (--hf-config "
              "CONFIG.json may go with any of them)")


#: The button that takes a page's scenario to the Plan page, by page (review 50: the Validate page's
#: link was told to use "Compare's Open in Plan", a button the Validate page does not have).
_OPEN_BUTTON = {"compare": "Compare's Open in Plan under the scenario",
                "validate": "the Validate page's Open on the Plan page, for the picked run"}


def load_scenario_input(preset: str | None, file: str | None, sets: Sequence[str] = (),
                        hf_config: str | None = None, link: str | None = None) -> Scenario:
    """A validated scenario from a preset id, a JSON file or a share link, with ``--set`` overrides.

    ``hf_config``: path of a Hugging Face ``config.json`` whose architecture replaces the
    scenario's model (before the ``--set`` overrides; without a preset or file, the
    ``default`` preset supplies the rest). Its notes go to stderr as ``note:`` lines.
    ``link``: a share link of the dashboard (or its ``?query``), read as the app reads it
    (:func:`link_input`)."""
    return validate_input(scenario_input_json(preset, file, sets, hf_config, link=link))


#: Link keys that belong to one page of the dashboard, not to the scenario (planner.share).
PAGE_PREFIXES = _share.PAGE_PREFIXES


#: The Plan page's Monte Carlo boxes: link key -> (option, box, lowest, highest, the page's default),
#: from planner.share (the page reads the same constants).
PLAN_MC_KEYS: dict[str, tuple[str, str, int, int, int]] = {
    "pl_mct": ("trials", "Trials", *_share.PLAN_MC_TRIALS_RANGE, _share.PLAN_MC_TRIALS_DEFAULT),
    "pl_mcs": ("seed", "Seed", *_share.PLAN_MC_SEED_RANGE, _share.PLAN_MC_SEED_DEFAULT),
}


def page_key_errors(page: dict[str, Any]) -> list[str]:
    """One line per page key of a link that its page would refuse ("Link: ... refused; using ..."):
    the Plan page's Monte Carlo boxes (``pl_mct``, ``pl_mcs``) and the Explore page's controls
    (``ex_obj``, ``ex_space``, ``ex_top``, ``ex_head``, ``ex_ties``, ``ex_color``), each named with
    what it allows, and a page key given twice with different values (the page used the last
    without a word). Found by review 15f: ``simulate --link ...&pl_mct=5`` ran 5 trials and
    ``pl_mcs=99999999999`` that seed, where the Plan page refuses both and runs 2,000 / seed 0."""
    from . import share

    out = []
    out += [f"--link: {w.removesuffix('; ignored')}" for w in
            _share.unknown_own_page_keys(page, "plan", tuple(PLAN_MC_KEYS))
            + _share.unknown_own_page_keys(page, "explore", tuple(_EXPLORE_KEYS))]
    other = sorted(k for k in page if str(k).startswith(("c_", "v_")))
    if other:  # review 39: '?p=default&v_set=calibration' ran with the Validate key dropped silently
        out.append(f"--link: {', '.join(other)}: keys of the Compare / Validate page, which this command does not "
                   "read; copy the Plan page's link")
    for k, v in page.items():
        if isinstance(v, (list, tuple)):
            shown = ", ".join(share.one_line_show(x) for x in v[:5]) + (", …" if len(v) > 5 else "")
            out.append(f"--link: {k}: given {len(v):,} times ({shown}); give it once")
            continue
        if k in PLAN_MC_KEYS:
            _opt, box, lo, hi, _d = PLAN_MC_KEYS[k]
            try:
                _share.page_int(v, lo, hi)
            except (ValueError, TypeError):
                out.append(f"--link: {k}={share.one_line_show(v)} (the Plan page's Monte Carlo {box} box) is refused; "
                           f"allowed a whole number {lo:,} to {hi:,}")
        elif k in _EXPLORE_KEYS:
            try:
                _explore_value(k, v)
            except (ValueError, TypeError):
                out.append(f"--link: {k}={share.one_line_show(v)} (the Explore page's) is refused; "
                           f"{_explore_allowed(k)}")
    return out


#: Most problems of one link listed, one line each (the rest counted on one more line).
LINK_LINES_MAX = 20


def _refused_wording(warning: str) -> str:
    """A link warning of the app (:func:`planner.share.params_to_scenario`) as the CLI's refusal:
    what the app keeps or uses instead is what the dashboard would do, not what this command did."""
    verbs = {"kept": "the dashboard would keep", "used": "the dashboard would use", "using": "the dashboard would use"}

    def words(text: str) -> str:
        text = re.sub(r"([;,] )(kept|used|using)\b", lambda m: m[1] + verbs[m[2]], text)
        # what the app ignores is refused here too: "'e': unknown link parameter ignored" said
        # the opposite of status 2 (review 29a F1); the page's own warning keeps "ignored"
        text = re.sub(r" (parameters?) ignored\b",
                      lambda m: f" {m[1]} (the dashboard would ignore {'them' if m[1].endswith('s') else 'it'})", text)
        text = re.sub(r"([;,] )ignored\b", lambda m: m[1] + "the dashboard would ignore them", text)
        # the split the app fits to the link (review 34: "ls='even' → 'uneven': ...; changed so the
        # split fits ..." and then the refusal asked for ls=uneven, as if nothing had been changed)
        text = re.sub(r"([;,] )changed so\b", lambda m: m[1] + "the dashboard would change it so", text)
        text = re.sub(r"(\): )changed to\b", lambda m: m[1] + "the dashboard would change it to", text)
        return re.sub(r"(\): )dropped, ", lambda m: m[1] + "the dashboard would drop it, ", text)

    # the user's own value, quoted as the app shows it ('x; used y'), is left as it was (review 20c)
    quoted = r"(?<!\w)'(?:[^'\\]|\\.)*'(?!\w)|(?<!\w)\"(?:[^\"\\]|\\.)*\"(?!\w)"  # not the apostrophe of "page's"
    out, last = [], 0
    for m in re.finditer(quoted, warning):
        out += [words(warning[last:m.start()]), m[0]]
        last = m.end()
    return "".join(out + [words(warning[last:])])


def link_input(text: str) -> tuple[dict, dict[str, str]]:
    """(scenario JSON, the link's page keys) of a share link of the dashboard, or its ``?query``.

    The scenario is read with :func:`planner.share.params_to_scenario`, the function the app
    reads a link with, so the command computes the numbers the app shows for the same link (found
    by review 15c: the CLI took no link, and a link had to be retyped as ``--set`` flags). The page
    keys (``pl_mct``, ``ex_obj``, ...) are returned for the commands that take them. Every value
    the app would refuse or change (its "Link:" warnings, the page keys' too: :func:`page_key_errors`)
    is bad input here: one line each, status 2. A Compare page link (several scenarios, ``1.tp`` ...)
    and a Validate page link (``v_set`` ...: no scenario) are refused, and so is a link with no
    ``key=value`` at all (``?``, or a query after the ``#``), which would be the default preset
    without a word (found by review 15f: both ran the default preset with status 0)."""
    from . import share

    t = (text or "").strip()
    if not t:
        raise UsageError(["--link: empty; give a share link of the dashboard (its address, e.g. "
                          "'http://localhost:8501/?p=default&n=512') or its ?query"])
    params = share.parse_link(t)
    addr = t.split("#", 1)[0].split("?", 1)[0]
    # the address's path, not its host ('https://validate/?p=…' is a Plan link: review 39c)
    path = addr.split("://", 1)[1] if "://" in addr else addr
    path = path if path.startswith("/") else ("/" + path.split("/", 1)[1] if "/" in path else "")
    page_path = path.rstrip("/").rsplit("/", 1)[-1].lower()
    if page_path in ("compare", "validate"):  # review 39: a /compare link ran its bare keys here
        raise UsageError([f"--link: a {page_path.capitalize()} page link (…/{page_path}?…); this command reads a Plan "
                          f"page link: open the scenario on the Plan page ({_OPEN_BUTTON[page_path]}) and copy that "
                          "page's link"])
    where = (" before the '#'; what follows a '#' is the address's fragment, not its query"
             if "#" in t and "=" in t.split("#", 1)[1] else "")
    head = t.split("#", 1)[0]
    if not where and "?" not in head and "=" in head and "/" in head.split("=", 1)[0]:
        where = ": no '?' between the address and its query"  # review 24: read as one key before
    not_link = (f"--link {share.one_line_show(t)}: not a share link (no ?key=value query{where}); copy the "
                "dashboard's address, e.g. 'http://localhost:8501/?p=default&n=512'")
    if not params:
        raise UsageError([not_link])
    slots = sorted({k.split(".", 1)[0] for k in params if share.is_link_key(k) and "." in k})
    if slots:
        raise UsageError([f"--link: a Compare page link (scenarios {', '.join(slots)}); it holds several scenarios: "
                          "use that scenario's Open in Plan and copy the Plan page's link"])
    page = {k: (v if isinstance(v, str) else list(v)) for k, v in params.items() if k.startswith(PAGE_PREFIXES)}
    scen = {k: v for k, v in params.items() if not k.startswith(PAGE_PREFIXES)}
    if not any(share.is_link_key(k) for k in params):
        other = sorted({k[:2] for k in page if k.startswith(("v_", "c_"))})
        if other:
            name = "a Validate page link" if other == ["v_"] else "a Compare page link"
            button = _OPEN_BUTTON["validate" if other == ["v_"] else "compare"]
            raise UsageError([f"--link: {name} ({', '.join(sorted(k for k in page if k.startswith(tuple(other))))}); "
                              f"it holds no scenario: open one on the Plan page ({button}) and copy that page's link"])
        if not page and "=" not in t.split("#", 1)[0]:  # 'garbage text': no key=value at all
            raise UsageError([not_link])
        if not page:
            # keys, but none of the dashboard's ('?P=default': keys are case-sensitive): name them,
            # as the Plan page does, rather than "no ?key=value query" (review 24)
            _sj, warns = share.params_to_scenario(scen)
            raise UsageError([f"--link: {_refused_wording(w)}" for w in warns][:LINK_LINES_MAX]
                             + [f"--link {share.one_line_show(t)}: none of its keys is one of the dashboard's (a "
                                "Plan page link holds keys such as p, n, tp, and they are case-sensitive: "
                                "'http://localhost:8501/?p=default&n=512')"])
    sj, warnings = share.params_to_scenario(scen)
    # the app's warning keeps the base value and goes on; here the link is refused (status 2), so
    # its "kept the base value" says what the dashboard does instead (review 20)
    lines = [f"--link: {_refused_wording(w)}" for w in warnings] + page_key_errors(page)
    if len(lines) > LINK_LINES_MAX:  # a link of 50,000 unknown keys: not 50,000 lines on the terminal
        lines = lines[:LINK_LINES_MAX] + [f"--link: … and {len(lines) - LINK_LINES_MAX:,} more problems in the link"]
    if lines:
        raise UsageError(lines)
    return sj, {k: share.last_value(v) for k, v in page.items()}


def validate_input(data: dict) -> Scenario:
    """The validated scenario of :func:`scenario_input_json`; :class:`UsageError` otherwise."""
    try:
        return Scenario.model_validate(data)
    except ValidationError as e:
        raise UsageError(format_errors(e, json_spelling=True)) from None
    except ValueError as e:
        raise UsageError([str(e)]) from None


def scenario_input_json(preset: str | None, file: str | None, sets: Sequence[str] = (),
                        hf_config: str | None = None, sweep_gpus: int | None = None,
                        link: str | None = None) -> dict:
    """The scenario JSON dict of :func:`load_scenario_input`, not yet validated.

    ``sweep_gpus``: the GPU count a sweep was given (``--gpus``): its note then says the sweep
    chooses the split for it, instead of describing the one-node base scenario."""
    if link is not None:
        if preset is not None or file is not None:
            raise UsageError([TWO_INPUTS])
        data = link_input(link)[0]
        if hf_config is not None:
            data = _with_hf_model(data, hf_config)
        return apply_sets(data, sets)
    bare_hf = hf_config is not None and preset is None and file is None
    if bare_hf:
        preset = "default"
    if preset is None and file is None:
        raise UsageError([NO_INPUT])
    if preset is not None and file is not None:
        raise UsageError([TWO_INPUTS])
    if preset is not None:
        try:
            data = preset_json(preset)
        except ValueError as e:
            raise UsageError([str(e)]) from None
    else:
        from .schema import InputError, read_json_file

        try:
            data = read_json_file(file, "a scenario JSON file")
        except InputError as e:
            raise UsageError(e.lines) from None
        shown = "- (standard input)" if file == "-" else file
        if not isinstance(data, dict):
            raise UsageError([f"{shown}: expected a JSON object (a scenario)"])
        if "model" not in data and "scenario" in data and not isinstance(data["scenario"], dict):
            # review 49: {"scenario": 5} was read as a scenario with an unknown field "scenario"
            kind = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array",
                    type(None): "null"}.get(type(data["scenario"]), type(data["scenario"]).__name__)
            raise UsageError([f"{shown}: its \"scenario\" is {kind}, "
                              "not a JSON object (an evaluate result's scenario, or write the scenario's own "
                              "fields at the top level)"])
        if "model" not in data and isinstance(data.get("scenario"), dict) and "results" in data:
            # `planner evaluate --format json` output: its scenario is read back (a round trip)
            _err(f"note: {shown} is an evaluate result; its \"scenario\" is used")
            data = data["scenario"]
    if hf_config is not None:
        data = _with_hf_model(data, hf_config)
        if bare_hf:  # a split valid for any model: one 8-GPU node, plain data parallel
            data["parallelism"] = {"zero_stage": 1, "recompute": "selective"}
            data["cluster"]["n_gpus"] = 8
            if sweep_gpus:
                sys.stderr.write("note: no scenario given: the default preset's hardware and settings; the sweep "
                                 f"chooses the split for {sweep_gpus:,} GPUs (--gpus)\n")
            elif not any(str(x).split("=", 1)[0].strip() in ("cluster.n_gpus", "cluster") for x in sets):
                sys.stderr.write("note: no scenario given: the default preset's hardware and settings on one "
                                 "8-GPU node, plain data parallel (ZeRO-1); `planner sweep ... --gpus N` chooses the "
                                 "split for N GPUs, --set parallelism.tp=... sets one\n")
            else:
                sys.stderr.write("note: no scenario given: the default preset's hardware and settings, plain data "
                                 "parallel (ZeRO-1) over the GPUs set; --set parallelism.tp=... sets a split\n")
    return apply_sets(data, sets)


def _with_hf_model(data: dict, hf_config: str) -> dict:
    """``data`` with its model replaced by a Hugging Face config.json's (notes on stderr)."""
    from .hf_config import import_hf_config
    from .schema import InputError

    try:
        imp = import_hf_config(hf_config)
    except InputError as e:
        raise UsageError([f"--hf-config {line}" for line in e.lines]) from None
    for note in imp.notes:
        _err(f"note: {note}")
    data["model"] = imp.model.model_dump(mode="json", exclude_none=True)
    data["name"] = imp.model.name  # the preset's name described its own model
    return data


# ---------------------------------------------------------------------------------- output

#: Characters of a name or message (from a scenario file, a config.json or a calibration CSV) that a
#: terminal would act on or that change how the line reads: C0 controls but tab (a newline, ESC
#: starting an escape sequence such as "\\x1b[2J"), DEL, C1 controls, the line / paragraph
#: separators, bidirectional embeddings / overrides / isolates and zero-width characters.
_TTY_UNSAFE = re.compile("(?!\t)" + _schema_invisible.pattern)  # schema.INVISIBLE but the tab


def tty_line(text: Any) -> str:
    """``text`` as one line that is safe to print: each :data:`_TTY_UNSAFE` character written as
    its Python escape (``\\x1b``, ``\\n``, ``\\u202e``), as ``repr`` shows it, so the line stays
    one line, the terminal runs no escape sequence and the reader sees that the name holds one."""
    return _TTY_UNSAFE.sub(lambda m: repr(m.group(0))[1:-1], str(text))


def _err(text: str) -> None:
    """One line on stderr (:func:`tty_line`, then a newline)."""
    sys.stderr.write(tty_line(text) + "\n")


#: Display units by column suffix (checked in order; the engine itself works in SI).
UNITS = {
    "_per_s": ("/s", 1.0),
    "_per_h": ("/h", 1.0),
    "_bytes": ("GiB", 2.0**30),
    "_s": ("s", 1.0),
    "_h": ("h", 1.0),
    "_days": ("days", 1.0),
    "_usd": ("USD", 1.0),
    "_mwh": ("MWh", 1.0),
}
#: Display units of columns whose name carries no suffix.
NAMED_UNITS = {"tflops_per_gpu": ("TFLOP/s", 1.0), "gpu_hours": ("GPU-h", 1.0)}


def _json_safe(x):
    """NaN and ±inf are not JSON: NaN (not applicable, e.g. the interval of a tier the scenario
    does not use) is written as null, ±inf (e.g. the time to train of a run that never finishes)
    as the strings "inf" / "-inf", so a reader can tell them apart (the table writes NaN as '—' and ±inf as
    'inf' / '-inf', review 49)."""
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_json_safe(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


#: Result columns that are shares, written in % in the tables (``_frac`` columns too).
PERCENT_COLUMNS = ("mfu", "hfu", "goodput", "goodput_first_order", "mfu_precision_peak")


def pct_text(share: float) -> str:
    """A share (0.42) as a percentage without the sign, as the dashboard writes one too
    (``app_pages._common.fmt``): one decimal from 1 % on (``42.2``), two significant digits below
    (``0.16``, ``0.025``), never a non-zero share as 0 (review h30a: one decimal from 0.1 % on wrote
    0.164 % as "0.2", 22 % off)."""
    v = 100.0 * float(share)
    if v == 0 or abs(v) >= 0.995:  # from 0.995 on, "1.0" (not "1")
        return f"{v:.1f}"
    return f"{v:.2g}" if abs(v) >= 0.001 else ("< 0.001" if v > 0 else "> -0.001")


def _fmt_value(name: str, value: Any) -> tuple[str, str]:
    if isinstance(value, (bool, np.bool_)):
        return ("yes" if value else "no"), ""
    if not isinstance(value, (int, float, np.integer, np.floating)):
        return str(value), ""
    v = float(value)
    if math.isnan(v):  # does not apply (a tier not in use): as the Plan page's result table writes it
        return "—", ""
    if not math.isfinite(v):  # review 49: an infinite MTBF or time read "—" beside its formula's "= inf h"
        return ("inf" if v > 0 else "-inf"), ""
    if name in NAMED_UNITS:
        unit, div = NAMED_UNITS[name]
        return f"{v / div:,.4g}", unit
    if name in PERCENT_COLUMNS or name.endswith("_frac"):
        # a share in %, as the Plan page writes it (found by review 15c: ckpt_overhead_frac 0.0002469
        # here, "0.025 %" there; goodput 0.0004 read "0.0 %")
        return pct_text(v), "%"
    # the unit by size, by the sweep table's rules (charts.days_column / cost_column; review 26, h26c:
    # "1.096e+07 USD", "1.38e-05 days")
    if name.endswith("_usd") or name.endswith("_days"):
        from .charts import cost_column, days_column

        unit, scale, _ = (cost_column if name.endswith("_usd") else days_column)([v])
        return f"{v * scale:,.4g}", unit
    for suffix, (unit, div) in UNITS.items():
        if name.endswith(suffix):
            return f"{v / div:,.4g}", unit
    if name.startswith("params"):  # a count: millions below 1e9 (a tiny custom model read "0.018 billion")
        # from 999.95e6 on "1.000 billion" (not "1,000 million")
        return (f"{v / 1e9:,.3f}", "billion") if abs(v) >= 0.99995e9 else (f"{v / 1e6:,.4g}", "million")
    if name.endswith("_flop_per_step"):
        return f"{v:.4g}", "FLOP"
    return f"{v:,.4g}", ""




def print_report(report, fmt: str, out=None) -> None:
    from .batch import CAPACITY_COLUMNS, capacities
    from .engine import RESULT_COLUMNS

    out = out or sys.stdout
    accuracy = _accuracy(report.scenario) if fmt in ("json", "table") else None

    if fmt in ("json", "csv"):
        # the capacities `fits` and `host_fits` compare with, as the table shows them (review h29a F9:
        # a script reading the JSON or CSV could not recompute either verdict nor show the headroom)
        results, explain = dict(report.results), dict(report.explain)
        for name, value in capacities(report.scenario).items():
            results[name] = value
            explain.setdefault(name, CAPACITY_COLUMNS[name][1])
        if fmt == "csv":
            pd.DataFrame([results]).to_csv(out, index=False)
            return
        json.dump(
            _json_safe({"scenario": report.scenario, "results": results, "stages": report.stages,
                        "explain": explain, "notes": report.notes, "accuracy": accuracy}),
            out, indent=2, default=float, allow_nan=False,
        )
        out.write("\n")
        return
    line = split_line(report.scenario)
    if line:
        out.write(tty_line(line) + "\n")
    cols = table_columns(RESULT_COLUMNS, report.explain)
    res = dict(report.results)
    usable, host = capacities(report.scenario).values()
    if usable is not None and "hbm_bytes" in cols:
        # the capacity `fits` compares the peak with, beside the physical HBM (found by review 15c: the
        # table showed only hbm_bytes, 80 GiB, above "fits no" for a 79.8 GiB peak; the Plan page says
        # "of 79.6 GiB usable")
        res["hbm_usable_bytes"] = usable
        cols.insert(cols.index("hbm_bytes") + 1, "hbm_usable_bytes")
    from .memory import gib_decimals

    gib_dec = gib_decimals(res.get("mem_total_bytes"), usable)  # peak and usable read apart (review 15c)
    explain = dict(report.explain)
    explain.setdefault("hbm_usable_bytes", "usable HBM per GPU (physical less what the driver and runtime keep): "
                                           "fits = mem_total_bytes ≤ hbm_usable_bytes")
    # the host-memory verdicts beside the HBM one (review 16 new-user: only the JSON had them)
    hdec = gib_decimals(res.get("host_mem_per_node_bytes"),
                        (res.get("host_mem_per_node_bytes") or 0.0) + (res.get("ckpt_host_mem_per_node_bytes") or 0.0),
                        host)
    have = f"{host / 2**30:,.{hdec}f} GiB" if host is not None and _finite(host) else "the node's host memory"
    if "fits" in cols:
        at = cols.index("fits") + 1
        cols[at:at] = [c for c in ("host_mem_per_node_bytes", "host_fits") if c in res and c not in cols]
        explain.setdefault("host_mem_per_node_bytes", "offloaded states (optimizer, master weights, gradients, "
                                                      "activations) in host memory per node")
        explain.setdefault("host_fits", f"host_mem_per_node_bytes ≤ the node's host memory {have}")
    if "ckpt_host_mem_per_node_bytes" in cols and "host_fits_ckpt" in res and "host_fits_ckpt" not in cols:
        cols.insert(cols.index("ckpt_host_mem_per_node_bytes") + 1, "host_fits_ckpt")
        explain.setdefault("host_fits_ckpt", f"host_mem_per_node_bytes + ckpt_host_mem_per_node_bytes ≤ the "
                                             f"node's host memory {have}")
    width = max(len(c) for c in cols)
    for col in cols:
        if col not in res:
            continue
        if col in ("mem_total_bytes", "hbm_usable_bytes") and _finite(res[col]):
            val, unit = f"{float(res[col]) / 2**30:,.{gib_dec}f}", "GiB"
        else:
            val, unit = _fmt_value(col, res[col])
        line = f"{col:<{width}}  {val:>12} {unit:<5}"
        if col in explain:
            line += f"  {explain[col]}"
        out.write(tty_line(line.rstrip()) + "\n")
    if report.stages:
        out.write("\nmemory per pipeline stage (GiB):\n")
        df = pd.DataFrame(report.stages)
        if "stage" in df:
            df["stage"] = df["stage"].astype(int)
        num = df.select_dtypes("number").columns
        # every byte column, host_bytes_per_gpu too (review 47b: it printed raw bytes under "(GiB)")
        gib_cols = [c for c in num if "bytes" in c]
        df[gib_cols] = df[gib_cols] / 2**30
        out.write(df.to_string(index=False, float_format=lambda x: f"{x:.2f}") + "\n")
    for n in report.notes + ([accuracy] if accuracy else []):
        out.write(tty_line(f"note: {n}") + "\n")


def split_line(scenario) -> str:
    """The run the table describes, in one line: model, GPUs × system, and the split the engine
    used (found by review 15g: after ``--set cluster.n_gpus=256`` the re-derived DP appeared only
    inside an explanation)."""
    try:
        sj = scenario if isinstance(scenario, dict) else scenario.to_json_dict()
        par, tr, cl = sj.get("parallelism") or {}, sj.get("training") or {}, sj.get("cluster") or {}
        model = sj.get("model")
        mname = model if isinstance(model, str) else (model or {}).get("name", "custom model")
        parts = [f"{k.upper()} {par[k]}" for k in ("tp", "pp", "cp", "dp", "ep") if par.get(k) is not None]
        # expert TP and the HSDP shard group when set (review 16 new-user: the header left them out)
        if par.get("etp") is not None and par.get("etp") != par.get("tp"):
            parts.append(f"ETP {par['etp']}")
        if par.get("dp_shard") is not None and par.get("dp_shard") != par.get("dp"):
            parts.append(f"ZeRO shard group {par['dp_shard']} (HSDP)")
        if int(par.get("vpp") or 1) > 1:
            parts.append(f"VPP {par['vpp']}")
        more = [f"micro-batch {tr.get('micro_batch_size')}", f"global batch {tr.get('global_batch_size')}",
                f"ZeRO {par.get('zero_stage')}", f"recompute {par.get('recompute')}", f"schedule {par.get('schedule')}"]
        system = cl.get("system")
        system = system if isinstance(system, str) else (system or {}).get("name", "custom system")
        acc = cl.get("accelerator")
        if acc is not None:  # an accelerator in place of the system's own (review 16 new-user)
            system += f" with {acc if isinstance(acc, str) else acc.get('name', 'a custom accelerator')}"
        return (f"{mname} on {int(cl.get('n_gpus')):,} GPUs ({system}): " + " · ".join(parts)
                + "; " + ", ".join(more))
    except Exception:  # noqa: BLE001 - a header line left out, never a failed command
        return ""


def table_columns(result_columns: Sequence[str], explain: dict) -> list[str]:
    """The rows of ``evaluate``'s table: the engine's headline columns, with every other result the
    engine explains (each tier's checkpoint interval, the logits' memory, first-order goodput) placed
    before the next explained headline column, in the explanation's order. Found by review 15c: the
    table left out the per-tier intervals the Plan page shows (Llama 3.1 405B on 16,384 H100: the
    PFS every 42.9 s was not in the table, only the most frequent tier's 22.1 s)."""
    cols = list(result_columns)
    pending: list[str] = []
    for k in explain:
        if k in cols:
            if pending:
                i = cols.index(k)
                cols[i:i] = pending
                pending = []
        else:
            pending.append(k)
    return cols + pending


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and math.isfinite(float(x))


def _accuracy(scenario) -> str | None:
    """validation.accuracy_note of the scenario; None where it cannot be computed (no
    validation file beside this checkout)."""
    from . import validation

    try:
        return validation.accuracy_note(scenario)
    except (OSError, ValueError):
        return None


def print_frame(df: pd.DataFrame, fmt: str, out=None) -> None:
    out = out or sys.stdout
    if fmt == "json":
        # Python's shortest round-trip floats (pandas' own JSON writer prints 15+ digits), and
        # inf / NaN as "inf" / null as in `evaluate` (pandas writes both as null: a simulated run
        # that never finishes read as "not applicable")
        def cell(v):
            if isinstance(v, np.generic):
                v = v.item()
            if v is None or (not isinstance(v, (str, bool, int, float)) and pd.isna(v)):
                return None
            return v

        records = [{str(k): cell(v) for k, v in r.items()} for r in df.to_dict(orient="records")]
        out.write(json.dumps(_json_safe(records), indent=2, allow_nan=False) + "\n")
    elif fmt == "csv":
        df.to_csv(out, index=False)
    else:  # text cells (a calibration CSV's source and notes) printed as one safe line each
        text = [c for c in df.columns if df[c].dtype == object or pd.api.types.is_string_dtype(df[c].dtype)]
        if text:
            df = df.assign(**{str(c): df[c].map(lambda v: tty_line(v) if isinstance(v, str) else v) for c in text})
        out.write(df.to_string(index=False, float_format=lambda x: f"{x:.4g}") + "\n")


# -------------------------------------------------------------------------------- commands

def cmd_presets(args) -> int:
    what = args.what or "scenarios"
    if what == "scenarios":
        rows = [{"id": k, "description": v} for k, v in list_presets().items()]
        if args.format == "table":  # the full text is in json/csv and presets/scenarios.json
            rows = [{"id": r["id"], "description": (r["description"][:100] + " …")
                     if len(r["description"]) > 100 else r["description"]} for r in rows]
            w = max(len(r["id"]) for r in rows)  # ids left-aligned, descriptions cut at 100 characters
            lines = [f"{'id':<{w}}  description"] + [f"{r['id']:<{w}}  {r['description']}" for r in rows]
            sys.stdout.write("\n".join(lines) + "\n")
            return 0
    elif what == "models":
        from .engine import evaluate_many  # noqa: F401  (keeps import cost in one place)
        from . import batch as B, model_stats

        ms = catalog.models()
        rows = []
        for k, m in ms.items():
            rows.append({"id": k, "name": m.name, "layers": m.n_layers, "hidden": m.hidden_size,
                         "heads": m.n_heads, "kv_heads": m.kv_heads,
                         "experts": m.moe.n_experts if m.moe else 0})
        # parameter totals from the model math
        from .schema import Scenario as _S
        scen = [_S.model_validate({"model": k, "cluster": {"system": "dgx-h100", "n_gpus": 8},
                                   "parallelism": {"tp": 1, "pp": 1, "ep": 1},
                                   "training": {"global_batch_size": 8}}) for k in ms]
        st = model_stats.stats(B.from_scenarios(scen))
        for r, tot, act in zip(rows, st["params_total"], st["params_active"]):
            r["params_total_B"] = round(tot / 1e9, 3)
            r["params_active_B"] = round(act / 1e9, 3)
    elif what == "hardware":
        rows = []
        for k, s in catalog.systems().items():
            a = catalog.accelerators()[s.accelerator]
            rows.append({"system": k, "accelerator": s.accelerator, "gpus_per_node": s.gpus_per_node,
                         "nvlink_domain": s.nvlink_domain_size, "scaleup": s.scaleup_topology,
                         "dense_16bit_TFLOPs": a.peak_flop_per_s.get("bf16", a.peak_flop_per_s.get("fp16", 0)) / 1e12,
                         "16bit": "bf16" if "bf16" in a.peak_flop_per_s else "fp16 (no bf16)",
                         "hbm_usable_GiB": round(a.hbm_usable_bytes / 2**30, 1),
                         "nic_GBps_per_gpu": s.nic_bw_per_gpu_bytes_per_s / 1e9,
                         "usd_per_gpu_h": a.price_per_gpu_hour_usd,
                         # when and how sure (review 26, h26c: DESIGN §4.5 asks for the date and source)
                         "price_date": a.price_date,
                         "price_source": (a.sources or {}).get("price_per_gpu_hour_usd", "")
                         + (" (uncertain)" if "price_per_gpu_hour_usd" in (a.uncertain or []) else "")})
        # no shared limit: "inf" in JSON, as every infinite value there (found by review: a
        # string among the column's numbers)
        unlimited = math.inf if args.format == "json" else "no shared limit"
        tiers = [{"storage_tier": k, "scope": t.scope,
                  "agg_write_GBps": (unlimited if t.aggregate_write_bw_bytes_per_s is None
                                     else t.aggregate_write_bw_bytes_per_s / 1e9),
                  "survives": ",".join(t.survives)} for k, t in catalog.storage_tiers().items()]
        profiles = [{"failure_profile": k, "name": p.name, "classes": ",".join(c.failure_class for c in p.classes)}
                    for k, p in catalog.failure_profiles().items()]
        # every accelerator id (cluster.accelerator), those no system uses too (review 48g: h100-pcie-80gb,
        # gh200-144gb and mi250x appeared nowhere in this listing)
        used = {s.accelerator for s in catalog.systems().values()}
        accs = [{"accelerator": k, "name": a.name, "family": a.family,
                 "dense_16bit_TFLOPs": a.peak_flop_per_s.get("bf16", a.peak_flop_per_s.get("fp16", 0)) / 1e12,
                 "hbm_usable_GiB": round(a.hbm_usable_bytes / 2**30, 1),
                 "scaleup_domain": a.scaleup_domain_size, "usd_per_gpu_h": a.price_per_gpu_hour_usd,
                 "price_date": a.price_date,
                 "price_source": (a.sources or {}).get("price_per_gpu_hour_usd", "")
                 + (" (uncertain)" if "price_per_gpu_hour_usd" in (a.uncertain or []) else ""),
                 "in_a_system": "yes" if k in used else "no (cluster.accelerator only)"}
                for k, a in catalog.accelerators().items()]
        if args.format == "table":
            for frame in (rows, accs, tiers, profiles):
                print_frame(pd.DataFrame(frame), "table")
                sys.stdout.write("\n")
            return 0
        # one table for a script: a `kind` column first says which of the three each row is (review
        # 45a: the joined rows could only be told apart by which fields were blank)
        rows = ([{"kind": "system", **r} for r in rows] + [{"kind": "accelerator", **r} for r in accs]
                + [{"kind": "storage_tier", **r} for r in tiers]
                + [{"kind": "failure_profile", **r} for r in profiles])
    else:
        raise UsageError([f"presets: unknown kind '{what}'; allowed: models, scenarios, hardware"])
    # dtype=object from the start: the hardware listing's rows of three shapes would otherwise
    # turn its counts into floats (gpus_per_node 8.0) before the blanks are filled
    # a field another table's rows do not have: blank in a table or CSV, null in JSON (README)
    frame = pd.DataFrame(rows, dtype=object)
    print_frame(frame if args.format == "json" else frame.fillna(""), args.format)
    return 0


#: Notes that are verdicts on the plan, not statements of the model: each goes to stderr too.
VERDICT_NOTE_PREFIXES = ("Does not fit", "Goodput is 0:", "The model's learned position table")


def _warn_verdicts(notes) -> None:
    """The verdicts that the plan cannot run as given — the memory ones ("Does not fit ..."), a
    steady-state goodput of 0 ("Goodput is 0: ...", the run never finishes) and a learned position
    table shorter than the sequence (the model as defined cannot train at that length; review 51) — on stderr, beside the
    output a script reads (the exit status stays 0): evaluate, export and simulate alike (review
    48g: a launch file and a Monte Carlo of a plan that runs out of memory came without a word;
    review 50: a share link cut inside its checkpoint list, which dropped the tier that recovers
    node failures, printed goodput 0 and an infinite time with nothing on stderr)."""
    for n in notes:
        if n.startswith(VERDICT_NOTE_PREFIXES):
            _err(f"planner: warning: {n}")


def cmd_evaluate(args) -> int:
    from .engine import evaluate

    s = load_scenario_input(args.preset, args.file, args.set, args.hf_config, link=args.link)
    report = evaluate(s)
    print_report(report, args.format)
    _warn_verdicts(report.notes)
    return 0


def cmd_export(args) -> int:
    from .export import deepspeed_config, megatron_args, torchtitan_toml

    s = load_scenario_input(args.preset, args.file, args.set, args.hf_config, link=args.link)
    out = {"megatron": megatron_args, "torchtitan": torchtitan_toml, "deepspeed": deepspeed_config}[args.to](s)
    # a launch file, TOML or JSON: UTF-8 whatever the terminal's code page (TOML and JSON are UTF-8 by
    # their specs; review 43b: cp1252 wrote a name's 'è' as a byte tomllib refuses)
    from ._textout import write_utf8
    write_utf8(out.text)
    if args.to == "deepspeed":  # JSON has no comments: the notes go to stderr
        for n in out.notes:
            _err(f"note: {n}")
    from .engine import evaluate

    _warn_verdicts(evaluate(s).notes)
    return 0


def _sweep_link_options(args) -> None:
    """The sweep's options not given on the command line: from an Explore page link's own keys
    when ``--link`` is one (``ex_obj`` → ``--objective``, ``ex_space`` → its search space,
    ``ex_top`` → ``--top``, ``ex_head`` (%) → ``--min-headroom``, ``ex_ties`` → ``--distinct``,
    with the page's defaults for absent keys), else the command's own defaults. Found by review
    15c: the same scenario ranked other splits here than on the Explore page, whose default
    "focused" space the command could not express. The values were checked by :func:`link_input`
    (:func:`page_key_errors`)."""
    from .sweep import EXPLORE_DEFAULTS, SEARCH_SPACES

    if args.link is not None and (args.preset is not None or args.file is not None):
        raise UsageError([TWO_INPUTS])  # before the link's note, which would describe a sweep not run
    page = link_input(args.link)[1] if args.link is not None else {}
    explore = any(k in _EXPLORE_KEYS for k in page)
    got = {k: page.get(k, EXPLORE_DEFAULTS[k]) for k in EXPLORE_DEFAULTS} if explore else {}
    used = []

    for opt, key, default in (("objective", "ex_obj", "time_to_train"), ("top", "ex_top", 20),
                              ("min_headroom", "ex_head", 0.0), ("distinct", "ex_ties", False)):
        if getattr(args, opt) is not None:
            continue
        if key in got:
            try:
                setattr(args, opt, _explore_value(key, got[key]))
            except (ValueError, TypeError):
                raise UsageError([f"--link: {key}={got[key]!r} (the Explore page's) is refused; "
                                  f"{_explore_allowed(key)}"]) from None
            if key in page:
                used.append(f"{key}={page[key]}")
        else:
            setattr(args, opt, default)
    space = got.get("ex_space")
    if space is not None:
        try:
            space = _explore_value("ex_space", space)
        except ValueError:
            raise UsageError([f"--link: ex_space={space!r} (the Explore page's) is refused; "
                              f"{_explore_allowed('ex_space')}"]) from None
        for opt, v in SEARCH_SPACES[space].items():  # build_space's options are the command's attributes
            if getattr(args, opt) is None:
                setattr(args, opt, ",".join(map(str, v)) if isinstance(v, tuple) else v)
        if "ex_space" in page:
            used.append(f"ex_space={space}")
    if explore:
        rest = [f"{k}={v}" for k, v in EXPLORE_DEFAULTS.items() if k not in page]
        parts = ([", ".join(used)] if used else []) + (["the page's defaults " + ", ".join(rest)] if rest else [])
        _err("note: --link is an Explore page link: the sweep ranks as the page does (" + "; ".join(parts)
             + "); a flag given here wins")


#: The Explore page's link keys (planner.sweep.EXPLORE_PAGE_KEYS, which the page reads): its
#: controls; ex_color colours its charts only, not read by the sweep but refused as the page refuses it.
from .sweep import EXPLORE_PAGE_KEYS as _EXPLORE_KEYS  # noqa: E402


def _explore_value(key: str, text: Any) -> Any:
    """An Explore link key's value as the page reads it (app_pages/_common.py link_choice: the exact
    text among the allowed; link_int: ASCII digits in range, planner.share.page_int), as the sweep's option: ex_head
    in % → the fraction of usable HBM, ex_ties → bool. ValueError for what the page refuses."""
    from .sweep import EXPLORE_HEADROOM_MAX_PCT, EXPLORE_TOP_MAX, OBJECTIVES, SEARCH_SPACES

    v = str(text)

    def choice(allowed):
        if v not in allowed:
            raise ValueError(v)
        return v

    if key == "ex_obj":
        return choice(tuple(OBJECTIVES))
    if key == "ex_space":
        return choice(tuple(SEARCH_SPACES))
    if key == "ex_top":
        return _share.page_int(v, 1, EXPLORE_TOP_MAX)
    if key == "ex_head":
        return _share.page_int(v, 0, EXPLORE_HEADROOM_MAX_PCT) / 100.0
    if key == "ex_ties":
        return choice(("0", "1")) == "1"
    if key == "ex_color":
        return choice(_share.EXPLORE_COLOR_CHOICES)
    raise ValueError(key)


def _explore_allowed(key: str) -> str:
    """What an Explore link key allows (its box on the page)."""
    from .sweep import EXPLORE_HEADROOM_MAX_PCT, EXPLORE_TOP_MAX, OBJECTIVES, SEARCH_SPACES

    return {"ex_obj": "allowed: " + ", ".join(OBJECTIVES), "ex_space": "allowed: " + ", ".join(SEARCH_SPACES),
            "ex_top": f"allowed a whole number 1 to {EXPLORE_TOP_MAX}",
            "ex_head": f"allowed a whole number 0 to {EXPLORE_HEADROOM_MAX_PCT} (% of usable HBM)",
            "ex_ties": "allowed: 0, 1", "ex_color": "allowed: " + ", ".join(_share.EXPLORE_COLOR_CHOICES)}[key]


def cmd_link(args) -> int:
    """The scenario as the dashboard's Plan page link (``planner.share.scenario_to_params``, what
    the page writes into its address), so a plan made here opens with the same numbers there."""
    from urllib.parse import urlencode, urlsplit

    from . import share

    url = (args.base_url or "").strip()
    # an address a browser opens: http(s)://host[:port]/path (review 17b: 'localhost:8871', the
    # address without its scheme, was written as 'localhost:8871?p=...', which no terminal or chat
    # makes a link and a browser reads as a search; 'ftp://x' and '' were taken as well)
    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
    except ValueError:  # a port that is not a number or above 65,535, a bad IPv6 address
        ok = False
    # a space or control character inside it (review 17f: 'http://my host:8501/' was written out as
    # 'http://my host:8501/?p=...', a link cut at the space; a host has none, a path writes %20)
    if ok and any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        ok = False
    if not ok:
        raise UsageError([f"--base-url {url!r}: expected the dashboard's address, http:// or https:// and a host "
                          "(a port 1 to 65,535 if any; no spaces, a path writes %20), e.g. http://localhost:8501/"])
    # the address without its query or fragment, and without another page's path: the link written
    # is a Plan page link, which the Compare / Validate pages do not read (review 46b); one suggestion
    # for both refusals (review 46e: the query's advice kept /compare, then refused in turn)
    bare = url.split("#", 1)[0].split("?", 1)[0]
    page = urlsplit(bare).path.rstrip("/").rsplit("/", 1)[-1].lower()
    if page in ("compare", "validate"):
        bare = bare.rstrip("/").rsplit("/", 1)[0] + "/"
    if parts.query:  # review 20: 'http://host/?p=foo' lost its query without a word
        raise UsageError([f"--base-url {url!r}: has a query (?{parts.query}), which the link written replaces; give "
                          f"the dashboard's address only, {bare!r}; a share link to read goes in --link"])
    if page in ("compare", "validate"):
        raise UsageError([f"--base-url {url!r}: ends in the {page.capitalize()} page's path, but the link written "
                          f"is a Plan page link; give the dashboard's address, {bare!r}"])
    s = load_scenario_input(args.preset, args.file, args.set, args.hf_config, link=args.link)
    base = args.preset
    if base is None and args.link is not None:
        base = share.last_value(share.parse_link(args.link).get("p"))
    sj = s.to_json_dict()
    # a value the Plan page's boxes (and so the link reader) cannot hold would be written into a link
    # that the page and evaluate --link then refuse, keeping the preset's value (found by review 23:
    # --set training.tokens_total=1000 wrote tok=1000, below the page's 1e6)
    bad = share.widget_range_errors(sj)
    if bad:
        raise UsageError([f"{line} (a share link holds only what the Plan page's boxes do; evaluate, sweep and "
                          "simulate take the scenario as it is)" for line in bad])
    params = share.scenario_to_params(sj, preset=base or share.DEFAULT_PRESET)
    if args.link is not None:  # a Plan link's Monte Carlo boxes go on with it (checked by link_input)
        params.update({k: v for k, v in link_input(args.link)[1].items() if k in PLAN_MC_KEYS})
    # the address without its query or fragment: a query after a '#' is no query (found by review 15f:
    # --base-url 'http://host/#top' wrote http://host/#top?p=..., which opens the default preset)
    addr = url.split('#', 1)[0].split('?', 1)[0]
    if not urlsplit(addr).path:  # http://host:9000 → http://host:9000/?p=… (review 42a), as a browser writes it
        addr += "/"
    sys.stdout.write(f"{addr}?{urlencode(params)}\n")
    # a link carries the inputs, not the scenario's label: say so where the label would change (review
    # 24: --set name=my-run came back from the link as the preset's name without a word)
    back = share.params_to_scenario(params)[0].get("name")
    if sj.get("name") and back != sj.get("name"):
        opens = f"as {share.one_line_show(str(back))}" if back else "without a name"
        sys.stderr.write(f"note: a share link carries no scenario name: it opens {opens}, not "
                         f"{share.one_line_show(str(sj['name']))} (every number is the same)\n")
    return 0


def cmd_sweep(args) -> int:
    from .sweep import OBJECTIVES, no_split_reason, no_valid_split_reason, replaced_split, sweep

    _sweep_link_options(args)
    data = scenario_input_json(args.preset, args.file, args.set, args.hf_config, sweep_gpus=args.gpus,
                               link=args.link)
    try:
        s = validate_input(data)
    except UsageError as e:
        # The sweep replaces the split: one that does not suit the model or the GPU count (an
        # imported config, another size) is no reason to refuse. Start from the plainest split
        # the scenario accepts, as the dashboard's Explore page does; only errors that remain
        # there are reported.
        found = replaced_split(data, e)
        if found is None:
            raise
        s, start_gpus, note = found
        if start_gpus is not None and args.gpus is None:
            args.gpus = start_gpus  # no split of the scenario's own GPU count is valid: still swept, to say why
        _err(f"note: {note}")
    if args.objective not in OBJECTIVES:
        raise UsageError([f"--objective {args.objective!r}: allowed: {', '.join(OBJECTIVES)}"])
    if args.gpus is not None and not 1 <= args.gpus <= COUNT_MAX:  # planner.sweep's range
        raise UsageError([f"--gpus {args.gpus}: allowed 1 to {COUNT_MAX:,}"])
    if not 1 <= args.top <= 1_000_000:
        raise UsageError([f"--top {args.top}: allowed 1 to 1,000,000"])
    from .sweep import MEMORY_RULES

    if args.memory_rule not in MEMORY_RULES:
        raise UsageError([f"--memory-rule {args.memory_rule!r}: allowed: {', '.join(MEMORY_RULES)}"])
    if not (math.isfinite(args.min_headroom) and 0.0 <= args.min_headroom < 1.0):
        raise UsageError([f"--min-headroom {args.min_headroom!r}: allowed 0 to below 1 (a fraction of usable HBM)"])
    from .batch import RECOMPUTE, SCHEDULES

    from .batch import OFFLOAD

    space = {}
    for opt, allowed in (("recompute", RECOMPUTE), ("schedules", SCHEDULES), ("offload", OFFLOAD),
                         ("zero_stages", ("0", "1", "2", "3"))):
        text = getattr(args, opt)
        if text is None:
            continue
        vals = tuple(x.strip() for x in str(text).split(","))
        # an empty entry ('gpipe,,1f1b', a trailing comma) is refused, not dropped (review 48, new-user check)
        if not vals or any(x not in allowed for x in vals):
            raise UsageError([f"--{opt.replace('_', '-')} {text!r}: a comma-separated list of {', '.join(allowed)}"])
        space[opt] = tuple(int(x) for x in vals) if opt == "zero_stages" else vals
    for opt, hi in (("cp_max", 100_000), ("vpp_max", 100_000), ("micro_batch_max", 10_000_000)):
        v = getattr(args, opt)
        if v is None:
            continue
        if not 1 <= int(v) <= hi:
            raise UsageError([f"--{opt.replace('_', '-')} {v}: allowed 1 to {hi:,}"])
        space[opt] = int(v)
    if "schedules" in space and "interleaved" in space["schedules"] and space.get("vpp_max") == 1:
        # review 48 (new-user check): an interleaved schedule needs vpp >= 2; --vpp-max 1 gave none silently
        _err("note: --schedules interleaved with --vpp-max 1: interleaving needs vpp >= 2, so no interleaved "
             "split is swept")
    if "schedules" in space and "1f1b" not in space["schedules"]:
        # review 43a: the PP 1 rows a schedule filter keeps (review 42a) came back as 1f1b without a word
        _err(f"note: --schedules {','.join(space['schedules'])}: the PP 1 splits, which have no pipeline to "
             "schedule, are kept and shown as 1f1b (plain gradient accumulation)")
    if s.parallelism.dp_shard is not None and s.parallelism.dp_shard < s.parallelism.dp:
        _err(f"note: the sweep shards ZeRO over all DP ranks: dp_shard = {s.parallelism.dp_shard} "
                         "(hybrid sharding) is not swept")
    if not s.parallelism.flash_attention and (s.parallelism.cp > 1 or int(space.get("cp_max", 2) or 1) > 1):
        # review 24: the sweep's rule R_CP_FLASH; the scenario's own CP 2 was dropped without a word
        _err("note: CP stays 1 in this sweep: parallelism.flash_attention is off, and no framework runs "
             "materialised-score attention under context parallelism (--set parallelism.flash_attention=true "
             "to sweep CP)")
    if s.parallelism.etp is not None and s.resolved_model().moe is not None:
        # the sweep does not search expert TP: each row runs the scenario's where it divides the row's TP,
        # gcd(etp, tp) (review 16e said "not swept"; until review h27c the rows ran etp = tp)
        _err(f"note: expert TP is not swept: each split runs gcd(etp, TP) = the scenario's etp = {s.parallelism.etp} "
             "where it divides the split's TP (less where it does not)")
    try:
        if args.distinct:  # ties removed from the whole ranking first, then the top rows
            from .sweep import distinct_results

            df = sweep(s, gpus=args.gpus, objective=args.objective, top=None,
                       memory_rule=args.memory_rule, min_headroom=args.min_headroom,
                       feasible_only=not args.include_infeasible, **space)
            n_all = len(df)
            df = distinct_results(df)
            df.attrs["n_ties_hidden"] = n_all - len(df)
            df = df.head(args.top)
        else:
            df = sweep(s, gpus=args.gpus, objective=args.objective, top=args.top,
                       memory_rule=args.memory_rule, min_headroom=args.min_headroom,
                       feasible_only=not args.include_infeasible, **space)
    except ValueError as e:
        raise UsageError([str(e)]) from None
    if len(df) == 0 or df.attrs.get("n_feasible", 1) == 0:
        n = args.gpus or s.cluster.n_gpus
        n_valid = df.attrs.get("n_configurations", 0)
        # the space tried and the fewest GPUs that fit, as the Explore page says (found by review:
        # --recompute selective was answered as if the default recompute list had been tried)
        # with the sweep's objective (review 15l: an mfu sweep was told "no finite time to train")
        hint = (no_valid_split_reason(s, n, uneven_how="--set parallelism.layer_split=uneven", **space)
                if n_valid == 0
                else no_split_reason(s, n_valid, gpus=n, memory_rule=args.memory_rule,
                                     min_headroom=args.min_headroom, objective=args.objective, **space))
        # the message on stderr; stdout stays parseable in the format asked for
        _err(f"planner: no feasible split of {n:,} GPUs ({n_valid:,} valid splits evaluated, "
                         f"{df.attrs.get('n_feasible', 0)} feasible): {hint}")
        if len(df) and args.format == "table":  # --include-infeasible: the nearest misses, with their reason
            print_frame(sweep_table(df), "table")
        elif args.format != "table":
            print_frame(df, args.format)
        return 1
    if args.format == "table":
        df = sweep_table(df)
        if df.attrs:
            sys.stdout.write(", ".join(f"{k} = {v}" for k, v in df.attrs.items()) + "\n")
    print_frame(df, args.format)
    return 0


#: Columns of the sweep's terminal table: the split, then the results in display units.
SWEEP_TABLE = (
    ("system", "system", 1.0), ("n_gpus", "gpus", 1.0), ("tp", "tp", 1.0), ("pp", "pp", 1.0),
    ("dp", "dp", 1.0), ("cp", "cp", 1.0), ("ep", "ep", 1.0), ("vpp", "vpp", 1.0),
    ("micro_batch_size", "mbs", 1.0), ("zero_stage", "zero", 1.0), ("recompute", "recompute", 1.0),
    ("schedule", "schedule", 1.0), ("offload_optimizer", "offload", 1.0),
    ("mem_total_bytes", "mem_GiB", 2.0**30), ("step_time_s", "step_s", 1.0), ("mfu", "mfu_pct", 0.01),
    ("tokens_per_s", "Mtok_per_s", 1e6), ("goodput", "goodput_pct", 0.01),
    ("goodput_tokens_per_s", "gp_Mtok_per_s", 1e6),
    ("time_to_train_days", "days", 1.0), ("cost_usd", "cost_MUSD", 1e6),
    ("pareto_time_cost", "pareto", 1.0), ("infeasible_reason", "reason", 1.0),
)


def sweep_table(df: pd.DataFrame) -> pd.DataFrame:
    """The sweep's top rows with the columns a person reads first, in display units: MFU and goodput
    in % as ``evaluate`` and the Explore page show them, and under the ``goodput_tokens_per_s``
    objective the ranked quantity itself (found by review 15c: the table showed mfu 0.5966 and
    goodput 0.9932 beside evaluate's "59.7 %", and not the goodput × tokens/s it was ranked on,
    which the Explore page shows as gp·Mtok/s)."""
    from .charts import cost_column, days_column

    out = pd.DataFrame(index=df.index)
    for col, label, div in SWEEP_TABLE:
        if col == "goodput_tokens_per_s" and df.attrs.get("objective") != col:
            continue
        if col in ("time_to_train_days", "cost_usd") and col in df:
            # the unit by size, as the Explore table's (review 17b: 10⁸ tokens read "days 0.01522",
            # "cost_MUSD 6.299e-06"): days / years, h, min, s; M USD, k USD, USD
            unit, scale, _ = (days_column if col == "time_to_train_days" else cost_column)(df[col])
            label = unit if col == "time_to_train_days" else "cost_" + unit.replace(" ", "")
            out[label] = df[col] * scale
            continue
        if col == "infeasible_reason" and col in df and not df[col].astype(str).str.len().any():
            continue  # every row shown fits: an empty column says nothing (fresh-user check, session 33)
        if col in df:
            out[label] = df[col] / div if div != 1.0 else df[col]
        if col == "mfu" and col in df and "mfu_precision_peak" in df:
            # MFU of the GEMM precision's own peak beside the 16-bit one, where they differ (an FP8
            # / FP4 split: mfu_pct can pass 100; fresh-user check, session 33)
            prec = df["mfu_precision_peak"]
            if not np.allclose(prec.to_numpy(dtype=float), df[col].to_numpy(dtype=float), equal_nan=True):
                out["mfu_prec_pct"] = prec / 0.01
    out.attrs.update(df.attrs)
    return out


def cmd_simulate(args) -> int:
    from .simulate import MAX_TRIALS, simulate, summarize, unfinished_note

    s = load_scenario_input(args.preset, args.file, args.set, args.hf_config, link=args.link)
    page = link_input(args.link)[1] if args.link is not None else {}  # its pl_* values checked there
    # any link is read as the Plan page reads it: its Monte Carlo boxes, or the page's defaults where
    # it has none (review 39: a link without pl_mct ran 10,000 trials against the page's 2,000)
    plan = args.link is not None
    for key, (opt, _box, lo, hi, page_default) in PLAN_MC_KEYS.items():
        if getattr(args, opt) is not None:
            continue
        # a Plan page link's Monte Carlo boxes, as the page runs them (found by review 15c: the link
        # of a 2,000-trial table gave 10,000 other runs here); a box the link leaves out is the page's
        # default (2,000 trials, seed 0), as the page shows it (review 15f)
        if plan:
            setattr(args, opt, _share.page_int(page[key], lo, hi) if key in page else page_default)
            _err(f"note: --{opt} {getattr(args, opt):,} from the link's {key} (the Plan page's Monte Carlo)" if key in page
                 else f"note: --{opt} {getattr(args, opt):,}, the Plan page's default (the link has no {key})")
        else:
            setattr(args, opt, 10_000 if opt == "trials" else 0)
    if args.trials < 1 or args.trials > MAX_TRIALS:
        raise UsageError([f"--trials {args.trials}: allowed 1 to {MAX_TRIALS:,}"])
    if not 0 <= args.seed < 2**63:
        raise UsageError([f"--seed {args.seed}: allowed 0 to 2^63 − 1"])
    long_note = simulate_time_note(s, args.trials)
    if long_note:
        _err(f"note: {long_note}")
    from .engine import evaluate

    _warn_verdicts(evaluate(s).notes)
    df = simulate(s, n_trials=args.trials, seed=args.seed)
    summary = summarize(df)
    if args.format == "table":
        print_frame(simulate_table(summary), "table")
        print(f"{args.trials:,} simulated runs (trials), seed {args.seed}: the same seed and number of trials give the same runs; "
              "goodput's mean is pooled, the runs' work over their mean time to train (0 if one never finishes); "
              "mean_se: the standard error of the mean (std / √n), how well the trials fix it (—: one trial, or a run "
              "that never finishes)")
    else:
        print_frame(df if args.format == "csv" else summary, args.format)
    note = unfinished_note(df)
    if note:
        _err(f"note: {note}")
    return 0


#: Simulated failures (trials × failures per run, one Monte Carlo round each) above which ``simulate``
#: says first how long it will take: the Plan page's budget (``app_pages/plan.py``, MC_PAGE_BUDGET).
SIMULATE_NOTE_ROUNDS = 1e8
#: Rounds per second the note's estimate assumes, measured on a 2-core machine (review 17b, default
#: preset at 10¹⁵ tokens, 6,876 failures per run): 10,000 trials (6.9·10⁷ rounds) in 4.5 s and 50,000
#: (3.4·10⁸) in 22.7 s, 1.5·10⁷ a second; the help's 10⁵ trials × 580 failures in 6–9 s, 0.6–1·10⁷.
SIMULATE_ROUNDS_PER_S = 1e7


def simulate_time_note(s, trials: int) -> str | None:
    """A note, before a Monte Carlo of more than :data:`SIMULATE_NOTE_ROUNDS` rounds, with its
    expected failures per run (``planner.simulate.expected_rounds``), its likely duration and the
    trials that stay within the budget; None below it or when it cannot be estimated (simulate
    itself then says why). Found by review 17b: 1,000,000 trials of the default preset at 10¹⁶
    tokens (68,700 failures per run, 6.9·10¹⁰ rounds, about 4 h) printed nothing for as long."""
    from . import batch as _batch
    from . import engine as _engine
    from .simulate import expected_rounds, too_many_failures, too_many_rounds

    try:
        out = _engine.run_batch(_batch.from_scenarios([s]))
        if too_many_failures(out, 0) is not None:  # refused by simulate, with its own reason
            return None
        if (why := too_many_rounds(out, 0, trials)) is not None:  # refused here, naming --trials
            raise UsageError(["--trials " + why.removeprefix("n_trials: ")])
        n = float(expected_rounds(out, 0))
    except UsageError:
        raise
    except Exception:  # noqa: BLE001 - only an estimate; simulate checks the scenario itself
        return None
    rounds = trials * n
    if not (np.isfinite(rounds) and rounds > SIMULATE_NOTE_ROUNDS):
        return None
    secs = rounds / SIMULATE_ROUNDS_PER_S
    took = f"{secs / 3600:,.1f} h" if secs >= 3600 else f"{secs / 60:,.0f} min" if secs >= 120 else f"{secs:,.0f} s"
    fewer = max(1, int(SIMULATE_NOTE_ROUNDS // n))
    return (f"{trials:,} trials × about {n:,.0f} failures per run = {rounds:.2g} simulated failures: roughly {took} "
            f"(about 10⁷ a second on a 2-core machine; Ctrl-C stops it); --trials {fewer:,} takes about "
            f"{SIMULATE_NOTE_ROUNDS / SIMULATE_ROUNDS_PER_S:.0f} s")


def simulate_table(summary: pd.DataFrame) -> pd.DataFrame:
    """``simulate``'s summary for the terminal: goodput in % (row ``goodput_pct``), as ``evaluate``
    and the Plan page's Monte Carlo table ("goodput, %") show it (found by review 15c: 0.9378 here,
    93.8 % there); JSON and CSV keep the fraction, as every result column."""
    out = summary.copy()
    if "metric" in out:
        rows = out["metric"] == "goodput"
        num = [c for c in out.columns if c != "metric"]
        out[num] = out[num].astype(float)
        out.loc[rows, num] = out.loc[rows, num] * 100.0
        out.loc[rows, "metric"] = "goodput_pct"
        cost = out["metric"] == "cost_usd"
        if cost.any():  # in the unit the evaluate and sweep tables pick by size ("10.96 M USD")
            from .charts import cost_column
            unit, factor, _dec = cost_column(out.loc[cost, num].to_numpy(float).ravel())
            out.loc[cost, num] = out.loc[cost, num] * factor
            out.loc[cost, "metric"] = "cost_" + unit.replace(" ", "_")
    if "mean_se" in out and out["mean_se"].isna().any():  # no standard error (one trial, a run that never finishes)
        out["mean_se"] = out["mean_se"].astype(object).where(out["mean_se"].notna(), "—")
    return out


def cmd_validate(args) -> int:
    from .validation import accuracy_table, fits_note, validate

    if args.by_family:
        if args.run is not None:
            raise UsageError(["--by-family summarises every run; drop --run (or --by-family)"])
        if args.csv is not None:
            raise UsageError(["--by-family uses the calibration and out-of-sample files; drop --csv"])
        try:
            table = accuracy_table()
        except (OSError, ValueError) as e:
            raise UsageError([f"validate --by-family: {e}"]) from None
        if table.empty:
            raise UsageError(["validate --by-family: no validation file found (../shared/validation/"
                              "calibration.csv, validation/out_of_sample.csv)"])
        print_frame(table, args.format)
        return 0
    path = args.csv
    if path is not None and not path.strip():
        raise UsageError(["--csv: give the path of a CSV file with the columns of calibration.csv"])
    if path is not None and not Path(path).is_file():
        raise UsageError([f"--csv {path}: no such file" if not Path(path).exists() else f"--csv {path}: not a file"])
    if args.run is not None:
        return _validate_run(args.run, path, args.format)
    try:
        rows, summary = validate(path)
    except (ValueError, UnicodeDecodeError) as e:
        raise UsageError([f"--csv {path}: {e}" if path else f"validate: {e}"]) from None
    except OSError as e:  # unreadable (permissions, a read error): the system's reason, one line
        raise UsageError([f"--csv {path}: cannot read the file: {e.strerror or e}" if path
                          else f"validate: cannot read the calibration file: {e.strerror or e}"]) from None
    if path is not None:
        # the default rules read the framework, the year and the flags (TP overlap, recompute,
        # kernels) from these columns' text; without them every such setting falls back (found by
        # review: the calibration file's rows without them, overall median 4.6 % -> 7.0 %)
        from .validation import _read
        missing = [c for c in ("source", "notes") if c not in _read(path).columns]
        if missing:
            _err(f"note: {path} has no {' / '.join(repr(c) for c in missing)} column: the default rules "
                             "read the framework, the year and settings such as TP-comm overlap from it, so those "
                             "settings take their fallbacks (see each row's defaults)")
    if args.format == "table":
        print_frame(rows, "table")
        sys.stdout.write("\n")
        print_frame(summary, "table")
        if "fits" in rows.columns:
            sys.stdout.write(fits_note(rows))
    elif args.format == "json":
        sys.stdout.write(json.dumps({"rows": json.loads(rows.to_json(orient="records")),
                                     "summary": json.loads(summary.to_json(orient="records"))}, indent=2) + "\n")
    else:
        rows.to_csv(sys.stdout, index=False)
    return 0


def _validate_run(run_id: str, path: str | None, fmt: str) -> int:
    """``planner validate --run``: one run as the model reads it. Table: the published and predicted
    figures, the defaults the row took, and each part of the predicted step with its formula
    (``planner.evaluate`` of the row's scenario, :func:`planner.validation.run_scenario`: the same
    step time as the comparison). JSON: the scenario alone, a file ``planner evaluate``,
    ``sweep`` and ``link`` read. CSV: the run's row of ``planner validate``."""
    from .charts import STEP_PARTS
    from .validation import run_scenario, validate

    rid = str(run_id).strip()
    if not rid:
        raise UsageError(["--run: give a run_id of the CSV (the first column of `planner validate`)"])
    where = f"--csv {path}" if path else "the calibration file"
    try:
        scen, defaults = run_scenario(rid, path)
    except (ValueError, UnicodeDecodeError) as e:
        raise UsageError([f"--run {tty_line(rid)} ({where}): {tty_line(e)}"]) from None
    except OSError as e:
        raise UsageError([f"--run {tty_line(rid)}: cannot read {where}: {e.strerror or e}"]) from None
    if fmt == "json":
        sys.stdout.write(json.dumps(_json_safe(scen.to_json_dict()), indent=2, allow_nan=False) + "\n")
        return 0
    try:
        rows, _ = validate(path, require_compared=False)
    except (ValueError, UnicodeDecodeError, OSError) as e:
        raise UsageError([f"--run {tty_line(rid)}: {tty_line(e)} ({where})"]) from None
    row = rows[rows["run_id"].astype(str).str.strip().eq(rid)].head(1)
    if fmt == "csv":
        row.to_csv(sys.stdout, index=False)
        return 0
    r = row.iloc[0].to_dict()
    from .engine import evaluate

    rep = evaluate(scen)
    res, ex = rep.results, rep.explain
    out = [f"run {tty_line(rid)} (group {tty_line(r.get('group'))}; {where})"]
    metric = str(r.get("metric") or "")
    if r.get("status") == "ok":
        pub, pred, err = float(r["published"]), float(r["predicted"]), float(r["rel_err"])
        sense = "published / predicted − 1" if metric == "step_time_s" else "predicted / published − 1"
        out.append(f"  published {metric} {pub:,.4g}; predicted {pred:,.4g}: error {err:+.1%} ({sense}; "
                   "+ = the model is faster than the run)")
    else:  # validate's status says why ("not compared: global batch not published ...", "no published metric")
        status = str(r.get("status") or "")
        out.append(f"  {tty_line(status if status.startswith('not compared') else 'not compared: ' + status)}")
        if "global batch not published" in status:  # the scenario's batch is no published figure
            out.append(f"  the scenario's global batch {scen.training.global_batch_size:,} is the memory check's placeholder "
                       "(pp · micro-batch · dp: 1F1B's most activations in flight), not the run's")
    # validate's own defaults column (it adds the FLOP count a TFLOP/s cell was read as)
    shown = r.get("defaults") if isinstance(r.get("defaults"), str) else defaults
    out.append(f"  defaults the row took: {tty_line(shown) if shown else 'none (the row publishes every setting read)'}")
    out.append(f"step time {res['step_time_s']:.4g} s per optimizer step (planner evaluate of the scenario, below):")
    for col, label in STEP_PARTS:
        out.append(f"  {label:<18} {res[col]:>10.4g} s   {tty_line(ex.get(col, ''))}")
    for col in ("tflops_per_gpu", "mfu", "mem_total_bytes"):
        if col in ex:
            out.append(f"  {col}: {tty_line(ex[col])}")
    pub_mem = r.get("mem_published")
    if pub_mem is not None and np.isfinite(pub_mem) and pub_mem > 0:  # review 49: the prediction alone was shown
        pred_gib = float(res["mem_total_bytes"]) / 2**30
        out.append(f"  memory per GPU: published {pub_mem:,.4g} (the row's mem_per_gpu_gb; GB or GiB, allocated, reserved "
                   f"or nvidia-smi as its source states); predicted {pred_gib:,.2f} GiB on the most loaded stage: "
                   f"predicted / published {pred_gib / pub_mem:.3f} (published read as GiB; docs/memory.md)")
    if not res.get("fits", True):  # as validate's table and evaluate say (review 19c: --run did not)
        out.append("  does not fit in memory as read: a default the row took (recompute, offload, micro-batch) may not be "
                   "what the run used, or the memory model over-estimates it; the throughput is compared all the same")
    src = f" --csv {shlex.quote(path)}" if path else ""  # a command to paste: quoted (review 18d)
    run_opt = f"--run={shlex.quote(rid)}" if rid.startswith("-") else f"--run {shlex.quote(rid)}"  # '-x' is no option
    out.append(f"the scenario: planner validate {tty_line(run_opt)}{tty_line(src)} --format json > run.json, then "
               "planner evaluate run.json (every result), planner link run.json (the dashboard's Plan page)")
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def _whole(allowed: str):
    """An argparse type for a whole-number option: an integer, or a number written with a
    decimal point or an exponent whose value is whole (``1e4``, ``64.0``); anything else is
    refused with the option's range (found by review: ``--trials 1e4`` was "invalid int value:
    '1e4'" without what is allowed). The range itself is checked by the command."""

    def parse(text: str) -> int:
        t = str(text).strip()
        if "_" in t:  # int() and Decimal read Python's digit grouping, '1_000' (review 39)
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number (write it without '_'); allowed {allowed}")
        try:
            return int(t)
        except ValueError:
            pass
        # exact decimal reading (found by review: "--seed 1e17", within 0 to 2^63 − 1, was "out of
        # range" through a float's 2^53 limit, and "1e400" "not a whole number"); a value beyond
        # 10^30 is out of every option's range and is not expanded into an int
        try:
            x = decimal.Decimal(t)
        except (decimal.InvalidOperation, ValueError):
            x = None
        if x is not None and x.is_finite():
            if x.adjusted() > 30:
                # a number of thousands of digits by its size, not echoed whole (review 44g: 5,071
                # characters of --gpus came back)
                shown = repr(text) if len(t) <= 60 else f"a number of {len(t):,} characters"
                raise argparse.ArgumentTypeError(f"{shown} is out of range; allowed {allowed}")
            if x == x.to_integral_value():
                return int(x)
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; allowed {allowed}")

    parse.__name__ = "whole number"
    return parse


def _fraction_arg(text: str) -> float:
    """An argparse type for ``--min-headroom``: a finite number, refused with its range otherwise
    (the range itself is checked by the command)."""
    try:
        x = float(str(text).strip()) if "_" not in str(text) else math.nan  # not '0.0_5' (review 39c)
    except ValueError:
        x = math.nan
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number" + (" (plain digits, no '_')" if "_" in str(text) else "")
                                         + "; allowed 0 to below 1")
    return x


_fraction_arg.__name__ = "fraction"


class _Once(argparse.Action):
    """An option that takes one value, refused when given twice (review 46b: ``--preset a --preset
    b`` evaluated b without a word, where a share link's key given twice is refused)."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = namespace.__dict__.setdefault("_options_given", {})
        if self.dest in seen:
            parser.error(f"{option_string}: given twice ({seen[self.dest]!r}, then {values!r}); give it once")
        seen[self.dest] = values
        setattr(namespace, self.dest, values)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own errors: one line, status 2
        _err(f"planner: {message}")
        raise SystemExit(2)

    def add_argument(self, *args, **kwargs):
        # every option with one value (argparse's plain "store"): refused when given twice
        if args and str(args[0]).startswith("-") and kwargs.get("action") in (None, "store"):
            kwargs["action"] = _Once
        return super().add_argument(*args, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="planner", description="Plan a large-model training run.")
    from . import __version__
    p.add_argument("--version", action="version", version=f"planner (clusterplan) {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def scenario_args(sp, formats=True, format_help=None, link_help=""):
        sp.add_argument("file", nargs="?", help="scenario JSON file ('-': read it from standard input)")
        sp.add_argument("--preset", help="scenario preset id (planner presets scenarios)")
        sp.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                        help="override a field, e.g. --set parallelism.tp=4 (repeatable)")
        sp.add_argument("--link", metavar="URL", default=None,
                        help="a share link of the dashboard (its address, or the ?query), read as the app reads "
                             "it: the same scenario and numbers (--set and --hf-config apply on top); a value the "
                             "page would warn about is refused. Quote it in a shell ('...'): its & would end the "
                             "command" + link_help)
        sp.add_argument("--hf-config", metavar="CONFIG.json", default=None,
                        help="a Hugging Face config.json whose architecture replaces the scenario's model "
                             "(without FILE or --preset: the default preset on one 8-GPU node, plain data parallel)")
        if formats:
            sp.add_argument("--format", choices=["table", "json", "csv"], default="table", help=format_help)

    sp = sub.add_parser("evaluate", help="evaluate one scenario")
    scenario_args(sp)
    sp.set_defaults(func=cmd_evaluate)

    sp = sub.add_parser("sweep", help="evaluate every valid split")
    scenario_args(sp, link_help=". An Explore page link also gives the ranking, search space, rows, HBM left "
                                "free and one row per result (ex_obj, ex_space, ex_top, ex_head, ex_ties; the page's "
                                "defaults for those it lacks) in place of the defaults below; a flag given wins")
    sp.add_argument("--gpus", type=_whole("1 to 10,000,000"), default=None, help="cluster size (default: the scenario's)")
    sp.add_argument("--objective", default=None,
                    help="ranking: time_to_train (days, lowest first), cost (USD, lowest first), "
                         "goodput_tokens_per_s or mfu (highest first); default time_to_train")
    sp.add_argument("--top", type=_whole("1 to 1,000,000"), default=None, help="rows to print, 1 to 1,000,000 (default 20)")
    sp.add_argument("--include-infeasible", action="store_true",
                    help="also rank the splits that do not fit (GPU or host memory), after every one that does, "
                         "nearest first by the objective, with their reason (the table's reason column)")
    sp.add_argument("--recompute", default=None,
                    help="recompute modes to try, comma-separated (default: none,selective,full and the "
                         "scenario's own; op_sac = TorchTitan's per-op selective checkpointing)")
    sp.add_argument("--schedules", default=None,
                    help="pipeline schedules to try, comma-separated (default: 1f1b,interleaved,zero_bubble "
                         "and the scenario's own; also gpipe, dualpipe). PP 1 splits have no pipeline and are "
                         "kept, as 1f1b, whichever are listed")
    sp.add_argument("--memory-rule", default="fits",
                    help="fits (default: the memory estimate, margin included, within usable HBM) or "
                         "conservative (also model states + activations at most 80 %% of usable HBM)")
    sp.add_argument("--zero-stages", default=None,
                    help="ZeRO stages to try, comma-separated (default: 0,1,2,3)")
    sp.add_argument("--offload", default=None,
                    help="optimizer offload targets to try, comma-separated: none, cpu, nvme (default: none,cpu "
                         "and the scenario's own)")
    sp.add_argument("--cp-max", type=_whole("1 to 100,000"), default=None,
                    help="largest context-parallel degree tried (powers of two; default 16)")
    sp.add_argument("--vpp-max", type=_whole("1 to 100,000"), default=None,
                    help="largest virtual-pipeline degree tried (default 16)")
    sp.add_argument("--micro-batch-max", type=_whole("1 to 10,000,000"), default=None,
                    help="largest micro-batch tried (default: the global batch). The Explore page's 'focused' "
                         "space is --zero-stages 1 --recompute selective,full --offload none --schedules "
                         "1f1b,interleaved --cp-max 4 --vpp-max 4 --micro-batch-max 4")
    sp.add_argument("--min-headroom", type=_fraction_arg, default=None,
                    help="share of usable HBM each split must leave free, 0 (default) to below 1 "
                         "(0.1: 10 %% of usable HBM left free)")
    sp.add_argument("--distinct", action="store_true", default=None,
                    help="one row per result: leave out the splits whose step time, memory, days and cost "
                         "all equal a better-ranked one's (n_ties_hidden counts them)")
    sp.set_defaults(func=cmd_sweep)

    sp = sub.add_parser("simulate", help="Monte Carlo of the whole run with failures")
    scenario_args(sp, format_help="table and json: the summary (mean, P10, P50, P90 per metric); "
                                  "csv: one row per simulated run",
                  link_help=". A Plan page link also gives its Monte Carlo trials and seed (pl_mct, pl_mcs; the "
                            "page's 2,000 and 0 for one it lacks) in place of the defaults below; a flag given wins")
    sp.add_argument("--trials", type=_whole("1 to 1,000,000"), default=None,
                    help="simulated runs, 1 to 1,000,000 (default 10,000; 10,000 take about 1 s and 100,000 6–10 s, by the machine's load, for a run with ~615 failures, measured on a 2-core machine, longer in proportion to the failures per run; runs expected to fail more than 200,000 times are refused with the analytic figures)")
    sp.add_argument("--seed", type=_whole("0 to 2^63 − 1"), default=None, help="random seed, 0 to 2^63 − 1 (default 0); the same seed and --trials give the same runs")
    sp.set_defaults(func=cmd_simulate)

    sp = sub.add_parser("export", help="the scenario as Megatron-LM arguments, a TorchTitan TOML or a DeepSpeed JSON")
    scenario_args(sp, formats=False)
    sp.add_argument("--to", choices=["megatron", "torchtitan", "deepspeed"], default="megatron",
                    help="megatron (the default): command-line arguments; torchtitan: a job TOML (notes as "
                         "# comments); deepspeed: a config JSON (notes on stderr)")
    sp.set_defaults(func=cmd_export)

    sp = sub.add_parser("link", help="the scenario as a share link of the dashboard (opens the same numbers)",
                        description="Writes the scenario as the dashboard's Plan page link on stdout, unquoted: open "
                                    "it in a browser, or quote it in a shell (planner evaluate --link \"$(planner "
                                    "link ...)\"); its & would end a command.")
    scenario_args(sp, formats=False, link_help=". A Plan link's pl_mct and pl_mcs go on to the link written")
    sp.add_argument("--base-url", default="http://localhost:8501/",
                    help="the dashboard's address the link starts with, http:// or https:// and its host "
                         "(default http://localhost:8501/; another port: http://localhost:8600/)")
    sp.set_defaults(func=cmd_link)

    sp = sub.add_parser("presets", help="list presets")
    sp.add_argument("what", nargs="?", choices=["models", "scenarios", "hardware"],
                    help="scenarios (default): the scenario presets with their descriptions (--format json "
                         "or csv for the whole text); models: the model presets with their parameter counts; "
                         "hardware: the systems (with their accelerator's peak, usable HBM and price), the storage tiers "
                         "and the failure profiles")
    sp.add_argument("--format", choices=["table", "json", "csv"], default="table")
    sp.set_defaults(func=cmd_presets)

    sp = sub.add_parser("validate", help="predicted vs published throughput")
    sp.add_argument("--csv", default=None, help="CSV with the calibration file's columns")
    sp.add_argument("--format", choices=["table", "json", "csv"], default="table")
    sp.add_argument("--run", default=None, metavar="RUN_ID",
                    help="one run as the model reads it: published vs predicted, the defaults it took and "
                    "each part of the step with its formula; --format json writes its scenario (a file "
                    "evaluate / sweep / link read)")
    sp.add_argument("--by-family", action="store_true",
                    help="the band per accelerator family and kind over the calibration and out-of-sample "
                    "runs (what the Plan page and evaluate state); cannot be combined with --csv")
    sp.set_defaults(func=cmd_validate)
    return p


#: Options whose value is a list that may start with "-" (a bad value such as "-1,a"): argparse
#: reads such a value as an option ("expected one argument"); given as ``--opt=value`` it reaches
#: the option's own check, which names what is allowed (review 34).
_LIST_OPTIONS = ("--zero-stages", "--recompute", "--schedules", "--offload", "--set")


def _join_dash_values(argv: list[str]) -> list[str]:
    """``--zero-stages -1,a`` as ``--zero-stages=-1,a`` (see :data:`_LIST_OPTIONS`); a value that
    is itself an option name (``--recompute --top``) is left for argparse to refuse."""
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if (a in _LIST_OPTIONS and i + 1 < len(argv) and argv[i + 1].startswith("-")
                and not argv[i + 1].startswith("--") and not re.fullmatch(r"-[A-Za-z]", argv[i + 1])):
            out.append(f"{a}={argv[i + 1]}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    try:
        # Python's own Ctrl-C handler back (planner/__init__.py set one for the command line while the
        # libraries load); from here the except clause below answers Ctrl-C
        from . import _restore_sigint
        _restore_sigint()
        # a terminal whose encoding cannot show − × ≤ gets ASCII for them, not a UnicodeEncodeError (review 42a)
        from ._textout import use_ascii_where_needed
        use_ascii_where_needed()
        parser = build_parser()
        if not list(sys.argv[1:] if argv is None else argv):  # bare `planner`: the commands, not one terse line
            parser.print_help(sys.stderr)
            return 2
        args = parser.parse_args(_join_dash_values(list(sys.argv[1:] if argv is None else argv)))
        return args.func(args)
    except UsageError as e:
        for line in e.lines:
            _err(f"planner: {line}")
        return 2
    except InputError as e:  # raised by the engine itself (e.g. a run too long to simulate)
        for line in e.lines:
            _err(f"planner: {line}")
        return 2
    except catalog.CatalogError as e:
        _err(f"planner: data file error: {e}")
        return 2
    except BrokenPipeError:  # `planner … | head`: the reader has what it wanted
        _quiet_stdout()
        return 0
    except KeyboardInterrupt:  # Ctrl-C: no traceback (worker processes stop with the pool)
        _err("planner: interrupted")
        return 130
    except OSError as e:  # e.g. output to a full disk (/dev/full): one line, not a traceback
        _quiet_stdout()
        _err(f"planner: cannot write the output: {e.strerror or e}")
        return 1


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush of what could not be
    written raises nothing more (Python's documented recipe for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (captured output)
        pass


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
