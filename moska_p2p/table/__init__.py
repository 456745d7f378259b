"""The table: one game driven for its seats, wherever the dealer is.

* :mod:`.seat` — whoever plays a seat, and the :class:`~.seat.Referee` that asks it for a move
  and turns every failure into the same forfeit;
* :mod:`.local` — a full-information engine with every seat in this process (the arena,
  ``moska play``);
* :mod:`.simulate` — every seat its own peer session, on an in-memory network
  (``moska simulate``, the protocol's test harness);
* :mod:`.networked` — this peer's seat at a table on the network: a bot or a person plays
  through the node's :class:`~moska_p2p.net.port.GamePort`.
"""
