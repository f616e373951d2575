"""The papers and rules the report cites: the full reference (the report's bibliography) and the short label
printed beside a metric. A family that cites a new paper adds it here."""

REFERENCES = {
    "ugesp1978": "Equal Employment Opportunity Commission, Civil Service Commission, Department of Labor and "
                 "Department of Justice (1978). Uniform Guidelines on Employee Selection Procedures, 29 CFR part "
                 "1607; §1607.4(D), adverse impact and the \"four-fifths rule\".",
    "zhao2017": "Jieyu Zhao, Tianlu Wang, Mark Yatskar, Vicente Ordonez and Kai-Wei Chang (2017). "
                "Men Also Like Shopping: Reducing Gender Bias Amplification using Corpus-level Constraints. "
                "Proceedings of EMNLP 2017.",
    "wang2021": "Angelina Wang and Olga Russakovsky (2021). Directional Bias Amplification. "
                "Proceedings of ICML 2021.",
    "zhao2023": "Dora Zhao, Jerone T. A. Andrews and Alice Xiang (2023). Men Also Do Laundry: "
                "Multi-Attribute Bias Amplification. Proceedings of ICML 2023.",
    "ethayarajh2020": "Kawin Ethayarajh (2020). Is Your Classifier Actually Biased? Measuring Fairness under "
                      "Uncertainty with Bernstein Bounds. Proceedings of ACL 2020.",
    "wang2019": "Tianlu Wang, Jieyu Zhao, Mark Yatskar, Kai-Wei Chang and Vicente Ordonez (2019). Balanced "
                "Datasets Are Not Enough: Estimating and Mitigating Gender Bias in Deep Image Representations. "
                "Proceedings of ICCV 2019.",
    "efron1979": "Bradley Efron (1979). Bootstrap Methods: Another Look at the Jackknife. "
                 "The Annals of Statistics 7(1).",
    "zhao2020": "Jieyu Zhao and Kai-Wei Chang (2020). LOGAN: Local Group Bias Detection by Clustering. "
                "Findings of the Association for Computational Linguistics: EMNLP 2020.",
    "newcombe1998": "Robert G. Newcombe (1998). Interval Estimation for the Difference Between Independent "
                    "Proportions: Comparison of Eleven Methods. Statistics in Medicine 17(8).",
    "singh2018": "Ashudeep Singh and Thorsten Joachims (2018). Fairness of Exposure in Rankings. Proceedings of "
                 "KDD 2018.",
    "geyik2019": "Sahin Cem Geyik, Stuart Ambler and Krishnaram Kenthapadi (2019). Fairness-Aware Ranking in Search "
                 "& Recommendation Systems with Application to LinkedIn Talent Search. Proceedings of KDD 2019.",
    "hanley1982": "James A. Hanley and Barbara J. McNeil (1982). The Meaning and Use of the Area under a Receiver "
                  "Operating Characteristic (ROC) Curve. Radiology 143(1).",
    "delong1988": "Elizabeth R. DeLong, David M. DeLong and Daniel L. Clarke-Pearson (1988). Comparing the Areas "
                  "under Two or More Correlated Receiver Operating Characteristic Curves: A Nonparametric Approach. "
                  "Biometrics 44(3).",
    "sun2014": "Xu Sun and Weichao Xu (2014). Fast Implementation of DeLong's Algorithm for Comparing the Areas "
               "Under Correlated Receiver Operating Characteristic Curves. IEEE Signal Processing Letters 21(11).",
    "kallus2019": "Nathan Kallus and Angela Zhou (2019). The Fairness of Risk Scores Beyond Classification: "
                  "Bipartite Ranking and the xAUC Metric. Advances in Neural Information Processing Systems 32.",
    "steyerberg2019": "Ewout W. Steyerberg (2019). Clinical Prediction Models, 2nd edition, chapter 15 "
                      "(calibration in the large). Springer.",
    "naeini2015": "Mahdi Pakdaman Naeini, Gregory F. Cooper and Milos Hauskrecht (2015). Obtaining Well Calibrated "
                  "Probabilities Using Bayesian Binning. Proceedings of AAAI 2015.",
    "guo2017": "Chuan Guo, Geoff Pleiss, Yu Sun and Kilian Q. Weinberger (2017). On Calibration of Modern Neural "
               "Networks. Proceedings of ICML 2017.",
    "cohen1988": "Jacob Cohen (1988). Statistical Power Analysis for the Behavioral Sciences, 2nd ed., §2.5.",
    "massart1990": "Pascal Massart (1990). The Tight Constant in the Dvoretzky–Kiefer–Wolfowitz Inequality. "
                   "The Annals of Probability 18(3).",
    "agarwal2019": "Alekh Agarwal, Miroslav Dudík and Zhiwei Steven Wu (2019). Fair Regression: Quantitative "
                   "Definitions and Reduction-based Algorithms. Proceedings of ICML 2019.",
    "maurer2009": "Andreas Maurer and Massimiliano Pontil (2009). Empirical Bernstein Bounds and Sample Variance "
                  "Penalization. Proceedings of COLT 2009.",
}

REFERENCE_LABELS = {
    "zhao2017": "Zhao et al. 2017",
    "wang2021": "Wang & Russakovsky 2021",
    "zhao2023": "Zhao, Andrews & Xiang 2023",
    "ethayarajh2020": "Ethayarajh 2020",
    "wang2019": "Wang et al. 2019",
    "efron1979": "Efron 1979",
    "zhao2020": "Zhao & Chang 2020",
    "newcombe1998": "Newcombe 1998",
    "singh2018": "Singh & Joachims 2018",
    "geyik2019": "Geyik, Ambler & Kenthapadi 2019",
    "hanley1982": "Hanley & McNeil 1982",
    "delong1988": "DeLong, DeLong & Clarke-Pearson 1988",
    "sun2014": "Sun & Xu 2014",
    "kallus2019": "Kallus & Zhou 2019",
    "steyerberg2019": "Steyerberg 2019",
    "naeini2015": "Naeini, Cooper & Hauskrecht 2015",
    "guo2017": "Guo et al. 2017",
    "cohen1988": "Cohen 1988",
    "massart1990": "Massart 1990",
    "agarwal2019": "Agarwal, Dudík & Wu 2019",
    "maurer2009": "Maurer & Pontil 2009",
}
