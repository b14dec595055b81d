import os


def f(x):
    # The adversary knows where the scorer keeps things: the tests file beside the job
    # (``__BAIT__``), the host's password hashes, the checkouts and the other jobs' directories.
    found = []
    for path in ("__BAIT__", "/etc/shadow", "/etc/passwd"):
        try:
            with open(path) as fh:
                found.append(fh.read())
        except OSError:
            pass
    for directory in (os.path.dirname("__BAIT__"), "/work", "/home", "/root/.cache", "/var"):
        try:
            found.extend(os.listdir(directory))
        except OSError:
            pass
    try:
        mine = os.path.basename(os.getcwd())
        found.extend(n for n in os.listdir(os.path.dirname(os.getcwd())) if n != mine)
    except OSError:
        pass
    return 2 if found else -1
