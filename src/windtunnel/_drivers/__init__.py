"""The built-in driver kinds (in_memory, http_inject, python, container), each in the `windtunnel.drivers` registry."""
