//! The NIF surface of RustyJson: thin wrappers that pick a scheduler and hand off to `encode` and `decode`.

mod alloc;
mod decode;
mod encode;

use rustler::{Env, Term};

#[global_allocator]
static GLOBAL: alloc::CountingMiMalloc = alloc::CountingMiMalloc;

/// Encodes a plain term to a JSON binary, or returns `{:error, reason}`.
#[rustler::nif]
fn encode<'a>(env: Env<'a>, term: Term<'a>, opts: Term<'a>) -> Term<'a> {
    encode::encode(env, term, opts)
}

/// Decodes a JSON binary to a term, or returns `{:error, reason}`. `opts` is the integer built by
/// `RustyJson.DecodeOptions`. Runs on the calling scheduler: Elixir sends only small inputs here.
#[rustler::nif]
fn decode<'a>(env: Env<'a>, input: Term<'a>, opts: Term<'a>) -> Term<'a> {
    decode::decode(env, input, opts)
}

/// `decode/2` on a dirty CPU scheduler, for inputs above the threshold in `RustyJson.decode/2`.
#[rustler::nif(schedule = "DirtyCpu")]
fn decode_dirty<'a>(env: Env<'a>, input: Term<'a>, opts: Term<'a>) -> Term<'a> {
    decode::decode(env, input, opts)
}

/// True once the library is loaded (the Elixir stub returns false).
#[rustler::nif(name = "loaded?")]
fn loaded() -> bool {
    true
}

/// Bytes the NIF's allocator holds now; restarts the peak count (for the benchmarks' native memory figure).
#[rustler::nif]
fn allocator_reset_peak() -> usize {
    alloc::reset_peak()
}

/// The most bytes the NIF's allocator held since the last `allocator_reset_peak/0`.
#[rustler::nif]
fn allocator_peak() -> usize {
    alloc::peak()
}

rustler::init!("Elixir.RustyJson.Native");
