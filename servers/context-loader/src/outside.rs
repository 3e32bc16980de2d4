//! Text from outside (a server's error or stderr, a file or model name, a section
//! name) is data: capped, and printed so it can never act on the terminal. One policy
//! for every table cell, message and line the CLI prints:
//!
//! - control characters (C0, DEL, C1: escape sequences, OSC 52 clipboard writes,
//!   cursor moves, carriage returns) and the bidirectional overrides that reorder what
//!   is shown ("Trojan Source") are written as escapes: `\n`, `\r`, `\t`, `\u{1b}`;
//! - a cell or message over its cap keeps its start and end and says how much was
//!   cut in between. comfy-table keeps widths in 16 bits: a cell over 65,535
//!   characters was printed one character per line, in quadratic time.

use std::borrow::Cow;
use std::fmt::Write;

/// Most characters of a table cell (a file path is at most 4,096 bytes; longer text
/// is an error message, whole in `--json`).
pub const MAX_CELL_CHARS: usize = 1_024;
/// Most characters of one message (an error, a warning) on the terminal.
pub const MAX_MESSAGE_CHARS: usize = 2_000;

/// `text` as one terminal line of at most `max` characters (escapes included).
pub fn line(text: &str, max: usize) -> Cow<'_, str> {
    let escaped = escape(text, false);
    match escaped {
        Cow::Borrowed(text) => cap(text, max),
        Cow::Owned(text) => Cow::Owned(cap(&text, max).into_owned()),
    }
}

/// `text` with its lines kept and every other control character escaped: for what we
/// laid out ourselves (a table, a report) with outside text in it.
pub fn lines(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

/// `text` cut to at most `max` characters: its start and end, with the number of
/// characters left out between them.
pub fn cap(text: &str, max: usize) -> Cow<'_, str> {
    // Bytes bound characters: most text passes here without a count.
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let total = text.chars().count();
    if total <= max {
        return Cow::Borrowed(text);
    }
    // The marker's length depends on the count it shows; 40 is room for any.
    let keep = max.saturating_sub(40);
    let head = keep / 2;
    let tail = keep - head;
    let cut = total - head - tail;
    let start = text.char_indices().nth(head).map_or(text.len(), |(i, _)| i);
    let end = text
        .char_indices()
        .nth(total - tail)
        .map_or(text.len(), |(i, _)| i);
    let mut out = String::with_capacity(start + (text.len() - end) + 40);
    out.push_str(&text[..start]);
    let _ = write!(out, " …[{cut} characters cut]… ");
    out.push_str(&text[end..]);
    Cow::Owned(out)
}

/// Whether `c` must not reach a terminal as itself.
fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

fn escape(text: &str, keep_newlines: bool) -> Cow<'_, str> {
    let unsafe_here = |c: char| unsafe_char(c) && !(keep_newlines && c == '\n');
    // Printable ASCII and newlines, the usual case: nothing to do.
    let Some(first) = text.find(unsafe_here) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        match c {
            c if !unsafe_here(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_sequences_are_shown_not_run() {
        let osc52 = "ok\u{1b}]52;c;cHduZWQ=\u{7}\r\nfake row\u{202E}gpj.exe";
        assert_eq!(
            line(osc52, 200),
            "ok\\u{1b}]52;c;cHduZWQ=\\u{7}\\r\\nfake row\\u{202e}gpj.exe"
        );
        assert_eq!(lines("a\nb\u{1b}[2J"), "a\nb\\u{1b}[2J");
        // Text beyond ASCII is kept as it is.
        assert!(matches!(line("файл 文件.rs", 100), Cow::Borrowed(_)));
    }

    #[test]
    fn long_text_keeps_its_ends_and_says_how_much_was_cut() {
        let text = format!("start{}end", "é".repeat(1_000_000));
        let capped = line(&text, MAX_CELL_CHARS);
        assert!(capped.chars().count() <= MAX_CELL_CHARS, "{}", capped.len());
        assert!(capped.starts_with("startéé") && capped.ends_with("éend"));
        assert!(capped.contains("characters cut]"), "{capped}");
        let short = "x".repeat(MAX_CELL_CHARS);
        assert_eq!(cap(&short, MAX_CELL_CHARS), short);
    }
}
