"""The library's entry points: run (safety then liveness), graph, validate, checkpoints."""
