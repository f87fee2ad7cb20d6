//! Whether the running code of a module exports a function, asked of the VM's own export table: how the encoder
//! knows that a derived struct's template belongs to the implementation loaded now (`encode::templates`).
//!
//! erl_nif has no call for it (`erlang:function_exported/3` is a BIF), and nothing a NIF can see changes when a
//! module is replaced: a custom `defimpl` loaded over a derived one leaves the derived code old but alive. So the
//! NIF looks up, by name in the running VM (`dlsym`), the function that BIF calls (`erts_find_function`) and the
//! VM's active code index, and uses them only if they answer probes as `function_exported/3` does: functions
//! a module loaded at boot exports, one of another arity, one it does not define, a module that is not loaded. Where they cannot be found (Windows, whose NIFs see only erl_nif; a
//! VM that does not export them) or do not answer so, or under `RUSTYJSON_FAST_PATHS=off`, this is off and the
//! encoder uses no template (Elixir writes derived structs through the protocol).

use rustler::sys::{enif_make_atom_len, ErlNifEnv, ErlNifTerm};
use std::ffi::{c_uint, c_void};
use std::sync::atomic::{AtomicU32, Ordering};

/// The VM's number of code indices (`ERTS_NUM_CODE_IX`): the active one is below it.
const CODE_INDICES: u32 = 3;

/// `erts_find_function(module, function, arity, code_index)`: the export entry when the function is defined in
/// the code that index holds, else null. (Terms are machine words; a code index an unsigned int.)
type FindFunction = unsafe extern "C" fn(usize, usize, c_uint, c_uint) -> *const c_void;

/// The VM's functions and index, found and checked.
pub struct CodeChecks {
    find: FindFunction,
    active: &'static AtomicU32,
}

impl CodeChecks {
    /// Finds and checks them in the running VM; `None` where they are missing or answer wrong.
    ///
    /// # Safety
    /// `env` must be a live NIF environment (of a call of this library's module).
    #[cfg(unix)]
    pub unsafe fn learn(env: *mut ErlNifEnv) -> Option<CodeChecks> {
        let find = libc::dlsym(libc::RTLD_DEFAULT, c"erts_find_function".as_ptr());
        let active = libc::dlsym(libc::RTLD_DEFAULT, c"the_active_code_index".as_ptr());
        if find.is_null() || active.is_null() || !(active as usize).is_multiple_of(4) {
            return None;
        }
        let checks = CodeChecks {
            find: std::mem::transmute::<*mut c_void, FindFunction>(find),
            active: &*(active as *const AtomicU32),
        };
        checks.answers_probes(env).then_some(checks)
    }

    #[cfg(not(unix))]
    pub unsafe fn learn(_env: *mut ErlNifEnv) -> Option<CodeChecks> {
        None
    }

    /// Whether the probes get `function_exported/3`'s answers.
    unsafe fn answers_probes(&self, env: *mut ErlNifEnv) -> bool {
        if self.active.load(Ordering::Acquire) >= CODE_INDICES {
            return false;
        }
        // Plain Erlang functions of a module every VM has loaded by now (not BIFs, whose entries differ; not this
        // library's module, whose code is not current yet while its `@on_load` runs).
        let atom = |name: &str| enif_make_atom_len(env, name.as_ptr().cast(), name.len());
        let (lists, reverse, seq) = (atom("lists"), atom("reverse"), atom("seq"));
        let absent = atom("rusty_json_never_defined");
        self.exported(lists, reverse, 1) == Some(true)
            && self.exported(lists, seq, 2) == Some(true)
            && self.exported(lists, seq, 3) == Some(true)
            && self.exported(lists, reverse, 7) == Some(false)
            && self.exported(lists, absent, 0) == Some(false)
            && self.exported(absent, reverse, 1) == Some(false)
    }

    /// Whether `module:function/arity` (atoms, `arity` under 256) is exported by the module's running code.
    pub fn exported(&self, module: ErlNifTerm, function: ErlNifTerm, arity: u32) -> Option<bool> {
        let index = self.active.load(Ordering::Acquire);
        if index >= CODE_INDICES || arity > 255 {
            return None;
        }
        // SAFETY: the VM's own lookup (what `erlang:function_exported/3` runs), with atoms and the active index;
        // it only reads the export table, as a BIF does on any scheduler.
        let entry = unsafe {
            (self.find)(
                super::word::bits(module),
                super::word::bits(function),
                arity as c_uint,
                index as c_uint,
            )
        };
        Some(!entry.is_null())
    }
}
