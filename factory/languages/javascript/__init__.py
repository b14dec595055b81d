"""JavaScript, the second language (issue 19): built in parts, not registered yet.

What is here: the value model (``values``: the canonical literal text of a value, reading a
literal back, strict equality, type names) and its JavaScript half (``canonical.js``); the runner
facet (``runner``: the ``node`` worker ``worker.js`` of the trusted pool); the tracer
(``instrument``: hooks written into the source on the tree-sitter tree; ``tracer.js``: the runtime
that runs it in a fresh ``vm`` context; ``tracer``: the Python entry points). docs/languages.md
section 6 says what is decided and what is to come.
"""
