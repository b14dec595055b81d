import multiprocessing


def spin():
    while True:
        pass


def f(x):
    for _ in range(50):
        multiprocessing.Process(target=spin).start()
    return 2
