"""Bad specs and bad data: every one must be rejected the way SPEC.md promises.

The corpus lives in tests/bad/ (one YAML per case; tiny CSVs in tests/bad/data/).
For each case, ``reportgen run SPEC --out DIR`` and ``reportgen validate SPEC``
must

* exit with code 2,
* print every problem at once, each on a line ``spec.yaml:LINE:COL: key.path: message``
  pointing at the line a person reading the YAML would point at (problems in a
  data file name the data file, and its line where there is one),
* print no Python traceback,
* write nothing (DIR does not exist afterwards; an existing results.json is
  left byte-for-byte as it was).

Expected line numbers were counted by hand from the YAML files, not copied from
the tool's output. ``fix`` (where given) is the one edit that turns the case
into a spec that validates, which proves the case fails for the stated reason
only.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Union

import pytest

BAD = Path(__file__).resolve().parents[1] / "bad"

Frag = Union[str, "re.Pattern[str]"]


@dataclass(frozen=True)
class P:
    """One problem that must appear on one stderr line.

    where: "file.yaml:LINE", or a tuple of acceptable alternatives;
    key:   the dotted key path printed after the position (a more specific
           path below it is accepted too), or None for problems without a key;
    frags: substrings (or compiled regexes) that must all be on that same line.
    """

    where: Union[str, tuple]
    key: str | None
    frags: tuple = ()

    def __init__(self, where, key, *frags):
        object.__setattr__(self, "where", where)
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "frags", frags)


@dataclass
class Case:
    spec: str
    problems: list[P]
    extra: list[Frag] = field(default_factory=list)  # anywhere in stderr (e.g. a YAML excerpt)
    absent: list[str] = field(default_factory=list)  # must not appear in stderr
    fix: list[tuple[bytes, bytes]] | None = None  # byte replacements that make the spec valid

    @property
    def id(self) -> str:
        return self.spec.removesuffix(".yaml")


def fx(*pairs: tuple[str | bytes, str | bytes]) -> list[tuple[bytes, bytes]]:
    return [(a.encode() if isinstance(a, str) else a, b.encode() if isinstance(b, str) else b) for a, b in pairs]


KNOWN_METRICS = re.compile(r"known metrics: .*biasamp_a_to_t")

CASES = [
    # ------------------------------------------------------------------ keys and values
    # wrote `atributes:` for `attributes:` at the top level
    Case("misspelt_top_key.yaml", [
        P("misspelt_top_key.yaml:5", "atributes", "unknown key 'atributes'", "(did you mean 'attributes'?)"),
        P("misspelt_top_key.yaml:1", "attributes", "required key 'attributes' is missing"),
    ], fix=fx(("atributes:", "attributes:"))),
    # wrote `colum:` for `column:` inside attributes.race
    Case("misspelt_nested_key.yaml", [
        P("misspelt_nested_key.yaml:7", "attributes.race.colum", "unknown key 'colum'", "(did you mean 'column'?)",
          "allowed keys: column, groups, min_group_size, predicted, labels"),
        P("misspelt_nested_key.yaml:6", "attributes.race", "required key 'column' is missing"),
    ], fix=fx(("colum:", "column:"))),
    # listed metric `biasamp_a2t`, which does not exist (meant biasamp_a_to_t)
    Case("misspelt_metric.yaml", [
        P("misspelt_metric.yaml:14", "metrics[0]", "unknown metric 'biasamp_a2t'",
          "(did you mean 'biasamp_a_to_t'?)", KNOWN_METRICS),
    ], fix=fx(("biasamp_a2t", "biasamp_a_to_t"))),
    # gave a metric the option `protecte:` (meant `protected:`)
    Case("unknown_metric_option.yaml", [
        P("unknown_metric_option.yaml:16", "metrics[1].protecte", "unknown key 'protecte'",
          "(did you mean 'protected'?)"),
    ], fix=fx(("protecte:", "protected:"))),
    # wrote a word where a whole number is needed (bootstrap resamples: many)
    Case("wrong_type_int.yaml", [
        P("wrong_type_int.yaml:18", "intervals.bootstrap.resamples", "integer", "'many'"),
    ], fix=fx(("resamples: many", "resamples: 20"))),
    # gave one group as a plain string instead of a list of groups
    Case("groups_not_a_list.yaml", [
        P("groups_not_a_list.yaml:8", "attributes.race.groups", "list", "'White'"),
    ], fix=fx(("groups: White", "groups: [White, Black]"))),
    # listed the same group twice
    Case("groups_not_distinct.yaml", [
        P("groups_not_distinct.yaml:8", "attributes.race.groups", "distinct"),
    ], fix=fx(("[White, Black, White]", "[White, Black]"))),
    # wrote the confidence as a percentage (95) instead of a fraction (0.95)
    Case("confidence_out_of_range.yaml", [
        P("confidence_out_of_range.yaml:17", "intervals.confidence", "between 0 and 1", "did you mean 0.95"),
    ], fix=fx(("confidence: 95", "confidence: 0.95"))),
    # typo in a fixed choice: base.source: trian
    Case("invalid_literal.yaml", [
        P("invalid_literal.yaml:14", "base.source", "'trian'", "(did you mean 'train'?)", "'uniform'"),
    ], fix=fx(("source: trian", "source: train"))),
    # wrote a decimal comma (threshold: 0,5); one mistake must give one clear problem
    Case("threshold_decimal_comma.yaml", [
        P("threshold_decimal_comma.yaml:13", "tasks.outcome.threshold", "'0,5'", "number", "calibrate"),
    ], absent=["threshold.float"], fix=fx(("threshold: 0,5", "threshold: 0.5"))),
    # asked for spec format version 2, which does not exist
    Case("wrong_version.yaml", [
        P("wrong_version.yaml:1", "version", "2 is not allowed", "; use 1"),
    ], fix=fx(("version: 2", "version: 1"))),
    # ------------------------------------------------------------------ required keys
    # left out the attributes section
    Case("missing_attributes.yaml", [
        P("missing_attributes.yaml:1", "attributes", "required key 'attributes' is missing"),
    ], fix=fx(("tasks:\n", "attributes:\n  race:\n    column: race\n    groups: [White, Black]\ntasks:\n"))),
    # left out the tasks section
    Case("missing_tasks.yaml", [
        P("missing_tasks.yaml:1", "tasks", "required key 'tasks' is missing"),
    ], fix=fx(("metrics:\n", "tasks:\n  outcome:\n    column: label\n    predicted: pred\nmetrics:\n"))),
    # left out the metrics section
    Case("missing_metrics.yaml", [
        P("missing_metrics.yaml:1", "metrics", "required key 'metrics' is missing"),
    ], fix=fx(("intervals:\n", "metrics:\n  - biasamp_a_to_t\nintervals:\n"))),
    # wrote `metrics: []`, so nothing would be computed
    Case("empty_metrics_list.yaml", [
        P("empty_metrics_list.yaml:13", "metrics", "at least 1", "add at least one"),
    ], fix=fx(("metrics: []", "metrics: [biasamp_a_to_t]"))),
    # gave only data.train, no test file to audit
    Case("missing_data_test.yaml", [
        P("missing_data_test.yaml:2", "data", "`test:`", "`runs:`"),
    ], fix=fx(("  train: data/train.csv\n", "  train: data/train.csv\n  test: data/test.csv\n"))),
    # left out data.train although base.source defaults to train
    Case("missing_train_for_base.yaml", [
        # the metric that asks for a base source (line 13) is named; base: is not in the file
        P("missing_train_for_base.yaml:13", "metrics[0]", "biasamp_a_to_t", "data.train", "base.source: test"),
    ], fix=fx(("  test: data/test.csv\n", "  train: data/train.csv\n  test: data/test.csv\n"))),
    # ------------------------------------------------------------------ YAML itself
    # indented `groups:` one space too far
    Case("yaml_bad_indent.yaml", [
        P("yaml_bad_indent.yaml:8", None, "YAML syntax error"),
    ], extra=["    column: race", "     groups: [White, Black]", "tasks:"],
        fix=fx(("     groups", "    groups"))),
    # forgot the closing ] of a flow list
    Case("yaml_unclosed_bracket.yaml", [
        P("yaml_unclosed_bracket.yaml:8", None, "YAML syntax error", "]"),
    ], extra=["groups: [White, Black"], fix=fx(("[White, Black\n", "[White, Black]\n"))),
    # forgot the closing quote of the report title
    Case("yaml_unclosed_quote.yaml", [
        P("yaml_unclosed_quote.yaml:3", None, "YAML syntax error", "quot"),
    ], extra=['title: "Loan model audit', "report:", "data:"],
        fix=fx(('"Loan model audit\n', '"Loan model audit"\n'))),
    # wrote `column:` twice in one attribute
    Case("duplicate_key.yaml", [
        P("duplicate_key.yaml:9", "attributes.race.column", "appears twice", "first at line 7"),
    ], fix=fx(("    column: sex\n", ""))),
    # wrote the spec as a YAML list (leading dashes) instead of a mapping
    Case("spec_is_a_list.yaml", [
        P("spec_is_a_list.yaml:1", None, "mapping", "list"),
    ]),
    # ran reportgen on an empty file
    Case("empty_spec.yaml", [
        P("empty_spec.yaml:1", None, re.compile(r"(?i)\bempty\b")),
    ], absent=["NoneType"]),
    # indented with tab characters (YAML allows only spaces)
    Case("tab_indented.yaml", [
        P("tab_indented.yaml:7", None, "YAML syntax error", re.compile(r"(?i)\btabs?\b"), "spaces"),
    ], extra=["column: race"], fix=fx((b"\t", b"    "))),
    # saved the spec in Latin-1 (a Windows editor): the u-umlaut on line 3 is not UTF-8
    Case("latin1_spec.yaml", [
        P("latin1_spec.yaml:3", None, "UTF-8"),
    ], fix=fx((b"\xfc", "ü".encode()))),
    # saved with a UTF-8 byte-order mark (Windows Notepad): the BOM is fine, lines are counted as usual; the
    # mistake is the misspelt metric on line 15
    Case("bom_spec.yaml", [
        P("bom_spec.yaml:15", "metrics[0]", "unknown metric 'biasamp_a2t'", "(did you mean 'biasamp_a_to_t'?)"),
    ], absent=["UTF-8", "\ufeff"], fix=fx(("biasamp_a2t", "biasamp_a_to_t"))),
    # ------------------------------------------------------------------ untrusted or absurd values
    # asked for 100 million bootstrap resamples (limit 1,000,000)
    Case("resamples_absurd.yaml", [
        P("resamples_absurd.yaml:17", "intervals.bootstrap.resamples", "100000000 is above the limit of 1000000",
          "; use a value from 0 to 1000000"),
    ], fix=fx(("resamples: 100000000", "resamples: 20"))),
    # asked for a billion predictability trials (limit 1000)
    Case("trials_absurd.yaml", [
        P("trials_absurd.yaml:17", "metrics[0].trials", "1000000000 is above the limit of 1000",
          "; use a value from 1 to 1000"),
    ], fix=fx(("trials: 1000000000", "trials: 2"))),
    # ------------------------------------------------------------------ names referring to each other
    # asked for `threshold: calibrate` but gave no validation file
    Case("calibrate_without_validation.yaml", [
        P("calibrate_without_validation.yaml:13", "tasks.outcome.threshold", "calibrate", "data.validation"),
    ], fix=fx(("  test: data/test.csv\n", "  test: data/test.csv\n  validation: data/val.csv\n"))),
    # gave a score column but no threshold to turn scores into predictions
    Case("score_without_threshold.yaml", [
        P("score_without_threshold.yaml:12", "tasks.outcome", "`score` needs `threshold"),
    ], fix=fx(("    score: score\n", "    score: score\n    threshold: 0.5\n"))),
    # gave both predicted labels and a score (+threshold) for one task
    Case("predicted_and_score.yaml", [
        P(("predicted_and_score.yaml:12", "predicted_and_score.yaml:13"), "tasks.outcome", "not both"),
    ], fix=fx(("    predicted: pred\n", ""))),
    # gated on equalized_odds but did not list it under metrics
    Case("gate_metric_not_listed.yaml", [
        P("gate_metric_not_listed.yaml:19", "gates[0].metric", "'equalized_odds'", "not in `metrics:`"),
    ], fix=fx(("metric: equalized_odds", "metric: demographic_parity"))),
    # wrote a gate with no max/min/abs_max
    Case("gate_without_bound.yaml", [
        P("gate_without_bound.yaml:19", "gates[0]", "needs a bound", "`max`"),
    ], fix=fx(("    inconclusive: pass", "    max: 0.5"))),
    # misspelt the protected group (Blak) of equal_opportunity
    Case("protected_unknown_group.yaml", [
        P("protected_unknown_group.yaml:16", "metrics[1].protected", "'Blak'", "(did you mean 'Black'?)"),
    ], fix=fx(("protected: Blak", "protected: Black"))),
    # intersected with `gender`, but the attribute is declared as `sex`
    Case("intersection_unknown_attribute.yaml", [
        P("intersection_unknown_attribute.yaml:13", "intersections[0][1]", "unknown attribute 'gender'",
          re.compile(r"declared: (race, sex|sex, race)$")),
    ], fix=fx(("[race, gender]", "[race, sex]"))),
    # asked for biasamp_t_to_a without declaring a predicted attribute column
    Case("t_to_a_without_predicted_attribute.yaml", [
        P("t_to_a_without_predicted_attribute.yaml:15", "metrics[1]", "biasamp_t_to_a",
          "predicted attributes", "`predicted: <column>`"),
    ], fix=fx(("    column: race\n", "    column: race\n    predicted: race_pred\n"))),
    # chose base.source: table without naming the table file
    Case("base_table_without_file.yaml", [
        P(("base_table_without_file.yaml:13", "base_table_without_file.yaml:14"), "base", "`table: <csv file>`"),
    ], fix=fx(("  source: table\n", "  source: table\n  table: data/base_table.csv\n"))),
    # ------------------------------------------------------------------ data files
    # typo in the test file name (tset.csv)
    Case("missing_data_file.yaml", [
        P("missing_data_file.yaml:3", "data.test", "data/tset.csv", "not found", "relative to the spec file"),
    ], fix=fx(("tset.csv", "test.csv"))),
    # named a PNG image (saved as .csv) as the test file
    Case("data_not_a_table.yaml", [
        P("data_not_a_table.yaml:3", "data.test", "data/junk.csv", "cannot read", "CSV"),
    ], fix=fx(("junk.csv", "test.csv"))),
    # misspelt the attribute column (rase)
    Case("column_not_found.yaml", [
        P("column_not_found.yaml:6", "attributes.race.column", "'rase' not found", "data/test.csv",
          "(did you mean 'race'?)"),
    ], fix=fx(("column: rase", "column: race"))),
    # local_bias: a misspelt feature column and a text column given as a numeric feature, both reported
    Case("local_bias_features.yaml", [
        P("local_bias_features.yaml:16", "local_bias.features[2]", "'prior' not found", "data/lb.csv",
          "(did you mean 'priors'?)"),
        P("local_bias_features.yaml:16", "local_bias.features[1]", "'name'", "not numeric", "{text: column}"),
    ], fix=fx(("[age, name, prior]", "[age, priors]"))),
    # local_bias: an embeddings file with fewer rows than the data file
    Case("local_bias_embeddings_rows.yaml", [
        P("local_bias_embeddings_rows.yaml:16", "local_bias.features.file", "50 rows", "data/lb.csv has 60",
          "id:"),
    ], fix=fx(("lb_emb.npy", "lb_emb60.npy"))),
    # local_bias: a misspelt text option, an unknown performance, a 3-group attribute without `groups:`, a
    # misspelt task name: all four at once
    Case("local_bias_options.yaml", [
        P("local_bias_options.yaml:16", "local_bias.features.dim", "unknown key 'dim'", "(did you mean 'dims'?)",
          "allowed keys: text, dims"),
        P("local_bias_options.yaml:17", "local_bias.performance", "'accuracy'", "'recall' is not allowed"),
        P("local_bias_options.yaml:14", "local_bias.attribute", "two groups", "has 3", "groups: ["),
        P("local_bias_options.yaml:15", "local_bias.task", "unknown task 'outcom'", "(did you mean 'outcome'?)"),
    ], fix=fx(("dim: 5", "dims: 5"), ("performance: recall", "performance: true_positive_rate"),
              ("task: outcom\n", "task: outcome\n  groups: [White, Black]\n"))),
    # misspelt a group value (Blak), so that group has no rows; the message must show the real values
    Case("group_never_occurs.yaml", [
        P("group_never_occurs.yaml:7", "attributes.race.groups", "'Blak'", "data/test.csv", "no rows", "Black"),
    ], fix=fx(("Blak]", "Black]"))),
    # the label has 3 values (0, 1, 2) but the task declares no `classes`
    Case("label_three_values.yaml", [
        P("label_three_values.yaml:10", "tasks.grade.column", "data/labels3.csv", "0, 1, 2", "classes"),
    ], fix=fx(("    column: label\n", "    column: label\n    classes: [0, 1, 2]\n"))),
    # positive: "yes" although the labels are 0/1
    Case("positive_absent.yaml", [
        P("positive_absent.yaml:11", "tasks.outcome.positive", "data/test.csv", "0, 1", "yes", "`positive:`"),
    ], fix=fx(('positive: "yes"', "positive: 1"))),
    # pointed `predicted:` at the score column (probabilities, not labels)
    Case("predicted_holds_scores.yaml", [
        P("predicted_holds_scores.yaml:11", "tasks.outcome.predicted", "'score'", "data/test.csv",
          "use `score:` with `threshold:`"),
    ], fix=fx(("predicted: score", "score: score\n    threshold: 0.5"))),
    # pointed `score:` at a text column (low/medium/high)
    Case("score_not_numeric.yaml", [
        P("score_not_numeric.yaml:11", "tasks.outcome.score", "'risk'", "data/score_text.csv", "not numeric"),
    ]),
    # the test file has empty cells in used columns: label on line 7 of missing.csv is an error; race on line 4
    # is not (a missing attribute value leaves the row out of that attribute, like an unlisted value)
    Case("missing_values.yaml", [
        P("missing_values.yaml:10", "tasks.outcome.column", "data/missing.csv", "line 7", "data.missing: drop"),
    ], fix=fx(("  test: data/missing.csv\n", "  test: data/missing.csv\n  missing: drop\n"))),
    # a multi-label glob that matches no column of the test file
    Case("columns_pattern_matches_nothing.yaml", [
        P("columns_pattern_matches_nothing.yaml:10", "tasks.objects.columns", "'obj_*'", "matches no column",
          "race, sex, label"),
    ]),
    # base table file is a PNG image, not a CSV
    Case("base_table_not_a_table.yaml", [
        P("base_table_not_a_table.yaml:15", "base.table", "data/junk.csv", "cannot read"),
    ], fix=fx(("data/junk.csv", "data/base_table.csv"))),
    # base table has the word `half` where a probability is needed (line 2 of the CSV)
    Case("base_table_probability_text.yaml", [
        P("base_table_probability_text.yaml:15", "base.table", "base_table_text.csv", "p_group_given_task", "half",
          re.compile(r"base_table_text\.csv:2\b|line 2\b")),
    ], fix=fx(("base_table_text.csv", "base_table.csv"))),
    # pointed data.test at a folder that holds no CSV or Parquet file
    Case("data_is_a_directory.yaml", [
        P("data_is_a_directory.yaml:3", "data.test", "data/not_a_table_folder", "holds no .csv, .parquet or .pq"),
    ], fix=fx(("data/not_a_table_folder", "data/test.csv"))),
    # pointed data.test at /dev/zero: refused before reading (it never ends), not hung on
    Case("data_is_dev_zero.yaml", [
        P("data_is_dev_zero.yaml:3", "data.test", "/dev/zero", "not a regular file", "character device",
          "CSV or Parquet"),
    ], fix=fx(("/dev/zero", "data/test.csv"))),
    # a gzip-compressed CSV named .csv (as .csv.gz it is read transparently)
    Case("gzip_named_csv.yaml", [
        P("gzip_named_csv.yaml:3", "data.test", "data/test_gzipped.csv", "gzip-compressed", ".csv.gz"),
    ], fix=fx(("data/test_gzipped.csv", "data/test.csv.gz"))),
    # the header of the test file names `race` twice: which one is meant cannot be guessed
    Case("duplicate_columns.yaml", [
        P("duplicate_columns.yaml:3", "data.test", "'race' appears twice", "data/duplicate_columns.csv",
          "columns 1 and 5"),
    ], fix=fx(("data/duplicate_columns.csv", "data/test.csv"))),
    # the second run file lacks the score column the first has and the spec uses
    Case("runs_schema_differs.yaml", [
        P("runs_schema_differs.yaml:5", "data.runs[1]", "data/run_without_score.csv", "'score'",
          "tasks.outcome.score", "same columns"),
    ], fix=fx(("data/run_without_score.csv", "data/test.csv"))),
    # ------------------------------------------------------------------ several mistakes at once
    # six mistakes in six sections; every one must be reported in one go
    Case("several_errors.yaml", [
        P("several_errors.yaml:3", "report.titel", "(did you mean 'title'?)"),
        P("several_errors.yaml:16", "base.source", "'trian'", "(did you mean 'train'?)"),
        P("several_errors.yaml:18", "metrics[0]", "'biasamp_a2t'", "(did you mean 'biasamp_a_to_t'?)"),
        P("several_errors.yaml:20", "metrics[1].min_count", "integer", "'lots'"),
        P("several_errors.yaml:22", "intervals.confidence", "1.5"),
        P("several_errors.yaml:25", "output.formats[1]", "'docx'"),
    ]),
    # a duplicate key plus an unknown metric: both must be reported, not only the duplicate
    Case("duplicate_and_schema_errors.yaml", [
        P("duplicate_and_schema_errors.yaml:18", "intervals.bootstrap", "appears twice", "first at line 17"),
        P("duplicate_and_schema_errors.yaml:14", "metrics[0]", "'biasamp_a2t'", "(did you mean 'biasamp_a_to_t'?)"),
    ]),
    # an unknown key plus two cross-reference mistakes: all three in one go
    Case("schema_and_crossref_errors.yaml", [
        P("schema_and_crossref_errors.yaml:3", "report.titel", "(did you mean 'title'?)"),
        P("schema_and_crossref_errors.yaml:18", "metrics[1].protected", "'Blak'", "(did you mean 'Black'?)"),
        P("schema_and_crossref_errors.yaml:22", "gates[0].metric", "'equalized_odds'", "not in `metrics:`"),
    ]),
    # a missing train file and two misspelt columns in the test file
    Case("several_data_errors.yaml", [
        P("several_data_errors.yaml:3", "data.train", "data/trian.csv", "not found"),
        P("several_data_errors.yaml:7", "attributes.race.column", "'rase' not found", "data/test.csv",
          "(did you mean 'race'?)"),
        P("several_data_errors.yaml:12", "tasks.outcome.predicted", "'prediction' not found", "data/test.csv"),
    ]),
    # the README's own example: spec typos and a misspelt column, all reported together
    Case("spec_and_data_errors.yaml", [
        P("spec_and_data_errors.yaml:3", "report.titel", "(did you mean 'title'?)"),
        P("spec_and_data_errors.yaml:16", "metrics[0]", "'biasamp_a2t'", "(did you mean 'biasamp_a_to_t'?)"),
        P("spec_and_data_errors.yaml:9", "attributes.race.column", "'rase' not found", "data/test.csv",
          "(did you mean 'race'?)"),
    ]),
]

CASE_PARAMS = [pytest.param(c, id=c.id) for c in CASES]


# --------------------------------------------------------------------------- helpers


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    """Run the CLI in-process (same entry point, same exit codes; subprocess runs are covered in test_cli.py)."""
    import os

    from click.testing import CliRunner

    from reportgen.cli import main

    old = os.getcwd()
    os.chdir(cwd)
    try:
        r = CliRunner().invoke(main, [str(a) for a in args])
    finally:
        os.chdir(old)
    return subprocess.CompletedProcess(list(args), r.exit_code, r.stdout, r.stderr)


def _has(text: str, frag: Frag) -> bool:
    return frag.search(text) is not None if isinstance(frag, re.Pattern) else frag in text


def _line_matches(line: str, p: P) -> bool:
    wheres = p.where if isinstance(p.where, tuple) else (p.where,)
    if not any(re.search(rf"(?:^|[/\\]){re.escape(w)}:", line) for w in wheres):
        return False
    if p.key is not None and not re.search(rf":\s{re.escape(p.key)}(?:[.\[][^\s:]*)?:\s", line):
        return False
    return all(_has(line, f) for f in p.frags)


def check_stderr(case: Case, r: subprocess.CompletedProcess) -> None:
    err = r.stderr
    show = f"\n--- exit {r.returncode}; stderr:\n{err}\n--- stdout:\n{r.stdout}"
    assert "Traceback" not in err, "a Python traceback was printed" + show
    assert r.returncode == 2, f"expected exit code 2 (spec or data is wrong), got {r.returncode}" + show
    lines = err.splitlines()
    missing = [p for p in case.problems if not any(_line_matches(ln, p) for ln in lines)]
    assert not missing, ("problem(s) not reported as expected:\n" + "\n".join(
        f"  at {p.where}  key {p.key}  with {[getattr(f, 'pattern', f) for f in p.frags]}" for p in missing) + show)
    for f in case.extra:
        assert _has(err, f), f"expected {getattr(f, 'pattern', f)!r} in stderr" + show
    for a in case.absent:
        assert a not in err, f"{a!r} should not appear in stderr" + show


# --------------------------------------------------------------------------- tests


def test_every_corpus_file_is_a_case():
    listed = {c.spec for c in CASES}
    on_disk = {p.name for p in BAD.glob("*.yaml")}
    assert on_disk == listed, f"not in CASES: {sorted(on_disk - listed)}; no file: {sorted(listed - on_disk)}"
    assert len(CASES) >= 30


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_run_rejects_and_writes_nothing(case: Case, tmp_path: Path):
    out = tmp_path / "out"
    r = cli("run", BAD / case.spec, "--out", out, cwd=tmp_path)
    check_stderr(case, r)
    assert not out.exists(), f"output directory was created: {sorted(p.name for p in out.rglob('*'))}"
    assert list(tmp_path.iterdir()) == [], f"files were written: {sorted(p.name for p in tmp_path.iterdir())}"


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_validate_rejects(case: Case, tmp_path: Path):
    r = cli("validate", BAD / case.spec, cwd=tmp_path)
    check_stderr(case, r)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES if c.fix is not None])
def test_the_one_fix_makes_the_spec_valid(case: Case, tmp_path: Path):
    """Guards the corpus itself: each case is wrong only in the way its comment says."""
    text = (BAD / case.spec).read_bytes()
    for old, new in case.fix:
        assert old in text, f"fix {old!r} not found in {case.spec}"
        text = text.replace(old, new)
    (tmp_path / "data").symlink_to(BAD / "data", target_is_directory=True)
    spec = tmp_path / case.spec
    spec.write_bytes(text)
    r = cli("validate", spec, cwd=tmp_path)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stderr}"


PREVIOUS_RESULTS = b'{\n  "schema_version": 1,\n  "note": "results of the previous release"\n}\n'


@pytest.mark.parametrize("spec", [
    "misspelt_metric.yaml",  # rejected while reading the spec
    "missing_values.yaml",  # rejected while reading the data
    "base_table_probability_text.yaml",  # rejected while reading the base table (last file read)
])
def test_failed_run_leaves_previous_results_untouched(spec: str, tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_bytes(PREVIOUS_RESULTS)
    before = sorted(p.name for p in out.iterdir())
    r = cli("run", BAD / spec, "--out", out, cwd=tmp_path)
    assert (out / "results.json").read_bytes() == PREVIOUS_RESULTS, "previous results.json was changed"
    assert sorted(p.name for p in out.iterdir()) == before, "files were added to the output directory"
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 2, f"exit {r.returncode}\n{r.stderr}"


# --------------------------------------------------------------------------- inputs a YAML file cannot hold


def _spec_text(test: str) -> str:
    return (BAD / "missing_data_file.yaml").read_text().replace("data/tset.csv", test)


def test_fifo_as_data_file_is_refused_without_reading(tmp_path: Path):
    """A FIFO would block the reader forever: it is refused from its file type, before anything opens it."""
    import os

    fifo = tmp_path / "preds.csv"
    os.mkfifo(fifo)
    (tmp_path / "spec.yaml").write_text(_spec_text("preds.csv"))
    for args in (["validate", "spec.yaml"], ["run", "spec.yaml", "--out", "out"]):
        r = subprocess.run([sys.executable, "-m", "reportgen", *args], cwd=tmp_path, capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert re.search(r"spec\.yaml:3:3: data\.test: 'preds\.csv' .*not a regular file but a FIFO", r.stderr), \
            r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["preds.csv", "spec.yaml"]


def test_gzip_csv_is_read_transparently(tmp_path: Path):
    (tmp_path / "data").symlink_to(BAD / "data", target_is_directory=True)
    plain, gz = tmp_path / "plain.yaml", tmp_path / "gz.yaml"
    plain.write_text(_spec_text("data/test.csv"))
    gz.write_text(_spec_text("data/test.csv.gz"))
    for engine in ("memory", "stream"):
        outs = []
        for spec in (plain, gz):
            out = tmp_path / f"out-{spec.stem}-{engine}"
            r = cli("run", spec, "--out", out, "--engine", engine, cwd=tmp_path)
            assert r.returncode == 0, r.stderr
            import json

            res = json.loads((out / "results.json").read_text())
            outs.append([m.get("value") for m in res["metrics"]])
        assert outs[0] == outs[1], engine


def test_ten_thousand_runs_are_refused_at_validation(tmp_path: Path):
    text = _spec_text("X").replace("  test: X\n", "  runs:\n" + "    - data/test.csv\n" * 10_000)
    spec = tmp_path / "runs.yaml"
    spec.write_text(text)
    r = cli("validate", spec, cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert re.search(r"runs\.yaml:3:3: data\.runs: .*at most 1000 items", r.stderr), r.stderr


def _unwritable(tmp_path: Path) -> Path:
    import os

    if os.geteuid() == 0:  # root writes through permission bits: /proc refuses new entries even to root
        return Path("/proc/reportgen-test-unwritable/out")
    d = tmp_path / "readonly"
    d.mkdir()
    d.chmod(0o555)
    return d / "out"


@pytest.mark.parametrize("where", ["unwritable", "existing_file", "below_a_file"])
def test_output_folder_that_cannot_be_written_is_refused_first(where: str, tmp_path: Path):
    (tmp_path / "data").symlink_to(BAD / "data", target_is_directory=True)
    spec = tmp_path / "spec.yaml"
    spec.write_text(_spec_text("data/test.csv"))
    (tmp_path / "afile").write_text("keep me\n")
    out = {"unwritable": _unwritable(tmp_path), "existing_file": tmp_path / "afile",
           "below_a_file": tmp_path / "afile" / "out"}[where]
    before = sorted(p.name for p in tmp_path.rglob("*"))
    r = cli("run", spec, "--out", out, cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    expect = {"unwritable": r"--out: cannot create .*out in ", "existing_file": r"is a file",
              "below_a_file": r"--out: .*afile/out cannot be created: .*afile is a file"}[where]
    assert re.search(expect, r.stderr), r.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    assert (tmp_path / "afile").read_text() == "keep me\n"
    assert where == "existing_file" or not out.exists()
