"""Stage 1, data: reading files (CSV, Parquet, in memory), checking them against the spec and encoding groups and labels (files)."""
