"""Build the sample data sets shipped in ``samples/``.

Run from the repository root::

    python samples/build_samples.py

Inputs are read from ``../shared/data/`` next to the repository (resolved from
this file's location, so the working directory does not matter).  Every random
step is seeded, and files are written with fixed formatting, so re-running the
script reproduces the committed files byte for byte.  See ``samples/README.md``
for what each file holds and how it was made.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path
from statistics import NormalDist, median

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

SAMPLES = Path(__file__).resolve().parent
REPO = SAMPLES.parent
DATA = (REPO / ".." / "shared" / "data").resolve()

SPLIT_SEED = 2017
SYNTH_SEED = 7


# ----------------------------------------------------------------------------
# shared helpers
# ----------------------------------------------------------------------------

def write_csv(df: pd.DataFrame, path: Path) -> None:
    """Write without index, with '\\n' line endings, so output is stable."""
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, index=False, lineterminator="\n")


def fmt_fixed(values, decimals: int) -> list[str]:
    """Format floats with a fixed number of decimals (as text, for exact output)."""
    return [f"{v:.{decimals}f}" for v in np.asarray(values, dtype=float)]


def stratified_split(df: pd.DataFrame, by: list[str], fractions: list[float],
                     seed: int) -> list[np.ndarray]:
    """Split row positions of ``df`` into parts of the given fractions.

    Each stratum (a combination of the ``by`` columns) is shuffled on its own
    and cut by cumulative rounding, so every part gets its share of every
    stratum, however small.  Strata are visited in sorted order and rows
    within a stratum start in file order, which makes the result depend only
    on the data and the seed.  Returns sorted row positions per part.
    """
    rng = np.random.default_rng(seed)
    cuts = np.cumsum(fractions)
    if not np.isclose(cuts[-1], 1.0):
        raise ValueError("fractions must add up to 1")
    parts: list[list[np.ndarray]] = [[] for _ in fractions]
    groups = df.groupby(by, sort=True, dropna=False).indices
    for key in sorted(groups, key=lambda k: tuple(map(str, np.atleast_1d(k)))):
        rows = np.sort(groups[key])
        rows = rows[rng.permutation(len(rows))]
        bounds = [0] + [int(np.floor(c * len(rows) + 0.5)) for c in cuts[:-1]] + [len(rows)]
        for i in range(len(fractions)):
            parts[i].append(rows[bounds[i]:bounds[i + 1]])
    return [np.sort(np.concatenate(p)) for p in parts]


# ----------------------------------------------------------------------------
# COMPAS
# ----------------------------------------------------------------------------

COMPAS_KEEP = [
    "id", "sex", "age", "age_cat", "race", "juv_fel_count", "juv_misd_count",
    "juv_other_count", "priors_count", "c_charge_degree",
    "days_b_screening_arrest", "is_recid", "decile_score", "score_text",
    "v_decile_score", "two_year_recid",
]
COMPAS_NUMERIC = ["age", "priors_count", "juv_fel_count", "juv_misd_count", "juv_other_count"]
COMPAS_CATEGORICAL = ["sex", "c_charge_degree"]
RACE_PAIR = ["African-American", "Caucasian"]


def compas_model() -> Pipeline:
    features = ColumnTransformer(
        [
            ("num", StandardScaler(), COMPAS_NUMERIC),
            ("cat", OneHotEncoder(handle_unknown="error", sparse_output=False), COMPAS_CATEGORICAL),
        ]
    )
    return Pipeline([("features", features), ("logreg", LogisticRegression(max_iter=1000))])


def rate(pred: pd.Series, mask: pd.Series) -> float:
    return float(pred[mask].mean())


def build_compas() -> dict:
    src = DATA / "compas" / "compas-scores-two-years.csv"
    raw = pd.read_csv(src, low_memory=False)
    if len(raw) != 7214:
        raise SystemExit(f"{src}: expected 7214 rows, found {len(raw)}")
    # The raw file repeats two column names; pandas reads the second copy as
    # "<name>.1".  Keep the first copy after checking the two are the same.
    for dup in ("decile_score", "priors_count"):
        if not raw[dup].equals(raw[f"{dup}.1"]):
            raise SystemExit(f"{src}: the two '{dup}' columns differ")
    if not raw["id"].is_unique:
        raise SystemExit(f"{src}: ids are not unique")

    df = raw[COMPAS_KEEP].copy()
    # Whole numbers with some blanks: keep them as integers, blanks stay empty.
    df["days_b_screening_arrest"] = df["days_b_screening_arrest"].round().astype("Int64")

    df["decile_high"] = (df["decile_score"] >= 5).astype(int)

    train, val, test = stratified_split(df, ["race", "two_year_recid"], [0.6, 0.2, 0.2], SPLIT_SEED)
    is_train = np.zeros(len(df), dtype=bool)
    is_train[train] = True

    x_cols = COMPAS_NUMERIC + COMPAS_CATEGORICAL

    # Recidivism model: race is not a feature.
    recid = compas_model().fit(df.loc[is_train, x_cols], df.loc[is_train, "two_year_recid"])
    score = np.round(recid.predict_proba(df[x_cols])[:, list(recid.classes_).index(1)], 4)
    # Threshold the rounded score so the file is self-consistent.
    df["recid_pred"] = (score >= 0.5).astype(int)
    df["recid_score"] = fmt_fixed(score, 4)

    # Race model: two classes only, trained on train rows of those two races,
    # applied to everyone.
    pair_train = is_train & df["race"].isin(RACE_PAIR).to_numpy()
    race_model = compas_model().fit(df.loc[pair_train, x_cols], df.loc[pair_train, "race"])
    df["race_pred"] = race_model.predict(df[x_cols])
    if not set(df["race_pred"]) <= set(RACE_PAIR):
        raise SystemExit("race_pred has unexpected values")

    out = SAMPLES / "compas"
    # Five retrainings of the recidivism model, each on a bootstrap resample of
    # the training rows (seeds 0-4), scored on the test split: several runs of
    # one model, for across-run intervals.
    train_idx = np.flatnonzero(is_train)
    test_rows = df.iloc[test]
    runs_dir = out / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    for run_seed in range(5):
        pick = np.random.default_rng(run_seed).choice(train_idx, size=len(train_idx), replace=True)
        m = compas_model().fit(df.iloc[pick][x_cols], df.iloc[pick]["two_year_recid"])
        s_run = np.round(m.predict_proba(test_rows[x_cols])[:, list(m.classes_).index(1)], 4)
        run_df = test_rows[["id", "sex", "race", "race_pred", "two_year_recid"]].copy()
        run_df["recid_pred"] = (s_run >= 0.5).astype(int)
        run_df["recid_score"] = fmt_fixed(s_run, 4)
        write_csv(run_df, runs_dir / f"run{run_seed}.csv")

    write_csv(df, out / "all.csv")
    write_csv(df.iloc[train], out / "train.csv")
    write_csv(df.iloc[val], out / "val.csv")
    write_csv(df.iloc[test], out / "test.csv")

    # ProPublica's published error rates for decile_score >= 5.
    checks = {}
    for race in RACE_PAIR:
        r = df["race"] == race
        checks[race] = {
            "fpr": rate(df["decile_high"], r & (df["two_year_recid"] == 0)),
            "fnr": rate(1 - df["decile_high"], r & (df["two_year_recid"] == 1)),
        }
    pair = df["race"].isin(RACE_PAIR)
    info = {
        "rows": {"all": len(df), "train": len(train), "val": len(val), "test": len(test)},
        "checks": checks,
        "recid_accuracy_test": float((df["recid_pred"].iloc[test] == df["two_year_recid"].iloc[test]).mean()),
        "race_pred_accuracy_test_pair": float(
            (df["race_pred"].iloc[test] == df["race"].iloc[test])[pair.iloc[test]].mean()
        ),
        "race_pred_counts": df["race_pred"].value_counts().sort_index().to_dict(),
    }
    return info


# ----------------------------------------------------------------------------
# Adult (Aequitas sample)
# ----------------------------------------------------------------------------

def build_adult() -> dict:
    src_dir = DATA / "aequitas"
    raw = pd.read_csv(src_dir / "adult_rf_binary.csv")
    if not set(raw["score"].unique()) <= {0.0, 1.0}:
        raise SystemExit("adult: score is not a 0/1 prediction")
    # The source's `score` agrees with `label_value` on only 15% of rows and
    # disagrees on 85%: it marks the predicted *low*-income class (a random
    # forest with 85% accuracy). income_pred is the predicted >50K indicator.
    agree = float((raw["score"] == raw["label_value"]).mean())
    if agree > 0.5:
        raise SystemExit(f"adult: score agrees with label_value on {agree:.0%} of rows; re-check the inversion")
    df = pd.DataFrame({
        "entity_id": raw["entity_id"].astype(int),
        "income_gt_50k": raw["label_value"].astype(int),
        "income_pred": (1 - raw["score"]).astype(int),
        "education": raw["education"],
        "gender": raw["gender"],
        "race": raw["race"],
    })
    train, test = stratified_split(df, ["gender", "race", "income_gt_50k"], [0.5, 0.5], SPLIT_SEED)
    out = SAMPLES / "adult"
    write_csv(df.iloc[train], out / "train.csv")
    write_csv(df.iloc[test], out / "test.csv")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src_dir / "LICENSE.aequitas", out / "LICENSE.aequitas")
    cells = pd.crosstab(df.iloc[test]["gender"], df.iloc[test]["race"], margins=True, margins_name="total")
    return {"rows": {"train": len(train), "test": len(test)}, "test_cells": cells}


# ----------------------------------------------------------------------------
# Synthetic multi-label data
# ----------------------------------------------------------------------------

N_TASKS = 24
TASKS = [f"obj_{t:02d}" for t in range(N_TASKS)]

# Per task: base rate for women, base rate for men, and what the simulated
# model does with the gender correlation:
#   "amp"  the model over-predicts the task for the group that already has the
#          higher base rate and under-predicts it for the other group;
#   "red"  the reverse (it pulls the two groups' predicted rates together);
#   "neu"  the same error rates for both groups.
TASK_TABLE = [
    # rate_woman, rate_man, behaviour
    (0.30, 0.12, "amp"),  # obj_00  woman-leaning
    (0.10, 0.28, "amp"),  # obj_01  man-leaning
    (0.20, 0.20, "neu"),  # obj_02
    (0.26, 0.10, "red"),  # obj_03  woman-leaning
    (0.08, 0.08, "neu"),  # obj_04
    (0.12, 0.32, "amp"),  # obj_05  man-leaning
    (0.15, 0.15, "neu"),  # obj_06
    (0.32, 0.16, "neu"),  # obj_07  woman-leaning
    (0.25, 0.25, "neu"),  # obj_08
    (0.08, 0.20, "red"),  # obj_09  man-leaning
    (0.12, 0.12, "neu"),  # obj_10
    (0.22, 0.08, "amp"),  # obj_11  woman-leaning
    (0.30, 0.30, "neu"),  # obj_12
    (0.14, 0.30, "neu"),  # obj_13  man-leaning
    (0.06, 0.06, "neu"),  # obj_14
    (0.28, 0.14, "amp"),  # obj_15  woman-leaning
    (0.18, 0.18, "neu"),  # obj_16
    (0.06, 0.18, "amp"),  # obj_17  man-leaning
    (0.10, 0.10, "neu"),  # obj_18
    (0.22, 0.22, "neu"),  # obj_19
    (0.18, 0.07, "red"),  # obj_20  woman-leaning
    (0.16, 0.16, "neu"),  # obj_21
    (0.10, 0.24, "neu"),  # obj_22  man-leaning
    (0.27, 0.27, "neu"),  # obj_23
]
# Tasks whose base rate also shifts with age group: +shift for young, -shift for old.
AGE_SHIFT = {2: 0.04, 6: -0.04, 12: 0.04, 16: -0.03, 19: 0.03, 23: -0.04}

P_WOMAN = 0.45
P_YOUNG = 0.55
# Error rates: each task draws a baseline true-positive rate and false-positive
# rate; "amp" and "red" tasks add (tpr, fpr) shifts of these sizes for the
# group the task leans towards and subtract them for the other group ("red"
# uses them with the opposite sign, and smaller, so it weakens the
# correlation without turning it round).
TPR_RANGE = (0.70, 0.90)
FPR_RANGE = (0.02, 0.05)
SHIFTS = {"amp": (0.10, 0.03), "red": (0.06, 0.012)}
# Gender classifier: logit of P(predict woman) = +/-GENDER_STRENGTH for the
# true gender, plus GENDER_CUE times the number of positive woman-leaning tasks
# minus the number of positive man-leaning tasks.  So it errs more often when
# a person appears with objects that lean towards the other gender.
GENDER_STRENGTH = 1.5
GENDER_CUE = 0.35


def build_multilabel() -> dict:
    rng = np.random.default_rng(SYNTH_SEED)
    n_train, n_test = 6000, 4000
    n = n_train + n_test

    rate_w = np.array([r[0] for r in TASK_TABLE])
    rate_m = np.array([r[1] for r in TASK_TABLE])
    behaviour = np.array([r[2] for r in TASK_TABLE])
    lean = np.sign(rate_w - rate_m)  # +1 woman-leaning, -1 man-leaning, 0 neither
    age_shift = np.array([AGE_SHIFT.get(t, 0.0) for t in range(N_TASKS)])
    assert ((rate_w >= 0.05) & (rate_w <= 0.35) & (rate_m >= 0.05) & (rate_m <= 0.35)).all()

    tpr_base = rng.uniform(*TPR_RANGE, size=N_TASKS)
    fpr_base = rng.uniform(*FPR_RANGE, size=N_TASKS)

    woman = rng.random(n) < P_WOMAN
    young = rng.random(n) < P_YOUNG

    # True labels: independent Bernoulli per task given gender and age group.
    p = np.where(woman[:, None], rate_w, rate_m) + np.where(young[:, None], age_shift, -age_shift)
    p = np.clip(p, 0.05, 0.35)
    y = (rng.random((n, N_TASKS)) < p).astype(np.int8)
    # Every image shows at least one object: rows with none get one task,
    # picked in proportion to that row's base rates.
    empty = np.flatnonzero(y.sum(axis=1) == 0)
    for i in empty:
        y[i, rng.choice(N_TASKS, p=p[i] / p[i].sum())] = 1

    # Predictions. direction = +1 where the row's group is the one the task
    # leans towards, -1 for the other group, 0 for tasks that lean neither way.
    g_sign = np.where(woman, 1.0, -1.0)
    direction = g_sign[:, None] * lean[None, :]
    tpr_shift = np.array([SHIFTS[b][0] if b in SHIFTS else 0.0 for b in behaviour])
    fpr_shift = np.array([SHIFTS[b][1] if b in SHIFTS else 0.0 for b in behaviour])
    sign = np.select([behaviour == "amp", behaviour == "red"], [1.0, -1.0], 0.0)
    push = (sign * direction)  # +1 over-predict, -1 under-predict, 0 unchanged
    tpr = np.clip(tpr_base[None, :] + tpr_shift[None, :] * push, 0.0, 1.0)
    fpr = np.clip(fpr_base[None, :] + fpr_shift[None, :] * push, 0.0, 1.0)
    u = rng.random((n, N_TASKS))
    y_pred = np.where(y == 1, u < tpr, u < fpr).astype(np.int8)

    # Gender prediction, with errors that depend on the objects present.
    cue = (y * lean[None, :]).sum(axis=1)
    logit = GENDER_STRENGTH * g_sign + GENDER_CUE * cue
    pred_woman = rng.random(n) < 1.0 / (1.0 + np.exp(-logit))

    df = pd.DataFrame({
        "gender": np.where(woman, "woman", "man"),
        "gender_pred": np.where(pred_woman, "woman", "man"),
        "age_group": np.where(young, "young", "old"),
    })
    for t, name in enumerate(TASKS):
        df[name] = y[:, t].astype(int)
    for t, name in enumerate(TASKS):
        df[f"{name}_pred"] = y_pred[:, t].astype(int)

    train = df.iloc[:n_train].reset_index(drop=True)
    test = df.iloc[n_train:].reset_index(drop=True)
    out = SAMPLES / "multilabel"
    write_csv(train, out / "train.csv")
    write_csv(test, out / "test.csv")

    # "External statistics" from train.csv, 2 decimals: P(gender = g | obj_t = 1), P(gender = g) and
    # P(obj_t = 1 | gender = g) (the last for A->T metrics measured against the table).
    rows = []
    for name in TASKS:
        pos = train[train[name] == 1]
        for g in ("woman", "man"):
            rows.append({"group": g, "task": name,
                         "p_group_given_task": f"{(pos['gender'] == g).mean():.2f}",
                         "p_group": f"{(train['gender'] == g).mean():.2f}",
                         "p_task_given_group": f"{train.loc[train['gender'] == g, name].mean():.2f}"})
    write_csv(pd.DataFrame(rows), out / "base_table.csv")

    labels_per_row = train[TASKS].sum(axis=1)
    return {
        "rows": {"train": len(train), "test": len(test)},
        "gender_pred_accuracy_train": float((train["gender"] == train["gender_pred"]).mean()),
        "labels_per_row_train": (float(labels_per_row.mean()), int(labels_per_row.min()),
                                 int(labels_per_row.max())),
        "rows_forced_nonempty": len(empty),
        "task_summary": summarise_tasks(train),
    }


def summarise_tasks(df: pd.DataFrame) -> pd.DataFrame:
    """Per task: share of women among true and among predicted positives."""
    w = df["gender"] == "woman"
    rows = []
    for t, name in enumerate(TASKS):
        true_pos = df[name] == 1
        pred_pos = df[f"{name}_pred"] == 1
        rows.append({
            "task": name,
            "behaviour": TASK_TABLE[t][2],
            "rate_woman": round(float(df.loc[w, name].mean()), 3),
            "rate_man": round(float(df.loc[~w, name].mean()), 3),
            "woman_share_true": round(float(w[true_pos].mean()), 3),
            "woman_share_pred": round(float(w[pred_pos].mean()), 3),
        })
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------
# Toxicity (text, for LOGAN local-bias detection)
# ----------------------------------------------------------------------------

# Identity terms, matched as whole words, case-insensitively (a space inside a
# term matches any run of whitespace).  These are the 50 identity terms of the
# bias madlibs, split into two groups.  `lgbtq`: sexual-orientation and
# gender-identity minority terms.  `straight` and `heterosexual` name the
# majority orientation and go to `other`, with every other identity term
# (gender, race and ethnicity, nationality, religion, age, disability).
TOX_LGBTQ_TERMS = [
    "lesbian", "gay", "bisexual", "transgender", "trans", "queer", "lgbt",
    "lgbtq", "homosexual", "nonbinary",
]
TOX_OTHER_TERMS = [
    "straight", "heterosexual", "male", "female",
    "african american", "african", "black", "white", "european", "hispanic",
    "latino", "latina", "latinx", "mexican", "canadian", "american", "asian",
    "indian", "middle eastern", "chinese", "japanese",
    "christian", "muslim", "jewish", "buddhist", "catholic", "protestant",
    "sikh", "taoist",
    "old", "older", "young", "younger", "teenage", "millenial", "middle aged",
    "elderly",
    "blind", "deaf", "paralyzed",
]
TOX_WIKI_TRAIN = 0.65      # share of the Wikipedia comments used for training
TOX_MADLIBS_TRAIN = 0.002  # share of the madlibs sentences used for training
TOX_MADLIBS_TEST = 0.05    # share of the remaining madlibs sentences in test.csv
TOX_C = 10.0               # logistic-regression inverse regularisation
TOX_THRESHOLD = 0.5
TOX_STRATA = ["template", "identity", "toxic"]


def _term_regex(terms: list[str]) -> re.Pattern:
    # Longest first, so "african american" wins over "african" at one position.
    alts = sorted(terms, key=lambda t: (-len(t), t))
    return re.compile(r"\b(" + "|".join(re.escape(t).replace(r"\ ", r"\s+") for t in alts) + r")\b")


TOX_LGBTQ_RE = _term_regex(TOX_LGBTQ_TERMS)
TOX_OTHER_RE = _term_regex(TOX_OTHER_TERMS)


def identity_of(text: str) -> tuple[str, str]:
    """(group, term): the leftmost lgbtq term if there is one, else the leftmost other term."""
    low = text.lower()
    for group, rx in (("lgbtq", TOX_LGBTQ_RE), ("other", TOX_OTHER_RE)):
        m = rx.search(low)
        if m:
            return group, " ".join(m.group(1).split())
    return "none", ""


def _tox_frame(ids, source: str, texts, toxic, template) -> pd.DataFrame:
    text = pd.Series(texts).astype(str).str.replace(r"\s+", " ", regex=True).str.strip()
    tagged = [identity_of(t) for t in text]
    return pd.DataFrame({
        "id": list(ids),
        "source": source,
        "text": text.to_numpy(),
        "identity": [g for g, _ in tagged],
        "term": [t for _, t in tagged],
        "toxic": np.asarray(toxic).astype(int),
        "template": list(template),
    })


def _tox_rates(df: pd.DataFrame) -> dict:
    neg, pos = df["toxic"] == 0, df["toxic"] == 1
    return {
        "n": len(df),
        "acc": float((df["toxic_pred"] == df["toxic"]).mean()) if len(df) else float("nan"),
        "fpr": float(df.loc[neg, "toxic_pred"].mean()) if neg.any() else float("nan"),
        "fnr": float(1 - df.loc[pos, "toxic_pred"].mean()) if pos.any() else float("nan"),
    }


def build_toxicity() -> dict:
    src_dir = DATA / "toxicity"
    wiki_raw = pd.read_csv(src_dir / "toxicity_nonfuzzed_testset.csv")
    mad_raw = pd.read_csv(src_dir / "bias_madlibs_77k.csv")
    if len(wiki_raw) != 1492 or not wiki_raw["rev_id"].is_unique:
        raise SystemExit("toxicity: expected 1,492 comments with unique rev_id")
    if len(mad_raw) != 76564 or set(mad_raw["Label"]) != {"BAD", "NOT_BAD"}:
        raise SystemExit("toxicity: expected 76,564 madlibs sentences labelled BAD / NOT_BAD")

    wiki = _tox_frame("wiki-" + wiki_raw["rev_id"].astype(str), "wikipedia", wiki_raw["comment"],
                      wiki_raw["toxic"].astype(bool), [""] * len(wiki_raw))
    mad = _tox_frame([f"madlib-{i}" for i in range(len(mad_raw))], "madlibs", mad_raw["Text"],
                     mad_raw["Label"] == "BAD", mad_raw["Template"])
    # Every madlibs sentence but the occupation template names exactly one term.
    occupation = mad["template"] == "you_occupation"
    if (mad.loc[~occupation, "identity"] == "none").any() or (mad.loc[occupation, "identity"] != "none").any():
        raise SystemExit("toxicity: identity terms do not match the madlibs templates")

    wiki_train, wiki_test = stratified_split(wiki, ["identity", "toxic"],
                                             [TOX_WIKI_TRAIN, 1 - TOX_WIKI_TRAIN], SPLIT_SEED)
    mad_train, mad_rest = stratified_split(mad, TOX_STRATA, [TOX_MADLIBS_TRAIN, 1 - TOX_MADLIBS_TRAIN], SPLIT_SEED)
    rest = mad.iloc[mad_rest]
    pick, _ = stratified_split(rest, TOX_STRATA, [TOX_MADLIBS_TEST, 1 - TOX_MADLIBS_TEST], SPLIT_SEED + 1)
    train = pd.concat([wiki.iloc[wiki_train], mad.iloc[mad_train]], ignore_index=True)
    test = pd.concat([wiki.iloc[wiki_test], rest.iloc[pick]], ignore_index=True)

    vec = TfidfVectorizer(lowercase=True, ngram_range=(1, 2), sublinear_tf=True, min_df=2)
    clf = LogisticRegression(C=TOX_C, class_weight="balanced", solver="liblinear", random_state=0)
    clf.fit(vec.fit_transform(train["text"]), train["toxic"])
    score = np.round(clf.predict_proba(vec.transform(test["text"]))[:, list(clf.classes_).index(1)], 4)
    test["toxic_pred"] = (score >= TOX_THRESHOLD).astype(int)
    test["toxic_score"] = fmt_fixed(score, 4)

    cols = ["id", "source", "text", "identity", "term", "toxic"]
    out = SAMPLES / "toxicity"
    write_csv(train[cols], out / "train.csv")
    write_csv(test[cols + ["toxic_score", "toxic_pred"]], out / "test.csv")
    shutil.copyfile(src_dir / "LICENSE.apache-2.0", out / "LICENSE.apache-2.0")

    # Summary for the README.
    groups = {}
    for source in ("all", "wikipedia", "madlibs"):
        part = test if source == "all" else test[test["source"] == source]
        groups[source] = {g: _tox_rates(part[part["identity"] == g]) for g in ("lgbtq", "other", "none")}
        groups[source]["total"] = _tox_rates(part)
    m = test[test["source"] == "madlibs"]
    by_template = {(t, g, y): _tox_rates(d) for (t, g, y), d in m.groupby(["template", "identity", "toxic"])}
    clean = m[m["toxic"] == 0]
    term_fpr = clean.groupby("term")["toxic_pred"].agg(["size", "mean"]).sort_values("mean", ascending=False)
    vocab = vec.vocabulary_
    weights = {t: float(clf.coef_[0][vocab[t]]) for t in TOX_LGBTQ_TERMS + TOX_OTHER_TERMS if t in vocab}
    return {
        "rows": {"train": len(train), "train_wikipedia": len(wiki_train), "train_madlibs": len(mad_train),
                 "test": len(test), "test_wikipedia": len(wiki_test), "test_madlibs": len(pick)},
        "groups": groups,
        "by_template": by_template,
        "term_fpr": term_fpr,
        "weights": weights,
    }


# ----------------------------------------------------------------------------

def build_compas_balanced() -> dict:
    """Balanced COMPAS: equal row counts in every race x outcome cell, per split.

    Subsampled (seed 2017) from samples/compas/{train,test}.csv, African-American
    and Caucasian rows only. In such data race and outcome are exactly
    independent, so co-occurrence metrics (BiasAmp->) have no direction to
    amplify and report 0, while a model can still amplify through proxies.
    """
    out = SAMPLES / "compas_balanced"
    sizes = {}
    for split in ("train", "test"):
        df = pd.read_csv(SAMPLES / "compas" / f"{split}.csv", low_memory=False)
        df = df[df["race"].isin(RACE_PAIR)]
        cells = df.groupby(["race", "two_year_recid"])
        m = int(cells.size().min())
        rng = np.random.default_rng(SPLIT_SEED)
        keep = []
        for _, idx in sorted(cells.groups.items()):
            keep.extend(sorted(rng.choice(np.asarray(idx), size=m, replace=False).tolist()))
        bal = df.loc[sorted(keep)]
        write_csv(bal, out / f"{split}.csv")
        sizes[split] = {"per_cell": m, "rows": len(bal)}
    return sizes

# ----------------------------------------------------------------------------
# NYC stop-and-frisk, four models scoring the same stops (Aequitas example)
# ----------------------------------------------------------------------------

NYC_MODELS = [1, 3, 5, 7]
NYC_RACES = ["BLACK", "WHITE HISPANIC", "BLACK HISPANIC", "WHITE", "ASIAN/PAC.ISL"]


def build_nyc_sqf() -> dict:
    """One prediction file per model_id of ``nyc_sqf_for_aequitas_4models.csv``.

    The four models score the same 11,296 stops, in the same order: the source's
    unnamed index column runs 0..11295 within every model, and race, sex and
    label_value agree row by row (checked here). So the spread across the files
    is the spread across four models on identical data. Rows with a missing
    label_value (12 per model, the same stops) and the AMER IND stops (9 per
    model) are left out; label and score are written as 0/1 integers.
    """
    src_dir = DATA / "aequitas"
    raw = pd.read_csv(src_dir / "nyc_sqf_for_aequitas_4models.csv")
    raw = raw.rename(columns={raw.columns[0]: "stop_id"})
    if sorted(raw["model_id"].unique().tolist()) != NYC_MODELS:
        raise SystemExit(f"nyc_sqf: expected model_id {NYC_MODELS}")
    if not set(raw["score"].unique()) <= {0.0, 1.0}:
        raise SystemExit("nyc_sqf: score is not a 0/1 prediction")
    per_model = {m: g.reset_index(drop=True) for m, g in raw.groupby("model_id", sort=True)}
    first = per_model[NYC_MODELS[0]]
    for m, g in per_model.items():
        for col in ("stop_id", "race", "sex", "label_value"):
            if not g[col].equals(first[col]):
                raise SystemExit(f"nyc_sqf: model {m} differs from model {NYC_MODELS[0]} in {col}")
    keep = first["label_value"].notna() & first["race"].isin(NYC_RACES)
    out = SAMPLES / "nyc_sqf"
    info = {"rows_per_model": len(first), "missing_label": int(first["label_value"].isna().sum()),
            "amer_ind": int((first["race"] == "AMER IND").sum()), "rows_kept": int(keep.sum()), "models": {}}
    for m, g in per_model.items():
        g = g[keep]
        df = pd.DataFrame({
            "stop_id": g["stop_id"].astype(int),
            "race": g["race"],
            "sex": g["sex"],
            "label": g["label_value"].astype(int),
            "pred": g["score"].astype(int),
        })
        write_csv(df, out / "runs" / f"model_{m}.csv")
        info["models"][m] = {
            "accuracy": float((df["label"] == df["pred"]).mean()),
            "predicted_positive": float(df["pred"].mean()),
            "agree_with_first": float((g["score"].to_numpy() == first.loc[keep, "score"].to_numpy()).mean()),
        }
    info["base_rate"] = float(first.loc[keep, "label_value"].mean())
    info["race_counts"] = first.loc[keep, "race"].value_counts().to_dict()
    info["sex_counts"] = first.loc[keep, "sex"].value_counts().to_dict()
    shutil.copyfile(src_dir / "LICENSE.aequitas", out / "LICENSE.aequitas")
    return info


# ----------------------------------------------------------------------------
# Synthetic hiring sample (NYC Local Law 144 / EEOC four-fifths audits)
# ----------------------------------------------------------------------------

HIRING_SEED = 144
HIRING_CUTOFF = 70.0   # selected = 1 exactly when the (rounded) score is >= this
HIRING_SCORE_SD = 15.0
HIRING_P_UNKNOWN_WORD = 0.6  # unknown sex written "Unknown" with this probability, else an empty field
# EEO-1 race/ethnicity codes as written in the file, and what they stand for.
HIRING_RACE_CODES = {
    "HL": "Hispanic or Latino",
    "WH": "White",
    "BL": "Black or African American",
    "AS": "Asian",
    "NH": "Native Hawaiian or Other Pacific Islander",
    "AI": "American Indian or Alaska Native",
    "TW": "Two or More Races",
    "DS": "decline to state (not an EEO-1 category: race/ethnicity unknown)",
}
# The design: per race/ethnicity and sex, (applicants, selected).  These are
# exact counts, not probabilities: every cell of the file has precisely these
# numbers, so the planted impact ratios hold in the file itself.  "unknown"
# sex rows are written as "Unknown" or as an empty field.
HIRING_CELLS = {
    "WH": {"Male": (2050, 707), "Female": (1790, 600), "unknown": (120, 48)},
    "HL": {"Male": (760, 216), "Female": (640, 172), "unknown": (40, 14)},   # IR ~0.82: just above 4/5
    "BL": {"Male": (560, 116), "Female": (530, 104), "unknown": (30, 10)},   # IR ~0.60: clear adverse impact
    "AS": {"Male": (380, 140), "Female": (320, 69), "unknown": (20, 8)},     # marginal fine, Female x AS ~0.59
    "TW": {"Male": (122, 33), "Female": (110, 29), "unknown": (8, 3)},       # IR ~0.79: just below 4/5
    "AI": {"Male": (62, 19), "Female": (54, 16), "unknown": (4, 2)},         # 1.5 % of rows
    "NH": {"Male": (61, 19), "Female": (15, 4), "unknown": (4, 2)},          # 1 % of rows; Female x NH: 15 people
    "DS": {"Male": (150, 63), "Female": (130, 55), "unknown": (40, 18)},     # declined: highest raw rate
}
HIRING_SEXES = ["Male", "Female", "unknown"]


def _hiring_rates(table: dict, unknown: set) -> dict:
    """Selection rate and impact ratio per key of {key: (n, selected)}; the
    reference is the highest rate among the keys not in ``unknown``."""
    rates = {k: s / n for k, (n, s) in table.items()}
    top = max(r for k, r in rates.items() if k not in unknown)
    return {k: {"n": table[k][0], "selected": table[k][1], "rate": round(rates[k], 4),
                "impact_ratio": round(rates[k] / top, 4)} for k in table}


def build_hiring() -> dict:
    """Synthetic applicants screened by a made-up automated employment decision tool.

    Needs nothing from ../shared/data.  Cell sizes and selected counts are fixed
    by HIRING_CELLS; the random parts (seed HIRING_SEED) are the scores, the
    spelling of unknown sex and the row order.  Scores of a cell come from a
    normal distribution N(mu, HIRING_SCORE_SD) whose mean puts exactly the
    cell's planted selection rate above HIRING_CUTOFF: selected rows get a
    draw from that distribution conditioned on [cutoff, 100], the others one
    conditioned on [0, cutoff).  Writes samples/hiring/applicants.csv and
    truth.json (parameters, and counts read back from the CSV with plain Python).
    """
    rng = np.random.default_rng(HIRING_SEED)
    std = NormalDist()
    race_col, sex_col, sel_col, mus, cells_out = [], [], [], [], []
    for race, by_sex in HIRING_CELLS.items():
        for sex in HIRING_SEXES:
            n, k = by_sex[sex]
            mu = HIRING_CUTOFF - HIRING_SCORE_SD * std.inv_cdf(1 - k / n)
            race_col += [race] * n
            sex_col += [sex] * n
            sel_col += [1] * k + [0] * (n - k)
            mus += [mu] * n
            cells_out.append({"race_ethnicity": race, "sex": sex, "n": n, "selected": k,
                              "selection_rate": round(k / n, 4), "score_mean": round(mu, 4)})
    n_rows = len(race_col)
    selected = np.array(sel_col)
    mu = np.array(mus)
    lo = np.where(selected == 1, HIRING_CUTOFF, 0.0)
    hi = np.where(selected == 1, 100.0, HIRING_CUTOFF)
    p_lo = np.array([std.cdf(z) for z in (lo - mu) / HIRING_SCORE_SD])
    p_hi = np.array([std.cdf(z) for z in (hi - mu) / HIRING_SCORE_SD])
    u = p_lo + rng.random(n_rows) * (p_hi - p_lo)
    latent = mu + HIRING_SCORE_SD * np.array([std.inv_cdf(p) for p in u])
    score = np.round(latent, 1)
    # Rounding must not move a row across the cutoff or out of [0, 100].
    score = np.where(selected == 1, np.clip(score, HIRING_CUTOFF, 100.0), np.clip(score, 0.0, HIRING_CUTOFF - 0.1))

    sex = np.array(sex_col, dtype=object)
    unknown = np.flatnonzero(sex == "unknown")
    sex[unknown] = np.where(rng.random(len(unknown)) < HIRING_P_UNKNOWN_WORD, "Unknown", "")

    order = rng.permutation(n_rows)
    df = pd.DataFrame({
        "applicant_id": np.arange(1, n_rows + 1),
        "sex": sex[order],
        "race_ethnicity": np.array(race_col)[order],
        "score": fmt_fixed(score[order], 1),
        "selected": selected[order].astype(int),
    })
    out = SAMPLES / "hiring"
    write_csv(df, out / "applicants.csv")

    # Counts straight from the written file, with the csv module only.
    with open(out / "applicants.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    med = median(float(r["score"]) for r in rows)

    def tally(key) -> dict:
        res: dict = {}
        for r in rows:
            c = res.setdefault(key(r), {"n": 0, "selected": 0, "above_median": 0})
            c["n"] += 1
            c["selected"] += int(r["selected"])
            c["above_median"] += float(r["score"]) > med
        return res

    by_race = tally(lambda r: r["race_ethnicity"])
    by_sex = tally(lambda r: r["sex"])
    by_cell = tally(lambda r: (r["sex"], r["race_ethnicity"]))
    for r in rows:
        if (float(r["score"]) >= HIRING_CUTOFF) != (r["selected"] == "1"):
            raise SystemExit(f"hiring: applicant {r['applicant_id']}: selected does not match score >= cutoff")
    for race, by in HIRING_CELLS.items():
        for s in HIRING_SEXES:
            spellings = ["Unknown", ""] if s == "unknown" else [s]
            got = [by_cell.get((w, race), {"n": 0, "selected": 0}) for w in spellings]
            if (sum(g["n"] for g in got), sum(g["selected"] for g in got)) != by[s]:
                raise SystemExit(f"hiring: {race} x {s} in the file differs from HIRING_CELLS")

    race_order = list(HIRING_CELLS)
    sex_order = ["Male", "Female", "Unknown", ""]
    race_design = {r: tuple(map(sum, zip(*by.values()))) for r, by in HIRING_CELLS.items()}
    sex_design = {s: tuple(map(sum, zip(*(by[s] for by in HIRING_CELLS.values())))) for s in HIRING_SEXES}
    cell_design = {f"{s} x {r}": HIRING_CELLS[r][s] for r in race_order for s in HIRING_SEXES}
    truth = {
        "description": "SYNTHETIC hiring sample: made-up applicants scored by a made-up automated employment "
                       "decision tool. It describes no real people, employer or tool. Documented fixture, "
                       "not a test oracle. See samples/README.md.",
        "file": "applicants.csv",
        "generator": {"script": "samples/build_samples.py", "function": "build_hiring", "numpy_seed": HIRING_SEED},
        "codes": {
            "race_ethnicity": HIRING_RACE_CODES,
            "sex": {"Male": "Male", "Female": "Female", "Unknown": "unknown", "": "unknown (empty field)"},
        },
        "parameters": {
            "rows": n_rows,
            "selection_rule": f"selected = 1 exactly when score >= {HIRING_CUTOFF:.1f}",
            "cutoff": HIRING_CUTOFF,
            "score": f"per cell, N(score_mean, {HIRING_SCORE_SD:.0f}) conditioned on [cutoff, 100] for selected "
                     "rows and on [0, cutoff) for the others, rounded to 1 decimal",
            "score_sd": HIRING_SCORE_SD,
            "unknown_sex_written_as": {"Unknown": HIRING_P_UNKNOWN_WORD,
                                       "": round(1 - HIRING_P_UNKNOWN_WORD, 4)},
            "cells": cells_out,
            "planted": {
                "note": "selection rates and impact ratios of the design counts (which the file has exactly); "
                        "the reference is the highest rate among known categories (DS and unknown sex excluded)",
                "race_ethnicity": _hiring_rates(race_design, {"DS"}),
                "sex": _hiring_rates(sex_design, {"unknown"}),
                "intersection": _hiring_rates(cell_design, {k for k in cell_design
                                                            if k.startswith("unknown") or k.endswith("DS")}),
            },
        },
        "counts": {
            "note": "counted from applicants.csv; above_median = score strictly above the median score of all rows",
            "rows": len(rows),
            "selected": sum(int(r["selected"]) for r in rows),
            "median_score": med,
            "above_median": sum(float(r["score"]) > med for r in rows),
            "race_ethnicity": {r: by_race[r] for r in race_order},
            "sex": {s: by_sex[s] for s in sex_order},
            "intersection": [{"sex": s, "race_ethnicity": r, **by_cell[(s, r)]}
                             for s in sex_order for r in race_order if (s, r) in by_cell],
        },
    }
    with open(out / "truth.json", "w", encoding="utf-8", newline="\n") as f:
        f.write(json.dumps(truth, indent=2, ensure_ascii=False) + "\n")
    return {"rows": len(rows), "median_score": med, "planted": truth["parameters"]["planted"],
            "counts": truth["counts"]}


def print_hiring(hiring: dict) -> None:
    c = hiring["counts"]
    print("Hiring (synthetic): %d applicants, %d selected, median score %.2f, %d above the median"
          % (c["rows"], c["selected"], c["median_score"], c["above_median"]))
    for level in ("race_ethnicity", "sex", "intersection"):
        print(f"Hiring planted selection rates and impact ratios by {level} (n, selected):")
        for k, v in hiring["planted"][level].items():
            print(f"  {k:<18} n={v['n']:<5} selected={v['selected']:<5} rate {v['rate']:.4f}  "
                  f"impact ratio {v['impact_ratio']:.4f}")
    print("Hiring sex as written:", {s or "(empty)": v["n"] for s, v in c["sex"].items()})


def print_toxicity(tox: dict) -> None:
    print("Toxicity rows:", tox["rows"])
    print("Toxicity test.csv, accuracy / false-positive rate / false-negative rate (n rows):")
    for source, groups in tox["groups"].items():
        for g, r in groups.items():
            print(f"  {source:<9} {g:<5}  acc {r['acc']:.4f}  fpr {r['fpr']:.4f}  fnr {r['fnr']:.4f}  (n={r['n']})")
    acc = tox["groups"]["all"]
    print("  accuracy gap lgbtq - other: %+.4f" % (acc["lgbtq"]["acc"] - acc["other"]["acc"]))
    print("Toxicity madlibs rows of test.csv by template x identity x toxic:")
    for (t, g, y), r in sorted(tox["by_template"].items()):
        print(f"  {t:<14} {g:<5} toxic={y}  acc {r['acc']:.4f}  (n={r['n']})")
    print("Toxicity non-toxic madlibs rows: share predicted toxic, by term (top 12):")
    print(tox["term_fpr"].head(12).round(4).to_string())
    w = sorted(tox["weights"].items(), key=lambda kv: -kv[1])
    print("Toxicity model weights of identity unigrams (top 8):", [(t, round(v, 2)) for t, v in w[:8]])


# ----------------------------------------------------------------------------
# COMPAS with sex annotated on a random 5 % of rows (an annotated-sample audit)
# ----------------------------------------------------------------------------

ANNOTATED_SHARE = 0.05


def build_annotated() -> dict:
    """samples/annotated/defendants.csv: every row of samples/compas/all.csv (its order, its columns, its text
    unchanged), with `sex` kept on a simple random sample of 5 % of the rows (seed 2017, a fixed sample size) and
    blank on the others, as if sex had been annotated on that sample only. The true sex of every row stays in
    samples/compas/all.csv."""
    with open(SAMPLES / "compas" / "all.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    j = header.index("sex")
    n = len(body)
    keep = np.zeros(n, dtype=bool)
    keep[np.random.default_rng(SPLIT_SEED).choice(n, size=round(ANNOTATED_SHARE * n), replace=False)] = True
    for r, k in zip(body, keep):
        if not k:
            r[j] = ""
    out = SAMPLES / "annotated" / "defendants.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerows([header] + body)
    return {"rows": n, "annotated": int(keep.sum())}


def main() -> None:
    compas = build_compas()
    annotated = build_annotated()
    adult = build_adult()
    multi = build_multilabel()
    balanced = build_compas_balanced()
    tox = build_toxicity()
    nyc = build_nyc_sqf()
    hiring = build_hiring()
    print("COMPAS balanced (rows per race x outcome cell):", balanced)

    print("COMPAS rows:", compas["rows"])
    print("COMPAS recid_pred accuracy on test: %.4f" % compas["recid_accuracy_test"])
    print("COMPAS race_pred accuracy on test (African-American/Caucasian rows): %.4f"
          % compas["race_pred_accuracy_test_pair"])
    print("COMPAS race_pred counts (all rows):", compas["race_pred_counts"])
    print("Adult rows:", adult["rows"])
    print("Adult test.csv gender x race cell sizes:")
    print(adult["test_cells"].to_string())
    print("Multilabel rows:", multi["rows"])
    print("Multilabel gender_pred accuracy (train): %.4f" % multi["gender_pred_accuracy_train"])
    print("Multilabel positives per row (train) mean/min/max:", multi["labels_per_row_train"])
    print("Multilabel rows given one forced positive:", multi["rows_forced_nonempty"])
    print(multi["task_summary"].to_string(index=False))
    print_toxicity(tox)
    print("NYC SQF: %(rows_per_model)d stops per model (the same stops for every model), %(missing_label)d "
          "without a label and %(amer_ind)d AMER IND left out: %(rows_kept)d rows per file" % nyc)
    print("NYC SQF base rate (label = 1): %.4f" % nyc["base_rate"], "race:", nyc["race_counts"], "sex:", nyc["sex_counts"])
    for m, r in nyc["models"].items():
        print(f"  model {m}: accuracy {r['accuracy']:.4f}  predicted positive {r['predicted_positive']:.4f}"
              f"  same prediction as model 1 on {r['agree_with_first']:.4f} of rows")
    print_hiring(hiring)
    print("Annotated sample: sex kept on %(annotated)d of %(rows)d rows" % annotated)

    print()
    print("Sanity check (COMPAS all.csv, prediction decile_high = decile_score >= 5):")
    expected = {
        "African-American": {"fpr": 0.4485, "fnr": 0.2799},
        "Caucasian": {"fpr": 0.2345, "fnr": 0.4772},
    }
    for race, rates in compas["checks"].items():
        print(f"  {race:<17} false-positive rate {rates['fpr']:.4f}   false-negative rate {rates['fnr']:.4f}")
        for k, v in expected[race].items():
            assert round(rates[k], 4) == v, (race, k, rates[k], v)
    print("  matches ProPublica's published figures.")


if __name__ == "__main__":
    main()
