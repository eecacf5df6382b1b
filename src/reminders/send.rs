//! Sending the reminders whose moment has come, from every instance at once without sending one
//! twice: a batch is claimed in PostgreSQL (`FOR UPDATE SKIP LOCKED`, then a lease), each is
//! posted to the operator's SMS relay (the sign-in codes' signed webhook) at the shop's pace
//! across instances (a Redis counter per second), and its outcome recorded. A message keeps its
//! `id` on every attempt, so the relay tells a repeat (an instance killed after the relay took
//! it and before the record) from a new one. A 5xx or no answer is tried again with backoff, a
//! 4xx is the relay's refusal; a reminder whose sale opened before it could go is not sent.

use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::StreamExt;
use serde::Serialize;

use crate::{
    auth::delivery::{signature, SIGNATURE_HEADER},
    infra::{
        backend::Backend,
        store::{
            self,
            reminders::{Due, Outcome},
        },
    },
    Core,
};

/// The relay's body: what a text needs, in the shopper's language (`lang`), the time in the
/// shop's zone (`at`, RFC 3339 with its offset).
#[derive(Debug, Clone, Serialize)]
pub struct ReminderMessage<'a> {
    pub kind: &'static str,
    pub id: &'a str,
    pub phone: &'a str,
    pub voucher_id: i64,
    pub title: &'a str,
    pub at: String,
    pub url: String,
    pub lang: &'a str,
}

/// Claims one batch of due reminders and sends them; how many were claimed.
pub async fn send_due(core: &Core, now: DateTime<Utc>) -> Result<usize, Backend> {
    let settings = &core.config.reminders;
    let batch = batch_size(core);
    let due = store::reminders::claim(&core.db, now, settings.lead, settings.lease, batch).await?;
    let claimed = due.len();
    // Several in flight: one instance alone keeps the shop's pace while another restarts.
    let recorded: Vec<Result<(), Backend>> = futures::stream::iter(due)
        .map(|d| {
            let core = core.clone();
            async move {
                let outcome = send_one(&core, &d).await;
                log(&d, &outcome);
                store::reminders::record(&core.db, &d, &outcome).await?;
                Ok(())
            }
        })
        .buffer_unordered(IN_FLIGHT)
        .collect()
        .await;
    recorded.into_iter().collect::<Result<(), Backend>>()?;
    Ok(claimed)
}

/// Reminders one instance sends at once.
const IN_FLIGHT: usize = 16;

/// How many reminders one claim takes: a second of the shop's pace, and no more than its
/// senders can post in half the claim when every post waits as long as it may (past the claim
/// another instance may take them, and the shopper would be texted twice).
fn batch_size(core: &Core) -> i64 {
    let settings = &core.config.reminders;
    let post = core
        .config
        .auth
        .webhook
        .as_ref()
        .map_or(Duration::ZERO, |w| post_timeout(w.timeout, settings.lease));
    let posts_per_slot = (settings.lease / 2).as_millis() / post.as_millis().max(1);
    let within_lease = i64::try_from(posts_per_slot.saturating_mul(IN_FLIGHT as u128))
        .unwrap_or(i64::MAX)
        .max(1);
    i64::from(settings.rate).clamp(1, within_lease)
}

/// The longest one post may wait for the relay: its timeout, and never more than half a claim.
fn post_timeout(relay: Duration, lease: Duration) -> Duration {
    relay.min(lease / 2)
}

/// What became of one reminder, said in the log (and counted when sent).
fn log(d: &Due, outcome: &Outcome) {
    match outcome {
        Outcome::Sent => metrics::counter!("seckill_reminders_sent_total").increment(1),
        Outcome::Late => {
            tracing::info!(id = %d.id, voucher = d.voucher_id, "a reminder came too late to send")
        }
        Outcome::Failed(why) => {
            tracing::warn!(id = %d.id, voucher = d.voucher_id, error = %why, "a reminder failed for good")
        }
        Outcome::Retry(at, why) | Outcome::NotTried(at, why) => {
            tracing::info!(id = %d.id, voucher = d.voucher_id, error = %why, retry_at = %at, "a reminder will be tried again")
        }
    }
}

async fn send_one(core: &Core, d: &Due) -> Outcome {
    let settings = &core.config.reminders;
    if Utc::now() >= d.opens_at {
        return Outcome::Late;
    }
    let Some(webhook) = &core.config.auth.webhook else {
        return Outcome::Failed("no SMS relay is configured (SECKILL_SMS_WEBHOOK_URL)".into());
    };
    // Counting the pace needs Redis: out of reach, nothing was tried.
    if let Err(e) = paced(core).await {
        return Outcome::NotTried(
            Utc::now() + chrono::Duration::seconds(1),
            format!("pacing: {e}"),
        );
    }
    // Posted only if the relay's answer comes within this sender's claim: the post waits at
    // most what is left of it (a claim nearly spent is left to the next one, not a try).
    let left = (d.claimed_until - Utc::now())
        .to_std()
        .unwrap_or_default()
        .saturating_sub(Duration::from_millis(500));
    let timeout = post_timeout(webhook.timeout, settings.lease).min(left);
    if timeout < Duration::from_millis(100) {
        return Outcome::NotTried(Utc::now(), "its claim ran out before its turn".into());
    }
    let origin = core.config.payments.return_origin.as_deref().unwrap_or("");
    let body = ReminderMessage {
        kind: "reminder",
        id: &d.id,
        phone: &d.phone,
        voucher_id: d.voucher_id,
        title: &d.title,
        at: d.opens_at.with_timezone(&settings.zone).to_rfc3339(),
        url: format!("{origin}/vouchers/{}", d.voucher_id),
        lang: &d.lang,
    };
    let Ok(body) = serde_json::to_string(&body) else {
        return Outcome::Failed("the message did not serialize".into());
    };
    let sent = core
        .http
        .post(&webhook.url)
        .timeout(timeout)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(
            SIGNATURE_HEADER,
            signature(webhook.secret.expose(), body.as_bytes()),
        )
        .body(body)
        .send()
        .await;
    match sent {
        Ok(r) if r.status().is_success() => Outcome::Sent,
        Ok(r) if r.status().is_client_error() => {
            Outcome::Failed(format!("the relay refused it: {}", r.status().as_u16()))
        }
        Ok(r) => retry(
            d,
            settings.tries,
            format!("the relay answered {}", r.status().as_u16()),
        ),
        Err(e) => retry(
            d,
            settings.tries,
            format!("the relay did not answer: {}", e.without_url()),
        ),
    }
}

/// Tried again after `2^tries` seconds (at most a minute), or failed for good after `tries`.
fn retry(d: &Due, tries: u32, why: String) -> Outcome {
    let done = u32::try_from(d.tries).unwrap_or(u32::MAX);
    if done >= tries {
        return Outcome::Failed(format!("{why} (gave up after {done} tries)"));
    }
    let wait = 2_i64.saturating_pow(done).min(60);
    Outcome::Retry(Utc::now() + chrono::Duration::seconds(wait), why)
}

/// Waits until this send fits the shop's pace: at most `SECKILL_REMINDER_RATE` a second across
/// instances, counted in Redis per second.
async fn paced(core: &Core) -> Result<(), Backend> {
    let rate = i64::from(core.config.reminders.rate);
    let mut redis = core.redis.clone();
    loop {
        let now = Utc::now();
        let key = core.keys.reminders_sent(now.timestamp());
        let (n, _): (i64, bool) = redis::pipe()
            .incr(&key, 1)
            .expire(&key, 2)
            .query_async(&mut redis)
            .await?;
        if n <= rate {
            return Ok(());
        }
        let into = u64::from(now.timestamp_subsec_millis());
        tokio::time::sleep(Duration::from_millis(1_000_u64.saturating_sub(into).max(1))).await;
    }
}

/// How long the sender sleeps when nothing is due.
pub const IDLE: Duration = Duration::from_millis(500);

/// Claims and sends until nothing is due, then looks again every [`IDLE`], until `shutdown`.
pub async fn run(core: Core, shutdown: tokio_util::sync::CancellationToken) {
    loop {
        let sent = send_due(&core, Utc::now()).await;
        let pause = match sent {
            Ok(0) => IDLE,
            Ok(_) => Duration::ZERO,
            Err(e) => {
                tracing::warn!(error = %e, "sending reminders");
                Duration::from_secs(1)
            }
        };
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(pause) => {}
        }
    }
}
