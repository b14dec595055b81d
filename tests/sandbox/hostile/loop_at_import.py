import signal

signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    pass


def f(x):
    return x + 1
