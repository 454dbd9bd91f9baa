"""A pytest plugin: a project's gate manifest as pytest items, one per check.

Off unless asked for, so installing mcheck changes no one's test run::

    pytest --mcheck-gate                 # the checks of ./pyproject.toml
    pytest --mcheck-gate=ci/gate.toml    # another manifest

or ``mcheck_gate = pyproject.toml`` under ``[tool.pytest.ini_options]``.  Each check
passes or fails exactly as in ``mcheck gate`` (same expectations, same comparison),
and a failure shows the reasons and the counterexample's timeline.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from checker.cli.gate import GateCheck, load_manifest, run_check


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--mcheck-gate[=MANIFEST]`` and the ``mcheck_gate`` ini setting."""
    group = parser.getgroup("mcheck")
    group.addoption(
        "--mcheck-gate",
        nargs="?",
        const="pyproject.toml",
        default=None,
        metavar="MANIFEST",
        help="run the checks of an mcheck gate manifest as test items "
        "(default manifest: pyproject.toml)",
    )
    parser.addini("mcheck_gate", "an mcheck gate manifest to run as test items", default="")


def _manifest(config: pytest.Config) -> Path | None:
    chosen = config.getoption("--mcheck-gate") or config.getini("mcheck_gate")
    if not chosen:
        return None
    path = Path(str(chosen))
    return path if path.is_absolute() else Path(config.rootpath, path)


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Add the manifest's checks to the items pytest collected."""
    path = _manifest(config)
    if path is None:
        return
    manifest = GateManifest.from_parent(session, path=path.resolve())
    items.extend(manifest.collect())


class GateManifest(pytest.File):
    """A gate manifest: one item per check, in manifest order."""

    def collect(self) -> Iterator[GateItem]:
        """The manifest's checks (a bad manifest is a collection error)."""
        for check in load_manifest(self.path):
            yield GateItem.from_parent(self, name=check.name, check=check)


class GateItem(pytest.Item):
    """One gate check run as a test."""

    def __init__(self, *, check: GateCheck, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check = check

    def runtest(self) -> None:
        """Run the check; fail with the gate's reasons when it does not match."""
        outcome = run_check(self.check)
        if not outcome.passed:
            raise GateMismatch(self.check.name, outcome.problems, outcome.trace_text)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        """The reasons, then the counterexample's timeline if there is one."""
        if isinstance(excinfo.value, GateMismatch):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the check is declared, for pytest's report lines."""
        return self.path, None, f"mcheck gate: {self.check.name}"


class GateMismatch(Exception):
    """A gate check whose outcome differs from its expectation."""

    def __init__(self, name: str, problems: list[str], trace: str | None) -> None:
        text = f"{name}: " + "; ".join(problems)
        super().__init__(text + (f"\n{trace}" if trace else ""))
