"""Pydantic's validation errors as problems a user can act on: each at its key's file:line:col, with what is wrong
and what to do ("0.5 is below the minimum of 1; use a value from 1 to 1000 (the default is 10)"), one message for
a value that matches none of a union's forms, and a "did you mean" for an unknown key."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ValidationError

from reportgen.spec.errors import MSG_MISSING_KEY, MSG_UNKNOWN_KEY, Problem, did_you_mean
from reportgen.spec.local_bias import EmbeddingFeatures, TextFeatures
from reportgen.spec.sql import SqlQuery
from reportgen.spec.models import Spec


def dotted(path: tuple) -> str:
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out


class _DictOf:
    def __init__(self, m: Any) -> None:
        self.inner = m
        self.model_fields: dict = {}


def _inner_model(ann: Any) -> Any:
    import typing

    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ann
    for arg in typing.get_args(ann):
        m = _inner_model(arg)
        if m is not None:
            return m
    return None


def _is_dict_of_model(ann: Any) -> bool:
    import typing

    origin = typing.get_origin(ann)
    if origin is dict:
        return True
    return any(_is_dict_of_model(a) for a in typing.get_args(ann))


def _model_at(path: tuple) -> Any:
    """The pydantic model class at a key path of the spec (None when the path is not a model)."""
    model: Any = Spec
    i = 0
    while i < len(path):
        p = path[i]
        if isinstance(p, int):
            i += 1
            continue
        if isinstance(model, _DictOf):
            model = model.inner
            i += 1
            continue
        fields = {(f.alias or k): f for k, f in model.model_fields.items()}
        f = fields.get(p)
        if f is None:
            return None
        ann = f.annotation
        if _is_dict_of_model(ann):
            model = _DictOf(_inner_model(ann))
        else:
            model = _inner_model(ann)
        if model is None:
            return None
        i += 1
    if isinstance(model, _DictOf):
        return None
    return model


def _fields_of(path: tuple) -> list[str] | None:
    model = _model_at(path)
    if model is None:
        return None
    return [(f.alias or k) for k, f in model.model_fields.items()]


def _field_at(loc: tuple) -> Any:
    """The pydantic FieldInfo of the key at ``loc`` (None for list items, dict keys and unknown paths)."""
    if not loc or not isinstance(loc[-1], str):
        return None
    model = _model_at(tuple(loc[:-1]))
    if model is None:
        return None
    return {(f.alias or k): f for k, f in model.model_fields.items()}.get(loc[-1])


def _num(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        return f"{int(v)}"
    return f"{v:g}" if isinstance(v, float) else str(v)


def _bounds(loc: tuple, ctx: dict) -> dict[str, Any]:
    """Every bound of the field at ``loc`` (ge/gt/le/lt), from its declaration, else from the error."""
    out: dict[str, Any] = {}
    f = _field_at(loc)
    for m in (f.metadata if f is not None else []):
        for k in ("ge", "gt", "le", "lt"):
            if getattr(m, k, None) is not None:
                out[k] = getattr(m, k)
    for k in ("ge", "gt", "le", "lt"):
        if k in ctx and k not in out:
            out[k] = ctx[k]
    return out


def _default(loc: tuple) -> int | float | None:
    """The numeric default of the field at ``loc``, if it has one."""
    f = _field_at(loc)
    if f is None or isinstance(f.default, bool) or not isinstance(f.default, (int, float)):
        return None
    return f.default


def _default_note(loc: tuple) -> str:
    d = _default(loc)
    return "" if d is None else f" (the default is {_num(d)})"


def _allowed_range(b: dict[str, Any]) -> str:
    lo = f"at least {_num(b['ge'])}" if "ge" in b else f"above {_num(b['gt'])}" if "gt" in b else ""
    hi = f"at most {_num(b['le'])}" if "le" in b else f"below {_num(b['lt'])}" if "lt" in b else ""
    if lo and hi:
        if "ge" in b and "le" in b:
            return f"a value from {_num(b['ge'])} to {_num(b['le'])}"
        if "gt" in b and "lt" in b:
            return f"a value between {_num(b['gt'])} and {_num(b['lt'])} (both excluded)"
        return f"a value {lo} and {hi}"
    one = lo or hi
    return f"a value of {one}" if one.startswith("at ") else f"a value {one}"


_LIMIT_WORDS = {"greater_than_equal": ("ge", "below the minimum of"), "greater_than": ("gt", "not above"),
                "less_than_equal": ("le", "above the limit of"), "less_than": ("lt", "not below")}
_TYPE_WORDS = {"float": "a number", "int": "an integer", "string": "text", "bool": "true or false",
               "list": "a list", "dict": "a mapping", "model": "a mapping"}


def _type_fix(kind: str, loc: tuple, inp: Any) -> str:
    """What to write instead of a value of the wrong type."""
    if kind == "int":
        if isinstance(inp, float):
            return f"write a whole number (no decimals), e.g. {int(inp)}"
        d = _default(loc)
        return f"write a whole number, e.g. {_num(d)} (the default)" if d is not None else "write a whole number"
    if kind == "float":
        if isinstance(inp, str) and re.fullmatch(r"\s*-?\d+,\d+\s*", inp):
            return f"use a decimal point: {inp.strip().replace(',', '.')}"
        d = _default(loc)
        return f"write a number, e.g. {_num(d)} (the default)" if d is not None else "write a number such as 0.5"
    if kind == "string":
        if isinstance(inp, (int, float)):  # YAML read a number or true/false where text was meant
            return f'put it in quotes: "{_short(inp) if isinstance(inp, bool) else inp}"'
        return "write text"
    if kind == "bool":
        return "write true or false"
    if kind == "list":
        if isinstance(inp, (str, int, float)) and not isinstance(inp, bool):
            return f"write a list in brackets, e.g. [{inp}, ...]"
        return "write a list in brackets, e.g. [a, b], or one `- item` per line"
    keys = _fields_of(tuple(loc))
    if keys:
        return f"write indented `key: value` lines (keys: {', '.join(keys)})"
    return "write indented `key: value` lines or {key: value}"


def _clean_msg(err: dict, loc: tuple = ()) -> str:
    """``what is wrong; what to do`` for one pydantic error."""
    msg = err.get("msg", "invalid value")
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    etype = err.get("type", "")
    inp = err.get("input")
    ctx = err.get("ctx") or {}
    if etype in ("literal_error", "enum"):
        expected = str(ctx.get("expected", ""))
        opts = [o.strip().strip("'") for o in expected.replace(" or ", ",").split(",") if o.strip()]
        hint = did_you_mean(inp, opts) if isinstance(inp, str) else ""
        use = f"use {expected}" if len(opts) == 1 else f"use one of {expected}"
        return f"{_short(inp)} is not allowed here{hint}; {use}"
    for prefix, words in _TYPE_WORDS.items():
        if etype in (f"{prefix}_type", f"{prefix}_parsing", f"{prefix}_from_float"):
            return f"expected {words}, got {_short(inp)}; {_type_fix(prefix, loc, inp)}"
    if etype == "finite_number" or (etype in _LIMIT_WORDS and isinstance(inp, float) and inp != inp):
        b = _bounds(loc, ctx)
        return f"expected a finite number, got {_short(inp)}; " + \
            (f"use {_allowed_range(b)}" if b else "write an ordinary number such as 1 or 0.5")
    if etype in _LIMIT_WORDS:
        key, words = _LIMIT_WORDS[etype]
        b = _bounds(loc, ctx)
        typical = _default_note(loc)
        use = _allowed_range(b)
        if typical and use.endswith(")"):
            use, typical = use[:-1], "; " + typical.strip()[1:]
        return f"{_num(inp)} is {words} {_num(ctx.get(key, b.get(key)))}; use {use}{typical}"
    if etype == "too_short":
        n, lo = ctx.get("actual_length"), ctx.get("min_length", 1)
        if not n:
            return f"is empty, and at least {lo} {'entry is' if lo == 1 else 'entries are'} needed; " \
                   f"add at least {'one' if lo == 1 else lo}"
        return f"has {n} {'entry' if n == 1 else 'entries'}, fewer than the {lo} needed; give at least {lo}"
    if etype == "too_long":
        n, hi = ctx.get("actual_length"), ctx.get("max_length")
        return f"has {n} entries, more than the {hi} allowed; list at most {hi} items"
    if msg.startswith("Input should be "):
        return f"expected {msg[len('Input should be '):].rstrip('.')}, got {_short(inp)}; change the value"
    if etype.endswith("_type") or etype.endswith("_parsing"):
        return f"{msg.lower().rstrip('.')}, got {_short(inp)}; change the value"
    if "; " not in msg:  # every problem says what to do, even one no branch above words
        msg = f"{msg.rstrip('.')}; change this value"
    return msg


def _short(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return {True: "true", False: "false", None: "null (an empty value)"}[v]
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


UNION_TAGS = {"float", "int", "str", "bool", "none", "list", "dict"}


def _key_in_message(loc: tuple, msg: str, marks: Any) -> tuple:
    """A model-level message naming `key` points at that key's line when it is in the file."""
    import re

    for key in re.findall(r"`([A-Za-z_]+)", msg):
        if marks.has(loc + (key,)):
            return loc + (key,)
    return loc


_TAGGED_MODELS = {"[text]": TextFeatures, "[file]": EmbeddingFeatures, "[query]": SqlQuery}


# words people write for a key that has another name (a task's label column is `column:`)
_KEY_SYNONYMS: dict[str, dict[str, str]] = {
    "Task": {"label": "column", "target": "column", "label_column": "column", "prediction": "predicted",
             "predictions": "predicted", "pred": "predicted", "preds": "predicted", "prediction_column": "predicted"},
    "Attribute": {"values": "groups", "attribute": "column", "protected": "groups"},
}


def value_at(raw: Any, path: tuple) -> Any:
    for p in path:
        try:
            raw = raw[p]
        except (KeyError, IndexError, TypeError):
            return None
    return raw


def _key_hint(key: Any, allowed: list[str], parent: Any, model: Any) -> str:
    """A "did you mean" for an unknown key: the closest allowed key that is not written in the same mapping
    already (renaming to it would only make a duplicate), else the key usually meant by a common other word."""
    present = {str(k) for k in parent} if isinstance(parent, dict) else set()
    hint = did_you_mean(str(key), [k for k in allowed if k not in present])
    if hint or model is None:
        return hint
    synonyms = _KEY_SYNONYMS.get(getattr(model, "__name__", ""), {})
    import difflib

    close = difflib.get_close_matches(str(key).lower(), list(synonyms), n=1, cutoff=0.75)
    if close and synonyms[close[0]] in allowed and synonyms[close[0]] not in present:
        return f" (did you mean '{synonyms[close[0]]}'?)"
    return ""


def _union_msg(errs: list[dict], loc: tuple) -> str:
    """One message for a value that matches none of a union's alternatives (e.g. a number or 'calibrate')."""
    wanted: list[str] = []
    fixes: list[str] = []
    inp = errs[0].get("input")
    hint = ""
    for e in errs:
        etype = e.get("type", "")
        if etype in ("literal_error", "enum"):
            expected = str((e.get("ctx") or {}).get("expected", ""))
            opts = [o.strip().strip("'") for o in expected.replace(" or ", ",").split(",") if o.strip()]
            hint = hint or (did_you_mean(inp, opts) if isinstance(inp, str) else "")
            what = expected
        else:
            kind = next((k for k in _TYPE_WORDS if etype in (f"{k}_type", f"{k}_parsing", f"{k}_from_float")), None)
            what = _TYPE_WORDS[kind] if kind else _clean_msg(e, loc).split(", got ")[0].removeprefix("expected ")
            if kind == "float" and isinstance(inp, str) and re.fullmatch(r"\s*-?\d+,\d+\s*", inp):
                fixes.append(_type_fix("float", loc, inp))
        if what not in wanted:
            wanted.append(what)
    if "text" in wanted and "a number" in wanted:  # a Scalar: whatever one value YAML reads
        return f"expected one value (text, a number or true/false), got {_short(inp)}; write a single value, " \
               "not a list or a mapping"
    alts = " or ".join(wanted)
    fix = fixes[0] if fixes else f"write {alts}"
    return f"expected {alts}, got {_short(inp)}{hint}; {fix}"


_FAVORABLE = {"binary": ("positive", "negative", "which prediction is the favourable outcome"),
              "continuous": ("higher", "lower", "which direction of the value is better for the person"),
              "score": ("higher", "lower", "which direction of the score is better for the person")}


def _favorable_msg(err: dict, loc: tuple, raw: Any) -> str | None:
    """A task's `favorable:` that is none of the allowed words: the two its `kind:` takes (a continuous task's
    'cheaper' is told 'higher' or 'lower', not the binary words too)."""
    if err.get("type") != "literal_error" or len(loc) != 3 or loc[0] != "tasks" or loc[2] != "favorable":
        return None
    task = value_at(raw, loc[:-1])
    kind = task.get("kind", "binary") if isinstance(task, dict) else None
    if kind not in _FAVORABLE:
        return None
    a, b, what = _FAVORABLE[kind]
    inp = err.get("input")
    hint = did_you_mean(inp, [a, b]) if isinstance(inp, str) else ""
    return f"{_short(inp)} is not allowed here{hint}; a {kind} task takes '{a}' or '{b}' ({what})"


def validation_problems(exc: ValidationError, file: str, marks: Any, raw: Any,
                          renames: list | None = None) -> list[Problem]:
    """Problems of a validation error. ``renames`` (when given) receives (location, suggested key) for each
    unknown key with a "did you mean"."""
    grouped: dict[tuple, list[dict]] = {}
    for err in exc.errors():
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and ("[" in p or p.startswith("function-")
                                                                         or p in UNION_TAGS)))
        grouped.setdefault(loc, []).append(err)
    problems: list[Problem] = []
    for loc, errs in grouped.items():
        err = errs[0]
        etype = err["type"]
        if etype == "extra_forbidden":
            key = loc[-1]
            tagged = next((_TAGGED_MODELS[p] for p in err["loc"] if p in _TAGGED_MODELS), None)
            allowed = list(tagged.model_fields) if tagged else (_fields_of(loc[:-1]) or [])
            hint = _key_hint(key, allowed, value_at(raw, loc[:-1]), tagged or _model_at(loc[:-1]))
            msg = MSG_UNKNOWN_KEY.format(key=key, hint=hint, allowed=", ".join(allowed))
            meant = re.match(r" \(did you mean '(.+)'\?\)$", hint)
            if renames is not None:
                renames.append((loc, meant[1] if meant else None))
            where = loc
        elif etype == "missing":
            msg = MSG_MISSING_KEY.format(key=loc[-1])
            line, col = marks.get(loc[:-1])
            problems.append(Problem(file, line, col, dotted(loc), msg))
            continue
        elif len(errs) > 1:  # a union (e.g. a number or 'calibrate'): one message listing the alternatives
            msg = _union_msg(errs, loc)
            where = loc
        else:
            msg = _favorable_msg(err, loc, raw) or _clean_msg(err, loc)
            where = _key_in_message(loc, msg, marks)
            if where and msg.startswith(f"`{where[-1]}`: "):
                msg = msg[len(f"`{where[-1]}`: "):]
        line, col = marks.get(where)
        problems.append(Problem(file, line, col, dotted(where), msg))
    problems.sort(key=lambda p: (p.line or 0, p.col or 0))
    return problems
