"""What a running gateway is told: group policies per platform, concurrency, reply size,
budgets, idle time and how saved memory is told.

``gateway.wiring.gateway_settings`` makes them from the config; a reload (SIGHUP) replaces
the policies, budgets, reply size and notices and keeps the rest (``Gateway.reload``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from gateway.limits import Limits
from gateway.sessions import GroupScope

__all__ = ["GatewaySettings", "Notify", "PlatformPolicy"]

Notify = Literal["off", "on", "verbose"]
"""``memory.notify``: whether a person is told when a review saved something (``on``: one
line; ``verbose``: what)."""


@dataclass(frozen=True, slots=True)
class PlatformPolicy:
    require_mention: bool = True
    free_response_chats: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class GatewaySettings:
    group_sessions_per_user: bool = True
    group_scope: GroupScope = "chat"  # memory.group_scope
    max_concurrent_turns: int = 8
    max_reply_messages: int = 6  # then the whole reply goes as a file
    drain_timeout_s: float = 30.0
    idle_session_s: float = 3600.0
    notify: Notify = "off"  # memory.notify
    pairing_poll_s: float = 2.0  # how often approvals made from the shell are looked for
    limits: Limits = field(default_factory=Limits)  # gateway.limits
    platforms: Mapping[str, PlatformPolicy] = field(default_factory=dict)
