//! `/admin`: the admin console. Every voucher with where its units are (stock left in Redis,
//! queued, written, refused, dead-lettered), refreshed every two seconds, and the chosen
//! voucher's sales over time drawn as SVG (`chart.rs`); the manage panel ends a sale or adds
//! stock (`manage.rs`). What the page shows is said by its query, a [`ConsoleQuery`].

mod chart;
mod manage;

use std::time::Duration;

use domain::VoucherId;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use self::{chart::SalesPanel, manage::ManageSale};
use crate::{
    api::{admin::console, catalog::get_voucher},
    components::{ErrorNote, Pager},
    error::AppError,
    pages::home::StatusBadge,
    session::AdminOnly,
    time::{every, When},
    url::ConsoleQuery,
    wire::{ConsoleRow, ConsoleView},
};

/// How often the console refreshes.
const REFRESH: Duration = Duration::from_secs(2);

#[component]
pub fn ConsolePage() -> impl IntoView {
    view! { <AdminOnly><Console/></AdminOnly> }
}

/// The console as the server renders it, from its query: the manage panel (when asked for)
/// and the figures, both islands.
#[component]
fn Console() -> impl IntoView {
    let t = crate::words::t();
    let query = use_query_map();
    let asked = ConsoleQuery::parse(|k| query.read_untracked().get(k));
    let data = Resource::new(
        move || asked,
        |asked| {
            console(
                asked.chart.map(VoucherId::get),
                asked.page,
                asked.focus().map(VoucherId::get),
            )
        },
    );
    let managed = Resource::new(
        move || asked.manage,
        |id| async move {
            match id {
                Some(id) => Some(get_voucher(id.get()).await),
                None => None,
            }
        },
    );
    view! {
        <leptos_meta::Title text=t.console_title()/>
        <div class="console-head">
            <h1>{t.console_title()}</h1>
            <a class="button" href="/admin/payments" data-testid="payments-link">{t.console_payments()}</a>
            <a class="button" href="/admin/actions" data-testid="actions-link">{t.actions_link()}</a>
            <a class="button primary" href="/admin/vouchers/new" data-testid="new-voucher">{t.console_new()}</a>
        </div>
        <Suspense fallback=move || view! { <p class="loading">{t.console_loading()}</p> }>
            {move || Suspend::new(async move {
                // Outside the refreshing table, so a confirmation or a typed number stays put.
                let manage = managed.await.zip(asked.manage).map(|(voucher, id)| {
                    view! { <ManageSale id voucher done=asked.done/> }
                });
                let first = data.await;
                view! {
                    {manage}
                    <Figures asked first/>
                }
            })}
        </Suspense>
    }
}

/// The figures, refreshed every two seconds in the browser (the last ones stay on screen while
/// a refresh runs or when one fails): the page's island.
#[cfg_attr(island_console, island)]
#[cfg_attr(not(island_console), component)]
fn Figures(asked: ConsoleQuery, first: Result<ConsoleView, AppError>) -> impl IntoView {
    let t = crate::words::t();
    // Refreshes stay on the page first shown (which `created` or `manage` may have chosen).
    let page = first.as_ref().ok().map(|c| c.page);
    let data = RwSignal::new(first);
    let chart = asked.chart.map(VoucherId::get);
    let busy = StoredValue::new(false);
    every(REFRESH, move || {
        if busy.get_value() {
            return;
        }
        busy.set_value(true);
        leptos::task::spawn_local(async move {
            if let Ok(c) = console(chart, page, None).await {
                data.try_set(Ok(c));
            }
            busy.set_value(false);
        });
    });
    move || match data.get() {
        Ok(c) if c.rows.is_empty() => view! {
            <p class="empty" data-testid="no-vouchers">{t.console_empty()}</p>
        }
        .into_any(),
        Ok(c) => {
            let chosen = c.chart.as_ref().map(|ch| ch.voucher_id);
            let fresh = asked.created;
            let confirmed = fresh
                .and_then(|id| c.rows.iter().find(|r| r.voucher.id == id))
                .map(|r| r.voucher.clone());
            view! {
                {confirmed.map(|v| view! {
                    <p class="notice" role="status" data-testid="created-notice">
                        {crate::words::fill(t.console_created(), &[&v.title, &domain::grouped(v.stock)])}
                        <When at=v.window.begins_at()/> {t.console_created_to()} <When at=v.window.ends_at()/> " "
                        <a href=format!("/vouchers/{}", v.id) data-testid="created-link">{t.console_see_page()}</a>
                    </p>
                })}
                {c.stalled_secs.map(|secs| view! {
                    <p class="error" role="alert" data-testid="worker-stalled">
                        {crate::words::fill(t.console_stalled(), &[&secs])}
                    </p>
                })}
                <CountsTable rows=c.rows chosen fresh page=c.page/>
                <Pager
                    page=c.page
                    pages=c.pages
                    newer=rows_page(asked.chart, c.page.saturating_sub(1)).href()
                    older=rows_page(asked.chart, c.page + 1).href()
                    label=t.console_pages_label()
                    newer_text=t.console_newer()
                    older_text=t.console_older()
                />
                {c.chart.map(|chart| view! { <SalesPanel chart/> })}
            }
            .into_any()
        }
        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
    }
}

/// The console on page `page` of the rows, charting `chart`.
fn rows_page(chart: Option<VoucherId>, page: usize) -> ConsoleQuery {
    ConsoleQuery {
        chart,
        ..ConsoleQuery::default()
    }
    .on_page(page)
}

#[component]
fn CountsTable(
    rows: Vec<ConsoleRow>,
    chosen: Option<VoucherId>,
    fresh: Option<VoucherId>,
    /// The rows' page, kept by their chart links.
    page: usize,
) -> impl IntoView {
    let t = crate::words::t();
    view! {
        <div class="table-wrap" tabindex="0" role="region" aria-label=t.console_table_label()>
            <table class="counts" data-testid="console-table">
                <thead>
                    <tr>
                        <th scope="col">{t.col_voucher()}</th>
                        <th scope="col">{t.col_sale()}</th>
                        <th scope="col" class="num">{t.col_stock()}</th>
                        <th scope="col" class="num">{t.col_redis()}</th>
                        <th scope="col" class="num">{t.col_queued()}</th>
                        <th scope="col" class="num">{t.col_written()}</th>
                        <th scope="col" class="num">{t.col_awaiting()}</th>
                        <th scope="col" class="num">{t.col_paid()}</th>
                        <th scope="col" class="num">{t.col_cancelled()}</th>
                        <th scope="col" class="num">{t.col_revenue()}</th>
                        <th scope="col" class="num">{t.col_refunded()}</th>
                        <th scope="col" class="num">{t.col_flagged()}</th>
                        <th scope="col" class="num">{t.col_failed()}</th>
                        <th scope="col" class="num">{t.col_dead()}</th>
                        <th scope="col"><span class="visually-hidden">{t.col_actions()}</span></th>
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
                                <td data-label=t.col_sale()><StatusBadge status=r.voucher.status/>
                                    {r.awaiting_round.map(|round| view! {
                                        <span class="badge badge-draw" data-testid="draw-awaits">{i18n::fill(t.console_draw_awaits(), &[&round])}</span>
                                    })}
                                </td>
                                <td class="num" data-label=t.col_stock()>{domain::grouped(r.voucher.stock)}</td>
                                <td class="num" data-label=t.col_redis() data-testid="count-redis">{r.redis_stock.map_or_else(|| "–".to_owned(), |s| s.to_string())}</td>
                                <td class="num" data-label=t.col_queued() data-testid="count-queued">{r.queued}</td>
                                <td class="num" data-label=t.col_written() data-testid="count-written">{r.counts.written}</td>
                                <td class="num" data-label=t.col_awaiting() data-testid="count-awaiting">{r.counts.awaiting_payment}</td>
                                <td class="num" data-label=t.col_paid() data-testid="count-paid">{r.counts.paid}</td>
                                <td class="num" data-label=t.col_cancelled() data-testid="count-cancelled">{r.counts.cancelled}</td>
                                <td class="num" data-label=t.col_revenue() data-testid="count-revenue">{crate::money::price(r.counts.revenue_cents)}</td>
                                <td class="num" data-label=t.col_refunded() data-testid="count-refunded">{r.counts.refunded}</td>
                                <td class="num" data-label=t.col_flagged() data-testid="count-flagged"
                                    class:alert={r.counts.flagged > 0}>{r.counts.flagged}</td>
                                <td class="num" data-label=t.col_failed() data-testid="count-failed">{r.counts.failed}</td>
                                <td class="num" data-label=t.col_dead() data-testid="count-dead">{r.dead_lettered}</td>
                                <td class="chart-cell">
                                    <a href=rows_page(Some(id), page).href() data-testid="show-chart"
                                        aria-current=selected.then_some("true")>{t.console_chart()}</a>
                                    " "
                                    <a href=format!("{}#manage", ConsoleQuery::manage(id, None).href()) data-testid="manage-sale">{t.console_manage()}</a>
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}
