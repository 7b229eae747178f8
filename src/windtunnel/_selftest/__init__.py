"""Reference self-tests (seed 000): golden cases must pass their gate, poison cases must fail it."""
