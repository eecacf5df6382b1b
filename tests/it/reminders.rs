//! The reminders' outbox: a sender whose claim ran out records nothing over the sender that
//! claimed the reminder after it.

use std::time::Duration;

use chrono::Utc;
use sqlx::PgPool;

use crate::common::*;
use seckill::testing::store::reminders::{self, Outcome};

#[sqlx::test]
async fn a_sender_whose_claim_ran_out_records_nothing_over_the_next_one(db: PgPool) {
    let core = core(db, &[]).await;
    let shopper = users(&core, 1).await[0];
    // Opens in an hour; the reminder is due with a lead of two hours.
    let v = voucher(&core, 5, -3600, 7200).await;
    assert!(reminders::ask(&core.db, v, shopper, "en")
        .await
        .expect("ask"));
    let lead = Duration::from_secs(7200);
    let lease = Duration::from_secs(30);
    let now = Utc::now();
    let first = reminders::claim(&core.db, now, lead, lease, 10)
        .await
        .expect("claim");
    assert_eq!(first.len(), 1);
    // Held: a second sender finds nothing until the claim runs out...
    assert!(reminders::claim(&core.db, now, lead, lease, 10)
        .await
        .expect("claim")
        .is_empty());
    // ...then claims it.
    let later = now + chrono::Duration::seconds(31);
    let second = reminders::claim(&core.db, later, lead, lease, 10)
        .await
        .expect("claim");
    assert_eq!(second.len(), 1);
    assert_eq!(
        second[0].id, first[0].id,
        "the same message, so a relay tells repeats"
    );
    // The first sender's late outcome changes nothing: the reminder is the second's.
    reminders::record(&core.db, &first[0], &Outcome::Failed("timed out".into()))
        .await
        .expect("record");
    assert_eq!(
        reminders::state(&core.db, v, shopper, later)
            .await
            .expect("state"),
        Some(("waiting".to_owned(), true))
    );
    reminders::record(&core.db, &second[0], &Outcome::Sent)
        .await
        .expect("record");
    assert_eq!(
        reminders::state(&core.db, v, shopper, later)
            .await
            .expect("state"),
        Some(("sent".to_owned(), false))
    );
}

#[sqlx::test]
async fn a_reminder_not_tried_keeps_its_tries(db: PgPool) {
    let core = core(db, &[]).await;
    let shopper = users(&core, 1).await[0];
    let v = voucher(&core, 5, -3600, 7200).await;
    reminders::ask(&core.db, v, shopper, "en")
        .await
        .expect("ask");
    let lead = Duration::from_secs(7200);
    let lease = Duration::from_secs(30);
    // Three claims whose pace could not be counted (Redis out of reach): none is a try.
    let mut now = Utc::now();
    for _ in 0..3 {
        let due = reminders::claim(&core.db, now, lead, lease, 10)
            .await
            .expect("claim");
        assert_eq!(due.len(), 1);
        assert_eq!(due[0].tries, 1, "the claim counts this try only");
        reminders::record(
            &core.db,
            &due[0],
            &Outcome::NotTried(now, "pacing: down".into()),
        )
        .await
        .expect("record");
        now += chrono::Duration::seconds(1);
    }
}

#[sqlx::test]
async fn asking_again_puts_a_waiting_reminder_back_in_a_count_redis_lost(db: PgPool) {
    let core = core(db, &[]).await;
    let shopper = users(&core, 1).await[0];
    let v = voucher(&core, 5, -3600, 7200).await;
    let ask = || seckill::reminders::ask(&core, shopper, v, "en", Utc::now());
    assert!(ask().await.expect("ask").new);
    del(&core, &[&core.keys.voucher(v).reminders]).await;
    assert_eq!(
        seckill::reminders::waiting(&core, v).await.expect("count"),
        0
    );
    let again = ask().await.expect("ask again");
    assert!(!again.new);
    assert_eq!(again.state.as_str(), "waiting");
    assert_eq!(
        seckill::reminders::waiting(&core, v).await.expect("count"),
        1
    );
}
