"""A study file: a base scenario, the axes it is swept over, repetitions and the baseline.

Loading checks the whole file and expands it into points before anything runs; every mistake is one
``InputError`` naming the file and the field. The points' scenarios are computed by the engine only
(``contend._core.run``); this module only builds their text.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import string
from dataclasses import dataclass
from typing import Any

from contend.errors import InputError

KEYS = {"name", "base", "axes", "zip", "repetitions", "baseline"}
# Names a study adds to every row itself; an axis may not take them.
RESERVED = {"repetition", "point", "scenario_hash", "contend_version", "job", "app", "ranks"}
AXIS_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
DEFAULT_SEED_KEY = "workload.mix.seed"


@dataclass(frozen=True)
class Point:
    """One scenario of the study: its axis values (a row's columns) and its text for the engine."""

    index: int
    values: dict[str, Any]
    scenario: dict[str, Any]

    @property
    def text(self) -> str:
        # JSON is YAML: the engine parses it like any scenario file. Sorted keys make the text, and so the hash,
        # depend on the scenario only, never on the order of the study file.
        return json.dumps(self.scenario, sort_keys=True, separators=(",", ":"))

    @property
    def hash(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:20]


@dataclass(frozen=True)
class Study:
    name: str
    origin: str
    axes: dict[str, list[Any]]  # every axis and zip member in file order, with its values
    zips: list[list[str]]  # groups of axes varied together; a plain axis is a group of one
    repetitions: int
    seed_key: str
    baseline: dict[str, Any]
    points: list[Point]
    base: str  # the base scenario's hash: a results folder holds the points of one base
    scenario_file: str | None = None  # the base's file, where the study names one: its relative paths start there

    def meta(self) -> dict[str, Any]:
        """What a report needs besides the rows: kept in every Parquet file of the dataset."""
        return {"name": self.name, "axes": self.axes, "zips": self.zips, "repetitions": self.repetitions,
                "seed_key": self.seed_key, "baseline": self.baseline, "base": self.base}


def load(path: str | os.PathLike) -> Study:
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte {e.start}); give a study file (YAML)") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read the study file ({e.strerror}); check the path") from None
    return parse(text, path, os.path.dirname(path))


def parse(text: str, origin: str, folder: str = ".") -> Study:
    import yaml

    from contend.study import safe_yaml

    try:
        doc = safe_yaml.load(text, origin)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise InputError(f"{origin}: not valid YAML{where}; fix the syntax") from None
    if not isinstance(doc, dict):
        raise InputError(f"{origin}: a study file is a mapping with base, axes and baseline; see examples/studies/")
    fail = _failer(origin)
    for key in doc:
        if key not in KEYS:
            fail(str(key), f"unknown key; a study has {', '.join(sorted(KEYS))}")
    base, scenario_file = _base(doc.get("base"), origin, folder)
    groups = _groups(doc, fail)
    axes = {k: v for g in groups for k, v in g.items()}
    variables = _variables(base, fail)
    for name in variables - axes.keys():
        fail("base", f"{{{name}}} names no axis; add an axis {name} or remove the placeholder")
    reps, seed_key = _repetitions(doc.get("repetitions", 1), axes, fail)
    baseline = _baseline(doc.get("baseline"), groups, fail)
    name = doc.get("name", os.path.splitext(os.path.basename(origin))[0])
    if not isinstance(name, str) or not name:
        fail("name", "must be a non-empty string")
    points = _expand(base, groups, variables, reps, seed_key, fail)
    base_hash = hashlib.sha256(json.dumps(base, sort_keys=True, default=str).encode()).hexdigest()[:20]
    study = Study(name, origin, axes, [list(g) for g in groups], reps, seed_key, baseline, points, base_hash,
                  scenario_file)
    check(study)
    return study


def check(study: Study) -> None:
    """Every point's scenario through the engine's check (milliseconds each: no simulation), so that an
    unknown key or a bad value stops the study before the first point runs. Repetitions change only a
    seed, so the first of each is enough."""
    from contend import _core

    session = _core.Session()  # the clusters and workloads of a study repeat: each is checked once
    for p in study.points:
        if p.values["repetition"] == 0:
            _core.check_scenario(p.text, origin_of(study, p), session)


def origin_of(study: Study, p: Point) -> str:
    """How errors name a point: the scenario file it came from (the study's, or its base's, whose folder the
    engine resolves the scenario's relative paths against) and the point's axis values."""
    values = ", ".join(f"{k}={v}" for k, v in p.values.items() if k != "repetition" or study.repetitions > 1)
    if study.scenario_file:
        return f"{study.scenario_file} (study {study.origin}, point {p.index}: {values})"
    return f"{study.origin} (point {p.index}: {values})"


def _failer(origin: str):
    def fail(field: str, message: str):
        raise InputError(f"{origin}: {field}: {message}")

    return fail


def _base(base: Any, origin: str, folder: str) -> tuple[dict[str, Any], str | None]:
    """The base scenario and, where it is a file, that file's path."""
    import yaml

    from contend.study import safe_yaml

    path = None
    if isinstance(base, str):
        path = base if os.path.isabs(base) else os.path.join(folder, base)
        try:
            with open(path, encoding="utf-8") as f:
                base = safe_yaml.load(f, path)
        except UnicodeDecodeError as e:
            raise InputError(f"{origin}: base: {path} is not UTF-8 text (byte {e.start}); "
                             "give a scenario YAML file") from None
        except OSError as e:
            raise InputError(f"{origin}: base: cannot read scenario {path} ({e.strerror}); check the path") from None
        except yaml.YAMLError:
            raise InputError(f"{origin}: base: {path} is not valid YAML; fix the scenario file") from None
    if not isinstance(base, dict) or not base:
        raise InputError(f"{origin}: base: give a scenario, inline as a mapping or as the path of a scenario file")
    return base, path


def _values(key: str, values: Any, fail) -> list[Any]:
    if not AXIS_NAME.match(str(key)) or key in RESERVED:
        fail(f"axes.{key}", "not an axis name; use a scenario key (dotted: params.quantum) or a {placeholder} name")
    if not isinstance(values, list):
        fail(f"axes.{key}", "give the values as a list, e.g. [1, 2, 4]")
    if not values:
        fail(f"axes.{key}", "empty; give at least one value")
    seen = set()
    kinds = set()
    for v in values:
        if not isinstance(v, (str, int, float, bool)):
            fail(f"axes.{key}", f"{v!r} is not a number, string or boolean")
        canon = json.dumps(v)
        if canon in seen:
            fail(f"axes.{key}", f"{v!r} appears twice; give each value once")
        seen.add(canon)
        kinds.add("str" if isinstance(v, str) else "bool" if isinstance(v, bool) else "num")
    if len(kinds) > 1:
        fail(f"axes.{key}", "mixes strings, numbers and booleans; give values of one kind (quote numbers with units)")
    if kinds == {"num"} and any(isinstance(v, float) for v in values):
        values = [float(v) for v in values]  # one column type in every point's file: 1 and 0.5 are both floats
        if len({json.dumps(v) for v in values}) < len(values):
            fail(f"axes.{key}", "a value appears twice; give each value once")
    return values


def _same(a: Any, b: Any) -> bool:
    """Equal as axis values: 1 and 1.0 are, True and 1 are not."""
    return isinstance(a, bool) == isinstance(b, bool) and isinstance(a, str) == isinstance(b, str) and a == b


def _groups(doc: dict[str, Any], fail) -> list[dict[str, list[Any]]]:
    """Each plain axis is a group of one; the zip block is one group whose members advance together."""
    axes = doc.get("axes", {})
    if not isinstance(axes, dict) or not axes and not doc.get("zip"):
        fail("axes", "give at least one axis as `key: [values]`")
    groups = [{k: _values(k, v, fail)} for k, v in axes.items()]
    zipped = doc.get("zip")
    if zipped is not None:
        if not isinstance(zipped, dict) or not zipped:
            fail("zip", "give axes that vary together as `key: [values]`, all lists of one length")
        group = {k: _values(k, v, fail) for k, v in zipped.items()}
        for k in group:
            if k in axes:
                fail(f"zip.{k}", "is also under axes; name each axis once")
        lengths = {len(v) for v in group.values()}
        if len(lengths) > 1:
            fail("zip", f"lists of different lengths ({', '.join(f'{k}: {len(v)}' for k, v in group.items())})")
        groups.append(group)
    return groups


def _variables(node: Any, fail) -> set[str]:
    """The {placeholder} names in the base scenario's strings."""
    found: set[str] = set()
    if isinstance(node, dict):
        for v in node.values():
            found |= _variables(v, fail)
    elif isinstance(node, list):
        for v in node:
            found |= _variables(v, fail)
    elif isinstance(node, str):
        try:
            names = [f for _, f, _, _ in string.Formatter().parse(node) if f is not None]
        except ValueError:
            fail("base", f'"{node}": unbalanced braces; a placeholder is {{axis}}')
        for n in names:
            if not AXIS_NAME.match(n) or "." in n:
                fail("base", f'"{node}": {{{n}}} is not a placeholder name; write {{axis}} with a plain name')
            found.add(n)
    return found


def _repetitions(reps: Any, axes: dict[str, list[Any]], fail) -> tuple[int, str]:
    key = DEFAULT_SEED_KEY
    if isinstance(reps, dict):
        unknown = set(reps) - {"count", "seed"}
        if unknown:
            fail(f"repetitions.{sorted(unknown)[0]}", "unknown key; give count and optionally seed (a scenario key)")
        key = reps.get("seed", key)
        reps = reps.get("count")
        if not isinstance(key, str) or not AXIS_NAME.match(key):
            fail("repetitions.seed", "give the dotted scenario key each repetition sets, e.g. workload.mix.seed")
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
        fail("repetitions", "give a whole number of repetitions, at least 1")
    if reps > 1 and key in axes:
        fail("repetitions", f"{key} is also an axis; sweep it as an axis or repeat, not both")
    return reps, key


def _baseline(baseline: Any, groups: list[dict[str, list[Any]]], fail) -> dict[str, Any]:
    """The point every point is normalised against: some axes set to one of their values, the others kept."""
    if baseline is None:
        return {}
    if not isinstance(baseline, dict):
        fail("baseline", "give axis values as a mapping, e.g. {gpus_per_node: 1, bandwidth_scale: 1}")
    out: dict[str, Any] = {}
    for key, value in baseline.items():
        group = next((g for g in groups if key in g), None)
        if group is None:
            fail(f"baseline.{key}", "is not an axis of this study; name an axis")
        values = group[key]
        if not any(_same(value, v) for v in values):
            fail(f"baseline.{key}", f"{value!r} is not among the axis values {values}; choose one of them")
        at = next(i for i, v in enumerate(values) if _same(v, value))
        for k, vs in group.items():  # a zip member fixes its partners too
            if k in out and not _same(out[k], vs[at]):
                fail(f"baseline.{key}", f"zips with {k}={out[k]!r}, which is another column of the zip; name one")
            out[k] = vs[at]
    return out


def _expand(base, groups, variables, reps, seed_key, fail) -> list[Point]:
    columns = [list(zip(*g.values(), strict=True)) for g in groups]
    names = [k for g in groups for k in g]
    points: list[Point] = []
    seen: dict[str, int] = {}
    base_seed = _get(base, seed_key) if reps > 1 else None
    if reps > 1 and (isinstance(base_seed, bool) or not isinstance(base_seed, int)):
        fail("repetitions", f"the base scenario has no whole number at {seed_key} to start the seeds from; set it")
    for combo in itertools.product(*columns, range(reps)):
        values = dict(zip(names, [v for tup in combo[:-1] for v in tup], strict=True))
        scenario = _substitute(base, {k: v for k, v in values.items() if k in variables})
        for key, value in values.items():
            if key not in variables:
                _set(scenario, key, value, fail)
        if reps > 1:
            _set(scenario, seed_key, base_seed + combo[-1], fail)
        values["repetition"] = combo[-1]
        p = Point(len(points), values, scenario)
        if p.hash in seen:
            fail("axes", f"points {seen[p.hash]} and {p.index} are the same scenario; an axis changes nothing")
        seen[p.hash] = p.index
        points.append(p)
    return points


def _substitute(node: Any, values: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        return {k: _substitute(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [_substitute(v, values) for v in node]
    if isinstance(node, str) and "{" in node:
        whole = re.fullmatch(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", node)
        if whole:  # "{x}" alone keeps the value's type: a number stays a number
            return values[whole.group(1)]
        return node.format_map(values)
    return node


def _get(node: dict[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _set(node: dict[str, Any], dotted: str, value: Any, fail) -> None:
    parts = dotted.split(".")
    for i, part in enumerate(parts[:-1]):
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            fail(f"axes.{dotted}", f"the base scenario's {'.'.join(parts[: i + 1])} is not a mapping; "
                                   "an axis can only set keys inside mappings")
        node = child
    node[parts[-1]] = value
