//! Time-sliced scheduling: one call's run (a slice, or the whole walk on a dirty scheduler), yielding or moving
//! to a dirty scheduler when the time is up, and continuing from a checkpoint with the output carried in a resource.

use std::ffi::c_int;
use std::mem::MaybeUninit;
use std::sync::Mutex;

use crate::continuation;
use rustler::sys::{
    enif_consume_timeslice, ErlNifEnv, ErlNifTerm, ERL_NIF_DIRTY_JOB_CPU_BOUND, ERL_NIF_NORMAL_JOB,
};
use rustler::{Encoder, Env, ResourceArc, Term};
use rustyjson_core::buffer::Buffer;
use rustyjson_core::overflow::{catch_overflow, Overflow};

use super::atoms;
use super::options::{decode_options, layout_len};
use super::output::{detach, finish, finish_holes, BinStorage, STACK_BYTES};
use super::templates;
use super::walker::{Fail, Walker};

/// Resuming steps each open hash map's iterator up to its position again (lists, ordered objects, flat maps and
/// structs are taken up where they were), when the walk reaches it: beyond this many elements in all, the call
/// moves to a dirty scheduler instead of yielding (in a big heap a step can cost a cache miss: 50,000 of them up
/// to about 0.5 ms, which a slice pays on top of its `TIME_LIMIT`).
const RESUME_WALK_MAX: usize = 50_000;

/// The same call, continued on a dirty CPU scheduler (no time limit): `argv` is `[term, opts]` (start over) or
/// `[term, opts, partial, frames, depth, rewalk]` (continue from a checkpoint: the output so far, and the open
/// frames as `budget::Checkpoint` lists them).
unsafe extern "C" fn encode_dirty(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
) -> ErlNifTerm {
    continue_encode(env, argc, argv, false)
}

/// The same call, continued for another time-limited slice on a normal scheduler: `argv` as `encode_dirty`'s.
unsafe extern "C" fn encode_yielded(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
) -> ErlNifTerm {
    continue_encode(env, argc, argv, true)
}

unsafe fn continue_encode(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
    normal: bool,
) -> ErlNifTerm {
    continuation::run(env, argc, argv, |env, args| match *args {
        [term, opts] => run(env, term, opts, normal, None),
        [term, opts, partial, frames, depth, rewalk] => {
            let at = Resumed {
                partial,
                frames,
                depth: depth.decode().unwrap_or(0),
                rewalk: rewalk.decode().unwrap_or(0),
            };
            run(env, term, opts, normal, Some(at))
        }
        _ => rustler::types::atom::badarg().encode(env),
    })
}

pub(super) fn run<'a>(
    env: Env<'a>,
    term: Term<'a>,
    opts: Term<'a>,
    normal: bool,
    resume: Option<Resumed<'a>>,
) -> Term<'a> {
    if normal && resume.is_none() && layout_len(opts) > LAYOUT_NORMAL_MAX {
        // One indentation of a long layout string is a piece no slice can split: the whole call runs dirty.
        let args = [term.as_c_arg(), opts.as_c_arg()];
        return continuation::schedule(
            env,
            c"encode_dirty",
            ERL_NIF_DIRTY_JOB_CPU_BOUND,
            encode_dirty,
            &args,
        );
    }
    let Some(options) = decode_options(opts) else {
        return (atoms::error(), (rustler::types::atom::badarg(), opts)).encode(env);
    };
    let mut stack_buf = [MaybeUninit::<u8>::uninit(); STACK_BYTES];
    let storage = BinStorage::new();
    // SAFETY: the stack array outlives the buffer (both live in this frame) and BinStorage copies out of it.
    let mut out =
        unsafe { Buffer::from_raw(stack_buf.as_mut_ptr() as *mut u8, STACK_BYTES, storage) };
    let mut walker = Walker::new(env, &options, normal);
    let root = term.as_c_arg();
    let mut resumed = false;
    // The templates the earlier slices wrote from (`templates::reported`).
    let mut carried_templates = Vec::new();
    // The output length the slice started from: a slice that ends with no more made no progress.
    let mut resumed_len = None;
    if let Some(at) = resume {
        let taken = at
            .partial
            .decode::<ResourceArc<Partial>>()
            .ok()
            .and_then(|p| p.0.lock().ok()?.take());
        if let Some((storage, len, used)) = taken {
            carried_templates = used;
            // SAFETY: the storage holds `len` written bytes in an allocated binary of `bin.size` bytes.
            out = unsafe {
                let (data, cap) = (storage.bin.data, storage.bin.size);
                let mut b = Buffer::from_raw(data, cap, storage);
                b.advance(len);
                b
            };
            // The frames are taken up as the walk reaches them (`Walker::pull_below`).
            walker.below = at.frames.as_c_arg();
            walker.below_depth = at.depth;
            walker.below_rewalk = at.rewalk;
            resumed = true;
            resumed_len = Some(len);
        }
    }
    out.set_limit(options.max_output);
    // An output past its ceiling (or one the allocator refuses) leaves the walk here, with the walk's state
    // dropped and nothing allocated for it (`rustyjson_core::overflow`).
    let mut result = catch_overflow(|| walker.walk(root, &mut out, resumed))
        .unwrap_or_else(|why| Err(Fail::Overflow(why)));
    if result.is_ok() && out.len() > options.max_output {
        // Written into the stack array, which never grows: the ceiling is checked at the end instead.
        result = Err(Fail::Overflow(Overflow::Limit {
            needed: out.len(),
            limit: options.max_output,
        }));
    }
    let has_holes = !walker.holes.is_empty();
    if has_holes && !matches!(result, Ok(()) | Err(Fail::Budget)) {
        // Errors are reported in document order by the path that resolves every struct first.
        result = Err(Fail::Elixir);
    }
    if let Err(
        Fail::InvalidByte(..)
        | Fail::Unsupported(_)
        | Fail::DuplicateKey(_)
        | Fail::ImproperList(_),
    ) = result
    {
        if walker.inside_struct() {
            result = Err(Fail::Elixir);
        }
    }
    // A walk that never looked at the clock was short (under CHECK_EVERY units): nothing worth reporting.
    if let Some(started) = walker.started {
        // A slice that ran out of time reports the whole timeslice used, so the process is scheduled out before
        // its next slice and processes waiting on this scheduler run in between (as after a yield in Erlang code).
        let percent = if matches!(result, Err(Fail::Budget)) {
            100
        } else {
            (started.elapsed().as_micros() / 10).clamp(1, 100) as c_int
        };
        unsafe { enif_consume_timeslice(env.as_c_arg(), percent) };
    }
    match result {
        Ok(()) if has_holes => {
            let holes = std::mem::take(&mut walker.holes);
            let reported = walker.templates_to_report(std::mem::take(&mut carried_templates));
            drop(walker);
            templates::reported(env, finish_holes(env, out, &holes), reported)
        }
        Ok(()) => {
            let reported = walker.templates_to_report(std::mem::take(&mut carried_templates));
            drop(walker);
            templates::reported(env, finish(env, out), reported)
        }
        Err(Fail::Budget) => {
            // Continue from the last mark: for another slice on this scheduler when resuming is cheap and this
            // slice got somewhere, otherwise on a dirty scheduler (strict mode, sorted maps and pending holes start
            // over there: their key sets, sorted pairs and holes are not carried; so does a walk whose checkpoint
            // no longer fits its term).
            let carried = !(walker.restart || options.strict || options.sort || has_holes);
            let checkpoint = carried.then(|| walker.checkpoint());
            let mark_len = walker.mark.len;
            let used = walker.templates_to_report(std::mem::take(&mut carried_templates));
            drop(walker);
            let checkpoint = checkpoint.filter(|c| c.frames.is_some() && c.depth > 0);
            let progressed = resumed_len.is_none_or(|len| mark_len > len);
            let yield_here = checkpoint
                .as_ref()
                .is_some_and(|c| c.rewalk <= RESUME_WALK_MAX && progressed);
            let carried = checkpoint.and_then(|c| Some((c.frames?, c.depth, c.rewalk)));
            let args: Vec<ErlNifTerm> = if let Some((frames, depth, rewalk)) = carried {
                out.truncate(mark_len);
                let (storage, len) = detach(out);
                let carried = (storage, len, used);
                let partial = ResourceArc::new(Partial(Mutex::new(Some(carried))));
                vec![
                    term.as_c_arg(),
                    opts.as_c_arg(),
                    partial.encode(env).as_c_arg(),
                    frames,
                    (depth as u64).encode(env).as_c_arg(),
                    (rewalk as u64).encode(env).as_c_arg(),
                ]
            } else {
                drop(out);
                vec![term.as_c_arg(), opts.as_c_arg()]
            };
            let (name, flags, fun): (&std::ffi::CStr, _, continuation::Continuation) = if yield_here
            {
                (c"encode", ERL_NIF_NORMAL_JOB, encode_yielded)
            } else {
                (c"encode_dirty", ERL_NIF_DIRTY_JOB_CPU_BOUND, encode_dirty)
            };
            continuation::schedule(env, name, flags, fun, &args)
        }
        Err(fail) => fail.into_term(env),
    }
}

/// Where a continued call takes up the walk: the `Partial` output, and the checkpoint's frames, how many, and the
/// map elements their resumes step over (`budget::Checkpoint`).
pub(super) struct Resumed<'a> {
    partial: Term<'a>,
    frames: Term<'a>,
    depth: usize,
    rewalk: usize,
}

/// `pretty:` strings this long (in all) make the encode run on a dirty scheduler from the start: a newline writes
/// the indentation once per level in one piece, which the slices' time checks cannot split.
const LAYOUT_NORMAL_MAX: usize = 4096;

/// The output written before a checkpoint, carried to the dirty scheduler in a resource (a binary term would
/// count against the process's binary heap and can trigger a garbage collection of the caller on the way).
struct Partial(Mutex<Option<Carried>>);

/// What a checkpoint carries: the output so far, its length, and the `{module, id}` of the templates the earlier
/// slices wrote from (reported with the result: `templates::reported`).
type Carried = (BinStorage, usize, Vec<(ErlNifTerm, u64)>);

#[rustler::resource_impl]
impl rustler::Resource for Partial {}
