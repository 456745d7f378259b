"""The deck's proofs (moska_p2p.crypto: group, fiat_shamir, dleq, shuffle_proof): honest proofs
verify, and every way a proof or its statement can be wrong is refused, with the position when
the proof can name one."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import struct
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moska_p2p.crypto import group as g
from moska_p2p.crypto.deck import (
    DeckError,
    DeckSecrets,
    card_point,
    card_points,
    deck_context,
    verify_pass1,
    verify_pass2,
)
from moska_p2p.crypto.dleq import prove_rekey, verify_rekey
from moska_p2p.crypto.fiat_shamir import Transcript
from moska_p2p.crypto.proofs import ProofError
from moska_p2p.crypto.shuffle_proof import generators, proof_size, prove_shuffle, verify_shuffle

# --- Honest statements and proofs, deterministic and cached (proving is the slow part), and
# the byte layout of each proof, so that tests can damage one field at a time

GAME_ID = hashlib.sha256(b"proof tests").digest()
L = g.GROUP_ORDER


def seed(label: str, seat: int = 0) -> bytes:
    return hashlib.sha256(f"{label}/{seat}".encode()).digest()


@dataclass(frozen=True)
class ShuffleCase:
    """A pass-1 statement ``outputs[i] = scalar * inputs[permutation[i]]`` and its proof."""

    context: bytes
    inputs: list[bytes]
    outputs: list[bytes]
    scalar: bytes
    public_scalar: bytes
    permutation: list[int]
    nonce_seed: bytes
    proof: bytes

    @property
    def size(self) -> int:
        return len(self.inputs)

    def statement(self) -> tuple[bytes, list[bytes], list[bytes], bytes]:
        return self.context, list(self.inputs), list(self.outputs), self.public_scalar


@dataclass(frozen=True)
class RekeyCase:
    """A pass-2 statement ``outputs[j] = x_j * inputs[j]``, ``key_points[j] = x_j * A``."""

    context: bytes
    inputs: list[bytes]
    outputs: list[bytes]
    scalar: bytes
    public_scalar: bytes
    keys: list[bytes]
    key_points: list[bytes]
    witnesses: list[bytes]
    nonce_seed: bytes
    proof: bytes

    @property
    def size(self) -> int:
        return len(self.inputs)

    def statement(self) -> tuple[bytes, list[bytes], list[bytes], bytes, list[bytes]]:
        return (
            self.context,
            list(self.inputs),
            list(self.outputs),
            self.public_scalar,
            list(self.key_points),
        )


def secrets(size: int, label: str, seat: int = 0) -> DeckSecrets:
    return DeckSecrets.from_seed(seed(label, seat), GAME_ID, seat, size)


@functools.cache
def shuffle_case(size: int, label: str = "shuffle") -> ShuffleCase:
    """Seat 0's pass 1 over the first ``size`` card points."""
    s = secrets(size, label)
    inputs = card_points(GAME_ID, range(size))
    outputs = [g.mul(s.scalar, inputs[i]) for i in s.permutation]
    context = deck_context(GAME_ID, 0, "shuffle1")
    proof = prove_shuffle(context, inputs, outputs, s.scalar, s.permutation, s.nonce_seed)
    return ShuffleCase(
        context,
        inputs,
        outputs,
        s.scalar,
        s.public_scalar,
        list(s.permutation),
        s.nonce_seed,
        proof,
    )


@functools.cache
def rekey_case(size: int, label: str = "rekey") -> RekeyCase:
    """Seat 0's pass 2 over the output of a pass 1 (by seat 1 of the same label)."""
    s = secrets(size, label)
    inputs = shuffle_case(size, label + "/pass1").outputs
    witnesses = [g.scalar_mul(s.scalar_inverse, k) for k in s.keys]
    outputs = [g.mul(x, p) for x, p in zip(witnesses, inputs, strict=True)]
    context = deck_context(GAME_ID, 0, "shuffle2")
    key_points = list(s.key_points)
    proof = prove_rekey(
        context, inputs, outputs, s.public_scalar, key_points, witnesses, s.nonce_seed
    )
    return RekeyCase(
        context,
        list(inputs),
        outputs,
        s.scalar,
        s.public_scalar,
        list(s.keys),
        key_points,
        witnesses,
        s.nonce_seed,
        proof,
    )


# --- Proof layouts: (field name, index within the field, "point" or "scalar") per 32-byte item


def shuffle_layout(size: int) -> list[tuple[str, int, str]]:
    return [
        *(("u", k, "point") for k in range(size)),
        *(("chain", k, "point") for k in range(size)),
        *((name, 0, "scalar") for name in ("c", "s1", "s2", "s3", "s_a")),
        *(("s_prime", k, "scalar") for k in range(size)),
        *(("s_hat", k, "scalar") for k in range(size)),
    ]


def rekey_layout(size: int) -> list[tuple[str, int, str]]:
    return [
        item
        for j in range(size)
        for item in (("R", j, "point"), ("S", j, "point"), ("s", j, "scalar"))
    ]


def replace_item(proof: bytes, index: int, item: bytes) -> bytes:
    return proof[: 32 * index] + item + proof[32 * (index + 1) :]


def flip_bit(data: bytes, bit: int) -> bytes:
    out = bytearray(data)
    out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


def scalar_bytes(n: int) -> bytes:
    """``n`` as 32 little-endian bytes, without reduction (to build non-canonical scalars)."""
    return n.to_bytes(32, "little")


def top_bit_alias(point: bytes) -> bytes:
    """The same point for libsodium 1.0.18 (which ignores bit 255), another byte string."""
    return point[:31] + bytes([point[31] | 0x80])


# Encodings that are no point: a field element >= p (non-canonical), and an "odd" s.
FIELD_P = 2**255 - 19
NOT_CANONICAL_FIELD = scalar_bytes(FIELD_P + 1)
ODD_ENCODING = scalar_bytes(1)


SIZES = [1, 2, 3, 32, 36, 52]
OTHER_GAME = hashlib.sha256(b"another game").digest()


def refuse_shuffle(
    case: ShuffleCase,
    *,
    proof: bytes | None = None,
    inputs: list[bytes] | None = None,
    outputs: list[bytes] | None = None,
    public_scalar: bytes | None = None,
    context: bytes | None = None,
) -> ProofError:
    with pytest.raises(ProofError) as info:
        verify_shuffle(
            case.context if context is None else context,
            case.inputs if inputs is None else inputs,
            case.outputs if outputs is None else outputs,
            case.public_scalar if public_scalar is None else public_scalar,
            case.proof if proof is None else proof,
        )
    return info.value


def refuse_rekey(
    case: RekeyCase,
    *,
    proof: bytes | None = None,
    inputs: list[bytes] | None = None,
    outputs: list[bytes] | None = None,
    public_scalar: bytes | None = None,
    key_points: list[bytes] | None = None,
    context: bytes | None = None,
) -> ProofError:
    with pytest.raises(ProofError) as info:
        verify_rekey(
            case.context if context is None else context,
            case.inputs if inputs is None else inputs,
            case.outputs if outputs is None else outputs,
            case.public_scalar if public_scalar is None else public_scalar,
            case.key_points if key_points is None else key_points,
            case.proof if proof is None else proof,
        )
    return info.value


# --- The group wrappers


def test_group_constants_and_identity_handling() -> None:
    one, zero = g.scalar_of_int(1), g.scalar_of_int(0)
    assert g.BASE.hex() == "e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76"
    assert g.base_mul(one) == g.BASE == g.mul(one, g.BASE)
    p = card_point(GAME_ID, 0)
    assert g.mul(zero, p) == g.IDENTITY == g.base_mul(zero)  # libsodium itself refuses these
    assert g.mul(g.scalar_of_int(5), g.IDENTITY) == g.IDENTITY
    assert g.add(p, g.IDENTITY) == p == g.add(g.IDENTITY, p) == g.sub(p, g.IDENTITY)
    assert g.sub(p, p) == g.IDENTITY and g.add(g.IDENTITY, g.IDENTITY) == g.IDENTITY
    assert g.add(p, g.mul(g.scalar_of_int(-1), p)) == g.IDENTITY
    assert g.sum_points([]) == g.IDENTITY and g.sum_points([p]) == p
    assert g.sum_points([p, p, p]) == g.mul(g.scalar_of_int(3), p)
    assert not g.is_point(g.IDENTITY) and g.is_point_or_identity(g.IDENTITY)
    assert g.int_of_scalar(g.scalar_of_int(-1)) == L - 1


@pytest.mark.parametrize(
    "bad", [top_bit_alias(card_point(GAME_ID, 1)), NOT_CANONICAL_FIELD, ODD_ENCODING, b"\x01" * 31]
)
def test_group_refuses_points_that_are_not_canonical(bad: bytes) -> None:
    p = card_point(GAME_ID, 0)
    assert not g.is_point(bad) and not g.is_point_or_identity(bad)
    one = g.scalar_of_int(1)
    for operation in (
        lambda: g.mul(one, bad),
        lambda: g.mul(g.scalar_of_int(0), bad),
        lambda: g.add(p, bad),
        lambda: g.add(bad, p),
        lambda: g.sub(p, bad),  # rbcl's own add/sub return the identity here, silently
        lambda: g.sum_points([bad]),
        lambda: g.sum_points([p, bad]),
    ):
        with pytest.raises(g.GroupError):
            operation()


def test_group_scalars() -> None:
    x, y = 2**200 + 12345, L - 7
    sx, sy = g.scalar_of_int(x), g.scalar_of_int(y)
    assert g.int_of_scalar(g.scalar_add(sx, sy)) == (x + y) % L
    assert g.int_of_scalar(g.scalar_sub(sx, sy)) == (x - y) % L
    assert g.int_of_scalar(g.scalar_mul(sx, sy)) == (x * y) % L
    assert g.int_of_scalar(g.scalar_neg(sx)) == (-x) % L
    assert g.int_of_scalar(g.scalar_invert(sx)) == pow(x, -1, L)
    assert g.is_scalar(sx) and not g.is_scalar(bytes(32)) and g.is_scalar_or_zero(bytes(32))
    for bad in (scalar_bytes(L), scalar_bytes(L + 1), b"\xff" * 32, b"\x01" * 31):
        assert not g.is_scalar_or_zero(bad)
        with pytest.raises(g.GroupError):
            g.mul(bad, g.BASE)
        with pytest.raises(g.GroupError):
            g.scalar_add(bad, sx)
    with pytest.raises(g.GroupError):
        g.scalar_invert(bytes(32))
    # Around the order (the canonical check has a shortcut on the top byte).
    for n in (L - 1, L, L + 1, 2**252, 2**252 - 1, 2**252 + 2**125, 2**253, 2**255, 2**256 - 1):
        assert g.is_scalar_or_zero(scalar_bytes(n)) == (n < L)


def test_hashes_are_length_prefixed() -> None:
    def lp(*parts: bytes) -> bytes:
        return b"".join(struct.pack(">I", len(p)) + p for p in parts)

    wide = hashlib.sha512(lp(b"tag", b"ab", b"")).digest()
    assert g.hash_to_scalar(b"tag", b"ab", b"") == scalar_bytes(int.from_bytes(wide, "little") % L)
    assert g.hash_to_point(b"tag", b"ab", b"") == g.from_hash(wide)
    assert g.hash_to_point(b"tag", b"a", b"b") != g.hash_to_point(b"tag", b"ab", b"")


@given(st.integers(0, L - 1), st.integers(0, L - 1))
def test_group_arithmetic_is_linear(x: int, y: int) -> None:
    sx, sy = g.scalar_of_int(x), g.scalar_of_int(y)
    assert g.add(g.base_mul(sx), g.base_mul(sy)) == g.base_mul(g.scalar_of_int(x + y))
    assert g.sub(g.base_mul(sx), g.base_mul(sy)) == g.base_mul(g.scalar_of_int(x - y))
    assert g.mul(sy, g.base_mul(sx)) == g.base_mul(g.scalar_of_int(x * y))


# --- The Fiat-Shamir transcript


def reference_transcript(domain: bytes, ops: list[tuple[str, bytes, object]]) -> list[bytes]:
    """The byte rule of fiat_shamir's docstring, written out independently."""

    def lp(x: bytes) -> bytes:
        return struct.pack(">I", len(x)) + x

    state = b"moska-p2p/v2/fs\x00" + lp(domain)
    out = []
    for op, label, data in ops:
        if op == "append":
            assert isinstance(data, bytes)
            state += b"\x01" + lp(label) + lp(data)
        elif op == "list":
            assert isinstance(data, list)
            state += b"\x02" + lp(label) + struct.pack(">I", len(data))
            state += b"".join(lp(item) for item in data)
        else:
            suffix = b"\x03" + lp(label) + struct.pack(">I", 0)
            digest = hashlib.sha512(state + suffix).digest()
            out.append(scalar_bytes(int.from_bytes(digest, "little") % L))
            state += suffix + digest
    return out


def test_transcript_follows_its_byte_rule() -> None:
    t = Transcript(b"dom")
    t.append(b"a", b"hello")
    t.append_list(b"l", [b"x", b"", b"yz"])
    c1 = t.challenge_scalar(b"c")
    es = t.challenge_scalars(b"e", 3)
    t.append(b"b", b"")
    c2 = t.challenge_scalar(b"c")
    ops: list[tuple[str, bytes, object]] = [
        ("append", b"a", b"hello"),
        ("list", b"l", [b"x", b"", b"yz"]),
        ("challenge", b"c", None),
        *(("challenge", b"e", None) for _ in range(3)),
        ("append", b"b", b""),
        ("challenge", b"c", None),
    ]
    assert [c1, *es, c2] == reference_transcript(b"dom", ops)
    assert len(set(es)) == 3 and all(g.is_scalar(x) for x in (c1, *es, c2))


def test_transcript_separates_domains_labels_and_framing() -> None:
    def challenge(domain: bytes, *appends: tuple[bytes, bytes]) -> bytes:
        t = Transcript(domain)
        for label, data in appends:
            t.append(label, data)
        return t.challenge_scalar(b"c")

    base = challenge(b"d", (b"a", b"bc"))
    assert base == challenge(b"d", (b"a", b"bc"))
    assert base != challenge(b"e", (b"a", b"bc"))
    assert base != challenge(b"d", (b"ab", b"c"))
    assert base != challenge(b"d", (b"a", b"b"), (b"", b"c"))
    t = Transcript(b"d")
    t.append_list(b"a", [b"bc"])
    assert base != t.challenge_scalar(b"c")


# --- The shuffle argument: honest proofs


@pytest.mark.parametrize("size", SIZES)
def test_shuffle_argument_verifies(size: int) -> None:
    case = shuffle_case(size)
    assert len(case.proof) == proof_size(size) == (4 * size + 5) * 32
    verify_shuffle(*case.statement(), case.proof)
    # Deterministic: the same statement and seed give the same bytes (a resumed peer).
    again = prove_shuffle(
        case.context, case.inputs, case.outputs, case.scalar, case.permutation, case.nonce_seed
    )
    assert again == case.proof


def test_shuffle_argument_hides_its_nonces_behind_the_seed() -> None:
    case = shuffle_case(3)
    other = prove_shuffle(
        case.context, case.inputs, case.outputs, case.scalar, case.permutation, b"\x07" * 32
    )
    assert other != case.proof
    verify_shuffle(*case.statement(), other)
    # Every commitment differs (fresh r_j): nothing in the proof repeats across the two.
    assert not {other[i : i + 32] for i in range(0, 6 * 32, 32)} & {
        case.proof[i : i + 32] for i in range(0, 6 * 32, 32)
    }


def test_generators_are_cached_and_independent() -> None:
    h0, hs, total = generators(4)
    assert generators(4) is generators(4)
    assert generators(6)[1][:4] == hs and generators(6)[0] == h0
    assert len({h0, *hs, g.BASE}) == 6
    assert total == g.sum_points(hs)
    assert hs[0] == g.hash_to_point(b"moska-p2p/v2/shuffle-generator", b"\x00\x00\x00\x01")


# --- The shuffle argument: every field of the proof damaged


@pytest.mark.parametrize("size", [1, 3])
def test_shuffle_every_bit_flip_is_refused(size: int) -> None:
    case = shuffle_case(size)
    for index, (name, k, _) in enumerate(shuffle_layout(size)):
        item = case.proof[32 * index : 32 * (index + 1)]
        for bit in (0, 1, 100, 200, 251, 254, 255):
            proof = replace_item(case.proof, index, flip_bit(item, bit))
            error = refuse_shuffle(case, proof=proof)
            assert error.position is None, (name, k, bit)


@pytest.mark.parametrize("size", [36, 52])
def test_shuffle_a_flip_in_each_field_of_a_full_deck_is_refused(size: int) -> None:
    case = shuffle_case(size)
    layout = shuffle_layout(size)
    # The first and last item of every field.
    picks: dict[str, list[int]] = {}
    for index, (name, _, _) in enumerate(layout):
        picks.setdefault(name, []).append(index)
    assert set(picks) == {"u", "chain", "c", "s1", "s2", "s3", "s_a", "s_prime", "s_hat"}
    for indices in picks.values():
        for index in {indices[0], indices[-1]}:
            item = case.proof[32 * index : 32 * (index + 1)]
            refuse_shuffle(case, proof=replace_item(case.proof, index, flip_bit(item, 3)))


def test_shuffle_proof_length_is_exact() -> None:
    case = shuffle_case(3)
    for proof in (
        case.proof[:-1],
        case.proof[:-32],
        case.proof + b"\x00",
        case.proof + case.proof[:32],
        b"",
    ):
        assert "bytes, not" in str(refuse_shuffle(case, proof=proof))
    refuse_shuffle(case, proof=bytearray(case.proof))  # type: ignore[arg-type]
    # A proof for one point fewer or more.
    assert "not" in str(refuse_shuffle(case, proof=shuffle_case(2).proof))
    refuse_shuffle(case, proof=shuffle_case(4).proof)


@pytest.mark.parametrize(
    "point", [g.IDENTITY, NOT_CANONICAL_FIELD, ODD_ENCODING, b"\xff" * 32], ids=repr
)
def test_shuffle_refuses_a_bad_point_in_the_proof(point: bytes) -> None:
    case = shuffle_case(3)
    for index in range(2 * 3):  # every u_j and every chain point
        error = refuse_shuffle(case, proof=replace_item(case.proof, index, point))
        assert "not a valid point" in str(error)
    # The same point under another encoding (bit 255 set): refused, though libsodium would
    # decode it to the very point the proof committed to.
    for index in range(2 * 3):
        item = case.proof[32 * index : 32 * (index + 1)]
        refuse_shuffle(case, proof=replace_item(case.proof, index, top_bit_alias(item)))


@pytest.mark.parametrize("value", [L, L + 1, L + 2**200, 2**256 - 1])
def test_shuffle_refuses_a_scalar_not_below_the_order(value: int) -> None:
    case = shuffle_case(3)
    for index in range(2 * 3, 4 * 3 + 5):
        # The same residue, or another: both refused (one encoding per scalar).
        error = refuse_shuffle(case, proof=replace_item(case.proof, index, scalar_bytes(value)))
        assert "canonical" in str(error)
        item = case.proof[32 * index : 32 * (index + 1)]
        alias = int.from_bytes(item, "little") + L
        if alias < 2**256:
            refuse_shuffle(case, proof=replace_item(case.proof, index, scalar_bytes(alias)))


# --- The shuffle argument: wrong statements


def test_shuffle_refuses_a_replaced_card() -> None:
    case = shuffle_case(52)
    outside = g.mul(case.scalar, card_point(GAME_ID, 52))  # a 53rd card, properly masked
    for position in (0, 17, 51):
        outputs = list(case.outputs)
        outputs[position] = outside
        refuse_shuffle(case, outputs=outputs)
        # The cheater proves its own false statement honestly: refused just the same.
        proof = prove_shuffle(
            case.context, case.inputs, outputs, case.scalar, case.permutation, case.nonce_seed
        )
        refuse_shuffle(case, outputs=outputs, proof=proof)


def test_shuffle_refuses_a_duplicated_or_missing_card() -> None:
    case = shuffle_case(36)
    duplicated = list(case.outputs)
    duplicated[5] = duplicated[6]
    refuse_shuffle(case, outputs=duplicated)
    proof = prove_shuffle(
        case.context, case.inputs, duplicated, case.scalar, case.permutation, case.nonce_seed
    )
    refuse_shuffle(case, outputs=duplicated, proof=proof)
    with pytest.raises(DeckError, match="repeats the point at position 5") as info:
        verify_pass1(*case.statement()[:2], duplicated, case.public_scalar, case.proof)
    assert info.value.position == 6
    # A card left out: one output fewer, with the proof of the shorter shuffle.
    short = case.outputs[:-1]
    perm = [i for i in case.permutation if i != case.permutation[-1]]
    short_inputs = [case.inputs[i] for i in sorted(perm)]
    remap = {old: new for new, old in enumerate(sorted(perm))}
    proof = prove_shuffle(
        case.context, short_inputs, short, case.scalar, [remap[i] for i in perm], case.nonce_seed
    )
    verify_shuffle(case.context, short_inputs, short, case.public_scalar, proof)
    assert "outputs are not a list of 36" in str(refuse_shuffle(case, outputs=short, proof=proof))
    refuse_shuffle(case, inputs=short_inputs, outputs=short)  # the 36-card proof


def test_shuffle_refuses_two_outputs_swapped_after_proving() -> None:
    case = shuffle_case(52)
    for i, j in ((0, 1), (10, 40), (50, 51)):
        outputs = list(case.outputs)
        outputs[i], outputs[j] = outputs[j], outputs[i]
        refuse_shuffle(case, outputs=outputs)


def test_shuffle_refuses_another_scalar() -> None:
    case = shuffle_case(36)
    other = g.scalar_mul(case.scalar, g.scalar_of_int(2))
    # Every output under another scalar b, the proof and A of that b: refused against a*B.
    outputs = [g.mul(other, case.inputs[i]) for i in case.permutation]
    proof = prove_shuffle(
        case.context, case.inputs, outputs, other, case.permutation, case.nonce_seed
    )
    verify_shuffle(case.context, case.inputs, outputs, g.base_mul(other), proof)
    refuse_shuffle(case, outputs=outputs, proof=proof)
    refuse_shuffle(case, outputs=outputs)
    # One output under another scalar.
    outputs = list(case.outputs)
    outputs[7] = g.mul(other, case.inputs[case.permutation[7]])
    refuse_shuffle(case, outputs=outputs)
    proof = prove_shuffle(
        case.context, case.inputs, outputs, case.scalar, case.permutation, case.nonce_seed
    )
    refuse_shuffle(case, outputs=outputs, proof=proof)
    # The honest outputs under a claimed A of another scalar.
    refuse_shuffle(case, public_scalar=g.base_mul(other))


def test_shuffle_refuses_another_context_or_statement() -> None:
    case = shuffle_case(36)
    for context in (
        deck_context(OTHER_GAME, 0, "shuffle1"),
        deck_context(GAME_ID, 1, "shuffle1"),
        deck_context(GAME_ID, 0, "shuffle2"),
        case.context + b"\x00",
        b"",
    ):
        refuse_shuffle(case, context=context)
    other = shuffle_case(36, "another statement")
    refuse_shuffle(case, proof=other.proof)
    refuse_shuffle(other, proof=case.proof)
    # The inputs changed under the same outputs.
    inputs = list(case.inputs)
    inputs[3] = card_point(GAME_ID, 52)
    refuse_shuffle(case, inputs=inputs)


def test_shuffle_refuses_a_malformed_statement_naming_the_position() -> None:
    case = shuffle_case(3)
    for bad in (g.IDENTITY, top_bit_alias(case.outputs[1]), NOT_CANONICAL_FIELD, b"short"):
        outputs = list(case.outputs)
        outputs[1] = bad
        assert refuse_shuffle(case, outputs=outputs).position == 1
        inputs = list(case.inputs)
        inputs[2] = bad
        assert refuse_shuffle(case, inputs=inputs).position == 2
        assert refuse_shuffle(case, public_scalar=bad).position is None
    assert refuse_shuffle(case, inputs=[]).position is None
    refuse_shuffle(case, outputs=case.outputs[:2])
    refuse_shuffle(case, outputs="not a list")  # type: ignore[arg-type]
    refuse_shuffle(case, public_scalar=g.IDENTITY)


def test_prove_shuffle_refuses_bad_arguments() -> None:
    case = shuffle_case(3)
    args = (case.context, case.inputs, case.outputs, case.scalar, case.permutation)
    with pytest.raises(ValueError, match="permutation"):
        prove_shuffle(*args[:4], [0, 0, 1], case.nonce_seed)
    with pytest.raises(ValueError, match="same non-zero length"):
        prove_shuffle(case.context, case.inputs, case.outputs[:2], *args[3:], case.nonce_seed)
    with pytest.raises(ValueError, match="scalar"):
        prove_shuffle(*args[:3], bytes(32), case.permutation, case.nonce_seed)
    with pytest.raises(ValueError, match="nonce_seed"):
        prove_shuffle(*args, b"short seed")


# --- The re-keying proof


@pytest.mark.parametrize("size", SIZES)
def test_rekey_proof_verifies(size: int) -> None:
    case = rekey_case(size)
    assert len(case.proof) == 96 * size
    verify_rekey(*case.statement(), case.proof)
    # With or without the prover's a (the fast path), the same bytes.
    fast = prove_rekey(*case.statement(), case.witnesses, case.nonce_seed, scalar=case.scalar)
    assert fast == case.proof
    assert all(g.base_mul(k) == kp for k, kp in zip(case.keys, case.key_points, strict=True))


def test_rekey_every_bit_flip_is_refused_at_its_position() -> None:
    case = rekey_case(3)
    for index, (_, j, _) in enumerate(rekey_layout(3)):
        item = case.proof[32 * index : 32 * (index + 1)]
        for bit in (0, 1, 100, 200, 251, 252, 255):
            error = refuse_rekey(case, proof=replace_item(case.proof, index, flip_bit(item, bit)))
            assert error.position == j


def test_rekey_proof_length_and_scalars() -> None:
    case = rekey_case(3)
    for proof in (case.proof[:-1], case.proof[:-96], case.proof + bytes(96), b""):
        assert refuse_rekey(case, proof=proof).position is None
    for index in range(9):
        for value in (L, L + 1, 2**256 - 1):
            error = refuse_rekey(case, proof=replace_item(case.proof, index, scalar_bytes(value)))
            assert error.position == index // 3
    # A commitment is a valid point other than the identity (an honest one is never that).
    for index in (3, 4):
        for bad in (g.IDENTITY, NOT_CANONICAL_FIELD, top_bit_alias(case.proof[32 * index :][:32])):
            error = refuse_rekey(case, proof=replace_item(case.proof, index, bad))
            assert error.position == 1
            assert "commitment" in str(error)


def test_rekey_copy_attack_is_refused_at_the_target_position() -> None:
    """Seat copies the card of position j into position j' (masked with its valid key for j'):
    the proof fails at j', however the cheater builds it."""
    case = rekey_case(36)
    j, target = 4, 20
    outputs = list(case.outputs)
    outputs[target] = g.mul(case.witnesses[target], case.inputs[j])
    # (a) The honest prover run on the false statement.
    proof = prove_rekey(
        case.context,
        case.inputs,
        outputs,
        case.public_scalar,
        case.key_points,
        case.witnesses,
        case.nonce_seed,
    )
    assert refuse_rekey(case, outputs=outputs, proof=proof).position == target
    # (b) A valid DLEQ for position j' stated over in[j] (a true statement, the wrong base).
    fake_inputs = list(case.inputs)
    fake_inputs[target] = case.inputs[j]
    proof = prove_rekey(
        case.context,
        fake_inputs,
        outputs,
        case.public_scalar,
        case.key_points,
        case.witnesses,
        case.nonce_seed,
    )
    verify_rekey(case.context, fake_inputs, outputs, case.public_scalar, case.key_points, proof)
    assert refuse_rekey(case, outputs=outputs, proof=proof).position == target
    with pytest.raises(DeckError) as info:
        verify_pass2(case.context, case.inputs, outputs, case.public_scalar, case.key_points, proof)
    assert info.value.position == target


def test_rekey_refuses_a_wrong_key_point() -> None:
    case = rekey_case(36)
    key_points = list(case.key_points)
    key_points[9] = case.key_points[10]
    assert refuse_rekey(case, key_points=key_points).position == 9
    # A key point of the cheater's choosing, with the matching proof for the masking it did.
    rogue = g.scalar_of_int(123456789)
    x = g.scalar_mul(g.scalar_invert(case.scalar), rogue)
    outputs = list(case.outputs)
    outputs[9] = g.mul(x, case.inputs[9])
    key_points[9] = g.base_mul(rogue)
    proof = prove_rekey(
        case.context,
        case.inputs,
        outputs,
        case.public_scalar,
        key_points,
        [*case.witnesses[:9], x, *case.witnesses[10:]],
        case.nonce_seed,
    )
    # (It is a true statement: the proof verifies, and the key point is what the seat's key
    # must open later. What it cannot do is keep the old key point with the new masking.)
    verify_rekey(case.context, case.inputs, outputs, case.public_scalar, key_points, proof)
    assert refuse_rekey(case, outputs=outputs, proof=proof).position == 9
    for bad in (g.IDENTITY, NOT_CANONICAL_FIELD, top_bit_alias(case.key_points[2])):
        key_points = list(case.key_points)
        key_points[2] = bad
        assert refuse_rekey(case, key_points=key_points).position == 2


def test_rekey_refuses_a_proof_for_another_a() -> None:
    case = rekey_case(36)
    assert refuse_rekey(case, public_scalar=g.base_mul(g.scalar_of_int(5))).position == 0
    assert refuse_rekey(case, public_scalar=g.IDENTITY).position is None
    other = rekey_case(36, "other seat")
    assert refuse_rekey(case, public_scalar=other.public_scalar).position == 0
    assert refuse_rekey(case, proof=other.proof).position == 0


def test_rekey_refuses_another_context_a_swap_or_a_bad_point() -> None:
    case = rekey_case(3)
    for context in (
        deck_context(OTHER_GAME, 0, "shuffle2"),
        deck_context(GAME_ID, 1, "shuffle2"),
        deck_context(GAME_ID, 0, "shuffle1"),
    ):
        assert refuse_rekey(case, context=context).position == 0
    swapped = case.proof[96:192] + case.proof[:96] + case.proof[192:]
    assert refuse_rekey(case, proof=swapped).position == 0
    outputs = list(case.outputs)
    outputs[1], outputs[2] = outputs[2], outputs[1]
    assert refuse_rekey(case, outputs=outputs).position == 1
    for bad in (g.IDENTITY, ODD_ENCODING, b"\x00" * 31):
        outputs = list(case.outputs)
        outputs[2] = bad
        assert refuse_rekey(case, outputs=outputs).position == 2
        inputs = list(case.inputs)
        inputs[1] = bad
        assert refuse_rekey(case, inputs=inputs).position == 1
    assert refuse_rekey(case, key_points=case.key_points[:2]).position is None
    assert refuse_rekey(case, inputs=[]).position is None


def test_rekey_names_the_first_failing_position() -> None:
    case = rekey_case(32)
    proof = flip_bit(flip_bit(case.proof, 96 * 30 * 8 + 9), 96 * 7 * 8 + 9)
    assert refuse_rekey(case, proof=proof).position == 7


# --- Arbitrary bytes: only ProofError, never anything else


def _items(draw: st.DrawFn, count: int, pool: list[bytes]) -> list[bytes]:
    return [
        draw(
            st.one_of(
                st.sampled_from(pool),
                st.binary(min_size=32, max_size=32),
                st.integers(0, 2**256 - 1).map(scalar_bytes),
                st.integers(0, 3).map(scalar_bytes),
            )
        )
        for _ in range(count)
    ]


@st.composite
def shuffle_inputs(draw: st.DrawFn) -> tuple[list[bytes], list[bytes], bytes, bytes]:
    case = shuffle_case(2)
    pool = [
        *case.inputs,
        *case.outputs,
        case.public_scalar,
        g.IDENTITY,
        *[case.proof[i : i + 32] for i in range(0, len(case.proof), 32)],
    ]
    inputs = draw(st.one_of(st.just(case.inputs), st.lists(st.sampled_from(pool), max_size=3)))
    outputs = draw(st.one_of(st.just(case.outputs), st.lists(st.sampled_from(pool), max_size=3)))
    scalar = draw(st.one_of(st.just(case.public_scalar), st.sampled_from(pool), st.binary()))
    count = draw(st.sampled_from([13, 13, 13, 12, 14, 0]))
    proof = b"".join(_items(draw, count, pool))
    if draw(st.booleans()):
        proof = draw(st.binary(max_size=500))
    return inputs, outputs, scalar, proof


@given(shuffle_inputs())
def test_shuffle_verifier_raises_only_proof_errors(
    args: tuple[list[bytes], list[bytes], bytes, bytes],
) -> None:
    inputs, outputs, scalar, proof = args
    case = shuffle_case(2)
    with contextlib.suppress(ProofError):
        verify_shuffle(case.context, inputs, outputs, scalar, proof)
    with contextlib.suppress(DeckError):
        verify_pass1(case.context, inputs, outputs, scalar, proof)


@st.composite
def rekey_inputs(draw: st.DrawFn) -> tuple[list[bytes], list[bytes], bytes, list[bytes], bytes]:
    case = rekey_case(2)
    pool = [
        *case.inputs,
        *case.outputs,
        *case.key_points,
        case.public_scalar,
        g.IDENTITY,
        *[case.proof[i : i + 32] for i in range(0, len(case.proof), 32)],
    ]
    lists = [
        draw(st.one_of(st.just(honest), st.lists(st.sampled_from(pool), max_size=3)))
        for honest in (case.inputs, case.outputs, case.key_points)
    ]
    scalar = draw(st.one_of(st.just(case.public_scalar), st.sampled_from(pool), st.binary()))
    proof = b"".join(_items(draw, draw(st.sampled_from([6, 6, 5, 7, 0])), pool))
    if draw(st.booleans()):
        proof = case.proof[:96] + proof[96:]  # a right first position: reach position 1
    return lists[0], lists[1], scalar, lists[2], proof


@given(rekey_inputs())
def test_rekey_verifier_raises_only_proof_errors(
    args: tuple[list[bytes], list[bytes], bytes, list[bytes], bytes],
) -> None:
    inputs, outputs, scalar, key_points, proof = args
    case = rekey_case(2)
    with contextlib.suppress(ProofError):
        verify_rekey(case.context, inputs, outputs, scalar, key_points, proof)
    with contextlib.suppress(DeckError):
        verify_pass2(case.context, inputs, outputs, scalar, key_points, proof)
