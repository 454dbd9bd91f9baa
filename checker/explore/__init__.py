"""The one exploration loop (:mod:`~checker.explore.engine`), the expansion interface
and the plain expansion, run options, results, counterexample traces and snapshots."""
