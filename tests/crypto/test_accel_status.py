"""What ``moska --version`` and the start-up warning say of the proofs' arithmetic
(moska_p2p.crypto.msm.describe): every case a person can be in, whether libdecaf is installed
here or not (its presence is faked both ways where needed)."""

from __future__ import annotations

import ctypes

import pytest

from moska_p2p.crypto import decaf, msm


@pytest.fixture(autouse=True)
def _no_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(decaf.ENVIRONMENT_VARIABLE, raising=False)


def test_nothing_asked_is_the_reference_path() -> None:
    text, as_asked = msm.describe()
    assert as_asked
    assert text.startswith("libsodium (the reference path;")


def test_an_unknown_name_is_not_what_was_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(decaf.ENVIRONMENT_VARIABLE, " Turbo ")
    text, as_asked = msm.describe()
    assert not as_asked
    assert "MOSKA_P2P_ACCEL=turbo names no accelerator" in text


def test_asked_for_but_not_installed_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(decaf.ENVIRONMENT_VARIABLE, "decaf")
    monkeypatch.setattr(decaf, "_LIB", None)
    text, as_asked = msm.describe()
    assert not as_asked
    assert text.startswith("libsodium: MOSKA_P2P_ACCEL=decaf is set")
    assert "apt-get install libdecaf0" in text


def test_installed_but_no_native_sum_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(decaf.ENVIRONMENT_VARIABLE, "decaf")
    monkeypatch.setattr(decaf, "_LIB", ctypes.CDLL(None))  # only "is it there" is asked
    monkeypatch.setattr(decaf, "_active", True)
    monkeypatch.setattr(msm, "_library", lambda: None)
    monkeypatch.setattr(msm, "_reason", "no C compiler to build msm.c")
    text, as_asked = msm.describe()
    assert not as_asked
    assert text == "libdecaf, without batch verification: no C compiler to build msm.c"


@pytest.mark.skipif(not decaf.available(), reason="libdecaf is not installed")
def test_the_whole_accelerator_when_it_is_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(decaf.ENVIRONMENT_VARIABLE, "decaf")
    with decaf.use():
        text, as_asked = msm.describe()
    assert as_asked
    expected = "libdecaf, with batch verification" if msm.available() else "libdecaf, without"
    assert text.startswith(expected)
