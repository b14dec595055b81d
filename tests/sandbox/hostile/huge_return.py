def f(x):
    return "2" * (64 * 1024 * 1024)
