"""Limits on config input, checked before anything large is built: a config is a small file, and
one built to exhaust memory (an alias bomb, a huge string, a million agents by accident) is
refused by name, with the setting that raises the limit.

Each limit can be raised with an environment variable of the same name.
"""

from __future__ import annotations

import os

import yaml

from synthorg.errors import ConfigError

DEFAULTS = {
    "SYNTHORG_MAX_CONFIG_BYTES": 8 * 2**20,  # a config file, or one --set value
    "SYNTHORG_MAX_YAML_NODES": 500_000,  # nodes of a document, aliases expanded
    "SYNTHORG_MAX_YAML_DEPTH": 64,  # nesting of mappings and lists
    "SYNTHORG_MAX_STRING": 2**20,  # characters of one scalar
    "SYNTHORG_MAX_AGENTS": 1_000_000,  # agent slots of a company, hires included
    "SYNTHORG_MAX_ARRIVALS": 1_000_000,  # mean task arrivals per tick (before demand spikes)
}


def limit(name: str) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return DEFAULTS[name]
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(name, [f"environment variable {name}={raw!r} is not a whole number"]
                          ) from None
    if value < 1:
        raise ConfigError(name, [f"environment variable {name}={raw!r} must be at least 1"])
    return value


def over(what: str, got: int, name: str) -> str:
    return f"{what}: {got:,} is more than the limit of {limit(name):,} (raise it with {name})"


# libyaml parses in C (a large scalar in pure Python takes minutes); the constructor stays ours
_BASE = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader


class BoundedLoader(_BASE):  # type: ignore[misc,valid-type]
    """Safe YAML whose mappings refuse duplicate keys."""


def _mapping(loader: BoundedLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[object, yaml.Node] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: the base constructor says so
            break
        if first is not None:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first at line {first.start_mark.line + 1})",
                key_node.start_mark)
        seen[key] = key_node
    return yaml.constructor.SafeConstructor.construct_mapping(loader, node, deep=deep)


BoundedLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def check_nodes(root: yaml.Node, source: str) -> None:
    """Walk the node graph as construction would (aliases expanded), within the node, depth
    and string limits; refuses with the line where a limit is crossed."""
    max_nodes = limit("SYNTHORG_MAX_YAML_NODES")
    max_depth = limit("SYNTHORG_MAX_YAML_DEPTH")
    max_string = limit("SYNTHORG_MAX_STRING")
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    nodes = 0
    while stack:
        node, depth = stack.pop()
        nodes += 1
        line = node.start_mark.line + 1
        if nodes > max_nodes:
            raise ConfigError(source, [f"line {line}: " + over(
                "YAML nodes (aliases expanded)", nodes, "SYNTHORG_MAX_YAML_NODES")])
        if depth > max_depth:
            raise ConfigError(source, [f"line {line}: " + over(
                "nesting depth", depth, "SYNTHORG_MAX_YAML_DEPTH")])
        if isinstance(node, yaml.ScalarNode):
            if len(node.value) > max_string:
                raise ConfigError(source, [f"line {line}: " + over(
                    "characters in one value", len(node.value), "SYNTHORG_MAX_STRING")])
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))


def read_bounded(path: str, data: bytes | None = None) -> str:
    """A config file's text, read no further than the size limit (a device such as
    /dev/zero never ends)."""
    max_bytes = limit("SYNTHORG_MAX_CONFIG_BYTES")
    if data is None:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ConfigError(path, [f"more than {max_bytes:,} bytes, the limit (raise it with "
                                 "SYNTHORG_MAX_CONFIG_BYTES)"])
    return data.decode("utf-8")
