"""Memory already touched, handed on to the next large array instead of fresh memory.

An array of the rows' size (80 MB at 10M float64 rows) is mapped afresh by the C library and every page of it
faults on its first write (a third of the numeric benchmark's work was such system time). The Parquet reader's
buffer of the file's bytes (data/reading.py) is dead once the table is parsed; :func:`keep` puts it here, and
:func:`take` carves the sort's key buffer and DeLong's placements out of it. Only memory whose every byte the
taker writes before it reads it may be taken (the contents are the file's old bytes), so no value depends on it.

A buffer is kept only when nothing else can reach it (the caller's test), carved pieces are never handed out
twice, and :func:`release` (at the end of a run) drops what is left; a piece still in use keeps its buffer alive
until it is dropped, as any NumPy view does. A lock keeps the threads of the streaming engines apart."""

from __future__ import annotations

import gc
import os
import threading

import numpy as np

ALIGN = 64  # bytes: each piece starts on a cache line (NumPy's own allocations are 16-byte aligned at least)
MIN_BYTES = 1 << 24  # smaller arrays come from the C library's heap, already touched: not worth a piece

_lock = threading.Lock()
_free: list[np.ndarray] = []  # uint8 remainders, each the untaken tail of a kept buffer


def keep(buf: np.ndarray) -> None:
    """Hand a dead uint8 buffer (its bytes written, nothing else holding it) to the next :func:`take`."""
    if buf.dtype == np.uint8 and buf.ndim == 1 and buf.nbytes >= MIN_BYTES and buf.flags.writeable:
        with _lock:
            _free.append(buf)


def take(n: int, dtype) -> np.ndarray:
    """An uninitialised array of ``n`` elements of ``dtype`` — a piece of a kept buffer where one is large enough,
    else ``np.empty``. The caller writes every element before it reads one."""
    dt = np.dtype(dtype)
    need = n * dt.itemsize
    if need >= MIN_BYTES:
        with _lock:
            for i, buf in enumerate(_free):
                skip = -buf.ctypes.data % ALIGN
                if skip + need <= len(buf):
                    _free[i] = buf[skip + need:]
                    if len(_free[i]) < MIN_BYTES:
                        del _free[i]
                    return buf[skip:skip + need].view(dt)
    return np.empty(n, dtype=dt)


def read_whole(fh) -> memoryview:
    """Every byte to the end of ``fh``, read into a bytearray of the file's size and one byte more (a file that
    has grown since its size was taken: the rest read after it — the change is refused by the caller's fingerprint)."""
    # (a bytearray, not np.empty: NumPy asks for huge pages, and the kernel's compaction for them cost the 10M-row
    # loading 0.1 s more system time than the small pages' faults did — measured)
    buf = np.frombuffer(bytearray(os.fstat(fh.fileno()).st_size + 1), dtype=np.uint8)
    n = 0
    while n < len(buf) and (got := fh.readinto(memoryview(buf)[n:])):
        n += got
    if n == len(buf):
        buf = np.concatenate([buf, np.frombuffer(fh.read(), dtype=np.uint8)])
        n = len(buf)
    return memoryview(buf)[:n].toreadonly()


def hand_on(view: memoryview) -> None:
    """The parsed file's buffer (:func:`read_whole`) to :func:`keep` when nothing holds it any more (the view released
    without error: Arrow kept no column of it), for the next large arrays instead of fresh memory."""
    base = view.obj
    for attempt in range(2):
        try:
            view.release()
            break
        except BufferError:  # still read: by a column (then kept alive), or by a reader left in a reference cycle
            if attempt:
                return
            gc.collect()  # (pyarrow's reader of a one-row-group file can be: the collector frees it)
    keep(base)


def release() -> None:
    """Drop every kept remainder (the end of a run)."""
    with _lock:
        _free.clear()


def kept_bytes() -> int:
    """Bytes kept and not yet taken (tests)."""
    with _lock:
        return sum(len(b) for b in _free)
