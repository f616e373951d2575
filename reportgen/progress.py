"""What a run says while it works, on stderr: a live status line on a terminal, plain lines elsewhere.

Modes (chosen by the CLI):

* ``terminal`` — stderr is a terminal: a rich spinner with the current step and its elapsed time; a step that
  took longer than a second leaves a line ``✓ step (2.3 s)`` behind, shorter ones leave nothing.
* ``plain`` — stderr is not a terminal (CI logs, pipes): one line per step that took a second or more, when it
  ends, ``reportgen [  9.1 s] rendering report.pdf: 5.2 s``, and a last line ``reportgen [  9.8 s] done``.
* ``json`` — ``--json-log``: one JSON object per line, ``{"t": seconds since start, "event": "step",
  "step": "..."}``, and a final ``{"event": "done", ...}`` written by the CLI.
* ``quiet`` — ``--quiet``: nothing (errors are still printed).

Every mode is a callable taking the step text, so the runner only ever calls ``say("...")``.
"""

from __future__ import annotations

import json
import sys
import time

SLOW_STEP = 1.0  # seconds: steps at least this long leave a line behind on a terminal


class Reporter:
    def __init__(self, mode: str, stream=None):
        self.mode = mode
        self.stream = stream or sys.stderr
        self.t0 = time.perf_counter()
        self._step: str | None = None
        self._step_t = self.t0
        self._status = None
        if mode == "terminal":
            from rich.console import Console

            self._console = Console(file=self.stream, highlight=False)
            self._status = self._console.status("starting", spinner="dots")
            self._status.start()

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def __call__(self, step: str) -> None:
        now = time.perf_counter()
        if self.mode == "quiet":
            return
        if self.mode == "plain":
            self._finish_step(now)
        elif self.mode == "json":
            self.event("step", step=step)
        elif self.mode == "terminal":
            self._finish_step(now)
            self._status.update(f"{step}")
        self._step, self._step_t = step, now

    def update(self, text: str) -> None:
        """Progress within the current step (e.g. partitions read): the spinner's text on a terminal only."""
        if self.mode == "terminal" and self._status is not None:
            self._status.update(f"{self._step}: {text}" if self._step else text)

    def _finish_step(self, now: float) -> None:
        if self._step is None or now - self._step_t < SLOW_STEP:
            return
        if self.mode == "terminal":
            self._console.print(f"[green]✓[/green] {self._step} [dim]({now - self._step_t:.1f} s)[/dim]")
        elif self.mode == "plain":
            print(f"reportgen [{now - self.t0:6.1f} s] {self._step}: {now - self._step_t:.1f} s", file=self.stream,
                  flush=True)

    def event(self, event: str, **fields) -> None:
        if self.mode != "json":
            return
        rec = {"t": round(self.elapsed(), 3), "event": event, **fields}
        print(json.dumps(rec, ensure_ascii=False, sort_keys=False), file=self.stream, flush=True)

    def close(self, *, ok: bool = True) -> None:
        if self.mode == "terminal" and self._status is not None:
            self._finish_step(time.perf_counter())
            self._status.stop()
            self._status = None
        elif self.mode == "plain" and self._step is not None:
            now = time.perf_counter()
            self._finish_step(now)
            print(f"reportgen [{now - self.t0:6.1f} s] {'done' if ok else 'stopped'}", file=self.stream, flush=True)
            self._step = None


def choose_mode(*, quiet: bool, json_log: bool, stream=None) -> str:
    if json_log:
        return "json"
    if quiet:
        return "quiet"
    stream = stream or sys.stderr
    return "terminal" if getattr(stream, "isatty", lambda: False)() else "plain"
