"""Drivers that run Wind Tunnel pieces in containers: engine, images, networks, cleanup."""
