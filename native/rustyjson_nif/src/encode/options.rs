//! The call's options, decoded from the compact term Elixir passes.

use rustler::{Encoder, Term};
use rustyjson_core::escape::Mode;
use rustyjson_core::overflow::DEFAULT_MAX_OUTPUT;
use rustyjson_core::pretty::Pretty;

use super::atoms;

/// Options decoded from the compact term Elixir passes (`{escape, strict, pretty}`, or
/// `{escape, strict, pretty, flags}`: `true` for `sort_keys: true` alone, else an integer of the bits below; or
/// `{escape, strict, pretty, flags, max_output_bytes}`; `RustyJson.EncodeOptions`).
pub(crate) struct Options {
    pub(crate) mode: Mode,
    pub(crate) strict: bool,
    pub(crate) pretty: Option<Pretty>,
    /// `sort_keys: true`: object keys in byte order.
    pub(crate) sort: bool,
    /// `protocol: false`: structs other than those written natively are written as maps of their fields.
    pub(crate) structs_as_maps: bool,
    /// Tuples are written as arrays (`protocol: false`, or `config :rusty_json, tuples_and_uris: true`).
    pub(crate) tuples: bool,
    /// `max_output_bytes:`: the output's ceiling ([`DEFAULT_MAX_OUTPUT`] unless given).
    pub(crate) max_output: usize,
}

const SORT: u32 = 1;
const STRUCTS_AS_MAPS: u32 = 2;
const TUPLES: u32 = 4;
/// `large_decimals: :object`: read in Elixir, which writes Decimals; accepted here.
const DECIMAL_OBJECTS: u32 = 8;

pub(crate) fn decode_options(opts: Term) -> Option<Options> {
    // The 3-tuple first: calls without `sort_keys:` read what they always read.
    let (escape, strict, pretty, flags, max_output): (Term, bool, Term, u32, usize) =
        match opts.decode() {
            Ok((escape, strict, pretty)) => (escape, strict, pretty, 0, DEFAULT_MAX_OUTPUT),
            Err(_) => match opts.decode::<(Term, bool, Term, Term)>() {
                Ok((escape, strict, pretty, flags)) => {
                    (escape, strict, pretty, flags_of(flags)?, DEFAULT_MAX_OUTPUT)
                }
                Err(_) => {
                    let (escape, strict, pretty, flags, max): (Term, bool, Term, Term, u64) =
                        opts.decode().ok()?;
                    let max = usize::try_from(max).unwrap_or(usize::MAX);
                    (escape, strict, pretty, flags_of(flags)?, max)
                }
            },
        };
    if flags & !(SORT | STRUCTS_AS_MAPS | TUPLES | DECIMAL_OBJECTS) != 0 {
        return None;
    }
    let mode = if escape == atoms::json().encode(opts.get_env()) {
        Mode::Json
    } else if escape == atoms::javascript_safe().encode(opts.get_env()) {
        Mode::JavaScript
    } else if escape == atoms::html_safe().encode(opts.get_env()) {
        Mode::Html
    } else if escape == atoms::unicode_safe().encode(opts.get_env()) {
        Mode::Unicode
    } else {
        return None;
    };
    let pretty = if pretty == atoms::nil().encode(opts.get_env()) {
        None
    } else {
        let (indent, line, after_colon): (rustler::Binary, rustler::Binary, rustler::Binary) =
            pretty.decode().ok()?;
        Some(Pretty {
            indent: indent.as_slice().to_vec(),
            line: line.as_slice().to_vec(),
            after_colon: after_colon.as_slice().to_vec(),
        })
    };
    Some(Options {
        mode,
        strict,
        pretty,
        sort: flags & SORT != 0,
        structs_as_maps: flags & STRUCTS_AS_MAPS != 0,
        tuples: flags & TUPLES != 0,
        max_output,
    })
}

/// The flags element: `true` or `false` (`sort_keys:` alone), or an integer of the bits above.
fn flags_of(flags: Term) -> Option<u32> {
    match flags.decode::<bool>() {
        Ok(sort) => Some(u32::from(sort) * SORT),
        Err(_) => flags.decode::<u32>().ok(),
    }
}

/// The total length of the `pretty:` strings in `opts` (0 without `pretty:`), read without copying them.
pub(super) fn layout_len(opts: Term) -> usize {
    let Ok(elements) = rustler::types::tuple::get_tuple(opts) else {
        return 0;
    };
    let Some(pretty) = elements.get(2) else {
        return 0;
    };
    match pretty.decode::<(rustler::Binary, rustler::Binary, rustler::Binary)>() {
        Ok((indent, line, after_colon)) => indent.len() + line.len() + after_colon.len(),
        Err(_) => 0,
    }
}
