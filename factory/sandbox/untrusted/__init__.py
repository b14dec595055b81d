"""The untrusted-code sandbox for model-written programs and inputs (docs/design.md §6.2).

``runner`` is the scorer's side (``run_tests``, ``call_function``, the threat model); ``fork`` the
scorer's end of the fork server, ``zygote`` the fork server itself and ``child`` the bootstrap of
one job. ``zygote.py`` and ``child.py`` run as scripts (``python -S -s -B -P``), never imported
through this package. This module imports nothing.
"""
