"""Catalogue: accelerators, systems, storage tiers, failure profiles (``hardware/``) and model
and scenario presets (``presets/``), loaded from JSON data files and validated by pydantic.

Each file is a JSON object ``{id: entry}``; keys starting with ``_`` (e.g. ``_about``) are
comments. A broken file raises :class:`CatalogError` naming the file, the id and the field.
Units in the files are SI, as in the schema (bytes, bytes/s, FLOP/s, W, USD).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .schema import (
    Accelerator,
    FailureProfile,
    ModelSpec,
    StorageTier,
    System,
    format_errors,
)

T = TypeVar("T", bound=BaseModel)


class CatalogError(ValueError):
    """A data file or a catalogue id is wrong."""


def _root() -> Path:
    here = Path(__file__).resolve().parent
    repo = here.parent
    if (repo / "hardware").is_dir() and (repo / "presets").is_dir():
        return repo
    return here / "_data"


def data_path(*parts: str) -> Path:
    return _root().joinpath(*parts)


def _load_file(path: Path, cls: type[T]) -> dict[str, T]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise CatalogError(f"{path}: file missing") from e
    except json.JSONDecodeError as e:
        raise CatalogError(f"{path}: not valid JSON ({e})") from e
    if not isinstance(raw, dict):
        raise CatalogError(f"{path}: expected an object of id -> entry")
    out: dict[str, T] = {}
    for key, entry in raw.items():
        if key.startswith("_"):
            continue
        if "sources" in cls.model_fields and isinstance(entry, dict) and "sources" not in entry:
            raise CatalogError(f"{path.name}: entry '{key}': sources: every catalogue number needs a source")
        if "sources" in cls.model_fields and isinstance(entry, dict) and isinstance(entry.get("sources"), dict):
            # a wildcard or a blank source would pass the schema's per-number check (an inline
            # object a user types may use '*'; a catalogue file names each number's source)
            bad = sorted(k for k, v in entry["sources"].items() if k == "*" or not str(v).strip())
            if bad:
                raise CatalogError(f"{path.name}: entry '{key}': sources: {', '.join(map(repr, bad))}: a catalogue "
                                   "file gives each number its own non-empty source (no '*' wildcard)")
            # settings that change the model without being numbers (System.SOURCED_SETTINGS) need one too
            # (review 48c: in_network_reduction had none in any system)
            unsourced = [f for f in getattr(cls, "SOURCED_SETTINGS", ()) if f not in entry["sources"]]
            if unsourced:
                raise CatalogError(f"{path.name}: entry '{key}': sources: {', '.join(unsourced)}: a catalogue file "
                                   "names the source of each setting too")
        try:
            out[key] = cls.model_validate(entry)
        except ValidationError as e:
            msgs = "; ".join(format_errors(e, json_spelling=True))
            raise CatalogError(f"{path.name}: entry '{key}': {msgs}") from e
    return out


@lru_cache(maxsize=None)
def accelerators() -> dict[str, Accelerator]:
    return _load_file(data_path("hardware", "accelerators.json"), Accelerator)


@lru_cache(maxsize=None)
def systems() -> dict[str, System]:
    out = _load_file(data_path("hardware", "systems.json"), System)
    acc = accelerators()
    for k, s in out.items():
        if s.accelerator not in acc:
            raise CatalogError(f"systems.json: entry '{k}': accelerator '{s.accelerator}' is not in accelerators.json")
    return out


@lru_cache(maxsize=None)
def storage_tiers() -> dict[str, StorageTier]:
    return _load_file(data_path("hardware", "storage.json"), StorageTier)


@lru_cache(maxsize=None)
def failure_profiles() -> dict[str, FailureProfile]:
    return _load_file(data_path("hardware", "failure_profiles.json"), FailureProfile)


@lru_cache(maxsize=None)
def models() -> dict[str, ModelSpec]:
    return _load_file(data_path("presets", "models.json"), ModelSpec)


@lru_cache(maxsize=None)
def scenario_presets_raw() -> dict[str, dict[str, Any]]:
    """Scenario presets as raw JSON: ``{id: {"source", "description", "scenario"}}``."""
    path = data_path("presets", "scenarios.json")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError) as e:
        raise CatalogError(f"{path}: {e}") from e
    return {k: v for k, v in raw.items() if not k.startswith("_")}


def _resolve(value: Any, table: dict[str, T], cls: type[T], what: str, loc: tuple) -> T:
    if isinstance(value, cls):
        return value
    if isinstance(value, str):
        if value in table:
            return table[value]
        # the schema's path notation (schema._loc_str): checkpoint.tiers[0].tier, not tiers.0.tier
        where = "".join(f"[{x}]" if isinstance(x, int) else f"{'.' if i else ''}{x}"
                        for i, x in enumerate(loc)) or what
        allowed = ", ".join(sorted(table))
        raise ValueError(f"{where}: unknown {what} id '{value}'; allowed: {allowed}")
    return cls.model_validate(value)


def resolve_model(value: Any, loc: tuple = ("model",)) -> ModelSpec:
    return _resolve(value, models(), ModelSpec, "model", loc)


def resolve_system(value: Any, loc: tuple = ("cluster", "system")) -> System:
    return _resolve(value, systems(), System, "system", loc)


def resolve_accelerator(value: Any, loc: tuple = ("cluster", "accelerator")) -> Accelerator:
    return _resolve(value, accelerators(), Accelerator, "accelerator", loc)


def resolve_storage(value: Any, loc: tuple = ("checkpoint", "tiers")) -> StorageTier:
    return _resolve(value, storage_tiers(), StorageTier, "storage tier", loc)


def resolve_failure_profile(value: Any, loc: tuple = ("reliability", "profile")) -> FailureProfile:
    return _resolve(value, failure_profiles(), FailureProfile, "failure profile", loc)


def validate_all() -> dict[str, int]:
    """Load and validate every data file; returns the number of entries per kind."""
    counts = {
        "accelerators": len(accelerators()),
        "systems": len(systems()),
        "storage_tiers": len(storage_tiers()),
        "failure_profiles": len(failure_profiles()),
        "models": len(models()),
        "scenarios": len(scenario_presets_raw()),
    }
    return counts
