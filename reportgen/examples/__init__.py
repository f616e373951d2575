"""Runnable examples shipped with reportgen: `reportgen init --example NAME [--out DIR]` copies one into a
new folder (spec.yaml, its data files, and spec.schema.json for editors).

Each example is a folder here holding ``spec.yaml`` (its data paths are file names beside it) and the files it
reads. The data files are copies of the repository's ``samples/`` files (a test keeps them identical).
"""

EXAMPLES = {
    "compas": "COMPAS recidivism scores (ProPublica), a logistic-regression model: train/val/test CSVs",
}
