"""Static tier check on the tree-sitter tree: independent of how the generator built the program.

It re-derives, from the source alone, what the tier promises: the number of functions and that the
entry calls the helper, the control-flow nesting depth, that every ``while`` loop is bounded by a
counter, one statement per line, how often the target operation is used and whether other
operations appear. The program's language gives the parser, the node kinds and the operation
shapes (``Language.tier_syntax``); operations are recognised by the shape of their templates, so
no operation is special-cased here.
"""

from __future__ import annotations

from collections import Counter

from tree_sitter import Node

from factory.grammar.model import Grammar
from factory.languages import NodeKinds, language
from factory.languages.tree import field, text, walk
from factory.synth.state import target_shapes, uses_needed, variants
from factory.synth.tiers import ENTRY, HELPER, TIERS


def _parts_depth(compound: Node, kinds: NodeKinds, depth: int) -> int:
    """The deepest nesting in the blocks of a compound statement at nesting ``depth``."""
    deepest = depth
    for part in compound.children:
        if part.type == kinds.block:
            deepest = max(deepest, _max_depth(part, kinds, depth + 1))
        elif part.type in kinds.same_depth or part.type in kinds.compound:
            # An elif or else clause is at the depth of its if, and so is the if of a JavaScript
            # `else if` (an if statement inside the else clause): their blocks one level deeper.
            deepest = max(deepest, _parts_depth(part, kinds, depth))
    return deepest


def _max_depth(node: Node, kinds: NodeKinds, depth: int = 0) -> int:
    """The deepest control-flow nesting of the statements under ``node`` (at nesting ``depth``)."""
    deepest = depth
    for child in node.children:
        if child.type in kinds.compound:
            deepest = max(deepest, _parts_depth(child, kinds, depth))
        elif child.type in kinds.definitions:
            deepest = max(deepest, 99)  # nested definitions are never generated
        elif child.child_count:  # (a token has nothing below it: most nodes are tokens)
            deepest = max(deepest, _max_depth(child, kinds, depth))
    return deepest


def _empty_forms(grammar: Grammar) -> frozenset[str]:
    """The empty literal forms of the grammar's types (memoised on the grammar)."""
    found = grammar.cache.get("empty_forms")
    if found is None:
        found = grammar.cache["empty_forms"] = frozenset(
            t.literal["empty"] for t in grammar.types.values() if t.literal
        )
    return found


def check_program(source: str, tier: int, target: str, grammar: Grammar) -> list[str]:
    """Reasons the program breaks its tier's promises (empty: it meets them)."""
    syntax = language(grammar.language).tier_syntax
    kinds = syntax.kinds
    spec = TIERS[tier]
    root = syntax.parse(source)
    if root.has_error:
        return ["syntax_error"]
    reasons = []
    functions = [n for n in root.children if n.type == kinds.function]
    imports = [n for n in root.children if n.type in kinds.imports]
    names = [text(field(fn, "name")) for fn in functions]
    if len(functions) + len(imports) != len(root.children) or ENTRY not in names:
        reasons.append("shape:entry_missing_or_extra_code")
    if spec.helper:
        entry = functions[names.index(ENTRY)] if ENTRY in names else None
        calls = [
            text(field(n, "function"))
            for n in (walk(entry) if entry is not None else [])
            if n.type == kinds.call
        ]
        if len(functions) != 2 or HELPER not in calls:
            reasons.append("shape:helper_not_called")
    elif len(functions) != 1:
        reasons.append("shape:unexpected_helper")
    depth = max((_max_depth(field(fn, "body"), kinds) for fn in functions), default=0)
    if depth != spec.depth:
        reasons.append(f"depth:{depth}_not_{spec.depth}")
    rows: set[int] = set()
    for n in walk(root):
        kind = n.type  # read once: each read builds a new string
        if kind == kinds.while_loop and not syntax.while_bounded(n):
            reasons.append("while:unbounded")
            break
        if (
            kind.endswith(kinds.statement_suffix)
            and n.parent is not None
            and n.parent.type in kinds.statement_parents
        ):
            if n.start_point[0] in rows:
                reasons.append("line:several_statements")
                break
            rows.add(n.start_point[0])
    target_ops = variants(grammar, target)  # memoised: grammar.op(target) scans every operation
    if not target_ops:
        raise KeyError(target)
    key, allowed = target_shapes(grammar, target_ops[0])
    empty_forms = _empty_forms(grammar)
    found = Counter(syntax.signatures(root, frozenset(names), empty_forms))
    if found[key] < uses_needed(grammar, target):
        reasons.append("target:used_fewer_than_2")  # (or 1 for a reset)
    others = [s for s in found if s not in allowed]
    if not spec.other_ops and others:
        reasons.append("ops:other_operation_in_tier1")
    if spec.other_ops and not others:
        reasons.append("ops:no_other_operation")
    return reasons
