"""reportgen's built-in report templates (package data; see reportgen.report)."""
