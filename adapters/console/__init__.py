"""The console: this terminal (or a pipe) as a private chat with the person at it.

``normalize`` (a line typed -> InboundMessage), ``render`` (OutboundMessage -> text for a
terminal, escaped with ``visible``) and ``ConsoleAdapter`` (reading lines, printing
replies, "thinking…", Ctrl-C). ``mnemo chat`` runs a gateway with this adapter alone, so
every command and reply is the one Telegram and Discord give.
"""

from adapters.console.client import PROMPT, THINKING, ConsoleAdapter, Control
from adapters.console.normalize import normalize
from adapters.console.render import render, visible

__all__ = ["PROMPT", "THINKING", "ConsoleAdapter", "Control", "normalize", "render", "visible"]
