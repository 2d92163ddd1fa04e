//! See `targets::reduce`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| insights_fuzz::targets::reduce(data));
