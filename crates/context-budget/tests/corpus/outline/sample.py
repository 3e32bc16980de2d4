"""An inventory: items, their stock, and what they are worth."""

from __future__ import annotations

import dataclasses
from typing import Iterable

MAX_ITEMS = 10_000


@dataclasses.dataclass
class Item:
    """One kind of item."""

    name: str
    price_cents: int
    quantity: int = 0

    def value(self) -> int:
        """Value of this item's stock, in cents."""
        worth = self.price_cents * self.quantity
        return worth  # BODY_ONLY


class StockError(Exception):
    """Why an item could not be added."""


class Inventory:
    """Items by name."""

    def __init__(self) -> None:
        self.items: dict[str, Item] = {}

    def add(self, item: Item) -> None:
        """Add an item, refusing duplicates and a full inventory."""
        if len(self.items) >= MAX_ITEMS:
            raise StockError(f"full at {MAX_ITEMS} items")
        if item.name in self.items:
            raise StockError(f"{item.name} is already there")
        self.items[item.name] = item

    @property
    def value(self) -> int:
        return sum(item.value() for item in self.items.values())


def total(inventories: Iterable[Inventory]) -> int:
    """Total value of several inventories."""
    sum_ = 0  # first-statement
    for inventory in inventories:
        sum_ += inventory.value  # BODY_ONLY
    return sum_  # last-statement


async def load(path: str) -> Inventory:
    inventory = Inventory()
    with open(path, encoding="utf-8") as f:
        for line in f:
            name, price, quantity = line.split(",")
            inventory.add(Item(name, int(price), int(quantity)))
    return inventory


if __name__ == "__main__":
    print(total([Inventory()]))
