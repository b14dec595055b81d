"""Python, the first language: grammars/python/ is written in it (docs/languages.md).

The synthesis members are implemented here (``code``, ``render``, ``syntax``), the value model over
``factory.literals``. The later stages' facets are the sibling modules ``runner``, ``tracer``,
``analysis`` and ``normalize`` (``Language.facet``), so that loading a grammar imports neither the
tracer nor the worker pool, and the synthesize stage does not depend on them.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from factory import literals
from factory.languages import nodes
from factory.languages.base import Language
from factory.languages.python import code as python_code
from factory.languages.python import render as python_render
from factory.languages.python.syntax import PythonTierSyntax


class PythonLanguage(Language):
    name = "python"
    display_name = "Python"
    tier_syntax = PythonTierSyntax()
    file_suffixes = (".py",)

    def template_error(self, text: str, *, statement: bool) -> str | None:
        return python_code.template_error(text, statement=statement)

    def literal_value(self, text: str) -> Any:
        return literals.literal_eval(text)

    def answer_literal_value(self, node: ast.expr, line: str) -> Any:
        return literals.literal_eval(node)

    def literal(self, value: Any) -> str:
        return literals.canonical_repr(value)

    def parse_args(self, text: str) -> tuple[Any, ...]:
        return literals.parse_args(text)

    def strict_equal(self, a: Any, b: Any) -> bool:
        return literals.strict_equal(a, b)

    def distinct_literals_may_be_equal(self, a: str, b: str) -> bool:
        # A repr is the only text of its value but for the order of a set's or a dict's items and
        # the sign of a float zero (0.0 == -0.0); the substrings below cover those.
        return any(mark in text for text in (a, b) for mark in ("{", "0.0"))

    def fill(self, template: str, values: Mapping[str, str]) -> str:
        return python_code.fill(template, values)

    def is_signed_number(self, code: str) -> bool:
        return python_code.is_signed_number(code)

    def constant_condition(self, code: str) -> bool:
        return python_code.constant_condition(code)

    def render(self, program: nodes.Program) -> str:
        return python_render.render(program)

    def normalized_source(self, source: str) -> str:
        return python_code.normalized_source(source)

    def name_error(self, name: str) -> str | None:
        return python_code.name_error(name)


PYTHON = PythonLanguage()
