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
    components::ErrorNote,
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
    let key = asked.clone();
    let data = Resource::new(
        move || key.clone(),
        |asked| {
            console(
                asked.chart.map(VoucherId::get),
                asked.q.clone(),
                asked.status,
                asked.cursor,
                asked.focus().map(VoucherId::get),
            )
        },
    );
    let manage_id = asked.manage;
    let managed = Resource::new(
        move || manage_id,
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
        <FindSales asked=asked.clone()/>
        <Suspense fallback=move || view! { <p class="loading">{t.console_loading()}</p> }>
            {move || Suspend::new({
                let asked = asked.clone();
                async move {
                // Outside the refreshing table, so a confirmation or a typed number stays put.
                let manage = managed.await.zip(asked.manage).map(|(voucher, id)| {
                    view! { <ManageSale id voucher done=asked.done/> }
                });
                let first = data.await;
                view! {
                    {manage}
                    <Figures asked first/>
                }
            }})}
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
    let at = first.as_ref().ok().and_then(|c| c.at);
    let data = RwSignal::new(first);
    let chart = asked.chart.map(VoucherId::get);
    let (q, status) = (asked.q.clone(), asked.status);
    let searching = q.is_some() || status.is_some();
    let busy = StoredValue::new(false);
    every(REFRESH, move || {
        if busy.get_value() {
            return;
        }
        busy.set_value(true);
        let q = q.clone();
        leptos::task::spawn_local(async move {
            if let Ok(c) = console(chart, q, status, at, None).await {
                data.try_set(Ok(c));
            }
            busy.set_value(false);
        });
    });
    move || {
        match data.get() {
        Ok(c) if c.rows.is_empty() => view! {
            <p class="empty" data-testid="no-vouchers">
                {if searching { t.console_found_none() } else { t.console_empty() }}
            </p>
            {c.at.is_some().then(|| view! {
                <nav class="pager" aria-label=t.console_pages_label()>
                    <a class="button" href=asked.at(None).href() data-testid="page-newest">{t.console_newest()}</a>
                </nav>
            })}
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
                <CountsTable rows=c.rows chosen fresh asked=asked.at(c.at)/>
                {(c.at.is_some() || c.next.is_some()).then(|| view! {
                    <nav class="pager" aria-label=t.console_pages_label()>
                        {c.at.is_some().then(|| view! {
                            <a class="button" rel="prev" href=asked.at(None).href() data-testid="page-newest">{t.console_newest()}</a>
                        })}
                        {c.next.map(|next| view! {
                            <a class="button" rel="next" href=asked.at(Some(next)).href() data-testid="page-older">{t.console_older()}</a>
                        })}
                    </nav>
                })}
                {c.chart.map(|chart| view! { <SalesPanel chart/> })}
            }
            .into_any()
        }
        Err(e) => view! { <ErrorNote error=e/> }.into_any(),
    }
    }
}

/// The console's search: a plain GET form (the same with JavaScript or without), its values
/// those of the page shown.
#[component]
fn FindSales(asked: ConsoleQuery) -> impl IntoView {
    let t = crate::words::t();
    let option = |stage: domain::SaleStage, status: domain::VoucherStatus| {
        view! {
            <option value=stage.as_str() selected=asked.status == Some(stage)>
                {crate::words::voucher_status(t, status)}
            </option>
        }
    };
    view! {
        <form method="get" action="/admin" class="filters" role="search" data-testid="find-sales">
            <label for="find-q">{t.console_find_title()}</label>
            <input id="find-q" name="q" type="search" value=asked.q.clone() data-testid="find-q"/>
            <label for="find-status">{t.console_find_status()}</label>
            <select id="find-status" name="status" data-testid="find-status">
                <option value="" selected=asked.status.is_none()>{t.console_find_any()}</option>
                {option(domain::SaleStage::Upcoming, domain::VoucherStatus::Upcoming)}
                {option(domain::SaleStage::OnSale, domain::VoucherStatus::OnSale)}
                {option(domain::SaleStage::Ended, domain::VoucherStatus::Ended)}
            </select>
            <button type="submit" class="button" data-testid="find">{t.console_find()}</button>
        </form>
    }
}

#[component]
fn CountsTable(
    rows: Vec<ConsoleRow>,
    chosen: Option<VoucherId>,
    fresh: Option<VoucherId>,
    /// The rows' search and page, kept by their chart links.
    asked: ConsoleQuery,
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
                        <th scope="col" class="num">{t.col_reminders()}</th>
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
                                <td class="num" data-label=t.col_reminders() data-testid="count-reminders">
                                    {format!("{} · {} · {}", r.reminders.asked, r.reminders.sent, r.reminders.failed)}
                                </td>
                                <td class="chart-cell">
                                    <a href=asked.charting(id).href() data-testid="show-chart"
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
