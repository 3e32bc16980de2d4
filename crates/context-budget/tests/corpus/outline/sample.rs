//! An inventory: items, their stock, and what they are worth.

use std::collections::BTreeMap;
use std::fmt;

/// Most items one inventory holds.
pub const MAX_ITEMS: usize = 10_000;

/// One kind of item.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// What it is called.
    pub name: String,
    /// Price of one, in cents.
    pub price_cents: u64,
    pub quantity: u32,
}

/// Why an item could not be added.
#[derive(Debug)]
pub enum StockError {
    /// The inventory is full.
    Full { limit: usize },
    /// An item of this name is already there.
    Duplicate(String),
}

pub trait Priced {
    /// Value of everything held, in cents.
    fn value(&self) -> u64;
    fn describe(&self) -> String {
        let value = self.value();
        format!("worth {value} cents (BODY_ONLY)")
    }
}

pub type Stock = BTreeMap<String, Item>;

/// Items by name.
#[derive(Default)]
pub struct Inventory {
    items: Stock,
}

impl Inventory {
    pub fn new() -> Inventory {
        Inventory {
            items: BTreeMap::new(),
        }
    }

    /// Add an item, refusing duplicates and a full inventory.
    pub fn add(&mut self, item: Item) -> Result<(), StockError> {
        if self.items.len() >= MAX_ITEMS {
            return Err(StockError::Full { limit: MAX_ITEMS });
        }
        if self.items.contains_key(&item.name) {
            return Err(StockError::Duplicate(item.name));
        }
        self.items.insert(item.name.clone(), item);
        Ok(())
    }
}

impl Priced for Inventory {
    fn value(&self) -> u64 {
        self.items
            .values()
            .map(|item| item.price_cents * u64::from(item.quantity))
            .sum()
    }
}

impl fmt::Display for StockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StockError::Full { limit } => write!(f, "full at {limit} items"),
            StockError::Duplicate(name) => write!(f, "{name} is already there"),
        }
    }
}

/// Total value of several inventories.
pub fn total(inventories: &[Inventory]) -> u64 {
    let mut sum = 0;
    for inventory in inventories {
        sum += inventory.value(); // BODY_ONLY
    }
    sum
} // end total

pub mod report {
    /// One line per item.
    pub fn lines(inventory: &super::Inventory) -> Vec<String> {
        let mut out = Vec::new();
        for item in inventory.items.values() {
            out.push(format!("{} x{}", item.name, item.quantity));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_and_totals() {
        let mut inventory = Inventory::new();
        let item = Item { name: "a".into(), price_cents: 5, quantity: 2 };
        inventory.add(item).expect("added");
        assert_eq!(total(&[inventory]), 10);
    }
}
