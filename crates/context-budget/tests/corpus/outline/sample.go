// Package inventory holds items, their stock, and what they are worth.
package inventory

import (
	"errors"
	"fmt"
	"sort"
)

// MaxItems is the most items one inventory holds.
const MaxItems = 10000

// ErrFull is returned when the inventory is full.
var ErrFull = errors.New("inventory full")

// Item is one kind of item.
type Item struct {
	Name       string
	PriceCents uint64
	Quantity   uint32
}

// Priced is anything with a value.
type Priced interface {
	Value() uint64
}

// Inventory holds items by name.
type Inventory struct {
	items map[string]Item
}

// New returns an empty inventory.
func New() *Inventory {
	return &Inventory{items: make(map[string]Item)}
}

// Add adds an item, refusing duplicates and a full inventory.
func (inv *Inventory) Add(item Item) error {
	if len(inv.items) >= MaxItems {
		return ErrFull
	}
	if _, ok := inv.items[item.Name]; ok {
		return fmt.Errorf("%s is already there", item.Name)
	}
	inv.items[item.Name] = item
	return nil
}

// Value is the value of everything held, in cents.
func (inv *Inventory) Value() uint64 {
	var sum uint64
	for _, item := range inv.items {
		sum += item.PriceCents * uint64(item.Quantity)
	}
	return sum
}

// Names lists the items' names in order.
func (inv *Inventory) Names() []string {
	names := make([]string, 0, len(inv.items))
	for name := range inv.items {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Total is the value of several inventories.
func Total(inventories []*Inventory) uint64 {
	var sum uint64
	for _, inv := range inventories {
		sum += inv.Value() // BODY_ONLY
	}
	return sum
} // end total
