"""Tapes: fingerprinted record/replay fixtures for model traffic, served as the gateway's record and replay modes.

Import from the modules (this package re-exports nothing, so `wt --help` does not pay for httpx):
model (the format), fingerprint, secrets, store (load_tape, write_tape), builder (TapeBuilder),
replay (ReplayMode) and record (RecordMode), the gateway modes; errors (the TapeError subclasses),
checks, fidelity (replay_check), lifecycle (find/verify/expiry), promotion, rerecord and profiles (--profile).
The tests' stand-in OpenAI-compatible upstream is tests/standin_upstream.py.
"""
