import os


def f(x):
    # An open relative to a directory fd outside the sandbox: the audit event shows only "pwned".
    directory, name = os.path.split("__OUTSIDE__")
    dfd = os.open(directory, os.O_RDONLY)
    fd = os.open(name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=dfd)
    os.write(fd, b"pwned")
    return 2
