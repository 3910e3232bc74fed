"""Tool catalogs a company config can name (`tool_catalogs`): YAML files of tools beside the
company templates. A company's own entry of a catalog tool's name overrides its fields."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

_HERE = Path(__file__).resolve().parent
CATALOG_DIRS = (_HERE.parent.parent / "templates" / "tools",  # a checkout
                _HERE.parent / "_templates" / "tools")  # an installed wheel


@cache
def catalog_tools(name: str) -> tuple[dict, ...]:
    for folder in CATALOG_DIRS:
        path = folder / f"{name}.yaml"
        if path.is_file():
            return tuple(yaml.safe_load(path.read_text())["tools"])
    raise ValueError(f"tool_catalogs: no catalog '{name}'")


def with_catalog_tools(raw: dict) -> dict:
    """The raw config with its catalogs' tools merged into `tools`: the company's own
    entries first, where they were (so errors name the line the user wrote), each over the
    catalog tool of its name; then the catalog tools it does not mention."""
    own = raw.get("tools") or []
    catalogs = raw["tool_catalogs"]
    if not isinstance(own, list) or not isinstance(catalogs, list):
        return raw  # the model's validation names the problem
    offered: dict[str, dict] = {}
    for name in catalogs:
        if isinstance(name, str) and name.isidentifier():  # else validation names it
            for tool in catalog_tools(name):
                offered.setdefault(tool["name"], tool)
    mine = {t.get("name") for t in own if isinstance(t, dict) and isinstance(t.get("name"), str)}
    merged = [_over(t, offered) for t in own]
    merged += [tool for name, tool in offered.items() if name not in mine]
    return {**raw, "tools": merged}


def _over(entry: object, offered: dict[str, dict]) -> object:
    if isinstance(entry, dict) and isinstance(entry.get("name"), str) and entry["name"] in offered:
        return {**offered[entry["name"]], **entry}
    return entry
