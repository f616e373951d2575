

def test_the_benchmark_script_runs(tmp_path, capsys):
    """benchmarks/numeric_scale.py on a tiny file (the figures are in benchmarks/README.md)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("numeric_scale", ROOT / "benchmarks" / "numeric_scale.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--rows", "3000", "--resamples", "10", "--values", "repeating", "--data-dir",
                     str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "ratio" in out and "smd" in out and "auc" in out
