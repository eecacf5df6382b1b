//! Receipts that bind the rules (issue #51): a receipt covers the sale's terms fixed at its
//! creation and is signed with the key its transcript names then, so rotating the shop's key
//! breaks no receipt of an older sale; an entry the shop could not sign is not taken.

use chrono::Utc;
use ed25519_dalek::{Signature, SigningKey, VerifyingKey};
use seckill::{
    catalog,
    domain::{fair, VoucherDraft, VoucherId},
    draw::{self, DrawError, Receipt},
    Core,
};
use sqlx::PgPool;

use crate::common::{admin, core, loopback, sibling, users};

const OLD: &str = "5151515151515151515151515151515151515151515151515151515151515151";
const NEW: &str = "6262626262626262626262626262626262626262626262626262626262626262";

fn public(seed_hex: &str) -> [u8; 32] {
    let seed: [u8; 32] = hex::decode(seed_hex)
        .expect("hex")
        .try_into()
        .expect("32 bytes");
    SigningKey::from_bytes(&seed).verifying_key().to_bytes()
}

async fn draw_sale(core: &Core) -> VoucherId {
    let begins = Utc::now() + chrono::Duration::hours(1);
    let draft = VoucherDraft {
        title: "Draw".into(),
        price_cents: "100".into(),
        stock: "3".into(),
        begins_at: begins.to_rfc3339(),
        ends_at: (begins + chrono::Duration::hours(1)).to_rfc3339(),
        opening: "draw".into(),
        entries_open_at: (Utc::now() - chrono::Duration::seconds(1)).to_rfc3339(),
        ..VoucherDraft::default()
    };
    catalog::create_voucher(core, &admin(core).await, &draft, Utc::now())
        .await
        .expect("create")
}

/// Whether `r` verifies, by the rules written out here, with `key` over the terms `t` states.
fn verifies(t: &draw::Transcript, r: &Receipt, key: &[u8; 32]) -> bool {
    let message = format!(
        "seckill-receipt-v2:{}:{}:{}:-:{}",
        t.voucher_id,
        r.leaf,
        t.commitment,
        t.closes_at.timestamp_millis()
    );
    let signature: [u8; 64] = hex::decode(&r.signature)
        .expect("hex")
        .try_into()
        .expect("64 bytes");
    VerifyingKey::from_bytes(key)
        .expect("a key")
        .verify_strict(message.as_bytes(), &Signature::from_bytes(&signature))
        .is_ok()
}

#[sqlx::test]
async fn a_rotated_key_keeps_signing_the_sales_created_under_it(db: PgPool) {
    let before = core(db, &[("SECKILL_DRAW_SIGNING_KEY", OLD)]).await;
    let v = draw_sale(&before).await;
    let shoppers = users(&before, 3).await;
    let first = draw::enter(&before, shoppers[0], v, loopback())
        .await
        .expect("enter");
    let t = draw::transcript(&before, v).await.expect("transcript");
    assert_eq!(t.receipt_key, fair::ReceiptKeyView::of(&public(OLD)));
    assert_eq!(first.receipt.key_id, t.receipt_key.id);
    assert!(verifies(&t, &first.receipt, &public(OLD)));
    // Another commitment, another close: the same signature no longer verifies.
    let mut other = t.clone();
    other.closes_at += chrono::Duration::milliseconds(1);
    assert!(!verifies(&other, &first.receipt, &public(OLD)));

    // The key rotates; the old one is kept for the sales that named it.
    let rotated = sibling(
        &before,
        &[
            ("SECKILL_DRAW_SIGNING_KEY", NEW),
            ("SECKILL_DRAW_PREVIOUS_SIGNING_KEYS", OLD),
        ],
    )
    .await;
    let second = draw::enter(&rotated, shoppers[1], v, loopback())
        .await
        .expect("enter after the rotation");
    let t = draw::transcript(&rotated, v).await.expect("transcript");
    assert_eq!(t.receipt_key, fair::ReceiptKeyView::of(&public(OLD)));
    assert!(verifies(&t, &second.receipt, &public(OLD)));
    let again = draw::standing(&rotated, Some(shoppers[0]), v)
        .await
        .expect("standing");
    assert_eq!(
        again.receipt.as_ref(),
        Some(&first.receipt),
        "the same receipt"
    );
    // A sale created now names the new key.
    let newer = draw_sale(&rotated).await;
    let t = draw::transcript(&rotated, newer).await.expect("transcript");
    assert_eq!(t.receipt_key, fair::ReceiptKeyView::of(&public(NEW)));

    // Without the old key, an entry of the older sale is refused before it is logged.
    let forgot = sibling(&before, &[("SECKILL_DRAW_SIGNING_KEY", NEW)]).await;
    match draw::enter(&forgot, shoppers[2], v, loopback()).await {
        Err(DrawError::KeyNotHeld(id)) => assert_eq!(id, fair::key_id(&public(OLD))),
        other => panic!("entered without the sale's key: {other:?}"),
    }
    let logged: i64 =
        sqlx::query_scalar("SELECT count(*) FROM draw_log WHERE voucher_id = $1 AND user_id = $2")
            .bind(v.get())
            .bind(shoppers[2].get())
            .fetch_one(&forgot.db)
            .await
            .expect("count");
    assert_eq!(logged, 0, "not logged without a receipt");
}
