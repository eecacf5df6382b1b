//! `lua/verify_code.lua`: checks a sign-in code, counts the attempt and the phone's wrong codes.

use std::{sync::LazyLock, time::Duration};

use redis::{aio::ConnectionLike, Script};

use super::Backend;
use crate::infra::keys::LoginKeys;

static VERIFY_CODE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../../../lua/verify_code.lua")));

/// What `lua/verify_code.lua` decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeCheck {
    Accepted,
    Wrong,
    /// Expired, never sent, or out of attempts.
    NoCode,
    /// The phone sent too many wrong codes; sign-in opens again after this long.
    Locked(Duration),
}

/// How many guesses a code, and a phone, may take.
#[derive(Debug, Clone, Copy)]
pub struct GuessBudget {
    pub per_code: u32,
    pub per_phone: u32,
    pub window: Duration,
}

/// Checks a sign-in code for the phone whose keys are `keys`.
pub async fn verify_code<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &LoginKeys,
    code: &str,
    budget: GuessBudget,
) -> Result<CodeCheck, Backend> {
    let (reply, ms): (i64, i64) = VERIFY_CODE
        .key(&keys.code)
        .key(&keys.failures)
        .arg(code)
        .arg(budget.per_code)
        .arg(budget.per_phone)
        .arg(u64::try_from(budget.window.as_millis()).unwrap_or(u64::MAX))
        .invoke_async(conn)
        .await?;
    match reply {
        0 => Ok(CodeCheck::Accepted),
        1 => Ok(CodeCheck::Wrong),
        2 => Ok(CodeCheck::NoCode),
        // A counter without expiry (-1) cannot be: the script sets one with the first count.
        3 => Ok(CodeCheck::Locked(Duration::from_millis(
            u64::try_from(ms).unwrap_or(0),
        ))),
        _ => Err(Backend::unknown_reply("verify_code", &[reply, ms])),
    }
}
