"""Runtimes: the runtime.toml format, the plugin contract, the driver registry and the one resolver that turns
what a user names into a runtime description."""
