"""Scenario proving (docs/selftests.md, "Proving scenarios"): negative controls, leaked answers, grounded sources, suite re-prove, gate mutation."""
