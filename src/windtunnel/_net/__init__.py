"""Small networking helpers: ASGI servers in a background thread on loopback, free ports."""
