//! Shoppers who keep trying through a fault: each buys once and, when the request fails (the
//! server is gone, a store answers 503, the reply is lost), tries again until it gets an
//! answer. The buy is idempotent, so a retry after a lost reply learns the same order ID.

use std::{
    collections::BTreeMap,
    sync::{
        atomic::{AtomicU64, AtomicUsize, Ordering},
        Arc,
    },
    time::Duration,
};

use seckill::domain::VoucherId;
use tokio::time::Instant;

/// What the shoppers got.
#[derive(Default)]
pub struct Answers {
    /// (shopper index, order ID) of each admission.
    pub admitted: Vec<(usize, String)>,
    /// Final refusals by code (`sold_out`, …).
    pub refused: BTreeMap<String, u64>,
    /// Requests that failed and were tried again (transport errors, 503, 429).
    pub retries: u64,
    /// Answers 5xx by status and code (`503 unavailable`, …): a store out of reach is a 503;
    /// a 500 is a fault of ours and fails the drill ([`Answers::internal_errors`]).
    pub server_errors: BTreeMap<String, u64>,
    /// Shoppers still without an answer at the deadline.
    pub gave_up: u64,
}

impl Answers {
    /// The 500s the shoppers got, if any: an outage must answer 503, never 500.
    pub fn internal_errors(&self) -> Option<String> {
        let ours: Vec<String> = self
            .server_errors
            .iter()
            .filter(|(what, _)| what.starts_with("500"))
            .map(|(what, n)| format!("{n} × {what}"))
            .collect();
        (!ours.is_empty()).then(|| format!("answered 500 during the fault: {}", ours.join(", ")))
    }
}

/// How the shoppers arrive.
pub struct Arrival {
    pub conns: usize,
    /// Each connection waits this long between two shoppers, so the rush lasts long enough to
    /// have faults happen in the middle of it.
    pub pace: Duration,
    /// No shopper tries past this.
    pub deadline: Instant,
}

/// Every shopper of `tokens` buys `voucher` once, retrying through faults.
pub async fn buy_all(
    client: reqwest::Client,
    base: String,
    voucher: VoucherId,
    tokens: Arc<Vec<String>>,
    arrival: Arrival,
) -> anyhow::Result<Answers> {
    let next = Arc::new(AtomicUsize::new(0));
    let retries = Arc::new(AtomicU64::new(0));
    let url = Arc::new(format!("{base}/api/vouchers/{voucher}/orders"));
    let tasks: Vec<_> = (0..arrival.conns)
        .map(|_| {
            let (client, tokens, next, retries, url) = (
                client.clone(),
                tokens.clone(),
                next.clone(),
                retries.clone(),
                url.clone(),
            );
            let (pace, deadline) = (arrival.pace, arrival.deadline);
            tokio::spawn(async move {
                let mut mine = Answers::default();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(token) = tokens.get(i) else {
                        return mine;
                    };
                    let answer = buy_until_answered(
                        &client,
                        &url,
                        token,
                        deadline,
                        &retries,
                        &mut mine.server_errors,
                    )
                    .await;
                    match answer {
                        Some(Ok(order)) => mine.admitted.push((i, order)),
                        Some(Err(code)) => *mine.refused.entry(code).or_default() += 1,
                        None => mine.gave_up += 1,
                    }
                    tokio::time::sleep(pace).await;
                }
            })
        })
        .collect();
    let mut all = Answers::default();
    for t in tasks {
        let mine = t.await?;
        all.admitted.extend(mine.admitted);
        for (k, v) in mine.refused {
            *all.refused.entry(k).or_default() += v;
        }
        all.gave_up += mine.gave_up;
        for (k, v) in mine.server_errors {
            *all.server_errors.entry(k).or_default() += v;
        }
    }
    all.retries = retries.load(Ordering::Relaxed);
    Ok(all)
}

/// One shopper's buy: `Some(Ok(order))`, `Some(Err(code))` for a final refusal, `None` when
/// no answer came before the deadline.
async fn buy_until_answered(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    deadline: Instant,
    retries: &AtomicU64,
    server_errors: &mut BTreeMap<String, u64>,
) -> Option<Result<String, String>> {
    while Instant::now() < deadline {
        let sent = client
            .post(url)
            .header(reqwest::header::COOKIE, format!("seckill_session={token}"))
            .send()
            .await;
        if let Ok(resp) = sent {
            let status = resp.status();
            let body: serde_json::Value = resp.json().await.unwrap_or_default();
            let retry =
                status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS;
            if status.is_server_error() {
                let code = body
                    .get("error")
                    .and_then(|v| v.as_str())
                    .unwrap_or("no JSON");
                *server_errors
                    .entry(format!("{} {code}", status.as_u16()))
                    .or_default() += 1;
            }
            if status == reqwest::StatusCode::ACCEPTED {
                if let Some(id) = body.get("order_id").and_then(|v| v.as_str()) {
                    return Some(Ok(id.to_owned()));
                }
            } else if !retry {
                let code = body.get("error").and_then(|v| v.as_str()).unwrap_or("?");
                return Some(Err(code.to_owned()));
            }
        }
        retries.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}
