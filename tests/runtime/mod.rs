//! The reference runtime: in-memory behaviour, the binary, fidelity and SDK interop.

mod fidelity;
mod goals;
mod harness;
mod hostile;
mod interop;
mod jobs;
mod methods;
mod minimal;
mod minimal_args;
mod persistence;
mod process;
mod real_client;
mod sandbox;
mod turns;
