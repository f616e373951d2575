"""Stage 4, results: the typed model of results.json (model) and the threshold sweeps (sweeps)."""
