"""Checkpoints are untrusted data: resuming one never runs code it names.

A checkpoint not signed with the user's key is refused unless the user says it is
trusted (tests/test_from_elsewhere.py); these tests resume crafted files as
trusted, and check that even then nothing runs and every tampered field is refused.

A checkpoint folder may come from elsewhere (a colleague's run, a CI artifact).  Before
this was fixed, its frontier was a pickle read by an unpickler that allowed every
callable of pyrsistent (``pyrsistent.immutable`` builds a class by ``exec`` of member
names it is given; ``_checked_types._get_class`` imports any module), and its header's
``origin.spec`` made ``resume`` import any ``.py`` file.  Each exploit here must run
nothing and end in one line on stderr, exit 2; so must every tampered field.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import pickletools
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import checker.check.checkpoint as ckpt
import checker.explore.engine as engine
from checker import CompiledSpec, Options
from checker import run as check
from checker.authoring.loader import load_spec_class
from checker.cli.commands import main

ROOT = Path(__file__).resolve().parents[2]


def _model() -> Any:
    return CompiledSpec(load_spec_class("raft")(Server="2"), symmetry=False)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A genuine checkpoint of raft (2 servers) stopped at 500 states."""
    ck = tmp_path / "ck"
    monkeypatch.setattr(engine, "CHUNK", 64)
    opts = Options(symmetry=False, checkpoint=str(ck), checkpoint_every=1e-9, max_states=500)
    check(_model(), replace_origin(opts))
    return ck


def replace_origin(opts: Options) -> Options:
    # What `mcheck run raft --const Server=2 --no-symmetry` records.
    from checker.explore.options import recorded

    opts.origin = {
        "spec": "raft",
        "variant": "default",
        "consts": ["Server=2"],
        "properties": [],
        "options": recorded(opts),
    }
    return opts


def _parts(folder: Path) -> tuple[dict[str, Any], list[bytes]]:
    data = (folder / ckpt.FILE).read_bytes()
    at = len(ckpt.MAGIC)
    n = int.from_bytes(data[at : at + 8], "little")
    header = json.loads(data[at + 8 : at + 8 + n])
    at += 8 + n
    parts = []
    for length in header["lengths"]:
        parts.append(data[at : at + length])
        at += length
    return header, parts


def _rewrite(
    folder: Path,
    header_edit: Callable[[dict[str, Any]], None] | None = None,
    parts: list[bytes] | None = None,
    frontier: Callable[[dict[str, Any]], Any] | None = None,
) -> None:
    """Tamper with a checkpoint as an attacker would: edit the header, replace parts
    or edit the frontier document, then recompute lengths and the checksum (which is
    a checksum, not a signature)."""
    header, old = _parts(folder)
    parts = parts or old
    if frontier is not None:
        doc = json.loads(parts[3])
        parts[3] = json.dumps(frontier(doc)).encode()
    header["lengths"] = [len(p) for p in parts]
    header["sha256"] = hashlib.sha256(b"".join(parts)).hexdigest()
    if header_edit is not None:
        header_edit(header)
    head = json.dumps(header).encode()
    body = ckpt.MAGIC + len(head).to_bytes(8, "little") + head + b"".join(parts)
    (folder / ckpt.FILE).write_bytes(body)


def _resume(folder: Path, *args: str) -> Any:
    """Resume as a user who trusts the file: a forged checkpoint is refused as unsigned
    before anything else (tests/test_from_elsewhere.py), so these tests, of what
    a file cannot do even when trusted, resume with --trust-checkpoint."""
    return CliRunner().invoke(
        main, ["resume", str(folder), "--trust-checkpoint", *args], catch_exceptions=False
    )


def _refused(result: Any, *words: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("mcheck: error: ") and "internal error" not in lines[0]
    for w in words:
        assert w in lines[0], lines[0]


# -- code in the frontier ---------------------------------------------------------------


class _Call:
    """Pickles as a call of ``fn(*args)``: what a crafted frontier would hold."""

    def __init__(self, fn: Any, *args: Any) -> None:
        self.fn, self.args = fn, args

    def __reduce__(self) -> Any:
        return (self.fn, self.args)


def _payloads(marker: Path) -> dict[str, bytes]:
    import builtins
    import os

    import pyrsistent
    from pyrsistent import _checked_types

    evil_member = f"a', __import__('os').system('touch {marker}'), 'b"
    return {
        "pyrsistent.immutable": pickle.dumps([_Call(pyrsistent.immutable, [evil_member], "P")]),
        "_get_class": pickle.dumps([_Call(_checked_types._get_class, "os.system")]),
        "os.system": pickle.dumps([_Call(os.system, f"touch {marker}")]),
        "builtins.eval": pickle.dumps(
            [_Call(builtins.eval, f"__import__('os').system('touch {marker}')")]
        ),
    }


@pytest.mark.parametrize(
    "payload", ["pyrsistent.immutable", "_get_class", "os.system", "builtins.eval"]
)
@pytest.mark.parametrize("fmt", [1, 2])
def test_a_pickled_frontier_runs_nothing(
    folder: Path, tmp_path: Path, payload: str, fmt: int
) -> None:
    """As the old format (1) and the new (2): the pickle is never unpickled."""
    marker = tmp_path / "pwned"
    data = _payloads(marker)[payload]
    assert any(op.name == "REDUCE" for op, _, _ in pickletools.genops(data))
    _, parts = _parts(folder)

    def edit(h: dict[str, Any]) -> None:
        h["format"] = fmt

    _rewrite(folder, edit, parts=[*parts[:3], data])
    result = _resume(folder)
    _refused(result, "older mcheck" if fmt == 1 else "its frontier is not JSON")
    assert not marker.exists()


def test_a_spec_file_outside_the_folder_is_not_imported(folder: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.py"
    evil.write_text(f"import pathlib\npathlib.Path({str(marker)!r}).touch()\n")
    _rewrite(folder, lambda h: h["origin"].update(spec=str(evil)))
    result = _resume(folder)
    _refused(result, "resume imports a spec file only when you name it", "--spec FILE")
    assert not marker.exists()


@pytest.mark.parametrize("target", ["antigravity.x", "this", "../evil", "os.path", "a b"])
def test_a_module_or_odd_name_is_not_imported(folder: Path, target: str) -> None:
    """A dotted module would import any installed module; a plain name resolves as
    ``mcheck run NAME`` does (a spec folder), never to ``import this``."""
    _rewrite(folder, lambda h: h["origin"].update(spec=target))
    result = _resume(folder)
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "The Zen of Python" not in result.output


def test_a_spec_file_in_the_folder_or_named_is_imported_and_announced(
    folder: Path, tmp_path: Path
) -> None:
    """The checkpoint's own folder may hold its spec; any other file must be named."""
    spec = folder / "my_raft.py"
    spec.write_text((ROOT / "specs" / "raft.py").read_text())
    work = tmp_path / "run2"
    result = CliRunner().invoke(
        main,
        ["run", str(spec), "--const", "Server=2", "--no-symmetry", "--max-states", "300",
         "--checkpoint", str(work), "--checkpoint-every", "0.000001"],
    )  # fmt: skip
    assert result.exit_code == 3, result.output
    moved = tmp_path / "elsewhere.py"
    # In the folder: resumed without being told.
    _rewrite(work, lambda h: h["origin"].update(spec=str(work / "my_raft.py")))
    (work / "my_raft.py").write_text(spec.read_text())
    done = _resume(work, "--json")
    assert done.exit_code == 0, done.output
    assert f"resuming {work} with the spec in {work / 'my_raft.py'}" in done.stdout
    assert json.loads(done.stdout.strip().splitlines()[-1])["distinct_states"] == 1760
    # Elsewhere: only by name.
    moved.write_text(spec.read_text())
    _rewrite(folder, lambda h: h["origin"].update(spec=str(moved)))
    _refused(_resume(folder), "only when you name it")


# -- values that name code ----------------------------------------------------------


def _first_record_type(doc: dict[str, Any]) -> int:
    return next(i for i, n in enumerate(doc["nodes"]) if n[0] == "R")


@pytest.mark.parametrize(
    "name", ["os:system", "builtins:eval", "subprocess:Popen", "pyrsistent:immutable"]
)
def test_a_type_outside_the_spec_is_refused(folder: Path, name: str) -> None:
    def edit(doc: dict[str, Any]) -> dict[str, Any]:
        doc["types"][0][0] = name
        return doc

    _rewrite(folder, frontier=edit)
    _refused(_resume(folder), "not a record type of this spec")


def test_the_spec_s_own_classes_with_odd_arguments_are_refused(folder: Path) -> None:
    cases: list[Callable[[dict[str, Any]], Any]] = []

    def extra_field(doc: dict[str, Any]) -> Any:
        i = _first_record_type(doc)
        doc["nodes"][i].append(0)
        return doc

    def other_fields(doc: dict[str, Any]) -> Any:
        doc["types"][0][2] = ["command"]
        return doc

    def spec_class(doc: dict[str, Any]) -> Any:
        # The Spec class itself is in the spec module, but it is not a record type.
        doc["types"][0][0] = "mcheck_shipped.specs.raft:Raft"
        return doc

    def forward_reference(doc: dict[str, Any]) -> Any:
        doc["nodes"][0] = ["T", len(doc["nodes"]) - 1]
        return doc

    def bool_as_ref(doc: dict[str, Any]) -> Any:
        doc["nodes"].append(["T", True])
        return doc

    def unknown_kind(doc: dict[str, Any]) -> Any:
        doc["nodes"].append(["X", 0])
        return doc

    cases = [extra_field, other_fields, spec_class, forward_reference, bool_as_ref, unknown_kind]
    _, parts = _parts(folder)
    for case in cases:
        _rewrite(folder, parts=list(parts), frontier=case)
        result = _resume(folder)
        _refused(result, "its frontier does not read back")


# -- tampered header fields and arrays --------------------------------------------------


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(h: dict[str, Any]) -> None:
        *outer, last = path.split(".")
        node = h
        for k in outer:
            node = node[k]
        node[last] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (_set("stats.bogus", 1), "'stats' has other fields"),
        (_set("stats", [1, 2, 3]), "'stats' is not an object"),
        (_set("identity", ["spec"]), "'identity' is not an object"),
        (_set("origin", ["raft"]), "'origin' is not an object"),
        (_set("itemsizes", [8, 8, 8]), "other word sizes"),
        (_set("stats.distinct", -5), "'stats.distinct' is not a count"),
        (_set("stats.seconds", "soon"), "'stats.seconds' is not a number"),
        (_set("stats.action_generated", [1]), "not one count per action"),
        (_set("truncated", "no"), "'truncated' is not a boolean"),
        (_set("origin.options.strategy", "random"), "'options.strategy' is not bfs or dfs"),
        (_set("origin.options", ["bfs"]), "'options' is not an object"),
        (_set("origin.options.max_depth", 0), "'options.max_depth' is not a positive"),
        (_set("origin.consts", "Server=2"), "'origin.consts' is not a list"),
        (_set("format", 7), "unknown checkpoint format"),
    ],
)
def test_a_tampered_header_is_one_line(
    folder: Path, edit: Callable[[dict[str, Any]], None], words: str
) -> None:
    _rewrite(folder, edit)
    _refused(_resume(folder), words)


def test_tampered_arrays_and_counts_are_one_line(folder: Path) -> None:
    genuine = (folder / ckpt.FILE).read_bytes()
    header, parts = _parts(folder)
    n = header["stats"]["distinct"]
    fps, parent, choice, frontier = parts

    def parents(mutate: Callable[[list[int]], None]) -> bytes:
        from array import array

        a = array("q")
        a.frombytes(parent)
        values = a.tolist()
        mutate(values)
        return array("q", values).tobytes()

    cases: list[tuple[list[bytes], Callable[[dict[str, Any]], None] | None, str]] = [
        # A fingerprint array one byte long.
        ([b"\x01", parent, choice, frontier], None, "is not whole"),
        # One fingerprint short of the states.
        ([fps[:-8], parent, choice, frontier], None, "fingerprints and"),
        # A parent that is a later state.
        ([fps, parents(lambda v: v.__setitem__(5, n - 1)), choice, frontier], None,
         "parent is not an earlier state"),
        # Initial states not first.
        ([fps, parents(lambda v: v.__setitem__(n - 1, -1)), choice, frontier], None,
         "initial states are not recorded first"),
        # A fingerprint twice.
        ([fps[:8] + fps[:8] + fps[16:], parent, choice, frontier], None, "recorded twice"),
        # Counts that contradict the table.
        (parts, _set("stats.generated", 1), "counts contradict"),
        (parts, _set("stats.queue", 3), "queued states, but its statistics say"),
    ]  # fmt: skip
    for new_parts, edit, words in cases:
        _rewrite(folder, edit, parts=list(new_parts))
        _refused(_resume(folder), words)
        (folder / ckpt.FILE).write_bytes(genuine)


def test_an_empty_frontier_is_refused_not_a_pass(folder: Path) -> None:
    def empty(doc: dict[str, Any]) -> Any:
        doc["states"], doc["ordinals"], doc["depths"] = [], [], []
        return doc

    _rewrite(folder, _set("stats.queue", 0), frontier=empty)
    _refused(_resume(folder), "its frontier is empty")


def test_a_queued_state_at_the_wrong_depth_or_ordinal_is_refused(folder: Path) -> None:
    _, parts = _parts(folder)

    def deeper(doc: dict[str, Any]) -> Any:
        doc["depths"][0] += 1
        return doc

    _rewrite(folder, frontier=deeper)
    _refused(_resume(folder), "depth is not its parents' count")

    def swapped(doc: dict[str, Any]) -> Any:
        o = doc["ordinals"]
        o[0], o[1] = o[1], o[0]
        d = doc["depths"]
        d[0], d[1] = d[1], d[0]
        return doc

    _rewrite(folder, parts=list(parts), frontier=swapped)
    _refused(_resume(folder))


def test_an_initial_choice_beyond_the_spec_s_initial_states_is_refused(folder: Path) -> None:
    from array import array

    _, parts = _parts(folder)
    choice = array("I")
    choice.frombytes(parts[2])
    choice[0] = 7
    _rewrite(folder, parts=[parts[0], parts[1], choice.tobytes(), parts[3]])
    _refused(_resume(folder), "initial state beyond")


def test_a_checkpoint_that_is_a_fifo_or_a_loop_is_refused(folder: Path, tmp_path: Path) -> None:
    import os

    path = folder / ckpt.FILE
    path.unlink()
    os.mkfifo(path)
    _refused(_resume(folder), "not a regular file")
    path.unlink()
    path.symlink_to(path)
    _refused(_resume(folder), "cannot be read")


def test_the_genuine_checkpoint_still_resumes(folder: Path) -> None:
    done = _resume(folder, "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout.strip().splitlines()[-1])["distinct_states"] == 1760


# -- values that cost more than their bytes --------------------------------------------


def _queued_value(folder: Path, nodes: Callable[[int], list[list[Any]]]) -> None:
    """Replace the first queued state by a value made of ``nodes(n)`` appended after
    the file's ``n`` nodes, a frozenset of the last one on top (building it hashes it)."""

    def edit(doc: dict[str, Any]) -> Any:
        extra = nodes(len(doc["nodes"]))
        doc["nodes"].extend(extra)
        doc["nodes"].append(["F", len(doc["nodes"]) - 1])
        doc["states"][0] = len(doc["nodes"]) - 1
        return doc

    _rewrite(folder, frontier=edit)


def test_a_value_nested_a_million_deep_is_refused_not_a_crash(folder: Path) -> None:
    # Hashing a tuple nested 10**6 deep overflowed the C stack: exit -11, no message.
    def deep(n: int) -> list[list[Any]]:
        return [["I", 0]] + [["T", n + i] for i in range(1_000_000)]

    _queued_value(folder, deep)
    _refused(_resume(folder), "nested deeper than 500 levels")


def test_a_billion_laughs_value_is_refused_at_once(folder: Path) -> None:
    # 2.4 KB of nodes that each use the previous one twice: 2**100 parts to hash,
    # in C, deaf to the watchdog and to SIGTERM.
    def laughs(n: int) -> list[list[Any]]:
        return [["I", 0]] + [["T", n + i, n + i] for i in range(100)]

    _queued_value(folder, laughs)
    t0 = time.monotonic()
    _refused(_resume(folder, "--timeout", "30"), "parts once its shared parts are counted")
    assert time.monotonic() - t0 < 20


def test_a_value_at_the_bounds_still_reads_back() -> None:
    from checker.values.codec import MAX_DEPTH, Reader, Writer

    # As deep as the writer goes (it is recursive, like the engine's fingerprinting),
    # and as wide as a large state.
    chain: Any = 0
    for _ in range(MAX_DEPTH - 100):
        chain = (chain,)
    wide = tuple(range(100_000))
    w = Writer()
    refs = [w.add(chain), w.add(wide)]
    r = Reader(w.document(), {})
    assert r.value(refs[0]) == chain and r.value(refs[1]) == wide


def test_timeout_covers_reading_the_checkpoint(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Reading was before the watchdog started: a file slow to read ran past --timeout.
    real = ckpt.read

    def slow(*args: Any, **kwargs: Any) -> Any:
        while True:
            time.sleep(0.05)
        return real(*args, **kwargs)  # pragma: no cover

    monkeypatch.setattr(ckpt, "read", slow)
    t0 = time.monotonic()
    result = _resume(folder, "--timeout", "1")
    assert result.exit_code == 3, result.output
    assert "while reading the checkpoint" in result.output
    assert "is unchanged" in result.output
    assert time.monotonic() - t0 < 30
