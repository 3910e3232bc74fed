"""A local OpenAI-compatible chat-completions server for tests and the bench.

    python -m synthorg.llm.fake_server [--host H] [--port P] [--latency S] [--fail-rate F]
        [--mode schema|malformed|violate|text|tool] [--script FILE] [--model-name M] [--seed N]

prints exactly one line, ``READY http://HOST:PORT/v1``, once it listens. Endpoints:
``GET /v1/models`` and ``POST /v1/chat/completions`` (non-streaming; ``stream: true`` is a 400).

Modes: ``schema`` answers a ``json_schema`` response_format with an instance of that schema (plain
text without one), generated from a sha256 of the request's messages and schema, so the same
request always gets the same reply (with tools offered, it also calls the first one, as a model
that states its plan and acts in one turn); ``malformed`` answers text that is not JSON; ``violate``
answers JSON that breaks the schema; ``text`` answers prose whatever is asked; ``tool`` answers a
call of the first offered tool (or the one ``tool_choice`` names) with arguments generated from its
``parameters`` schema. A script (JSON list of ``{"match": s, "content": c}`` or ``{"match": s,
"tool_call": {"name": n, "arguments": {...}}}``) answers first when ``s`` is a substring of the last
user message. ``--fail-rate`` answers that fraction of requests with HTTP 503, drawn from a
``random.Random(--seed)`` the server owns.

`FakeServerProcess` runs the server as a subprocess (a context manager) for tests and the bench.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import os
import queue
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aiohttp import web

MODES = ("schema", "malformed", "violate", "text", "tool")
CREATED = 1_700_000_000  # every reply's `created`: fixed, so replies are reproducible
MAX_DEPTH = 8  # nested deeper, values get only what their schema requires
RECURSE = 2  # a recursive definition is entered at most this often on a path, when optional
_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
          "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango")
_PROSE = ("The plan looks sound and I will proceed with the next step.",
          "I reviewed the request; the main risk is the timeline, so I suggest splitting the work.",
          "Done. The result is attached and the open questions are listed below.",
          "I need more information before deciding; please share the latest figures.",
          "Agreed. I will coordinate with the team and report back by the end of the day.")


# ---------------------------------------------------------------- instances of a JSON schema


class SchemaInstance:
    """Generates values that conform to a JSON schema (as pydantic's `model_json_schema()` emits it),
    choosing among the allowed values with a random.Random seeded from `seed` (deterministic)."""

    def __init__(self, root: Any, seed: bytes) -> None:
        self.root = root
        self.rng = random.Random(int.from_bytes(seed, "big"))

    def resolve(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise ValueError(f"only local $ref are supported, not {ref!r}")
        node = self.root
        for part in ref.lstrip("#").strip("/").split("/"):
            if part:
                node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def expand(self, schema: Any) -> Any:
        """The schema with its `$ref` and `allOf` merged in (sibling keywords win)."""
        seen = 0
        while isinstance(schema, dict) and ("$ref" in schema or "allOf" in schema):
            seen += 1
            if seen > 64:
                raise ValueError("$ref cycle without any structure")
            rest = {k: v for k, v in schema.items() if k not in ("$ref", "allOf")}
            merged: dict[str, Any] = {}
            if "$ref" in schema:
                merged.update(self.expand(self.resolve(schema["$ref"])))
            for part in schema.get("allOf", ()):
                part = self.expand(part)
                if isinstance(part, dict):
                    for key, value in part.items():
                        if key in ("properties", "$defs") and isinstance(merged.get(key), dict):
                            merged[key] = {**merged[key], **value}
                        elif key == "required" and isinstance(merged.get(key), list):
                            merged[key] = list(dict.fromkeys([*merged[key], *value]))
                        else:
                            merged[key] = value
            merged.update(rest)
            schema = merged
        return schema

    def _loops(self, schema: Any, path: tuple[str, ...]) -> bool:
        """Whether taking this (unexpanded) schema recurses into a definition already entered
        RECURSE times on the path: optional recursion stops there (null, no items, field left out)."""
        if not isinstance(schema, dict):
            return False
        ref = schema.get("$ref")
        if isinstance(ref, str) and path.count(ref) >= RECURSE:
            return True
        subs = [o for key in ("anyOf", "oneOf", "allOf") for o in schema.get(key, ())]
        return any(self._loops(o, path) for o in subs) or self._loops(schema.get("items"), path)

    def _is_null(self, schema: Any) -> bool:
        schema = self.expand(schema)
        return isinstance(schema, dict) and schema.get("type") == "null"

    def value(self, schema: Any, depth: int = 0, path: tuple[str, ...] = ()) -> Any:
        if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            path = (*path, schema["$ref"])
        schema = self.expand(schema)
        if schema is True or schema is None or schema == {}:
            return self.text({})
        if schema is False:
            return None
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.rng.choice(list(schema["enum"]))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = list(schema[key])
                real = [o for o in options if not self._is_null(o)]
                nullable = len(real) < len(options)
                if nullable and (depth >= MAX_DEPTH or all(self._loops(o, path) for o in real)):
                    return None
                if not real:
                    return None
                picked = next((o for o in real if not self._loops(o, path)), real[0])
                rest = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
                if rest and isinstance(picked, dict):
                    if isinstance(picked.get("$ref"), str):
                        path = (*path, picked["$ref"])
                    picked = {**self.expand(picked), **rest}
                return self.value(picked, depth, path)
        kind = schema.get("type")
        if isinstance(kind, list):
            real_kinds = [k for k in kind if k != "null"]
            if not real_kinds or (depth >= MAX_DEPTH and "null" in kind):
                return None
            kind = real_kinds[0]
        if kind is None:
            if "properties" in schema or "additionalProperties" in schema:
                kind = "object"
            elif "items" in schema or "prefixItems" in schema:
                kind = "array"
            else:
                kind = "string"
        if kind == "object":
            return self.obj(schema, depth, path)
        if kind == "array":
            return self.array(schema, depth, path)
        if kind == "integer":
            return self.integer(schema)
        if kind == "number":
            return self.number(schema)
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "null":
            return None
        return self.text(schema)

    def obj(self, schema: dict[str, Any], depth: int, path: tuple[str, ...]) -> dict[str, Any]:
        props: dict[str, Any] = schema.get("properties") or {}
        required = set(schema.get("required") or ())
        out: dict[str, Any] = {}
        for name, sub in props.items():
            if name in required or (depth < MAX_DEPTH and not self._loops(sub, path)):
                out[name] = self.value(sub, depth + 1, path)
        extra = schema.get("additionalProperties")
        if not props and isinstance(extra, dict):  # a mapping, e.g. dict[str, int]
            low = int(schema.get("minProperties", 0))
            more = depth < MAX_DEPTH and not self._loops(extra, path)
            high = max(low, min(int(schema.get("maxProperties", 2)), 2)) if more else low
            for i in range(self.rng.randint(low, high)):
                out[f"{self.rng.choice(_WORDS)}_{i}"] = self.value(extra, depth + 1, path)
        return out

    def array(self, schema: dict[str, Any], depth: int, path: tuple[str, ...]) -> list[Any]:
        prefix = schema.get("prefixItems")
        if prefix is not None:  # a tuple
            return [self.value(sub, depth + 1, path) for sub in prefix]
        low = int(schema.get("minItems", 0))
        items = schema.get("items", {})
        more = depth < MAX_DEPTH and not self._loops(items, path)
        high = max(low, min(int(schema.get("maxItems", 2)), 2)) if more else low
        count = self.rng.randint(low, high)
        out: list[Any] = []
        seen: set[str] = set()
        for _ in range(count * 4):
            if len(out) >= count:
                break
            item = self.value(items, depth + 1, path)
            if schema.get("uniqueItems"):
                key = json.dumps(item, sort_keys=True)
                if key in seen:
                    continue
                seen.add(key)
            out.append(item)
        return out

    @staticmethod
    def _bounds(schema: dict[str, Any]) -> tuple[float | None, bool, float | None, bool]:
        """(low, low is exclusive, high, high is exclusive), from both JSON-schema drafts' keywords."""
        low, high = schema.get("minimum"), schema.get("maximum")
        low_ex = high_ex = False
        ex_min, ex_max = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
        if isinstance(ex_min, bool):
            low_ex = ex_min
        elif ex_min is not None and (low is None or ex_min >= low):
            low, low_ex = ex_min, True
        if isinstance(ex_max, bool):
            high_ex = ex_max
        elif ex_max is not None and (high is None or ex_max <= high):
            high, high_ex = ex_max, True
        return low, low_ex, high, high_ex

    def integer(self, schema: dict[str, Any]) -> int:
        low, low_ex, high, high_ex = self._bounds(schema)
        lo = None if low is None else (math.floor(low) + 1 if low_ex else math.ceil(low))
        hi = None if high is None else (math.ceil(high) - 1 if high_ex else math.floor(high))
        if lo is None and hi is None:
            lo, hi = 0, 100
        elif lo is None:
            assert hi is not None
            lo = hi - 100
        elif hi is None:
            hi = lo + 100
        hi = max(lo, hi)
        step = schema.get("multipleOf")
        if isinstance(step, int) and step > 0:
            first, last = math.ceil(lo / step), math.floor(hi / step)
            if first <= last:
                return self.rng.randint(first, last) * step
        return self.rng.randint(lo, hi)

    def number(self, schema: dict[str, Any]) -> float:
        low, low_ex, high, high_ex = self._bounds(schema)
        if low is None and high is None:
            low, high = 0.0, 100.0
        elif low is None:
            assert high is not None
            low = high - 100.0
        elif high is None:
            high = low + 100.0
        lo, hi = float(low), float(max(low, high))
        step = schema.get("multipleOf")
        if isinstance(step, int | float) and step > 0:
            first = math.floor(lo / step) + 1 if low_ex else math.ceil(lo / step)
            last = math.ceil(hi / step) - 1 if high_ex else math.floor(hi / step)
            if first <= last:
                return float(self.rng.randint(first, last) * step)
        if hi == lo:
            return lo
        exact = lo + (hi - lo) * self.rng.uniform(0.05, 0.95)
        rounded = round(exact, 3)
        ok_low = rounded > lo if low_ex else rounded >= lo
        ok_high = rounded < hi if high_ex else rounded <= hi
        return rounded if ok_low and ok_high else exact

    def text(self, schema: dict[str, Any]) -> str:
        rng = self.rng
        fmt = schema.get("format")
        if fmt == "date-time":
            out = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z"
        elif fmt == "date":
            out = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        elif fmt == "time":
            out = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00"
        elif fmt == "duration":
            out = f"PT{rng.randint(1, 48)}H"
        elif fmt == "email":
            out = f"{rng.choice(_WORDS)}@example.com"
        elif fmt in ("uri", "url", "iri"):
            out = f"https://example.com/{rng.choice(_WORDS)}"
        elif fmt == "uuid":
            out = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        elif fmt == "ipv4":
            out = f"10.0.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
        elif fmt == "ipv6":
            out = f"fd00::{rng.randint(1, 0xFFFF):x}"
        elif fmt == "hostname":
            out = f"{rng.choice(_WORDS)}.example.com"
        else:
            out = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3)))
        low = int(schema.get("minLength", 0))
        high = schema.get("maxLength")
        if high is not None:
            out = out[: int(high)]
        if len(out) < low:
            out += "x" * (low - len(out))
        return out


# ---------------------------------------------------------------- the replies


def _text_of(content: Any) -> str:
    """The text of a message's content: a string, or a list of parts with `text`."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict)
                       and isinstance(p.get("text"), str))
    return ""


def _error(status: int, message: str, kind: str = "invalid_request_error",
           param: str | None = None) -> web.Response:
    body = {"error": {"message": message, "type": kind, "param": param, "code": None}}
    return web.json_response(body, status=status)


def _response_schema(body: dict[str, Any]) -> Any:
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") or {}
        if isinstance(spec, dict):
            return spec.get("schema", {})
    return None


def _violation(schema: Any, gen: SchemaInstance) -> Any:
    """Valid JSON that fails the schema: an object missing its required fields, with a wrong type."""
    root = gen.expand(schema)
    if not isinstance(root, dict) or root.get("type", "object") != "object" or "properties" not in root:
        return {"unexpected": [1, 2, 3]} if isinstance(root, dict) and root.get("type") != "object" \
            else ["not", "an", "object"]
    required = list(root.get("required") or ())
    if not required:
        return ["not", "an", "object"]  # every field optional: only the wrong type at the top fails
    name = required[0]
    prop = gen.expand(root["properties"].get(name, {}))
    kind = prop.get("type") if isinstance(prop, dict) else None
    enum = isinstance(prop, dict) and "enum" in prop
    wrong: Any = 12345 if kind in ("string", "object", "array") or enum else {"wrong": "type"}
    return {name: wrong} if len(required) > 1 else {name: wrong, "unexpected_field": True}


class FakeLLM:
    """The server's state: options, the failure draw and the script."""

    def __init__(self, *, latency: float = 0.0, fail_rate: float = 0.0, mode: str = "schema",
                 script: Sequence[dict[str, Any]] = (), model_name: str = "fake-model", seed: int = 0):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        self.latency = latency
        self.fail_rate = fail_rate
        self.mode = mode
        self.script = list(script)
        self.model_name = model_name
        self.rng = random.Random(seed)
        self.served = 0

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/v1/models", self.models)
        app.router.add_get("/v1/models/{name}", self.model)
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_get("/health", self.health)
        return app

    async def health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok", "served": self.served})

    def _model_card(self) -> dict[str, Any]:
        return {"id": self.model_name, "object": "model", "created": CREATED, "owned_by": "synthorg"}

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [self._model_card()]})

    async def model(self, request: web.Request) -> web.Response:
        if request.match_info["name"] != self.model_name:
            return _error(404, f"The model {request.match_info['name']!r} does not exist", param="model")
        return web.json_response(self._model_card())

    async def chat(self, request: web.Request) -> web.Response:
        fail = self.fail_rate > 0 and self.rng.random() < self.fail_rate  # drawn in arrival order
        try:
            body = json.loads(await request.read())
        except (ValueError, UnicodeDecodeError) as exc:
            return _error(400, f"We could not parse the JSON body of your request: {exc}")
        if not isinstance(body, dict):
            return _error(400, "The request body must be a JSON object")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
            return _error(400, "'messages' must be a non-empty list of objects", param="messages")
        if body.get("stream"):
            return _error(400, "This fake server does not stream; send stream=false", param="stream")
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        if fail:
            return _error(503, "The server is overloaded (injected failure), please retry", "server_error")
        self.served += 1
        try:
            reply = self.reply(body, messages)
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            return _error(400, f"Cannot answer this request: {exc!r}")
        return web.json_response(reply)

    def reply(self, body: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
        schema = _response_schema(body)
        tools = [t for t in body.get("tools") or () if isinstance(t, dict)]
        key = json.dumps({"messages": messages, "schema": schema, "tools": tools}, sort_keys=True,
                         separators=(",", ":"), ensure_ascii=False)
        digest = hashlib.sha256(key.encode()).digest()
        gen = SchemaInstance(schema, digest)
        content: str | None = None
        call: dict[str, Any] | None = None

        last_user = next((_text_of(m.get("content")) for m in reversed(messages) if m.get("role") == "user"),
                         "")
        entry = next((e for e in self.script if str(e.get("match", "")) in last_user), None)
        if entry is not None and "tool_call" in entry:
            spec = entry["tool_call"]
            args = spec.get("arguments")
            if args is None:
                tool = next((t for t in tools if _tool_name(t) == spec["name"]), None)
                args = SchemaInstance(_tool_params(tool), digest).value(_tool_params(tool)) if tool else {}
            call = {"name": spec["name"], "arguments": args if isinstance(args, str) else json.dumps(args)}
        elif entry is not None:
            content = str(entry.get("content", ""))
        elif self.mode == "tool" and tools and body.get("tool_choice") != "none":
            tool = tools[0]
            choice = body.get("tool_choice")
            if isinstance(choice, dict):
                wanted = (choice.get("function") or {}).get("name")
                tool = next((t for t in tools if _tool_name(t) == wanted), tool)
            params = _tool_params(tool)
            call = {"name": _tool_name(tool),
                    "arguments": json.dumps(SchemaInstance(params, digest).value(params))}
        elif self.mode == "text" or schema is None:
            content = _PROSE[digest[0] % len(_PROSE)]
        elif self.mode == "malformed":
            content = "{not json: " + " ".join(_WORDS[b % len(_WORDS)] for b in digest[:3])
        elif self.mode == "violate":
            content = json.dumps(_violation(schema, gen))
        else:
            content = json.dumps(gen.value(schema))
            if tools and body.get("tool_choice") != "none":  # states its plan and acts at once
                params = _tool_params(tools[0])
                call = {"name": _tool_name(tools[0]),
                        "arguments": json.dumps(SchemaInstance(params, digest[::-1]).value(params))}

        message: dict[str, Any] = {"role": "assistant", "content": content}
        if call is not None:
            message["tool_calls"] = [{"id": f"call_{digest[:12].hex()}", "type": "function",
                                      "function": call}]
        out_text = (content or "") + (call["arguments"] if call is not None else "")
        chars_in = sum(len(_text_of(m.get("content"))) for m in messages)
        tokens_in, tokens_out = math.ceil(chars_in / 4), math.ceil(len(out_text or "") / 4)
        return {
            "id": f"chatcmpl-{self.served:06x}{digest[:9].hex()}",
            "object": "chat.completion",
            "created": CREATED,
            "model": body.get("model") or self.model_name,
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if call is not None else "stop"}],
            "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out,
                      "total_tokens": tokens_in + tokens_out},
        }


def _tool_name(tool: dict[str, Any]) -> str:
    return str((tool.get("function") or {}).get("name") or tool.get("name") or "tool")


def _tool_params(tool: dict[str, Any] | None) -> Any:
    if tool is None:
        return {}
    return (tool.get("function") or {}).get("parameters") or {"type": "object", "properties": {}}


def load_script(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    data = json.loads(Path(path).read_text())
    if not isinstance(data, list):
        raise ValueError("a script is a JSON list of {match, content | tool_call} objects")
    for i, entry in enumerate(data):
        if not isinstance(entry, dict) or "match" not in entry or \
                ("content" not in entry and "tool_call" not in entry):
            raise ValueError(f"script entry {i} needs 'match' and 'content' or 'tool_call': {entry!r}")
        call = entry.get("tool_call")
        if "tool_call" in entry and not (isinstance(call, dict) and "name" in call):
            raise ValueError(f"script entry {i}: tool_call needs a 'name'")
    return data


# ---------------------------------------------------------------- running it


async def serve(fake: FakeLLM, host: str = "127.0.0.1", port: int = 0) -> None:
    """Serve until SIGTERM or SIGINT; prints the READY line once listening."""
    runner = web.AppRunner(fake.app(), access_log=None, handle_signals=False, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=4096, reuse_address=True)
    await site.start()
    bound = runner.addresses[0][1] if runner.addresses else port
    shown = f"[{host}]" if ":" in host else host
    sys.stdout.write(f"READY http://{shown}:{bound}/v1\n")
    sys.stdout.flush()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m synthorg.llm.fake_server",
                                     description="A local OpenAI-compatible chat-completions server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: an ephemeral port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds each request waits")
    parser.add_argument("--fail-rate", type=float, default=0.0, help="fraction of requests answered 503")
    parser.add_argument("--mode", choices=MODES, default="schema")
    parser.add_argument("--script", default=None, help="JSON list of {match, content | tool_call}")
    parser.add_argument("--model-name", default="fake-model")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not 0.0 <= args.fail_rate <= 1.0:
        parser.error("--fail-rate must be within [0, 1]")
    if args.latency < 0:
        parser.error("--latency must be >= 0")
    try:
        script = load_script(args.script) if args.script else []
    except (OSError, ValueError) as exc:
        parser.error(f"--script: {exc}")
    fake = FakeLLM(latency=args.latency, fail_rate=args.fail_rate, mode=args.mode, script=script,
                   model_name=args.model_name, seed=args.seed)
    asyncio.run(serve(fake, args.host, args.port))
    return 0


def _stop_process(proc: subprocess.Popen[bytes], timeout: float = 5.0) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class FakeServerProcess:
    """The fake server in a subprocess, started on construction:

        with FakeServerProcess(latency=0.2, mode="schema") as server:
            client = openai.OpenAI(base_url=server.base_url, api_key="x")

    `script` is a path to a script file or the list itself (written to a temporary file)."""

    def __init__(self, *, latency: float = 0.0, fail_rate: float = 0.0, mode: str = "schema",
                 script: str | os.PathLike[str] | Sequence[dict[str, Any]] | None = None,
                 model_name: str = "fake-model", seed: int = 0, port: int = 0, host: str = "127.0.0.1",
                 ready_timeout: float = 30.0) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        self.host = host
        self.model_name = model_name
        self._script_file: str | None = None
        if script is not None and not isinstance(script, str | os.PathLike):
            fd, self._script_file = tempfile.mkstemp(prefix="fake-llm-script-", suffix=".json")
            with os.fdopen(fd, "w") as fh:
                json.dump(list(script), fh)
            script = self._script_file
        cmd = [sys.executable, "-m", "synthorg.llm.fake_server", "--host", host, "--port", str(port),
               "--latency", repr(float(latency)), "--fail-rate", repr(float(fail_rate)), "--mode", mode,
               "--model-name", model_name, "--seed", str(seed)]
        if script is not None:
            cmd += ["--script", os.fspath(script)]
        env = dict(os.environ)
        repo = str(Path(__file__).resolve().parents[2])  # so the package imports from any cwd
        env["PYTHONPATH"] = os.pathsep.join(p for p in (repo, env.get("PYTHONPATH")) if p)
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - open as long as the server runs
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=self._stderr, env=env)
        self._finalizer = weakref.finalize(self, _stop_process, self.proc, 2.0)
        lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._drain, args=(self.proc, lines), daemon=True)
        self._reader.start()
        deadline = time.monotonic() + ready_timeout
        line: str | None = ""
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None or line.startswith("READY "):
                break
        if line is None:
            alive = self.proc.poll() is None
            self.stop()
            why = f"no READY line within {ready_timeout:g} s" if alive else \
                f"it exited with code {self.proc.returncode}"
            raise RuntimeError(f"fake LLM server did not start ({why}): {' '.join(cmd)}\n"
                               f"stderr:\n{self.stderr_text()}")
        self.base_url = line.split(None, 1)[1].strip()
        self.port = int(self.base_url.rsplit(":", 1)[1].split("/", 1)[0])

    @staticmethod
    def _drain(proc: subprocess.Popen[bytes], lines: queue.Queue[str | None]) -> None:
        """Hands stdout's lines over, then keeps reading so the pipe never fills."""
        assert proc.stdout is not None
        for raw in proc.stdout:
            lines.put(raw.decode(errors="replace"))
        lines.put(None)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stderr_text(self) -> str:
        self._stderr.flush()
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def stop(self) -> None:
        """Terminates the server (kills it if it does not go within 5 s); idempotent."""
        _stop_process(self.proc)
        self._reader.join(timeout=2.0)  # it ends at the pipe's EOF
        if not self._reader.is_alive() and self.proc.stdout is not None:
            self.proc.stdout.close()
        if self._script_file is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._script_file)
            self._script_file = None

    def __enter__(self) -> FakeServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


if __name__ == "__main__":
    sys.exit(main())
