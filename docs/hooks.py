"""Build hooks of the documentation site.

The package maps its top-level folders onto one import name (`sim.engine` is engine/,
`sim.cli` is cli/, `sim.policies` is policies/: [tool.setuptools] package-dir in
pyproject.toml), which the API reference's reading of the sources does not follow. So
before a build, build/api-source/sim/ is laid out as the package is imported, with
symbolic links to the real files and folders, and the reference reads the sources there
(mkdocs.yml: the python handler's paths).
"""

import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "build" / "api-source" / "sim"


def lay_out_package():
    """build/api-source/sim as `import sim` sees it, each part a link to its source."""
    folders = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    shutil.rmtree(PACKAGE, ignore_errors=True)
    PACKAGE.mkdir(parents=True)
    for name, folder in folders["package-dir"].items():
        source = ROOT / folder
        if name == "sim":
            for path in source.glob("*.py"):
                (PACKAGE / path.name).symlink_to(path)
        else:
            (PACKAGE / name.removeprefix("sim.")).symlink_to(source, target_is_directory=True)


def on_startup(command, dirty):
    lay_out_package()
