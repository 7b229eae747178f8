"""The runner: one run of a scenario, batches with the runtime lifecycle (docs/writing-a-runtime.md), scheduling, output."""
