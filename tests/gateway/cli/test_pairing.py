"""``mnemo pairing``: the shell's twin of /pair, on the same pairing.json."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from gateway.auth import Access, Auth
from gateway.cli import main
from gateway.pairing.store import PairingStore
from tests.gateway.pairing.test_store import dm


def test_list_has_a_header_expiry_approved_blocked_and_safe_names(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = PairingStore(home / "pairing.json")
    assert main(["pairing", "list"]) == 0
    assert capsys.readouterr().out == "No pairings: no codes waiting, nobody approved or blocked.\n"
    # a name as a hand-edited file (or an older mnemo) might hold it: escape codes, newlines
    evil = store.request("telegram:66", "Eve\x1b[2J\x1b[31m\nroot@host:~# \u202eevil")
    ada = store.request("telegram:77", "Ada")
    assert evil is not None and ada is not None
    store.approve(ada.code)
    store.block("discord:5")
    assert main(["pairing", "list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split()[:5] == ["STATE", "WHO", "CODE", "EXPIRES", "NAME"]
    assert len(lines) == 4 and "\x1b" not in out and "\u202e" not in out
    pending, approved, blocked = lines[1:]
    assert pending.split()[:6] == ["pending", "telegram:66", evil.code, "in", "59", "minutes"]
    assert pending.endswith("Eve(2J(31m root@host:~# evil")
    assert approved.split() == ["approved", "telegram:77", "-", "-"]
    assert blocked.split() == ["blocked", "discord:5", "-", "-"]
    assert lines[0].index("CODE") == pending.index(evil.code)  # the columns line up


def test_list_json(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = PairingStore(home / "pairing.json")
    offer = store.request("telegram:66", "Eve\nnewline")
    assert offer is not None
    store.block("telegram:9")
    assert main(["pairing", "list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    [pending] = data["pending"]
    assert pending["code"] == offer.code and pending["who"] == "telegram:66"
    assert pending["name"] == "Eve newline"
    assert datetime.fromisoformat(pending["expires_at"]).timestamp() == int(offer.expires_at)
    assert 3590 <= pending["expires_in_s"] <= 3600
    assert data["approved"] == [] and data["blocked"] == ["telegram:9"]


def test_approve_deny_revoke_block_unblock(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (home / "config.yaml").write_text("gateway:\n  admins: ['telegram:1']\n", encoding="utf-8")
    store = PairingStore(home / "pairing.json")
    first = store.request("telegram:77", "Stranger", "77")
    second = store.request("telegram:78", "Other", "78")
    assert first is not None and second is not None
    assert main(["pairing", "approve", "WRONGCODE"]) == 1
    assert main(["pairing", "approve", first.code.lower()]) == 0
    assert main(["pairing", "deny", second.code]) == 0
    assert main(["pairing", "deny", second.code]) == 1
    out = capsys.readouterr().out
    assert "approved telegram:77" in out and f"denied {second.code} of telegram:78" in out
    assert store.approved("telegram:77") and store.listing().pending == ()
    assert main(["pairing", "revoke", "telegram:77"]) == 0
    assert main(["pairing", "revoke", "telegram:77"]) == 1
    assert main(["pairing", "block", "Telegram:78"]) == 0
    assert main(["pairing", "block", "telegram:78"]) == 1
    assert main(["pairing", "block", "telegram:1"]) == 1  # an admin
    assert "is an admin" in capsys.readouterr().err
    assert main(["pairing", "block", "not-an-id"]) == 2
    auth = Auth(Access(allowed_users={"telegram": frozenset({"*"})}), store)
    assert auth.check(dm("78")).action == "ignore"  # the running gateway's view agrees
    assert main(["pairing", "unblock", "telegram:78"]) == 0
    assert main(["pairing", "unblock", "telegram:78"]) == 1
    assert auth.check(dm("78")).action == "allow"
