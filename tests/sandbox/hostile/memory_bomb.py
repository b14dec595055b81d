def f(x):
    hog = []
    while True:
        hog.append(bytearray(50 * 1024 * 1024))
