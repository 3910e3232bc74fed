"""YAML -> CompanyConfig, with `extends:` templates, `--set` overrides and errors that name
the field, the file and the line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from synthorg.config.limits import BoundedLoader, check_nodes, limit, over, read_bounded
from synthorg.config.models import CompanyConfig
from synthorg.errors import ConfigError

_TEMPLATE_DIRS = (
    Path(__file__).resolve().parent.parent / "_templates",  # installed wheel
    Path(__file__).resolve().parents[2] / "templates",  # source checkout
)
_MAX_EXTENDS_DEPTH = 16


def load_config(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> CompanyConfig:
    """Load a company config from a YAML file, resolving `extends:` and applying overrides."""
    source = Path(path)
    raw, lines = _load_tree(source, depth=0)
    raw = apply_overrides(raw, overrides, source=str(source))
    # a problem in a value given with --set names the flag, not the file's line
    flags = {_resolved(raw, item): item for item in overrides}
    return _validate(raw, str(source), lines, flags)


def load_config_text(text: str, source: str = "<string>") -> CompanyConfig:
    raw, lines = _parse(text, source)
    if "extends" in raw:
        raise ConfigError(source, ["extends: not supported for configs given as text"])
    return _validate(raw, source, lines)


def template_path(name: str) -> Path | None:
    """A bare template name such as `startup` -> templates/companies/startup.yaml."""
    for base in _TEMPLATE_DIRS:
        for candidate in (base / "companies" / f"{name}.yaml", base / name):
            if candidate.is_file():
                return candidate
    return None


def _validate(raw: dict[str, Any], source: str, lines: dict[tuple[str, ...], int],
              flags: dict[tuple[str, ...], str] | None = None) -> CompanyConfig:
    try:
        return CompanyConfig.model_validate(raw)
    except ValidationError as exc:
        problems: list[str] = []
        for e in exc.errors():
            if not e["loc"] and e["type"] == "value_error":
                # cross-reference problems, each already naming its field: add the line
                msg = e["msg"].removeprefix("Value error, ")
                problems.extend(_with_line(p, lines, flags or {}) for p in msg.split("; "))
            else:
                problems.append(_describe(e, lines, flags or {}))
        raise ConfigError(source, problems) from None


def _resolved(raw: Any, item: str) -> tuple[str, ...]:
    """The path an override set, with list items as indices (as validation errors name them)."""
    loc: list[str] = []
    node = raw
    for key in item.partition("=")[0].strip().split("."):
        if isinstance(node, list):
            index = _list_index(node, key)
            if index is None:
                break
            index %= len(node)
            loc.append(str(index))
            node = node[index]
        elif isinstance(node, dict):
            loc.append(key)
            node = node.get(key)
        else:
            break
    return tuple(loc)


def _flag_for(loc: tuple[str, ...], path: str, flags: dict[tuple[str, ...], str]) -> str | None:
    """`--set ITEM` for a problem at `loc` inside what ITEM set (with the problem's own path
    when it lies deeper), or None."""
    for n in range(len(loc), 0, -1):
        if loc[:n] in flags:
            return f"--set {flags[loc[:n]]}" + (f" ({path})" if n < len(loc) else "")
    return None


_PATH = re.compile(r"^([A-Za-z_][\w.\[\]]*): ")


def _with_line(problem: str, lines: dict[tuple[str, ...], int],
               flags: dict[tuple[str, ...], str]) -> str:
    match = _PATH.match(problem)
    if not match:
        return problem
    path = match.group(1)
    loc = tuple(p for p in re.split(r"[.\[\]]+", path) if p)
    flag = _flag_for(loc, path, flags)
    if flag is not None:
        return f"{flag}: {problem[match.end():]}"
    line = _nearest_line(loc, lines)
    if line is None:
        return problem
    return f"{path} (line {line}): {problem[match.end():]}"


def _describe(error: Any, lines: dict[tuple[str, ...], int],
              flags: dict[tuple[str, ...], str]) -> str:
    loc = tuple(str(p) for p in error["loc"])
    # pydantic adds the union member / model name to the loc; drop what is not a path segment
    path = _dotted(loc)
    flag = _flag_for(_path_parts(loc), path, flags)
    line = _nearest_line(loc, lines)
    where = flag or f"{path or '<root>'}" + (f" (line {line})" if line else "")
    msg = error["msg"]
    if error["type"] == "extra_forbidden":
        msg = "unknown key"
    if error["type"] == "value_error":
        msg = msg.removeprefix("Value error, ")
    return f"{where}: {msg}"


def _path_parts(loc: tuple[str, ...]) -> tuple[str, ...]:
    """A pydantic loc less the union members and model names it adds."""
    return tuple(p for p in loc if not (p in ("int", "str", "float", "bool") or p.startswith(
        ("function-", "literal[", "list["))))


def _dotted(loc: tuple[str, ...]) -> str:
    out = ""
    for part in _path_parts(loc):
        out += f"[{part}]" if part.isdigit() else ("." if out else "") + part
    return out


def _nearest_line(loc: tuple[str, ...], lines: dict[tuple[str, ...], int]) -> int | None:
    for n in range(len(loc), 0, -1):
        if loc[:n] in lines:
            return lines[loc[:n]]
    return None


def _load_tree(path: Path, depth: int) -> tuple[dict[str, Any], dict[tuple[str, ...], int]]:
    if depth > _MAX_EXTENDS_DEPTH:
        raise ConfigError(str(path), [f"extends: chain deeper than {_MAX_EXTENDS_DEPTH} files"])
    try:
        text = read_bounded(str(path))
    except FileNotFoundError:
        raise ConfigError(str(path), ["file not found"]) from None
    except IsADirectoryError:
        raise ConfigError(str(path), ["is a directory, not a config file"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), [f"cannot read file: {exc}"]) from None
    raw, lines = _parse(text, str(path))
    parent_ref = raw.pop("extends", None)
    if parent_ref is None:
        return raw, lines
    if not isinstance(parent_ref, str):
        raise ConfigError(str(path), ["extends: must be a file path or a template name"])
    parent = (path.parent / parent_ref) if not Path(parent_ref).is_absolute() else Path(parent_ref)
    if not parent.is_file():
        found = template_path(parent_ref)
        if found is None:
            raise ConfigError(str(path), [f"extends: no file or template named '{parent_ref}'"])
        parent = found
    base, _ = _load_tree(parent, depth + 1)
    return _deep_merge(base, raw), lines


def _parse(text: str, source: str) -> tuple[dict[str, Any], dict[tuple[str, ...], int]]:
    raw, node = _bounded_yaml(text, source)
    if raw is None:
        raise ConfigError(source, ["file is empty"])
    if not isinstance(raw, dict):
        raise ConfigError(source, ["top level must be a mapping of sections"])
    lines: dict[tuple[str, ...], int] = {}
    if node is not None:
        _index_lines(node, (), lines)
    return raw, lines


def _bounded_yaml(text: str, source: str) -> tuple[object, yaml.Node | None]:
    """Parse YAML within the input limits (config/limits.py): the node graph is walked, with
    aliases expanded, before anything is built from it. Duplicate keys are an error."""
    if len(text) > limit("SYNTHORG_MAX_CONFIG_BYTES"):
        raise ConfigError(source, [over("characters", len(text), "SYNTHORG_MAX_CONFIG_BYTES")])
    loader = BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        check_nodes(node, source)
        return loader.construct_document(node), node  # built from the node walked, not reparsed
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(source, [f"broken YAML at {where}{problem}"]) from None
    except RecursionError:
        raise ConfigError(source, ["nesting too deep to read"]
                          ) from None
    finally:
        loader.dispose()


def _index_lines(node: yaml.Node, path: tuple[str, ...], out: dict[tuple[str, ...], int]) -> None:
    out[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            child = (*path, str(key.value))
            out[child] = key.start_mark.line + 1
            _index_lines(value, child, out)
            out[child] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index_lines(item, (*path, str(i)), out)


def _deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def apply_overrides(
    raw: dict[str, Any], overrides: list[str] | tuple[str, ...], source: str = "--set"
) -> dict[str, Any]:
    """Apply `dotted.path=value` overrides. List items are addressed by index or by id/name."""
    for item in overrides:
        if "=" not in item:
            raise ConfigError("--set", [f"'{item}': expected dotted.path=value"])
        path, _, text = item.partition("=")
        keys = [k for k in path.strip().split(".")]
        if not path.strip() or any(not k for k in keys):
            raise ConfigError("--set", [f"'{item}': empty path segment"])
        try:
            value = _bounded_yaml(text, f"--set {path.strip()}")[0] if text.strip() else ""
        except ConfigError as exc:
            if not any(p.startswith("broken YAML") for p in exc.problems):
                raise  # a limit: say so
            value = text
        raw = _set_path(raw, keys, value, item)
    return raw


def _set_path(node: Any, keys: list[str], value: Any, item: str) -> Any:
    key, rest = keys[0], keys[1:]
    if isinstance(node, dict):
        copy = dict(node)
        if rest:
            child = copy.get(key, {})
            if not isinstance(child, dict | list):
                raise ConfigError("--set", [f"'{item}': '{key}' is a value, not a section"])
            copy[key] = _set_path(child, rest, value, item)
        else:
            copy[key] = value
        return copy
    if isinstance(node, list):
        index = _list_index(node, key)
        if index is None:
            raise ConfigError("--set", [f"'{item}': no list item '{key}' (use an index or an id)"])
        copy_list = list(node)
        copy_list[index] = _set_path(copy_list[index], rest, value, item) if rest else value
        return copy_list
    raise ConfigError("--set", [f"'{item}': cannot descend into a value at '{key}'"])


def _list_index(items: list[Any], key: str) -> int | None:
    if key.lstrip("-").isdigit():
        i = int(key)
        return i if -len(items) <= i < len(items) else None
    for i, it in enumerate(items):
        if isinstance(it, dict) and key in (it.get("id"), it.get("name")):
            return i
    return None
