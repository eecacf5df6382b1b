//! The server as a library, so integration tests can start it on port 0 (see `Application`).
// Leptos's islands nest the view types of a whole page deeper than the default limit (128).
#![recursion_limit = "256"]

mod body;
mod client;
mod localize;
pub mod memory;
mod origin;
mod page_cache;
mod page_sets;
mod refusals;
mod rest;
mod safety;
mod screen;
mod serve;
mod settings;
mod signed_in_pages;
mod startup;
mod state;
mod static_files;
mod streams;
mod write_timeout;

pub use settings::{HttpConfig, Settings};
pub use startup::Application;
