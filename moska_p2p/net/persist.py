"""What a peer keeps on disk so that a crash costs it nothing but the time to restart.

Two files per game, side by side:

``GAME.moska``         the transcript (``protocol/transcript.py`` format): the header when the
                       game starts, then every frame the session processes, appended *before*
                       any frame goes out on the wire. That order matters: a restarted peer
                       rebuilds its session from this file, and if it had sent a message that
                       the file lacks, it could sign a different message with the same sequence
                       number, which the others would rightly call equivocation.
``GAME.moska.resume``  the per-game secret that every random choice of the session derives from
                       (``drbg``), the table settings, the roster with addresses, this peer's
                       index and name, how it reached the host, and how it reached the table
                       (:class:`Route`: whether it listened, the relay and the room it was
                       registered in). Mode 0600 from its creation: the secret decides this
                       peer's hidden cards until the audit.

Running the same ``moska host``/``moska join`` command again finds the ``.resume`` file,
rebuilds the session with :meth:`PeerSession.resume` and rejoins the mesh the way it had
(its port, or the relay only). The file is removed when the game ends (finished, stopped or
left), except a game of a session that finished with a next game to come: that one stays
until the next game starts or the session ends, so a peer that crashes between two games
comes back to the vote on the next one. A file older than twice the table's timeout belongs to
a game the others have already abandoned.

The route's fields came later than the file: a file without them is a peer that listened and
had no relay, which is what every such file was.
"""

from __future__ import annotations

import contextlib
import os
import struct
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from glob import escape as glob_escape
from pathlib import Path

from .. import dirs
from ..crypto.identity import fingerprint_of
from ..errors import Error
from ..protocol.config import ConfigError, TableConfig
from ..protocol.frames import MAX_FRAME, FrameError, pack, unpack
from ..protocol.transcript import MAGIC, write_transcript
from .wire import Entry

RESUME_SUFFIX = ".resume"
STATE_VERSION = 1


class SaveError(Error, ValueError):
    """A saved game that cannot be read back."""


def data_dir() -> Path:
    """Where transcripts go unless ``--transcript`` says otherwise (XDG data directory)."""
    return dirs.data_dir() / "games"


def default_transcript(public_key: bytes) -> Path:
    """A new transcript path for this identity: time-stamped, named by its fingerprint."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return data_dir() / f"{stamp}-{fingerprint_of(public_key)}.moska"


def resume_path(transcript: Path) -> Path:
    return transcript.with_name(transcript.name + RESUME_SUFFIX)


def find_saved(transcript: Path | None, public_key: bytes) -> Path | None:
    """The ``.resume`` file a re-run of the command should pick up: next to ``transcript``
    when one was named, else this identity's newest one in :func:`data_dir`."""
    if transcript is not None:
        # a single game's, or the newest of a session's games (NAME-gN.moska beside it)
        path = resume_path(transcript)
        found = [path] if path.is_file() else []
        found += transcript.parent.glob(
            f"{glob_escape(transcript.stem)}-g*{glob_escape(transcript.suffix)}{RESUME_SUFFIX}"
        )
        return _newest(found)
    folder = data_dir()
    if not folder.is_dir():
        return None
    mine = fingerprint_of(public_key)
    return _newest(
        [
            *folder.glob(f"*-{mine}.moska{RESUME_SUFFIX}"),
            *folder.glob(f"*-{mine}-g*.moska{RESUME_SUFFIX}"),
        ]
    )


def _newest(paths: Iterable[Path]) -> Path | None:
    found = sorted((p for p in paths if p.is_file()), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


@dataclass(frozen=True)
class Route:
    """How a peer reached its table, so that a restart reaches it the same way: a peer that
    did not listen (``--no-listen``) must not try to, and must register at the same relay in
    the same room (the first game's: a session's later games keep the room of the lobby)."""

    listen: bool = True
    relay: tuple[str, int] | None = None  # the relay this peer dialed
    room: bytes | None = None  # its room there
    relay_port: int | None = None  # the host ran the relay for the others on this port

    def to_wire(self) -> dict[str, object]:
        return {
            "listen": self.listen,
            "relay": list(self.relay) if self.relay else None,
            "room": self.room,
            "relay_port": self.relay_port,
        }

    @classmethod
    def from_wire(cls, data: dict[str, object]) -> Route:
        """The route in a saved game's fields (absent fields: a peer that listened)."""
        listen = data.get("listen", True)
        relay, room, port = data.get("relay"), data.get("room"), data.get("relay_port")
        if not isinstance(listen, bool):
            raise SaveError("bad listen flag")
        if room is not None and not (isinstance(room, bytes) and 0 < len(room) <= 64):
            raise SaveError("bad relay room")
        if port is not None and not (type(port) is int and 0 < port < 65536):
            raise SaveError("bad relay port")
        return cls(listen, _address(relay), room, port)


def _address(value: object) -> tuple[str, int] | None:
    """A saved ``[host, port]`` (or None)."""
    if value is None:
        return None
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise SaveError("bad address")
    host, port = value
    if not isinstance(host, str) or type(port) is not int or not 0 <= port < 65536:
        raise SaveError("bad address")
    return host, port


@dataclass(frozen=True)
class SavedGame:
    """Everything a restarted peer needs besides its identity and its transcript."""

    transcript: Path
    secret: bytes
    config: TableConfig
    roster: tuple[Entry, ...]
    me: int
    name: str
    host_address: tuple[str, int] | None  # how a joiner reached the host; None on the host
    route: Route = Route()  # how this peer reached the table (set by the node, see Route)

    @property
    def state_path(self) -> Path:
        return resume_path(self.transcript)

    def age(self, now: float | None = None) -> float:
        """Seconds since this peer last wrote anything about the game."""
        stamps = [p.stat().st_mtime for p in (self.transcript, self.state_path) if p.exists()]
        return (time.time() if now is None else now) - max(stamps, default=0.0)

    def fresh(self) -> bool:
        """Whether the others may still be waiting: a seat out of contact has the table's
        grace to come back, and the others then take up to a timeout more to sign that it
        left (PROTOCOL.md §15.1); a table whose grace is short still waits its move clock."""
        config = self.config
        return self.age() <= max(2 * config.timeout, config.grace + config.timeout)

    def save(self) -> None:
        data = pack(
            {
                "moska-resume": STATE_VERSION,
                "transcript": str(self.transcript),
                "secret": self.secret,
                "config": self.config.to_wire(),
                "roster": [e.to_wire() for e in self.roster],
                "me": self.me,
                "name": self.name,
                "host_address": list(self.host_address) if self.host_address else None,
                **self.route.to_wire(),
            }
        )
        write_private(self.state_path, data)

    def discard(self) -> None:
        """Nothing is left to resume; the game's secret stays beside the transcript
        (:func:`keep_secret`), for its owner's replay alone."""
        keep_secret(self.transcript, self.secret)
        with contextlib.suppress(FileNotFoundError):
            self.state_path.unlink()

    def set_aside(self) -> Path:
        """Rename a stale ``.resume`` file out of the way (kept, in case it matters)."""
        target = self.state_path.with_name(self.state_path.name + ".stale")
        os.replace(self.state_path, target)
        return target


SECRET_SUFFIX = ".secret"
SECRET_VERSION = 1


def secret_path(transcript: Path) -> Path:
    return transcript.with_name(transcript.name + SECRET_SUFFIX)


def keep_secret(transcript: Path, secret: bytes) -> None:
    """Keep a game's per-game secret beside its transcript once nothing is left to resume
    (``GAME.moska.secret``, mode 0600): every one of this peer's keys derives from it, so its
    own ``moska replay`` opens the cards it was dealt, which the transcript, made for anyone
    to check, never opens. It gives nothing to sign with (that is the identity's key)."""
    with contextlib.suppress(OSError):  # a replay without the owner's cards, no worse
        write_private(secret_path(transcript), pack({"moska-secret": SECRET_VERSION,
                                                     "secret": secret}))  # fmt: skip


def load_secret(path: Path) -> bytes:
    """The per-game secret of a ``.secret`` (:func:`keep_secret`) or a ``.resume`` file."""
    if path.name.endswith(RESUME_SUFFIX):
        return load_saved(path).secret
    try:
        data = unpack(path.read_bytes())
    except (OSError, FrameError) as error:
        raise SaveError(f"{path}: {error}") from None
    if not isinstance(data, dict) or data.get("moska-secret") != SECRET_VERSION:
        raise SaveError(f"{path}: not a game's secret")
    secret = data.get("secret")
    if not isinstance(secret, bytes) or len(secret) != 32:
        raise SaveError(f"{path}: not a game's secret")
    return secret


def load_saved(path: Path) -> SavedGame:
    """Read a ``.resume`` file; :class:`SaveError` for anything unreadable."""
    try:
        data = unpack(path.read_bytes())
    except (OSError, FrameError) as error:
        raise SaveError(f"{path}: {error}") from None
    try:
        if not isinstance(data, dict) or data.get("moska-resume") != STATE_VERSION:
            raise SaveError("not a saved game")
        secret, me, name = data["secret"], data["me"], data["name"]
        if not isinstance(secret, bytes) or len(secret) != 32:
            raise SaveError("bad secret")
        if not isinstance(me, int) or not isinstance(name, str):
            raise SaveError("bad seat or name")
        config = TableConfig.from_wire(data["config"])
        roster = tuple(Entry.from_wire(e) for e in data["roster"])
        if not 0 <= me < len(roster) or len(roster) != config.players:
            raise SaveError("the roster does not match the table")
        address = data["host_address"]
        host_address = None
        if address is not None:
            host, port = address
            host_address = (str(host), int(port))
        route = Route.from_wire(data)
        transcript = path.with_name(path.name.removesuffix(RESUME_SUFFIX))
    except (KeyError, TypeError, ValueError, ConfigError, FrameError) as error:
        if isinstance(error, SaveError):
            raise SaveError(f"{path}: {error}") from None
        raise SaveError(f"{path}: {type(error).__name__}: {error}") from None
    return SavedGame(transcript, secret, config, roster, me, name, host_address, route)


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, readable by its owner only (0600 from the
    first byte: the file is created with that mode, then renamed over the old one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            if hasattr(os, "fchmod"):
                os.fchmod(handle.fileno(), 0o600)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


class TranscriptFile:
    """A transcript that grows with the game: the header and the frames so far are written
    at once (atomically, replacing any older file), then :meth:`append` adds frames.

    Appends go straight to the file descriptor (no user-space buffer), so a peer killed with
    SIGKILL loses nothing it has appended: the kernel holds it. A machine that loses power
    loses what the kernel held, so :meth:`sync` puts it on the disk, and the node calls it
    before a frame of its own goes out: a frame on the wire is always in the file.
    """

    def __init__(
        self,
        path: Path,
        owner: bytes,
        config: TableConfig,
        roster: Sequence[bytes],
        frames: Sequence[bytes] = (),
    ) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        write_transcript(temporary, owner, config, roster, frames)
        os.replace(temporary, path)
        self.written = len(frames)
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND)
        self._unsynced = True  # the header and the frames so far: on disk before any send

    def append(self, frames: Sequence[bytes]) -> None:
        if self._fd is None or not frames:
            return
        data = memoryview(b"".join(frames))
        while data:
            done = os.write(self._fd, data)
            data = data[done:]
        self.written += len(frames)
        self._unsynced = True

    def sync(self) -> None:
        """Put what was appended on the disk (``fsync``); only when something was."""
        if self._fd is not None and self._unsynced:
            os.fsync(self._fd)
            self._unsynced = False

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def read_frames(path: Path, owner: bytes) -> list[bytes]:
    """The frames of a transcript this peer was writing when it stopped.

    Unlike :func:`~moska_p2p.protocol.transcript.read_transcript` it forgives a last record cut
    short (the peer died during a write): those bytes were never sent, so dropping them is safe.
    """
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SaveError(f"cannot read the transcript: {error}") from None
    records: list[bytes] = []
    at = 0
    while at + 4 <= len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        end = at + 4 + length
        if length > MAX_FRAME or end > len(data):
            break
        records.append(data[at:end])
        at = end
    if not records:
        raise SaveError(f"{path} holds no transcript header")
    try:
        header = unpack(records[0][4:])
    except FrameError as error:
        raise SaveError(f"{path}: bad header: {error}") from None
    if not isinstance(header, dict) or header.get(MAGIC) != 1 or header.get("owner") != owner:
        raise SaveError(f"{path} is not this identity's transcript")
    return records[1:]
