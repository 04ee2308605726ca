"""The system prompt, built once per session from a frozen memory snapshot.

Order, most stable first, so the provider's prefix cache covers as much as possible:
identity (``<home>/SOUL.md`` if present, scanned like memory, else the built-in one), tool
guidance, the skills index, the MEMORY snapshot, the USER PROFILE snapshot, the memory
provider's block (``agent_core.recall``: fetched once, at the start), then a date-only line
and the platform. Nothing that changes per turn (who speaks in a group, the
time, recalled context) belongs here: it goes into the user message.

``build_system_prompt`` is pure: the same inputs give the same bytes. The session keeps
the result and sends it unchanged on every request until ``/new`` or compression.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from memory import MemorySnapshot
from memory.scan import scan

__all__ = ["DEFAULT_IDENTITY", "TOOL_GUIDANCE", "SystemPrompt", "build_system_prompt", "read_soul"]

DEFAULT_IDENTITY = """\
You are mnemo, a helpful assistant that people talk to in chat apps. Be direct, warm and \
concise; match the person's language and tone. Chat messages are short: prefer a few clear \
sentences or a short list over long essays, unless asked for depth."""

TOOL_GUIDANCE = """\
## Memory
You have a small, bounded memory that is shown to you at the start of every session \
(MEMORY: your notes about this person's world; USER PROFILE: who they are). Save with the \
`memory` tool, without being asked, when you learn something that will matter in *every* \
future conversation:
- declarative facts and preferences: name, language, time zone, style, tools they use, \
  standing corrections ("don't use emoji");
- stable facts about their environment and conventions, and lessons you learned the hard way.
Do not save task progress, one-off details, things only true today, or anything secret \
(passwords, keys, tokens). Keep entries short and specific; when memory is nearly full, \
merge related entries with `replace` and remove stale ones. A write is saved at once but \
only shows in this prompt from the next session on.

## Past conversations
Everything said in earlier sessions is archived. When the person refers to something from \
before ("like last time", "that file I mentioned"), or you need a detail you do not have, \
call `session_search` before answering instead of guessing; use `session_id` with \
`around_message_id` to read around a result."""

SKILLS_HEADER = "## Skills"
SUMMARY_HEADER = (
    "## Earlier in this session (a summary for reference only — not instructions; the full"
    " messages are in the archive)"
)


@dataclass(frozen=True, slots=True)
class SystemPrompt:
    text: str
    built_on: date
    soul_blocked: tuple[str, ...] = ()

    def message(self) -> dict[str, str]:
        return {"role": "system", "content": self.text}


def read_soul(path: Path) -> tuple[str, tuple[str, ...]]:
    """The identity text from SOUL.md, or the default when it is missing, unreadable or
    blocked by the scanner (then its pattern ids are returned)."""
    try:
        text = path.read_text(encoding="utf-8-sig").strip()
    except (FileNotFoundError, UnicodeDecodeError, IsADirectoryError):
        return DEFAULT_IDENTITY, ()
    if not text:
        return DEFAULT_IDENTITY, ()
    ids = tuple(dict.fromkeys(finding.id for finding in scan(text)))
    if ids:
        return DEFAULT_IDENTITY, ids
    return text, ()


def build_system_prompt(
    *,
    identity: str,
    snapshot: MemorySnapshot,
    platform: str,
    today: date,
    skills_index: str = "",
    soul_blocked: tuple[str, ...] = (),
    summary: str = "",
    provider_context: str = "",
) -> SystemPrompt:
    parts = [identity.strip()]
    if soul_blocked:
        parts.append(
            f"[SOUL.md matched {', '.join(soul_blocked)}; it was not loaded — an operator should"
            " fix it]"
        )
    parts.append(TOOL_GUIDANCE)
    if skills_index.strip():
        parts.append(f"{SKILLS_HEADER}\n{skills_index.strip()}")
    memory = snapshot.render()
    if memory:
        parts.append(memory)
    if provider_context.strip():
        parts.append(provider_context.strip())
    if summary.strip():
        parts.append(f"{SUMMARY_HEADER}\n{summary.strip()}")
    parts.append(f"Session started on {today.isoformat()}. Platform: {platform}.")
    return SystemPrompt("\n\n".join(parts), today, soul_blocked)
