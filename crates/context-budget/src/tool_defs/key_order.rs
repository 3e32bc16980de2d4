//! The order in which a client writes a schema's keys: a leaf both renderings read
//! (Claude Code's in `render`, the order Gemini CLI rebuilds in `client`).

use serde_json::{Map, Value};

/// A schema's top-level keys in the order Claude Code's client rebuilds them when the
/// server speaks a protocol of the `initialize` era (2025-11-25 and before): `type`,
/// `properties` and `required` first, then the rest as listed. Its older client parses
/// the schema with an object validator that writes the keys it knows first; with
/// `server/discover` (2026-07-28) the schema goes out as listed. Recorded: a
/// `{"properties":{},"type":"object"}` listing was sent as
/// `{"type":"object","properties":{}}`, one o200k token more.
pub fn legacy_client_key_order(schema: &Value) -> Value {
    let Value::Object(listed) = schema else {
        return schema.clone();
    };
    let mut ordered = Map::with_capacity(listed.len());
    for key in LEGACY_CLIENT_KEYS_FIRST {
        if let Some(value) = listed.get(key) {
            ordered.insert(key.to_string(), value.clone());
        }
    }
    for (key, value) in listed {
        if !LEGACY_CLIENT_KEYS_FIRST.contains(&key.as_str()) {
            ordered.insert(key.clone(), value.clone());
        }
    }
    Value::Object(ordered)
}

/// The schema keys Claude Code's `initialize`-era client writes before any other.
const LEGACY_CLIENT_KEYS_FIRST: [&str; 3] = ["type", "properties", "required"];

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tool_defs::compact;

    #[test]
    fn the_legacy_client_order_puts_type_properties_required_first_and_keeps_the_rest() {
        // What Claude Code 2.1.328 sent for the fleet's `order` server (raw listing).
        let listed: Value = serde_json::from_str(
            r#"{"additionalProperties":false,"properties":{"a":{"description":"An a","type":"string"}},"title":"Mixed","required":["a"],"type":"object","description":"Top","$defs":{"x":{"type":"string"}}}"#,
        )
        .unwrap();
        assert_eq!(
            compact(&legacy_client_key_order(&listed)),
            r#"{"type":"object","properties":{"a":{"description":"An a","type":"string"}},"required":["a"],"additionalProperties":false,"title":"Mixed","description":"Top","$defs":{"x":{"type":"string"}}}"#
        );
        let bare = json!({"type": "object"});
        assert_eq!(legacy_client_key_order(&bare), bare);
        assert_eq!(legacy_client_key_order(&json!(true)), json!(true));
    }
}
