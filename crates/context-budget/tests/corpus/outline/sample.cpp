// An inventory: items, their stock, and what they are worth.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace inventory {

constexpr std::size_t kMaxItems = 10000;

/// One kind of item.
struct Item {
    std::string name;
    std::uint64_t price_cents = 0;
    std::uint32_t quantity = 0;
};

/// Why an item could not be added.
class StockError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class Reason { Full, Duplicate };

/// Items by name.
class Inventory {
public:
    Inventory() = default;

    /// Add an item, refusing duplicates and a full inventory.
    void add(Item item) {
        if (items_.size() >= kMaxItems) {
            throw StockError("full");
        }
        items_.emplace(item.name, std::move(item));
    }

    std::uint64_t value() const;

private:
    std::map<std::string, Item> items_;
};

std::uint64_t Inventory::value() const {
    std::uint64_t sum = 0;
    for (const auto& [name, item] : items_) {
        sum += item.price_cents * item.quantity;
    }
    return sum;
}

template <typename T>
T largest(const std::vector<T>& values) {
    T best{};
    for (const auto& v : values) {
        if (v > best) best = v;
    }
    return best;
}

/// Total value of several inventories.
std::uint64_t total(const std::vector<Inventory>& inventories) {
    std::uint64_t sum = 0;
    for (const auto& inventory : inventories) {
        sum += inventory.value(); // BODY_ONLY
    }
    return sum;
} // end total

}  // namespace inventory
