"""``make soundness``: generated specs through every engine and the reference, for a time.

    python -m tests.soundness [--budget SECONDS] [--start SEED] [--count N] [--jobs J]

Seeds ``start, start+1, ...`` (at most ``count``) are shared among ``jobs`` processes
(with two or more, every other one runs the Python value core, ``MCHECK_PURE=1``, the
rest the C one: both are checked against the reference), each running
:func:`tests.soundness.check.check_generated` on one generated spec after another
until the budget is spent.  Prints how many specs ran, how long it took and every
disagreement (its seed; the spec's source is saved under build/soundness/), and
exits 1 if there was one.  ``--seed N`` checks one seed and prints its source.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tests.soundness.check import check_generated
from tests.soundness.generator import RandomDraw, generate

PILOTS = (2, 40, 3000)
OUT = Path("build/soundness")


def _worker(seeds: range, deadline: float) -> None:
    """Check the seeds in turn until the deadline; one JSON line per seed."""
    folder = Path(tempfile.mkdtemp(prefix="mcheck-soundness-"))
    for seed in seeds:
        if time.time() >= deadline:
            break
        gen = generate(RandomDraw(seed))
        started = time.perf_counter()
        try:
            problems = check_generated(gen, folder, f"gen_{seed}", PILOTS[seed % len(PILOTS)])
        except Exception as exc:  # the harness itself failed: a disagreement too
            problems = [f"harness: {type(exc).__name__}: {exc}"]
        took = time.perf_counter() - started
        print(json.dumps({"seed": seed, "problems": problems, "seconds": took}), flush=True)


def _core_env(job: int, jobs: int) -> dict[str, str]:
    """Job ``job``'s environment: the Python value core for every other job (when
    there are several), so the reference checks both cores; else as given."""
    env = dict(os.environ)
    if jobs > 1:
        env["MCHECK_PURE"] = "1" if job % 2 else "0"
    return env


def main() -> int:
    """Run the check (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tests.soundness")
    parser.add_argument("--budget", type=float, default=600.0, help="seconds (default 600)")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--count", type=int, default=10**9)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, help="check one seed and print its source")
    parser.add_argument("--worker", nargs=3, type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        first, stride, deadline = args.worker
        _worker(range(int(first), args.start + args.count, int(stride)), deadline)
        return 0
    if args.seed is not None:
        gen = generate(RandomDraw(args.seed))
        print(gen.source)
        problems = check_generated(
            gen, Path(tempfile.mkdtemp()), f"gen_{args.seed}", PILOTS[args.seed % len(PILOTS)]
        )
        print("\n".join(problems) or "every engine agrees with the reference")
        return 1 if problems else 0
    started = time.time()
    deadline = started + args.budget
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.soundness",
                "--start",
                str(args.start),
                "--count",
                str(args.count),
                "--worker",
                str(args.start + j),
                str(args.jobs),
                str(deadline),
            ],
            stdout=subprocess.PIPE,
            text=True,
            env=_core_env(j, args.jobs),
        )
        for j in range(args.jobs)
    ]
    lines: queue.Queue[str | None] = queue.Queue()

    def pump(proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        proc.wait()
        lines.put(None)

    for proc in procs:
        threading.Thread(target=pump, args=(proc,), daemon=True).start()
    ran = 0
    bad: list[tuple[int, list[str]]] = []
    last = time.time()
    running = len(procs)
    while running:
        line = lines.get()
        if line is None:
            running -= 1
            continue
        row = json.loads(line)
        ran += 1
        if row["problems"]:
            bad.append((row["seed"], row["problems"]))
            OUT.mkdir(parents=True, exist_ok=True)
            source = generate(RandomDraw(row["seed"])).source
            (OUT / f"seed_{row['seed']}.py").write_text(source)
            print(f"seed {row['seed']}: {row['problems'][0]}", flush=True)
        if time.time() - last > 60:
            last = time.time()
            print(
                f"soundness: {ran} specs, {len(bad)} disagreements, {time.time() - started:.0f} s",
                flush=True,
            )
    took = time.time() - started
    print(
        f"soundness: {ran} generated specs in {took:.0f} s ({args.jobs} processes"
        f"{', half with the Python value core' if args.jobs > 1 else ''}), "
        f"{len(bad)} disagreements"
    )
    for seed, problems in bad:
        print(f"  seed {seed} ({OUT / f'seed_{seed}.py'}): {problems[0]}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
