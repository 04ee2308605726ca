"""The gateway: everything between the chat platforms (``adapters``) and the agent
(``agent_core``) with its memory (``memory``), plus the ``mnemo`` command line. Its parts:
``config`` (the YAML schema, its checks, the commented template); ``wiring`` (the long-lived
objects built from one config) and ``platforms`` (the chat platforms ``mnemo run`` can
start); ``service`` (``Gateway``: the parts put together, started and stopped), whose
``intake`` is the one choke point every message passes (``auth``, group gating, ``ledger``
deduplication, ``pairing``, ``limits``) before ``router`` queues it on its session's lane
(``sessions``) and ``turns`` runs it (``commands``, ``approvals``, ``turn_text``), under
``settings``; ``replies`` and ``outbox`` (everything said: persisted, then sent);
``ops_http`` and ``metrics`` (health and Prometheus metrics), ``logs`` (redacted log lines),
``people`` and ``terminal`` (person ids, terminal-safe text); and ``cli`` (``mnemo`` and its
commands).
"""

from __future__ import annotations

__all__ = ["Config", "ConfigError", "MemoryConfig", "Paths", "load_config", "resolve_paths"]


def __getattr__(name: str) -> object:
    """The config names, imported when first asked for: ``mnemo --help`` must not pay for
    pydantic (see ``gateway.cli``)."""
    if name in __all__:
        from gateway import config  # noqa: PLC0415 - deferred on purpose

        return getattr(config, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
