"""spec/model.py was split by concern (docs/contributing.md, Layout); the old import path keeps every name it
held, each the very object its owning module defines, so code importing ``reportgen.spec.model`` keeps working."""

from __future__ import annotations

import importlib

import reportgen.spec.model as facade

# the public names reportgen.spec.model defined before the split, and other modules and tests import
BEFORE = """Attribute Base Bernstein Bins Bootstrap DaskOptions Data EmbeddingFeatures FEATURES_EXPECTED Gate
INTERSECTION_SEP LOCAL_BIAS_PERFORMANCE LoadedSpec LocalBias Metric ModelInfo Output PLACEHOLDER Report SPEC_MAX_BYTES
Sample Scalar Sign Spec Strict Task TextFeatures BASE_METRICS COUNT_METRICS DISPARITY_METRICS KNOWN_METRICS
NEEDS_PREDICTED_ATTRIBUTE PREDICTABILITY_METRICS decode_spec group_index group_name_problems is_label_free json_schema
known_metric label_clash load_spec logo_file logo_outside logo_outside_message logo_problems parse_spec
separator_problems shown_groups""".split()


def test_the_old_import_path_keeps_every_name():
    missing = [n for n in BEFORE if not hasattr(facade, n)]
    assert not missing, missing
    assert set(BEFORE) <= set(facade.__all__)


def test_each_name_is_the_owning_modules_object():
    for name in facade.__all__:
        obj = getattr(facade, name)
        owner = getattr(obj, "__module__", None)
        if owner and owner.startswith("reportgen.spec."):
            assert owner != "reportgen.spec.model", name  # defined where a reader looks for it, not in the facade
            assert getattr(importlib.import_module(owner), name) is obj, name
