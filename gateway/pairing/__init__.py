"""Pairing: strangers' codes, admins' decisions, blocks, and the notices that tell admins of
new requests.
"""

from __future__ import annotations

from gateway.pairing.notices import PairingDesk, listing_text
from gateway.pairing.store import (
    CODE_ALPHABET,
    MAX_CODES_PER_DAY,
    MAX_PENDING,
    Listing,
    PairingOffer,
    PairingStore,
    qualified_id,
    time_left,
)

__all__ = [
    "CODE_ALPHABET",
    "MAX_CODES_PER_DAY",
    "MAX_PENDING",
    "Listing",
    "PairingDesk",
    "PairingOffer",
    "PairingStore",
    "listing_text",
    "qualified_id",
    "time_left",
]
