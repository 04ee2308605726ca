"""Memory providers: the fourth layer, one optional provider beside the built-in memory.

The built-in layers always run (the bounded MEMORY.md / USER.md, the archive and
``session_search``, skills). A provider adds what they cannot: semantic recall and a model
of the person. ``Provider`` (``memory.providers.base``) is the whole contract: what the
agent calls, when, and with what. The agent's side (timeouts, scanning, the recalled-memory
fence, metrics) is ``agent_core.recall``; a provider never sees the system prompt and never
decides where its text goes.

Errors: ``ProviderError`` (a provider that cannot answer says so with it; any other
exception is treated the same way by the agent, logged and counted).
"""

from memory.providers.base import (
    Exchange,
    Provider,
    ProviderError,
    ProviderTool,
    SessionEnd,
    Subject,
)

__all__ = ["Exchange", "Provider", "ProviderError", "ProviderTool", "SessionEnd", "Subject"]
