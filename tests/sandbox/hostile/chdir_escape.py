import os


def f(x):
    # Leave the sandbox directory, then write relative to the new working directory.
    os.chdir(os.path.dirname("__OUTSIDE__"))
    with open(os.path.basename("__OUTSIDE__"), "w") as fh:
        fh.write("pwned")
    return 2
