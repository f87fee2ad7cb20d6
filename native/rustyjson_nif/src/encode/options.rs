//! The call's options, decoded from the compact term Elixir passes.

use rustler::{Encoder, Term};
use rustyjson_core::escape::Mode;
use rustyjson_core::pretty::Pretty;

use super::atoms;

/// Options decoded from the compact term Elixir passes (`{escape, strict, pretty}`, or
/// `{escape, strict, pretty, sort_keys}` when `sort_keys:` was given).
pub(crate) struct Options {
    pub(crate) mode: Mode,
    pub(crate) strict: bool,
    pub(crate) pretty: Option<Pretty>,
    /// `sort_keys: true`: object keys in byte order.
    pub(crate) sort: bool,
}

pub(crate) fn decode_options(opts: Term) -> Option<Options> {
    // The 3-tuple first: calls without `sort_keys:` read what they always read.
    let (escape, strict, pretty, sort): (Term, bool, Term, bool) = match opts.decode() {
        Ok((escape, strict, pretty)) => (escape, strict, pretty, false),
        Err(_) => opts.decode().ok()?,
    };
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
        sort,
    })
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
