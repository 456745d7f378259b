"""The library parts of the large scripts: ``scripts/make_vectors.py`` and ``scripts/fuzz.py``
are thin entry points over :mod:`.vectors` and :mod:`.fuzz`, which hold what they do, one
module per job (a vector file, a kind of attack, the mutator, the fuzzer...).

Imported as ``scripts.lib`` with the repository's root on ``sys.path`` (the entry points put
it there), never installed: these are tools of the repository, not of the package.
"""
