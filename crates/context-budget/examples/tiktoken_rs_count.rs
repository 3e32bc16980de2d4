//! The baseline of the first-answer benchmark (`cargo xtask bench`, section
//! `first-answer`): the smallest program that answers what `context-loader count`
//! answers with the reference library, tiktoken-rs. Load one encoding, count one
//! text as ordinary text, print the count.
//!
//! ```text
//! tiktoken_rs_count cl100k_base|o200k_base TEXT
//! ```

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(encoding), Some(text)) = (args.next(), args.next()) else {
        eprintln!("usage: tiktoken_rs_count cl100k_base|o200k_base TEXT");
        std::process::exit(2);
    };
    let bpe = match encoding.as_str() {
        "cl100k_base" => tiktoken_rs::cl100k_base(),
        "o200k_base" => tiktoken_rs::o200k_base(),
        other => {
            eprintln!("unknown encoding {other}");
            std::process::exit(2);
        }
    }
    .expect("tiktoken-rs loads its vocabulary");
    println!("{}", bpe.encode_ordinary(&text).len());
}
