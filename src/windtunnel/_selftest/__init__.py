"""Reference self-tests (docs/selftests.md): golden cases must pass their gate, poison cases must fail it."""
