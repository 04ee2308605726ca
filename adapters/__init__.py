"""The edge: one subpackage per chat platform (normalize, render, client lifecycle)."""

__all__: list[str] = []
