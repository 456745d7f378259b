"""What ``scripts/make_vectors.py`` writes to ``protocol/vectors/``: one module per file
(``framing``, ``crypto``, ``attacks`` with its two halves, ``games`` with the sessions), over
:mod:`.base` (seeds, the JSON form, the recording table).
"""
