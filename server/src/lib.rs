//! The server as a library, so integration tests can start it on port 0 (see `Application`).

mod rest;
mod startup;
mod state;

pub use startup::Application;
