"""Find and import a spec: a name under ``specs/``, a module path, or a ``.py`` file."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

from checker.errors import SpecLoadError
from checker.spec import USER_MODULE_PREFIX, Spec


def _import_file(path: Path) -> ModuleType:
    name = f"{USER_MODULE_PREFIX}{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SpecLoadError(f"cannot load spec file {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # A spec file beside its own helpers may import them: put its folder on the path.
    folder = str(path.parent.resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec.loader.exec_module(module)
    return module


def load_module(target: str) -> ModuleType:
    """Import the module named by ``target`` (spec name, dotted module, or file)."""
    path = Path(target)
    try:
        if target.endswith(".py"):
            if not path.is_file():
                raise SpecLoadError(f"spec file not found: {target}")
            return _import_file(path)
        modname = target if "." in target else f"specs.{target}"
        try:
            return importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            if exc.name and modname.startswith(exc.name):
                known = ", ".join(available_specs()) or "none"
                raise SpecLoadError(f"unknown spec {target!r} (known: {known})") from None
            raise
    except SpecLoadError:
        raise
    except SyntaxError as exc:
        raise SpecLoadError(
            f"spec {target!r} does not import: SyntaxError at {exc.filename}:{exc.lineno}: "
            f"{exc.msg}"
        ) from None
    except Exception as exc:
        raise SpecLoadError(
            f"spec {target!r} does not import: {type(exc).__name__}: {exc}"
        ) from None


def load_spec_class(target: str) -> type[Spec]:
    """The one :class:`Spec` subclass defined in the module ``target`` names.

    ``module:ClassName`` picks one when a module defines several.
    """
    module_part, _, class_part = target.partition(":") if ":" in target else (target, "", "")
    module = load_module(module_part)
    classes = [
        obj
        for _, obj in inspect.getmembers(module, inspect.isclass)
        if issubclass(obj, Spec) and obj is not Spec and obj.__module__ == module.__name__
    ]
    if class_part:
        for c in classes:
            if c.__name__ == class_part:
                return c
        raise SpecLoadError(f"{module_part} defines no spec class {class_part!r}")
    if not classes:
        raise SpecLoadError(f"{target} defines no Spec subclass")
    if len(classes) > 1:
        names = ", ".join(sorted(c.__name__ for c in classes))
        raise SpecLoadError(f"{target} defines several specs ({names}); pick one with :Name")
    return classes[0]


def available_specs() -> list[str]:
    """Names of the modules shipped under ``specs/`` that define a spec."""
    import specs

    names = []
    for info in pkgutil.iter_modules(specs.__path__):
        if not info.name.startswith("_"):
            names.append(info.name)
    return sorted(names)
