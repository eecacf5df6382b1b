//! The server as a library, so integration tests can start it on port 0 (see `Application`).

mod origin;
mod page_cache;
mod refusals;
mod rest;
mod safety;
mod screen;
mod serve;
mod settings;
mod startup;
mod state;
mod static_files;

pub use settings::{HttpConfig, Settings};
pub use startup::Application;
