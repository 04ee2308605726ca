"""``mnemo provider …``: the operator's view of the memory provider ``memory.provider`` names.

``status`` says which provider is active and how it is (the local one: model, messages
indexed and still to index, cards); ``search --person P QUERY`` shows what the provider
would recall for P (exactly P's: the same scoping as a turn); ``reindex`` embeds every
archived message not indexed yet, in the foreground with progress (``--fresh``: all again);
``card --person P`` prints P's person card. Everything a chat wrote is printed through
``visible`` so it cannot drive the terminal. Exit status 1 when the provider cannot answer,
2 for a command the active provider does not have.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from gateway.cli.common import UsageError, add_command
from gateway.config import Config, Paths
from gateway.people import person_option
from gateway.provider import health
from gateway.terminal import visible
from memory.providers import Provider, ProviderError, Subject
from memory.providers.local import Card, LocalProvider

__all__ = ["register"]

T = TypeVar("T")


def register(commands: Any) -> None:
    provider = add_command(commands, "provider")
    sub = provider.add_subparsers(dest="provider_command", metavar="ACTION", required=True)

    p = sub.add_parser("status", help="the active provider and its health")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_status)

    p = sub.add_parser("search", help="what the provider recalls for a person and a query")
    _person(p)
    p.add_argument("query")
    p.add_argument("--limit", type=int, default=5)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_search)

    p = sub.add_parser("reindex", help="local: embed every message not indexed yet")
    p.add_argument("--fresh", action="store_true", help="drop every vector and start again")
    p.set_defaults(handler=_reindex)

    p = sub.add_parser("card", help="local: a person's card")
    _person(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_card)


def _person(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--person", required=True, type=person_option, help="e.g. telegram:5001, or a group's"
    )


def _with_provider(
    paths: Paths, config: Config, work: Callable[[Provider], Awaitable[T]], *, threads: int = 1
) -> T:
    """Run ``work`` with the configured provider over the archive of ``storage.backend``
    (no indexer). Only the local provider reads the archive, and it needs SQLite's: on
    PostgreSQL the archive is opened without migrating and so never connects, and no
    ``state.db`` appears in the home."""
    from gateway.provider import open_provider  # the provider's SDK, only when used
    from gateway.storage import open_archive

    if config.memory.provider == "none":
        raise UsageError("no memory provider is active (memory.provider: none)")

    async def go() -> T:
        async with (
            open_archive(paths, config, os.environ, migrate=False) as archive,
            open_provider(
                config, archive=archive, model=None, index=False, threads=threads
            ) as provider,
        ):
            assert provider is not None
            return await work(provider)

    return asyncio.run(go())


def _with_local(
    paths: Paths,
    config: Config,
    action: str,
    work: Callable[[LocalProvider], Awaitable[T]],
    *,
    threads: int = 1,
) -> T:
    """``_with_provider`` for the local provider's own commands."""
    if config.memory.provider != "local":
        raise UsageError(
            f"`provider {action}` is the local provider's; memory.provider is"
            f" {config.memory.provider!r}"
        )

    async def local(provider: Provider) -> T:
        assert isinstance(provider, LocalProvider)
        return await work(provider)

    return _with_provider(paths, config, local, threads=threads)


def _status(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    kind = config.memory.provider
    if kind == "none":
        report: dict[str, Any] = {"provider": "none"}
    else:
        try:
            report = _with_provider(paths, config, health)
        except ProviderError as exc:
            report = {"provider": kind, "reachable": False, "error": str(exc)}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key:<11} {visible(str(value))}")
    return 1 if report.get("reachable") is False else 0


def _search(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    subject = Subject(args.person, args.person.partition("-")[2].startswith("chat-"))

    async def ask(provider: Provider) -> list[dict[str, Any]]:
        search = getattr(provider, "search", None)
        if search is None:  # a service: what its prefetch answers
            text = await provider.prefetch(subject, args.query)
            return [{"text": line} for line in text.splitlines() if line.strip()]
        found = await search(subject, args.query, limit=args.limit, min_similarity=0.0)
        return [
            {
                "session_id": item.session_id,
                "message_id": item.message_id,
                "role": item.role,
                "similarity": round(item.similarity, 3),
                "text": item.text,
            }
            for item in found
        ]

    try:
        rows = _with_provider(paths, config, ask)
    except ProviderError as exc:
        print(f"mnemo: provider: {visible(str(exc))}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    elif not rows:
        print("nothing recalled")
    for row in [] if args.json else rows:
        head = (
            f"{row['session_id']}#{row['message_id']} {row['role']} {row['similarity']:.2f}  "
            if "session_id" in row
            else ""
        )
        print(head + visible(" ".join(str(row["text"]).split()))[:300])
    return 0


def _reindex(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    started = time.monotonic()

    def progress(done: int, total: int) -> None:
        print(f"\rindexed {done}/{total}", end="", file=sys.stderr, flush=True)

    async def work(provider: LocalProvider) -> int:
        return await provider.reindex(fresh=args.fresh, progress=progress)

    # the foreground: every core (a running gateway's own indexer keeps to one)
    count = _with_local(paths, config, "reindex", work, threads=os.cpu_count() or 1)
    seconds = time.monotonic() - started
    print(file=sys.stderr)
    rate = f" ({count / seconds:.0f} messages/s)" if count and seconds else ""
    print(f"embedded {count} messages in {seconds:.1f}s{rate}")
    return 0


def _card(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    async def read(provider: LocalProvider) -> Card | None:
        return await provider.card(Subject(args.person))

    card = _with_local(paths, config, "card", read)
    if args.json:
        print(json.dumps(None if card is None else {"person": card.subject, "text": card.text,
              "session_id": card.session_id, "updated_at": card.updated_at}, indent=2))  # fmt: skip
    elif card is None:
        print(f"no card for {args.person} yet (one is written when a session of theirs ends)")
    else:
        print(visible(card.text))
    return 0
