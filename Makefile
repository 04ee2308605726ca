# One task runner: CI runs `make lint` and `make test` (see .ci/run).
PY ?= .venv/bin/python

.PHONY: setup test lint fmt bench bench-gateway bench-scan bench-cli

setup:
	python3 -m venv .venv
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e '.[dev]'

test:
	$(PY) -m pytest -q

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
