"""The signed msgpack framing (v2: ``[kind, payload, signature]``): round trips, streaming,
limits (per kind, before decoding; a tighter cap before a link is authenticated), garbage, and
why we never re-encode a payload before checking its signature."""

from __future__ import annotations

import contextlib
import struct

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from moska_p2p.crypto.identity import Identity, verify
from moska_p2p.protocol.frames import (
    GAME_KINDS,
    LENGTH_SIZE,
    MAX_DEPTH,
    MAX_FRAME,
    MAX_PAYLOAD,
    MAX_PAYLOAD_OF,
    NET_KINDS,
    PRE_AUTH_MAX_FRAME,
    Field,
    FrameDecoder,
    FrameError,
    Spec,
    check_fields,
    encode_frame,
    open_frame,
    pack,
    require,
    signed_frame,
    unpack,
)

ALICE = Identity.from_seed(bytes(32))
BOB = Identity.from_seed(bytes(range(32)))

MESSAGE = {
    "game": bytes(range(32)),
    "sender": 2,
    "seq": 7,
    "prev": b"\x11" * 32,
    "type": "play",
    "body": {"cards": [3, 17, 51], "keys": [b"\x01" * 32, b"\x02" * 32], "note": None, "ok": True},
}


def _open(wire: bytes) -> tuple[str, bytes, bytes]:
    [body] = FrameDecoder().feed(wire)
    return open_frame(body)


# -- round trips ---------------------------------------------------------------------------------


def test_signed_frame_round_trip() -> None:
    wire = signed_frame(ALICE, "move", MESSAGE)
    assert int.from_bytes(wire[:LENGTH_SIZE], "big") == len(wire) - LENGTH_SIZE
    kind, payload, signature = _open(wire)
    assert kind == "move"
    assert payload == pack(MESSAGE)
    assert unpack(payload) == MESSAGE
    assert verify(ALICE.public_bytes, "move", payload, signature)
    assert not verify(BOB.public_bytes, "move", payload, signature)
    assert not verify(ALICE.public_bytes, "claim", payload, signature)  # the kind is signed
    assert wire[LENGTH_SIZE:] == msgpack.packb(["move", payload, signature], use_bin_type=True)


def test_tuples_come_back_as_lists() -> None:
    assert unpack(pack({"a": (1, (2, 3))})) == {"a": [1, [2, 3]]}


def test_str_and_bytes_stay_distinct() -> None:
    assert unpack(pack(["x", b"x"])) == ["x", b"x"]


def test_finite_floats_are_allowed() -> None:
    assert unpack(pack({"timeout": 30.5})) == {"timeout": 30.5}
    assert unpack(b"\xca\x3f\xc0\x00\x00") == 1.5  # float32 decodes too


def test_encode_open_round_trip() -> None:
    payload = pack({"k": 1})
    signature = bytes(range(64))
    for kind in MAX_PAYLOAD_OF:
        assert _open(encode_frame(kind, payload, signature)) == (kind, payload, signature)


@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(min_value=-(1 << 63), max_value=(1 << 64) - 1)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=20)
        | st.binary(max_size=40),
        lambda children: (
            st.lists(children, max_size=5)
            | st.dictionaries(st.text(max_size=8), children, max_size=5)
        ),
        max_leaves=30,
    )
)
def test_pack_unpack_round_trip(value: object) -> None:
    assert unpack(pack(value)) == value


# -- the decoder ---------------------------------------------------------------------------------


def test_frame_fed_one_byte_at_a_time() -> None:
    wire = signed_frame(ALICE, "move", MESSAGE)
    decoder = FrameDecoder()
    got: list[bytes] = []
    for index in range(len(wire)):
        frames = decoder.feed(wire[index : index + 1])
        if index < len(wire) - 1:
            assert frames == []
            assert decoder.pending == index + 1
        got += frames
    assert got == [wire[LENGTH_SIZE:]]
    assert decoder.pending == 0


def test_several_frames_in_one_feed_and_a_partial_tail() -> None:
    wires = [signed_frame(ALICE, "move", {"seq": n}) for n in range(3)]
    tail = signed_frame(BOB, "move", {"seq": 3})
    decoder = FrameDecoder()
    frames = decoder.feed(b"".join(wires) + tail[:10])
    assert [unpack(open_frame(body)[1]) for body in frames] == [{"seq": n} for n in range(3)]
    assert decoder.pending == 10
    [last] = decoder.feed(tail[10:])
    assert unpack(open_frame(last)[1]) == {"seq": 3}


def test_empty_feed_and_truncated_input_stay_pending() -> None:
    wire = signed_frame(ALICE, "move", MESSAGE)
    decoder = FrameDecoder()
    assert decoder.feed(b"") == []
    assert decoder.feed(wire[:2]) == []  # half a length
    assert decoder.feed(wire[2:-1]) == []  # all but the last byte of the body
    assert decoder.pending == len(wire) - 1
    assert decoder.feed(wire[-1:]) == [wire[LENGTH_SIZE:]]


def test_zero_length_frame_is_cut_but_refused_by_open_frame() -> None:
    [body] = FrameDecoder().feed(bytes(4))
    assert body == b""
    with pytest.raises(FrameError, match="truncated"):
        open_frame(body)


def test_frame_over_the_cap_is_refused_as_soon_as_the_length_is_read() -> None:
    decoder = FrameDecoder()
    assert decoder.feed((MAX_FRAME + 1).to_bytes(4, "big")[:3]) == []
    with pytest.raises(FrameError, match=f"over the limit of {MAX_FRAME}"):
        decoder.feed(b"\x01")  # completes the length; no body byte has arrived
    assert decoder.pending == 0  # nothing held
    with pytest.raises(FrameError):  # the stream has lost its framing for good
        decoder.feed(signed_frame(ALICE, "move", {"seq": 0}))


def test_frame_at_the_cap_is_accepted_by_the_decoder() -> None:
    decoder = FrameDecoder()
    header = MAX_FRAME.to_bytes(4, "big")
    assert decoder.feed(header) == []
    [body] = decoder.feed(bytes(MAX_FRAME))
    assert len(body) == MAX_FRAME


def test_largest_payload_fits() -> None:
    payload = bytes(MAX_PAYLOAD)
    wire = encode_frame("verdict", payload, bytes(64))
    assert len(wire) <= LENGTH_SIZE + MAX_FRAME
    assert _open(wire) == ("verdict", payload, bytes(64))
    with pytest.raises(FrameError, match="over the limit"):
        encode_frame("verdict", bytes(MAX_PAYLOAD + 1), bytes(64))
    assert MAX_FRAME == 64 * 1024
    assert MAX_PAYLOAD_OF["verdict"] == MAX_PAYLOAD


def test_encode_frame_checks_its_arguments() -> None:
    with pytest.raises(FrameError, match="64 bytes, got 63"):
        encode_frame("move", b"\x80", bytes(63))
    with pytest.raises(FrameError, match="must be bytes"):
        encode_frame("move", "text", bytes(64))  # type: ignore[arg-type]
    with pytest.raises(FrameError, match="unknown frame kind 'teleport'"):
        encode_frame("teleport", b"\x80", bytes(64))
    with pytest.raises(FrameError, match="kind must be str"):
        encode_frame(b"move", b"\x80", bytes(64))  # type: ignore[arg-type]
    with pytest.raises(FrameError, match="a seat payload of 257 bytes is over the limit of 256"):
        encode_frame("seat", bytes(257), bytes(64))


# -- caps per kind, checked before the payload is decoded ----------------------


def test_the_caps_per_kind() -> None:
    kib = 1024
    expected = {
        "hello": 2 * kib, "seat": 256, "shuffle1": 16 * kib, "shuffle2": 12 * kib,
        "keys": 4 * kib, "move": 4 * kib, "claim": 512, "disclose": 4 * kib, "result": 512,
        "leave": 512, "wait": 512, "verdict": MAX_PAYLOAD, "silent": 512,
    }  # fmt: skip
    assert expected == GAME_KINDS
    assert all(kind.startswith("net/") and cap <= 4 * kib for kind, cap in NET_KINDS.items())
    assert MAX_PAYLOAD_OF["beacon"] == kib
    assert MAX_PAYLOAD_OF["session-result"] == 16 * kib  # a session's signed result (M24)
    assert set(MAX_PAYLOAD_OF) == {*GAME_KINDS, *NET_KINDS, "beacon", "session-result"}
    before_auth = ("hi", "join", "link", "welcome", "refuse")  # all fit a pre-auth frame
    assert all(NET_KINDS[f"net/{kind}"] + 106 <= PRE_AUTH_MAX_FRAME for kind in before_auth)


@pytest.mark.parametrize("kind", sorted(MAX_PAYLOAD_OF))
def test_a_payload_over_its_kinds_cap_is_refused_unopened(kind: str) -> None:
    """open_frame measures the payload bin against the kind's cap and never decodes it: a
    payload of nested arrays one byte over the cap is refused as fast as zeros are."""
    cap = MAX_PAYLOAD_OF[kind]
    at_cap = _body([kind, bytes(cap), SIG])
    assert open_frame(at_cap) == (kind, bytes(cap), SIG)
    if cap < MAX_PAYLOAD:
        for payload in (bytes(cap + 1), b"\x91" * (cap + 1)):
            with pytest.raises(FrameError, match=f"over the limit of {cap}"):
                open_frame(_body([kind, payload, SIG]))


def test_a_frame_of_a_million_empty_arrays_costs_nothing() -> None:
    """The issue's stall: a 1 MiB payload of empty arrays was decoded and walked before any
    check. Now the decoder refuses its length, and a smaller one is refused by its cap."""
    bomb = b"\xdd\x00\x0f\xff\xff" + b"\x90" * 0xFFFFF  # an array of a million empty arrays
    with pytest.raises(FrameError, match="over the limit"):
        FrameDecoder().feed(len(bomb).to_bytes(4, "big"))
    small = b"\xdc\x0f\xff" + b"\x90" * 0xFFF  # 4 KiB: over the cap of a leave
    with pytest.raises(FrameError, match="over the limit of 512"):
        open_frame(_body(["leave", small, SIG]))


def test_unpack_with_a_limit_bounds_the_objects() -> None:
    assert unpack(b"\x91\x90", limit=2) == [[]]
    with pytest.raises(FrameError, match="over the limit of 2"):
        unpack(b"\x92\x90\x90", limit=2)
    with pytest.raises(FrameError):
        unpack(b"\xdd\x00\x00\x10\x00" + b"\x90" * 4096, limit=4096)


def test_unknown_kinds_are_refused() -> None:
    for kind in ("teleport", "net/teleport", "Move", "", "net/", "x" * 32):
        with pytest.raises(FrameError, match="unknown frame kind"):
            open_frame(_body([kind, b"\x80", SIG]))
    with pytest.raises(FrameError, match="malformed msgpack"):  # over 32 characters
        open_frame(_body(["x" * 33, b"\x80", SIG]))
    with pytest.raises(FrameError, match="kind must be str"):
        open_frame(_body([b"move", b"\x80", SIG]))


def test_a_decoder_can_be_tightened_before_authentication() -> None:
    """A connection starts with PRE_AUTH_MAX_FRAME; the cap applies to each frame as it is
    taken out, so a big frame that came in the same read as the last handshake frame is
    accepted once the cap is raised."""
    small = signed_frame(ALICE, "leave", {"reason": "x"})
    big = signed_frame(ALICE, "shuffle1", {"points": [bytes(32)] * 200})
    assert len(big) - LENGTH_SIZE > PRE_AUTH_MAX_FRAME
    decoder = FrameDecoder(max_frame=PRE_AUTH_MAX_FRAME)
    decoder.push(small + big)
    assert decoder.pop() == small[LENGTH_SIZE:]
    decoder.max_frame = MAX_FRAME  # authenticated
    assert decoder.pop() == big[LENGTH_SIZE:]
    assert decoder.pop() is None and decoder.pending == 0
    tight = FrameDecoder(max_frame=PRE_AUTH_MAX_FRAME)
    with pytest.raises(FrameError, match=f"over the limit of {PRE_AUTH_MAX_FRAME}"):
        tight.feed(big[:LENGTH_SIZE])  # refused as soon as its length arrives
    with pytest.raises(ValueError):
        FrameDecoder(max_frame=MAX_FRAME + 1)


# -- garbage bodies ------------------------------------------------------------------------------


def _body(obj: object) -> bytes:
    return bytes(msgpack.packb(obj, use_bin_type=True))


SIG = bytes(64)


def _reason_id(value: object) -> str:
    return value if isinstance(value, str) else "input"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"", "truncated"),
        (b"\xc1", "not msgpack"),
        (b"\x93\xc4", "truncated"),
        (_body(["move", b"\x80", SIG]) + b"\x00", "trailing bytes"),
        (_body({"kind": "move", "payload": b"\x80", "signature": SIG}), "must be an array"),
        (_body(7), "must be an array"),
        (_body([b"\x80", SIG]), "of 2"),  # a v1 frame: [payload, signature]
        (_body(["move", b"\x80"]), "of 2"),
        (_body(["move", b"\x80", SIG, b""]), "malformed msgpack"),  # over max_array_len=3
        (_body(["move", "text payload", SIG]), "payload must be bin"),
        (_body(["move", b"\x80", "x" * 32]), "signature must be bin"),
        (_body(["move", b"\x80", [1, 2]]), "signature must be bin"),
        (_body(["move", b"\x80", bytes(63)]), "64 bytes, got 63"),
        (_body(["move", b"\x80", bytes(65)]), "64 bytes, got 65"),
        (_body(["move", msgpack.ExtType(1, b"x"), SIG]), "extension types"),
        (_body({1: b"x", 2: SIG, 3: "move"}), "map keys must be str"),
        (b"\x93\xa2\xff\xfe" + _body(b"\x80") + _body(SIG), "UTF-8"),
        (b"\xdd\xff\xff\xff\xff", "malformed msgpack"),  # claims four billion items
        (_body([None, b"\x80", SIG]), "kind must be str, got None"),
        (_body(["nope", b"\x80", SIG]), "unknown frame kind 'nope'"),
        (bytes(MAX_FRAME + 1), "over the limit"),
    ],
    ids=_reason_id,
)
def test_garbage_bodies_raise_frame_error(body: bytes, reason: str) -> None:
    with pytest.raises(FrameError, match=reason):
        open_frame(body)


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"", "truncated"),
        (b"\xc1", "not msgpack"),
        (b"\x01\x02", "trailing bytes"),
        (_body(msgpack.ExtType(5, b"ab")), r"extension types are not allowed \(got type 5\)"),
        (_body(msgpack.Timestamp(1, 0)), "may not hold a Timestamp"),
        (_body({"a": float("nan")}), "may not hold the float nan"),
        (b"\xca\x7f\x80\x00\x00", "may not hold the float inf"),  # a float32 infinity
        (_body({1: "one"}), "map keys must be str, got int"),
        (_body({b"k": "bytes key"}), "map keys must be str, got bytes"),
        (_body({"a": {(1, 2): 3}}), "map keys must be str, got list"),
        (b"\x82\xa1a\x01\xa1a\x02", "duplicate map key 'a'"),
        (b"\x91" * (MAX_DEPTH + 1) + b"\x00", f"nested deeper than {MAX_DEPTH}"),
        (b"\x91" * 5000 + b"\x00", "nested too deeply"),
        (b"\xdd\x7f\xff\xff\xff", "malformed msgpack"),  # over max_array_len
        (b"\xdf\x00\x01\x00\x00", "malformed msgpack"),  # over max_map_len
        (b"\xdb\x00\x01\x00\x01" + b"a" * 100, "truncated"),  # claims a longer str
        (b"\xa1\xff", "UTF-8"),
        (bytes(MAX_PAYLOAD + 1), "over the limit"),
    ],
    ids=_reason_id,
)
def test_garbage_payloads_raise_frame_error(payload: bytes, reason: str) -> None:
    with pytest.raises(FrameError, match=reason):
        unpack(payload)


def test_unpack_accepts_the_deepest_allowed_nesting() -> None:
    deepest = b"\x91" * MAX_DEPTH + b"\x00"
    value = unpack(deepest)
    for _ in range(MAX_DEPTH):
        assert isinstance(value, list)
        value = value[0]
    assert value == 0


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ({"a": float("nan")}, "float nan"),
        ({"a": [float("-inf")]}, "float -inf"),
        ({1: "x"}, "map keys must be str"),
        ({"s": {1, 2}}, "may not hold a set"),
        ({"big": 1 << 64}, "does not fit"),
        ({"small": -(1 << 63) - 1}, "does not fit"),
        ({"s": "x" * (64 * 1024 + 1)}, "over the limit"),
        ({"b": bytes(MAX_PAYLOAD)}, "over the limit"),
        ({"s": "\ud800"}, "cannot pack"),  # a lone surrogate is no UTF-8
    ],
)
def test_pack_refuses_what_a_peer_would_refuse(value: object, reason: str) -> None:
    with pytest.raises(FrameError, match=reason):
        pack(value)


def test_pack_refuses_a_cycle() -> None:
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises(FrameError, match="nested deeper"):
        pack(cycle)


def test_non_bytes_input_is_a_frame_error() -> None:
    with pytest.raises(FrameError):
        unpack("text")  # type: ignore[arg-type]
    with pytest.raises(FrameError):
        open_frame(bytearray(b"\x93"))  # type: ignore[arg-type]


# -- decoding never crashes ----------------------------------------------------------------------

_msgpack_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(1 << 63), max_value=(1 << 64) - 1)
    | st.floats()
    | st.text(max_size=10)
    | st.binary(max_size=70),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=4) | st.binary(max_size=4), children, max_size=4)
    ),
    max_leaves=20,
)


@st.composite
def _hostile_bytes(draw: st.DrawFn) -> bytes:
    """Arbitrary bytes, valid msgpack, and valid msgpack with a few bytes changed or cut."""
    kind = draw(st.sampled_from(["raw", "msgpack", "mutated", "framed"]))
    if kind == "raw":
        return draw(st.binary(max_size=200))
    data = bytearray(msgpack.packb(draw(_msgpack_values), use_bin_type=True))
    if kind == "framed":
        frame_kind = draw(st.sampled_from([*MAX_PAYLOAD_OF, "x", ""]) | st.text(max_size=5))
        signature = draw(st.binary(min_size=60, max_size=68))
        data = bytearray(_body([frame_kind, bytes(data), signature]))
    if kind in ("mutated", "framed") and data:
        for _ in range(draw(st.integers(0, 3))):
            index = draw(st.integers(0, len(data) - 1))
            data[index] = draw(st.integers(0, 255))
        data = data[: draw(st.integers(0, len(data)))]
    return bytes(data)


@given(_hostile_bytes())
def test_unpack_raises_only_frame_error(data: bytes) -> None:
    with contextlib.suppress(FrameError):
        unpack(data)


@given(_hostile_bytes())
def test_open_frame_raises_only_frame_error(data: bytes) -> None:
    try:
        kind, payload, signature = open_frame(data)
    except FrameError:
        return
    assert len(signature) == 64
    assert isinstance(payload, bytes)
    assert len(payload) <= MAX_PAYLOAD_OF[kind]


@given(st.lists(st.binary(max_size=40), max_size=10))
def test_decoder_raises_only_frame_error(chunks: list[bytes]) -> None:
    decoder = FrameDecoder(max_frame=64)
    try:
        for chunk in chunks:
            for body in decoder.feed(chunk):
                assert len(body) <= 64
    except FrameError:
        pass


@given(st.lists(st.integers(0, 2000), max_size=6), st.data())
def test_decoder_splits_any_chunking_of_a_stream(sizes: list[int], data: st.DataObject) -> None:
    messages = [{"seq": n, "pad": bytes(size)} for n, size in enumerate(sizes)]
    stream = b"".join(signed_frame(ALICE, "verdict", m) for m in messages)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    decoder = FrameDecoder()
    bodies: list[bytes] = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        bodies += decoder.feed(stream[start:end])
    assert decoder.pending == 0
    assert [unpack(open_frame(body)[1]) for body in bodies] == messages


# -- signatures cover the exact payload bytes ----------------------------------------------------


def test_signature_covers_the_exact_payload_bytes() -> None:
    kind, payload, signature = _open(signed_frame(ALICE, "move", MESSAGE))
    assert signature == ALICE.sign("move", payload)
    for index in range(len(payload)):
        tampered = bytearray(payload)
        tampered[index] ^= 0x01
        assert not verify(ALICE.public_bytes, kind, bytes(tampered), signature)


def test_a_re_encoded_payload_does_not_verify() -> None:
    """msgpack is not canonical: ``{"seq": 1}`` has several valid encodings that decode alike.
    A receiver that decoded and re-encoded before verifying would check the wrong bytes, so we
    always verify the payload exactly as it arrived."""
    message = {"seq": 1}
    compact = pack(message)
    assert compact == b"\x81\xa3seq\x01"  # fixmap, fixstr, positive fixint
    signature = ALICE.sign("move", compact)
    wide = b"\x81\xa3seq" + b"\xce" + struct.pack(">I", 1)  # the same 1 as a uint32
    wider_key = b"\x81\xd9\x03seq\x01"  # the same key as a str8
    for other in (wide, wider_key):
        assert unpack(other) == message  # the same message to every decoder...
        assert other != compact  # ...but other bytes...
        assert not verify(ALICE.public_bytes, "move", other, signature)  # ...another signature
    # A sender who signs the wide form is verified on the bytes it sent, not on our re-encoding.
    wide_signature = ALICE.sign("move", wide)
    kind, frame_payload, frame_signature = _open(encode_frame("move", wide, wide_signature))
    assert frame_payload == wide
    assert verify(ALICE.public_bytes, kind, frame_payload, frame_signature)
    assert not verify(ALICE.public_bytes, kind, pack(unpack(frame_payload)), frame_signature)


# -- field checks --------------------------------------------------------------------------------

ENVELOPE: Spec = {
    "seq": int,
    "sender": int,
    "type": str,
    "body": dict,
    "prev": Field(bytes, length=32),
}


def test_check_fields_accepts_a_good_message() -> None:
    message = {"seq": 1, "sender": 0, "type": "play", "body": {}, "prev": bytes(32)}
    assert check_fields(message, ENVELOPE) is message


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"seq": "1"}, "field seq must be int, got str"),
        ({"seq": True}, "field seq must be int, got bool"),
        ({"seq": None}, "field seq must be int, got None"),
        ({"body": []}, "field body must be dict, got list"),
        ({"prev": bytes(31)}, "field prev must be 32 bytes, got 31"),
        ({"prev": "0" * 32}, "field prev must be bytes, got str"),
        ({"extra": 1}, "unexpected field extra"),
    ],
)
def test_check_fields_names_the_problem(change: dict[str, object], reason: str) -> None:
    message: dict[str, object] = {
        "seq": 1,
        "sender": 0,
        "type": "play",
        "body": {},
        "prev": bytes(32),
    }
    message.update(change)
    with pytest.raises(FrameError, match=rf"^{reason}$"):
        check_fields(message, ENVELOPE)


def test_check_fields_missing_extra_optional_and_nested() -> None:
    with pytest.raises(FrameError, match=r"^missing field type$"):
        check_fields({"seq": 1}, {"seq": int, "type": str})
    with pytest.raises(FrameError, match=r"^a message must be dict, got list$"):
        check_fields([1], {"seq": int})
    assert check_fields({"seq": 1, "x": 2}, {"seq": int}, allow_extra=True) == {"seq": 1, "x": 2}
    assert check_fields({}, {"note": Field(str, optional=True)}) == {}
    spec = {"cards": Field(list, items=Field(int, minimum=0, maximum=51))}
    assert check_fields({"cards": [0, 51]}, spec, prefix="body.")
    with pytest.raises(FrameError, match=r"^field body\.cards\[1\] must be at most 51, got 52$"):
        check_fields({"cards": [0, 52]}, spec, prefix="body.")
    with pytest.raises(FrameError, match=r"^field body\.cards\[0\] must be int, got bool$"):
        check_fields({"cards": [False]}, spec, prefix="body.")
    with pytest.raises(FrameError, match=r"^field body must be dict, got int$"):
        check_fields(3, spec, prefix="body.")
    either: Spec = {"prev": (bytes, type(None))}
    assert check_fields({"prev": None}, either)
    with pytest.raises(FrameError, match=r"^field prev must be bytes or None, got int$"):
        check_fields({"prev": 0}, either)
    assert check_fields({"flag": True}, {"flag": bool})
    with pytest.raises(FrameError, match=r"^field flag must be bool, got int$"):
        check_fields({"flag": 1}, {"flag": bool})


def test_require_is_typed_and_checked() -> None:
    message = {"seq": 4, "prev": bytes(32), "ok": False}
    seq: int = require(message, "seq", int, minimum=0)
    assert seq == 4
    assert require(message, "prev", bytes, length=32) == bytes(32)
    with pytest.raises(FrameError, match=r"^field seq must be at least 5, got 4$"):
        require(message, "seq", int, minimum=5)
    with pytest.raises(FrameError, match=r"^field ok must be int, got bool$"):
        require(message, "ok", int)
    with pytest.raises(FrameError, match=r"^missing field nope$"):
        require(message, "nope", int)
    assert require(message, "ok", (int, bool)) is False
