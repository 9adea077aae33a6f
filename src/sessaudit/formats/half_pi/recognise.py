"""What makes a file a Half-Pi store (CONTRACT §1), read as bytes: SQLite is never opened here (it could
write), and what a store owns (its -wal, -shm, -journal and run/mind.lock)."""

from __future__ import annotations

import errno
import os
import re
from typing import Final

from sessaudit.evidence import NotRegularFile, read_prefix

SQLITE_MAGIC: Final = b"SQLite format 3\x00"
SQLITE_SNIFF_BYTES: Final = 1024 * 1024  # the schema text on the first pages
WAL_SNIFF_BYTES: Final = 4 * 1024 * 1024
COMPANIONS: Final = ("-wal", "-shm", "-journal")
HEAD_BYTES: Final = 64 * 1024
_CREATE_TABLE = r"create\s+table\s+(?:if\s+not\s+exists\s+)?[\"'`\[]?{name}[\"'`\]]?\s*\("


def is_store(head: bytes, real_path: str) -> bool:
    """An SQLite file whose schema text names `sessions` and `messages`, in the database's first pages or,
    for a store whose schema was never checkpointed, in its `-wal`; OSError when the -wal cannot be read
    and the database's own pages do not decide (whether this is a session log is unknown, not "no")."""
    if not head.startswith(SQLITE_MAGIC):
        return False
    text = read_prefix(real_path, SQLITE_SNIFF_BYTES).decode("latin-1").lower()
    try:
        text += read_prefix(real_path + "-wal", WAL_SNIFF_BYTES).decode("latin-1").lower()
    except (FileNotFoundError, NotRegularFile):  # no -wal (or not a file): the database alone decides
        pass
    except OSError as error:
        if error.errno != errno.ELOOP and not _has_schema(text):
            raise OSError(error.errno, f"its -wal could not be read: {error.strerror}") from None
    return _has_schema(text)


def _has_schema(text: str) -> bool:
    return all(re.search(_CREATE_TABLE.format(name=name), text) for name in ("sessions", "messages"))


def store_of_companion(real_path: str) -> str | None:
    """The store a companion file belongs to, or None; OSError when the store beside it exists but cannot
    be read (so the companion is not called "not a session log" for a permission problem)."""
    for suffix in COMPANIONS:
        if real_path.endswith(suffix):
            store = real_path[: -len(suffix)]
            if not os.path.isfile(store):
                return None
            try:
                return store if is_store(read_prefix(store, HEAD_BYTES), store) else None
            except NotRegularFile:
                return None
            except OSError as error:
                shown = os.path.basename(store)
                raise OSError(error.errno, f"its store {shown} could not be read: {error.strerror}") from None
    return None


def owned_by_store(real_path: str) -> list[str]:
    """CONTRACT §1: a store owns its -wal, -shm (and -journal) and, in a Half-Pi home, run/mind.lock."""
    owned = [real_path + suffix for suffix in COMPANIONS]
    folder = os.path.dirname(real_path)
    if os.path.basename(folder) == "db":
        owned.append(os.path.join(os.path.dirname(folder), "run", "mind.lock"))
    return owned
