pub mod appendable_encoder;
pub mod backtrack_encoder;
mod bitfield;
pub mod byte_pair_encoding;
pub mod interval_encoding;
pub mod prependable_encoder;
