"""The mental-poker deck, v2 (moska_p2p.crypto.deck): whole proven shuffles in memory, draws and
reveals, and the cheats every peer must catch on arrival, now that no seed is ever revealed."""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
from dataclasses import dataclass

import pytest

from moska_p2p.crypto import group as g
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
    deck_context,
    identify,
    pass1,
    pass2,
    unmask,
    verify_pass1,
    verify_pass2,
)

GAME_ID = hashlib.sha256(b"test game").digest()
CARDS = list(range(52))
TABLE = card_table(GAME_ID, CARDS)


def make_seed(label: str, seat: int) -> bytes:
    return hashlib.sha256(f"{label}/{seat}".encode()).digest()


def ctx(seat: int, stage: str) -> bytes:
    return deck_context(GAME_ID, seat, stage)


@dataclass
class Shuffle:
    """What a proven shuffle puts on the wire, plus every peer's secrets (known here)."""

    secrets: list[DeckSecrets]
    pass1_outputs: list[list[bytes]]
    pass1_proofs: list[bytes]
    pass2_outputs: list[list[bytes]]
    key_points: list[list[bytes]]
    pass2_proofs: list[bytes]

    @property
    def deck(self) -> list[bytes]:
        return self.pass2_outputs[-1]

    def faces(self) -> list[int]:
        """The card at every position, from the permutations (what unmasking must show)."""
        faces = []
        for j in range(len(self.deck)):
            index = j
            for peer in reversed(self.secrets):
                index = peer.permutation[index]
            faces.append(CARDS[index])
        return faces

    def verify(self) -> None:
        """Every peer's check of every pass, as it arrives."""
        current = card_points(GAME_ID, CARDS)
        for seat, peer in enumerate(self.secrets):
            out = self.pass1_outputs[seat]
            verify_pass1(
                ctx(seat, "shuffle1"), current, out, peer.public_scalar, self.pass1_proofs[seat]
            )
            current = out
        for seat, peer in enumerate(self.secrets):
            out = self.pass2_outputs[seat]
            verify_pass2(
                ctx(seat, "shuffle2"),
                current,
                out,
                peer.public_scalar,
                self.key_points[seat],
                self.pass2_proofs[seat],
            )
            current = out


def shuffle(peers: int, label: str = "seed") -> Shuffle:
    secrets = [
        DeckSecrets.from_seed(make_seed(label, seat), GAME_ID, seat, len(CARDS))
        for seat in range(peers)
    ]
    t = Shuffle(secrets, [], [], [], [], [])
    current = card_points(GAME_ID, CARDS)
    for seat, peer in enumerate(secrets):
        current, proof = pass1(peer, ctx(seat, "shuffle1"), current)
        t.pass1_outputs.append(current)
        t.pass1_proofs.append(proof)
    for seat, peer in enumerate(secrets):
        current, key_points, proof = pass2(peer, ctx(seat, "shuffle2"), current)
        t.pass2_outputs.append(current)
        t.key_points.append(key_points)
        t.pass2_proofs.append(proof)
    return t


_CACHE: dict[tuple[int, str], Shuffle] = {}


def cached_shuffle(peers: int, label: str = "seed") -> Shuffle:
    """Proven shuffles are the slow part: share them between tests, which copy lists before
    tampering."""
    if (peers, label) not in _CACHE:
        _CACHE[peers, label] = shuffle(peers, label)
    return _CACHE[peers, label]


# --- Honest play


@pytest.mark.parametrize("peers", [2, 4, 6])
def test_full_shuffle_verifies_and_every_position_is_a_card_once(peers: int) -> None:
    t = cached_shuffle(peers)
    t.verify()
    faces = [
        identify(unmask(point, [s.keys[j] for s in t.secrets]), TABLE)
        for j, point in enumerate(t.deck)
    ]
    assert sorted(faces) == CARDS
    assert faces != CARDS  # shuffled (the chance of the identity permutation is 1/52!)
    assert faces == t.faces()
    # The masked deck shows nothing: no final point is a bare card point.
    assert not set(t.deck) & set(TABLE)


def test_different_seeds_shuffle_differently() -> None:
    assert cached_shuffle(2, "seed").faces() != cached_shuffle(2, "other").faces()


def test_a_resumed_peer_sends_the_same_bytes() -> None:
    """Secrets and proof nonces derive from the seed: rebuilding a message after a restart gives
    it byte for byte (a different one would be equivocation)."""
    t = cached_shuffle(2)
    again = DeckSecrets.from_seed(make_seed("seed", 1), GAME_ID, 1, 52)
    assert pass1(again, ctx(1, "shuffle1"), t.pass1_outputs[0]) == (
        t.pass1_outputs[1],
        t.pass1_proofs[1],
    )
    assert pass2(again, ctx(1, "shuffle2"), t.pass2_outputs[0]) == (
        t.pass2_outputs[1],
        t.key_points[1],
        t.pass2_proofs[1],
    )


def test_private_draw_needs_the_drawers_own_key() -> None:
    t = cached_shuffle(4)
    faces = t.faces()
    drawer = 2
    for position in range(6):
        point = t.deck[position]
        released = [(seat, s.keys[position]) for seat, s in enumerate(t.secrets) if seat != drawer]
        for seat, key in released:  # everyone checks every released key at once
            assert check_key(key, t.key_points[seat][position])
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
        assert check_key(key, t.key_points[seat][position])
    assert identify(unmask(t.deck[position], keys), TABLE) == t.faces()[position]


def test_secrets_determinism_separation_and_repr() -> None:
    seed = make_seed("det", 0)
    a = DeckSecrets.from_seed(seed, GAME_ID, 0, 52)
    assert a == DeckSecrets.from_seed(seed, GAME_ID, 0, 52)
    other_seat = DeckSecrets.from_seed(seed, GAME_ID, 1, 52)
    other_game = DeckSecrets.from_seed(seed, hashlib.sha256(b"other").digest(), 0, 52)
    for b in (other_seat, other_game):
        assert a.scalar != b.scalar and a.permutation != b.permutation
        assert not set(a.keys) & set(b.keys)
        assert a.nonce_seed != b.nonce_seed
    assert a.scalar not in a.keys and len(set(a.keys)) == 52
    assert sorted(a.permutation) == list(range(52))
    assert all(0 < int.from_bytes(k, "little") < GROUP_ORDER for k in (a.scalar, *a.keys))
    assert a.public_scalar == g.base_mul(a.scalar)
    assert list(a.key_points) == [g.base_mul(k) for k in a.keys]
    shown = repr(a)
    for secret in (seed, a.scalar, a.keys[0], a.nonce_seed, a.scalar_inverse):
        assert secret.hex() not in shown
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


def test_deck_context_layout() -> None:
    assert deck_context(GAME_ID, 3, "shuffle1") == (
        b"moska-p2p/v2/deck\x00" + GAME_ID + b"\x03" + b"shuffle1"
    )
    assert len({ctx(0, "shuffle1"), ctx(1, "shuffle1"), ctx(0, "shuffle2")}) == 3
    for bad in ((b"short", 0, "s"), (GAME_ID, 256, "s"), (GAME_ID, -1, "s"), (GAME_ID, 0, "")):
        with pytest.raises(ValueError):
            deck_context(*bad)


# --- Released keys


def test_wrong_key_is_caught_by_its_key_point() -> None:
    t = cached_shuffle(4)
    seat, position = 1, 10
    key_point = t.key_points[seat][position]
    right = t.secrets[seat].keys[position]
    assert check_key(right, key_point)
    assert not check_key(t.secrets[seat].keys[11], key_point)
    assert not check_key(t.secrets[0].keys[position], key_point)
    assert not check_key(t.secrets[seat].scalar, key_point)
    assert not check_key(bytes(32), key_point)
    assert not check_key(bytes(32), IDENTITY)
    assert not check_key(right[:31], key_point)
    assert not check_key(right, "not bytes")  # type: ignore[arg-type]
    # A non-canonical encoding of the same scalar (k + L) is refused though k+L gives K too.
    alias = (int.from_bytes(right, "little") + GROUP_ORDER).to_bytes(32, "little")
    assert not check_key(alias, key_point)
    # Unmasking with a wrong key gives no card.
    keys = [s.keys[position] for s in t.secrets]
    keys[seat] = t.secrets[seat].keys[11]
    with pytest.raises(DeckError, match="no card"):
        identify(unmask(t.deck[position], keys), TABLE)


# --- Input checks


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
    ("kind", "message", "position"),
    [
        ("duplicate", "repeats the point at position 0", 1),
        ("identity", "identity", 0),
        ("invalid", "not a canonical", 0),
        ("alias", "not a canonical", 2),
        ("short", "expected 52 points, got 51", None),
        ("not bytes", "not 32 bytes", 0),
    ],
)
def test_bad_points_are_refused_as_input_and_as_output(
    kind: str, message: str, position: int | None
) -> None:
    t = cached_shuffle(4)
    cheat = bad_inputs(t.pass1_outputs[1])[kind]
    with pytest.raises(DeckError, match=message):
        pass1(t.secrets[2], ctx(2, "shuffle1"), cheat)
    with pytest.raises(DeckError, match=message):
        pass2(t.secrets[0], ctx(0, "shuffle2"), bad_inputs(t.pass1_outputs[3])[kind])
    with pytest.raises(DeckError, match=message) as info:
        check_points(cheat, 52)
    assert info.value.position == position
    # As a pass's output, before any proof is looked at.
    with pytest.raises(DeckError, match=message) as info:
        verify_pass1(
            ctx(1, "shuffle1"),
            t.pass1_outputs[0],
            cheat,
            t.secrets[1].public_scalar,
            t.pass1_proofs[1],
        )
    assert info.value.position == position
    cheat2 = bad_inputs(t.pass2_outputs[1])[kind]
    with pytest.raises(DeckError, match=message):
        verify_pass2(
            ctx(1, "shuffle2"),
            t.pass2_outputs[0],
            cheat2,
            t.secrets[1].public_scalar,
            t.key_points[1],
            t.pass2_proofs[1],
        )


def test_unmask_refuses_bad_input() -> None:
    t = cached_shuffle(2)
    with pytest.raises(DeckError):
        unmask(IDENTITY, [t.secrets[0].keys[0]])
    with pytest.raises(DeckError):
        unmask(t.deck[0], [bytes(32)])
    with pytest.raises(DeckError):
        unmask(t.deck[0], [GROUP_ORDER.to_bytes(32, "little")])
    assert unmask(t.deck[0], []) == t.deck[0]


# --- Cheats in a pass, caught by its proof on arrival


def test_a_card_of_ones_own_choosing_is_caught_in_pass1() -> None:
    """Seat 0 (the only one that sees bare card points) puts a card of its choosing at position
    5, masked with its own scalar: another copy of a card is a duplicate, a card from outside the
    deck (a 53rd) passes the point checks but not the shuffle argument. In v1 the second waited
    for the end-of-game audit."""
    t = cached_shuffle(4)
    a0 = t.secrets[0].scalar
    inputs = card_points(GAME_ID, CARDS)
    for forged, message in (
        (g.mul(a0, card_point(GAME_ID, 51)), "duplicated card"),
        (g.mul(a0, card_point(GAME_ID, 52)), "pass 1: the shuffle argument does not verify"),
    ):
        outputs = list(t.pass1_outputs[0])
        outputs[5] = forged
        with pytest.raises(DeckError, match=message):
            verify_pass1(
                ctx(0, "shuffle1"), inputs, outputs, t.secrets[0].public_scalar, t.pass1_proofs[0]
            )


def test_a_later_seat_using_another_scalar_is_caught() -> None:
    t = cached_shuffle(4)
    outputs = list(t.pass1_outputs[3])
    outputs[0] = g.mul(t.secrets[3].keys[0], t.pass1_outputs[2][t.secrets[3].permutation[0]])
    with pytest.raises(DeckError, match="pass 1") as info:
        verify_pass1(
            ctx(3, "shuffle1"),
            t.pass1_outputs[2],
            outputs,
            t.secrets[3].public_scalar,
            t.pass1_proofs[3],
        )
    assert info.value.position is None  # a shuffle argument fails as a whole


def test_a_pass_is_bound_to_its_seat_and_stage() -> None:
    t = cached_shuffle(2)
    args = (t.pass1_outputs[0], t.pass1_outputs[1], t.secrets[1].public_scalar, t.pass1_proofs[1])
    verify_pass1(ctx(1, "shuffle1"), *args)
    for context in (
        ctx(0, "shuffle1"),
        ctx(1, "shuffle2"),
        deck_context(hashlib.sha256(b"x").digest(), 1, "shuffle1"),
    ):
        with pytest.raises(DeckError):
            verify_pass1(context, *args)
    with pytest.raises(DeckError):  # seat 1's pass offered as seat 0's, under its A
        verify_pass1(ctx(1, "shuffle1"), args[0], args[1], t.secrets[0].public_scalar, args[3])


def test_a_rogue_key_in_pass2_is_caught_at_its_position() -> None:
    """Seat 2 masks position 3 with a key of its choosing and keeps its announced key point (in
    v1 the commitment matched the rogue key and only the audit caught it): refused at 3. With a
    key point to match, the proof holds, and that key point is what its released key must open:
    the released key opens the card its masking put there and nothing else."""
    t = cached_shuffle(4)
    peer = t.secrets[2]
    rogue = peer.keys[40]
    x = g.scalar_mul(peer.scalar_inverse, rogue)
    outputs = list(t.pass2_outputs[2])
    outputs[3] = g.mul(x, t.pass2_outputs[1][3])
    with pytest.raises(DeckError, match="position 3") as info:
        verify_pass2(
            ctx(2, "shuffle2"),
            t.pass2_outputs[1],
            outputs,
            peer.public_scalar,
            t.key_points[2],
            t.pass2_proofs[2],
        )
    assert info.value.position == 3


def test_a_copied_card_in_pass2_is_caught_at_its_target() -> None:
    """The copy attack: position 8 gets position 2's card under position 8's key."""
    t = cached_shuffle(4)
    peer = t.secrets[1]
    x8 = g.scalar_mul(peer.scalar_inverse, peer.keys[8])
    outputs = list(t.pass2_outputs[1])
    outputs[8] = g.mul(x8, t.pass2_outputs[0][2])
    with pytest.raises(DeckError) as info:
        verify_pass2(
            ctx(1, "shuffle2"),
            t.pass2_outputs[0],
            outputs,
            peer.public_scalar,
            t.key_points[1],
            t.pass2_proofs[1],
        )
    assert info.value.position == 8


def test_pass2_must_use_the_scalar_of_pass1() -> None:
    t = cached_shuffle(4)
    with pytest.raises(DeckError, match="position 0"):
        verify_pass2(
            ctx(2, "shuffle2"),
            t.pass2_outputs[1],
            t.pass2_outputs[2],
            t.secrets[1].public_scalar,
            t.key_points[2],
            t.pass2_proofs[2],
        )


def test_small_decks_and_argument_checks() -> None:
    cards = [3, 9, 27]
    table = card_table(GAME_ID, cards)
    for size, peers in itertools.product([1, 3], [1, 2]):
        deck_cards = cards[:size]
        secrets = [
            DeckSecrets.from_seed(make_seed("small", s), GAME_ID, s, size) for s in range(peers)
        ]
        current = card_points(GAME_ID, deck_cards)
        for seat, s in enumerate(secrets):
            out, proof = pass1(s, ctx(seat, "shuffle1"), current)
            verify_pass1(ctx(seat, "shuffle1"), current, out, s.public_scalar, proof)
            current = out
        for seat, s in enumerate(secrets):
            out, key_points, proof = pass2(s, ctx(seat, "shuffle2"), current)
            verify_pass2(ctx(seat, "shuffle2"), current, out, s.public_scalar, key_points, proof)
            current = out
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
