//! `lua/verify_code.lua`: checks a sign-in code and counts the attempt.

use std::sync::LazyLock;

use redis::{aio::ConnectionLike, Script};

use super::Backend;

static VERIFY_CODE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../../../lua/verify_code.lua")));

/// What `lua/verify_code.lua` decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeCheck {
    Accepted,
    Wrong,
    /// Expired, never sent, or out of attempts.
    NoCode,
}

/// Checks a sign-in code stored at `key`.
pub async fn verify_code<C: ConnectionLike + Send>(
    conn: &mut C,
    key: &str,
    code: &str,
    max_attempts: u32,
) -> Result<CodeCheck, Backend> {
    let reply: i64 = VERIFY_CODE
        .key(key)
        .arg(code)
        .arg(max_attempts)
        .invoke_async(conn)
        .await?;
    match reply {
        0 => Ok(CodeCheck::Accepted),
        1 => Ok(CodeCheck::Wrong),
        2 => Ok(CodeCheck::NoCode),
        _ => Err(Backend::unknown_reply("verify_code", &[reply])),
    }
}
