"""The shape of a move-log line: which value each key holds, in the rule book's format.

A line is checked against its shape before a referee plays it, so that a value of the
wrong kind (a layout that is a string, a move that is a number) is named with the key
and what it should be, instead of surfacing as whatever the referee's Python stumbles
on. A referee declares the shape of its game's layout (LAYOUT_SHAPE); the keys every
game shares are checked for all. A missing key is left to the referee, which names it.
"""

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Shape:
    """What a value must be: a test, and the words for it."""

    test: object
    expected: str

    def holds(self, value):
        return self.test(value)


def _texts(value):
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


OBJECT = Shape(lambda value: isinstance(value, dict), "an object")
TEXT = Shape(lambda value: isinstance(value, str), "text")
CARDS = Shape(_texts, 'a list of cards, each text such as "QH"')
MOVES = Shape(_texts, "a list of moves, each text in the rule book's notation")
COLUMNS_OF_CARDS = Shape(
    lambda value: isinstance(value, list) and all(_texts(column) for column in value),
    'a list of columns, each a list of cards such as "QH"',
)

SHARED = {("layout",): OBJECT, ("moves",): MOVES, ("outcome",): TEXT}


def shape_problem(line, layout_shape):
    """Why a line's values are not of its shape (SHARED, its layout's keys as
    `layout_shape` gives them), or None."""
    shapes = SHARED | {("layout", key): shape for key, shape in layout_shape.items()}
    for path, shape in shapes.items():
        found, value = _value_at(line, path)
        if found and not shape.holds(value):
            name = ".".join(path)
            return f'malformed line: "{name}" must be {shape.expected}, not {_shown(value)}'
    return None


def _value_at(line, path):
    value = line
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return False, None
        value = value[key]
    return True, value


def _shown(value):
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."
