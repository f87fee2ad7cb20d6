//! The NIF surface of RustyJson: thin wrappers that pick a scheduler and hand off to `encode` and `decode`.

mod aligned;
mod alloc;
#[macro_use]
mod continuation;
mod decode;
mod encode;
mod formatter;
mod gzip;
mod locate;
mod rewrite;
mod stream;
mod term;
mod term_ceiling;

use rustler::sys::ErlNifTerm;
use rustler::{Binary, Encoder, Env, Term};

#[global_allocator]
static GLOBAL: alloc::CountingMiMalloc = alloc::CountingMiMalloc;

/// Encodes a plain term to a JSON binary, or returns `{:error, reason}`.
fn encode(env: Env<'_>, args: &[ErlNifTerm]) -> ErlNifTerm {
    match *args {
        // SAFETY: the VM's arguments are terms of `env`.
        [term, opts] => unsafe { encode::encode(env, Term::new(env, term), Term::new(env, opts)) },
        _ => rustler::types::atom::badarg().encode(env),
    }
    .as_c_arg()
}
raw_nif!("encode", 2, encode);

/// `compress: :gzip`: a JSON binary compressed to gzip at `level` (0..9), in slices on the calling scheduler.
#[rustler::nif]
fn gzip<'a>(env: Env<'a>, input: Term<'a>, level: u32) -> rustler::NifResult<Term<'a>> {
    gzip::gzip(env, input, level)
}

/// Registers a derived struct's template (`RustyJson.Encoder` derive): module, the id of the template's contents,
/// the struct's keys, written fields and keys.
#[rustler::nif]
fn register_template<'a>(
    env: Env<'a>,
    module: Term<'a>,
    id: Term<'a>,
    all_keys: Term<'a>,
    fields: Term<'a>,
    keys: Term<'a>,
) -> Term<'a> {
    encode::register_template(env, module, id, all_keys, fields, keys)
}

/// Forgets the templates of `{module, id}` pairs Elixir found stale (`encode/templates.rs`).
#[rustler::nif]
fn forget_templates<'a>(env: Env<'a>, used: Term<'a>) -> Term<'a> {
    encode::forget_templates(env, used)
}

/// `RustyJson.Formatter`: lays out a JSON binary with `indent`, `line`, `record` and `after_colon` (binaries) in at
/// most `max` bytes, or returns `:dirty` when the output would take more than about a millisecond to write, or
/// `{:error, reason}` for an output past `max` or one memory cannot hold (`formatter.rs`).
#[rustler::nif]
fn format<'a>(
    env: Env<'a>,
    input: Binary<'a>,
    indent: Binary<'a>,
    line: Binary<'a>,
    record: Binary<'a>,
    after_colon: Binary<'a>,
    max: u64,
) -> rustler::NifResult<Term<'a>> {
    let layout = formatter::layout(&indent, &line, &record, &after_colon);
    Ok(formatter::format(env, &input, &layout, max, false))
}

/// The same on a dirty CPU scheduler, whatever the output's size.
#[rustler::nif(schedule = "DirtyCpu")]
fn format_dirty<'a>(
    env: Env<'a>,
    input: Binary<'a>,
    indent: Binary<'a>,
    line: Binary<'a>,
    record: Binary<'a>,
    after_colon: Binary<'a>,
    max: u64,
) -> rustler::NifResult<Term<'a>> {
    let layout = formatter::layout(&indent, &line, &record, &after_colon);
    Ok(formatter::format(env, &input, &layout, max, true))
}

/// `RustyJson.Encoder`'s fallbacks: the JSON text a `Jason.Encoder` or `JSON.Encoder` implementation returned,
/// with its strings escaped in the call's mode, its objects sorted (`sort_keys`) and checked (`maps: :strict`).
#[rustler::nif]
fn rewrite<'a>(env: Env<'a>, input: Binary<'a>, opts: Term<'a>) -> rustler::NifResult<Term<'a>> {
    rewrite::rewrite(env, input, opts)
}

/// The same on a dirty CPU scheduler (large texts).
#[rustler::nif(schedule = "DirtyCpu")]
fn rewrite_dirty<'a>(
    env: Env<'a>,
    input: Binary<'a>,
    opts: Term<'a>,
) -> rustler::NifResult<Term<'a>> {
    rewrite::rewrite(env, input, opts)
}

/// Decodes a JSON binary to a term, or returns `{:error, reason}`. `opts` is the integer built by
/// `RustyJson.DecodeOptions`. Runs on the calling scheduler (Elixir sends only inputs under 64 KiB here), and
/// yields every ~0.5 ms should one take longer.
fn decode(env: Env<'_>, args: &[ErlNifTerm]) -> ErlNifTerm {
    match *args {
        [input, opts] => decode::decode(env, input, opts),
        _ => rustler::types::atom::badarg().encode(env).as_c_arg(),
    }
}
raw_nif!("decode", 2, decode);

/// `decode/2` for large inputs, detached from the caller's heap: builds the result in an environment of its own
/// in slices of ~0.5 ms on the calling scheduler and sends it to the caller as `{reference, result}`; returns
/// `:ok` (or `{:error, :badarg}` at once).
#[rustler::nif]
fn decode_detached<'a>(
    env: Env<'a>,
    input: Term<'a>,
    opts: Term<'a>,
    reference: Term<'a>,
) -> Term<'a> {
    decode::decode_detached(env, input, opts, reference)
}

/// `decode/2` on a dirty CPU scheduler, in one go: the uninterrupted reference the tests compare the yielding
/// decodes with.
#[rustler::nif(schedule = "DirtyCpu")]
fn decode_dirty<'a>(env: Env<'a>, input: Term<'a>, opts: Term<'a>) -> Term<'a> {
    // SAFETY: the result is a term of `env`.
    unsafe {
        Term::new(
            env,
            decode::decode_dirty(env, input.as_c_arg(), opts.as_c_arg()),
        )
    }
}

/// Learns how `maps:to_list/1` orders a hash map (`map_order.rs`) from `map` and its listed `keys`; returns
/// `:from_head`, `:from_tail` or `:unknown`.
#[rustler::nif]
fn learn_map_order<'a>(env: Env<'a>, map: Term<'a>, keys: Term<'a>) -> Term<'a> {
    let order = term::map_order::learn(env.as_c_arg(), map.as_c_arg(), keys.as_c_arg());
    let name = match order {
        term::map_order::Order::FromHead => "from_head",
        term::map_order::Order::FromTail => "from_tail",
        term::map_order::Order::Unknown => "unknown",
    };
    rustler::Atom::from_str(env, name)
        .expect("an atom")
        .encode(env)
}

/// What the NIF learned of the running VM (`term`): each fast path's state, as `{name, on?}` pairs.
#[rustler::nif]
fn fast_paths<'a>(env: Env<'a>) -> Term<'a> {
    fast_path_pairs(env)
}

/// Sets the release gate (`open`: whether the fast paths may engage, `RustyJson.Native.Gate`), then
/// `fast_paths/0` on a dirty CPU scheduler, called once at load: learning the layout takes about a millisecond,
/// which no normal scheduler should spend.
#[rustler::nif(schedule = "DirtyCpu")]
fn learn_layout<'a>(env: Env<'a>, open: bool) -> Term<'a> {
    term::set_gate(open);
    // Reads /proc and /sys once, here on a dirty scheduler, not in the first decode on a normal one.
    term_ceiling::learned();
    fast_path_pairs(env)
}

/// Each fast path's state as `{name, on?}` pairs (learning the layout first, if nothing did yet).
fn fast_path_pairs<'a>(env: Env<'a>) -> Term<'a> {
    let paths: Vec<(rustler::Atom, bool)> = term::fast_paths(env.as_c_arg())
        .into_iter()
        .map(|(name, on)| (rustler::Atom::from_str(env, name).expect("an atom"), on))
        .collect();
    paths.encode(env)
}

/// The kind of scheduler that learned the layout (`:normal`, `:dirty_cpu`, ...), or nil when not yet: for the
/// test that loading learns it on a dirty CPU scheduler.
#[rustler::nif]
fn layout_learned_on(env: Env<'_>) -> Term<'_> {
    match term::learned_on() {
        Some(name) => rustler::Atom::from_str(env, name)
            .expect("an atom")
            .encode(env),
        None => rustler::types::atom::nil().encode(env),
    }
}

/// `RustyJson.Stream`: a splitter for `:documents` or `:array_items` (a resource).
#[rustler::nif]
fn splitter_new(
    mode: Term<'_>,
) -> rustler::NifResult<rustler::ResourceArc<stream::StreamSplitter>> {
    stream::new(mode)
}

/// A splitter at a path: `{array_start, array_end}`, each nil until reached.
#[rustler::nif]
fn splitter_marks(
    env: Env<'_>,
    splitter: rustler::ResourceArc<stream::StreamSplitter>,
) -> rustler::NifResult<Term<'_>> {
    stream::marks(env, splitter)
}

/// Feeds the next chunk (at most 64 KiB) to a splitter, decoding the items it can with `opts` (unless nil):
/// `{spans, values, open_start | nil, {position, line} | nil}`.
#[rustler::nif]
fn split_chunk<'a>(
    env: Env<'a>,
    splitter: rustler::ResourceArc<stream::StreamSplitter>,
    chunk: Term<'a>,
    opts: Term<'a>,
) -> rustler::NifResult<Term<'a>> {
    stream::chunk(env, splitter, chunk, opts)
}

/// Decodes the items of `spans` (from `split_chunk/3`) that lie in `slice` (at stream offset `base`):
/// `{values, spans_left}` (an item that fails, a large one, and those after ~0.5 ms are left).
#[rustler::nif]
fn decode_items<'a>(
    env: Env<'a>,
    slice: Term<'a>,
    base: Term<'a>,
    spans: Term<'a>,
    opts: Term<'a>,
) -> Term<'a> {
    decode::decode_items(env, slice, base, spans, opts)
}

/// Ends a splitter's stream: `{spans, open?, {position, line} | nil}`.
#[rustler::nif]
fn split_finish(
    env: Env<'_>,
    splitter: rustler::ResourceArc<stream::StreamSplitter>,
) -> rustler::NifResult<Term<'_>> {
    stream::finish(env, splitter)
}

/// `RustyJson.get/3`: `{:ok, [{start, stop} | nil]}`, the spans of the values at `pointers` (lists of unescaped
/// tokens) in `input`, validated whole; or the decoder's `{:error, reason}`. In slices that yield, as `decode/2`.
#[rustler::nif]
fn locate<'a>(
    env: Env<'a>,
    input: Term<'a>,
    pointers: Term<'a>,
    opts: Term<'a>,
    duplicates: Term<'a>,
) -> Term<'a> {
    locate::locate(env, input, pointers, opts, duplicates)
}

/// Whether `probe` (a binary: `Native.aligned/1` passes a prefix of at most `aligned::PROBE_BYTES` of its input)
/// starts at a bit offset.
#[rustler::nif(name = "at_bit_offset?")]
fn at_bit_offset<'a>(env: Env<'a>, probe: Term<'a>) -> rustler::NifResult<bool> {
    let size = probe.decode::<Binary>()?.len();
    Ok(aligned::at_bit_offset(
        env.as_c_arg(),
        probe.as_c_arg(),
        size,
    ))
}

/// An aligned copy of the binary `input`, on a dirty CPU scheduler (copying several megabytes bit by bit takes
/// milliseconds).
#[rustler::nif(schedule = "DirtyCpu")]
fn realign<'a>(env: Env<'a>, input: Binary<'a>) -> Term<'a> {
    let (copy, _) = aligned::copy(env.as_c_arg(), input.as_slice());
    // SAFETY: the copy is a term of `env`.
    unsafe { Term::new(env, copy) }
}

/// How many aligned copies of inputs the NIF made since loading (for the tests that count them).
#[rustler::nif]
fn aligned_copies() -> u64 {
    aligned::copies()
}

/// Sets the ceiling on a decoded term's memory (`config :rusty_json, max_term_bytes:`; 0: the learned one).
#[rustler::nif]
fn configure_max_term_bytes(bytes: u64) -> bool {
    term_ceiling::configure(usize::try_from(bytes).unwrap_or(usize::MAX));
    true
}

/// `{max_term_bytes, memory, source}`: the ceiling on a decoded term's memory, and the memory the process may use
/// that it was learned from, with its source (`term_ceiling.rs`).
#[rustler::nif]
fn term_ceiling<'a>(env: Env<'a>) -> Term<'a> {
    let (memory, source) = term_ceiling::learned();
    let source = rustler::Atom::from_str(env, source).expect("an atom");
    (term_ceiling::max_term_bytes() as u64, memory as u64, source).encode(env)
}

/// True once the library is loaded (the Elixir stub returns false).
#[rustler::nif(name = "loaded?")]
fn loaded() -> bool {
    true
}

/// Bytes the NIF's allocator holds now, counted from the first call of this function (which starts the count);
/// restarts the peak count (for the benchmarks' native memory figure and the soak test).
#[rustler::nif]
fn allocator_reset_peak() -> isize {
    alloc::reset_peak()
}

/// The most bytes the NIF's allocator held since the last `allocator_reset_peak/0`.
#[rustler::nif]
fn allocator_peak() -> isize {
    alloc::peak()
}

/// `{checkpoints, frames_saved, frames_restored}`: the encoder's scheduling work since loading (`encode/stats.rs`),
/// for tests that bound that work by count.
#[rustler::nif]
fn encode_stats() -> (u64, u64, u64) {
    let [checkpoints, saved, restored] = encode::stats();
    (checkpoints, saved, restored)
}

rustler::init!("Elixir.RustyJson.Native");
