"""Stage 0, the spec: the pydantic models (models, and attributes, tasks, metric, local_bias, values, options
beside it), pydantic's errors as problems (messages), the checks across keys (checks, groups, logo), the loader
(loader; model re-exports the names it held before the split), YAML positions (yamlmap), problems and their
texts (errors), the compliance profiles (profiles) and the metric catalogue (catalogue)."""
