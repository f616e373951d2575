"""Reference for the predictability family (docs/metrics.md §2), over plain rows.

Written from the documentation's text only (the section and the papers it names: Wang et al. 2019 for leakage,
Tokas et al. for DPA), not from ``reportgen``. Plain Python: a dictionary per attacker, loops over rows.

- An **attacker** predicts a target from an input; the *lookup* attacker predicts, for each input value, the target
  value most frequent among the training rows with that input (docs §2: "majority target per input value").
- **Q** scores an attacker's predictions on held-out rows; here accuracy, the docs' default quality.
- **Leakage** = λ_M − λ_D, with λ_M = Q(f(T̂) → A) and λ_D = Q(f(T) → A).
- **DPA** = (Ψ_M − Ψ_D) / (Ψ_M + Ψ_D): A→T with Ψ_D = Q(f(A) → T), Ψ_M = Q(f(A) → T̂); T→A with
  Ψ_D = Q(f(T) → A), Ψ_M = Q(f(T) → Â). Undefined (None) when Ψ_M + Ψ_D = 0.

The quality of a vector of several targets (DPA A→T on several tasks: one attacker per task, or one for the
vector?) is not in the docs: this reference scores the vector as one target (exact match), and the tests compare
DPA A→T on one task only.

What the docs leave open and this reference therefore takes as arguments: the split of the rows into training
and scoring rows (the engine draws it at random per trial), and the data side's quality equalisation (the engine
flips a random share of true labels). With the training rows equal to the scoring rows and no flips, the lookup
attacker's accuracy is the in-sample Bayes accuracy Σ_x max_z P̂(x, z) (:func:`bayes_accuracy`), which the
engine's average over random splits approaches on large samples.
"""

from __future__ import annotations

from collections import Counter, defaultdict

UNSPECIFIED = "unspecified"  # a tie in the majority: docs §2 does not say which target the lookup attacker picks


def _key(value):
    """A row's input as a hashable key (a tuple for a row of several task labels)."""
    try:
        return tuple(int(v) for v in value)
    except TypeError:
        return int(value)


def lookup_table(inputs, targets) -> dict:
    """{input value: its majority target} over the training rows; UNSPECIFIED where the majority ties."""
    seen: dict = defaultdict(Counter)
    for x, z in zip(inputs, targets):
        seen[_key(x)][_key(z)] += 1
    table = {}
    for x, counts in seen.items():
        ranked = counts.most_common()
        tie = len(ranked) > 1 and ranked[0][1] == ranked[1][1]
        table[x] = UNSPECIFIED if tie else ranked[0][0]
    return table


def accuracy(table: dict, inputs, targets):
    """Share of the scoring rows whose target the table predicts; UNSPECIFIED if a row meets a tie or an input
    the training rows did not have."""
    hits = 0
    n = 0
    for x, z in zip(inputs, targets):
        guess = table.get(_key(x), UNSPECIFIED)
        if guess == UNSPECIFIED:
            return UNSPECIFIED
        hits += guess == _key(z)
        n += 1
    return hits / n if n else None


def quality(x, z, train, score):
    """Q(f(x) → z) of the lookup attacker trained on the rows ``train`` and scored on the rows ``score``."""
    table = lookup_table([x[i] for i in train], [z[i] for i in train])
    return accuracy(table, [x[i] for i in score], [z[i] for i in score])


def bayes_accuracy(x, z):
    """The lookup attacker trained and scored on every row: Σ over input values of the majority target's count,
    divided by n (ties do not matter here: either choice scores the same)."""
    seen: dict = defaultdict(Counter)
    for xi, zi in zip(x, z):
        seen[_key(xi)][_key(zi)] += 1
    return sum(c.most_common(1)[0][1] for c in seen.values()) / len(x)


def dpa_value(psi_d, psi_m):
    """(Ψ_M − Ψ_D) / (Ψ_M + Ψ_D); None when both are 0 (docs §2)."""
    if UNSPECIFIED in (psi_d, psi_m):
        return UNSPECIFIED
    total = psi_m + psi_d
    return None if total == 0 else (psi_m - psi_d) / total


def leakage_value(lambda_d, lambda_m):
    """λ_M − λ_D (docs §2)."""
    if UNSPECIFIED in (lambda_d, lambda_m):
        return UNSPECIFIED
    return lambda_m - lambda_d


def leakage(a, t, t_hat, train=None, score=None):
    """Leakage of one split without equalisation: the group predicted from the predicted tasks against the group
    predicted from the true tasks. ``train``/``score``: row positions (default: every row for both)."""
    rows = range(len(a))
    train = rows if train is None else train
    score = rows if score is None else score
    return leakage_value(quality(t, a, train, score), quality(t_hat, a, train, score))


def dpa(direction: str, a, t, *, a_hat=None, t_hat=None, train=None, score=None):
    """DPA A→T (needs ``t_hat``) or T→A (needs ``a_hat``) of one split without equalisation."""
    rows = range(len(a))
    train = rows if train is None else train
    score = rows if score is None else score
    if direction == "A->T":
        return dpa_value(quality(a, t, train, score), quality(a, t_hat, train, score))
    if direction == "T->A":
        return dpa_value(quality(t, a, train, score), quality(t, a_hat, train, score))
    raise ValueError(direction)


def in_sample(metric: str, a, t, *, a_hat=None, t_hat=None):
    """The metric with the lookup attacker trained and scored on every row, no equalisation (the large-sample
    limit of a random-split average when every input value's majority is clear)."""
    if metric == "leakage":
        return leakage_value(bayes_accuracy(t, a), bayes_accuracy(t_hat, a))
    if metric == "dpa_a_to_t":
        return dpa_value(bayes_accuracy(a, t), bayes_accuracy(a, t_hat))
    if metric == "dpa_t_to_a":
        return dpa_value(bayes_accuracy(t, a), bayes_accuracy(t, a_hat))
    raise ValueError(metric)
