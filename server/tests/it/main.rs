//! The server's integration tests over real HTTP, on the real Redis (`REDIS_URL`: one node, or
//! a Redis Cluster) and a real PostgreSQL (a fresh database per test). One test binary, a
//! module per subject.

mod abuse;
mod api;
mod code_delivery;
mod cross_site;
mod draw;
mod editing;
mod events;
mod finding;
mod hostile;
mod language;
mod lifecycle;
mod my_orders;
mod openapi;
mod outage;
mod pages;
mod payments;
mod reminders;
mod scaleout;
mod session_cookie;
mod sessions;
mod sign_in_next;
mod sold_out;
mod support;
