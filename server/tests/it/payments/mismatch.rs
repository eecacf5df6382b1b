//! Money that does not match its order (another amount or currency): held for the admins
//! while the order can still be paid, and its shopper told; given back once the order is paid
//! another way or cancelled, including when an admin gave it back by hand first.

use super::*;

#[sqlx::test]
async fn a_payment_of_another_amount_is_flagged_not_paid_and_refunded_with_the_cancellation(
    db: PgPool,
) {
    let (app, fake, v) = shop_selling(db, &[("SECKILL_PAY_WITHIN_MS", "1500")], 800, 1).await;
    let (c, id) = written_order(&app, v, "13900000103").await;
    let session = open_session(&app, &c, &id, &fake).await;
    fake.pay_reporting(&session, Some(1))
        .await
        .expect("paid 0.01");
    payment_reaches(&app, &session, "flagged").await;
    let body = order(&app, &c, &id).await;
    assert_eq!(
        (body["status"].as_str(), body["payment_mismatch"].as_bool()),
        (Some("created"), Some(true)),
        "not paid, and its shopper can tell why: {body}"
    );
    // The order's page (also on the way back from paying, which stops confirming) and the
    // shopper's list say that money came and did not pay the order.
    let t = i18n::Lang::En.texts();
    for path in [
        format!("/orders/{id}"),
        format!("/orders/{id}?payment=return"),
        "/orders".to_owned(),
    ] {
        let page = html(&c, &format!("{}{path}", app.base)).await;
        assert!(
            page.contains(t.order_payment_mismatch_sentence())
                && !page.contains(t.order_created_sentence())
                && !page.contains(t.order_checking_payment()),
            "{path}: {page}"
        );
    }
    let row = console_row(&app, v).await;
    assert_eq!(
        (
            row.counts.paid,
            row.counts.revenue_cents,
            row.counts.flagged
        ),
        (0, 0, 1),
        "admins see it flagged"
    );
    // At the deadline the order is cancelled and the money held is given back.
    tokio::time::sleep(Duration::from_millis(1600)).await;
    let report = sweep(&app).await;
    assert_eq!(report.expired, 1, "{report:?}");
    let _ = sweep(&app).await;
    let refunds = fake.refunds();
    assert_eq!(refunds.len(), 1, "{refunds:?}");
    assert_eq!(
        refunds[0].amount, 1,
        "what was taken goes back, not what was due"
    );
    let body = order(&app, &c, &id).await;
    assert_eq!(
        (body["status"].as_str(), body["refunded"].as_bool()),
        (Some("cancelled"), Some(true)),
        "{body}"
    );
    units_hold(&app, v, 1).await;
    money_holds(&app, &fake).await;
}

#[sqlx::test]
async fn money_that_did_not_match_goes_back_once_the_order_is_paid_another_way(db: PgPool) {
    let (app, fake, v) = shop_selling(db, &[], 800, 1).await;
    let (c, id) = written_order(&app, v, "13900000151").await;
    let wrong = open_session(&app, &c, &id, &fake).await;
    fake.pay_reporting(&wrong, Some(1))
        .await
        .expect("paid 0.01");
    payment_reaches(&app, &wrong, "flagged").await;
    // The shopper pays again, the amount due this time. While that payment is open, the
    // order is being paid: not said to be a mismatch (the page back from paying confirms it).
    let right = open_session(&app, &c, &id, &fake).await;
    assert_ne!(right, wrong, "a new payment");
    let body = order(&app, &c, &id).await;
    assert_eq!(
        (body["status"].as_str(), body.get("payment_mismatch")),
        (Some("created"), None),
        "{body}"
    );
    fake.pay(&right).await.expect("paid");
    until(&app, &c, &id, |o| o["status"] == "paid").await;
    // The money that did not match pays nothing now: it goes back, at once.
    payment_reaches(&app, &wrong, "refunded").await;
    let refunds = fake.refunds();
    assert_eq!(
        refunds.iter().map(|r| r.amount).collect::<Vec<_>>(),
        vec![1],
        "{refunds:?}"
    );
    assert_eq!(payment_state(&app, &right).await, "paid");
    units_hold(&app, v, 1).await;
    money_holds(&app, &fake).await;
}

#[sqlx::test]
async fn money_an_admin_gave_back_by_hand_reads_refunded_not_refused(db: PgPool) {
    let (app, fake, v) = shop_selling(db, &[("SECKILL_PAY_WITHIN_MS", "1500")], 800, 2).await;
    // Two shoppers pay another amount; an admin refunds both on Stripe's dashboard. One
    // refund's `charge.refunded` reaches the shop, the other's is lost.
    let mut orders = Vec::new();
    for phone in ["13900000142", "13900000143"] {
        let (c, id) = written_order(&app, v, phone).await;
        let session = open_session(&app, &c, &id, &fake).await;
        fake.pay_reporting(&session, Some(1))
            .await
            .expect("paid 0.01");
        payment_reaches(&app, &session, "flagged").await;
        fake.refund_by_hand(&session).expect("refunded by hand");
        orders.push((c, id, session));
    }
    let (heard, lost) = (&orders[0], &orders[1]);
    let charge = json!({
        "id": "ch_test_by_hand", "object": "charge", "refunded": true,
        "payment_intent": fake.payment_intent(&heard.2).expect("intent"),
    });
    assert_eq!(fake.send_object("charge.refunded", charge).await, Some(200));
    // A refund's event does not say it was the whole: what is left is owed back, and the
    // shop's refund is answered that nothing is left, which counts as made.
    assert_eq!(payment_state(&app, &heard.2).await, "refund_due");
    let body = order(&app, &heard.0, &heard.1).await;
    assert_eq!(
        body.get("payment_mismatch"),
        None,
        "the money goes back: {body}"
    );
    sweep_until_state(&app, &heard.2, "refunded").await;
    assert_eq!(
        order(&app, &heard.0, &heard.1).await["status"],
        "created",
        "the order still awaits its payment"
    );
    // At the deadline both are cancelled. The shop's refund of the one it did not hear of is
    // answered `charge_already_refunded`: the money is back, not a refusal for an admin.
    tokio::time::sleep(Duration::from_millis(1600)).await;
    let report = sweep(&app).await;
    assert_eq!(report.expired, 2, "{report:?}");
    sweep_until_state(&app, &lost.2, "refunded").await;
    for (c, id, _) in &orders {
        let body = order(&app, c, id).await;
        assert_eq!(
            (body["status"].as_str(), body["refunded"].as_bool()),
            (Some("cancelled"), Some(true)),
            "{body}"
        );
    }
    assert_eq!(fake.refunds().len(), 2, "each refunded once, by hand");
    units_hold(&app, v, 2).await;
    money_holds(&app, &fake).await;
}
