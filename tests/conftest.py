"""Fixtures shared across the test tree."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "data" / "benchmarks"
CRUXEVAL = BENCHMARKS / "cruxeval" / "cruxeval.jsonl"


@pytest.fixture(scope="session")
def execverify() -> str:
    """The installed console script (tests call the CLI as a user would)."""
    script = Path(sys.executable).parent / "execverify"
    if not script.exists():
        pytest.fail(f"{script} is missing: run `pip install -e .` in the venv first")
    return str(script)


@pytest.fixture(scope="session")
def embedded_dir() -> Path:
    """The small embedded model, SmolLM2-135M-Instruct, as safetensors (converted from the
    wheel's GGUF once): the fast real model of the solver tests (and of the model stages on Ray)."""
    from factory.solvers.embedded import SMOLLM2, ensure_converted

    return ensure_converted(SMOLLM2)


@pytest.fixture(scope="session")
def cruxeval_path() -> Path:
    """CRUXEval's 800 cases (data/benchmarks/ in the repository); missing data fails the test."""
    if not CRUXEVAL.is_file():
        pytest.fail(f"CRUXEval data not found at {CRUXEVAL} (data/benchmarks/ is part of the repository)")
    return CRUXEVAL


@pytest.fixture(scope="session")
def cruxeval_records(cruxeval_path: Path) -> list[dict[str, Any]]:
    """The CRUXEval records (``code``, ``input``, ``output``, ``id``), in file order."""
    return [json.loads(line) for line in cruxeval_path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="session")
def cruxeval_traced(
    cruxeval_records: list[dict[str, Any]],
) -> list[tuple[int, dict[str, Any], dict[str, Any]]]:
    """(index, record, trace) of every CRUXEval case whose input is a literal and whose trace is
    ``ok``, traced in-process once per test session (12 inputs are expressions, not literals)."""
    from factory.errors import UserError
    from factory.trace.tracer import trace_call

    traced = []
    for index, record in enumerate(cruxeval_records):
        try:
            trace = trace_call(record["code"], "f", record["input"])
        except UserError:
            continue
        if trace["status"] == "ok":
            traced.append((index, record, trace))
    return traced


@dataclass(frozen=True)
class WhiteBoxCase:
    """A white-box item, the program it is about and the gold answer lines, one per question."""

    source: str
    item: dict[str, Any]
    gold_lines: list[str]


@pytest.fixture
def white_box() -> WhiteBoxCase:
    """The white-box item the scoring and reward tests share: ``f(3)`` on a two-branch program,
    the output question, two next_line and two state questions (one ``Nil``)."""
    source = "def f(x):\n    y = x * 2\n    if y > 10:\n        return y\n    return -y\n"
    questions = [
        {"family": "output", "answer": "-6", "answer_type": "int"},
        {"family": "next_line", "line": 2, "occurrence": 1, "answer": 3},
        {"family": "next_line", "line": 3, "occurrence": 1, "answer": 5},
        {"family": "state", "line": 2, "occurrence": 1, "var": "y", "answer": "6; int"},
        {"family": "state", "line": 4, "occurrence": 1, "var": "y", "answer": "Nil"},
    ]
    item = {
        "family": "white_box",
        "source": source,
        "entry": "f",
        "args": "3",
        "questions": json.dumps(questions),
    }
    return WhiteBoxCase(source, item, ["assert f(3) == -6", "if y > 10:", "return -y", "6; int", "Nil"])


@pytest.fixture(scope="session")
def small_tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real tasks table from the whole chain on small params (tiers 1 and 4, one case per
    program): synthesize → inputs → execute → trace → tasks, in-process. Returns its folder."""
    from factory.execute.stage import run_execute_stage
    from factory.inputs.stage import run_inputs_stage
    from factory.params import ExecuteParams, InputsParams, SynthesizeParams, TasksParams, TraceParams
    from factory.synth.stage import run_synthesize_stage
    from factory.tasks.stage import run_tasks_stage
    from factory.trace.stage import run_trace_stage

    tmp = tmp_path_factory.mktemp("small_chain")
    execute = ExecuteParams()
    run_synthesize_stage(5, SynthesizeParams(tiers=[1, 4]), tmp / "programs", tmp / "synthesize.json")
    run_inputs_stage(
        5, InputsParams(per_program=1, candidates=4), execute, "grammars/python",
        tmp / "programs", tmp / "cases", tmp / "inputs.json",
    )  # fmt: skip
    run_execute_stage(tmp / "cases", tmp / "executions", tmp / "execute.json", execute)
    run_trace_stage(tmp / "executions", tmp / "traces", tmp / "trace.json", TraceParams(), execute)
    run_tasks_stage(tmp / "traces", tmp / "tasks", tmp / "tasks.json", 5, TasksParams())
    return tmp / "tasks"


class OlahHub:
    """A Hub-compatible server (``olah``, offline) on 127.0.0.1 serving local git repositories.

    ``publish(folder, "ORG/NAME", "v1")`` commits a folder into the dataset repository ORG/NAME
    and tags it, which is what a publish is on the Hub; clients read it with
    ``HF_ENDPOINT=hub.endpoint`` and an explicit ``revision=``.
    """

    def __init__(self, root: Path) -> None:
        import socket
        import subprocess
        import time
        import urllib.request

        self.root = root
        self.mirrors = root / "mirrors"
        self.mirrors.mkdir(parents=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        config = root / "olah.toml"
        config.write_text(
            "[basic]\n"
            f'host = "127.0.0.1"\nport = {self.port}\n'
            f'repos-path = "{root / "cache"}"\nmirrors-path = ["{self.mirrors}"]\n'
            f'mirror-netloc = "127.0.0.1:{self.port}"\nmirror-lfs-netloc = "127.0.0.1:{self.port}"\n'
            "[accessibility]\noffline = true\n"
        )
        script = Path(sys.executable).parent / "olah-cli"
        self.log = (root / "olah.log").open("w")
        self.proc = subprocess.Popen(
            [str(script), "-c", str(config)], cwd=root, stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{self.endpoint}/api/datasets/none/none/refs", timeout=2)
            except urllib.error.HTTPError:
                break  # it answers (404 for a missing repository)
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.close()
                    raise RuntimeError(
                        f"olah did not start: {(root / 'olah.log').read_text()[-2000:]}"
                    ) from None
                time.sleep(0.2)
            else:
                break

    def publish(self, folder: Path, repo_id: str, tag: str) -> str:
        """Commit ``folder``'s files as the repository's next version and tag it; the commit id."""
        import shutil
        import subprocess

        repo = self.mirrors / "datasets" / repo_id
        git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com", "-C", str(repo)]
        if not repo.exists():
            repo.mkdir(parents=True)
            subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
        for old in repo.iterdir():
            if old.name != ".git":
                shutil.rmtree(old) if old.is_dir() else old.unlink()
        shutil.copytree(folder, repo, dirs_exist_ok=True)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", f"Release {tag}"], check=True)
        subprocess.run([*git, "tag", tag], check=True)
        return subprocess.run(
            [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
        ).stdout.strip()

    def env(self, home: Path) -> dict[str, str]:
        """Environment for a client process: this endpoint, an empty cache, no token."""
        import os

        # another test may have set TRANSFORMERS_OFFLINE or HF_*_OFFLINE in this process: drop them
        drop = ("HF_", "HUGGINGFACE", "TRANSFORMERS_OFFLINE")
        keep = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
        return {**keep, "HF_ENDPOINT": self.endpoint, "HF_HOME": str(home), "HF_HUB_DISABLE_TELEMETRY": "1"}

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except Exception:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


@pytest.fixture(scope="session")
def olah_hub(tmp_path_factory: pytest.TempPathFactory):
    """A running ``OlahHub`` for the test session (stopped at the end)."""
    hub = OlahHub(tmp_path_factory.mktemp("olah"))
    try:
        yield hub
    finally:
        hub.close()


@pytest.fixture(scope="session")
def data_chain(tmp_path_factory: pytest.TempPathFactory):
    """``data_chain(tiers)``: the default params restricted to ``tiers`` through synthesize →
    inputs → execute, in-process; returns ``(folder, params)`` (``programs``, ``cases``,
    ``spares``, ``executions`` and ``params.yaml`` in the folder). Built once per tiers in a session."""
    import yaml

    from factory.execute.stage import run_execute_stage
    from factory.inputs.stage import run_inputs_stage
    from factory.params import load_params
    from factory.synth.stage import run_synthesize_stage

    repo = Path(__file__).resolve().parents[1]
    built: dict[tuple[int, ...], tuple[Path, Any]] = {}

    def build(tiers: tuple[int, ...]) -> tuple[Path, Any]:
        if tiers not in built:
            root = tmp_path_factory.mktemp("chain")
            raw = yaml.safe_load((repo / "params.yaml").read_text())
            raw["synthesize"]["tiers"] = list(tiers)
            raw["synthesize"]["grammars"] = [str(repo / "grammars/python")]
            (root / "params.yaml").write_text(yaml.safe_dump(raw))
            p = load_params(root / "params.yaml")
            run_synthesize_stage(p.seed, p.synthesize, root / "programs", root / "synthesize.json")
            run_inputs_stage(
                p.seed, p.inputs, p.execute, p.synthesize.grammars,
                root / "programs", root / "cases", root / "inputs.json", spares_dir=root / "spares",
            )  # fmt: skip
            run_execute_stage(root / "cases", root / "executions", root / "execute.json", p.execute)
            built[tiers] = (root, p)
        return built[tiers]

    return build
