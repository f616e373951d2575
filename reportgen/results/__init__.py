"""The typed model of results.json (model, split by area: vocabulary, intervals, metrics, provenance, gates,
local_bias). It is placed before the metric families, which build its objects (tests/test_layering.py)."""
