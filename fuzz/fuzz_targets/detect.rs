//! Detection, its one-pass probe and every converter (`--from auto`) on any bytes: see
//! `targets::detect`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| insights_fuzz::targets::detect(data));
