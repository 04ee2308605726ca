"""``mnemo memory …``: operators inspect and repair memory without a chat.

``apply`` runs exactly one ``memory`` tool call, as the model would (staged when write
approval is on). ``add``/``replace``/``remove`` are the operator's own hands: the same rules
and scanner, applied directly. Each invocation is one turn.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from gateway.cli.common import UsageError, add_command
from gateway.config import Config, Paths
from gateway.people import person_option
from gateway.terminal import visible
from memory import (
    FILE_NAMES,
    TARGETS,
    InvalidPersonError,
    MemoryStore,
    MemoryStores,
    MemoryTurn,
)
from memory.curated import Outcome, Refused, Staged
from memory.scan import scan

__all__ = ["register", "show"]


def register(commands: Any) -> None:
    memory = add_command(commands, "memory")
    sub = memory.add_subparsers(dest="memory_command", metavar="ACTION", required=True)

    def person(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--person",
            type=person_option,
            help="telegram:12345 or telegram-12345 (all people if omitted)",
        )

    def target(p: argparse.ArgumentParser, default: str | None) -> None:
        p.add_argument("--target", choices=TARGETS, default=default)

    p = sub.add_parser("show", help="entries with usage")
    person(p)
    target(p, None)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_show)

    p = sub.add_parser("apply", help="run one memory tool call from its JSON arguments")
    person(p)
    p.add_argument(
        "arguments", help='JSON, e.g. \'{"action": "add", "target": "user", "content": "…"}\''
    )
    p.set_defaults(handler=_apply)

    # The operator's own hands: the tool's fields as positionals, applied directly.
    for action, fields, text in (
        ("add", ("content",), "add an entry"),
        ("replace", ("old_text", "content"), "replace the entry containing OLD_TEXT"),
        ("remove", ("old_text",), "remove the entry containing OLD_TEXT"),
    ):
        p = sub.add_parser(action, help=text)
        person(p)
        target(p, "memory")
        for name in fields:
            p.add_argument(name)
        p.add_argument("--json", action="store_true")
        p.set_defaults(handler=_direct, action=action, fields=fields)

    p = sub.add_parser("scan", help="report blocked entries and drifted files (exit 1 if any)")
    person(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_scan)

    p = sub.add_parser("repair", help="rewrite a hand-edited file in canonical form (backs it up)")
    person(p)
    target(p, "memory")
    p.set_defaults(handler=_repair)

    p = sub.add_parser("pending", help="staged writes awaiting approval")
    person(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_pending)

    for name in ("approve", "reject"):
        p = sub.add_parser(name, help=f"{name} a staged write")
        person(p)
        p.add_argument("id")
        p.set_defaults(handler=_approve if name == "approve" else _reject)


# -- helpers ------------------------------------------------------------------------------


def _stores(paths: Paths, config: Config) -> MemoryStores:
    from gateway.storage import command_stores

    return command_stores(paths, config, os.environ).memory


def _one(args: argparse.Namespace, stores: MemoryStores, *, direct: bool = False) -> MemoryStore:
    if stores.scope == "shared":
        store = stores.for_person("shared")
    elif not args.person:
        raise UsageError("--person is required (memory.scope is 'person')")
    else:
        try:
            store = stores.for_person(args.person)
        except InvalidPersonError as exc:
            raise UsageError(str(exc)) from None
    if direct:
        store.write_approval = False
    return store


def _selected(args: argparse.Namespace, stores: MemoryStores) -> list[MemoryStore]:
    if args.person or stores.scope == "shared":
        return [_one(args, stores)]
    return list(stores)


def _emit(outcome: Outcome, as_json: bool) -> int:
    if as_json:
        _print_tool_json(outcome)
    elif isinstance(outcome, Refused):
        print(f"mnemo: {visible(outcome.error)}", file=sys.stderr)
        for entry in outcome.current_entries or ():
            print(f"  - {visible(entry)}", file=sys.stderr)
        for entry in outcome.matches or ():
            print(f"  ? {visible(entry)}", file=sys.stderr)
    else:
        usage = None if isinstance(outcome, Staged) else outcome.usage
        print(visible(outcome.message + (f" ({usage})" if usage is not None else "")))
    return 0 if outcome.ok else 1


def _print_tool_json(outcome: Outcome) -> None:
    """``outcome`` as the memory tool's JSON, exactly what the model would read."""
    from agent_core.tools import outcome_json  # only when JSON is asked for

    print(json.dumps(outcome_json(outcome), ensure_ascii=False, indent=2))


# -- handlers -----------------------------------------------------------------------------


def _show(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    return show(args, _stores(paths, config))


def show(args: argparse.Namespace, stores: MemoryStores) -> int:
    """Print ``mnemo memory show`` (``args``: person, target, json) of ``stores``, wherever
    they are kept: the same memory prints the same text on every backend."""
    targets = [args.target] if args.target else list(TARGETS)
    report: list[dict[str, Any]] = []
    for store in _selected(args, stores):
        person: dict[str, Any] = {"person": store.person}
        for target in targets:
            try:
                entries = store.entries(target)
            except UnicodeDecodeError as exc:
                person[target] = {"error": f"{FILE_NAMES[target]} is not valid UTF-8: {exc.reason}"}
                continue
            person[target] = {
                "file": store.location(target),
                "usage": store.usage(target),
                "entries": entries,
                "blocked": [sorted({f.id for f in scan(e)}) for e in entries],
            }
        report.append(person)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return 0
    if not report:
        print(f"No memory stored yet under {stores.where}.")
    for person in report:
        for target in targets:
            info = person[target]
            title = f"{person['person']} · {FILE_NAMES[target]}"
            if "error" in info:
                print(f"{title}: {info['error']}")
                continue
            print(f"{title} [{info['usage']}, {_count(len(info['entries']), 'entry')}]")
            for number, (entry, ids) in enumerate(
                zip(info["entries"], info["blocked"], strict=True), 1
            ):
                flag = f"  ⚠ blocked from prompts: {', '.join(ids)}" if ids else ""
                lines = visible(entry).split("\n")
                print(f"  {number:>2}. {lines[0]}{flag}")
                for more in lines[1:]:
                    print(f"      {more}")
    return 0


def _apply(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    try:
        call = json.loads(args.arguments)
    except ValueError as exc:
        raise UsageError(f"arguments are not valid JSON: {exc}") from None
    if not isinstance(call, dict):
        raise UsageError("arguments must be a JSON object")
    store = _one(args, _stores(paths, config))
    outcome = store.call(call, MemoryTurn())
    _print_tool_json(outcome)
    return 0 if outcome.ok else 1


def _direct(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    call = {"action": args.action, "target": args.target}
    call.update({name: getattr(args, name) for name in args.fields})
    store = _one(args, _stores(paths, config), direct=True)
    return _emit(store.call(call, MemoryTurn()), args.json)


def _scan(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    problems: list[dict[str, Any]] = []
    for store in _selected(args, _stores(paths, config)):
        blocked, drifts = store.check()
        for item in blocked:
            problems.append(
                {
                    "person": store.person,
                    "file": FILE_NAMES[item.target],
                    "kind": "blocked",
                    "entry": item.entry,
                    "ids": list(item.ids),
                }
            )
        for drift in drifts:
            problems.append(
                {
                    "person": store.person,
                    "file": FILE_NAMES[drift.target],
                    "kind": "drift",
                    "reason": drift.reason,
                }
            )
    if args.json:
        print(json.dumps(problems, ensure_ascii=False, indent=2))
    elif not problems:
        print("No blocked entries and no drifted files.")
    for problem in problems if not args.json else []:
        where = f"{problem['person']} · {problem['file']}"
        if problem["kind"] == "blocked":
            entry = visible(" ".join(problem["entry"].split()))
            print(f"BLOCKED {where}: {', '.join(problem['ids'])}: {entry[:100]}")
        else:
            print(f"DRIFT   {where}: {problem['reason']}")
    return 1 if problems else 0


def _repair(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    return _emit(_one(args, _stores(paths, config)).repair(args.target), False)


def _pending(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    rows = []
    for store in _selected(args, _stores(paths, config)):
        for item in store.pending():
            rows.append({"person": store.person, **item.to_json(), "summary": item.summary()})
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    if not rows:
        print("No memory writes are waiting for approval.")
    for row in rows:
        print(f"{row['id']}  {row['person']} · {FILE_NAMES[row['target']]}")
        for line in row["summary"]:
            print(f"    {visible(line)}")
    return 0


def _approve(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    return _emit(_one(args, _stores(paths, config)).approve(args.id), False)


def _reject(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    return _emit(_one(args, _stores(paths, config)).reject(args.id), False)


def _count(n: int, noun: str) -> str:
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{n} {noun if n == 1 else plural}"
