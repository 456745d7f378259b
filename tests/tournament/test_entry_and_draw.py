"""An event's entry list and its draw: signed by whom they must be, and a draw nobody can stack
(the director included), by construction."""

from __future__ import annotations

import secrets

import pytest

from moska_p2p.crypto.identity import Identity
from moska_p2p.tournament import (
    BOT,
    PERSON,
    Entrant,
    EventSpec,
    TournamentError,
    acknowledge,
    close_entry,
    commit,
    commit_set,
    draw,
    missing_acknowledgements,
    read,
    read_entry,
    reveal,
    seat_tables,
)
from moska_p2p.tournament.signed import REVEAL, sign

SPEC = EventSpec("club night", "moska", seats_per_table=4, rounds=3, games_per_round=2)
NONCE = bytes(range(32))


def people(count: int) -> list[Identity]:
    return [Identity.from_seed(bytes([i + 1]) * 32) for i in range(count)]


def entry_of(ids: list[Identity]):  # type: ignore[no-untyped-def]
    entrants = [Entrant(i.public_bytes, f"p{n}", PERSON) for n, i in enumerate(ids)]
    return close_entry(ids[0], SPEC, NONCE, entrants)


def test_spec_refuses_what_a_preset_cannot_seat() -> None:
    with pytest.raises(TournamentError, match="seats 2 to 6"):
        EventSpec("x", "moska", seats_per_table=7, rounds=1, games_per_round=1)
    with pytest.raises(TournamentError, match="even table size"):
        EventSpec("x", "durak-teams", seats_per_table=5, rounds=1, games_per_round=1)
    with pytest.raises(TournamentError, match='unknown preset "chess"'):
        EventSpec("x", "chess", seats_per_table=4, rounds=1, games_per_round=1)
    with pytest.raises(TournamentError, match="final table needs its number of games"):
        EventSpec("x", "moska", seats_per_table=4, rounds=1, games_per_round=1, final_size=4)


def test_the_entry_list_reads_back_and_is_closed_when_everyone_acknowledged_it() -> None:
    ids = people(5)
    entry = entry_of(ids)
    again = read_entry(read(entry.statement.to_bytes()))
    assert again.entrants == entry.entrants and again.event == entry.event
    acks = [acknowledge(i, entry) for i in ids[:4]]
    assert [e.name for e in missing_acknowledgements(entry, acks)] == ["p4"]
    acks.append(acknowledge(ids[4], entry))
    assert missing_acknowledgements(entry, acks) == []


def test_an_acknowledgement_of_another_list_is_refused_not_skipped() -> None:
    ids = people(5)
    entry = entry_of(ids)
    other = close_entry(ids[0], SPEC, NONCE, [*entry.entrants[:4]])
    stale = acknowledge(ids[1], other)
    with pytest.raises(TournamentError, match="another entry list"):
        missing_acknowledgements(entry, [stale])
    with pytest.raises(TournamentError, match="is not an entrant"):
        acknowledge(Identity.from_seed(b"\x99" * 32), entry)


def test_a_tampered_entry_list_does_not_verify() -> None:
    entry = entry_of(people(4))
    data = bytearray(entry.statement.to_bytes())
    at = data.find(b"p3")
    data[at + 1] = ord("9")  # rename an entrant after the director signed
    with pytest.raises(TournamentError, match="bad signature"):
        read(bytes(data))


def test_entry_rules() -> None:
    ids = people(3)
    bots_off = EventSpec("x", "moska", 3, 1, 1, bots_allowed=False)
    with pytest.raises(TournamentError, match="takes no bots"):
        close_entry(ids[0], bots_off, NONCE, [Entrant(ids[1].public_bytes, "b", BOT),
                                              Entrant(ids[2].public_bytes, "c", PERSON)])
    with pytest.raises(TournamentError, match="same name"):
        close_entry(ids[0], SPEC, NONCE, [Entrant(ids[1].public_bytes, "Ann", PERSON),
                                          Entrant(ids[2].public_bytes, "ann", PERSON)])


def run_draw(ids: list[Identity], round_number: int = 1):  # type: ignore[no-untyped-def]
    entry = entry_of(ids)
    secrets_ = {i.public_bytes: secrets.token_bytes(32) for i in ids}
    commits = [commit(i, entry.event, round_number, secrets_[i.public_bytes]) for i in ids]
    cset = commit_set(entry, round_number, commits)
    reveals = [reveal(i, entry.event, cset, secrets_[i.public_bytes]) for i in ids]
    return entry, secrets_, commits, cset, reveals


def test_an_honest_draw_seats_everyone_and_everybody_computes_the_same_seed() -> None:
    ids = people(6)
    entry, _, _, cset, reveals = run_draw(ids)
    first = draw(entry, cset, reveals)
    second = draw(entry, cset, list(reversed(reveals)))
    assert first == second
    assert first.players == tuple(entry.entrant_keys()) and first.forfeits() == ()


def test_a_director_who_sees_the_others_secrets_cannot_choose_its_own() -> None:
    """The director waits for every other reveal, then looks for a secret that puts it at a
    table with its friend: its commitment is already in the commit set, so any other secret
    is a cheat (named, the round forfeited) and the honest secrets alone make the seed."""
    ids = people(8)
    director, friend = ids[0].public_bytes, ids[1].public_bytes
    entry, secrets_, _, cset, reveals = run_draw(ids)
    others = reveals[1:]
    rules = SPEC.rules()
    honest = draw(entry, cset, reveals)
    for attempt in range(200):
        chosen = secrets.token_bytes(32)
        forged = sign(ids[0], REVEAL, [entry.event, 1, chosen, cset.digest(entry.event)])
        result = draw(entry, cset, [forged, *others])
        assert result.cheated == (director,), attempt
        assert director not in result.players
        tables = seat_tables(result.players, result.seed, {}, 4, rules)
        assert not any({director, friend} <= set(t) for t in tables)
    assert honest.players == tuple(entry.entrant_keys())
    # and reveal() itself refuses to sign a secret that does not open the commitment
    with pytest.raises(TournamentError, match="differs from the one it signed"):
        reveal(ids[0], entry.event, cset, secrets.token_bytes(32))
    assert secrets_[director]  # its real secret stays valid


def test_a_commitment_swapped_after_the_reveals_changes_nothing() -> None:
    """A director that publishes a second commit set with a new commitment of its own after
    seeing the reveals: every honest reveal is bound to the first set's hash, so against the
    new set the honest entrants count as not having revealed: the swap gains nothing but a
    draw where only the swapper plays, and it signed two commitments (an equivocation)."""
    ids = people(4)
    entry, _, commits, _, reveals = run_draw(ids)
    new_secret = secrets.token_bytes(32)
    swapped = commit(ids[0], entry.event, 1, new_secret)
    with pytest.raises(TournamentError, match="two different tournament/commit"):
        commit_set(entry, 1, [*commits, swapped])
    other_set = commit_set(entry, 1, [swapped, *commits[1:]])
    result = draw(entry, other_set, [reveal(ids[0], entry.event, other_set, new_secret),
                                     *reveals[1:]])
    assert result.players == (ids[0].public_bytes,)
    assert set(result.withheld) == {i.public_bytes for i in ids[1:]}


def test_withholding_a_reveal_forfeits_the_round_and_the_rest_still_draw() -> None:
    ids = people(5)
    entry, _, _, cset, reveals = run_draw(ids)
    result = draw(entry, cset, reveals[:-1])
    assert result.withheld == (ids[-1].public_bytes,)
    assert ids[-1].public_bytes not in result.players and len(result.players) == 4


def test_an_entrant_without_a_commitment_sits_the_round_out() -> None:
    ids = people(5)
    entry = entry_of(ids)
    s = {i.public_bytes: secrets.token_bytes(32) for i in ids}
    cset = commit_set(entry, 2, [commit(i, entry.event, 2, s[i.public_bytes]) for i in ids[1:]])
    result = draw(entry, cset, [reveal(i, entry.event, cset, s[i.public_bytes]) for i in ids[1:]])
    assert result.absent == (ids[0].public_bytes,)


def test_a_statement_of_another_round_or_a_stranger_is_refused() -> None:
    ids = people(4)
    entry = entry_of(ids)
    with pytest.raises(TournamentError, match="not for round 1"):
        commit_set(entry, 1, [commit(ids[1], entry.event, 2, bytes(32))])
    stranger = Identity.from_seed(b"\x77" * 32)
    with pytest.raises(TournamentError, match="is not an entrant"):
        commit_set(entry, 1, [commit(stranger, entry.event, 1, bytes(32))])
