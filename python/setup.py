"""Build hook: ships the cleanup component inside the package.

The component is built by the Rust workspace (`host/build.rs`), not here. `build_py` copies it
from `$ASC_COMPONENTS_DIR/cleanup.wasm`, else `../target/components/cleanup.wasm` (relative to this
directory), else `$CARGO_TARGET_DIR/components/cleanup.wasm`; a copy already in `src/` (e.g. from an
sdist) is used as is. Without one the build fails with a message saying where it looked.
"""

import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
BUNDLED = HERE / "src" / "action_state_cleanup" / "cleanup.wasm"


def candidates():
    if os.environ.get("ASC_COMPONENTS_DIR"):
        yield Path(os.environ["ASC_COMPONENTS_DIR"]) / "cleanup.wasm"
    yield HERE.parent / "target" / "components" / "cleanup.wasm"
    if os.environ.get("CARGO_TARGET_DIR"):
        yield Path(os.environ["CARGO_TARGET_DIR"]) / "components" / "cleanup.wasm"


class build_py_with_component(build_py):
    def run(self):
        source = next((path for path in candidates() if path.is_file()), None)
        if source is not None:
            # An explicit or freshly built component always wins over an older bundled copy.
            shutil.copyfile(source, BUNDLED)
        elif not BUNDLED.is_file():
            looked = ", ".join(str(path) for path in candidates())
            raise SystemExit(
                "action_state_cleanup: the cleanup component is missing. Build it first "
                "(cargo build -p action-state-cleanup writes target/components/cleanup.wasm) or set "
                f"ASC_COMPONENTS_DIR to the folder holding cleanup.wasm. Looked at: {looked}"
            )
        super().run()


setup(cmdclass={"build_py": build_py_with_component})
