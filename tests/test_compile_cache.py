"""Cached kernels never outlive the sources they were built from: every cached function is
stamped with the rules and policy sources, not only with its own file."""

import os

from sim.engine import compile_cache


def test_the_sources_stamp_moves_when_any_source_file_changes(tmp_path):
    rules, policies = tmp_path / "engine", tmp_path / "policies"
    rules.mkdir()
    policies.mkdir()
    (rules / "calc.py").write_text("x = 1\n")
    (policies / "calc.py").write_text("y = 2\n")
    roots = (str(rules), str(policies))
    before = compile_cache.sources_stamp.__wrapped__(roots)
    os.utime(rules / "calc.py", (1e9, 2e9))
    assert compile_cache.sources_stamp.__wrapped__(roots) != before
    (policies / "calc.py").write_text("y = 22\n")
    os.utime(rules / "calc.py", (1e9, before[0]))
    assert compile_cache.sources_stamp.__wrapped__(roots)[1] == before[1] + 1


def test_a_policy_kernel_is_stamped_with_the_rules_it_calls():
    # policies/calc.py calls engine/calc.py: its cache must notice a change there too.
    from sim.policies import calc as calc_policies

    locator = calc_policies.greedy.choose._cache._impl._locator
    own, shared = locator.get_source_stamp()
    assert shared == compile_cache.sources_stamp()
    roots = compile_cache._source_roots()
    assert any(root.endswith("engine") for root in roots)
    assert any(root.endswith("policies") for root in roots)
