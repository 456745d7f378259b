"""One game, then the next: the node's game runner.

It makes (or rebuilds) a game's :class:`~moska_p2p.protocol.session.PeerSession`, feeds it
every frame from the links and a tick every :data:`TICK` seconds, acts on what it outputs
(transcript first, then the frames to every link, then the player), and at the end reports
the game and, in a session, starts the next one over the same links (:mod:`.sessions` keeps
the tally and the vote).
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace

import trio

from ..crypto.identity import Identity, fingerprint_of
from ..protocol import verdict as v
from ..protocol.config import session_id, table_id
from ..protocol.frames import SESSION_RESULT, FrameError, open_frame, printable
from ..protocol.session import RESULT, PeerSession, drbg
from ..protocol.tally import next_dealer
from ..protocol.transcript import verify_transcript
from .deck_worker import DeckWorker
from .known import KnownPeers, KnownPeersError
from .link import Link
from .links import Mesh
from .persist import Route, SavedGame, TranscriptFile
from .port import FramePaths, GamePort
from .sessions import SessionBook
from .state import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    NodeOptions,
    Outcome,
    Stats,
    seat_label,
    seat_name,
)
from .sync_answers import SyncAnswers
from .wire import (
    BYE,
    NEXT,
    REFUSE,
    SYNC,
    FrameStream,
    HandshakeError,
    NetMessage,
)

log = logging.getLogger("moska_p2p.net")

TICK = 0.5
"""Seconds between two ``session.tick`` calls."""

MAX_TICK_GAP = 6 * TICK
"""A longer gap between two ticks is taken for a suspension of this peer (SIGSTOP, a laptop
lid), not for anyone's silence."""

SYNC_EVERY = 2.0
"""Seconds between two ``sync`` messages a stuck peer sends on its live links (a quarter of
the table's timeout when that is shorter): what one survivor lacks, another may hold."""


def sync_interval(timeout: float) -> float:
    """How often a stuck peer asks its links for what it lacks: well under the timeout, so a
    frame that reached one peer and not another is forwarded long before anyone is named."""
    return max(TICK, min(SYNC_EVERY, timeout / 4))


class CorruptLink(HandshakeError):
    """A link delivered bytes that are no frame as its signer sent it: the byte stream was
    cut, reordered or duplicated on the way (a relay), or tampered with. The link is closed
    and dialed again; ``sync`` brings back what was lost."""


class GameRunner:
    """A node's game runner (see the module docstring): the game now, and everything the
    node knows of it. :attr:`nursery` is the node's, set while it runs; :attr:`on_moved` and
    :attr:`on_closed` are the node's hooks (its spectators)."""

    nursery: trio.Nursery | None = None

    def __init__(
        self,
        options: NodeOptions,
        identity: Identity,
        stats: Stats,
        mesh: Mesh,
        route: Callable[[], Route],
    ) -> None:
        self.o = options
        self.identity = identity
        self.me = identity.public_bytes
        self.stats = stats
        self.mesh = mesh
        self.route = route  # how this peer reaches its table now, saved with every game
        self.sessions = SessionBook(options, identity, mesh.links, self)
        self.send_timeout = options.connect_timeout
        self.sync_answers = SyncAnswers()  # what a sync may bring back, bounded per asker
        self.session: PeerSession | None = None
        self.paths = FramePaths()  # how each peer's frames reach this node (the screens)
        self.saved: SavedGame | None = None
        self.file: TranscriptFile | None = None
        self.gone: set[bytes] = set()  # peers that said bye (or refused the table)
        self.ready = trio.Event()  # a game began: links may be served
        self.over = trio.Event()  # this game is over
        self.closing = trio.Event()  # the table breaks up: links end, nobody redials
        self.interrupted = False  # this peer's person (or Ctrl-C) left
        self.end: v.Finished | v.Stopped | None = None
        self.table_id = b""  # what the game links are bound to: the first game's table id
        self.resumed_between = False  # resumed in a game already over: the next one resyncs
        self.on_moved: Callable[[], None] = _nothing  # after every output handled
        self.on_closed: Callable[[], Awaitable[None]] = _nothing_more  # the links are closed
        self._turn = trio.Event()  # set whenever the session moved: a player may wake
        self._names: dict[bytes, str] = {}
        self._ended = False  # the player was told of the end
        self._deck_work: DeckWorker | None = None

    def seat_name(self, seat: int) -> str:
        assert self.session is not None
        return seat_name(self.session, self._names, seat)

    def seat_label(self, seat: int) -> str:
        assert self.session is not None
        return seat_label(self.session, self._names, seat)

    @property
    def links(self) -> Mapping[bytes, Link]:
        """The live game links, by the other peer's key (the port tells a screen who has none)."""
        return self.mesh.links

    def label(self, key: bytes) -> str:
        session = self.session
        if session is not None and key in session.seat_of:
            return self.seat_label(session.seat_of[key])
        return f"{printable(self._names.get(key, 'a peer'))} ({fingerprint_of(key)})"


    async def changed(self) -> None:
        """Return at the session's next change (a player waiting for its turn)."""
        self._turn = trio.Event()
        await self._turn.wait()


    def begin(
        self,
        saved: SavedGame,
        frames: list[bytes] | None,
        first: dict[int, FrameStream],
        *,
        later: bool = False,
    ) -> None:
        """Make (or rebuild) the session, save what a restart needs (with how this peer
        reaches the table, so that a restart reaches it the same way), start the game's
        tasks. ``later``: a session's next game, over the links of the first (whose table id
        the links stay bound to)."""
        assert self.nursery is not None
        saved = replace(saved, route=self.route())
        self.saved = saved
        keys = [e.key for e in saved.roster]
        self._names = {e.key: e.name for e in saved.roster}
        if not later:
            # the links of a session are bound to its first game's table id, the session id
            # (PROTOCOL.md §22), also when this peer resumes a later game after a restart
            config = saved.config
            self.table_id = (
                session_id(config, keys) if config.in_session else table_id(config, keys)
            )
        self.send_timeout = min(self.o.connect_timeout, saved.config.timeout)
        now = trio.current_time()
        self.stats.players = saved.config.players
        self.stats.t_start = time.time()
        if frames is None:
            saved.save()
            session = PeerSession(
                self.identity, saved.config, keys, name=saved.name, rng=drbg(saved.secret), now=now
            )
            self.file = TranscriptFile(saved.transcript, self.me, saved.config, keys)
            self.session = session
            outputs = session.start(now)
        else:
            session, replayed = PeerSession.resume(
                self.identity, saved.config, keys, saved.secret, frames, name=saved.name, now=now
            )
            self.file = TranscriptFile(
                saved.transcript, self.me, saved.config, keys, session.transcript
            )
            saved.save()  # a fresh date: the game is alive again
            self.session = session
            self.o.echo(
                f"resumed the game saved in {saved.transcript}: {len(session.moves)} moves"
                f" so far; reconnecting"
            )
            # What happened before the crash was printed then; frames go out through sync.
            outputs = [o for o in replayed if isinstance(o, v.Seated | v.Finished | v.Stopped)]
        self.tell_paths()  # the links of a session's earlier game carry this one
        # The deck's checks and passes run in worker threads, not in this loop.
        self._deck_work = DeckWorker(self, session, self.nursery)
        if hasattr(session, "max_tick_gap"):
            # Our own clock jumping this far between two ticks means this process was not
            # running (suspended): the session restarts its count instead of blaming anyone.
            session.max_tick_gap = MAX_TICK_GAP
        self.ready.set()
        self.nursery.start_soon(self._ticker)
        self.nursery.start_soon(self.o.player.play, GamePort(self))
        if not later:
            for index in range(saved.me):
                self.nursery.start_soon(self.mesh.keep, index, first.get(index))
        self.handle(outputs)
        if later and self.resumed_between:
            # Restarted between two games: the others may have started this one while we
            # were down, and their first frames of it went nowhere. Ask for them.
            self.resumed_between = False
            have = [[k, seq] for k, seq in session.sync_state().items()]
            for link in self.mesh.links.values():
                link.send_net(SYNC, {"have": have})

    def on_frame(self, frame: bytes, source: bytes) -> None:
        """A game frame from the link to ``source``."""
        session = self.session
        late = session is not None and (session.stage >= RESULT or self.over.is_set())
        if late and _kind_of(frame) == SESSION_RESULT:  # another peer's session is over
            self.sessions.take_result(source, frame)
            return
        if session is None or self.over.is_set():
            if session is not None and self.sessions.next_may_come():
                self.sessions.hold(frame, source)
            return
        self.stats.frames_in += 1
        self.stats.bytes_in += len(frame)
        now = trio.current_time()
        heard = [(key, peer.contact_at) for key, peer in session.peers.items()]
        outputs = session.receive(frame, now)
        for key, at in heard:  # a new frame of ``key`` came in on this link
            if session.peers[key].contact_at != at:
                self.paths.saw(key, source, now)
        self.handle(outputs, (source, frame))
        corrupt = next((o for o in outputs if isinstance(o, v.Rejected) and o.corrupt), None)
        if corrupt is not None:
            raise CorruptLink(f"the link carried bytes that are no signed frame ({corrupt.reason})")

    def on_net(self, link: Link, message: NetMessage) -> None:
        """A ``sync`` or ``bye`` on a game link."""
        session = self.session
        if message.kind == BYE:
            self.gone.add(link.key)
            log.info("%s is done: %s", self.label(link.key), str(message.body["reason"])[:200])
            return
        if message.kind == REFUSE:  # a joiner that will not play the table we started
            reason = printable(str(message.body["reason"])[:200])
            self.o.echo(f"{self.label(link.key)} refused the table: {reason}")
            self.gone.add(link.key)
            return
        if message.kind == NEXT:  # it may come before this peer is done with that game
            game, go = int(message.body["game"]), bool(message.body["go"])
            self.sessions.vote_in(game, link.key, go)
            return
        if message.kind == SYNC and session is not None:
            have: dict[bytes, int] = {}
            for pair in message.body["have"]:
                key, seq = pair
                if not isinstance(key, bytes) or type(seq) is not int or seq < 0:
                    raise HandshakeError("a malformed sync")
                have[key] = seq
            answers = session.frames_after(have)
            for frame in self.sync_answers.answer(link.key, answers, trio.current_time()):
                link.enqueue(frame)
            # Done with the table: say so (a peer that reconnects after the end gets what it
            # lacks, then the goodbye). Not while a session's next game may come: the link
            # carries it, and a stuck peer's periodic sync must not end it.
            if self.over.is_set() and not self.sessions.next_may_come():
                link.finish(self.bye())

    def handle(
        self, outputs: Sequence[v.Output], echo_of: tuple[bytes, bytes] | None = None
    ) -> None:
        """Act on a session's outputs. The transcript is appended first, and put on the disk
        when a frame is to go out, so a frame of ours is on disk before it can be on the wire:
        a peer restarted after a crash (or a power cut) must never sign another frame with a
        number it has sent (see :mod:`.persist`)."""
        session = self.session
        assert session is not None
        if self.file is not None:
            self.file.append(session.transcript[self.file.written :])
            if any(isinstance(out, v.Send) for out in outputs):
                self.file.sync()
        for out in outputs:
            if isinstance(out, v.Send):
                for key, link in self.mesh.links.items():
                    # never echo a frame back over the link it came in on
                    if echo_of is None or key != echo_of[0] or out.frame != echo_of[1]:
                        link.enqueue(out.frame)
            elif isinstance(out, v.Moved):
                self.stats.moves += 1
                self.o.player.moved(out.seat, out.move)
            elif isinstance(out, v.Seated):
                self._show_seats(out)
            elif isinstance(out, v.Finished | v.Stopped):
                if self.end is None:
                    self.end = out
                    self.stats.t_end = time.time()
                    if isinstance(out, v.Finished):
                        self._hand_over(session)
                if self.file is not None:
                    self.file.close()
                self.over.set()
                if not self._ended:
                    self._ended = True
                    self.o.player.ended(out, len(session.moves))
            elif isinstance(out, v.Rejected):
                log.info("refused a frame: %s", out.reason)
        if self._deck_work is not None:
            self._deck_work.kick()
        if session.my_turn and self.stats.t_first_turn is None:
            self.stats.t_first_turn = time.time()
        self._turn.set()
        self.on_moved()

    def _hand_over(self, session: PeerSession) -> None:
        """The game is done here: give every linked peer what its latest heads say it
        lacks. A peer whose link to a third one is broken hears that one's last frames
        (its ``result``) only through the others, and this peer will answer no ``wait`` of
        it any more (PROTOCOL.md §15.1: one broken link stops no game)."""
        for key, link in self.mesh.links.items():
            for frame in session.frames_lacked_by(key):
                link.enqueue(frame)

    async def _ticker(self) -> None:
        session = self.session
        assert session is not None
        synced = -float("inf")
        every = sync_interval(session.config.timeout)
        while not self.over.is_set() and self.session is session:
            await trio.sleep(TICK)
            now = trio.current_time()
            self.handle(session.tick(now))
            if self.over.is_set() or now - max(synced, session.last_progress) < every:
                continue
            if set(session.waiting_on()) - {self.me}:
                synced = now
                self._ask_links(session)

    def _ask_links(self, session: PeerSession) -> None:
        """Stuck waiting for others: send a ``sync`` on every live link, so each answers
        with the frames this peer lacks, every sender's (a third party's frame that reached
        one survivor and not this one comes back this way: PROTOCOL.md §23). At most once per
        :func:`sync_interval`; an answer is only what is missing."""
        have = [[key, seq] for key, seq in session.sync_state().items()]
        for link in list(self.mesh.links.values()):
            link.send_net(SYNC, {"have": have})

    def leave(self, reason: str, *, interrupted: bool = False) -> None:
        """Leave the table with a signed ``leave`` saying ``reason``; ``interrupted``: the
        person asked to (Ctrl-C; exit code 130)."""
        if interrupted:
            self.interrupted = True
        session = self.session
        if session is None or self.over.is_set():
            return
        self.o.echo(f"leaving the table: {reason}")
        self._turn.set()
        self.handle(session.leave(reason, trio.current_time()))

    async def play_out(self) -> Outcome:
        """Wait for the end (of every game of a session), report it, close the links
        politely; the outcome."""
        while True:
            await self.over.wait()
            if not self.sessions.next_may_come():
                # Strangers are of no use now; their descriptors may be needed to check the
                # transcript. (Between games they may be players coming back after a restart.)
                self.mesh.shed_strangers()
            with trio.move_on_after(5.0):  # the player's last words first (a person's table)
                await self.o.player.closed()
            outcome = await self._outcome()
            saved = self.saved
            if saved is None or not saved.config.in_session:
                break
            if self.sessions.resumed and not await self.sessions.recount():
                self.o.echo(
                    f"game {saved.config.game} of the session was resumed after a restart: the"
                    " session ends here for this peer (its earlier games are in their own"
                    " transcripts)"
                )
                break
            go_on = await self.sessions.between_games(outcome)
            if not go_on:
                saved.discard()  # the session ends: no vote left to come back to
                outcome = await self.sessions.end_session(outcome)
                break
            self._next_game()
        if self.saved is not None:
            self.saved.discard()  # whatever ended the session, nothing is left to resume
        linger = 1.0 if outcome.finished is None else 5.0
        await self._shutdown(min(linger, self.saved.config.timeout if self.saved else linger))
        await self.on_closed()
        return outcome

    async def _outcome(self) -> Outcome:
        session, saved, end = self.session, self.saved, self.end
        assert session is not None and saved is not None and end is not None
        if not (isinstance(end, v.Finished) and self.sessions.next_may_come()):
            saved.discard()  # over: nothing left to resume (else kept for the vote, .persist)
        names = {k: printable(p.name or self._names.get(k, "")) for k, p in session.peers.items()}
        if isinstance(end, v.Stopped):
            self._record_aborters(end.verdict)
            if end.verdict.kind == v.LEFT and end.verdict.keys == (self.me,):
                text = "you left the table; the others were told with a signed message"
            else:
                text = f"game stopped: {end.verdict.describe(names)}"
                text += v.relayed_note(end.verdict)  # what a relay's silence cannot tell (§23)
            self.o.echo(text)
            code = EXIT_INTERRUPTED if self.interrupted else EXIT_FAILED
            return Outcome(code, text, verdict=end.verdict, transcript=saved.transcript)
        losers = [self.seat_label(s) for s in end.losers]
        result = " and ".join(losers) + " lost" if losers else "a draw: nobody lost"
        self.o.echo(f"result: {result}")
        report = await trio.to_thread.run_sync(verify_transcript, saved.transcript)
        if not report.valid or report.final_state_hash != end.final_state_hash:
            text = f"the transcript {saved.transcript} does not verify: {report.fault}"
            self.o.echo(text)
            return Outcome(EXIT_FAILED, text, end, report=report, transcript=saved.transcript)
        text = f"transcript verified: {saved.transcript} (final state {end.final_state_hash[:16]})"
        self.o.echo(text)
        return Outcome(
            EXIT_OK, f"result: {result}", end, report=report, transcript=saved.transcript
        )

    def _record_aborters(self, verdict: v.Verdict) -> None:
        """A table that ended before the deal has no game for its culprits to forfeit: keep
        the table-level record instead (PROTOCOL.md section 9), so this host, or any host this
        peer opens, refuses them next time."""
        if self.o.known_peers is None or any(seat >= 0 for seat in verdict.seats):
            return
        try:
            known = KnownPeers.load(self.o.known_peers)
            for key in verdict.keys:
                if self._said_nothing(key):  # refused the table, or never came: no abort
                    continue
                # A silence over a relay may be the relay's (§23): the record says so, so a
                # host reading it can tell; it is kept all the same (else not listening would
                # make aborting free), and a relay that can do this could keep the key from
                # any table it carries anyway.
                relayed = not verdict.conviction and key in verdict.relayed
                kind = f"{verdict.kind}-via-relay" if relayed else verdict.kind
                if key != self.me and known.remember_abort(key, kind, verdict.reason):
                    self.o.echo(
                        f"{self.label(key)} ended the table before the deal: recorded in"
                        f" {self.o.known_peers}"
                    )
        except (KnownPeersError, OSError) as error:
            log.warning("cannot record the aborters: %s", error)

    def _said_nothing(self, key: bytes) -> bool:
        """Whether this game has no frame of ``key`` at all: a peer that refused the table
        for a stated reason (a changed key, another version) or never came. It saw no
        seating, so its silence can buy it nothing, and it is not an abort."""
        session = self.session
        peer = session.peers.get(key) if session is not None else None
        return peer is not None and peer.next_seq == 0 and not peer.inbox

    def _next_game(self) -> None:
        """Start the session's next game over the same links: the seats kept, the loser
        dealing (M24), the held frames of it fed in."""
        old, saved = self.session, self.saved
        assert old is not None and saved is not None and old.game_id is not None
        old_saved = saved
        assert old.game is not None
        dealer = next_dealer(old.dealer, old.game.loser)
        config = saved.config.next_game(old.game_id, old.seats, dealer)
        number = config.game
        saved = SavedGame(
            self.sessions.game_path(config, number),
            secrets.token_bytes(32),
            config,
            saved.roster,
            saved.me,
            saved.name,
            saved.host_address,
        )
        self.over = trio.Event()
        self.end = None
        self._ended = False
        self.sessions.new_game()
        self.o.echo(f"game {number} of {config.games}: seat {dealer} deals (the last loser)")
        if self.o.fresh_player is not None:  # a person's table is drawn anew for each game
            self.o.player = self.o.fresh_player()
        self.begin(saved, None, {}, later=True)
        old_saved.discard()  # the next game's state is saved: the finished one's goes
        held = self.sessions.take_held()
        for frame, source in held:
            with contextlib.suppress(CorruptLink):  # refused by the session: nothing to close
                self.on_frame(frame, source)

    async def _shutdown(self, linger: float) -> None:
        self.closing.set()
        bye = self.bye()
        for link in list(self.mesh.links.values()):
            link.finish(bye)
        with trio.move_on_after(linger):
            while self.mesh.links:
                await trio.sleep(0.02)

    def bye(self) -> str:
        """The reason of our ``bye`` (each link signs its own: :meth:`.Link.finish`)."""
        return "left" if self.interrupted else "the game is over"

    def _show_seats(self, seated: v.Seated) -> None:
        self.stats.t_seated = time.time()
        session = self.session
        assert session is not None
        seats = ", ".join(self.seat_label(s) for s in range(len(seated.seats)))
        names = [self.seat_name(s) for s in range(len(seated.seats))]
        self.o.player.seated(names, session.my_seat)
        self.o.echo(f"seats: {seats}; dealer: seat {seated.dealer}; you are seat {session.my_seat}")

    def greet(self, link: Link) -> None:
        """What a link that comes up carries first: a ``sync`` (so each side resends what
        the other lacks), our vote on the next game of a session (a link that was down
        between games), our signed session result."""
        session = self.session
        assert session is not None
        have = [[k, seq] for k, seq in session.sync_state().items()]
        link.send_net(SYNC, {"have": have})
        vote = self.sessions.vote_for_new_link()
        if vote is not None:
            link.send_net(NEXT, vote)
        if self.sessions.my_result is not None:
            link.enqueue(self.sessions.my_result)

    def tell_paths(self) -> None:
        """Tell the session which of its peers' latest links go through a relay, so that a
        verdict it signs says which paths were relayed (§7.11)."""
        session = self.session
        if session is not None and hasattr(session, "set_relayed_paths"):
            others = set(session.peers) - {session.me}
            session.set_relayed_paths(self.mesh.relayed & others)


def _nothing() -> None:
    pass


async def _nothing_more() -> None:
    pass


def _kind_of(frame: bytes) -> str:
    """A frame's kind ("" for a malformed one: the session says why)."""
    try:
        return open_frame(frame[4:])[0]
    except FrameError:
        return ""
