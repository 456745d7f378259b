"""A club event carried between the members' machines (trio): the director's and the
entrants' network side, each round's tables played with the network node, and the event
folder every member keeps (``moska tournament``, ``moska verify EVENT_FOLDER``). The rules of
the event are the sans-IO :mod:`moska_p2p.tournament`."""
