"""Core value types every layer shares (the SPI Protocols, reference cases, run tiers, the vocabulary, the
settings' rate and ladder values): they import nothing but the error tree."""
