"""The attackers (docs/metrics.md §2): ``lookup``, the exact Bayes-optimal table of a categorical input, and the
scikit-learn ``logistic`` and ``mlp`` classifiers; :func:`_attack` trains one per target column on a split and
returns the mean quality on its held-out part."""

from __future__ import annotations

import warnings

import numpy as np

from reportgen.stats.predictability.quality import _score_codes
from reportgen.stats.predictability.sides import _row_keys, _Side

ATTACKERS = ("lookup", "logistic", "mlp")
MSG_ATTACKER_UNKNOWN = "unknown attacker '{name}'; known attackers: lookup, logistic, mlp"


def _features(codes: np.ndarray, classes: list[np.ndarray]) -> np.ndarray:
    cols = []
    for j, cls in enumerate(classes):
        c = codes[:, j]
        if cls.dtype.kind == "f" and not np.all(np.mod(cls, 1) == 0):
            cols.append(cls[c].astype(float)[:, None])
        elif len(cls) <= 2:
            cols.append(c.astype(float)[:, None])
        else:
            cols.append((c[:, None] == np.arange(len(cls))[None, :]).astype(float))
    return np.concatenate(cols, axis=1)


def _lookup_predict(key, n_keys, y, n_cls, train, test) -> np.ndarray:
    c = max(n_cls, 1)
    kt, yt = key[train], y[train]
    counts = np.bincount(kt * c + yt, minlength=n_keys * c).reshape(n_keys, c)
    table = counts.argmax(axis=1)  # first maximum -> smaller class on ties
    overall = int(np.bincount(yt, minlength=c).argmax())
    table[counts.sum(axis=1) == 0] = overall
    return table[key[test]]


def _sklearn_predict(attacker, X, y, train, test, hidden, rs) -> np.ndarray:
    yt = y[train]
    first = yt[0]
    if np.all(yt == first):  # a single class in training: sklearn refuses, the answer is constant
        return np.full(len(test), first, dtype=y.dtype)
    if attacker == "logistic":
        from sklearn.linear_model import LogisticRegression

        model = LogisticRegression(max_iter=1000)
    else:
        from sklearn.neural_network import MLPClassifier

        model = MLPClassifier(hidden_layer_sizes=tuple(hidden), max_iter=300, random_state=rs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X[train], yt)
        return model.predict(X[test])


def _attack(attacker, inp: _Side, target_codes: np.ndarray, target_classes, train, test, *, quality, hidden,
            rs) -> float:
    """Train one attacker per target column on ``train``, return the mean quality on ``test``."""
    if attacker == "lookup":
        key, n_keys = _row_keys(inp.codes, inp.n_classes)
    else:
        X = _features(inp.codes, inp.classes)
    vals = []
    for j, cls in enumerate(target_classes):
        y = target_codes[:, j]
        if attacker == "lookup":
            pred = _lookup_predict(key, n_keys, y, len(cls), train, test)
        else:
            pred = _sklearn_predict(attacker, X, y, train, test, hidden, rs)
        vals.append(_score_codes(quality, y[test], pred, len(cls), cls))
    return float(np.mean(vals))
