"""Shared test settings: deterministic hypothesis runs in CI."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=150)
settings.register_profile("dev", deadline=None, max_examples=100)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(autouse=True, scope="session")
def _own_checkpoint_key(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Checkpoints written by the suite are signed with a key of its own (under a
    private XDG_CONFIG_HOME, inherited by the commands it runs), never the user's."""
    saved = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("config"))
    os.environ.pop("MCHECK_CHECKPOINT_KEY", None)
    yield
    if saved is None:
        os.environ.pop("XDG_CONFIG_HOME", None)
    else:
        os.environ["XDG_CONFIG_HOME"] = saved


@pytest.fixture
def fast_engine_from_the_first_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast engine alone, from a run's first state.  The default engine starts on
    the plain expansion and makes the fast engine from the run's first 3,000 stored
    states (checker.fastpath.adaptive.Later); tests of the fast engine on smaller
    specs ask for it by name (the handoffs between the two are tested by the
    "alternate" policy and by make soundness)."""
    monkeypatch.setenv("MCHECK_ENGINE_SWITCH", "fast")
