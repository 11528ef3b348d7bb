"""The package as users get it: the wheel built by python/build-wheel, installed into a venv.

python/run-tests installs the wheel into a fresh venv and runs pytest from a temporary folder,
passing the wheel's path as ASC_WHEEL; these tests check that the code under test is that
installed wheel and that it works with no environment at all, and that build-wheel builds from a
read-only checkout without writing into it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

import action_state_cleanup

from conftest import FIXTURES, REPO

PYTHON_DIR = REPO / "python"
PACKAGE_SOURCE = PYTHON_DIR / "src" / "action_state_cleanup"


def wheel_path() -> Path:
    value = os.environ.get("ASC_WHEEL", "")
    if not value:
        pytest.fail("ASC_WHEEL is not set: run these tests through python/run-tests (it builds and installs the wheel)",
                    pytrace=False)
    return Path(value)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_imported_package_is_the_installed_wheel_not_the_source_tree():
    module = Path(action_state_cleanup.__file__).resolve()
    site_packages = Path(sysconfig.get_paths()["purelib"]).resolve()
    assert module.is_relative_to(site_packages), f"{module} is not in {site_packages}"
    assert not module.is_relative_to((PYTHON_DIR / "src").resolve())
    assert Path(sys.prefix).resolve() != Path(sys.base_prefix).resolve(), "the tests must run inside a venv"
    # Installed from a wheel (pip records it), not an editable or in-tree install.
    direct_url = json.loads(metadata.distribution("action_state_cleanup").read_text("direct_url.json") or "{}")
    assert "archive_info" in direct_url and direct_url["url"].endswith("/" + wheel_path().name), direct_url


def test_the_wheel_is_pure_and_carries_every_module_and_the_component():
    wheel = wheel_path()
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        wheel_meta = next(archive.read(n).decode() for n in names if n.endswith(".dist-info/WHEEL"))
        members = {n: archive.read(n) for n in names if n.startswith("action_state_cleanup/")}
    assert "Root-Is-Purelib: true" in wheel_meta and "Tag: py3-none-any" in wheel_meta
    # Every module of the source folder, whatever the folder holds, and the component.
    sources = {f"action_state_cleanup/{p.relative_to(PACKAGE_SOURCE).as_posix()}"
               for p in PACKAGE_SOURCE.rglob("*.py")}
    assert sources and sources <= set(members), f"missing from the wheel: {sorted(sources - set(members))}"
    assert "action_state_cleanup/py.typed" in members
    assert len(members["action_state_cleanup/cleanup.wasm"]) > 100_000
    assert members["action_state_cleanup/cleanup.wasm"][:4] == b"\0asm"
    # The component is the one the build produced, when the build folder is known.
    components = os.environ.get("ASC_COMPONENTS_DIR")
    if components:
        built = (Path(components) / "cleanup.wasm").read_bytes()
        assert sha256(members["action_state_cleanup/cleanup.wasm"]) == sha256(built)
    # The venv holds exactly the wheel's files.
    installed = Path(action_state_cleanup.__file__).parent
    for name, data in members.items():
        path = installed / name.removeprefix("action_state_cleanup/")
        assert sha256(path.read_bytes()) == sha256(data), f"{path} differs from the wheel's {name}"


def test_the_installed_package_works_with_no_environment(tmp_path: Path):
    """A user's shell: no ASC_* or CARGO_* variable, no PYTHONPATH, another folder, empty cache."""
    plan = (FIXTURES / "plan-spec-test-vector" / "plan.json").read_text()
    plan_id = (FIXTURES / "plan-spec-test-vector" / "plan-id.txt").read_text().strip()
    tampered = (FIXTURES / "plan-id-mismatch-tampered-offset" / "plan.json").read_text()
    expected_error = (FIXTURES / "plan-id-mismatch-tampered-offset" / "error.txt").read_text().strip()
    script = (
        "import sys\n"
        "import action_state_cleanup\n"
        "from action_state_cleanup import Cleanup, InvalidPlan\n"
        "cleanup = Cleanup()\n"
        "print(action_state_cleanup.__file__)\n"
        "print(cleanup.verify(sys.argv[1]).plan_id)\n"
        "try:\n"
        "    cleanup.verify(sys.argv[2])\n"
        "except InvalidPlan as e:\n"
        "    print(e.kind, '|', e.message)\n"
    )
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    done = subprocess.run([sys.executable, "-I", "-c", script, plan, tampered], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    module, verified, refused = done.stdout.splitlines()
    assert Path(module).resolve().is_relative_to(Path(sysconfig.get_paths()["purelib"]).resolve())
    assert verified == plan_id
    kind, message = refused.split(" | ", 1)
    assert kind == "invalid-plan" and expected_error in message


def snapshot(root: Path) -> dict:
    return {str(p.relative_to(root)): (p.stat().st_mode, p.stat().st_mtime_ns, p.stat().st_size)
            for p in sorted(root.rglob("*"))}


def read_only_mount_works(folder: Path) -> bool:
    """Whether a private read-only bind mount of `folder` can be made (root in most containers)."""
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$1" "$1" && ! touch "$1/probe"', "sh",
                            str(folder)], capture_output=True)
    return probe.returncode == 0 and not (folder / "probe").exists()


def test_build_wheel_works_from_a_read_only_checkout_and_writes_nothing_into_it(tmp_path: Path):
    components = Path(os.environ.get("ASC_COMPONENTS_DIR") or Path(wheel_path()).parent.parent / "components")
    if not (components / "cleanup.wasm").is_file():
        pytest.fail(f"no cleanup.wasm in {components}: set ASC_COMPONENTS_DIR", pytrace=False)
    checkout = tmp_path / "checkout" / "python"
    shutil.copytree(PYTHON_DIR, checkout, ignore=shutil.ignore_patterns(
        ".venv", "tests", "build", "*.egg-info", "__pycache__", "*.wasm"))
    for path in [*checkout.parent.rglob("*"), checkout.parent]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    before = snapshot(checkout.parent)
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k not in ("CARGO_TARGET_DIR", "ASC_WHEEL")}
    env.update(ASC_COMPONENTS_DIR=str(components), ASC_PYTHON=sys.executable)
    command = [str(checkout / "build-wheel"), str(out)]
    probe = tmp_path / "probe"
    probe.mkdir()
    if os.geteuid() == 0 and read_only_mount_works(probe):
        # Root ignores file modes: make the checkout a read-only mount in a private namespace.
        command = ["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$1" "$1" && shift && exec "$@"', "sh",
                   str(checkout.parent), *command]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        after = snapshot(checkout.parent)
    finally:
        for path in [checkout.parent, *checkout.parent.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    assert done.returncode == 0, done.stderr
    assert after == before, "build-wheel wrote into the checkout"
    wheel = Path(done.stdout.strip())
    assert wheel.parent == out and wheel.name.endswith("-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        built = archive.read("action_state_cleanup/cleanup.wasm")
    assert sha256(built) == sha256((components / "cleanup.wasm").read_bytes())
