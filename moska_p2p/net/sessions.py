"""Between the games of a session (RULES M24, ``host --games N``): the tally, the vote on
the next game, the frames of the next game held until it starts, and the signed result at
the end.

The game runner (:mod:`.runner`) plays each game and calls in here when one is over; this
module starts nothing itself, so it sits below the runner.
"""

from __future__ import annotations

import logging
from pathlib import Path

import trio

from ..protocol import verdict as v
from ..protocol.config import TableConfig, session_id
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
from .persist import SavedGame
from .state import EXIT_OK, NodeState, Outcome, _reason
from .wire import NEXT

log = logging.getLogger("moska_p2p.net")

HELD_FRAMES = 64
HELD_BYTES = 1 << 20
"""Frames of a session's next game held, at most, until this peer starts it."""

RESULT_WAIT = 10.0
"""Seconds at most to wait for the others' signed session results at the end of a session."""


class SessionNode(NodeState):
    """A node's bookkeeping for a session of games (see the module docstring)."""

    def _game_path(self, config: TableConfig, number: int) -> Path:
        """This peer's transcript of a session's game ``number``: ``NAME-gN.moska`` beside
        the ``--transcript`` named (a single game: that very file)."""
        base = self.o.transcript
        if not config.in_session:
            return base
        return base.with_name(f"{base.stem}-g{number}{base.suffix}")

    @staticmethod
    def _session_base(saved: SavedGame) -> Path:
        """The ``--transcript`` a session's game file was named after (``NAME.moska`` for
        ``NAME-g3.moska``): what a peer resumed in that game names its other files by."""
        path, tail = saved.transcript, f"-g{saved.config.game}"
        if saved.config.in_session and path.stem.endswith(tail):
            return path.with_name(path.stem[: -len(tail)] + path.suffix)
        return path

    def _next_may_come(self) -> bool:
        """Whether a frame that comes after this game's end may be of the session's next."""
        saved = self.saved
        return (
            saved is not None
            and saved.config.in_session
            and saved.config.game < saved.config.games
            and not self.closing.is_set()
        )

    def _hold(self, frame: bytes, source: bytes) -> None:
        if len(self._held) < HELD_FRAMES and sum(len(f) for f, _ in self._held) < HELD_BYTES:
            self._held.append((frame, source))

    def _record(self, outcome: Outcome) -> GameRecord | None:
        """Count the game just over in the session's tally (None: not a game to count, one
        stopped before anybody had a seat to forfeit)."""
        session, saved = self.session, self.saved
        assert session is not None and saved is not None
        end = self._end
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
            # as verify does: the session's losers (a decided game's, and the convicted);
            # those this peer only lost contact with lose nothing (PROTOCOL.md §15.2, §15.4)
            seats = tuple(sorted(session.losers))
            number = saved.config.game
            record = GameRecord(number, session.game_id, b"", seats, True, session.dealer)
        else:
            return None
        if self.tally is None:
            names = [self._seat_name(s) for s in range(len(session.seats))]
            self.tally = Tally(names, saved.config.games)
        self.tally.record(record)
        self.game_files.append(saved.transcript)
        return record

    async def _recount(self) -> bool:
        """A peer resumed in game k of a session after a restart: count games 1 to k-1 again
        from its own transcripts of them (each must verify and have finished), so that it
        goes on with the session and signs its result like the others. False when it cannot:
        it then finishes its game only."""
        saved, session = self.saved, self.session
        assert saved is not None and session is not None
        config = saved.config
        if not config.in_session or self.tally is not None or not session.seats:
            return config.in_session and bool(session.seats)
        tally = Tally([self._seat_name(s) for s in range(len(session.seats))], config.games)
        files = []
        for number in range(1, config.game):
            path = self._game_path(config, number)
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

    def _cast_vote(self, game: int, go: bool) -> None:
        """Our ``next`` on game ``game``: sent on every link now, and kept for the links that
        come up before the session goes on (each link signs it over its own id)."""
        self._my_vote = {"game": game, "go": go}
        for link in self.links.values():
            link.send_net(NEXT, self._my_vote)

    async def _between_games(self, outcome: Outcome) -> bool:
        """Count the game, print the score line, and agree with everyone on the next game:
        True when all play it."""
        saved, session = self.saved, self.session
        assert saved is not None and session is not None
        config = saved.config
        record = self._record(outcome)
        if record is None:
            if isinstance(self._end, v.Stopped):
                # Gone before the next game began (a timeout before the seats were drawn):
                # it never started, so it is not counted, and whoever was silent left.
                self._left.update(k for k in self._end.verdict.keys if k != self.me)
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
                log.warning("asking for the next game failed: %s", _reason(error))
        self._asking = None
        if asking.cancelled_caught:  # Ctrl-C or the timeout: end the question's open line
            self.o.echo("")
        self._cast_vote(config.game, go)
        if not go:
            self.o.echo("you end the session here")
            return False
        others = [e.key for e in saved.roster if e.key != self.me]

        def votes() -> list[bool | None]:
            return [self._votes.get((config.game, k)) for k in others]

        with trio.move_on_after(config.timeout):
            while None in votes() and False not in votes():
                self._voted = trio.Event()
                await self._voted.wait()
        noes = [k for k, vote in zip(others, votes(), strict=True) if vote is False]
        silent = [k for k, vote in zip(others, votes(), strict=True) if vote is None]
        for key in noes:
            self.o.echo(f"{self._label(key)} ends the session here")
        if silent and not noes:
            self._left.update(silent)
            for key in silent:
                self.o.echo(f"{self._label(key)} did not answer: the session ends")
        return not noes and not silent

    def _take_result(self, source: bytes, frame: bytes) -> None:
        """Another peer's signed session result (kept when it is that peer's, signed)."""
        try:
            result = open_result(frame)
        except TallyError as error:
            log.warning("a session result from %s: %s", self._label(source), error)
            return
        if result.signer == source:
            self._results[source] = frame
            self._result_in.set()

    async def _end_session(self, outcome: Outcome) -> Outcome:
        """Sign the session's result, swap it with everyone's, write the session file, print
        the results table. The session's exit code: 0 when it ended between games (all games
        played, a peer that declined or left), else the last game's."""
        saved, tally = self.saved, self.tally
        assert saved is not None
        if tally is None:  # not one game counted: nothing to sign
            return outcome
        session = self.session
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
        self._my_result = sign_result(
            self.identity, sid, seats, tally.games, digests, sorted(self._left), end
        )
        self._results[self.me] = self._my_result
        for link in self.links.values():
            link.enqueue(self._my_result)
        expected = {e.key for e in saved.roster} - self._left
        if isinstance(self._end, v.Stopped):
            # whoever the last game stopped on is gone or out of reach: no signature of its
            # can come (§22), so nobody waits for one
            expected -= set(self._end.verdict.keys)
        with trio.move_on_after(min(RESULT_WAIT, saved.config.timeout)):
            while not expected <= set(self._results):
                self._result_in = trio.Event()
                await self._result_in.wait()
        missing = sorted(expected - set(self._results))
        for key in missing:
            self.o.echo(f"no signed session result from {self._label(key)}")
        path = self.o.transcript.with_name(
            f"{self.o.transcript.stem}-session{self.o.transcript.suffix}"
        )
        others = [f for k, f in sorted(self._results.items()) if k != self.me]
        try:
            write_session_file(path, self.me, sid, [self._my_result, *others])
            self.session_file = path
        except OSError as error:
            self.o.echo(f"cannot write the session file {path}: {error}")
        lines = self.o.results(tally) if self.o.results is not None else [tally.score_line()]
        for line in lines:
            self.o.echo(line)
        self.o.echo(
            f"session over ({end}); signed by {len(self._results)} of {len(saved.roster)}"
            f" players: {path}"
        )
        if last.forfeit:
            return outcome
        return Outcome(EXIT_OK, f"session over: {end}", outcome.finished, report=outcome.report)
