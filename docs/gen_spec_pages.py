"""Write docs/specs/<spec>.md for each seed spec: its docstring and a results table.

The table is produced by running the engine on the spec's checks from the project's
gate manifest (pyproject.toml), plus one larger setting per spec, so the figures are
the engine's own.  Run: ``.venv/bin/python docs/gen_spec_pages.py``.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from checker.authoring.loader import load_spec_class  # noqa: E402
from checker.cli.gate import GateCheck, load_manifest, run_all  # noqa: E402

SEEDS = {
    "scm_install_snapshot_leader_change": ("HDDS-16932", "000_2ddfd501659cfb69.txt"),
    "scm_new_leader_dn_server_start": ("HDDS-16454", "001_893d7fd27897c9f9.txt"),
    "ratis_empty_snapshot_index_default": ("RATIS-1369", "002_1234e71d35ae17f6.txt"),
    "om_leader_ready_before_apply": ("HDDS-17579", "003_580ed40e509da47e.txt"),
    "ratis_heartbeat_match_index": ("RATIS-2605", "004_feacc8ba2e294540.txt"),
}

EXTRA = [
    GateCheck(
        "fix_and_scm_guard, 3 elections / 2 purges / 2 failures",
        "scm_install_snapshot_leader_change",
        "fix_and_scm_guard",
        {"MAX_ELECTIONS": 3, "MAX_PURGES": 2, "MAX_DL_FAILURES": 2},
        [],
        "holds",
    ),
    GateCheck(
        "fix_and_scm_guard, one restart of F and one lost message",
        "scm_install_snapshot_leader_change",
        "fix_and_scm_guard",
        {"MAX_RESTARTS": 1, "MAX_DROPS": 1},
        [],
        "holds",
    ),
    GateCheck(
        "fix_scm, the report's timing, 3 elections / 2 purges / 2 failures",
        "scm_install_snapshot_leader_change",
        "fix_scm",
        {"MAX_ELECTIONS": 3, "MAX_PURGES": 2, "MAX_DL_FAILURES": 2, "TIMING": "report"},
        [],
        "holds",
    ),
    GateCheck(
        "fix residual, MAX_INDEX=3 INIT_LOG=2",
        "scm_new_leader_dn_server_start",
        "fix",
        {"MAX_INDEX": 3, "INIT_LOG": 2},
        ["NoLeaderStartBeforeAccessionApplied"],
        "violates NoLeaderStartBeforeAccessionApplied",
    ),
    GateCheck(
        "fix_recapture, MAX_INDEX=3 INIT_LOG=2",
        "scm_new_leader_dn_server_start",
        "fix_recapture",
        {"MAX_INDEX": 3, "INIT_LOG": 2},
        [],
        "holds",
    ),
    GateCheck(
        "fix, LAST=4 SNAP_L=3",
        "ratis_empty_snapshot_index_default",
        "fix",
        {"LAST": 4, "SNAP_L": 3},
        [],
        "holds",
    ),
    GateCheck(
        "fix, MaxMsgs=1",
        "ratis_heartbeat_match_index",
        "fix",
        {"MaxMsgs": 1},
        [],
        "holds",
    ),
]


def _const(v: object) -> str:
    """A constant's default as a user would type it on the command line."""
    if isinstance(v, tuple):
        return str(len(v))
    return str(v)


def _story_lines(spec: str, cls: type) -> list[str]:
    """What ``mcheck run SPEC --variant V`` tells for each variant with a story."""
    lines: list[str] = []
    for variant, story in cls.stories.items():
        sets = ", ".join(f"`{k}={_const(v)}`" for k, v in story.constants.items())
        checks = ", ".join(story.check) or "every property"
        lines += [
            f"**The report's story.** `mcheck run {spec} --variant {variant}` (the "
            f"default variant is `{cls.variants[0]}`) tells {story.about}: it checks "
            f"{checks}" + (f" with {sets}" if sets else "") + ", where the shortest "
            "violation of any property at the class's constants is only the opening or "
            "another order (the rows below). `--invariant all` checks every property; "
            "`--const` overrides a constant the story sets.",
            "",
        ]
    return lines


def main() -> None:
    """Run the checks and write one page per seed spec."""
    checks = [c for c in load_manifest(ROOT / "pyproject.toml") if c.spec in SEEDS] + EXTRA
    outcomes, _ = run_all(checks)
    out_dir = ROOT / "docs" / "specs"
    out_dir.mkdir(parents=True, exist_ok=True)
    for spec, (jira, seed) in SEEDS.items():
        cls = load_spec_class(spec)
        module = inspect.getmodule(cls)
        doc = inspect.cleandoc(module.__doc__ or "") if module else ""
        lines = [
            f"# {spec} ({jira})",
            "",
            f"Report: `shared/seeds/{seed}`; brief: `shared/mechanisms/{spec}.md`; "
            f"spec: `specs/{spec}.py`.",
            "",
            doc,
            "",
            "## Bounds and initial states",
            "",
            "Default constants: "
            + ", ".join(f"`{k}={_const(v)}`" for k, v in cls.constants.items())
            + ".",
            "",
            "Initial states (``init``): " + inspect.cleandoc(cls.init.__doc__ or "(undocumented)"),
            "",
            "What each fix was shown against: the rows below, one per variant and setting;",
            "a row checks every property of the spec unless it names some.",
            "",
            *_story_lines(spec, cls),
            "## Results",
            "",
            "Produced by running mcheck (`docs/gen_spec_pages.py`), BFS, symmetry as",
            "declared; constants are the spec's defaults unless listed.",
            "",
            "| check | variant | constants | properties | result | trace length | "
            "distinct states | seconds |",
            "|---|---|---|---|---|---:|---:|---:|",
        ]
        for o in outcomes:
            c = o.check
            if c.spec != spec:
                continue
            consts = ", ".join(f"{k}={v}" for k, v in c.constants.items()) or "defaults"
            inv = ", ".join(c.invariants) or "all"
            lines.append(
                f"| {c.name} | {c.variant or cls.variants[0]} | {consts} | {inv} | "
                f"{o.got()} | {o.trace_length if o.trace_length is not None else ''} | "
                f"{o.distinct:,} | {o.seconds:.2f} |"
            )
        lines += [
            "",
            "Reproduce a row: `mcheck run "
            f"{spec} --variant VARIANT [--const NAME=VALUE] [--invariant NAME]`; "
            "`mcheck show traces/...itf.json` draws a counterexample, `mcheck replay "
            f"{spec} TRACE --variant fix` shows which step the fix blocks."
            + (
                " A row of a variant with a story checks what the row says: add "
                "`--invariant all` where its properties are all, and the class's value of "
                "a constant the story sets where the row does not list it."
                if cls.stories
                else ""
            ),
            "",
        ]
        (out_dir / f"{spec}.md").write_text("\n".join(lines))
        print(f"wrote docs/specs/{spec}.md")


if __name__ == "__main__":
    main()
