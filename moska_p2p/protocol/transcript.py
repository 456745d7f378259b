"""Transcripts: every signed frame a peer processed, in order, in one file per game and peer.

File layout: a header frame (4-byte big-endian length, then the msgpack map
``{"moska-transcript": 1, "owner": public key, "config": table settings, "roster": [keys]}``)
followed by the frames exactly as they crossed the wire. The header is not signed; it is
checked by the owner's signed ``result`` message, which carries the hash of every frame the
owner processed before it, in this order. :func:`verify_transcript` replays the file with an
observer session: every signature, every shuffle proof, every key, every move, every
disclosure. No secret is needed: protocol v2 proves each step when it happens.

A transcript that ends with the owner's signed ``verdict`` is the authentic record of a game
that stopped (a cheat caught, a peer that went silent or left): it verifies when the observer
reaches the same verdict itself, or (for silence, which a file cannot show) when the owner's
verdict names exactly the peers the game was waiting for at that point. The culprits forfeit.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack

from ..crypto.identity import fingerprint_of, verify
from . import messages as m
from . import verdict as v
from .config import ConfigError, TableConfig
from .frames import MAX_FRAME, FrameError, open_frame, pack, unpack
from .session import DONE, PeerSession, transcript_digest

MAGIC = "moska-transcript"


class TranscriptError(ValueError):
    """A file that cannot be read as a transcript."""


class NotATranscript(TranscriptError):
    """A file that does not begin with a transcript's header: not a moska transcript at all."""


class CutTranscript(TranscriptError):
    """A transcript whose last record is cut short: its writer stopped in the middle of a
    write (a crash, a full disk, a copy cut short). ``frames``: the whole frames before it."""

    def __init__(self, message: str, frames: int) -> None:
        super().__init__(message)
        self.frames = frames


VALID, INVALID, INCOMPLETE, NOT_A_TRANSCRIPT = "valid", "invalid", "incomplete", "not-a-transcript"
"""What ``verify`` finds a file to be (:attr:`Report.status`): a record that checks; one
with a fault a writer's crash cannot make (a forgery, a cheat's frame, a bug); an honest
prefix that stops before the game's end (a crash or a cut: every frame in it checks); and a
file that is no transcript at all."""


def write_transcript(
    path: Path, owner: bytes, config: TableConfig, roster: Sequence[bytes], frames: Sequence[bytes]
) -> None:
    header = pack({MAGIC: 1, "owner": owner, "config": config.to_wire(), "roster": sorted(roster)})
    with open(path, "wb") as out:
        out.write(struct.pack(">I", len(header)) + header)
        for frame in frames:
            out.write(frame)


def read_transcript(
    path: Path, *, cut_off: bool = False
) -> tuple[bytes, TableConfig, list[bytes], list[bytes]]:
    """(owner, config, roster, frames) of a transcript file; ``cut_off``: a last record cut
    short (:class:`CutTranscript`) is left out rather than refused.

    :class:`NotATranscript` for a file that does not begin with a transcript's mark (the
    header's first key), :class:`CutTranscript` for one whose last record stops inside its
    frame (the writer stopped mid-write), :class:`TranscriptError` for any other damage."""
    data = path.read_bytes()
    if MAGIC.encode() not in data[:64]:
        raise NotATranscript("not a moska transcript (it does not begin with a header)")
    records: list[bytes] = []
    at = 0
    while at < len(data):
        cut = at + 4 > len(data)
        if not cut:
            (length,) = struct.unpack(">I", data[at : at + 4])
            end = at + 4 + length
            if length > MAX_FRAME or end > len(data):
                cut = records != [] and _stops_inside_a_frame(data[at + 4 :])
                if not cut:
                    raise TranscriptError(f"a record at byte {at} runs past the end of the file")
        if cut and cut_off:
            break
        if cut:
            raise CutTranscript(f"the last record, at byte {at}, is cut short", len(records) - 1)
        records.append(data[at:end])
        at = end
    if not records:
        raise TranscriptError("an empty file")
    try:
        header = unpack(records[0][4:])
    except FrameError as error:
        raise TranscriptError(f"bad header: {error}") from None
    if not isinstance(header, dict) or header.get(MAGIC) != 1:
        raise TranscriptError("not a moska-p2p transcript (no header)")
    owner, roster = header.get("owner"), header.get("roster")
    if not isinstance(owner, bytes) or not isinstance(roster, list):
        raise TranscriptError("bad header fields")
    if not all(isinstance(k, bytes) for k in roster):
        raise TranscriptError("bad roster in the header")
    try:
        config = TableConfig.from_wire(header.get("config") or {})
    except ConfigError as error:
        raise TranscriptError(f"bad table settings in the header: {error}") from None
    return owner, config, list(roster), records[1:]


def _stops_inside_a_frame(rest: bytes) -> bool:
    """Whether ``rest``, what follows a record's length to the end of the file, is the
    beginning of a frame that stops (a frame is one msgpack array: a write cut short leaves
    it unfinished), not a whole frame behind a damaged length."""
    reader = msgpack.Unpacker(max_buffer_size=MAX_FRAME)
    reader.feed(rest[:MAX_FRAME])  # a whole frame is no longer
    try:
        reader.unpack()
    except msgpack.OutOfData:
        return True
    except (ValueError, msgpack.UnpackException):
        return False
    return False


def stopped_words(frames: int) -> str:
    """Where an incomplete transcript's writer stopped, ``frames`` whole frames in."""
    where = f"after frame {frames - 1}" if frames > 0 else "after its header"
    return f"incomplete: the writer stopped {where} (a crash or a cut)"


@dataclass
class Report:
    valid: bool
    game_id: str | None
    final_state_hash: str | None
    losers: list[int]
    fault: str | None
    frames: int
    moves: int
    owner: str
    verdict: str | None = None
    # What a session's chain of games is checked with (.tally): the header's settings and
    # players, the owner's key, the seats and dealer the game had, and its loser (the seat
    # that deals the next game, M24; a team's last seat holding cards in durak-teams).
    config: TableConfig | None = None
    roster: tuple[bytes, ...] = ()
    owner_key: bytes = b""
    seats: tuple[bytes, ...] = ()
    dealer: int = -1
    loser: int | None = None
    names: tuple[str, ...] = ()  # the seats' names, as their hellos gave them
    verdict_kind: str | None = None  # a stopped game: the observer's verdict's kind
    culprits: tuple[bytes, ...] = ()  # and the public keys it names
    conviction: bool = False  # whether it convicts them (False: its owner lost contact)
    relayed: tuple[bytes, ...] = ()  # the owner's verdict: peers it reached through a relay
    incomplete: bool = False  # an honest prefix: every frame checks, the writer stopped early
    not_transcript: bool = False  # no transcript at all

    @property
    def status(self) -> str:
        """:data:`VALID`, :data:`INVALID`, :data:`INCOMPLETE` or :data:`NOT_A_TRANSCRIPT`."""
        if self.valid:
            return VALID
        if self.not_transcript:
            return NOT_A_TRANSCRIPT
        return INCOMPLETE if self.incomplete else INVALID

    @property
    def relayed_seats(self) -> list[int]:
        """The seats the owner's verdict says it reached through a relay when it stopped
        (§7.11): for those, its record of silence cannot tell the peer from the relay."""
        where = {key: seat for seat, key in enumerate(self.seats)}
        return sorted(where.get(k, -1) for k in self.relayed)

    @property
    def lost_contact(self) -> list[int]:
        """The seats a stopped game's owner lost contact with: named, never losers."""
        if self.verdict is None or self.conviction:
            return []
        where = {key: seat for seat, key in enumerate(self.seats)}
        return sorted(where.get(k, -1) for k in self.culprits)

    def to_json(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "game_id": self.game_id,
            "final_state_hash": self.final_state_hash,
            "losers": self.losers,
            "fault": self.fault,
            "frames": self.frames,
            "moves": self.moves,
            "owner": self.owner,
            "verdict": self.verdict,
            "relayed": self.relayed_seats,
        }


def verify_transcript(path: Path) -> Report:
    """Replay a transcript strictly in file order; the first fault makes it invalid."""
    try:
        owner, config, roster, frames = read_transcript(path)
        observer = PeerSession(None, config, roster)
    except NotATranscript as error:
        return Report(False, None, None, [], str(error), 0, 0, "", not_transcript=True)
    except CutTranscript as error:
        # the whole frames before the cut are checked as any file's (a fault among them
        # is the fault); nothing after the cut is there to check
        report = verify_frames(*read_transcript(path, cut_off=True))
        if report.fault is None:  # the whole frames check: the cut is all that is wrong
            report.valid, report.fault, report.incomplete = False, stopped_words(error.frames), True
        return report
    except (TranscriptError, ValueError) as error:
        return Report(False, None, None, [], str(error), 0, 0, "")
    return verify_frames(owner, config, roster, frames, observer)


def verify_frames(
    owner: bytes,
    config: TableConfig,
    roster: list[bytes],
    frames: list[bytes],
    observer: PeerSession | None = None,
) -> Report:
    """Replay a transcript's frames (see :func:`verify_transcript`)."""
    if observer is None:
        try:
            observer = PeerSession(None, config, roster)
        except ValueError as error:
            return Report(False, None, None, [], str(error), 0, 0, "")
    fault: str | None = None
    owner_result_at = -1
    stopped: v.Verdict | None = None
    stopped_at = -1
    for index, frame in enumerate(frames):
        if stopped is not None:
            # The observer stopped the game at ``stopped_at`` itself: the file is the record
            # of a stopped game only if the owner's verdict, naming the same culprits, ends it.
            problem = _check_owner_verdict(frame, owner, stopped, last=index == len(frames) - 1)
            if problem:
                fault = f"frame {stopped_at}: {stopped.describe()} ({problem})"
            break
        if observer.stage == DONE and _take_trailing_wait(observer, frame):
            continue  # applied by the owner with the last results, before it was done
        before = len(observer.transcript)
        observer.owner_word = _owner_word(frames, index, owner)
        try:
            outputs = observer.receive(frame)
        except ValueError as error:  # a LocalError: a bug, never the file's fault alone
            fault = f"frame {index}: the verifier failed: {error}"
            break
        for out in outputs:
            if isinstance(out, v.Rejected):
                fault = f"frame {index}: {out.reason}"
            elif isinstance(out, v.Stopped):
                stopped, stopped_at = out.verdict, index
        if fault:
            break
        if stopped is not None:
            if _is_owner_verdict(frame, owner):
                break  # the owner's own verdict, adopted by the observer: the last frame
            continue
        if len(observer.transcript) != before + 1:
            fault = f"frame {index} is out of order (it cannot apply at this point)"
            break
        _, payload, _ = open_frame(frame[4:])
        msg = m.parse_payload(payload)
        if msg.sender == owner and msg.type == m.RESULT:
            owner_result_at = index
            if msg.body_as(m.ResultBody).transcript != transcript_digest(frames[:index]):
                fault = f"frame {index}: the owner's result does not sign the frames before it"
                break
    place: dict[str, Any] = {
        "config": config,
        "roster": tuple(roster),
        "owner_key": owner,
        "seats": tuple(observer.seats),
        "dealer": observer.dealer,
        "loser": observer.game.loser if observer.game is not None else None,
        "names": tuple(observer.peers[k].name for k in observer.seats),
    }
    if stopped is not None:
        # The owner's own signed leave ends its record of the game too (it forfeits); so
        # does a verdict of silence naming the owner that it took (it was suspended), or the
        # others' proof that it abandoned the game (every other seat's statement, §15.3 step
        # 3): a culprit signs no verdict against itself (§15.2).
        owner_left = stopped.kind == v.LEFT and stopped.keys == (owner,)
        owner_named = stopped.kind in (v.TIMEOUT, v.ABANDONED) and owner in stopped.keys
        cut = (
            fault is None
            and stopped_at == len(frames) - 1
            and not _is_owner_verdict(frames[-1], owner)
            and not owner_left
            and not owner_named
        )
        if cut:  # the writer stopped before it could sign its verdict
            fault = (
                f"{stopped_words(len(frames))}: frame {stopped_at}: {stopped.describe()} (the"
                " owner's verdict is missing)"
            )
        return Report(
            fault is None,
            observer.game_id.hex() if observer.game_id else None,
            None,
            list(observer.losers),
            fault,
            len(frames),
            len(observer.moves),
            fingerprint_of(owner),
            stopped.describe(),
            verdict_kind=stopped.kind,
            culprits=stopped.keys,
            conviction=stopped.conviction,
            relayed=_owner_relayed(frames, owner),
            incomplete=cut,
            **place,
        )
    incomplete = False
    if fault is None and observer.stage != DONE:
        waiting = ", ".join(fingerprint_of(k) for k in observer.waiting_on())
        fault = (
            f"{stopped_words(len(frames))}: the transcript ends before the game does (waiting"
            f" for {waiting or 'nobody'})"
        )
        incomplete = True
    if fault is None and owner_result_at < 0:
        fault = "the owner's signed result is missing"
    if fault is None and owner_result_at != len(frames) - 1 and owner_result_at >= 0:
        # frames after the owner's result are the other peers' results only, and the waits
        # of peers that waited for them (the owner's own among them)
        for frame in frames[owner_result_at + 1 :]:
            _, payload, _ = open_frame(frame[4:])
            if m.parse_payload(payload).type not in (m.RESULT, m.WAIT):
                fault = "a frame after the owner's result is not a result (or a wait)"
                break
    gid = observer.game_id.hex() if observer.game_id else None
    return Report(
        fault is None,
        gid,
        observer.final_hash or None,
        list(observer.losers),
        fault,
        len(frames),
        len(observer.moves),
        fingerprint_of(owner),
        incomplete=incomplete,
        **place,
    )


def _owner_word(frames: Sequence[bytes], index: int, owner: bytes) -> bool | None:
    """What the owner did with another peer's verdict of silence at ``index``, as its file
    shows it: took it (it is the file's last frame and names the owner, which conceded it
    was not running; or the owner's own next verdict names the same culprits), refused it
    (the owner's next verdict names its sender), or None (not such a verdict: the rules
    decide)."""
    try:
        _, payload, _ = open_frame(frames[index][4:])
        msg = m.parse_payload(payload)
    except FrameError:
        return None
    if not isinstance(msg.body, m.VerdictBody) or msg.sender == owner:
        return None
    if msg.body.kind != v.TIMEOUT:
        return None
    culprits = msg.body.culprits
    if index == len(frames) - 1:
        return True if owner in culprits else None
    if not _is_owner_verdict(frames[index + 1], owner):
        return None
    _, payload, _ = open_frame(frames[index + 1][4:])
    answer = m.parse_payload(payload).body_as(m.VerdictBody).culprits
    if answer == culprits:
        return True
    return False if answer == (msg.sender,) else None


def _owner_relayed(frames: Sequence[bytes], owner: bytes) -> tuple[bytes, ...]:
    """The ``relayed`` of the owner's verdict, the file's last frame (empty: none, or a
    verdict signed before the field existed)."""
    if not frames or not _is_owner_verdict(frames[-1], owner):
        return ()
    _, payload, _ = open_frame(frames[-1][4:])
    return m.parse_payload(payload).body_as(m.VerdictBody).relayed or ()


def _take_trailing_wait(observer: PeerSession, frame: bytes) -> bool:
    """Take ``frame`` if it is a ``wait`` of the observer's game, signed by its sender, next
    in that sender's order (whether it was): what a peer applies when it comes with the last
    results, just before the game is done (a peer waiting for them says so, §7.10a), while an
    observer replaying the file, done already, applies nothing more. A wait changes nothing."""
    try:
        kind, payload, signature = open_frame(frame[4:])
        msg = m.parse_payload(payload)
    except FrameError:
        return False
    peer = observer.peers.get(msg.sender)
    if not (
        msg.type == m.WAIT == kind
        and peer is not None
        and msg.game == observer.game_id
        and msg.seq == peer.next_seq
        and msg.prev == peer.last_hash
        and verify(msg.sender, kind, payload, signature)
    ):
        return False
    peer.accept(msg, frame)  # the sender's next one chains on it
    return True


def _is_owner_verdict(frame: bytes, owner: bytes) -> bool:
    try:
        _, payload, _ = open_frame(frame[4:])
        msg = m.parse_payload(payload)
    except FrameError:
        return False
    return msg.sender == owner and msg.type == m.VERDICT


def _check_owner_verdict(
    frame: bytes, owner: bytes, stopped: v.Verdict, *, last: bool
) -> str | None:
    """What is wrong with ``frame`` as the owner's verdict on a game the observer stopped
    itself (``None``: it is that verdict, signed by the owner, naming the same culprits, and
    the file's last frame)."""
    if not last:
        return "frames go on after the game stopped"
    if not _is_owner_verdict(frame, owner):
        return "the last frame is not the owner's verdict"
    kind, payload, signature = open_frame(frame[4:])
    if not verify(owner, kind, payload, signature):
        return "the owner's verdict has a forged signature"
    culprits = m.parse_payload(payload).body_as(m.VerdictBody).culprits
    if culprits != stopped.keys:
        return "the owner's verdict names other culprits"
    return None
