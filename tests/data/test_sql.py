"""Data entries that are SQL queries, against SQLite (reportgen/data/sql.py, docs/guide/databases.md).

The sample COMPAS files are loaded into a SQLite database; the same audit with its train, validation and test
entries as queries must give the same numbers as with the CSV files, in every engine; results.json records the
query, the database and the hash of the rows read; bad input exits 2 naming the spec key with the database's
own message. tests/data/test_sql_postgres.py runs the same audit against a real PostgreSQL server.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from reportgen.runner import run_spec
from reportgen.spec.errors import SpecError
from reportgen.spec.model import load_spec
from tests.spec.test_bad_inputs import cli

ROOT = Path(__file__).resolve().parents[2]
COMPAS = ROOT / "samples" / "compas"
ROLES = ("train", "validation", "test")
FILES = {"train": "train.csv", "validation": "val.csv", "test": "test.csv"}
COMPARED = ("metrics", "attributes", "gates", "sweeps", "local_bias")


def compas_spec(data_block: str, *, resamples: int = 200) -> str:
    """specs/compas.yaml with its data entries replaced by ``data_block`` and fewer resamples (a quick run)."""
    text = (ROOT / "specs" / "compas.yaml").read_text(encoding="utf-8")
    text = re.sub(r"^data:.*?\n(?=attributes:)", data_block, text, flags=re.S | re.M)
    text = text.replace("resamples: 1000", f"resamples: {resamples}")
    return re.sub(r"formats: \[.*\]", "formats: [json]", text)


def query_block(database: str, extra: str = "") -> str:
    lines = ["data:"]
    for role in ROLES:
        table = "val" if role == "validation" else role
        lines.append(f"  {role}: {{sql: 'select * from {table} order by id', database: '{database}'{extra}}}")
    return "\n".join(lines) + "\n"


def csv_block() -> str:
    return "data:\n" + "".join(f"  {r}: {COMPAS / FILES[r]}\n" for r in ROLES)


def load_tables(con) -> None:
    """The three sample files as tables train, val, test (text columns stay text, numbers numbers, NULLs)."""
    for role in ROLES:
        df = pd.read_csv(COMPAS / FILES[role], keep_default_na=False, na_values=[""])
        df.to_sql("val" if role == "validation" else role, con, index=False, if_exists="replace")


@pytest.fixture(scope="module")
def sqlite_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("sqlite")
    con = sqlite3.connect(d / "audit.db")
    load_tables(con)
    con.commit()
    con.close()
    (d / "audit.yaml").write_text(compas_spec(query_block("audit.db")), encoding="utf-8")
    (d / "files.yaml").write_text(compas_spec(csv_block()), encoding="utf-8")
    return d


def run(spec: Path, engine: str, scheduler: str | None = None) -> dict:
    return run_spec(load_spec(spec), engine=engine, scheduler=scheduler)


@pytest.fixture(scope="module")
def from_files(sqlite_dir):
    return run(sqlite_dir / "files.yaml", "memory")


def assert_same_numbers(a: dict, b: dict) -> None:
    for key in COMPARED:
        assert json.dumps(a.get(key), sort_keys=True) == json.dumps(b.get(key), sort_keys=True), key


def canonical_sha(columns, rows) -> str:
    """The canonical serialisation of docs/guide/databases.md, written here from the docs: header, then each row,
    NULL empty, floats shortest round-trip, booleans true/false; minimal RFC 4180 quoting; \\n line ends."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow(["" if v is None else ("true" if v is True else "false" if v is False else
                                          repr(v) if isinstance(v, float) else str(v)) for v in r])
    return hashlib.sha256(buf.getvalue().encode("utf-8")).hexdigest()


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_sqlite_queries_give_the_numbers_of_the_files(sqlite_dir, from_files, engine):
    res = run(sqlite_dir / "audit.yaml", engine)
    assert_same_numbers(res, from_files)
    entries = {d["role"]: d for d in res["data"]}
    assert set(entries) == set(ROLES)
    con = sqlite3.connect(sqlite_dir / "audit.db")
    for role in ROLES:
        e = entries[role]
        table = "val" if role == "validation" else role
        assert e["query"] == {"sql": f"select * from {table} order by id", "database": "audit.db", "kind": "sqlite"}
        cur = con.execute(f"select * from {table} order by id")
        rows = cur.fetchall()
        assert e["rows"] == len(rows) == len(pd.read_csv(COMPAS / FILES[role]))
        assert e["sha256"] == canonical_sha([d[0] for d in cur.description], rows)
    con.close()


@pytest.mark.slow
def test_sqlite_query_on_dask_equals_the_files(sqlite_dir, from_files):
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster:
        res = run(sqlite_dir / "audit.yaml", "dask", cluster.scheduler_address)
    assert res["engine"]["name"] == "dask"
    assert_same_numbers(res, from_files)


def test_changed_rows_change_the_hash_and_the_cli_writes_the_query(tmp_path):
    con = sqlite3.connect(tmp_path / "audit.db")
    load_tables(con)
    con.commit()
    spec = tmp_path / "audit.yaml"
    spec.write_text(compas_spec(query_block("sqlite:///audit.db")), encoding="utf-8")
    r = cli("run", spec.name, "--out", "out1", "--format", "json", "-q", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    con.execute("update test set recid_pred = 1 - recid_pred where id = (select min(id) from test)")
    con.commit()
    con.close()
    r = cli("run", spec.name, "--out", "out2", "--format", "json", "-q", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    one, two = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("out1", "out2"))
    sha = [{d["role"]: d["sha256"] for d in doc["data"]} for doc in (one, two)]
    assert sha[0]["train"] == sha[1]["train"] and sha[0]["test"] != sha[1]["test"]
    assert one["data"][-1]["query"]["database"] == "sqlite:///audit.db"[len("sqlite:///"):]
    assert not list(tmp_path.glob("out*/*.csv")), "the rows read are not left in the output folder"


def _bad(tmp_path: Path, test_entry: str, *, setup: str = "", key: str = "data.test") -> str:
    """Run a spec whose data.test is ``test_entry`` (the other entries files) and return stderr, asserting exit 2
    with no traceback."""
    con = sqlite3.connect(tmp_path / "audit.db")
    load_tables(con)
    if setup:
        con.executescript(setup)
    con.commit()
    con.close()
    block = (f"data:\n  train: {COMPAS / 'train.csv'}\n  validation: {COMPAS / 'val.csv'}\n"
             f"  test: {test_entry}\n")
    (tmp_path / "bad.yaml").write_text(compas_spec(block), encoding="utf-8")
    r = cli("run", "bad.yaml", "--out", "out", "--format", "json", "-q", cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    assert re.search(rf"bad\.yaml:\d+:\d+: {re.escape(key)}", r.stderr), r.stderr
    assert not (tmp_path / "out" / "results.json").exists()
    return r.stderr


def test_a_failing_query_names_the_key_and_the_databases_message(tmp_path):
    err = _bad(tmp_path, "{sql: 'select * from no_such_table', database: audit.db}")
    assert "no such table: no_such_table" in err


def test_an_empty_result_is_refused(tmp_path):
    err = _bad(tmp_path, "{sql: 'select * from test where 1 = 0', database: audit.db}")
    assert "returned no rows" in err and "two_year_recid" in err


def test_a_column_of_a_type_without_text_is_refused(tmp_path):
    err = _bad(tmp_path, "{sql: 'select *, randomblob(4) as blob_col from test', database: audit.db}")
    assert "column 'blob_col' holds bytes values" in err and "CAST" in err


def test_a_score_column_of_text_is_refused_as_in_a_file(tmp_path):
    err = _bad(tmp_path, "{sql: \"select id, sex, race, race_pred, two_year_recid, age, priors_count, "
                         "juv_fel_count, 'high' as recid_score from test\", database: audit.db}",
               key="tasks.recidivism.score")
    assert "score column 'recid_score' in sql:data.test is not numeric (e.g. 'high')" in err


def test_a_missing_database_and_a_writing_statement(tmp_path):
    err = _bad(tmp_path, "{sql: 'select 1', database: nowhere.db}")
    assert "'nowhere.db' does not exist" in err
    err = _bad(tmp_path, "{sql: 'delete from test', database: audit.db}")
    assert "readonly" in err.lower() or "read-only" in err.lower() or "not a SELECT" in err
    assert len(pd.read_sql("select * from test", sqlite3.connect(tmp_path / "audit.db"))) > 0


def test_attach_is_refused_so_a_query_reads_only_its_file(tmp_path):
    sqlite3.connect(tmp_path / "other.db").execute("create table t(x)").connection.commit()
    err = _bad(tmp_path, "{sql: \"attach database 'other.db' as o\", database: audit.db}")
    assert "not authorized" in err


def test_confinement_refuses_a_database_outside_the_folder(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    con = sqlite3.connect(outside / "audit.db")
    load_tables(con)
    con.commit()
    inner = tmp_path / "spec"
    inner.mkdir()
    block = "data:\n" + "".join(f"  {r}: {{sql: 'select * from {'val' if r == 'validation' else r}', "
                                f"database: ../elsewhere/audit.db}}\n" for r in ROLES)
    (inner / "a.yaml").write_text(compas_spec(block), encoding="utf-8")
    r = cli("run", "a.yaml", "--confine", "--out", "out", "--format", "json", "-q", cwd=inner)
    assert r.returncode == 2 and "resolves outside the confined folder" in r.stderr and "Traceback" not in r.stderr
    assert r.stderr.count("data.") == 3, r.stderr  # every entry at once, each once


def test_spec_checks_of_a_query_entry(tmp_path):
    bad = {
        "{sql: 'select 1', database: 'postgresql://u:hunter2@localhost/db'}": "holds a password",
        "{sql: 'select 1', database: audit.db, password_env: X}": "password_env is for a PostgreSQL server",
        "{sql: 'select 1', database: 'mysql://u@h/db'}": "'mysql' databases are not supported",
    }
    for entry, want in bad.items():
        (tmp_path / "s.yaml").write_text(compas_spec(f"data:\n  test: {entry}\n"), encoding="utf-8")
        r = cli("validate", "s.yaml", cwd=tmp_path)
        assert r.returncode == 2 and want in r.stderr, (entry, r.stderr)
        assert "hunter2" not in r.stderr and "Traceback" not in r.stderr
    with pytest.raises(SpecError):
        load_spec(tmp_path / "s.yaml")


def test_runs_as_queries_equal_the_run_files_and_the_report_shows_the_query(tmp_path):
    from reportgen.report import render_html

    spec_text = (ROOT / "specs" / "compas_runs.yaml").read_text(encoding="utf-8")
    spec_text = re.sub(r"resamples: \d+", "resamples: 100", spec_text)
    con = sqlite3.connect(tmp_path / "runs.db")
    files = sorted((COMPAS / "runs").glob("run*.csv"))
    for i, f in enumerate(files):
        pd.read_csv(f, keep_default_na=False, na_values=[""]).to_sql(f"run{i}", con, index=False)
    con.commit()
    con.close()
    as_files = re.sub(r"\.\./samples", str(ROOT / "samples"), spec_text)
    as_queries = re.sub(r"  runs:\n(    - .*\n)+", "  runs:\n" + "".join(
        f"    - {{sql: 'select * from run{i}', database: runs.db}}\n" for i in range(len(files))), as_files)
    assert as_queries != as_files
    (tmp_path / "files.yaml").write_text(as_files, encoding="utf-8")
    (tmp_path / "queries.yaml").write_text(as_queries, encoding="utf-8")
    a, b = run(tmp_path / "files.yaml", "memory"), run(tmp_path / "queries.yaml", "memory")
    assert_same_numbers(a, b)
    runs = [d for d in b["data"] if d["role"] == "runs"]
    assert [d["path"] for d in runs] == [f"sql:data.runs[{i}]" for i in range(len(files))]
    html = render_html(b, as_queries)
    assert "select * from run3" in html and "runs.db" in html and "SHA-256 of the rows read" in html


def test_python_api_reads_a_query_entry(sqlite_dir, from_files):
    import yaml

    import reportgen

    spec = yaml.safe_load((sqlite_dir / "audit.yaml").read_text(encoding="utf-8"))
    res = reportgen.run(spec, base_dir=sqlite_dir)
    assert_same_numbers(res.raw, from_files)
    assert res.raw["data"][-1]["query"]["database"] == "audit.db"


def test_text_with_separators_quotes_and_line_breaks_survives_the_rows_read(tmp_path):
    """Group names holding a comma, a double quote and a line break, a NULL and an empty text: the groups are
    counted as written in the database, the NULL and the empty text as missing."""
    con = sqlite3.connect(tmp_path / "odd.db")
    df = pd.read_csv(COMPAS / "test.csv", keep_default_na=False, na_values=[""])
    odd = {"Male": 'M, "m"\nale', "Female": "Fe\tmale"}
    df["sex"] = [odd[v] for v in df["sex"]]
    df.loc[:4, "sex"] = None
    df.loc[5:7, "sex"] = ""
    df.to_sql("test", con, index=False)
    con.commit()
    con.close()
    spec = {"version": 1, "data": {"test": {"sql": "select * from test order by id", "database": "odd.db"}},
            "attributes": {"sex": {"column": "sex", "groups": list(odd.values())}},
            "tasks": {"recid": {"column": "two_year_recid", "positive": 1, "predicted": "recid_pred"}},
            "base": {"source": "test"}, "metrics": ["demographic_parity"],
            "intervals": {"bootstrap": {"resamples": 50, "seed": 0}}}
    import reportgen

    res = reportgen.run(spec, base_dir=tmp_path).raw
    (attr,) = res["attributes"]
    sizes = attr["group_sizes"][0]["sizes"]
    want = df["sex"].value_counts()
    assert sizes == {f"sex={odd['Male']}": int(want[odd["Male"]]), f"sex={odd['Female']}": int(want[odd["Female"]])}
    assert sum(sizes.values()) == len(df) - 8
