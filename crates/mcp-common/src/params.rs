//! Tool arguments parsed into a structured INVALID_INPUT error instead of a JSON-RPC
//! error, with unknown argument names refused and the closest accepted one suggested.
//!
//! rmcp's `Parameters<T>` turns a missing or mistyped argument into JSON-RPC
//! `-32602`, which clients show as "tool result missing". Tools here take the raw
//! argument object, declare `T`'s schema explicitly ([`crate::schema`]), and call
//! [`parse_params`], so the model reads which field was wrong and what to send instead.

use rmcp::model::JsonObject;
use serde::de::DeserializeOwned;

use crate::{ErrorCode, ToolError};

/// Parse a tool's arguments, naming the offending field on failure.
///
/// An argument name `T` does not accept is refused (INVALID_INPUT, with the closest
/// accepted name as "did you mean"), whether or not `T` denies unknown fields itself:
/// a misspelt optional argument (`modle`) silently falling back to its default is a
/// wrong answer the caller cannot see. The accepted names are the ones serde accepts,
/// aliases included, read from `T`'s `Deserialize` (see [`accepted_names`]).
pub fn parse_params<T: DeserializeOwned>(
    tool: &str,
    args: Option<JsonObject>,
) -> Result<T, ToolError> {
    let args = args.unwrap_or_default();
    if let Some(accepted) = accepted_names::<T>()
        && let Some(unknown) = args.keys().find(|key| !accepted.contains(&key.as_str()))
    {
        return Err(unknown_argument(tool, unknown, accepted));
    }
    // serde_json names a missing field but not the field whose value has the wrong
    // type (`invalid type: integer `-5`, expected u64`); the path says which one.
    serde_path_to_error::deserialize(serde_json::Value::Object(args)).map_err(|e| {
        let path = e.path().to_string();
        let error = e.into_inner();
        let message = if path == "." {
            format!("invalid arguments for {tool}: {error}")
        } else {
            format!("invalid arguments for {tool}: `{path}`: {error}")
        };
        let tool_error = ToolError::new(
            ErrorCode::InvalidInput,
            message,
            format!("Check the arguments against the inputSchema of `{tool}` in tools/list."),
        );
        if path == "." {
            tool_error
        } else {
            tool_error.with_detail("field", &path)
        }
    })
}

/// Longest argument name an error message repeats; the name comes from the caller and
/// may be any length.
const MAX_ECHOED_NAME_CHARS: usize = 64;

/// Farthest (in edits) a name may be from an accepted one to be suggested: enough for
/// a typo or a case/separator slip (`modle`, `spec_Path`), not for a different word.
fn max_suggestion_distance(name: &str) -> usize {
    (name.chars().count() / 3).clamp(1, 3)
}

fn unknown_argument(tool: &str, unknown: &str, accepted: &[&str]) -> ToolError {
    let shown: String = if unknown.chars().count() > MAX_ECHOED_NAME_CHARS {
        let head: String = unknown.chars().take(MAX_ECHOED_NAME_CHARS).collect();
        format!("{head}…")
    } else {
        unknown.to_string()
    };
    // Only a name of at most MAX_ECHOED_NAME_CHARS is compared: the distance is
    // quadratic in the names' lengths, and the caller's may be any length.
    let closest = (unknown.chars().count() <= MAX_ECHOED_NAME_CHARS)
        .then(|| {
            accepted
                .iter()
                .map(|name| {
                    (
                        strsim::osa_distance(&unknown.to_lowercase(), &name.to_lowercase()),
                        *name,
                    )
                })
                .filter(|(distance, name)| *distance <= max_suggestion_distance(name))
                .min()
                .map(|(_, name)| name)
        })
        .flatten();
    let list = accepted
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let suggestion = match closest {
        Some(name) => format!("Did you mean `{name}`? `{tool}` accepts: {list}."),
        None => format!("`{tool}` accepts: {list}."),
    };
    let error = ToolError::new(
        ErrorCode::InvalidInput,
        format!("unknown argument `{shown}` for {tool}"),
        suggestion,
    )
    .with_detail("unknown_argument", &shown)
    .with_detail("available_options", accepted);
    match closest {
        Some(name) => error.with_detail("did_you_mean", name),
        None => error,
    }
}

/// The field names (aliases included) `T`'s derived `Deserialize` accepts, or `None`
/// when `T` is not a plain struct (a map, or a struct with `#[serde(flatten)]`, which
/// serde reads as a map: any name may be meant for the flattened part).
///
/// serde has no reflection, but a derived struct hands its complete name list to
/// `Deserializer::deserialize_struct`; this deserializer records it and stops.
pub fn accepted_names<T: DeserializeOwned>() -> Option<&'static [&'static str]> {
    let mut names = None;
    let _ = T::deserialize(FieldNames(&mut names));
    names
}

/// A deserializer that only records the field list of `deserialize_struct`.
struct FieldNames<'a>(&'a mut Option<&'static [&'static str]>);

#[derive(Debug)]
struct Recorded;

impl std::fmt::Display for Recorded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("field names recorded")
    }
}

impl std::error::Error for Recorded {}

impl serde::de::Error for Recorded {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        Recorded
    }
}

impl<'de> serde::Deserializer<'de> for FieldNames<'_> {
    type Error = Recorded;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Recorded> {
        Err(Recorded)
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Recorded> {
        *self.0 = Some(fields);
        Err(Recorded)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Params {
        /// The text.
        text: String,
        model: Option<String>,
    }

    fn object(value: serde_json::Value) -> Option<JsonObject> {
        value.as_object().cloned()
    }

    #[test]
    fn valid_arguments_parse() {
        let params: Params = parse_params("t", object(json!({"text": "hi"}))).expect("valid");
        assert_eq!(
            params,
            Params {
                text: "hi".into(),
                model: None
            }
        );
    }

    #[test]
    fn missing_or_mistyped_fields_are_invalid_input_naming_the_field() {
        let missing = parse_params::<Params>("count-tokens", None).expect_err("text is required");
        assert_eq!(missing.code, ErrorCode::InvalidInput);
        assert!(
            missing.message.contains("missing field `text`"),
            "{}",
            missing.message
        );
        assert!(missing.suggestion.contains("count-tokens"));
        let mistyped =
            parse_params::<Params>("t", object(json!({"text": 5}))).expect_err("wrong type");
        assert!(
            mistyped.message.contains("invalid type"),
            "{}",
            mistyped.message
        );
    }

    #[test]
    fn a_mistyped_value_names_its_field_and_path() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Budgeted {
            budget: Option<u64>,
            sections: Option<Vec<Section>>,
        }
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Section {
            name: String,
            budget: Option<u64>,
        }
        let negative = parse_params::<Budgeted>("assemble-context", object(json!({"budget": -5})))
            .expect_err("negative budget");
        assert_eq!(
            negative.message,
            "invalid arguments for assemble-context: `budget`: invalid value: integer `-5`, \
             expected u64"
        );
        assert_eq!(negative.details["field"], "budget");
        let nested = parse_params::<Budgeted>(
            "t",
            object(json!({"sections": [{"name": "a"}, {"name": "b", "budget": "x"}]})),
        )
        .expect_err("nested");
        assert!(
            nested
                .message
                .contains("`sections[1].budget`: invalid type"),
            "{}",
            nested.message
        );
    }

    #[test]
    fn unknown_argument_names_are_refused_with_the_closest_name() {
        // Params does not deny unknown fields itself: parse_params does, for every tool.
        let typo = parse_params::<Params>(
            "count-tokens",
            object(json!({"text": "hi", "modle": "gpt-4o"})),
        )
        .expect_err("a misspelt argument is not ignored");
        assert_eq!(typo.code, ErrorCode::InvalidInput);
        assert_eq!(typo.message, "unknown argument `modle` for count-tokens");
        assert!(
            typo.suggestion.starts_with("Did you mean `model`?"),
            "{}",
            typo.suggestion
        );
        assert_eq!(typo.details["did_you_mean"], "model");
        assert_eq!(typo.details["available_options"], json!(["text", "model"]));

        let unrelated =
            parse_params::<Params>("t", object(json!({"text": "hi", "temperature": 1})))
                .expect_err("unknown");
        assert_eq!(unrelated.details.get("did_you_mean"), None);
        assert_eq!(unrelated.suggestion, "`t` accepts: `text`, `model`.");
    }

    /// What suggestions rely on from strsim's optimal string alignment (checked equal
    /// to the hand-written distance it replaced): a swap of neighbours is one edit
    /// (`modle`), an edited swap is not (`ca` → `abc` is 3), and edits count chars.
    #[test]
    fn transpositions_are_one_edit() {
        use strsim::osa_distance;
        assert_eq!(osa_distance("modle", "model"), 1);
        assert_eq!(osa_distance("model", "model"), 0);
        assert_eq!(osa_distance("", "text"), 4);
        assert_eq!(osa_distance("kitten", "sitting"), 3);
        assert_eq!(osa_distance("ca", "abc"), 3);
        assert_eq!(osa_distance("modèle", "model"), 2);
        assert_eq!(osa_distance("김민수", "김수민"), 1);
    }

    #[test]
    fn aliases_are_accepted_names() {
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Aliased {
            #[serde(rename = "specPath", alias = "spec_path")]
            spec_path: Option<String>,
        }
        assert_eq!(
            accepted_names::<Aliased>(),
            Some(&["specPath", "spec_path"][..])
        );
        let parsed: Aliased = parse_params("t", object(json!({"spec_path": "59"}))).expect("alias");
        assert_eq!(parsed.spec_path.as_deref(), Some("59"));
        let typo =
            parse_params::<Aliased>("t", object(json!({"specpath": "59"}))).expect_err("typo");
        assert_eq!(typo.details["did_you_mean"], "specPath");
    }

    #[test]
    fn a_huge_unknown_name_is_not_echoed_whole() {
        let name = "x".repeat(100_000);
        let error = parse_params::<Params>("t", object(json!({ name.clone(): 1, "text": "hi" })))
            .expect_err("unknown");
        assert!(error.message.len() < 200, "{}", error.message.len());
        assert!(
            error
                .message
                .contains(&format!("`{}…`", "x".repeat(MAX_ECHOED_NAME_CHARS)))
        );
        assert_eq!(error.details.get("did_you_mean"), None);
    }
}
