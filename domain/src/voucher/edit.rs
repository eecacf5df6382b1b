//! An admin's edit of a sale: the fields a request names ([`VoucherPatch`]) laid over the stored
//! voucher make a draft that meets the creation rules, and [`check_edit`] says whether the sale
//! may still change at all. The rule (design.md, "Editing a sale"): nothing a shopper has acted
//! on changes under them. A sale is edited only before it opens (its start, or a draw's entries
//! opening); a draw's published commitment (its being a draw, and its start, which names the
//! beacon round and closes the entry list its receipts cover) never changes.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use super::{NewVoucher, Voucher, VoucherDraft};
use crate::FieldErrors;

/// The fields an edit names, as text; `None` leaves the field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoucherPatch {
    pub title: Option<String>,
    pub description: Option<String>,
    pub price_cents: Option<String>,
    pub stock: Option<String>,
    pub begins_at: Option<String>,
    pub ends_at: Option<String>,
    pub opening: Option<String>,
    pub entries_open_at: Option<String>,
}

impl VoucherPatch {
    /// The draft this edit makes of `current`: its own fields where it names them, the stored
    /// ones elsewhere. A time named to the second that is the stored one cut to the second keeps
    /// the stored one (a form shows times to the second).
    pub fn over(&self, current: &Voucher) -> VoucherDraft {
        let keep = |asked: &Option<String>, stored: String| asked.clone().unwrap_or(stored);
        let time = |asked: &Option<String>, stored: DateTime<Utc>| {
            let stored_text = stored.to_rfc3339_opts(SecondsFormat::AutoSi, true);
            match asked {
                Some(a) if same_second(a, stored) => stored_text,
                Some(a) => a.clone(),
                None => stored_text,
            }
        };
        let opening = keep(&self.opening, current.opening.kind().as_str().to_owned());
        // A sale made first come keeps no entries opening it did not name.
        let first_come = crate::OpeningKind::parse(&opening) == Some(crate::OpeningKind::FirstCome);
        let entries = match (&self.entries_open_at, current.opening.entries_open_at()) {
            (None, _) if first_come => String::new(),
            (asked, Some(at)) => time(asked, at),
            (asked, None) => asked.clone().unwrap_or_default(),
        };
        VoucherDraft {
            title: keep(&self.title, current.title.clone()),
            description: keep(&self.description, current.description.clone()),
            price_cents: keep(&self.price_cents, current.price_cents.to_string()),
            stock: keep(&self.stock, current.total_stock().to_string()),
            begins_at: time(&self.begins_at, current.window.begins_at()),
            ends_at: time(&self.ends_at, current.window.ends_at()),
            opening,
            entries_open_at: entries,
        }
    }
}

/// A whole draft as an edit: every field named (a form sends them all).
impl From<VoucherDraft> for VoucherPatch {
    fn from(d: VoucherDraft) -> Self {
        Self {
            title: Some(d.title),
            description: Some(d.description),
            price_cents: Some(d.price_cents),
            stock: Some(d.stock),
            begins_at: Some(d.begins_at),
            ends_at: Some(d.ends_at),
            opening: Some(d.opening),
            entries_open_at: Some(d.entries_open_at),
        }
    }
}

fn same_second(asked: &str, stored: DateTime<Utc>) -> bool {
    DateTime::parse_from_rfc3339(asked.trim())
        .is_ok_and(|a| a.timestamp() == stored.timestamp() && a.timestamp_subsec_nanos() == 0)
}

/// Why a sale can no longer be edited, whatever the edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EditRefusal {
    #[error("the sale has started: it can no longer be edited")]
    Started,
    #[error("the draw's entries are open: the sale can no longer be edited")]
    EntriesOpen,
    #[error("the sale has ended: it can no longer be edited")]
    Ended,
}

/// Why an edit was not applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditProblem {
    #[error(transparent)]
    Refused(#[from] EditRefusal),
    #[error(transparent)]
    Invalid(#[from] FieldErrors),
}

/// Whether `current` is still open to edits at `now`.
pub fn editable(current: &Voucher, now: DateTime<Utc>) -> Result<(), EditRefusal> {
    if now >= current.window.ends_at() {
        return Err(EditRefusal::Ended);
    }
    if now >= current.window.begins_at() {
        return Err(EditRefusal::Started);
    }
    match current.opening.entries_open_at() {
        Some(at) if now >= at => Err(EditRefusal::EntriesOpen),
        _ => Ok(()),
    }
}

/// Whether `current` may become `next` at `now`: it is still open to edits, and a draw keeps
/// its published commitment.
pub fn check_edit(
    current: &Voucher,
    next: &NewVoucher,
    now: DateTime<Utc>,
) -> Result<(), EditProblem> {
    editable(current, now)?;
    let mut errors = FieldErrors::default();
    if current.opening.is_draw() {
        if !next.opening.is_draw() {
            errors.push(
                "opening",
                "cannot change: the draw's commitment is published (end the sale instead)",
            );
        }
        if next.window.begins_at() != current.window.begins_at() {
            errors.push(
                "begins_at",
                "cannot change for a draw: it names the beacon round of the published commitment",
            );
        }
    }
    match errors.is_empty() {
        true => Ok(()),
        false => Err(errors.into()),
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};

    use super::*;
    use crate::{Opening, SaleWindow, VoucherId};

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 28, 12, 0, 0)
            .single()
            .expect("time")
    }

    fn stored(opening: Opening) -> Voucher {
        let begins = now() + Duration::hours(2) + Duration::milliseconds(250);
        Voucher {
            id: VoucherId::try_from(7).expect("id"),
            title: "Tea".into(),
            description: "Green".into(),
            price_cents: 990,
            initial_stock: 10,
            added_stock: 5,
            db_stock: 15,
            window: SaleWindow::new(begins, begins + Duration::hours(1)).expect("window"),
            opening,
            created_at: now() - Duration::days(1),
        }
    }

    fn draw() -> Opening {
        Opening::Draw {
            entries_open_at: now() + Duration::hours(1),
        }
    }

    fn next(current: &Voucher, patch: &VoucherPatch) -> Result<NewVoucher, EditProblem> {
        let next = NewVoucher::parse(&patch.over(current), now())?;
        check_edit(current, &next, now()).map(|()| next)
    }

    #[test]
    fn what_a_patch_does_not_name_stays_as_stored() {
        let current = stored(Opening::FirstCome);
        let patch = VoucherPatch {
            title: Some("Oolong".into()),
            ..VoucherPatch::default()
        };
        let next = next(&current, &patch).expect("valid");
        assert_eq!(
            (next.title.as_str(), next.description.as_str()),
            ("Oolong", "Green")
        );
        assert_eq!(
            (next.price_cents, next.stock.get()),
            (990, 15),
            "the units offered"
        );
        assert_eq!(next.window, current.window, "to the millisecond");
        assert_eq!(next.opening, Opening::FirstCome);
    }

    #[test]
    fn a_time_named_to_the_second_of_the_stored_one_keeps_it() {
        let current = stored(draw());
        let shown = current
            .window
            .begins_at()
            .to_rfc3339_opts(SecondsFormat::Secs, true);
        let patch = VoucherPatch {
            begins_at: Some(shown),
            ..VoucherPatch::default()
        };
        let next = next(&current, &patch).expect("a draw's start, as a form shows it");
        assert_eq!(next.window.begins_at(), current.window.begins_at());
    }

    #[test]
    fn a_sale_is_edited_only_before_it_opens() {
        let first_come = stored(Opening::FirstCome);
        let begins = first_come.window.begins_at();
        assert_eq!(editable(&first_come, begins - Duration::seconds(1)), Ok(()));
        assert_eq!(editable(&first_come, begins), Err(EditRefusal::Started));
        assert_eq!(
            editable(&first_come, first_come.window.ends_at()),
            Err(EditRefusal::Ended)
        );
        let draw = stored(draw());
        assert_eq!(
            editable(&draw, now() + Duration::hours(1)),
            Err(EditRefusal::EntriesOpen)
        );
        assert_eq!(editable(&draw, now()), Ok(()));
    }

    #[test]
    fn a_draw_keeps_its_opening_and_start_and_a_first_come_sale_may_become_one() {
        let current = stored(draw());
        let later = (current.window.begins_at() + Duration::minutes(5)).to_rfc3339();
        for (patch, field) in [
            (
                VoucherPatch {
                    begins_at: Some(later),
                    ..VoucherPatch::default()
                },
                "begins_at",
            ),
            (
                VoucherPatch {
                    opening: Some("first_come".into()),
                    ..VoucherPatch::default()
                },
                "opening",
            ),
        ] {
            match next(&current, &patch) {
                Err(EditProblem::Invalid(e)) => {
                    assert!(e.0.iter().any(|f| f.field == field), "{e}")
                }
                other => panic!("{field}: {other:?}"),
            }
        }
        let patch = VoucherPatch {
            opening: Some("draw".into()),
            ..VoucherPatch::default()
        };
        let made = next(&stored(Opening::FirstCome), &patch).expect("becomes a draw");
        assert!(made.opening.is_draw());
    }
}
