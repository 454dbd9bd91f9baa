"""The specs and invariants mcheck ships, installed under this one name.

The repository keeps them in its top-level ``specs/`` and ``invariants/`` folders (the
design card's layout); this package reaches them through links, so an installed
mcheck adds no top-level ``specs`` or ``invariants`` package that could shadow a
project's own.  Import shipped modules as ``mcheck_shipped.specs.raft``.
"""
