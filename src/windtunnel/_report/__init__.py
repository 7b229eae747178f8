"""Reports: JUnit XML and text tables every verb shares, and report.html with its conversation viewer."""
