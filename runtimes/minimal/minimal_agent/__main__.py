"""Serve Contract C on 0.0.0.0:$WT_INJECT_PORT until the container stops."""

from minimal_agent.server import main

main()
