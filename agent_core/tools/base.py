"""Tools are plain typed async functions: the signature becomes the JSON schema, the
docstring the description, ``Literal`` the fixed choices.

``Tool.from_function(fn)`` reads ``fn``'s signature once. ``Tool.invoke(arguments)`` parses the
JSON the model sent, checks it against the schema's required names and basic types, calls
``fn`` and returns a JSON string. Recoverable problems (bad JSON, a missing argument, a
``ToolFailure`` raised by the tool) go back to the model as ``{"success": false, "error":
…}``; a programmer error inside a tool propagates.

Supported annotations: ``str``, ``int``, ``float``, ``bool``, ``Literal[...]`` of strings,
``X | None`` (optional), ``list[X]``, ``dict[str, Any]`` and ``TypedDict`` classes.
"""

from __future__ import annotations

import inspect
import json
import re
import types
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import (
    Any,
    Literal,
    NotRequired,
    Required,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

__all__ = ["Tool", "ToolFailure", "Toolbox", "schema_of"]

JSONSchema = dict[str, Any]


def _read_schema(function: Callable[..., Awaitable[Any]]) -> tuple[str, JSONSchema]:
    """The description and the parameters schema of a tool function (see the module doc)."""
    hints = get_type_hints(function)
    description, arg_texts = _describe(function.__doc__ or "")
    properties: dict[str, JSONSchema] = {}
    required: list[str] = []
    for param in inspect.signature(function).parameters.values():
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise TypeError(f"tool {function.__name__}: *args/**kwargs are not tools")
        annotation = hints[param.name]
        schema = schema_of(annotation)
        if param.name in arg_texts:
            schema = {**schema, "description": arg_texts[param.name]}
        properties[param.name] = schema
        if param.default is param.empty and not _is_optional(annotation):
            required.append(param.name)
    parameters: JSONSchema = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    return description, parameters


# (code, name, keyword defaults) -> (description, parameters); shared, never mutated
_SCHEMAS: dict[tuple[Any, str | None, tuple[str, ...]], tuple[str, JSONSchema]] = {}


class ToolFailure(Exception):
    """Raised by a tool for a problem the model can fix; becomes an error result."""


def schema_of(annotation: Any) -> JSONSchema:
    """The JSON schema of one annotation."""
    origin = get_origin(annotation)
    if annotation is str:
        return {"type": "string"}
    if annotation is bool:
        return {"type": "boolean"}
    if annotation is int:
        return {"type": "integer"}
    if annotation is float:
        return {"type": "number"}
    if annotation is Any:
        return {}
    if origin is Literal:
        values = list(get_args(annotation))
        return {"type": "string", "enum": values}
    if origin in (typing.Union, types.UnionType):
        options = [a for a in get_args(annotation) if a is not type(None)]
        if len(options) == 1:
            return schema_of(options[0])
        return {"anyOf": [schema_of(a) for a in options]}
    if origin in (list, Sequence, tuple) or annotation is list:
        (item,) = get_args(annotation)[:1] or (Any,)
        return {"type": "array", "items": schema_of(item)}
    if origin in (dict, Mapping) or annotation is dict:
        return {"type": "object"}
    if is_typeddict(annotation):
        # Read Required/NotRequired from the hints themselves: with postponed annotations
        # the class's __required_keys__ cannot see them.
        properties: dict[str, JSONSchema] = {}
        required: list[str] = []
        for name, hint in get_type_hints(annotation, include_extras=True).items():
            marker = get_origin(hint)
            inner = get_args(hint)[0] if marker in (NotRequired, Required) else hint
            if marker is Required or (marker is not NotRequired and annotation.__total__):
                required.append(name)
            properties[name] = schema_of(inner)
        schema: JSONSchema = {"type": "object", "properties": properties}
        if required:
            schema["required"] = sorted(required)
        return schema
    raise TypeError(f"no JSON schema for annotation {annotation!r}")


def _is_optional(annotation: Any) -> bool:
    return get_origin(annotation) in (typing.Union, types.UnionType) and type(None) in get_args(
        annotation
    )


_ARG_LINE = re.compile(r"^\s{2,}(\w+):\s*(.+)$")


def _describe(doc: str) -> tuple[str, dict[str, str]]:
    """Description = the docstring up to ``Args:``; argument texts from ``name: text`` lines."""
    text = inspect.cleandoc(doc or "")
    head, _, args = text.partition("\nArgs:\n")
    described: dict[str, str] = {}
    current = ""
    for line in args.splitlines():
        match = _ARG_LINE.match(line)
        if match and len(line) - len(line.lstrip()) <= 4:
            current = match.group(1)
            described[current] = match.group(2).strip()
        elif current and line.strip():
            described[current] += " " + line.strip()
    return head.strip(), described


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str
    parameters: JSONSchema
    function: Callable[..., Awaitable[Any]]

    @classmethod
    def from_function(
        cls, function: Callable[..., Awaitable[Any]], *, name: str | None = None
    ) -> Tool:
        if not inspect.iscoroutinefunction(function):
            raise TypeError(f"tool {function.__name__} must be an async function")
        # Every session builds its tools from the same functions (closures over its own
        # person): read each signature once, not at every session start.
        kwdefaults = tuple(sorted((function.__kwdefaults__ or {}).keys()))
        key = (function.__code__, name, kwdefaults)
        cached = _SCHEMAS.get(key)
        if cached is None:
            cached = _SCHEMAS[key] = _read_schema(function)
        description, parameters = cached
        return cls(name or function.__name__, description, parameters, function)

    def spec(self) -> dict[str, Any]:
        """The Chat Completions ``tools`` entry."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    async def invoke(self, arguments: str) -> str:
        """Run the tool on the model's raw JSON arguments; always a JSON string back."""
        try:
            parsed = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return _error(f"arguments are not valid JSON ({exc.msg}); send a JSON object")
        if not isinstance(parsed, dict):
            return _error("arguments must be a JSON object")
        properties = self.parameters["properties"]
        unknown = sorted(set(parsed) - set(properties))
        if unknown:
            return _error(f"unknown argument(s) {unknown}; {self.name} takes {sorted(properties)}")
        missing = [n for n in self.parameters.get("required", []) if parsed.get(n) is None]
        if missing:
            return _error(f"missing required argument(s) {missing}")
        for key, value in parsed.items():
            problem = _type_problem(properties[key], value)
            if problem:
                return _error(f"{key} {problem}")
        try:
            result = await self.function(**parsed)
        except ToolFailure as exc:
            return _error(str(exc))
        return json.dumps(result, ensure_ascii=False)


def _type_problem(schema: JSONSchema, value: Any) -> str | None:
    if value is None:
        return None
    kind = schema.get("type")
    checks: dict[str, tuple[type, ...]] = {
        "string": (str,),
        "integer": (int,),
        "number": (int, float),
        "boolean": (bool,),
        "array": (list,),
        "object": (dict,),
    }
    if kind in checks:
        ok = isinstance(value, checks[kind]) and not (
            kind in ("integer", "number") and isinstance(value, bool)
        )
        if not ok:
            return f"must be {'an' if kind in ('integer', 'array', 'object') else 'a'} {kind}"
    if "enum" in schema and value not in schema["enum"]:
        return f"must be one of {schema['enum']}"
    return None


def _error(message: str) -> str:
    return json.dumps({"success": False, "error": message}, ensure_ascii=False)


class Toolbox:
    """The tools of one session, in a fixed order (so the ``tools`` list never changes)."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self._tools = {tool.name: tool for tool in tools}
        if len(self._tools) != len(tools):
            raise ValueError("two tools share a name")
        self.specs = [tool.spec() for tool in tools]

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    async def invoke(self, name: str, arguments: str, *, allowed: set[str] | None = None) -> str:
        tool = self._tools.get(name)
        if tool is None:
            return _error(f"there is no tool named {name!r}; the tools are {self.names}")
        if allowed is not None and name not in allowed:
            return _error(f"{name} is not available here; only {sorted(allowed)} may be used")
        return await tool.invoke(arguments)
