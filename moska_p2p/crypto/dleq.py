"""The pass-2 re-keying proof: one Chaum-Pedersen proof of equal discrete logs per position.

In pass 2 a seat with pass-1 scalar ``a`` (public point ``A = a*B``) and position keys ``k_j``
(public key points ``K_j = k_j*B``) replaces its mask on every position:
``out[j] = x_j * in[j]`` with ``x_j = a^-1 * k_j``. Since ``x_j * A = k_j * B = K_j``, the
statement for every ``j`` is that one scalar ``x_j`` satisfies both

    out[j] = x_j * in[j]      and      K[j] = x_j * A,

a discrete-log equality (Chaum and Pedersen, "Wallet databases with observers", CRYPTO 1992).
It is what makes a released key checkable: ``k_j`` opens position ``j`` only if
``k_j * B = K_j``, and the proof ties ``K_j`` to that position's masking, so a seat can neither
give a wrong key later nor mask a position with anything but its committed key. The "copy
attack" (``out[j'] = x_{j'} * in[j]``, a card moved to another position with a valid
``K[j']``) fails at ``j'``: ``log_{in[j']} out[j']`` is not ``log_A K[j']``.

Per position ``j`` (``u32`` big-endian, transcripts as in :mod:`.fiat_shamir`):

- prover: nonce ``w_j`` (:class:`~.proofs.Nonces`, kind ``"rekey"``), ``R_j = w_j*in[j]``,
  ``S_j = w_j*A``, ``c_j`` = ``challenge_scalar("c")`` of ``Transcript("moska-p2p/v2/rekey")``
  after ``append("context", context)``, ``append("position", u32(j))``, ``append("input",
  in[j])``, ``append("output", out[j])``, ``append("public-scalar", A)``, ``append("key-point",
  K[j])``, ``append("r", R_j)``, ``append("s", S_j)``; and ``s_j = w_j + c_j*x_j``;
- proof, in the batchable form: ``R_0 || S_0 || s_0 || R_1 || S_1 || s_1 || ...`` (96 bytes
  a position: the commitments are sent, the challenge is not);
- verifier: ``c_j`` is the challenge of that transcript over the sent ``R_j, S_j``, and
  ``s_j*in[j] - c_j*out[j] = R_j`` and ``s_j*A - c_j*K[j] = S_j``.

Special soundness: two answers ``s, s'`` to challenges ``c != c'`` for one ``(R_j, S_j)`` give
``x = (s - s')/(c - c')`` with both equalities; the challenge is a hash of the statement and of
``R_j, S_j``, so a false statement is accepted with probability about (hash queries)/L.
Honest-verifier zero knowledge: ``(c, s)`` uniform and ``R, S`` computed from them simulate it,
so the proof shows nothing of ``x_j`` (nor of ``a`` or ``k_j``).

Why the commitments are sent (PROTOCOL.md §11.5). Checked position by position, the compact
form ``(c_j, s_j)`` would do (the verifier recomputes ``R_j, S_j`` and rehashes them), but its
``2N`` equations can then only be checked one by one: a hash needs each point's exact bytes.
With ``R_j, S_j`` sent, the ``2N`` equations are linear in public points and fold into one
random combination (:func:`rekey_batch_holds`), one multi-scalar multiplication of ``5N + 1``
terms (:mod:`.msm`): about 3.7 ms for 52 positions against 13 ms position by position.

Cost per position: the prover 1 variable-base and 1 fixed-base multiplication when it passes
its ``a`` (``S_j = (w_j*a)*B``), 2 variable-base otherwise; the verifier, position by position,
4 variable-base multiplications and 2 subtractions (with the optional accelerator,
:mod:`.decaf`, 2 double-scalar multiplications), or its share of one batch.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from . import decaf, msm
from .fiat_shamir import Transcript
from .group import (
    GROUP_ORDER,
    IDENTITY,
    POINT_BYTES,
    SCALAR_BYTES,
    GroupError,
    base_mul,
    is_point,
    is_scalar_or_zero,
    mul,
    scalar_add,
    scalar_mul,
    scalar_neg,
    sub,
)
from .proofs import Nonces, ProofError, be32, is_point_list, public_point, split_items

__all__ = ["fresh_weights", "prove_rekey", "rekey_batch_holds", "verify_rekey"]

_DOMAIN = b"moska-p2p/v2/rekey"
_NONCE_KIND = b"rekey"
_ITEMS = 3  # R_j, S_j, s_j: the batchable form (PROTOCOL.md §11.2)
_WEIGHT_BYTES = 16  # 128-bit batch weights: a false proof passes a batch with p <= 2^-128


def _challenge(
    context: bytes,
    j: int,
    point_in: bytes,
    point_out: bytes,
    a_point: bytes,
    key_point: bytes,
    r: bytes,
    s: bytes,
) -> bytes:
    transcript = Transcript(_DOMAIN)
    transcript.append(b"context", context)
    transcript.append(b"position", be32(j))
    transcript.append(b"input", point_in)
    transcript.append(b"output", point_out)
    transcript.append(b"public-scalar", a_point)
    transcript.append(b"key-point", key_point)
    transcript.append(b"r", r)
    transcript.append(b"s", s)
    return transcript.challenge_scalar(b"c")


def prove_rekey(
    context: bytes,
    inputs: Sequence[bytes],
    outputs: Sequence[bytes],
    public_scalar: bytes,
    key_points: Sequence[bytes],
    witnesses: Sequence[bytes],
    nonce_seed: bytes,
    *,
    scalar: bytes | None = None,
) -> bytes:
    """Prove ``outputs[j] = witnesses[j] * inputs[j]`` and ``key_points[j] = witnesses[j] *
    public_scalar`` for every ``j``.

    ``scalar``, optional, is the prover's ``a`` with ``public_scalar = a*B``: knowing it turns
    ``S_j = w_j*A`` into the cheaper ``(w_j*a)*B`` (same bytes). The arguments are the
    caller's own; they are not re-checked (that would cost as much as the pass): wrong ones
    give a proof that does not verify.
    """
    size = len(inputs)
    if not size or len(outputs) != size or len(key_points) != size or len(witnesses) != size:
        raise ValueError("inputs, outputs, key points and witnesses need one entry a position")
    if scalar is not None and base_mul(scalar) != public_scalar:
        raise ValueError("scalar is not the log of public_scalar")
    nonces = Nonces(
        _NONCE_KIND,
        nonce_seed,
        [context, public_scalar, b"".join(inputs), b"".join(outputs), b"".join(key_points)],
        list(witnesses),
    )
    proof = bytearray()
    for j in range(size):
        w = nonces.scalar(b"w", j)
        r = mul(w, inputs[j])
        s = base_mul(scalar_mul(w, scalar)) if scalar is not None else mul(w, public_scalar)
        c = _challenge(context, j, inputs[j], outputs[j], public_scalar, key_points[j], r, s)
        proof += r + s + scalar_add(w, scalar_mul(c, witnesses[j]))
    return bytes(proof)


def verify_rekey(
    context: bytes,
    inputs: Sequence[bytes],
    outputs: Sequence[bytes],
    public_scalar: bytes,
    key_points: Sequence[bytes],
    proof: bytes,
) -> None:
    """Check a re-keying proof; raise :class:`~.proofs.ProofError` naming the first position
    that fails (or ``position=None`` for a malformed ``public_scalar`` or proof length).

    With the native multi-scalar multiplication (:mod:`.msm`) every position is checked at
    once, as one random combination with fresh weights of this verifier's own
    (:func:`rekey_batch_holds`); only a batch that fails is checked again position by
    position, which names the position at fault. Without it, position by position.
    """
    a_point = public_point(public_scalar, "public scalar point")
    if not is_point_list(inputs) or not inputs:
        raise ProofError("no inputs")
    size = len(inputs)
    for what, points in (("outputs", outputs), ("key points", key_points)):
        if not is_point_list(points) or len(points) != size:
            raise ProofError(f"the {what} are not a list of {size}")
    items = split_items(proof, _ITEMS * size)
    if msm.active() and _batch_holds(
        context, inputs, outputs, a_point, key_points, items, fresh_weights(2 * size)
    ):
        return
    _verify_each(context, inputs, outputs, a_point, key_points, items)


def fresh_weights(count: int) -> list[int]:
    """``count`` batch weights, uniform in ``[0, 2^128)``, from the operating system's random
    source: drawn by the verifier after the whole proof is received, so that no prover can
    know them (PROTOCOL.md §11.5 shows the two cancelling errors that known weights let
    through)."""
    data = os.urandom(_WEIGHT_BYTES * count)
    return [
        int.from_bytes(data[i : i + _WEIGHT_BYTES], "little")
        for i in range(0, len(data), _WEIGHT_BYTES)
    ]


def rekey_batch_holds(
    context: bytes,
    inputs: Sequence[bytes],
    outputs: Sequence[bytes],
    public_scalar: bytes,
    key_points: Sequence[bytes],
    proof: bytes,
    weights: Sequence[int],
) -> bool:
    """Whether the batch equation of PROTOCOL.md §11.5 holds with these ``weights`` (``2N``
    integers, ``z_j`` then ``z'_j`` for each position in turn):

        Σ_j z_j·(s_j·X_j − c_j·Y_j − R_j) + z'_j·(s_j·A − c_j·K_j − S_j) = 0

    with every point a valid non-identity point and every ``s_j`` canonical. True for a valid
    proof whatever the weights; for an invalid one with probability at most 2^-128 over
    weights the prover cannot know (:func:`fresh_weights`), and with certainty for a prover
    that does know them and plants two cancelling errors (the tests show it): so a verifier
    never calls this with weights of anyone else's choosing. Through :mod:`.msm` where it is
    available, else one product at a time (for the tests on the pure path)."""
    size = len(inputs)
    if len(weights) != 2 * size or not all(0 <= weight < GROUP_ORDER for weight in weights):
        raise ValueError(f"a batch of {size} positions needs {2 * size} weights below L")
    items = split_items(proof, _ITEMS * size)
    return _batch_holds(context, inputs, outputs, public_scalar, key_points, items, weights)


def _batch_holds(
    context: bytes,
    inputs: Sequence[bytes],
    outputs: Sequence[bytes],
    a_point: bytes,
    key_points: Sequence[bytes],
    items: Sequence[bytes],
    weights: Sequence[int],
) -> bool:
    size = len(inputs)
    if len(outputs) != size or len(key_points) != size:
        return False
    every_point = (*inputs, *outputs, *key_points, a_point)
    if not all(type(point) is bytes and len(point) == POINT_BYTES for point in every_point):
        return False
    points: list[bytes] = []
    scalars: list[bytes] = []
    negate = bytearray()
    a_coefficient = 0
    for j in range(size):
        r, s_point, s = items[3 * j : 3 * j + 3]
        if not is_scalar_or_zero(s):
            return False
        c = int.from_bytes(
            _challenge(context, j, inputs[j], outputs[j], a_point, key_points[j], r, s_point),
            "little",
        )
        response = int.from_bytes(s, "little")
        z, z_prime = weights[2 * j], weights[2 * j + 1]
        # + z s X  - z c Y  - z R  - z' c K  - z' S; the terms of A are summed into one.
        points += (inputs[j], outputs[j], r, key_points[j], s_point)
        scalars += (
            _scalar(z * response),
            _scalar(z * c),
            _scalar(z),
            _scalar(z_prime * c),
            _scalar(z_prime),
        )
        negate += b"\x00\x01\x01\x01\x01"
        a_coefficient += z_prime * response
    points.append(a_point)
    scalars.append(_scalar(a_coefficient))
    negate += b"\x00"
    if msm.available():
        total = msm.combination(points, scalars, bytes(negate))
    else:
        try:
            if not all(is_point(point) for point in points):
                return False
            total = msm.reference_combination(points, scalars, bytes(negate))
        except GroupError:
            return False
    return total == IDENTITY


def _scalar(n: int) -> bytes:
    return (n % GROUP_ORDER).to_bytes(SCALAR_BYTES, "little")


def _verify_each(
    context: bytes,
    inputs: Sequence[bytes],
    outputs: Sequence[bytes],
    a_point: bytes,
    key_points: Sequence[bytes],
    items: Sequence[bytes],
) -> None:
    """Check every position on its own, in order: the first that fails is named."""
    decoded_a = decaf.decode(a_point) if decaf.active() else None
    for j in range(len(inputs)):
        point_in, point_out, key_point = inputs[j], outputs[j], key_points[j]
        for what, point in (("input", point_in), ("output", point_out), ("key", key_point)):
            if not is_point(point):
                raise ProofError(f"position {j}: the {what} point is not valid", position=j)
        r, s_point, s = items[3 * j : 3 * j + 3]
        if not is_point(r) or not is_point(s_point):
            raise ProofError(f"position {j}: a commitment is not a valid point", position=j)
        if not is_scalar_or_zero(s):
            raise ProofError(f"position {j}: the response is not a canonical scalar", position=j)
        c = _challenge(context, j, point_in, point_out, a_point, key_point, r, s_point)
        if decoded_a is None:
            expected_r = sub(mul(s, point_in), mul(c, point_out))
            expected_s = sub(mul(s, a_point), mul(c, key_point))
        else:
            expected_r, expected_s = _commitments_decaf(
                point_in, point_out, decoded_a, key_point, c, s
            )
        if expected_r != r or expected_s != s_point:
            raise ProofError(f"position {j}: the re-keying proof does not verify", position=j)


def _commitments_decaf(
    point_in: bytes, point_out: bytes, a_point: decaf.Point, key_point: bytes, c: bytes, s: bytes
) -> tuple[bytes, bytes]:
    """``R_j`` and ``S_j`` through the accelerator (:mod:`.decaf`): the same bytes as the pure
    path's four multiplications and two subtractions, as two double-scalar multiplications
    (``s*in + (-c)*out`` and ``s*A + (-c)*K``), about 220 µs a position instead of 315."""
    neg_c = scalar_neg(c)
    r = decaf.double_mul(s, decaf.decode(point_in), neg_c, decaf.decode(point_out))
    s_point = decaf.double_mul(s, a_point, neg_c, decaf.decode(key_point))
    return decaf.encode(r), decaf.encode(s_point)
