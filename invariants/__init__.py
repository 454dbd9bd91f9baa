"""Named invariants reusable across specs (imported by the specs that check them)."""
