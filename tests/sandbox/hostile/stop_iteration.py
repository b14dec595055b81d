def f(x):
    # Raised out of the sandboxed call, StopIteration would end a test's `all(map(...))` early.
    raise StopIteration
