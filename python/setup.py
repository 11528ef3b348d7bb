"""Build hook: puts the cleanup component into the package.

The component is built by the Rust workspace (`host/build.rs` writes
`<cargo target>/components/cleanup.wasm`), not here. It is looked up in `$ASC_COMPONENTS_DIR`
when that variable is set (the build fails if the file is not there), else in
`$CARGO_TARGET_DIR/components/`, else in `../target/components/` (relative to this directory).

- A wheel build (what `python/build-wheel` runs, from a copy of this folder) puts the component
  into the build folder next to the modules, never into `src/`.
- An editable install (`pip install -e python`, for development) copies it into
  `src/action_state_cleanup/` (ignored by git), where the editable package is imported from.

A copy already in `src/action_state_cleanup/` is used when no build exists. Without any, the
build fails and says where it looked.
"""

import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
PACKAGE = "action_state_cleanup"
#: The component files the package loads from its own folder.
COMPONENTS = ("cleanup.wasm",)


def fail(message):
    raise SystemExit(f"action_state_cleanup: {message}")


def component_source(name):
    """The freshly built component `name`, or None when no build folder holds it."""
    explicit = os.environ.get("ASC_COMPONENTS_DIR")
    if explicit:
        path = Path(explicit) / name
        if not path.is_file():
            fail(f"ASC_COMPONENTS_DIR is set but {path} does not exist; build the components first "
                 "(cargo build -p action-state-cleanup)")
        return path
    candidates = []
    if os.environ.get("CARGO_TARGET_DIR"):
        candidates.append(Path(os.environ["CARGO_TARGET_DIR"]) / "components" / name)
    candidates.append(HERE.parent / "target" / "components" / name)
    return next((path for path in candidates if path.is_file()), None)


def component(name):
    """The file to ship as `name`: a fresh build, else a copy already in the package sources."""
    source = component_source(name)
    if source is not None:
        return source
    bundled = HERE / "src" / PACKAGE / name
    if bundled.is_file():
        return bundled
    fail(f"the component {name} is missing. Build it first (cargo build -p action-state-cleanup writes "
         f"<target>/components/{name}) or set ASC_COMPONENTS_DIR to the folder holding it.")


class build_py_with_components(build_py):
    def run(self):
        super().run()
        editable = getattr(self, "editable_mode", False)
        target = HERE / "src" / PACKAGE if editable else Path(self.build_lib) / PACKAGE
        target.mkdir(parents=True, exist_ok=True)
        for name in COMPONENTS:
            source = component(name)
            if source.resolve() != (target / name).resolve():
                shutil.copyfile(source, target / name)


setup(cmdclass={"build_py": build_py_with_components})
