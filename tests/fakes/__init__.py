"""Loopback fakes of external services, driven by the real client libraries."""
