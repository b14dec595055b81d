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


def libc_functions(names_and_types):
    """libc functions rebuilt from ctypes' surviving C types and raw addresses (no import of
    ctypes, no dlsym: no audit event), as in ``ctypes_without_import``."""
    by_name = {c.__name__: c for c in all_subclasses(object)}
    simple, func_ptr = by_name["_SimpleCData"], by_name["CFuncPtr"]

    class Int(simple):
        _type_ = "i"

    class CharP(simple):
        _type_ = "z"

    kinds = {"i": Int, "l": Int, "p": CharP}  # (sizes of 4 KiB and 8 bytes fit an int)
    libc_path, base = None, None
    for line in open("/proc/self/maps"):
        fields = line.split()
        if len(fields) >= 6 and "/libc.so" in fields[5] and fields[2] == "00000000":
            libc_path, base = fields[5], int(fields[0].split("-")[0], 16)
            break
    offsets = symbol_offsets(libc_path, set(names_and_types))
    out = {}
    for name, types in names_and_types.items():

        class Fn(func_ptr):
            _flags_ = 1
            _restype_ = Int
            _argtypes_ = tuple(kinds[t] for t in types)

        out[name] = Fn(base + offsets[name])
    return out


def f(x):
    # Native calls the audit hook never sees: state that could outlive the job (SysV IPC),
    # metadata of a file outside, and the scheduling of the scorer and its fork server.
    c = libc_functions({
        "msgget": "ii", "shmget": "ili", "chmod": "pi", "chown": "pii", "utimes": "pp",
        "setxattr": "pppli", "sched_setaffinity": "ilp", "syscall": "iiii",
    })  # fmt: skip
    wins = []
    if c["msgget"](int("__HOST_QUEUE_KEY__"), 0) >= 0:  # the scorer's queue: its messages
        wins.append("host queue")
    c["msgget"](0x5EC7, 0o1666)  # IPC_CREAT: left behind for a later job
    c["shmget"](0x5EC8, 4096, 0o1666)
    bait = b"__BAIT__"
    if c["chmod"](bait, 0o777) == 0:
        wins.append("chmod")
    if c["chown"](bait, 12345, 12345) == 0:
        wins.append("chown")
    if c["utimes"](bait, None) == 0:
        wins.append("utime")
    if c["setxattr"](bait, b"user.pwned", b"1", 1, 0) == 0:
        wins.append("setxattr")
    for pid in (int("__SCORER_PID__"), int("__ZYGOTE_PID__"), 1):
        if c["sched_setaffinity"](pid, 8, b"\x01\0\0\0\0\0\0\0") == 0 and pid != 1:
            wins.append(f"affinity {pid}")
        if c["syscall"](251, 1, pid, (3 << 13) | 7) == 0 and pid != 1:  # ioprio_set: idle class
            wins.append(f"ioprio {pid}")
    return 2 if wins else -1
