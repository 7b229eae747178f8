"""Reports every verb shares: JUnit XML, JSON and text tables over simple case records."""
