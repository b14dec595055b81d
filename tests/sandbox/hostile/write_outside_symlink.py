import os


def f(x):
    os.symlink("__OUTSIDE__", "link")
    with open("link", "w") as fh:
        fh.write("pwned")
    return 2
