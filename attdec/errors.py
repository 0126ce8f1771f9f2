"""Typed errors that say what went wrong and where; the CLI prints them as one line."""

from __future__ import annotations


class AttdecError(Exception):
    """Base error. `where` names the file (and offset, dispatch...) the problem was found in."""

    def __init__(self, message: str, where: str | None = None):
        super().__init__(message)
        self.message = message
        self.where = where

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class InputError(AttdecError):
    """A path, folder or file that is missing, unreadable or not what it claims to be."""


class FormatError(AttdecError):
    """Input whose bytes or JSON do not follow the expected format (malformed JSON, corrupt blob, bad ELF)."""


class ArchError(AttdecError):
    """An architecture that is unknown, unsupported, or does not match the trace or code object."""


def read_bytes(path) -> bytes:
    """A file's bytes, or an InputError that names the file and says why it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise InputError("no such file", str(path)) from None
    except IsADirectoryError:
        raise InputError("is a folder, expected a file", str(path)) from None
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", str(path)) from None
