"""The minimal Contract C runtime: the required routes and env only, in the standard library."""
