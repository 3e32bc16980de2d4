// A list of items as a React component.
import React, { useState } from "react";

export interface Item {
  name: string;
  quantity: number;
}

export type ListProps = { items: Item[]; title?: string };

/** Total quantity of the items. */
export function total(items: Item[]): number {
  let sum = 0;
  for (const item of items) {
    sum += item.quantity; // BODY_ONLY
  }
  return sum;
} // end total

export const ItemList = ({ items, title }: ListProps) => {
  const [open, setOpen] = useState(true);
  return (
    <section>
      <h2 onClick={() => setOpen(!open)}>{title ?? "Items"} (BODY_ONLY)</h2>
      {open && (
        <ul>
          {items.map((item) => (
            <li key={item.name}>
              {item.name}: {item.quantity}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
};

export default function App() {
  const items: Item[] = [{ name: "a", quantity: 2 }];
  return <ItemList items={items} title="Stock" />;
}
