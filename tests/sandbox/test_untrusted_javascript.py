"""node in the untrusted sandbox (factory/sandbox/untrusted/isolated.py, exec_child.py;
factory/languages/javascript/untrusted.py): what a program can and cannot do.

The scorer's JavaScript programs run in a fresh ``vm`` context with no ``require`` or ``process``;
a program that escaped it would hold node's whole API. The kernel layers are tested against that
worst case: a hostile script run as node's main script through the same sandboxed entry
(``run_node``), as a vm escape would run."""

from __future__ import annotations

import json
import shutil

import pytest

from factory.languages.javascript.untrusted import call_function, node_binary, run_node
from factory.sandbox.untrusted import runner

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

HOSTILE = r"""
const fs = require('fs');
const out = {};
function t(name, f) {
  try { out[name] = String(f()).slice(0, 200); } catch (e) { out[name] = 'ERR ' + (e.code || e.message); }
}
t('hostname', () => fs.readFileSync('/etc/hostname', 'utf8'));
t('passwd', () => fs.readFileSync('/etc/passwd', 'utf8'));
t('secret', () => fs.readFileSync(process.argv[1], 'utf8'));
t('checkout', () => fs.readdirSync(process.argv[2]).join(','));
t('scripts', () => fs.readdirSync(process.argv[2] + '/factory/languages/javascript').sort().join(','));
t('pyproject', () => fs.readFileSync(process.argv[2] + '/pyproject.toml', 'utf8'));
t('root', () => fs.readdirSync('/').join(','));
t('write_job', () => { fs.writeFileSync(process.cwd() + '/x', 'y'); return 'ok'; });
t('write_lib', () => { fs.writeFileSync('/usr/lib/execverify-evil', 'y'); return 'ok'; });
const spawn = (file, args) => {
  const r = require('child_process').spawnSync(file, args);
  return r.error ? 'ERR ' + r.error.code : r.status;
};
t('spawn_sh', () => spawn('/bin/sh', ['-c', 'echo hi']));
t('spawn_node', () => spawn(process.execPath, ['-e', '1']));
t('kill_parent', () => { process.kill(process.ppid || 1, 'SIGKILL'); return 'ok'; });
t('pid', () => process.pid);
const done = () => { fs.writeSync(1, JSON.stringify(out)); process.exit(0); };
t('tcp', () => {
  const s = require('net').connect(80, '127.0.0.1');
  s.on('error', (e) => { out.tcp = 'ERR ' + e.code; });
  s.on('connect', () => { out.tcp = 'connected'; });
  return 'pending';
});
t('udp', () => {
  const s = require('dgram').createSocket('udp4');
  s.on('error', (e) => { out.udp = 'ERR ' + e.code; });
  s.send('x', 53, '127.0.0.1', (e) => { out.udp = e ? 'ERR ' + e.code : 'sent'; });
  return 'pending';
});
setTimeout(done, 1000);
"""


def test_an_escaped_program_reaches_nothing(tmp_path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("execverify-secret")
    checkout = str(runner.Path(runner.__file__).resolve().parents[3])
    run = run_node(["-e", HOSTILE, str(secret), checkout], b"", timeout_s=10, memory_mb=256)
    assert run.status == runner.OK, run
    assert runner._last_layers == runner.KERNEL_LAYERS  # every kernel layer was in force
    out = json.loads(run.stdout)
    assert out["hostname"].startswith("ERR") and out["passwd"].startswith("ERR")
    assert out["secret"].startswith("ERR") and out["pyproject"].startswith("ERR")
    # Of the checkout, only the files node reads (read-only), and the directories above them.
    assert out["checkout"] == "factory"
    assert out["scripts"] == "canonical.js,context.js,thrown.js,untrusted.js,untrusted_calls.js,worker.js"
    assert "execverify-secret" not in run.stdout.decode()
    # The root holds the system's directories and the first directory of each bind's path (the
    # checkout and node may live anywhere: /work, /check, /opt, /home, ...).
    system = {"dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "root", "tmp", "usr", "bin", "sbin"}
    binds = {runner.Path(path).resolve().parts[1] for path in (checkout, node_binary())}
    assert set(out["root"].split(",")) <= system | binds
    assert out["write_job"] == "ok"  # its own job directory, gone afterwards
    assert out["write_lib"].startswith("ERR")
    assert out["spawn_sh"] == "ERR EPERM" and out["spawn_node"] == "ERR EPERM"
    assert out["tcp"] == "ERR EPERM" and out["udp"] == "ERR EPERM"
    assert out["pid"] == "1"  # PID 1 of its own PID namespace: no other process to signal
    assert not secret.with_name("x").exists()


def test_a_missing_layer_runs_nothing(monkeypatch) -> None:
    monkeypatch.setenv(runner.SIMULATE_MISSING_ENV, "landlock")
    monkeypatch.delenv(runner.ALLOW_WEAK_ENV, raising=False)
    result = call_function("function f() { return 1; }", "f", ())
    assert result.status == runner.SANDBOX_INCOMPLETE


@pytest.mark.parametrize(
    ("source", "status"),
    [
        ("function f(x) { return [x, x * 2]; }", "ok"),
        (
            "function f(x) { return require('fs').readFileSync('/etc/passwd', 'utf8'); }",
            "error:ReferenceError",
        ),
        ("function f(x) { return process.exit(0); }", "error:ReferenceError"),
        ("function f(x) { return (() => 0).constructor('return process')(); }", "error:EvalError"),
        ("function f(x) { return Function('return 1')(); }", "error:EvalError"),
        ("function f(x) { while (true) {} }", runner.TIMEOUT),
        ("function f(x) { const a = []; for (;;) a.push(new Array(1e6).fill(x)); }", runner.DIED),
        ("function f(x) { return f(x + 1); }", "recursion"),
        ("function f(x) { return () => x; }", "non_literal"),
    ],
)
def test_programs_through_the_scorer_entry(source: str, status: str) -> None:
    result = call_function(source, "f", (3,), timeout_s=2.0, memory_mb=64)
    assert result.status == status, result
    if status == "ok":
        assert result.value == [3, 6]
