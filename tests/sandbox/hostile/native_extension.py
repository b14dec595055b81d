import base64
import os
import sys


def f(x):
    # A compiled extension (its bytes in the completion) written to the job's directory and
    # imported: native code that no audit hook sees.
    name = "evil.so"  # the suffix every CPython on Linux imports
    with open(name, "wb") as fh:
        fh.write(base64.b64decode("__EXTENSION_B64__"))
    sys.path.insert(0, os.getcwd())
    try:
        import evil
    except ImportError:
        return -1
    return evil.two()
