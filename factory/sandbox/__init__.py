"""The two sandboxes (docs/design.md §6) and the OS-level helpers they share.

- ``factory.sandbox.trusted``: the worker pool that runs our own generated programs (§6.1);
- ``factory.sandbox.untrusted``: one locked-down process per job for model-written code (§6.2);
- ``factory.sandbox.os_helpers``: resource limits, the parent-death signal, frames.

Nothing is imported here, so that a sandbox process loads only what it uses.
"""
