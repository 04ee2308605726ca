"""``mnemo skills …``: operators list, read and check skills, and review staged changes.

Reading commands never create the skills folder. ``show`` prints SKILL.md as it is on disk,
scanner findings or not (an operator may need to see what was blocked); everything a chat
wrote goes through ``visible`` so it cannot drive the terminal. ``approve``/``reject`` are
the terminal twins of ``/skills approve|reject ID``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from gateway.cli.common import add_command
from gateway.config import Config, Paths
from gateway.terminal import visible
from memory.skills import SkillError, SkillStore

__all__ = ["register"]


def register(commands: Any) -> None:
    skills = add_command(commands, "skills")
    sub = skills.add_subparsers(dest="skills_command", metavar="ACTION", required=True)

    p = sub.add_parser("list", help="skills with category and description")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_list)

    p = sub.add_parser("show", help="print a skill's SKILL.md (or one support file)")
    p.add_argument("name")
    p.add_argument("--file", dest="file_path", help="a support file, e.g. references/api.md")
    p.set_defaults(handler=_show)

    p = sub.add_parser("check", help="validate every skill (exit 1 on a problem)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_check)

    p = sub.add_parser("pending", help="skill changes awaiting an admin")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_pending)

    for name, text in (
        ("diff", "show what a staged change would do"),
        ("approve", "apply a staged change"),
        ("reject", "discard a staged change"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("id")
        p.set_defaults(handler=_review, review=name)


def _store(paths: Paths, config: Config) -> SkillStore:
    from gateway.storage import command_stores

    return command_stores(paths, config, os.environ).skills


def _fail(exc: SkillError) -> int:
    print(f"mnemo: {visible(str(exc))}", file=sys.stderr)
    return 1


def _list(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    skills, problems = _store(paths, config).scan()
    if args.json:
        rows = [
            {
                "name": s.name,
                "category": s.category,
                "description": s.description,
                "tags": list(s.tags),
                "version": s.version,
                "platforms": list(s.platforms),
                "path": s.location,
            }
            for s in skills
        ]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    elif not skills:
        print(f"No skills under {paths.skills}.")
    else:
        width = max(len(s.name) for s in skills)
        cat_width = max(len(s.category or "-") for s in skills)
        for s in skills:
            category = s.category or "-"
            print(f"{s.name:<{width}}  {category:<{cat_width}}  {visible(s.description)}")
    if problems:
        n = len(problems)
        print(
            f"mnemo: {n} problem{'s' if n != 1 else ''} (invalid skills are not loaded); "
            "run `mnemo skills check`",
            file=sys.stderr,
        )
    return 0


def _show(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    try:
        text = _store(paths, config).view(args.name, args.file_path, screened=False)
    except SkillError as exc:
        return _fail(exc)
    print(visible(text))
    return 0


def _check(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    store = _store(paths, config)
    problems = store.check()
    if args.json:
        print(json.dumps([{"path": p.path, "reason": p.reason} for p in problems], indent=2))
    else:
        for problem in problems:
            print(f"{visible(problem.path)}: {visible(problem.reason)}")
    if problems:
        return 1
    if not args.json:
        count = len(store.scan()[0])
        print(f"{count} skill{'s' if count != 1 else ''}, no problems")
    return 0


def _pending(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    items = _store(paths, config).pending()
    if args.json:
        print(json.dumps([item.to_json() for item in items], ensure_ascii=False, indent=2))
        return 0
    if not items:
        print("No skill changes are waiting for approval.")
    for item in items:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(item.created_at))
        print(f"{item.id}  {visible(item.change.describe())}")
        print(f"    {when} · {visible(item.reason)}")
    return 0


def _review(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    store = _store(paths, config)
    try:
        if args.review == "diff":
            text = store.diff(args.id)
            print(visible(text.rstrip("\n")) if text else "(no textual change)")
        elif args.review == "approve":
            print(visible(store.approve(args.id)))
        else:
            print(visible(store.reject(args.id)))
    except SkillError as exc:
        return _fail(exc)
    return 0
