//! `insights run`: drive an agent with one command language and read it with one event
//! language. This room holds the commands ([`command`]); the process, the command queue and
//! each protocol's session build on it, and reuse the converter for what the agent writes.

pub mod command;
