"""Specs shipped with mcheck: one module per mechanism (``mcheck list`` shows them)."""
