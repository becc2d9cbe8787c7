"""YAML for study files with bounds: a file can neither hang the CPU with aliases (an "alias bomb": a few
lines whose anchors, each used many times, expand to billions of nodes) nor exhaust the stack with nesting.

PyYAML's safe loader builds an alias as a second reference to one object, but everything that walks the
document afterwards (placeholders, substitution, JSON for the engine) sees it expanded; so the bound is on
the expanded size, counted as the document is composed: an anchored node counts its whole size at every
alias. Nesting is bounded in the composer (recursive in PyYAML: deep enough, a RecursionError).
"""

from __future__ import annotations

from typing import Any

import yaml

from contend.errors import InputError

# Far above any study file (seed 003's is a few hundred nodes), far below what takes noticeable time.
MAX_NODES = 1_000_000
MAX_DEPTH = 64
MAX_ALIASES = 10_000


class BoundedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses, in one line, a document over MAX_NODES expanded nodes, nested deeper
    than MAX_DEPTH or using more than MAX_ALIASES aliases."""

    origin = "<yaml>"

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._size: dict[int, int] = {}
        self._depth = 0
        self._aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                self._refuse(f"more than {MAX_ALIASES:,} aliases (*name); write the values out")
        self._depth += 1
        if self._depth > MAX_DEPTH:
            self._refuse(f"nested more than {MAX_DEPTH} levels deep; flatten it")
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        size = self._size.get(id(node))
        if size is None:
            if isinstance(node, yaml.SequenceNode):
                size = 1 + sum(self._size.get(id(c), 1) for c in node.value)
            elif isinstance(node, yaml.MappingNode):
                size = 1 + sum(self._size.get(id(k), 1) + self._size.get(id(v), 1) for k, v in node.value)
            else:
                size = 1
            self._size[id(node)] = size
        if size > MAX_NODES:
            self._refuse(f"expands to more than {MAX_NODES:,} values through its aliases (*name); "
                         "write the values out or use fewer aliases")
        return node

    def _refuse(self, what: str) -> None:
        mark = self.peek_event().start_mark if self.check_event() else None
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise InputError(f"{self.origin}: the YAML{where} is {what}" if what.startswith("nested")
                         else f"{self.origin}: the YAML{where} {what}")


def load(stream: Any, origin: str) -> Any:
    """A YAML document (text or an open file) with the bounds above; ``origin`` names it in errors."""
    loader = BoundedLoader(stream)
    loader.origin = origin
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
