"""Discord through discord.py: ``normalize`` (Message -> InboundMessage; slash commands and
button presses too), ``render`` (OutboundMessage -> 2,000-character chunks; buttons become
components) and ``DiscordAdapter`` (``client``: the client and its gateway connection), which
sends with ``sending``, answers slash commands and presses with ``interactions`` and
registers ``commands``.

discord.py 2.x imports the stdlib ``audioop`` for voice support, which Python 3.11-3.12 flag
with a DeprecationWarning at import time. The first import happens here with that one warning
silenced, so a ``-W error`` run (our test suite) can import the package in any order.
"""

from __future__ import annotations

import warnings

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
    import discord  # noqa: F401

from adapters.discord.client import DiscordAdapter
from adapters.discord.normalize import identity, normalize, normalize_interaction, normalize_press
from adapters.discord.probe import probe
from adapters.discord.render import render

__all__ = [
    "DiscordAdapter",
    "identity",
    "normalize",
    "normalize_interaction",
    "normalize_press",
    "probe",
    "render",
]
