"""Data entries that are SQL queries against a real PostgreSQL server, started by this module.

A throw-away cluster (Debian's postgresql package: initdb on a temporary folder, listening only on a unix socket
there, password authentication) is created at the start and removed at the end; as root the server runs as the
`postgres` user, as PostgreSQL requires. Without PostgreSQL or psycopg the tests skip and say why (`./dev test`
installs both). The same COMPAS audit as tests/data/test_sql.py: the numbers equal the CSV files' in every engine;
bad input exits 2 naming the key, with the server's own message and never the password.
"""

from __future__ import annotations

import glob
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from tests.data.test_sql import COMPAS, FILES, ROLES, assert_same_numbers, compas_spec, query_block, run
from tests.spec.test_bad_inputs import cli

pytestmark = pytest.mark.postgres

PASSWORD = "s3cret-Pa55-for-tests"
ENV = "PGPASSWORD_REPORTGEN_TEST"


def _as_server_user(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@pytest.fixture(scope="module")
def pg():
    """(socket folder, port) of a fresh cluster with user `auditor` (password PASSWORD) and database `audit`."""
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'reportgen[sql]'")
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql; ./dev test installs it)")
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        pytest.skip("running as root without runuser: PostgreSQL refuses to run as root")
    bindir = Path(found[-1]).parent
    base = Path(tempfile.mkdtemp(prefix="reportgen-pg-"))
    base.chmod(0o755)
    pwfile = base / "pw"
    pwfile.write_text(PASSWORD + "\n")
    if os.geteuid() == 0:
        shutil.chown(base, "postgres")
        shutil.chown(pwfile, "postgres")
    data, port = base / "data", 54329 + os.getpid() % 500
    try:
        subprocess.run(_as_server_user([str(bindir / "initdb"), "-D", str(data), "-U", "auditor", "-A",
                                        "scram-sha-256", f"--pwfile={pwfile}", "-E", "UTF8", "--locale=C"]),
                       check=True, capture_output=True, timeout=120)
        subprocess.run(_as_server_user([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(base / "log"), "-w",
                                        "-t", "60", "-o", f"-k {base} -c listen_addresses='' -p {port}", "start"]),
                       check=True, capture_output=True, timeout=120)
    except subprocess.CalledProcessError as e:
        shutil.rmtree(base, ignore_errors=True)
        pytest.skip(f"could not start a PostgreSQL cluster: {e.stderr.decode(errors='replace')[-300:]}")
    try:
        with psycopg.connect(host=str(base), port=port, user="auditor", password=PASSWORD, dbname="postgres",
                             autocommit=True) as con:
            con.execute("create database audit")
        with psycopg.connect(host=str(base), port=port, user="auditor", password=PASSWORD, dbname="audit") as con:
            for role in ROLES:
                _load(con, "val" if role == "validation" else role, COMPAS / FILES[role])
        yield base, port
    finally:
        subprocess.run(_as_server_user([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
                       capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)


def _load(con, table: str, path: Path) -> None:
    df = pd.read_csv(path, keep_default_na=False, na_values=[""])
    types = {"int64": "bigint", "float64": "double precision"}
    cols = ", ".join(f'"{c}" {types.get(str(t), "text")}' for c, t in df.dtypes.items())
    con.execute(f"create table {table} ({cols})")
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    with con.cursor().copy(f"copy {table} from stdin with (format csv, header true)") as cp:
        cp.write(buf.getvalue())


def _url(pg, user: str = "auditor") -> str:
    base, port = pg
    return f"postgresql://{user}@/audit?host={base}&port={port}"


@pytest.fixture
def env(monkeypatch):
    monkeypatch.setenv(ENV, PASSWORD)


@pytest.fixture(scope="module")
def from_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("pgfiles")
    (d / "files.yaml").write_text(compas_spec("data:\n" + "".join(f"  {r}: {COMPAS / FILES[r]}\n" for r in ROLES)))
    return run(d / "files.yaml", "memory")


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_postgres_queries_give_the_numbers_of_the_files(pg, env, tmp_path, from_files, engine):
    (tmp_path / "pg.yaml").write_text(compas_spec(query_block(_url(pg), f", password_env: {ENV}")))
    res = run(tmp_path / "pg.yaml", engine)
    assert_same_numbers(res, from_files)
    for e in res["data"]:
        assert e["query"]["kind"] == "postgresql" and e["query"]["database"] == _url(pg)
        assert e["rows"] == len(pd.read_csv(COMPAS / FILES[e["role"]]))
    assert PASSWORD not in json.dumps(res)


@pytest.mark.slow
def test_postgres_query_on_dask_equals_the_files(pg, env, tmp_path, from_files):
    from dask.distributed import LocalCluster

    (tmp_path / "pg.yaml").write_text(compas_spec(query_block(_url(pg), f", password_env: {ENV}")))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster:
        res = run(tmp_path / "pg.yaml", "dask", cluster.scheduler_address)
    assert res["engine"]["name"] == "dask"
    assert_same_numbers(res, from_files)


def test_the_cli_run_records_the_query_and_not_the_password(pg, env, tmp_path):
    (tmp_path / "pg.yaml").write_text(compas_spec(query_block(_url(pg), f", password_env: {ENV}")))
    r = cli("run", "pg.yaml", "--out", "out", "--format", "json", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    text = (tmp_path / "out" / "results.json").read_text()
    assert PASSWORD not in text and PASSWORD not in r.stdout + r.stderr
    assert json.loads(text)["data"][-1]["query"]["sql"] == "select * from test order by id"


def _bad(pg, tmp_path: Path, test_entry: str) -> str:
    block = (f"data:\n  train: {COMPAS / 'train.csv'}\n  validation: {COMPAS / 'val.csv'}\n  test: {test_entry}\n")
    (tmp_path / "bad.yaml").write_text(compas_spec(block))
    r = cli("run", "bad.yaml", "--out", "out", "--format", "json", "-q", cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and PASSWORD not in r.stderr
    assert re.search(r"bad\.yaml:\d+:\d+: data\.test", r.stderr), r.stderr
    return r.stderr


def test_bad_input_from_a_server(pg, tmp_path, monkeypatch):
    q = f"sql: 'select * from test', database: '{_url(pg)}', password_env: {ENV}"
    monkeypatch.setenv(ENV, "wrong-" + PASSWORD)
    assert "password authentication failed" in _bad(pg, tmp_path, f"{{{q}}}")
    monkeypatch.delenv(ENV)
    assert f"{ENV} (password_env) is not set" in _bad(pg, tmp_path, f"{{{q}}}")
    monkeypatch.setenv(ENV, PASSWORD)
    base, port = pg
    gone = f"postgresql://auditor@/audit?host={base}/nowhere&port={port}"
    err = _bad(pg, tmp_path, f"{{sql: 'select 1', database: '{gone}', password_env: {ENV}}}")
    assert "cannot connect to" in err and "No such file or directory" in err
    err = _bad(pg, tmp_path, f"{{sql: 'select * from no_table', database: '{_url(pg)}', password_env: {ENV}}}")
    assert 'relation "no_table" does not exist' in err
    err = _bad(pg, tmp_path, f"{{sql: 'select * from test where false', database: '{_url(pg)}', "
                             f"password_env: {ENV}}}")
    assert "returned no rows" in err
    err = _bad(pg, tmp_path, f"{{sql: 'select *, array[1, 2] as pair from test', database: '{_url(pg)}', "
                             f"password_env: {ENV}}}")
    assert "column 'pair' holds list values" in err
    err = _bad(pg, tmp_path, f"{{sql: 'delete from test', database: '{_url(pg)}', password_env: {ENV}}}")
    assert "syntax error" in err or "read-only" in err


def test_a_confined_run_reads_no_server(pg, env, tmp_path):
    (tmp_path / "bad.yaml").write_text(compas_spec(f"data:\n  train: {COMPAS / 'train.csv'}\n  validation: "
                                                   f"{COMPAS / 'val.csv'}\n  test: {{sql: 'select * from test', "
                                                   f"database: '{_url(pg)}', password_env: {ENV}}}\n"))
    r = cli("run", "bad.yaml", "--confine", str(COMPAS.parents[1]), "--out", "out", "--format", "json", "-q",
            cwd=tmp_path)
    assert r.returncode == 2 and "a confined run" in r.stderr and "reads no database server" in r.stderr
    assert "Traceback" not in r.stderr and PASSWORD not in r.stderr
