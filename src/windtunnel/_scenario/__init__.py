"""Scenario authoring: the model, its validation, gates and expectations."""
