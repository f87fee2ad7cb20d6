//! Scheduling a decode: slices of ~0.5 ms on the caller's normal scheduler with the partial terms carried across
//! each yield in the caller's heap (`decode/2`), the uninterrupted dirty decode (`decode_dirty/2`), and builds of
//! large containers moved to a dirty scheduler between normal slices.

use super::builder::CallEnd;
use super::detached::detached_continue;
use super::*;
use crate::aligned::{self, Anchor};

/// Bytes parsed between clock checks on a normal scheduler (at most about 0.1 ms of the densest documents).
const SLICE_BYTES: usize = 32 * 1024;
/// A call on a normal scheduler yields (`enif_schedule_nif`) once it has run this long.
pub(super) const YIELD_AFTER: Duration = Duration::from_micros(500);
/// The most pending values and keys a yield carries (a tuple's arity limit is 2^24 - 1).
const MAX_PENDING: usize = (1 << 24) - 1;

/// A decode that yielded: the parser's stacks (their terms are stale: the tuple passed along holds the live ones)
/// and the position to continue from.
struct Paused {
    stacks: Stacks<T, Key>,
    pos: usize,
    /// Where the input's bytes were (its keys point there): the next slice must find them there.
    anchor: Anchor,
}

// SAFETY: the raw pointers in `Key`s point into the input binary (kept alive as an argument of the continuation)
// or are replaced on resume; the state is only touched by the one continuation call that owns the resource.
unsafe impl Send for Paused {}

struct PausedDecode(Mutex<Option<Paused>>);

#[rustler::resource_impl]
impl rustler::Resource for PausedDecode {}

/// Where a slice of a decode runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Slice {
    /// On a normal scheduler: yields every ~0.5 ms, and leaves each large container's build to a `Build` slice.
    Normal,
    /// On a dirty scheduler, to the end (`decode_dirty`).
    Dirty,
    /// On a dirty scheduler, the one container a normal slice deferred; then back to a normal scheduler.
    Build,
}

impl Slice {
    /// The continuation of a decode yielding from this slice: another normal slice, or (`deferred`) a build.
    pub(super) fn next(self, deferred: bool) -> (Continuation, ErlNifDirtyTaskFlags) {
        if deferred {
            (decode_build, ERL_NIF_DIRTY_JOB_CPU_BOUND)
        } else {
            (decode_continue, ERL_NIF_NORMAL_JOB)
        }
    }

    /// How far this slice parses from `pos`: a build slice stops right after its container closes.
    pub(super) fn limit(self, pos: usize) -> usize {
        match self {
            Slice::Normal => pos.saturating_add(SLICE_BYTES),
            Slice::Dirty => usize::MAX,
            Slice::Build => pos,
        }
    }
}

use continuation::Continuation;

/// `decode` on the calling (normal) scheduler: yields every ~0.5 ms and continues in `decode_continue`. `input`
/// and `opts` are terms of `env` (raw: see `raw_nif!`), and so is the result.
pub fn decode(env: Env, input: T, opts: T) -> T {
    run(env, input, opts, Slice::Normal, None)
}

/// `decode` on a dirty scheduler: runs to the end.
pub fn decode_dirty(env: Env, input: T, opts: T) -> T {
    run(env, input, opts, Slice::Dirty, None)
}

/// The continuation of a yielded decode on a normal scheduler: `argv` is `[input, opts, paused resource,
/// pending tuple]` (in-heap), `[input, opts, detached resource]`, or `[input, opts]` (a decode started again
/// over an aligned copy of its input: `Call::restart_aligned`).
unsafe extern "C" fn decode_continue(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
) -> ErlNifTerm {
    continue_in(env, argc, argv, Slice::Normal)
}

/// The same on a dirty scheduler, for the build of one large container.
unsafe extern "C" fn decode_build(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
) -> ErlNifTerm {
    continue_in(env, argc, argv, Slice::Build)
}

unsafe fn continue_in(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
    slice: Slice,
) -> ErlNifTerm {
    continuation::run_raw(env, argc, argv, |env, args| match *args {
        [input, opts, paused, pending] => run(env, input, opts, slice, Some((paused, pending))),
        [input, opts] => run(env, input, opts, Slice::Normal, None),
        [input, opts, detached] => detached_continue(
            env,
            Term::new(env, input),
            Term::new(env, opts),
            Term::new(env, detached),
            slice,
        )
        .as_c_arg(),
        _ => rustler::types::atom::badarg().encode(env).as_c_arg(),
    })
}

fn run(env: Env, input: T, opts: T, slice: Slice, resume: Option<(T, T)>) -> T {
    let Some(bytes) = input_bytes(env, input) else {
        return (atoms::error(), atoms::badarg()).encode(env).as_c_arg();
    };
    let call = Call {
        env,
        input,
        opts,
        slice,
        bytes,
        first: resume.is_none(),
        // The clock is read only where a slice check can come (a smaller input is one slice: no clock, no report).
        started: (slice == Slice::Normal && (bytes.len() > SLICE_BYTES || resume.is_some()))
            .then(Instant::now),
    };
    match resume {
        Some((paused, pending)) => match restore(env, paused, pending, bytes) {
            Some((mut stacks, pos)) => {
                let opts = unsafe { Term::new(env, opts) };
                let mut builder = TermBuilder::new(env, input, bytes, opts);
                let term = call.drive(&mut stacks, &mut builder, pos);
                give_back_stacks(stacks);
                term
            }
            None => (atoms::error(), atoms::badarg()).encode(env).as_c_arg(),
        },
        // The stacks and builder kept per scheduler thread, used in place (small documents then parse without
        // allocating or moving them).
        None => with_thread_state(|state| {
            let opts = unsafe { Term::new(env, opts) };
            let builder = TermBuilder::reuse(&mut state.builder, env, input, bytes, opts);
            let in_use = CallEnd(builder);
            call.drive(&mut state.stacks, in_use.0, 0)
        }),
    }
}

/// One call's slice of a decode.
struct Call<'a> {
    env: Env<'a>,
    input: T,
    opts: T,
    slice: Slice,
    bytes: &'a [u8],
    /// The decode's first slice (whose input may still be at a bit offset; a later slice's never is).
    first: bool,
    started: Option<Instant>,
}

impl<'a> Call<'a> {
    /// Parses from `pos` with `stacks` to the end (the decode's result) or to a yield (the stacks move into the
    /// continuation's resource).
    #[inline(always)]
    fn drive(
        &self,
        stacks: &mut Stacks<T, Key>,
        builder: &mut TermBuilder<'a>,
        mut pos: usize,
    ) -> T {
        let Call {
            env,
            slice,
            bytes,
            started,
            ..
        } = *self;
        let normal = slice == Slice::Normal;
        builder.defer_large = normal;
        let parsed = loop {
            let limit = slice.limit(pos);
            match parser::parse_some(bytes, builder, stacks, &mut pos, limit) {
                Ok(Progress::Done(v)) => break Ok(v),
                Err(e) => break Err(e),
                Ok(Progress::Paused) => {
                    let deferred = std::mem::take(&mut builder.deferred);
                    let (values, keys) = stacks.pending();
                    if values.len() + keys.len() > MAX_PENDING {
                        // Too many pending terms to carry across a yield: build here after all.
                        builder.defer_large = false;
                        continue;
                    }
                    let due = started.is_some_and(|started| started.elapsed() >= YIELD_AFTER);
                    if normal && !deferred && !due {
                        continue;
                    }
                    if self.first && aligned::at_bit_offset(env.as_c_arg(), self.input, bytes.len())
                    {
                        return self.restart_aligned();
                    }
                    return self.pause(std::mem::take(stacks), pos, deferred);
                }
            }
        };
        if let Some(started) = started {
            consume_timeslice(env, started);
        }
        builder.outcome(parsed, bytes)
    }

    /// Yields: the pending terms travel in a tuple (an argument, so the garbage collector keeps and moves them),
    /// the rest in a resource.
    #[cold]
    fn pause(&self, mut stacks: Stacks<T, Key>, pos: usize, deferred: bool) -> T {
        let env = self.env;
        let (values, keys) = stacks.pending();
        let mut terms = Vec::with_capacity(values.len() + keys.len());
        terms.extend_from_slice(values);
        terms.extend(keys.iter().map(|k| k.term));
        let tuple = unsafe {
            enif_make_tuple_from_array(env.as_c_arg(), terms.as_ptr(), terms.len() as u32)
        };
        let anchor = Anchor::of(self.bytes);
        let paused = ResourceArc::new(PausedDecode(Mutex::new(Some(Paused {
            stacks,
            pos,
            anchor,
        }))));
        let args = [self.input, self.opts, paused.encode(env).as_c_arg(), tuple];
        if let Some(started) = self.started {
            consume_timeslice(env, started);
        }
        let (next, flags) = self.slice.next(deferred);
        schedule(env, next, flags, &args).as_c_arg()
    }

    /// A first slice that must yield over an input at a bit offset (its bytes are erl_nif's copy for this call
    /// alone, and the stacks point into them): the decode starts again, in a new slice, over an aligned copy.
    /// The work thrown away is one slice's; Elixir aligns the large inputs before it calls (`Native.aligned/1`).
    #[cold]
    fn restart_aligned(&self) -> T {
        let (copy, _) = aligned::copy(self.env.as_c_arg(), self.bytes);
        if let Some(started) = self.started {
            consume_timeslice(self.env, started);
        }
        let args = [copy, self.opts];
        schedule(self.env, decode_continue, ERL_NIF_NORMAL_JOB, &args).as_c_arg()
    }
}

/// The bytes of `input`, a binary term of `env`.
pub(super) fn input_bytes(env: Env<'_>, input: T) -> Option<&[u8]> {
    let mut bin = MaybeUninit::<ErlNifBinary>::uninit();
    if unsafe { enif_inspect_binary(env.as_c_arg(), input, bin.as_mut_ptr()) } == 0 {
        return None;
    }
    let bin = unsafe { bin.assume_init() };
    Some(if bin.size == 0 {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(bin.data, bin.size) }
    })
}

/// The parser's stacks kept by this scheduler thread (so small documents parse without allocating).
pub(super) fn take_stacks() -> Stacks<T, Key> {
    PER_THREAD
        .with(|s| {
            s.try_borrow_mut()
                .map(|mut s| std::mem::take(&mut s.stacks))
        })
        .unwrap_or_default()
}

/// `f` of this scheduler thread's kept state, in place (a fresh one if it is in use).
#[inline(always)]
fn with_thread_state<R>(f: impl FnOnce(&mut PerThread) -> R) -> R {
    PER_THREAD.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => f(&mut s),
        Err(_) => f(&mut PerThread {
            stacks: Stacks::default(),
            builder: None,
        }),
    })
}

/// Gives the stacks (emptied by the parser) back to this thread for the next call.
pub(super) fn give_back_stacks(stacks: Stacks<T, Key>) {
    PER_THREAD.with(|s| {
        if let Ok(mut s) = s.try_borrow_mut() {
            s.stacks = stacks;
        }
    });
}

/// Reschedules the calling process to continue in `next` with `args`.
pub(super) fn schedule<'a>(
    env: Env<'a>,
    next: Continuation,
    flags: ErlNifDirtyTaskFlags,
    args: &[T],
) -> Term<'a> {
    continuation::schedule(env, c"decode", flags, next, args)
}

/// Tells the scheduler how much of its time slice the call used (1 ms is 100%).
pub(super) fn consume_timeslice(env: Env, started: Instant) {
    let percent = (started.elapsed().as_micros() / 10).clamp(1, 100) as c_int;
    unsafe { enif_consume_timeslice(env.as_c_arg(), percent) };
}

/// The stacks and position of a yielded decode, with the live terms of `pending` put back in place of the
/// stale ones (keys' bytes too: a key copied into a binary may have moved; one in the input has not).
fn restore(env: Env, paused: T, pending: T, input: &[u8]) -> Option<(Stacks<T, Key>, usize)> {
    let paused: ResourceArc<PausedDecode> = unsafe { Term::new(env, paused) }.decode().ok()?;
    let Paused {
        mut stacks,
        pos,
        anchor,
    } = paused.0.lock().ok()?.take()?;
    if !anchor.holds(input) {
        return None;
    }
    let raw_env = env.as_c_arg();
    let mut arity = 0;
    let mut elems: *const T = std::ptr::null();
    if unsafe { enif_get_tuple(raw_env, pending, &mut arity, &mut elems) } == 0 {
        return None;
    }
    let (values, keys) = stacks.pending();
    if arity as usize != values.len() + keys.len() {
        return None;
    }
    let elems = unsafe { std::slice::from_raw_parts(elems, arity as usize) };
    values.copy_from_slice(&elems[..values.len()]);
    let input_range = input.as_ptr_range();
    for (k, &term) in keys.iter_mut().zip(&elems[values.len()..]) {
        k.term = term;
        if !k.ptr.is_null() && !input_range.contains(&k.ptr) {
            let mut bin = MaybeUninit::<ErlNifBinary>::uninit();
            if unsafe { enif_inspect_binary(raw_env, term, bin.as_mut_ptr()) } == 0 {
                return None;
            }
            k.ptr = unsafe { bin.assume_init() }.data;
        }
    }
    Some((stacks, pos))
}
