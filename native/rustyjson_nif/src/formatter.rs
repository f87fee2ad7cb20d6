//! `RustyJson.Formatter` in the NIF: the output's length is found first (linear in the input, whatever the
//! output's size), which decides where the work runs, and the text is written straight into a binary of that size.

use rustler::{Binary, Encoder, Env, Term};
use rustyjson_core::formatter::{formatted_len, Formatter, Layout, Sink};
use rustyjson_core::overflow::Overflow;

/// Outputs up to this many bytes are written on the calling (normal) scheduler: about 0.3-1 ms of writing. A
/// 40 KB input of nested brackets lays out to 800 MB, so the input's size does not tell.
const NORMAL_OUTPUT_MAX: u64 = 1 << 20;

mod atoms {
    rustler::atoms! { dirty, error }
}

/// The layout of the formatter's four strings.
pub fn layout<'b>(
    indent: &'b Binary,
    line: &'b Binary,
    record: &'b Binary,
    after_colon: &'b Binary,
) -> Layout<'b> {
    Layout {
        indent: indent.as_slice(),
        line: line.as_slice(),
        record: record.as_slice(),
        after_colon: after_colon.as_slice(),
    }
}

/// `input` laid out as a binary; on a normal scheduler (`dirty` false) `:dirty` instead when the output is large;
/// `{:error, reason}` when it would pass `max` bytes or the allocator refuses it, found before anything is
/// allocated (an exact-size binary that cannot be had would otherwise abort the VM).
pub fn format<'a>(env: Env<'a>, input: &[u8], layout: &Layout, max: u64, dirty: bool) -> Term<'a> {
    let len = formatted_len(input, layout);
    if len > max {
        return error(
            env,
            Overflow::Limit {
                needed: usize::try_from(len).unwrap_or(usize::MAX),
                limit: usize::try_from(max).unwrap_or(usize::MAX),
            },
        );
    }
    if !dirty && len > NORMAL_OUTPUT_MAX {
        return atoms::dirty().encode(env);
    }
    let needed = usize::try_from(len).unwrap_or(usize::MAX);
    let Some(mut bin) = crate::alloc::try_owned_binary(needed) else {
        return error(env, Overflow::Memory { needed });
    };
    let mut out = Filling {
        buf: bin.as_mut_slice(),
        len: 0,
    };
    Formatter::new().feed_to(input, layout, &mut out);
    assert_eq!(out.len, needed, "formatted_len is the output's length");
    bin.release(env).to_term(env)
}

fn error(env: Env<'_>, why: Overflow) -> Term<'_> {
    (atoms::error(), crate::encode::overflow_reason(env, why)).encode(env)
}

/// A buffer of the output's exact length, filled from the start.
struct Filling<'b> {
    buf: &'b mut [u8],
    len: usize,
}

impl Sink for Filling<'_> {
    #[inline]
    fn push(&mut self, byte: u8) {
        self.buf[self.len] = byte;
        self.len += 1;
    }
    #[inline]
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }
    fn repeat(&mut self, bytes: &[u8], n: usize) {
        for _ in 0..n {
            self.extend_from_slice(bytes);
        }
    }
}
