//! `RustyJson.Stream`'s splitter: the core's [`Splitter`] in a resource, fed one chunk per call.
//!
//! Each call scans its chunk once (Elixir sends at most [`MAX_CHUNK`] bytes per call), decoding the items as it
//! finds them when asked, within ~0.5 ms of a normal scheduler (`decode::ItemDecoder`). The items it leaves come
//! back as one binary of big-endian `u64` triples (start, end, line), cheap to build and to match however many
//! items a chunk holds.
//!
//! A call whose envelope token (`decode_array(at:)`) was carried from earlier chunks and is long runs on a dirty
//! CPU scheduler (`enif_schedule_nif`): once the token ends it is validated whole, and its buffer grows by copies
//! of its size, both work in proportion to the token, not to the chunk.

use std::ffi::c_int;
use std::sync::Mutex;

use crate::continuation;

use crate::decode::{ItemDecoder, SPAN_BYTES};
use rustler::sys::{enif_make_badarg, ErlNifEnv, ErlNifTerm, ERL_NIF_DIRTY_JOB_CPU_BOUND};
use rustler::types::atom::nil;
use rustler::{Atom, Binary, Encoder, Env, NifResult, OwnedBinary, ResourceArc, Term};
use rustyjson_core::splitter::at_path::{Failure, Found, PathSplitter};
use rustyjson_core::splitter::{End, Mode, Span, SplitError, Splitter};

/// The most bytes one `split_chunk/3` call scans (the Elixir side cuts larger chunks).
pub const MAX_CHUNK: usize = 64 * 1024;

/// A call whose carried envelope token, with the chunk, is longer than this runs on a dirty scheduler (a normal
/// one validates 1 MiB of string in well under a millisecond).
const DIRTY_CARRY: usize = 1 << 20;

rustler::atoms! { documents, array_items, at, array, missing, not_an_array, too_long }

/// A stream's splitter state.
pub struct StreamSplitter(Mutex<Split>);

/// What a stream splits: top-level items, or the array at a path (`decode_array(stream, at: pointer)`).
pub enum Split {
    Plain(Splitter),
    AtPath(Box<PathSplitter>),
}

/// A splitting failure: a structural error, an error in the envelope around the array at a path, or a token of
/// that envelope longer than `max_bytes:` (where it starts, and the limit).
enum Error {
    Split(SplitError),
    Envelope(rustyjson_core::splitter::at_path::EnvelopeError),
    TooLong(u64, usize),
}

impl Error {
    fn of(failure: Failure, s: &PathSplitter) -> Error {
        match failure {
            Failure::Array(e) => Error::Split(e),
            Failure::Envelope(e) => Error::Envelope(e),
            Failure::TooLong(at) => Error::TooLong(at, s.max_token()),
        }
    }
}

impl Split {
    fn feed<V>(
        &mut self,
        bytes: &[u8],
        spans: &mut Vec<Span>,
        values: &mut Vec<V>,
        parse: impl FnMut(&[u8], usize) -> Option<(usize, V)>,
    ) -> Option<Error> {
        match self {
            Split::Plain(s) => s
                .feed_direct(bytes, spans, values, parse)
                .err()
                .map(Error::Split),
            Split::AtPath(s) => s
                .feed_direct(bytes, spans, values, parse)
                .err()
                .map(|e| Error::of(e, s)),
        }
    }

    fn open_item(&self) -> Option<u64> {
        match self {
            Split::Plain(s) => s.open_item(),
            Split::AtPath(s) => s.open_item(),
        }
    }

    /// Whether a call adding `more` bytes belongs on a dirty scheduler (a long carried envelope token).
    fn long_carry(&self, more: usize) -> bool {
        match self {
            Split::Plain(_) => false,
            Split::AtPath(s) => s.carried() + more > DIRTY_CARRY,
        }
    }
}

#[rustler::resource_impl]
impl rustler::Resource for StreamSplitter {}

/// A splitter for `:documents`, `:array_items`, or `{:at, tokens, opts, max_bytes}`: the array at the path of
/// `tokens` (binaries), the envelope validated within the limits of the decode options `opts`, each of its tokens
/// at most `max_bytes` long (nil: no limit).
pub fn new(mode: Term) -> NifResult<ResourceArc<StreamSplitter>> {
    let split = if let Ok(mode) = mode.decode::<Atom>() {
        if mode == documents() {
            Split::Plain(Splitter::new(Mode::Documents))
        } else if mode == array_items() {
            Split::Plain(Splitter::new(Mode::ArrayItems))
        } else {
            return Err(rustler::Error::BadArg);
        }
    } else {
        let (tag, tokens, opts, max_bytes): (Atom, Vec<Binary>, Term, Option<usize>) =
            mode.decode()?;
        let (_, limits) = crate::decode::flags_and_limits(opts).ok_or(rustler::Error::BadArg)?;
        if tag != at() {
            return Err(rustler::Error::BadArg);
        }
        let tokens: Vec<&[u8]> = tokens.iter().map(|t| t.as_slice()).collect();
        let max_token = max_bytes.unwrap_or(usize::MAX);
        Split::AtPath(Box::new(PathSplitter::bounded(&tokens, limits, max_token)))
    };
    Ok(ResourceArc::new(StreamSplitter(Mutex::new(split))))
}

/// `{array_start, array_end}` of a splitter at a path (each nil until reached; both nil for other splitters).
pub fn marks(env: Env<'_>, splitter: ResourceArc<StreamSplitter>) -> NifResult<Term<'_>> {
    let s = splitter.0.lock().map_err(|_| rustler::Error::BadArg)?;
    let (start, end) = match &*s {
        Split::AtPath(s) => s.marks(),
        Split::Plain(_) => (None, None),
    };
    Ok((start, end).encode(env))
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
    let size = chunk.decode::<Binary>()?.len();
    let long = splitter
        .0
        .lock()
        .map_err(|_| rustler::Error::BadArg)?
        .long_carry(size);
    if long {
        let args = [splitter.encode(env), chunk, opts];
        return Ok(to_dirty(env, c"split_chunk", chunk_dirty, &args));
    }
    chunk_here(env, splitter, chunk, opts)
}

/// [`chunk`] on the scheduler it runs on.
fn chunk_here<'a>(
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
        s.feed(bytes, &mut spans, &mut Vec::<Term>::new(), |_, _| None)
    } else {
        let mut decoder = ItemDecoder::new(env, chunk, bytes, opts);
        let fed = s.feed(bytes, &mut spans, &mut values, |bytes, at| {
            decoder.value_at(bytes, at)
        });
        decoder.finish();
        fed
    };
    let open = match (&error, s.open_item()) {
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

/// `{spans, open?, error, found}` at the end of the stream: the last item (0 or 1 spans; `open?` when it was cut
/// short), the error at the end (an array without its `]`, an envelope cut short), or nil, and what the path
/// held: `:array` (always, without a path), `:missing` or `:not_an_array`.
pub fn finish(env: Env<'_>, splitter: ResourceArc<StreamSplitter>) -> NifResult<Term<'_>> {
    let long = splitter
        .0
        .lock()
        .map_err(|_| rustler::Error::BadArg)?
        .long_carry(0);
    if long {
        let args = [splitter.encode(env)];
        return Ok(to_dirty(env, c"split_finish", finish_dirty, &args));
    }
    finish_here(env, splitter)
}

/// [`finish`] on the scheduler it runs on.
fn finish_here(env: Env<'_>, splitter: ResourceArc<StreamSplitter>) -> NifResult<Term<'_>> {
    let mut s = splitter.0.lock().map_err(|_| rustler::Error::BadArg)?;
    let (end, found, error) = match &mut *s {
        Split::Plain(s) => {
            let end = s.finish();
            let error = end.error.map(Error::Split);
            (end, Found::Array, error)
        }
        Split::AtPath(s) => match s.finish() {
            Ok((end, found)) => (end, found, end.error.map(Error::Split)),
            Err(e) => (End::default(), Found::Array, Some(Error::of(e, s))),
        },
    };
    let spans: Vec<Span> = end.last.into_iter().collect();
    let found = match found {
        Found::Array => array(),
        Found::Missing => missing(),
        Found::NotArray => not_an_array(),
    };
    Ok((
        spans_binary(env, &spans),
        end.open,
        error_term(env, error),
        found,
    )
        .encode(env))
}

/// The call continued by `next` with `args` on a dirty CPU scheduler.
fn to_dirty<'a>(
    env: Env<'a>,
    name: &std::ffi::CStr,
    next: continuation::Continuation,
    args: &[Term<'a>],
) -> Term<'a> {
    let args: Vec<ErlNifTerm> = args.iter().map(|t| t.as_c_arg()).collect();
    continuation::schedule(env, name, ERL_NIF_DIRTY_JOB_CPU_BOUND, next, &args)
}

/// The result term, or `badarg` raised.
fn or_badarg<'a>(env: Env<'a>, result: NifResult<Term<'a>>) -> Term<'a> {
    result.unwrap_or_else(|_| unsafe { Term::new(env, enif_make_badarg(env.as_c_arg())) })
}

/// [`chunk`] continued on a dirty scheduler: `argv` is `[splitter, chunk, opts]`.
unsafe extern "C" fn chunk_dirty(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
) -> ErlNifTerm {
    continuation::run(env, argc, argv, |env, args| {
        let result = match *args {
            [splitter, chunk, opts] => splitter
                .decode()
                .and_then(|splitter| chunk_here(env, splitter, chunk, opts)),
            _ => Err(rustler::Error::BadArg),
        };
        or_badarg(env, result)
    })
}

/// [`finish`] continued on a dirty scheduler: `argv` is `[splitter]`.
unsafe extern "C" fn finish_dirty(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
) -> ErlNifTerm {
    continuation::run(env, argc, argv, |env, args| {
        let result = match *args {
            [splitter] => splitter
                .decode()
                .and_then(|splitter| finish_here(env, splitter)),
            _ => Err(rustler::Error::BadArg),
        };
        or_badarg(env, result)
    })
}

fn spans_binary<'a>(env: Env<'a>, spans: &[Span]) -> Term<'a> {
    let mut bin = OwnedBinary::new(spans.len() * SPAN_BYTES);
    for (out, span) in bin
        .as_mut_slice()
        .as_chunks_mut::<SPAN_BYTES>()
        .0
        .iter_mut()
        .zip(spans)
    {
        out[..8].copy_from_slice(&span.start.to_be_bytes());
        out[8..16].copy_from_slice(&span.end.to_be_bytes());
        out[16..].copy_from_slice(&span.line.to_be_bytes());
    }
    bin.release(env).to_term(env)
}

/// `{position, line}` for a structural error (the offending byte is the chunk's), `{position, line, bytes}` for
/// the envelope's (the offending byte or token, which an earlier chunk may hold), `{:too_long, position, limit}`
/// for an envelope token longer than `max_bytes:`, or nil.
fn error_term(env: Env<'_>, error: Option<Error>) -> Term<'_> {
    match error {
        Some(Error::Split(e)) => (e.position, e.line).encode(env),
        Some(Error::Envelope(e)) => {
            let mut token = OwnedBinary::new(e.token.len());
            token.as_mut_slice().copy_from_slice(&e.token);
            (e.position, e.line, token.release(env)).encode(env)
        }
        Some(Error::TooLong(at, limit)) => (too_long(), at, limit).encode(env),
        None => nil().encode(env),
    }
}
