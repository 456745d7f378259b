"""The optional libdecaf accelerator (moska_p2p.crypto.decaf) computes what libsodium computes.

Every primitive is compared with moska_p2p.crypto.group on random points and scalars, the
identity included; then every proof vector (valid and invalid) and every single-item
corruption of fresh proofs must give the same verdict, message and position on both paths, and
the verifiers' recomputed commitments must be equal byte for byte. Skipped where libdecaf is
not installed (apt-get install libdecaf0): the pure path is the default and needs nothing.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from moska_p2p.crypto import decaf, dleq, shuffle_proof
from moska_p2p.crypto import deck as mp
from moska_p2p.crypto import group as g
from moska_p2p.crypto.proofs import ProofError


def _vectors_module() -> Any:
    """The proof-vector tests' module (tests/ is no package): its cases and replay helper."""
    path = Path(__file__).with_name("test_proof_vectors.py")
    spec = importlib.util.spec_from_file_location("proof_vectors_for_accel", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_VECTOR_TESTS = _vectors_module()
CASES: list[tuple[str, dict[str, Any]]] = _VECTOR_TESTS.CASES
VECTORS: dict[str, Any] = _VECTOR_TESTS.VECTORS
_verify: Callable[[str, dict[str, Any]], None] = _VECTOR_TESTS._verify

pytestmark = pytest.mark.skipif(not decaf.available(), reason="libdecaf is not installed")


def _scalar() -> bytes:
    return g.scalar_of_int(secrets.randbelow(g.GROUP_ORDER))


def _point() -> bytes:
    return g.hash_to_point(b"test-accel", secrets.token_bytes(16))


def test_off_unless_asked_for() -> None:
    if os.environ.get(decaf.ENVIRONMENT_VARIABLE, "").lower() != "decaf":
        assert not decaf.active()
    with decaf.use():
        assert decaf.active()
    with decaf.use(False):
        assert not decaf.active()


def test_primitives_match_libsodium() -> None:
    for _ in range(20):
        p, q, s, t = _point(), _point(), _scalar(), _scalar()
        dp, dq = decaf.decode(p), decaf.decode(q)
        assert decaf.encode(dp) == p
        assert decaf.encode(decaf.add(dp, dq)) == g.add(p, q)
        assert decaf.encode(decaf.sub(dp, dq)) == g.sub(p, q)
        assert decaf.encode(decaf.mul(s, dp)) == g.mul(s, p)
        assert decaf.encode(decaf.double_mul(s, dp, t, dq)) == g.add(g.mul(s, p), g.mul(t, q))
        first, second = decaf.dual_mul(dp, s, t)
        assert (decaf.encode(first), decaf.encode(second)) == (g.mul(s, p), g.mul(t, p))
        assert decaf.encode(decaf.base_mul(s)) == g.base_mul(s)
        assert decaf.encode(decaf.base_double_mul_vartime(s, t, dq)) == g.add(
            g.base_mul(s), g.mul(t, q)
        )
        assert decaf.encode(decaf.Table(p).mul(s)) == g.mul(s, p)


def test_the_identity_and_zero_scalars() -> None:
    p = _point()
    identity = decaf.decode(g.IDENTITY)
    assert decaf.encode(identity) == g.IDENTITY
    assert decaf.encode(decaf.sub(decaf.decode(p), decaf.decode(p))) == g.IDENTITY
    assert decaf.encode(decaf.mul(bytes(32), decaf.decode(p))) == g.IDENTITY
    assert decaf.encode(decaf.add(identity, decaf.decode(p))) == p


def test_invalid_encodings_and_scalars_are_refused() -> None:
    top_bit = bytearray(_point())
    top_bit[31] |= 0x80
    for bad in (bytes(top_bit), b"\xff" * 32, _point()[:31]):
        with pytest.raises(g.GroupError):
            decaf.decode(bad)
    with pytest.raises(g.GroupError):
        decaf.mul(g.GROUP_ORDER.to_bytes(32, "little"), decaf.decode(_point()))


def _outcome(check: Callable[[], Any]) -> tuple[str, str, int | None]:
    """What a verification says: nothing, or the error's type, text and position."""
    try:
        check()
    except (ProofError, mp.DeckError) as error:
        return type(error).__name__, str(error), error.position
    return "ok", "", None


def _both(check: Callable[[], Any]) -> tuple[str, str, int | None]:
    with decaf.use(False):
        pure = _outcome(check)
    with decaf.use():
        fast = _outcome(check)
    assert fast == pure
    return pure


def test_every_proof_vector_gives_the_same_verdict() -> None:
    assert _both(lambda: _verify("shuffle", VECTORS["shuffle"]["valid"]))[0] == "ok"
    assert _both(lambda: _verify("rekey", VECTORS["rekey"]["valid"]))[0] == "ok"
    for kind, case in CASES:
        verdict = _both(lambda kind=kind, case=case: _verify(kind, case))  # type: ignore[misc]
        assert verdict[0] == "ProofError" and verdict[2] == case["expect"]["position"]


def _small_deck(size: int) -> tuple[list[bytes], list[mp.DeckSecrets], bytes]:
    game_id = bytes(range(32))
    seeds = [bytes([seat + 7]) * 32 for seat in range(2)]
    table = [mp.DeckSecrets.from_seed(seed, game_id, s, size) for s, seed in enumerate(seeds)]
    return mp.card_points(game_id, range(size)), table, game_id


def test_every_single_item_corruption_gives_the_same_verdict() -> None:
    size = 5
    cards, table, game_id = _small_deck(size)
    ctx1, ctx2 = (mp.deck_context(game_id, 0, stage) for stage in ("shuffle1", "shuffle2"))
    out1, proof1 = mp.pass1(table[0], ctx1, cards)
    a_point = table[0].public_scalar
    out2, keys, proof2 = mp.pass2(table[0], ctx2, out1)
    assert _both(lambda: mp.verify_pass1(ctx1, cards, out1, a_point, proof1))[0] == "ok"
    assert _both(lambda: mp.verify_pass2(ctx2, out1, out2, a_point, keys, proof2))[0] == "ok"
    for item in range(len(proof1) // 32):
        bad = bytearray(proof1)
        bad[item * 32] ^= 0x01
        verdict = _both(lambda bad=bad: mp.verify_pass1(ctx1, cards, out1, a_point, bytes(bad)))  # type: ignore[misc]
        assert verdict[0] == "DeckError"
    for item in range(len(proof2) // 32):
        bad = bytearray(proof2)
        bad[item * 32] ^= 0x01
        verdict = _both(
            lambda bad=bad: mp.verify_pass2(ctx2, out1, out2, a_point, keys, bytes(bad))  # type: ignore[misc]
        )
        assert verdict[0] == "DeckError" and verdict[2] == item // 3
    for j in range(size):  # a wrong key point or output is named at its own position
        wrong_keys = list(keys)
        wrong_keys[j] = g.base_mul(_scalar())
        verdict = _both(lambda k=wrong_keys: mp.verify_pass2(ctx2, out1, out2, a_point, k, proof2))  # type: ignore[misc]
        assert verdict[2] == j


def test_the_shuffle_verifiers_commitments_are_equal_byte_for_byte() -> None:
    size = 6
    cards, table, game_id = _small_deck(size)
    ctx = mp.deck_context(game_id, 0, "shuffle1")
    outputs, proof = mp.pass1(table[0], ctx, cards)
    items = [proof[i : i + 32] for i in range(0, len(proof), 32)]
    u, chain = items[:size], items[size : 2 * size]
    e = [_scalar() for _ in range(size)]
    for scalars in (items[2 * size :], [_scalar() for _ in range(2 * size + 5)]):
        arguments = (cards, outputs, table[0].public_scalar, u, chain, e, scalars)
        pure = shuffle_proof._commitments_pure(*arguments)
        with decaf.use():
            fast = shuffle_proof._commitments_decaf(*arguments)
        assert fast == pure


def test_the_rekey_verifiers_commitments_are_equal_byte_for_byte() -> None:
    p_in, p_out, a_point, key_point = (_point() for _ in range(4))
    c, s = _scalar(), _scalar()
    pure = (g.sub(g.mul(s, p_in), g.mul(c, p_out)), g.sub(g.mul(s, a_point), g.mul(c, key_point)))
    fast = dleq._commitments_decaf(p_in, p_out, decaf.decode(a_point), key_point, c, s)
    assert fast == pure
