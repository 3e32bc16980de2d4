//! `cargo xtask spec-corpus DIR [--specs N]`: a deterministic, realistic spec
//! repository for benchmarks: by default 2,000 specs, ~5,000 Markdown files,
//! ~22 MB, with YAML frontmatter, fenced and indented code, GFM tables, lists,
//! English and Korean prose, and an `archived/` group. Same bytes on every run.

use std::fmt::Write as _;
use std::path::Path;

/// xorshift64*: tiny, deterministic, good enough to vary text.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "agent",
    "budget",
    "context",
    "window",
    "token",
    "spec",
    "loader",
    "request",
    "response",
    "cache",
    "latency",
    "stream",
    "session",
    "replica",
    "proxy",
    "schema",
    "parser",
    "message",
    "history",
    "section",
    "priority",
    "encoder",
    "vocabulary",
    "merge",
    "boundary",
    "estimate",
    "exact",
    "model",
    "prompt",
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "is",
    "for",
    "with",
    "that",
    "when",
    "each",
    "every",
    "before",
    "after",
    "without",
    "under",
    "over",
    "must",
    "should",
    "never",
    "always",
];
const KOREAN: &[&str] = &[
    "에이전트는",
    "컨텍스트",
    "창을",
    "계획한다",
    "토큰",
    "예산을",
    "넘지",
    "않도록",
    "문서를",
    "불러오기",
    "전에",
    "크기를",
    "측정한다",
    "서버는",
    "요청을",
    "처리하고",
    "결과를",
    "돌려준다",
    "사양",
    "파일의",
    "구조와",
    "비용을",
    "확인한다",
    "캐시는",
    "변경되지",
    "않은",
    "파일을",
    "다시",
    "읽지",
    "않는다",
];
const STATUSES: &[&str] = &["planned", "in-progress", "complete", "archived"];
const SUB_SPECS: &[&str] = &[
    "DESIGN.md",
    "TESTING.md",
    "IMPLEMENTATION.md",
    "API.md",
    "NOTES.md",
];

fn sentence(rng: &mut Rng, korean: bool) -> String {
    let words = if korean { KOREAN } else { WORDS };
    let n = 6 + rng.below(14);
    let mut s: Vec<&str> = (0..n).map(|_| rng.pick(words)).collect();
    let first = s[0].to_string();
    let capitalized = if korean {
        first
    } else {
        let mut c = first.chars();
        c.next()
            .map(|f| f.to_uppercase().chain(c).collect())
            .unwrap_or_default()
    };
    s[0] = &capitalized;
    format!("{}.", s.join(" "))
}

fn paragraph(rng: &mut Rng, korean: bool) -> String {
    (0..3 + rng.below(5))
        .map(|_| sentence(rng, korean))
        .collect::<Vec<_>>()
        .join(" ")
}

fn code_block(rng: &mut Rng) -> String {
    let fence = if rng.below(4) == 0 { "~~~" } else { "```" };
    let lang = rng.pick(&["rust", "ts", "json", "sh", ""]);
    let mut body = String::new();
    for i in 0..4 + rng.below(16) {
        let _ = writeln!(
            body,
            "    let {}_{i} = {}({}, {});",
            rng.pick(WORDS),
            rng.pick(&["count_tokens", "resolve_spec", "fit_messages", "measure"]),
            rng.below(10_000),
            rng.pick(&["\"o200k_base\"", "&ctx", "None", "budget"])
        );
    }
    format!(
        "{fence}{lang}\nfn {}() {{\n{body}}}\n{fence}\n",
        rng.pick(WORDS)
    )
}

fn table(rng: &mut Rng) -> String {
    let mut t = String::from("| name | tokens | status | note |\n|---|---:|---|---|\n");
    for _ in 0..3 + rng.below(10) {
        let korean = rng.below(3) == 0;
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} |",
            rng.pick(WORDS),
            rng.below(9000),
            rng.pick(STATUSES),
            sentence(rng, korean)
        );
    }
    t
}

/// One Markdown document of roughly `target` bytes.
fn document(rng: &mut Rng, title: &str, target: usize, frontmatter: bool) -> String {
    let mut doc = String::new();
    if frontmatter {
        let _ = write!(
            doc,
            "---\nstatus: {}\ncreated: '2025-{:02}-{:02}'\npriority: {}\ntags:\n  - {}\n  - {}\n---\n\n",
            rng.pick(STATUSES),
            1 + rng.below(12),
            1 + rng.below(28),
            rng.pick(&["low", "medium", "high"]),
            rng.pick(WORDS),
            rng.pick(WORDS)
        );
    }
    let _ = write!(doc, "# {title}\n\n");
    let korean_share = rng.below(4); // 0..3 quarters of paragraphs in Korean
    let mut section = 0;
    while doc.len() < target {
        section += 1;
        let _ = write!(
            doc,
            "## {} {section}\n\n",
            rng.pick(&["Overview", "Design", "Plan", "Testing", "Notes"])
        );
        for _ in 0..1 + rng.below(3) {
            let korean = rng.below(4) < korean_share;
            doc.push_str(&paragraph(rng, korean));
            doc.push_str("\n\n");
        }
        match rng.below(6) {
            0 | 1 => doc.push_str(&code_block(rng)),
            2 => doc.push_str(&table(rng)),
            3 => {
                for _ in 0..3 + rng.below(4) {
                    let _ = writeln!(doc, "- {}", sentence(rng, false));
                }
            }
            4 => {
                let _ = writeln!(doc, "    indented_code({});", rng.below(100));
            }
            _ => {}
        }
        doc.push('\n');
    }
    doc
}

pub fn run(dir: &Path, specs: usize) -> anyhow::Result<()> {
    let (files, bytes) = generate(dir, specs)?;
    eprintln!(
        "wrote {specs} specs, {files} files, {bytes} bytes under {}",
        dir.display()
    );
    Ok(())
}

/// Write the corpus under `dir` (replacing it); returns (files, bytes).
pub fn generate(dir: &Path, specs: usize) -> anyhow::Result<(usize, usize)> {
    crate::disk::remove_dir_if_present(dir)?;
    let mut rng = Rng(0x5EED_CAFE_F00D_0001);
    let (mut files, mut bytes) = (0, 0);
    for n in 1..=specs {
        let name = format!("{}-{}", rng.pick(WORDS), rng.pick(WORDS));
        let folder = format!("{n:03}-{name}");
        // Every tenth spec is archived, one level down.
        let spec_dir = if n % 10 == 0 {
            dir.join("archived").join(&folder)
        } else {
            dir.join(&folder)
        };
        std::fs::create_dir_all(&spec_dir)?;
        // Sizes vary a lot, as in real repositories: mostly small, some huge.
        let readme_size = match rng.below(10) {
            0..=5 => 1000 + rng.below(3000),
            6..=8 => 3500 + rng.below(4500),
            _ => 9_000 + rng.below(12_000),
        };
        let frontmatter = rng.below(20) != 0;
        let readme = document(&mut rng, &name, readme_size, frontmatter);
        files += 1;
        bytes += readme.len();
        std::fs::write(spec_dir.join("README.md"), readme)?;
        for sub in SUB_SPECS.iter().take(rng.below(4)) {
            let size = 1000 + rng.below(4500);
            let doc = document(&mut rng, sub.trim_end_matches(".md"), size, false);
            files += 1;
            bytes += doc.len();
            std::fs::write(spec_dir.join(sub), doc)?;
        }
    }
    Ok((files, bytes))
}
