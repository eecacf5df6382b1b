//! Server functions the UI calls, by area. Each is a thin adapter: read the core and the session,
//! call one core function, map its error. The REST API (server crate) adapts the same core
//! functions. Each has a fixed URL (`/sf/<name>`): plain HTML forms post to it, so it must not
//! change between builds.

pub mod admin;
pub mod auth;
pub mod catalog;
pub mod draw;
pub mod orders;
pub mod reminders;
