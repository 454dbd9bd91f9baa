"""Find and import a spec: a name under ``specs/``, a module path, or a ``.py`` file."""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import importlib.util
import inspect
import pkgutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from checker.authoring.spec import USER_MODULE_PREFIX, Spec
from checker.base.errors import SpecError, SpecLoadError, did_you_mean

__all__ = [
    "available_specs",
    "load_module",
    "load_spec_class",
    "project_spec_dirs",
    "spec_file",
]


class _TextLoader(importlib.machinery.SourceFileLoader):
    """Compiles a spec file from the text it holds now, never from ``__pycache__``:
    Python trusts a cached ``.pyc`` whose recorded size and whole-second time match,
    so a spec rewritten within a second to the same length would be checked as it was."""

    def get_code(self, fullname: str) -> Any:
        """The module's code, compiled from the file's current text."""
        return self.source_to_code(self.get_data(self.path), self.path)


def _import_file(path: Path) -> ModuleType:
    """Import a spec file as a fresh module, its own helper modules with it.

    A spec file may import modules beside it (``from limits import LIMIT``).  Two spec
    files in two folders can each have a helper of the same plain name: were the
    first one's left in ``sys.modules``, the second spec would run with it.  So while
    a spec file is imported its folder comes first on the path, every module its
    folder provides is imported afresh, and afterwards those modules leave
    ``sys.modules`` again (the spec keeps them; what was there before is restored).
    """
    name = f"{USER_MODULE_PREFIX}{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path, loader=_TextLoader(name, str(path)))
    if spec is None or spec.loader is None:
        raise SpecLoadError(f"cannot load spec file {path}")
    module = importlib.util.module_from_spec(spec)
    folder = path.parent.resolve()
    own = _local_module_names(folder)
    hidden = {
        k: sys.modules.pop(k) for k in list(sys.modules) if k.partition(".")[0] in own and k != name
    }
    saved_path = list(sys.path)
    sys.path.insert(0, str(folder))
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        for k in list(sys.modules):
            if k.partition(".")[0] in own and k != name:
                del sys.modules[k]
        sys.modules.update(hidden)
        sys.path[:] = saved_path
    return module


def _local_module_names(folder: Path) -> set[str]:
    """The top-level module names a folder provides (``x.py``, packages ``x/``), but
    never mcheck's own or the standard library's (a spec imports those as they are)."""
    names: set[str] = set()
    with contextlib.suppress(OSError):
        for entry in folder.iterdir():
            if entry.suffix == ".py" and entry.stem.isidentifier():
                names.add(entry.stem)
            elif entry.is_dir() and (entry / "__init__.py").is_file():
                names.add(entry.name)
    return names - _NEVER_HIDDEN - sys.stdlib_module_names


#: Packages a spec imports from the installation, whatever its folder holds.
_NEVER_HIDDEN = frozenset({"checker", "mcheck_shipped", "__init__"})


def project_spec_dirs(cwd: Path | None = None) -> list[Path]:
    """The folders where the current project keeps its own specs: ``[tool.mcheck]
    specs`` in ./pyproject.toml (a path or a list of paths), else ./specs; the shipped
    specs folder itself (running inside this repository) is not a project folder."""
    import tomllib

    root = cwd or Path.cwd()
    configured: object = None
    with contextlib.suppress(OSError, tomllib.TOMLDecodeError):
        data = tomllib.loads((root / "pyproject.toml").read_text())
        configured = data.get("tool", {}).get("mcheck", {}).get("specs")
    if configured is None:
        names = ["specs"]
    elif isinstance(configured, str):
        names = [configured]
    elif isinstance(configured, list) and all(isinstance(x, str) for x in configured):
        names = list(configured)
    else:
        raise SpecLoadError("[tool.mcheck] specs in pyproject.toml must be a path or a list")
    shipped = _shipped_dir()
    out = []
    for name in names:
        folder = (root / name).resolve()
        if folder.is_dir() and folder != shipped:
            out.append(folder)
    return out


def _shipped_dir() -> Path:
    from mcheck_shipped import specs

    return Path(next(iter(specs.__path__))).resolve()


def _project_spec(name: str) -> Path | None:
    """The project's own ``NAME.py``, which wins over a shipped spec of that name."""
    if not name.isidentifier():
        return None
    for folder in project_spec_dirs():
        candidate = folder / f"{name}.py"
        if candidate.is_file():
            return candidate
    return None


def spec_file(target: str) -> Path | None:
    """The file :func:`load_module` would import for ``target`` (a spec name or a
    ``.py`` file, ``:Class`` allowed), without importing anything; None for a dotted
    module or a name no spec folder holds."""
    module_part = target.partition(":")[0] if ":" in target else target
    if module_part.endswith(".py"):
        return Path(module_part).resolve()
    if "." in module_part or not module_part.isidentifier():
        return None
    own = _project_spec(module_part)
    if own is not None:
        return own.resolve()
    shipped = _shipped_dir() / f"{module_part}.py"
    return shipped if shipped.is_file() else None


def load_module(target: str) -> ModuleType:
    """Import the module named by ``target``: a spec name (the project's own specs
    folder first, then the shipped specs), a dotted module, or a ``.py`` file."""
    path = Path(target)
    try:
        if target.endswith(".py"):
            if not path.is_file():
                raise SpecLoadError(f"spec file not found: {target}")
            return _import_file(path)
        own = None if "." in target else _project_spec(target)
        if own is not None:
            # The project's own packages (its invariants/, say) import from its root.
            root = str(Path.cwd().resolve())
            if root not in sys.path:
                sys.path.insert(0, root)
            return _import_file(own)
        modname = target if "." in target else f"mcheck_shipped.specs.{target}"
        try:
            return importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            if exc.name and modname.startswith(exc.name):
                names = available_specs()
                known = ", ".join(names) or "none"
                raise SpecLoadError(
                    f"unknown spec {target!r}{did_you_mean(target, names)} (known: {known})"
                ) from None
            raise
    except SpecLoadError:
        raise
    except SpecError as exc:
        # The module imports; a declaration in it is wrong (a fairness entry naming
        # no action, a premise with the wrong signature): say that, not "does not import".
        raise SpecError(f"spec {target!r}: {exc}") from None
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
    """Names of the specs ``mcheck run NAME`` finds: the project's own (see
    :func:`project_spec_dirs`) and the shipped ones under ``specs/``."""
    from mcheck_shipped import specs

    names = set()
    for info in pkgutil.iter_modules(specs.__path__):
        if not info.name.startswith("_"):
            names.add(info.name)
    with contextlib.suppress(SpecLoadError):
        for folder in project_spec_dirs():
            names.update(p.stem for p in folder.glob("*.py") if p.stem.isidentifier())
    return sorted(n for n in names if not n.startswith("_"))
