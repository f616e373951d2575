import json

from reportgen.spec.model import json_schema


def test_shipped_schema_is_current(root):
    shipped = json.loads((root / "reportgen" / "schema" / "spec.schema.json").read_text())
    assert shipped == json_schema(), "regenerate with: reportgen schema --out reportgen/schema/spec.schema.json"


def test_schema_cli_prints_valid_json_with_top_level_keys():
    from conftest import run_cli

    r = run_cli("schema")
    assert r.returncode == 0
    s = json.loads(r.stdout)
    for key in ("data", "attributes", "tasks", "metrics", "intervals", "gates", "base", "output"):
        assert key in s["properties"]
    assert s["additionalProperties"] is False  # unknown keys are rejected


def test_sample_specs_reference_the_schema(root):
    for spec in sorted((root / "specs").glob("*.yaml")):
        first = spec.read_text().splitlines()[0]
        assert "$schema=../reportgen/schema/spec.schema.json" in first, spec.name
