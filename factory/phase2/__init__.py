"""Phase-2 data: code-generation items with unit tests (docs/design.md §5, §9).

Two sources, one schema (``PHASE2_SCHEMA``): our own programs turned into programming-by-example
tasks (``factory.phase2.stage``), and outside code-generation datasets brought in by
``factory.phase2.importer``. The codegen reward of ``factory.rewards`` judges both.
"""
