"""The Python grammar covers every operation of the published method (186, type by type), the
cross-type builtins and every operator family."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from factory.grammar.loader import load_grammar

GRAMMAR = load_grammar("grammars/python")
OP_IDS = set(GRAMMAR.targets())

# (type as in reference-operations.md, operation as listed there) -> op_id that covers it.
REFERENCE: dict[tuple[str, str], str] = {
    # str: 65
    ("str", "+"): "str.add",
    ("str", "in"): "str.contains",
    ("str", "not in"): "str.not_contains",
    ("str", "=="): "str.eq",
    ("str", "str.format"): "str.format_unbound",
    ("str", "format()"): "str.format_builtin",
    ("str", ">="): "str.ge",
    ("str", "[index]"): "str.getitem",
    ("str", "[:]"): "str.slice_copy",
    ("str", "[i:j]"): "str.slice",
    ("str", "[i:]"): "str.slice_from",
    ("str", "[:j]"): "str.slice_to",
    ("str", ">"): "str.gt",
    ("str", "<="): "str.le",
    ("str", "<"): "str.lt",
    ("str", "len()"): "str.len",
    ("str", "*"): "str.mul",
    ("str", "!="): "str.ne",
    ("str", "capitalize"): "str.capitalize",
    ("str", "casefold"): "str.casefold",
    ("str", "center"): "str.center",
    ("str", "count"): "str.count",
    ("str", "encode"): "str.encode",
    ("str", "endswith"): "str.endswith",
    ("str", "expandtabs"): "str.expandtabs",
    ("str", "find"): "str.find",
    ("str", "format"): "str.format",
    ("str", "format_map"): "str.format_map",
    ("str", "index"): "str.index",
    ("str", "isalnum"): "str.isalnum",
    ("str", "isalpha"): "str.isalpha",
    ("str", "isascii"): "str.isascii",
    ("str", "isdecimal"): "str.isdecimal",
    ("str", "isdigit"): "str.isdigit",
    ("str", "isidentifier"): "str.isidentifier",
    ("str", "islower"): "str.islower",
    ("str", "isnumeric"): "str.isnumeric",
    ("str", "isprintable"): "str.isprintable",
    ("str", "isspace"): "str.isspace",
    ("str", "istitle"): "str.istitle",
    ("str", "isupper"): "str.isupper",
    ("str", "join"): "str.join",
    ("str", "ljust"): "str.ljust",
    ("str", "lower"): "str.lower",
    ("str", "lstrip"): "str.lstrip",
    ("str", "maketrans"): "str.maketrans",
    ("str", "partition"): "str.partition",
    ("str", "removeprefix"): "str.removeprefix",
    ("str", "removesuffix"): "str.removesuffix",
    ("str", "replace"): "str.replace",
    ("str", "rfind"): "str.rfind",
    ("str", "rindex"): "str.rindex",
    ("str", "rjust"): "str.rjust",
    ("str", "rpartition"): "str.rpartition",
    ("str", "rsplit"): "str.rsplit",
    ("str", "rstrip"): "str.rstrip",
    ("str", "split"): "str.split",
    ("str", "splitlines"): "str.splitlines",
    ("str", "startswith"): "str.startswith",
    ("str", "strip"): "str.strip",
    ("str", "swapcase"): "str.swapcase",
    ("str", "title"): "str.title",
    ("str", "translate"): "str.translate",
    ("str", "upper"): "str.upper",
    ("str", "zfill"): "str.zfill",
    # list: 29
    ("list", "+"): "list.add",
    ("list", "[index]"): "list.getitem",
    ("list", "[:]"): "list.slice_copy",
    ("list", "[i:j]"): "list.slice",
    ("list", "[i:]"): "list.slice_from",
    ("list", "[:j]"): "list.slice_to",
    ("list", "in"): "list.contains",
    ("list", "not in"): "list.not_contains",
    ("list", "=="): "list.eq",
    ("list", ">="): "list.ge",
    ("list", ">"): "list.gt",
    ("list", "<="): "list.le",
    ("list", "<"): "list.lt",
    ("list", "*="): "list.imul",
    ("list", "len"): "list.len",
    ("list", "*"): "list.mul",
    ("list", "!="): "list.ne",
    ("list", "reversed"): "list.reversed",
    ("list", "append"): "list.append",
    ("list", "clear"): "list.clear",
    ("list", "copy"): "list.copy",
    ("list", "count"): "list.count",
    ("list", "extend"): "list.extend",
    ("list", "index"): "list.index",
    ("list", "insert"): "list.insert",
    ("list", "pop"): "list.pop",
    ("list", "remove"): "list.remove",
    ("list", "reverse"): "list.reverse",
    ("list", "sort"): "list.sort",
    # dict: 19
    ("dict", "in"): "dict.contains",
    ("dict", "not in"): "dict.not_contains",
    ("dict", "=="): "dict.eq",
    ("dict", "d[key]"): "dict.getitem",
    ("dict", "len"): "dict.len",
    ("dict", "!="): "dict.ne",
    ("dict", "|"): "dict.or",
    ("dict", "d[key] = value"): "dict.setitem",
    ("dict", "clear"): "dict.clear",
    ("dict", "copy"): "dict.copy",
    ("dict", "fromkeys"): "dict.fromkeys",
    ("dict", "get"): "dict.get",
    ("dict", "items"): "dict.items",
    ("dict", "keys"): "dict.keys",
    ("dict", "pop"): "dict.pop",
    ("dict", "popitem"): "dict.popitem",
    ("dict", "setdefault"): "dict.setdefault",
    ("dict", "update"): "dict.update",
    ("dict", "values"): "dict.values",
    # set: 33
    ("set", "&"): "set.and",
    ("set", "in"): "set.contains",
    ("set", "not in"): "set.not_contains",
    ("set", "=="): "set.eq",
    ("set", ">="): "set.ge",
    ("set", ">"): "set.gt",
    ("set", "&="): "set.iand",
    ("set", "|="): "set.ior",
    ("set", "-="): "set.isub",
    ("set", "^="): "set.ixor",
    ("set", "<="): "set.le",
    ("set", "len"): "set.len",
    ("set", "<"): "set.lt",
    ("set", "!="): "set.ne",
    ("set", "-"): "set.sub",
    ("set", "^"): "set.xor",
    ("set", "add"): "set.add",
    ("set", "clear"): "set.clear",
    ("set", "copy"): "set.copy",
    ("set", "difference"): "set.difference",
    ("set", "difference_update"): "set.difference_update",
    ("set", "discard"): "set.discard",
    ("set", "intersection"): "set.intersection",
    ("set", "intersection_update"): "set.intersection_update",
    ("set", "isdisjoint"): "set.isdisjoint",
    ("set", "issubset"): "set.issubset",
    ("set", "issuperset"): "set.issuperset",
    ("set", "pop"): "set.pop",
    ("set", "remove"): "set.remove",
    ("set", "symmetric_difference"): "set.symmetric_difference",
    ("set", "symmetric_difference_update"): "set.symmetric_difference_update",
    ("set", "union"): "set.union",
    ("set", "update"): "set.update",
    # tuple: 18
    ("tuple", "+"): "tuple.add",
    ("tuple", "[index]"): "tuple.getitem",
    ("tuple", "[:]"): "tuple.slice_copy",
    ("tuple", "[i:j]"): "tuple.slice",
    ("tuple", "[i:]"): "tuple.slice_from",
    ("tuple", "[:j]"): "tuple.slice_to",
    ("tuple", "in"): "tuple.contains",
    ("tuple", "not in"): "tuple.not_contains",
    ("tuple", "=="): "tuple.eq",
    ("tuple", ">="): "tuple.ge",
    ("tuple", ">"): "tuple.gt",
    ("tuple", "<="): "tuple.le",
    ("tuple", "<"): "tuple.lt",
    ("tuple", "len"): "tuple.len",
    ("tuple", "*"): "tuple.mul",
    ("tuple", "!="): "tuple.ne",
    ("tuple", "count"): "tuple.count",
    ("tuple", "index"): "tuple.index",
    # float: 17
    ("float", "+"): "float.add",
    ("float", "bool()"): "float.bool",
    ("float", "math.ceil()"): "float.ceil",
    ("float", "divmod"): "float.divmod",
    ("float", "math.floor()"): "float.floor",
    ("float", ">="): "float.ge",
    ("float", ">"): "float.gt",
    ("float", "<"): "float.lt",
    ("float", "<="): "float.le",
    ("float", "-"): "float.sub",
    ("float", "int()"): "float.int",
    ("float", "%"): "float.mod",
    ("float", "!="): "float.ne",
    ("float", "round"): "float.round",
    ("float", "as_integer_ratio"): "float.as_integer_ratio",
    ("float", "conjugate"): "float.conjugate",
    ("float", "is_integer"): "float.is_integer",
    # the five builtin "types": 1 each
    ("enumerate", "enumerate"): "builtins.enumerate",
    ("filter", "filter"): "builtins.filter",
    ("range", "range"): "builtins.range",
    ("reversed", "reversed"): "builtins.reversed",
    ("zip", "zip"): "builtins.zip",
}

REFERENCE_COUNTS = {"str": 65, "list": 29, "dict": 19, "set": 33, "tuple": 18, "float": 17}
BUILTIN_TYPES = ("enumerate", "filter", "range", "reversed", "zip")

# The builtins the grammar must offer somewhere (in builtins.yaml or, as the reference lists
# them, in a type's file): name -> the call that must appear in some template.
BUILTINS = [
    "enumerate", "zip", "range", "filter", "reversed", "sorted", "len", "min", "max", "sum",
    "abs", "any", "all", "round", "divmod", "int", "str",
]  # fmt: skip

# Operator families: each needs at least one template whose shape matches.
OPERATOR_FAMILIES: dict[str, list[str]] = {
    "arithmetic": [rf"\{{recv\}} {re.escape(op)} \{{" for op in ("+", "-", "*", "//", "%")],
    "comparison": [rf"\{{recv\}} {re.escape(op)} \{{" for op in ("<", "<=", ">", ">=", "==", "!=")],
    "membership": [r"^\{\w+\} in \{recv\}$", r"^\{\w+\} not in \{recv\}$"],
    "indexing": [r"^\{recv\}\[\{\w+\}\]$"],
    "slicing": [
        r"^\{recv\}\[:\]$", r"^\{recv\}\[\{\w+\}:\{\w+\}\]$",
        r"^\{recv\}\[\{\w+\}:\]$", r"^\{recv\}\[:\{\w+\}\]$",
    ],
    "augmented assignment": [
        rf"^\{{recv\}} {re.escape(op)} \{{" for op in ("+=", "-=", "*=", "|=", "&=", "^=")
    ],
    "item assignment": [r"^\{recv\}\[\{\w+\}\] = \{\w+\}$"],
}  # fmt: skip


def test_reference_table_has_186_operations_with_the_published_counts() -> None:
    assert len(REFERENCE) == 186
    counts = Counter(t for t, _ in REFERENCE)
    for type_name, expected in REFERENCE_COUNTS.items():
        assert counts[type_name] == expected, type_name
    for type_name in BUILTIN_TYPES:
        assert counts[type_name] == 1, type_name


@pytest.mark.parametrize("type_name", [*REFERENCE_COUNTS, "builtins"])
def test_each_reference_operation_maps_to_its_own_grammar_operation(type_name: str) -> None:
    wanted = BUILTIN_TYPES if type_name == "builtins" else (type_name,)
    entries = {k: v for k, v in REFERENCE.items() if k[0] in wanted}
    missing = {k: v for k, v in entries.items() if v not in OP_IDS}
    assert not missing, f"reference operations without a grammar operation: {missing}"
    op_ids = list(entries.values())
    assert len(op_ids) == len(set(op_ids)), "two reference operations share one grammar operation"
    # Per-type operations live in that type's file; the five builtin types in builtins.yaml.
    owner = "builtins" if type_name == "builtins" else type_name
    assert all(op_id.startswith(owner + ".") for op_id in op_ids)


def test_reference_operations_match_the_reference_document() -> None:
    """Cross-check the table above against docs/reference-operations.md."""
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "reference-operations.md"
    if not doc.exists():
        pytest.fail(f"{doc} is missing (it is part of the repository)")
    listed: set[tuple[str, str]] = set()
    for line in doc.read_text().splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)]
        if len(cells) < 5 or cells[1] not in REFERENCE_COUNTS:
            continue
        for item in re.findall(r"`([^`]+)`|(?:^|, )([a-z_]+)(?=,|$)", cells[3]):
            name = (item[0] or item[1]).replace("\\|", "|")
            listed.add((cells[1], name))
    listed |= {(t, t) for t in BUILTIN_TYPES}
    assert listed == set(REFERENCE)


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_is_offered(name: str) -> None:
    call = re.compile(rf"(^|[^\w.]){name}\(")
    users = [op.op_id for op in GRAMMAR.operations if call.search(op.template)]
    assert users, f"no operation calls {name}()"


def test_cross_type_builtins_live_in_builtins_yaml() -> None:
    for name in ("enumerate", "zip", "range", "filter", "reversed", "sorted", "min", "max", "sum",
                 "abs", "any", "all", "round", "divmod", "int", "str"):  # fmt: skip
        assert f"builtins.{name}" in OP_IDS, name
    # Several receivers: one variant each.
    variants = Counter(op.op_id for op in GRAMMAR.operations)
    assert variants["builtins.sorted"] >= 3 and variants["builtins.str"] >= 3


@pytest.mark.parametrize("family", OPERATOR_FAMILIES)
def test_operator_family_is_present(family: str) -> None:
    templates = [op.template for op in GRAMMAR.operations]
    for pattern in OPERATOR_FAMILIES[family]:
        assert any(re.search(pattern, t) for t in templates), f"{family}: nothing matches {pattern}"


def test_sequence_types_offer_every_slice_form_and_len() -> None:
    for type_name in ("str", "list", "tuple"):
        for name in ("getitem", "slice_copy", "slice", "slice_from", "slice_to", "len", "contains"):
            assert f"{type_name}.{name}" in OP_IDS, f"{type_name}.{name}"
