"""Errors of the bundle package: a bad signing key is a usage error, a bundle that cannot be sealed a harness one."""

from __future__ import annotations

from windtunnel.errors import HarnessError, UsageError

__all__ = ["BundleSealError", "SigningKeyError"]


class SigningKeyError(UsageError):
    """A signing or verification key could not be used (.path when it came from a file)."""


class BundleSealError(HarnessError):
    """The bundle directory cannot be sealed: a required file is missing, inconsistent or holds a secret."""
