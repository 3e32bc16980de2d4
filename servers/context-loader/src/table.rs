//! Tables a person reads on a terminal: each column as wide as its widest cell
//! (comfy-table), numbers right-aligned, no borders. Hand-padded format strings broke
//! as soon as a value outgrew its guessed width (an encoding named
//! `claude_4_7_estimate` in the models table).

use comfy_table::{CellAlignment, ColumnConstraint, Table, TableComponent, Width, presets};

/// `rows` under `headers`, the columns listed in `right` right-aligned; lines joined
/// with `\n`, no trailing spaces. Every cell is outside text to it: escaped and capped
/// ([`crate::outside`]), so one cell is one line of bounded width.
pub fn table(
    headers: &[&str],
    right: &[usize],
    rows: impl IntoIterator<Item = Vec<String>>,
) -> String {
    let mut table = Table::new();
    table.load_preset(presets::NOTHING);
    // No borders, no line under the header.
    table.remove_style(TableComponent::LeftBorder);
    table.remove_style(TableComponent::RightBorder);
    table.remove_style(TableComponent::HeaderLines);
    table.set_header(headers.iter().copied());
    for row in rows {
        table.add_row(
            row.iter()
                .map(|cell| crate::outside::line(cell, crate::outside::MAX_CELL_CHARS)),
        );
    }
    let last = headers.len().saturating_sub(1);
    for (i, column) in table.column_iter_mut().enumerate() {
        // Two spaces between columns, none around the table.
        column.set_padding((0, if i == last { 0 } else { 2 }));
        column.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(1)));
        if right.contains(&i) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
        .lines()
        .map(|line| line.trim_end().to_string())
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// H2: a megabyte of hostile text in every column at once comes out as one row of
    /// bounded width, escaped (before: one character per line, quadratic time).
    #[test]
    fn a_megabyte_cell_in_every_column_is_one_escaped_capped_line() {
        let hostile = format!("\u{1b}]52;c;eA==\u{7}{}\nfake", "ж".repeat(1 << 20));
        let text = table(
            &["a", "b", "c"],
            &[1],
            [vec![hostile.clone(); 3], vec!["x".into(); 3]],
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "header and two rows");
        assert!(lines[1].chars().count() <= 3 * (crate::outside::MAX_CELL_CHARS + 2));
        assert!(
            !text.contains('\u{1b}') && text.contains("\\u{1b}]52"),
            "escaped"
        );
        assert_eq!(lines[1].matches("characters cut]").count(), 3);
    }

    #[test]
    fn columns_fit_their_widest_cell_and_numbers_align_right() {
        let text = table(
            &["model", "encoding", "window"],
            &[2],
            [
                vec!["gpt-4o".into(), "o200k_base".into(), "128000".into()],
                vec![
                    "claude-opus-4-7".into(),
                    "claude_4_7_estimate".into(),
                    "1000000".into(),
                ],
            ],
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].starts_with("model"), "{text}");
        // Every row's columns start at the same offsets.
        let at = |line: &str, word: &str| line.find(word).expect(word);
        assert_eq!(
            at(lines[1], "o200k_base"),
            at(lines[2], "claude_4_7_estimate")
        );
        assert_eq!(lines[1].len(), lines[2].len(), "{text}");
    }
}
