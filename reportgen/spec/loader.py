"""Reading a spec: ``load_spec(path)`` reads YAML with ``safe_load`` semantics, validates it and returns a
:class:`LoadedSpec`; every problem is reported at once as a :class:`~reportgen.spec.errors.SpecError` whose lines
read ``spec.yaml:LINE:COL: key.path: message``. A spec with schema errors is still checked further, on a copy with
each misspelt key read as meant, or without the wrong keys (or with placeholders for wrong entries), so one run
reports every problem."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path as FsPath
from typing import Any, Iterable

from pydantic import ValidationError

from reportgen.spec import profiles
from reportgen.spec.checks import cross_key_problems
from reportgen.spec.errors import MSG_EMPTY_SPEC, MSG_NOT_A_MAPPING, Problem, SpecError
from reportgen.spec.messages import UNION_TAGS, dotted, validation_problems, value_at
from reportgen.spec.models import Spec
from reportgen.spec.values import KeyProblem
from reportgen.spec.yamlmap import load_with_marks


class LoadedSpec:
    """A validated spec plus where it came from."""

    def __init__(self, spec: Spec | None, path: FsPath, text: str, marks: Any,
                 index_maps: dict[str, list[int]] | None = None) -> None:
        self.spec = spec
        self.path = path
        self.text = text
        self.marks = marks
        self.index_maps = index_maps or {}
        self.problems: list[Problem] = []
        self.data_checkable = spec is not None
        self.sha256 = hashlib.sha256(text.encode("utf-8")).hexdigest()

    def raise_problems(self, more: list[Problem] | None = None) -> None:
        """Raise every problem found (spec problems first), if any. A data problem at a key whose value is
        already wrong in the spec is left out: the check ran on the default that stood in for the wrong value,
        so it would speak of a value the user never wrote (a data check is skipped when its own key is broken)."""
        broken = [p.path for p in self.problems if p.path] + list(getattr(self, "renamed", []))

        def under_broken(p: Problem) -> bool:
            return _under(p.path, broken)

        allp = list(dict.fromkeys(list(self.problems) + [p for p in (more or []) if not under_broken(p)]))  # once
        if allp or self.spec is None:
            raise SpecError(allp)

    @property
    def dir(self) -> FsPath:
        return self.path.parent

    def resolve(self, rel: str) -> FsPath:
        spilled = getattr(self, "sql_paths", None)
        if spilled and rel in spilled:  # a query's rows, once read (reportgen/data/sql.py)
            return spilled[rel]
        p = FsPath(rel).expanduser()
        return p if p.is_absolute() else (self.dir / p)

    def _in_file(self, path: tuple) -> tuple:
        """``path`` numbered as in the file (a metric or gate dropped for its own problem shifts the ones after)."""
        path = tuple(path)
        if len(path) >= 2 and path[0] in self.index_maps and isinstance(path[1], int):
            path = (path[0], self.index_maps[path[0]][path[1]]) + path[2:]
        return path

    def problem(self, path: tuple, message: str) -> Problem:
        path = self._in_file(path)
        line, col = self.marks.get(path)
        return Problem(str(self.path), line, col, dotted(path), message)

    def rule(self, where: tuple, message: str, reads: tuple[tuple, ...]) -> Problem:
        """The problem of a rule across keys (spec/checks.py and the rules it runs), at ``where``, naming the key
        paths it judged (``reads``, at least one: see :class:`~reportgen.spec.values.KeyProblem`)."""
        p = self.problem(where, message)
        return Problem(p.file, p.line, p.col, p.path, p.message, tuple(dotted(self._in_file(r)) for r in reads))

    def rules(self, found: Iterable[KeyProblem]) -> list[Problem]:
        """The problems of a model's ``spec_problems``."""
        return [self.rule(*kp) for kp in found]


PLACEHOLDER = "__reportgen_placeholder__"
_STUBS = {"tasks": lambda e: {"column": str(e.get("column", PLACEHOLDER)) if isinstance(e, dict) else PLACEHOLDER,
                              "predicted": PLACEHOLDER},
          "attributes": lambda e: {"column": str(e.get("column", PLACEHOLDER)) if isinstance(e, dict) else PLACEHOLDER}}


def _prune(raw: dict, errors: list[dict], *, stub: bool = False) -> tuple[dict, dict[str, list[int]]] | None:
    """A copy of ``raw`` without the offending keys / list items, to check the rest.

    Returns (pruned, index maps for pruned lists) or None when an error cannot
    be pruned away (e.g. a required key is missing).
    """
    import copy

    pruned = copy.deepcopy(raw)
    drop_items: dict[str, set[int]] = {}
    for err in errors:
        loc = [p for p in err["loc"] if not (isinstance(p, str) and ("[" in p or p in UNION_TAGS))]
        if err["type"] == "missing":
            return None
        if len(loc) >= 2 and loc[0] in ("metrics", "gates") and isinstance(loc[1], int):
            drop_items.setdefault(loc[0], set()).add(loc[1])
            continue
        if stub and len(loc) >= 2 and loc[0] in _STUBS and isinstance(pruned.get(loc[0]), dict) \
                and loc[1] in pruned[loc[0]]:
            pruned[loc[0]][loc[1]] = _STUBS[loc[0]](pruned[loc[0]][loc[1]])  # the whole entry, by a placeholder
            continue
        parent: Any = pruned
        for p in loc[:-1]:
            try:
                parent = parent[p]
            except (KeyError, IndexError, TypeError):
                return None
        if isinstance(parent, dict) and loc and loc[-1] in parent:
            del parent[loc[-1]]
        else:
            return None
    maps: dict[str, list[int]] = {}
    for key, idx in drop_items.items():
        items = pruned.get(key)
        if not isinstance(items, list):
            return None
        maps[key] = [i for i in range(len(items)) if i not in idx]
        pruned[key] = [items[i] for i in maps[key]]
    return pruned, maps


def _under(path: str, keys: list[str]) -> bool:
    return any(path == k or path.startswith((k + ".", k + "[")) for k in keys)


def _refused_keys(exc: ValidationError) -> list[str]:
    """The dotted path of each key whose value the models refused (its own message already says what is wrong)."""
    out = []
    for err in exc.errors():
        loc = [p for p in err["loc"] if not (isinstance(p, str) and ("[" in p or p in UNION_TAGS))]
        if len(loc) > 1 and isinstance(loc[-1], str) and err["type"] != "missing":
            out.append(dotted(tuple(loc)))
    return out


def _said(p: Problem, refused: list[str]) -> bool:
    """Whether rule problem ``p`` judged a key whose value was refused (``p.reads``, named where the rule is
    written): it judged the stand-in, and the mistake is already reported once, at the key (e.g. a continuous task
    "needs favorable: higher or lower" after `favorable: cheaper` was refused)."""
    return any(_under(r, refused) for r in p.reads)


class RuleWithoutReads(TypeError):
    """A rule across keys reported a problem without naming the keys it judged: a mistake in reportgen."""


def _named_reads(problems: list[Problem]) -> list[Problem]:
    """``problems``, each a rule's, checked to name the keys it judged (loudly: a rule that forgot would report a
    second message for a mistake already reported at its key)."""
    for p in problems:
        if not p.reads:
            raise RuleWithoutReads(f"the rule reporting '{p.path}: {p.message}' names no key it judged; write it "
                                   "with ls.rule(where, message, reads) or KeyProblem(where, message, reads)")
    return problems


def _absent(p: Problem, entries: list[tuple]) -> bool:
    """Whether problem ``p`` is about an entry (a task, an attribute, ...) with an unknown key: what the check
    misses there may be what that key was meant to give (`thresh: 0.5` for a threshold), so the unknown key,
    already reported, is the problem."""
    for e in entries:
        if _under(p.path, [dotted(e)]):
            return True
        if len(e) == 2 and e[0] == "tasks" and re.search(rf"\btasks? (?:'[^']*', )*'{re.escape(str(e[1]))}'",
                                                          p.message):
            return True
        if len(e) == 2 and e[0] == "attributes" and f"attributes.{e[1]}" in p.message:
            return True
    return False


def _as_meant(raw: dict, exc: ValidationError, renames: list, marks: Any) -> tuple[Any, dict, list]:
    """The spec read with each misspelt key as the key its "did you mean" suggests (`threshhold:` as
    `threshold:`), so the checks that follow do not report what the misspelling left out ("score needs a
    threshold") as further problems: (spec, index maps, renamed key paths), or (None, {}, []) when that reading is
    no better (it adds a problem of its own). The renamed keys take the misspelt keys' positions."""
    if not any(key for _, key in renames):
        return None, {}, []
    import copy

    cand = copy.deepcopy(raw)
    moved = []
    for loc, key in renames:
        if key is None:
            continue  # nothing to read it as: pruned with the other problems
        parent = value_at(cand, loc[:-1])
        if not isinstance(parent, dict) or loc[-1] not in parent or key in parent:
            return None, {}, []
        parent[key] = parent.pop(loc[-1])
        moved.append((tuple(loc[:-1]) + (key,), tuple(loc)))

    def locs(errors) -> set:
        return {tuple(p for p in e["loc"] if not (isinstance(p, str) and ("[" in p or p in UNION_TAGS)))
                for e in errors}

    try:
        spec, maps = Spec.model_validate(cand), {}
    except ValidationError as exc2:
        if not locs(exc2.errors()) <= locs(exc.errors()):
            return None, {}, []
        pr = _prune(cand, exc2.errors())
        if pr is None:
            return None, {}, []
        try:
            spec, maps = Spec.model_validate(pr[0]), pr[1]
        except ValidationError:
            return None, {}, []
    for new, old in moved:
        marks.alias(new, old)
    return spec, maps, [new for new, _ in moved]


def parse_spec(text: str, file: str) -> LoadedSpec:
    """Validate spec text. Returns a LoadedSpec; problems found so far are in ``.problems``.

    When the spec has schema errors, the rest of it is still checked (cross
    references, and the data when loaded) on a copy without the offending
    keys, so that one run reports every problem. ``.spec`` is None when
    nothing more can be checked.
    """
    raw, marks, problems = load_with_marks(text, file)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise SpecError([Problem(file, 1, 1, "", MSG_EMPTY_SPEC)])
    if not isinstance(raw, dict):
        raise SpecError([Problem(file, 1, 1, "", MSG_NOT_A_MAPPING.format(got=type(raw).__name__))])
    raw, profile_problems, added = profiles.expand(raw)
    for path in added:  # what a profile wrote is reported at the `profile:` key
        marks.alias(path, ("profile",))
    problems += [Problem(file, *marks.get(path), ".".join(map(str, path)), msg) for path, msg in profile_problems]
    maps: dict[str, list[int]] = {}
    stubbed = False
    renamed: list[tuple] = []  # misspelt keys read as the key suggested for them, for the checks that follow
    unknown_in: list[tuple] = []  # entries with an unknown key read as nothing: their absence proves nothing
    refused: list[str] = []  # keys whose values were refused: a rule that judged one would say it again
    try:
        spec = Spec.model_validate(raw)
    except ValidationError as exc:
        renames: list = []
        problems += validation_problems(exc, file, marks, raw, renames)
        spec = None
        spec, maps, renamed = _as_meant(raw, exc, renames, marks)
        read_as = {tuple(loc) for loc, key in renames if key} if spec is not None else set()
        unknown_in = [tuple(loc[:-1]) for loc, _ in renames if tuple(loc) not in read_as and len(loc) > 1]
        refused = _refused_keys(exc)
        pr = None if spec is not None else _prune(raw, exc.errors())
        if pr is not None:
            try:
                spec = Spec.model_validate(pr[0])
                maps = pr[1]
            except ValidationError:
                spec = None
        if spec is None:
            # pruning emptied a required section (its only task or attribute was wrong): stand the wrong entries
            # in by placeholders so the rest of the spec (metrics, gates, names) is still checked in this pass;
            # the data are not checked against placeholders
            pr = _prune(raw, exc.errors(), stub=True)
            if pr is not None:
                try:
                    spec = Spec.model_validate(pr[0])
                    maps = pr[1]
                    stubbed = True
                except ValidationError:
                    spec = None
    ls = LoadedSpec(spec, FsPath(file), text, marks, maps)
    ls.problems = problems
    ls.renamed = [dotted(p) for p in renamed]
    if spec is not None:
        cross = [p for p in _named_reads(cross_key_problems(ls)) if not _under(p.path, ls.renamed)
                 and not _absent(p, unknown_in) and not _said(p, refused)]
        ls.problems += cross
        ls.data_checkable = not cross and not stubbed  # names that point nowhere: data checks would be guesswork
    return ls


SPEC_MAX_BYTES = 4_000_001  # more than the YAML size limit in characters can take (UTF-8: up to 4 bytes each)


_UTF16_BOMS = {b"\x00\x00\xfe\xff": "UTF-32", b"\xff\xfe\x00\x00": "UTF-32", b"\xff\xfe": "UTF-16",
               b"\xfe\xff": "UTF-16"}


def decode_spec(raw: bytes, file: str, *, truncated: bool = False) -> str:
    """The spec text: UTF-8, with or without a byte-order mark (kept: YAML skips it, and lines and columns are
    counted as an editor shows them). Anything else is one problem at the first byte that is not UTF-8."""

    def where(i: int) -> tuple[int, int]:
        start = raw.rfind(b"\n", 0, i) + 1
        line = raw.count(b"\n", 0, i) + 1
        col = len(raw[start:i].decode("utf-8", errors="replace").lstrip("\ufeff")) + 1  # in characters
        return line, col

    for bom, enc in _UTF16_BOMS.items():
        if raw.startswith(bom):
            raise SpecError([Problem(file, 1, 1, "", f"the file is {enc} text, not UTF-8 (it starts with the byte-order "
                                                     f"mark {' '.join(f'0x{b:02x}' for b in bom)}); save it as UTF-8")])
    if b"\x00" in raw:  # UTF-16/32 without a byte-order mark: ASCII characters come with zero bytes
        i = raw.index(b"\x00")
        line, col = where(i)
        raise SpecError([Problem(file, line, col, "", f"the file is not UTF-8 text (byte 0x00 at offset {i}: saved as "
                                                      "UTF-16?); save it as UTF-8")])
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if truncated and exc.start >= len(raw) - 3:  # cut inside a character by the size bound: the size is refused
            return raw[:exc.start].decode("utf-8")
        line, col = where(exc.start)
        byte = raw[exc.start]
        latin = bytes([byte]).decode("cp1252", errors="replace")
        seen = f", '{latin}' in Latin-1/Windows-1252" if latin.isprintable() and latin != "\ufffd" else ""
        raise SpecError([Problem(file, line, col, "", f"the file is not UTF-8 text (byte 0x{byte:02x} at offset "
                                                      f"{exc.start}{seen}); save it as UTF-8")]) from None


def load_spec(path: str | FsPath, *, strict: bool = True) -> LoadedSpec:
    """Read and validate a spec file. With ``strict``, raise on any problem."""
    import stat

    p = FsPath(path)
    try:
        mode = p.stat().st_mode
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):  # a FIFO or a device would block or never end
            raise SpecError([Problem(str(p), None, None, "", "is not a regular file (a pipe or a device?); name the "
                                                                  "spec YAML file")])
        with open(p, "rb") as fh:
            raw_bytes = fh.read(SPEC_MAX_BYTES + 1)  # the YAML loader refuses anything longer with its message
    except FileNotFoundError:
        raise SpecError([Problem(str(p), None, None, "", "spec file not found; check the path")]) from None
    except IsADirectoryError:
        raise SpecError([Problem(str(p), None, None, "", "is a directory; name the spec YAML file")]) from None
    text = decode_spec(raw_bytes, str(p), truncated=len(raw_bytes) > SPEC_MAX_BYTES)
    ls = parse_spec(text, str(p))
    if strict:
        ls.raise_problems()
    return ls


def json_schema() -> dict:
    schema = Spec.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "reportgen spec"
    return schema
