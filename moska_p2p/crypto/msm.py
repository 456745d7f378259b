"""An optional multi-scalar multiplication (``Σ ±s_i·P_i``), native, over libdecaf.

Why it exists. A batch verifier (:mod:`.dleq`, PROTOCOL.md §11.5) folds many equations into
one random linear combination; that pays only if a sum of ``n`` products costs far less than
``n`` multiplications. Neither libsodium nor libdecaf offers one (libdecaf stops at two
terms), and in Python every product is a whole call. ``msm.c`` (next to this file) does it in
C on libdecaf's decoded points, by Straus' interleaved w-NAF method for small ``n`` and
Pippenger's bucket method for larger ones, in variable time: every input of a verifier's
batch is public. Measured on the development machine (``scripts/bench_msm.py``): 261 terms in
about 3.6 ms, decoding included, where 261 multiplications through libsodium cost 13 ms.

How it is built. At first use, when the libdecaf accelerator is active (:mod:`.decaf`,
``MOSKA_P2P_ACCEL=decaf``): ``msm.c`` is compiled with the system's C compiler into the
user's cache directory (named by a digest of the source and the compiler, so a changed source
is rebuilt), and loaded after libdecaf is made global, against whose exported functions it
links at load time. No compiler, no libdecaf, a failed build: :func:`available` is false and
the callers use the pure path, which is the reference and gives the same verdicts.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from . import decaf
from .group import IDENTITY, GroupError, add, is_scalar_or_zero, mul, sub

__all__ = [
    "active",
    "available",
    "chain_commitments",
    "combination",
    "describe",
    "reference_combination",
    "unavailable_reason",
]

_SOURCE = Path(__file__).with_name("msm.c")
_BUILD_SECONDS = 120
_BUILD_LOCK = threading.Lock()
_reason = "not tried yet"


def _cache_directory() -> Path:
    with contextlib.suppress(ImportError):
        import platformdirs

        return Path(platformdirs.user_cache_dir("moska-p2p"))
    return Path.home() / ".cache" / "moska-p2p"


def _compile(compiler: str, source: bytes, target: Path) -> None:
    """Build ``target`` from ``source`` without ever leaving a half-written file there."""
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle, temporary = tempfile.mkstemp(prefix=target.name, suffix=".tmp", dir=target.parent)
    os.close(handle)
    try:
        subprocess.run(
            [compiler, "-O2", "-shared", "-fPIC", "-o", temporary, str(_SOURCE)],
            check=True,
            capture_output=True,
            timeout=_BUILD_SECONDS,
        )
        os.replace(temporary, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def _library() -> ctypes.CDLL | None:
    """The compiled library, or ``None`` (and :func:`unavailable_reason` says why); built or
    loaded once, under a lock: a network peer's first checks run in worker threads."""
    with _BUILD_LOCK:
        return _build()


@functools.cache
def _build() -> ctypes.CDLL | None:
    global _reason
    if not decaf.available():
        _reason = "libdecaf is not installed (apt-get install libdecaf0)"
        return None
    compiler = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    try:
        source = _SOURCE.read_bytes()
        tag = hashlib.sha256(source + (compiler or "").encode()).hexdigest()[:16]
        target = _cache_directory() / f"msm-{tag}.so"
        if not target.exists():
            if compiler is None:
                _reason = "no C compiler to build msm.c"
                return None
            _compile(compiler, source, target)
        # msm.c calls libdecaf: its symbols must be global before the library is loaded.
        ctypes.CDLL(decaf.library_name(), mode=ctypes.RTLD_GLOBAL)
        library = ctypes.CDLL(str(target))
    except (OSError, subprocess.SubprocessError) as error:
        _reason = f"msm.c could not be built or loaded: {error}"
        return None
    library.moska_msm.restype = ctypes.c_int
    library.moska_msm.argtypes = [
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
    ]
    library.moska_chain.restype = ctypes.c_int
    library.moska_chain.argtypes = [ctypes.c_char_p] * 6 + [ctypes.c_size_t]
    _reason = ""
    return library


def available() -> bool:
    """Whether the native multi-scalar multiplication can be used (built at the first call)."""
    return _library() is not None


def unavailable_reason() -> str:
    """Why :func:`available` is false (empty when it is true)."""
    _library()
    return _reason


def active() -> bool:
    """Whether verifiers batch now: with the libdecaf accelerator on and this built."""
    return decaf.active() and available()


def describe() -> tuple[str, bool]:
    """What the proofs' arithmetic runs on in this process, in words, and whether that is
    what ``MOSKA_P2P_ACCEL`` asked for (``False`` when it asks for something this process
    cannot give: a person who set it expects the speed and should hear why it is not there).
    Asking builds the native sum if the accelerator is on (once, cached)."""
    asked = decaf.requested_name()
    if not asked:
        return (
            "libsodium (the reference path; MOSKA_P2P_ACCEL=decaf turns on the optional"
            " libdecaf accelerator)",
            True,
        )
    if asked != "decaf":
        return (
            f"libsodium: {decaf.ENVIRONMENT_VARIABLE}={asked} names no accelerator"
            " (the one there is: decaf)",
            False,
        )
    if not decaf.available():
        return (
            f"libsodium: {decaf.ENVIRONMENT_VARIABLE}=decaf is set, but libdecaf.so.0 is not"
            " installed (apt-get install libdecaf0)",
            False,
        )
    if not decaf.active():
        return "libsodium (the accelerator is turned off in this process)", True
    if not available():
        return f"libdecaf, without batch verification: {unavailable_reason()}", False
    return "libdecaf, with batch verification (the native multi-scalar sum, msm.c)", True


def combination(
    points: Sequence[bytes],
    scalars: Sequence[bytes],
    negate: bytes | None = None,
    *,
    allow_identity: bool = False,
    method: int = 0,
    parameter: int = 0,
) -> bytes | None:
    """``Σ (-1)^negate[i] · scalars[i] · points[i]``, encoded; ``None`` when a point is not a
    valid encoding (or is the identity and ``allow_identity`` is false), which is what a
    batch verifier needs to know to fall back to its item-by-item checks.

    ``negate`` (one byte a point, non-zero to subtract) keeps a short weight short: ``-z mod
    L`` would be a full-size scalar. Scalars must be canonical. ``method``/``parameter`` pick
    Straus (1, window) or Pippenger (2, bits a digit) for measurements; 0 picks by size.
    Raises :class:`RuntimeError` where :func:`available` is false.
    """
    library = _library()
    if library is None:
        raise RuntimeError(f"no native multi-scalar multiplication: {_reason}")
    count = len(points)
    if len(scalars) != count or (negate is not None and len(negate) != count):
        raise ValueError("one scalar (and sign) a point")
    if not all(is_scalar_or_zero(scalar) for scalar in scalars):
        raise GroupError("not a canonical scalar")
    if not all(type(point) is bytes and len(point) == 32 for point in points):
        return None
    out = ctypes.create_string_buffer(32)
    status = library.moska_msm(
        out,
        b"".join(points),
        b"".join(scalars),
        negate,
        count,
        int(allow_identity),
        method,
        parameter,
    )
    if status < 0:
        raise MemoryError("moska_msm: out of memory")
    return None if status else out.raw


def chain_commitments(
    h0: bytes,
    chain: Sequence[bytes],
    s_hat: Sequence[bytes],
    s_prime: Sequence[bytes],
    c: bytes,
) -> list[bytes] | None:
    """The shuffle argument's ``T̂_k = ŝ_k*B + s'_k*Ĉ_{k-1} - c*Ĉ_k`` (``Ĉ_{-1} = H_0``,
    PROTOCOL.md §11.3), encoded, each a three-term sum in one native call for all ``k``: every
    point decoded once and its table of multiples shared by the two products it is in. ``None``
    when a point is not a valid non-identity encoding. Raises :class:`RuntimeError` where
    :func:`available` is false."""
    library = _library()
    if library is None:
        raise RuntimeError(f"no native multi-scalar multiplication: {_reason}")
    count = len(chain)
    if len(s_hat) != count or len(s_prime) != count:
        raise ValueError("one ŝ and one s' a chain point")
    if not all(is_scalar_or_zero(scalar) for scalar in (*s_hat, *s_prime, c)):
        raise GroupError("not a canonical scalar")
    if not all(type(point) is bytes and len(point) == 32 for point in (h0, *chain)):
        return None
    out = ctypes.create_string_buffer(32 * count)
    status = library.moska_chain(
        out, h0, b"".join(chain), b"".join(s_hat), b"".join(s_prime), c, count
    )
    if status < 0:
        raise MemoryError("moska_chain: out of memory")
    if status:
        return None
    raw = out.raw
    return [raw[i : i + 32] for i in range(0, len(raw), 32)]


def reference_combination(
    points: Sequence[bytes], scalars: Sequence[bytes], negate: bytes | None = None
) -> bytes:
    """What :func:`combination` computes, one product at a time through libsodium: the
    reference its tests compare with, and the batch equation of the tests on the pure path."""
    total = IDENTITY
    for i, (point, scalar) in enumerate(zip(points, scalars, strict=True)):
        term = mul(scalar, point)
        total = sub(total, term) if negate is not None and negate[i] else add(total, term)
    return total
