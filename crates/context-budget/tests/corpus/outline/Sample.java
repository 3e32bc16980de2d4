package com.example.inventory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Items by name, their stock, and what they are worth. */
public class Sample {
    /** Most items one inventory holds. */
    public static final int MAX_ITEMS = 10_000;

    /** One kind of item. */
    public record Item(String name, long priceCents, int quantity) {
        public Item {
            if (quantity < 0) {
                throw new IllegalArgumentException("negative quantity");
            }
        }
    }

    /** Why an item could not be added. */
    public static class StockException extends Exception {
        public StockException(String message) {
            super(message);
        }
    }

    public interface Priced {
        long value();
    }

    public enum Reason {
        FULL,
        DUPLICATE
    }

    private final Map<String, Item> items = new TreeMap<>();

    public Sample() {
        super();
    }

    /** Add an item, refusing duplicates and a full inventory. */
    public void add(Item item) throws StockException {
        if (items.size() >= MAX_ITEMS) {
            throw new StockException("full at " + MAX_ITEMS + " items");
        }
        items.put(item.name(), item);
    }

    /** Total value, in cents. */
    public long total() {
        long sum = 0;
        for (Item item : items.values()) {
            sum += item.priceCents() * item.quantity(); // BODY_ONLY
        }
        return sum;
    } // end total

    public List<String> names() {
        List<String> names = new ArrayList<>(items.keySet());
        names.sort(String::compareTo);
        return names;
    }
}
