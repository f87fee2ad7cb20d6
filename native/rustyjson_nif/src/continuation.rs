//! The shape every `enif_schedule_nif` continuation (and the hot NIF entries, `raw_nif!`) shares: raw arguments
//! in, a term out, and a panic turned into `badarg` rather than unwinding into the VM.

/// Registers `$f(env, args)` as the NIF `$name/$arity`, with `args` the VM's own argument array (raw terms, not
/// copied) and a raw term returned. `#[rustler::nif]`'s wrapper first copies them into a new `Vec` (an allocation
/// and a free per call: about 5% of decoding a small document), and `Term`s (two words each) copied into an array
/// were read back with a failed store forwarding (perf, OTP 29); the calls every request makes (`encode/2`,
/// `decode/2`) are registered this way.
#[macro_export]
macro_rules! raw_nif {
    ($name:literal, $arity:literal, $f:expr) => {
        rustler::codegen_runtime::inventory::submit!(rustler::Nif {
            name: concat!($name, "\0").as_ptr() as *const rustler::codegen_runtime::c_char,
            arity: $arity,
            flags: 0,
            raw_func: {
                unsafe extern "C" fn raw_func(
                    env: *mut rustler::sys::ErlNifEnv,
                    argc: std::ffi::c_int,
                    argv: *const rustler::sys::ErlNifTerm,
                ) -> rustler::sys::ErlNifTerm {
                    $crate::continuation::run_raw(env, argc, argv, $f)
                }
                raw_func
            },
        });
    };
}

use rustler::sys::{enif_schedule_nif, ErlNifDirtyTaskFlags, ErlNifEnv, ErlNifTerm};
use rustler::{Env, Term};
use std::ffi::{c_int, CStr};

/// A function `enif_schedule_nif` continues a call in.
pub type Continuation =
    unsafe extern "C" fn(*mut ErlNifEnv, c_int, *const ErlNifTerm) -> ErlNifTerm;

/// The calling process continued in `next` with `args` (raw terms of `env`), on the scheduler `flags` names
/// (`ERL_NIF_NORMAL_JOB`, or a dirty one); `name` is what the VM reports the call as.
pub fn schedule<'a>(
    env: Env<'a>,
    name: &CStr,
    flags: ErlNifDirtyTaskFlags,
    next: Continuation,
    args: &[ErlNifTerm],
) -> Term<'a> {
    // SAFETY: `env` is the calling NIF's and `args` are its terms; `next` has the continuation's signature.
    unsafe {
        Term::new(
            env,
            enif_schedule_nif(
                env.as_c_arg(),
                name.as_ptr(),
                flags as c_int,
                next,
                args.len() as c_int,
                args.as_ptr(),
            ),
        )
    }
}

/// The most arguments a NIF entry or continuation of this library takes.
const MAX_ARGS: usize = 6;

/// Runs `f` over the continuation's environment and arguments.
///
/// # Safety
/// `env` and `argv` (`argc` terms) must be what the VM passed to the continuation.
pub unsafe fn run(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
    f: impl for<'a> FnOnce(Env<'a>, &[Term<'a>]) -> Term<'a>,
) -> ErlNifTerm {
    run_raw(env, argc, argv, |env, raw| {
        // On the stack: a heap Vec here was an allocation and a free on every call.
        let mut args = [Term::new(env, ErlNifTerm::default()); MAX_ARGS];
        for (arg, &term) in args.iter_mut().zip(raw) {
            *arg = Term::new(env, term);
        }
        f(env, &args[..raw.len()]).as_c_arg()
    })
}

/// [`run`] with the arguments as the VM passed them (raw terms of `env`) and a raw term returned.
///
/// # Safety
/// `env` and `argv` (`argc` terms) must be what the VM passed to the continuation.
pub unsafe fn run_raw(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
    f: impl for<'a> FnOnce(Env<'a>, &[ErlNifTerm]) -> ErlNifTerm,
) -> ErlNifTerm {
    let marker = ();
    let env = Env::new(&marker, env);
    let argc = argc.max(0) as usize;
    if argc > MAX_ARGS || (argc > 0 && argv.is_null()) {
        return rustler::sys::enif_make_badarg(env.as_c_arg());
    }
    let args: &[ErlNifTerm] = if argc == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(argv, argc)
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(env, args)))
        .unwrap_or_else(|_| rustler::sys::enif_make_badarg(env.as_c_arg()))
}
