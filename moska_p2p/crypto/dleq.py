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
- proof: ``c_0 || s_0 || c_1 || s_1 || ...`` (64 bytes a position);
- verifier: ``R_j = s_j*in[j] - c_j*out[j]``, ``S_j = s_j*A - c_j*K[j]``, and ``c_j`` must be
  the challenge of that transcript.

Special soundness: two answers ``s, s'`` to challenges ``c != c'`` for one ``(R_j, S_j)`` give
``x = (s - s')/(c - c')`` with both equalities; the challenge is a hash of the statement and of
``R_j, S_j``, so a false statement is accepted with probability about (hash queries)/L.
Honest-verifier zero knowledge: ``(c, s)`` uniform and ``R, S`` recomputed simulate it, so the
proof shows nothing of ``x_j`` (nor of ``a`` or ``k_j``).

Cost per position: the prover 1 variable-base and 1 fixed-base multiplication when it passes
its ``a`` (``S_j = (w_j*a)*B``), 2 variable-base otherwise; the verifier 4 variable-base
multiplications and 2 subtractions (libsodium has no multi-scalar multiplication to share);
with the optional accelerator (:mod:`.decaf`) 2 double-scalar multiplications.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import decaf
from .fiat_shamir import Transcript
from .group import (
    base_mul,
    is_point,
    is_scalar,
    is_scalar_or_zero,
    mul,
    scalar_add,
    scalar_mul,
    scalar_neg,
    sub,
)
from .proofs import Nonces, ProofError, be32, is_point_list, public_point, split_items

__all__ = ["prove_rekey", "verify_rekey"]

_DOMAIN = b"moska-p2p/v2/rekey"
_NONCE_KIND = b"rekey"


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
        proof += c + scalar_add(w, scalar_mul(c, witnesses[j]))
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
    that fails (or ``position=None`` for a malformed ``public_scalar`` or proof length)."""
    a_point = public_point(public_scalar, "public scalar point")
    if not is_point_list(inputs) or not inputs:
        raise ProofError("no inputs")
    size = len(inputs)
    for what, points in (("outputs", outputs), ("key points", key_points)):
        if not is_point_list(points) or len(points) != size:
            raise ProofError(f"the {what} are not a list of {size}")
    items = split_items(proof, 2 * size)
    decoded_a = decaf.decode(a_point) if decaf.active() else None
    for j in range(size):
        point_in, point_out, key_point = inputs[j], outputs[j], key_points[j]
        for what, point in (("input", point_in), ("output", point_out), ("key", key_point)):
            if not is_point(point):
                raise ProofError(f"position {j}: the {what} point is not valid", position=j)
        c, s = items[2 * j], items[2 * j + 1]
        if not is_scalar(c) or not is_scalar_or_zero(s):
            raise ProofError(f"position {j}: not a canonical scalar", position=j)
        if decoded_a is None:
            r = sub(mul(s, point_in), mul(c, point_out))
            s_point = sub(mul(s, a_point), mul(c, key_point))
        else:
            r, s_point = _commitments_decaf(point_in, point_out, decoded_a, key_point, c, s)
        if _challenge(context, j, point_in, point_out, a_point, key_point, r, s_point) != c:
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
