"""A session of games at one table (RULES M24): the tally, the signed session result, and the
check of a session from its transcripts alone. Sans-IO: no socket, no clock, no file but
what the caller names.

* :class:`Tally` counts a session as it goes: losses per seat, forfeits, and the runs of
  losses in a row (two: *korokkeella*, on the pedestal; three: *poronmuna*, a reindeer's egg),
  and who deals next (the loser, M24; the same dealer after a draw).
* At the end every peer signs a **session result** (frame kind ``session-result``, see
  PROTOCOL.md §22): the session id, the seats, every game counted (number, game id, final
  state hash, losers, whether it was a forfeit, its dealer), the hash of each of the signer's
  own transcript files, and who left between games. Every peer signs the same facts; only
  the transcript hashes are the signer's own.
* :func:`check_session` takes the :class:`~.transcript.Report` of every transcript of one
  session (one peer's, or several peers') and the signed results, and checks the chain of
  games (same players, game numbers 1, 2, ... in order, each game's settings naming the
  previous game's id, its seats and its loser as dealer), that every peer's transcripts of a
  game agree, and that every result is signed, agrees with the others and with the files.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..crypto.identity import Identity, fingerprint_of, verify
from .config import session_id
from .frames import (
    MAX_FRAME,
    SESSION_RESULT,
    Field,
    FrameError,
    Spec,
    check_fields,
    open_frame,
    pack,
    printable,
    require,
    signed_frame,
    unpack,
)
from .transcript import Report

SESSION_MAGIC = "moska-session"
MAX_REASON = 200


class TallyError(ValueError):
    """A session result or session file that cannot be read, or does not verify."""


@dataclass(frozen=True)
class GameRecord:
    """One counted game of a session, as every peer saw it."""

    number: int
    game_id: bytes
    final_state: bytes  # the final state hash; empty for a game stopped by a verdict
    losers: tuple[int, ...]  # seats; for a forfeit, the culprits
    forfeit: bool
    dealer: int

    def to_wire(self) -> list[object]:
        return [
            self.number,
            self.game_id,
            self.final_state,
            list(self.losers),
            self.forfeit,
            self.dealer,
        ]

    @classmethod
    def from_wire(cls, item: object) -> GameRecord:
        if not isinstance(item, list) or len(item) != 6:
            raise TallyError("a game of a session result is [number, id, state, losers, ...]")
        number, gid, state, losers, forfeit, dealer = item
        if type(number) is not int or type(dealer) is not int or type(forfeit) is not bool:
            raise TallyError("a game's number and dealer must be integers, forfeit a bool")
        if not isinstance(gid, bytes) or len(gid) != 32 or not isinstance(state, bytes):
            raise TallyError("a game's id must be 32 bytes and its state bytes")
        if not isinstance(losers, list) or not all(type(s) is int for s in losers):
            raise TallyError("a game's losers must be seats")
        return cls(number, gid, state, tuple(losers), forfeit, dealer)


class Tally:
    """The standing of a session, seat by seat (seats are kept for the whole session)."""

    def __init__(self, names: Sequence[str], planned: int = 0) -> None:
        self.names = list(names)
        self.planned = planned
        n = len(names)
        self.games: list[GameRecord] = []
        self.losses = [0] * n
        self.forfeits = [0] * n
        self.streaks = [0] * n
        self.korokkeella = [0] * n  # times each seat lost two in a row
        self.poronmuna = [0] * n  # times each seat lost three in a row

    def record(self, game: GameRecord) -> None:
        """Count a game: its losers lose (a forfeit is a loss too), everyone else's run of
        losses ends (M24)."""
        if game.number != len(self.games) + 1:
            raise TallyError(f"game {game.number} counted after {len(self.games)} games")
        self.games.append(game)
        for seat in range(len(self.names)):
            if seat in game.losers:
                self.losses[seat] += 1
                self.forfeits[seat] += game.forfeit
                self.streaks[seat] += 1
                if self.streaks[seat] == 2:
                    self.korokkeella[seat] += 1
                elif self.streaks[seat] == 3:
                    self.poronmuna[seat] += 1
            else:
                self.streaks[seat] = 0

    @property
    def decided(self) -> int:
        """Games with a result: all but those stopped over lost contact (§15.4), which nobody
        lost; the loss rates are over these."""
        return sum(1 for g in self.games if not (g.forfeit and not g.losers))

    def on_the_pedestal(self) -> list[str]:
        """Who stands *korokkeella* now (lost exactly the last two games, M24)."""
        return [name for seat, name in enumerate(self.names) if self.streaks[seat] == 2]

    def pedestal_note(self) -> str | None:
        """The custom of the pedestal, said at "next game?": whoever lost the last two games
        gets another game to step down. A custom only: ``--games N`` is the most a session
        plays, never extended, so every peer signed its length before the first deal and a
        streak cannot stretch the sample the loss-rate intervals are computed from."""
        names = self.on_the_pedestal()
        if not names:
            return None
        return f"{', '.join(names)} stands korokkeella: by custom another game is played."

    def score_line(self) -> str:
        """``after game 2 of 3: alice 1 loss; bob 1 loss (korokkeella); ...``"""
        parts = []
        for seat, name in enumerate(self.names):
            count = self.losses[seat]
            text = f"{name} {count} loss{'' if count == 1 else 'es'}"
            if self.streaks[seat] >= 3:
                text += " (poronmuna)"
            elif self.streaks[seat] == 2:
                text += " (korokkeella)"
            parts.append(text)
        planned = f" of {self.planned}" if self.planned else ""
        return f"after game {len(self.games)}{planned}: " + "; ".join(parts)


def next_dealer(dealer: int, loser: int | None) -> int:
    """Who deals the next game: the loser (M24); after a draw, the same dealer."""
    return dealer if loser is None else loser


# ---------------------------------------------------------------------- the signed result


@dataclass(frozen=True)
class SessionResult:
    """A peer's signed result of a session (see the module docstring)."""

    signer: bytes
    session: bytes
    seats: tuple[bytes, ...]
    games: tuple[GameRecord, ...]
    transcripts: tuple[bytes, ...]  # SHA-256 of the signer's transcript file of each game
    left: tuple[bytes, ...]  # players that left between games (they sign nothing)
    end: str  # why the session ended, in words
    frame: bytes = field(default=b"", compare=False)

    def common(self) -> tuple[object, ...]:
        """What every peer's result must agree on."""
        return (self.session, self.seats, self.games, self.left)


_RESULT_SPEC: Spec = {
    "signer": Field(bytes, length=32),
    "session": Field(bytes, length=32),
    "seats": Field(list, items=Field(bytes, length=32)),
    "games": list,
    "transcripts": Field(list, items=Field(bytes, length=32)),
    "left": Field(list, items=Field(bytes, length=32)),
    "end": str,
}


def sign_result(
    identity: Identity,
    session: bytes,
    seats: Sequence[bytes],
    games: Sequence[GameRecord],
    transcripts: Sequence[bytes],
    left: Sequence[bytes] = (),
    end: str = "",
) -> bytes:
    """This peer's signed session result, framed (length prefix included)."""
    body = {
        "signer": identity.public_bytes,
        "session": session,
        "seats": list(seats),
        "games": [g.to_wire() for g in games],
        "transcripts": list(transcripts),
        "left": sorted(left),
        "end": end[:MAX_REASON],
    }
    return signed_frame(identity, SESSION_RESULT, body)


def open_result(frame: bytes) -> SessionResult:
    """A signed session result (length prefix included), its signature checked;
    :class:`TallyError` for anything else, naming the signer when it can."""
    try:
        if len(frame) < 4 or struct.unpack(">I", frame[:4])[0] != len(frame) - 4:
            raise FrameError("the length prefix does not match")
        kind, payload, signature = open_frame(frame[4:])
        if kind != SESSION_RESULT:
            raise FrameError(f"a {kind} frame, not a session result")
        fields = check_fields(unpack(payload), _RESULT_SPEC)
        signer = require(fields, "signer", bytes)
    except FrameError as error:
        raise TallyError(f"a malformed session result: {error}") from None
    if not verify(signer, kind, payload, signature):
        raise TallyError(f"a forged signature on the session result of {fingerprint_of(signer)}")
    # Each field read as its checked type (require checks it again, and says so to mypy).
    return SessionResult(
        signer,
        require(fields, "session", bytes),
        tuple(require(fields, "seats", list)),
        tuple(GameRecord.from_wire(g) for g in require(fields, "games", list)),
        tuple(require(fields, "transcripts", list)),
        tuple(require(fields, "left", list)),
        require(fields, "end", str),
        frame,
    )


def file_digest(path: Path) -> bytes:
    """The hash a session result gives a transcript file: SHA-256 of its bytes."""
    return hashlib.sha256(path.read_bytes()).digest()


# ---------------------------------------------------------------------- the session file


def write_session_file(path: Path, owner: bytes, session: bytes, results: Sequence[bytes]) -> None:
    """A peer's session file: a header record, then every signed result it holds (its own
    first). Records are framed as in a transcript (PROTOCOL.md §17)."""
    header = pack({SESSION_MAGIC: 1, "owner": owner, "session": session})
    with open(path, "wb") as out:
        out.write(struct.pack(">I", len(header)) + header)
        for frame in results:
            out.write(frame)


def is_session_file(path: Path) -> bool:
    try:
        with open(path, "rb") as data:
            head = data.read(64)
    except OSError:
        return False
    return SESSION_MAGIC.encode() in head


def read_session_file(path: Path) -> tuple[bytes, bytes, list[bytes]]:
    """(owner, session id, result frames) of a session file; :class:`TallyError` if not one."""
    data = path.read_bytes()
    records: list[bytes] = []
    at = 0
    while at < len(data):
        if at + 4 > len(data):
            raise TallyError(f"{path.name}: truncated at byte {at}")
        (length,) = struct.unpack(">I", data[at : at + 4])
        if length > MAX_FRAME or at + 4 + length > len(data):
            raise TallyError(f"{path.name}: a record at byte {at} runs past the end")
        records.append(data[at : at + 4 + length])
        at += 4 + length
    try:
        header = unpack(records[0][4:]) if records else None
    except FrameError as error:
        raise TallyError(f"{path.name}: bad header: {error}") from None
    if not isinstance(header, dict) or header.get(SESSION_MAGIC) != 1:
        raise TallyError(f"{path.name}: not a moska-p2p session file")
    owner, session = header.get("owner"), header.get("session")
    if not isinstance(owner, bytes) or not isinstance(session, bytes):
        raise TallyError(f"{path.name}: bad header fields")
    return owner, session, records[1:]


# ---------------------------------------------------------------------- checking a session


@dataclass(frozen=True)
class Transcript:
    """A transcript of a session's game as the checker takes it: its report, its file's
    hash and its name (for messages)."""

    report: Report
    digest: bytes
    name: str


@dataclass
class SessionCheck:
    """What :func:`check_session` found: ``fault`` is None when the session verifies."""

    session: bytes
    fault: str | None
    tally: Tally | None = None
    results: int = 0  # signed results checked
    left: tuple[bytes, ...] = ()
    notes: tuple[str, ...] = ()  # games no record decided: what each record says (§22)


def session_of(report: Report) -> bytes | None:
    """The session id of a transcript's game (None: a single game, or no header)."""
    config = report.config
    if config is None or not config.in_session:
        return None
    return session_id(config, report.roster)


def check_session(
    transcripts: Sequence[Transcript],
    results: Sequence[bytes],
    names: Mapping[bytes, str] | None = None,
) -> SessionCheck:
    """Check one session from its transcripts and its signed results (see the module
    docstring); the first fault found is the session's."""
    sessions = {session_of(t.report) for t in transcripts}
    sid = next(iter(sessions)) if len(sessions) == 1 else None
    if sid is None:
        return SessionCheck(b"", "the transcripts are not of one session")
    notes: list[str] = []
    try:
        tally, games, seats = _chain(transcripts, names or {}, notes)
        found = _check_results(sid, transcripts, results, games, seats)
    except TallyError as error:
        return SessionCheck(sid, str(error))
    left = found[0].left if found else ()
    return SessionCheck(sid, None, tally, len(found), left, tuple(notes))


def decided(report: Report) -> bool:
    """Whether a record decides its game: finished, stopped by a conviction, or stopped
    after the signed moves had ended it (its losers stand, §15.2). A record of lost contact
    in an undecided game decides nothing (§15.4): it agrees with any other record of it."""
    return report.verdict is None or report.conviction or bool(report.losers)


def contact_split(
    copies: Sequence[Transcript], seats: Sequence[bytes], names: Sequence[str]
) -> str:
    """What each record of a game no record decided says, in one line: who lost contact
    with whom, grouped by what they say ("seat 0 (ann), seat 1 (bob) lost contact with seat
    2 (cy)"; two groups when the records differ, as after a partition)."""

    def label(key: bytes) -> str:
        if key in seats:
            seat = seats.index(key)
            return f"seat {seat} ({names[seat]})" if seat < len(names) else f"seat {seat}"
        return fingerprint_of(key)

    said: dict[tuple[bytes, ...], list[str]] = {}
    for t in copies:
        owner = label(t.report.owner_key)
        said.setdefault(tuple(sorted(t.report.culprits)), []).append(owner)
    parts = [
        f"{', '.join(owners)} lost contact with {', '.join(label(k) for k in culprits)}"
        for culprits, owners in sorted(said.items(), key=lambda item: item[1])
    ]
    agreed = "every record agrees" if len(said) == 1 else "the records differ"
    return f"no result, nobody lost ({agreed}): " + "; ".join(parts)


def _chain(
    transcripts: Sequence[Transcript], names: Mapping[bytes, str], notes: list[str]
) -> tuple[Tally, list[GameRecord], tuple[bytes, ...]]:
    by_number: dict[int, list[Transcript]] = {}
    for t in transcripts:
        report = t.report
        if not report.valid:
            raise TallyError(f"{t.name} does not verify: {report.fault}")
        assert report.config is not None
        if report.verdict is not None and not report.seats:
            continue  # stopped before the seats were drawn: never played, not counted
        by_number.setdefault(report.config.game, []).append(t)
    if not by_number:
        raise TallyError("no game of the session was played")
    games: list[GameRecord] = []
    seats: tuple[bytes, ...] = ()
    previous: Report | None = None
    tally: Tally | None = None
    for number in range(1, max(by_number) + 1):
        copies = by_number.get(number)
        if not copies:
            raise TallyError(f"game {number} of the session is missing (no transcript of it)")
        # A record of lost contact agrees with any other (it says less); the records that
        # decide the game (finished, or a conviction) must all say the same.
        deciding = [t for t in copies if decided(t.report)] or copies
        first = deciding[0].report
        for other in copies[1:]:
            r = other.report
            if r.game_id != first.game_id or (
                decided(r)
                and (r.final_state_hash, r.losers) != (first.final_state_hash, first.losers)
            ):
                raise TallyError(
                    f"game {number}: {other.name} and {deciding[0].name} disagree on the game"
                    f" ({other.name}: {_outcome(r)}; {deciding[0].name}: {_outcome(first)})"
                )
        config = first.config
        assert config is not None and first.game_id is not None
        if previous is not None:
            assert previous.game_id is not None
            if previous.verdict is not None:
                raise TallyError(f"game {number} follows game {number - 1}, which was stopped")
            if config.previous != bytes.fromhex(previous.game_id):
                raise TallyError(
                    f"game {number} does not follow game {number - 1} (it names another"
                    " previous game: swapped or reordered)"
                )
            if config.seating != previous.seats:
                raise TallyError(f"game {number} is not played in game {number - 1}'s seats")
            dealer = next_dealer(previous.dealer, previous.loser)
            if config.dealer != dealer:
                raise TallyError(
                    f"game {number} is dealt by seat {config.dealer}, not by game"
                    f" {number - 1}'s loser, seat {dealer} (M24)"
                )
        else:
            seats = first.seats
            told = dict(zip(seats, first.names, strict=False))
            label = [printable(names.get(k) or told.get(k) or fingerprint_of(k)) for k in seats]
            tally = Tally(label, config.games)
        assert tally is not None
        if not decided(first):
            notes.append(f"game {number}: {contact_split(copies, seats, tally.names)}")
        record = GameRecord(
            number,
            bytes.fromhex(first.game_id),
            bytes.fromhex(first.final_state_hash or ""),
            tuple(sorted(first.losers)) if first.verdict is not None else tuple(first.losers),
            first.verdict is not None,
            first.dealer,
        )
        games.append(record)
        tally.record(record)
        previous = first
    assert tally is not None
    return tally, games, seats


def _check_results(
    sid: bytes,
    transcripts: Sequence[Transcript],
    frames: Sequence[bytes],
    games: list[GameRecord],
    seats: tuple[bytes, ...],
) -> list[SessionResult]:
    if not frames:
        raise TallyError("no signed session result (no session file of any peer)")
    found: dict[bytes, SessionResult] = {}
    for frame in frames:
        result = open_result(frame)  # a forged signature: TallyError
        if result.session != sid:
            raise TallyError(
                f"the session result of {fingerprint_of(result.signer)} is of another session"
            )
        if result.signer not in seats:
            raise TallyError(
                f"a session result signed by {fingerprint_of(result.signer)}, not a player"
            )
        earlier = found.get(result.signer)
        if earlier is not None and earlier.frame != result.frame:
            raise TallyError(f"{fingerprint_of(result.signer)} signed two session results")
        found[result.signer] = result
    reference = next(iter(found.values()))
    for result in found.values():
        if result.common() != reference.common():
            raise TallyError(
                f"the session results of {fingerprint_of(result.signer)} and"
                f" {fingerprint_of(reference.signer)} disagree"
            )
    if reference.seats != seats:
        raise TallyError("the session result lists other seats than the games were played in")
    listed, played = len(reference.games), len(games)
    if listed != played:
        missing = ", ".join(str(g.number) for g in reference.games[played:]) or "none"
        raise TallyError(
            f"the session result lists {listed} games, the transcripts hold {played}"
            f" (missing: game {missing})"
            if listed > played
            else f"the session result lists {listed} games, the transcripts hold {played}"
        )
    for signed, seen in zip(reference.games, games, strict=True):
        if signed != seen:
            raise TallyError(
                f"game {seen.number} is not the game the session result signed (swapped or"
                " reordered)"
            )
    # After a game stopped by a verdict the players may be out of reach of each other: each
    # result holds the signatures its signer could gather (§22), none is owed.
    stopped = bool(games) and games[-1].forfeit
    for key in seats:
        if key not in found and key not in reference.left and not stopped:
            raise TallyError(f"the session result lacks the signature of {fingerprint_of(key)}")
    for t in transcripts:
        owner = t.report.owner_key
        by_owner = found.get(owner)
        assert t.report.config is not None
        number = t.report.config.game
        if by_owner is None:
            continue  # a peer that left signs nothing; its games are checked by the others'
        if number > len(by_owner.transcripts) or by_owner.transcripts[number - 1] != t.digest:
            raise TallyError(
                f"{t.name} is not the transcript of game {number} that"
                f" {fingerprint_of(owner)} signed"
            )
    return list(found.values())


def _outcome(report: Report) -> str:
    """What a record says of its game, in a few words (for a disagreement)."""
    if report.game_id is None:
        return "no game"
    if report.verdict is not None:
        return f"stopped, {report.verdict_kind} naming seats {report.losers or report.lost_contact}"
    state = (report.final_state_hash or "")[:16]
    return f"game {report.game_id[:16]} finished, lost: seats {report.losers}, state {state}"

