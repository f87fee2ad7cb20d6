//! Many small documents of one binary decoded in one call (`RustyJson.Stream`), with no Elixir step and no NIF
//! call per item: one `TermBuilder` builds them all (so records of the same shape share its key tables).
//!
//! [`ItemDecoder`] parses the value at a given offset of a chunk; the splitter uses it to decode each item as it
//! finds it (`stream.rs`), and [`decode_items`] to decode items it has already delimited. Either stops taking
//! items once the call has run [`YIELD_AFTER`]: those left go back to Elixir, which decodes them in another
//! call or one by one with `decode/2` (its errors, its yields).

use super::slices::{consume_timeslice, give_back_stacks, input_bytes, take_stacks, YIELD_AFTER};
use super::*;

/// Items larger than this are left to `decode/2`, which yields inside a document.
const ITEM_MAX: u64 = 32 * 1024;
/// Bytes decoded between clock checks (well under 0.1 ms).
const CHECK_BYTES: usize = 16 * 1024;
/// Bytes of one span in the splitter's binary: start, end and line, big-endian `u64`s.
pub const SPAN_BYTES: usize = 24;

/// Decodes the values at offsets of one binary, within a time budget.
pub struct ItemDecoder<'a> {
    env: Env<'a>,
    builder: TermBuilder<'a>,
    stacks: Stacks<T, Key>,
    started: Instant,
    unchecked: usize,
    out_of_time: bool,
}

impl<'a> ItemDecoder<'a> {
    /// A decoder of values in `input` (a binary term of `env`, whose bytes are `bytes`) with the NIF's decode
    /// options `opts`.
    pub fn new(env: Env<'a>, input: Term<'a>, bytes: &'a [u8], opts: Term<'a>) -> Self {
        ItemDecoder {
            env,
            builder: TermBuilder::new(env, input.as_c_arg(), bytes, opts),
            stacks: take_stacks(),
            started: Instant::now(),
            unchecked: 0,
            out_of_time: false,
        }
    }

    /// The value starting at `bytes[at]` and where it ends, or `None` if it is invalid (the caller's way to its
    /// error is `decode/2`) or the call has had its time. `bytes` is the decoder's input or a prefix of it.
    #[inline]
    pub fn value_at(&mut self, bytes: &[u8], at: usize) -> Option<(usize, Term<'a>)> {
        if self.unchecked >= CHECK_BYTES {
            self.unchecked = 0;
            self.out_of_time = self.out_of_time || self.started.elapsed() >= YIELD_AFTER;
        }
        if self.out_of_time {
            return None;
        }
        let mut pos = at;
        let value =
            parser::parse_value(bytes, &mut self.builder, &mut self.stacks, &mut pos).ok()?;
        self.unchecked += pos - at;
        Some((pos, unsafe { Term::new(self.env, value) }))
    }

    /// Gives the parser's stacks back to the thread and tells the scheduler how long the call took.
    pub fn finish(self) {
        give_back_stacks(self.stacks);
        consume_timeslice(self.env, self.started);
    }
}

/// `{values, rest}`: the items of `spans` (the splitter's binary) that lie in `slice` (which starts at stream
/// offset `base`), decoded with `opts`, in order, and the spans not decoded, from the first one that was not
/// (invalid, larger than [`ITEM_MAX`], or after the call's time).
pub fn decode_items<'a>(
    env: Env<'a>,
    slice: Term<'a>,
    base: Term<'a>,
    spans: Term<'a>,
    opts: Term<'a>,
) -> Term<'a> {
    let badarg = || (atoms::error(), atoms::badarg()).encode(env);
    let (Some(bytes), Ok(base), Ok(spans_bin)) = (
        input_bytes(env, slice.as_c_arg()),
        base.decode::<u64>(),
        spans.decode::<rustler::Binary>(),
    ) else {
        return badarg();
    };
    let span_bytes = spans_bin.as_slice();
    if span_bytes.len() % SPAN_BYTES != 0 {
        return badarg();
    }
    let mut decoder = ItemDecoder::new(env, slice, bytes, opts);
    let mut values = Vec::new();
    for span in span_bytes.as_chunks::<SPAN_BYTES>().0 {
        let word = |i: usize| u64::from_be_bytes(span[i..i + 8].try_into().expect("8 bytes"));
        let (start, end) = (word(0), word(8));
        let inside = start >= base && end >= start && end - base <= bytes.len() as u64;
        if !inside || end - start > ITEM_MAX {
            break;
        }
        let (from, to) = ((start - base) as usize, (end - base) as usize);
        // The span is the whole document: the value must end where it does.
        match decoder.value_at(&bytes[..to], from) {
            Some((stop, value)) if stop == to => values.push(value),
            _ => break,
        }
    }
    decoder.finish();
    let done = values.len() * SPAN_BYTES;
    let rest = spans_bin
        .make_subbinary(done, span_bytes.len() - done)
        .map_or_else(|_| badarg(), |rest| rest.to_term(env));
    (values, rest).encode(env)
}
