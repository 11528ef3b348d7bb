"""Build hook: ships the cleanup component inside the package.

The component is built by the Rust workspace (`host/build.rs` writes
`<cargo target>/components/cleanup.wasm`), not here. `build_py` copies it from
`$ASC_COMPONENTS_DIR/cleanup.wasm` when that variable is set (and fails if the file is not there),
else from `$CARGO_TARGET_DIR/components/`, else from `../target/components/` (relative to this
directory). A copy already in `src/` (e.g. from an sdist) is used when none of those exists.
Without any, the build fails and says where it looked.
"""

import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
BUNDLED = HERE / "src" / "action_state_cleanup" / "cleanup.wasm"


def fail(message):
    raise SystemExit(f"action_state_cleanup: {message}")


def component_source():
    explicit = os.environ.get("ASC_COMPONENTS_DIR")
    if explicit:
        path = Path(explicit) / "cleanup.wasm"
        if not path.is_file():
            fail(f"ASC_COMPONENTS_DIR is set but {path} does not exist; build the components first "
                 "(cargo build -p action-state-cleanup)")
        return path
    candidates = []
    if os.environ.get("CARGO_TARGET_DIR"):
        candidates.append(Path(os.environ["CARGO_TARGET_DIR"]) / "components" / "cleanup.wasm")
    candidates.append(HERE.parent / "target" / "components" / "cleanup.wasm")
    for path in candidates:
        if path.is_file():
            return path
    if BUNDLED.is_file():
        return None
    fail("the cleanup component is missing. Build it first (cargo build -p action-state-cleanup writes "
         "<target>/components/cleanup.wasm) or set ASC_COMPONENTS_DIR to the folder holding cleanup.wasm. "
         f"Looked at: {', '.join(str(p) for p in candidates)}")


class build_py_with_component(build_py):
    def run(self):
        source = component_source()
        if source is not None:
            shutil.copyfile(source, BUNDLED)
        super().run()


setup(cmdclass={"build_py": build_py_with_component})
