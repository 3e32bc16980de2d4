//! Prepares the Gemma 3 vocabulary at build time, so a process reads it in place
//! instead of decompressing 4.7 MB and hashing 262,144 pieces before its first
//! Gemini count (that load was most of a CLI call's time).
//!
//! Writes to OUT_DIR:
//! - `gemma3_table.bin`: an open-addressing hash table of the pieces that
//!   `sentencepiece` merges to (normal and user-defined), with their merge rank. All
//!   little-endian u32: `slots`, `blob_len`, then `slots` x (offset, len, rank), then
//!   the pieces' bytes. A slot with len 0 is empty. Hash: FxHash over the bytes, the
//!   same function as `sentencepiece::FxHasher`, home slot from its high bits, linear
//!   probing (a test checks every piece is found with the rank the `.model` parser
//!   gives).
//! - `gemma3_facts.rs`: the vocabulary size, the user-defined pieces (in model order)
//!   and the characters that forbid a segment cut, as constants.

use std::io::Read;
use std::path::PathBuf;

const MODEL: &str = "data/gemma3.spiece.model.zst";
const NORMAL: u64 = 1;
const USER_DEFINED: u64 = 4;

fn main() {
    println!("cargo:rerun-if-changed={MODEL}");
    println!("cargo:rerun-if-changed=build.rs");
    let compressed = std::fs::read(MODEL).expect("the embedded Gemma 3 model");
    let mut model = Vec::new();
    ruzstd::decoding::StreamingDecoder::new(compressed.as_slice())
        .expect("zstd frame")
        .read_to_end(&mut model)
        .expect("the Gemma 3 model decompresses");

    // (bytes, score, type) per piece, in model order.
    let mut pieces: Vec<(Vec<u8>, f32, u64)> = Vec::new();
    let mut fields = Fields(&model);
    while let Some((number, value)) = fields.next_field() {
        if let (1, Value::Bytes(piece)) = (number, value) {
            let (mut bytes, mut score, mut kind) = (Vec::new(), 0f32, NORMAL);
            let mut inner = Fields(piece);
            while let Some(field) = inner.next_field() {
                match field {
                    (1, Value::Bytes(p)) => bytes = p.to_vec(),
                    (2, Value::Fixed32(s)) => score = f32::from_bits(s),
                    (3, Value::Varint(t)) => kind = t,
                    _ => {}
                }
            }
            pieces.push((bytes, score, kind));
        }
    }

    // Ranks exactly as `SentencePiece::from_model_bytes` gives them.
    let mut order: Vec<usize> = (0..pieces.len()).collect();
    order.sort_by(|&a, &b| pieces[b].1.total_cmp(&pieces[a].1));
    let mut rank_of = vec![0u32; pieces.len()];
    let mut rank = 0u32;
    for (i, &index) in order.iter().enumerate() {
        if i > 0 && pieces[order[i - 1]].1 != pieces[index].1 {
            rank = i as u32;
        }
        rank_of[index] = rank;
    }
    let merged: Vec<(&[u8], u32)> = pieces
        .iter()
        .enumerate()
        .filter(|(_, (_, _, kind))| matches!(*kind, NORMAL | USER_DEFINED))
        .map(|(i, (bytes, _, _))| (bytes.as_slice(), rank_of[i]))
        .collect();

    let slots = (merged.len() * 2).next_power_of_two();
    let mut table = vec![(0u32, 0u32, 0u32); slots];
    let mut blob = Vec::new();
    for &(bytes, rank) in &merged {
        let mut slot = slot_of(fx_hash(bytes), slots.trailing_zeros());
        loop {
            let (offset, len, _) = table[slot];
            if len == 0 {
                break;
            }
            // Duplicate pieces: the later one wins, as a map insert does.
            if &blob[offset as usize..(offset + len) as usize] == bytes {
                break;
            }
            slot = (slot + 1) & (slots - 1);
        }
        if bytes.is_empty() {
            continue;
        }
        table[slot] = (blob.len() as u32, bytes.len() as u32, rank);
        blob.extend_from_slice(bytes);
    }
    let mut out = Vec::with_capacity(8 + slots * 12 + blob.len());
    for word in [slots as u32, blob.len() as u32] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    for (offset, len, rank) in table {
        for word in [offset, len, rank] {
            out.extend_from_slice(&word.to_le_bytes());
        }
    }
    out.extend_from_slice(&blob);

    // The characters around a space mark or a newline inside a piece.
    let (mut before_space, mut after_newline) = (Vec::new(), Vec::new());
    for &(bytes, _) in &merged {
        if bytes.len() < 2 || !(bytes.contains(&b'\n') || bytes.contains(&0xE2)) {
            continue;
        }
        let text = String::from_utf8_lossy(bytes);
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match chars.peek() {
                Some(&'\u{2581}') => before_space.push(c),
                Some(&next) if c == '\n' => after_newline.push(next),
                _ => {}
            }
        }
    }
    for set in [&mut before_space, &mut after_newline] {
        set.sort_unstable();
        set.dedup();
    }
    let user_defined: Vec<String> = pieces
        .iter()
        .filter(|(bytes, _, kind)| *kind == USER_DEFINED && !bytes.is_empty())
        .map(|(bytes, _, _)| format!("b\"{}\"", bytes.escape_ascii()))
        .collect();
    let facts = format!(
        "/// Pieces in the Gemma 3 model.\n\
         pub(crate) const GEMMA3_VOCAB_SIZE: usize = {};\n\
         /// Its user-defined pieces, in model order.\n\
         pub(crate) const GEMMA3_USER_DEFINED: &[&[u8]] = &[{}];\n\
         /// Characters followed by U+2581 inside some piece.\n\
         pub(crate) const GEMMA3_BEFORE_SPACE: &[char] = &{:?};\n\
         /// Characters following a newline inside some piece.\n\
         pub(crate) const GEMMA3_AFTER_NEWLINE: &[char] = &{:?};\n",
        pieces.len(),
        user_defined.join(", "),
        before_space,
        after_newline
    );

    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out_dir.join("gemma3_table.bin"), out).expect("write the table");
    std::fs::write(out_dir.join("gemma3_facts.rs"), facts).expect("write the facts");
}

/// A hash's home slot among `2^bits`: its high bits (Fibonacci hashing), because
/// FxHash's low bits cluster similar pieces into long probe runs. Must stay
/// identical to `sentencepiece::Table::get`.
fn slot_of(hash: u64, bits: u32) -> usize {
    (hash.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

/// FxHash over bytes: must stay identical to `sentencepiece::FxHasher::write`.
fn fx_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut hash = 0u64;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        hash = (hash.rotate_left(5) ^ word).wrapping_mul(K);
    }
    for &byte in chunks.remainder() {
        hash = (hash.rotate_left(5) ^ u64::from(byte)).wrapping_mul(K);
    }
    hash
}

enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
    Other,
}

/// The top-level fields of one protobuf message (the model is ours and checked by
/// tests, so malformed input is a build failure).
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn varint(&mut self) -> u64 {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self.0.split_first().expect("truncated varint");
            self.0 = rest;
            value |= u64::from(byte & 0x7F) << shift;
            if byte & 0x80 == 0 {
                return value;
            }
        }
        panic!("varint too long")
    }

    fn take(&mut self, len: usize) -> &'a [u8] {
        let (head, rest) = self.0.split_at(len);
        self.0 = rest;
        head
    }

    fn next_field(&mut self) -> Option<(u64, Value<'a>)> {
        if self.0.is_empty() {
            return None;
        }
        let key = self.varint();
        let value = match key & 7 {
            0 => Value::Varint(self.varint()),
            1 => {
                self.take(8);
                Value::Other
            }
            2 => {
                let len = self.varint() as usize;
                Value::Bytes(self.take(len))
            }
            5 => Value::Fixed32(u32::from_le_bytes(
                self.take(4).try_into().expect("4 bytes"),
            )),
            other => panic!("unknown wire type {other}"),
        };
        Some((key >> 3, value))
    }
}
