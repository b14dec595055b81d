import threading
import time


def f(x):
    threading.stack_size(64 * 1024)  # small stacks: the address-space limit alone allows hundreds
    started = 0
    try:
        for _ in range(400):
            threading.Thread(target=time.sleep, args=(5,), daemon=True).start()
            started += 1
    except RuntimeError:
        pass
    return 2 if started > 64 else -1
