"""The trusted-code sandbox pool: statuses, limits, recovery from bad programs, no leaks."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from factory.sandbox.trusted.pool import WALL_FACTOR, WorkerPool, map_pools

TIMEOUT_S = 0.5


def case(source: str, args: str = "1", entry: str = "f", **extra: object) -> dict:
    return {"source": textwrap.dedent(source), "entry": entry, "args": args, **extra}


NORMAL = case("def f(x):\n    return [x, x + 1]\n", "41")


def children() -> dict[int, str]:
    """pid -> state of this process's children (from /proc)."""
    me = os.getpid()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == me:
            found[int(entry.name)] = state
    return found


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(workers=2, timeout_s=TIMEOUT_S, memory_mb=256, max_output_bytes=1000) as p:
        yield p


def run_one(pool: WorkerPool, c: dict, kind: str = "run") -> dict:
    (result,) = pool.map(kind, [c])
    return result


def limit_of(result: dict) -> str:
    """The status, or for a job stopped by a limit (``resource_limit``) the limit it hit."""
    return result["detail"] if result["status"] == "resource_limit" else result["status"]


HOSTILE = {
    "loop": ("def f(x):\n    while True:\n        pass\n", "timeout"),
    "loop_ignoring_signals": (
        """
        import signal

        def f(x):
            for sig in (signal.SIGALRM, signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, signal.SIG_IGN)
            signal.alarm(1)
            while True:
                pass
        """,
        "timeout",
    ),
    "sleep": ("import time\n\ndef f(x):\n    time.sleep(60)\n", "timeout"),
    "child_process": (
        """
        import subprocess, sys

        def f(x):
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)  # grandchild"])
            while True:
                pass
        """,
        "timeout",
    ),
    "allocate_without_bound": (
        # bytes(n) is calloc'ed: the address space fills at once, without touching pages
        "def f(x):\n    a = []\n    while True:\n        a.append(bytes(1 << 20))\n",
        "memory",
    ),
    "allocate_at_once": ("def f(x):\n    return [0] * 10**10\n", "memory"),
    "segfault": ("import ctypes\n\ndef f(x):\n    return ctypes.string_at(0)\n", "crash"),
    "os_exit": ("import os\n\ndef f(x):\n    os._exit(0)\n", "crash"),
    "recursion": ("def f(x):\n    return f(x + 1)\n", "recursion"),
    "recursion_limit_raised": (
        "import sys\n\ndef f(x):\n    sys.setrecursionlimit(10**6)\n    return f(x + 1)\n",
        "recursion",
    ),
    "c_stack_overflow": (
        # Recursion through C code (sorted's key) eats the C stack; the raised limit would let it
        # overflow and segfault. The worker caps the limit so it ends as a RecursionError.
        """
        import sys

        def f(x):
            sys.setrecursionlimit(10**6)
            return sorted([x], key=f)
        """,
        "recursion",
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_program_is_dropped_and_pool_recovers(pool: WorkerPool, name: str) -> None:
    source, status = HOSTILE[name]
    before = len(children())
    assert limit_of(run_one(pool, case(source))) == status
    after = run_one(pool, NORMAL)
    assert after == {"status": "ok", "output_repr": "[41, 42]", "output_type": "list"}
    states = children()
    assert len(states) <= max(before, pool.size), states
    assert "Z" not in states.values(), states
    assert set(pool.pids()) <= set(states)


def _grandchildren_alive() -> list[str]:
    leftovers = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"# grandchild" in cmdline:
            leftovers.append(entry.name)
    return leftovers


def test_timeout_kills_the_programs_own_children(pool: WorkerPool) -> None:
    import time

    assert limit_of(run_one(pool, case(HOSTILE["child_process"][0]))) == "timeout"
    # SIGKILL is sent to the whole group at once; on a loaded machine a killed process may take a
    # moment to be scheduled and exit, so allow it a second (a survivor would sleep for 60 s).
    deadline = time.monotonic() + 1.0
    while _grandchildren_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _grandchildren_alive() == []


def test_timeout_is_enforced_by_the_parent_on_time(pool: WorkerPool) -> None:
    import time

    # The job's CPU timer fires after TIMEOUT_S of CPU; on a loaded machine that takes longer in
    # wall time, and the parent's wall-clock backstop bounds it at WALL_FACTOR times the timeout.
    start = time.monotonic()
    assert limit_of(run_one(pool, case(HOSTILE["loop"][0]))) == "timeout"
    assert time.monotonic() - start < TIMEOUT_S * WALL_FACTOR + 1.0


def test_results_come_in_input_order_around_bad_neighbours(pool: WorkerPool) -> None:
    square = "def f(x):\n    return x * x\n"
    cases = []
    for i in range(60):
        if i in (7, 30):
            cases.append(case(HOSTILE["loop"][0]))
        elif i in (12, 45):
            cases.append(case(HOSTILE["segfault"][0]))
        else:
            cases.append(case(square, str(i)))
    results = list(pool.map("run", cases))
    for i, r in enumerate(results):
        if i in (7, 30):
            assert limit_of(r) == "timeout"
        elif i in (12, 45):
            assert r["status"] == "crash"
        else:
            assert r == {"status": "ok", "output_repr": str(i * i), "output_type": "int"}


@pytest.mark.parametrize(
    ("source", "args", "status"),
    [
        ("def f(x):\n    return 1 / 0\n", "1", "error:ZeroDivisionError"),
        ("def f(x):\n    raise SystemExit(3)\n", "1", "error:SystemExit"),
        ("def f(x):\n    raise KeyboardInterrupt\n", "1", "error:KeyboardInterrupt"),
        ("import nosuchmodule\n\ndef f(x):\n    return x\n", "1", "error:ModuleNotFoundError"),
        ("def f(x):\n    return object()\n", "1", "non_literal"),
        ("def f(x):\n    return iter([x])\n", "1", "non_literal"),
        ("def f(x):\n    return float('nan')\n", "1", "non_literal"),
        ("def f(x):\n    return [1e308 * 10]\n", "1", "non_literal"),
        ("def f(x):\n    return range(x)\n", "3", "non_literal"),
        ("def f(x):\n    return 'a' * 2001\n", "1", "output_too_long"),
        # a value of megabytes is a memory verdict, whether building it fits the limit or not
        ("def f(x):\n    return 'a' * 1_000_001\n", "1", "memory"),
        ("def f(x):\n    return [x] * 600_000\n", "1", "memory"),
        ("def f(x):\n    print('x' * 2000)\n    return 1\n", "1", "output_too_long"),
        (
            "def f(x):\n    try:\n        print('x' * 2000)\n    except BaseException:\n"
            "        pass\n    return 1\n",
            "1",
            "output_too_long",
        ),
        ("def f(x:\n    return x\n", "1", "bad_program"),
        ("def g(x):\n    return x\n", "1", "bad_program"),
        ("f = 3\n", "1", "bad_program"),
        ("def f(x):\n    return x\n", "y", "bad_program"),
        ("def f(x):\n    return x\n", "print(1)", "bad_program"),
        ("def f(x):\n    return x\n", "x=1", "bad_program"),
    ],
)
def test_statuses(pool: WorkerPool, source: str, args: str, status: str) -> None:
    result = run_one(pool, case(source, args))
    assert limit_of(result) == status
    assert result["output_repr"] is None and result["output_type"] is None


@pytest.mark.parametrize(
    ("source", "args", "output_repr", "output_type"),
    [
        ("def f(x):\n    return x\n", "{'a': (1, 2.5, None)}", "{'a': (1, 2.5, None)}", "dict"),
        ("def f(x):\n    return x > 0\n", "1", "True", "bool"),
        ("def f(x):\n    return set()\n", "1", "set()", "set"),
        ("def f(a, b):\n    return a + b\n", "[1, 2], [3]", "[1, 2, 3]", "list"),
        ("def f():\n    return -0.0\n", "", "-0.0", "float"),
        ("def f(x):\n    print('hello', x)\n    return x\n", "'ab'", "'ab'", "str"),
    ],
)
def test_ok_results(pool: WorkerPool, source: str, args: str, output_repr: str, output_type: str) -> None:
    result = run_one(pool, case(source, args))
    assert result == {"status": "ok", "output_repr": output_repr, "output_type": output_type}


def test_program_writes_to_real_fds_never_reach_the_channel(pool: WorkerPool) -> None:
    source = """
    import os, sys

    def f(x):
        os.write(1, b"\\x00\\x00\\x00\\x10garbage on fd 1")
        os.write(2, b"garbage on fd 2")
        sys.__stdout__.write("more")
        return x
    """
    assert run_one(pool, case(source, "5"))["output_repr"] == "5"
    assert run_one(pool, NORMAL)["status"] == "ok"


def test_each_job_gets_a_fresh_namespace_and_fixed_random_state(pool: WorkerPool) -> None:
    counter = case("A = []\n\ndef f(x):\n    A.append(x)\n    return len(A)\n")
    assert {r["output_repr"] for r in pool.map("run", [counter] * 20)} == {"1"}
    rnd = case("import random\n\ndef f(x):\n    return random.random()\n")
    assert len({r["output_repr"] for r in pool.map("run", [rnd] * 20)}) == 1


def test_alarm_and_signal_handlers_do_not_outlive_their_job(pool: WorkerPool) -> None:
    import time

    leave_alarm = case(
        """
        import signal

        def f(x):
            signal.signal(signal.SIGUSR1, lambda *a: 1 / 0)
            signal.alarm(1)
            return x
        """
    )
    poke = case("import os, signal\n\ndef f(x):\n    os.kill(os.getpid(), signal.SIGUSR1)\n    return x\n")
    assert [r["status"] for r in pool.map("run", [leave_alarm] * 2)] == ["ok", "ok"]
    time.sleep(1.2)
    assert run_one(pool, NORMAL)["status"] == "ok"
    assert run_one(pool, poke)["status"] == "crash"  # SIGUSR1's default action: the worker dies
    assert run_one(pool, NORMAL)["status"] == "ok"


def test_a_handler_set_by_evaluated_arguments_does_not_outlive_its_job(pool: WorkerPool) -> None:
    """A program with no import skips the handler check, unless its arguments are code."""
    plain = "def f(x):\n    return 1\n"
    args = "__import__('signal').signal(__import__('signal').SIGUSR1, lambda *a: 1 / 0)"
    poke = case("import os, signal\n\ndef f(x):\n    os.kill(os.getpid(), signal.SIGUSR1)\n    return x\n")
    leave = case(plain, args, eval_args=True)
    assert [r["status"] for r in pool.map("run", [leave] * 2)] == ["ok", "ok"]  # both workers
    assert run_one(pool, poke)["status"] == "crash"  # the default action, not the handler's 1 / 0


def test_recursion_limit_is_restored_between_jobs(pool: WorkerPool) -> None:
    raise_limit = case("import sys\n\ndef f(x):\n    sys.setrecursionlimit(5000)\n    return 1\n")
    depth = case("def f(x):\n    return 0 if x == 0 else 1 + f(x - 1)\n", "2000")
    results = list(pool.map("run", [raise_limit, raise_limit, depth, depth]))
    assert [r["status"] for r in results] == ["ok", "ok", "recursion", "recursion"]


def test_eval_args_are_expressions_in_the_program_namespace(pool: WorkerPool) -> None:
    source = "DATA = [1, 2]\n\ndef f(xs, g, d):\n    return [g(x) for x in xs] + sorted(d)\n"
    c = case(source, "DATA[:], lambda x: x * 10, dict(b=1, a=2)", eval_args=True)
    assert run_one(pool, c)["output_repr"] == "[10, 20, 'a', 'b']"
    assert run_one(pool, case(source, "nope", eval_args=True))["status"] == "bad_program"


def test_lines_kind_records_executed_program_lines(pool: WorkerPool) -> None:
    source = """
    def helper(y):
        return y * 2

    def f(x):
        if x > 0:
            return helper(x)
        return -1
    """
    result = run_one(pool, case(source, "3"), kind="lines")
    assert result["status"] == "ok" and result["output_repr"] == "6"
    assert result["lines"] == [3, 6, 7]
    assert run_one(pool, case(source, "-3"), kind="lines")["lines"] == [6, 8]
    failed = run_one(pool, case("def f(x):\n    y = 1\n    return y / 0\n"), kind="lines")
    assert failed["status"] == "error:ZeroDivisionError" and failed["lines"] == [2, 3]


def test_a_job_loads_the_program_the_parent_compiled(pool: WorkerPool) -> None:
    from factory.program_code import portable_code

    shipped = portable_code("def f(x):\n    return x * 2\n")
    # Another source, so that the worker's own cache cannot answer: the shipped code runs.
    c = case("def f(x):\n    return ('not', 'shipped', x)\n", "21", code=shipped)
    assert run_one(pool, c)["output_repr"] == "42"
    # A third source, its body on line 3: the lines are the shipped program's.
    c = case("def f(x):\n\n    return ('still', 'not', 'shipped', x)\n", "21", code=shipped)
    assert run_one(pool, c, kind="lines")["lines"] == [2]


def test_pipes_hold_a_big_answer_without_the_worker_waiting(pool: WorkerPool) -> None:
    import fcntl

    from factory.sandbox.trusted.pool import PIPE_BYTES

    if not hasattr(fcntl, "F_GETPIPE_SZ"):
        pytest.skip("pipe sizes are Linux-only")
    if int(Path("/proc/sys/fs/pipe-max-size").read_text()) < PIPE_BYTES:
        pytest.skip("this machine caps pipes below PIPE_BYTES")
    for w in pool._workers:
        for fd in (w.rfd, w.wfd):
            assert fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) == PIPE_BYTES


def test_hash_seed_is_fixed_per_pool() -> None:
    source = case("def f(x):\n    return hash(x)\n", "'some string'")
    expected = {}
    for seed in (1, 2):
        out = subprocess.run(
            [sys.executable, "-c", "print(hash('some string'))"],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        )
        expected[seed] = out.stdout.strip()
    with WorkerPool(workers=1, hash_seed=1) as a, WorkerPool(workers=1, hash_seed=2) as b:
        got = next(map_pools([a, b], "run", [source]))
    assert [r["output_repr"] for r in got] == [expected[1], expected[2]]
    assert expected[1] != expected[2]


def test_abandoned_map_leaves_the_pool_usable(pool: WorkerPool) -> None:
    square = "def f(x):\n    return x * x\n"
    cases = [case(square, str(i)) for i in range(200)]
    for i, _ in enumerate(pool.map("run", cases)):
        if i == 3:
            break
    assert [r["output_repr"] for r in pool.map("run", cases[:5])] == ["0", "1", "4", "9", "16"]


def test_taking_exactly_n_results_frees_the_pool_for_the_next_map(pool: WorkerPool) -> None:
    square = "def f(x):\n    return x * x\n"
    first = iter(pool.map("run", [case(square, str(i)) for i in range(5)]))
    assert [next(first)["output_repr"] for _ in range(5)] == ["0", "1", "4", "9", "16"]
    second = iter(pool.map("run", [case(square, "7")]))  # `first` is still referenced
    assert next(second)["output_repr"] == "49"
    busy = iter(pool.map("run", [case(square, str(i)) for i in range(50)]))
    next(busy)
    with pytest.raises(RuntimeError, match="already running"):
        next(iter(pool.map("run", [NORMAL])))
    busy.close()
    assert run_one(pool, NORMAL)["status"] == "ok"


def test_interrupt_in_the_consumer_stops_cleanly() -> None:
    square = "def f(x):\n    return x * x\n"
    p = WorkerPool(workers=2)
    pids = p.pids()
    with pytest.raises(KeyboardInterrupt), p:
        for i, _ in enumerate(p.map("run", [case(square, str(i)) for i in range(100)])):
            if i == 5:
                raise KeyboardInterrupt
    states = children()
    assert not set(pids) & set(states)


def test_close_reaps_every_worker_and_refuses_more_work() -> None:
    p = WorkerPool(workers=3)
    pids = p.pids()
    assert len(pids) == 3 and set(pids) <= set(children())
    p.close()
    p.close()
    assert not set(pids) & set(children())
    with pytest.raises(RuntimeError):
        list(p.map("run", [NORMAL]))


def test_bad_arguments_are_refused(pool: WorkerPool) -> None:
    with pytest.raises(ValueError, match="unknown job kind"):
        list(pool.map("nope", [NORMAL]))
    with pytest.raises(TypeError, match="plain data"):
        list(pool.map("run", [{"source": object()}]))
    for kwargs in ({"workers": 0}, {"timeout_s": 0}, {"memory_mb": 10}, {"hash_seed": -1}):
        with pytest.raises(ValueError):
            WorkerPool(**kwargs)


def test_empty_input(pool: WorkerPool) -> None:
    assert list(pool.map("run", [])) == []


def test_one_job_kind_per_pool() -> None:
    """``map_pools`` may run a different kind on each pool (the trace stage: the full trace from
    the first hash seed, a digest from the second); results stay in input order, per pool."""
    programs = [
        {
            "source": f"def f(x):\n    if x > {i}:\n        return x\n    return -x\n",
            "entry": "f",
            "args": "3",
        }
        for i in range(40)
    ]
    with WorkerPool(workers=1, hash_seed=1) as a, WorkerPool(workers=2, hash_seed=2) as b:
        results = list(map_pools([a, b], ["lines", "run"], programs))
        for i, (lines, run) in enumerate(results):
            assert lines["output_repr"] == run["output_repr"] == ("3" if i < 3 else "-3")
            assert lines["lines"] == ([2, 3] if i < 3 else [2, 4])
            assert "lines" not in run
        with pytest.raises(ValueError, match="2 job kinds for 1 pools"):
            list(map_pools([a], ["run", "run"], programs))
        with pytest.raises(ValueError, match="unknown job kind"):
            list(map_pools([a, b], ["run", "nope"], programs))


BURN_CPU = """
import time

def f(seconds):
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass
    return seconds
"""


def test_timeout_counts_cpu_seconds_so_a_loaded_machine_gives_the_same_verdicts() -> None:
    """The worker shares one core with three spinning processes: a job needing 0.4 s of CPU takes
    well over its 0.5 s timeout in wall time, yet is not a timeout; a job needing 5 s still is, in
    bounded time. (With the kernel's autogroups, the worker's own session gets half the core
    however many spinners there are: 0.3 s of CPU took 0.45-0.5 s of wall, at the edge.)"""
    import time

    core = {min(os.sched_getaffinity(0))}
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(3)]
    try:
        for p in spinners:
            os.sched_setaffinity(p.pid, core)
        with WorkerPool(workers=1, timeout_s=TIMEOUT_S, memory_mb=256) as pool:
            run_one(pool, NORMAL)  # started and ready
            for pid in pool.pids():
                os.sched_setaffinity(pid, core)
            start = time.monotonic()
            (fits,) = pool.map("run", [case(BURN_CPU, "0.4")])
            fits_wall = time.monotonic() - start
            for pid in pool.pids():
                os.sched_setaffinity(pid, core)  # the replacement of a killed worker too
            start = time.monotonic()
            (too_long,) = pool.map("run", [case(BURN_CPU, "5.0")])
            too_long_wall = time.monotonic() - start
    finally:
        for p in spinners:
            p.kill()
            p.wait()
    assert fits == {"status": "ok", "output_repr": "0.4", "output_type": "float"}
    assert fits_wall > TIMEOUT_S  # the load was real: a wall-clock timeout would have fired
    assert limit_of(too_long) == "timeout"
    assert too_long_wall < TIMEOUT_S * 10 + 2.0


def test_a_blocked_job_is_killed_at_its_wall_timeout_not_later(pool: WorkerPool) -> None:
    import time

    start = time.monotonic()
    assert limit_of(run_one(pool, case(HOSTILE["sleep"][0]))) == "timeout"
    assert time.monotonic() - start < TIMEOUT_S + 1.0


PID = "import os\n\ndef f(x):\n    return os.getpid()\n"
BUSY_PID = """
import os, time

def f(x):
    start = time.process_time()
    while time.process_time() - start < 0.002:
        pass
    return os.getpid()
"""


def _all_ready(*pools: WorkerPool) -> None:
    """Wait until every worker of ``pools`` answers (jobs without a key are dealt out in turn)."""
    for pool in pools:
        for _ in range(100):
            if len({r["output_repr"] for r in pool.map("run", [case(PID)] * 8)}) == pool.size:
                break


def test_jobs_of_one_program_go_to_one_worker() -> None:
    """With ``affinity``, a program's jobs run on one worker per pool (which compiles it once)
    while that worker keeps up; an idle worker may take a few at the end."""
    programs = [BUSY_PID + f"# program {n}\n" for n in range(8)]
    jobs = [case(source, str(i)) for i, source in enumerate(p for p in programs for _ in range(10))]
    with WorkerPool(workers=2, hash_seed=1) as a, WorkerPool(workers=2, hash_seed=2) as b:
        _all_ready(a, b)
        results = list(map_pools([a, b], "run", jobs, affinity=lambda p: p["source"]))
    for lane in (0, 1):
        by_program: dict[str, list[str]] = {}
        for job, pair in zip(jobs, results, strict=True):
            by_program.setdefault(job["source"], []).append(pair[lane]["output_repr"])
        at_home = sum(max(pids.count(pid) for pid in pids) for pids in by_program.values())
        assert at_home >= 0.8 * len(jobs), by_program
        assert len({pid for pids in by_program.values() for pid in pids}) == 2


def test_an_idle_worker_takes_jobs_queued_for_a_busy_one() -> None:
    """Every job has the same key, and the first one is slow: the other worker runs the jobs that
    did not fit in the busy worker's window (16 queued in its pipe) instead of leaving them
    waiting for it."""
    jobs = [case(BURN_CPU, "0.5")] + [case(PID, str(i)) for i in range(40)]
    with WorkerPool(workers=2, timeout_s=5.0) as pool:
        _all_ready(pool)
        results = list(pool.map("run", jobs, affinity=lambda p: "one key"))
    assert results[0]["status"] == "ok"
    pids = [r["output_repr"] for r in results[1:]]
    assert len(set(pids)) == 2
    assert max(pids.count(pid) for pid in pids) >= 40 - 16  # the idle one took the rest


def test_a_crash_after_held_answers_blames_the_job_that_crashed() -> None:
    """A worker sends the answers of quick jobs together; when it dies with answers held back,
    the shared progress counter names the job that was running and the finished ones run again:
    no neighbour of a crash or a timeout is blamed for it."""
    square = "def f(x):\n    return x * x\n"
    for bad, status in ((HOSTILE["segfault"][0], "crash"), (HOSTILE["loop"][0], "timeout")):
        jobs = [case(square, str(i)) for i in range(30)]
        jobs[17] = case(bad)
        with WorkerPool(workers=1, timeout_s=TIMEOUT_S, memory_mb=256) as pool:
            results = list(pool.map("run", jobs))
            assert pool.restarts == 1
        for i, r in enumerate(results):
            expected = {"status": "ok", "output_repr": str(i * i), "output_type": "int"}
            assert limit_of(r) == status if i == 17 else r == expected, (i, r)


def test_the_worker_knows_only_its_own_job_kinds() -> None:
    """A stage's kinds reach the worker through the pool (``kinds=``); the worker names none."""
    from factory.sandbox.trusted import worker

    assert set(worker.KINDS) == {"run", "lines"}
    assert all(target.startswith("factory.sandbox.trusted.worker:") for target in worker.KINDS.values())
    with WorkerPool(workers=1, kinds={"echo": "factory.sandbox.trusted.worker:run_job"}) as pool:
        assert set(pool.kinds) == {"run", "lines", "echo"}
        (echoed,) = pool.map("echo", [{"source": "def f(x):\n    return x\n", "args": "5"}])
        assert echoed["output_repr"] == "5"
        with pytest.raises(ValueError, match="unknown job kind 'trace'"):
            next(pool.map("trace", [{}]))


# (what a job changes, what a later job reads): the later job must read the worker's own state.
LEAKS = {
    "module global": ("import math\n\ndef f(x):\n    math.pi = 3\n    return 1\n",
                      "import math\n\ndef f(x):\n    return math.pi\n"),
    "module global through a module": ("import string\n\ndef f(x):\n    string.digits = 'x'\n    return 1\n",
                                       "import string\n\ndef f(x):\n    return string.digits\n"),
    "module global through a dunder": (
        "def f(x):\n    subclasses = ().__class__.__base__.__subclasses__()\n"
        "    wrap = [c for c in subclasses if c.__qualname__ == '_wrap_close'][0]\n"
        "    wrap.__init__.__globals__['sep'] = '!'\n    return 1\n",
        "import os\n\ndef f(x):\n    return os.sep\n"),
    "decimal context": ("import decimal\n\ndef f(x):\n    decimal.getcontext().prec = 3\n    return 1\n",
                        "import decimal\n\ndef f(x):\n    return str(decimal.Decimal(1) / 7)\n"),
    "working directory": ("import os\n\ndef f(x):\n    os.chdir('/')\n    return 1\n",
                          "import os\n\ndef f(x):\n    return os.getcwd()\n"),
    "umask": ("import os\n\ndef f(x):\n    os.umask(0o777)\n    return 1\n",
              "import os\n\ndef f(x):\n    m = os.umask(0)\n    os.umask(m)\n    return m\n"),
    "environment": ("import os\n\ndef f(x):\n    os.environ['LEAK'] = '1'\n    return 1\n",
                    "import os\n\ndef f(x):\n    return os.environ.get('LEAK')\n"),
    "int digit limit": ("import sys\n\ndef f(x):\n    sys.set_int_max_str_digits(640)\n    return 1\n",
                        "import sys\n\ndef f(x):\n    return sys.get_int_max_str_digits()\n"),
    "switch interval": ("import sys\n\ndef f(x):\n    sys.setswitchinterval(1.0)\n    return 1\n",
                        "import sys\n\ndef f(x):\n    return sys.getswitchinterval()\n"),
    "threads": ("import threading, time\n\ndef f(x):\n"
                "    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n    return 1\n",
                "import threading\n\ndef f(x):\n    return threading.active_count()\n"),
}  # fmt: skip


@pytest.mark.parametrize("what", sorted(LEAKS))
def test_a_job_that_changes_process_state_leaves_it_to_no_later_job(what: str) -> None:
    change, read = LEAKS[what]
    with WorkerPool(workers=1, timeout_s=TIMEOUT_S, memory_mb=256) as one:
        before = run_one(one, case(read))
        assert before["status"] == "ok", before
        results = list(one.map("run", [case(change), case(read)]))
    assert results[0]["status"] == "ok", results[0]
    assert results[1]["output_repr"] == before["output_repr"], what


def test_a_program_that_reaches_no_process_state_keeps_its_worker() -> None:
    with WorkerPool(workers=1, timeout_s=TIMEOUT_S, memory_mb=256) as one:
        pid = one.pids()
        floor = case("import math\n\ndef f(x):\n    return math.floor(x / 2)\n")
        list(one.map("run", [floor] * 20 + [NORMAL] * 20))
        assert one.pids() == pid and one.restarts == 0
