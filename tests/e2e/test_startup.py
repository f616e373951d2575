"""Start-up and set-up (issue 27): `reportgen validate` imports nothing heavy, the benchmark scripts of both keep
working (argument parsing and their plans, no timing: the figures are in benchmarks/README.md), and the locks
./dev installs agree with pyproject.toml and with one another."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest

from conftest import ROOT

# imported where used (docs/contributing.md, "Start-up"): none of them is needed to check a spec and its data
HEAVY = ("sklearn", "scipy", "matplotlib", "weasyprint", "dask", "distributed", "pyhanko", "pypdf", "jinja2",
         "rich", "pyarrow.dataset", "pyarrow.parquet", "pyarrow.csv", "reportgen.report")

_MODULES = """
import json, sys
before = set(sys.modules)
{body}
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def _imported(body: str) -> set[str]:
    p = subprocess.run([sys.executable, "-c", _MODULES.format(body=body)], capture_output=True, text=True, cwd=ROOT,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    import json

    return set(json.loads(p.stdout.strip().splitlines()[-1]))


def test_validate_imports_nothing_heavy():
    body = ("from reportgen.cli import main\n"
            "try:\n    main(['validate', 'specs/compas.yaml'])\nexcept SystemExit as e:\n    assert e.code in (0, None)")
    mods = _imported(body)
    assert "reportgen.runner" in mods and "pandas" in mods  # it did check the data
    heavy = sorted(m for m in mods if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert not heavy, f"`reportgen validate` imported {heavy[:20]}: import them in the function that uses them"
    # pandas (3.x) imports pyarrow's core itself when it is installed, and a little more in read_csv; reportgen adds
    # no pyarrow module of its own (the Parquet reader is imported where a Parquet file is read)
    pandas_own = _imported("import io, pandas\npandas.read_csv(io.StringIO('a,b\\n1,x\\n'))")
    extra_arrow = sorted(m for m in mods - pandas_own if m == "pyarrow" or m.startswith("pyarrow."))
    assert not extra_arrow, extra_arrow


def test_installed_versions_agree_with_importlib_metadata(tmp_path, monkeypatch):
    """results.json's versions (reportgen/versions.py) read only the Version: line of the first dist-info along
    sys.path; what that cannot settle is importlib.metadata's to say, so the answer is always its answer."""
    from importlib import metadata

    from reportgen.runner import VERSIONED_PACKAGES
    from reportgen.versions import installed_versions

    def reference(name):
        try:
            return metadata.version(name)
        except (metadata.PackageNotFoundError, KeyError):  # KeyError: no Version, with importlib_metadata's finder
            return None

    names = [*VERSIONED_PACKAGES, "dask", "distributed", "pyhanko", "PyYAML", "scikit_learn", "no-such-package-x"]
    assert installed_versions(names) == {n: reference(n) for n in names}
    # a folder earlier on the path shadows the installed numpy; an egg-info and a dist-info without a Version line
    # are left to importlib.metadata
    (tmp_path / "numpy-0.0.1.dist-info").mkdir()
    (tmp_path / "numpy-0.0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: numpy\n"
                                                                  "Version: 0.0.1\n\nVersion: 9\n")
    (tmp_path / "Egg_Pkg-1.2.egg-info").write_text("Metadata-Version: 1.0\nName: Egg-Pkg\nVersion: 1.2\n")
    (tmp_path / "odd_pkg-3.dist-info").mkdir()
    (tmp_path / "odd_pkg-3.dist-info" / "METADATA").write_text("Name: odd-pkg\n\nVersion: 4\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    odd = ["numpy", "egg-pkg", "Odd.Pkg", "pandas"]
    assert installed_versions(odd) == {n: reference(n) for n in odd}
    assert installed_versions(["numpy"]) == {"numpy": "0.0.1"}


def test_installed_versions_agree_with_importlib_metadata_on_odd_folders(tmp_path, monkeypatch):
    """The review's two cases: a dist-info folder with an upper-case suffix (importlib case-folds it) and a legacy
    .egg directory earlier on the path (importlib reads its EGG-INFO): the same answers as importlib.metadata."""
    from importlib import metadata

    from reportgen.versions import installed_versions

    upper, egg = tmp_path / "upper", tmp_path / "egg"
    (upper / "numpy-0.0.1.DIST-INFO").mkdir(parents=True)
    (upper / "numpy-0.0.1.DIST-INFO" / "METADATA").write_text("Metadata-Version: 2.1\nName: numpy\nVersion: 0.0.1\n")
    (egg / "numpy-0.0.7-py3.11.egg" / "EGG-INFO").mkdir(parents=True)
    (egg / "numpy-0.0.7-py3.11.egg" / "EGG-INFO" / "PKG-INFO").write_text("Metadata-Version: 1.0\nName: numpy\n"
                                                                           "Version: 0.0.7\n")
    for folder in (upper, egg):
        with monkeypatch.context() as m:
            m.syspath_prepend(str(folder))
            assert installed_versions(["numpy", "pandas"]) == {n: metadata.version(n) for n in ("numpy", "pandas")}


def test_the_command_collects_its_oldest_generation_less_often():
    """`reportgen` (the console script, and `python -m reportgen`) runs Python's full collection 10x less often
    (reportgen/cli/__init__.py, _collect_less); importing reportgen or calling main() changes nothing."""
    body = ("import atexit, gc, sys\nbefore = gc.get_threshold()\nimport reportgen.cli\n"
            "assert gc.get_threshold() == before\n"
            "atexit.register(lambda: print(before, gc.get_threshold()))\n"
            "sys.argv = ['reportgen', '--version']\nreportgen.cli.console()")
    p = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    before, after = p.stdout.strip().splitlines()[-1].split(") (")
    young, middle, old = map(int, before.strip("()").split(","))
    assert tuple(map(int, after.strip("()").split(","))) == (young, middle, old * 10)

def test_compas_json_run_imports_no_sklearn_or_scipy(tmp_path):
    """A COMPAS JSON-only run (local bias included: k-means++ and the PCA projection are NumPy, Newcombe's z is
    stats/normal.py) imports neither scikit-learn nor scipy; predictability's classifiers and text features
    import them where they are used."""
    body = ("from reportgen.cli import main\n"
            f"try:\n    main(['run', 'specs/compas.yaml', '--out', {str(tmp_path / 'out')!r}, '--quiet', "
            "'--format', 'json'])\nexcept SystemExit as e:\n    assert e.code in (0, 1, None)")
    mods = _imported(body)
    assert "reportgen.stats.logan.seeding" in mods  # local bias did run
    heavy = sorted(m for m in mods if m.split(".")[0] in ("sklearn", "scipy"))
    assert not heavy, f"a COMPAS JSON-only run imported {heavy[:20]}"
    assert (tmp_path / "out" / "results.json").is_file()
    # nor what a JSON-only run on the memory engine never uses: the report, the streaming engine (the engine is
    # chosen in stats/loading.py), the families none of its metrics is in (imported on first use:
    # reportgen/families/__init__.py), the annotated-sample family, JUnit's XML (pydantic's plugin loader imports
    # importlib.metadata itself, so that is not checked here: reportgen/versions.py does not need it)
    unused = ("reportgen.report", "reportgen.stats.stream", "reportgen.stats.plan", "reportgen.stats.partstats",
              "reportgen.stats.executors", "reportgen.stats.fastcount", "reportgen.families.annotated",
              "reportgen.families.ranking", "reportgen.families.score_quality", "reportgen.families.selection",
              "reportgen.families.outcome_disparity", "reportgen.families.error_parity",
              "reportgen.families.predictability", "xml.etree")
    early = sorted(m for m in mods if any(m == u or m.startswith(u + ".") for u in unused))
    assert not early, f"a COMPAS JSON-only run imported {early[:20]}"


_FIRST_BATCH = """
import json, sys
from reportgen.stats import executors
seen = {{}}
real = executors.LocalExecutor.reduce


def scan_starts(self, *args, **kw):  # what was imported when pass 1 handed its partitions to the workers
    seen.setdefault("modules", sorted(sys.modules))
    return real(self, *args, **kw)


executors.LocalExecutor.reduce = scan_starts
from reportgen.cli import main
try:
    main(["run", {spec!r}, "--out", {out!r}, "--quiet", "--format", "json"])
except SystemExit as e:
    assert e.code in (0, 1, None), e.code
print(json.dumps({{"scan_starts": seen["modules"], "end": sorted(sys.modules)}}))
"""


def test_streamed_parquet_run_imports_no_pandas(tmp_path):
    """`reportgen run` of a streamed Parquet data set (the stream_scan benchmark's spec, 200,000 rows) starts its
    scan (pass 1's partitions handed to the workers) without the heavy modules, and imports no pandas at all: the
    distinct rows of its one-byte integer columns are encoded from NumPy columns (stats/fastcount.py, Columns),
    its checks read the distinct values pass 1 collected (reportgen/lazy.py: pandas is imported on first use);
    it writes the results of the memory engine."""
    import json

    bench = _script("bench_scale")
    data = bench.generate(tmp_path / "rows", 200_000, 7)
    spec = bench.write_spec(tmp_path, "stream.yaml", data.name, "stream", 20)
    p = subprocess.run([sys.executable, "-c", _FIRST_BATCH.format(spec=str(spec), out=str(tmp_path / "out"))],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    early = [m for m in got["scan_starts"] if m.split(".")[0] == "pandas"
             or any(m == h or m.startswith(h + ".") for h in HEAVY if h != "pyarrow.parquet")]
    assert not early, f"imported before the scan started: {early[:20]}"
    assert not [m for m in got["end"] if m.split(".")[0] == "pandas"], "a streamed Parquet run imported pandas"
    memory = bench.write_spec(tmp_path, "memory.yaml", data.name, "memory", 20)
    r = subprocess.run([sys.executable, "-m", "reportgen", "run", str(memory), "--out", str(tmp_path / "mem"),
                        "--quiet", "--format", "json"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode in (0, 1), r.stderr[-3000:]
    streamed, in_memory = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("out", "mem"))
    assert streamed["metrics"] == in_memory["metrics"]


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_startup_benchmark_plan(capsys):
    st = _script("startup")
    a = st.parse_args(["--spec", "specs/compas.yaml", "--repeats", "2"])
    assert [p.name for p in st.data_files(a.spec)] == ["train.csv", "val.csv", "test.csv"]
    assert st.main(["--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "pandas.read_csv" in out and " validate " in out and "--format json" in out
    tops, heavy = st.import_costs("import time: self [us] | cumulative | imported package\n"
                                  "import time:       100 |        200 |   numpy.core\n"
                                  "import time:       300 |     500000 | pandas\n"
                                  "import time:        10 |         10 | scipy\n")
    assert tops == {"pandas": 300e-6, "numpy": 100e-6, "scipy": 10e-6} and heavy == ["pandas", "scipy"]
    for bad in (["--repeats", "0"], ["--spec", "no/such.yaml"]):
        with pytest.raises(SystemExit) as e:
            st.parse_args(bad)
        assert e.value.code == 2


def test_setup_benchmark_plan(capsys):
    su = _script("setup_time")
    a = su.parse_args(["--installers", "pip,uv", "--caches", "cold,warm", "--commands", "demo"])
    assert su.plan(a) == [("pip", "cold"), ("pip", "warm"), ("uv", "cold"), ("uv", "warm")]
    assert su.main(["--dry-run", "--branch", "main", "--installers", "uv", "--caches", "cold"]) == 0
    out = capsys.readouterr().out
    assert "git clone --branch main" in out and "./dev demo" in out and "./dev test" in out
    assert su.INSTALLED.findall("== installed locks/demo.txt in 12 s (CPU 3.5 s)\n") == [("locks/demo.txt", "12", "3.5")]
    for bad in (["--installers", "conda"], ["--caches", "warm"], ["--commands", ""]):
        with pytest.raises(SystemExit) as e:
            su.parse_args(bad)
        assert e.value.code == 2


# --------------------------------------------------------------------------- the locks ./dev installs

LOCKS = {"demo": (), "test": ("test",), "docs": ("test", "docs"), "bench": ("test", "bench")}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==(\S+)(?: ; (.*?))?(?: \\)?$", re.M)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins(lock: str) -> dict[tuple[str, str], str]:
    text = (ROOT / "locks" / f"{lock}.txt").read_text(encoding="utf-8")
    return {(_norm(m.group(1)), m.group(3) or ""): m.group(2) for m in PIN.finditer(text)}


def _requirements(extras: tuple[str, ...]) -> set[str]:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = list(project["dependencies"]) + [r for e in extras for r in project["optional-dependencies"][e]]
    return {_norm(re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", r).group(0)) for r in reqs}


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib")
@pytest.mark.parametrize("lock", sorted(LOCKS))
def test_lock_pins_every_requirement_with_hashes(lock):
    pins = _pins(lock)
    names = {n for n, _ in pins}
    missing = _requirements(LOCKS[lock]) - names
    assert not missing, f"locks/{lock}.txt lacks {sorted(missing)}: run ./dev lock after changing pyproject.toml"
    text = (ROOT / "locks" / f"{lock}.txt").read_text(encoding="utf-8")
    blocks = [b for b in re.split(r"\n(?=[A-Za-z0-9])", text) if PIN.match(b)]
    assert len(blocks) == len(pins) and all("--hash=sha256:" in b for b in blocks)


def test_locks_agree_on_every_version():
    seen: dict[tuple[str, str], tuple[str, str]] = {}
    for lock in LOCKS:
        for key, version in _pins(lock).items():
            first = seen.setdefault(key, (lock, version))
            assert first[1] == version, f"{key[0]} {key[1]}: {first[1]} in locks/{first[0]}.txt, {version} in {lock}"


def test_demo_lock_leaves_out_the_test_tools():
    names = {n for n, _ in _pins("demo")}
    assert not {"pytest", "hypothesis", "mypy", "ruff", "dask", "mkdocs"} & names
