"""Deals sim did not shuffle itself: PySolFC's game numbers, and layouts typed in.

A run or `sim show` plays them as it plays seeded deals, from their start state instead
of from (seed, deal). Their rows say where they come from through (seed, deal):

    seed -1       deal N is PySolFC's game number N
    seed -2       deal N is PySolFC's game number msN
    seed <= -3    deal k is the k-th layout (from 0) of a set of layouts typed in; the
                  seed is fixed by the layouts (engine.layouts.layouts_seed)

Sim's own seeds are 0 and above, so these rows never pair with seeded ones. A policy's
random stream and Montana's redeals come from (seed, deal) as for any deal.

A source travels to a run's workers as its spec, a small JSON-able dict that the run's
description records too.
"""

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from sim.engine import layouts, pysol

PYSOL_SEED = -1
PYSOL_MS_SEED = -2


@dataclass
class PysolDeals:
    """PySolFC's game numbers: deal N is game N (or msN)."""

    game: object
    ms: bool = False

    @property
    def seed(self):
        return PYSOL_MS_SEED if self.ms else PYSOL_SEED

    @property
    def spec(self):
        return {"source": "pysol", "ms": self.ms}

    def name(self, deal):
        return f"PySolFC game {pysol.MS_PREFIX if self.ms else ''}{deal}"

    def label(self, start, n):
        prefix = pysol.MS_PREFIX if self.ms else ""
        last = f" to {prefix}{start + n - 1}" if n > 1 else ""
        return f"PySolFC game{'s' if n > 1 else ''} {prefix}{start}{last}"

    def layout(self, deal):
        return pysol.pysol_layout(self.game, deal, self.ms)

    def state(self, deal, rules):
        return layouts.check_layout(self.game, self.layout(deal), rules)

    def check(self, start, n):
        pysol.check_numbers(start, n, self.ms)


@dataclass
class LayoutDeals:
    """Layouts typed in: deal k is the k-th, of the seed their digest fixes."""

    game: object
    layouts: list
    path: Path | None = None  # the file they were read from, if any

    @cached_property
    def seed(self):
        return layouts.layouts_seed(self.layouts)

    @property
    def spec(self):
        return {"source": "layouts", "path": str(self.path.absolute()), "seed": self.seed}

    def name(self, deal):
        where = f" of {self.path.name}" if self.path else ""
        return f"layout {deal}{where}"

    def label(self, start, n):
        where = self.path.name if self.path else "the layout given"
        last = f" to {start + n - 1}" if n > 1 else ""
        return f"layout{'s' if n > 1 else ''} {start}{last} of {where}"

    def layout(self, deal):
        return self.layouts[deal]

    def state(self, deal, rules):
        return layouts.check_layout(self.game, self.layout(deal), rules)

    def check(self, start, n):
        if start + n > len(self.layouts):
            raise layouts.LayoutError(
                f"{self.path} holds {len(self.layouts):,} layouts (deals 0 to "
                f"{len(self.layouts) - 1}): deals {start} to {start + n - 1} pass them"
            )


def from_spec(game, spec, rules):
    """The source of a spec (a worker's side of a run)."""
    if spec["source"] == "pysol":
        return PysolDeals(game, spec["ms"])
    path = Path(spec["path"])
    source = LayoutDeals(game, layouts.read_layout_file(game, path, rules), path)
    if source.seed != spec["seed"]:
        raise layouts.LayoutError(f"{path} has changed since the run began")
    return source
