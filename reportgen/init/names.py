"""Guessing a column's role from its name: the vocabularies (label, prediction, score, decision, attribute and
unfavourable-outcome words) and the functions that read a name against them."""

from __future__ import annotations

import re

LABEL_NAMES = (
    "label", "label_value", "labels", "target", "y", "y_true", "ytrue", "true_label", "outcome", "truth",
    "ground_truth", "groundtruth", "gold", "class", "two_year_recid", "is_recid", "recid", "toxic", "toxicity",
    "income", "default", "approved", "hired", "admitted", "churn", "fraud",
)
LABEL_SUFFIXES = ("_true", "_label", "_target", "_truth", "_gold", "_actual", "_outcome")
LABEL_PREFIXES = ("is_", "true_", "label_", "target_", "has_")
PRED_NAMES = ("pred", "prediction", "predictions", "predicted", "y_pred", "ypred", "yhat", "y_hat", "decision")
PRED_SUFFIXES = ("_pred", "_preds", "_prediction", "_predicted", "_yhat", "_hat", "_decision")
PRED_PREFIXES = ("pred_", "predicted_", "prediction_")
# names of a decision column (a lender's approval, a screen's selection): with no other prediction column, such a
# column may be the decision itself, audited without a true label (--no-label)
DECISION_TOKENS = (
    "approved", "approve", "approval", "selected", "select", "selection", "hired", "hire", "accepted", "accept",
    "decision", "decided", "admitted", "admit", "granted", "grant", "offered", "offer", "shortlisted", "funded",
    "passed", "denied", "rejected", "declined", "screened", "interview", "interviewed", "promoted", "awarded",
)
SCORE_TOKENS = ("score", "prob", "proba", "probability", "likelihood", "confidence")
SCORE_SUFFIXES = ("_score", "_scores", "_prob", "_proba", "_probability", "_likelihood", "_confidence")
SCORE_PREFIXES = ("score_", "prob_", "proba_", "probability_")
# attribute name tokens, in the order attributes are listed
ATTRIBUTE_TOKENS = (
    "race", "ethnicity", "ethnic", "sex", "gender", "age", "religion", "nationality", "national", "citizenship",
    "country", "origin", "identity", "disability", "disabled", "marital", "orientation", "caste", "language",
    "pregnancy", "veteran", "skin", "lgbt", "lgbtq",
)
ATTRIBUTE_SPECIAL = ("agecat", "agegroup", "maritalstatus")
# outcomes whose positive prediction is unfavourable for the person (favorable: negative)
UNFAVOURABLE_TOKENS = (
    "recid", "recidivism", "reoffend", "toxic", "toxicity", "default", "defaulted", "fraud", "risk", "arrest",
    "arrested", "churn", "disease", "death", "died", "reject", "rejected", "denied", "deny", "spam", "hate",
    "abuse", "abusive", "offensive", "crime", "violent", "violence", "fail", "failure", "insult", "threat",
)
# display names of census-coded attributes (ACS PUMS data dictionary), offered as a commented `labels:` line
ACS_PUMS_LABELS = {
    "SEX": {1: "Male", 2: "Female"},
    "RAC1P": {1: "White alone", 2: "Black or African American alone", 3: "American Indian alone",
              4: "Alaska Native alone", 5: "American Indian and Alaska Native, tribes specified or not specified",
              6: "Asian alone", 7: "Native Hawaiian and Other Pacific Islander alone", 8: "Some Other Race alone",
              9: "Two or More Races"},
}
POSITIVE_WORDS = ("1", "true", "yes", "y", "t", "positive", "pos", "on")
ID_TOKENS = ("id", "uuid", "index", "idx", "key", "row")


def name_tokens(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(name))
    return [t for t in re.split(r"[^a-z0-9]+", spaced.lower()) if t]


def normalised(name: str) -> str:
    return "_".join(name_tokens(name))


def strip_affix(n: str, suffixes: tuple, prefixes: tuple) -> str | None:
    for s in suffixes:
        if n.endswith(s) and len(n) > len(s):
            return n[: -len(s)]
    for p in prefixes:
        if n.startswith(p) and len(n) > len(p):
            return n[len(p):]
    return None


def pred_named(name: str) -> tuple[bool, str | None]:
    """(looks like a prediction, its stem or None for generic names such as `prediction`)."""
    n = normalised(name)
    if n in PRED_NAMES:
        return True, ("y" if n in ("y_pred", "y_hat") else None)
    stem = strip_affix(n, PRED_SUFFIXES, PRED_PREFIXES)
    return (stem is not None), stem


def score_named(name: str) -> tuple[bool, str | None]:
    n = normalised(name)
    toks = n.split("_")
    if not any(t in SCORE_TOKENS for t in toks):
        return False, None
    return True, strip_affix(n, SCORE_SUFFIXES, SCORE_PREFIXES)


def label_rank(name: str) -> int:
    n = normalised(name)
    if n in LABEL_NAMES:
        return LABEL_NAMES.index(n)
    if strip_affix(n, LABEL_SUFFIXES, LABEL_PREFIXES) is not None:
        return 100
    return 200


def label_stem(name: str) -> str:
    n = normalised(name)
    return strip_affix(n, LABEL_SUFFIXES, ("true_", "label_", "target_")) or n


def attribute_rank(name: str) -> int | None:
    n = normalised(name)
    toks = n.split("_")
    if n.replace("_", "") in ATTRIBUTE_SPECIAL:
        return ATTRIBUTE_TOKENS.index("age") if n.startswith("age") else ATTRIBUTE_TOKENS.index("marital")
    toks = [re.sub(r"(?<=[a-z])\d+$", "", t) for t in toks]  # `race1`, `sex2`: a numbered variant of the name
    ranks = [ATTRIBUTE_TOKENS.index(t) for t in toks if t in ATTRIBUTE_TOKENS]
    return min(ranks) if ranks else None


def decision_named(name: str) -> bool:
    return any(t in DECISION_TOKENS for t in name_tokens(name))


def stem_match(stem: str | None, label: str) -> int | None:
    """How well a prediction stem names the label: 0 same, 1 shares words, 2 generic, None unrelated."""
    if stem is None or stem in PRED_NAMES or stem in SCORE_TOKENS or stem in ("model", "y"):
        return 2  # a generic name (`pred_prob`, `prediction_score`, `model_score`) could be any label's
    ln, ls = normalised(label), label_stem(label)
    if stem in (ln, ls):
        return 0
    st, lt = stem.split("_"), ln.split("_")

    def contains(big: list[str], small: list[str]) -> bool:
        return any(big[i:i + len(small)] == small for i in range(len(big) - len(small) + 1))

    if contains(lt, st) or contains(st, lt):
        return 1
    return None

