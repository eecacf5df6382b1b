//! Reminders at scale (issue #56): N shoppers asked for one sale's reminder (100,000; 2,000 with
//! `--quick`); a relay stand-in in this process checks each signature, takes at most R a second
//! (over it: 503, which the shop retries) and fails one message in 50 with a 500; two server
//! instances send at the shop's pace (`SECKILL_REMINDER_RATE` = R). A third of the way in, the
//! instance that sent more is killed with `kill -9` and started again. Then: every shopper
//! reminded, once by `id` (the relay counts the repeats a crash can cause, under the same id),
//! the last within N / R seconds plus a margin, each instance's share, every row recorded sent.

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use anyhow::ensure;
use axum::{extract::State, http::HeaderMap, http::StatusCode, routing::post, Router};
use tokio::time::Instant;

use crate::{report::Report, rush::process::Server, scratch::Scratch, Options};

const SECRET: &str = "bench-reminder-relay-secret";
/// The lease the instances hold a batch for: a killed one's batch goes after it.
const LEASE_MS: u64 = 3_000;

pub async fn run(options: &Options) -> anyhow::Result<()> {
    let scratch = Scratch::new("reminders").await?;
    let result = bench(options, &scratch).await;
    scratch.cleanup().await?;
    result
}

/// The relay stand-in's books.
#[derive(Default)]
struct Relay {
    /// Messages taken, by id: how often each (a repeat is the same id again).
    taken: Mutex<HashMap<String, u32>>,
    /// When the last new id was taken, from the start.
    last_ms: AtomicU64,
    calls: AtomicU64,
    refused_busy: AtomicU64,
    failed_on_purpose: AtomicU64,
    bad_signatures: AtomicU64,
    /// Calls this second, and which second.
    second: Mutex<(u64, u64)>,
    rate: u64,
    started: Mutex<Option<Instant>>,
}

async fn take(State(r): State<Arc<Relay>>, headers: HeaderMap, body: String) -> StatusCode {
    let call = r.calls.fetch_add(1, Ordering::Relaxed) + 1;
    let expected = seckill::auth::delivery::signature(SECRET, body.as_bytes());
    if headers
        .get("x-seckill-signature")
        .and_then(|v| v.to_str().ok())
        != Some(expected.as_str())
    {
        r.bad_signatures.fetch_add(1, Ordering::Relaxed);
        return StatusCode::UNAUTHORIZED;
    }
    let Ok(message) = serde_json::from_str::<serde_json::Value>(&body) else {
        return StatusCode::BAD_REQUEST;
    };
    if message["kind"] != "reminder" {
        return StatusCode::NO_CONTENT;
    }
    let elapsed = r.started.lock().ok().and_then(|s| *s).map_or(0, |s| {
        u64::try_from(s.elapsed().as_millis()).unwrap_or(u64::MAX)
    });
    {
        let Ok(mut second) = r.second.lock() else {
            return StatusCode::INTERNAL_SERVER_ERROR;
        };
        // Per second of the wall clock, as a relay's own limit counts (the shop paces by it too).
        let now = u64::try_from(chrono::Utc::now().timestamp()).unwrap_or_default();
        if second.0 != now {
            *second = (now, 0);
        }
        second.1 += 1;
        if second.1 > r.rate {
            r.refused_busy.fetch_add(1, Ordering::Relaxed);
            return StatusCode::SERVICE_UNAVAILABLE;
        }
    }
    if call % 50 == 0 {
        r.failed_on_purpose.fetch_add(1, Ordering::Relaxed);
        return StatusCode::INTERNAL_SERVER_ERROR;
    }
    let id = message["id"].as_str().unwrap_or_default().to_owned();
    if let Ok(mut taken) = r.taken.lock() {
        let n = taken.entry(id).or_default();
        *n += 1;
        if *n == 1 {
            r.last_ms.store(elapsed, Ordering::Relaxed);
        }
    }
    StatusCode::NO_CONTENT
}

async fn bench(options: &Options, scratch: &Scratch) -> anyhow::Result<()> {
    let (n, rate): (i64, u64) = if options.quick {
        (2_000, 500)
    } else {
        (100_000, 1_000)
    };
    let relay = Arc::new(Relay {
        rate,
        ..Relay::default()
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/sms", listener.local_addr()?);
    let app = Router::new()
        .route("/sms", post(take))
        .with_state(Arc::clone(&relay));
    let serving = tokio::spawn(async move { axum::serve(listener, app).await });

    // The sale, two hours away, and N shoppers who asked for its reminder.
    let voucher = scratch.voucher(100, chrono::Duration::hours(2)).await?;
    let db = &scratch.core.db;
    sqlx::query(
        "INSERT INTO users (phone) SELECT '+86139' || lpad(k::text, 8, '0') FROM generate_series(1, $1) k",
    )
    .bind(n)
    .execute(db)
    .await?;
    sqlx::query(
        "INSERT INTO reminders (voucher_id, user_id, id, lang)
         SELECT $1, id, gen_random_uuid()::text, CASE WHEN id % 3 = 0 THEN 'en' ELSE 'zh-CN' END
         FROM users WHERE phone LIKE '+86139%'",
    )
    .bind(voucher.get())
    .execute(db)
    .await?;

    let mut env = scratch.env.clone();
    for (k, v) in [
        ("SECKILL_SMS_WEBHOOK_URL", url.as_str()),
        ("SECKILL_SMS_WEBHOOK_SECRET", SECRET),
        ("SECKILL_SMS_WEBHOOK_TIMEOUT_MS", "2000"),
        ("SECKILL_REMINDER_LEAD_MS", "3600000"),
        ("SECKILL_REMINDER_LEASE_MS", &LEASE_MS.to_string()),
    ] {
        env.push((k.into(), v.into()));
    }
    env.push(("SECKILL_REMINDER_RATE".into(), rate.to_string()));
    let mut a = Server::start(&env).await?;
    let mut b = Server::start(&env).await?;

    // The start comes within the lead: every reminder is due now.
    if let Ok(mut s) = relay.started.lock() {
        *s = Some(Instant::now());
    }
    let started = Instant::now();
    sqlx::query("UPDATE vouchers SET begins_at = now() + interval '30 minutes' WHERE id = $1")
        .bind(voucher.get())
        .execute(db)
        .await?;
    let count = |r: &Relay| r.taken.lock().map_or(0, |t| t.len());
    let n_usize = usize::try_from(n)?;
    let budget = Duration::from_secs(u64::try_from(n)? / rate + 60);
    while count(&relay) < n_usize / 3 {
        ensure!(
            started.elapsed() < budget,
            "a third of the reminders did not go in time"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Kill the one that sent more, mid-send, and start it again on its port.
    let (sent_a, sent_b) = (sent(&a).await, sent(&b).await);
    let killed_share = sent_a.max(sent_b);
    let a_killed = sent_a >= sent_b;
    let victim = if a_killed { &mut a } else { &mut b };
    let port = victim.port();
    victim.kill9();
    let killed_at_ms = started.elapsed().as_millis();
    *victim = Server::start_on(&env, port).await?;

    let states = |db: sqlx::PgPool| async move {
        sqlx::query_as::<_, (String, i64)>(
            "SELECT state, count(*) FROM reminders GROUP BY state ORDER BY state",
        )
        .fetch_all(&db)
        .await
    };
    loop {
        let waiting: i64 =
            sqlx::query_scalar("SELECT count(*) FROM reminders WHERE state = 'waiting'")
                .fetch_one(db)
                .await?;
        if waiting == 0 {
            break;
        }
        ensure!(
            started.elapsed() < budget,
            "{waiting} reminders still waiting after {budget:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let done_secs = started.elapsed().as_secs_f64();
    // The restarted instance counts from zero; the other's counter ran on.
    let (after_a, after_b) = (sent(&a).await, sent(&b).await);
    let (total_a, total_b) = if a_killed {
        (sent_a + after_a, after_b)
    } else {
        (after_a, sent_b + after_b)
    };
    a.stop();
    b.stop();
    serving.abort();

    let taken = relay.taken.lock().map(|t| t.clone()).unwrap_or_default();
    let repeats: u32 = taken.values().map(|c| c - 1).sum();
    let by_state = states(db.clone()).await?;
    ensure!(
        taken.len() == n_usize,
        "the relay took {} distinct reminders of {n}",
        taken.len()
    );
    ensure!(
        by_state == vec![("sent".to_owned(), n)],
        "rows: {by_state:?}"
    );
    ensure!(
        relay.bad_signatures.load(Ordering::Relaxed) == 0,
        "unsigned messages"
    );
    let last_s = relay.last_ms.load(Ordering::Relaxed) as f64 / 1_000.0;
    let ideal = n as f64 / rate as f64;
    report(
        options,
        &Figures {
            n,
            rate,
            last_s,
            ideal,
            done_secs,
            repeats,
            killed_at_ms,
            killed_share,
            shares: (sent_a, sent_b, total_a, total_b),
            busy: relay.refused_busy.load(Ordering::Relaxed),
            failed: relay.failed_on_purpose.load(Ordering::Relaxed),
            calls: relay.calls.load(Ordering::Relaxed),
        },
    )
    .publish(options)
}

/// Reminders an instance says it sent since it started (`/metrics`).
async fn sent(server: &Server) -> u64 {
    let Ok(r) = reqwest::get(format!("{}/metrics", server.metrics)).await else {
        return 0;
    };
    let text = r.text().await.unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with("seckill_reminders_sent_total"))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|v| v.parse::<f64>().ok())
        .map_or(0, |v| v as u64)
}

struct Figures {
    n: i64,
    rate: u64,
    last_s: f64,
    ideal: f64,
    done_secs: f64,
    repeats: u32,
    killed_at_ms: u128,
    killed_share: u64,
    /// Sent by a and b before the kill, then by each in all.
    shares: (u64, u64, u64, u64),
    busy: u64,
    failed: u64,
    calls: u64,
}

fn report(options: &Options, f: &Figures) -> Report {
    // The calls the relay fails on purpose (1 in 50) take their share of the rate again, and the
    // killed instance's batch waits for its lease.
    let margin = f.ideal / 50.0 + 2.0 + LEASE_MS as f64 / 1_000.0;
    let rows = vec![
        ("reminders".to_owned(), format!("{} shoppers asked for one sale's reminder; relay stand-in takes {} a second, fails 1 in 50 (500), answers 503 over its rate", seckill::domain::grouped(f.n), f.rate)),
        ("every shopper reminded once".into(), format!("{} distinct ids taken; {} repeats of an id (the kill -9's batch sent again under the same ids); every row recorded sent", seckill::domain::grouped(f.n), f.repeats)),
        ("the last reminder".into(), format!("{:.1} s after they became due (N / rate = {:.1} s; all rows recorded at {:.1} s)", f.last_s, f.ideal, f.done_secs)),
        ("kill -9".into(), format!("at {:.1} s, of the instance that had sent {} (a lease of {:.0} s before another takes its batch)", f.killed_at_ms as f64 / 1000.0, f.killed_share, LEASE_MS as f64 / 1000.0)),
        ("each instance's share".into(), format!("a {} / b {} before the kill; a {} / b {} in all (the killed one's two lives added)", f.shares.0, f.shares.1, f.shares.2, f.shares.3)),
        ("relay calls".into(), format!("{} ({} 503 over its rate, {} 500 on purpose)", f.calls, f.busy, f.failed)),
        ("target".into(), format!("every shopper once, the last within N / rate + {margin:.0} s (the retries of the relay's failures, the lease, 2 s): {}", if f.last_s <= f.ideal + margin { "met" } else { "missed" })),
    ];
    Report {
        name: if options.quick {
            "reminders-quick"
        } else {
            "reminders"
        },
        title: format!(
            "Reminders at scale{}",
            if options.quick { " (quick)" } else { "" }
        ),
        rows,
        notes: Vec::new(),
        json: serde_json::json!({
            "reminders": f.n, "rate": f.rate, "last_s": f.last_s, "ideal_s": f.ideal,
            "done_s": f.done_secs, "repeats": f.repeats, "relay_calls": f.calls,
        }),
    }
}
