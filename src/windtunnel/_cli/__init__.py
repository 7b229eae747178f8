"""The `wt` command line: argument parsing only; every verb calls library code."""
