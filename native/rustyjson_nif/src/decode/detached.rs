//! A large decode detached from the caller's heap (`decode_detached/3`): slices on the caller's normal
//! scheduler that build into an environment of their own, and the result sent as one message.

use super::slices::{
    consume_timeslice, give_back_stacks, input_bytes, schedule, take_stacks, Slice, YIELD_AFTER,
};
use super::*;
use crate::aligned::{self, Anchor};

/// A large decode detached from the caller's heap: its terms are built in an environment of its own, which no
/// collection of the caller copies while the decode runs, in slices of ~0.5 ms on the caller's normal scheduler;
/// the result goes to the caller in a message, `{reference, result}`, which takes over the environment's memory
/// without a copy. (Built on the caller's heap instead, every yield let a collection copy the partial result
/// again; built on a dirty scheduler, the work competes with the normal schedulers for the cores.)
struct Detached {
    env: *mut ErlNifEnv,
    /// The input binary and the caller's reference, as terms of `env`.
    input: T,
    reference: T,
    stacks: Stacks<T, Key>,
    pos: usize,
    intern: Option<InternTables>,
    /// Where the input's bytes are (the keys and key tables point there): every slice must find them there.
    anchor: Anchor,
}

// SAFETY: `env` and its terms belong to this state alone; only the one call that took it from its resource
// touches it.
unsafe impl Send for Detached {}

impl Drop for Detached {
    fn drop(&mut self) {
        unsafe { enif_free_env(self.env) };
    }
}

struct DetachedDecode(Mutex<Option<Detached>>);

#[rustler::resource_impl]
impl rustler::Resource for DetachedDecode {}

/// `decode` detached from the caller's heap (see [`Detached`]): returns `:ok`, and the result arrives as the
/// message `{reference, result}`.
pub fn decode_detached<'a>(
    env: Env<'a>,
    input: Term<'a>,
    opts: Term<'a>,
    reference: Term<'a>,
) -> Term<'a> {
    let Some(bytes) = input_bytes(env, input.as_c_arg()) else {
        return (atoms::error(), atoms::badarg()).encode(env);
    };
    // Slices read the input from where this one found it: an input at a bit offset is read from a copy of its
    // own (Elixir makes it first, on a dirty scheduler, for the inputs it sends here).
    let (input, bytes) = aligned::ensure(env.as_c_arg(), input.as_c_arg(), bytes);
    let input = unsafe { Term::new(env, input) };
    let own = unsafe { enif_alloc_env() };
    let state = Detached {
        env: own,
        input: unsafe { enif_make_copy(own, input.as_c_arg()) },
        reference: unsafe { enif_make_copy(own, reference.as_c_arg()) },
        stacks: take_stacks(),
        pos: 0,
        intern: None,
        anchor: Anchor::of(bytes),
    };
    run_detached(env, input, opts, state, Slice::Normal)
}

/// The next slice of the detached decode held by `detached`, a `DetachedDecode` resource.
pub(super) fn detached_continue<'a>(
    env: Env<'a>,
    input: Term<'a>,
    opts: Term<'a>,
    detached: Term<'a>,
    slice: Slice,
) -> Term<'a> {
    let state = detached
        .decode::<ResourceArc<DetachedDecode>>()
        .ok()
        .and_then(|r| r.0.lock().ok()?.take());
    match state {
        Some(state) => run_detached(env, input, opts, state, slice),
        None => rustler::types::atom::badarg().encode(env),
    }
}

/// One slice of a detached decode: parses for ~0.5 ms (or, in a build slice, one large container), then
/// yields, or sends the result and returns `:ok`.
fn run_detached<'a>(
    env: Env<'a>,
    input: Term<'a>,
    opts: Term<'a>,
    mut state: Detached,
    slice: Slice,
) -> Term<'a> {
    let started = Instant::now();
    let Some(bytes) = input_bytes(env, input.as_c_arg()).filter(|b| state.anchor.holds(b)) else {
        return (atoms::error(), atoms::badarg()).encode(env);
    };
    let marker = ();
    // SAFETY: `state.env` lives as long as `state`, which outlives the builder.
    let own = unsafe { Env::new(&marker, state.env) };
    let mut builder = TermBuilder::new(own, state.input, bytes, opts);
    builder.defer_large = slice == Slice::Normal;
    // A message environment's heap is fragments that fit each allocation, so every block of the arena is a tuple
    // filled and written over: strings of 25-64 bytes copied there cost more than the VM's own sub-binaries
    // (OTP 29 twitter +1.5%), where they are copies too.
    builder.short_input = write::SHORT_INPUT_MAX;
    if let Some(tables) = state.intern.take() {
        builder.resume_intern(tables);
    }
    let parsed = loop {
        let limit = slice.limit(state.pos);
        match parser::parse_some(
            bytes,
            &mut builder,
            &mut state.stacks,
            &mut state.pos,
            limit,
        ) {
            Ok(Progress::Done(v)) => break Ok(v),
            Err(e) => break Err(e),
            Ok(Progress::Paused) => {
                let deferred = std::mem::take(&mut builder.deferred);
                if slice == Slice::Normal && !deferred && started.elapsed() < YIELD_AFTER {
                    continue;
                }
                // Yield: the partial terms stay where they are (nothing collects `state.env`).
                state.intern = builder.suspend_intern();
                drop(builder);
                let paused = ResourceArc::new(DetachedDecode(Mutex::new(Some(state))));
                let args = [
                    input.as_c_arg(),
                    opts.as_c_arg(),
                    paused.encode(env).as_c_arg(),
                ];
                consume_timeslice(env, started);
                let (next, flags) = slice.next(deferred);
                return schedule(env, next, flags, &args);
            }
        }
    };
    let result = builder.outcome(parsed, bytes);
    drop(builder);
    let stacks = std::mem::take(&mut state.stacks);
    give_back_stacks(stacks);
    unsafe {
        let message = enif_make_tuple_from_array(state.env, [state.reference, result].as_ptr(), 2);
        let mut caller = MaybeUninit::<ErlNifPid>::uninit();
        enif_self(env.as_c_arg(), caller.as_mut_ptr());
        enif_send(env.as_c_arg(), caller.as_ptr(), state.env, message);
    }
    consume_timeslice(env, started);
    atoms::ok().encode(env)
}
