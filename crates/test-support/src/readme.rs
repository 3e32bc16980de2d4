//! The docs' examples as checks (README.md and every `docs/*.md`): which code blocks
//! show a request, a response or a command line and its output, how a shown JSON
//! value is compared with a real one, and how a block is rewritten from a real run
//! (`--bless`); and the docs' relative links and `#anchors`, which must lead somewhere.
//!
//! A block is checked when an HTML comment right before it (blank lines between are
//! fine) says what it shows:
//!
//! | comment | the block |
//! |---|---|
//! | `<!-- check: request -->` | `{"name": tool, "arguments": {…}}`, run as a `tools/call` |
//! | `<!-- check: response -->` | the `structuredContent` of the last request |
//! | `<!-- check: response to {…} -->` | the same, for the request in the comment |
//! | `<!-- check: response fields -->` | some fields of it, as `"key": value, …` |
//! | `<!-- check: cli -->` | `$ context-loader ARGS` lines, each followed by its stdout |
//! | `<!-- check: skip REASON -->` | not output (a config file): not run |
//!
//! Every ```` ```json ```` block must carry one of these, so a new example cannot
//! slip in unchecked. A shown value may leave parts out, visibly, with `"…"`: an
//! array element `"…"` stands for any number of elements there, and a string ending
//! in `…` for the rest of the string. Everything shown must be what the run gives:
//! nothing else is normalized (no output here varies between runs).

use serde_json::{Map, Value};

/// What a checked block shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Shows {
    Request,
    /// The last request's result, whole (`fields: false`) or some fields.
    Response {
        fields: bool,
        /// A request given in the comment instead of a block.
        request: Option<Value>,
    },
    Cli,
    Skip,
}

/// One checked block: what it shows, its body, and its line range in its document
/// (0-based, body lines only: the fences excluded).
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub shows: Shows,
    pub body: String,
    pub lines: std::ops::Range<usize>,
    /// Line of the marker comment, for messages.
    pub marker_line: usize,
}

/// The checked blocks of a document, in order; an error names each JSON block without
/// a marker and each marker without a block.
pub fn blocks(readme: &str) -> Result<Vec<Block>, String> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut blocks = Vec::new();
    let mut problems = Vec::new();
    let mut pending: Option<(Shows, usize)> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if let Some(marker) = line
            .strip_prefix("<!-- check:")
            .and_then(|rest| rest.strip_suffix("-->"))
        {
            if let Some((_, at)) = pending.take() {
                problems.push(format!("line {}: a check comment without a block", at + 1));
            }
            match parse_marker(marker.trim()) {
                Ok(shows) => pending = Some((shows, i)),
                Err(e) => problems.push(format!("line {}: {e}", i + 1)),
            }
            i += 1;
            continue;
        }
        if let Some(fence) = fence_of(line) {
            let info = line[fence.len()..].trim();
            let start = i + 1;
            let mut end = start;
            while end < lines.len() && lines[end].trim() != fence {
                end += 1;
            }
            let body = lines[start..end.min(lines.len())].join("\n");
            match pending.take() {
                Some((shows, marker_line)) => blocks.push(Block {
                    shows,
                    body,
                    lines: start..end,
                    marker_line,
                }),
                None if info == "json" => problems.push(format!(
                    "line {}: a JSON block without a `<!-- check: … -->` comment",
                    i + 1
                )),
                None => {}
            }
            i = end + 1;
            continue;
        }
        if !line.is_empty()
            && let Some((_, at)) = pending.take()
        {
            problems.push(format!("line {}: a check comment without a block", at + 1));
        }
        i += 1;
    }
    if let Some((_, at)) = pending {
        problems.push(format!("line {}: a check comment without a block", at + 1));
    }
    if problems.is_empty() {
        Ok(blocks)
    } else {
        Err(problems.join("\n"))
    }
}

/// The fence that opens a code block on this line (three or more backticks).
fn fence_of(line: &str) -> Option<&str> {
    let ticks = line.len() - line.trim_start_matches('`').len();
    (ticks >= 3).then(|| &line[..ticks])
}

fn parse_marker(marker: &str) -> Result<Shows, String> {
    let (word, rest) = marker.split_once(' ').unwrap_or((marker, ""));
    let rest = rest.trim();
    match (word, rest) {
        ("request", "") => Ok(Shows::Request),
        ("response", "") => Ok(Shows::Response {
            fields: false,
            request: None,
        }),
        ("response", "fields") => Ok(Shows::Response {
            fields: true,
            request: None,
        }),
        ("response", to) if to.starts_with("to ") => {
            let request = serde_json::from_str(&to[3..])
                .map_err(|e| format!("the request in `response to` is not JSON: {e}"))?;
            Ok(Shows::Response {
                fields: false,
                request: Some(request),
            })
        }
        ("cli", "") => Ok(Shows::Cli),
        ("skip", reason) if !reason.is_empty() => Ok(Shows::Skip),
        _ => Err(format!(
            "unknown check comment `{marker}` (request | response [fields | to {{…}}] | cli | skip REASON)"
        )),
    }
}

/// The JSON a response block shows: the whole value, or (`fields`) an object of the
/// `"key": value` pairs written without their braces.
pub fn shown_json(block: &Block) -> Result<Value, String> {
    let fields = matches!(block.shows, Shows::Response { fields: true, .. });
    let text = if fields {
        format!("{{{}}}", block.body)
    } else {
        block.body.clone()
    };
    serde_json::from_str(&text)
        .map_err(|e| format!("line {}: the block is not JSON: {e}", block.lines.start + 1))
}

/// The part of `actual` a `fields` block shows: the same keys.
pub fn same_fields(shown: &Value, actual: &Value) -> Value {
    let keys = shown
        .as_object()
        .map(|o| o.keys().cloned().collect::<Vec<_>>());
    let picked: Map<String, Value> = keys
        .unwrap_or_default()
        .into_iter()
        .filter_map(|k| actual.get(&k).map(|v| (k, v.clone())))
        .collect();
    Value::Object(picked)
}

/// The elision mark.
pub const ELIDED: &str = "…";

/// Where `shown` differs from `actual` (a JSON-pointer-like path), or `None` when
/// every part shown is what `actual` has (see the module docs for `"…"`).
pub fn mismatch(shown: &Value, actual: &Value) -> Option<String> {
    mismatch_at(shown, actual, "")
}

fn mismatch_at(shown: &Value, actual: &Value, path: &str) -> Option<String> {
    let here = |what: String| {
        Some(format!(
            "{}: {what}",
            if path.is_empty() { "/" } else { path }
        ))
    };
    match (shown, actual) {
        (Value::String(s), Value::String(a)) => match s.strip_suffix(ELIDED) {
            Some(prefix) if !prefix.is_empty() && a.starts_with(prefix) => None,
            _ if s == a => None,
            _ => here(format!("shown {s:?}, actual {a:?}")),
        },
        (Value::Array(s), Value::Array(a)) => {
            let (head, tail) = split_elided(s);
            let elided = tail.is_some();
            let tail = tail.unwrap_or(&[]);
            let fits = if elided {
                head.len() + tail.len() <= a.len()
            } else {
                head.len() == a.len()
            };
            if !fits {
                return here(format!(
                    "shown {} elements{}, actual {}",
                    head.len() + tail.len(),
                    if elided { " and more" } else { "" },
                    a.len()
                ));
            }
            let tail_start = a.len() - tail.len();
            head.iter()
                .zip(a)
                .enumerate()
                .chain(
                    tail.iter()
                        .zip(&a[tail_start..])
                        .enumerate()
                        .map(|(i, p)| (tail_start + i, p)),
                )
                .find_map(|(i, (s, a))| mismatch_at(s, a, &format!("{path}/{i}")))
        }
        (Value::Object(s), Value::Object(a)) => {
            let missing: Vec<&String> = a.keys().filter(|k| !s.contains_key(*k)).collect();
            let extra: Vec<&String> = s.keys().filter(|k| !a.contains_key(*k)).collect();
            if !missing.is_empty() || !extra.is_empty() {
                return here(format!(
                    "fields not shown {missing:?}, shown but absent {extra:?}"
                ));
            }
            s.iter()
                .find_map(|(k, v)| mismatch_at(v, &a[k], &format!("{path}/{k}")))
        }
        (Value::Number(s), Value::Number(a)) if s.as_f64() == a.as_f64() => None,
        _ if shown == actual => None,
        _ => here(format!("shown {shown}, actual {actual}")),
    }
}

/// An array's elements before and after its `"…"` element (`None`: no `"…"`).
fn split_elided(items: &[Value]) -> (&[Value], Option<&[Value]>) {
    match items.iter().position(|v| v.as_str() == Some(ELIDED)) {
        Some(at) => (&items[..at], Some(&items[at + 1..])),
        None => (items, None),
    }
}

/// What a block should show now: `actual`, left out where `shown` leaves out (same
/// number of elements around a `"…"`, same length of a string before its `…`).
pub fn bless(shown: &Value, actual: &Value) -> Value {
    match (shown, actual) {
        (Value::String(s), Value::String(a)) => match s.strip_suffix(ELIDED) {
            Some(prefix) if !prefix.is_empty() && a.chars().count() > prefix.chars().count() => {
                let kept: String = a.chars().take(prefix.chars().count()).collect();
                Value::String(format!("{kept}{ELIDED}"))
            }
            _ => actual.clone(),
        },
        (Value::Array(s), Value::Array(a)) => {
            let (head, tail) = split_elided(s);
            let Some(tail) = tail else {
                return Value::Array(
                    a.iter()
                        .enumerate()
                        .map(|(i, a)| s.get(i).map_or_else(|| a.clone(), |s| bless(s, a)))
                        .collect(),
                );
            };
            if head.len() + tail.len() >= a.len() {
                return actual.clone();
            }
            let mut out: Vec<Value> = head.iter().zip(a).map(|(s, a)| bless(s, a)).collect();
            out.push(Value::String(ELIDED.into()));
            let tail_start = a.len() - tail.len();
            out.extend(tail.iter().zip(&a[tail_start..]).map(|(s, a)| bless(s, a)));
            Value::Array(out)
        }
        (Value::Object(s), Value::Object(a)) => Value::Object(
            a.iter()
                .map(|(k, v)| {
                    let blessed = s.get(k).map_or_else(|| v.clone(), |s| bless(s, v));
                    (k.clone(), blessed)
                })
                .collect(),
        ),
        _ => actual.clone(),
    }
}

/// Widest line [`format`] puts a value on before breaking it up.
const WIDTH: usize = 140;

/// JSON as the docs write it: an object or array that fits on one line (with its
/// indentation) stays on one, `{ "a": 1 }`; a larger one has one entry a line.
pub fn format(value: &Value) -> String {
    format_at(value, 0)
}

/// A `fields` block's body: the object's entries without its braces.
pub fn format_fields(value: &Value) -> String {
    let Some(object) = value.as_object() else {
        return format(value);
    };
    object
        .iter()
        .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), format_at(v, 0)))
        .collect::<Vec<_>>()
        .join(",\n")
}

fn format_at(value: &Value, indent: usize) -> String {
    let one_line = compact(value);
    if indent + one_line.len() <= WIDTH {
        return one_line;
    }
    let pad = " ".repeat(indent + 2);
    let close = " ".repeat(indent);
    match value {
        Value::Array(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|v| format!("{pad}{}", format_at(v, indent + 2)))
                .collect();
            format!("[\n{}\n{close}]", items.join(",\n"))
        }
        Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| {
                    let key = Value::String(k.clone()).to_string();
                    format!("{pad}{key}: {}", format_at(v, indent + 2))
                })
                .collect();
            format!("{{\n{}\n{close}}}", items.join(",\n"))
        }
        _ => one_line,
    }
}

/// One line, with spaces inside braces and after separators, as the docs write.
fn compact(value: &Value) -> String {
    match value {
        Value::Array(items) if items.is_empty() => "[]".into(),
        Value::Object(map) if map.is_empty() => "{}".into(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(compact).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), compact(v)))
                .collect();
            format!("{{ {} }}", items.join(", "))
        }
        _ => value.to_string(),
    }
}

/// The commands of a `cli` block and the output shown under each:
/// `$ context-loader count hi` then its stdout lines.
pub fn cli_commands(body: &str) -> Result<Vec<(Vec<String>, String)>, String> {
    let mut commands: Vec<(Vec<String>, Vec<&str>)> = Vec::new();
    for line in body.lines() {
        match line.strip_prefix("$ ") {
            Some(command) => {
                let words = split_words(command)?;
                let program = words.first().map(String::as_str).unwrap_or_default();
                if !program.ends_with("context-loader") {
                    return Err(format!(
                        "only context-loader commands are checked: `{command}`"
                    ));
                }
                commands.push((words[1..].to_vec(), Vec::new()));
            }
            None => match commands.last_mut() {
                Some((_, output)) => output.push(line),
                None => return Err(format!("output before any `$ ` command: `{line}`")),
            },
        }
    }
    Ok(commands
        .into_iter()
        .map(|(args, output)| (args, output.join("\n")))
        .collect())
}

/// Shell words: spaces separate, `"…"` and `'…'` group, `\` escapes in `"…"` and
/// outside quotes. No pipes, redirections or variables: a checked command is one
/// plain invocation.
fn split_words(command: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err(format!("unclosed ' in `{command}`")),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => w.extend(chars.next()),
                        Some(c) => w.push(c),
                        None => return Err(format!("unclosed \" in `{command}`")),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            '|' | '<' | '>' | '$' | '`' | ';' | '&' => {
                return Err(format!(
                    "`{c}` is not supported in a checked command: `{command}`"
                ));
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

/// `readme` (any checked document) with each `(lines, new body)` replacing those body
/// lines.
pub fn replace_bodies(readme: &str, replacements: &[(std::ops::Range<usize>, String)]) -> String {
    let lines: Vec<&str> = readme.lines().collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut next = 0;
    let mut sorted: Vec<&(std::ops::Range<usize>, String)> = replacements.iter().collect();
    sorted.sort_by_key(|(range, _)| range.start);
    for (range, body) in sorted {
        out.extend(lines[next..range.start].iter().map(|l| l.to_string()));
        out.extend(body.lines().map(str::to_string));
        next = range.end;
    }
    out.extend(lines[next..].iter().map(|l| l.to_string()));
    let mut text = out.join("\n");
    if readme.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// The relative links of a Markdown document, as `(line, target)` (line 0-based):
/// every `](target)` outside code blocks and inline code, except web and mail
/// addresses. A target is a path relative to the document, an `#anchor` in it, or
/// both (`docs/tools.md#mcp-tokens`).
pub fn links(markdown: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (at, line) in prose_lines(markdown) {
        let line = without_inline_code(line);
        let mut rest = line.as_str();
        while let Some(start) = rest.find("](") {
            rest = &rest[start + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            let target = rest[..end].trim();
            let external = ["http://", "https://", "mailto:"]
                .iter()
                .any(|scheme| target.starts_with(scheme));
            if !target.is_empty() && !external {
                out.push((at, target.to_string()));
            }
            rest = &rest[end..];
        }
    }
    out
}

/// The anchors a Markdown document defines: each heading's slug as GitHub makes it
/// (a repeated slug gets `-1`, `-2`, …) and each `<a id="…">`.
pub fn anchors(markdown: &str) -> std::collections::BTreeSet<String> {
    let mut anchors = std::collections::BTreeSet::new();
    let mut seen: std::collections::BTreeMap<String, usize> = Default::default();
    for (_, line) in prose_lines(markdown) {
        let trimmed = line.trim_start();
        let hashes = trimmed.len() - trimmed.trim_start_matches('#').len();
        if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
            let base = slug(trimmed[hashes..].trim().trim_end_matches('#'));
            let n = seen.entry(base.clone()).or_insert(0);
            anchors.insert(match *n {
                0 => base.clone(),
                n => format!("{base}-{n}"),
            });
            *n += 1;
        }
        let mut rest = line;
        while let Some(start) = rest.find("<a id=\"") {
            rest = &rest[start + 7..];
            if let Some(end) = rest.find('"') {
                anchors.insert(rest[..end].to_string());
            }
        }
    }
    anchors
}

/// A heading's anchor as GitHub makes it: lower case, every character that is not a
/// letter, digit, `_`, `-` or space dropped, spaces made `-`.
pub fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The lines of a document outside fenced code blocks, with their 0-based numbers.
fn prose_lines(markdown: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    for (at, line) in markdown.lines().enumerate() {
        let trimmed = line.trim();
        match fence {
            Some(open) if trimmed == open => fence = None,
            Some(_) => {}
            None => match fence_of(trimmed) {
                Some(open) => fence = Some(open),
                None => out.push((at, line)),
            },
        }
    }
    out
}

/// A line with its inline code spans (`` `…` ``, ``` ``…`` ```) taken out.
fn without_inline_code(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let ticks = rest[start..].len() - rest[start..].trim_start_matches('`').len();
        let after = &rest[start + ticks..];
        let closing = "`".repeat(ticks);
        match after.find(&closing) {
            Some(end) => rest = &after[end + ticks..],
            None => {
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const README: &str = "# T\n\n<!-- check: request -->\n```json\n{\"name\": \"count-tokens\", \"arguments\": {\"text\": \"hi\"}}\n```\n\n<!-- check: response fields -->\n```json\n\"token_count\": 1\n```\n\n<!-- check: cli -->\n```console\n$ context-loader count \"a b\"\n2 tokens\n```\n";

    #[test]
    fn markers_name_the_blocks_after_them() {
        let blocks = blocks(README).expect("valid");
        assert_eq!(blocks.len(), 3);
        assert_eq!(blocks[0].shows, Shows::Request);
        assert_eq!(blocks[0].lines, 4..5);
        assert_eq!(
            shown_json(&blocks[1]).expect("json"),
            json!({"token_count": 1})
        );
        assert_eq!(
            cli_commands(&blocks[2].body).expect("cli"),
            vec![(
                vec!["count".to_string(), "a b".to_string()],
                "2 tokens".to_string()
            )]
        );
    }

    #[test]
    fn an_unmarked_json_block_or_a_stray_marker_is_refused() {
        let error = blocks("```json\n{}\n```\n").expect_err("unmarked");
        assert!(error.contains("line 1: a JSON block without"), "{error}");
        let error = blocks("<!-- check: response -->\ntext\n").expect_err("stray");
        assert!(error.contains("without a block"), "{error}");
        let error = blocks("<!-- check: maybe -->\n```json\n{}\n```\n").expect_err("unknown");
        assert!(error.contains("unknown check comment"), "{error}");
        // Other languages need no marker (build commands, config snippets).
        assert_eq!(blocks("```sh\ncargo build\n```\n"), Ok(vec![]));
    }

    #[test]
    fn shown_values_must_be_the_actual_ones_except_where_elided() {
        let actual = json!({"a": [1, 2, 3, 4], "s": "a long source", "n": 0.5});
        assert_eq!(
            mismatch(
                &json!({"a": [1, 2, 3, 4], "s": "a long source", "n": 0.5}),
                &actual
            ),
            None
        );
        assert_eq!(
            mismatch(
                &json!({"a": [1, "…", 4], "s": "a long…", "n": 0.5}),
                &actual
            ),
            None
        );
        assert_eq!(
            mismatch(
                &json!({"a": ["…"], "s": "a long source", "n": 5e-1}),
                &actual
            ),
            None
        );
        assert!(
            mismatch(
                &json!({"a": [2, "…"], "s": "a long source", "n": 0.5}),
                &actual
            )
            .is_some_and(|m| m.starts_with("/a/0"))
        );
        assert!(
            mismatch(
                &json!({"a": [1, 2, 3], "s": "a long source", "n": 0.5}),
                &actual
            )
            .is_some()
        );
        assert!(mismatch(&json!({"a": [1, 2, 3, 4], "s": "b…", "n": 0.5}), &actual).is_some());
        // A field left out is a mismatch: objects are shown whole.
        assert!(
            mismatch(&json!({"a": [1, 2, 3, 4], "s": "a long source"}), &actual)
                .is_some_and(|m| m.contains("\"n\""))
        );
    }

    #[test]
    fn blessing_keeps_the_shape_of_what_was_left_out() {
        let actual = json!({"a": [10, 20, 30, 40], "s": "new long source", "b": true});
        let shown = json!({"a": [1, "…", 4], "s": "old…"});
        assert_eq!(
            bless(&shown, &actual),
            json!({"a": [10, "…", 40], "s": "new…", "b": true})
        );
        assert_eq!(mismatch(&bless(&shown, &actual), &actual), None);
    }

    #[test]
    fn formatting_keeps_short_values_on_one_line() {
        let value =
            json!({"name": "x", "items": [{"a": 1}, {"b": [1, 2]}], "long": "y".repeat(120)});
        assert_eq!(
            format(&value),
            format!(
                "{{\n  \"name\": \"x\",\n  \"items\": [{{ \"a\": 1 }}, {{ \"b\": [1, 2] }}],\n  \"long\": \"{}\"\n}}",
                "y".repeat(120)
            )
        );
        assert_eq!(
            format_fields(&json!({"a": 1, "b": {}})),
            "\"a\": 1,\n\"b\": {}"
        );
    }

    #[test]
    fn commands_split_like_a_shell_and_refuse_what_a_shell_would_interpret() {
        assert_eq!(
            split_words(r#"context-loader count --model gpt-4o "How many \"tokens\"?" 'it''s'"#),
            Ok(vec![
                "context-loader",
                "count",
                "--model",
                "gpt-4o",
                "How many \"tokens\"?",
                "its"
            ]
            .into_iter()
            .map(String::from)
            .collect())
        );
        assert!(split_words("context-loader count < notes.md").is_err());
        assert!(cli_commands("$ cat x").is_err());
    }

    #[test]
    fn bodies_are_replaced_by_line_range() {
        let text = "a\nb\nc\nd\n";
        assert_eq!(
            replace_bodies(text, &[(1..3, "X\nY\nZ".into())]),
            "a\nX\nY\nZ\nd\n"
        );
    }

    #[test]
    fn links_outside_code_and_the_anchors_headings_make() {
        let doc = "# Tools\n\n## `count-tools` (CLI: count)\n\nSee [`x`](../a.md#b-c) and \
                   [web](https://e.org) `[no](code.md)`.\n\n```sh\n# not a heading [x](y.md)\n```\n\
                   ## Tools\n<a id=\"abandoned-calls\"></a>**A.** [here](#tools-1)\n";
        assert_eq!(
            links(doc),
            vec![(4, "../a.md#b-c".to_string()), (10, "#tools-1".to_string())]
        );
        let anchors = anchors(doc);
        assert_eq!(
            anchors.into_iter().collect::<Vec<_>>(),
            [
                "abandoned-calls",
                "count-tools-cli-count",
                "tools",
                "tools-1"
            ]
        );
        assert_eq!(
            slug("Models file (`--models-file`)"),
            "models-file---models-file"
        );
        assert_eq!(
            slug("What the model receives, and how big it may be"),
            "what-the-model-receives-and-how-big-it-may-be"
        );
    }
}
