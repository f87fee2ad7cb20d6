//! Encoding: walks a BEAM term into the core writer in one pass, with an explicit stack (no native recursion),
//! writing into a buffer that becomes the result binary without a second copy.
//!
//! Scheduling: the walk starts on the calling (normal) scheduler with a time limit (`TIME_LIMIT`; the clock is read
//! every `CHECK_EVERY` work units). Small terms finish within it and never pay a scheduler hop. When the time is
//! up, the walk stops at the last point between two elements (a `Mark`) and the call yields: it is rescheduled with
//! the output so far (in a `Partial` resource) and each open container's position, in a list whose part under the
//! frames the slice touched is the previous checkpoint's, shared (so a slice costs what it did, however deep the
//! nesting), and the walk goes on for another slice, taking frames up from that list as it closes the ones above.
//! It stays on the normal scheduler, like jiffy, so a big encode never holds a thread other processes wait for; it
//! moves to a dirty CPU scheduler (no limit) only when resuming would cost too much (open hash maps far into their
//! pairs, whose positions are found again by stepping or listing), when a slice made no progress (one string longer
//! than a slice), or when the walk cannot be carried (`maps: :strict`, pending holes).
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

mod budget;
mod calendar;
// Also read by `rewrite` (the fallbacks' text is rewritten with the call's options).
pub(crate) mod options;
mod output;
mod resume;
mod scalars;
mod schedule;
mod sorted;
mod stats;
mod structs;
mod templates;
mod values;
mod walker;

use rustler::{Env, Term};

pub use stats::snapshot as stats;
pub use templates::{forget_templates, register_template};
pub(crate) use walker::overflow_reason;

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
        output_limit,
        out_of_memory,
        json,
        javascript_safe,
        html_safe,
        unicode_safe,
        iodata,
        __struct__,
        fragment = "Elixir.RustyJson.Fragment",
        holes,
        ordered_object = "Elixir.RustyJson.OrderedObject",
        map_set = "Elixir.MapSet",
        range = "Elixir.Range",
        uri = "Elixir.URI",
        decimal = "Elixir.Decimal",
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

/// The NIF entry on the normal scheduler.
pub fn encode<'a>(env: Env<'a>, term: Term<'a>, opts: Term<'a>) -> Term<'a> {
    schedule::run(env, term, opts, true, None)
}
