"""The deps of every DVC stage cover the code it runs, and no more (``dvc.yaml``, ``train/dvc.yaml``).

Each stage's code closure is derived from the code (``tests/dvc_deps.py``, by parsing, never by
importing): the command function ``cmd`` names in ``factory/cli/`` (or the module or script a
``python`` command runs), every project module it imports, lazily or not, and the modules named in
job-kind and ``python -m`` strings. The CLI package's own files (``factory/cli/**``) are left out: a
stage depends on the stage code, not on the command-line wrapper; what a command imports counts.
A dep covers a file when it is that file or a folder above it.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
import yaml

from tests.dvc_deps import (
    DVC_FILES,
    REPO,
    Project,
    Stage,
    chain,
    covers,
    load_stages,
    missing,
    outputs_of,
    repo_path,
    report,
    suggested,
    uncovered,
    unused,
)

FIX = (
    "Fix the deps: lists of dvc.yaml / train/dvc.yaml (CONTRIBUTING.md, 'Add a stage'); "
    "then `dvc repro` refreshes dvc.lock."
)


@pytest.fixture(scope="module")
def project() -> Project:
    return Project()


def _all_stages() -> list[Stage]:
    return [stage for name in DVC_FILES for stage in load_stages(REPO / name)]


def _uncovered_report(project: Project, stages: list[Stage]) -> dict[Stage, list[str]]:
    found = {}
    for stage in stages:
        files = uncovered(stage, project.stage_closure(stage))
        if files:
            found[stage] = files
    return found


def _coverage_problems(project: Project, stages: list[Stage], outputs: set[str]) -> str:
    """Per stage: the dep lines to add (each with how the stage reaches the file), and the deps
    that name nothing; empty when there is nothing to fix."""
    lacking: dict[Stage, list[str]] = {}
    notes: dict[Stage, dict[str, str]] = {}
    for stage, files in _uncovered_report(project, stages).items():
        closure = project.stage_closure(stage)
        lacking[stage] = suggested(files)
        notes[stage] = {
            f: "via " + " -> ".join(chain(closure, f)[:-1]) if closure[f] else "the command imports it"
            for f in files
        }
    absent = {stage: paths for stage in stages if (paths := missing(stage, outputs))}
    problems = []
    if lacking:
        problems.append(report(lacking, "runs code no dep covers; add to its deps:", notes))
    if absent:
        problems.append(report(absent, "deps name paths that do not exist (and no stage writes):"))
    return "\n".join(problems)


def test_every_stage_s_deps_cover_the_code_it_runs(project: Project) -> None:
    """Every file of a stage's closure is covered by a dep, and every dep exists (or is written by
    a stage); a failure lists, per stage, the lines to add, each with how the stage reaches it."""
    stages = _all_stages()
    problems = _coverage_problems(project, stages, outputs_of(stages))
    if problems:
        pytest.fail(f"{problems}\n{FIX}", pytrace=False)


def test_no_stage_depends_on_code_it_does_not_run(project: Project) -> None:
    """A code dep (a ``.py`` file or a folder of them; not data, params or a stage's output) must
    cover some file of the stage's closure, so that the deps stay narrow."""
    stages = _all_stages()
    outputs = outputs_of(stages)
    extra = {s: paths for s in stages if (paths := unused(s, project.stage_closure(s), outputs))}
    if extra:
        pytest.fail(
            "\n".join([report(extra, "deps cover no code the stage runs; remove:"), FIX]), pytrace=False
        )


@pytest.mark.parametrize("dvc_file", DVC_FILES)
def test_the_check_fails_when_a_code_dep_is_removed(project: Project, dvc_file: str, tmp_path: Path) -> None:
    """A copy of the dvc file without one code dep (a file the stage runs that no other dep
    covers): the check reports exactly that stage and that file."""
    stages = load_stages(REPO / dvc_file)
    victim = next(
        (stage, dep)
        for stage in stages
        for dep in stage.deps
        if dep in project.stage_closure(stage)
        and not dep.endswith("__init__.py")
        and not any(covers(d, dep) for d in stage.deps if d != dep)
    )
    stage, dep = victim
    spec = yaml.safe_load((REPO / dvc_file).read_text())
    folder = Path(dvc_file).parent.as_posix()
    wdir = os.path.join(folder, spec["stages"][stage.name].get("wdir", "."))
    listed = spec["stages"][stage.name]["deps"]
    listed.remove(next(d for d in listed if repo_path(wdir, d) == dep))
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump(spec))
    changed = load_stages(tmp_path / "dvc.yaml", folder=folder)  # read as if it lay where dvc_file does
    before = {s.name: set(files) for s, files in _uncovered_report(project, stages).items()}
    after = _uncovered_report(project, changed)
    new = {s.name: sorted(set(files) - before.get(s.name, set())) for s, files in after.items()}
    assert {name: files for name, files in new.items() if files} == {stage.name: [dep]}
    block = _coverage_problems(project, changed, outputs_of(_all_stages())).split("\nstage ")
    said = next(b for b in block if b.removeprefix("stage ").startswith(f"{stage.name} ({dvc_file}): runs"))
    assert f"\n      - {dep}   # " in said  # the line to add, and how the stage reaches it


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))


FAKE = {
    "factory/__init__.py": "",
    "factory/cli/__init__.py": "import typer\napp = typer.Typer()\n",
    "factory/cli/stages.py": """
        from factory.cli import app
        from factory.params import load
        from factory.unused import nothing  # the command does not use it

        def check(x):
            from factory.io import read
            return read(x)

        def other():
            from factory.unused import nothing

        @app.command("make")
        def make_command(other: str = "") -> None:  # this "other" is not the function
            from factory.a.stage import run
            check(load())
            run(other)
        """,
    "factory/params.py": "",
    "factory/io.py": "",
    "factory/unused.py": "",
    "factory/a/__init__.py": "",
    "factory/a/stage.py": """
        from typing import TYPE_CHECKING
        from . import helper
        from .. import b
        if TYPE_CHECKING:
            from factory.typing_only import T
        KINDS = {"job": "factory.c.job:run_job", "argv": ["-m", "factory.c.main"]}
        CHILD = "child.py"
        WORKER, JS_KINDS = "worker.js", {"trace": "tracer.js:traceJob"}
        def run():
            import factory.lazy
        """,
    "factory/a/helper.py": "",
    "factory/a/child.py": "import sibling\nimport json\n",
    "factory/a/sibling.py": "",
    "factory/a/worker.js": "const vm = require('vm');\nconst { canonical } = require('./canonical.js');\n",
    "factory/a/tracer.js": 'const { x } = require( "./canonical.js" );\n',
    "factory/a/canonical.js": "module.exports = { canonical: 1 };\n",
    "factory/a/unused.js": "",
    "factory/b/__init__.py": """
        def __getattr__(name):
            from factory.b import heavy
            return heavy
        """,
    "factory/b/heavy.py": "",
    "factory/typing_only.py": "",
    "factory/c/__init__.py": "",
    "factory/c/job.py": "",
    "factory/c/main.py": "",
    "factory/lazy.py": "",
    "train/run.py": "from mod import x\nfrom factory.b import light\n",
    "train/mod.py": "",
}


def test_the_closure_follows_lazy_relative_string_script_and_javascript_imports(tmp_path: Path) -> None:
    _write(tmp_path, FAKE)
    project = Project(tmp_path)
    stage = Stage("make", "dvc.yaml", ("execverify make --out x",), (), ())
    assert sorted(project.stage_closure(stage)) == [
        "factory/__init__.py",
        "factory/a/__init__.py",
        "factory/a/canonical.js",  # required by the two below
        "factory/a/child.py",
        "factory/a/helper.py",
        "factory/a/sibling.py",
        "factory/a/stage.py",
        "factory/a/tracer.js",  # a job kind's file
        "factory/a/worker.js",  # a worker script's name
        "factory/b/__init__.py",
        "factory/c/__init__.py",
        "factory/c/job.py",
        "factory/c/main.py",
        "factory/io.py",
        "factory/lazy.py",
        "factory/params.py",
    ]
    script = Stage("train", "dvc.yaml", ("python train/run.py --x 1",), (), ())
    assert sorted(project.stage_closure(script)) == [
        "factory/__init__.py",
        "factory/b/__init__.py",
        "factory/b/heavy.py",  # a name factory.b does not bind: its __getattr__ runs
        "train/mod.py",
        "train/run.py",
    ]


def test_missing_and_unused_deps_are_reported(tmp_path: Path) -> None:
    _write(tmp_path, FAKE)
    project = Project(tmp_path)
    deps = ("factory", "factory/gone.py", "factory/unused.py", "data/programs", "grammars/x", "params.yaml")
    stage = Stage("make", "dvc.yaml", ("execverify make",), deps, ())
    closure = project.stage_closure(stage)
    assert uncovered(stage, closure) == []
    assert missing(stage, {"data/programs"}, tmp_path) == ["factory/gone.py", "grammars/x", "params.yaml"]
    assert unused(stage, closure, {"data/programs"}, tmp_path) == ["factory/gone.py", "factory/unused.py"]
    code = ["factory/c/job.py", "factory/c/__init__.py", "factory/c/main.py", "factory/io.py"]
    assert suggested(code, tmp_path) == ["factory/c", "factory/io.py"]
    assert suggested(code[1:], tmp_path) == code[1:]


def test_a_lazy_getattr_that_imports_its_own_missing_name_ends(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {**FAKE, "factory/b/__init__.py": "def __getattr__(name):\n    from factory.b import gone\n"},
    )
    stage = Stage("train", "dvc.yaml", ("python train/run.py",), (), ())
    assert "factory/b/__init__.py" in Project(tmp_path).stage_closure(stage)
