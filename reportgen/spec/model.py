"""The spec package's former single module, kept so ``reportgen.spec.model`` imports keep working: every name is
re-exported from the module that now owns it.

- :mod:`reportgen.spec.values` -- the strict base model, `Scalar`, group names as the data compares them
- :mod:`reportgen.spec.models` -- :class:`Spec` and its sections (report, data, base, intervals, output)
- :mod:`reportgen.spec.attributes`, :mod:`~reportgen.spec.tasks`, :mod:`~reportgen.spec.metric`,
  :mod:`~reportgen.spec.local_bias` -- attributes, tasks, metrics and gates, local bias
- :mod:`reportgen.spec.messages` -- pydantic's errors as problems at their YAML positions
- :mod:`reportgen.spec.checks` -- the checks across keys; :mod:`~reportgen.spec.groups` -- the group-name checks;
  :mod:`~reportgen.spec.logo` -- the report logo
- :mod:`reportgen.spec.loader` -- :func:`load_spec`, :func:`parse_spec`, :class:`LoadedSpec`, :func:`json_schema`

New code imports from the owning module.
"""

from __future__ import annotations

from reportgen.spec.attributes import Attribute, Bins
from reportgen.spec.checks import cross_key_problems
from reportgen.spec.groups import (INTERSECTION_SEP, group_index, group_name_problems, label_clash,
                                   separator_problems, shown_groups)
from reportgen.spec.loader import (PLACEHOLDER, SPEC_MAX_BYTES, LoadedSpec, decode_spec, json_schema, load_spec,
                                   parse_spec)
from reportgen.spec.local_bias import FEATURES_EXPECTED, LOCAL_BIAS_PERFORMANCE, EmbeddingFeatures, LocalBias, \
    TextFeatures
from reportgen.spec.logo import logo_file, logo_outside, logo_outside_message, logo_problems
from reportgen.spec.metric import (BASE_METRICS, COUNT_METRICS, DISPARITY_METRICS, KNOWN_METRICS,
                                   NEEDS_PREDICTED_ATTRIBUTE, PREDICTABILITY_METRICS, Gate, Metric, known_metric)
from reportgen.spec.models import (Base, Bernstein, Bootstrap, DaskOptions, Data, Intervals, ModelInfo, Output,
                                   Report, Sample, Sign, Spec)
from reportgen.spec.tasks import Task, is_label_free
from reportgen.spec.values import Scalar, Strict

__all__ = [
    "Attribute", "Bins", "cross_key_problems", "INTERSECTION_SEP", "group_index", "group_name_problems",
    "label_clash", "separator_problems", "shown_groups", "PLACEHOLDER", "SPEC_MAX_BYTES", "LoadedSpec",
    "decode_spec", "json_schema", "load_spec", "parse_spec", "FEATURES_EXPECTED", "LOCAL_BIAS_PERFORMANCE",
    "EmbeddingFeatures", "LocalBias", "TextFeatures", "logo_file", "logo_outside", "logo_outside_message",
    "logo_problems", "BASE_METRICS", "COUNT_METRICS", "DISPARITY_METRICS", "KNOWN_METRICS",
    "NEEDS_PREDICTED_ATTRIBUTE", "PREDICTABILITY_METRICS", "Gate", "Metric", "known_metric", "Base", "Bernstein",
    "Bootstrap", "DaskOptions", "Data", "Intervals", "ModelInfo", "Output", "Report", "Sample", "Sign", "Spec",
    "Task", "is_label_free", "Scalar", "Strict",
]
