//! The server as a library, so integration tests can start it on port 0 (see `Application`).

mod page_cache;
mod refusals;
mod rest;
mod screen;
mod serve;
mod startup;
mod state;
mod static_files;

pub use startup::Application;
