"""mcheck's version (written into trace files and reports)."""

__version__ = "0.1.0"
