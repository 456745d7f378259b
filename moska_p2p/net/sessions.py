"""Between the games of a session (RULES M24, ``host --games N``): the tally, the vote on
the next game, the frames of the next game held until it starts, and the signed result at
the end.

The game runner (:mod:`.runner`) owns this part (:class:`SessionBook`), plays each game and
calls in here when one is over; the book starts nothing itself and reads the game only through
:class:`CurrentGame`, so it sits below the runner.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import trio

from ..crypto.identity import Identity
from ..protocol import verdict as v
from ..protocol.config import TableConfig, session_id
from ..protocol.session import PeerSession
from ..protocol.tally import (
    GameRecord,
    Tally,
    TallyError,
    file_digest,
    open_result,
    sign_result,
    write_session_file,
)
from ..protocol.transcript import verify_transcript
from .link import Link
from .persist import SavedGame
from .state import EXIT_OK, NodeOptions, Outcome, reason_of
from .wire import NEXT

log = logging.getLogger("moska_p2p.net")

HELD_FRAMES = 64
HELD_BYTES = 1 << 20
"""Frames of a session's next game held, at most, until this peer starts it."""

RESULT_WAIT = 10.0
"""Seconds at most to wait for the others' signed session results at the end of a session."""


class CurrentGame(Protocol):
    """What the book reads of the game runner: the game now, how it ended, who is who."""

    session: PeerSession | None
    saved: SavedGame | None
    end: v.Finished | v.Stopped | None
    closing: trio.Event

    def label(self, key: bytes) -> str: ...

    def seat_name(self, seat: int) -> str: ...


class SessionBook:
    """A node's bookkeeping for a session of games (see the module docstring): the tally,
    the votes on the next game, the held frames of the next game, the signed results."""

    def __init__(
        self,
        options: NodeOptions,
        identity: Identity,
        links: Mapping[bytes, Link],
        game: CurrentGame,
    ) -> None:
        self.o = options
        self.identity = identity
        self.me = identity.public_bytes
        self.links = links  # the node's live links (owned by .links), read to send on
        self.game = game
        self.tally: Tally | None = None
        self.game_files: list[Path] = []  # this peer's transcripts of the counted games
        self.session_file: Path | None = None
        self.resumed = False  # a game rebuilt after a crash: its session's tally is lost
        self.my_vote: dict[str, Any] | None = None  # our next: game, go
        self.my_result: bytes | None = None
        self.results: dict[bytes, bytes] = {}  # signer -> signed session result
        self.left: set[bytes] = set()  # players gone between games
        self.votes: dict[tuple[int, bytes], bool] = {}  # (game, key) -> plays the next one
        self._voted = trio.Event()
        self._held: list[tuple[bytes, bytes]] = []  # (frame, source) of the next game
        self._result_in = trio.Event()
        self._asking: trio.CancelScope | None = None  # "next game?" is open (Ctrl-C: no)

    def game_path(self, config: TableConfig, number: int) -> Path:
        """This peer's transcript of a session's game ``number``: ``NAME-gN.moska`` beside
        the ``--transcript`` named (a single game: that very file)."""
        base = self.o.transcript
        if not config.in_session:
            return base
        return base.with_name(f"{base.stem}-g{number}{base.suffix}")

    @staticmethod
    def session_base(saved: SavedGame) -> Path:
        """The ``--transcript`` a session's game file was named after (``NAME.moska`` for
        ``NAME-g3.moska``): what a peer resumed in that game names its other files by."""
        path, tail = saved.transcript, f"-g{saved.config.game}"
        if saved.config.in_session and path.stem.endswith(tail):
            return path.with_name(path.stem[: -len(tail)] + path.suffix)
        return path

    def next_may_come(self) -> bool:
        """Whether a frame that comes after this game's end may be of the session's next."""
        saved = self.game.saved
        return (
            saved is not None
            and saved.config.in_session
            and saved.config.game < saved.config.games
            and not self.game.closing.is_set()
        )

    def hold(self, frame: bytes, source: bytes) -> None:
        """Keep a frame of the next game (boundedly) until this peer starts it."""
        if len(self._held) < HELD_FRAMES and sum(len(f) for f, _ in self._held) < HELD_BYTES:
            self._held.append((frame, source))

    def take_held(self) -> list[tuple[bytes, bytes]]:
        """The held frames of the next game, now that it begins (the book forgets them)."""
        held, self._held = self._held, []
        return held

    def new_game(self) -> None:
        """The session's next game begins: our vote on the last one is spent."""
        self.my_vote = None

    def vote_in(self, game: int, key: bytes, go: bool) -> None:
        """Another peer's ``next`` on game ``game`` (it may come before we are done with it)."""
        self.votes[(game, key)] = go
        self._voted.set()

    def stop_asking(self) -> bool:
        """Ctrl-C while "next game?" is open: the answer is no. False when nothing is asked."""
        if self._asking is None:
            return False
        self._asking.cancel()
        self._asking = None
        return True

    def _record(self, outcome: Outcome) -> GameRecord | None:
        """Count the game just over in the session's tally (None: not a game to count, one
        stopped before anybody had a seat to forfeit)."""
        session, saved, end = self.game.session, self.game.saved, self.game.end
        assert session is not None and saved is not None
        if session.game_id is None:
            return None
        if isinstance(end, v.Finished) and outcome.code == EXIT_OK:
            record = GameRecord(
                saved.config.game,
                session.game_id,
                bytes.fromhex(end.final_state_hash),
                tuple(end.losers),
                False,
                session.dealer,
            )
        elif isinstance(end, v.Stopped) and any(s >= 0 for s in end.verdict.seats):
            # as verify does: convicted culprits lose; those this peer only lost contact
            # with are named in the transcript but lose nothing (PROTOCOL.md §15.4)
            seats = tuple(sorted(s for s in end.verdict.seats if s >= 0))
            if not end.verdict.conviction:
                seats = ()
            number = saved.config.game
            record = GameRecord(number, session.game_id, b"", seats, True, session.dealer)
        else:
            return None
        if self.tally is None:
            names = [self.game.seat_name(s) for s in range(len(session.seats))]
            self.tally = Tally(names, saved.config.games)
        self.tally.record(record)
        self.game_files.append(saved.transcript)
        return record

    async def recount(self) -> bool:
        """A peer resumed in game k of a session after a restart: count games 1 to k-1 again
        from its own transcripts of them (each must verify and have finished), so that it
        goes on with the session and signs its result like the others. False when it cannot:
        it then finishes its game only."""
        saved, session = self.game.saved, self.game.session
        assert saved is not None and session is not None
        config = saved.config
        if not config.in_session or self.tally is not None or not session.seats:
            return config.in_session and bool(session.seats)
        tally = Tally([self.game.seat_name(s) for s in range(len(session.seats))], config.games)
        files = []
        for number in range(1, config.game):
            path = self.game_path(config, number)
            report = await trio.to_thread.run_sync(verify_transcript, path)
            if not report.valid or report.verdict is not None or report.game_id is None:
                self.o.echo(f"cannot count game {number} again from {path}: {report.fault}")
                return False
            tally.record(
                GameRecord(
                    number,
                    bytes.fromhex(report.game_id),
                    bytes.fromhex(report.final_state_hash or ""),
                    tuple(report.losers),
                    False,
                    report.dealer,
                )
            )
            files.append(path)
        self.tally, self.game_files = tally, files
        return True

    def cast_vote(self, game: int, go: bool) -> None:
        """Our ``next`` on game ``game``: sent on every link now, and kept for the links that
        come up before the session goes on (each link signs it over its own id)."""
        self.my_vote = {"game": game, "go": go}
        for link in self.links.values():
            link.send_net(NEXT, self.my_vote)

    def vote_for_new_link(self) -> dict[str, Any] | None:
        """The ``next`` a link that comes up now must carry, if any: our vote, or (in game k
        of a session) the yes to game k that a peer restarted between games k-1 and k asks
        again (its vote on k-1 is all it can resume to)."""
        vote = self.my_vote
        saved = self.game.saved
        if vote is None and saved is not None and saved.config.game > 1:
            vote = {"game": saved.config.game - 1, "go": True}
        return vote

    async def between_games(self, outcome: Outcome) -> bool:
        """Count the game, print the score line, and agree with everyone on the next game:
        True when all play it."""
        saved, session, end = self.game.saved, self.game.session, self.game.end
        assert saved is not None and session is not None
        config = saved.config
        record = self._record(outcome)
        if record is None:
            if isinstance(end, v.Stopped):
                # Gone before the next game began (a timeout before the seats were drawn):
                # it never started, so it is not counted, and whoever was silent left.
                self.left.update(k for k in end.verdict.keys if k != self.me)
                if saved.transcript.exists():
                    aside = saved.transcript.with_name(saved.transcript.name + ".unplayed")
                    saved.transcript.replace(aside)
                    self.o.echo(f"game {config.game} never started; its frames are in {aside}")
            return False
        assert self.tally is not None
        self.o.echo(self.tally.score_line())
        if record.forfeit or config.game >= config.games:
            return False
        go = False
        summary = self.tally.score_line()
        note = self.tally.pedestal_note()  # M24's custom, said; the length stays as signed
        if note is not None:
            summary += f"\n{note}"
        with trio.move_on_after(config.timeout) as asking:
            self._asking = asking
            try:
                go = bool(
                    await trio.to_thread.run_sync(
                        self.o.player.next_game, summary, abandon_on_cancel=True
                    )
                )
            except Exception as error:  # the player could not answer: it does not go on
                log.warning("asking for the next game failed: %s", reason_of(error))
        self._asking = None
        if asking.cancelled_caught:  # Ctrl-C or the timeout: end the question's open line
            self.o.echo("")
        self.cast_vote(config.game, go)
        if not go:
            self.o.echo("you end the session here")
            return False
        others = [e.key for e in saved.roster if e.key != self.me]

        def votes() -> list[bool | None]:
            return [self.votes.get((config.game, k)) for k in others]

        with trio.move_on_after(config.timeout):
            while None in votes() and False not in votes():
                self._voted = trio.Event()
                await self._voted.wait()
        noes = [k for k, vote in zip(others, votes(), strict=True) if vote is False]
        silent = [k for k, vote in zip(others, votes(), strict=True) if vote is None]
        for key in noes:
            self.o.echo(f"{self.game.label(key)} ends the session here")
        if silent and not noes:
            self.left.update(silent)
            for key in silent:
                self.o.echo(f"{self.game.label(key)} did not answer: the session ends")
        return not noes and not silent

    def take_result(self, source: bytes, frame: bytes) -> None:
        """Another peer's signed session result (kept when it is that peer's, signed)."""
        try:
            result = open_result(frame)
        except TallyError as error:
            log.warning("a session result from %s: %s", self.game.label(source), error)
            return
        if result.signer == source:
            self.results[source] = frame
            self._result_in.set()

    async def end_session(self, outcome: Outcome) -> Outcome:
        """Sign the session's result, swap it with everyone's, write the session file, print
        the results table. The session's exit code: 0 when it ended between games (all games
        played, a peer that declined or left), else the last game's."""
        saved, tally = self.game.saved, self.tally
        assert saved is not None
        if tally is None:  # not one game counted: nothing to sign
            return outcome
        session = self.game.session
        assert session is not None
        seats = tuple(saved.config.seating) or tuple(session.seats)  # kept from game 1
        sid = session_id(saved.config, [e.key for e in saved.roster])
        last = tally.games[-1]
        if last.forfeit:
            end = f"game {last.number} was stopped by a verdict"
        elif len(tally.games) == saved.config.games:
            end = f"all {saved.config.games} games played"
        else:
            end = f"ended after game {len(tally.games)} of {saved.config.games}"
        try:
            digests = [await trio.to_thread.run_sync(file_digest, p) for p in self.game_files]
        except OSError as error:
            self.o.echo(f"cannot read this peer's transcripts to sign the session: {error}")
            return outcome
        self.my_result = sign_result(
            self.identity, sid, seats, tally.games, digests, sorted(self.left), end
        )
        self.results[self.me] = self.my_result
        for link in self.links.values():
            link.enqueue(self.my_result)
        expected = {e.key for e in saved.roster} - self.left
        last_end = self.game.end
        if isinstance(last_end, v.Stopped):
            # whoever the last game stopped on is gone or out of reach: no signature of its
            # can come (§22), so nobody waits for one
            expected -= set(last_end.verdict.keys)
        with trio.move_on_after(min(RESULT_WAIT, saved.config.timeout)):
            while not expected <= set(self.results):
                self._result_in = trio.Event()
                await self._result_in.wait()
        missing = sorted(expected - set(self.results))
        for key in missing:
            self.o.echo(f"no signed session result from {self.game.label(key)}")
        path = self.o.transcript.with_name(
            f"{self.o.transcript.stem}-session{self.o.transcript.suffix}"
        )
        others = [f for k, f in sorted(self.results.items()) if k != self.me]
        try:
            write_session_file(path, self.me, sid, [self.my_result, *others])
            self.session_file = path
        except OSError as error:
            self.o.echo(f"cannot write the session file {path}: {error}")
        lines = self.o.results(tally) if self.o.results is not None else [tally.score_line()]
        for line in lines:
            self.o.echo(line)
        self.o.echo(
            f"session over ({end}); signed by {len(self.results)} of {len(saved.roster)}"
            f" players: {path}"
        )
        if last.forfeit:
            return outcome
        return Outcome(EXIT_OK, f"session over: {end}", outcome.finished, report=outcome.report)
