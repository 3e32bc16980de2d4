//! What cutting would save, measured by rewriting the definitions and counting them
//! again in the same rendering: repeated schema subtrees hoisted into `$defs` and
//! referenced with `$ref`, keys models do not need removed. Also the heaviest tools
//! and descriptions, and the parameters the model gets no description of.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::{Rendering, ServerDefinitions, ToolDefinition, compact, render_tool, rendered_name};
use crate::Tokenizer;
use crate::suggest::squash;

/// Smallest subtree (compact JSON bytes) worth a `$ref`: `{"$ref":"#/$defs/s1"}` is
/// 20 bytes, so smaller repeats rarely pay for their definition.
pub const MIN_HOIST_BYTES: usize = 48;
/// Most subtrees hoisted per tool: each hoist walks the schema again.
pub const MAX_HOISTS_PER_TOOL: usize = 32;
/// Largest schema (compact JSON bytes) searched for repeats: the search serializes
/// every subtree once per hoist, so its cost grows with size × depth × hoists.
/// Bigger schemas are measured, not rewritten.
pub const MAX_HOIST_SCHEMA_BYTES: usize = 256 * 1024;
/// Default [`HoistWork`] factor: the repeat search of one call may serialize or
/// compare 16 times the bytes of the call's schemas (at least
/// [`MIN_HOIST_WORK_BYTES`]).
pub use crate::limits::DEFAULT_HOIST_WORK_FACTOR;
/// The least work the search may do, whatever the size: ordinary lists are searched
/// to the end (the test fleet's 60-tool server of deeply nested repeats saves the
/// same 25,380 o200k tokens with the default budget as unbounded).
pub const MIN_HOIST_WORK_BYTES: usize = 8 * 1024 * 1024;
/// Rows in the heaviest-tools and heaviest-descriptions lists.
pub const HEAVIEST: usize = 10;
/// Undescribed parameters listed by name (all are counted).
pub const MAX_LISTED_UNDESCRIBED: usize = 50;

/// Keys a model does not need anywhere in a schema.
pub const UNNEEDED_KEYS: [&str; 3] = ["$schema", "$id", "$comment"];

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Savings {
    /// Tokens of the tools as they are.
    pub tokens_before: usize,
    /// Tokens with both rewrites applied.
    pub tokens_after: usize,
    /// Repeated subtrees moved into `$defs` and referenced.
    pub hoisting: Rewrite,
    /// `$schema`, `$id`, `$comment`, and `title`s that only repeat a name.
    pub unneeded_keys: Rewrite,
    pub heaviest_tools: Vec<Heavy>,
    pub heaviest_descriptions: Vec<Heavy>,
    /// Top-level parameters without a `description`.
    pub undescribed_parameter_count: usize,
    /// `tool.parameter`, the first [`MAX_LISTED_UNDESCRIBED`].
    pub undescribed_parameters: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Rewrite {
    pub tokens_saved: usize,
    /// The search stopped at its work budget (`--max-hoist-work`): `tokens_saved`
    /// is what the hoists it made save, a lower bound of what hoisting could.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// Tools the rewrite shrinks, most saved first.
    pub tools: Vec<RewrittenTool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RewrittenTool {
    pub name: String,
    pub tokens_saved: usize,
    /// What changed: subtrees hoisted, or keys removed.
    pub changes: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Heavy {
    pub name: String,
    pub tokens: usize,
}

/// How much JSON the repeat search may still serialize or compare, in bytes: one
/// budget per call, drawn from by every [`hoist_within`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoistWork {
    pub limit: usize,
    pub spent: usize,
}

impl HoistWork {
    /// The budget of a call whose schemas are `schema_bytes` of compact JSON:
    /// `factor` times that, at least [`MIN_HOIST_WORK_BYTES`].
    pub fn for_call(schema_bytes: usize, factor: usize) -> HoistWork {
        HoistWork::bytes(
            schema_bytes
                .saturating_mul(factor)
                .max(MIN_HOIST_WORK_BYTES),
        )
    }

    pub fn bytes(limit: usize) -> HoistWork {
        HoistWork { limit, spent: 0 }
    }

    /// Charge `bytes`; false once the budget is spent (the work charged last may
    /// pass it by one subtree, at most [`MAX_HOIST_SCHEMA_BYTES`]).
    fn charge(&mut self, bytes: usize) -> bool {
        self.spent = self.spent.saturating_add(bytes);
        self.spent <= self.limit
    }

    pub fn exhausted(&self) -> bool {
        self.spent > self.limit
    }
}

/// The savings over every tool of `servers`, in `rendering` with `tokenizer`; the
/// hoisting search does at most `work` (see [`HoistWork`]).
pub fn savings(
    servers: &[ServerDefinitions],
    tokenizer: Tokenizer,
    rendering: Rendering,
    work: &mut HoistWork,
) -> Savings {
    savings_until(servers, tokenizer, rendering, work, &super::never).expect("never stopped")
}

/// [`savings`] asking `stop` before each tool.
pub fn savings_until(
    servers: &[ServerDefinitions],
    tokenizer: Tokenizer,
    rendering: Rendering,
    work: &mut HoistWork,
    stop: super::Stop,
) -> Result<Savings, super::Stopped> {
    let mut before_total = 0;
    let mut after_total = 0;
    let mut hoisting = Rewrite::default();
    let mut unneeded = Rewrite::default();
    let mut heaviest = Vec::new();
    let mut descriptions = Vec::new();
    let mut undescribed = Vec::new();
    let mut undescribed_count = 0;
    for server in servers {
        for tool in &server.tools {
            if stop() {
                return Err(super::Stopped);
            }
            let name = rendered_name(server.name.as_deref(), &tool.name, rendering);
            // Each rewrite is counted in place of the schema, never with a copy of it.
            let count = |schema: Value| {
                let rewritten = ToolDefinition {
                    name: tool.name.clone(),
                    description: tool.description.clone(),
                    input_schema: schema,
                };
                render_tool(&rewritten, &name, tokenizer, rendering).tokens
            };
            let before = render_tool(tool, &name, tokenizer, rendering).tokens;
            before_total += before;
            heaviest.push(Heavy {
                name: name.clone(),
                tokens: before,
            });
            if let Some(text) = &tool.description {
                descriptions.push(Heavy {
                    name: name.clone(),
                    tokens: tokenizer.count(text),
                });
            }
            for parameter in undescribed_parameters(&tool.input_schema) {
                undescribed_count += 1;
                if undescribed.len() < MAX_LISTED_UNDESCRIBED {
                    undescribed.push(format!("{name}.{parameter}"));
                }
            }

            // The cookbook rule reads no nested schema and no `$ref`: a hoist would
            // only hide a property's type and description from it, a saving that is
            // not one. Under that rule hoisting is not measured; nor for Codex, whose
            // rewrite keeps only the keywords it knows (no `$ref`/`$defs` seen kept),
            // nor for Copilot CLI (no recording shows what it makes of a `$ref`).
            let hoists_kept = matches!(rendering, Rendering::Anthropic | Rendering::GeminiCli);
            let (hoisted, hoists) = match hoists_kept {
                true => hoist_within(&tool.input_schema, work),
                false => (tool.input_schema.clone(), 0),
            };
            let hoist_saved = match hoists {
                0 => 0,
                _ => saved(before, hoists, count(hoisted)),
            };
            record(&mut hoisting, &name, hoist_saved, hoists);
            let (stripped, removed) = strip_unneeded(&tool.input_schema);
            let stripped_tokens = match removed {
                0 => before,
                _ => count(stripped.clone()),
            };
            let strip_saved = saved(before, removed, stripped_tokens);
            record(&mut unneeded, &name, strip_saved, removed);
            // Both: strip first (a title that differs can keep two subtrees apart).
            let both = match hoists_kept {
                true => match hoist_within(&stripped, work) {
                    (_, 0) => stripped_tokens,
                    (both, _) => count(both),
                },
                false => stripped_tokens,
            };
            let after = both.min(stripped_tokens).min(before);
            after_total += after;
        }
    }
    hoisting.partial = work.exhausted();
    for rewrite in [&mut hoisting, &mut unneeded] {
        rewrite.tools.sort_by(|a, b| {
            b.tokens_saved
                .cmp(&a.tokens_saved)
                .then_with(|| a.name.cmp(&b.name))
        });
    }
    Ok(Savings {
        tokens_before: before_total,
        tokens_after: after_total,
        hoisting,
        unneeded_keys: unneeded,
        heaviest_tools: top(heaviest),
        heaviest_descriptions: top(descriptions),
        undescribed_parameter_count: undescribed_count,
        undescribed_parameters: undescribed,
    })
}

fn saved(before: usize, changes: usize, after: usize) -> usize {
    if changes == 0 {
        0
    } else {
        before.saturating_sub(after)
    }
}

fn record(rewrite: &mut Rewrite, name: &str, tokens_saved: usize, changes: usize) {
    if tokens_saved > 0 {
        rewrite.tokens_saved += tokens_saved;
        rewrite.tools.push(RewrittenTool {
            name: name.to_string(),
            tokens_saved,
            changes,
        });
    }
}

fn top(mut rows: Vec<Heavy>) -> Vec<Heavy> {
    rows.sort_by(|a, b| b.tokens.cmp(&a.tokens).then_with(|| a.name.cmp(&b.name)));
    rows.truncate(HEAVIEST);
    rows
}

/// Top-level properties without a `description`.
pub fn undescribed_parameters(schema: &Value) -> Vec<String> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .filter(|(_, p)| {
                    p.get("description")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                })
                .map(|(key, _)| key.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// Keywords whose values are schemas (JSON Schema 2020-12 and draft-07), by shape.
const SCHEMA_MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
const SCHEMA_LISTS: [&str; 5] = ["prefixItems", "anyOf", "oneOf", "allOf", "items"];
const SCHEMA_VALUES: [&str; 11] = [
    "items",
    "additionalProperties",
    "additionalItems",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// Call `visit` on every subschema of `schema` (not `schema` itself), with whether it
/// is a definition (a value of `$defs`/`definitions`), until `visit` returns false.
/// Returns false when it was stopped.
fn each_subschema<'a>(schema: &'a Value, visit: &mut dyn FnMut(&'a Value, bool) -> bool) -> bool {
    let Some(map) = schema.as_object() else {
        return true;
    };
    for (key, value) in map {
        let key = key.as_str();
        let mut child = |child: &'a Value, definition: bool| {
            !child.is_object() || (visit(child, definition) && each_subschema(child, visit))
        };
        let going = if SCHEMA_MAPS.contains(&key) {
            let definition = key == "$defs" || key == "definitions";
            value
                .as_object()
                .is_none_or(|children| children.values().all(|c| child(c, definition)))
        } else if SCHEMA_LISTS.contains(&key) && value.is_array() {
            value
                .as_array()
                .into_iter()
                .flatten()
                .all(|c| child(c, false))
        } else if SCHEMA_VALUES.contains(&key) {
            child(value, false)
        } else {
            true
        };
        if !going {
            return false;
        }
    }
    true
}

/// The same walk, mutable: replace every subschema equal to `target` (definitions
/// themselves excepted) by `replacement`. Returns how many were replaced.
fn replace_subschemas(schema: &mut Value, target: &Value, replacement: &Value) -> usize {
    let Some(map) = schema.as_object_mut() else {
        return 0;
    };
    let mut replaced = 0;
    for (key, value) in map.iter_mut() {
        let key = key.as_str();
        let child = |child: &mut Value, definition: bool, replaced: &mut usize| {
            if !definition && child == target {
                *child = replacement.clone();
                *replaced += 1;
            } else if child.is_object() {
                *replaced += replace_subschemas(child, target, replacement);
            }
        };
        if SCHEMA_MAPS.contains(&key) {
            if let Some(children) = value.as_object_mut() {
                let definition = key == "$defs" || key == "definitions";
                for c in children.values_mut() {
                    child(c, definition, &mut replaced);
                }
            }
        } else if SCHEMA_LISTS.contains(&key) && value.is_array() {
            for c in value.as_array_mut().into_iter().flatten() {
                child(c, false, &mut replaced);
            }
        } else if SCHEMA_VALUES.contains(&key) && value.is_object() {
            child(value, false, &mut replaced);
        }
    }
    replaced
}

/// `schema` with its repeated subtrees moved into `$defs` and referenced by `$ref`,
/// the subtree that saves the most bytes first; and how many subtrees were hoisted.
/// Subtrees that set their own `$id`/`$anchor` or use relative references stay
/// where they are (a `$ref` would change what they mean). One schema's search is
/// bounded by [`MAX_HOIST_SCHEMA_BYTES`] x its depth x [`MAX_HOISTS_PER_TOOL`];
/// [`hoist_within`] bounds a whole call.
pub fn hoist_repeated(schema: &Value) -> (Value, usize) {
    hoist_within(schema, &mut HoistWork::bytes(usize::MAX))
}

/// [`hoist_repeated`] drawing on `work`: every byte serialized by the search (and,
/// as much again, compared by the replacement) is charged. Once `work` is spent the
/// search stops and keeps the hoists it finished, so the result is still a valid
/// rewrite and its saving a true one, only maybe not the largest.
pub fn hoist_within(schema: &Value, work: &mut HoistWork) -> (Value, usize) {
    let mut doc = schema.clone();
    if !doc.is_object() || work.exhausted() {
        return (doc, 0);
    }
    let size = compact(&doc).len();
    if !work.charge(size) || size > MAX_HOIST_SCHEMA_BYTES {
        return (doc, 0);
    }
    let mut hoisted = 0;
    while hoisted < MAX_HOISTS_PER_TOOL {
        let mut seen: HashMap<String, (usize, &Value)> = HashMap::new();
        let mut searched = 0usize;
        let finished = each_subschema(&doc, &mut |node, definition| {
            if definition {
                return true;
            }
            let text = compact(node);
            searched += text.len();
            if !work.charge(text.len()) {
                return false;
            }
            if text.len() < MIN_HOIST_BYTES
                || text.contains("\"$id\"")
                || text.contains("\"$anchor\"")
                || text.contains("\"$ref\":\"#\"")
            {
                return true;
            }
            seen.entry(text).or_insert((0, node)).0 += 1;
            true
        });
        // Replacing compares each subtree with the target: at most what the search
        // serialized.
        if !finished || !work.charge(searched) {
            break;
        }
        let best = seen
            .iter()
            .filter(|(_, (count, _))| *count >= 2)
            .max_by(|(a, (ca, _)), (b, (cb, _))| {
                ((ca - 1) * a.len(), a.as_str()).cmp(&((cb - 1) * b.len(), b.as_str()))
            })
            .map(|(_, (_, node))| (*node).clone());
        let Some(subtree) = best else {
            break;
        };
        let name = free_name(&doc);
        let reference = json!({ "$ref": format!("#/$defs/{name}") });
        if replace_subschemas(&mut doc, &subtree, &reference) < 2 {
            break;
        }
        let map = doc.as_object_mut().expect("an object");
        let defs = map
            .entry("$defs")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(defs) = defs {
            defs.insert(name, subtree);
        }
        hoisted += 1;
    }
    (doc, hoisted)
}

/// A `$defs` name the schema does not use yet: `s1`, `s2`, … (short: every `$ref`
/// spells it).
fn free_name(doc: &Value) -> String {
    let taken = |name: &str| doc.get("$defs").and_then(|d| d.get(name)).is_some();
    (1..)
        .map(|n| format!("s{n}"))
        .find(|name| !taken(name))
        .expect("a free name")
}

/// `schema` without the keys models do not need: [`UNNEEDED_KEYS`] anywhere, the
/// root's `title` (the tool's name says it), and a property's `title` that only
/// repeats the property's name (`"max_results": {"title": "Max Results"}`, as
/// pydantic writes them). Returns how many keys were removed.
pub fn strip_unneeded(schema: &Value) -> (Value, usize) {
    fn strip(schema: &mut Value, own_name: Option<&str>, removed: &mut BTreeMap<String, usize>) {
        let Some(map) = schema.as_object_mut() else {
            return;
        };
        for key in UNNEEDED_KEYS {
            if map.shift_remove(key).is_some() {
                *removed.entry(key.to_string()).or_default() += 1;
            }
        }
        let repeats_name = match (map.get("title").and_then(Value::as_str), own_name) {
            (Some(_), None) => true,
            (Some(title), Some(name)) => squash(title) == squash(name),
            (None, _) => false,
        };
        if repeats_name {
            map.shift_remove("title");
            *removed.entry("title".into()).or_default() += 1;
        }
        for (key, value) in map.iter_mut() {
            let key = key.as_str();
            if SCHEMA_MAPS.contains(&key) {
                if let Some(children) = value.as_object_mut() {
                    for (name, child) in children.iter_mut() {
                        strip(child, Some(name), removed);
                    }
                }
            } else if SCHEMA_LISTS.contains(&key) && value.is_array() {
                for child in value.as_array_mut().into_iter().flatten() {
                    // A branch's title is no repeat of anything: keep it.
                    strip(child, Some(""), removed);
                }
            } else if SCHEMA_VALUES.contains(&key) {
                strip(value, Some(""), removed);
            }
        }
    }
    let mut doc = schema.clone();
    let mut removed = BTreeMap::new();
    strip(&mut doc, None, &mut removed);
    (doc, removed.values().sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address() -> Value {
        json!({"type": "object", "description": "A postal address", "properties": {
            "street": {"type": "string", "description": "Street and number"},
            "city": {"type": "string", "description": "City"}}})
    }

    #[test]
    fn repeated_subtrees_become_one_definition_and_references() {
        let schema = json!({"type": "object", "properties": {
            "from": address(), "to": address(),
            "stops": {"type": "array", "items": address()}}});
        let (hoisted, count) = hoist_repeated(&schema);
        assert_eq!(count, 1);
        assert_eq!(hoisted["$defs"]["s1"], address());
        for pointer in [
            "/properties/from",
            "/properties/to",
            "/properties/stops/items",
        ] {
            assert_eq!(
                hoisted.pointer(pointer),
                Some(&json!({"$ref": "#/$defs/s1"})),
                "{pointer}"
            );
        }
        // A `properties` map is no schema: never replaced, even when two are equal.
        let twins = json!({"type": "object", "properties": {
            "a": {"type": "object", "properties": {"x": {"type": "string", "description": "the long x value here"}}},
            "b": {"type": "object", "properties": {"x": {"type": "string", "description": "the long x value here"}}, "description": "b"}}});
        let (hoisted, _) = hoist_repeated(&twins);
        assert!(
            hoisted["properties"]["a"]["properties"].is_object(),
            "{hoisted}"
        );
    }

    /// A hostile schema: `depth` levels of `items` over `pairs` pairs of equal
    /// subtrees, each pair different: every search serializes the blob once per
    /// level, and every pair is worth a hoist.
    fn hostile(depth: usize, pairs: usize) -> Value {
        let mut properties = Map::new();
        for k in 0..pairs {
            let twin = json!({"type": "object", "description": format!("near duplicate {k}"),
                "properties": {"v": {"type": "string", "description": format!("value {k}")}}});
            properties.insert(format!("a{k}"), twin.clone());
            properties.insert(format!("b{k}"), twin);
        }
        let mut schema = json!({"type": "object", "properties": properties});
        for _ in 0..depth {
            schema = json!({"type": "array", "items": schema});
        }
        json!({"type": "object", "properties": {"x": schema}})
    }

    /// Put every `{"$ref": "#/$defs/sN"}` back: what the rewrite means.
    fn expand(value: &Value, defs: &Map<String, Value>) -> Value {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(target)) = map.get("$ref") {
                    let name = target.trim_start_matches("#/$defs/");
                    return expand(&defs[name], defs);
                }
                Value::Object(
                    map.iter()
                        .filter(|(k, _)| *k != "$defs")
                        .map(|(k, v)| (k.clone(), expand(v, defs)))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(|v| expand(v, defs)).collect()),
            other => other.clone(),
        }
    }

    #[test]
    fn the_search_stops_at_its_budget_with_a_rewrite_that_still_means_the_same() {
        let schema = hostile(24, 60);
        let size = compact(&schema).len();
        // Unbounded, one schema costs ~ size x depth x 32 hoists.
        let mut work = HoistWork::bytes(20 * size);
        let (hoisted, count) = hoist_within(&schema, &mut work);
        assert!(work.exhausted());
        assert!(
            work.spent <= work.limit + MAX_HOIST_SCHEMA_BYTES,
            "spent {} of {}",
            work.spent,
            work.limit
        );
        assert!(count < MAX_HOISTS_PER_TOOL, "{count}");
        let defs = hoisted
            .get("$defs")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        assert_eq!(expand(&hoisted, &defs), schema);
        // A spent budget searches nothing more, and says so in the savings.
        let (untouched, none) = hoist_within(&schema, &mut work);
        assert_eq!((untouched, none), (schema.clone(), 0));
        let server = ServerDefinitions {
            name: Some("s".into()),
            tools: vec![ToolDefinition {
                name: "t".into(),
                description: None,
                input_schema: schema,
            }],
            instructions: None,
        };
        let mut small = HoistWork::bytes(size);
        let partial = savings(
            std::slice::from_ref(&server),
            Tokenizer::O200kBase,
            Rendering::Anthropic,
            &mut small,
        );
        assert!(partial.hoisting.partial);
        assert!(partial.tokens_after <= partial.tokens_before);
        let whole = savings(
            &[server],
            Tokenizer::O200kBase,
            Rendering::Anthropic,
            &mut HoistWork::bytes(usize::MAX),
        );
        assert!(!whole.hoisting.partial);
        assert!(whole.hoisting.tokens_saved > partial.hoisting.tokens_saved);
    }

    #[test]
    fn pydantic_titles_and_schema_keys_go_and_meaningful_titles_stay() {
        let schema = json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "searchArguments", "type": "object", "properties": {
                "max_results": {"title": "Max Results", "type": "integer"},
                "mode": {"title": "How to match", "type": "string"}}});
        let (stripped, removed) = strip_unneeded(&schema);
        assert_eq!(removed, 3);
        assert_eq!(
            stripped,
            json!({"type": "object", "properties": {
                "max_results": {"type": "integer"},
                "mode": {"title": "How to match", "type": "string"}}})
        );
    }

    #[test]
    fn titles_in_other_scripts_are_compared_by_their_letters() {
        // Squashed to ASCII, `日付` and `開始日` were both empty: equal.
        let schema = json!({"type": "object", "properties": {
            "größe": {"title": "Größe", "type": "integer"},
            "開始日": {"title": "日付", "type": "string"},
            "when": {"anyOf": [{"title": "日付", "type": "string"}]}}});
        let (stripped, removed) = strip_unneeded(&schema);
        assert_eq!(removed, 1);
        assert_eq!(
            stripped,
            json!({"type": "object", "properties": {
                "größe": {"type": "integer"},
                "開始日": {"title": "日付", "type": "string"},
                "when": {"anyOf": [{"title": "日付", "type": "string"}]}}})
        );
    }
}
