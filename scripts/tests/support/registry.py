#!/usr/bin/env python3
"""The tree registers its own tests with meson: one meson test per pytest test of a suite folder.

    registry.py SUITE_DIR --timeout SECONDS     one line per test: NAME <tab> PYTEST_ID <tab> TIMEOUT <tab> EVERY_JDK
    registry.py SUITE_DIR --files               the suite's test files (meson reconfigures when one changes)

The meson name is `SUITE-FUNCTION` (the function's name without `test_`), with `_ID` per parameter of a
`@pytest.mark.parametrize` whose values are strings (or that gives `ids=`). A test states what differs from its
suite's defaults next to itself, with a marker conftest.py declares:

    @pytest.mark.meson(timeout=900, every_jdk=True)

`every_jdk` also runs it on each JDK of meson's `extra_jdks` option (NAME-JDK). The files are read, not imported
(meson configures without pytest); `tests-registered` then checks that pytest collects exactly these tests.
"""
from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path


class RegistryError(Exception):
    pass


def _is_mark(decorator: ast.expr, name: str) -> bool:
    """`@pytest.mark.NAME(...)`."""
    func = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(func, ast.Attribute) and func.attr == name
            and isinstance(func.value, ast.Attribute) and func.value.attr == "mark")


def _literal(node: ast.expr, where: str):
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise RegistryError(f"{where}: the registry reads the tests without running them, so this must be a "
                            f"literal: {ast.unparse(node)}") from None


def _parameter_ids(call: ast.Call, where: str) -> list[str]:
    keywords = {k.arg: k.value for k in call.keywords}
    if "ids" in keywords:
        ids = _literal(keywords["ids"], where)
    else:
        values = _literal(call.args[1] if len(call.args) > 1 else keywords["argvalues"], where)
        ids = values
    if not all(isinstance(i, str) for i in ids):
        raise RegistryError(f"{where}: parameters that are not strings need ids=[...] to name their tests")
    return list(ids)


def suite_tests(suite_dir: Path, default_timeout: int):
    """(name, pytest id relative to the suite's parent, timeout, every_jdk) for each test, in file order."""
    suite = suite_dir.name
    seen: dict[str, str] = {}
    for path in sorted(suite_dir.glob("test_*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
                continue
            where = f"{path.name}::{node.name}"
            timeout, every_jdk, ids = default_timeout, False, [None]
            for decorator in node.decorator_list:
                if _is_mark(decorator, "meson"):
                    options = {k.arg: _literal(k.value, where) for k in decorator.keywords}
                    unknown = set(options) - {"timeout", "every_jdk"}
                    if unknown:
                        raise RegistryError(f"{where}: unknown meson option(s) {sorted(unknown)}")
                    timeout = int(options.get("timeout", timeout))
                    every_jdk = bool(options.get("every_jdk", False))
                elif _is_mark(decorator, "parametrize") and isinstance(decorator, ast.Call):
                    ids = _parameter_ids(decorator, where)
            for param in ids:
                name = f"{suite}-{node.name[len('test_'):]}" + (f"_{param}" if param is not None else "")
                pytest_id = f"{suite}/{path.name}::{node.name}" + (f"[{param}]" if param is not None else "")
                if name in seen:
                    raise RegistryError(f"{pytest_id} and {seen[name]} would both be the meson test {name}: "
                                        "rename one")
                seen[name] = pytest_id
                yield name, pytest_id, timeout, every_jdk


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite_dir", type=Path)
    parser.add_argument("--timeout", type=int, default=600, help="the suite's default timeout in seconds")
    parser.add_argument("--files", action="store_true", help="list the suite's test files instead")
    args = parser.parse_args()
    if args.files:
        for path in sorted(args.suite_dir.glob("test_*.py")):
            print(path)
        return 0
    try:
        for name, pytest_id, timeout, every_jdk in suite_tests(args.suite_dir, args.timeout):
            print(f"{name}\t{pytest_id}\t{timeout}\t{'every_jdk' if every_jdk else 'one_jdk'}")
    except (RegistryError, SyntaxError) as e:
        print(f"registry.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
