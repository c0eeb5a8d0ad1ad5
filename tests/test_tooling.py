"""The linters CI enforces, run as tests so the README's one test command covers them."""

import ast
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_ruff_is_clean():
    result = run("ruff", "check", "hitl_nb", "tests", "benchmarks", "notebooks")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_the_formatter_formats_everything():
    """ruff format leaves every file as it is, and no file opts out of it."""
    where = ["hitl_nb", "tests", "benchmarks", "notebooks", "docs", "README.md"]
    result = run("ruff", "format", "--check", *where)
    assert result.returncode == 0, result.stdout + result.stderr
    marker = "fmt: " + "skip"  # spelled apart, so this file does not match itself
    opted_out = [
        str(path.relative_to(ROOT))
        for folder in ("hitl_nb", "tests", "benchmarks", "docs")
        for path in (ROOT / folder).rglob("*.py")
        if marker in path.read_text(encoding="utf-8")
    ]
    assert opted_out == []


@pytest.mark.slow
def test_mypy_is_clean():
    # pyproject pins mypy's python_version, so every environment would use the same
    # cache folder. .ci/run checks two Pythons side by side, whose environments hold
    # different packages (IPython 8 on 3.10, 9 on 3.13): one mypy read entries the other
    # was rewriting for its own and stopped with an INTERNAL ERROR (reproduced 3 times in
    # 4 under load; one after the other they never clash). Each environment keeps a
    # cache of its own.
    env = hashlib.sha256(sys.prefix.encode()).hexdigest()[:12]
    args = ["mypy", "--cache-dir", str(ROOT / ".mypy_cache" / env)]
    if sys.version_info < (3, 11):  # Pydantic AI 2, ADK 2.15, the Agent Framework need 3.11
        for bridge in ("pydantic_ai", "adk", "agent_framework"):
            args += ["--exclude", f"hitl_nb/agent/{bridge}/"]
    result = run(*args)
    assert result.returncode == 0, result.stdout + result.stderr


def _javascript_tool(script: str) -> list[str]:
    """``node <the tool's script>`` from the extension's installed node_modules (the
    editable install put them there); skipped where they are not, but under CI."""
    node = shutil.which("node")
    path = ROOT / "node_modules" / script
    if node is None or not path.is_file():
        why = "the JupyterLab extension's node_modules (pip install -e . builds them) and node"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs {why}", pytrace=False)
        pytest.skip(f"needs {why}")
    return [node, str(path)]


@pytest.mark.slow
@pytest.mark.once
def test_eslint_is_clean():
    """The extension's TypeScript (src/), with type information (eslint.config.mjs)."""
    command = [*_javascript_tool("eslint/bin/eslint.js"), "src"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
@pytest.mark.once
def test_prettier_formats_the_extension():
    """src/, style/, schema/, scripts/ and the extension's configuration, as jlpm
    prettier:check."""
    where = [
        "src/**/*.ts",
        "style/**/*.css",
        "schema/*.json",
        "scripts/*.mjs",
        "package.json",
        "tsconfig.json",
        "jest.config.js",
    ]
    command = [*_javascript_tool("prettier/bin/prettier.cjs"), "--check", *where]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
@pytest.mark.once
def test_the_extensions_unit_tests_pass():
    """``jlpm test``: jest runs src/__tests__ (the model, the list, the words) in jsdom."""
    command = [*_javascript_tool("jest/bin/jest.js"), "--ci", "--silent"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Tests:" in result.stderr and " failed" not in result.stderr, result.stderr


def test_the_extension_and_the_package_have_one_version():
    import json
    import re

    package = json.loads((ROOT / "package.json").read_text("utf-8"))
    project = (ROOT / "pyproject.toml").read_text("utf-8")
    (version,) = re.findall(r'^version = "([^"]+)"', project, re.M)
    assert package["version"] == version


# Each runtime dependency and the module it is imported as.
_IMPORTED_AS = {
    "ipywidgets": "ipywidgets",
    "jupyter-server": "jupyter_server",
    "tornado": "tornado",
    "jsonschema": "jsonschema",
    "referencing": "referencing",
    "attrs": "attrs",
    "rfc3986-validator": "rfc3986_validator",
    "httpx": "httpx",
    "h11": "h11",
    "google-re2": "re2",
    "regex": "regex",
}


def test_every_runtime_dependency_is_imported():
    import re

    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    names = [re.split(r"[\[<>=!~; ]", d, maxsplit=1)[0].lower() for d in declared["dependencies"]]
    assert "nest-asyncio" not in names  # see README: it loses queued cells on ipykernel 7
    source = "\n".join(p.read_text("utf-8") for p in (ROOT / "hitl_nb").rglob("*.py"))
    for name in names:
        module = _IMPORTED_AS.get(name)
        assert module is not None, f"{name}: add it to _IMPORTED_AS (the module it is imported as)"
        imported = re.search(rf"^\s*(import|from) {module}\b", source, re.M)
        assert imported, f"{name} is declared but never imported"


def test_ci_runs_exactly_the_readmes_test_command():
    """The README's second command is what CI runs first, so a missing install step fails
    CI (the other Pythons the project claims come after it)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    runs = [line.strip() for line in ci if "pytest" in line and not line.lstrip().startswith("#")]
    command = runs[0]
    assert command.startswith('pip install -e ".[test]"'), command
    assert command in readme


# -- markers: every test that starts Chromium, a kernel or a server, or generates input,
# says so, so that `-m "not browser and not kernel"` is the quick run it claims to be.
# Read from the source: a test needs a marker when it, a fixture it takes (its module's
# or a conftest's) or a helper function of its module uses one of these.

# Fixtures that start something, by name (pytest-jupyter's start a ServerApp in process).
_FIXTURES = {
    "browser": {"chromium"},
    "kernel": {"named_lab", "jp_serverapp", "jp_fetch", "jp_ws_fetch", "jp_web_app"},
}
# Callables that start something, by where they are imported from. Jupyter started as a
# subprocess command (`hitl-nb tutorials`, nbval) is not seen: mark those by hand.
_CALLS = {
    "kernel": {
        "tests.helpers.kernel.kernel",
        "tests.helpers.server_kernel.server_kernel",
        "tests.helpers.lab.jupyter_server",
        "tests.helpers.jupyter_process.jupyter_server",
        "tests.helpers.hub.running_hub",
        "jupyter_client.manager.start_new_kernel",
        "jupyter_client.manager.KernelManager",
        "jupyter_client.KernelManager",
        "nbclient.NotebookClient",
    },
}
# A test module launches no browser of its own: the chromium fixture does.
_OWN_BROWSER = ("playwright", "tests.helpers.lab.browser", "tests.helpers.lab.playwright")

Function = ast.FunctionDef | ast.AsyncFunctionDef


class _Module:
    """A test module or conftest: its imports and module-level functions."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tree = ast.parse(path.read_text("utf-8"))
        self.imports: dict[str, str] = {}  # local name -> where it comes from
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    self.imports[local] = alias.name if alias.asname else local
        # Also those under an ``if`` or ``try`` (a conftest may define its fixtures only
        # when an import works).
        self.functions: dict[str, Function] = {}
        todo: list[ast.stmt] = list(self.tree.body)
        while todo:
            node = todo.pop(0)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = node
            elif isinstance(node, (ast.If, ast.Try)):
                todo += [*node.body, *node.orelse, *getattr(node, "finalbody", [])]

    def origin(self, node: ast.AST) -> str | None:
        """``lab.jupyter_server`` -> ``tests.helpers.lab.jupyter_server``."""
        if isinstance(node, ast.Name):
            return self.imports.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.origin(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def fixture(self, name: str) -> Function | None:
        function = self.functions.get(name)
        decorators = [ast.unparse(d) for d in function.decorator_list] if function else []
        return function if any("fixture" in d for d in decorators) else None

    def helper(self, name: str) -> Function | None:
        function = self.functions.get(name)
        return function if function and not self.fixture(name) else None

    def marks(self, function: Function) -> set[str]:
        """The ``pytest.mark.X`` on ``function`` and in the module's ``pytestmark``."""
        nodes: list[ast.expr] = list(function.decorator_list)
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and "pytestmark" in map(ast.unparse, node.targets):
                value = node.value
                nodes += value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
        names = [ast.unparse(n.func if isinstance(n, ast.Call) else n) for n in nodes]
        return {n.removeprefix("pytest.mark.") for n in names if n.startswith("pytest.mark.")}


def _starts(scopes: list[_Module], function: Function, seen: set[int], test: bool) -> set[str]:
    """What ``function`` of ``scopes[0]`` starts, through the fixtures it takes (a test's
    or a fixture's: from its module, then the conftests, nearest first), the helper
    functions of its module it calls and the imported callables it uses."""
    module = scopes[0]
    used = [node for statement in function.body for node in ast.walk(statement)]
    origins = {module.origin(node) for node in used}
    kinds = {kind for kind, calls in _CALLS.items() if origins & calls}
    if test:
        args = function.args
        taken = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        kinds |= {kind for kind, fixtures in _FIXTURES.items() if taken & fixtures}
        for name in taken:
            where = next((i for i, m in enumerate(scopes) if m.fixture(name)), None)
            fixture = scopes[where].fixture(name) if where is not None else None
            if fixture and id(fixture) not in seen:
                seen.add(id(fixture))
                kinds |= _starts(scopes[where:], fixture, seen, test=True)
    for name in {node.id for node in used if isinstance(node, ast.Name)}:
        helper = module.helper(name)
        if helper and id(helper) not in seen:
            seen.add(id(helper))
            kinds |= _starts(scopes, helper, seen, test=False)
    return kinds


def _needs(scopes: list[_Module], test: Function, home: _Module | None = None) -> set[str]:
    """The markers ``test`` needs, collected in ``scopes[0]`` (its fixtures are found
    from there) and defined in ``home`` (its helpers and imports are there's)."""
    home = home or scopes[0]
    needs = _starts(scopes, test, {id(test)}, test=True)
    if home is not scopes[0]:
        needs |= _starts([home], test, {id(test)}, test=False)
    given = [d.func for d in test.decorator_list if isinstance(d, ast.Call)]
    if "hypothesis.given" in map(home.origin, given):
        needs.add("property")
    return needs


def _unmarked(root: Path) -> tuple[list[str], list[str]]:
    """Tests under ``root`` without a marker they need; modules that launch a browser.
    A test imported from another test module is checked where it is collected again:
    its own decorators travel with it, the other module's ``pytestmark`` does not."""
    conftests = {p.parent: _Module(p) for p in root.rglob("conftest.py")}
    missing, own_browser = [], []
    for path in sorted(root.rglob("test_*.py")):
        module = _Module(path)
        folders = [path.parent, *path.parent.parents]
        scopes = [module, *(conftests[d] for d in folders if d in conftests)]
        origins = {module.origin(node) or "" for node in ast.walk(module.tree)}
        if any(o.startswith(_OWN_BROWSER) for o in origins | set(module.imports.values())):
            own_browser.append(path.name)
        tests = [(name, f, module) for name, f in module.functions.items()]
        for name, origin in module.imports.items():
            source = root.parent / (origin.rpartition(".")[0].replace(".", "/") + ".py")
            if name.startswith("test_") and source.is_file():
                home = _Module(source)
                tests.append((name, home.functions[origin.rpartition(".")[2]], home))
        for name, function, home in tests:
            lacking = _needs(scopes, function, home) - module.marks(function)
            if name.startswith("test_") and lacking:
                missing.append(f"{path.relative_to(root)}::{name}: {sorted(lacking)}")
    return missing, own_browser


def test_every_test_that_starts_a_browser_a_kernel_or_generates_input_is_marked():
    missing, own_browser = _unmarked(ROOT / "tests")
    assert not own_browser, f"use the chromium fixture (tests/conftest.py) in {own_browser}"
    assert not missing, "\n".join(["tests without the markers they need:", *missing])


def test_the_marker_check_follows_fixtures_helpers_and_conftests(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(
        "import pytest\n@pytest.fixture\ndef gateway(jp_serverapp): ...\n"
    )
    (tmp_path / "test_sample.py").write_text(
        "import pytest\n"
        "from hypothesis import given, strategies as st\n"
        "from tests.helpers import lab\n"
        "from tests.helpers.kernel import kernel as start\n"
        "@pytest.fixture\n"
        "def server(tmp_path):\n"
        "    with lab.jupyter_server(tmp_path) as url:\n"
        "        yield url\n"
        "def _run():\n"
        "    with start() as kc:\n"
        "        return kc\n"
        "def _plain(gateway):\n"  # a helper's argument is not a fixture
        "    return gateway\n"
        "def test_fixture(server): ...\n"
        "def test_helper(): _run()\n"
        "def test_conftest(gateway): ...\n"
        "def test_page(chromium): ...\n"
        "@given(st.integers())\n"
        "def test_numbers(n): ...\n"
        "def test_nothing(): _plain(None)\n"
        "@pytest.mark.kernel\n"
        "def test_marked(server): ...\n"
    )
    missing, own_browser = _unmarked(tmp_path)
    assert own_browser == []
    assert missing == [
        "test_sample.py::test_fixture: ['kernel']",
        "test_sample.py::test_helper: ['kernel']",
        "test_sample.py::test_conftest: ['kernel']",
        "test_sample.py::test_page: ['browser']",
        "test_sample.py::test_numbers: ['property']",
    ]
    (tmp_path / "test_own.py").write_text("from playwright.sync_api import sync_playwright\n")
    (tmp_path / "test_lab.py").write_text(
        "from tests.helpers import lab\ndef test_page():\n    with lab.playwright(): ...\n"
    )
    assert _unmarked(tmp_path)[1] == ["test_lab.py", "test_own.py"]


# -- waits: every wait in the suite goes through tests/helpers/until.py, whose failure
# names what it waited for and what it saw last. A loop that sleeps is a wait written by
# hand (and may end in whatever the code after it does with a missing value).

_SLEEPS = {("time", "sleep"), ("asyncio", "sleep")}


def _sleeping_loops(source: str) -> list[int]:
    """Lines of the loops in ``source`` that sleep (``time.sleep``, ``asyncio.sleep``,
    Playwright's ``wait_for_timeout``) in their body; ``asyncio.sleep(0)`` gives the loop
    a turn and waits for nothing."""

    def sleeps(node: ast.AST) -> bool:
        for call in ast.walk(node):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
                owner, name = call.func.value, call.func.attr
                a_turn = [ast.dump(a) for a in call.args] == [ast.dump(ast.Constant(0))]
                if name == "wait_for_timeout" or (
                    isinstance(owner, ast.Name) and (owner.id, name) in _SLEEPS and not a_turn
                ):
                    return True
        return False

    loops = (ast.While, ast.For, ast.AsyncFor)
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, loops) and sleeps(node)
    ]


def test_every_wait_goes_through_until():
    until = ROOT / "tests" / "helpers" / "until.py"
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if path != until
        for line in _sleeping_loops(path.read_text("utf-8"))
    ]
    assert found == [], "wait with tests/helpers/until.py instead"
    assert _sleeping_loops(until.read_text("utf-8")) != []  # the check sees a wait


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        ("while not done():\n    time.sleep(0.1)\n", [1]),
        ("async def f():\n    for _ in range(9):\n        await asyncio.sleep(0.1)\n", [2]),
        ("while True:\n    page.wait_for_timeout(500)\n", [1]),
        ("for x in xs:\n    print(x)\ntime.sleep(1)\n", []),  # a pause, not a wait loop
        ("for _ in range(3):\n    await asyncio.sleep(0)\n", []),  # loop turns, not time
    ],
)
def test_the_wait_check_finds_sleeping_loops(source, lines):
    assert _sleeping_loops(source) == lines
