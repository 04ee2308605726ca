# Import the adapter package first: it imports discord.py with its audioop DeprecationWarning
# silenced (see adapters/discord/__init__.py), before any test module imports discord itself.
import adapters.discord  # noqa: F401
