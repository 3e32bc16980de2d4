// An inventory: items, their stock, and what they are worth.
import { readFile } from "node:fs/promises";

export const MAX_ITEMS = 10000;

/** Why an item could not be added. */
export class StockError extends Error {
  constructor(message) {
    super(message);
    this.name = "StockError";
  }
}

/** Items by name. */
export class Inventory {
  #items = new Map();

  /** Add an item, refusing duplicates and a full inventory. */
  add(item) {
    if (this.#items.size >= MAX_ITEMS) {
      throw new StockError(`full at ${MAX_ITEMS} items`);
    }
    this.#items.set(item.name, item);
  }

  get value() {
    let sum = 0;
    for (const item of this.#items.values()) sum += item.price * item.quantity;
    return sum;
  }
}

/** Total value of several inventories. */
export function total(inventories) {
  let sum = 0;
  for (const inventory of inventories) {
    sum += inventory.value; // BODY_ONLY
  }
  return sum;
} // end total

export const describe = (inventory) => {
  const value = inventory.value;
  return `worth ${value} cents`; // BODY_ONLY
};

export async function load(path) {
  const inventory = new Inventory();
  for (const line of (await readFile(path, "utf8")).split("\n")) {
    const [name, price, quantity] = line.split(",");
    inventory.add({ name, price: Number(price), quantity: Number(quantity) });
  }
  return inventory;
}

export default Inventory;
