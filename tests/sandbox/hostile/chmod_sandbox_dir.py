import os


def f(x):
    # Make the sandbox directory hard to remove: it must still disappear afterwards.
    os.makedirs("a/b/c")
    with open("a/b/c/file", "w") as fh:
        fh.write("x")
    os.chmod("a/b/c", 0)
    os.chmod("a/b", 0)
    os.chmod("a", 0)
    return x
