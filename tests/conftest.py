"""Shared helpers for the system tests: where the built artefacts are and
how to boot the LWK."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import run_lwk  # noqa: E402

KERNEL = os.path.join(ROOT, "build", "atoll-kernel")


@pytest.fixture(scope="session")
def kernel():
    if not os.path.exists(KERNEL):
        pytest.fail("build/atoll-kernel is missing: run `make kernel` first")
    return KERNEL


@pytest.fixture
def boot():
    """boot(kernel, smp=.., cmdline=..) -> (status, console)."""
    def _boot(kernel, **kw):
        kw.setdefault("timeout", 240)
        kw.setdefault("echo", False)
        return run_lwk.run(kernel, **kw)
    return _boot
