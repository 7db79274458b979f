"""What other code imports from a package of normalize/: the test modules of a package's parts compare it with the
names the package's ``__init__`` gives."""

from __future__ import annotations

import ast

from conftest import ROOT


def imported_names(package: str) -> set[str]:
    """Names imported ``from <package> import …`` (or ``from .<name> import …`` in its parent folder) anywhere in
    crawler/, browse/, bench/, normalize/ and tests/, the package's own modules left out."""
    folder = ROOT.joinpath(*package.split("."))
    names = set()
    for top in ("crawler", "browse", "bench", "normalize", "tests"):
        for path in (ROOT / top).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if package not in text and f"from .{folder.name} import" not in text:
                continue  # cannot import from it: not worth parsing
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.ImportFrom) and (
                        node.module == package or node.level == 1 and node.module == folder.name
                        and path.parent == folder.parent):
                    names.update(a.name for a in node.names if not (folder / f"{a.name}.py").exists())
    return names
