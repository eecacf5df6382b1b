//! The draw bench's figures and their report: per opening, the bots' shares, the arrival
//! order's correlation with winning and the times to every winner; then the entry rate, the
//! flushed draw and the crash.

use std::time::Duration;

use super::{
    stats::{rank_correlation, refusals, Shares},
    Member, Outcome,
};
use crate::{report::Report, Options};

pub(super) struct Figures<'a> {
    pub members: &'a [Member],
    pub first: &'a Outcome,
    pub draw: &'a Outcome,
    /// Entries per second, every member at once.
    pub entries_per_s: f64,
    /// `GET /api/live` per second on the same connections.
    pub live: f64,
    /// What the draw did after Redis lost its sale.
    pub flushed: String,
    /// What the draw did after a kill -9 mid-draw.
    pub crash: String,
}

impl Figures<'_> {
    pub fn report(self, options: &Options, verdict: String) -> Report {
        let mut rows = Vec::new();
        let mut json = serde_json::Map::new();
        for (name, o) in [("first come", self.first), ("draw", self.draw)] {
            let (opening_rows, opening_json) = opening(name, self.members, o);
            rows.extend(opening_rows);
            json.insert(name.replace(' ', "_"), opening_json);
        }
        let (closed, failed) = refusals(&self.draw.arrivals);
        let entered = self.draw.arrivals.iter().filter(|a| a.took_part).count();
        let crowd = self.members.len();
        let (entries_per_s, live) = (self.entries_per_s, self.live);
        rows.push((
            "draw: entered / too late (entries_closed) / failed".into(),
            format!("{entered} / {closed} / {failed} of {crowd}"),
        ));
        rows.push((
            "entries/s (all at once) / GET /api/live req/s".into(),
            format!(
                "{entries_per_s:.0} / {live:.0} ({:.2}x)",
                entries_per_s / live
            ),
        ));
        rows.push((
            "draw: Redis flushed between the entries and the draw".into(),
            self.flushed.clone(),
        ));
        rows.push(("kill -9 mid-draw".into(), self.crash.clone()));
        json.insert("flushed".into(), self.flushed.into());
        json.insert("entries_per_s".into(), entries_per_s.into());
        json.insert("crash".into(), self.crash.into());
        json.insert("live_per_s".into(), live.into());
        Report {
            name: if options.quick { "draw-quick" } else { "draw" },
            title: format!(
                "Draw vs first come{}",
                if options.quick { " (quick)" } else { "" }
            ),
            rows,
            notes: vec![verdict],
            json: serde_json::Value::Object(json),
        }
    }
}

/// One opening's rows and JSON.
fn opening(
    name: &str,
    members: &[Member],
    o: &Outcome,
) -> (Vec<(String, String)>, serde_json::Value) {
    let s = Shares::of(members, &o.arrivals);
    let r = rank_correlation(&o.arrivals);
    let rows = vec![
        (
            format!("{name}: bots' share of those taking part / of the winners"),
            format!(
                "{:.1} % of {} / {:.1} % (± {:.1} % at 2σ)",
                s.bots_taking_part * 100.0,
                s.taking_part,
                s.bots_winning * 100.0,
                2.0 * s.sigma * 100.0
            ),
        ),
        (
            format!("{name}: rank correlation, arrival order × winning"),
            format!("{r:+.3}"),
        ),
        (
            format!("{name}: winners admitted / written after the opening"),
            format!(
                "{} / {} ({winners} winners)",
                fmt(o.admitted_after),
                fmt(o.written_after),
                winners = s.winners
            ),
        ),
    ];
    let json = serde_json::json!({
        "taking_part": s.taking_part, "bots_share_taking_part": s.bots_taking_part,
        "bots_share_winners": s.bots_winning, "winners": s.winners,
        "rank_correlation": r, "admitted_after_ms": o.admitted_after.as_millis(),
        "written_after_ms": o.written_after.as_millis(), "two_sigma": 2.0 * s.sigma,
    });
    (rows, json)
}

fn fmt(d: Duration) -> String {
    format!("{} ms", d.as_millis())
}
