"""The pass-1 shuffle argument: a Terelius-Wikström proof of a permutation and a common scalar.

**Statement.** Inputs ``X_1..X_N``, outputs ``Y_1..Y_N`` and a seat's public point ``A``: there
are a permutation ``perm`` and a scalar ``a`` with ``A = a*B`` and ``Y_i = a*X_perm(i)``
(:func:`~moska_p2p.crypto.deck.pass1`'s convention, 1-based here). The proof shows nothing
more: neither ``perm`` nor ``a``. It is the shuffle of Terelius and Wikström, "Proofs of
restricted shuffles" (AFRICACRYPT 2010), in the form of Wikström's "How to implement a
stand-alone verifier for the Verificatum mix-net" (§ "Proof of a shuffle"), with SRA masking
by one common scalar in place of ElGamal re-encryption: the re-encryption exponents vanish and
the last equation becomes a discrete-log relation in ``a``.

**Generators.** ``H_k = hash_to_point("moska-p2p/v2/shuffle-generator", be32(k))`` for
``k = 0..N`` (:func:`generators`); nobody knows a discrete-log relation among ``B, H_0..H_N``,
which is what makes the commitments below binding.

**Prover** (``σ = perm^-1``, so ``Y_σ(j) = a*X_j``; every nonce from :class:`~.proofs.Nonces`,
kind ``"shuffle"``; transcript ``Transcript("moska-p2p/v2/shuffle")``, :mod:`.fiat_shamir`):

1. Absorb ``append("context", ctx)``, ``append_list("inputs", X)``, ``append_list("outputs",
   Y)``, ``append("public-scalar", A)``.
2. Permutation commitment ``u_j = r_j*B + H_σ(j)``; absorb ``append_list("permutation-
   commitment", u)``; challenges ``e_1..e_N = challenge_scalars("e", N)``.
3. ``e'_k = e_perm(k)`` (``e`` permuted as the commitment says), so ``Σ e_j u_j = r̃*B +
   Σ e'_k H_k`` with ``r̃ = Σ e_j r_j``; and ``r̄ = Σ r_j``.
4. Product chain ``Ĉ_0 = H_0``, ``Ĉ_k = r̂_k*B + e'_k*Ĉ_{k-1}``; with ``R̂_0 = 0``,
   ``R̂_k = r̂_k + e'_k*R̂_{k-1}`` and ``R̂ = R̂_N``: ``Ĉ_N = R̂*B + (Π e_j)*H_0``.
5. A sigma protocol for knowledge of ``r̄, R̂, r̃, a, e'_k, r̂_k`` with

   - (1) ``Σ u_j - Σ H_k = r̄*B``
   - (2) ``Ĉ_N - (Π e_j)*H_0 = R̂*B``
   - (3) ``Σ e_j*u_j = r̃*B + Σ e'_k*H_k``
   - (chain) ``Ĉ_k = r̂_k*B + e'_k*Ĉ_{k-1}`` for every ``k``
   - (4) ``Σ e'_k*Y_k = a*X̄`` with ``X̄ = Σ e_j*X_j``
   - (5) ``A = a*B``

   Nonces ``w_1, w_2, w_3, w_a, w'_k, ŵ_k``; commitments ``T_1 = w_1*B``, ``T_2 = w_2*B``,
   ``T_3 = w_3*B + Σ w'_k*H_k``, ``T̂_k = ŵ_k*B + w'_k*Ĉ_{k-1}``, ``T_4 = Σ w'_k*Y_k -
   w_a*X̄``, ``T_5 = w_a*B``. Absorb ``append_list("chain", Ĉ_1..Ĉ_N)``,
   ``append_list("commitments", [T_1, T_2, T_3, T_4, T_5])``, ``append_list("chain-
   commitments", T̂_1..T̂_N)``; ``c = challenge_scalar("c")``. Responses ``s_1 = w_1 + c*r̄``,
   ``s_2 = w_2 + c*R̂``, ``s_3 = w_3 + c*r̃``, ``s_a = w_a + c*a``, ``s'_k = w'_k + c*e'_k``,
   ``ŝ_k = ŵ_k + c*r̂_k``. One response ``s'_k`` serves (3), the chain and (4): that is what
   binds the ``e'`` of the three relations together.

**Proof bytes** (compact form: ``(4N+5)*32`` bytes, 32-byte items) ``u_1..u_N || Ĉ_1..Ĉ_N ||
c || s_1 || s_2 || s_3 || s_a || s'_1..s'_N || ŝ_1..ŝ_N``.

**Verifier.** Every statement and proof point a valid non-identity point, every scalar
canonical; recompute ``e``, then ``T_1 = s_1*B - c*(Σu - ΣH)``, ``T_2 = s_2*B - c*(Ĉ_N -
(Πe)*H_0)``, ``T_3 = s_3*B + Σ s'_k*H_k - Σ (c*e_j)*u_j``, ``T̂_k = ŝ_k*B + s'_k*Ĉ_{k-1} -
c*Ĉ_k``, ``T_4 = Σ s'_k*Y_k - Σ (s_a*e_j)*X_j``, ``T_5 = s_a*B - c*A``, and ``c`` must be the
transcript's challenge.

**Soundness (sketch).** Special soundness: accepting answers to distinct ``c`` for the same
commitments give the witnesses, and rewinding over ``N`` independent ``e`` gives an opening
``u_j = r_j*B + Σ_k M_jk*H_k`` of every commitment; a second, different opening of anything
would be a discrete-log relation among ``B, H_0..H_N``, which nobody can find. Then (1) gives
``Σ_j M_jk = 1`` for every ``k``, (3) gives ``e'_k = Σ_j e_j*M_jk``, and the chain with (2)
gives ``Π_k e'_k = Π_j e_j`` (the chain opens ``Ĉ_N`` as ``R̂*B + (Π e'_k)*H_0``). Terelius
and Wikström's theorem: a matrix ``M'`` is a permutation matrix iff ``M'·1 = 1`` and
``Π(M'e)_i = Π e_i`` as polynomials in ``e``; here ``M' = Mᵀ``, and as ``e`` is drawn after
``u`` is fixed a non-permutation survives with probability at most ``N/L`` (Schwartz-Zippel).
So ``M`` is a permutation, ``e'`` is ``e`` permuted by it, and (4) with (5) reads
``Σ_j e_j*(Y_σ(j) - a*X_j) = 0`` for the ``a`` of ``A`` (one ``s_a`` in both). The points
``Y_σ(j) - a*X_j`` were fixed before ``e`` (``X, Y, A, u`` are absorbed first), so if one is
not zero the sum is zero with probability ``1/L``. In all, a false statement is accepted with
probability about ``(N + 1)/L`` a hash query. Zero knowledge (honest verifier, as for any sigma
protocol): ``u`` and ``Ĉ`` are perfectly hiding Pedersen commitments, and ``(c, s)`` can be
simulated; ``A`` is public by design (pass 2 is proven against it), and linking ``Y_i`` to an
input through ``A`` is a decisional Diffie-Hellman problem.

**Cost.** The prover ``4N`` variable-base multiplications (``Ĉ``, ``T_3``, ``T̂``, ``T_4``;
``T_4 = Σ_j (a*w'_σ(j) - w_a*e_j)*X_j`` uses ``Y = a*X`` to halve it) and ``3N`` fixed-base,
besides the pass's own ``N``; the verifier ``6N + 4`` variable-base, ``N + 4`` fixed-base and
about ``7N`` additions.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from . import decaf, msm
from .fiat_shamir import Transcript
from .group import (
    BASE,
    GroupError,
    add,
    base_mul,
    hash_to_point,
    is_point,
    is_scalar,
    is_scalar_or_zero,
    mul,
    scalar_add,
    scalar_mul,
    scalar_neg,
    scalar_sub,
    sub,
    sum_points,
)
from .proofs import (
    Nonces,
    ProofError,
    be32,
    is_point_list,
    public_point,
    split_items,
    statement_points,
)

__all__ = ["generators", "proof_size", "prove_shuffle", "verify_shuffle"]

_DOMAIN = b"moska-p2p/v2/shuffle"
_GENERATOR_TAG = b"moska-p2p/v2/shuffle-generator"
_NONCE_KIND = b"shuffle"
_ZERO = bytes(32)


@functools.lru_cache(maxsize=16)
def generators(size: int) -> tuple[bytes, tuple[bytes, ...], bytes]:
    """``(H_0, (H_1, ..., H_size), H_1 + ... + H_size)`` for a shuffle of ``size`` points.

    ``H_k`` depends on ``k`` only (so a bigger deck's generators extend a smaller one's);
    computing them costs a hash to the group each, hence the cache.
    """
    if size < 1:
        raise ValueError("a shuffle has at least one point")
    h0 = hash_to_point(_GENERATOR_TAG, be32(0))
    hs = tuple(hash_to_point(_GENERATOR_TAG, be32(k)) for k in range(1, size + 1))
    return h0, hs, sum_points(hs)


def proof_size(size: int) -> int:
    """The byte length of a shuffle argument for ``size`` points: ``(4*size + 5) * 32``."""
    return (4 * size + 5) * 32


def _statement(
    transcript: Transcript, context: bytes, xs: Sequence[bytes], ys: Sequence[bytes], a_point: bytes
) -> None:
    transcript.append(b"context", context)
    transcript.append_list(b"inputs", xs)
    transcript.append_list(b"outputs", ys)
    transcript.append(b"public-scalar", a_point)


def _product(scalars: Sequence[bytes]) -> bytes:
    total = scalars[0]
    for scalar in scalars[1:]:
        total = scalar_mul(total, scalar)
    return total


def _final_challenge(
    transcript: Transcript, chain: Sequence[bytes], ts: Sequence[bytes], t_hat: Sequence[bytes]
) -> bytes:
    transcript.append_list(b"chain", chain)
    transcript.append_list(b"commitments", ts)
    transcript.append_list(b"chain-commitments", t_hat)
    return transcript.challenge_scalar(b"c")


def prove_shuffle(
    context: bytes,
    inputs: Sequence[bytes],
    outputs: Sequence[bytes],
    scalar: bytes,
    permutation: Sequence[int],
    nonce_seed: bytes,
) -> bytes:
    """Prove ``outputs[i] = scalar * inputs[permutation[i]]`` (0-based) and ``A = scalar*B``.

    The arguments are the caller's own and are not re-checked against each other (that would
    cost another pass): inconsistent ones give a proof that does not verify.
    """
    size = len(inputs)
    if not size or len(outputs) != size:
        raise ValueError("inputs and outputs need the same non-zero length")
    if sorted(permutation) != list(range(size)):
        raise ValueError("permutation is not a permutation of range(len(inputs))")
    if not is_scalar(scalar):
        raise ValueError("scalar must be a canonical non-zero scalar")
    a = scalar
    a_point = base_mul(a)
    h0, hs, _ = generators(size)
    perm = list(permutation)
    sigma = [0] * size
    for i, source in enumerate(perm):
        sigma[source] = i
    nonces = Nonces(
        _NONCE_KIND,
        nonce_seed,
        [context, a_point, b"".join(inputs), b"".join(outputs)],
        [a, b"".join(be32(i) for i in perm)],
    )
    transcript = Transcript(_DOMAIN)
    _statement(transcript, context, inputs, outputs, a_point)

    r = [nonces.scalar(b"r", j) for j in range(size)]
    u = [add(base_mul(r[j]), hs[sigma[j]]) for j in range(size)]
    transcript.append_list(b"permutation-commitment", u)
    e = transcript.challenge_scalars(b"e", size)
    e_perm = [e[perm[k]] for k in range(size)]

    r_hat = [nonces.scalar(b"r-hat", k) for k in range(size)]
    chain: list[bytes] = []
    previous, big_r_hat = h0, _ZERO
    for k in range(size):
        previous = add(base_mul(r_hat[k]), mul(e_perm[k], previous))
        chain.append(previous)
        big_r_hat = scalar_add(r_hat[k], scalar_mul(e_perm[k], big_r_hat))
    r_bar, r_tilde = _ZERO, _ZERO
    for j in range(size):
        r_bar = scalar_add(r_bar, r[j])
        r_tilde = scalar_add(r_tilde, scalar_mul(e[j], r[j]))

    w1, w2, w3, wa = (nonces.scalar(label) for label in (b"w1", b"w2", b"w3", b"wa"))
    w_prime = [nonces.scalar(b"w-prime", k) for k in range(size)]
    w_hat = [nonces.scalar(b"w-hat", k) for k in range(size)]
    t3 = sum_points([base_mul(w3), *(mul(w_prime[k], hs[k]) for k in range(size))])
    t_hat = [
        add(base_mul(w_hat[k]), mul(w_prime[k], chain[k - 1] if k else h0)) for k in range(size)
    ]
    # T_4 = Σ_k w'_k*Y_k - w_a*X̄ = Σ_j (a*w'_σ(j) - w_a*e_j)*X_j, since Y_σ(j) = a*X_j.
    t4 = sum_points(
        mul(scalar_sub(scalar_mul(a, w_prime[sigma[j]]), scalar_mul(wa, e[j])), inputs[j])
        for j in range(size)
    )
    ts = [base_mul(w1), base_mul(w2), t3, t4, base_mul(wa)]
    c = _final_challenge(transcript, chain, ts, t_hat)

    def respond(w: bytes, x: bytes) -> bytes:
        return scalar_add(w, scalar_mul(c, x))

    responses = [respond(w1, r_bar), respond(w2, big_r_hat), respond(w3, r_tilde), respond(wa, a)]
    s_prime = [respond(w_prime[k], e_perm[k]) for k in range(size)]
    s_hat = [respond(w_hat[k], r_hat[k]) for k in range(size)]
    return b"".join([*u, *chain, c, *responses, *s_prime, *s_hat])


def verify_shuffle(
    context: bytes,
    inputs: Sequence[bytes],
    outputs: Sequence[bytes],
    public_scalar: bytes,
    proof: bytes,
) -> None:
    """Check a shuffle argument; raise :class:`~.proofs.ProofError` if it does not verify (with
    ``position`` set when an input or output is not a valid point)."""
    a_point = public_point(public_scalar, "public scalar point")
    if not is_point_list(inputs) or not inputs:
        raise ProofError("no inputs")
    size = len(inputs)
    if not is_point_list(outputs) or len(outputs) != size:
        raise ProofError(f"the outputs are not a list of {size}")
    xs = statement_points(inputs, "input")
    ys = statement_points(outputs, "output")
    items = split_items(proof, 4 * size + 5)
    u, chain = items[:size], items[size : 2 * size]
    c = items[2 * size]
    for what, points in (("permutation commitment", u), ("chain", chain)):
        for k, point in enumerate(points):
            if not is_point(point):
                raise ProofError(f"{what} {k} is not a valid point")
    if not all(is_scalar_or_zero(s) for s in items[2 * size :]):
        raise ProofError("a response is not a canonical scalar")

    transcript = Transcript(_DOMAIN)
    _statement(transcript, context, xs, ys, a_point)
    transcript.append_list(b"permutation-commitment", u)
    e = transcript.challenge_scalars(b"e", size)

    recompute = _commitments_decaf if decaf.active() else _commitments_pure
    ts, t_hat = recompute(xs, ys, a_point, u, chain, e, items[2 * size :])
    if _final_challenge(transcript, chain, ts, t_hat) != c:
        raise ProofError("the shuffle argument does not verify")


def _commitments_pure(
    xs: Sequence[bytes],
    ys: Sequence[bytes],
    a_point: bytes,
    u: Sequence[bytes],
    chain: Sequence[bytes],
    e: Sequence[bytes],
    scalars: Sequence[bytes],
) -> tuple[list[bytes], list[bytes]]:
    """The verifier's ``[T_1 .. T_5]`` and ``T̂_1 .. T̂_N`` on encodings through libsodium (the
    reference path): ``6N + 4`` multiplications, ``N + 4`` fixed-base, about ``7N`` additions.
    ``scalars`` is ``c, s_1, s_2, s_3, s_a, s'_1..s'_N, ŝ_1..ŝ_N``."""
    size = len(xs)
    h0, hs, sum_h = generators(size)
    c, s1, s2, s3, sa = scalars[:5]
    s_prime, s_hat = scalars[5 : size + 5], scalars[size + 5 :]
    neg_c = scalar_neg(c)
    t1 = add(base_mul(s1), mul(neg_c, sub(sum_points(u), sum_h)))
    t2 = add(base_mul(s2), mul(neg_c, sub(chain[-1], mul(_product(e), h0))))
    t3 = sum_points(
        [
            base_mul(s3),
            *(mul(s_prime[k], hs[k]) for k in range(size)),
            *(mul(scalar_mul(neg_c, e[j]), u[j]) for j in range(size)),
        ]
    )
    t_hat = [
        sum_points(
            [base_mul(s_hat[k]), mul(s_prime[k], chain[k - 1] if k else h0), mul(neg_c, chain[k])]
        )
        for k in range(size)
    ]
    neg_sa = scalar_neg(sa)
    t4 = sum_points(
        [
            *(mul(s_prime[k], ys[k]) for k in range(size)),
            *(mul(scalar_mul(neg_sa, e[j]), xs[j]) for j in range(size)),
        ]
    )
    t5 = add(base_mul(sa), mul(neg_c, a_point))
    return [t1, t2, t3, t4, t5], t_hat


@functools.cache
def _generator_table(k: int) -> decaf.Table:
    """The accelerator's precomputed table of ``H_k`` (built once per process: 55 µs, 9 KB)."""
    h0, hs, _ = generators(max(k, 1))
    return decaf.Table(hs[k - 1] if k else h0)


def _commitments_decaf(
    xs: Sequence[bytes],
    ys: Sequence[bytes],
    a_point: bytes,
    u: Sequence[bytes],
    chain: Sequence[bytes],
    e: Sequence[bytes],
    scalars: Sequence[bytes],
) -> tuple[list[bytes], list[bytes]]:
    """The same commitments as :func:`_commitments_pure`, byte for byte, on decoded points
    through the accelerator (:mod:`.decaf`): each point decoded once, sums on decoded points,
    ``s*B + t*P`` in variable time (every scalar here is public), ``H_k`` from per-process
    tables, ``T_4``'s terms paired in double-scalar multiplications, and each chain point's two
    multiples (by ``-c`` in ``T̂_k``, by ``s'_{k+1}`` in ``T̂_{k+1}``) from one table. With the
    native sums (:mod:`.msm`), ``T_3`` and ``T_4`` are one multi-scalar sum each and every
    ``T̂_k`` a three-term one, all in C: 52 cards in about 9 ms instead of 16."""
    size = len(xs)
    _, _, sum_h = generators(size)
    c, s1, s2, s3, sa = scalars[:5]
    s_prime, s_hat = scalars[5 : size + 5], scalars[size + 5 :]
    neg_c, neg_sa = scalar_neg(c), scalar_neg(sa)
    h_tables = [_generator_table(k) for k in range(size + 1)]
    du = [decaf.decode(point) for point in u]
    dchain = [decaf.decode(point) for point in chain]

    sum_u = du[0]
    for point in du[1:]:
        sum_u = decaf.add(sum_u, point)
    t1 = decaf.base_double_mul_vartime(s1, neg_c, decaf.sub(sum_u, decaf.decode(sum_h)))
    t2 = decaf.base_double_mul_vartime(
        s2, neg_c, decaf.sub(dchain[-1], h_tables[0].mul(_product(e)))
    )
    if msm.available():
        t3, t4 = _long_sums_native(xs, ys, u, e, c, s3, sa, s_prime)
        t_hat = msm.chain_commitments(generators(size)[0], chain, s_hat, s_prime, c)
        if t_hat is None:
            raise GroupError("a chain point of the shuffle argument is not valid")
    else:
        t3, t4 = _long_sums_decaf(xs, ys, du, e, neg_c, s3, neg_sa, s_prime, h_tables)
        t_hat = _chain_decaf(dchain, neg_c, s_prime, s_hat, h_tables)
    t5 = decaf.base_double_mul_vartime(sa, neg_c, decaf.decode(a_point))
    return [decaf.encode(t1), decaf.encode(t2), t3, t4, decaf.encode(t5)], t_hat


def _chain_decaf(
    dchain: Sequence[decaf.Point],
    neg_c: bytes,
    s_prime: Sequence[bytes],
    s_hat: Sequence[bytes],
    h_tables: Sequence[decaf.Table],
) -> list[bytes]:
    """The chain commitments through libdecaf's calls, where the native sum is not built."""
    size = len(dchain)
    # T̂_k = ŝ_k*B + s'_k*Ĉ_{k-1} - c*Ĉ_k: Ĉ_k's two multiples come from one dual multiplication.
    t_hat: list[bytes] = []
    previous_multiple = h_tables[0].mul(s_prime[0])  # s'_1 * Ĉ_0, with Ĉ_0 = H_0
    for k in range(size):
        if k + 1 < size:
            minus_c_chain, next_multiple = decaf.dual_mul(dchain[k], neg_c, s_prime[k + 1])
        else:
            minus_c_chain, next_multiple = decaf.mul(neg_c, dchain[k]), previous_multiple
        point = decaf.add(decaf.add(decaf.base_mul(s_hat[k]), previous_multiple), minus_c_chain)
        t_hat.append(decaf.encode(point))
        previous_multiple = next_multiple
    return t_hat


def _long_sums_native(
    xs: Sequence[bytes],
    ys: Sequence[bytes],
    u: Sequence[bytes],
    e: Sequence[bytes],
    c: bytes,
    s3: bytes,
    sa: bytes,
    s_prime: Sequence[bytes],
) -> tuple[bytes, bytes]:
    """``T_3 = s_3*B + Σ s'_k*H_k - Σ (c e_j)*u_j`` and ``T_4 = Σ s'_k*Y_k - Σ (s_a e_j)*X_j``,
    each one native multi-scalar sum of ``2N (+1)`` products (:mod:`.msm`, about 1.7 ms for 52
    cards where ``2N`` single multiplications cost 5 to 7). Every point was validated by the
    caller; a ``None`` from the sum would mean otherwise, and is an error."""
    size = len(xs)
    _, hs, _ = generators(size)
    minus_u = bytes(size + 1) + b"\x01" * size
    t3 = msm.combination([BASE, *hs, *u], [s3, *s_prime, *(scalar_mul(c, ej) for ej in e)], minus_u)
    minus_x = bytes(size) + b"\x01" * size
    t4 = msm.combination([*ys, *xs], [*s_prime, *(scalar_mul(sa, ej) for ej in e)], minus_x)
    if t3 is None or t4 is None:
        raise GroupError("a point of the shuffle argument is not valid")
    return t3, t4


def _long_sums_decaf(
    xs: Sequence[bytes],
    ys: Sequence[bytes],
    du: Sequence[decaf.Point],
    e: Sequence[bytes],
    neg_c: bytes,
    s3: bytes,
    neg_sa: bytes,
    s_prime: Sequence[bytes],
    h_tables: Sequence[decaf.Table],
) -> tuple[bytes, bytes]:
    """``T_3`` and ``T_4`` through libdecaf's single and double multiplications, where the
    native sum is not built."""
    t3 = decaf.base_mul(s3)
    t4: decaf.Point | None = None
    for k in range(len(xs)):
        t3 = decaf.add(t3, h_tables[k + 1].mul(s_prime[k]))
        t3 = decaf.add(t3, decaf.mul(scalar_mul(neg_c, e[k]), du[k]))
        term = decaf.double_mul(
            s_prime[k], decaf.decode(ys[k]), scalar_mul(neg_sa, e[k]), decaf.decode(xs[k])
        )
        t4 = term if t4 is None else decaf.add(t4, term)
    assert t4 is not None
    return decaf.encode(t3), decaf.encode(t4)
