import subprocess


def f(x):
    subprocess.run(["sh", "-c", "echo pwned > __OUTSIDE__"])
    return 2
