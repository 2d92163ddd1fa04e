//! Integration tests: one binary, run with `cargo test`.

mod aceclaw_seeds;
mod acp;
mod cli;
mod codex;
mod codex_seeds;
mod docs;
mod errors;
mod export;
mod facts;
mod golden;
mod html;
mod man;
mod otlp;
mod parallel;
mod providers;
mod reduce;
mod replay;
mod robustness;
mod run;
mod schema;
mod store;
mod usage;
mod util;
mod validate;
