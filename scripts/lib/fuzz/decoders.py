"""The inputs to the pure decoders (frame decoder, payloads, settings, lobby and link
messages, beacons, move texts, transcripts, ``verify``): the decoder half of
:class:`~.fuzzer.Fuzzer`, a class of its own for length. It uses the fuzzer's fields and its
``finding`` and ``harness_error``, through ``self``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import traceback
from collections.abc import Callable
from typing import Any

import msgpack

from moska_p2p.engine import MoveSyntaxError, parse_move
from moska_p2p.event import lan
from moska_p2p.net import discovery, wire
from moska_p2p.protocol import messages as m
from moska_p2p.protocol.config import ConfigError, TableConfig
from moska_p2p.protocol.frames import (
    BEACON,
    LENGTH_SIZE,
    MAX_FRAME,
    NET_KINDS,
    PRE_AUTH_MAX_FRAME,
    FrameDecoder,
    FrameError,
    open_frame,
)
from moska_p2p.protocol.transcript import (
    Report,
    TranscriptError,
    read_transcript,
    verify_transcript,
    write_transcript,
)
from scripts.lib.fuzz.frames import Mutator, flip_bytes, pack_any
from scripts.lib.fuzz.games import Game
from scripts.lib.fuzz.run_tools import _Foreign, _open_and_parse, _where, json_copy
from scripts.lib.fuzz.values import Context, containers, mutate_value


class DecoderInputs:
    """What :class:`~.fuzzer.Fuzzer` feeds the pure decoders (see the module docstring)."""

    args: argparse.Namespace
    games: list[Game]

    # -- the pure decoders

    def decoder_input(self, index: int, rng: random.Random, verbose: bool) -> str:
        game = rng.choice(self.games)
        ctx = Context(rng, game, None)
        mutator = Mutator(ctx)
        name = rng.choices(
            ["frames", "message", "config", "net", "announcement", "move text", "transcript"],
            [5, 5, 4, 5, 4, 3, 1.5],
        )[0]
        if name == "transcript" and rng.random() < self.args.verify_share:
            name = "verify"
        handler: Callable[[random.Random, Context, Mutator], tuple[str, list[bytes]]] = getattr(
            self, "_decode_" + name.replace(" ", "_")
        )
        try:
            outcome, inputs = handler(rng, ctx, mutator)
        except _Foreign as foreign:
            self.finding(f"decoder {name}", index, foreign.error, foreign.inputs, foreign.note)
            self.stats.decoders[name]["FINDING"] += 1
            return f"decoder {name}"
        except Exception as error:  # a bug of this script, not of the library
            self.harness_error(index, error)
            return f"decoder {name}"
        self.stats.decoders[name][outcome] += 1
        if verbose:
            print(f"input {index}: decoder {name}: {outcome}")
            for data in inputs:
                print(f"  input {data.hex()}")
        return f"decoder {name}"

    def harness_error(self, index: int, error: Exception) -> None:
        key = _where(error)
        self.stats.harness_errors[key] += 1
        if self.stats.harness_errors[key] == 1:
            print(f"\n(fuzzer bug at input {index}, not a finding) {key}", flush=True)
            traceback.print_exception(error)

    def _decode_frames(
        self, rng: random.Random, ctx: Context, mutator: Mutator
    ) -> tuple[str, list[bytes]]:
        parts = []
        for _ in range(rng.randrange(1, 5)):
            r = rng.random()
            base = rng.choice(ctx.game.frames)
            if r < 0.35:
                parts.append(base)
            elif r < 0.75:
                parts.append(mutator.mutate(base)[0])
            elif r < 0.9:
                parts.append(rng.randbytes(rng.randrange(40)))
            else:
                parts.append(
                    rng.choice([0, 1, 64, PRE_AUTH_MAX_FRAME + 1, 2**32 - 1]).to_bytes(4, "big")
                )
        stream = b"".join(parts)
        cap = rng.choice([PRE_AUTH_MAX_FRAME, MAX_FRAME, 64, 0])
        decoder = FrameDecoder(cap)
        outcome = "ok"
        at = 0
        try:
            while at < len(stream):
                step = rng.choice([1, 7, 100, 5000, len(stream)])
                for body in decoder.feed(stream[at : at + step]):
                    outcome = _open_and_parse(body)
                at += step
        except FrameError:
            outcome = "FrameError"
        except Exception as error:
            raise _Foreign(error, [stream], f"cap {cap}") from None
        return outcome, [stream]

    def _decode_message(
        self, rng: random.Random, ctx: Context, mutator: Mutator
    ) -> tuple[str, list[bytes]]:
        frame, _ = mutator.mutate(rng.choice(ctx.game.frames))
        try:
            _, payload, _ = open_frame(frame[LENGTH_SIZE:])
        except FrameError:
            try:
                outer = msgpack.unpackb(frame[LENGTH_SIZE:], raw=False, strict_map_key=False)
                payload = outer[1] if isinstance(outer, list) and len(outer) > 1 else frame
            except Exception:
                payload = frame
            if not isinstance(payload, bytes):
                payload = frame
        try:
            msg = m.parse_payload(payload)
        except FrameError as error:
            return type(error).__name__, [payload]
        except Exception as error:
            raise _Foreign(error, [payload], "parse_payload") from None
        return f"parsed {msg.type}", [payload]

    def _decode_config(
        self, rng: random.Random, ctx: Context, mutator: Mutator
    ) -> tuple[str, list[bytes]]:
        value: Any = json_copy(rng.choice(self.configs))
        for _ in range(rng.choice([1, 1, 2, 3])):
            nodes = containers({"c": value})
            container, key = rng.choice(nodes)
            container[key] = mutate_value(container[key], ctx)
            value = nodes[0][0]["c"]
        data = pack_any(value) or b""
        try:
            config = TableConfig.from_wire(value)
        except ConfigError:
            return "ConfigError", [data]
        except Exception as error:
            raise _Foreign(
                error, [data], "TableConfig.from_wire (the input is its msgpack)"
            ) from None
        try:
            assert TableConfig.from_wire(config.to_wire()) == config, "to_wire does not round trip"
        except Exception as error:
            raise _Foreign(error, [data], "TableConfig round trip") from None
        return "accepted", [data]

    def _decode_net(
        self, rng: random.Random, ctx: Context, mutator: Mutator
    ) -> tuple[str, list[bytes]]:
        frame, identity, link = rng.choice(self.net_frames)
        kind, payload, signature = open_frame(frame[LENGTH_SIZE:])
        r = rng.random()
        if r < 0.15:
            body = flip_bytes(frame[LENGTH_SIZE:], rng)
        else:
            obj = msgpack.unpackb(payload, raw=False)
            for _ in range(rng.choice([1, 1, 2])):
                mutator._tree_op(obj)
            data = pack_any(obj) or flip_bytes(payload, rng)
            if r < 0.25:
                data = flip_bytes(data, rng)
            if rng.random() < 0.05:
                kind = rng.choice([*NET_KINDS, "net/x", "move", BEACON])
            key = obj.get("key") if isinstance(obj, dict) else None
            signer = ctx.game.identities.get(key) if isinstance(key, bytes) else None
            signer = signer or identity
            signed = (link or b"") + data  # a link message: over its link's id
            sig = signature if rng.random() < 0.05 else signer.sign(kind, signed)
            body = msgpack.packb([kind, data, sig], use_bin_type=True)
        if link is not None and rng.random() < 0.05:
            link = flip_bytes(link, rng)  # replayed into another link
        try:
            message = wire.classify(body, link)
        except FrameError:
            return "FrameError", [body]
        except Exception as error:
            raise _Foreign(error, [body], "classify") from None
        if message is None:
            return "a game frame", [body]
        try:
            if message.kind == wire.START:
                for entry in message.body["roster"]:
                    with contextlib.suppress(FrameError):
                        wire.Entry.from_wire(entry).verify(self.lobby)
            if message.kind in (wire.JOIN, wire.LINK, wire.WELCOME):
                b = message.body
                for role in (wire.DIALER, wire.LISTENER):
                    wire.check_link_proof(
                        b["proof"],
                        b.get("table", self.lobby),
                        message.key,
                        ctx.rng.choice(ctx.game.roster),
                        b.get("nonce", bytes(32)),
                        bytes(32),
                        role,
                    )
        except Exception as error:
            raise _Foreign(error, [body], f"after classify: a {message.kind}") from None
        return f"verified {message.kind}", [body]

    def _decode_announcement(
        self, rng: random.Random, ctx: Context, mutator: Mutator
    ) -> tuple[str, list[bytes]]:
        datagram = rng.choice(self.announcements)
        _, payload, signature = open_frame(datagram[LENGTH_SIZE:])
        r = rng.random()
        if r < 0.2:
            data = flip_bytes(datagram, rng)
        else:
            obj = msgpack.unpackb(payload, raw=False)
            for _ in range(rng.choice([1, 1, 2])):
                mutator._tree_op(obj)
            new = pack_any(obj) or flip_bytes(payload, rng)
            key = obj.get("key") if isinstance(obj, dict) else None
            signer = ctx.game.identities.get(key) if isinstance(key, bytes) else None
            signer = signer or ctx.game.identities[ctx.game.roster[0]]
            sig = signature if rng.random() < 0.05 else signer.sign(BEACON, new)
            body = msgpack.packb([BEACON, new, sig], use_bin_type=True)
            data = len(body).to_bytes(LENGTH_SIZE, "big") + body
        outcome = "FrameError"
        try:  # a table's announcement...
            found = discovery.parse_announcement(data, "192.0.2.1")
        except FrameError:
            pass
        except Exception as error:
            raise _Foreign(error, [data], "parse_announcement") from None
        else:
            try:
                found.describe()
                _ = found.joinable, found.endpoint, found.fingerprint
                discovery.Collector().feed(data, "192.0.2.1")
            except Exception as error:
                raise _Foreign(error, [data], "after parse_announcement") from None
            outcome = "verified"
        try:  # ... or an event's: the same datagram, another format
            event = lan.parse_event_announcement(data, "192.0.2.1")
        except FrameError:
            pass
        except Exception as error:
            raise _Foreign(error, [data], "parse_event_announcement") from None
        else:
            try:
                event.describe()
                _ = event.enterable, event.endpoint, event.fingerprint
                heard = lan.event_collector()
                heard.feed(data, "192.0.2.1")
                lan.open_events(heard)
            except Exception as error:
                raise _Foreign(error, [data], "after parse_event_announcement") from None
            outcome = "verified event"
        return outcome, [data]

    def _decode_move_text(
        self, rng: random.Random, ctx: Context, mutator: Mutator
    ) -> tuple[str, list[bytes]]:
        text = ctx.move_text()
        for _ in range(rng.choice([0, 1, 1, 2])):
            changed = mutate_value(text, ctx)
            text = changed if isinstance(changed, str) else text
        if rng.random() < 0.2:
            words = text.split()
            rng.shuffle(words)
            text = rng.choice([" ", ",", " , ", "\t"]).join(words)
        data = text.encode("utf-8", "surrogatepass")
        try:
            move = parse_move(text)
        except MoveSyntaxError:
            return "MoveSyntaxError", [data]
        except Exception as error:
            raise _Foreign(error, [data], "parse_move (the input is the text in UTF-8)") from None
        try:
            assert parse_move(str(move)) == move, f"{move} does not parse back"
        except Exception as error:
            raise _Foreign(error, [data], "parse_move round trip") from None
        return "parsed", [data]

    def _transcript_file(self, rng: random.Random, ctx: Context, mutator: Mutator) -> bytes:
        game = ctx.game
        owner = game.final[rng.randrange(len(game.final))]
        frames = list(owner.transcript)
        for _ in range(rng.choice([1, 1, 2, 3])):
            if not frames:
                break
            i = rng.randrange(len(frames))
            op = rng.choice(["flip", "mutate", "drop", "dup", "swap", "truncate", "cut"])
            if op == "flip":
                frames[i] = flip_bytes(frames[i], rng)
            elif op == "mutate":
                frames[i] = mutator.mutate(frames[i])[0]
            elif op == "drop":
                del frames[i]
            elif op == "dup":
                frames.insert(rng.randrange(len(frames) + 1), frames[i])
            elif op == "swap":
                j = rng.randrange(len(frames))
                frames[i], frames[j] = frames[j], frames[i]
            elif op == "truncate":
                frames = frames[:i]
            else:
                frames[i] = frames[i][: rng.randrange(len(frames[i]))]
        path = self.tmp / "game.moska"
        write_transcript(path, owner.me, owner.config, owner.roster, frames)
        data = path.read_bytes()
        if rng.random() < 0.15:
            data = flip_bytes(data[:300], rng) + data[300:]
            path.write_bytes(data)
        return data

    def _decode_transcript(
        self, rng: random.Random, ctx: Context, mutator: Mutator
    ) -> tuple[str, list[bytes]]:
        data = self._transcript_file(rng, ctx, mutator)
        try:
            read_transcript(self.tmp / "game.moska")
        except TranscriptError:
            return "TranscriptError", [data]
        except Exception as error:
            raise _Foreign(error, [data], "read_transcript (the input is the file)") from None
        return "read", [data]

    def _decode_verify(
        self, rng: random.Random, ctx: Context, mutator: Mutator
    ) -> tuple[str, list[bytes]]:
        data = self._transcript_file(rng, ctx, mutator)
        try:
            report = verify_transcript(self.tmp / "game.moska")
            assert isinstance(report, Report)
            json.dumps(report.to_json())
        except Exception as error:
            raise _Foreign(error, [data], "verify_transcript (the input is the file)") from None
        if report.fault and "the verifier failed" in report.fault:
            failed = RuntimeError(report.fault)
            raise _Foreign(failed, [data], "verify_transcript: the verifier failed on its own")
        return ("valid" if report.valid else "invalid"), [data]

    # -- the whole run
