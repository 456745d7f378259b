"""Trust on first use for the people at a table: the known-peers file, as ssh's known_hosts.

A key is all that tells one player from another, and a fingerprint is only checked if someone
reads it aloud. So each peer remembers, in ``$XDG_CONFIG_HOME/moska-p2p/known_peers`` (mode
0600), the key every player name had at the tables of a given host (a host is known by its
key): the first game at Alice's table teaches that "bob" is ``5A1C-...``; if "bob" comes back
to Alice's table with another key, the joiner and the host refuse to play, loudly, and say how
to proceed (as ssh does when a host key changes). A name that several players share at one
table (bots all named ``random``) is not remembered: it names nobody in particular.

One line per (host, name)::

    HOST-KEY-HEX  NAME  KEY-HEX  # host FINGERPRINT, NAME FINGERPRINT

``NAME`` is percent-encoded (no spaces); lines starting with ``#`` and blank lines are
comments; a malformed line is ignored (and kept).

The file also keeps the table-level record of aborts before the deal (PROTOCOL.md section 9):
a peer that ended a table before any card was dealt (silent past the timeout, gone, or caught
signing two hellos) cannot be made to forfeit a game it has no seat in, and the last to reveal
its seat secret could abort whenever it disliked the seating. So every honest peer writes
one line per aborter::

    aborted  KEY-HEX  KIND  # FINGERPRINT: REASON

and a host refuses to seat a key its file names so (``moska host --allow-aborters`` seats it
anyway): an abort never buys a better seat at the next table of the same host. A peer that sent
no frame of the table at all (it refused the table for a stated reason, a changed key or
another version, or never came) saw no seating and is not recorded.

**A key change people can follow.** A player who makes a new key (``moska keygen --force``)
gets a *key change statement*, ``moska-newkey:...``: the old key's signature over the new key
(kind :data:`NEW_KEY`). Whoever has the old key in this file runs ``moska trust STATEMENT``:
the signature is checked against the old key, and every line that gave the player the old key
gives the new one (the name and the host kept). Without a statement (the old key is lost),
``moska trust NAME`` forgets the name's key, at every host or one (``--host FINGERPRINT``), and
the next table teaches the new one, as on first use. The refusal of a changed key says both.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

import msgpack

from .. import dirs
from ..crypto.identity import (
    PUBLIC_KEY_SIZE,
    SIGNATURE_SIZE,
    Identity,
    fingerprint_of,
    is_acceptable_public_key,
    verify,
    writable_by_others,
)
from ..errors import Error
from ..protocol.frames import printable

FILE_NAME = "known_peers"
ABORTED = "aborted"
NEW_KEY = "id/new-key"
"""Signature kind of a key change statement (the old key signs the new one)."""
STATEMENT = "moska-newkey:"


class KnownPeersError(Error):
    """The known-peers file cannot be used (unreadable, or others may write it)."""


def default_known_peers_path() -> Path:
    """``$XDG_CONFIG_HOME/moska-p2p/known_peers`` (``~/.config`` when unset or relative)."""
    return dirs.config_dir() / FILE_NAME


@dataclass(frozen=True)
class Change:
    """A known name that comes with another key."""

    path: Path
    line: int  # 1-based line of the file that holds the old key
    host: bytes
    name: str
    known: bytes
    now: tuple[bytes, ...]

    def message(self) -> str:
        """The loud refusal, with how to proceed."""
        shown = printable(self.name)
        new = ", ".join(fingerprint_of(k) for k in self.now)
        bar = "@" * 64
        return "\n".join(
            [
                bar,
                "@    WARNING: A KNOWN PLAYER'S KEY HAS CHANGED!" + " " * 17 + "@",
                bar,
                f"At the tables of the host {fingerprint_of(self.host)}, {shown!r} had the key",
                f"    {fingerprint_of(self.known)}",
                f"and now comes with {'the key' if len(self.now) == 1 else 'the keys'}",
                f"    {new}",
                f"Someone may be pretending to be {shown}, or {shown} has a new key file.",
                f"If {shown} made the new key with 'moska keygen --force', it printed a key change",
                "statement (moska-newkey:...) signed by the old key: accept it with",
                "    moska trust moska-newkey:...",
                f"Else ask {shown} to run 'moska keygen' and read out the fingerprint; if it is",
                f"the new one, forget the old key (line {self.line} of {self.path}) with",
                f"    moska trust {quote(self.name, safe='')}",
                "and try again. Refusing to play.",
            ]
        )


class StatementError(ValueError):
    """A key change statement that cannot be used (the message says why, in one line)."""


def key_change_statement(old: Identity, new: bytes) -> str:
    """The statement, signed by ``old``, that its owner's key is now ``new``."""
    body = msgpack.packb([1, old.public_bytes, new, old.sign(NEW_KEY, new)], use_bin_type=True)
    return STATEMENT + base64.b32encode(body).decode("ascii").rstrip("=").lower()


def parse_statement(text: str) -> tuple[bytes, bytes]:
    """The (old key, new key) of a key change statement whose signature checks;
    :class:`StatementError` otherwise."""
    compact = "".join(text.split()).lower()
    if not compact.startswith(STATEMENT):
        raise StatementError(f"a key change statement starts with {STATEMENT!r}")
    code = compact[len(STATEMENT) :]
    try:
        body = base64.b32decode(code.upper() + "=" * (-len(code) % 8))
        obj = msgpack.unpackb(body, raw=False)
    except (binascii.Error, ValueError, msgpack.UnpackException):
        raise StatementError("the statement cannot be read: copy it again, whole") from None
    if (
        not isinstance(obj, list)
        or len(obj) != 4
        or obj[0] != 1
        or not all(isinstance(x, bytes) for x in obj[1:])
        or len(obj[1]) != PUBLIC_KEY_SIZE
        or len(obj[2]) != PUBLIC_KEY_SIZE
        or len(obj[3]) != SIGNATURE_SIZE
    ):
        raise StatementError("the statement is not a key change statement of this moska")
    _, old, new, signature = obj
    if not is_acceptable_public_key(new) or not verify(old, NEW_KEY, new, signature):
        raise StatementError(
            f"the statement is not signed by the key it names ({fingerprint_of(old)}): refused"
        )
    return old, new


def _check_mode(path: Path) -> None:
    mode = writable_by_others(path)
    if mode is not None:
        raise KnownPeersError(
            f"{path} is writable by others (mode {mode:04o}), who could make you trust their"
            f" keys: chmod 600 {path}"
        )


class KnownPeers:
    """The known-peers file in memory: check a table's players, remember them."""

    def __init__(self, path: Path, lines: list[str] | None = None) -> None:
        self.path = path
        self._read(lines or [])

    def _read(self, lines: list[str]) -> None:
        self.lines: list[str] = lines
        self.records: dict[tuple[bytes, str], tuple[bytes, int]] = {}
        self.aborters: dict[bytes, str] = {}  # key -> the verdict's kind
        for number, line in enumerate(self.lines, 1):
            abort = self._parse_abort(line)
            if abort is not None:
                self.aborters.setdefault(*abort)
                continue
            record = self._parse(line)
            if record is not None:
                host, name, key = record
                self.records.setdefault((host, name), (key, number))

    @staticmethod
    def _parse(line: str) -> tuple[bytes, str, bytes] | None:
        parts = line.split("#", 1)[0].split()
        if len(parts) != 3:
            return None
        try:
            host, key = bytes.fromhex(parts[0]), bytes.fromhex(parts[2])
        except ValueError:
            return None
        if len(host) != PUBLIC_KEY_SIZE or len(key) != PUBLIC_KEY_SIZE:
            return None
        return host, unquote(parts[1]), key

    @staticmethod
    def _parse_abort(line: str) -> tuple[bytes, str] | None:
        parts = line.split("#", 1)[0].split()
        if len(parts) != 3 or parts[0] != ABORTED:
            return None
        try:
            key = bytes.fromhex(parts[1])
        except ValueError:
            return None
        return (key, parts[2]) if len(key) == PUBLIC_KEY_SIZE else None

    @classmethod
    def load(cls, path: Path) -> KnownPeers:
        """Read ``path`` (none yet: nothing known); :class:`KnownPeersError` if it cannot be
        read or others may write it."""
        _check_mode(path)
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return cls(path)
        except OSError as error:
            raise KnownPeersError(f"cannot read {path}: {error}") from None
        return cls(path, text.splitlines())

    def known(self, host: bytes, name: str) -> bytes | None:
        record = self.records.get((host, name))
        return record[0] if record else None

    def check(self, host: bytes, players: Iterable[tuple[str, bytes]]) -> list[Change]:
        """The known names of ``players`` (name, key) at ``host``'s tables that none of the
        players of that name has the remembered key of."""
        by_name: dict[str, list[bytes]] = {}
        for name, key in players:
            by_name.setdefault(name, []).append(key)
        changes = []
        for name, keys in by_name.items():
            record = self.records.get((host, name))
            if record is not None and record[0] not in keys:
                changes.append(Change(self.path, record[1], host, name, record[0], tuple(keys)))
        return changes

    def remember(self, host: bytes, players: Sequence[tuple[str, bytes]]) -> int:
        """Add the players whose name is theirs alone at this table and not yet known; write
        the file (0600, atomically) if anything is new. Returns how many were added."""
        counts: dict[str, int] = {}
        for name, _ in players:
            counts[name] = counts.get(name, 0) + 1
        added = 0
        for name, key in players:
            if counts[name] != 1 or not name or (host, name) in self.records:
                continue
            self.lines.append(self._line(host, name, key))
            self.records[(host, name)] = (key, len(self.lines))
            added += 1
        if added:
            self._write()
        return added

    def remember_abort(self, key: bytes, kind: str, reason: str) -> bool:
        """Record that ``key`` ended a table before the deal (verdict ``kind``); write the
        file if it is new. Whether it was."""
        if key in self.aborters:
            return False
        why = printable(reason)[:120]
        self.lines.append(f"{ABORTED} {key.hex()} {kind}  # {fingerprint_of(key)}: {why}")
        self.aborters[key] = kind
        self._write()
        return True

    def refusal_of_aborter(self, key: bytes) -> str:
        """Why a host does not seat ``key`` ("" if nothing is held against it)."""
        kind = self.aborters.get(key)
        if kind is None:
            return ""
        return (
            f"this host's record says the key {fingerprint_of(key)} ended one of its tables"
            f" before the deal ({kind}); the host may seat it with --allow-aborters"
        )

    def replace_key(self, old: bytes, new: bytes) -> list[str]:
        """Give every name that had ``old`` the key ``new``, and the tables ``old`` hosted
        to ``new`` (a key change statement was checked); the names it did so for, the file
        written if anything changed."""
        changed = []
        for (host, name), (key, number) in list(self.records.items()):
            if old not in (key, host):
                continue
            at = new if host == old else host  # the player hosts tables too
            self.lines[number - 1] = self._line(at, name, new if key == old else key)
            if key == old:
                changed.append(name)
        if changed or any(host == old for host, _ in self.records):
            self._read(self.lines)
            self._write()
        return changed

    def forget(self, name: str, host: bytes | None = None) -> int:
        """Forget ``name``'s key (at ``host``'s tables only, if given): the next table
        teaches its new one. How many lines went; the file written if any."""
        gone = {
            number
            for (at, known), (_, number) in self.records.items()
            if known == name and (host is None or at == host)
        }
        if gone:
            kept = [line for n, line in enumerate(self.lines, 1) if n not in gone]
            self._read(kept)  # every line's number anew
            self._write()
        return len(gone)

    def hosts_of(self, name: str) -> list[bytes]:
        return [host for (host, known) in self.records if known == name]

    @staticmethod
    def _line(host: bytes, name: str, key: bytes) -> str:
        return (
            f"{host.hex()} {quote(name, safe='')} {key.hex()}"
            f"  # host {fingerprint_of(host)}, {fingerprint_of(key)}"
        )

    def _write(self) -> None:
        """Write the file (0600, atomically), a header line first."""
        from .persist import write_private

        _check_mode(self.path)
        if not self.path.parent.exists():
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not self.lines[0].startswith("#"):
            self.lines[:0] = ["# moska-p2p known peers"]
            self.records = {k: (key, line + 1) for k, (key, line) in self.records.items()}
        write_private(self.path, ("\n".join(self.lines) + "\n").encode("utf-8"))
