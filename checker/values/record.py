"""A record read back from a trace file: its tag and fields, never the type it names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Record:
    """A record read from a trace file: its type's name (the ITF tag) and its fields.

    Reading a trace never imports or calls anything the file names (a trace is data
    from elsewhere: a CI artifact, an attachment), so records come back as this plain
    value, drawn as ``Tag(field=value, ...)``.  Fields read as attributes, so timelines
    recognise messages in them as they do in the spec's own record types.
    """

    tag: str
    fields: Any  #: field name -> value (an immutables.Map)
    #: the fields in the file's order (a Map iterates in hash order); not compared
    _order: tuple[str, ...] = field(default=(), compare=False, hash=False)

    def __getattr__(self, name: str) -> Any:
        # Only called for names that are not real attributes: the record's fields.
        fields = object.__getattribute__(self, "fields")
        try:
            return fields[name]
        except KeyError:
            raise AttributeError(name) from None
