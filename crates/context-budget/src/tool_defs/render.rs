//! A tool definition as the model receives it, and its tokens.

use serde_json::{Map, Value, json};

use super::{Rendering, ToolDefinition, compact};
use crate::Tokenizer;

/// One rendered tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub tokens: usize,
    /// Where the schema goes beyond what the counting rule covers.
    pub beyond_rule: Vec<String>,
}

/// The input schema as Claude Code sends it: as its MCP client received it. Claude
/// Code 2.1.328 keeps `$schema` (its recorded request carried it for all 60 tools of
/// the fleet's `big` server, 1,020 o200k tokens); dropping it is a saving the server's
/// author can make (`savings.unneeded_keys`), not something the client does.
pub fn model_schema(schema: &Value) -> Value {
    schema.clone()
}

/// The schema as `rendering` sends it.
pub fn rendered_schema(schema: &Value, rendering: Rendering) -> Value {
    match rendering {
        Rendering::Anthropic | Rendering::Openai => model_schema(schema),
        Rendering::Codex => super::client::codex_schema(schema),
        Rendering::GeminiCli => super::client::gemini_schema(schema),
        Rendering::CopilotCli => super::client::copilot_schema(schema),
    }
}

/// Claude Code's Messages API entry for a tool.
pub fn anthropic_entry(tool: &ToolDefinition, name: &str) -> Value {
    json!({
        "name": name,
        "description": tool.description.as_deref().unwrap_or_default(),
        "input_schema": model_schema(&tool.input_schema),
    })
}

/// Count `tool`, named `name`, in `rendering`.
pub fn render_tool(
    tool: &ToolDefinition,
    name: &str,
    tokenizer: Tokenizer,
    rendering: Rendering,
) -> Rendered {
    match rendering {
        Rendering::Anthropic => Rendered {
            tokens: tokenizer.count(&compact(&anthropic_entry(tool, name))),
            beyond_rule: Vec::new(),
        },
        Rendering::Openai => OpenAiRule::for_tokenizer(tokenizer).tool(tool, name, tokenizer),
        Rendering::Codex => Rendered {
            tokens: tokenizer.count(&compact(&super::client::codex_function(tool, name, false))),
            beyond_rule: Vec::new(),
        },
        Rendering::GeminiCli => Rendered {
            tokens: tokenizer.count(&compact(&super::client::gemini_declaration(tool, name))),
            beyond_rule: Vec::new(),
        },
        Rendering::CopilotCli => Rendered {
            tokens: tokenizer.count(&compact(&super::client::copilot_function(tool, name))),
            beyond_rule: Vec::new(),
        },
    }
}

/// The function-calling token rule of OpenAI's cookbook ("How to count tokens with
/// tiktoken", `num_tokens_for_tools`): a fixed count per function, per property and
/// per enum item, plus the tokens of `name:description` and of each top-level
/// property's `name:type:description`. It reads top-level properties only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenAiRule {
    pub func_init: usize,
    pub prop_init: usize,
    pub prop_key: usize,
    /// Negative in the cookbook (−3): an enum's opening replaces part of the property's.
    pub enum_init: isize,
    pub enum_item: usize,
    /// Once per request with tools.
    pub func_end: usize,
}

impl OpenAiRule {
    /// The cookbook's settings: gpt-3.5-turbo and gpt-4 (cl100k_base) start a function
    /// with 10 tokens, gpt-4o and later (o200k_base) with 7.
    pub fn for_tokenizer(tokenizer: Tokenizer) -> OpenAiRule {
        OpenAiRule {
            func_init: if tokenizer == Tokenizer::Cl100kBase {
                10
            } else {
                7
            },
            prop_init: 3,
            prop_key: 3,
            enum_init: -3,
            enum_item: 3,
            func_end: 12,
        }
    }

    fn tool(self, tool: &ToolDefinition, name: &str, tokenizer: Tokenizer) -> Rendered {
        let mut beyond = Vec::new();
        let description = tool.description.as_deref().unwrap_or_default();
        let description = description.strip_suffix('.').unwrap_or(description);
        let mut tokens =
            self.func_init as isize + tokenizer.count(&format!("{name}:{description}")) as isize;
        let schema = tool.input_schema.as_object();
        for key in ["$defs", "definitions", "anyOf", "oneOf", "allOf"] {
            if schema.is_some_and(|s| s.contains_key(key)) {
                beyond.push(format!("top-level `{key}` is not counted"));
            }
        }
        let properties = schema
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object);
        if let Some(properties) = properties.filter(|p| !p.is_empty()) {
            tokens += self.prop_init as isize;
            for (key, property) in properties {
                tokens += self.prop_key as isize;
                let empty = Map::new();
                let property = property.as_object().unwrap_or(&empty);
                let kind = match property.get("type") {
                    Some(Value::String(kind)) => kind.clone(),
                    Some(other) => {
                        beyond.push(format!("`{key}`: a type that is not one string"));
                        compact(other)
                    }
                    None => {
                        beyond.push(format!("`{key}`: no `type`"));
                        String::new()
                    }
                };
                if let Some(Value::Array(items)) = property.get("enum") {
                    tokens += self.enum_init;
                    for item in items {
                        let item = match item {
                            Value::String(text) => text.clone(),
                            other => compact(other),
                        };
                        tokens += (self.enum_item + tokenizer.count(&item)) as isize;
                    }
                }
                for nested in [
                    "properties",
                    "items",
                    "anyOf",
                    "oneOf",
                    "allOf",
                    "$ref",
                    "additionalProperties",
                ] {
                    if property.contains_key(nested) {
                        beyond.push(format!("`{key}`: `{nested}` is not counted"));
                    }
                }
                let description = property
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let description = description.strip_suffix('.').unwrap_or(description);
                tokens += tokenizer.count(&format!("{key}:{kind}:{description}")) as isize;
            }
        }
        Rendered {
            tokens: tokens.max(0) as usize,
            beyond_rule: beyond,
        }
    }
}
