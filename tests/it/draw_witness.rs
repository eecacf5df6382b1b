//! A witness outside the shop (issue #51): the closed entrant list is timestamped by an RFC 3161
//! authority before its beacon round is emitted, the token verifies with the authority's
//! certificate (checked by OpenSSL, as a skeptic would) and with no other, and an authority that
//! is down delays no draw.

use std::time::Duration;

use chrono::Utc;
use fakes::{
    drand::{FakeDrand, Scheme},
    tsa::FakeTsa,
};
use seckill::{
    catalog,
    domain::{fair, VoucherDraft, VoucherId},
    draw, Core,
};
use sha2::{Digest, Sha256};
use sqlx::PgPool;

use crate::common::{admin, core, loopback, users};

async fn witnessed_core(db: PgPool, drand: &FakeDrand, tsa: &FakeTsa) -> Core {
    core(
        db,
        &[
            ("SECKILL_DRAND_URL", drand.url()),
            ("SECKILL_DRAND_CHAIN_HASH", drand.chain_hash()),
            ("SECKILL_DRAND_PUBLIC_KEY", &drand.public_key()),
            ("SECKILL_DRAW_COMMIT_MARGIN_MS", "5000"),
            ("SECKILL_DRAW_TSA_URL", tsa.url()),
        ],
    )
    .await
}

/// A draw sale of 2 units starting in a second, entered by 4 shoppers, drawn.
async fn drawn_sale(core: &Core) -> (VoucherId, draw::Transcript) {
    let begins = Utc::now() + chrono::Duration::seconds(1);
    let draft = VoucherDraft {
        title: "Draw".into(),
        price_cents: "100".into(),
        stock: "2".into(),
        begins_at: begins.to_rfc3339(),
        ends_at: (begins + chrono::Duration::hours(1)).to_rfc3339(),
        opening: "draw".into(),
        entries_open_at: (Utc::now() - chrono::Duration::seconds(1)).to_rfc3339(),
        ..VoucherDraft::default()
    };
    let v = catalog::create_voucher(core, &admin(core).await, &draft, Utc::now())
        .await
        .expect("create");
    for u in users(core, 4).await {
        draw::enter(core, u, v, loopback()).await.expect("enter");
    }
    tokio::time::timeout(Duration::from_secs(120), draw::run(core, v))
        .await
        .expect("the draw ran within its round's wait")
        .expect("run")
        .expect("ran here");
    (v, draw::transcript(core, v).await.expect("transcript"))
}

/// Whether OpenSSL verifies `token` over `imprint` with the authority certificate `ca`.
fn openssl_verifies(token: &[u8], imprint: &[u8], ca: &std::path::Path) -> bool {
    let file = std::env::temp_dir().join(format!("seckill-token-{}.der", uuid::Uuid::new_v4()));
    std::fs::write(&file, token).expect("write the token");
    let status = std::process::Command::new("openssl")
        .args([
            "ts",
            "-verify",
            "-digest",
            &hex::encode(imprint),
            "-token_in",
            "-in",
        ])
        .arg(&file)
        .arg("-CAfile")
        .arg(ca)
        .output()
        .expect("openssl");
    let _ = std::fs::remove_file(&file);
    status.status.success()
}

#[sqlx::test]
async fn the_closed_list_is_timestamped_outside_the_shop_before_its_round(db: PgPool) {
    // Rounds 5 s apart: the witness is asked between the close and the round, and the stand-in
    // authority runs `openssl ts` per token; with rounds 1 s apart a busy machine (the whole
    // suite on two cores) once took longer than the round, and no witness was kept.
    let drand = FakeDrand::start(Scheme::Quicknet, 5, b"witnessed stand-in")
        .await
        .expect("drand");
    let tsa = FakeTsa::start().await.expect("authority");
    let core = witnessed_core(db, &drand, &tsa).await;
    let (v, t) = drawn_sale(&core).await;
    let w = t.witness.clone().expect("a witness once closed");
    assert_eq!(w.tsa, tsa.url());

    // The token timestamps this voucher's root and round, written out by hand here.
    let round = t.beacon.as_ref().expect("beacon").round;
    let root = t.entries_root.clone().expect("root");
    let imprint =
        Sha256::digest(format!("seckill-draw-witness-v1:{}:{root}:{round}", v.get()).as_bytes());
    let token = hex::decode(&w.token).expect("hex");
    let facts = fair::read_token(&token).expect("a token");
    assert_eq!(facts.imprint.as_slice(), imprint.as_slice());
    assert_eq!(facts.at, w.at);
    let timing = seckill::testing::beacon_timing(&core)
        .await
        .expect("timing");
    assert!(w.at < timing.emitted_at(round), "before the round: {w:?}");
    // The authority's seconds: no earlier than the close's second.
    let closed = t.closed_at.expect("closed");
    assert!(
        w.at.timestamp() >= closed.timestamp() - 1,
        "{w:?} vs {closed}"
    );

    // Its signature holds with the authority's certificate, and with no other's.
    assert!(openssl_verifies(&token, &imprint, &tsa.certificate()));
    let stranger = FakeTsa::start().await.expect("another authority");
    assert!(!openssl_verifies(&token, &imprint, &stranger.certificate()));
    let other = Sha256::digest(b"another list");
    assert!(!openssl_verifies(&token, &other, &tsa.certificate()));

    // The verifiers' rules take it: witnessed before the round.
    let sale = fair::Sale {
        voucher_id: v.get(),
        stock: fair::StockSeen::After(2),
        ends_at: t.closes_at + chrono::Duration::hours(1),
    };
    let clock = fair::BeaconCheck::Timed {
        chain: timing.chain(),
        margin: Some(chrono::Duration::seconds(5)),
    };
    let checked = fair::check(&t, &sale, &clock).expect("checks");
    assert_eq!(checked.witness, fair::Witnessed::BeforeRound { at: w.at });
    // A transcript that restates the witness's time is refused.
    let mut restated = t.clone();
    if let Some(w) = restated.witness.as_mut() {
        w.at -= chrono::Duration::seconds(10);
    }
    assert!(matches!(
        fair::check(&restated, &sale, &clock),
        Err(fair::Mismatch::Witness(_))
    ));
}

#[sqlx::test]
async fn an_authority_down_at_the_close_delays_no_draw(db: PgPool) {
    let drand = FakeDrand::start(Scheme::Quicknet, 1, b"unwitnessed stand-in")
        .await
        .expect("drand");
    let tsa = FakeTsa::start().await.expect("authority");
    tsa.outage(true);
    let core = witnessed_core(db, &drand, &tsa).await;
    let (v, t) = drawn_sale(&core).await;
    assert!(t.ranking.is_some(), "drawn and published");
    assert!(t.witness.is_none(), "{:?}", t.witness);
    // Back after the round: a timestamp now would prove nothing, so none is asked or kept.
    tsa.outage(false);
    let root = fair::hash_from_hex(t.entries_root.as_deref().expect("root")).expect("hex");
    let round = t.beacon.as_ref().map(|b| b.round);
    let asked = draw::witness::witness(&core, v, &root, round)
        .await
        .expect("no failure");
    assert!(!asked);
    assert_eq!(tsa.served(), 0);
    assert!(draw::transcript(&core, v)
        .await
        .expect("t")
        .witness
        .is_none());
}

#[tokio::test]
async fn openssl_timestamps_a_query_whatever_its_nonce() {
    // Nonces with leading zero bytes (one random nonce in 256 was sent with a padding OpenSSL
    // refuses), a top bit set after them, the smallest and the largest.
    let tsa = FakeTsa::start().await.expect("authority");
    let imprint = fair::witness_imprint(7, &[0xab; 32], Some(9));
    for nonce in [
        0x0012_3456_789a_bcde_u64,
        0x0080_0000_0000_0000,
        0x0000_0000_0000_0001,
        0,
        0x7fff_ffff_ffff_ffff,
    ] {
        let reply = reqwest::Client::new()
            .post(tsa.url())
            .header("content-type", "application/timestamp-query")
            .body(fair::timestamp_request(&imprint, nonce))
            .send()
            .await
            .expect("sent");
        assert_eq!(reply.status(), 200, "{nonce:#x}");
        let token = fair::token_of_reply(&reply.bytes().await.expect("body")).expect("granted");
        let facts = fair::read_token(&token).expect("a token");
        assert_eq!(facts.imprint, imprint, "{nonce:#x}");
        assert!(facts.echoes(nonce), "{nonce:#x}: {:?}", facts.nonce);
        assert!(!facts.echoes(nonce ^ 1), "{nonce:#x}: another nonce");
    }
}
