//! RustyJson's core: the JSON writer and parser in plain Rust.
//!
//! Nothing here knows about the BEAM, so `cargo test`, benches and `cargo fuzz` link this crate alone.
//! The NIF crate walks BEAM terms into [`buffer::Buffer`] and builds BEAM terms from [`parser::Builder`] events.

pub mod buffer;
pub mod escape;
pub mod float;
pub mod formatter;
pub mod intern;
pub mod kept_keys;
pub mod key_cache;
pub mod number;
pub mod overflow;
pub mod parser;
pub mod pretty;
pub mod rewrite;
pub mod splitter;

#[cfg(any(test, feature = "checks"))]
pub mod checks;
mod exact;
mod pow5;
mod shortest;
pub mod utf8;
