"""The conversation behind a run or a check: the model's, the mocks' and the runtime's views of it, aligned."""
