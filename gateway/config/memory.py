"""The ``memory:`` section: the bounded memory files, the review, and the memory provider
beside them (``memory.provider`` and its ``provider_options``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gateway.config.checks import EnvName, HttpURL, Section

__all__ = ["HonchoOptions", "Mem0Options", "MemoryConfig", "ProviderOptions", "ReviewConfig"]


class ReviewConfig(Section):
    enabled: bool = True
    """After turns, ask the model in the background whether anything deserves saving."""
    interval_turns: int = Field(default=1, gt=0, le=1000)
    """Review after every N-th turn of a session (1 = every turn)."""
    model: str | None = None
    """A cheaper model name for reviews (default: model.name)."""


class HonchoOptions(Section):
    base_url: HttpURL | None = None
    """A self-hosted Honcho server, e.g. http://127.0.0.1:8000 (null: Honcho's service)."""
    api_key_env: EnvName = "HONCHO_API_KEY"
    """Environment variable holding the Honcho API key (a local server may need none)."""
    workspace: str = Field(default="mnemo", min_length=1, max_length=100)
    """The Honcho workspace mnemo keeps its peers and sessions in."""


class Mem0Options(Section):
    base_url: HttpURL | None = None
    """A self-hosted Mem0 server, e.g. http://127.0.0.1:8888 (null: Mem0's platform)."""
    api_key_env: EnvName = "MEM0_API_KEY"
    """Environment variable holding the Mem0 API key."""


class ProviderOptions(Section):
    context_chars: int = Field(default=1500, ge=0, le=20_000)
    """Characters of the provider's session block in the system prompt (0: none)."""
    prefetch_chars: int = Field(default=2000, ge=0, le=20_000)
    """Characters of recalled memory appended to a user message (0: none)."""
    prefetch_timeout_ms: int = Field(default=300, gt=0, le=60_000)
    """A turn waits at most this long for recalled memory, then goes on without it."""
    timeout_s: float = Field(default=10.0, gt=0, le=600)
    """Seconds every other provider call may take (session start, sync, session end)."""
    card_chars: int = Field(default=1500, gt=0, le=20_000)
    """local: characters a person card may hold."""
    prefetch_results: int = Field(default=3, ge=0, le=20)
    """local: past messages recalled for each new message, at most."""
    honcho: HonchoOptions = HonchoOptions()
    mem0: Mem0Options = Mem0Options()


class MemoryConfig(Section):
    memory_char_limit: int = Field(default=2200, gt=0, le=100_000)
    """Characters MEMORY.md (the agent's notes) may hold."""
    user_char_limit: int = Field(default=1375, gt=0, le=100_000)
    """Characters USER.md (the person's profile) may hold."""
    scope: Literal["person", "shared"] = "person"
    """``person``: one store per person; ``shared``: one store for everyone (single owner)."""
    group_scope: Literal["chat", "person"] = "chat"
    """Whose memory a group session uses: ``chat``, a store of the group's own (nothing a
    member told the bot privately can reach the group); ``person``, the speaker's own
    private memory (the model then sees it in public: it may repeat it there)."""
    write_approval: bool = False
    """Stage memory writes until the person approves them (/memory approve ID)."""
    notify: Literal["off", "on", "verbose"] = "off"
    """Tell the person when a review saved something (one line; verbose: what)."""
    review: ReviewConfig = ReviewConfig()
    provider: Literal["none", "local", "honcho", "mem0"] = "none"
    """One memory provider beside the built-in memory: ``local`` (semantic recall and a
    person card, on this machine; needs ``pip install 'mnemo[local]'``), ``honcho`` or
    ``mem0`` (services: what people say is sent to them), or ``none``."""
    provider_options: ProviderOptions = ProviderOptions()
