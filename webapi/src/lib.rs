//! What the web API's two adapters share, the Leptos server functions (`app`) and the REST
//! handlers (`server`), so neither depends on the other for it:
//!
//! | module | owns |
//! | --- | --- |
//! | [`answers`] | the REST API's other answers (a buy's, a sign-in's, health…), one declaration each |
//! | [`error`] | [`AppError`](error::AppError): every refusal's code, status and sentence |
//! | [`wire`] | the types that cross the wire, made of the domain's (compile to wasm) |
//! | [`payments`] | the admin's payments listing on the wire |
//! | `convert` (ssr) | core values into wire types |
//! | `http` (ssr) | the session cookie, a request's principal, IDs from paths and forms, core errors into `AppError` |

pub mod actions;
pub mod answers;
#[cfg(feature = "ssr")]
pub mod convert;
pub mod error;
#[cfg(feature = "ssr")]
pub mod http;
pub mod payments;
pub mod sales;
#[cfg(feature = "ssr")]
mod schemas;
pub mod wire;
