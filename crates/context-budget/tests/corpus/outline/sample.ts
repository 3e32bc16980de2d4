// An inventory: items, their stock, and what they are worth.
import { readFile } from "node:fs/promises";

export const MAX_ITEMS = 10_000;

/** One kind of item. */
export interface Item {
  name: string;
  priceCents: number;
  quantity: number;
}

export type Stock = Map<string, Item>;

export enum Reason {
  Full = "full",
  Duplicate = "duplicate",
}

/** Why an item could not be added. */
export class StockError extends Error {
  constructor(readonly reason: Reason, message: string) {
    super(message);
  }
}

/** Items by name. */
export class Inventory {
  private readonly items: Stock = new Map();

  /** Add an item, refusing duplicates and a full inventory. */
  add(item: Item): void {
    if (this.items.size >= MAX_ITEMS) {
      throw new StockError(Reason.Full, `full at ${MAX_ITEMS} items`);
    }
    this.items.set(item.name, item);
  }

  get value(): number {
    let sum = 0;
    for (const item of this.items.values()) sum += item.priceCents * item.quantity;
    return sum;
  }
}

/** Total value of several inventories. */
export function total(inventories: readonly Inventory[]): number {
  let sum = 0;
  for (const inventory of inventories) {
    sum += inventory.value; // BODY_ONLY
  }
  return sum;
} // end total

export const describe = (inventory: Inventory): string => {
  const value = inventory.value;
  return `worth ${value} cents`; // BODY_ONLY
};

export async function load(path: string): Promise<Inventory> {
  const inventory = new Inventory();
  for (const line of (await readFile(path, "utf8")).split("\n")) {
    const [name, price, quantity] = line.split(",");
    inventory.add({ name, priceCents: Number(price), quantity: Number(quantity) });
  }
  return inventory;
}

export declare function hash(text: string): number;
