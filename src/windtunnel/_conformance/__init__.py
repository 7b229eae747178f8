"""The conformance kit: named checks any runtime can run, and the pytest plugin that parametrises them."""
