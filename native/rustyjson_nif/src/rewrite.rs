//! `RustyJson.Encoder`'s fallbacks: the text a `Jason.Encoder` or `JSON.Encoder` implementation returned, written
//! again with the call's escape mode, `sort_keys` and `maps: :strict` (`rustyjson_core::rewrite`).

use rustler::{Binary, Encoder, Env, Error, NifResult, OwnedBinary, Term};
use rustyjson_core::parser::ParseError;
use rustyjson_core::rewrite::{self, Options};

use crate::encode::options::decode_options;

mod atoms {
    rustler::atoms! { error, invalid, duplicate_key, nil }
}

/// `input` (a binary) rewritten with `opts` (the encoder's options term): the new binary,
/// `{:error, {:invalid, position, token | nil}}` for text that is not one JSON value (positions as the decoder's
/// errors), or `{:error, {:duplicate_key, key}}` under `maps: :strict`.
pub fn rewrite<'a>(env: Env<'a>, input: Binary<'a>, opts: Term<'a>) -> NifResult<Term<'a>> {
    let options = decode_options(opts).ok_or(Error::BadArg)?;
    let options = Options {
        mode: options.mode,
        sort: options.sort,
        strict: options.strict,
    };
    let bytes = input.as_slice();
    Ok(match rewrite::rewrite(bytes, options) {
        Ok(text) => binary(env, &text),
        Err(rewrite::Error::DuplicateKey(key)) => {
            (atoms::error(), (atoms::duplicate_key(), binary(env, &key))).encode(env)
        }
        Err(rewrite::Error::Parse(error)) => {
            let (position, token) = match error {
                ParseError::UnexpectedByte(at)
                | ParseError::UnexpectedEnd(at)
                | ParseError::LongToken(at)
                | ParseError::Memory { at, .. }
                | ParseError::TooLarge { at, .. } => (at, atoms::nil().encode(env)),
                ParseError::Token { start, end }
                | ParseError::Key { start, end }
                | ParseError::DuplicateKey { start, end } => {
                    (start, binary(env, &bytes[start..end]))
                }
            };
            (atoms::error(), (atoms::invalid(), position, token)).encode(env)
        }
    })
}

fn binary<'a>(env: Env<'a>, bytes: &[u8]) -> Term<'a> {
    let mut bin = OwnedBinary::new(bytes.len());
    bin.as_mut_slice().copy_from_slice(bytes);
    bin.release(env).to_term(env)
}
