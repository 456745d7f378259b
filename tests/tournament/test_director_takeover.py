"""The director's folder is lost, its key is not: it continues the event from a member's
folder (``moska tournament direct --from``). What that folder may lack is a closure the
director signed and a few entrants hold: the director signs no closure before it has every
entrant's record (or a stage's deadline), takes its lost closure back from them, and so
never signs a second, different closure of a stage; the same items closed again give the
very same statement. A folder that does not verify, of an unclosed entry or of another
director's event is refused, with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from club_harness import NONCE, Club

from moska_p2p.crypto.identity import Identity, fingerprint_of
from moska_p2p.event.folder import (
    FolderError,
    is_event_folder,
    load,
    save,
    table_folder,
    take_over,
    verify_event,
)
from moska_p2p.tournament import digest, read
from moska_p2p.tournament.record import COMMITS, close, follow
from moska_p2p.tournament.signed import CLOSE, COMMIT, ENTRY


def to_commitments(club: Club) -> None:
    """The entry closed and every entrant committed to round 1's draw."""
    club.carry(club.director.step())  # the entry list
    for _ in range(2):  # acknowledgements, then commitments
        for role in club.roles:
            club.carry(role.step())


def closures(club: Club) -> list[set[bytes]]:
    """Each record's closures of round 1's commitments."""
    return [
        {c.to_bytes() for c in record.of(CLOSE, 1) if c.body()[2] == COMMITS}
        for record in club.records()
    ]


def test_a_closure_lost_with_the_director_is_signed_again_the_same() -> None:
    club = Club()
    to_commitments(club)
    (lost,) = club.director.step()  # signed, and the director gone before it carried it
    assert lost.kind == CLOSE
    director = club.director_lost(folder_of=2)
    assert director.step() == []  # nothing signed before the entrants' records are in
    for role in club.roles:
        club.reconnect(role)
    again = director.step()
    assert [s.to_bytes() for s in again] == [lost.to_bytes()]  # Ed25519: the same statement
    club.carry(again)
    club.run()
    states = [follow(record) for record in club.records()]
    assert all(s.finished() and not s.conflicts for s in states)
    assert len({digest(s.standing() or []) for s in states}) == 1


def test_a_closure_only_some_entrants_hold_is_taken_back_never_signed_twice() -> None:
    """The stage closed at its deadline without bot5 (out of contact), the closure reached
    bot0 only, and the director's folder is lost. bot5 comes back and commits: the resumed
    director, from bot2's folder, holds every commitment and would close all six, another
    closure than the one bot0 holds (an equivocation in bot0's record). It waits for every
    entrant's record instead, takes its own closure back from bot0's, and signs no other:
    bot5's commitment, later than the closure, is left out and bot5 refuses it (the rule of
    a closure), a conflict every record names, none an equivocation."""
    club = Club()
    club.carry(club.director.step())
    for role in club.roles:
        club.carry(role.step())  # acknowledgements
    late = club.roles[5]
    for role in club.roles[:5]:
        club.carry(role.step())  # commitments, but bot5's
    (lost,) = club.director.step(deadline=True)  # five commitments
    club.roles[0].record.add(lost)  # it reached bot0 only
    club.roles[0].step()  # bot0 acknowledges it (the director is gone)
    director = club.director_lost(folder_of=2)
    club.reconnect(late)
    club.carry(late.step())  # bot5 commits
    everything = close(club.director_id, director.event, 1, COMMITS, director.record.of(COMMIT, 1))
    assert everything.to_bytes() != lost.to_bytes()  # what a hasty director would sign
    assert director.step() == []
    for role in club.roles:
        club.reconnect(role)
    assert lost.to_bytes() in {s.to_bytes() for s in director.record.of(CLOSE, 1)}
    for _ in range(3):
        club.carry(director.step())
        for role in club.roles:
            club.carry(role.step())
    assert all(found == {lost.to_bytes()} for found in closures(club))
    for record in club.records():
        state = follow(record)  # no equivocation: it would raise
        assert any(c.startswith("bot5 (") and "refused" in c for c in state.conflicts), (
            state.conflicts
        )


def test_at_the_deadline_the_resumed_director_closes_with_what_is_in() -> None:
    """An entrant that never comes back does not hold the event up past a stage's
    deadline."""
    club = Club()
    to_commitments(club)
    director = club.director_lost(folder_of=1)
    for role in club.roles[:5]:
        club.reconnect(role)
    assert director.step() == []
    (closure,) = director.step(deadline=True)
    assert closure.kind == CLOSE and len(closure.body()[3]) == 6  # bot5's came through bot1


def test_an_own_closure_that_clashes_with_the_record_is_not_taken() -> None:
    club = Club()
    club.carry(club.director.step())
    for role in club.roles:
        club.carry(role.step())
    for role in club.roles[:5]:
        club.carry(role.step())
    (five,) = club.director.step(deadline=True)
    club.roles[0].record.add(five)
    director = club.director_lost(folder_of=2)
    club.carry(club.roles[5].step())
    (six,) = director.step(deadline=True)  # the deadline passed with bot0 still away
    club.carry([six])
    taken = director.take_held(club.roles[0].me, list(club.roles[0].record.statements.values()))
    assert five not in taken and five.to_bytes() not in {
        s.to_bytes() for s in director.record.of(CLOSE, 1)
    }
    assert director.clashes and "another closure of the commits of round 1" in director.clashes[0]
    follow(director.record)  # the director's record holds one closure: it follows


def test_a_resumed_director_takes_nothing_an_entrant_may_not_sign() -> None:
    club = Club()
    to_commitments(club)
    director = club.director_lost(folder_of=0)
    stranger = Identity.from_seed(bytes([99]) * 32)
    forged = close(stranger, director.event, 1, COMMITS, [])
    assert director.take_held(club.roles[0].me, [forged]) == []
    assert forged not in director.record.of(CLOSE)


# ---------------------------------------------------------------------- the folder


def played(tmp_path: Path, rounds: int = 50, nonce: bytes = NONCE) -> tuple[Club, Path]:
    """An event's first round played, and entrant bot3's folder (with a transcript of its
    table, which is bot3's own)."""
    club = Club(nonce=nonce)
    club.run(rounds)
    folder = tmp_path / "bot3"
    save(folder, club.director.event, club.roles[3].record)
    (table_folder(folder, 1, 0)).mkdir(parents=True)
    return club, folder


def test_a_members_folder_continues_the_event_in_a_new_folder(tmp_path: Path) -> None:
    club, source = played(tmp_path, rounds=7)
    state = follow(club.roles[3].record)
    assert state.rounds[0].published is not None and not state.finished()
    target = tmp_path / "director"
    event, record = take_over(source, target, club.director_id.public_bytes)
    assert event == club.director.event and is_event_folder(target)
    assert not (target / "round-1").exists()  # the member's transcripts stay its own
    assert set(load(target)[1].statements) == set(club.roles[3].record.statements)
    again = take_over(source, target, club.director_id.public_bytes)[1]  # the same command
    assert set(again.statements) == set(record.statements)
    assert verify_event(target).status == "incomplete"


def test_a_folder_of_another_directors_event_is_refused(tmp_path: Path) -> None:
    club, source = played(tmp_path, rounds=3)
    someone = Identity.from_seed(bytes([77]) * 32)
    with pytest.raises(FolderError, match="directed by") as refused:
        take_over(source, tmp_path / "new", someone.public_bytes)
    said = str(refused.value)
    assert fingerprint_of(club.director_id.public_bytes) in said
    assert fingerprint_of(someone.public_bytes) in said
    assert not (tmp_path / "new").exists()


def test_a_folder_that_does_not_verify_is_refused_with_the_reason(tmp_path: Path) -> None:
    club, source = played(tmp_path)
    _, record = load(source)
    record.discard(record.of(COMMIT, 1)[0])  # a commitment the closure counts, gone
    save(source, club.director.event, record)
    with pytest.raises(FolderError, match=r"does not verify .*a statement this record does not"):
        take_over(source, tmp_path / "new", club.director_id.public_bytes)


def test_an_entry_that_never_closed_and_a_folder_of_no_event_are_refused(
    tmp_path: Path,
) -> None:
    club = Club()
    club.carry(club.director.step())  # the list signed, nobody acknowledged it yet
    source = tmp_path / "early"
    save(source, club.director.event, club.roles[0].record)
    assert club.roles[0].record.of(ENTRY)
    with pytest.raises(FolderError, match="entry never closed"):
        take_over(source, tmp_path / "new", club.director_id.public_bytes)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FolderError, match=r"holds no event\.moska-event"):
        take_over(tmp_path / "empty", tmp_path / "new", club.director_id.public_bytes)
    with pytest.raises(FolderError, match="leave out --from"):
        take_over(source, source, club.director_id.public_bytes)


def test_a_target_folder_of_another_event_is_refused(tmp_path: Path) -> None:
    club, source = played(tmp_path, rounds=3)
    _, other_folder = played(tmp_path / "other", rounds=3, nonce=bytes(32))
    before = (other_folder / "event.moska-event").read_bytes()
    with pytest.raises(FolderError, match="holds another event"):
        take_over(source, other_folder, club.director_id.public_bytes)
    assert (other_folder / "event.moska-event").read_bytes() == before


def test_the_command_refuses_another_directors_folder_with_a_clear_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from moska_p2p.cli import app

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("LANGUAGE", "en")
    _, source = played(tmp_path, rounds=3)
    args = ["tournament", "direct", "--from", str(source), "--folder", str(tmp_path / "new"),
            "--bind", "127.0.0.1", "--identity", str(tmp_path / "someone.pem")]  # fmt: skip
    said = CliRunner().invoke(app, args)
    assert said.exit_code == 2, said.output
    assert "--from:" in said.output and "only its director continues it" in said.output
    assert not (tmp_path / "new").exists()


def test_an_entrants_record_goes_to_the_director_in_parts_its_closures_last() -> None:
    from moska_p2p.event.carrier import HELD_PART, held_messages
    from moska_p2p.protocol.frames import MAX_FRAME, unpack

    club = Club(count=12)
    club.run()
    record = club.roles[0].record
    messages = held_messages(record)
    assert len(messages) > 1  # a whole event of twelve is more than one frame
    parts = [unpack(message[4:]) for message in messages]
    assert all(len(message) - 4 <= MAX_FRAME for message in messages)
    assert [part[2] for part in parts] == [True] * (len(parts) - 1) + [False]
    sent = [item for part in parts for item in part[1]]
    assert sorted(sent) == sorted(s.to_bytes() for s in record.statements.values())
    directors = [read(item).author == club.director_id.public_bytes for item in sent]
    assert directors == sorted(directors)  # the director's statements after the items
    assert all(sum(map(len, part[1])) <= HELD_PART for part in parts)
