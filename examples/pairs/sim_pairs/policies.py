"""The Pairs policies, declared: a name, a description, parameters and where the kernel
is. Nothing here imports numba, so `sim policies` and completion read it at once."""

from sim.policies.registry import Param, Policy

RANDOM_PARAMS = (Param("keep_first", float, 0.0, "chance of taking the first pair", 0.0, 1.0),)

first = Policy(
    "pairs",
    "first",
    "sim_pairs.kernels:first_nb",
    description="The first legal pair, in cell order.",
)

random = Policy(
    "pairs",
    "random",
    "sim_pairs.kernels:random_nb",
    params=RANDOM_PARAMS,
    description="A uniformly random legal pair, or the first pair with chance keep_first.",
)
