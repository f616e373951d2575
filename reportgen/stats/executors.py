"""Who runs the streaming engine's partition functions: a thread pool in this process (``engine: stream``) or
Dask workers (``engine: dask``). Both reduce the same picklable partition functions
(:mod:`reportgen.stats.partstats`) with the same merge; nothing else differs.
"""

from __future__ import annotations

import itertools
import sys
import threading

from reportgen.stats import counts
from reportgen.spec.errors import Problem, SpecError

MSG_DASK_MISSING = ("data.engine: dask needs the Dask extra, which is not installed; install it with "
                    "pip install 'reportgen[dask]' (dask and distributed), or use engine: stream on one machine")


class LocalExecutor:
    """Partitions on a thread pool in this process (NumPy, pandas and Arrow release the GIL)."""

    name = "stream"

    def reduce(self, fn, items: list, combine, on_done=None, meanwhile=None, on_idle=None):
        """``combine`` the ``fn(x)`` as they finish (at most one result per worker waits in memory). ``meanwhile``:
        work for this thread while the workers start (see :func:`meanwhile`); each worker then has a second item
        queued, so that none waits for this thread (at most two results per worker wait). ``on_idle``: called
        once, when a worker has finished and no item is left for it (the pass's tail: a core is free)."""
        from concurrent.futures import ThreadPoolExecutor, as_completed

        acc = None
        workers = max(1, min(len(items), counts._workers()))
        with ThreadPoolExecutor(workers) as ex:
            pending = iter(items)
            running = {ex.submit(fn, x) for x in itertools.islice(pending, workers * (2 if meanwhile else 1))}
            if meanwhile is not None:
                _meanwhile(meanwhile)
            done_n = 0
            while running:
                f = next(as_completed(running))
                running.discard(f)
                nxt = next(pending, None)
                if nxt is not None:
                    running.add(ex.submit(fn, nxt))
                elif on_idle is not None and len(running) < workers:
                    on_idle()
                    on_idle = None
                r = f.result()
                acc = r if acc is None else combine(acc, r)
                done_n += 1
                if on_done:
                    on_done(done_n, len(items))
        return acc

    def close(self) -> None:
        pass


class DaskExecutor:
    """The same partition functions on Dask workers (a LocalCluster unless a scheduler address is given)."""

    name = "dask"

    def __init__(self, scheduler: str | None, workers: int):
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise SpecError([Problem("", None, None, "data.engine", MSG_DASK_MISSING)]) from None
        self.cluster = None
        if scheduler:
            self.client = Client(scheduler)
        else:
            self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                        dashboard_address=None, silence_logs=40)
            self.client = Client(self.cluster)
        self.address = scheduler or "LocalCluster"
        self.workers = len(self.client.scheduler_info().get("workers", {}))

    def reduce(self, fn, items: list, combine, on_done=None, meanwhile=None, on_idle=None):
        """``combine`` the partitions' results on this process as workers finish them, releasing each.
        ``on_idle`` is not called: the workers are other processes, this one is idle throughout."""
        from dask.distributed import as_completed

        acc = None
        futures = self.client.map(fn, items, pure=False)
        if meanwhile is not None:
            _meanwhile(meanwhile)
        for done, f in enumerate(as_completed(futures), 1):
            r = f.result()
            f.release()
            acc = r if acc is None else combine(acc, r)
            if on_done:
                on_done(done, len(items))
        return acc

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()



_SWITCH = threading.Lock()
_switching = {"runs": 0, "interval": 0.005}


def _meanwhile(work) -> None:
    """Run ``work`` on this thread while the workers read: pure-Python work (an import) that would otherwise run
    before or after them on an idle core. The workers need the interpreter lock only between NumPy and Arrow
    calls, so the lock is made to change hands every half millisecond meanwhile (Python's default, 5 ms,
    leaves a worker waiting for it after each such call: a quarter of their throughput while this thread works,
    measured; benchmarks/README.md, Streaming at scan speed); the interval is restored when the last of such
    runs in this process ends."""
    with _SWITCH:
        if _switching["runs"] == 0:
            _switching["interval"] = sys.getswitchinterval()
            sys.setswitchinterval(min(_switching["interval"], 0.0005))
        _switching["runs"] += 1
    try:
        work()
    finally:
        with _SWITCH:
            _switching["runs"] -= 1
            if _switching["runs"] == 0:
                sys.setswitchinterval(_switching["interval"])


def make_executor(ls, name: str, scheduler: str | None = None):
    if name == "dask":
        d = ls.spec.data.dask
        try:
            return DaskExecutor(scheduler or d.scheduler, d.workers)
        except SpecError as e:
            raise SpecError([ls.problem(("data", "engine"), p.message) for p in e.problems]) from None
    return LocalExecutor()
