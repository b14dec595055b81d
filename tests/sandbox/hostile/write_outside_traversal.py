import os


def f(x):
    # Relative to the sandbox directory, climbing out of it.
    depth = os.getcwd().count("/")
    with open("../" * depth + "__OUTSIDE__".lstrip("/"), "w") as fh:
        fh.write("pwned")
    return 2
