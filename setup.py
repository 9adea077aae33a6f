"""Copy the top-level schemas/ and queries/ into the package when building a wheel or sdist."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithData(build_py):
    def run(self) -> None:
        super().run()
        root = Path(__file__).parent
        for name in ("schemas", "queries"):
            source = root / name
            if not source.is_dir():
                continue
            target = Path(self.build_lib) / "sessaudit" / "_data" / name
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(source, target)


setup(cmdclass={"build_py": BuildWithData})
