"""The runner: one run of a scenario, batches with the seed 002 lifecycle, scheduling, output."""
