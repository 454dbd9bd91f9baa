"""Where an exploration keeps what it has seen: fingerprint sets, the trace table of
parent pointers, the frontier."""
