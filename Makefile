# One task runner: CI runs `make lint` and `make test` (see .ci/run).
PY ?= .venv/bin/python
# pytest-xdist workers: two per core, since many tests wait on processes and sockets (on 2
# cores: 93 s with 4 workers, 119 s with 2, 94 s with 6, same CPU time). Work stealing: an
# idle worker takes tests queued on a busy one, so a few long tests at the end of one
# worker's share do not hold the run (quiet 2-core VM, back to back: 55.8 and 57.5 s,
# against 58.5 and 67.0 s with the default "load" schedule).
# `make test PYTEST_WORKERS=0` runs in one process.
PYTEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) * 2 )))
# Some environments set this; then each of the ~40 Python processes the suite starts
# compiles the project again (~0.1 s of CPU each) and every pytest worker re-rewrites
# every test module (~2.5 s each). __pycache__/ is ignored by git.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup test test-fast lint fmt bench bench-gateway bench-scan bench-cli bench-recall bench-local bench-facts bench-ingest scan-table

setup:
	python3 -m venv .venv
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e '.[dev,local,honcho,mem0,postgres,redis]'

# Everything, in parallel; the ten slowest tests are listed so a slow one gets noticed.
test:
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal --durations=10

# The edit-run loop: everything but the tests marked slow (real processes, long property
# runs). CI runs `make test`.
test-fast:
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal -m "not slow"

lint:
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

fmt:
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

# The archive benchmark, quick size (a few minutes); the full 1M run: see bench/README.md.
# Extra flags: make bench BENCH_ARGS="--queries 500 --keep"
BENCH_ARGS ?=
bench:
	$(PY) bench/archive_bench.py --messages 50000 $(BENCH_ARGS)

# The gateway end to end through the Telegram emulator: 1,000 chats (see bench/README.md).
bench-gateway:
	$(PY) bench/gateway_bench.py $(BENCH_ARGS)

# The memory scanner: KB/s on typical entries and the worst 64 KiB input, beside a plain
# regex table (about a minute; see bench/README.md).
bench-scan:
	$(PY) bench/scan_bench.py $(BENCH_ARGS)

# The everyday commands' start-up (--help, config check, memory show, sessions list) beside
# `python -c pass`, against the issue's 0.4 s (about half a minute; see bench/README.md).
bench-cli:
	$(PY) bench/cli_bench.py $(BENCH_ARGS)

# Retrieval quality of session_search: recall@3/5/10 per question kind on the held-out bank
# of bench/recall_data.py, beside two plain FTS5 baselines (about a minute; see
# bench/README.md). Develop against the tune bank: make bench-recall BENCH_ARGS="--bank tune";
# --local adds session_search with the local provider fused in, and the provider alone.
bench-recall:
	$(PY) bench/recall_bench.py $(BENCH_ARGS)

# Group commit: ingest from 1, 8 and 32 chats at once, grouped and one by one side by side
# (a couple of minutes; see bench/README.md).
bench-ingest:
	$(PY) bench/ingest_bench.py $(BENCH_ARGS)

# The local memory provider with 100,000 messages in one person's history: backfill rate,
# prefetch p50/p95 beside the word search alone, and the indexer's cost to a turn (needs
# the extra, which make setup installs; see bench/README.md).
bench-local:
	$(PY) bench/local_bench.py $(BENCH_ARGS)

# Issue 14's recall measure: the archive benchmark's planted facts asked by paraphrase, the
# words alone beside the local provider, on the same data (about 10 minutes at the default
# 50,000 messages; see bench/README.md).
bench-facts:
	$(PY) bench/facts_bench.py $(BENCH_ARGS)

# After a change to memory/scan/patterns.py: write the stored scanner table again
# (memory/scan/table.py says why it is stored; a test fails while it is stale).
scan-table:
	$(PY) -c 'import sys; from memory.scan.table import main; sys.exit(main())'
