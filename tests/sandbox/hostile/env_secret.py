import os


def f(x):
    return os.environ.get("__SECRET_NAME__", "")
