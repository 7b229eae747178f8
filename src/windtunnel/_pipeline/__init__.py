"""The certification pipeline: one stage plan (a tuple of named steps), run by the Docker executor or Dagger."""
