"""Play for a person at the terminal: the table (``render``), the seat a person fills
(``terminal``), local games against bots (``local``) and replays (``replay``).

The layer sits beside the bots: a :class:`~moska_p2p.ui.terminal.TerminalPlayer` speaks the
bot API, so whatever seats a bot (the local driver here, the network peer later) can seat a
person instead.
"""
