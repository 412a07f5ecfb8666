"""The documentation as a reader meets it: the site builds, every example runs, and the
findings are what their data make.

Every fenced block of the pages in docs/ and of README.md is run or marked as not run,
by its language (docs/house/development.md, "Examples that run"):

- ```console: each `$ ` line is run, with `-n N` above 200 made 200 (and the deal count
  in default file names with it); a plain `sim` command in this process, anything else
  in bash with this environment's `sim` and `python` first on the path; each must exit 0;
- ```python: run; a block whose first line is `# NAME.py` is written as that file for the
  commands after it; `# recipe: NAME` blocks are run by test_dataset_recipes.py;
- ```toml: parsed;
- ```text and ```sh: not run (output; commands that install, serve, or need a program of
  their own). Any other language fails.

The blocks of one page run in order in one temporary folder. `--8<-- "FILE"` includes are
replaced by the file, as the site does.
"""

import importlib.util
import os
import re
import shlex
import subprocess
import sys
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT, sim

DOCS = ROOT / "docs"
README = ROOT / "README.md"
FINDINGS_SCRIPT = DOCS / "findings.py"
RUN = {"console", "python", "toml"}
NOT_RUN = {"text", "sh"}
SMALL_N = 200
DOCS_PACKAGES = (
    "mkdocs",
    "material",
    "mkdocs_click",
    "mkdocstrings",
    "mkdocstrings_handlers.python",
)

FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<language>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.S | re.M,
)
INCLUDE = re.compile(r'^(?P<indent>[ \t]*)--8<-- "(?P<path>[^":]+)(?::(?P<lines>\d+:\d+))?"$', re.M)
DEAL_COUNT = re.compile(r"(?P<option>(?<![\w-])-n|--deals)(?P<gap>[ =])(?P<value>\d[\d_.e]*)\b")
SHELL_SYNTAX = set("|&;<>()$`")


@dataclass
class Block:
    page: Path
    line: int
    language: str
    body: str

    @property
    def where(self):
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages():
    """README.md and every page of the site (not the findings tables it includes)."""
    site = [page for page in sorted(DOCS.rglob("*.md")) if "findings" not in page.parent.parts]
    return [README, *site]


def with_includes(text):
    """text with each `--8<-- "FILE[:FIRST:LAST]"` line replaced by those lines of FILE."""

    def include(match):
        lines = (ROOT / match["path"]).read_text().splitlines()
        if match["lines"]:
            first, last = map(int, match["lines"].split(":"))
            lines = lines[first - 1 : last]
        return "\n".join(match["indent"] + line if line else line for line in lines)

    return INCLUDE.sub(include, text)


def blocks(page):
    """The fenced blocks of page, with the files it includes in place (the rule book and
    the changelog are pages by inclusion); a block's line is in that text."""
    text = with_includes(page.read_text())
    for match in FENCE.finditer(text):
        body = textwrap.dedent(match["body"])
        line = text.count("\n", 0, match.start()) + 1
        yield Block(page, line, match["language"].strip(), body)


def small(text, counts):
    """text with every deal count above SMALL_N made SMALL_N, in options and in the
    default file names the runs get (`-n1000000.parquet`)."""

    def option(match):
        value = int(float(match["value"].replace("_", "")))
        if value <= SMALL_N:
            return match[0]
        counts.add(value)
        return f"{match['option']}{match['gap']}{SMALL_N}"

    text = DEAL_COUNT.sub(option, text)
    for value in counts:
        text = re.sub(rf"-n{value}(?!\d)", f"-n{SMALL_N}", text)
    return text


def commands(body):
    """The `$ ` lines of a console block, a trailing backslash joining the next line."""
    found, pending = [], None
    for line in body.splitlines():
        if pending is not None:
            pending += " " + line.strip()
        elif line.startswith("$ "):
            pending = line[2:]
        else:
            continue
        if pending.endswith("\\"):
            pending = pending[:-1]
        else:
            found.append(pending)
            pending = None
    return found


def is_plain_sim(command):
    """A `sim ...` command with no shell syntax outside its quotes: run in this process."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.commenters = "#"
    tokens = list(lexer)
    return tokens[:1] == ["sim"] and not any(set(t) <= SHELL_SYNTAX for t in tokens)


def environment():
    """This environment's `sim` and `python` first on the path."""
    here = str(Path(sys.executable).parent)
    return os.environ | {"PATH": os.pathsep.join([here, os.environ.get("PATH", "")])}


def run_console(block, folder, counts):
    for command in commands(small(block.body, counts)):
        if is_plain_sim(command):
            args = shlex.split(command, comments=True)[1:]
            result = sim(*args)
            output = result.output
            code = result.exit_code
        else:
            done = subprocess.run(
                ["bash", "-c", command], cwd=folder, env=environment(), capture_output=True,
                text=True, timeout=300,
            )  # fmt: skip
            output, code = done.stdout + done.stderr, done.returncode
        assert code == 0, f"{block.where}: `{command}` exited {code}:\n{output}"


def run_python(block, folder, counts):
    code = small(block.body, counts)
    first = code.splitlines()[0] if code.strip() else ""
    if first.startswith("# recipe:"):
        return  # run by test_dataset_recipes.py on its own folder of runs
    file = re.fullmatch(r"# ([\w.-]+\.py)", first)
    if file:
        (folder / file[1]).write_text(code)
        return
    namespace = {"__name__": "__main__"}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", environment()["PATH"])
        exec(compile(code, block.where, "exec"), namespace)


def runnable_pages():
    return [
        pytest.param(page, id=str(page.relative_to(ROOT)))
        for page in pages()
        if any(block.language in RUN for block in blocks(page))
    ]


@pytest.fixture
def page_folder(tmp_path, monkeypatch):
    """A fresh folder to run a page in; the modules its examples import from there are
    forgotten afterwards, so that another page's file of the same name is its own."""
    monkeypatch.chdir(tmp_path)
    modules, path = set(sys.modules), list(sys.path)
    yield tmp_path
    for name in set(sys.modules) - modules:
        if str(tmp_path) in str(getattr(sys.modules[name], "__file__", "") or ""):
            del sys.modules[name]
    sys.path[:] = path


@pytest.mark.parametrize("page", runnable_pages())
def test_every_example_of_the_page_runs(page, page_folder):
    counts = set()
    for block in blocks(page):
        small(block.body, counts)  # the page's deal counts, for the file names of all blocks
    for block in blocks(page):
        if block.language == "console":
            run_console(block, page_folder, counts)
        elif block.language == "python":
            run_python(block, page_folder, counts)
        elif block.language == "toml":
            tomllib.loads(block.body)


def test_every_block_is_run_or_marked():
    unmarked = [
        f"{block.where}: ```{block.language}"
        for page in pages()
        for block in blocks(page)
        if block.language not in RUN | NOT_RUN
    ]
    assert not unmarked, "blocks neither run nor marked as not run:\n" + "\n".join(unmarked)


def test_a_deal_count_becomes_small_in_options_and_file_names():
    counts = set()
    text = "sim calc -n 1e6 --deals=2_000 -n 50 && head -n 1 x\nresults/calc-seed0-n1000000.parquet"
    assert small(text, counts) == (
        "sim calc -n 200 --deals=200 -n 50 && head -n 1 x\nresults/calc-seed0-n200.parquet"
    )
    assert counts == {1_000_000, 2000}
    assert is_plain_sim("sim compare results/ --baseline 'planner depth_weight=2'  # a note")
    assert not is_plain_sim("sim calc -n 10 > out.txt")
    assert not is_plain_sim("sim pairs -n 10 && sim show pairs --deal 7")


# README: a five-minute read whose commands are the ones that run.


def readme_blocks(language):
    return [block.body.strip() for block in blocks(README) if block.language == language]


def test_readme_is_a_short_read():
    assert len(README.read_text().splitlines()) <= 250


def test_readme_test_command_is_what_ci_runs():
    setup, tests, *_ = readme_blocks("sh")
    ci = (ROOT / ".ci" / "run").read_text()
    assert tests == "pip install -e '.[dev]' && python -m pytest"
    assert f'{tests} "$@"' in ci.splitlines()


def test_readme_first_command_is_the_one_first_contact_times():
    setup = readme_blocks("sh")[0]
    spec = importlib.util.spec_from_file_location(
        "first_contact", ROOT / "benchmarks" / "first_contact.py"
    )
    first_contact = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(first_contact)
    *install, main_job = setup.split(" && ")
    assert main_job == " ".join(first_contact.MAIN_JOB)
    assert install[-1] == " ".join(first_contact.INSTALL)


def test_readme_links_to_files_that_exist():
    links = re.findall(r"\]\(((?!https?:)[^)#]+)(?:#[^)]*)?\)", README.read_text())
    assert links
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, missing


# The findings: tables and plots from the data, as docs/findings.py makes them.


@pytest.fixture(scope="module")
def findings():
    spec = importlib.util.spec_from_file_location("findings", FINDINGS_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_findings_tables_are_what_the_data_make(findings):
    stale = [str(path.relative_to(ROOT)) for path in findings.stale_tables()]
    assert not stale, f"{stale}: run python docs/findings.py"


def test_every_findings_plot_was_drawn_from_the_data_as_they_are(findings):
    mark = b"tEXtData\x00" + findings.data_hash().encode()
    for name in findings.plot_files():
        picture = (DOCS / "img" / name).read_bytes()
        assert mark in picture, (
            f"docs/img/{name} was drawn from other data: run python docs/findings.py"
        )


def test_every_findings_plot_and_table_is_shown(findings):
    text = "\n".join(page.read_text() for page in pages())
    for name in findings.plot_files():
        assert f"img/{name}" in text, f"docs/img/{name} is on no page"
    for name in findings.tables(findings.read_runs()):
        if name != "headline.md":
            assert f'--8<-- "docs/findings/{name}"' in text, f"docs/findings/{name} is on no page"


def test_a_findings_plot_is_the_same_bytes_drawn_twice(findings):
    from matplotlib import style

    from sim.engine.analysis.report import STYLE

    runs, scores = findings.read_runs(), findings.read_scores()
    make, game, tables = findings.plot_files()["findings-jokers-win-rates.png"]
    with style.context(["default", STYLE]):
        first, again = (findings.png(make(runs, scores, game, tables), "x") for _ in range(2))
    assert first == again


def test_rates_come_with_the_wilson_interval(findings):
    assert findings.rate(9076, 10000) == "90.76% (90.18–91.31%)"
    assert findings.rate(10000, 10000, bold=True) == "**100%** (99.96–100%)"


# The house: the project layout names every module.


def test_project_layout_names_every_module():
    layout = (DOCS / "house" / "architecture.md").read_text()
    layout = layout[layout.index("## Project layout") :]
    folders = ["engine", "engine/run", "engine/analysis", "engine/referee", "policies", "cli"]
    missing = [
        f"{folder}/{path.name}"
        for folder in folders
        for path in sorted((ROOT / folder).glob("*.py"))
        if path.name != "__init__.py"
        and not re.search(rf"(^|\s){re.escape(path.name)}\s", layout, re.M)
    ]
    assert not missing, f"docs/house/architecture.md, Project layout, leaves out {missing}"


# The site, built once.


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    missing = [name for name in DOCS_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(
            f"the docs tools are not installed ({', '.join(missing)}): pip install -e '.[docs]'"
        )
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def test_site_builds_strict(site):
    assert (site / "index.html").exists()
    assert (site / "games" / "calculation" / "index.html").exists()


def test_command_line_reference_has_every_command(site):
    import click

    from sim.cli.main import GAMES, main
    from sim.engine.games import BUILTIN

    page = (site / "reference" / "cli" / "index.html").read_text()
    plugged_in = set(GAMES) - set(BUILTIN)
    names = [name for name in main.list_commands(click.Context(main)) if name not in plugged_in]
    missing = [name for name in names if f'id="sim-{name}"' not in page]
    assert not missing, f"the command-line reference leaves out {missing}"
    assert page.count("<strong>Examples</strong>") == len(names) + 1  # and the group's


def test_api_reference_documents_the_modules_users_call(site):
    pages = {
        "analysis": ["load_runs", "comparison", "export"],
        "results": ["ResultWriter", "read_meta"],
        "policies": ["Policy", "Param", "param_slots", "policy"],
        "games": ["Game", "Column", "RuleOption"],
    }
    for name, objects in pages.items():
        page = (site / "reference" / "api" / name / "index.html").read_text()
        for found in objects:
            assert re.search(rf'id="sim\.[\w.]+\.{found}"', page), f"{found} is not on {name}"
