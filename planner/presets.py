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


#: The fields a preset's name describes ("Llama 3.1 405B on 16,384 H100"): its model and cluster.
NAMED_FIELDS: tuple[tuple[str, ...], ...] = (("model",), ("cluster", "system"), ("cluster", "n_gpus"),
                                             ("cluster", "accelerator"))


def drop_stale_name(sj: dict, base: dict) -> dict:
    """``sj`` with its name cleared (``""``: exports and tables then name the model) when it still
    carries ``base``'s name but its model, system, GPU count or accelerator differ from ``base``'s.

    One rule for every surface that edits a preset: ``planner ... --set``, a share link
    (:func:`planner.share.params_to_scenario`) and the Plan page's sidebar (found by review 15f: a
    1,024-GPU link exported "Llama 3.1 405B on 16,384 H100"). Edits ``sj`` in place; returns it."""
    def get(d, path):
        for p in path:
            d = d.get(p) if isinstance(d, dict) else None
        return d

    if sj.get("name") and sj.get("name") == base.get("name") and any(
            get(sj, p) != get(base, p) for p in NAMED_FIELDS):
        sj["name"] = ""
    return sj
