//! Sign-in by phone and one-time code, and sessions.
//!
//! Codes reach the phone through the operator's SMS gateway webhook, or, in dev mode
//! (`SECKILL_DEV_LOGIN=true`), come back in the answer ([`delivery`]). Sessions are signed
//! tokens every instance verifies by itself ([`token`]), refused once revoked
//! ([`revocations`]: a sign-out, a sign-out everywhere) or expired; sessions opened before them
//! (random tokens kept in Redis) work until they expire (decision 30). The user ID of every
//! request comes from the session, never from a request body (I7). Admins are the phones listed
//! in `SECKILL_ADMIN_PHONES`, checked on every request, so removing one takes effect as each
//! instance restarts with the new list.

pub mod audit;
pub mod delivery;
pub mod limits;
pub mod principal;
mod revocation_stores;
pub mod revocations;
mod revoked;
pub mod token;

pub use principal::{Admin, Principal};

use std::{net::IpAddr, time::Duration};

use rand::Rng;
use redis::AsyncCommands;

use crate::{
    domain::{Phone, PhoneError, UserId},
    infra::{
        backend::{backend_error, Backend, Unavailable},
        scripts::{self, CodeCheck, GuessBudget},
        store,
    },
    Core,
};
use revocations::Revoked;

/// Digits of a one-time sign-in code.
const CODE_DIGITS: usize = 6;
/// Random bytes of a session token from before signed ones (256 bits), as twice as many hex
/// digits.
const LEGACY_TOKEN_BYTES: usize = 32;

/// Why sign-in failed.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error(transparent)]
    InvalidPhone(#[from] PhoneError),
    /// A code was sent moments ago; another may be asked for after this many seconds.
    #[error("a code was sent to this phone moments ago; ask again in {0} s")]
    ResendIn(u64),
    #[error("the code is wrong or has expired")]
    InvalidCode,
    /// This phone sent too many wrong codes: sign-in opens again in this many seconds.
    #[error("too many wrong codes for this phone; try again in {0} s")]
    PhoneLocked(u64),
    /// This client asked or tried too often: it may again in this many seconds.
    #[error("too many attempts from this address; try again in {0} s")]
    ClientLimited(u64),
    /// The SMS gateway did not take the code; the shopper may ask again at once.
    #[error("the code could not be sent: {0}")]
    NotDelivered(#[source] delivery::DeliveryError),
    #[error(transparent)]
    Backend(#[from] Backend),
}

backend_error!(LoginError);

impl Unavailable for LoginError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Backend(e) => e.is_unavailable(),
            // The gateway, not a store: answered as unavailable by the adapters all the same.
            Self::NotDelivered(_) => true,
            Self::InvalidPhone(_)
            | Self::ResendIn(_)
            | Self::InvalidCode
            | Self::PhoneLocked(_)
            | Self::ClientLimited(_) => false,
        }
    }
}

/// A code was issued.
#[derive(Debug, Clone)]
pub struct CodeIssued {
    /// The code itself, only in dev-login mode.
    pub dev_code: Option<String>,
}

/// A new session.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub token: String,
    pub principal: Principal,
}

/// Issues a 6-digit one-time code for `phone`, at most one per `code_resend_after`, asked by
/// `client` (its own limit a minute, whatever the phones).
pub async fn request_code(
    core: &Core,
    client: IpAddr,
    phone: &str,
) -> Result<CodeIssued, LoginError> {
    let phone = Phone::parse(phone, core.config.auth.country)?;
    if let Some(wait) = limits::count(core, client, limits::Action::CodeRequest).await? {
        tracing::info!(%client, "code requests limited");
        return Err(LoginError::ClientLimited(whole_secs(wait)));
    }
    let cfg = &core.config.auth;
    let keys = core.keys.login(&phone);
    let mut redis = core.redis.clone();
    let throttled: bool = redis::cmd("SET")
        .arg(&keys.throttle)
        .arg(1)
        .arg("NX")
        .arg("PX")
        .arg(millis(cfg.code_resend_after))
        .query_async::<Option<String>>(&mut redis)
        .await?
        .is_none();
    if throttled {
        let left_ms: i64 = redis::cmd("PTTL")
            .arg(&keys.throttle)
            .query_async(&mut redis)
            .await?;
        return Err(LoginError::ResendIn(whole_secs(Duration::from_millis(
            u64::try_from(left_ms).unwrap_or(0),
        ))));
    }
    let code = format!(
        "{:0width$}",
        rand::rng().random_range(0..10_u32.pow(CODE_DIGITS as u32)),
        width = CODE_DIGITS
    );
    let _: () = redis::pipe()
        .atomic()
        .del(&keys.code)
        .hset_multiple(&keys.code, &[("code", code.as_str()), ("attempts", "0")])
        .pexpire(&keys.code, millis(cfg.code_ttl) as i64)
        .query_async(&mut redis)
        .await?;
    if let Some(hook) = &cfg.webhook {
        if let Err(e) = hook.send(&core.http, &phone, &code, cfg.code_ttl).await {
            tracing::warn!(phone = %phone.masked(), error = %e, "sign-in code not delivered");
            // Never delivered: forget it and the resend throttle, so the shopper may ask again
            // at once.
            let _: () = redis.del(&[&keys.code, &keys.throttle]).await?;
            return Err(LoginError::NotDelivered(e));
        }
    }
    tracing::info!(phone = %phone.masked(), %client, "sign-in code issued");
    Ok(CodeIssued {
        dev_code: core.config.dev_login.then_some(code),
    })
}

/// Checks the code and opens a session; creates the user on first sign-in. Each attempt counts
/// against `client`'s limit, each wrong code against the phone's budget; every outcome leaves
/// an audit line.
pub async fn sign_in(
    core: &Core,
    client: IpAddr,
    phone: &str,
    code: &str,
) -> Result<SignedIn, LoginError> {
    let result = check_code(core, client, phone, code).await;
    match &result {
        Ok(signed) => tracing::info!(
            target: "audit",
            actor = %signed.principal.user,
            phone = %signed.principal.phone.masked(),
            %client,
            admin = signed.principal.is_admin,
            "signed in"
        ),
        Err(e) if !e.is_unavailable() => tracing::info!(
            target: "audit",
            %client,
            phone = %Phone::parse(phone, core.config.auth.country)
                .map(|p| p.masked())
                .unwrap_or_default(),
            refusal = %e,
            "sign-in refused"
        ),
        Err(_) => {}
    }
    result
}

async fn check_code(
    core: &Core,
    client: IpAddr,
    phone: &str,
    code: &str,
) -> Result<SignedIn, LoginError> {
    if let Some(wait) = limits::count(core, client, limits::Action::SignIn).await? {
        return Err(LoginError::ClientLimited(whole_secs(wait)));
    }
    let cfg = &core.config.auth;
    let phone = Phone::parse(phone, cfg.country).map_err(|_| LoginError::InvalidCode)?;
    let code = code.trim();
    if code.len() != CODE_DIGITS || !code.bytes().all(|b| b.is_ascii_digit()) {
        return Err(LoginError::InvalidCode);
    }
    let budget = GuessBudget {
        per_code: cfg.code_attempts,
        per_phone: cfg.failure_budget,
        window: cfg.failure_window,
    };
    let mut redis = core.redis.clone();
    match scripts::verify_code(&mut redis, &core.keys.login(&phone), code, budget).await? {
        CodeCheck::Accepted => {}
        CodeCheck::Wrong | CodeCheck::NoCode => return Err(LoginError::InvalidCode),
        CodeCheck::Locked(wait) => return Err(LoginError::PhoneLocked(whole_secs(wait))),
    }
    let user = store::users::upsert_by_phone(&core.db, &phone).await?;
    Ok(open_session(core, user, phone).await?)
}

/// Opens a session for a known user (sign-in, and the bench's unmeasured set-up): a signed
/// token, issued by Redis's clock (the one the cut-offs of a sign-out everywhere use).
pub async fn open_session(core: &Core, user: UserId, phone: Phone) -> Result<SignedIn, Backend> {
    let issued_ms = revocations::now_ms(&mut core.redis.clone()).await?;
    let expires_ms = issued_ms.saturating_add(millis_i64(core.config.auth.session_ttl));
    Ok(SignedIn {
        token: core.session_keys.sign(user, &phone, issued_ms, expires_ms),
        principal: principal(core, user, phone),
    })
}

/// The principal of a session token, if the session is alive: a signed one is verified here,
/// with no store; one from before, read from Redis.
pub async fn session(core: &Core, token: &str) -> Result<Option<Principal>, Backend> {
    if token::is_signed(token) {
        return Ok(verified(core, token).map(|claims| principal(core, claims.user, claims.phone)));
    }
    legacy_session(core, token).await
}

/// The claims of a signed token this deployment issued, unexpired and not revoked. A session
/// lives no longer than `SECKILL_SESSION_TTL_MS` says now: an operator who shortens it after an
/// incident ends the older sessions too. An instance forgets a sign-out at that age by its
/// own lifetime (`Revocations::forget_ended`), which is safe only because the session it
/// refused has ended here by then; the stores keep it longer, for instances on a longer one.
fn verified(core: &Core, token: &str) -> Option<token::Claims> {
    let claims = core.session_keys.verify(token)?;
    let now = chrono::Utc::now().timestamp_millis();
    let ends = claims.expires_ms.min(
        claims
            .issued_ms
            .saturating_add(millis_i64(core.config.auth.session_ttl)),
    );
    (ends > now && !core.revocations.refuses(&claims)).then_some(claims)
}

/// A session from before signed tokens: kept in Redis until it expires.
async fn legacy_session(core: &Core, token: &str) -> Result<Option<Principal>, Backend> {
    if token.len() != 2 * LEGACY_TOKEN_BYTES || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(None);
    }
    // A session read a moment ago is trusted for `SECKILL_SESSION_CACHE_MS`; a missing one is
    // asked again every time.
    if let Some(p) = core.sessions.get(token) {
        return Ok(Some(p));
    }
    let mut redis = core.redis.clone();
    let value: Option<String> = redis.get(core.keys.session(token)).await?;
    let found = value.and_then(|v| {
        let (user, phone) = v.split_once(':')?;
        let user = user.parse::<UserId>().ok()?;
        // Sessions opened before phones were stored in E.164 (decision 26) carry them as typed.
        let phone = Phone::parse(phone, core.config.auth.country).ok()?;
        Some(principal(core, user, phone))
    });
    if let Some(p) = &found {
        core.sessions.insert(token.to_owned(), p.clone());
    }
    Ok(found)
}

/// Ends a session (no error if it was already gone): refused here at once, on every instance
/// as soon as the announcement arrives, and within `SECKILL_REVOCATION_RELOAD_MS` whatever
/// happens to it (`SECKILL_REVOCATION_FULL_RELOAD_MS` if only Redis took it).
pub async fn sign_out(core: &Core, token: &str) -> Result<(), Backend> {
    if token::is_signed(token) {
        if let Some(claims) = verified(core, token) {
            revoke(
                core,
                Revoked::Session {
                    id: claims.session,
                    expires_ms: claims.expires_ms,
                },
            )
            .await?;
        }
        return Ok(());
    }
    core.sessions.remove(token);
    let mut redis = core.redis.clone();
    let _: () = redis.del(core.keys.session(token)).await?;
    Ok(())
}

/// Ends every session of `user` opened until now, on every device, with the bounds of
/// [`sign_out`]. (Sessions from before signed tokens are not reached: they expire by
/// themselves, `SECKILL_SESSION_TTL_MS` after they were opened.)
pub async fn sign_out_everywhere(core: &Core, user: UserId) -> Result<(), Backend> {
    let cut_off_ms = revocations::now_ms(&mut core.redis.clone()).await?;
    revoke(core, Revoked::User { user, cut_off_ms }).await?;
    tracing::info!(target: "audit", actor = %user, "signed out everywhere");
    Ok(())
}

fn principal(core: &Core, user: UserId, phone: Phone) -> Principal {
    Principal {
        user,
        is_admin: core.config.is_admin(&phone),
        phone,
    }
}

/// Records `revoked` in PostgreSQL and in Redis, applies it here and announces it to every
/// instance. The record is what counts: a lost announcement is made good by the next reload,
/// and one store taking it is enough (each reload reads both); an error only when neither
/// did.
pub async fn revoke(core: &Core, revoked: Revoked) -> Result<(), Backend> {
    let in_db = async {
        match &revoked {
            Revoked::Session { id, expires_ms } => {
                store::revocations::record_session(&core.db, id, *expires_ms).await
            }
            Revoked::User { user, cut_off_ms } => {
                store::revocations::record_cut_off(&core.db, *user, *cut_off_ms).await
            }
        }
    };
    let in_redis = async {
        let mut redis = core.redis.clone();
        match &revoked {
            Revoked::Session { id, expires_ms } => {
                redis
                    .zadd::<_, _, _, ()>(core.keys.revoked_sessions(), id, *expires_ms)
                    .await
            }
            // GT: a later cut-off only (a repeated message never moves it back).
            Revoked::User { user, cut_off_ms } => {
                redis::cmd("ZADD")
                    .arg(core.keys.revoked_users())
                    .arg("GT")
                    .arg(*cut_off_ms)
                    .arg(user.get())
                    .query_async::<()>(&mut redis)
                    .await
            }
        }
    };
    // Both at once: one store out of reach costs its timeout once, not before the other.
    let (in_db, in_redis) = tokio::join!(in_db, in_redis);
    match (in_db, in_redis) {
        (Err(db_error), Err(redis_error)) => {
            tracing::warn!(error = %redis_error, "recording a revocation in Redis");
            return Err(db_error.into());
        }
        (Err(e), Ok(())) => {
            tracing::warn!(error = %e, "revocation recorded in Redis only; the next reload copies it to PostgreSQL");
        }
        (Ok(()), Err(e)) => {
            tracing::warn!(error = %e, "revocation recorded in PostgreSQL only; instances reload it from there");
        }
        (Ok(()), Ok(())) => {}
    }
    core.revocations.apply(&revoked);
    let sent: Result<i64, _> = core
        .redis
        .clone()
        .publish(core.keys.revocations_channel(), revoked.to_message())
        .await;
    if let Err(e) = sent {
        tracing::warn!(error = %e, "revocation recorded but not announced; other instances reload it");
    }
    Ok(())
}

/// Whole seconds to wait, rounded up and at least one: "in 0 s" would invite a refused retry.
fn whole_secs(d: Duration) -> u64 {
    u64::try_from(d.as_millis())
        .unwrap_or(u64::MAX)
        .div_ceil(1_000)
        .max(1)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn millis_i64(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
