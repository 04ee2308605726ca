"""Typed tools: signatures become schemas; bad arguments become results, not exceptions."""

from __future__ import annotations

import json
from typing import Any, Literal, NotRequired, TypedDict

import pytest

from agent_core.tools.base import Tool, Toolbox, ToolFailure


class Operation(TypedDict):
    action: Literal["add", "remove"]
    content: NotRequired[str]


async def sample(
    query: str,
    *,
    mode: Literal["fast", "slow"] = "fast",
    limit: int | None = None,
    ratio: float = 0.5,
    strict: bool = False,
    ops: list[Operation] | None = None,
) -> dict[str, Any]:
    """Search something.

    Second paragraph of the description.

    Args:
        query: what to look for
            across two lines.
        limit: at most this many.
    """
    if query == "fail":
        raise ToolFailure("that query cannot work")
    return {"query": query, "mode": mode, "limit": limit, "ops": ops}


def test_the_signature_becomes_the_schema() -> None:
    tool = Tool.from_function(sample)
    assert tool.name == "sample"
    assert tool.description == "Search something.\n\nSecond paragraph of the description."
    params = tool.parameters
    assert params["required"] == ["query"]
    props = params["properties"]
    assert props["query"] == {"type": "string", "description": "what to look for across two lines."}
    assert props["mode"] == {"type": "string", "enum": ["fast", "slow"]}
    assert props["limit"] == {"type": "integer", "description": "at most this many."}
    assert props["ratio"] == {"type": "number"} and props["strict"] == {"type": "boolean"}
    assert props["ops"] == {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["add", "remove"]},
                "content": {"type": "string"},
            },
            "required": ["action"],
        },
    }
    assert tool.spec()["function"]["parameters"] is params


async def test_invoke_returns_json_and_turns_problems_into_results() -> None:
    tool = Tool.from_function(sample)
    ok = json.loads(await tool.invoke('{"query": "x", "limit": 2}'))
    assert ok == {"query": "x", "mode": "fast", "limit": 2, "ops": None}
    for raw, problem in [
        ("{not json", "not valid JSON"),
        ("[1]", "JSON object"),
        ('{"mode": "fast"}', "missing required argument(s) ['query']"),
        ('{"query": "x", "bogus": 1}', "unknown argument(s) ['bogus']"),
        ('{"query": 3}', "query must be a string"),
        ('{"query": "x", "limit": true}', "limit must be an integer"),
        ('{"query": "x", "mode": "warp"}', "mode must be one of ['fast', 'slow']"),
        ('{"query": "fail"}', "that query cannot work"),
    ]:
        result = json.loads(await tool.invoke(raw))
        assert result["success"] is False and problem in result["error"], raw


async def test_toolbox_refuses_unknown_and_disallowed_tools() -> None:
    async def other(x: str) -> str:
        """Other."""
        return x

    box = Toolbox([Tool.from_function(sample), Tool.from_function(other)])
    assert [s["function"]["name"] for s in box.specs] == ["sample", "other"]
    unknown = json.loads(await box.invoke("shell", "{}"))
    assert "no tool named 'shell'" in unknown["error"]
    refused = json.loads(await box.invoke("other", '{"x": "y"}', allowed={"sample"}))
    assert "not available here" in refused["error"]
    assert json.loads(await box.invoke("other", '{"x": "y"}')) == "y"


def test_sync_functions_and_unsupported_annotations_are_programmer_errors() -> None:
    def sync(x: str) -> str:
        return x

    async def weird(x: set[int]) -> None:
        """Weird."""

    with pytest.raises(TypeError, match="async"):
        Tool.from_function(sync)  # type: ignore[arg-type]  # the point: not async
    with pytest.raises(TypeError, match="no JSON schema"):
        Tool.from_function(weird)
