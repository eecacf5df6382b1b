//! The audit trail (#23 point 8): every admin action and every sign-in, refused or not, leaves
//! one line under the `audit` target naming the actor, the action and the target; a phone only
//! masked, a code never.

use std::{
    io::Write,
    sync::{Arc, Mutex, OnceLock},
};

use crate::common::*;
use seckill::{auth, catalog};
use sqlx::PgPool;

/// Every line written under the `audit` target by this test binary, from any thread.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lines").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Lines {
    /// The lines the current thread wrote (each names its thread).
    fn of_this_thread(&self) -> String {
        let this = thread_number(&format!("{:?}", std::thread::current().id()));
        String::from_utf8_lossy(&self.0.lock().expect("lines"))
            .lines()
            .filter(|l| this.is_some() && thread_number(l) == this)
            .map(|l| format!("{l}\n"))
            .collect()
    }
}

/// The number in the first `ThreadId(n)` of `text` (the subscriber pads it: `ThreadId(02)`).
fn thread_number(text: &str) -> Option<u64> {
    let rest = &text[text.find("ThreadId(")? + "ThreadId(".len()..];
    rest[..rest.find(')')?].parse().ok()
}

/// The process-wide subscriber of the audit lines, installed once. A thread-local default
/// (`set_default`) is not enough: another test's thread may reach a callsite first and tracing
/// can keep that callsite's interest as "never" (a race seen in the full run).
fn audit_lines() -> &'static Lines {
    static LINES: OnceLock<Lines> = OnceLock::new();
    LINES.get_or_init(|| {
        let lines = Lines::default();
        let writer = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter("audit=info")
            .with_ansi(false)
            .with_thread_ids(true)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("the only global subscriber");
        lines
    })
}

#[sqlx::test]
async fn admin_actions_and_sign_ins_leave_an_audit_line(db: PgPool) {
    // sqlx::test runs the test on a current-thread runtime: its lines are this thread's.
    let lines = audit_lines();
    let core = core(db, &[]).await;
    let admin = admin(&core).await;
    let v = voucher(&core, 5, 5, 600).await;
    catalog::admin::end_sale(&core, &admin, v)
        .await
        .expect("ended");
    let now = chrono::Utc::now();
    let period = seckill::domain::Period::parse(
        Some(&(now - chrono::Duration::hours(1)).to_rfc3339()),
        Some(&now.to_rfc3339()),
        |day| Some(day.and_hms_opt(0, 0, 0)?.and_utc()),
    )
    .expect("period");
    let _ = seckill::books::orders_csv(&core, &admin, period)
        .await
        .expect("export");
    let issued = auth::request_code(&core, loopback(), "13900000051")
        .await
        .expect("code");
    let code = issued.dev_code.expect("dev code");
    let _ = auth::sign_in(&core, loopback(), "13900000051", "000000").await;
    let signed = auth::sign_in(&core, loopback(), "13900000051", &code)
        .await
        .expect("in");

    let text = lines.of_this_thread();
    let line = |needle: &str| {
        text.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{text}"))
            .to_owned()
    };
    let created = line("action=\"create voucher\"");
    assert!(
        created.contains(&format!("actor={}", admin.user()))
            && created.contains(&format!("target={v}")),
        "{created}"
    );
    let ended = line("action=\"end sale\"");
    assert!(
        ended.contains(&format!("target={v}")) && ended.contains("done"),
        "{ended}"
    );
    let exported = line("action=\"export orders\"");
    assert!(
        exported.contains(&format!("actor={}", admin.user())) && exported.contains("done"),
        "{exported}"
    );
    let refused = line("sign-in refused");
    assert!(
        refused.contains("+*********0051") && refused.contains("client=127.0.0.1"),
        "{refused}"
    );
    let signed_in = line("signed in");
    assert!(
        signed_in.contains(&format!("actor={}", signed.principal.user)),
        "{signed_in}"
    );
    assert!(
        !text.contains("13900000051") && !text.contains(&code),
        "no phone or code in clear:\n{text}"
    );
}
