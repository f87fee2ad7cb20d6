//! The NIF surface of RustyJson: thin wrappers that pick a scheduler and hand off to `encode` and `decode`.

mod decode;
mod encode;

use rustler::{Env, Term};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Encodes a plain term to a JSON binary, or returns `{:error, reason}`.
#[rustler::nif]
fn encode<'a>(env: Env<'a>, term: Term<'a>, opts: Term<'a>) -> Term<'a> {
    encode::encode(env, term, opts)
}

/// Decodes a JSON binary to a term, or returns `{:error, reason}`.
#[rustler::nif]
fn decode<'a>(env: Env<'a>, input: Term<'a>, _opts: Term<'a>) -> Term<'a> {
    decode::decode(env, input)
}

/// True once the library is loaded (the Elixir stub returns false).
#[rustler::nif(name = "loaded?")]
fn loaded() -> bool {
    true
}

rustler::init!("Elixir.RustyJson.Native");
