//! Infrastructure: how the core reaches its stores. Private to the crate; the services use it,
//! the adapters never do (the `testing` feature opens it to the tests and benchmarks).
//!
//! | module | owns |
//! | --- | --- |
//! | `backend` | [`Backend`](backend::Backend), the stores' one error, and what "out of reach" means |
//! | `keys` | every Redis key name |
//! | `redis_conn` | one Redis connection type for a single node or a Redis Cluster |
//! | `scripts` | the Lua scripts (`lua/`), one wrapper per file, their reply codes decoded |
//! | `store` | PostgreSQL: the pool, the migrations, one repository per table group |
//! | `lock` | the distributed lock (reentrant, watchdog, fencing, RedLock) |
//! | `stock_move` | a unit going back on sale, as the outbox row and the script both hold it |
//! | `durability` | the durability promise (`SECKILL_DURABILITY`) checked against Redis |
//! | `ttl_map` | a small in-process map whose entries expire |

pub mod backend;
pub mod durability;
pub mod keys;
pub mod lock;
pub mod redis_conn;
pub mod scripts;
pub mod stock_move;
pub mod store;
pub mod ttl_map;
