import os


def f(x):
    os.mkfifo("__OUTSIDE__")
    return 2
