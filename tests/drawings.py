"""Helpers for the drawing tests: the reference example, a tiny DOT reader and the
interactive views' data."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import naivegraph as ng
from naivegraph.examples import reference_dynamic

NODE = re.compile(r"^\s*(n\d+|legend) \[(.*)\]\s*$")
EDGE = re.compile(r"^\s*(n\d+) -> (n\d+)(?: \[(.*)\])?\s*$")


@dataclass
class DotNode:
    id: str
    attrs: dict = field(default_factory=dict)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    @property
    def text(self) -> str:
        """The label with HTML tags removed, lines joined by newlines."""
        label = self.attrs.get("label", "")
        label = label.replace("<br/>", "\n")
        return re.sub(r"<[^>]*>", "", label).replace("&nbsp;", "")

    @property
    def title(self) -> str:
        return self.text.split("\n")[0]


def _split_attrs(text: str) -> dict:
    """Parse ``key=value`` pairs where values are bare, "quoted" or <html>."""
    attrs, i = {}, 0
    while i < len(text):
        match = re.compile(r"\s*(\w+)=").match(text, i)
        if not match:
            break
        key, i = match.group(1), match.end()
        if text[i] == "<":
            depth, j = 0, i
            while True:
                depth += {"<": 1, ">": -1}.get(text[j], 0)
                j += 1
                if depth == 0:
                    break
            attrs[key], i = text[i + 1 : j - 1], j
        elif text[i] == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            attrs[key], i = text[i + 1 : j], j + 1
        else:
            j = i
            while j < len(text) and not text[j].isspace():
                j += 1
            attrs[key], i = text[i:j], j
    return attrs


@dataclass
class Dot:
    nodes: dict
    edges: list

    def with_class(self, cls: str) -> list[DotNode]:
        return [n for n in self.nodes.values() if cls in n.classes]

    def by_title(self, title: str) -> list[DotNode]:
        return [n for n in self.nodes.values() if n.title == title]

    def successors(self, node_id: str) -> list[str]:
        return [b for a, b, _ in self.edges if a == node_id]


def parse_dot(source: str) -> Dot:
    nodes, edges = {}, []
    for line in source.splitlines():
        edge = EDGE.match(line)
        if edge:
            edges.append((edge.group(1), edge.group(2), _split_attrs(edge.group(3) or "")))
            continue
        node = NODE.match(line)
        if node:
            nodes[node.group(1)] = DotNode(node.group(1), _split_attrs(node.group(2)))
    nodes.pop("legend", None)  # the legend's samples are not graph nodes
    return Dot(nodes, edges)


def reference_example():
    """The l1..l4 model of the reference notes: loss 40, grads 28 / 8 / 10."""
    return reference_dynamic()


def reference_float64(backward: bool = True) -> dict:
    """The README's example, in float64 (the default dtype is not what is tested)."""
    env = {"input": ng.ones([2, 2], dtype=ng.float64)}
    for name, value in (("w1", 2.0), ("w2", 3.0), ("w3", 4.0)):
        env[name] = ng.tensor(value, requires_grad=True, dtype=ng.float64)
    env["l1"] = env["input"] * env["w1"]
    env["l2"] = env["l1"] + env["w2"]
    env["l3"] = env["l1"] * env["w3"]
    env["l4"] = env["l2"] * env["l3"]
    env["loss"] = env["l4"].mean()
    if backward:
        env["loss"].backward()
    return env


def payload(fragment: str) -> dict:
    found = re.findall(
        r'<script type="application/json" class="ngv-data">(.*?)</script>', fragment, re.S
    )
    assert len(found) == 1
    return json.loads(found[0])
