export interface Section {
  name: string;
  text: string;
  priority: number;
  budget?: number;
}

export type Counter = (text: string) => number;

export function assemble(sections: Section[], total: number, count: Counter): string {
  const ordered = [...sections].sort((a, b) => a.priority - b.priority);
  const parts: string[] = [];
  let remaining = total;
  for (const section of ordered) {
    const limit = Math.min(section.budget ?? remaining, remaining);
    if (limit <= 0) {
      continue;
    }
    let text = section.text;
    while (text.length > 0 && count(text) > limit) {
      text = text.slice(0, Math.floor(text.length * 0.9));
    }
    remaining -= count(text);
    parts.push(`## ${section.name}\n\n${text}`);
  }
  return parts.join("\n\n");
}
