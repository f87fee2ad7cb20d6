//! `RustyJson.get/3`: the spans of the values at JSON Pointer paths of a whole document (the core's `Locator`),
//! which Elixir then decodes as sub-binaries with the call's options.
//!
//! Scheduling follows the decoder's: a document walks on the calling scheduler in slices, yielding
//! (`enif_schedule_nif`, the walk's state in a resource) once a slice has run ~0.5 ms; a string or number too long
//! to scan within a slice sends the rest of the walk to a dirty CPU scheduler. A small document is one call: no
//! clock, no hop.

use std::ffi::c_int;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rustler::sys::{enif_consume_timeslice, ErlNifEnv, ErlNifTerm};
use rustler::{Binary, Encoder, Env, OwnedBinary, ResourceArc, Term};
use rustyjson_core::parser::locate::{Duplicates, LocateOptions, Located, Locator};
use rustyjson_core::parser::ParseError;

use crate::aligned::{self, Anchor};
use crate::continuation;
use crate::decode::{flags_and_limits, FLOAT_DECIMALS, RAW_STRINGS};

rustler::atoms! { ok, error, first, last, badarg, out_of_memory, term_limit }

use rustyjson_core::overflow::{catch_overflow, Overflow};

/// Bytes walked between looks at the clock (the walk skips ~1 GB/s: well under 0.1 ms).
const SLICE_BYTES: usize = 64 * 1024;
/// A slice on a normal scheduler yields once it has run this long.
const YIELD_AFTER: Duration = Duration::from_micros(500);
/// How far past a slice's end a string may run and still be scanned in it (the decoder's limit).
const STRING_SCAN: usize = 128 * 1024;

/// A walk that yielded: the locator and where it goes on.
struct Walk {
    locator: Locator,
    pos: usize,
    /// Where the input's bytes are: every slice must find them there (see `aligned`).
    anchor: Anchor,
}

struct LocateJob(Mutex<Option<Walk>>);

#[rustler::resource_impl]
impl rustler::Resource for LocateJob {}

/// The NIF entry: `{:ok, [{start, stop} | nil]}` for each pointer of `pointers` (lists of unescaped tokens, as
/// binaries) in `input`, or the decoder's `{:error, position}` / `{:error, {position, token}}` for an invalid
/// document. `opts` is `RustyJson.DecodeOptions`' native term, `duplicates` `:first`, `:last` or `:error`.
pub fn locate<'a>(
    env: Env<'a>,
    input: Term<'a>,
    pointers: Term<'a>,
    opts: Term<'a>,
    duplicates: Term<'a>,
) -> Term<'a> {
    let (Ok(bytes), Some(pointers), Some(options)) = (
        input.decode::<Binary>(),
        tokens(pointers),
        options(opts, duplicates),
    ) else {
        return (error(), badarg()).encode(env);
    };
    // A document that takes more than one slice is read from where the first found it: one at a bit offset from
    // a copy of its own (Elixir makes it first, on a dirty scheduler, for the inputs it sends here). A smaller
    // one is walked in this call.
    let (input, bytes) = if bytes.len() > SLICE_BYTES {
        aligned::ensure(env.as_c_arg(), input.as_c_arg(), bytes.as_slice())
    } else {
        (input.as_c_arg(), bytes.as_slice())
    };
    let walk = Walk {
        locator: Locator::new(&pointers, options),
        pos: 0,
        anchor: Anchor::of(bytes),
    };
    slice(env, unsafe { Term::new(env, input) }, bytes, walk, false)
}

fn tokens(pointers: Term) -> Option<Vec<Vec<Vec<u8>>>> {
    let pointers: Vec<Vec<Binary>> = pointers.decode().ok()?;
    Some(
        pointers
            .iter()
            .map(|p| p.iter().map(|t| t.as_slice().to_vec()).collect())
            .collect(),
    )
}

/// The walk's options from the decoder's.
fn options(opts: Term, duplicates: Term) -> Option<LocateOptions> {
    let (flags, mut limits) = flags_and_limits(opts)?;
    limits.validate_utf8 = flags & RAW_STRINGS == 0;
    let duplicates = match duplicates.decode::<rustler::Atom>().ok()? {
        d if d == first() => Duplicates::First,
        d if d == last() => Duplicates::Last,
        d if d == error() => Duplicates::Error,
        _ => return None,
    };
    Some(LocateOptions {
        limits,
        duplicates,
        decimals: flags & FLOAT_DECIMALS != 0,
        stream: false,
        max_token: usize::MAX,
    })
}

/// One slice: walks until done (the result), out of time (a normal continuation) or before a long token (the rest
/// on a dirty scheduler). `dirty`: this slice runs on a dirty scheduler, to the end.
fn slice<'a>(env: Env<'a>, input: Term<'a>, bytes: &[u8], mut walk: Walk, dirty: bool) -> Term<'a> {
    let timed = !dirty && bytes.len() - walk.pos > SLICE_BYTES;
    let started = timed.then(Instant::now);
    let outcome = loop {
        let (limit, scan) = if dirty {
            (usize::MAX, None)
        } else {
            (walk.pos.saturating_add(SLICE_BYTES), Some(STRING_SCAN))
        };
        // Its stack of open containers, as deep as the input nests, fails into an error where the allocator
        // refuses it (`rustyjson_core::overflow`).
        let pos = &mut walk.pos;
        let ran = catch_overflow(|| walk.locator.run(bytes, pos, limit, scan, true));
        let ran = ran.map_err(|why| {
            let needed = match why {
                Overflow::Memory { needed } | Overflow::Limit { needed, .. } => needed,
            };
            let needed = walk.locator.held_bytes().saturating_add(needed);
            ParseError::Memory {
                at: walk.pos,
                needed,
            }
        });
        match ran.and_then(|located| located) {
            Ok(Located::Paused) if started.is_some_and(|s| s.elapsed() < YIELD_AFTER) => continue,
            Ok(Located::Paused) => break Next::Yield(false),
            Ok(Located::LongToken) => break Next::Yield(true),
            Ok(_) => break Next::Done(Ok(())),
            Err(e) => break Next::Done(Err(e)),
        }
    };
    if let Some(started) = started {
        let percent = match outcome {
            Next::Done(_) => (started.elapsed().as_micros() / 10).clamp(1, 100) as c_int,
            Next::Yield(_) => 100,
        };
        unsafe { enif_consume_timeslice(env.as_c_arg(), percent) };
    }
    match outcome {
        Next::Done(Ok(())) => {
            let spans: Vec<Term> = walk
                .locator
                .found()
                .iter()
                .map(|span| match span {
                    Some(span) => span.encode(env),
                    None => rustler::types::atom::nil().encode(env),
                })
                .collect();
            (ok(), spans).encode(env)
        }
        Next::Done(Err(e)) => (error(), reason(env, bytes, e)).encode(env),
        Next::Yield(to_dirty) => {
            let job = ResourceArc::new(LocateJob(Mutex::new(Some(walk))));
            let args = [input.as_c_arg(), job.encode(env).as_c_arg()];
            let (next, flags): (continuation::Continuation, _) = if to_dirty {
                (locate_dirty, rustler::sys::ERL_NIF_DIRTY_JOB_CPU_BOUND)
            } else {
                (locate_normal, rustler::sys::ERL_NIF_NORMAL_JOB)
            };
            continuation::schedule(env, c"locate", flags, next, &args)
        }
    }
}

enum Next {
    Done(Result<(), ParseError>),
    /// Yield; to a dirty scheduler when true.
    Yield(bool),
}

/// The decoder's error term for `e`: the position, or `{position, token}`.
fn reason<'a>(env: Env<'a>, bytes: &[u8], e: ParseError) -> Term<'a> {
    match e {
        ParseError::Token { start, end } | ParseError::DuplicateKey { start, end } => {
            let mut token = OwnedBinary::new(end - start);
            token.as_mut_slice().copy_from_slice(&bytes[start..end]);
            (start, token.release(env)).encode(env)
        }
        ParseError::UnexpectedByte(at)
        | ParseError::UnexpectedEnd(at)
        | ParseError::LongToken(at)
        | ParseError::Key { start: at, .. } => at.encode(env),
        ParseError::Memory { at, needed } => (out_of_memory(), at, needed as u64).encode(env),
        ParseError::TooLarge { at, limit } => (term_limit(), at, limit as u64).encode(env),
    }
}

unsafe extern "C" fn locate_normal(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
) -> ErlNifTerm {
    resume(env, argc, argv, false)
}

unsafe extern "C" fn locate_dirty(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
) -> ErlNifTerm {
    resume(env, argc, argv, true)
}

/// A continuation: `argv` is `[input, job]`.
unsafe fn resume(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
    dirty: bool,
) -> ErlNifTerm {
    continuation::run(env, argc, argv, |env, args| {
        let walk = match *args {
            [input, job] => input.decode::<Binary>().ok().zip(
                job.decode::<ResourceArc<LocateJob>>()
                    .ok()
                    .and_then(|job| job.0.lock().ok()?.take()),
            ),
            _ => None,
        };
        match walk {
            Some((bytes, walk)) if walk.anchor.holds(bytes.as_slice()) => {
                slice(env, args[0], bytes.as_slice(), walk, dirty)
            }
            _ => (error(), badarg()).encode(env),
        }
    })
}
