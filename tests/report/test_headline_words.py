"""Disparity headlines in words: who bears the costly outcome more often, by how many points (hand-written cases)."""

from reportgen.report.context import amplification_sentence, headline_sentence

IV = {"lower": 0.087, "upper": 0.230}


def test_unfavourable_prediction_among_the_truly_negative():
    pair = {"group": "race=African-American", "reference": "race=Caucasian", "task": "recidivism=1",
            "condition": "y=0", "cost": "y_hat (positive prediction is unfavourable)", "delta": 0.1596}
    assert headline_sentence(pair, IV) == ("Among rows truly not recidivism=1, African-American rows were predicted "
                                           "recidivism=1 16.0 points more often than Caucasian rows [8.7, 23.0]")
    assert headline_sentence({**pair, "condition": "y=1"}, IV).startswith("Among rows truly recidivism=1, ")


def test_negative_delta_names_the_reference_first_and_flips_the_interval():
    pair = {"group": "gender=Female", "reference": "gender=Male", "task": "income=1", "condition": "all",
            "cost": "1 - y_hat (positive prediction is favourable)", "delta": -0.05}
    assert headline_sentence(pair, {"lower": -0.08, "upper": -0.02}) == (
        "Male rows were predicted income=1 5.0 points less often than Female rows [2.0, 8.0]")


def test_accuracy_and_undefined():
    pair = {"group": "g=a", "reference": "g=b", "task": "t=1", "condition": "all", "cost": "error (1[y != y_hat])",
            "delta": 0.0}
    assert headline_sentence(pair, None) == "a and b rows were misclassified equally often"
    assert headline_sentence({**pair, "delta": None}, None) == ""


def test_reasons_render_code_spans_not_backticks():
    from reportgen.report.filters import ticks

    assert str(ticks("needs predicted attributes: add `predicted:` to <b>")) == \
        "needs predicted attributes: add <code>predicted:</code> to &lt;b&gt;"
    assert str(ticks(None)) == ""


def test_the_unit_names_who_the_rows_are():
    pair = {"group": "race=African-American", "reference": "race=Caucasian", "task": "recidivism=1",
            "condition": "y=0", "cost": "y_hat (positive prediction is unfavourable)", "delta": 0.1596}
    assert headline_sentence(pair, IV, "defendants") == (
        "Among defendants truly not recidivism=1, African-American defendants were predicted recidivism=1 16.0 points "
        "more often than Caucasian defendants [8.7, 23.0]")


def test_amplification_in_words_names_the_pair_that_moves_the_value_most():
    iv = {"lower": -0.126, "upper": -0.025}
    pairs = [{"group": "race=African-American", "task": "recidivism=1", "y": 1, "delta": 0.049,
              "interval": {"lower": 0.007, "upper": 0.089}},
             {"group": "race=Caucasian", "task": "recidivism=1", "y": -1, "delta": -0.0754, "interval": iv},
             {"group": "race=Other", "task": "recidivism=1", "y": 0, "delta": 0.2},       # y = 0: no contribution
             {"group": "race=Asian", "task": "recidivism=1", "y": None, "delta": None}]   # undefined
    assert amplification_sentence(pairs, "defendants", "train") == (
        "Largest: Caucasian defendants were predicted recidivism=1 7.5 points less often than their true rate "
        "[2.5, 12.6]")
    assert amplification_sentence(pairs, "defendants", "uniform").endswith("than the declared base rate [2.5, 12.6]")
    assert amplification_sentence(pairs[2:], "rows", "train") == ""



def test_amplification_in_words_names_a_pair_that_pulls_the_value_its_way():
    """nyc_sqf_runs: race amplifies (0.065 [0.026, 0.105]) but the pair of largest |Δ| (ASIAN/PAC.ISL, y = −1,
    Δ = +0.426) reduces it; naming it beside "amplifies" contradicted the row. The sentence names the pair of
    largest y·Δ in the value's direction, and says when every group shares one shift (all Δ > 0), which y·Δ counts
    both ways."""
    def pair(g, y, d):
        return {"group": f"race={g}", "task": "outcome=1", "y": y, "delta": d,
                "interval": {"lower": d - 0.1, "upper": d + 0.1}}

    pairs = [pair("ASIAN", -1, 0.426), pair("WHITE HISPANIC", 1, 0.393), pair("BLACK", 1, 0.379)]
    amp = amplification_sentence(pairs, "rows", "train", value=0.065)
    assert amp.startswith("Largest: WHITE HISPANIC rows were predicted outcome=1 39.3 points more often than their "
                          "true rate [29.3, 49.3]"), amp
    assert "every group is predicted more often than its true rate (by 37.9 to 42.6 points)" in amp
    red = amplification_sentence(pairs, "rows", "train", value=-0.02)
    assert red.startswith("Largest: ASIAN rows were predicted outcome=1 42.6 points more often"), red
    mixed = [pair("A", 1, 0.05), pair("B", -1, -0.02)]
    assert "every group" not in amplification_sentence(mixed, "rows", "train", value=0.03)
