"""Batch verification of the re-keying proof and the native multi-scalar multiplication.

The native sum (moska_p2p.crypto.msm) must equal libsodium's one product at a time and refuse
exactly the encodings libsodium's checks refuse; the batch (dleq.rekey_batch_holds) must accept
every valid proof whatever the weights, refuse every corruption, and the verifier must use
weights nobody else knows: with known weights two cancelling errors hide a copy attack
(PROTOCOL.md §11.5), and the verifier's fresh weights catch it. A failed batch is checked again
position by position, so the verdict names the first failing position. The native parts are
skipped where libdecaf or a C compiler is missing (the pure path is the default).
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Iterator

import pytest

from moska_p2p.crypto import decaf, dleq, msm, shuffle_proof
from moska_p2p.crypto import deck as mp
from moska_p2p.crypto import group as g
from moska_p2p.crypto.proofs import ProofError

L = g.GROUP_ORDER
native = pytest.mark.skipif(
    not msm.available(), reason=f"no native MSM: {msm.unavailable_reason()}"
)


def _scalar(bits: int = 253) -> bytes:
    return g.scalar_of_int(secrets.randbelow(min(2**bits, L)))


def _point() -> bytes:
    return g.hash_to_point(b"test-batch", secrets.token_bytes(16))


@functools.cache
def _case(
    size: int,
) -> tuple[bytes, list[bytes], list[bytes], bytes, list[bytes], list[bytes], bytes]:
    """A seat's pass 2 of ``size`` positions: context, X, Y, A, K, witnesses, proof."""
    game_id = bytes(range(32))
    first = mp.DeckSecrets.from_seed(b"\x11" * 32, game_id, 0, size)
    second = mp.DeckSecrets.from_seed(b"\x22" * 32, game_id, 1, size)
    cards = mp.card_points(game_id, range(size))
    inputs, _ = mp.pass1(first, mp.deck_context(game_id, 0, "shuffle1"), cards)
    context = mp.deck_context(game_id, 1, "shuffle2")
    outputs, key_points, proof = mp.pass2(second, context, inputs)
    witnesses = [g.scalar_mul(second.scalar_inverse, key) for key in second.keys]
    return context, inputs, outputs, second.public_scalar, key_points, witnesses, proof


def _statement(size: int) -> tuple[bytes, list[bytes], list[bytes], bytes, list[bytes]]:
    context, inputs, outputs, a_point, key_points, _, _ = _case(size)
    return context, inputs, outputs, a_point, key_points


def _hidden_copy_attack(size: int, p: int, q: int, weights: list[int]) -> tuple[list[bytes], bytes]:
    """Position ``p`` re-masks the card of position 0 (a false statement); its equation's error
    ``D`` is cancelled by shifting ``q``'s commitment ``R_q`` by ``(z_p/z_q)*D`` before ``q``'s
    challenge is drawn: the batch equation holds for these weights, and only for weights the
    forger knew in advance."""
    context, inputs, outputs, a_point, key_points, witnesses, proof = _case(size)
    outputs = list(outputs)
    outputs[p] = g.mul(witnesses[p], inputs[0])

    def position(j: int, w: bytes, shift: bytes) -> bytes:
        r = g.add(g.mul(w, inputs[j]), shift)
        s_point = g.mul(w, a_point)
        c = dleq._challenge(context, j, inputs[j], outputs[j], a_point, key_points[j], r, s_point)
        return r + s_point + g.scalar_add(w, g.scalar_mul(c, witnesses[j]))

    forged_p = position(p, _scalar(), g.IDENTITY)
    r, s_point, s = forged_p[:32], forged_p[32:64], forged_p[64:]
    c = dleq._challenge(context, p, inputs[p], outputs[p], a_point, key_points[p], r, s_point)
    error = g.sub(g.sub(g.mul(s, inputs[p]), g.mul(c, outputs[p])), r)
    assert error != g.IDENTITY  # the statement is false: position p alone does not verify
    ratio = g.scalar_of_int(weights[2 * p] * pow(weights[2 * q], -1, L))
    forged_q = position(q, _scalar(), g.mul(ratio, error))
    forged = bytearray(proof)
    forged[96 * p : 96 * (p + 1)] = forged_p
    forged[96 * q : 96 * (q + 1)] = forged_q
    return outputs, bytes(forged)


@pytest.fixture
def batching() -> Iterator[None]:
    if not msm.available():
        pytest.skip(f"no native MSM: {msm.unavailable_reason()}")
    with decaf.use():
        assert msm.active()
        yield


# --- The native sum


@native
def test_the_native_sum_equals_libsodiums() -> None:
    for size in (1, 2, 3, 7, 53, 200):
        points = [_point() for _ in range(size)]
        scalars = [_scalar(secrets.choice((1, 8, 128, 253))) for _ in range(size)]
        scalars[0] = g.scalar_of_int(L - 1)
        negate = bytes(secrets.randbelow(2) for _ in range(size))
        expected = msm.reference_combination(points, scalars, negate)
        assert msm.combination(points, scalars, negate) == expected
        for method, parameter in ((1, 2), (1, 4), (1, 5), (1, 6), (2, 2), (2, 5), (2, 6), (2, 8)):
            got = msm.combination(points, scalars, negate, method=method, parameter=parameter)
            assert got == expected, (size, method, parameter)
    assert msm.combination([], []) == g.IDENTITY


@native
def test_the_native_sum_reaches_the_identity_and_zero_scalars() -> None:
    p, s = _point(), _scalar()
    assert msm.combination([p, p], [s, s], b"\x00\x01") == g.IDENTITY
    assert msm.combination([p], [bytes(32)]) == g.IDENTITY
    assert msm.combination([p, p], [s, g.scalar_neg(s)]) == g.IDENTITY
    with pytest.raises(g.GroupError):
        msm.combination([p], [L.to_bytes(32, "little")])
    with pytest.raises(ValueError):
        msm.combination([p, p], [s])


@native
def test_the_native_sum_refuses_exactly_the_invalid_encodings() -> None:
    valid = _point()
    edge = [
        g.IDENTITY,
        valid[:31] + bytes([valid[31] | 0x80]),  # libsodium ignores bit 255; the protocol not
        (2**255 - 19 + 1).to_bytes(32, "little"),  # a field element >= p
        (1).to_bytes(32, "little"),  # an odd s
        (2**255 - 1).to_bytes(32, "little"),
    ]
    for encoding in edge + [secrets.token_bytes(32) for _ in range(400)]:
        expected = g.is_point(encoding)
        assert (msm.combination([valid, encoding], [_scalar(), _scalar()]) is not None) == expected
    assert msm.combination([g.IDENTITY, valid], [_scalar(), _scalar()], allow_identity=True)
    assert msm.combination([valid, b"\x00" * 31], [_scalar(), _scalar()]) is None
    assert msm.combination([valid, "x" * 32], [_scalar(), _scalar()]) is None  # type: ignore[list-item]


def test_without_a_compiler_the_pure_path_is_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.setattr(msm, "_cache_directory", lambda: tmp_path)
    monkeypatch.setattr(msm.shutil, "which", lambda name: None)
    msm._build.cache_clear()
    try:
        assert not msm.available()
        assert "compiler" in msm.unavailable_reason() or "libdecaf" in msm.unavailable_reason()
        with decaf.use(decaf.available()):
            assert not msm.active()
            context, inputs, outputs, a_point, key_points, _, proof = _case(3)
            dleq.verify_rekey(context, inputs, outputs, a_point, key_points, proof)
    finally:
        msm._build.cache_clear()


# --- The batch equation


@pytest.fixture(params=[False, True])
def native_sum(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Each test twice: with the pure sums, and with the native ones (skipped where there
    are none), which must agree."""
    native: bool = request.param
    if native and not msm.available():
        pytest.skip("no native MSM")
    monkeypatch.setattr(msm, "available", lambda: native)
    return native


def test_the_batch_holds_for_a_valid_proof_and_any_weights(native_sum: bool) -> None:
    size = 4
    proof = _case(size)[6]
    for weights in (dleq.fresh_weights(2 * size), [1] * (2 * size), [0] * (2 * size)):
        assert dleq.rekey_batch_holds(*_statement(size), proof, weights)
    with pytest.raises(ValueError):
        dleq.rekey_batch_holds(*_statement(size), proof, [1] * (2 * size - 1))
    with pytest.raises(ValueError):
        dleq.rekey_batch_holds(*_statement(size), proof, [L] * (2 * size))


@native
def test_every_corrupted_item_fails_the_batch_and_the_verdict_names_its_position(
    batching: None,
) -> None:
    size = 4
    context, inputs, outputs, a_point, key_points, _, proof = _case(size)
    for item in range(3 * size):
        for corrupt in (
            lambda x: bytes([x[0] ^ 1]) + x[1:],
            lambda x: x[:31] + bytes([x[31] | 0x80]),
            lambda x: g.IDENTITY,
        ):
            bad = (
                proof[: 32 * item]
                + corrupt(proof[32 * item : 32 * item + 32])
                + proof[32 * item + 32 :]
            )
            weights = dleq.fresh_weights(2 * size)
            assert not dleq.rekey_batch_holds(
                context, inputs, outputs, a_point, key_points, bad, weights
            )
            with pytest.raises(ProofError) as info:
                dleq.verify_rekey(context, inputs, outputs, a_point, key_points, bad)
            assert info.value.position == item // 3


@native
def test_a_valid_proof_is_accepted_by_the_batch_alone(
    batching: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def not_called(*args: object) -> None:
        raise AssertionError("a valid proof was checked position by position")

    monkeypatch.setattr(dleq, "_verify_each", not_called)
    context, inputs, outputs, a_point, key_points, _, proof = _case(52)
    dleq.verify_rekey(context, inputs, outputs, a_point, key_points, proof)
    mp.verify_pass2(context, inputs, outputs, a_point, key_points, proof)


@native
def test_a_failed_batch_names_the_first_failing_position(batching: None) -> None:
    context, inputs, outputs, a_point, key_points, _, proof = _case(32)
    bad = bytearray(proof)
    bad[96 * 30 + 70] ^= 1  # s_30
    bad[96 * 7 + 5] ^= 1  # R_7
    with pytest.raises(ProofError) as info:
        dleq.verify_rekey(context, inputs, outputs, a_point, key_points, bytes(bad))
    assert info.value.position == 7
    wrong = list(key_points)
    wrong[12] = g.base_mul(_scalar())
    with pytest.raises(ProofError) as info:
        dleq.verify_rekey(context, inputs, outputs, a_point, wrong, proof)
    assert info.value.position == 12


# --- Why the weights must be the verifier's own


def test_known_weights_let_two_cancelling_errors_through_fresh_ones_do_not(
    native_sum: bool,
) -> None:
    size, p, q = 6, 2, 4
    # Weights a verifier could be tempted to use: all ones, or any the forger can compute.
    for known in ([1] * (2 * size), [3 + j for j in range(2 * size)]):
        outputs, forged = _hidden_copy_attack(size, p, q, known)
        context, inputs, _, a_point, key_points = _statement(size)
        assert dleq.rekey_batch_holds(context, inputs, outputs, a_point, key_points, forged, known)
        fresh = dleq.fresh_weights(2 * size)
        assert not dleq.rekey_batch_holds(
            context, inputs, outputs, a_point, key_points, forged, fresh
        )


def test_the_verifier_catches_the_hidden_copy_attack_on_every_path() -> None:
    size, p, q = 6, 2, 4
    outputs, forged = _hidden_copy_attack(size, p, q, [1] * (2 * size))
    context, inputs, _, a_point, key_points = _statement(size)
    paths = [False, True] if decaf.available() else [False]
    for accelerated in paths:
        with decaf.use(accelerated):
            with pytest.raises(ProofError) as info:
                dleq.verify_rekey(context, inputs, outputs, a_point, key_points, forged)
            assert info.value.position == p
            with pytest.raises(mp.DeckError) as deck_info:
                mp.verify_pass2(context, inputs, outputs, a_point, key_points, forged)
            assert deck_info.value.position == p


def test_fresh_weights_are_128_bit_and_never_repeat() -> None:
    first, second = dleq.fresh_weights(64), dleq.fresh_weights(64)
    assert len(first) == 64 and all(0 <= z < 2**128 for z in first + second)
    assert first != second
    assert max(first) >= 2**120  # 64 draws below 2^120 have probability 2^-512


# --- The shuffle argument's two long sums (no batch: the same bytes, sooner)


def test_the_shuffle_verifiers_commitments_are_equal_with_or_without_the_native_sum(
    native_sum: bool,
) -> None:
    if not decaf.available():
        pytest.skip("no libdecaf")
    size = 6
    game_id = bytes(range(32))
    secrets_ = mp.DeckSecrets.from_seed(b"\x33" * 32, game_id, 0, size)
    cards = mp.card_points(game_id, range(size))
    context = mp.deck_context(game_id, 0, "shuffle1")
    outputs, proof = mp.pass1(secrets_, context, cards)
    items = [proof[i : i + 32] for i in range(0, len(proof), 32)]
    u, chain = items[:size], items[size : 2 * size]
    e = [_scalar() for _ in range(size)]
    for scalars in (items[2 * size :], [_scalar() for _ in range(2 * size + 5)]):
        arguments = (cards, outputs, secrets_.public_scalar, u, chain, e, scalars)
        pure = shuffle_proof._commitments_pure(*arguments)
        with decaf.use():
            assert shuffle_proof._commitments_decaf(*arguments) == pure
    with decaf.use():
        mp.verify_pass1(context, cards, outputs, secrets_.public_scalar, proof)
        bad = bytearray(proof)
        bad[32 * (2 * size + 3)] ^= 1  # s_3, which only T_3 uses
        with pytest.raises(mp.DeckError):
            mp.verify_pass1(context, cards, outputs, secrets_.public_scalar, bytes(bad))


@native
def test_the_native_chain_commitments_refuse_an_invalid_point() -> None:
    h0, chain = _point(), [_point() for _ in range(3)]
    s_hat, s_prime, c = [_scalar() for _ in range(3)], [_scalar() for _ in range(3)], _scalar()
    expected = [
        g.sub(
            g.add(g.base_mul(s_hat[k]), g.mul(s_prime[k], chain[k - 1] if k else h0)),
            g.mul(c, chain[k]),
        )
        for k in range(3)
    ]
    assert msm.chain_commitments(h0, chain, s_hat, s_prime, c) == expected
    for bad in (g.IDENTITY, chain[1][:31] + bytes([chain[1][31] | 0x80])):
        assert msm.chain_commitments(h0, [chain[0], bad, chain[2]], s_hat, s_prime, c) is None
        assert msm.chain_commitments(bad, chain, s_hat, s_prime, c) is None
    with pytest.raises(ValueError):
        msm.chain_commitments(h0, chain, s_hat[:2], s_prime, c)
