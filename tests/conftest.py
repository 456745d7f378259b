"""Shared pytest configuration.

Hypothesis profiles: "ci" (the default) keeps runs short; "dev" searches harder. Select one with
the HYPOTHESIS_PROFILE environment variable, e.g. ``HYPOTHESIS_PROFILE=dev pytest``.
"""

import atexit
import os
import shutil
import tempfile

from hypothesis import settings

settings.register_profile("ci", deadline=None, max_examples=50)
settings.register_profile("dev", deadline=None, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Network tests talk to this machine only: a table a test opens announces itself on the
# loopback interface, never on the machine's LAN (tests that need another interface make a
# network namespace of their own and set this themselves). Child processes inherit it.
os.environ.setdefault("MOSKA_DISCOVERY_IF", "127.0.0.1")

# `moska play` counts every finished game in the person's record, in the data folder: the
# tests (and the programs they start, which inherit this) keep theirs in a throw-away one,
# never in the record of whoever runs them.
_DATA_HOME = tempfile.mkdtemp(prefix="moska-tests-data-")
os.environ["XDG_DATA_HOME"] = _DATA_HOME
atexit.register(shutil.rmtree, _DATA_HOME, ignore_errors=True)
