"""Errors raised by contend. ``InputError`` means the user can fix it (CLI exit code 2)."""

from contend._core import ContendError, InputError, UnsupportedError

__all__ = ["ContendError", "InputError", "UnsupportedError"]
