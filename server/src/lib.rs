//! The server as a library, so integration tests can start it on port 0 (see `Application`).

mod rest;
mod startup;

pub use startup::Application;
