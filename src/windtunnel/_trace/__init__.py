"""What a run leaves behind: the Trace, its turns, usage and evidence; response-shape reading."""
