"""Stage 0, the spec: the pydantic models and the loader (model), YAML positions (yamlmap), problems and their texts (errors), the metric catalogue (catalogue)."""
