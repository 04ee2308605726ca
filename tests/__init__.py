from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
"""The repository root, for tests that run the CLI or read project files."""
