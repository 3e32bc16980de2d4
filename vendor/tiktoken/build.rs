//! context-loader patch: the embedded vocabularies' lookup tables, built here once
//! instead of at every process start.
//!
//! For each enabled vocabulary whose `.tkv.zst` is kept under `src/encodings/`
//! (cl100k_base, o200k_base), decompress it and write the tables `Vocab` probes
//! (`src/vocab_layout.rs`, the same code the run-time build uses) to `OUT_DIR` in
//! the target's byte order. `src/encoding.rs` embeds them with `include_bytes!` and
//! reads them in place: a process that counts touches only the pages it probes,
//! and starts with no decompression, hashing or allocation of 200k tokens.

use std::path::Path;

#[path = "src/vocab_layout.rs"]
#[allow(dead_code)]
mod vocab_layout;

use vocab_layout::{Slot, Span, Tables, build_tables, frame_entries};

fn main() {
    let out_dir = std::env::var("OUT_DIR").expect("OUT_DIR");
    let big_endian = std::env::var("CARGO_CFG_TARGET_ENDIAN").as_deref() == Ok("big");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/vocab_layout.rs");
    // context-loader patch (PATCH.md section 24): AVX-512's intrinsics and its
    // `#[target_feature]` names are stable from Rust 1.89; the workspace supports
    // 1.88, where the windows classify with SSE2 only.
    println!("cargo::rustc-check-cfg=cfg(tiktoken_avx512)");
    if rustc_version().is_some_and(|version| version >= (1, 89)) {
        println!("cargo::rustc-cfg=tiktoken_avx512");
    }
    for (name, feature) in [
        ("cl100k_base", "CARGO_FEATURE_VOCAB_CL100K_BASE"),
        ("o200k_base", "CARGO_FEATURE_VOCAB_O200K_BASE"),
    ] {
        if std::env::var_os(feature).is_none() {
            continue;
        }
        let source = format!("src/encodings/{name}.tkv.zst");
        println!("cargo::rerun-if-changed={source}");
        let compressed = std::fs::read(&source).expect("vocabulary file");
        let mut decoder = ruzstd::decoding::StreamingDecoder::new(compressed.as_slice())
            .expect("zstd decompression failed");
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut decoder, &mut data).expect("zstd decompression failed");
        let entries = frame_entries(&data);
        let tables = build_tables(entries.into_iter());
        // `Vocab::from_static` takes every rank below the decoder's length as present.
        assert!(
            tables.decoder.iter().all(|span| span.offset != u32::MAX),
            "{name}: ranks are not contiguous"
        );
        write_tables(Path::new(&out_dir), name, &tables, big_endian);
    }
}

fn write_tables(dir: &Path, name: &str, tables: &Tables, big_endian: bool) {
    let u32_bytes = |v: u32| {
        if big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let words = |values: &[u32]| -> Vec<u8> { values.iter().flat_map(|&v| u32_bytes(v)).collect() };
    let slots = |slots: &[Slot]| -> Vec<u8> {
        let mut out = Vec::with_capacity(slots.len() * 16);
        for slot in slots {
            out.extend(if big_endian {
                slot.key.to_be_bytes()
            } else {
                slot.key.to_le_bytes()
            });
            out.extend(u32_bytes(slot.rank));
            out.extend(u32_bytes(slot.len));
        }
        out
    };
    let spans = |spans: &[Span]| -> Vec<u8> {
        spans
            .iter()
            .flat_map(|s| [u32_bytes(s.offset), u32_bytes(s.len)])
            .flatten()
            .collect()
    };
    let u64s = |values: &[u64]| -> Vec<u8> {
        values
            .iter()
            .flat_map(|&v| {
                if big_endian {
                    v.to_be_bytes()
                } else {
                    v.to_le_bytes()
                }
            })
            .collect()
    };
    let write = |ext: &str, bytes: Vec<u8>| {
        std::fs::write(dir.join(format!("{name}.{ext}")), bytes).expect("write vocabulary table")
    };
    write("arena", tables.arena.clone());
    write("single", words(&tables.single));
    write("pair", words(&tables.pair));
    write("pair_bits", u64s(&tables.pair_bits));
    write("table", slots(&tables.table));
    write("decoder", spans(&tables.decoder));
    write("filter", u64s(&tables.filter));
}

/// The (major, minor) version of the compiler cargo builds this crate with, or
/// `None` if `rustc --version` cannot be read (then only SSE2 is used).
fn rustc_version() -> Option<(u32, u32)> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let mut numbers = text.split_whitespace().nth(1)?.split('.');
    Some((numbers.next()?.parse().ok()?, numbers.next()?.parse().ok()?))
}
