//! `compress: :gzip`: the final JSON binary compressed to a gzip member (RFC 1952) with flate2 (zlib-rs backend).
//!
//! Scheduling follows the encoder's: the work runs on the calling (normal) scheduler in slices of about
//! `TIME_LIMIT`; a slice that runs out of time carries the deflate state in a resource and continues with
//! `enif_schedule_nif` (the input binary stays alive as an argument of the continuation). A small output finishes
//! in the first slice and never pays a hop. Deflate's state is a stream, so a slice resumes where the last one
//! stopped at no cost (unlike the walk, nothing is walked again): no dirty scheduler is needed.

use std::ffi::c_int;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use flate2::{Compress, Compression, Crc, FlushCompress, Status};
use rustler::sys::{
    enif_consume_timeslice, enif_make_badarg, enif_schedule_nif, ErlNifEnv, ErlNifTerm,
};
use rustler::{Binary, Encoder, Env, NifResult, ResourceArc, Term};

use crate::continuation;
use rustyjson_core::overflow::{catch_overflow, try_grow, try_with_capacity, Overflow};

mod atoms {
    rustler::atoms! { error }
}

/// How long one slice may run on a normal scheduler before it yields (the encoder's limit).
const TIME_LIMIT: Duration = Duration::from_micros(800);

/// Input bytes deflated between two looks at the clock: 8 KiB take about 0.1 ms at level 6 and well under the
/// time limit at level 9 on JSON.
const CHUNK: usize = 8 * 1024;

/// The gzip header: magic, deflate, no flags, no mtime; `XFL` (byte 8) is set per level as zlib does; OS 3 (Unix,
/// as `:zlib.gzip/1` writes).
const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];

/// A compression in progress: the deflate stream, the CRC of the input so far, and the output so far.
struct GzipState {
    deflate: Compress,
    crc: Crc,
    out: Vec<u8>,
    /// Input bytes consumed.
    at: usize,
}

/// The state carried between slices.
struct GzipJob(Mutex<Option<GzipState>>);

#[rustler::resource_impl]
impl rustler::Resource for GzipJob {}

impl GzipState {
    fn new(level: u32, input_len: usize) -> Self {
        let mut out = try_with_capacity(HEADER.len() + input_len / 4 + 64);
        out.extend_from_slice(&HEADER);
        // zlib's XFL: 2 for the slowest level, 4 for the fastest ones.
        out[8] = match level {
            9 => 2,
            0 | 1 => 4,
            _ => 0,
        };
        GzipState {
            deflate: Compress::new(Compression::new(level), false),
            crc: Crc::new(),
            out,
            at: 0,
        }
    }

    /// Deflates the input from `at` on, until it is all consumed (true) or `deadline` passes (false).
    fn run(&mut self, input: &[u8], deadline: Option<Instant>) -> bool {
        while self.at < input.len() {
            let end = (self.at + CHUNK).min(input.len());
            let chunk = &input[self.at..end];
            let before = self.deflate.total_in();
            while ((self.deflate.total_in() - before) as usize) < chunk.len() {
                let consumed = (self.deflate.total_in() - before) as usize;
                // Deflate writes only into spare capacity; stored blocks may exceed their input by a few bytes.
                try_grow(&mut self.out, chunk.len() - consumed + 64);
                self.deflate
                    .compress_vec(&chunk[consumed..], &mut self.out, FlushCompress::None)
                    .expect("deflate never fails on valid input");
            }
            self.crc.update(chunk);
            self.at = end;
            if deadline.is_some_and(|d| Instant::now() >= d) && self.at < input.len() {
                return false;
            }
        }
        true
    }

    /// Flushes the stream's end and appends the trailer (CRC-32 and size modulo 2^32, little-endian).
    fn finish(mut self) -> Vec<u8> {
        loop {
            try_grow(&mut self.out, 1024);
            match self
                .deflate
                .compress_vec(&[], &mut self.out, FlushCompress::Finish)
                .expect("deflate never fails on valid input")
            {
                Status::StreamEnd => break,
                Status::Ok | Status::BufError => continue,
            }
        }
        self.out.extend_from_slice(&self.crc.sum().to_le_bytes());
        self.out.extend_from_slice(&self.crc.amount().to_le_bytes());
        self.out
    }
}

/// The NIF entry: `input` (a binary) compressed at `level` (0..9); raises `badarg` otherwise.
pub fn gzip<'a>(env: Env<'a>, input: Term<'a>, level: u32) -> NifResult<Term<'a>> {
    if level > 9 {
        return Err(rustler::Error::BadArg);
    }
    let bytes: Binary = input.decode()?;
    Ok(catch_overflow(|| {
        let state = GzipState::new(level, bytes.len());
        slice(env, input, bytes.as_slice(), state)
    })
    .unwrap_or_else(|why| failed(env, why)))
}

/// `{:error, reason}` for an output the allocator refused (the JSON it compresses is under the output's ceiling,
/// so only a VM short of memory gets here).
fn failed(env: Env<'_>, why: Overflow) -> Term<'_> {
    (atoms::error(), crate::encode::overflow_reason(env, why)).encode(env)
}

/// One slice: deflate until done (the gzip binary) or out of time (the continuation).
fn slice<'a>(env: Env<'a>, input: Term<'a>, bytes: &[u8], mut state: GzipState) -> Term<'a> {
    let started = Instant::now();
    let done = state.run(bytes, Some(started + TIME_LIMIT));
    // As the encoder: a slice out of time reports the whole timeslice, so waiting processes run before the next.
    let percent = if done {
        (started.elapsed().as_micros() / 10).clamp(1, 100) as c_int
    } else {
        100
    };
    unsafe { enif_consume_timeslice(env.as_c_arg(), percent) };
    if done {
        let gz = state.finish();
        let Some(mut bin) = crate::alloc::try_owned_binary(gz.len()) else {
            return failed(env, Overflow::Memory { needed: gz.len() });
        };
        bin.as_mut_slice().copy_from_slice(&gz);
        return bin.release(env).to_term(env);
    }
    let job = ResourceArc::new(GzipJob(Mutex::new(Some(state))));
    let args = [input.as_c_arg(), job.encode(env).as_c_arg()];
    unsafe {
        Term::new(
            env,
            enif_schedule_nif(
                env.as_c_arg(),
                c"gzip".as_ptr(),
                0,
                gzip_yielded,
                args.len() as c_int,
                args.as_ptr(),
            ),
        )
    }
}

/// The continuation: `argv` is `[input, job]`.
unsafe extern "C" fn gzip_yielded(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ErlNifTerm,
) -> ErlNifTerm {
    continuation::run(env, argc, argv, |env, args| {
        let badarg = || unsafe { Term::new(env, enif_make_badarg(env.as_c_arg())) };
        let [input, job] = *args else {
            return badarg();
        };
        let (Ok(bytes), Ok(job)) = (
            input.decode::<Binary>(),
            job.decode::<ResourceArc<GzipJob>>(),
        ) else {
            return badarg();
        };
        let Some(state) = job.0.lock().ok().and_then(|mut s| s.take()) else {
            return badarg();
        };
        catch_overflow(|| slice(env, input, bytes.as_slice(), state))
            .unwrap_or_else(|why| failed(env, why))
    })
}
