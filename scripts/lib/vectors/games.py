"""``games.json`` with ``game-*.moska`` (whole-game transcripts and what ``verify``
reports) and ``sessions.json`` (sessions of games, PROTOCOL.md §22).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import msgpack

from moska_p2p.crypto.identity import Identity, signing_input
from moska_p2p.protocol.config import TableConfig, table_id
from moska_p2p.protocol.frames import (
    open_frame,
)
from moska_p2p.protocol.session import (
    STAGES,
)
from moska_p2p.protocol.transcript import verify_transcript, write_transcript
from scripts.lib.vectors.base import (
    IDENTITY_SEEDS,
    TABLE_NONCE,
    Table,
    claims_of,
    disclosures_of,
    hexes,
    jv,
    message,
    stage_name,
)

# -- whole games ---------------------------------------------------------------------------------

GAMES: list[tuple[str, str, int, int, dict[str, str]]] = [
    ("game-mustamaija-2.moska", "mustamaija", 2, 14, {}),
    ("game-durak-3.moska", "durak", 3, 36, {}),  # D3 claim rounds
]
# A denial settled at the end: peers that keep their trumps (seed from disclosing_seed()).
DISCLOSE_GAME = ("game-durak-disclose-2.moska", "durak", 2, 3)


def game_table(
    preset: str, players: int, seed: int, options: dict[str, str], keep_trumps: bool = False
) -> Table:
    t = Table(preset, players, seed=seed, **options)  # type: ignore[arg-type]
    t.keep_trumps = keep_trumps
    t.start()
    t.play_out()
    assert all(p.stage == STAGES.index("done") for p in t.peers), [stage_name(p) for p in t.peers]
    return t


def disclosing_seed() -> int:
    """The first seed from 1 whose durak game, played by peers that keep their trumps, ends
    with a disclosure (rare in random play: the loser must still hold a card face down from
    its hand at a claim round, and have drawn the denied trump and kept it)."""
    _, preset, players, _ = DISCLOSE_GAME
    for seed in range(1, 400):
        t = Table(preset, players, seed=seed)
        t.keep_trumps = True
        t.start()
        t.play_out(max_moves=600)
        if all(p.stage == STAGES.index("done") for p in t.peers) and disclosures_of(t.watched):
            return seed
    raise AssertionError("no seed with a disclosure")  # pragma: no cover


def game_entry(directory: Path, file_name: str, t: Table) -> dict[str, Any]:
    owner = t.watched
    path = directory / file_name
    write_transcript(path, owner.me, t.config, owner.roster, owner.transcript)
    report = verify_transcript(path)
    assert report.valid, report.fault
    kinds: dict[str, int] = {}
    for frame in owner.transcript:
        kind = message(frame).type
        kinds[kind] = kinds.get(kind, 0) + 1
    return {
        "file": file_name,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "preset": t.config.preset,
        "players": t.config.players,
        "seed": t.seed,
        "config": jv(t.config.to_wire()),
        "peers": t.peers_json(),
        "dealer": owner.dealer,
        "seats": [k.hex() for k in owner.seats],
        "message_counts": kinds,
        "moves": [[seat, text] for seat, text in owner.moves],
        "claims": claims_of(owner),
        "disclosures": disclosures_of(owner),
        "verify": report.to_json(),
    }


def game_vectors(directory: Path) -> tuple[dict[str, Any], Table, Table]:
    games = []
    durak = None
    for file_name, preset, players, seed, options in GAMES:
        t = game_table(preset, players, seed, options)
        games.append(game_entry(directory, file_name, t))
        if preset == "durak":
            durak = t
    assert durak is not None
    file_name, preset, players, seed = DISCLOSE_GAME
    disclosing = game_table(preset, players, seed, {}, keep_trumps=True)
    assert disclosures_of(disclosing.watched), "no disclosure: pick a seed with disclosing_seed()"
    games.append(game_entry(directory, file_name, disclosing))
    return (
        {
            "description": (
                "Whole games played by honest peers; each .moska file is peer index 0's "
                "transcript (PROTOCOL.md section 17), which verifies with no secret. 'verify' "
                "is what verify_transcript reports for it; 'claims' are the D3 claims "
                "[seat, rank, shown position or null], 'disclosures' [seat, positions]."
            ),
            "games": games,
        },
        durak,
        disclosing,
    )


def session_vectors() -> dict[str, Any]:
    """Sessions of games (PROTOCOL.md §22): the settings of a session's first and second
    game with their canonical forms and ids, a signed session result, and the ``next`` link
    message, signed over the id of a link of that session (from example nonces)."""
    from moska_p2p.protocol.config import session_id
    from moska_p2p.protocol.frames import SESSION_RESULT
    from moska_p2p.protocol.tally import GameRecord, sign_result

    ids = [Identity.from_seed(s) for s in IDENTITY_SEEDS[:2]]
    roster = sorted(i.public_bytes for i in ids)
    first = TableConfig("durak", 2, TABLE_NONCE, games=3)
    previous = hashlib.sha256(b"game 1").digest()
    seats = [roster[1], roster[0]]
    second = first.next_game(previous, seats, 1)

    def settings(config: TableConfig) -> dict[str, Any]:
        return {
            "config": jv(config.to_wire()),
            "canonical": config.canonical().hex(),
            "table_id": table_id(config, roster).hex(),
            "session_id": session_id(config, roster).hex(),
        }

    games = [
        GameRecord(1, previous, hashlib.sha256(b"state 1").digest(), (1,), False, 0),
        GameRecord(2, table_id(second, roster), b"", (0,), True, 1),
    ]
    digests = [hashlib.sha256(f"transcript {n}".encode()).digest() for n in (1, 2)]
    sid = session_id(first, roster)
    frame = sign_result(ids[0], sid, seats, games, digests, [], "game 2 was stopped by a verdict")
    kind, payload, signature = open_frame(frame[4:])
    assert kind == SESSION_RESULT
    return {
        "roster_sorted": hexes(roster),
        "first_game": settings(first),
        "second_game": settings(second),
        "result": {
            "signer_seed": IDENTITY_SEEDS[0].hex(),
            "frame": frame.hex(),
            "kind": kind,
            "payload": jv(msgpack.unpackb(payload, raw=False)),
            "signature": signature.hex(),
            "signing_input_sha256": hashlib.sha256(signing_input(kind, payload)).hexdigest(),
        },
        "next": next_vector(ids[1], ids[0], sid),
        "watch": watch_vector(Identity.from_seed(bytes([9]) * 32), ids[0], first, second),
    }


def watch_vector(
    watcher: Identity, host: Identity, lobby: TableConfig, game: TableConfig
) -> dict[str, Any]:
    """A spectator's handshake with the host of the table ``lobby`` (example nonces): both
    proofs, the watch id they give, and the host's ``net/game`` for ``game`` signed over it
    (PROTOCOL.md §23, "Spectators")."""
    from moska_p2p.net.watch_proto import HOST, WATCHER, watch_id, watch_proof, watch_transcript
    from moska_p2p.net.wire import GAME, net_frame
    from moska_p2p.protocol.config import lobby_id

    parts = (
        lobby_id(lobby),
        watcher.public_bytes,
        host.public_bytes,
        bytes([9]) * 32,
        bytes([10]) * 32,
    )
    wid = watch_id(*parts)
    frame = net_frame(host, GAME, {"game": game.game, "config": game.to_wire()}, wid)
    _, payload, _ = open_frame(frame[4:])
    proofs = {}
    for role in (WATCHER, HOST):
        signer = watcher if role == WATCHER else host
        data = watch_transcript(*parts, role)
        proofs[role.decode()] = {
            "signing_input_sha256": hashlib.sha256(
                signing_input("net/watch-auth", data)
            ).hexdigest(),
            "proof": watch_proof(signer, *parts, role).hex(),
        }
    return {
        "watcher_seed": (bytes([9]) * 32).hex(),
        "table": parts[0].hex(),
        "watcher": parts[1].hex(),
        "host": parts[2].hex(),
        "watcher_nonce": parts[3].hex(),
        "host_nonce": parts[4].hex(),
        "proofs": proofs,
        "watch_id": wid.hex(),
        "game_frame": frame.hex(),
        "game_signing_input_sha256": hashlib.sha256(
            signing_input("net/game", wid + payload)
        ).hexdigest(),
    }


def next_vector(dialer: Identity, listener: Identity, session: bytes) -> dict[str, Any]:
    """The ``dialer``'s ``net/next`` on a link of the session ``session`` to ``listener``:
    the handshake's parts (example nonces), the link id they give and the frame signed over
    it (PROTOCOL.md §22, §23)."""
    from moska_p2p.net.wire import NEXT, link_id, net_frame

    parts = (session, dialer.public_bytes, listener.public_bytes, bytes([7]) * 32, bytes([8]) * 32)
    link = link_id(*parts)
    frame = net_frame(dialer, NEXT, {"game": 1, "go": True}, link)
    _, payload, _ = open_frame(frame[4:])
    return {
        "table": parts[0].hex(),
        "dialer": parts[1].hex(),
        "listener": parts[2].hex(),
        "dialer_nonce": parts[3].hex(),
        "listener_nonce": parts[4].hex(),
        "link_id": link.hex(),
        "frame": frame.hex(),
        "signing_input_sha256": hashlib.sha256(
            signing_input("net/next", link + payload)
        ).hexdigest(),
    }
