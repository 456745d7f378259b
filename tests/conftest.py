"""Shared pytest configuration.

Hypothesis profiles: "ci" (the default) keeps runs short; "dev" searches harder. Select one with
the HYPOTHESIS_PROFILE environment variable, e.g. ``HYPOTHESIS_PROFILE=dev pytest``.
"""

import os

from hypothesis import settings

settings.register_profile("ci", deadline=None, max_examples=50)
settings.register_profile("dev", deadline=None, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Network tests talk to this machine only: a table a test opens announces itself on the
# loopback interface, never on the machine's LAN (tests that need another interface make a
# network namespace of their own and set this themselves). Child processes inherit it.
os.environ.setdefault("MOSKA_DISCOVERY_IF", "127.0.0.1")
