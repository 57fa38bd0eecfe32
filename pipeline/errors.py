"""The one base class of every tokenmill error.

Every exception the project raises on purpose (a bad recipe, unreadable input, a refused plan, a broken index)
derives from ``TokenmillError``, so the command line catches it once (``flows.cli``) and prints it one way:
``error: <message>``, exit status 2. Each class also keeps the builtin base it had (``ValueError`` for bad
input, ``RuntimeError`` for a broken state), so an ``except ValueError`` written before this base existed
still catches it. The message is the contract: it names the file, key or source and what to do.
"""

from __future__ import annotations


class TokenmillError(Exception):
    """An error tokenmill raises on purpose, with a message meant for the person running it."""


__all__ = ["TokenmillError"]
