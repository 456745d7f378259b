"""Invites: a round trip, and every malformed invite refused with a message
that names what is wrong."""

from __future__ import annotations

import base64
import hashlib

import msgpack
import pytest

from moska_p2p.crypto.identity import Identity
from moska_p2p.net.invite import Invite, InviteError, looks_like_invite, parse_invite

KEY = Identity.from_seed(bytes([7]) * 32).public_bytes  # fixed: the same test ids in every worker
TABLE = bytes(range(16))


def _sealed(fields: object) -> str:
    """An invite with a good checksum around any contents (to reach the field checks)."""
    body = msgpack.packb(fields, use_bin_type=True)
    data = body + hashlib.sha256(body).digest()[:4]
    return "moska:" + base64.b32encode(data).decode().rstrip("=").lower()


def test_round_trip_short_and_case_and_space_blind() -> None:
    invite = Invite(KEY, TABLE, (("192.168.1.20", 7000),), ("relay.example.org", 7117))
    text = str(invite)
    assert text.startswith("moska:") and len(text) < 170
    assert parse_invite(text) == invite
    spread = " ".join(text[i : i + 20] for i in range(0, len(text), 20)).upper()
    assert parse_invite(spread.replace("MOSKA:", "moska:", 1)) == invite
    assert parse_invite(f"  {text}\n") == invite
    assert looks_like_invite(text) and not looks_like_invite("127.0.0.1:7000")
    only_relay = Invite(KEY, TABLE, (), ("127.0.0.1", 7117))
    assert parse_invite(str(only_relay)) == only_relay


def test_every_single_character_changed_is_caught() -> None:
    text = str(Invite(KEY, TABLE, (("127.0.0.1", 45678),), None))
    code = text[len("moska:") :]
    for i, char in enumerate(code):
        other = "a" if char != "a" else "b"
        with pytest.raises(InviteError):
            parse_invite("moska:" + code[:i] + other + code[i + 1 :])
    for i in range(len(code)):  # a character lost
        with pytest.raises(InviteError):
            parse_invite("moska:" + code[:i] + code[i + 1 :])


GOOD = str(Invite(KEY, TABLE, (("127.0.0.1", 45678),), None))


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("127.0.0.1:7000", "starts with 'moska:'"),
        ("mosca:abc", "starts with 'moska:'"),
        ("moska:", "empty after 'moska:'"),
        ("moska:" + "a" * 500, "more than any invite"),
        (GOOD[:20] + "0" + GOOD[21:], "'0' at position 15 after 'moska:'"),
        (GOOD[:20] + "!" + GOOD[21:], "'!' at position 15"),
        (GOOD[:-1], "length"),
        (GOOD[:-3], "cut short"),  # a length base32 makes, but not its last character
        (GOOD[:-5] + ("b" if GOOD[-5] != "b" else "c") + GOOD[-4:], "checksum"),
        ("moska:aaaa", "too short"),
        (_sealed([3, KEY, TABLE, [], ["r", 1], b""]), "version 3"),
        (_sealed([1, KEY, TABLE, [], ["r", 1]]), "version 1"),
        (_sealed({"k": KEY}), "not readable"),
        (_sealed([2, KEY, TABLE, [], b""]), "wrong number of fields"),
        (_sealed([2, KEY[:31], TABLE, [], ["r", 1], b""]), "host key is not 32 bytes"),
        (_sealed([2, bytes(32), TABLE, [], ["r", 1], b""]), "cannot be a player's key"),
        (_sealed([2, KEY, TABLE[:8], [], ["r", 1], b""]), "table id is not 16 bytes"),
        (_sealed([2, KEY, TABLE, [], None, b""]), "neither an address nor a relay"),
        (_sealed([2, KEY, TABLE, [["h", 0]], None, b""]), "address that is not a host and a port"),
        (_sealed([2, KEY, TABLE, [["h", 70000]], None, b""]), "not a host and a port"),
        (_sealed([2, KEY, TABLE, [], ["", 7], b""]), "relay that is not a host and a port"),
        (_sealed([2, KEY, TABLE, [["h\x1b[2J", 7]], None, b""]), "not a host and a port"),
        (_sealed([2, KEY, TABLE, [["h", 1]] * 5, None, b""]), "at most 4"),
    ],
)
def test_malformed_invites_are_refused_naming_what_is_wrong(text: str, names: str) -> None:
    with pytest.raises(InviteError, match=names.replace("(", r"\(")) as caught:
        parse_invite(text)
    assert "\n" not in str(caught.value)
