"""A TCP proxy between two honest peers that can stop forwarding one direction, or both,
while the connections stay open: a broken link (a router that drops a direction, a cable that
is cut) with no reset to tell either end.

A joiner that joins the host through the proxy has its game link to the host through it (its
lobby connection becomes that link, and it redials the address it reached the host at), so the
proxy stands on that one link of the table and no other. ``down`` is the host's bytes to the
joiner, ``up`` the joiner's to the host. After :meth:`CuttingProxy.cut`, bytes of a cut
direction are read and dropped, on the connections that are open and on every later one (a
redial gets no further: the handshake's ``hi`` or ``link`` never arrives).

Plain threads and blocking sockets, in the test's process: nothing to run, everything
closed by :meth:`CuttingProxy.stop`.
"""

from __future__ import annotations

import contextlib
import socket
import threading

UP, DOWN = "up", "down"


class CuttingProxy:
    """Forwards every connection to ``127.0.0.1:upstream_port`` until told to cut."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.cut_directions: frozenset[str] = frozenset()
        self.forwarded = {UP: 0, DOWN: 0}  # bytes passed on
        self.dropped = {UP: 0, DOWN: 0}  # bytes read and thrown away after the cut
        self.connections = 0
        self.port = 0
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._listener: socket.socket | None = None

    def start(self) -> int:
        """Listen on 127.0.0.1 (any free port), accept in a daemon thread; the port."""
        listener = socket.create_server(("127.0.0.1", 0))
        self._listener = listener
        self.port = int(listener.getsockname()[1])
        threading.Thread(target=self._accept, name="cutting-proxy", daemon=True).start()
        return self.port

    def cut(self, *directions: str) -> None:
        """From now on drop what goes ``up``, ``down`` or both (the links stay open)."""
        assert set(directions) <= {UP, DOWN}, directions
        with self._lock:
            self.cut_directions = frozenset(directions)

    def stop(self) -> None:
        with self._lock:
            closing = [s for s in (self._listener, *self._sockets) if s is not None]
            self._sockets.clear()
        for sock in closing:
            with contextlib.suppress(OSError):
                sock.close()

    def _accept(self) -> None:
        listener = self._listener
        assert listener is not None
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # stopped
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port), 10)
            except OSError:
                client.close()
                continue
            with self._lock:
                self.connections += 1
                self._sockets += [client, upstream]
            for source, target, direction in ((client, upstream, UP), (upstream, client, DOWN)):
                threading.Thread(
                    target=self._pump, args=(source, target, direction), daemon=True
                ).start()

    def _pump(self, source: socket.socket, target: socket.socket, direction: str) -> None:
        """``source`` to ``target`` until either ends; the end passes on as a half-close,
        unless the direction is cut (then the other end never hears of it)."""
        try:
            while data := source.recv(65536):
                with self._lock:
                    dropping = direction in self.cut_directions
                    (self.dropped if dropping else self.forwarded)[direction] += len(data)
                if not dropping:
                    target.sendall(data)
            if direction not in self.cut_directions:
                target.shutdown(socket.SHUT_WR)
        except OSError:
            with contextlib.suppress(OSError):
                target.shutdown(socket.SHUT_RDWR)
