"""An optional accelerator: ristretto255 on decoded points through Debian's ``libdecaf``.

Why it exists. libsodium (:mod:`.group`) works on encodings only: every multiplication and
every addition decodes its operands and encodes its result (about 6 µs each way), an addition
costs 17 µs, and there is no double-scalar multiplication. ``libdecaf`` (Mike Hamburg's
library; its ``decaf_255`` *is* ristretto255, same encoding byte for byte) keeps points decoded,
adds them in under a microsecond, and offers what a verifier wants: ``s*P + t*Q`` in one
pass (about 93 µs against 2 x 70 + 17 µs), ``s*B + t*Q`` in variable time for public scalars
(58 µs), two multiples of one point at once (75 µs), and precomputed tables for fixed points
(25 µs a multiplication instead of 70); measured on the development machine, one call at a
time from Python. ``scripts/bench_p2p.py --baseline REV --accel`` measures what it gives a deal.

It is optional and off by default: the pure path through libsodium stays the reference, and
this module is used only when ``MOSKA_P2P_ACCEL=decaf`` is set (or :func:`use` is called) and
``libdecaf.so.0`` loads (``apt-get install libdecaf0``). Both paths compute the very same
bytes (every commitment a proof hashes), so proofs and verdicts do not depend on it; the tests
check that on every proof vector and on corrupted proofs.

What it may be used for. Only arithmetic on points that :mod:`.group` has already validated:
:func:`decode` still refuses an invalid encoding, but the error texts of the proofs come from
their own checks, made before any arithmetic. The ``*_vartime`` functions leak their scalars
through timing and are for verifiers, whose every scalar is public; a prover uses the
constant-time ones only.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
from collections.abc import Iterator

from .group import GroupError

__all__ = [
    "ENVIRONMENT_VARIABLE",
    "Point",
    "Table",
    "active",
    "add",
    "available",
    "base_double_mul_vartime",
    "base_mul",
    "decode",
    "double_mul",
    "dual_mul",
    "encode",
    "library_name",
    "mul",
    "requested_name",
    "sub",
    "use",
]

ENVIRONMENT_VARIABLE = "MOSKA_P2P_ACCEL"
_LIBRARY_NAME = "libdecaf.so.0"
# decaf_255_point_t: four field elements of five 64-bit limbs, each aligned to 32 bytes.
_POINT_BYTES = 256
_ALIGNMENT = 32
_SCALAR_BYTES = 32
_SUCCESS = -1  # decaf_error_t: DECAF_SUCCESS is -1, DECAF_FAILURE 0


def _load() -> tuple[ctypes.CDLL | None, str]:
    """The library and the name it was loaded by, or ``None`` where it is not installed (the
    pure path is used then)."""
    for name in (_LIBRARY_NAME, ctypes.util.find_library("decaf")):
        if not name:
            continue
        with contextlib.suppress(OSError):
            library = ctypes.CDLL(name)
            library.decaf_255_point_decode.restype = ctypes.c_int
            library.decaf_255_scalar_decode.restype = ctypes.c_int
            return library, name
    return None, ""


_LIB, _LOADED_NAME = _load()


def available() -> bool:
    """Whether ``libdecaf`` is installed and loads."""
    return _LIB is not None


def library_name() -> str:
    """The name the library was loaded by (for :mod:`.msm`, which links against it); empty
    where it is not installed."""
    return _LOADED_NAME


def _requested() -> bool:
    return requested_name() == "decaf"


def requested_name() -> str:
    """What ``MOSKA_P2P_ACCEL`` asks for, folded to lower case (empty when it is not set):
    the command line tells a person when that is something this library cannot give."""
    return os.environ.get(ENVIRONMENT_VARIABLE, "").strip().lower()


_active = available() and _requested()


def active() -> bool:
    """Whether the proofs use this accelerator now (off unless asked for)."""
    return _active


@contextlib.contextmanager
def use(enabled: bool = True) -> Iterator[None]:
    """Turn the accelerator on (or off) for the ``with`` block: the tests' and benchmarks'
    switch. Turning it on without the library raises :class:`RuntimeError`."""
    global _active
    if enabled and not available():
        raise RuntimeError(f"{_LIBRARY_NAME} is not installed (apt-get install libdecaf0)")
    saved, _active = _active, enabled
    try:
        yield
    finally:
        _active = saved


def _library() -> ctypes.CDLL:
    if _LIB is None:
        raise RuntimeError(f"{_LIBRARY_NAME} is not installed")
    return _LIB


def _aligned(size: int) -> tuple[ctypes.Array[ctypes.c_char], int]:
    """A buffer of ``size`` bytes at a 32-byte aligned address (libdecaf's field elements are
    declared 32-byte aligned, so the compiler may use aligned loads on them)."""
    raw = ctypes.create_string_buffer(size + _ALIGNMENT)
    address = ctypes.addressof(raw)
    return raw, address + (-address) % _ALIGNMENT


class Point:
    """A decoded point: libdecaf's extended coordinates in a buffer this object owns."""

    __slots__ = ("_raw", "ref")

    def __init__(self) -> None:
        self._raw, address = _aligned(_POINT_BYTES)
        self.ref = ctypes.c_void_p(address)


def _scalar(scalar: bytes) -> ctypes.Array[ctypes.c_char]:
    """A scalar in libdecaf's representation (four 64-bit limbs; ``malloc``'s alignment is
    enough for them). The buffer itself is passed to the call, so it lives until the call
    returns (a bare address would not keep it alive)."""
    buffer = ctypes.create_string_buffer(_SCALAR_BYTES)
    if _library().decaf_255_scalar_decode(buffer, scalar) != _SUCCESS:
        raise GroupError("not a canonical scalar")
    return buffer


def decode(encoding: bytes) -> Point:
    """The decoded point of a canonical encoding (the identity allowed)."""
    if not isinstance(encoding, bytes) or len(encoding) != 32:
        raise GroupError("not a canonical point encoding")
    point = Point()
    if _library().decaf_255_point_decode(point.ref, encoding, ctypes.c_uint64(2**64 - 1)) != (
        _SUCCESS
    ):
        raise GroupError("not a valid ristretto255 point")
    return point


def encode(point: Point) -> bytes:
    """The canonical 32-byte encoding (what :mod:`.group` would have returned)."""
    out = ctypes.create_string_buffer(32)
    _library().decaf_255_point_encode(out, point.ref)
    return out.raw


def add(p: Point, q: Point) -> Point:
    """``p + q`` on decoded points (under a microsecond, against 17 µs on encodings)."""
    out = Point()
    _library().decaf_255_point_add(out.ref, p.ref, q.ref)
    return out


def sub(p: Point, q: Point) -> Point:
    """``p - q`` on decoded points."""
    out = Point()
    _library().decaf_255_point_sub(out.ref, p.ref, q.ref)
    return out


def mul(scalar: bytes, point: Point) -> Point:
    """``scalar * point``, constant time."""
    out = Point()
    _library().decaf_255_point_scalarmul(out.ref, point.ref, _scalar(scalar))
    return out


def double_mul(s: bytes, p: Point, t: bytes, q: Point) -> Point:
    """``s*p + t*q`` in one constant-time pass (Straus' trick): about 1.3 multiplications."""
    out = Point()
    _library().decaf_255_point_double_scalarmul(out.ref, p.ref, _scalar(s), q.ref, _scalar(t))
    return out


def dual_mul(point: Point, s: bytes, t: bytes) -> tuple[Point, Point]:
    """``(s*point, t*point)``, constant time, sharing one table of multiples of ``point``."""
    first, second = Point(), Point()
    _library().decaf_255_point_dual_scalarmul(
        first.ref, second.ref, point.ref, _scalar(s), _scalar(t)
    )
    return first, second


def base_mul(scalar: bytes) -> Point:
    """``scalar * B`` from libdecaf's precomputed table of the base point, constant time."""
    out = Point()
    library = _library()
    table = ctypes.c_void_p.in_dll(library, "decaf_255_precomputed_base")
    library.decaf_255_precomputed_scalarmul(out.ref, table, _scalar(scalar))
    return out


def base_double_mul_vartime(s: bytes, t: bytes, q: Point) -> Point:
    """``s*B + t*q`` in variable time: only for public scalars (a verifier's)."""
    out = Point()
    _library().decaf_255_base_double_scalarmul_non_secret(out.ref, _scalar(s), q.ref, _scalar(t))
    return out


class Table:
    """A precomputed table of multiples of one fixed point (about 9 KB, 55 µs to build):
    each multiplication by it then costs about a third of :func:`mul`. Worth it for a point
    used at least twice, such as the shuffle generators ``H_k`` (cached per process)."""

    __slots__ = ("_raw", "point", "ref")

    def __init__(self, encoding: bytes) -> None:
        library = _library()
        size = ctypes.c_size_t.in_dll(library, "decaf_255_sizeof_precomputed_s").value
        self._raw, address = _aligned(size)
        self.ref = ctypes.c_void_p(address)
        self.point = decode(encoding)
        library.decaf_255_precompute(self.ref, self.point.ref)

    def mul(self, scalar: bytes) -> Point:
        """``scalar * point``, constant time."""
        out = Point()
        _library().decaf_255_precomputed_scalarmul(out.ref, self.ref, _scalar(scalar))
        return out
