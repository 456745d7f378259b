"""Invites: one string that says how to reach a table and whose table it is.

``moska host`` prints one; ``moska join INVITE`` needs nothing else. An invite is ``moska:``
followed by the base32 (RFC 4648 alphabet, lower case, no padding) of the msgpack array
``[version, host key, table, direct addresses, relay, room secret]`` and 4 bytes of its
SHA-256 (a checksum: a mistyped character is caught, and named, before anything is dialed):

* ``host key``: the host's whole public key (32 bytes). The joiner refuses any other key at
  the table's address or relay: the invite pins the host (its fingerprint is shown), so a
  relay or a machine on the path cannot pass for it.
* ``table``: the first 16 bytes of the table's lobby id (:func:`~moska_p2p.protocol.config.
  lobby_id`, which commits to the settings and a fresh nonce). It is the table's room at the
  relay, and the joiner checks that the settings the host shows hash to it.
* ``direct addresses``: ``[host, port]`` pairs where the host listens (maybe none).
* ``relay``: ``[host, port]`` of a relay where the table's peers meet, or nil.

* ``room secret``: 16 random bytes (empty when there is no relay): the relay admits to the
  table's room only peers that prove they hold it (:class:`~.relay_proto.RoomPass`), and never
  sees it.

An event's invite (``moska tournament direct`` prints it, ``moska tournament enter INVITE``
reads it) is the same array with a seventh item, the string ``"event"``: the host key is the
director's, the table the event's room at the relay (the first 16 bytes of the event's id).
Each command reads only its own kind, and says which command takes the other: a table's
invite does not enter an event, nor an event's sit at a table.

The joiner tries the direct addresses first and the relay when they do not answer.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass

import msgpack

from ..crypto.identity import PUBLIC_KEY_SIZE, is_acceptable_public_key
from .relay_proto import ROOM_SIZE, SECRET_SIZE, RoomPass

PREFIX = "moska:"
VERSION = 2
CHECKSUM_SIZE = 4
MAX_ADDRESSES = 4
MAX_HOST = 64
MAX_INVITE = 400
"""Characters at most after the prefix (an invite with four long host names fits)."""

_ALPHABET = re.compile(r"[a-z2-7]*")


TABLE_INVITE, EVENT_INVITE = "table", "event"
"""What an invite opens: a table (``moska join``) or a club event (``moska tournament
enter``)."""

_TAKES = {TABLE_INVITE: "moska join INVITE", EVENT_INVITE: "moska tournament enter INVITE"}


class InviteError(ValueError):
    """An invite that cannot be used; the message names what is wrong, in one line."""


Address = tuple[str, int]


@dataclass(frozen=True)
class Invite:
    """A table's invite (see the module docstring)."""

    host_key: bytes
    table: bytes
    direct: tuple[Address, ...] = ()
    relay: Address | None = None
    secret: bytes = b""
    kind: str = TABLE_INVITE

    def __post_init__(self) -> None:
        if self.kind not in _TAKES:
            raise ValueError(f"an invite is of a table or an event, not {self.kind!r}")
        if len(self.host_key) != PUBLIC_KEY_SIZE or len(self.table) != ROOM_SIZE:
            raise ValueError("an invite's key is 32 bytes and its table 16")
        if not self.direct and self.relay is None:
            raise ValueError("an invite needs a direct address or a relay")
        if len(self.secret) not in (0, SECRET_SIZE):
            raise ValueError("an invite's room secret is 16 bytes")

    @classmethod
    def of(cls, room: bytes, direct: tuple[Address, ...], relay: Address | None) -> Invite:
        """The invite of a host's room pass (:class:`~.relay_proto.RoomPass`, as bytes)."""
        room_pass = RoomPass.parse(room)
        return cls(room_pass.owner, room_pass.table, direct, relay, room_pass.secret)

    @property
    def room(self) -> bytes:
        """The room pass a joiner registers at the relay with (as bytes)."""
        secret = self.secret or bytes(SECRET_SIZE)  # a hand-made invite: no real secret
        return bytes(RoomPass(self.table, secret, self.host_key))

    def __str__(self) -> str:
        relay = list(self.relay) if self.relay is not None else None
        direct = [list(a) for a in self.direct]
        items: list[object] = [VERSION, self.host_key, self.table, direct, relay, self.secret]
        if self.kind == EVENT_INVITE:
            items.append(EVENT_INVITE)
        body = msgpack.packb(items, use_bin_type=True)
        data = body + hashlib.sha256(body).digest()[:CHECKSUM_SIZE]
        return PREFIX + base64.b32encode(data).decode("ascii").rstrip("=").lower()


def looks_like_invite(text: str) -> bool:
    """Whether a command-line argument is meant as an invite (not ``HOST:PORT``)."""
    return text.strip().lower().startswith(PREFIX)


def parse_invite(text: str, kind: str = TABLE_INVITE) -> Invite:
    """The invite ``text`` (spaces and line breaks anywhere are ignored, any case) of a
    ``kind`` (a table's, or an event's); :class:`InviteError` naming what is wrong (an
    invite of the other kind: which command takes it)."""
    compact = re.sub(r"\s+", "", text).lower()
    if not compact.startswith(PREFIX):
        shown = compact[:12] + ("..." if len(compact) > 12 else "")
        raise InviteError(f"an invite starts with {PREFIX!r}; this starts with {shown!r}")
    code = compact[len(PREFIX) :]
    if not code:
        raise InviteError("the invite is empty after 'moska:' (was it cut off when copied?)")
    if len(code) > MAX_INVITE:
        raise InviteError(f"the invite is {len(code)} characters long: more than any invite")
    bad = next((i for i, c in enumerate(code) if not _ALPHABET.fullmatch(c)), None)
    if bad is not None:
        char = code[bad]
        hint = " (0, 1, 8 and 9 are never used: o, l or i, b and g?)" if char in "0189" else ""
        raise InviteError(
            f"the invite has {char!r} at position {bad + 1} after 'moska:', which no invite"
            f" has: only the letters a-z and the digits 2-7{hint}"
        )
    if len(code) % 8 in (1, 3, 6):  # lengths base32 never makes
        raise InviteError(
            f"the invite's length ({len(code)} characters after 'moska:') cannot be right:"
            " a character was lost or added when copying"
        )
    try:
        data = base64.b32decode(code.upper() + "=" * (-len(code) % 8))
    except binascii.Error:
        raise InviteError("the invite cannot be decoded: copy it again") from None
    if base64.b32encode(data).decode("ascii").rstrip("=").lower() != code:
        raise InviteError(  # the spare bits of the last character are not zero
            "the invite's end is wrong: its last character was mistyped, or it was cut short"
            " (copy the whole invite again)"
        )
    if len(data) <= CHECKSUM_SIZE + 2:
        raise InviteError("the invite is too short: it was cut off when copied")
    body, checksum = data[:-CHECKSUM_SIZE], data[-CHECKSUM_SIZE:]
    if hashlib.sha256(body).digest()[:CHECKSUM_SIZE] != checksum:
        raise InviteError(
            "the invite's checksum does not match: a character was mistyped, lost or added"
            " (copy the whole invite again)"
        )
    invite = _fields(body)
    if invite.kind != kind:
        raise InviteError(
            f"this is the invite of {'an event' if invite.kind == EVENT_INVITE else 'a table'},"
            f" not of {'an event' if kind == EVENT_INVITE else 'a table'}: use it with"
            f" {_TAKES[invite.kind]}"
        )
    return invite


def _fields(body: bytes) -> Invite:
    try:
        obj = msgpack.unpackb(body, raw=False, strict_map_key=True)
    except Exception:  # msgpack raises several kinds; a checksummed body is ours, though
        raise InviteError("the invite's contents are not readable") from None
    if not isinstance(obj, list) or not obj or not isinstance(obj[0], int):
        raise InviteError("the invite's contents are not readable")
    if obj[0] != VERSION:
        raise InviteError(
            f"an invite of version {obj[0]}, and this moska reads version {VERSION}:"
            " host and joiner need the same moska version"
        )
    kind = TABLE_INVITE
    if len(obj) == 7 and obj[6] == EVENT_INVITE:
        kind = EVENT_INVITE
        obj = obj[:6]
    if len(obj) != 6:
        raise InviteError("the invite has the wrong number of fields")
    _, key, table, direct, relay, secret = obj
    if not isinstance(key, bytes) or len(key) != PUBLIC_KEY_SIZE:
        raise InviteError("the invite's host key is not 32 bytes")
    if not is_acceptable_public_key(key):
        raise InviteError("the invite's host key cannot be a player's key")
    if not isinstance(table, bytes) or len(table) != ROOM_SIZE:
        raise InviteError("the invite's table id is not 16 bytes")
    if not isinstance(direct, list) or len(direct) > MAX_ADDRESSES:
        raise InviteError(f"the invite's addresses are not a list of at most {MAX_ADDRESSES}")
    addresses = tuple(_address(a, "address") for a in direct)
    via = None if relay is None else _address(relay, "relay")
    if not addresses and via is None:
        raise InviteError("the invite names neither an address nor a relay")
    if not isinstance(secret, bytes) or len(secret) not in (0, SECRET_SIZE):
        raise InviteError("the invite's room secret is not 16 bytes")
    return Invite(key, table, addresses, via, secret, kind)


def _address(value: object, what: str) -> Address:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not isinstance(value[0], str)
        or not 0 < len(value[0]) <= MAX_HOST
        or not value[0].isprintable()
        or type(value[1]) is not int
        or not 0 < value[1] < 65536
    ):
        raise InviteError(f"the invite has a {what} that is not a host and a port")
    return value[0], value[1]
