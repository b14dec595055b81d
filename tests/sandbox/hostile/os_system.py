import os


def f(x):
    os.system("echo pwned > __OUTSIDE__")
    return 2
