"""Scenario proving (seed 004): negative controls, leaked answers, grounded sources, suite re-prove, gate mutation."""
