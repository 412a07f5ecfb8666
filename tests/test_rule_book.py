"""RULES.md against the project: every rule id cited is defined, every rule has a test.

Pure text scanning. A rule is defined by a bold label at the start of a line of
RULES.md (`- **C5 Turning.**`). A rule counts as tested when its id appears in the name,
decorators or body of a test function under tests/; a range in a docstring such as
"C1-C9" names only its two ends.

Only the three built-in games' ids (C, M, J) are checked here: the example game of
examples/pairs defines its own P ids in its README.
"""

import ast
import re

from conftest import ROOT

RULE_BOOK = ROOT / "RULES.md"
CITING_FOLDERS = ("cli", "engine", "policies", "tests")
THIS_FILE = "test_rule_book.py"

# A rule id: C, M or J, a number, an optional lower-case sub-id letter. Not part of a
# longer word (so `7C`, `c3>c7` and `0xC3` are not ids), though `test_C5_...` is one.
RULE_ID = re.compile(r"(?<![A-Za-z0-9])([CMJ][0-9]+[a-z]?)(?![A-Za-z0-9])")
DEFINITION = re.compile(r"^\s*(?:[-*]\s+)?\*\*([CMJ][0-9]+[a-z]?)\b", re.MULTILINE)

# Rules that no test names yet, each to be removed from here once a test names it.
NOT_YET_TESTED: frozenset[str] = frozenset()


def _order(rule):
    letter, number, sub = re.fullmatch(r"([A-Z])([0-9]+)([a-z]?)", rule).groups()
    return letter, int(number), sub


def defined_rules():
    return DEFINITION.findall(RULE_BOOK.read_text(encoding="utf-8"))


def cited_rules():
    """{rule id: [files citing it]} over the code and tests (this file left out)."""
    cited = {}
    for folder in CITING_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == THIS_FILE or "__pycache__" in path.parts:
                continue
            for rule in set(RULE_ID.findall(path.read_text(encoding="utf-8"))):
                cited.setdefault(rule, []).append(str(path.relative_to(ROOT)))
    return cited


def rules_named_by_tests():
    """Rule ids named by a test function (name, decorators or body) under tests/."""
    named = set()
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if path.name == THIS_FILE or "__pycache__" in path.parts:
            continue
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        for node in ast.walk(ast.parse("".join(lines), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (
                node.name.startswith("test")
            ):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                named.update(RULE_ID.findall("".join(lines[first - 1 : node.end_lineno])))
    return named


def test_the_rule_book_defines_each_rule_once():
    defined = defined_rules()
    assert defined, f"no rule ids found in {RULE_BOOK.name}"
    twice = sorted({rule for rule in defined if defined.count(rule) > 1}, key=_order)
    assert not twice, f"defined more than once in RULES.md: {', '.join(twice)}"


def test_every_rule_the_rule_book_refers_to_is_defined():
    missing = set(RULE_ID.findall(RULE_BOOK.read_text(encoding="utf-8"))) - set(defined_rules())
    assert not missing, f"RULES.md refers to undefined rules: {', '.join(sorted(missing))}"


def test_every_rule_cited_in_code_and_tests_is_defined():
    defined = set(defined_rules())
    undefined = {rule: files for rule, files in cited_rules().items() if rule not in defined}
    assert not undefined, "cited but not defined in RULES.md: " + "; ".join(
        f"{rule} ({', '.join(undefined[rule])})" for rule in sorted(undefined, key=_order)
    )


def test_every_rule_is_named_by_a_test():
    untested = set(defined_rules()) - rules_named_by_tests() - NOT_YET_TESTED
    assert not untested, "no test names " + ", ".join(sorted(untested, key=_order))


def test_the_not_yet_tested_list_holds_only_untested_defined_rules():
    defined, tested = set(defined_rules()), rules_named_by_tests()
    assert not NOT_YET_TESTED - defined, f"not rules: {sorted(NOT_YET_TESTED - defined)}"
    assert not NOT_YET_TESTED & tested, f"tested now: {sorted(NOT_YET_TESTED & tested)}"
