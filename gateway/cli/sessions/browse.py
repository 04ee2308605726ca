"""``mnemo sessions list``, ``show`` and ``search``: what was said, as text or JSON.

Everything shown that came from a chat (titles, names, messages) is made terminal-safe
(``visible``) first.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import Any

from gateway.cli.common import UsageError
from gateway.cli.sessions.common import plural, print_json, query, utc, viewer_of
from gateway.config import Config, Paths
from gateway.terminal import visible
from memory.archive import ArchiveStore, Discovery, Message, Searcher, Session, when

__all__ = ["list_sessions", "search_sessions", "show_session"]

SEARCH_LIMIT = 10  # as many as the session_search tool returns at most


def list_sessions(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    viewer = viewer_of(args)

    async def work(archive: ArchiveStore) -> list[Session]:
        found = await archive.sessions(viewer=viewer, limit=args.limit)
        # Archive.sessions leaves ``people`` empty; get_session fills it in.
        full = [await archive.get_session(s.id, viewer=viewer) for s in found]
        return [s for s in full if s is not None]

    sessions = query(paths, config, work) or []
    if args.json:
        print_json([_session_json(s) for s in sessions])
        return 0
    if not sessions:
        print("No sessions archived yet." if viewer is None else f"No sessions with {viewer}.")
    for s in sessions:
        print(f"{s.id}  {visible(s.title or '(untitled)')}")
        people = ", ".join(s.people) or "nobody"
        print(
            f"    {visible(s.platform)} · {visible(s.chat_type)} · {people}"
            f" · {plural(s.message_count, 'message')}"
        )
        print(f"    started {utc(s.started_at)} · last active {utc(s.last_active_at)}")
    return 0


def show_session(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    viewer = viewer_of(args)

    async def work(archive: ArchiveStore) -> tuple[Session, list[Message]] | None:
        session = await archive.get_session(args.id, viewer=viewer)
        if session is None:
            return None
        return session, await archive.messages(args.id, viewer=viewer)

    found = query(paths, config, work)
    if found is None:
        return _not_found(args.id, viewer)
    session, messages = found
    if args.json:
        from agent_core.tools import message_json as tool_message_json

        print_json(
            {
                "session": _session_json(session),
                "messages": [tool_message_json(m, limit=len(m.content)) for m in messages],
            }
        )
        return 0
    print(f"Session {session.id}: {visible(session.title or '(untitled)')}")
    print(
        f"  platform {visible(session.platform)} · chat {visible(session.chat_id)}"
        f" ({visible(session.chat_type)}) · people {', '.join(session.people) or 'nobody'}"
    )
    print(
        f"  started {utc(session.started_at)} · last active {utc(session.last_active_at)}"
        f" · {plural(session.message_count, 'message')}"
    )
    if session.parent_id:
        print(f"  continues {session.parent_id}")
    if session.ended_at is not None:
        print(f"  ended {utc(session.ended_at)} ({visible(session.end_reason or 'no reason')})")
    for m in messages:
        head = [utc(m.created_at, seconds=True), m.role]
        if m.speaker:
            head.append(visible(m.speaker))
        if m.tool_name:
            head.append(f"tool {visible(m.tool_name)}")
        if m.external_id:
            head.append(f"external_id {visible(m.external_id)}")
        print()
        print(f"[{m.id}] " + " · ".join(head))
        for call in m.tool_calls or []:
            print(f"    → {visible(_call_line(call))}")
        for line in visible(m.content).split("\n"):
            print(f"    {line}")
    return 0


def search_sessions(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    viewer = viewer_of(args)
    if not args.query.strip():
        raise UsageError("QUERY is empty (use `mnemo sessions list` to browse)")

    async def work(archive: ArchiveStore) -> Discovery:
        limit = min(args.limit, SEARCH_LIMIT)
        return await Searcher(archive).discover(args.query, viewer=viewer, limit=limit)

    found = query(paths, config, work)
    note = "No sessions archived yet." if found is None else found.note
    rows: list[dict[str, Any]] = []
    for rank, item in enumerate(found.results if found is not None else (), 1):
        message, session = item.message, item.session
        row: dict[str, Any] = {
            "rank": rank,
            "session_id": session.id,
            "title": session.title or "(untitled)",
            "platform": session.platform,
            "chat_type": session.chat_type,
            "message_id": message.id,
            "role": message.role,
            "created_at": message.created_at,
            "when": when(message.created_at),
            "snippet": item.snippet,
        }
        if message.speaker:
            row["speaker"] = message.speaker
        if message.external_id:
            row["external_id"] = message.external_id
        rows.append(row)
    if args.json:
        data: dict[str, Any] = {"query": args.query, "results": rows}
        if note:
            data["note"] = note
        print_json(data)
        return 0
    if note:
        print(visible(note))
    for row in rows:
        print(f"{row['rank']}. {row['session_id']}  {visible(row['title'])}")
        who = row["role"] + (f" {visible(row['speaker'])}" if "speaker" in row else "")
        detail = f"   {row['when']} · message {row['message_id']} ({who})"
        if "external_id" in row:
            detail += f" · external_id {visible(row['external_id'])}"
        print(detail)
        print(f"   {visible(' '.join(row['snippet'].split()))}")
    return 0


def _call_line(call: Mapping[str, Any], width: int = 300) -> str:
    """``memory({"action": "add", …})``: a tool call as the model made it, one line."""
    function = call.get("function") or {}
    name = str(function.get("name") or call.get("name") or "?")
    arguments = str(function.get("arguments") or "")
    try:  # compact and one line, whatever spacing the model used
        arguments = json.dumps(json.loads(arguments), ensure_ascii=False)
    except ValueError:
        arguments = " ".join(arguments.split())
    if len(arguments) > width:
        arguments = arguments[: width - 1] + "…"
    return f"{name}({arguments})"


def _session_json(session: Session) -> dict[str, Any]:
    from agent_core.tools import session_json  # the tool's shape, when JSON is asked

    data = session_json(session)
    data["chat_id"] = session.chat_id
    data["people"] = list(session.people)
    if session.ended_at is not None:
        data["ended_at"] = session.ended_at
        data["end_reason"] = session.end_reason
    return data


def _not_found(session_id: str, viewer: str | None) -> int:
    # The same words for "does not exist" and "exists, but not this person's".
    whose = f" in the history of {viewer}" if viewer is not None else ""
    print(f"mnemo: no session {visible(repr(session_id))}{whose}", file=sys.stderr)
    return 1
