//! `lua/raise_counter.lua`: a day's order-ID counter raised past the sequences in use.

use std::sync::LazyLock;

use redis::{aio::ConnectionLike, Script};

use super::Backend;

static RAISE_COUNTER: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../../../lua/raise_counter.lua")));

/// How long a raised counter lives: two days, like one `lua/order_id.lua` creates.
const COUNTER_TTL_SECS: u64 = 172_800;

/// Raises the counter at `key` to at least `floor`; returns its value afterwards.
pub async fn raise_counter<C: ConnectionLike + Send>(
    conn: &mut C,
    key: &str,
    floor: u32,
) -> Result<i64, Backend> {
    Ok(RAISE_COUNTER
        .key(key)
        .arg(floor)
        .arg(COUNTER_TTL_SECS)
        .invoke_async(conn)
        .await?)
}
