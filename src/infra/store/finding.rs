//! Sales in the whole history, found by title, stage and start, newest first, keyset-paged
//! (indexes `vouchers_newest` and `vouchers_title_trgm`, migration 15).

use chrono::{DateTime, Utc};
use sqlx::{PgPool, Postgres, QueryBuilder};

use super::vouchers::{Row, COLUMNS};
use crate::domain::{SaleQuery, SaleStage, Voucher};

/// At most `q.limit + 1` sales matching `q` at `now`, newest first: the one past the page says
/// that another page follows.
pub async fn find(
    db: &PgPool,
    q: &SaleQuery,
    now: DateTime<Utc>,
) -> Result<Vec<Voucher>, sqlx::Error> {
    let mut b = QueryBuilder::<Postgres>::new(format!("SELECT {COLUMNS} FROM vouchers WHERE true"));
    if let Some(title) = &q.title {
        b.push(" AND title ILIKE ").push_bind(containing(title));
    }
    match q.stage {
        Some(SaleStage::Upcoming) => {
            b.push(" AND begins_at > ").push_bind(now);
        }
        Some(SaleStage::OnSale) => {
            b.push(" AND begins_at <= ").push_bind(now);
            b.push(" AND ends_at > ").push_bind(now);
        }
        Some(SaleStage::Ended) => {
            b.push(" AND ends_at <= ").push_bind(now);
        }
        None => {}
    }
    if let Some(p) = q.starts {
        b.push(" AND begins_at >= ").push_bind(p.from());
        b.push(" AND begins_at < ").push_bind(p.to());
    }
    if let Some(c) = q.after {
        b.push(" AND (begins_at, id) < (").push_bind(c.begins_at);
        b.push(", ").push_bind(c.id).push(")");
    }
    b.push(" ORDER BY begins_at DESC, id DESC LIMIT ")
        .push_bind(q.limit + 1);
    // Planned for its own values every time (an unnamed statement): a generic plan cannot tell
    // a rare title part, best found by the trigram index, from a common one, best found walking
    // the newest-first index (BENCHMARKS.md, "Every sale ever run").
    b.build_query_as::<Row>()
        .persistent(false)
        .fetch_all(db)
        .await?
        .into_iter()
        .map(Row::into_voucher)
        .collect()
}

/// An `ILIKE` pattern for titles containing `text` as typed (`%`, `_` and `\` are characters).
fn containing(text: &str) -> String {
    let mut p = String::with_capacity(text.len() + 2);
    p.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_title_part_is_matched_as_typed() {
        assert_eq!(super::containing("50%_off\\"), "%50\\%\\_off\\\\%");
        assert_eq!(super::containing("茶"), "%茶%");
    }
}
