"""Smoke tests of the benchmark scripts in bench/ (small sizes; no timing asserted)."""
