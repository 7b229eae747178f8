"""Scoring: the gates of a scenario applied to a trace, and the versioned Score sidecar."""
