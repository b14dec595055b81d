import sys


def f(x):
    chunk = "x" * (1 << 20)
    while True:
        sys.stdout.write(chunk)
        sys.stderr.write(chunk)
