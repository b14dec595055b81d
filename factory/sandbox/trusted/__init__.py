"""The trusted-code sandbox: a pool of reused, resource-limited worker processes (docs/design.md §6.1).

``WorkerPool`` and ``map_pools`` live in ``pool`` (the parent's side); the child side (the built-in
job kinds, statuses, the helpers a new job kind reuses) in ``worker``. A stage with job kinds of its
own declares them as ``{kind: "module:function"}`` and hands them to the pool (``kinds=``). This
module imports nothing, so a worker process starts without loading the parent's side.
"""
