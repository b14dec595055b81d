def f(x):
    with open("__OUTSIDE__", "w") as fh:
        fh.write("pwned")
    return 2
