//! After a failover round's rush: every sale's returned orders polled until final, I1–I4
//! checked on each, and the sales' answers taken as one.

use std::sync::Arc;

use seckill::domain::VoucherId;
use tokio::time::Instant;

use super::{shoppers, FINAL_WITHIN};
use crate::{
    rush::{measure, Scenario},
    scratch::Scratch,
};

/// The round's sales as the checks after the rush see them.
pub(super) struct Sales<'a> {
    pub scratch: &'a Scratch,
    pub client: &'a reqwest::Client,
    pub base: &'a str,
    pub sales: &'a [VoucherId],
    /// Each sale's shoppers' sessions.
    pub per_sale: &'a [Arc<Vec<String>>],
    /// Each sale's stock.
    pub stock: usize,
    /// Connections per sale.
    pub conns: usize,
}

impl Sales<'_> {
    /// Every sale's returned orders polled until final (within [`FINAL_WITHIN`] of the
    /// promotion at `promoted_at`), then I1–I4 checked on each; the violations, and when the
    /// last order became final after the promotion (`None`: not all did).
    pub async fn check(
        &self,
        per_sale_answers: &[shoppers::Answers],
        promoted_at: Instant,
    ) -> anyhow::Result<(Vec<String>, Option<f64>)> {
        let (scratch, client, base, conns_each) =
            (self.scratch, self.client, self.base, self.conns);
        let due = promoted_at.max(Instant::now()) + FINAL_WITHIN;
        let mut violations = Vec::new();
        // Every sale's returned orders polled until final first, so the figure is when the last
        // became final (not when the checks after it were done).
        let mut per_sale_statuses = Vec::new();
        let mut all_final = true;
        for ((v, tokens), a) in self.sales.iter().zip(self.per_sale).zip(per_sale_answers) {
            match measure::poll_until(client, base, tokens, &a.admitted, conns_each, due).await {
                Ok(s) => per_sale_statuses.push(s),
                Err(e) => {
                    violations.push(format!(
                        "sale {v}: I3: not final within {FINAL_WITHIN:?} of the promotion: {e}"
                    ));
                    all_final = false;
                    per_sale_statuses.push(Default::default());
                }
            }
        }
        let final_after = all_final.then(|| promoted_at.elapsed().as_secs_f64());
        for (((v, tokens), a), statuses) in self
            .sales
            .iter()
            .zip(self.per_sale)
            .zip(per_sale_answers)
            .zip(&per_sale_statuses)
        {
            let sc = Scenario {
                shoppers: tokens.len(),
                stock: self.stock,
                conns: conns_each,
                rate: None,
            };
            if a.gave_up > 0 {
                violations.push(format!(
                    "sale {v}: {} shoppers never got an answer",
                    a.gave_up
                ));
            }
            violations.extend(a.internal_errors().map(|e| format!("sale {v}: {e}")));
            for broken in measure::check_invariants(scratch, *v, &sc, &a.admitted, statuses).await?
            {
                violations.push(format!("sale {v}: {broken}"));
            }
        }
        Ok((violations, final_after))
    }
}

/// The sales' answers as one.
pub(super) fn merged(per_sale_answers: Vec<shoppers::Answers>) -> shoppers::Answers {
    let mut answers = shoppers::Answers::default();
    for a in per_sale_answers {
        answers.admitted.extend(a.admitted);
        for (k, n) in a.refused {
            *answers.refused.entry(k).or_default() += n;
        }
        for (k, n) in a.server_errors {
            *answers.server_errors.entry(k).or_default() += n;
        }
        answers.retries += a.retries;
        answers.gave_up += a.gave_up;
    }
    answers
}
