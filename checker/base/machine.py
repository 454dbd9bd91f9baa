"""How many worker processes this machine can run: the bound every ``--workers``,
``--cluster local:N`` and ``gate --jobs`` is checked against before a process starts.

Asking for a thousand workers on two cores started them one by one until the open
files ran out (an internal error, exit 255) or the run crawled past any timeout; a
count beyond the bound is refused with one line, exit 2, instead.
"""

from __future__ import annotations

import os
import resource

from checker.base.errors import ConfigError

#: Worker processes per core at most: more only queue for the same cores.
PER_CORE = 4
#: Open files a worker process costs its parent (pipes, a queue, a sentinel), at most.
FILES_PER_WORKER = 8
#: Open files kept for everything else (the spec, traces, the terminal).
FILES_KEPT = 64


def process_limit() -> int:
    """The most worker processes mcheck starts here: ``PER_CORE`` per core, and no
    more than the open-file limit (``ulimit -n``) leaves room for."""
    cores = os.cpu_count() or 1
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    by_files = PER_CORE * cores
    if soft != resource.RLIM_INFINITY:
        by_files = max(1, (soft - FILES_KEPT) // FILES_PER_WORKER)
    return max(1, min(PER_CORE * cores, by_files))


def check_process_count(flag: str, count: int) -> None:
    """Refuse ``count`` worker processes for option ``flag`` if this machine cannot
    run them (see :func:`process_limit`)."""
    limit = process_limit()
    if count > limit:
        shown = f"{count:,}" if count < 10**12 else f"a {len(str(count))}-digit number"
        raise ConfigError(
            f"{flag} {shown}: this machine runs at most {limit} worker processes "
            f"({os.cpu_count() or 1} cores, {PER_CORE} per core, within the open-file limit)"
        )


def memory_available() -> int | None:
    """Bytes this process may still use: the smaller of the system's available memory
    (``MemAvailable``) and the address-space limit (``ulimit -v``); None if unknown."""
    bounds: list[int] = []
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        bounds.append(soft)
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    bounds.append(int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError, IndexError):
        pass
    return min(bounds) if bounds else None
