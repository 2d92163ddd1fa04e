//! Every converter (`--from PROVIDER`, the provider from the first byte) on any bytes: see
//! `targets::convert_any`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| insights_fuzz::targets::convert_any(data));
