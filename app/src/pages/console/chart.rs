//! The chosen voucher's sales over time, drawn as SVG: bars of orders per bucket and the running
//! total as a line. The geometry is pure, so it is tested without a browser.

use leptos::prelude::*;

use crate::{
    time::When,
    wire::{ChartView, SalesSeriesView},
};

#[component]
pub fn SalesPanel(chart: ChartView) -> impl IntoView {
    let t = crate::words::t();
    view! {
        <section class="panel chart-panel" data-testid="sales-chart" data-voucher=chart.voucher_id.get()>
            <h2>{t.chart_title()} {chart.title}</h2>
            {match chart.series {
                Some(s) => view! { <SalesChart series=s/> }.into_any(),
                None => view! { <p class="empty" data-testid="no-sales">{t.chart_empty()}</p> }.into_any(),
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
pub fn bucket_words(t: crate::words::Texts, secs: i64) -> String {
    match secs {
        s if s % domain::SECS_PER_DAY == 0 => {
            crate::words::fill(t.unit_days(), &[&(s / domain::SECS_PER_DAY)])
        }
        s if s % 3_600 == 0 => crate::words::fill(t.unit_hours(), &[&(s / 3_600)]),
        s if s % 60 == 0 => crate::words::fill(t.unit_minutes(), &[&(s / 60)]),
        s => crate::words::fill(t.unit_seconds(), &[&s]),
    }
}

#[component]
fn SalesChart(series: SalesSeriesView) -> impl IntoView {
    let t = crate::words::t();
    let g = geometry(&series.counts);
    let per = bucket_words(t, series.bucket_secs);
    let end =
        series.start + chrono::Duration::seconds(series.bucket_secs * series.counts.len() as i64);
    let bottom = HEIGHT - BOTTOM;
    let summary = crate::words::fill(
        t.chart_summary(),
        &[
            &domain::grouped(g.total),
            &domain::grouped(g.peak),
            &per,
            &domain::grouped(series.counts.len() as i64),
        ],
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
                    <title>{if b.count == 1 { t.chart_one_order().to_owned() } else { crate::words::fill(t.chart_orders(), &[&domain::grouped(b.count)]) }}</title>
                </rect>
            }).collect_view()}
            <polyline class="total-line" data-testid="chart-total" points=g.total_line fill="none"/>
        </svg>
        <div class="chart-legend">
            <span><When at=series.start/></span>
            <span><span class="key key-bar"></span>{crate::words::fill(t.chart_legend_bars(), &[&per])}
                <span class="key key-line"></span>{t.chart_legend_line()}</span>
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
        let t = i18n::Lang::En.texts();
        assert_eq!(bucket_words(t, 1), "1 s");
        assert_eq!(bucket_words(t, 300), "5 min");
        assert_eq!(bucket_words(t, 7_200), "2 h");
        assert_eq!(bucket_words(t, 86_400), "1 d");
        assert_eq!(bucket_words(i18n::Lang::ZhCn.texts(), 300), "5分钟");
    }
}
