//! The NIF surface of RustyJson: thin wrappers that pick a scheduler and hand off to `encode` and `decode`.

mod decode;
mod encode;

use rustler::{Env, Term};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Encodes a plain term to a JSON binary, or returns `{:error, reason}`.
#[rustler::nif]
fn encode<'a>(env: Env<'a>, term: Term<'a>, _opts: Term<'a>) -> Term<'a> {
    encode::encode(env, term)
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

rustler::init!("Elixir.RustyJson.Native");
