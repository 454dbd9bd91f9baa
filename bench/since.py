"""How much faster this tree checks a spec than an older commit did, on one machine.

Issue 47 asks for "2x today's speed against TLC".  Ratios to TLC measured on different
days move with the machine: a machine on which Python slows more than Java lowers every
ratio (PaxosCommit: 0.45x TLC on one machine, 0.41x on another, the same code).  Timing
the old commit and this tree in one session, rounds interleaved, each command in a
session of its own, cancels the machine out: the speed-up against TLC is the old run's
seconds over the new one's, TLC's own time being the same for both.  TLC, when given,
runs in the same rounds so both ratios to it are printed too::

    python -m bench.since COMMIT [ROUNDS] [--specs=lamport_mutex,paxos_commit]
        [--no-build]        (TLC_CLASSPATH and TLA_EXAMPLES add a TLC column)

The old commit is checked out with ``git worktree`` into a temporary folder and its C
extension, if it declares one, built in place (``--no-build`` runs its Python core).
Each side runs ``python -m checker run SPEC --json`` from its own tree, after a check
that the interpreter really imports that tree's ``checker``; the counts of the two must
agree, else the row says so.  Rows are the specs both trees have.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench.tlc import EXAMPLES, run_mcheck_spec, run_tlc_model, tree_env

ROOT = Path(__file__).resolve().parent.parent
#: Issue 47's rows against TLC: the off-home-ground models it names.
DEFAULT_SPECS = ("lamport_mutex", "paxos_commit")
#: setup.py's work for a tree whose pyproject.toml declares the extension.
BUILD_IN_PLACE = "from setuptools import setup; setup()"


@contextmanager
def old_tree(commit: str, build: bool) -> Iterator[Path]:
    """A checkout of ``commit`` (a detached git worktree), its extension built in
    place when it declares one and ``build`` holds; removed afterwards."""
    if not (ROOT / ".git").exists():
        raise SystemExit("bench.since: needs a git checkout of mcheck (no .git here)")
    where = Path(tempfile.mkdtemp(prefix="mcheck-since-")) / "tree"
    git = ["git", "-C", str(ROOT)]
    made = subprocess.run(
        [*git, "worktree", "add", "--detach", str(where), commit],
        capture_output=True,
        text=True,
        check=False,
    )
    if made.returncode != 0:
        raise SystemExit(f"bench.since: cannot check out {commit}: {made.stderr.strip()}")
    try:
        pyproject = (where / "pyproject.toml").read_text()
        if build and "ext-modules" in pyproject:
            built = subprocess.run(
                [sys.executable, "-c", BUILD_IN_PLACE, "build_ext", "--inplace"],
                cwd=where,
                capture_output=True,
                text=True,
                check=False,
            )
            if built.returncode != 0:
                tail = built.stderr.strip().splitlines()[-1:] or ["no output"]
                raise SystemExit(f"bench.since: {commit}'s extension failed: {tail[0]}")
        yield where
    finally:
        subprocess.run([*git, "worktree", "remove", "--force", str(where)], check=False)
        shutil.rmtree(where.parent, ignore_errors=True)


def imports_from(tree: Path) -> Path:
    """The ``checker`` package the interpreter imports when run from ``tree``: it must
    be the tree's own, else the two sides would time the same code."""
    out = subprocess.run(
        [sys.executable, "-c", "import checker; print(checker.__file__)"],
        cwd=tree,
        env=tree_env(tree),
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip()).resolve()


def run_tree(tree: Path, spec: str) -> dict[str, float]:
    """One ``mcheck run SPEC --json`` from ``tree``, in a session of its own; a
    deadlock or violation found (exit 11-13) is a result like any other."""
    return run_mcheck_spec([spec], tree=tree, ok=(0, 11, 12, 13))


def has_spec(tree: Path, spec: str) -> bool:
    """Whether ``tree`` ships ``spec`` (a module under its ``specs/``)."""
    return (tree / "specs" / f"{spec}.py").is_file()


@dataclass(frozen=True)
class Speedup:
    """One spec's medians: the old tree's and this tree's seconds, TLC's if it ran,
    and whether the two trees counted the same states."""

    old_s: float
    new_s: float
    counts_agree: bool
    tlc_s: float | None = None

    @property
    def speedup(self) -> float:
        """The old tree's seconds over this tree's: the speed-up, against TLC too."""
        return self.old_s / self.new_s


def summary(runs: dict[str, list[dict[str, float]]]) -> Speedup:
    """Medians of each side's seconds (``runs``: "old", "new" and maybe "TLC")."""
    med = {who: statistics.median(r["seconds"] for r in got) for who, got in runs.items()}
    old, new = runs["old"][0], runs["new"][0]
    agree = all(old[k] == new[k] for k in ("distinct", "generated", "depth"))
    return Speedup(med["old"], med["new"], agree, med.get("TLC"))


def main(argv: list[str]) -> None:
    """Time each spec at ``COMMIT`` and in this tree, ``ROUNDS`` times (default 3),
    interleaved, and print medians and the speed-up."""
    opts = dict(a[2:].split("=", 1) for a in argv if a.startswith("--") and "=" in a)
    words = [a for a in argv if not a.startswith("--")]
    if not words:
        raise SystemExit("usage: python -m bench.since COMMIT [ROUNDS] [--specs=a,b] [--no-build]")
    commit, rounds = words[0], int(words[1]) if len(words) > 1 else 3
    specs = opts["specs"].split(",") if "specs" in opts else list(DEFAULT_SPECS)
    classpath, examples = os.environ.get("TLC_CLASSPATH"), os.environ.get("TLA_EXAMPLES")
    console = Console(width=150)
    with (
        old_tree(commit, build="--no-build" not in argv) as tree,
        tempfile.TemporaryDirectory(prefix="mcheck-since-tlc-") as tmp,
    ):
        for side in (tree, ROOT):
            imported = imports_from(side)
            if not imported.is_relative_to(side.resolve()):
                raise SystemExit(f"bench.since: from {side} Python imports {imported}, not its own")
        rows = [s for s in specs if has_spec(tree, s) and has_spec(ROOT, s)]
        for s in specs:
            if s not in rows:
                console.print(f"{s}: not in both trees, left out", style="yellow")
        tlc = {}
        if classpath and examples:
            for _label, folder, module, cfg, spec in EXAMPLES:
                if spec in rows:
                    here = Path(tmp) / folder
                    shutil.copytree(Path(examples) / "specifications" / folder, here)
                    tlc[spec] = (here, module, cfg)
        runs: dict[str, dict[str, list[dict[str, float]]]] = {s: {} for s in rows}
        for r in range(rounds):
            for spec in rows:
                console.print(f"round {r + 1}/{rounds}: {spec} ...", style="dim")
                runs[spec].setdefault("old", []).append(run_tree(tree, spec))
                runs[spec].setdefault("new", []).append(run_tree(ROOT, spec))
                if spec in tlc:
                    here, module, cfg = tlc[spec]
                    runs[spec].setdefault("TLC", []).append(
                        run_tlc_model(classpath or "", here, module, cfg)
                    )
    table = Table(title=f"{commit} and this tree, medians of {rounds}, one machine")
    for col in ("spec", "distinct", f"{commit} s", "this tree s", "speed-up", "vs TLC"):
        table.add_column(col, justify="left" if col == "spec" else "right")
    for spec in rows:
        got = summary(runs[spec])
        each = {w: ", ".join(f"{r['seconds']:.1f}" for r in runs[spec][w]) for w in runs[spec]}
        vs_tlc = ""
        if got.tlc_s is not None:
            vs_tlc = f"{got.tlc_s / got.old_s:.2f}x -> {got.tlc_s / got.new_s:.2f}x"
            vs_tlc += f" (TLC {got.tlc_s:.1f} s)"
            theirs, ours = runs[spec]["TLC"][0], runs[spec]["new"][0]
            if (theirs["distinct"], theirs["depth"]) != (ours["distinct"], ours["depth"]):
                vs_tlc += " (TLC's COUNTS DIFFER)"
        table.add_row(
            spec,
            f"{runs[spec]['new'][0]['distinct']:,}",
            f"{got.old_s:.1f} ({each['old']})",
            f"{got.new_s:.1f} ({each['new']})",
            f"{got.speedup:.2f}x" + ("" if got.counts_agree else " (COUNTS DIFFER)"),
            vs_tlc,
        )
    console.print(table)


if __name__ == "__main__":
    main(sys.argv[1:])
