//! The number writers on arbitrary 64-bit patterns (see `rustyjson_core::checks::check_numbers`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: [u8; 8]| rustyjson_core::checks::check_numbers(u64::from_le_bytes(data)));
