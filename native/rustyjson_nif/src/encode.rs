//! Encoding: walks a BEAM term into the core writer in one pass, with an explicit stack (no native recursion),
//! writing into a buffer that becomes the result binary without a second copy.
//!
//! Scheduling: the walk starts on the calling (normal) scheduler with a time limit (`TIME_LIMIT`; the clock is read
//! every `CHECK_EVERY` work units). Small terms finish within it and never pay a scheduler hop. When the time is
//! up, the walk stops at the last point between two elements (a `Mark`) and the call yields: it is rescheduled with
//! the output so far (in a `Partial` resource) and each open container's position, the stack is rebuilt from those
//! positions and the walk goes on for another slice. It stays on the normal scheduler, like jiffy, so a big encode
//! never holds a thread other processes wait for; it moves to a dirty CPU scheduler (no limit) only when resuming
//! would cost too much (open containers far into long lists or big maps, whose positions are found again by
//! walking), when a slice made no progress (one string longer than a slice), or when the walk cannot be carried
//! (`maps: :strict`, pending holes).
//!
//! Structs: fragments, ordered objects, Calendar.ISO dates and times, and derived structs whose compiled template
//! is registered (`register_template`, a global table keyed by module atom) are written here in the same walk.
//! Any other struct (a custom `defimpl`, a fragment function, a derived module met for the first time) is left as a
//! hole: the walk goes on and returns `{:holes, iolist}`, the output's pieces (sub-binaries of the one result
//! binary) alternating with those terms, which Elixir writes through the protocol (one pass, no restart). With
//! `pretty:` a hole returns `{:error, :elixir}` at once (Elixir then encodes compactly, holes filled, and lays the
//! text out with the Formatter, as Jason's `pretty:` does). After an error when holes are pending (so errors come
//! in document order), and for map keys that are not binaries, atoms or numbers, the walk returns
//! `{:error, :elixir}`: Elixir resolves the term and calls again.

use std::collections::HashMap;
use std::collections::HashSet;
use std::ffi::c_int;
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use crate::continuation;
use crate::term::map_order::{self, Order};
use crate::term::{self, read::Reads};
use rustler::sys::{
    enif_alloc_binary, enif_consume_timeslice, enif_get_atom, enif_get_double, enif_get_int64,
    enif_get_list_cell, enif_get_map_size, enif_get_map_value, enif_get_tuple, enif_get_uint64,
    enif_inspect_binary, enif_inspect_iolist_as_binary, enif_make_binary,
    enif_make_list_from_array, enif_make_new_binary, enif_make_sub_binary,
    enif_map_iterator_create, enif_map_iterator_destroy, enif_map_iterator_get_pair,
    enif_map_iterator_next, enif_map_iterator_prev, enif_realloc_binary, enif_release_binary,
    enif_schedule_nif, enif_term_to_binary, enif_term_type, ErlNifBinary, ErlNifCharEncoding,
    ErlNifEnv, ErlNifMapIterator, ErlNifMapIteratorEntry, ErlNifTerm, ErlNifTermType,
    ERL_NIF_DIRTY_JOB_CPU_BOUND,
};
use rustler::{Encoder, Env, ResourceArc, Term};
use rustyjson_core::buffer::{Buffer, Storage};
use rustyjson_core::escape::{self, Mode};
use rustyjson_core::number;
use rustyjson_core::pretty::Pretty;

mod atoms {
    rustler::atoms! {
        error,
        nil,
        true_ = "true",
        false_ = "false",
        unsupported,
        invalid_byte,
        duplicate_key,
        improper_list,
        elixir,
        json,
        javascript_safe,
        html_safe,
        unicode_safe,
        object,
        encode,
        __struct__,
        fragment = "Elixir.RustyJson.Fragment",
        holes,
        ordered_object = "Elixir.RustyJson.OrderedObject",
        values,
        date = "Elixir.Date",
        time = "Elixir.Time",
        naive_date_time = "Elixir.NaiveDateTime",
        date_time = "Elixir.DateTime",
        calendar_iso = "Elixir.Calendar.ISO",
        calendar,
        year,
        month,
        day,
        hour,
        minute,
        second,
        microsecond,
        utc_offset,
        std_offset,
        time_zone,
    }
}

/// A derived struct's compiled template: the fields it writes (in order), each one's key as written (`"name"`,
/// escaped at compile time), its index among the struct's sorted keys (where a flat map holds its value), and the
/// struct's size (`__struct__` included).
pub struct Template {
    fields: Vec<ErlNifTerm>,
    keys: Vec<Box<[u8]>>,
    index: Vec<usize>,
    size: usize,
}

/// Templates by module atom (atoms are never freed, so their terms are valid in any environment, forever).
static TEMPLATES: RwLock<Option<HashMap<ErlNifTerm, Arc<Template>>>> = RwLock::new(None);

/// Registers `module`'s template: `all_keys` the struct's keys as `Map.keys/1` lists them, `fields` the written
/// fields in order, `keys` their written keys.
pub fn register_template<'a>(
    env: Env<'a>,
    module: Term<'a>,
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
    if !module.is_atom() || fields.len() != keys.len() || fields.iter().any(|f| !f.is_atom()) {
        return badarg();
    }
    let index = fields
        .iter()
        .map(|f| all.iter().position(|k| k == f).unwrap_or(usize::MAX))
        .collect();
    let template = Template {
        fields: fields.iter().map(|f| f.as_c_arg()).collect(),
        keys: keys.iter().map(|k| k.as_slice().into()).collect(),
        index,
        size: all.len(),
    };
    // (A poisoned lock still holds a consistent table: inserts are the only writes.)
    TEMPLATES
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(module.as_c_arg(), Arc::new(template));
    rustler::types::atom::ok().encode(env)
}

fn template(module: ErlNifTerm) -> Option<Arc<Template>> {
    TEMPLATES
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()?
        .get(&module)
        .cloned()
}

/// The signature of a NIF function `enif_schedule_nif` continues with.
type NifFn = unsafe extern "C" fn(*mut ErlNifEnv, c_int, *const ErlNifTerm) -> ErlNifTerm;

/// How long one slice of an encode may run on a normal scheduler before it yields.
const TIME_LIMIT: Duration = Duration::from_micros(800);

/// Work units between two looks at the clock. A unit is a value (two for a string, three for a float) or 32 bytes
/// of a string, fragment or indentation; 512 of them take 3-15 µs.
const CHECK_EVERY: usize = 512;

/// Resuming walks each open container up to its position again: beyond this many elements in all, the call moves to a
/// dirty scheduler instead of yielding (in a big heap a list cell can cost a cache miss: 50,000 of them up to
/// about 0.5 ms, which a slice pays on top of its `TIME_LIMIT`).
const RESUME_WALK_MAX: usize = 50_000;

/// What a unit costs at most (non-ASCII text), to judge one big piece (a long string) before starting it.
const NS_PER_UNIT_MAX: u64 = 40;

/// A long string, fragment or indentation costs one work unit per 2^5 bytes.
const BYTES_PER_UNIT_SHIFT: u32 = 5;

/// The atom cache: slots, and bytes of written atoms kept per call.
const ATOM_CACHE_SLOTS: usize = 64;
const ATOM_CACHE_BYTES: usize = 16 * 1024;

/// Output that fits here is written on the stack and copied once into a heap binary.
const STACK_BYTES: usize = 2048;

/// Options decoded from the compact term Elixir passes (`{escape, strict, pretty}`).
struct Options {
    mode: Mode,
    strict: bool,
    pretty: Option<Pretty>,
}

fn decode_options(opts: Term) -> Option<Options> {
    let (escape, strict, pretty): (Term, bool, Term) = opts.decode().ok()?;
    let mode = if escape == atoms::json().encode(opts.get_env()) {
        Mode::Json
    } else if escape == atoms::javascript_safe().encode(opts.get_env()) {
        Mode::JavaScript
    } else if escape == atoms::html_safe().encode(opts.get_env()) {
        Mode::Html
    } else if escape == atoms::unicode_safe().encode(opts.get_env()) {
        Mode::Unicode
    } else {
        return None;
    };
    let pretty = if pretty == atoms::nil().encode(opts.get_env()) {
        None
    } else {
        let (indent, line, after_colon): (rustler::Binary, rustler::Binary, rustler::Binary) =
            pretty.decode().ok()?;
        Some(Pretty {
            indent: indent.as_slice().to_vec(),
            line: line.as_slice().to_vec(),
            after_colon: after_colon.as_slice().to_vec(),
        })
    };
    Some(Options {
        mode,
        strict,
        pretty,
    })
}

/// The NIF entry on the normal scheduler.
pub fn encode<'a>(env: Env<'a>, term: Term<'a>, opts: Term<'a>) -> Term<'a> {
    run(env, term, opts, true, None)
}

/// The same call, continued on a dirty CPU scheduler (no time limit): `argv` is `[term, opts]` (start over) or
/// `[term, opts, partial, path]` (continue from a checkpoint: the output so far, and each frame's count).
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
        [term, opts, partial, path] => run(env, term, opts, normal, Some((partial, path))),
        _ => rustler::types::atom::badarg().encode(env),
    })
}

fn run<'a>(
    env: Env<'a>,
    term: Term<'a>,
    opts: Term<'a>,
    normal: bool,
    resume: Option<(Term<'a>, Term<'a>)>,
) -> Term<'a> {
    let Some(options) = decode_options(opts) else {
        return (atoms::error(), (rustler::types::atom::badarg(), opts)).encode(env);
    };
    let mut stack_buf = [MaybeUninit::<u8>::uninit(); STACK_BYTES];
    let storage = BinStorage::new();
    // SAFETY: the stack array outlives the buffer (both live in this frame) and BinStorage copies out of it.
    let mut out =
        unsafe { Buffer::from_raw(stack_buf.as_mut_ptr() as *mut u8, STACK_BYTES, storage) };
    let mut walker = Walker::new(env, &options, normal.then(Instant::now));
    let root = term.as_c_arg();
    let mut resumed = false;
    let mut resumed_path = None;
    if let Some((partial, path)) = resume {
        let path: Vec<usize> = path.decode().unwrap_or_default();
        resumed_path = Some(path.clone());
        let taken = partial
            .decode::<ResourceArc<Partial>>()
            .ok()
            .and_then(|p| p.0.lock().ok()?.take());
        if let Some((storage, len)) = taken {
            if walker.resume_from(root, &path) {
                // SAFETY: the storage holds `len` written bytes in an allocated binary of `bin.size` bytes.
                out = unsafe {
                    let (data, cap) = (storage.bin.data, storage.bin.size);
                    let mut b = Buffer::from_raw(data, cap, storage);
                    b.advance(len);
                    b
                };
                resumed = true;
                // The slice's time starts after the re-walk (bounded by RESUME_WALK_MAX), so every slice moves
                // the walk on by a full slice whatever the re-walk took.
                if walker.started.is_some() {
                    walker.started = Some(Instant::now());
                }
            } else {
                walker.clear_stack();
            }
        }
    }
    let mut result = walker.walk(root, &mut out, resumed);
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
            drop(walker);
            finish_holes(env, out, &holes)
        }
        Ok(()) => finish(env, out),
        Err(Fail::Budget) => {
            // Continue from the last mark: for another slice on this scheduler when resuming is cheap and this
            // slice got somewhere, otherwise on a dirty scheduler (strict mode and pending holes start over there:
            // their key sets and holes are not carried).
            let checkpoint = walker.checkpoint();
            let mark_len = walker.mark.len;
            drop(walker);
            let carried = !(options.strict || has_holes || checkpoint.path.is_empty());
            let yield_here = carried
                && checkpoint.path.iter().sum::<usize>() <= RESUME_WALK_MAX
                && resumed_path.as_ref() != Some(&checkpoint.path);
            let args: Vec<ErlNifTerm> = if carried {
                out.truncate(mark_len);
                let partial = ResourceArc::new(Partial(Mutex::new(Some(detach(out)))));
                vec![
                    term.as_c_arg(),
                    opts.as_c_arg(),
                    partial.encode(env).as_c_arg(),
                    checkpoint.path.encode(env).as_c_arg(),
                ]
            } else {
                drop(out);
                vec![term.as_c_arg(), opts.as_c_arg()]
            };
            let (name, flags, fun): (&std::ffi::CStr, c_int, NifFn) = if yield_here {
                (c"encode", 0, encode_yielded)
            } else {
                (
                    c"encode_dirty",
                    ERL_NIF_DIRTY_JOB_CPU_BOUND as c_int,
                    encode_dirty,
                )
            };
            unsafe {
                Term::new(
                    env,
                    enif_schedule_nif(
                        env.as_c_arg(),
                        name.as_ptr(),
                        flags,
                        fun,
                        args.len() as c_int,
                        args.as_ptr(),
                    ),
                )
            }
        }
        Err(fail) => fail.into_term(env),
    }
}

fn finish<'a>(env: Env<'a>, out: Buffer<BinStorage>) -> Term<'a> {
    let (mut storage, ptr, len) = out.into_parts();
    unsafe {
        if storage.allocated {
            if storage.bin.size != len {
                enif_realloc_binary(&mut storage.bin, len);
            }
            storage.allocated = false;
            Term::new(env, enif_make_binary(env.as_c_arg(), &mut storage.bin))
        } else {
            let mut result = ErlNifTerm::default();
            let data = enif_make_new_binary(env.as_c_arg(), len, &mut result);
            ptr::copy_nonoverlapping(ptr, data, len);
            Term::new(env, result)
        }
    }
}

/// Writes `v` in decimal with at least `width` digits (zero-padded), as Calendar.ISO's `zero_pad`: a negative
/// value is `-` and its padded absolute value.
fn pad(out: &mut Out, v: i64, width: usize) {
    let mut digits = [0u8; 20];
    let mut n = v.unsigned_abs();
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        out.push(b'-');
    }
    for _ in (digits.len() - i)..width {
        out.push(b'0');
    }
    out.extend(&digits[i..]);
}

/// The calendar types written natively.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Calendar {
    Date,
    Time,
    Naive,
    DateTime,
}

/// `{:holes, iolist}`: the output's pieces (sub-binaries of one binary) between the terms Elixir must write.
fn finish_holes<'a>(
    env: Env<'a>,
    out: Buffer<BinStorage>,
    holes: &[(usize, ErlNifTerm)],
) -> Term<'a> {
    let len = out.len();
    let bin = finish(env, out).as_c_arg();
    let raw = env.as_c_arg();
    let mut parts = Vec::with_capacity(holes.len() * 2 + 1);
    let mut at = 0;
    for &(pos, term) in holes {
        parts.push(unsafe { enif_make_sub_binary(raw, bin, at, pos - at) });
        parts.push(term);
        at = pos;
    }
    parts.push(unsafe { enif_make_sub_binary(raw, bin, at, len - at) });
    let list = unsafe { enif_make_list_from_array(raw, parts.as_ptr(), parts.len() as u32) };
    (atoms::holes(), unsafe { Term::new(env, list) }).encode(env)
}

/// The output written before a checkpoint, carried to the dirty scheduler in a resource (a binary term would
/// count against the process's binary heap and can trigger a garbage collection of the caller on the way).
struct Partial(Mutex<Option<(BinStorage, usize)>>);

#[rustler::resource_impl]
impl rustler::Resource for Partial {}

/// The written bytes of `out` in an allocated binary (copied off the stack array if they are still there).
fn detach(out: Out) -> (BinStorage, usize) {
    let (mut storage, ptr, len) = out.into_parts();
    if !storage.allocated {
        storage.grow(ptr, len, len.max(1));
    }
    (storage, len)
}

/// Output storage: an Erlang binary, allocated at the first growth past the stack array and handed to the VM as
/// the result.
struct BinStorage {
    bin: ErlNifBinary,
    allocated: bool,
}

impl BinStorage {
    fn new() -> Self {
        BinStorage {
            // SAFETY: ErlNifBinary is plain data (sizes and pointers); it is filled by enif_alloc_binary.
            bin: unsafe { MaybeUninit::zeroed().assume_init() },
            allocated: false,
        }
    }
}

unsafe impl Storage for BinStorage {
    fn grow(&mut self, ptr: *mut u8, len: usize, needed: usize) -> (*mut u8, usize) {
        let target = needed.max(len.saturating_mul(2)).max(4 * STACK_BYTES);
        unsafe {
            if self.allocated {
                if enif_realloc_binary(&mut self.bin, target) == 0 {
                    panic!("out of memory growing the JSON output to {target} bytes");
                }
            } else {
                if enif_alloc_binary(target, &mut self.bin) == 0 {
                    panic!("out of memory allocating the JSON output ({target} bytes)");
                }
                self.allocated = true;
                ptr::copy_nonoverlapping(ptr, self.bin.data, len);
            }
        }
        (self.bin.data, self.bin.size)
    }
}

// SAFETY: the binary is owned by this value alone; erl_nif binaries may be reallocated and released on any thread.
unsafe impl Send for BinStorage {}
unsafe impl Sync for BinStorage {}

impl Drop for BinStorage {
    fn drop(&mut self) {
        if self.allocated {
            unsafe { enif_release_binary(&mut self.bin) };
        }
    }
}

enum Fail {
    InvalidByte(u8, ErlNifTerm),
    Unsupported(ErlNifTerm),
    DuplicateKey(ErlNifTerm),
    /// A list whose last tail is not `[]` (the tail).
    ImproperList(ErlNifTerm),
    /// The term needs Elixir (a struct, a fragment function, an unusual key): resolve there and call again.
    Elixir,
    Budget,
}

impl Fail {
    fn into_term(self, env: Env) -> Term {
        let t = |raw| unsafe { Term::new(env, raw) };
        let reason = match self {
            Fail::InvalidByte(b, original) => (atoms::invalid_byte(), b, t(original)).encode(env),
            Fail::Unsupported(value) => (atoms::unsupported(), t(value)).encode(env),
            Fail::DuplicateKey(key) => (atoms::duplicate_key(), t(key)).encode(env),
            Fail::ImproperList(tail) => (atoms::improper_list(), t(tail)).encode(env),
            Fail::Elixir | Fail::Budget => atoms::elixir().encode(env),
        };
        (atoms::error(), reason).encode(env)
    }
}

/// The keys an object has written so far (`maps: :strict`). Boxed so frames stay small: most walks have none.
#[allow(clippy::box_collection)]
type KeySet = Box<HashSet<Vec<u8>>>;

enum Frame {
    /// `count` elements started; `tail` the rest of the list.
    List { tail: ErlNifTerm, count: usize },
    /// `count` pairs started; the iterator is on the last one started (or on the first when `count` is 0).
    Map {
        map: ErlNifTerm,
        // Inline: an iterator holds pointers into the map (or to its own heap-allocated work stack), never into
        // itself, so it may move with the stack vector (rustler's MapIterator moves it too).
        iter: ErlNifMapIterator,
        count: usize,
        backwards: bool,
        seen: Option<KeySet>,
    },
    /// A flat map (up to 32 keys) read in place: `count` of `len` pairs started.
    Flat {
        map: ErlNifTerm,
        keys: *const ErlNifTerm,
        vals: *const ErlNifTerm,
        len: usize,
        count: usize,
        seen: Option<KeySet>,
    },
    /// A derived struct written from its template: `count` fields started. `keys`/`vals` point into the map when
    /// it is flat (null otherwise).
    Struct {
        map: ErlNifTerm,
        template: Arc<Template>,
        keys: *const ErlNifTerm,
        vals: *const ErlNifTerm,
        count: usize,
    },
    /// An ordered object: a list of `{key, value}` (internal fragments, `RustyJson.Encode.keyword/2`).
    Pairs {
        tail: ErlNifTerm,
        count: usize,
        seen: Option<KeySet>,
    },
}

impl Frame {
    fn count(&self) -> usize {
        match self {
            Frame::List { count, .. }
            | Frame::Map { count, .. }
            | Frame::Flat { count, .. }
            | Frame::Struct { count, .. }
            | Frame::Pairs { count, .. } => *count,
        }
    }
}

/// A point between two elements where the walk can be resumed: output length, stack depth, and how many elements
/// the top frame had started.
#[derive(Clone, Copy, Default)]
struct Mark {
    len: usize,
    depth: usize,
    count: usize,
}

/// Where a walk stopped when its time ran out: the output up to `mark.len` and each frame's count.
struct Checkpoint {
    path: Vec<usize>,
}

struct Walker<'o> {
    env: *mut ErlNifEnv,
    /// The running VM's read layout (`term::read`).
    reads: Reads,
    mode: Mode,
    strict: bool,
    pretty: Option<&'o Pretty>,
    /// Units left before the next look at the clock.
    budget: usize,
    /// When the walk started on a normal scheduler (None on a dirty one: no limit).
    started: Option<Instant>,
    exhausted: bool,
    mark: Mark,
    atom_cache: Vec<(ErlNifTerm, u32, u32)>,
    atom_bytes: Vec<u8>,
    /// An atom was written before the cache existed.
    atom_seen: bool,
    nil: ErlNifTerm,
    /// `[]` (an immediate: every empty list is this word).
    empty_list: ErlNifTerm,
    true_: ErlNifTerm,
    false_: ErlNifTerm,
    struct_key: ErlNifTerm,
    fragment: ErlNifTerm,
    encode_key: ErlNifTerm,
    object: ErlNifTerm,
    ordered_object: ErlNifTerm,
    values_key: ErlNifTerm,
    stack: Vec<Frame>,
    /// Where Elixir must insert a struct's JSON (output offset, term); compact output only.
    holes: Vec<(usize, ErlNifTerm)>,
    /// Templates met in this call (a few modules; saves the global table's lock).
    templates: Vec<(ErlNifTerm, Arc<Template>)>,
}

impl Drop for Walker<'_> {
    fn drop(&mut self) {
        self.clear_stack();
    }
}

type Out = Buffer<BinStorage>;

impl<'o> Walker<'o> {
    fn new(env: Env, options: &'o Options, started: Option<Instant>) -> Self {
        let a = |atom: rustler::Atom| atom.encode(env).as_c_arg();
        Walker {
            env: env.as_c_arg(),
            reads: term::layout(env.as_c_arg()).reads,
            mode: options.mode,
            strict: options.strict,
            pretty: options.pretty.as_ref(),
            budget: if started.is_some() {
                CHECK_EVERY
            } else {
                usize::MAX
            },
            started,
            exhausted: false,
            mark: Mark::default(),
            atom_cache: Vec::new(),
            atom_bytes: Vec::new(),
            atom_seen: false,
            nil: a(atoms::nil()),
            empty_list: unsafe { enif_make_list_from_array(env.as_c_arg(), ptr::null(), 0) },
            true_: a(atoms::true_()),
            false_: a(atoms::false_()),
            struct_key: a(atoms::__struct__()),
            fragment: a(atoms::fragment()),
            encode_key: a(atoms::encode()),
            object: a(atoms::object()),
            ordered_object: a(atoms::ordered_object()),
            values_key: a(atoms::values()),
            stack: Vec::new(),
            holes: Vec::new(),
            templates: Vec::new(),
        }
    }

    fn clear_stack(&mut self) {
        for frame in self.stack.drain(..) {
            if let Frame::Map { mut iter, .. } = frame {
                unsafe { enif_map_iterator_destroy(self.env, &mut iter) };
            }
        }
    }

    /// Counts work; every CHECK_EVERY units the clock says whether the time on this scheduler is up (then the
    /// walk stops at the next mark).
    #[inline(always)]
    fn spend(&mut self, units: usize) {
        if self.budget > units {
            self.budget -= units;
        } else {
            self.look_at_clock();
        }
    }

    #[cold]
    #[inline(never)]
    fn look_at_clock(&mut self) {
        match self.started {
            Some(started) if started.elapsed() >= TIME_LIMIT => {
                self.budget = 0;
                self.exhausted = true;
            }
            Some(_) => self.budget = CHECK_EVERY,
            None => self.budget = usize::MAX,
        }
    }

    /// For one big piece of work (a long string or fragment): give up now rather than exceed the time limit.
    #[inline(always)]
    fn afford(&mut self, units: usize) -> Result<(), Fail> {
        if units > CHECK_EVERY {
            if let Some(started) = self.started {
                let cost = Duration::from_nanos(units as u64 * NS_PER_UNIT_MAX);
                if started.elapsed() + cost > TIME_LIMIT {
                    return Err(Fail::Budget);
                }
                self.budget = 0;
            }
        }
        self.spend(units);
        Ok(())
    }

    /// The resumption point after a `Fail::Budget`.
    fn checkpoint(&self) -> Checkpoint {
        let mut path: Vec<usize> = self.stack[..self.mark.depth]
            .iter()
            .map(Frame::count)
            .collect();
        if let Some(last) = path.last_mut() {
            *last = self.mark.count;
        }
        Checkpoint { path }
    }

    fn seen_set(&self) -> Option<KeySet> {
        if self.strict {
            Some(Box::default())
        } else {
            None
        }
    }

    #[inline(always)]
    fn separator(&mut self, out: &mut Out, first: bool) {
        if !first {
            out.push(b',');
        }
        self.newline(out);
    }

    #[inline(always)]
    fn newline(&mut self, out: &mut Out) {
        if self.pretty.is_some() {
            self.pretty_newline(out);
        }
    }

    /// A pretty newline costs its indentation (deep nesting makes long lines).
    #[inline(never)]
    fn pretty_newline(&mut self, out: &mut Out) {
        if let Some(p) = self.pretty {
            let depth = self.stack.len();
            p.newline(out, depth);
            self.spend((depth * p.indent.len()) >> BYTES_PER_UNIT_SHIFT);
        }
    }

    #[inline]
    fn colon(&self, out: &mut Out) {
        out.push(b':');
        if let Some(p) = self.pretty {
            out.extend(&p.after_colon);
        }
    }

    fn close(&mut self, out: &mut Out, byte: u8) {
        self.newline(out);
        out.push(byte);
    }

    #[inline(always)]
    fn list_cell(&self, list: ErlNifTerm) -> Option<(ErlNifTerm, ErlNifTerm)> {
        if self.reads.on() {
            return self.reads.cons(list);
        }
        let (mut head, mut tail) = (ErlNifTerm::default(), ErlNifTerm::default());
        if unsafe { enif_get_list_cell(self.env, list, &mut head, &mut tail) } != 0 {
            Some((head, tail))
        } else {
            None
        }
    }

    /// Writes `root`, or (when `resume` is true) continues from the frames `resume_from` rebuilt.
    fn walk(&mut self, root: ErlNifTerm, out: &mut Out, resume: bool) -> Result<(), Fail> {
        let mut value = root;
        let mut pending = !resume;
        loop {
            if pending {
                self.write_value(value, out)?;
            }
            pending = true;
            // Find the next value to write, closing finished containers.
            loop {
                let depth = self.stack.len();
                let Some(count) = self.stack.last().map(Frame::count) else {
                    return Ok(());
                };
                self.mark = Mark {
                    len: out.len(),
                    depth,
                    count,
                };
                if self.exhausted {
                    return Err(Fail::Budget);
                }
                let env = self.env;
                let top = self.stack.last_mut().unwrap();
                match top {
                    Frame::List { tail, count } => {
                        let cell = if self.reads.on() {
                            self.reads.cons(*tail)
                        } else {
                            let (mut h, mut r) = (ErlNifTerm::default(), ErlNifTerm::default());
                            (unsafe { enif_get_list_cell(env, *tail, &mut h, &mut r) } != 0)
                                .then_some((h, r))
                        };
                        if let Some((head, rest)) = cell {
                            *tail = rest;
                            *count += 1;
                            let first = *count == 1;
                            self.separator(out, first);
                            value = head;
                            break;
                        }
                        if *tail != self.empty_list
                            && unsafe { rustler::sys::enif_is_empty_list(env, *tail) } == 0
                        {
                            return Err(Fail::ImproperList(*tail));
                        }
                        self.stack.pop();
                        self.close(out, b']');
                    }
                    Frame::Map {
                        iter,
                        count,
                        backwards,
                        ..
                    } => {
                        let (mut key, mut val) = (ErlNifTerm::default(), ErlNifTerm::default());
                        let iter_ptr: *mut ErlNifMapIterator = iter;
                        let first = *count == 0;
                        let advanced = first
                            || unsafe {
                                if *backwards {
                                    enif_map_iterator_prev(env, iter_ptr)
                                } else {
                                    enif_map_iterator_next(env, iter_ptr)
                                }
                            } != 0;
                        if advanced
                            && unsafe {
                                enif_map_iterator_get_pair(env, iter_ptr, &mut key, &mut val)
                            } != 0
                        {
                            if key == self.struct_key
                                && matches!(
                                    unsafe { enif_term_type(env, val) },
                                    ErlNifTermType::ERL_NIF_TERM_TYPE_ATOM
                                )
                            {
                                return Err(Fail::Elixir);
                            }
                            *count += 1;
                            self.separator(out, first);
                            self.write_key(key, out)?;
                            self.colon(out);
                            value = val;
                            break;
                        }
                        if let Some(Frame::Map { mut iter, .. }) = self.stack.pop() {
                            unsafe { enif_map_iterator_destroy(env, &mut iter) };
                        }
                        self.close(out, b'}');
                    }
                    Frame::Flat {
                        keys,
                        vals,
                        len,
                        count,
                        ..
                    } => {
                        if *count < *len {
                            let i = *count;
                            // SAFETY: i < len; the map does not move during the call.
                            let (key, val) = unsafe { (*keys.add(i), *vals.add(i)) };
                            if key == self.struct_key
                                && matches!(
                                    unsafe { enif_term_type(env, val) },
                                    ErlNifTermType::ERL_NIF_TERM_TYPE_ATOM
                                )
                            {
                                return Err(Fail::Elixir);
                            }
                            *count += 1;
                            self.separator(out, i == 0);
                            self.write_key(key, out)?;
                            self.colon(out);
                            value = val;
                            break;
                        }
                        self.stack.pop();
                        self.close(out, b'}');
                    }
                    Frame::Struct {
                        map,
                        template,
                        keys,
                        vals,
                        count,
                    } => {
                        let i = *count;
                        if i < template.fields.len() {
                            let field = template.fields[i];
                            let at = template.index[i];
                            // SAFETY: `at` < the flat map's size (checked when the frame was opened).
                            let val = if !vals.is_null()
                                && at < template.size
                                && unsafe { *keys.add(at) } == field
                            {
                                unsafe { *vals.add(at) }
                            } else {
                                let mut v = ErlNifTerm::default();
                                if unsafe { enif_get_map_value(env, *map, field, &mut v) } == 0 {
                                    return Err(Fail::Elixir);
                                }
                                v
                            };
                            // The frame (and its template) stays on the stack while the key is written.
                            let key: *const [u8] = &*template.keys[i];
                            *count += 1;
                            self.separator(out, i == 0);
                            out.extend(unsafe { &*key });
                            self.colon(out);
                            value = val;
                            break;
                        }
                        self.stack.pop();
                        self.close(out, b'}');
                    }
                    Frame::Pairs { tail, count, .. } => {
                        let (mut head, mut rest) = (ErlNifTerm::default(), ErlNifTerm::default());
                        if unsafe { enif_get_list_cell(env, *tail, &mut head, &mut rest) } != 0 {
                            *tail = rest;
                            *count += 1;
                            let first = *count == 1;
                            self.separator(out, first);
                            value = self.write_pair_key(head, out)?;
                            break;
                        }
                        self.stack.pop();
                        self.close(out, b'}');
                    }
                }
            }
        }
    }

    /// Rebuilds the frames of a checkpoint (`path`: each frame's count) over `root`, without writing. Returns
    /// false when the term does not fit the path (then the caller starts over).
    fn resume_from(&mut self, root: ErlNifTerm, path: &[usize]) -> bool {
        let mut container = root;
        for (level, &count) in path.iter().enumerate() {
            let last = level + 1 == path.len();
            // The element the next level lives in: index count - 1 (the one in progress).
            let in_progress = if last { None } else { count.checked_sub(1) };
            if !last && in_progress.is_none() {
                return false;
            }
            let child = match self.rebuild_frame(container, count, in_progress) {
                Some(child) => child,
                None => return false,
            };
            if let Some(child) = child {
                container = child;
            }
        }
        true
    }

    /// Pushes the frame for `container` positioned after `count` started elements; returns the value of element
    /// `in_progress` when asked.
    fn rebuild_frame(
        &mut self,
        container: ErlNifTerm,
        count: usize,
        in_progress: Option<usize>,
    ) -> Option<Option<ErlNifTerm>> {
        let env = self.env;
        match unsafe { enif_term_type(env, container) } {
            ErlNifTermType::ERL_NIF_TERM_TYPE_LIST => {
                let mut tail = container;
                let mut child = None;
                for i in 0..count {
                    let (head, rest) = self.list_cell(tail)?;
                    if Some(i) == in_progress {
                        child = Some(head);
                    }
                    tail = rest;
                }
                self.stack.push(Frame::List { tail, count });
                Some(child)
            }
            ErlNifTermType::ERL_NIF_TERM_TYPE_MAP => {
                if let Some(pairs) = self.fragment_pairs(container) {
                    let mut tail = pairs;
                    let mut child = None;
                    for i in 0..count {
                        let (pair, rest) = self.list_cell(tail)?;
                        if Some(i) == in_progress {
                            child = Some(self.pair(pair)?.1);
                        }
                        tail = rest;
                    }
                    let seen = self.seen_set();
                    self.stack.push(Frame::Pairs { tail, count, seen });
                    return Some(child);
                }
                if let Some(module) = self.struct_module(container) {
                    let template = template(module)?;
                    if count > template.fields.len() {
                        return None;
                    }
                    let (keys, vals) = self.struct_values(container, &template);
                    let child = match in_progress {
                        Some(i) => {
                            let mut v = ErlNifTerm::default();
                            if unsafe {
                                enif_get_map_value(env, container, template.fields[i], &mut v)
                            } == 0
                            {
                                return None;
                            }
                            Some(v)
                        }
                        None => None,
                    };
                    self.stack.push(Frame::Struct {
                        map: container,
                        template,
                        keys,
                        vals,
                        count,
                    });
                    return Some(child);
                }
                if let Some((keys, vals, len)) = self.reads.flatmap(container) {
                    if count > len {
                        return None;
                    }
                    // SAFETY: count - 1 < len.
                    let child = in_progress.map(|i| unsafe { *vals.add(i) });
                    let seen = self.seen_set();
                    self.stack.push(Frame::Flat {
                        map: container,
                        keys,
                        vals,
                        len,
                        count,
                        seen,
                    });
                    return Some(child);
                }
                let mut size = 0;
                unsafe { enif_get_map_size(env, container, &mut size) };
                let (mut iter, backwards) = self.map_iterator(container, size)?;
                let mut child = None;
                for _ in 1..count {
                    let moved = unsafe {
                        if backwards {
                            enif_map_iterator_prev(env, &mut iter)
                        } else {
                            enif_map_iterator_next(env, &mut iter)
                        }
                    };
                    if moved == 0 {
                        unsafe { enif_map_iterator_destroy(env, &mut iter) };
                        return None;
                    }
                }
                if in_progress.is_some() {
                    let (mut key, mut val) = (ErlNifTerm::default(), ErlNifTerm::default());
                    unsafe { enif_map_iterator_get_pair(env, &mut iter, &mut key, &mut val) };
                    child = Some(val);
                }
                let seen = self.seen_set();
                self.stack.push(Frame::Map {
                    map: container,
                    iter,
                    count,
                    backwards,
                    seen,
                });
                Some(child)
            }
            _ => None,
        }
    }

    /// Writes a scalar, or opens a container and pushes its frame (its elements come from `walk`'s loop, so
    /// nothing here recurses).
    fn write_value(&mut self, term: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        self.spend(1);
        if let Some(i) = self.reads.small(term) {
            number::write_i64(out, i);
            return Ok(());
        }
        if let Some(f) = self.reads.float(term) {
            // A float costs about three times an integer or a short string.
            self.spend(2);
            number::write_f64(out, f);
            return Ok(());
        }
        if let Some(cell) = self.reads.cons(term) {
            return self.write_list(term, cell, out);
        }
        let env = self.env;
        match unsafe { enif_term_type(env, term) } {
            ErlNifTermType::ERL_NIF_TERM_TYPE_BITSTRING => {
                let bytes = self.binary(term).ok_or(Fail::Unsupported(term))?;
                // A string costs about twice an integer, plus its length.
                self.afford(1 + (bytes.len() >> BYTES_PER_UNIT_SHIFT))?;
                self.write_string(bytes, term, out)
            }
            ErlNifTermType::ERL_NIF_TERM_TYPE_INTEGER => self.write_integer(term, out),
            ErlNifTermType::ERL_NIF_TERM_TYPE_FLOAT => {
                self.spend(2);
                let mut f = 0.0;
                unsafe { enif_get_double(env, term, &mut f) };
                number::write_f64(out, f);
                Ok(())
            }
            ErlNifTermType::ERL_NIF_TERM_TYPE_ATOM => {
                if term == self.nil {
                    out.extend(b"null");
                } else if term == self.true_ {
                    out.extend(b"true");
                } else if term == self.false_ {
                    out.extend(b"false");
                } else {
                    self.write_atom(term, out)?;
                }
                Ok(())
            }
            ErlNifTermType::ERL_NIF_TERM_TYPE_LIST => self.open_list(term, out),
            ErlNifTermType::ERL_NIF_TERM_TYPE_MAP => self.open_map(term, out),
            _ => Err(Fail::Unsupported(term)),
        }
    }

    /// Writes the list `term` (whose first cell is `cell`): its leading numbers right here (a coordinate pair
    /// never gets a frame), the rest through a frame and `walk`'s loop. Each number costs what it costs in
    /// `write_value`; when the time is up the frame records where the list stopped.
    #[inline(always)]
    fn write_list(
        &mut self,
        term: ErlNifTerm,
        cell: (ErlNifTerm, ErlNifTerm),
        out: &mut Out,
    ) -> Result<(), Fail> {
        out.push(b'[');
        let mut tail = term;
        let mut count = 0;
        if self.pretty.is_none() {
            let mut next = Some(cell);
            while let Some((head, rest)) = next {
                if let Some(i) = self.reads.small(head) {
                    self.separator(out, count == 0);
                    number::write_i64(out, i);
                    self.spend(1);
                } else if let Some(f) = self.reads.float(head) {
                    self.separator(out, count == 0);
                    number::write_f64(out, f);
                    self.spend(3);
                } else {
                    break;
                }
                count += 1;
                tail = rest;
                if self.exhausted {
                    break;
                }
                next = self.reads.cons(rest);
            }
            if tail == self.empty_list && !self.exhausted {
                out.push(b']');
                return Ok(());
            }
        }
        self.stack.push(Frame::List { tail, count });
        Ok(())
    }

    fn open_list(&mut self, term: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        if unsafe { rustler::sys::enif_is_empty_list(self.env, term) } != 0 {
            out.extend(b"[]");
            return Ok(());
        }
        out.push(b'[');
        self.stack.push(Frame::List {
            tail: term,
            count: 0,
        });
        Ok(())
    }

    fn open_map(&mut self, term: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        let env = self.env;
        let mut size = 0;
        unsafe { enif_get_map_size(env, term, &mut size) };
        if size == 0 {
            out.extend(b"{}");
            return Ok(());
        }
        // A struct is known before anything is written: a flat map's keys are scanned (word compares), a larger
        // map is asked. (The walk still checks `__struct__` keys, and `inside_struct` errors, as a safety net.)
        let flat = self.reads.flatmap(term);
        let module = match flat {
            Some((keys, vals, len)) => (0..len)
                .find(|&i| unsafe { *keys.add(i) } == self.struct_key)
                .map(|i| unsafe { *vals.add(i) })
                .filter(|m| {
                    matches!(
                        unsafe { enif_term_type(env, *m) },
                        ErlNifTermType::ERL_NIF_TERM_TYPE_ATOM
                    )
                }),
            None => self.struct_module(term),
        };
        if let Some(module) = module {
            return self.open_struct(term, module, size, out);
        }
        if let Some((keys, vals, len)) = flat {
            out.push(b'{');
            let seen = self.seen_set();
            self.stack.push(Frame::Flat {
                map: term,
                keys,
                vals,
                len,
                count: 0,
                seen,
            });
            return Ok(());
        }
        let Some((iter, backwards)) = self.map_iterator(term, size) else {
            // A hash map in an order not learned is listed by Elixir (`Map.to_list/1`).
            return Err(match map_order::get() {
                Order::Unknown => Fail::Elixir,
                _ => Fail::Unsupported(term),
            });
        };
        out.push(b'{');
        let seen = self.seen_set();
        self.stack.push(Frame::Map {
            map: term,
            iter,
            count: 0,
            backwards,
            seen,
        });
        Ok(())
    }

    /// A struct: a fragment, a registered derived struct (written here from its template), or a hole for Elixir.
    #[inline(never)]
    fn open_struct(
        &mut self,
        term: ErlNifTerm,
        module: ErlNifTerm,
        size: usize,
        out: &mut Out,
    ) -> Result<(), Fail> {
        if module == self.fragment && size == 2 {
            return self.write_fragment(term, out);
        }
        if let Some(kind) = self.calendar_kind(module) {
            if self.write_calendar(term, kind, out).is_some() {
                return Ok(());
            }
            return self.hole(term, out);
        }
        if module == self.ordered_object && size == 2 {
            if let Some(pairs) = self.fragment_pairs(term) {
                return self.open_pairs(pairs, out);
            }
        }
        let template = match self.templates.iter().find(|(m, _)| *m == module) {
            Some((_, t)) => Some(t.clone()),
            None => {
                let found = template(module);
                if let Some(t) = &found {
                    self.templates.push((module, t.clone()));
                }
                found
            }
        };
        match template {
            Some(template) if template.size == size => {
                if template.fields.is_empty() {
                    out.extend(b"{}");
                    return Ok(());
                }
                let (keys, vals) = self.struct_values(term, &template);
                out.push(b'{');
                self.stack.push(Frame::Struct {
                    map: term,
                    template,
                    keys,
                    vals,
                    count: 0,
                });
                Ok(())
            }
            _ => self.hole(term, out),
        }
    }

    /// Which calendar type `module` is (Date, Time, NaiveDateTime, DateTime), if any.
    #[inline]
    fn calendar_kind(&self, module: ErlNifTerm) -> Option<Calendar> {
        let a = |atom: rustler::Atom| atom.as_c_arg();
        let kinds = [
            (atoms::date(), Calendar::Date),
            (atoms::time(), Calendar::Time),
            (atoms::naive_date_time(), Calendar::Naive),
            (atoms::date_time(), Calendar::DateTime),
        ];
        kinds.iter().find(|(m, _)| a(*m) == module).map(|(_, k)| *k)
    }

    /// Writes a Calendar.ISO date/time as its `to_iso8601/1` string; None (nothing written) when the struct is
    /// not one the NIF can vouch for (another calendar, odd field values): then the protocol path writes it.
    fn write_calendar(&self, term: ErlNifTerm, kind: Calendar, out: &mut Out) -> Option<()> {
        let start = out.len();
        let written = self.write_calendar_text(term, kind, out);
        if written.is_none() {
            out.truncate(start);
        }
        written
    }

    fn write_calendar_text(&self, term: ErlNifTerm, kind: Calendar, out: &mut Out) -> Option<()> {
        let env = self.env;
        let flat = self.reads.flatmap(term);
        let get = |key: rustler::Atom| {
            let key = key.as_c_arg();
            if let Some((keys, vals, len)) = flat {
                // SAFETY: i < len; the map lives for the call.
                return (0..len)
                    .find(|&i| unsafe { *keys.add(i) } == key)
                    .map(|i| unsafe { *vals.add(i) });
            }
            let mut v = ErlNifTerm::default();
            (unsafe { enif_get_map_value(env, term, key, &mut v) } != 0).then_some(v)
        };
        let int_of = |v: ErlNifTerm| {
            self.reads.small(v).or_else(|| {
                let mut i: i64 = 0;
                (unsafe { enif_get_int64(env, v, &mut i) } != 0).then_some(i)
            })
        };
        let int = |key: rustler::Atom| int_of(get(key)?);
        let nonneg = |key: rustler::Atom| int(key).filter(|v| *v >= 0);
        if get(atoms::calendar())? != atoms::calendar_iso().as_c_arg() {
            return None;
        }
        out.push(b'"');
        if kind != Calendar::Time {
            let (y, m, d) = (
                int(atoms::year())?,
                nonneg(atoms::month())?,
                nonneg(atoms::day())?,
            );
            pad(out, y, 4);
            out.push(b'-');
            pad(out, m, 2);
            out.push(b'-');
            pad(out, d, 2);
        }
        if kind != Calendar::Date {
            if kind != Calendar::Time {
                out.push(b'T');
            }
            let (h, mi, sec) = (
                nonneg(atoms::hour())?,
                nonneg(atoms::minute())?,
                nonneg(atoms::second())?,
            );
            pad(out, h, 2);
            out.push(b':');
            pad(out, mi, 2);
            out.push(b':');
            pad(out, sec, 2);
            let micro = get(atoms::microsecond())?;
            let mut arity = 0;
            let mut elems: *const ErlNifTerm = ptr::null();
            if unsafe { enif_get_tuple(env, micro, &mut arity, &mut elems) } == 0 || arity != 2 {
                return None;
            }
            let (us, precision) = unsafe { (int_of(*elems)?, int_of(*elems.add(1))?) };
            if !(0..=999_999).contains(&us) || !(0..=6).contains(&precision) {
                return None;
            }
            if precision > 0 {
                out.push(b'.');
                let at = out.len();
                pad(out, us, 6);
                out.truncate(at + precision as usize);
            }
        }
        if kind == Calendar::DateTime {
            let (utc, std) = (int(atoms::utc_offset())?, int(atoms::std_offset())?);
            let zone = self.binary(get(atoms::time_zone())?)?;
            if utc == 0 && std == 0 && zone == b"Etc/UTC" {
                out.push(b'Z');
            } else {
                let total = utc.checked_add(std)?;
                let seconds = total.checked_abs()?;
                out.push(if total < 0 { b'-' } else { b'+' });
                pad(out, seconds / 3600, 2);
                out.push(b':');
                pad(out, (seconds % 3600) / 60, 2);
            }
        }
        out.push(b'"');
        Some(())
    }

    /// Where a struct's values are read in place: its flat map's keys and values (null when not flat).
    fn struct_values(
        &self,
        term: ErlNifTerm,
        template: &Template,
    ) -> (*const ErlNifTerm, *const ErlNifTerm) {
        match self.reads.flatmap(term) {
            Some((keys, vals, len)) if len == template.size => (keys, vals),
            _ => (ptr::null(), ptr::null()),
        }
    }

    /// Leaves `term` for Elixir to write at this point of the output (compact output only; pretty output goes the
    /// resolving way, which re-indents what the protocol returns).
    #[cold]
    fn hole(&mut self, term: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        if self.pretty.is_some() {
            return Err(Fail::Elixir);
        }
        self.spend(CHECK_EVERY / 8);
        self.holes.push((out.len(), term));
        Ok(())
    }

    /// The module of a struct (a map whose `__struct__` is an atom).
    fn struct_module(&self, map: ErlNifTerm) -> Option<ErlNifTerm> {
        let mut module = ErlNifTerm::default();
        let found = unsafe { enif_get_map_value(self.env, map, self.struct_key, &mut module) } != 0
            && matches!(
                unsafe { enif_term_type(self.env, module) },
                ErlNifTermType::ERL_NIF_TERM_TYPE_ATOM
            );
        found.then_some(module)
    }

    /// True when an open map is a struct: an error met inside it may not be one (the protocol decides what a
    /// struct writes), so the struct goes to Elixir first.
    fn inside_struct(&self) -> bool {
        self.stack.iter().any(|frame| match frame {
            Frame::Map { map, .. } | Frame::Flat { map, .. } => self.struct_module(*map).is_some(),
            _ => false,
        })
    }

    /// An iterator over a non-empty map in `Map.to_list/1` order, on its first pair, and whether it runs
    /// backwards. A map of up to 32 keys is a flatmap, whose iterator runs in key order from the head; a larger
    /// (hash) map runs in the direction `map_order` learned (none: `None`).
    fn map_iterator(&self, map: ErlNifTerm, size: usize) -> Option<(ErlNifMapIterator, bool)> {
        let backwards = match (size > 32, map_order::get()) {
            (false, _) | (true, Order::FromHead) => false,
            (true, Order::FromTail) => true,
            (true, Order::Unknown) => return None,
        };
        let entry = if backwards {
            ErlNifMapIteratorEntry::ERL_NIF_MAP_ITERATOR_TAIL
        } else {
            ErlNifMapIteratorEntry::ERL_NIF_MAP_ITERATOR_HEAD
        };
        let mut iter: ErlNifMapIterator = unsafe { MaybeUninit::zeroed().assume_init() };
        if unsafe { enif_map_iterator_create(self.env, map, &mut iter, entry) } == 0 {
            return None;
        }
        Some((iter, backwards))
    }

    /// The pairs list of an ordered-object fragment (`%RustyJson.Fragment{encode: {:object, pairs}}`) or of a
    /// `%RustyJson.OrderedObject{values: pairs}` (a list).
    fn fragment_pairs(&self, map: ErlNifTerm) -> Option<ErlNifTerm> {
        let env = self.env;
        let (mut module, mut encode) = (ErlNifTerm::default(), ErlNifTerm::default());
        if unsafe { enif_get_map_value(env, map, self.struct_key, &mut module) } == 0 {
            return None;
        }
        if module == self.ordered_object {
            let mut values = ErlNifTerm::default();
            let found = unsafe { enif_get_map_value(env, map, self.values_key, &mut values) } != 0
                && matches!(
                    unsafe { enif_term_type(env, values) },
                    ErlNifTermType::ERL_NIF_TERM_TYPE_LIST
                );
            return found.then_some(values);
        }
        if module != self.fragment
            || unsafe { enif_get_map_value(env, map, self.encode_key, &mut encode) } == 0
        {
            return None;
        }
        let mut arity = 0;
        let mut elems: *const ErlNifTerm = ptr::null();
        if unsafe { enif_get_tuple(env, encode, &mut arity, &mut elems) } == 0
            || arity != 2
            || unsafe { *elems } != self.object
        {
            return None;
        }
        Some(unsafe { *elems.add(1) })
    }

    /// Key and value of a `{key, value}` tuple.
    fn pair(&self, pair: ErlNifTerm) -> Option<(ErlNifTerm, ErlNifTerm)> {
        let mut arity = 0;
        let mut elems: *const ErlNifTerm = ptr::null();
        if unsafe { enif_get_tuple(self.env, pair, &mut arity, &mut elems) } == 0 || arity != 2 {
            return None;
        }
        Some(unsafe { (*elems, *elems.add(1)) })
    }

    fn write_fragment(&mut self, term: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        let env = self.env;
        let mut encode = ErlNifTerm::default();
        if unsafe { enif_get_map_value(env, term, self.encode_key, &mut encode) } == 0 {
            return Err(Fail::Unsupported(term));
        }
        match unsafe { enif_term_type(env, encode) } {
            ErlNifTermType::ERL_NIF_TERM_TYPE_TUPLE => {
                // {:object, [{key, value}]}: an ordered object.
                let pairs = self.fragment_pairs(term).ok_or(Fail::Unsupported(term))?;
                self.open_pairs(pairs, out)
            }
            ErlNifTermType::ERL_NIF_TERM_TYPE_BITSTRING
            | ErlNifTermType::ERL_NIF_TERM_TYPE_LIST => {
                let mut bin: ErlNifBinary = unsafe { MaybeUninit::zeroed().assume_init() };
                if unsafe { enif_inspect_iolist_as_binary(env, encode, &mut bin) } == 0 {
                    return Err(Fail::Unsupported(term));
                }
                let bytes = unsafe { std::slice::from_raw_parts(bin.data, bin.size) };
                self.afford(bytes.len() >> BYTES_PER_UNIT_SHIFT)?;
                match self.pretty {
                    Some(p) => p.reformat(out, bytes, self.stack.len()),
                    None => out.extend(bytes),
                }
                Ok(())
            }
            _ => Err(Fail::Elixir),
        }
    }

    /// Opens an ordered object (a list of `{key, value}`).
    fn open_pairs(&mut self, pairs: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        if unsafe { rustler::sys::enif_is_empty_list(self.env, pairs) } != 0 {
            out.extend(b"{}");
            return Ok(());
        }
        out.push(b'{');
        let seen = self.seen_set();
        self.stack.push(Frame::Pairs {
            tail: pairs,
            count: 0,
            seen,
        });
        Ok(())
    }

    /// Writes the key of a `{key, value}` pair and returns the value.
    fn write_pair_key(&mut self, pair: ErlNifTerm, out: &mut Out) -> Result<ErlNifTerm, Fail> {
        let (key, value) = self.pair(pair).ok_or(Fail::Unsupported(pair))?;
        self.write_key(key, out)?;
        self.colon(out);
        Ok(value)
    }

    fn write_key(&mut self, key: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        let start = out.len();
        match unsafe { enif_term_type(self.env, key) } {
            ErlNifTermType::ERL_NIF_TERM_TYPE_BITSTRING => {
                let bytes = self.binary(key).ok_or(Fail::Elixir)?;
                self.write_string(bytes, key, out)?;
            }
            ErlNifTermType::ERL_NIF_TERM_TYPE_ATOM => self.write_atom(key, out)?,
            ErlNifTermType::ERL_NIF_TERM_TYPE_INTEGER => {
                out.push(b'"');
                self.write_integer(key, out)?;
                out.push(b'"');
            }
            ErlNifTermType::ERL_NIF_TERM_TYPE_FLOAT => {
                let mut f = 0.0;
                unsafe { enif_get_double(self.env, key, &mut f) };
                out.push(b'"');
                number::write_f64(out, f);
                out.push(b'"');
            }
            _ => return Err(Fail::Elixir),
        }
        if self.strict {
            let written = out.as_slice()[start..].to_vec();
            let seen = match self.stack.last_mut() {
                Some(Frame::Map { seen, .. })
                | Some(Frame::Flat { seen, .. })
                | Some(Frame::Pairs { seen, .. }) => seen,
                _ => return Ok(()),
            };
            if let Some(seen) = seen {
                if !seen.insert(written) {
                    return Err(Fail::DuplicateKey(key));
                }
            }
        }
        Ok(())
    }

    #[inline]
    fn binary(&self, term: ErlNifTerm) -> Option<&'static [u8]> {
        let mut bin: ErlNifBinary = unsafe { MaybeUninit::zeroed().assume_init() };
        if unsafe { enif_inspect_binary(self.env, term, &mut bin) } == 0 {
            return None;
        }
        if bin.size == 0 {
            return Some(&[]);
        }
        // SAFETY: the binary lives as long as the term, i.e. for the whole NIF call.
        Some(unsafe { std::slice::from_raw_parts(bin.data, bin.size) })
    }

    #[inline]
    fn write_string(&self, bytes: &[u8], term: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        escape::write_string(out, bytes, self.mode).map_err(|i| Fail::InvalidByte(bytes[i], term))
    }

    fn write_integer(&mut self, term: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        let mut i = 0i64;
        if unsafe { enif_get_int64(self.env, term, &mut i) } != 0 {
            number::write_i64(out, i);
            return Ok(());
        }
        let mut u = 0u64;
        if unsafe { enif_get_uint64(self.env, term, &mut u) } != 0 {
            number::write_u64(out, u);
            return Ok(());
        }
        let env = unsafe { Env::new(&(), self.env) };
        let big: rustler::BigInt = unsafe { Term::new(env, term) }
            .decode()
            .map_err(|_| Fail::Unsupported(term))?;
        // Decimal conversion is about quadratic in the size: a big one waits for the dirty scheduler.
        let words = big.bits() as usize / 64 + 1;
        self.afford(words.saturating_mul(words) / 16)?;
        out.extend(big.to_string().as_bytes());
        Ok(())
    }

    /// Writes an atom's text as a string. Atoms repeat (map keys above all), so their written form is kept in a
    /// small direct-mapped cache for the call.
    #[inline]
    fn write_atom(&mut self, term: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        let slot = (term::bits(term) >> 6) % ATOM_CACHE_SLOTS;
        if let Some(&(cached, start, len)) = self.atom_cache.get(slot) {
            if cached == term {
                out.extend(&self.atom_bytes[start as usize..(start + len) as usize]);
                return Ok(());
            }
        }
        let from = out.len();
        self.write_atom_text(term, out)?;
        // The cache costs two allocations: not for a call that writes a single atom.
        if self.atom_cache.is_empty() && !std::mem::replace(&mut self.atom_seen, true) {
            return Ok(());
        }
        let written = &out.as_slice()[from..];
        if self.atom_bytes.len() + written.len() <= ATOM_CACHE_BYTES {
            if self.atom_cache.is_empty() {
                self.atom_cache = vec![(ErlNifTerm::default(), 0, 0); ATOM_CACHE_SLOTS];
                self.atom_bytes.reserve(256);
            }
            let start = self.atom_bytes.len() as u32;
            self.atom_bytes.extend_from_slice(written);
            self.atom_cache[slot] = (term, start, written.len() as u32);
        }
        Ok(())
    }

    fn write_atom_text(&self, term: ErlNifTerm, out: &mut Out) -> Result<(), Fail> {
        let mut buf = [MaybeUninit::<u8>::uninit(); 256];
        let n = unsafe {
            enif_get_atom(
                self.env,
                term,
                buf.as_mut_ptr() as *mut _,
                buf.len() as _,
                ErlNifCharEncoding::ERL_NIF_LATIN1,
            )
        };
        if n > 0 {
            // SAFETY: enif_get_atom wrote n bytes (the text and a NUL).
            let latin1 =
                unsafe { std::slice::from_raw_parts(buf.as_ptr() as *const u8, (n - 1) as usize) };
            if latin1.is_ascii() {
                return self.write_string(latin1, term, out);
            }
            let utf8: Vec<u8> = latin1
                .iter()
                .flat_map(|&b| {
                    let mut tmp = [0u8; 4];
                    (b as char).encode_utf8(&mut tmp).as_bytes().to_vec()
                })
                .collect();
            return self.write_string(&utf8, term, out);
        }
        // An atom with characters above U+00FF: read its UTF-8 text from the external format.
        let mut bin: ErlNifBinary = unsafe { MaybeUninit::zeroed().assume_init() };
        if unsafe { enif_term_to_binary(self.env, term, &mut bin) } == 0 {
            return Err(Fail::Unsupported(term));
        }
        let etf = unsafe { std::slice::from_raw_parts(bin.data, bin.size) };
        let text = match etf {
            [131, 118, hi, lo, rest @ ..] => Some(&rest[..((*hi as usize) << 8 | *lo as usize)]),
            [131, 119, len, rest @ ..] => Some(&rest[..*len as usize]),
            _ => None,
        };
        let result = match text {
            Some(text) => self.write_string(text, term, out),
            None => Err(Fail::Unsupported(term)),
        };
        unsafe { enif_release_binary(&mut bin) };
        result
    }
}
