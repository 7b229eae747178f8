"""Core value types that the SPI and the authoring layer share: they import nothing but the error tree."""
