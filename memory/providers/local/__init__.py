"""The ``local`` memory provider: semantic recall and a person card, on this machine.

``embedder`` turns text into vectors with a small sentence model run on the CPU (the extra
``mnemo[local]``), ``vectors`` keeps one vector per archived message in the archive's own
file and searches a person's vectors exactly, ``cards`` keeps each person's card, and
``provider`` (``LocalProvider``) answers the provider hooks from them. Nothing leaves the
machine. Errors: ``LocalUnavailable`` (a ``ProviderError``) when the extra is missing.
"""

from memory.providers.local.cards import Card, CardStore, CardWriter
from memory.providers.local.embedder import DIMENSION, MODEL_ID, Embedder, LocalUnavailable
from memory.providers.local.provider import LocalProvider, LocalSettings, Recalled
from memory.providers.local.vectors import VectorStore

__all__ = [
    "DIMENSION",
    "MODEL_ID",
    "Card",
    "CardStore",
    "CardWriter",
    "Embedder",
    "LocalProvider",
    "LocalSettings",
    "LocalUnavailable",
    "Recalled",
    "VectorStore",
]
