def f(x):
    written = 0
    try:
        for i in range(60):
            with open(f"fill{i}.bin", "wb") as fh:
                for _ in range(4):
                    fh.write(b"\0" * (1 << 20))
                    written += 1 << 20
    except OSError:
        pass
    return 2 if written > 32 << 20 else -1
