"""Runtimes: the built-in ones (in_memory, http_inject), the runtime.toml format, plugin loading and the one
resolver that turns what a user names into a runtime description."""
