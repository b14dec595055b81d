"""Python's ``normalize`` facet: program normal forms for dedup and decontamination."""

from factory.release.normalize import ast_keys, parse, program_key, token_stream

__all__ = ["ast_keys", "parse", "program_key", "token_stream"]
