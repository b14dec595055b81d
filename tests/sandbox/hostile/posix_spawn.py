import os


def f(x):
    os.posix_spawn("/bin/sh", ["sh", "-c", "echo pwned > __OUTSIDE__"], {})
    return 2
