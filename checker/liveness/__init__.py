"""Temporal properties: the state graph a run records, fair cycles and lassos, and the
symmetry-reduced (quotient) graph unfolded for them."""
