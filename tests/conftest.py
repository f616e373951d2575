import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings as _hypothesis_settings

ROOT = Path(__file__).resolve().parents[1]

# Generated data (docs/contributing.md, "Generated data"): the suite draws the same examples on every machine and
# every run ("repeatable": derandomized, no example database), so a clone's result does not depend on the day's
# draw; REPORTGEN_HYPOTHESIS=explore draws new examples each run and remembers failures in .hypothesis/. Loaded
# here, before any test module builds its @settings, so every test inherits it.
_hypothesis_settings.register_profile("repeatable", derandomize=True, database=None, print_blob=True)
_hypothesis_settings.register_profile("explore", print_blob=True)
_hypothesis_settings.load_profile(__import__("os").environ.get("REPORTGEN_HYPOTHESIS", "repeatable"))


def rows_from_cells(cells):
    """cells: list per group of (n_T0, n_T1) -> (groups, y) arrays, groups in order."""
    g, y = [], []
    for a, (n0, n1) in enumerate(cells):
        g += [a] * (n0 + n1)
        y += [0] * n0 + [1] * n1
    return np.array(g), np.array(y)


def run_cli(*args, cwd=None):
    import subprocess

    return subprocess.run([sys.executable, "-m", "reportgen", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd)


def cli_in_process(*args, cwd=None, env=None):
    """`run_cli` without a Python start (about 1-3 s on a loaded machine): the same entry point, arguments, exit
    code, stdout and stderr, through click's CliRunner in this process, in ``cwd`` when given (os.chdir: tests run
    one at a time) with ``env`` set over os.environ (a value None unsets it). An exception the CLI does not turn into
    an exit code is raised here (a subprocess would print its traceback and exit 1), so a test's `Traceback not in
    stderr` cannot pass on it. Keep `run_cli` where the process itself is tested: `python -m reportgen`, the console
    script, imports at start-up, signals, the environment of a fresh process, concurrent runs."""
    import os
    import subprocess

    from click.testing import CliRunner

    from reportgen.cli import main

    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        r = CliRunner(env=env).invoke(main, [str(a) for a in args], catch_exceptions=False)
    finally:
        os.chdir(old)
    return subprocess.CompletedProcess(["reportgen", *map(str, args)], r.exit_code, r.stdout, r.stderr)


@pytest.fixture(scope="session")
def root():
    return ROOT


SAMPLE_SPECS = sorted(p.stem for p in (ROOT / "specs").glob("*.yaml"))


@pytest.fixture(scope="session")
def sample_runs(tmp_path_factory):
    """Every sample spec (specs/*.yaml) run once per test session, JSON only, concurrently (independent
    subprocesses, one per CPU): {name: (CompletedProcess, path of its results.json)}. Run from the repository
    root with the relative spec path, so spec.path is the same on every machine. Shared by the snapshot tests
    and the end-to-end CLI test, which used to run the same specs again."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    out_root = tmp_path_factory.mktemp("sample_runs")

    def one(name):
        out = out_root / name
        r = run_cli("run", f"specs/{name}.yaml", "--out", out, "--quiet", "--format", "json", cwd=ROOT)
        return r, out / "results.json"

    with ThreadPoolExecutor(max_workers=max(1, min(len(SAMPLE_SPECS), os.cpu_count() or 1))) as pool:
        futures = {name: pool.submit(one, name) for name in SAMPLE_SPECS}
        return {name: f.result() for name, f in futures.items()}
