"""Whose checkpoint is this: a key to sign checkpoints with, and their signatures.

A checkpoint's SHA-256 catches damage, but anyone can recompute it: a file from
elsewhere could carry extra roots, cut edges or another variant in its header and
resume to a pass no run earned.  So a checkpoint's header (which holds that checksum,
the spec's sources, variant, constants and options, and the statistics) is signed with
HMAC-SHA256 under a key of the user's, and ``mcheck resume`` refuses a checkpoint
whose signature it cannot verify, unless told to trust it (and then says the result
rests on it).

The key is ``MCHECK_CHECKPOINT_KEY`` when set (a CI secret, or a key a team shares so
that its members resume each other's checkpoints), else the file
``$XDG_CONFIG_HOME/mcheck/checkpoint.key`` (``~/.config/...``), made on first use with
32 random bytes, readable by its owner only.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from checker.base.errors import ConfigError

#: The environment variable that supplies the key instead of the file.
ENV = "MCHECK_CHECKPOINT_KEY"


def key_file() -> Path:
    """Where the user's key is kept."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "mcheck" / "checkpoint.key"


def signing_key() -> bytes:
    """The key checkpoints are signed and checked with (see the module docstring)."""
    given = os.environ.get(ENV)
    if given:
        return hashlib.sha256(given.encode()).digest()
    path = key_file()
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    text = secrets.token_hex(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:  # made meanwhile by another mcheck: use that one
        return _read_key(path)
    except OSError as exc:
        raise ConfigError(f"cannot make the checkpoint key {path}: {exc.strerror}") from None
    with os.fdopen(fd, "w") as f:
        f.write(text + "\n")
    return bytes.fromhex(text)


def _read_key(path: Path) -> bytes:
    """The key in ``path``: a file of the user's own, not a link, that no one else can
    write (else anyone could sign checkpoints as the user)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ConfigError(
            f"cannot read the checkpoint key {path}: {exc.strerror} (it must be a plain "
            f"file of yours; or set {ENV})"
        ) from None
    with os.fdopen(fd) as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            raise ConfigError(f"the checkpoint key {path} is not a plain file of yours")
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise ConfigError(f"the checkpoint key {path} is writable by others: chmod 600 it")
        text = f.read(200).strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) < 16:
        raise ConfigError(f"the checkpoint key {path} is not a key (delete it to make one)")
    return key


def sign(message: bytes, key: bytes | None = None) -> str:
    """The signature of ``message`` (hex)."""
    return hmac.new(key if key is not None else signing_key(), message, "sha256").hexdigest()


def verify(message: bytes, signature: object) -> bool:
    """Whether ``signature`` is this user's signature of ``message``."""
    if not isinstance(signature, str) or len(signature) != 64:
        return False
    return hmac.compare_digest(sign(message), signature)
