"""The edge: one subpackage per chat platform (normalize, render, client lifecycle).

``messages`` is the vocabulary every adapter speaks; ``chunking`` splits long replies.
Adapters import nothing else of ours.
"""

from adapters.chunking import split_message, utf16_len
from adapters.messages import Attachment, ChatType, Identity, InboundMessage, OutboundMessage

__all__ = [
    "Attachment",
    "ChatType",
    "Identity",
    "InboundMessage",
    "OutboundMessage",
    "split_message",
    "utf16_len",
]
