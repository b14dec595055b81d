def f(x):
    while True:
        x += 1
