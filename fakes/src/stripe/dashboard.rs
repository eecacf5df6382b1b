//! What an admin does on Stripe's dashboard, behind the shop's back.

use super::{FakeStripe, Refund};

impl FakeStripe {
    /// An admin refunds `session`'s payment in full on Stripe's dashboard: the refund is made
    /// as `POST /v1/refunds` makes one, and no event is sent (a test sends `charge.refunded`
    /// itself, or leaves it lost). An error if it took no money or was refunded already.
    pub fn refund_by_hand(&self, session: &str) -> anyhow::Result<()> {
        let mut f = self.fake.lock();
        let (intent, amount) = f
            .sessions
            .get(session)
            .and_then(|s| Some((s.payment_intent.clone()?, s.amount_total)))
            .ok_or_else(|| anyhow::anyhow!("session {session} took no money"))?;
        if f.refunds.iter().any(|r| r.payment_intent == intent) {
            anyhow::bail!("session {session}'s payment is refunded already");
        }
        f.counter += 1;
        let id = format!("re_test_{}", f.counter);
        f.refunds.push(Refund {
            id,
            payment_intent: intent,
            amount,
        });
        Ok(())
    }
}
