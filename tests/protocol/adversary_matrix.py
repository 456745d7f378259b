"""The adversary matrix: every stage of a game, every way a modified client can
deviate there, at 3, 4 and 6 seats, in memory (sans-IO).

One *cell* is a table of seeded random bots where one peer, the cheater, deviates at one
message. The cheater is a real :class:`PeerSession` that plays honestly in its own eyes; the
network's tamper hook changes what the others receive from it, re-signing with its key as a
modified client would. Faults:

- ``withhold``: nothing more from the cheater from that message on;
- ``leave``: a signed ``leave`` in place of that message;
- ``equivocate``: two versions of that message, both valid (a different shuffle with its own
  correct proof, a different legal move, the same keys in another order, or the same body under
  other heads), one to some honest peers and one to the others; later messages chain on each;
- ``false``: a valid-looking, correctly signed message that breaks a rule (a proof with a byte
  changed, a wrong key, an illegal move, another result...);
- ``replay``: an older frame of the cheater sent again in place of that message.

Stages: hello, seat, pass 1 and pass 2 at every seat, the first keys, a D3 claim (Durak
tables), the first move, a later key release (a reveal), the result. The disclosure is too
rare in random play to sit in the matrix; its faults are pinned at two seats by the vector
game ``game-durak-disclose-2`` (``test_vectors.py``).

What each cell must show: every honest peer ends (a verdict, or the end of the game when the
deviation changed nothing the rules see); a verdict names the cheater and never an honest
seat; every honest peer's transcript verifies with the verdict it reached live; no exception
leaves ``receive()`` or ``tick()``. :func:`run_cell` measures it; ``tests/protocol/
test_adversary_matrix.py`` asserts it and ``scripts/adversary_matrix.py`` prints the table.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from moska_p2p.bots.builtin import RandomBot
from moska_p2p.crypto import deck as mp
from moska_p2p.crypto import group
from moska_p2p.crypto.identity import Identity
from moska_p2p.engine import Move
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.deck_phase import STAGE_PASS1, STAGE_PASS2
from moska_p2p.protocol.frames import open_frame
from moska_p2p.protocol.play_phase import hand_cards
from moska_p2p.protocol.session import DONE, STOPPED, PeerSession
from moska_p2p.protocol.simulate import Network, make_peers
from moska_p2p.protocol.transcript import verify_transcript, write_transcript

FAULTS = ("withhold", "leave", "equivocate", "false", "replay")
PRESET_FOR = {3: "moska", 4: "durak", 6: "moska"}  # durak has D3 claims; moska a stock at 6
TIMEOUT = 10.0


def stages(players: int) -> list[str]:
    return [
        "hello",
        "seat",
        *(f"shuffle1@{k}" for k in range(players)),
        *(f"shuffle2@{k}" for k in range(players)),
        "first-keys",
        *(["claim"] if PRESET_FOR[players] == "durak" else []),
        "move",
        "reveal",
        "result",
    ]


def _msg(frame: bytes) -> m.Message:
    _, payload, _ = open_frame(frame[4:])
    return m.parse_payload(payload)


def _identities(n: int) -> list[Identity]:
    return [Identity.from_seed(bytes([i + 1]) * 32) for i in range(n)]


def _config(players: int, seed: int) -> TableConfig:
    return TableConfig(PRESET_FOR[players], players, bytes([seed % 256]) * 32, {}, TIMEOUT)


def seating(players: int, seed: int) -> list[int]:
    """The peer index at each seat for this table (seats come from the seeded secrets, so a
    run to the seat draw, which costs no proof, tells who the cheater of a seat will be)."""
    sessions = make_peers(_config(players, seed), _identities(players), seed=seed)
    net = Network(sessions)
    for index, session in enumerate(sessions):
        net.handle(index, session.start(0.0))
    net.deliver_all()
    return [next(i for i, s in enumerate(sessions) if s.me == key) for key in sessions[0].seats]


@dataclass
class Outcome:
    """What one honest peer ended with."""

    index: int
    seat: int
    ended: str  # "done", "stopped" or "hung"
    kind: str | None = None
    culprits: tuple[int, ...] = ()  # peer indices named
    verified: bool = False
    verify_fault: str | None = None


@dataclass
class CellResult:
    players: int
    stage: str
    fault: str
    cheater: int
    applicable: bool = True
    outcomes: list[Outcome] = field(default_factory=list)
    error: str | None = None  # an exception out of receive() or tick()

    @property
    def honest_named(self) -> int:
        return sum(1 for o in self.outcomes if any(c != self.cheater for c in o.culprits))

    @property
    def unnamed(self) -> int:
        """Honest peers that stopped without naming the cheater."""
        return sum(1 for o in self.outcomes if o.ended == "stopped" and not o.culprits)

    @property
    def rejected(self) -> int:
        return sum(1 for o in self.outcomes if not o.verified)

    @property
    def hung(self) -> int:
        return sum(1 for o in self.outcomes if o.ended == "hung")

    @property
    def convicted(self) -> int:
        return sum(1 for o in self.outcomes if o.culprits == (self.cheater,))

    @property
    def ok(self) -> bool:
        if not self.applicable:
            return True
        if self.error or self.honest_named or self.unnamed or self.rejected or self.hung:
            return False
        stopped = [o for o in self.outcomes if o.ended == "stopped"]
        # A deviation the rules see stops every honest peer; only an equivocation that changed
        # nothing (the same body under other heads, at the very end) may let the game finish.
        return self.fault == "equivocate" or len(stopped) == len(self.outcomes)

    def summary(self) -> str:
        if not self.applicable:
            return "n/a"
        if self.error:
            return "EXCEPTION"
        kinds = sorted({o.kind or o.ended for o in self.outcomes})
        flags = []
        if self.honest_named:
            flags.append(f"{self.honest_named} honest named")
        if self.rejected:
            flags.append(f"{self.rejected} rejected")
        if self.hung:
            flags.append(f"{self.hung} hung")
        if self.unnamed:
            flags.append(f"{self.unnamed} unnamed")
        return "/".join(kinds) + (" !" + ",".join(flags) if flags else "")


class Adversary:
    """The tamper hook of one cell: what the cheater's frames become on their way out."""

    def __init__(self, net: Network, cheater: int, stage: str, fault: str, group_a: set[int]):
        self.net = net
        self.cheater = cheater
        self.stage = stage
        self.fault = fault
        self.group_a = group_a  # honest peers that get the cheater's real message
        self.target: int | None = None  # the cheater's sequence number of the target
        self.keys_seen: list[bytes] = []  # the cheater's keys messages, in order
        self.alternative_move: dict[str, Any] | None = None
        self.forged: dict[bytes, bytes] = {}  # original hash -> the other version's frame
        self.renamed: dict[bytes, bytes] = {}  # original hash -> the other version's hash
        self.rng = random.Random(f"{cheater}/{stage}/{fault}")

    @property
    def session(self) -> PeerSession:
        return self.net.sessions[self.cheater]

    # -- which message is the target

    def _is_target(self, msg: m.Message) -> bool:
        stage = self.stage
        if stage == "hello":
            return msg.type == m.HELLO
        if stage == "seat":
            return msg.type == m.SEAT
        if stage.startswith("shuffle"):
            return msg.type == stage.split("@")[0]
        if stage == "first-keys":
            return msg.type == m.KEYS
        if stage == "reveal":
            if msg.type == m.KEYS and msg.hash not in self.keys_seen:
                self.keys_seen.append(msg.hash)
            return len(self.keys_seen) >= 2 and msg.hash == self.keys_seen[1]
        if stage == "move":
            return msg.type == m.MOVE
        if stage == "claim":
            return msg.type == m.CLAIM
        if stage == "result":
            return msg.type == m.RESULT
        raise AssertionError(stage)

    def before_move(self, session: PeerSession, legal: list[Move], chosen: Move) -> None:
        """The cheater is about to play ``chosen``: remember another legal move with its
        cards, for an equivocation at the move stage (its state is the state of now)."""
        if self.stage != "move" or self.target is not None or self.alternative_move:
            return
        g = session.game
        others = [move for move in legal if move != chosen]
        if g is None or session.deck is None or not others:
            return
        other = others[0]
        seat = session.my_seat
        cards = [
            [g.pos_of[card], session.deck.my_key(g.pos_of[card])]
            for card in hand_cards(g, other)
            if not g.shown[seat] >> card & 1
        ]
        self.alternative_move = {
            "move": str(other),
            "state": bytes.fromhex(g.state_hash()),
            "cards": cards,
        }

    def __call__(self, source: int, target: int, frame: bytes) -> list[bytes]:
        msg = _msg(frame)
        if msg.sender != self.session.me:
            return [frame]
        if target == self.cheater:
            return []  # the cheater knows what it sent
        if source != self.cheater:
            return [frame]  # an honest peer relaying: not the cheater's to change
        if self.target is None and self._is_target(msg):
            self.target = msg.seq
        if self.target is None or msg.seq < self.target:
            return [frame]
        at_target = msg.seq == self.target
        if self.fault == "withhold":
            return []
        if self.fault == "leave":
            if not at_target:
                return []
            return [self._sign(m.LEAVE, {"reason": "changed my mind"}, msg)]
        if self.fault == "replay":
            if not at_target:
                return []
            return [self._older(msg)]
        if self.fault == "false":
            if not at_target:
                return []
            return [self._sign(msg.type, self._falsify(msg), msg)]
        if self.fault == "equivocate":
            if target in self.group_a:
                return [frame]
            return [self._other_version(msg, at_target, frame)]
        raise AssertionError(self.fault)

    # -- the faults

    def _sign(
        self,
        kind: str,
        body: dict[str, Any],
        msg: m.Message,
        *,
        prev: bytes | None = None,
        heads: list[tuple[int, bytes]] | None = None,
    ) -> bytes:
        return self.session.craft(
            kind,
            body,
            seq=msg.seq,
            prev=msg.prev if prev is None else prev,
            game=msg.game,
            heads=list(msg.heads) if heads is None else heads,
        )

    def _older(self, msg: m.Message) -> bytes:
        """The cheater's previous frame again (its hello of another table for a hello)."""
        if msg.seq == 0:
            other = TableConfig(
                self.session.config.preset,
                self.session.config.players,
                b"\xee" * 32,
                dict(self.session.config.options),
                self.session.config.timeout,
            )
            stranger = PeerSession(
                self.session.identity, other, self.session.roster, rng=random.Random(1).randbytes
            )
            return next(o.frame for o in stranger.start(0.0) if isinstance(o, v.Send))
        return self.session.peers[self.session.me].accepted[msg.seq - 1][1]

    def _falsify(self, msg: m.Message) -> dict[str, Any]:
        body = m.to_wire(msg.body)
        kind = msg.type
        if kind == m.HELLO:
            config = dict(body["config"])
            config["timeout"] = float(config.get("timeout", TIMEOUT)) + 1.0
            body["config"] = config
        elif kind == m.SEAT:
            body["secret"] = bytes(32)
        elif kind in (m.SHUFFLE1, m.SHUFFLE2):
            proof = bytearray(body["proof"])
            proof[40] ^= 1
            body["proof"] = bytes(proof)
        elif kind in (m.KEYS, m.DISCLOSE):
            pairs = [list(p) for p in body["keys"]]
            pairs[0][1] = _some_scalar(self.rng)
            body["keys"] = pairs
        elif kind == m.MOVE:
            if body["cards"]:
                pairs = [list(p) for p in body["cards"]]
                pairs[0][1] = _some_scalar(self.rng)
                body["cards"] = pairs
            else:
                body["move"] = "attack 2C" if body["move"] != "attack 2C" else "attack 2D"
        elif kind == m.RESULT:
            body["losers"] = [] if body["losers"] else [0]
        elif kind == m.CLAIM:
            body["card"] = self._wrong_claim(msg)
        return body

    def _wrong_claim(self, msg: m.Message) -> list[Any] | None:
        """A D3 claim that lies: deny the trump it holds (caught when it is shown, or at
        the disclosure), or show another card of its hand as that trump."""
        if msg.body.card is not None:
            return None
        s = self.session
        g = s.game
        assert g is not None and s.deck is not None
        hand = g.hands[s.my_seat]
        card = (hand & -hand).bit_length() - 1
        return [g.pos_of[card], s.deck.my_key(g.pos_of[card])]

    def _other_version(self, msg: m.Message, at_target: bool, frame: bytes) -> bytes:
        """What the second group receives: another valid version of the target, then the
        cheater's later messages chained on it."""
        if msg.hash in self.forged:
            return self.forged[msg.hash]
        if at_target:
            body, heads = self._variant(msg)
            new = self._sign(msg.type, body, msg, heads=heads)
        elif msg.prev in self.renamed:
            new = self._sign(msg.type, m.to_wire(msg.body), msg, prev=self.renamed[msg.prev])
        else:  # pragma: no cover - every later message chains on the target
            return frame  # unreachable in practice
        self.forged[msg.hash] = new
        self.renamed[msg.hash] = _msg(new).hash
        return new

    def _variant(self, msg: m.Message) -> tuple[dict[str, Any], list[tuple[int, bytes]] | None]:
        """Another valid body (or the same body under other heads) for the target."""
        s = self.session
        body = m.to_wire(msg.body)
        kind = msg.type
        quiet = [
            (0, b"") if k != s.me else head for k, head in zip(s.roster, msg.heads, strict=True)
        ]
        if kind == m.HELLO:
            body["nonce"] = hashlib.sha256(b"another nonce" + body["nonce"]).digest()
            return body, None
        deck = s.deck
        if kind == m.SHUFFLE1 and deck is not None and deck.secrets is not None:
            seat = s.my_seat
            points = deck.pass1[seat - 1] if seat else deck.initial
            permutation = tuple(reversed(deck.secrets.permutation))
            secrets = dataclasses.replace(deck.secrets, permutation=permutation)
            out, proof = mp.pass1(secrets, deck.context(seat, STAGE_PASS1), points)
            return {"scalar": body["scalar"], "points": out, "proof": proof}, None
        if kind == m.SHUFFLE2 and deck is not None and deck.secrets is not None:
            seat = s.my_seat
            points = deck.pass2[seat - 1] if seat else deck.pass1[-1]
            keys = tuple(group.scalar_add(key, group.scalar_of_int(1)) for key in deck.secrets.keys)
            secrets = dataclasses.replace(deck.secrets, keys=keys)
            out, key_points, proof = mp.pass2(secrets, deck.context(seat, STAGE_PASS2), points)
            return {"points": out, "keys": key_points, "proof": proof}, None
        if kind == m.KEYS and len(body["keys"]) > 1:
            body["keys"] = list(reversed(body["keys"]))
            return body, None
        if kind == m.MOVE and self.alternative_move is not None:
            return dict(self.alternative_move), None
        return body, quiet


def _some_scalar(rng: random.Random) -> bytes:
    return group.scalar_reduce(rng.randbytes(64))


def run_cell(
    players: int,
    stage: str,
    fault: str,
    *,
    seed: int = 1,
    split: str = "half",
    max_moves: int = 3000,
    transcripts: Path | None = None,
    network: Callable[[list[PeerSession]], Network] = Network,
) -> CellResult:
    """Play one cell of the matrix and measure what every honest peer ended with
    (``network``: the in-memory network to play it on)."""
    config = _config(players, seed)
    identities = _identities(players)
    seats = seating(players, seed)
    at = int(stage.split("@")[1]) if stage.startswith("shuffle") else 1 % players
    cheater = seats[at]
    honest = [i for i in seats if i != cheater]  # in seat order
    # "next": only the seat after the cheater gets the real message; "half": half the table
    group_a = {honest[0]} if split == "next" else set(honest[: max(1, len(honest) // 2)])
    sessions = make_peers(config, identities, seed=seed)
    net = network(sessions)
    adversary = Adversary(net, cheater, stage, fault, group_a)
    net.tamper = adversary
    result = CellResult(players, stage, fault, cheater)
    bots = [RandomBot(seed * 10 + i) for i in range(players)]
    try:
        for index, session in enumerate(sessions):
            net.handle(index, session.start(net.clock))
        net.deliver_all()
        for _ in range(max_moves):
            if all(sessions[i].stage in (DONE, STOPPED) for i in honest):
                break
            if not _one_move(net, bots, adversary):
                net.clock += TIMEOUT * 0.3
                for index, session in enumerate(sessions):
                    net.handle(index, session.tick(net.clock))
                net.deliver_all()
    except Exception as error:  # an exception out of receive() or tick(): a finding
        result.error = f"{type(error).__name__}: {error}"
        return result
    if adversary.target is None:
        result.applicable = False  # the game never reached that message of the cheater
        return result
    index_of = {s.me: i for i, s in enumerate(sessions)}
    directory = transcripts or Path(tempfile.mkdtemp(prefix="moska-matrix-"))
    for i in honest:
        s = sessions[i]
        ended = "done" if s.stage == DONE else "stopped" if s.stage == STOPPED else "hung"
        outcome = Outcome(i, s.my_seat, ended)
        if s.verdict is not None:
            outcome.kind = s.verdict.kind
            outcome.culprits = tuple(sorted(index_of.get(k, -1) for k in s.verdict.keys))
        path = directory / f"{players}-{stage}-{fault}-{i}.moska"
        write_transcript(path, s.me, s.config, s.roster, s.transcript)
        report = verify_transcript(path)
        same = report.losers == list(s.losers)
        if s.verdict is not None:
            same = same and (report.verdict_kind, report.culprits) == (
                s.verdict.kind,
                s.verdict.keys,
            )
        outcome.verified = report.valid and same
        outcome.verify_fault = report.fault or (None if same else f"verify says {report.verdict}")
        result.outcomes.append(outcome)
    return result


def _one_move(net: Network, bots: list[RandomBot], adversary: Adversary) -> bool:
    net.deliver_all()
    for index, session in enumerate(net.sessions):
        if session.stage == STOPPED or not session.my_turn or session.game is None:
            continue
        legal = session.legal_moves()
        move = bots[index].choose(session.game.view(session.my_seat), legal)
        if index == adversary.cheater:
            adversary.before_move(session, legal, move)
        net.handle(index, session.play(move, net.clock))
        net.deliver_all()
        return True
    return False


def matrix(
    sizes: tuple[int, ...] = (3, 4, 6),
    faults: tuple[str, ...] = FAULTS,
    *,
    only: Callable[[int, str, str], bool] | None = None,
    seed: int = 1,
) -> list[CellResult]:
    out = []
    for players in sizes:
        for stage in stages(players):
            for fault in faults:
                if only is None or only(players, stage, fault):
                    out.append(run_cell(players, stage, fault, seed=seed))
    return out


def table_text(results: list[CellResult]) -> str:
    """The matrix as a text table: one row per (seats, stage), one column per fault."""
    rows: dict[tuple[int, str], dict[str, str]] = {}
    for r in results:
        rows.setdefault((r.players, r.stage), {})[r.fault] = r.summary()
    faults = [f for f in FAULTS if any(f in row for row in rows.values())]
    lines = ["| seats | stage | " + " | ".join(faults) + " |"]
    lines.append("|---|---|" + "---|" * len(faults))
    for (players, stage), row in rows.items():
        cells = " | ".join(row.get(f, "") for f in faults)
        lines.append(f"| {players} | {stage} | {cells} |")
    bad = [r for r in results if not r.ok]
    lines.append(
        f"{len(results)} cells, {sum(r.honest_named for r in results)} honest seats named, "
        f"{sum(r.rejected for r in results)} honest transcripts rejected, {len(bad)} failing"
    )
    return "\n".join(lines)
