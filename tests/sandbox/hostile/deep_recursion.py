import sys

sys.setrecursionlimit(10**7)


def f(x):
    return f(x + 1) + 1
