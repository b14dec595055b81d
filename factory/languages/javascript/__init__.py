"""JavaScript, the second language (issue 19): grammars/javascript/ is written in it
(docs/languages.md section 6).

The synthesis members are implemented here (``code``: templates, filling, reading expressions;
``render``; ``syntax``: the tier check's view), the value model over ``values`` (and its
JavaScript half ``canonical.js``). The later stages' facets are the sibling modules: ``runner``
(the ``node`` worker ``worker.js`` of the trusted pool) and ``tracer`` (``instrument``: hooks
written into the source on the tree-sitter tree; ``tracer.js``: the runtime that runs it in a
fresh ``vm`` context), ``quality`` (the inputs stage's ``arcs`` and ``ablation`` on that runtime,
``quality.js``), ``normalize``, ``analysis`` and the others of ``Language.facet``. Section 6 says
what is decided and what is to come.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from factory.errors import UserError
from factory.languages import nodes
from factory.languages.base import CoreTypes, Language
from factory.languages.javascript import code as js_code
from factory.languages.javascript import render as js_render
from factory.languages.javascript import values
from factory.languages.javascript.syntax import JavaScriptTierSyntax

if TYPE_CHECKING:
    from factory.grammar.types import Type


class JavaScriptLanguage(Language):
    name = "javascript"
    display_name = "JavaScript"
    tier_syntax = JavaScriptTierSyntax()
    core_types = CoreTypes(boolean="boolean", integer="number", sequence="array")
    # Not ".mjs": a module runs in strict mode, and the runner runs a program as a script.
    file_suffixes = (".js",)
    # Sets, Maps and objects iterate in a fixed order, and the vm context has no clock and no
    # Math.random: two traces of a case are the same (docs/languages.md §6.3).
    hash_seed_matters = False

    def template_error(self, text: str, *, statement: bool) -> str | None:
        return js_code.template_error(text, statement=statement)

    def literal_value(self, text: str) -> Any:
        return values.literal_value(text)

    def literal(self, value: Any) -> str:
        return values.literal(value)

    def drawn_literal(self, value: Any, t: Type) -> str:
        return values.literal(values.js_value(value, t))

    def parse_args(self, text: str) -> tuple[Any, ...]:
        try:
            return values.parse_args(text)
        except (SyntaxError, ValueError) as exc:
            raise UserError(f"arguments are not JavaScript literals: {exc}") from None

    def strict_equal(self, a: Any, b: Any) -> bool:
        return values.strict_equal(a, b)

    def fill(self, template: str, values: Mapping[str, str]) -> str:
        return js_code.fill(template, values)

    def is_signed_number(self, code: str) -> bool:
        return js_code.is_signed_number(code)

    def constant_condition(self, code: str) -> bool:
        return js_code.constant_condition(code)

    def render(self, program: nodes.Program) -> str:
        return js_render.render(program)

    def normalized_source(self, source: str) -> str:
        return js_code.normalized_source(source)

    def derived_name(self, base: str, word: str) -> str:
        return base + word.capitalize()  # itemsNew

    def is_function_name(self, name: str) -> bool:
        return js_code.is_function_name(name)

    def name_error(self, name: str) -> str | None:
        return js_code.name_error(name)


JAVASCRIPT = JavaScriptLanguage()
