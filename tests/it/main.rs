//! The core's integration tests, on the real Redis (`REDIS_URL`: one node, or a Redis Cluster)
//! and a real PostgreSQL (a fresh database per test). One test binary, a module per subject:
//! one link of the whole stack instead of one per file.

mod admissions;
mod audit;
mod books;
mod catalog_cache;
mod common;
mod console;
mod draw;
mod draw_receipts;
mod draw_trust;
mod draw_witness;
mod durability;
mod failover;
mod lifecycle;
mod listing;
mod lock;
mod memo;
mod order_ids;
mod phones;
mod reminders;
mod sale_flow;
mod sessions;
mod sweeper;
