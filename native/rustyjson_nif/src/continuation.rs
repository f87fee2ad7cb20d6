//! The shape every `enif_schedule_nif` continuation shares: raw arguments in, a term out, and a panic turned
//! into `badarg` rather than unwinding into the VM (what `#[rustler::nif]` does for the NIF entries).

use rustler::sys::{ErlNifEnv, ErlNifTerm};
use rustler::{Env, Term};
use std::ffi::c_int;

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
    let marker = ();
    let env = Env::new(&marker, env);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let args: Vec<Term> = (0..argc.max(0) as usize)
            .map(|i| Term::new(env, *argv.add(i)))
            .collect();
        f(env, &args)
    }));
    match result {
        Ok(term) => term.as_c_arg(),
        Err(_) => rustler::sys::enif_make_badarg(env.as_c_arg()),
    }
}
