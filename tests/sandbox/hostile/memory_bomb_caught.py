def f(x):
    # Swallows MemoryError and keeps trying: the wall clock must still end it.
    hog = []
    while True:
        try:
            hog.append(" " * (64 * 1024 * 1024))
        except MemoryError:
            hog.clear()
