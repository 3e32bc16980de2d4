import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Budget:
    window: int
    reserve: int = 0
    margin: float = 0.1
    notes: list[str] = field(default_factory=list)

    def available(self) -> int:
        usable = int(self.window * (1.0 - self.margin))
        if self.reserve > usable:
            raise ValueError(f"reserve {self.reserve} exceeds usable window {usable}")
        return usable - self.reserve


def load_messages(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        data = json.load(handle)
    if not isinstance(data, list):
        raise TypeError("expected a list of messages")
    return [m for m in data if m.get("role") in {"system", "user", "assistant"}]


def fit(messages: list[dict], budget: Budget, count) -> list[dict]:
    kept, used = [], 0
    for message in reversed(messages):
        cost = count(message["content"]) + 4
        if used + cost > budget.available():
            break
        kept.append(message)
        used += cost
    return list(reversed(kept))
