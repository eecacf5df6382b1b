//! `seckill`: the flash-sale core.
//!
//! Everything that decides or records a sale lives here; the `app` (Leptos) and `server` (Axum)
//! crates only adapt HTTP and UI to these functions. Map for newcomers:
//!
//! | module | owns |
//! | --- | --- |
//! | [`config`] | the typed configuration read from the environment |
//! | [`domain`] | the `domain` crate, re-exported: parsed newtypes (`VoucherId`, `Phone`, `Stock`, `SaleWindow`, `OrderId`, `FailureReason`, …), shared with the browser |
//! | [`keys`] | every Redis key name |
//! | [`redis_conn`] | one Redis connection type for a single node or a Redis Cluster |
//! | [`scripts`] | the Lua scripts, one wrapper per file, and the decoding of their replies |
//! | [`order_id`] | the global 64-bit order ID generator |
//! | [`lock`] | the distributed lock (reentrant, watchdog, fencing, RedLock) |
//! | [`catalog`] | creating, listing and preloading vouchers |
//! | [`console`] | the admin console's figures: counts per voucher, sales over time |
//! | [`sale`] | admitting a purchase and reading an order's status |
//! | [`checkout`] | after the rush: paying an order before its deadline, or cancelling it |
//! | [`memo`] | what an instance answers from memory: sessions for a moment, sales that refuse everyone (cleared by pub/sub when a unit comes back) |
//! | [`payment`] | the payment-provider trait and the dev provider |
//! | [`restock`] | units going back on sale in Redis (cancellations, top-ups) through the outbox |
//! | [`sale_admin`] | an admin ending a sale early or adding stock |
//! | [`queue`] | the durable order queue on Redis Streams and its worker |
//! | [`store`] | PostgreSQL repositories |
//! | [`sweeper`] | the housekeeping job: restore lost sales, retire finished ones, cancel unpaid orders past their deadline, finish pending stock moves |
//! | [`auth`] | sign-in codes and sessions |
//! | [`durability`] | the durability promise (`SECKILL_DURABILITY`) checked against Redis |
//! | [`faults`] | which failures mean a store is out of reach (503) rather than a bug (500) |
//! | [`handles`] | [`Core`], the handles every operation needs |
//!
//! Layers: `domain` → `keys`, `scripts`, `store` → services (`catalog`, `sale`, `queue`,
//! `sweeper`, `console`, `auth`, `lock`) → the adapters in `app` and `server`.

pub mod admissions;
pub mod auth;
pub mod catalog;
pub mod checkout;
pub mod config;
pub mod console;
pub mod durability;
pub mod faults;
pub mod handles;
pub mod keys;
pub mod live;
pub mod lock;
pub mod memo;
pub mod order_id;
pub mod payment;
pub mod queue;
pub mod redis_conn;
pub mod restock;
pub mod sale;
pub mod sale_admin;
pub mod scripts;
pub mod store;
pub mod sweeper;

pub use ::domain;
pub use config::Config;
pub use handles::Core;
