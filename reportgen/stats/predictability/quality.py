"""The quality functions Q that score an attacker on held-out rows (docs/metrics.md §2): accuracy and f1 on
codes, named scikit-learn qualities, or a callable; a loss (lower is better) is refused."""

from __future__ import annotations

from typing import Callable

import numpy as np

from reportgen.stats.predictability.sides import _as2d, _encode_col

QUALITIES = ("accuracy", "f1")
# Further named qualities from scikit-learn: higher is better, and none is a loss.
SKLEARN_QUALITIES = {"balanced_accuracy": "balanced_accuracy_score", "precision": "precision_score",
                     "recall": "recall_score", "jaccard": "jaccard_score", "matthews": "matthews_corrcoef"}
LOSS_MARKERS = ("loss", "error", "neg_")

# Message constants: tests pin these texts.
MSG_QUALITY_LOSS_NAME = (
    "quality '{name}' looks like a loss (lower is better); predictability needs a quality that is 0 "
    "at no predictability and grows with predictability: use 'accuracy' or 'f1'"
)
MSG_QUALITY_LOSS_CALLABLE = (
    "quality function '{name}' scores perfect predictions ({perfect:g}) lower than a constant "
    "predictor ({constant:g}), so it behaves like a loss; predictability needs a quality that grows "
    "with predictability: use 'accuracy' or 'f1', or negate your function"
)
MSG_QUALITY_UNKNOWN = ("unknown quality '{name}'; known qualities: accuracy, f1, balanced_accuracy, precision, recall, "
                       "jaccard, matthews (or pass a callable q(y_true, y_pred))")
MSG_QUALITY_TYPE = "quality must be 'accuracy', 'f1' or a callable q(y_true, y_pred) -> float, got {got}"


def _callable_name(q: Callable) -> str:
    return getattr(q, "__name__", type(q).__name__)


def validate_quality(quality: str | Callable) -> str | Callable:
    """Return ``quality`` if usable as a predictability quality, else raise ValueError.

    Names containing ``loss``, ``error`` or ``neg_`` are rejected, as are unknown
    names. A callable is probed on a small fixed binary example: if its value on
    perfect predictions is lower than on a constant predictor it is a loss and
    is rejected.
    """
    if isinstance(quality, str):
        low = quality.lower()
        if any(m in low for m in LOSS_MARKERS):
            raise ValueError(MSG_QUALITY_LOSS_NAME.format(name=quality))
        if low in SKLEARN_QUALITIES:
            return _sklearn_quality(low)
        if low not in QUALITIES:
            raise ValueError(MSG_QUALITY_UNKNOWN.format(name=quality))
        return low
    if callable(quality):
        y = np.array([0, 1, 1, 0, 1, 0, 0, 1, 1, 1])
        perfect = float(quality(y, y.copy()))
        constant = float(quality(y, np.zeros_like(y)))
        if perfect < constant:
            raise ValueError(MSG_QUALITY_LOSS_CALLABLE.format(name=_callable_name(quality), perfect=perfect,
                                                              constant=constant))
        return quality
    raise ValueError(MSG_QUALITY_TYPE.format(got=type(quality).__name__))


def _sklearn_quality(name: str) -> Callable:
    """A named scikit-learn score as q(y_true, y_pred); binary targets score the larger class, others macro."""
    from sklearn import metrics as skm

    fn = getattr(skm, SKLEARN_QUALITIES[name])

    def q(y_true, y_pred) -> float:
        kw = {}
        if name in ("precision", "recall", "jaccard"):
            classes = np.unique(np.concatenate([np.asarray(y_true), np.asarray(y_pred)]))
            kw = {"zero_division": 0, **({"average": "binary", "pos_label": classes.max()} if len(classes) <= 2
                                         else {"average": "macro"})}
        return float(fn(y_true, y_pred, **kw))

    q.__name__ = name
    return q


def _score_codes(quality, true: np.ndarray, pred: np.ndarray, n_classes: int, classes: np.ndarray) -> float:
    """Quality of one target column, both sides given as class codes 0..C-1."""
    if callable(quality):
        return float(quality(classes[true], classes[pred]))
    if true.size == 0:
        return float("nan")
    if quality == "accuracy":
        return float(np.count_nonzero(true == pred)) / true.size
    # f1: binary F1 of the positive (larger) class when the column has <= 2 classes,
    # macro-F1 over the classes present in y_true or y_pred otherwise.
    c = max(n_classes, 1)
    cm = np.bincount(true * c + pred, minlength=c * c).reshape(c, c)
    tp = np.diag(cm).astype(float)
    fp = cm.sum(axis=0) - tp
    fn = cm.sum(axis=1) - tp
    denom = 2 * tp + fp + fn
    if c <= 2:
        k = c - 1
        return float(2 * tp[k] / denom[k]) if denom[k] > 0 else 0.0
    present = denom > 0
    return float(np.mean(2 * tp[present] / denom[present]))


def quality_score(y_true, y_pred, *, quality: str | Callable = "accuracy") -> float:
    """Quality of predictions ``y_pred`` of ``y_true`` (1-D or (n, K); mean over columns)."""
    quality = validate_quality(quality)
    yt, yp = _as2d(y_true, "y_true"), _as2d(y_pred, "y_pred")
    if yt.shape != yp.shape:
        raise ValueError(f"y_true and y_pred have shapes {yt.shape} and {yp.shape}; they must match")
    vals = []
    for k in range(yt.shape[1]):
        codes, classes = _encode_col(np.concatenate([yt[:, k], yp[:, k]]))
        n = yt.shape[0]
        vals.append(_score_codes(quality, codes[:n], codes[n:], len(classes), classes))
    return float(np.mean(vals))
