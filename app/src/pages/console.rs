//! `/admin`: the admin console. Every voucher with where its units are (stock left in Redis,
//! queued, written, refused, dead-lettered), refreshed every two seconds, and the chosen
//! voucher's sales over time drawn as SVG.

use std::time::Duration;

use domain::VoucherId;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use crate::{
    api::{
        admin::{console, AddStock, EndSale},
        catalog::get_voucher,
    },
    components::ErrorNote,
    pages::home::StatusBadge,
    session::AdminOnly,
    time::{every, When},
    wire::{format_price, ChartView, ConsoleRow, SalesSeriesView},
};

/// How often the console refreshes.
const REFRESH: Duration = Duration::from_secs(2);

#[component]
pub fn ConsolePage() -> impl IntoView {
    view! { <AdminOnly><Console/></AdminOnly> }
}

#[component]
fn Console() -> impl IntoView {
    let round = RwSignal::new(0_u64);
    every(REFRESH, move || round.update(|n| *n += 1));
    let query = use_query_map();
    let asked = move || {
        query
            .read()
            .get("chart")
            .and_then(|s| s.parse::<i64>().ok())
    };
    // `?created=<id>`: the create form sent the admin here with a voucher to confirm.
    let created = move || {
        query
            .read()
            .get("created")
            .and_then(|s| s.parse::<i64>().ok())
            .and_then(|id| VoucherId::try_from(id).ok())
    };
    // `?manage=<id>`: the sale the admin is ending or adding stock to.
    let manage = move || {
        query
            .read()
            .get("manage")
            .and_then(|s| s.parse::<i64>().ok())
    };
    // One request a round; `Transition` keeps the last figures on screen while it runs.
    let data = Resource::new(move || (asked(), round.get()), |(chart, _)| console(chart));
    view! {
        <leptos_meta::Title text="Console"/>
        <div class="console-head">
            <h1>"Console"</h1>
            <a class="button primary" href="/admin/vouchers/new" data-testid="new-voucher">"New voucher"</a>
        </div>
        // Outside the refreshing table, so a confirmation or a typed number stays put.
        {move || manage().map(|id| view! { <ManageSale id/> })}
        <Transition fallback=|| view! { <p class="loading">"Loading the vouchers…"</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(c) if c.rows.is_empty() => view! {
                        <p class="empty" data-testid="no-vouchers">"No vouchers yet. Create the first one."</p>
                    }.into_any(),
                    Ok(c) => {
                        let chosen = c.chart.as_ref().map(|ch| ch.voucher_id);
                        let fresh = created();
                        let confirmed = fresh
                            .and_then(|id| c.rows.iter().find(|r| r.voucher.id == id))
                            .map(|r| r.voucher.clone());
                        view! {
                            {confirmed.map(|v| view! {
                                <p class="notice" role="status" data-testid="created-notice">
                                    "Voucher “" {v.title.clone()} "” created: "
                                    {domain::count(v.stock, "unit", "units")} ", on sale from "
                                    <When at=v.window.begins_at()/> " to " <When at=v.window.ends_at()/> ". "
                                    <a href=format!("/vouchers/{}", v.id) data-testid="created-link">"See its page"</a>
                                </p>
                            })}
                            {c.stalled_secs.map(|secs| view! {
                                <p class="error" role="alert" data-testid="worker-stalled">
                                    {format!("Orders are not being written: the oldest queued order has waited {secs} s. Check PostgreSQL, Redis and the servers' logs.")}
                                </p>
                            })}
                            <CountsTable rows=c.rows chosen fresh/>
                            {c.chart.map(|chart| view! { <SalesPanel chart/> })}
                        }.into_any()
                    }
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn CountsTable(
    rows: Vec<ConsoleRow>,
    chosen: Option<VoucherId>,
    fresh: Option<VoucherId>,
) -> impl IntoView {
    view! {
        <div class="table-wrap" tabindex="0" role="region" aria-label="Vouchers and their counts">
            <table class="counts" data-testid="console-table">
                <thead>
                    <tr>
                        <th scope="col">"Voucher"</th>
                        <th scope="col">"Sale"</th>
                        <th scope="col" class="num">"Stock"</th>
                        <th scope="col" class="num">"Left in Redis"</th>
                        <th scope="col" class="num">"Queued"</th>
                        <th scope="col" class="num">"Written"</th>
                        <th scope="col" class="num">"Awaiting payment"</th>
                        <th scope="col" class="num">"Paid"</th>
                        <th scope="col" class="num">"Cancelled, returned"</th>
                        <th scope="col" class="num">"Revenue"</th>
                        <th scope="col" class="num">"Failed"</th>
                        <th scope="col" class="num">"Dead letters"</th>
                        <th scope="col"><span class="visually-hidden">"Actions"</span></th>
                    </tr>
                </thead>
                <tbody>
                    {rows.into_iter().map(|r| {
                        let id = r.voucher.id;
                        let selected = chosen == Some(id);
                        view! {
                            <tr data-testid="console-row" data-voucher=id.get() class:selected=selected
                                class:created=fresh == Some(id) data-created=(fresh == Some(id)).then_some("true")>
                                <th scope="row"><a href=format!("/vouchers/{id}")>{r.voucher.title.clone()}</a></th>
                                <td data-label="Sale"><StatusBadge status=r.voucher.status/></td>
                                <td class="num" data-label="Stock">{domain::grouped(r.voucher.stock)}</td>
                                <td class="num" data-label="Left in Redis" data-testid="count-redis">{r.redis_stock.map_or_else(|| "–".to_owned(), |s| s.to_string())}</td>
                                <td class="num" data-label="Queued" data-testid="count-queued">{r.queued}</td>
                                <td class="num" data-label="Written" data-testid="count-written">{r.written}</td>
                                <td class="num" data-label="Awaiting payment" data-testid="count-awaiting">{r.awaiting_payment}</td>
                                <td class="num" data-label="Paid" data-testid="count-paid">{r.paid}</td>
                                <td class="num" data-label="Cancelled, returned" data-testid="count-cancelled">{r.cancelled}</td>
                                <td class="num" data-label="Revenue" data-testid="count-revenue">{format_price(r.revenue_cents)}</td>
                                <td class="num" data-label="Failed" data-testid="count-failed">{r.failed}</td>
                                <td class="num" data-label="Dead letters" data-testid="count-dead">{r.dead_lettered}</td>
                                <td class="chart-cell">
                                    <a href=format!("/admin?chart={id}") data-testid="show-chart"
                                        aria-current=selected.then_some("true")>"Chart"</a>
                                    " "
                                    <a href=format!("/admin?manage={id}#manage") data-testid="manage-sale">"End sale or add stock"</a>
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// End a sale now, or add stock to it: each behind a disclosure that asks for confirmation
/// (plain forms without JavaScript; the server sends them back here).
#[component]
fn ManageSale(id: i64) -> impl IntoView {
    let voucher = Resource::new(move || id, get_voucher);
    let end = ServerAction::<EndSale>::new();
    let add = ServerAction::<AddStock>::new();
    let query = use_query_map();
    let done = move || query.read().get("done");
    Effect::new(move |_| {
        if matches!(end.value().get(), Some(Ok(_))) || matches!(add.value().get(), Some(Ok(_))) {
            voucher.refetch();
        }
    });
    let notice = move || {
        let ended = matches!(end.value().get(), Some(Ok(()))) || done().as_deref() == Some("ended");
        let added = matches!(add.value().get(), Some(Ok(_))) || done().as_deref() == Some("added");
        if ended {
            Some("The sale has ended: shoppers can no longer buy.")
        } else if added {
            Some("Stock added: the new units are on sale now.")
        } else {
            None
        }
    };
    let error = move || match (end.value().get(), add.value().get()) {
        (Some(Err(e)), _) | (_, Some(Err(e))) => Some(e),
        _ => None,
    };
    view! {
        <section class="panel manage" id="manage" data-testid="manage" data-voucher=id>
            <Suspense fallback=|| view! { <p class="loading">"Loading the sale…"</p> }>
                {move || Suspend::new(async move {
                    match voucher.await {
                        Ok(d) => {
                            let v = d.voucher;
                            let ended = v.status == domain::VoucherStatus::Ended;
                            // One key per sale and offered total: a resent form adds nothing
                            // more; after an addition the total, and so the key, changes.
                            let key = format!("console-{}-{}", v.id, v.stock);
                            view! {
                                <h2>"Manage “" {v.title.clone()} "”"</h2>
                                <p>
                                    <StatusBadge status=v.status/> " "
                                    {domain::count(v.remaining, "unit", "units")} " left of "
                                    {domain::grouped(v.stock)} "; ends " <When at=v.window.ends_at()/> "."
                                </p>
                                {(!ended).then(|| view! {
                                    <details data-testid="end-sale">
                                        <summary>"End sale"</summary>
                                        <p>"Shoppers can no longer buy from the moment you confirm. Orders already taken stay."</p>
                                        <ActionForm action=end>
                                            <input type="hidden" name="voucher_id" value=id/>
                                            <button type="submit" class="danger" data-testid="confirm-end" disabled=move || end.pending().get()>
                                                "End the sale now"
                                            </button>
                                        </ActionForm>
                                    </details>
                                    <details data-testid="add-stock">
                                        <summary>"Add stock"</summary>
                                        <ActionForm action=add>
                                            <input type="hidden" name="voucher_id" value=id/>
                                            <input type="hidden" name="key" value=key/>
                                            <label for="add-units">"Units to add"</label>
                                            <input id="add-units" name="add" type="number" min="1" step="1" required data-testid="add-units"/>
                                            <button type="submit" class="primary" data-testid="confirm-add" disabled=move || add.pending().get()>
                                                "Add to the sale"
                                            </button>
                                        </ActionForm>
                                    </details>
                                })}
                            }.into_any()
                        }
                        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                    }
                })}
            </Suspense>
            <div aria-live="polite">
                {move || notice().map(|n| view! { <p class="notice" role="status" data-testid="manage-notice">{n}</p> })}
                {move || error().map(|e| {
                    let code = e.code();
                    view! { <div data-testid="manage-error" data-code=code><ErrorNote error=e/></div> }
                })}
            </div>
        </section>
    }
}

#[component]
fn SalesPanel(chart: ChartView) -> impl IntoView {
    view! {
        <section class="panel chart-panel" data-testid="sales-chart" data-voucher=chart.voucher_id.get()>
            <h2>"Sales over time: " {chart.title}</h2>
            {match chart.series {
                Some(s) => view! { <SalesChart series=s/> }.into_any(),
                None => view! { <p class="empty" data-testid="no-sales">"No orders written yet."</p> }.into_any(),
            }}
        </section>
    }
}

/// The chart's drawing area in SVG units.
const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 240.0;
const LEFT: f64 = 44.0;
const RIGHT: f64 = 52.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 28.0;

/// One bar of the chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    pub count: i64,
}

/// The chart's geometry: bars of orders per bucket (left scale) and the running total as a
/// line (right scale).
#[derive(Debug, Clone, PartialEq)]
pub struct Geometry {
    pub bars: Vec<Bar>,
    /// `points` of the running-total polyline.
    pub total_line: String,
    pub peak: i64,
    pub total: i64,
}

/// Lays out `counts` in the drawing area. Pure, so it is tested without a browser.
pub fn geometry(counts: &[i64]) -> Geometry {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let peak = counts.iter().copied().max().unwrap_or(0).max(1);
    let total: i64 = counts.iter().sum();
    let slot = plot_w / counts.len().max(1) as f64;
    let bottom = TOP + plot_h;
    let bars = counts
        .iter()
        .enumerate()
        .map(|(i, &count)| {
            let height = plot_h * count.max(0) as f64 / peak as f64;
            Bar {
                x: LEFT + slot * i as f64 + slot * 0.1,
                y: bottom - height,
                width: slot * 0.8,
                height,
                count,
            }
        })
        .collect();
    let mut running = 0;
    let mut points = vec![format!("{LEFT:.1},{bottom:.1}")];
    for (i, &count) in counts.iter().enumerate() {
        running += count.max(0);
        let x = LEFT + slot * (i + 1) as f64;
        let y = bottom - plot_h * running as f64 / total.max(1) as f64;
        points.push(format!("{x:.1},{y:.1}"));
    }
    Geometry {
        bars,
        total_line: points.join(" "),
        peak: counts.iter().copied().max().unwrap_or(0),
        total,
    }
}

/// "1 s", "5 min", "1 h", "1 d".
pub fn bucket_words(secs: i64) -> String {
    match secs {
        s if s % 86_400 == 0 => format!("{} d", s / 86_400),
        s if s % 3_600 == 0 => format!("{} h", s / 3_600),
        s if s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

#[component]
fn SalesChart(series: SalesSeriesView) -> impl IntoView {
    let g = geometry(&series.counts);
    let per = bucket_words(series.bucket_secs);
    let end =
        series.start + chrono::Duration::seconds(series.bucket_secs * series.counts.len() as i64);
    let bottom = HEIGHT - BOTTOM;
    let summary = format!(
        "{} written, at most {} per {per}, in {}",
        domain::count(g.total, "order", "orders"),
        domain::grouped(g.peak),
        domain::count(series.counts.len() as i64, "interval", "intervals"),
    );
    view! {
        <p class="chart-summary" data-testid="chart-summary" data-total=g.total>{summary.clone()}</p>
        <svg class="chart" viewBox=format!("0 0 {WIDTH} {HEIGHT}") role="img" aria-label=summary
           >
            <line class="axis" x1=LEFT y1=bottom x2=WIDTH - RIGHT y2=bottom/>
            <line class="axis" x1=LEFT y1=TOP x2=LEFT y2=bottom/>
            <text class="tick" x=LEFT - 6.0 y=TOP + 10.0 text-anchor="end">{g.peak}</text>
            <text class="tick" x=LEFT - 6.0 y=bottom text-anchor="end">"0"</text>
            <text class="tick total" x=WIDTH - RIGHT + 6.0 y=TOP + 10.0>{g.total}</text>
            {g.bars.into_iter().map(|b| view! {
                <rect class="bar" data-testid="chart-bar" data-count=b.count
                    x=format!("{:.1}", b.x) y=format!("{:.1}", b.y)
                    width=format!("{:.1}", b.width) height=format!("{:.1}", b.height)>
                    <title>{domain::count(b.count, "order", "orders")}</title>
                </rect>
            }).collect_view()}
            <polyline class="total-line" data-testid="chart-total" points=g.total_line fill="none"/>
        </svg>
        <div class="chart-legend">
            <span><When at=series.start/></span>
            <span><span class="key key-bar"></span>" orders per " {per.clone()} " (left) "
                <span class="key key-line"></span>" running total (right)"</span>
            <span><When at=end/></span>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_are_as_tall_as_their_share_of_the_peak() {
        let g = geometry(&[0, 5, 10]);
        assert_eq!(g.bars.len(), 3);
        assert_eq!(g.peak, 10);
        assert_eq!(g.total, 15);
        let plot_h = HEIGHT - TOP - BOTTOM;
        assert_eq!(g.bars[0].height, 0.0);
        assert!((g.bars[1].height - plot_h / 2.0).abs() < 1e-9);
        assert!((g.bars[2].height - plot_h).abs() < 1e-9);
        for b in &g.bars {
            assert!(b.y >= TOP && b.y + b.height <= HEIGHT - BOTTOM + 1e-9);
            assert!(b.x >= LEFT && b.x + b.width <= WIDTH - RIGHT + 1e-9);
        }
    }

    #[test]
    fn the_running_total_climbs_to_the_top() {
        let g = geometry(&[2, 0, 2]);
        let ys: Vec<f64> = g
            .total_line
            .split(' ')
            .map(|p| p.split(',').nth(1).and_then(|y| y.parse().ok()).expect("y"))
            .collect();
        assert_eq!(ys.len(), 4);
        assert!(
            ys.windows(2).all(|w| w[1] <= w[0]),
            "never goes down: {ys:?}"
        );
        assert!((ys[3] - TOP).abs() < 0.1, "ends at the top: {ys:?}");
    }

    #[test]
    fn an_empty_series_draws_nothing_and_does_not_divide_by_zero() {
        let g = geometry(&[]);
        assert!(g.bars.is_empty());
        assert_eq!((g.peak, g.total), (0, 0));
    }

    #[test]
    fn bucket_widths_read_as_words() {
        assert_eq!(bucket_words(1), "1 s");
        assert_eq!(bucket_words(300), "5 min");
        assert_eq!(bucket_words(7_200), "2 h");
        assert_eq!(bucket_words(86_400), "1 d");
    }
}
