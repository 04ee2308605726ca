"""The skills folder as planning a write reads it, and as the store reads it too.

``SkillDisk`` finds candidate folders and the one folder a name designates, reads a
SKILL.md, and checks new SKILL.md text (size, scanner, front matter) with the scanner's
findings cached per content (the scanner is slow on long texts). ``memory.skills.plan``
plans against a ``SkillDisk``; ``SkillStore`` is one, so the planner never imports the
store.
"""

from __future__ import annotations

import hashlib

from memory.scan import scan as scan_text
from memory.skills.files import (
    MAX_SKILL_CHARS,
    SKILL_FILE,
    FrontMatter,
    SkillError,
    check_encodable,
    check_name,
    parse_skill_md,
)
from memory.skills.layout import Folder, SkillProblem, list_folders, read_skill_md
from memory.skills.tree import SkillTree

__all__ = ["SkillDisk"]

_CACHE_SIZE = 1024


class SkillDisk:
    """The skills in ``tree``, read (never written) and checked."""

    def __init__(self, tree: SkillTree) -> None:
        self.tree = tree
        self._findings_cache: dict[bytes, tuple[str, ...]] = {}

    def folders(self) -> tuple[list[Folder], list[SkillProblem]]:
        """Candidate skill folders (not yet validated) and layout problems."""
        return list_folders(self.tree)

    def find_folder(self, name: str) -> Folder:
        """The one folder named ``name`` (valid skill or not); ``SkillError`` otherwise."""
        check_name(name)
        try:
            matches = [f for f in self.folders()[0] if f.name == name]
        except OSError as exc:
            raise SkillError(f"The skills folder cannot be read ({exc.strerror}).") from None
        if not matches:
            raise SkillError(f"No skill named {name!r}; skills_list shows the skills there are.")
        if len(matches) > 1:
            where = ", ".join(f.rel for f in matches)
            raise SkillError(
                f"The skill name {name} is used by several folders ({where}); an operator must "
                "rename or remove all but one."
            )
        return matches[0]

    def read_skill_md(self, folder: Folder) -> str:
        return read_skill_md(self.tree, folder.rel, f"{folder.rel}/{SKILL_FILE}")

    def findings(self, text: str) -> tuple[str, ...]:
        """Scanner pattern ids for ``text`` (cached by content)."""
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        cached = self._findings_cache.get(key)
        if cached is None:
            cached = tuple(dict.fromkeys(f.id for f in scan_text(text)))
            if len(self._findings_cache) >= _CACHE_SIZE:
                self._findings_cache.clear()
            self._findings_cache[key] = cached
        return cached

    def check_skill_md(self, content: str, name: str) -> FrontMatter:
        """A whole SKILL.md about to be written: limit, scanner, then front matter."""
        check_encodable(content, "The SKILL.md text")
        if len(content) > MAX_SKILL_CHARS:
            raise SkillError(
                f"SKILL.md would be {len(content):,} chars; at most {MAX_SKILL_CHARS:,} are "
                "allowed. Nothing was written. Move long material into references/ files."
            )
        ids = self.findings(content)
        if ids:
            raise SkillError(
                f"Refused: the SKILL.md text matches the injection scanner ({', '.join(ids)})."
                " Nothing was written; rewrite it without that content."
            )
        meta = parse_skill_md(content)
        if meta.name != name:
            raise SkillError(
                f"SKILL.md front-matter name {meta.name!r} must equal the skill name {name!r}."
            )
        return meta
