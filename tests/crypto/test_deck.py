"""The mental-poker deck (DESIGN.md, "Mental poker"): whole shuffles in memory, draws and
reveals, and every cheat the checks and the audit must catch, naming the seat."""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
from dataclasses import dataclass

import pytest

from moska_p2p.crypto.deck import (
    GROUP_ORDER,
    IDENTITY,
    DeckError,
    DeckSecrets,
    card_point,
    card_points,
    card_table,
    check_key,
    check_points,
    identify,
    key_commitment,
    pass1,
    pass2,
    replay_shuffle,
    scalar_mult,
    seed_commitment,
    unmask,
)

GAME_ID = hashlib.sha256(b"test game").digest()
CARDS = list(range(52))
TABLE = card_table(GAME_ID, CARDS)


def make_seed(label: str, seat: int) -> bytes:
    return hashlib.sha256(f"{label}/{seat}".encode()).digest()


@dataclass
class Transcript:
    """What a shuffle puts on the wire, plus every peer's secrets (known here, in memory)."""

    seeds: list[bytes]
    commitments: list[bytes]
    secrets: list[DeckSecrets]
    pass1_outputs: list[list[bytes]]
    pass2_outputs: list[list[bytes]]
    key_commitments: list[list[bytes]]

    @property
    def deck(self) -> list[bytes]:
        return self.pass2_outputs[-1]

    def replay(self) -> list[int]:
        return replay_shuffle(
            GAME_ID,
            self.seeds,
            self.commitments,
            self.pass1_outputs,
            self.pass2_outputs,
            self.key_commitments,
            len(CARDS),
            CARDS,
        )


def shuffle(peers: int, label: str = "seed") -> Transcript:
    seeds = [make_seed(label, seat) for seat in range(peers)]
    commitments = [seed_commitment(seed, GAME_ID, seat) for seat, seed in enumerate(seeds)]
    secrets = [DeckSecrets.from_seed(s, GAME_ID, seat, len(CARDS)) for seat, s in enumerate(seeds)]
    pass1_outputs: list[list[bytes]] = []
    current = card_points(GAME_ID, CARDS)
    for peer in secrets:
        current = pass1(peer, current)
        pass1_outputs.append(current)
    pass2_outputs: list[list[bytes]] = []
    key_commitments: list[list[bytes]] = []
    for peer in secrets:
        current, commitments_of_peer = pass2(peer, current)
        pass2_outputs.append(current)
        key_commitments.append(commitments_of_peer)
    return Transcript(seeds, commitments, secrets, pass1_outputs, pass2_outputs, key_commitments)


_CACHE: dict[tuple[int, str], Transcript] = {}


def cached_shuffle(peers: int, label: str = "seed") -> Transcript:
    """Shuffles are the slow part (hundreds of multiplications): share them between tests, which
    copy before tampering."""
    if (peers, label) not in _CACHE:
        _CACHE[peers, label] = shuffle(peers, label)
    return _CACHE[peers, label]


def tampered(t: Transcript) -> Transcript:
    return Transcript(
        list(t.seeds),
        list(t.commitments),
        list(t.secrets),
        [list(x) for x in t.pass1_outputs],
        [list(x) for x in t.pass2_outputs],
        [list(x) for x in t.key_commitments],
    )


# --- Honest play


@pytest.mark.parametrize("peers", [2, 4, 6])
def test_full_shuffle_every_position_is_a_card_once(peers: int) -> None:
    t = cached_shuffle(peers)
    faces = [
        identify(unmask(point, [s.keys[j] for s in t.secrets]), TABLE)
        for j, point in enumerate(t.deck)
    ]
    assert sorted(faces) == CARDS
    assert faces != CARDS  # shuffled (the chance of the identity permutation is 1/52!)
    assert t.replay() == faces
    # The masked deck shows nothing: no final point is a bare card point.
    assert not set(t.deck) & set(TABLE)


def test_different_seeds_shuffle_differently() -> None:
    assert cached_shuffle(2, "seed").replay() != cached_shuffle(2, "other").replay()


def test_private_draw_needs_the_drawers_own_key() -> None:
    t = cached_shuffle(4)
    faces = t.replay()
    drawer = 2
    for position in range(6):
        point = t.deck[position]
        released = [(seat, s.keys[position]) for seat, s in enumerate(t.secrets) if seat != drawer]
        for seat, key in released:  # everyone checks every released key at once
            assert check_key(GAME_ID, seat, position, key, t.key_commitments[seat][position])
        others = [key for _, key in released]
        # The public (everybody but the drawer) learns nothing: the point is still masked.
        with pytest.raises(DeckError, match="no card"):
            identify(unmask(point, others), TABLE)
        own = t.secrets[drawer].keys[position]
        assert identify(unmask(point, [*others, own]), TABLE) == faces[position]
        # Keys come off in any order (the group is commutative).
        assert identify(unmask(point, [own, *reversed(others)]), TABLE) == faces[position]


def test_public_reveal() -> None:
    t = cached_shuffle(6)
    position = 51
    keys = [s.keys[position] for s in t.secrets]
    for seat, key in enumerate(keys):
        assert check_key(GAME_ID, seat, position, key, t.key_commitments[seat][position])
    assert identify(unmask(t.deck[position], keys), TABLE) == t.replay()[position]


def test_determinism_and_separation() -> None:
    seed = make_seed("det", 0)
    a = DeckSecrets.from_seed(seed, GAME_ID, 0, 52)
    assert a == DeckSecrets.from_seed(seed, GAME_ID, 0, 52)
    other_seat = DeckSecrets.from_seed(seed, GAME_ID, 1, 52)
    other_game = DeckSecrets.from_seed(seed, hashlib.sha256(b"other").digest(), 0, 52)
    for b in (other_seat, other_game):
        assert a.scalar != b.scalar and a.permutation != b.permutation
        assert not set(a.keys) & set(b.keys)
    assert a.scalar not in a.keys and len(set(a.keys)) == 52
    assert sorted(a.permutation) == list(range(52))
    assert all(0 < int.from_bytes(k, "little") < GROUP_ORDER for k in (a.scalar, *a.keys))
    assert seed.hex() not in repr(a) and a.scalar.hex() not in repr(a)
    assert seed_commitment(seed, GAME_ID, 0) != seed_commitment(seed, GAME_ID, 1)
    assert card_point(GAME_ID, 7) != card_point(hashlib.sha256(b"other").digest(), 7)


def test_permutation_is_uniform_enough() -> None:
    """Over 3000 seeds with 5 cards, every (position, card) count is near 600 and every one of
    the 120 permutations occurs. Seeds are fixed, so this is deterministic, not flaky; the bounds
    are about 5 standard deviations wide, so a bias of a few percent would still show."""
    size, runs = 5, 3000
    counts: Counter[tuple[int, int]] = Counter()
    perms: Counter[tuple[int, ...]] = Counter()
    for i in range(runs):
        perm = DeckSecrets.from_seed(make_seed("uniform", i), GAME_ID, 0, size).permutation
        perms[perm] += 1
        for position, card in enumerate(perm):
            counts[position, card] += 1
    expected = runs / size
    assert all(abs(counts[p, c] - expected) < 110 for p in range(size) for c in range(size))
    assert len(perms) == 120
    assert max(perms.values()) < 60  # expected 25 each


# --- Released keys


def test_wrong_key_is_caught_by_its_commitment() -> None:
    t = cached_shuffle(4)
    seat, position = 1, 10
    commitment = t.key_commitments[seat][position]
    right = t.secrets[seat].keys[position]
    assert check_key(GAME_ID, seat, position, right, commitment)
    assert not check_key(GAME_ID, seat, position, t.secrets[seat].keys[11], commitment)
    assert not check_key(GAME_ID, seat, position, t.secrets[0].keys[position], commitment)
    assert not check_key(GAME_ID, seat, position, t.secrets[seat].scalar, commitment)
    assert not check_key(GAME_ID, seat + 1, position, right, commitment)  # another seat's slot
    assert not check_key(GAME_ID, seat, position, bytes(32), commitment)
    assert not check_key(GAME_ID, seat, position, right[:31], commitment)
    # A non-canonical encoding of the same scalar (k + L) is refused even with its own hash.
    alias = (int.from_bytes(right, "little") + GROUP_ORDER).to_bytes(32, "little")
    assert not check_key(GAME_ID, seat, position, alias, key_commitment(GAME_ID, seat, 0, alias))
    # Unmasking with a wrong key gives no card.
    keys = [s.keys[position] for s in t.secrets]
    keys[seat] = t.secrets[seat].keys[11]
    with pytest.raises(DeckError, match="no card"):
        identify(unmask(t.deck[position], keys), TABLE)


# --- Input checks of the next peer


def bad_inputs(points: list[bytes]) -> dict[str, list[bytes]]:
    p0, p1 = points[0], points[1]
    high_bit_alias = p1[:31] + bytes([p1[31] | 0x80])  # the same point as p1 for libsodium 1.0.18
    return {
        "duplicate": [p0, p0, *points[2:]],
        "identity": [IDENTITY, *points[1:]],
        "invalid": [b"\x01" * 32, *points[1:]],
        "alias": [p0, p1, high_bit_alias, *points[3:]],
        "short": points[:-1],
        "not bytes": [bytearray(p0), *points[1:]],  # type: ignore[list-item]
    }


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("duplicate", "repeats the point at position 0"),
        ("identity", "identity"),
        ("invalid", "not a canonical"),
        ("alias", "not a canonical"),
        ("short", "expected 52 points, got 51"),
        ("not bytes", "not 32 bytes"),
    ],
)
def test_next_peer_refuses_a_bad_pass1_output(kind: str, message: str) -> None:
    t = cached_shuffle(4)
    cheat = bad_inputs(t.pass1_outputs[1])[kind]
    with pytest.raises(DeckError, match=message):
        pass1(t.secrets[2], cheat)
    with pytest.raises(DeckError, match=message):
        pass2(t.secrets[0], bad_inputs(t.pass1_outputs[3])[kind])
    with pytest.raises(DeckError, match=message):
        check_points(cheat, 52)


def test_unmask_refuses_bad_input() -> None:
    t = cached_shuffle(2)
    with pytest.raises(DeckError):
        unmask(IDENTITY, [t.secrets[0].keys[0]])
    with pytest.raises(DeckError):
        unmask(t.deck[0], [bytes(32)])
    with pytest.raises(DeckError):
        scalar_mult(GROUP_ORDER.to_bytes(32, "little"), t.deck[0])


# --- The audit


def forge_pass1(honest: Transcript, seat: int, position: int, point: bytes) -> Transcript:
    """``seat`` sends ``point`` at ``position`` of its pass-1 output; everything downstream is
    recomputed honestly from the forged message (the forgery passes every input check)."""
    t = tampered(honest)
    t.pass1_outputs[seat][position] = point
    current = t.pass1_outputs[seat]
    for later in range(seat + 1, len(t.secrets)):
        current = pass1(t.secrets[later], current)
        t.pass1_outputs[later] = current
    for s in range(len(t.secrets)):
        current, t.key_commitments[s] = pass2(t.secrets[s], current)
        t.pass2_outputs[s] = current
    return t


def test_a_card_of_ones_own_choosing_is_caught() -> None:
    """Seat 0 (the only one that sees bare card points) tries to put a card of its choosing at
    position 5, masked with its own scalar. Another ace of spades is a point already in its
    output, so the next peer refuses the duplicate. A card from outside the deck (a 53rd card)
    passes every check during the shuffle, shows as no card at the reveal, and the audit names
    seat 0."""
    honest = cached_shuffle(4)
    a0 = honest.secrets[0].scalar
    doubled = list(honest.pass1_outputs[0])
    doubled[5] = scalar_mult(a0, card_point(GAME_ID, 51))
    with pytest.raises(DeckError, match="a duplicated card"):
        pass1(honest.secrets[1], doubled)

    t = forge_pass1(honest, 0, 5, scalar_mult(a0, card_point(GAME_ID, 52)))
    outside = card_point(GAME_ID, 52)
    faces = []
    for j, p in enumerate(t.deck):
        point = unmask(p, [s.keys[j] for s in t.secrets])
        if point == outside:
            faces.append(52)
            with pytest.raises(DeckError, match="no card"):
                identify(point, TABLE)
        else:
            faces.append(identify(point, TABLE))
    assert sorted(faces) == sorted({*CARDS, 52} - {honest.secrets[0].permutation[5]})
    with pytest.raises(DeckError, match="seat 0's pass-1 output at position 5") as info:
        t.replay()
    assert info.value.seat == 0 and info.value.position == 5
    assert "replaced card" in str(info.value)


def test_audit_names_a_later_seat_that_injected_a_point() -> None:
    """A later seat cannot forge a card (it lacks the earlier scalars): its injected point
    decrypts to no card at the reveal, and the audit names it."""
    honest = cached_shuffle(4)
    forged = scalar_mult(honest.secrets[2].scalar, card_point(GAME_ID, 51))
    t = forge_pass1(honest, 2, 9, forged)
    undecryptable: list[int] = []
    for j, p in enumerate(t.deck):
        try:
            identify(unmask(p, [s.keys[j] for s in t.secrets]), TABLE)
        except DeckError:
            undecryptable.append(j)
    assert len(undecryptable) == 1
    with pytest.raises(DeckError, match="seat 2's pass-1 output at position 9") as info:
        t.replay()
    assert info.value.seat == 2


def test_audit_names_a_seat_that_used_another_scalar() -> None:
    t = tampered(cached_shuffle(4))
    t.pass1_outputs[3][0] = scalar_mult(t.secrets[3].keys[0], t.pass1_outputs[2][0])
    with pytest.raises(DeckError, match="seat 3's pass-1 output at position 0") as info:
        t.replay()
    assert info.value.seat == 3


def test_audit_names_a_duplicating_seat() -> None:
    t = tampered(cached_shuffle(4))
    t.pass1_outputs[0][1] = t.pass1_outputs[0][0]
    with pytest.raises(DeckError, match="duplicated card") as info:
        t.replay()
    assert info.value.seat == 0


def test_audit_names_a_seed_that_does_not_match_its_commitment() -> None:
    t = tampered(cached_shuffle(4))
    t.seeds[2] = make_seed("another", 2)
    with pytest.raises(DeckError, match="seat 2's revealed seed does not match") as info:
        t.replay()
    assert info.value.seat == 2
    t.seeds[2] = b"short"
    with pytest.raises(DeckError, match="seat 2") as info:
        t.replay()
    assert info.value.seat == 2


def test_audit_names_pass2_key_commitments_that_do_not_match() -> None:
    honest = cached_shuffle(4)
    # (a) Correct points, but a commitment to some other key for position 7.
    t = tampered(honest)
    t.key_commitments[1][7] = key_commitment(GAME_ID, 1, 7, t.secrets[1].keys[8])
    with pytest.raises(DeckError, match="seat 1's key commitment for position 7") as info:
        t.replay()
    assert info.value.seat == 1 and info.value.position == 7
    # (b) A consistent lie: seat 2 masks position 3 with a key of its choosing and commits to
    # it, so the released key checks out at play time, but its seed does not produce it.
    t = tampered(honest)
    rogue = t.secrets[2].keys[40]
    a_inv = pow(int.from_bytes(t.secrets[2].scalar, "little"), -1, GROUP_ORDER)
    rogue_scalar = (a_inv * int.from_bytes(rogue, "little") % GROUP_ORDER).to_bytes(32, "little")
    t.pass2_outputs[2][3] = scalar_mult(rogue_scalar, t.pass2_outputs[1][3])
    t.key_commitments[2][3] = key_commitment(GAME_ID, 2, 3, rogue)
    current = t.pass2_outputs[2]
    current, t.key_commitments[3] = pass2(t.secrets[3], current)
    t.pass2_outputs[3] = current
    assert check_key(GAME_ID, 2, 3, rogue, t.key_commitments[2][3])
    with pytest.raises(DeckError, match="seat 2's pass-2 output at position 3") as info:
        t.replay()
    assert info.value.seat == 2


def test_audit_names_a_short_message() -> None:
    t = tampered(cached_shuffle(2))
    t.pass2_outputs[1] = t.pass2_outputs[1][:-1]
    with pytest.raises(DeckError, match="seat 1's pass-2 output has 51 points") as info:
        t.replay()
    assert info.value.seat == 1


def test_small_decks_and_argument_checks() -> None:
    cards = [3, 9, 27]
    table = card_table(GAME_ID, cards)
    for size_peers in itertools.product([1, 3], [1, 2]):
        size, peers = size_peers
        deck_cards = cards[:size]
        secrets = [
            DeckSecrets.from_seed(make_seed("small", s), GAME_ID, s, size) for s in range(peers)
        ]
        current = card_points(GAME_ID, deck_cards)
        for s in secrets:
            current = pass1(s, current)
        for s in secrets:
            current, _ = pass2(s, current)
        faces = [
            identify(unmask(p, [s.keys[j] for s in secrets]), table) for j, p in enumerate(current)
        ]
        assert sorted(faces) == deck_cards
    with pytest.raises(ValueError):
        DeckSecrets.from_seed(b"short", GAME_ID, 0, 52)
    with pytest.raises(ValueError):
        DeckSecrets.from_seed(bytes(32), b"short", 0, 52)
    with pytest.raises(ValueError):
        DeckSecrets.from_seed(bytes(32), GAME_ID, 0, 0)
    with pytest.raises(ValueError):
        card_table(GAME_ID, [1, 1])
    with pytest.raises(ValueError):
        card_point(GAME_ID, 256)
