"""Real OS processes against one store: concurrent writers lose nothing, SIGKILL tears nothing.

The writers are forked from an interpreter that has imported ``memory`` (fixture
``writers``, tests/memory/zygote.py): each is its own process, started in milliseconds."""

from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path

import pytest

from memory import MemoryLimits, MemoryStore, MemoryTurn
from memory.curated.entries import join_entries, parse_entries
from tests.memory.zygote import Zygote

WRITER = """
import sys
from pathlib import Path
from memory import MemoryLimits, MemoryStore, MemoryTurn

directory, tag, count, mode = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
if len(sys.argv) > 5:  # die of SIGXFSZ as soon as a write crosses this many bytes
    import resource, signal
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it by default
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[5]), int(sys.argv[5])))
store = MemoryStore(directory, limits=MemoryLimits(memory=1_000_000, user=1_000_000))
print("ready", flush=True)
i = 0
while count < 0 or i < count:
    if mode == "add":
        content = f"{tag} entry {i:05d}"
        result = store.call({"action": "add", "content": content}, MemoryTurn())
    else:  # churn: grow, then rewrite a big entry in place, forever
        content = f"{tag} {i:07d} " + "payload " * 400
        result = store.call({"action": "add", "content": content}, MemoryTurn())
        result = store.call(
            {"action": "replace", "old_text": f"{tag} {i:07d} ", "content": content + "edited"},
            MemoryTurn(),
        )
    if not result.ok:
        print("FAILED", result, file=sys.stderr, flush=True)
        sys.exit(1)
    i += 1
"""


@pytest.mark.slow
def test_two_processes_adding_200_entries_each_lose_none(tmp_path: Path, writers: Zygote) -> None:
    directory = tmp_path / "shared"
    pids = [writers.start(WRITER, str(directory), tag, "200", "add") for tag in ("left", "right")]
    for pid in pids:
        assert writers.wait(pid) == 0, writers.stderr()
    store = MemoryStore(directory, limits=MemoryLimits(1_000_000, 1_000_000))
    entries = store.entries("memory")
    expected = {f"{tag} entry {i:05d}" for tag in ("left", "right") for i in range(200)}
    assert set(entries) == expected
    assert len(entries) == 400
    # each writer's own entries stay in its order
    for tag in ("left", "right"):
        mine = [e for e in entries if e.startswith(tag)]
        assert mine == sorted(mine)


@pytest.mark.slow
def test_a_writer_killed_mid_write_never_leaves_a_partial_or_empty_file(
    tmp_path: Path, writers: Zygote
) -> None:
    directory = tmp_path / "victim"
    rng = random.Random(1234)
    seen_sizes: set[int] = set()
    # forked writers start writing at once, so each round is a few write cycles (a few ms
    # each) and many rounds are cheap: a kill lands at another point of a write each time
    for round_ in range(12):
        pid = writers.start(WRITER, str(directory), f"r{round_:02d}", "-1", "churn")
        time.sleep(rng.uniform(0.01, 0.1))
        os.kill(pid, signal.SIGKILL)
        assert writers.wait(pid) == -signal.SIGKILL
        path = directory / "MEMORY.md"
        if not path.exists():  # killed before its first write landed (a loaded machine)
            assert round_ == 0 or seen_sizes == set(), "the file vanished after a kill"
            continue
        text = path.read_text(encoding="utf-8")  # strict: a torn UTF-8 write would raise
        entries = parse_entries(text)
        assert entries, "the file must never be empty after a kill"
        assert join_entries(entries) == text, "the file must round-trip (no partial write)"
        for entry in entries:
            assert entry.endswith(("payload", "edited")), entry[-40:]
        seen_sizes.add(len(entries))
        leftovers = list(directory.glob(".MEMORY.md.*.tmp"))
        for tmp in leftovers:  # a temp file may survive a kill; it must never be the real file
            tmp.unlink()
    assert len(seen_sizes) > 1, "the writer should have made progress between kills"


@pytest.mark.slow
def test_a_writer_that_dies_inside_a_write_leaves_the_old_file_intact(
    tmp_path: Path, writers: Zygote
) -> None:
    """Deterministic kill mid-write: RLIMIT_FSIZE makes the kernel send SIGXFSZ when the
    writer's next write crosses the limit, i.e. in the middle of writing the new file."""
    directory = tmp_path / "victim"
    store = MemoryStore(directory, limits=MemoryLimits(1_000_000, 1_000_000))
    for i in range(5):
        assert store.call({"action": "add", "content": f"old {i} " + "x" * 2000}, MemoryTurn()).ok
    before = (directory / "MEMORY.md").read_bytes()
    fsize = str(len(before) + 512)
    pid = writers.start(WRITER, str(directory), "new", "-1", "churn", fsize)
    assert writers.wait(pid) == -signal.SIGXFSZ
    assert (directory / "MEMORY.md").read_bytes() == before
    assert len(store.entries("memory")) == 5
