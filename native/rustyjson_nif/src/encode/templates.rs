//! Derived structs' compiled templates: the global registry Elixir fills (`register_template`) and the walk reads.
//!
//! A template is used only while the implementation that registered it is the loaded one: its module's running
//! code still exports `__template__/0`. Where the VM can be asked (`term::code`), that is checked once per module
//! per walk, and a custom `defimpl` loaded over a derived one, or the implementation deleted, makes the struct a
//! hole that Elixir writes through the protocol. Where it cannot (OTP 29 exports nothing but erl_nif's API;
//! Windows), the encode's result comes with the implementations it used (`reported`): Elixir checks them
//! (`function_exported/3`), forgets the templates of those no longer loaded (`forget_templates`) and encodes
//! again. A derived implementation loaded again registers its own template when it loads (`@on_load`).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use rustler::sys::{ErlNifEnv, ErlNifTerm};
use rustler::{Encoder, Env, Term};

use crate::term;

rustler::atoms! { __template__, templates }

/// A derived struct's compiled template: the fields it writes (in order), each one's key as written (`"name"`,
/// escaped at compile time), its index among the struct's sorted keys (where a flat map holds its value), and the
/// struct's size (`__struct__` included).
pub struct Template {
    pub(super) fields: Vec<ErlNifTerm>,
    pub(super) keys: Vec<Box<[u8]>>,
    pub(super) index: Vec<usize>,
    pub(super) size: usize,
    /// The same template with its fields in their keys' byte order (`sort_keys: true`), built once at
    /// registration so a sorted walk reads a template as any walk does. `None` in the sorted template itself.
    pub(super) sorted: Option<Arc<Template>>,
    /// The implementation module that registered it (`RustyJson.Encoder.<Struct>`, an atom).
    pub(super) implementation: ErlNifTerm,
}

impl Template {
    /// The template a walk writes from: this one, or its sorted twin under `sort_keys: true`.
    pub(super) fn for_walk(self: &Arc<Self>, sort: bool) -> Arc<Template> {
        match &self.sorted {
            Some(sorted) if sort => sorted.clone(),
            _ => self.clone(),
        }
    }
}

/// Templates by module atom (atoms are never freed, so their terms are valid in any environment, forever).
static TEMPLATES: RwLock<Option<HashMap<ErlNifTerm, Arc<Template>>>> = RwLock::new(None);

/// Registers `module`'s template made by the implementation module `implementation`: `all_keys` the struct's keys
/// as `Map.keys/1` lists them, `fields` the written fields in order, `keys` their written keys.
pub fn register_template<'a>(
    env: Env<'a>,
    module: Term<'a>,
    implementation: Term<'a>,
    all_keys: Term<'a>,
    fields: Term<'a>,
    keys: Term<'a>,
) -> Term<'a> {
    let badarg = || rustler::types::atom::badarg().encode(env);
    let (Ok(all), Ok(fields), Ok(keys)) = (
        all_keys.decode::<Vec<Term>>(),
        fields.decode::<Vec<Term>>(),
        keys.decode::<Vec<rustler::Binary>>(),
    ) else {
        return badarg();
    };
    if !module.is_atom()
        || !implementation.is_atom()
        || fields.len() != keys.len()
        || fields.iter().any(|f| !f.is_atom())
    {
        return badarg();
    }
    let index = fields
        .iter()
        .map(|f| all.iter().position(|k| k == f).unwrap_or(usize::MAX))
        .collect::<Vec<usize>>();
    let fields: Vec<ErlNifTerm> = fields.iter().map(|f| f.as_c_arg()).collect();
    let keys: Vec<Box<[u8]>> = keys.iter().map(|k| k.as_slice().into()).collect();
    // Literal keys are `"name"` in plain ASCII (checked at compile time): ordered by the name between the quotes
    // (with them, `"a b"` would sort before `"a"`, as ' ' < '"').
    let name = |key: &[u8]| -> Vec<u8> {
        key.strip_prefix(b"\"")
            .and_then(|k| k.strip_suffix(b"\""))
            .unwrap_or(key)
            .to_vec()
    };
    let mut order: Vec<usize> = (0..fields.len()).collect();
    order.sort_by_key(|&i| name(&keys[i]));
    let sorted = Template {
        fields: order.iter().map(|&i| fields[i]).collect(),
        keys: order.iter().map(|&i| keys[i].clone()).collect(),
        index: order.iter().map(|&i| index[i]).collect(),
        size: all.len(),
        sorted: None,
        implementation: implementation.as_c_arg(),
    };
    let template = Template {
        fields,
        keys,
        index,
        size: all.len(),
        sorted: Some(Arc::new(sorted)),
        implementation: implementation.as_c_arg(),
    };
    // (A poisoned lock still holds a consistent table: inserts are the only writes.)
    TEMPLATES
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(module.as_c_arg(), Arc::new(template));
    rustler::types::atom::ok().encode(env)
}

/// Whether the VM can be asked which implementation is loaded (`term::code`): then every template used is checked.
pub(super) fn checked(env: *mut ErlNifEnv) -> bool {
    term::layout(env).code.is_some()
}

/// `result` of an encode, or `{:templates, implementations, result}` when it wrote from templates the VM could not
/// check: Elixir checks them before it takes the result (`RustyJson.Encode.result/3`).
pub(super) fn reported<'a>(
    env: Env<'a>,
    result: Term<'a>,
    implementations: Vec<ErlNifTerm>,
) -> Term<'a> {
    if implementations.is_empty() {
        return result;
    }
    let list: Vec<Term<'a>> = implementations
        .into_iter()
        .map(|i| unsafe { Term::new(env, i) })
        .collect();
    (templates(), list, result).encode(env)
}

/// Forgets the templates registered by the implementation modules `implementations` (no longer loaded).
pub fn forget_templates<'a>(env: Env<'a>, implementations: Term<'a>) -> Term<'a> {
    let Ok(implementations) = implementations.decode::<Vec<Term>>() else {
        return rustler::types::atom::badarg().encode(env);
    };
    let gone: Vec<ErlNifTerm> = implementations.iter().map(|i| i.as_c_arg()).collect();
    if let Some(table) = TEMPLATES
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .as_mut()
    {
        table.retain(|_, t| !gone.contains(&t.implementation));
    }
    rustler::types::atom::ok().encode(env)
}

/// `module`'s template, if one is registered and the implementation that registered it is the loaded one.
pub(super) fn template(env: *mut ErlNifEnv, module: ErlNifTerm) -> Option<Arc<Template>> {
    let template = TEMPLATES
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()?
        .get(&module)
        .cloned()?;
    current(env, &template).then_some(template)
}

/// Whether `template`'s implementation is loaded: its running code exports `__template__/0` (a custom
/// implementation does not; a deleted module exports nothing). False where the VM cannot be asked.
fn current(env: *mut ErlNifEnv, template: &Template) -> bool {
    let Some(code) = &term::layout(env).code else {
        // Elixir checks it after the walk (`reported`).
        return true;
    };
    code.exported(template.implementation, __template__().as_c_arg(), 0) == Some(true)
}
