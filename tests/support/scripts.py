"""Loading the dataset builders in scripts/ and the benchmarks in benchmarks/ as modules (neither is a package)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.support.paths import ROOT


def load_script(name: str) -> ModuleType:
    """scripts/<name>.py imported as module `name` (once per process)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load scripts/{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_benchmark(name: str) -> ModuleType:
    """benchmarks/<name>.py imported as a fresh module `<name>_benchmark`, with benchmarks/ on the path while it
    loads (the scripts import their helpers, such as measure.py, by name) and registered in sys.modules (their
    dataclasses look their module up)."""
    folder = str(ROOT / "benchmarks")
    spec = importlib.util.spec_from_file_location(f"{name}_benchmark", ROOT / "benchmarks" / f"{name}.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load benchmarks/{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(folder)
    return module
