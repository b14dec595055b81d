import os


def f(x):
    fd = os.open("__OUTSIDE__", os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"pwned")
    return 2
