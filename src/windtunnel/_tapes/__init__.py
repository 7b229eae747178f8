"""Tapes: fingerprinted record/replay fixtures for model traffic, served as the gateway's record and replay modes.

Modules: model (the format), fingerprint, secrets, store (load/write), replay and record (GatewayModes),
checks, fidelity (replay_check), lifecycle (find/verify/promote), rerecord, profiles (--profile).
"""

from __future__ import annotations

from windtunnel._tapes.errors import (
    TapeCorrupt,
    TapeExhausted,
    TapeMismatch,
    TapeMissing,
    TapeNotRecorded,
    TapePromotionRefused,
    TapeSecretFound,
    TapeStale,
    TapeUnused,
)
from windtunnel._tapes.fidelity import FidelityReport, replay_check
from windtunnel._tapes.fingerprint import FINGERPRINT_VERSION, fingerprint, request_parts
from windtunnel._tapes.model import Interaction, Tape, TapeHeader
from windtunnel._tapes.profiles import PROFILE_HELP, add_profile_argument, profile_filter
from windtunnel._tapes.record import RecordMode
from windtunnel._tapes.replay import ReplayMode, UnusedReport
from windtunnel._tapes.store import load_tape, write_tape

__all__ = [
    "FINGERPRINT_VERSION",
    "PROFILE_HELP",
    "FidelityReport",
    "Interaction",
    "RecordMode",
    "ReplayMode",
    "Tape",
    "TapeCorrupt",
    "TapeExhausted",
    "TapeHeader",
    "TapeMismatch",
    "TapeMissing",
    "TapeNotRecorded",
    "TapePromotionRefused",
    "TapeSecretFound",
    "TapeStale",
    "TapeUnused",
    "UnusedReport",
    "add_profile_argument",
    "fingerprint",
    "load_tape",
    "profile_filter",
    "replay_check",
    "request_parts",
    "write_tape",
]
