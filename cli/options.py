"""Parameter types of the command line: counts written as people write them."""

from decimal import Decimal, InvalidOperation

import click


class WholeNumber(click.ParamType):
    """An integer written as `1000`, `1e6`, `2.5e5` or `1_000_000`, at least `low`."""

    name = "N"

    def __init__(self, low=0, what="a whole number"):
        self.low = low
        self.what = what

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            number = Decimal(value)
        else:
            try:
                number = Decimal(str(value).strip().replace("_", ""))
            except InvalidOperation:
                self.fail(f"{value!r} is not {self.what}", param, ctx)
        if not number.is_finite() or number != number.to_integral_value():
            self.fail(f"{value!r} is not {self.what}", param, ctx)
        if number < self.low:
            self.fail(f"{value!r} is below {self.low}", param, ctx)
        return int(number)
