"""Why a tape could not be recorded or replayed: one TapeError subclass per cause.

    TapeError (windtunnel.errors)      .tape: the tape's path or name
    ├── TapeMissing         no tape file where one was expected
    ├── TapeCorrupt         a line is not valid JSON or not a valid record (.line)
    ├── TapeSecretFound     a credential-looking string or a key in use appears in the tape (.line .kind)
    ├── TapeMismatch        a request matches no recorded fingerprint (.nearest .rerecord_command)
    ├── TapeExhausted       a fingerprint was requested more often than recorded (.recorded .requested)
    ├── TapeStale           the oldest interaction is older than the limit (.age_days .max_age_days)
    ├── TapeUnused          strict replay ended with recorded interactions never requested (.unused)
    ├── TapeNotRecorded     a record run ended with no interaction to write
    └── TapePromotionRefused promote was asked for a failing run, a score of another run, or a broken tape

`code` is the short error code the gateway puts in its refusal (`tape_mismatch`, ...).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from windtunnel.errors import TapeError

if TYPE_CHECKING:
    from windtunnel._tapes.diff import Nearest


class _CodedTapeError(TapeError):
    code: ClassVar[str] = "tape_error"
    tape: str

    def __init__(self, message: str, *, tape: str, hint: str | None = None, **context: Any) -> None:
        super().__init__(message, hint=hint, tape=tape, **context)


class TapeMissing(_CodedTapeError):
    """No tape file exists where replay or verification expected one."""

    code = "tape_missing"


class TapeCorrupt(_CodedTapeError):
    """A line of the tape is not valid JSON or not a valid header/interaction; `.line` is 1-based."""

    code = "tape_corrupt"
    line: int | None


class TapeSecretFound(_CodedTapeError):
    """A secret (a known key pattern, or a key value in use) appears in the tape; `.line`, `.kind`."""

    code = "tape_secret_found"
    line: int
    kind: str


class TapeMismatch(_CodedTapeError):
    """A request matches no recorded fingerprint; `.nearest` holds the closest recorded requests and diffs."""

    code = "tape_mismatch"
    fingerprint: str
    nearest: list[Nearest]
    rerecord_command: str


class TapeExhausted(_CodedTapeError):
    """A fingerprint was requested more often than it was recorded (`.recorded`, `.requested`)."""

    code = "tape_exhausted"
    fingerprint: str
    recorded: int
    requested: int


class TapeStale(_CodedTapeError):
    """The tape's oldest interaction is older than the staleness limit."""

    code = "tape_stale"
    age_days: float
    max_age_days: int


class TapeUnused(_CodedTapeError):
    """Strict replay ended while recorded interactions were never requested (`.unused` lists seq numbers)."""

    code = "tape_unused"
    unused: list[int]


class TapeNotRecorded(_CodedTapeError):
    """A record run ended without a single interaction: there is nothing to write, and that is a failure."""

    code = "tape_not_recorded"


class TapePromotionRefused(_CodedTapeError):
    """Promotion was refused: the run did not pass, the scores are not of the run that recorded the tape, or
    the tape fails its checks or is stale."""

    code = "tape_promotion_refused"


TAPE_ERRORS: tuple[type[_CodedTapeError], ...] = (
    TapeMissing,
    TapeCorrupt,
    TapeSecretFound,
    TapeMismatch,
    TapeExhausted,
    TapeStale,
    TapeUnused,
    TapeNotRecorded,
    TapePromotionRefused,
)


def error_code(error: TapeError) -> str:
    """The gateway's error code for a tape error."""
    return error.code if isinstance(error, _CodedTapeError) else "tape_error"
