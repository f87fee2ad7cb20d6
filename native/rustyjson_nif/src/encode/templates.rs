//! Derived structs' compiled templates: the global registry Elixir fills (`register_template`) and the walk reads.
//!
//! Which template a struct of a module should be written from is the protocol's dispatch in the running code
//! (consolidated or not; derived again, custom, purged), which a NIF cannot see: erl_nif tells it nothing about
//! loaded code. So every result written from templates comes with the `{module, id}` of each one it used
//! (`reported`), the id a hash of the template's contents; Elixir compares them with the template of what the
//! protocol dispatches to now (`RustyJson.Encoder.Templates`), forgets the stale ones (`forget_templates`) and
//! encodes again. Registrations may race with module loads in any order: a stale one costs an encode, never the
//! output.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use rustler::sys::ErlNifTerm;
use rustler::{Encoder, Env, Term};

rustler::atoms! { templates }

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
    /// The id of its contents (`RustyJson.Encoder.Templates.template/3`), reported with every result it wrote.
    pub(super) id: u64,
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

/// Registers `module`'s template of id `id`: `all_keys` the struct's keys as `Map.keys/1` lists them, `fields` the
/// written fields in order, `keys` their written keys. It replaces any other: a stale one is found by the
/// check after the encode that uses it.
pub fn register_template<'a>(
    env: Env<'a>,
    module: Term<'a>,
    id: Term<'a>,
    all_keys: Term<'a>,
    fields: Term<'a>,
    keys: Term<'a>,
) -> Term<'a> {
    let badarg = || rustler::types::atom::badarg().encode(env);
    let (Ok(id), Ok(all), Ok(fields), Ok(keys)) = (
        id.decode::<u64>(),
        all_keys.decode::<Vec<Term>>(),
        fields.decode::<Vec<Term>>(),
        keys.decode::<Vec<rustler::Binary>>(),
    ) else {
        return badarg();
    };
    if !module.is_atom() || fields.len() != keys.len() || fields.iter().any(|f| !f.is_atom()) {
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
        id,
    };
    let template = Template {
        fields,
        keys,
        index,
        size: all.len(),
        sorted: Some(Arc::new(sorted)),
        id,
    };
    // (A poisoned lock still holds a consistent table: inserts are the only writes.)
    TEMPLATES
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(module.as_c_arg(), Arc::new(template));
    rustler::types::atom::ok().encode(env)
}

/// `result` of an encode, or `{:templates, [{module, id}], result}` when it wrote from templates: Elixir checks
/// them against the protocol's dispatch before it takes the result (`RustyJson.Encode.result/3`).
pub(super) fn reported<'a>(
    env: Env<'a>,
    result: Term<'a>,
    used: Vec<(ErlNifTerm, u64)>,
) -> Term<'a> {
    if used.is_empty() {
        return result;
    }
    let list: Vec<Term<'a>> = used
        .into_iter()
        // SAFETY: module atoms are valid in every environment.
        .map(|(module, id)| (unsafe { Term::new(env, module) }, id).encode(env))
        .collect();
    (templates(), list, result).encode(env)
}

/// Forgets the templates of the `{module, id}` pairs `used` (stale), unless another was registered since.
pub fn forget_templates<'a>(env: Env<'a>, used: Term<'a>) -> Term<'a> {
    let Ok(used) = used.decode::<Vec<(Term, u64)>>() else {
        return rustler::types::atom::badarg().encode(env);
    };
    if let Some(table) = TEMPLATES
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .as_mut()
    {
        for (module, id) in used {
            if table.get(&module.as_c_arg()).is_some_and(|t| t.id == id) {
                table.remove(&module.as_c_arg());
            }
        }
    }
    rustler::types::atom::ok().encode(env)
}

/// `module`'s template, if one is registered.
pub(super) fn template(module: ErlNifTerm) -> Option<Arc<Template>> {
    TEMPLATES
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()?
        .get(&module)
        .cloned()
}
