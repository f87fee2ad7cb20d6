//! `RustyJson.Stream`'s splitter: the core's [`Splitter`] in a resource, fed one chunk per call.
//!
//! Each call scans its chunk once (Elixir sends at most [`MAX_CHUNK`] bytes per call), decoding the items as it
//! finds them when asked, within ~0.5 ms of a normal scheduler (`decode::ItemDecoder`). The items it leaves come
//! back as one binary of big-endian `u64` triples (start, end, line), cheap to build and to match however many
//! items a chunk holds.

use std::sync::Mutex;

use crate::decode::{ItemDecoder, SPAN_BYTES};
use rustler::types::atom::nil;
use rustler::{Atom, Binary, Encoder, Env, NifResult, OwnedBinary, ResourceArc, Term};
use rustyjson_core::splitter::{Mode, Span, SplitError, Splitter};

/// The most bytes one `split_chunk/3` call scans (the Elixir side cuts larger chunks).
pub const MAX_CHUNK: usize = 64 * 1024;

rustler::atoms! { documents, array_items }

/// A stream's splitter state.
pub struct StreamSplitter(Mutex<Splitter>);

#[rustler::resource_impl]
impl rustler::Resource for StreamSplitter {}

/// A splitter for `:documents` or `:array_items`.
pub fn new(mode: Atom) -> NifResult<ResourceArc<StreamSplitter>> {
    let mode = if mode == documents() {
        Mode::Documents
    } else if mode == array_items() {
        Mode::ArrayItems
    } else {
        return Err(rustler::Error::BadArg);
    };
    Ok(ResourceArc::new(StreamSplitter(Mutex::new(Splitter::new(
        mode,
    )))))
}

/// `{spans, values, open, error}`: the items ending in `chunk` (at most [`MAX_CHUNK`] bytes), where the item
/// still open at its end starts (or nil), and the first structural error as `{position, line}` (or nil).
///
/// With decode options (`opts` not nil), each item that starts in the chunk is decoded as the splitter reaches
/// it (`decode::ItemDecoder`): its value goes to `values`, in order, and only the items it could not take (the
/// one continued from the last chunk, an invalid one and those after it, those after the call's time) are
/// spans; the continued item comes before the values, the others after.
pub fn chunk<'a>(
    env: Env<'a>,
    splitter: ResourceArc<StreamSplitter>,
    chunk: Term<'a>,
    opts: Term<'a>,
) -> NifResult<Term<'a>> {
    let bytes: Binary = chunk.decode()?;
    let bytes = bytes.as_slice();
    if bytes.len() > MAX_CHUNK {
        return Err(rustler::Error::BadArg);
    }
    let mut s = splitter.0.lock().map_err(|_| rustler::Error::BadArg)?;
    let mut spans = Vec::new();
    let mut values = Vec::new();
    let error = if opts == nil().to_term(env) {
        s.feed(bytes, &mut spans).err()
    } else {
        let mut decoder = ItemDecoder::new(env, chunk, bytes, opts);
        let fed = s.feed_direct(bytes, &mut spans, &mut values, |bytes, at| {
            decoder.value_at(bytes, at)
        });
        decoder.finish();
        fed.err()
    };
    let open = match (error, s.open_item()) {
        (None, Some(start)) => start.encode(env),
        _ => nil().encode(env),
    };
    Ok((
        spans_binary(env, &spans),
        values,
        open,
        error_term(env, error),
    )
        .encode(env))
}

/// `{spans, open?, error}` at the end of the stream: the last item (0 or 1 spans; `open?` when it was cut
/// short) and the error at the end (an array without its `]`), or nil.
pub fn finish(env: Env<'_>, splitter: ResourceArc<StreamSplitter>) -> NifResult<Term<'_>> {
    let mut s = splitter.0.lock().map_err(|_| rustler::Error::BadArg)?;
    let end = s.finish();
    let spans: Vec<Span> = end.last.into_iter().collect();
    Ok((
        spans_binary(env, &spans),
        end.open,
        error_term(env, end.error),
    )
        .encode(env))
}

fn spans_binary<'a>(env: Env<'a>, spans: &[Span]) -> Term<'a> {
    let mut bin = OwnedBinary::new(spans.len() * SPAN_BYTES);
    for (out, span) in bin.as_mut_slice().chunks_exact_mut(SPAN_BYTES).zip(spans) {
        out[..8].copy_from_slice(&span.start.to_be_bytes());
        out[8..16].copy_from_slice(&span.end.to_be_bytes());
        out[16..].copy_from_slice(&span.line.to_be_bytes());
    }
    bin.release(env).to_term(env)
}

fn error_term(env: Env<'_>, error: Option<SplitError>) -> Term<'_> {
    match error {
        Some(e) => (e.position, e.line).encode(env),
        None => nil().encode(env),
    }
}
