//! Which files have an outline, and each language's rules: its grammar, the nodes
//! whose bodies are elided, and how a marker is written in its comment syntax. A
//! leaf of `outline/`.

/// A language with an outline: tree-sitter grammars, and Markdown's headings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Java,
    C,
    Cpp,
    Markdown,
}

/// How a language's elided body is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BodyStyle {
    /// `{ ... }`: the inside of the braces becomes `/* … lines a-b … */`.
    Braces,
    /// Python's indented block: its statements (after a docstring) become
    /// `...  # … lines a-b …`, which keeps the definition valid Python.
    Indented,
}

impl Language {
    /// The language of a file, by its extension; `None` for every other file.
    pub fn of(path: &str) -> Option<Language> {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let (_, ext) = name.rsplit_once('.')?;
        Some(match ext.to_ascii_lowercase().as_str() {
            "rs" => Language::Rust,
            "py" | "pyi" => Language::Python,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            "java" => Language::Java,
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => Language::Cpp,
            "md" | "markdown" => Language::Markdown,
            _ => return None,
        })
    }

    /// Its name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Go => "go",
            Language::Java => "java",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::Markdown => "markdown",
        }
    }

    /// Its tree-sitter grammar; `None` for Markdown (pulldown-cmark reads it).
    pub fn grammar(self) -> Option<tree_sitter::Language> {
        Some(match self {
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
            Language::C => tree_sitter_c::LANGUAGE.into(),
            Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Language::Markdown => return None,
        })
    }

    /// The kinds of node whose `body` field is elided: functions, methods,
    /// constructors, closures. Types, fields, signatures, imports and comments are
    /// never elided; a class's or an `impl`'s body is kept, its methods' bodies not.
    pub(super) fn function_kinds(self) -> &'static [&'static str] {
        match self {
            Language::Rust => &["function_item", "closure_expression"],
            Language::Python => &["function_definition"],
            Language::JavaScript | Language::TypeScript | Language::Tsx => &[
                "function_declaration",
                "generator_function_declaration",
                "function_expression",
                "function",
                "generator_function",
                "arrow_function",
                "method_definition",
            ],
            Language::Go => &["function_declaration", "method_declaration", "func_literal"],
            Language::Java => &[
                "method_declaration",
                "constructor_declaration",
                "compact_constructor_declaration",
                "lambda_expression",
            ],
            Language::C => &["function_definition"],
            Language::Cpp => &["function_definition", "lambda_expression"],
            Language::Markdown => &[],
        }
    }

    pub(super) fn body_style(self) -> BodyStyle {
        match self {
            Language::Python => BodyStyle::Indented,
            _ => BodyStyle::Braces,
        }
    }

    /// The marker that replaces the elided lines `first..=last` (1-based, as an
    /// editor numbers them), in the language's comment syntax.
    pub fn marker(self, first: u64, last: u64) -> String {
        match self {
            Language::Python => format!("...  # … lines {first}-{last} …"),
            Language::Markdown => format!("<!-- … lines {first}-{last} … -->"),
            _ => format!(" /* … lines {first}-{last} … */ "),
        }
    }
}
