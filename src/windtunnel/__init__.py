"""Wind Tunnel: certify the plumbing under agent benchmarks. Public doors: api, spi, errors."""

__version__ = "0.10.0"
