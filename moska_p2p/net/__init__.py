"""The network layer: peers on real TCP, with trio (DESIGN.md, "Network and user interface").

The sockets and the peer's event loop are here; besides this package only what runs beside
a node imports trio: the seat's side of the loop (:mod:`moska_p2p.table.networked`,
:mod:`moska_p2p.table.seat`), the spectator's screen (:mod:`moska_p2p.ui.spectate`) and the
``host``/``join``/``watch``/``relay`` commands that start one.
:mod:`.wire` holds the lobby and link messages and a framed reader, :mod:`.link` one game
connection, :mod:`.persist` the files that let a crashed peer resume, :mod:`.discovery` the
signed multicast beacon that lets tables be found on the LAN, and :mod:`.node` the peer
itself, which owns one part per job: :mod:`.links` (our port, handshakes, game links;
:mod:`.admission` the caps on strangers), :mod:`.runner` (one game, then the next, with
:mod:`.sessions` between games), :mod:`.lobby` (who may sit, the roster) and
:mod:`.watch_host` (spectators); :mod:`.state` what they share and :mod:`.port` the seat's
side (a bot or a person). Relays: :mod:`.relay_proto`, :mod:`.relay`, :mod:`.relay_client`,
:mod:`.invite`; spectators' own side: :mod:`.watch`.

``__all__`` is what the other packages use: the command line (the node, its options and
outcome, invites, known peers, saved games, discovery, the relay, a spectator) and the
table's network seat (the port).
"""

from ..protocol.frames import printable
from .discovery import (
    BEACON_INTERVAL,
    TABLE_TAG,
    DiscoveryError,
    Found,
    FoundTable,
    Newest,
    Settings,
    find_tables,
    listen_for_beacons,
    open_beacon,
    pick_table,
    send_beacon,
)
from .invite import EVENT_INVITE, PREFIX, Invite, InviteError, looks_like_invite, parse_invite
from .known import (
    STATEMENT,
    KnownPeers,
    KnownPeersError,
    StatementError,
    default_known_peers_path,
    key_change_statement,
    parse_statement,
)
from .links import listen_failure
from .lobby import lan_address
from .node import Node
from .persist import (
    SavedGame,
    SaveError,
    data_dir,
    default_transcript,
    find_saved,
    load_saved,
    load_secret,
    resume_path,
    secret_path,
    write_private,
)
from .port import GamePort, Player, TableWait, table_wait
from .relay import RelayServer
from .relay_client import RELAYED_HOST, RelayClient, VirtualStream
from .relay_proto import ROOM_SIZE, SECRET_SIZE, Caps, RoomPass, club_caps
from .state import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, NodeOptions, Outcome
from .watch import Watcher, WatchOptions
from .wire import FrameStream, prefixed

__all__ = [
    "BEACON_INTERVAL",
    "EVENT_INVITE",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "PREFIX",
    "RELAYED_HOST",
    "ROOM_SIZE",
    "SECRET_SIZE",
    "STATEMENT",
    "TABLE_TAG",
    "Caps",
    "DiscoveryError",
    "Found",
    "FoundTable",
    "FrameStream",
    "GamePort",
    "Invite",
    "InviteError",
    "KnownPeers",
    "KnownPeersError",
    "Newest",
    "Node",
    "NodeOptions",
    "Outcome",
    "Player",
    "RelayClient",
    "RelayServer",
    "RoomPass",
    "SaveError",
    "SavedGame",
    "Settings",
    "StatementError",
    "TableWait",
    "VirtualStream",
    "WatchOptions",
    "Watcher",
    "club_caps",
    "data_dir",
    "default_known_peers_path",
    "default_transcript",
    "find_saved",
    "find_tables",
    "key_change_statement",
    "lan_address",
    "listen_failure",
    "listen_for_beacons",
    "load_saved",
    "load_secret",
    "looks_like_invite",
    "open_beacon",
    "parse_invite",
    "parse_statement",
    "pick_table",
    "prefixed",
    "printable",
    "resume_path",
    "secret_path",
    "send_beacon",
    "table_wait",
    "write_private",
]
