"""The ``Documents`` contract (memory/documents/), one suite over both implementations: a
folder on disk and rows in PostgreSQL (``storage``). Another replica is another pool."""

from __future__ import annotations

import threading

import pytest

from memory.documents import Conflict
from tests.stores import Storage


def test_a_write_is_a_compare_and_swap_on_the_version(storage: Storage) -> None:
    docs = storage.documents()
    missing = docs.read("a.md")
    assert missing.raw is None and missing.version is None and not missing.exists
    docs.write("a.md", b"one", expected=None)
    first = docs.read("a.md")
    assert first.raw == b"one" and first.version is not None and not first.foreign
    with pytest.raises(Conflict):
        docs.write("a.md", b"again", expected=None)  # it exists now
    docs.write("a.md", b"two", expected=first.version)
    with pytest.raises(Conflict):
        docs.write("a.md", b"stale", expected=first.version)  # read before "two"
    assert docs.read("a.md").raw == b"two"
    assert docs.version("a.md") == docs.read("a.md").version != first.version


def test_another_replica_reads_the_same_documents(storage: Storage) -> None:
    docs = storage.documents("p")
    docs.write("x.json", '{"é": 1}'.encode(), expected=None)
    other = storage.replica().documents("p")
    assert other.read("x.json").raw == '{"é": 1}'.encode()
    assert other.names() == ["x.json"]
    assert storage.documents("q").names() == []  # folders are apart


def test_names_delete_and_set_aside(storage: Storage) -> None:
    docs = storage.documents()
    for name in ("b.md", "a.md", "c.json"):
        docs.write(name, b"text", expected=None)
    with docs.exclusive("a.md"):
        pass
    docs.backup("b.md", b"old", now=1_700_000_000)
    assert docs.names() == ["a.md", "b.md", "c.json"]  # no locks, no backups
    with pytest.raises(Conflict):
        docs.delete("a.md", expected=None)
    docs.delete("a.md", expected=docs.version("a.md"))
    with docs.exclusive("c.json"):
        docs.set_aside("c.json", ValueError("not ours"), what="test state", now=1_700_000_000)
    assert docs.names() == ["b.md"]
    assert docs.read("c.json").raw is None


def test_a_backup_is_kept_once_per_content(storage: Storage) -> None:
    docs = storage.documents()
    first = docs.backup("m.md", b"hand edit", now=1_700_000_000)
    assert docs.backup("m.md", b"hand edit", now=1_700_000_100) == first
    second = docs.backup("m.md", b"another", now=1_700_000_200)
    assert second != first


def test_exclusive_keeps_out_another_replica_until_it_ends(storage: Storage) -> None:
    mine, theirs = storage.documents(), storage.replica().documents()
    inside, release = threading.Event(), threading.Event()
    log: list[str] = []

    def holder() -> None:
        with mine.exclusive("m.md"):
            log.append("first in")
            inside.set()
            release.wait(10)
            log.append("first out")

    def waiter() -> None:
        with theirs.exclusive("m.md"):
            log.append("second in")

    first = threading.Thread(target=holder)
    first.start()
    assert inside.wait(10)
    second = threading.Thread(target=waiter)
    second.start()
    second.join(0.3)
    assert log == ["first in"]  # still waiting
    with theirs.exclusive("other.md"):  # another name is not held
        pass
    release.set()
    first.join(10)
    second.join(10)
    assert log == ["first in", "first out", "second in"]


def test_sections_nest_in_one_thread(storage: Storage) -> None:
    docs = storage.documents()
    with docs.exclusive("PENDING.json"), docs.exclusive("MEMORY.md"):
        docs.write("PENDING.json", b"{}", expected=None)
        docs.write("MEMORY.md", b"entry", expected=None)
        assert docs.read("MEMORY.md").raw == b"entry"  # read inside sees its own write
    assert storage.replica().documents().names() == ["MEMORY.md", "PENDING.json"]
