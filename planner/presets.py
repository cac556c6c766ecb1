"""Scenario presets (``presets/scenarios.json``): published runs reproduced and defaults."""

from __future__ import annotations

import copy

from . import catalog
from .schema import InputError, Scenario


def list_presets() -> dict[str, str]:
    """``{id: description}`` of every scenario preset."""
    return {k: v.get("description", "") for k, v in catalog.scenario_presets_raw().items()}


def preset_json(name: str) -> dict:
    """The raw scenario JSON of a preset (a deep copy, safe to edit)."""
    raw = catalog.scenario_presets_raw()
    if name not in raw:
        raise InputError([f"preset: unknown scenario id '{name}'; allowed: {', '.join(sorted(raw))}"])
    data = copy.deepcopy(raw[name]["scenario"])
    data.setdefault("name", name)
    return data


def load_preset(name: str) -> Scenario:
    """A validated :class:`Scenario` from ``presets/scenarios.json``.

    Raises :class:`planner.InputError` (a ``ValueError``) naming the allowed ids for an unknown one.
    """
    if not isinstance(name, str):
        raise InputError([f"load_preset: give a scenario preset id as a string (got {name!r}); "
                          "planner.list_presets() lists them"])
    return Scenario.model_validate(preset_json(name))
