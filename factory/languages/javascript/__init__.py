"""JavaScript, the second language (issue 19): built in parts, not registered yet.

What is here: the value model (``values``: the canonical literal text of a value, reading a
literal back, strict equality, type names) and its JavaScript half (``canonical.js``, which the
Node.js runner will load). docs/languages.md section 5 says what is decided and what is to come.
"""
