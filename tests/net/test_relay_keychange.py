"""A known player's new key, with three peers: a refusal for a stated reason is no abort, and
the key change is a flow a person can follow (the old key vouches for the new one, ``moska
trust STATEMENT``; or ``moska trust NAME`` forgets the old key)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import msgpack
import pytest
import trio
from typer.testing import CliRunner

from moska_p2p.bots.loader import load_bot
from moska_p2p.cli import app
from moska_p2p.crypto.identity import Identity, fingerprint_of
from moska_p2p.net.known import (
    NEW_KEY,
    STATEMENT,
    KnownPeers,
    StatementError,
    key_change_statement,
    parse_statement,
)
from moska_p2p.net.node import Node, NodeOptions, Outcome
from moska_p2p.net.state import EXIT_FAILED, EXIT_OK
from moska_p2p.protocol.config import TableConfig
from moska_p2p.table.networked import BotAtTable

LOOPBACK = "127.0.0.1"


def _config(players: int) -> TableConfig:
    return TableConfig("moska", players, bytes(32), {}, 4.0)


class Person:
    """A player's key and known-peers file."""

    def __init__(self, tmp_path: Path, name: str) -> None:
        self.name = name
        self.identity = Identity.generate()
        self.known = tmp_path / f"{name}.known_peers"
        self.folder = tmp_path / name
        self.folder.mkdir()
        self.echo: list[str] = []

    def node(self, **more: Any) -> Node:
        return Node(
            NodeOptions(
                identity=self.identity,
                player=BotAtTable(load_bot("random", seed=1)),
                transcript=self.folder / f"{len(self.echo)}.moska",
                name=self.name,
                bind=LOOPBACK,
                connect_timeout=5.0,
                lobby_wait=30.0,
                echo=self.echo.append,
                known_peers=self.known,
                **more,
            )
        )


def _met(host: Person, *people: Person) -> None:
    """Every one of them played at ``host``'s tables: each file knows every name's key."""
    players = [(p.name, p.identity.public_bytes) for p in (host, *people)]
    for person in (host, *people):
        KnownPeers.load(person.known).remember(host.identity.public_bytes, players)


async def _table(host: Person, *joiners: Person) -> list[Outcome]:
    outcomes: dict[str, Outcome] = {}
    with trio.fail_after(90):
        async with trio.open_nursery() as nursery:
            hosting = host.node()

            async def run_host(task_status: trio.TaskStatus[int]) -> None:
                outcomes[host.name] = await hosting.host(
                    _config(1 + len(joiners)), 0, task_status=task_status
                )

            port = await nursery.start(run_host)
            for joiner in joiners:

                async def run_join(person: Person = joiner) -> None:
                    outcomes[person.name] = await person.node().join(LOOPBACK, port)

                nursery.start_soon(run_join)
    return [outcomes[p.name] for p in (host, *joiners)]


@pytest.mark.trio
async def test_players_that_refuse_a_changed_key_are_not_recorded_as_aborters(
    tmp_path: Path,
) -> None:
    """Bob makes a new key; the host forgets his old one, as its warning says; Bob and Carol
    still hold the old key, refuse the table and say why. The host records no abort, and
    honest Carol sits at its next table."""
    alice, bob, carol = (Person(tmp_path, n) for n in ("alice", "bob", "carol"))
    _met(alice, bob, carol)
    bob.identity = Identity.generate()
    assert KnownPeers.load(alice.known).forget("bob") == 1
    outcomes = await _table(alice, bob, carol)
    assert all(o.code == EXIT_FAILED for o in outcomes)
    assert any("refused the table" in line for line in alice.echo)
    assert any("KEY HAS CHANGED" in line for line in carol.echo)
    assert any("moska trust" in line for line in carol.echo)  # the way out, in one command
    assert KnownPeers.load(alice.known).aborters == {}
    assert not any("ended the table before the deal" in line for line in alice.echo)
    # the host's next table seats Carol
    again = await _table(alice, carol)
    assert [o.code for o in again] == [EXIT_OK, EXIT_OK], again


@pytest.mark.trio
async def test_a_new_key_vouched_for_by_the_old_one_is_accepted_in_one_command(
    tmp_path: Path,
) -> None:
    alice, bob, carol = (Person(tmp_path, n) for n in ("alice", "bob", "carol"))
    _met(alice, bob, carol)
    old, bob.identity = bob.identity, Identity.generate()
    statement = key_change_statement(old, bob.identity.public_bytes)
    runner = CliRunner()
    for person in (alice, bob, carol):
        result = runner.invoke(app, ["trust", statement, "--known-peers", str(person.known)])
        assert result.exit_code == 0, result.output
        assert fingerprint_of(bob.identity.public_bytes) in result.output
        assert "vouched for by the old key" in result.output
    host_key = alice.identity.public_bytes
    assert KnownPeers.load(carol.known).known(host_key, "bob") == bob.identity.public_bytes
    outcomes = await _table(alice, bob, carol)
    assert [o.code for o in outcomes] == [EXIT_OK] * 3, outcomes


def test_a_statement_not_signed_by_the_old_key_is_refused(tmp_path: Path) -> None:
    old, new, mallory = Identity.generate(), Identity.generate(), Identity.generate()
    good = key_change_statement(old, new.public_bytes)
    assert parse_statement(good.upper()) == (old.public_bytes, new.public_bytes)
    # mallory's signature over her own key, under bob's old key's name
    signature = mallory.sign(NEW_KEY, mallory.public_bytes)
    body = msgpack.packb([1, old.public_bytes, mallory.public_bytes, signature])
    forged = STATEMENT + base64.b32encode(body).decode().rstrip("=").lower()
    with pytest.raises(StatementError, match="not signed by the key it names"):
        parse_statement(forged)
    with pytest.raises(StatementError, match="cannot be read"):
        parse_statement(good[:-9] + "1")
    with pytest.raises(StatementError, match="starts with"):
        parse_statement("bob")
    known = tmp_path / "known"
    KnownPeers.load(known).remember(b"\1" * 32, [("bob", old.public_bytes)])
    result = CliRunner().invoke(app, ["trust", forged, "--known-peers", str(known)])
    assert result.exit_code != 0
    assert KnownPeers.load(known).known(b"\1" * 32, "bob") == old.public_bytes


def test_trust_name_forgets_the_old_key_at_one_host_or_all(tmp_path: Path) -> None:
    known = tmp_path / "known"
    bob, host1, host2 = (Identity.generate().public_bytes for _ in range(3))
    KnownPeers.load(known).remember(host1, [("bob", bob), ("carol", host2)])
    KnownPeers.load(known).remember(host2, [("bob", bob)])
    runner = CliRunner()
    one = runner.invoke(
        app, ["trust", "bob", "--host", fingerprint_of(host1), "--known-peers", str(known)]
    )
    assert one.exit_code == 0 and "1 line" in one.output, one.output
    after = KnownPeers.load(known)
    assert after.known(host1, "bob") is None and after.known(host2, "bob") == bob
    assert after.known(host1, "carol") == host2
    rest = runner.invoke(app, ["trust", "bob", "--known-peers", str(known)])
    assert rest.exit_code == 0 and KnownPeers.load(known).known(host2, "bob") is None
    nothing = runner.invoke(app, ["trust", "dave", "--known-peers", str(known)])
    assert "nothing to forget" in nothing.output


def test_keygen_force_prints_the_old_keys_statement_for_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    path = tmp_path / "me.pem"
    runner = CliRunner()
    assert runner.invoke(app, ["keygen", "--identity", str(path)]).exit_code == 0
    old = Identity.load(path)
    mine = tmp_path / "config" / "moska-p2p" / "known_peers"
    KnownPeers.load(mine).remember(b"\1" * 32, [("me", old.public_bytes)])
    result = runner.invoke(app, ["keygen", "--identity", str(path), "--force"])
    assert result.exit_code == 0, result.output
    new = Identity.load(path)
    statement = result.output.split("moska trust ")[1].split()[0]
    assert parse_statement(statement) == (old.public_bytes, new.public_bytes)
    assert KnownPeers.load(mine).known(b"\1" * 32, "me") == new.public_bytes  # its own file
