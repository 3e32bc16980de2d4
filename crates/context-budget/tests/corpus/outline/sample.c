/* An inventory: items, their stock, and what they are worth. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ITEMS 10000

/* One kind of item. */
struct item {
    char name[64];
    uint64_t price_cents;
    uint32_t quantity;
};

/* Items, in the order they were added. */
struct inventory {
    struct item *items;
    size_t len;
    size_t cap;
};

enum stock_error { STOCK_OK = 0, STOCK_FULL, STOCK_NO_MEMORY };

typedef uint64_t cents_t;

static int grow(struct inventory *inv)
{
    size_t cap = inv->cap ? inv->cap * 2 : 16;
    struct item *items = realloc(inv->items, cap * sizeof *items);
    if (!items) {
        return -1;
    }
    inv->items = items;
    inv->cap = cap;
    return 0;
}

/* Add an item, refusing a full inventory. */
enum stock_error inventory_add(struct inventory *inv, const struct item *item)
{
    if (inv->len >= MAX_ITEMS) {
        return STOCK_FULL;
    }
    if (inv->len == inv->cap && grow(inv) != 0) {
        return STOCK_NO_MEMORY;
    }
    memcpy(&inv->items[inv->len++], item, sizeof *item);
    return STOCK_OK;
}

/* Total value, in cents. */
cents_t inventory_total(const struct inventory *inv) {
    cents_t sum = 0;
    for (size_t i = 0; i < inv->len; i++) {
        sum += inv->items[i].price_cents * inv->items[i].quantity; /* BODY_ONLY */
    }
    return sum;
} /* end total */

void inventory_free(struct inventory *inv)
{
    free(inv->items);
    inv->items = NULL;
    inv->len = inv->cap = 0;
}
