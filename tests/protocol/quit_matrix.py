"""The quit matrix: a seat that is losing tries to get out of its loss, in memory (sans-IO).

One *cell* is a table of seeded random bots, played twice: once untouched (the reference:
who loses, after how many moves), then again with the reference's loser, the *quitter*,
deviating from a trigger on. Triggers:

- ``decided``: the signed moves have ended the game (the engine's losers are fixed), and the
  quitter is among them;
- ``losing``: half way through the reference game (the quitter will lose it).

Faults, from the trigger on:

- ``kill``: the quitter's process is gone (it neither sends, receives nor ticks again);
- ``sigstop``: it is stopped for ``STOPPED_FOR`` s of virtual time, then runs again and reads
  what queued for it (its clock jumps: its driver's ``max_tick_gap`` sees the suspension);
- ``cut-own``: every link of the quitter is down (it runs, but hears and reaches nobody);
- ``cut-one``: the link between the quitter and one other seat is down (both ways);
- ``bogus@k``: it signs a ``timeout`` verdict naming the seat ``k`` places after it;
- ``restart-within`` / ``restart-after``: the process dies and comes back (its secret and its
  transcript, ``PeerSession.resume``) after ``RESTART_WITHIN`` or ``RESTART_AFTER`` s, and
  syncs with every peer.

What a cell measures, for every honest peer: how it ended, its verdict's kind and culprits,
its losers, whether its transcript verifies with that outcome, and whether an honest seat was
named. :func:`run_cell` plays a cell, ``scripts/adversary_matrix.py --quit`` prints the table.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from moska_p2p.bots.builtin import RandomBot
from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.session import DONE, STOPPED, PeerSession
from moska_p2p.protocol.simulate import Network, make_peers
from moska_p2p.protocol.transcript import verify_transcript, write_transcript

PRESET_FOR = {2: "moska", 3: "moska", 4: "durak", 6: "moska"}
TRIGGERS = ("decided", "losing")
TIMEOUT = 10.0
STEP = 2.0  # virtual seconds that pass when nothing moves, between two rounds of ticks
STOPPED_FOR = 12.0  # the grace is 20 s (twice the timeout)
RESTART_WITHIN = 12.0
RESTART_AFTER = 400.0
MAX_TICK_GAP = 3.0 * STEP  # what a driver ticking every STEP s takes for a suspension
HORIZON = 2000.0  # virtual seconds a cell may run after its trigger before it is "hung"


def faults(players: int) -> tuple[str, ...]:
    return (
        "kill",
        "sigstop",
        "cut-own",
        "cut-one",
        *(f"bogus@{k}" for k in range(1, players)),
        "restart-within",
        "restart-after",
    )


def _identities(n: int) -> list[Identity]:
    return [Identity.from_seed(bytes([i + 1]) * 32) for i in range(n)]


def _config(players: int, seed: int) -> TableConfig:
    return TableConfig(PRESET_FOR[players], players, bytes([seed % 256]) * 32, {}, TIMEOUT)


def _secret(seed: int, index: int) -> bytes:
    """The per-game secret ``make_peers`` seeds peer ``index`` with (resume needs it)."""
    return hashlib.sha256(f"{seed}/{index}".encode()).digest()


@dataclass
class Outcome:
    index: int
    seat: int
    ended: str  # "done", "stopped" or "hung"
    kind: str | None = None
    culprits: tuple[int, ...] = ()  # peer indices the verdict names
    losers: tuple[int, ...] = ()  # peer indices of its losers
    conviction: bool = False
    verified: bool = False
    verify_fault: str | None = None


@dataclass
class QuitCell:
    players: int
    trigger: str
    fault: str
    quitter: int
    applicable: bool = True
    outcomes: list[Outcome] = field(default_factory=list)
    error: str | None = None

    @property
    def honest_named(self) -> int:
        """Honest records that name an honest seat, or count it among the losers."""
        return sum(
            1
            for o in self.outcomes
            if any(c != self.quitter for c in o.culprits)
            and (o.conviction or o.kind not in (v.TIMEOUT, None))
        )

    @property
    def quitter_lost(self) -> int:
        return sum(1 for o in self.outcomes if self.quitter in o.losers)

    @property
    def finished(self) -> int:
        return sum(1 for o in self.outcomes if o.ended == "done")

    @property
    def rejected(self) -> int:
        return sum(1 for o in self.outcomes if not o.verified)

    @property
    def hung(self) -> int:
        return sum(1 for o in self.outcomes if o.ended == "hung")

    @property
    def agree(self) -> bool:
        """Whether every honest record that decides the game gives it the same losers."""
        decided = {o.losers for o in self.outcomes if o.ended == "done" or o.losers}
        return len(decided) <= 1

    def summary(self) -> str:
        if not self.applicable:
            return "n/a"
        if self.error:
            return "EXCEPTION"
        kinds = "/".join(sorted({o.kind or o.ended for o in self.outcomes}))
        n = len(self.outcomes)
        text = f"{kinds} lost {self.quitter_lost}/{n}"
        flags = []
        if self.honest_named:
            flags.append(f"{self.honest_named} honest named")
        if self.rejected:
            flags.append(f"{self.rejected} rejected")
        if self.hung:
            flags.append(f"{self.hung} hung")
        if not self.agree:
            flags.append("disagree")
        return text + (" !" + ",".join(flags) if flags else "")


@dataclass
class _Reference:
    loser: int  # peer index
    moves: int


_REFERENCES: dict[tuple[int, int], _Reference] = {}


class _Links:
    """The tamper hook: which links are down, and the frames of a stopped process."""

    def __init__(self) -> None:
        self.down: set[tuple[int, int]] = set()
        self.dead: set[int] = set()  # processes that neither send nor receive
        self.held: dict[int, list[bytes]] = {}  # frames queued for a stopped process
        self.watch: Callable[[], None] | None = None  # called before each delivery

    def __call__(self, source: int, target: int, frame: bytes) -> list[bytes]:
        if self.watch is not None:
            self.watch()
        if source in self.dead or (source, target) in self.down:
            return []
        if target in self.held:
            self.held[target].append(frame)
            return []
        if target in self.dead:
            return []
        return [frame]


def _bots(players: int, seed: int) -> list[RandomBot]:
    return [RandomBot(seed * 10 + i) for i in range(players)]


def reference(players: int, seed: int) -> _Reference:
    key = (players, seed)
    if key not in _REFERENCES:
        sessions = make_peers(_config(players, seed), _identities(players), seed=seed)
        net = Network(sessions)
        bots = _bots(players, seed)
        for index, session in enumerate(sessions):
            net.handle(index, session.start(0.0))
        net.deliver_all()
        moves = 0
        for _ in range(5000):
            if all(s.stage in (DONE, STOPPED) for s in sessions):
                break
            if _one_move(net, bots, set()):
                moves += 1
            else:
                _tick(net, set())
        done = sessions[0]
        assert done.stage == DONE and done.losers, "the reference game must have a loser"
        seat = done.losers[0]
        loser = next(i for i, s in enumerate(sessions) if s.my_seat == seat)
        _REFERENCES[key] = _Reference(loser, moves)
    return _REFERENCES[key]


def _one_move(net: Network, bots: list[RandomBot], frozen: set[int]) -> bool:
    net.deliver_all()
    for index, session in enumerate(net.sessions):
        if index in frozen or session.stage == STOPPED or not session.my_turn:
            continue
        assert session.game is not None
        move = bots[index].choose(session.game.view(session.my_seat), session.legal_moves())
        net.handle(index, session.play(move, net.clock))
        net.deliver_all()
        return True
    return False


def _tick(net: Network, frozen: set[int]) -> None:
    net.clock += STEP
    for index, session in enumerate(net.sessions):
        if index not in frozen:
            net.handle(index, session.tick(net.clock))
    net.deliver_all()


def sign_bogus(session: PeerSession, target: bytes) -> bytes:
    """A ``timeout`` verdict naming ``target``, signed by ``session`` as its next message."""
    return session.craft(
        m.VERDICT,
        {
            "kind": v.TIMEOUT,
            "culprits": [target],
            "reason": "did not answer",
            "evidence": [],
            "relayed": [],
        },
    )


def run_cell(players: int, trigger: str, fault: str, *, seed: int = 1) -> QuitCell:
    ref = reference(players, seed)
    quitter = ref.loser
    config = _config(players, seed)
    identities = _identities(players)
    sessions = make_peers(config, identities, seed=seed)
    for session in sessions:
        session.max_tick_gap = MAX_TICK_GAP
    links = _Links()
    net = Network(sessions, tamper=links)
    bots = _bots(players, seed)
    cell = QuitCell(players, trigger, fault, quitter)
    honest = [i for i in range(players) if i != quitter]
    frozen: set[int] = set()
    triggered_at: float | None = None
    back_at: float | None = None
    moves = 0

    def watch() -> None:
        """Start the fault at its trigger (checked before every delivery, so that a game
        decided by a move is caught before the quitter's result goes out)."""
        nonlocal triggered_at, back_at
        if triggered_at is not None:
            return
        if trigger == "decided":
            due = all((g := sessions[i].game) is not None and g.is_over for i in range(players))
        else:
            due = moves >= ref.moves // 2
        if due:
            triggered_at = net.clock
            links.watch = None
            back_at = _start_fault(fault, quitter, net, links, frozen, sessions)

    links.watch = watch
    try:
        for index, session in enumerate(sessions):
            net.handle(index, session.start(0.0))
        net.deliver_all()
        for _ in range(20_000):
            if all(sessions[i].stage in (DONE, STOPPED) for i in honest):
                break
            if triggered_at is not None and net.clock - triggered_at > HORIZON:
                break
            watch()
            if back_at is not None and net.clock >= back_at:
                back_at = None
                _end_fault(fault, quitter, net, links, frozen, sessions, config, seed)
            if _one_move(net, bots, frozen | links.dead):
                moves += 1
            else:
                _tick(net, frozen | links.dead)
    except Exception as error:  # an exception out of receive() or tick(): a finding
        cell.error = f"{type(error).__name__}: {error}"
        return cell
    if triggered_at is None:
        cell.applicable = False
        return cell
    index_of = {s.me: i for i, s in enumerate(sessions)}
    directory = Path(tempfile.mkdtemp(prefix="moska-quit-"))
    for i in honest:
        s = sessions[i]
        ended = "done" if s.stage == DONE else "stopped" if s.stage == STOPPED else "hung"
        by_seat = {seat: index_of[k] for seat, k in enumerate(s.seats)}
        outcome = Outcome(i, s.my_seat, ended, losers=tuple(by_seat[x] for x in s.losers))
        if s.verdict is not None:
            outcome.kind = s.verdict.kind
            outcome.culprits = tuple(sorted(index_of.get(k, -1) for k in s.verdict.keys))
            outcome.conviction = s.verdict.conviction
        path = directory / f"{players}-{trigger}-{fault}-{i}.moska"
        write_transcript(path, s.me, s.config, s.roster, s.transcript)
        report = verify_transcript(path)
        same = report.losers == list(s.losers)
        outcome.verified = report.valid and same
        outcome.verify_fault = report.fault or (None if same else f"verify: {report.losers}")
        cell.outcomes.append(outcome)
    return cell


def _start_fault(
    fault: str,
    quitter: int,
    net: Network,
    links: _Links,
    frozen: set[int],
    sessions: list[PeerSession],
) -> float | None:
    """Make the fault happen; the virtual time it ends at (None: it never does)."""
    players = len(sessions)
    if fault in ("kill", "restart-within", "restart-after"):
        links.dead.add(quitter)
        net.queue = type(net.queue)(item for item in net.queue if item[0] != quitter)
        if fault == "kill":
            return None
        return net.clock + (RESTART_WITHIN if fault == "restart-within" else RESTART_AFTER)
    if fault == "sigstop":
        frozen.add(quitter)
        links.held[quitter] = []
        return net.clock + STOPPED_FOR
    if fault == "cut-own":
        for other in range(players):
            if other != quitter:
                links.down |= {(quitter, other), (other, quitter)}
        return None
    if fault == "cut-one":
        other = (quitter + 1) % players
        links.down |= {(quitter, other), (other, quitter)}
        return None
    if fault.startswith("bogus@"):
        seats = sessions[quitter].seats
        me = sessions[quitter].my_seat
        target = seats[(me + int(fault.split("@")[1])) % players]
        frame = sign_bogus(sessions[quitter], target)
        links.dead.add(quitter)  # it says nothing else
        for other in range(players):
            if other != quitter:
                net.handle(other, sessions[other].receive(frame, net.clock))
        net.deliver_all()
        return None
    raise AssertionError(fault)


def _end_fault(
    fault: str,
    quitter: int,
    net: Network,
    links: _Links,
    frozen: set[int],
    sessions: list[PeerSession],
    config: TableConfig,
    seed: int,
) -> None:
    if fault == "sigstop":
        frozen.discard(quitter)
        held = links.held.pop(quitter)
        session = sessions[quitter]
        for frame in held:
            net.handle(quitter, session.receive(frame, net.clock))
        net.handle(quitter, session.tick(net.clock))
        net.deliver_all()
        return
    # A restart: the process comes back from its secret and its transcript, and syncs.
    old = sessions[quitter]
    assert old.identity is not None
    links.dead.discard(quitter)
    new, outputs = PeerSession.resume(
        old.identity,
        config,
        old.roster,
        _secret(seed, quitter),
        list(old.transcript),
        name=old.name,
        now=net.clock,
    )
    new.max_tick_gap = MAX_TICK_GAP
    sessions[quitter] = new
    net.sessions[quitter] = new
    del outputs  # its own frames again: the others hold them
    have = new.sync_state()
    for other, session in enumerate(sessions):
        if other == quitter:
            continue
        for frame in session.frames_after(have):
            net.handle(quitter, new.receive(frame, net.clock))
        for frame in new.frames_after(session.sync_state()):
            net.handle(other, session.receive(frame, net.clock))
    net.deliver_all()


def matrix(
    sizes: tuple[int, ...] = (2, 3, 4, 6), triggers: tuple[str, ...] = TRIGGERS, *, seed: int = 1
) -> list[QuitCell]:
    return [
        run_cell(players, trigger, fault, seed=seed)
        for players in sizes
        for trigger in triggers
        for fault in faults(players)
    ]


def table_text(cells: list[QuitCell]) -> str:
    """One row per (seats, trigger), one column per fault."""
    columns = ["kill", "sigstop", "cut-own", "cut-one", "bogus", "restart-within", "restart-after"]
    rows: dict[tuple[int, str], dict[str, list[str]]] = {}
    for c in cells:
        column = "bogus" if c.fault.startswith("bogus@") else c.fault
        rows.setdefault((c.players, c.trigger), {}).setdefault(column, []).append(c.summary())
    lines = ["| seats | quits when | " + " | ".join(columns) + " |"]
    lines.append("|---|---|" + "---|" * len(columns))
    for (players, trigger), row in rows.items():
        lines.append(
            f"| {players} | {trigger} | "
            + " | ".join("; ".join(row.get(col, [])) for col in columns)
            + " |"
        )
    lines.append(
        f"{len(cells)} cells, {sum(c.honest_named for c in cells)} honest records naming an"
        f" honest seat, {sum(c.rejected for c in cells)} rejected,"
        f" {sum(1 for c in cells if not c.agree)} disagreeing,"
        f" quitter lost in {sum(c.quitter_lost for c in cells)} of"
        f" {sum(len(c.outcomes) for c in cells)} honest records"
    )
    return "\n".join(lines)
