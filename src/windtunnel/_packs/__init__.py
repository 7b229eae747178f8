"""Scenario packs: what a pack owns, how packs are found, and how a selection picks scenarios."""
