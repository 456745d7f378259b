"""What ``scripts/fuzz.py`` runs: the games and their snapshots (:mod:`.games`), the
mutations (:mod:`.values`, :mod:`.frames`), the fuzzer (:mod:`.fuzzer`, with its decoder
inputs in :mod:`.decoders`) and its small pieces (:mod:`.run_tools`).
"""
