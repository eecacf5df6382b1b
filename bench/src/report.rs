//! Where figures go: the terminal, `target/bench/<name>.json`, and (full runs) BENCHMARKS.md.

use std::{fmt::Write as _, io::Write as _, path::PathBuf};

use anyhow::Context;
use hdrhistogram::Histogram;

/// One benchmark's results.
pub struct Report {
    pub name: &'static str,
    pub title: String,
    /// (figure, value) rows of the Markdown table.
    pub rows: Vec<(String, String)>,
    /// Free text under the table (profiles, verdicts).
    pub notes: Vec<String>,
    pub json: serde_json::Value,
}

/// The workspace root (the bench crate lives in `<root>/bench`).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// "N cores, M GiB, <cpu model>" of this machine.
pub fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0 / 1024.0);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    format!("{cores} cores, {mem_gib:.1} GiB, {cpu}")
}

/// Latency percentiles of a histogram recorded in microseconds, in milliseconds.
pub fn latency_json(h: &Histogram<u64>) -> serde_json::Value {
    serde_json::json!({
        "p50_ms": ms(h.value_at_quantile(0.50)),
        "p95_ms": ms(h.value_at_quantile(0.95)),
        "p99_ms": ms(h.value_at_quantile(0.99)),
        "max_ms": ms(h.max()),
        "count": h.len(),
    })
}

pub fn latency_row(h: &Histogram<u64>) -> String {
    format!(
        "p50 {:.2} / p95 {:.2} / p99 {:.2} / max {:.2} ms",
        ms(h.value_at_quantile(0.50)),
        ms(h.value_at_quantile(0.95)),
        ms(h.value_at_quantile(0.99)),
        ms(h.max())
    )
}

pub fn ms(micros: u64) -> f64 {
    micros as f64 / 1000.0
}

/// A latency histogram in microseconds: 1 µs to 10 minutes, 3 significant digits.
pub fn histogram() -> anyhow::Result<Histogram<u64>> {
    Ok(Histogram::new_with_bounds(1, 600_000_000, 3)?)
}

impl Report {
    /// Prints the report, writes its JSON, and appends it to BENCHMARKS.md when `record`.
    pub fn publish(&self, options: &crate::Options) -> anyhow::Result<()> {
        let date = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
        let mut md = String::new();
        let _ = writeln!(md, "\n## {} ({date})\n", self.title);
        let _ = writeln!(md, "- machine: {}", machine());
        let _ = writeln!(md, "- command: `{}`\n", options.command.trim());
        let _ = writeln!(md, "| figure | value |\n| --- | --- |");
        for (k, v) in &self.rows {
            let _ = writeln!(md, "| {k} | {v} |");
        }
        for n in &self.notes {
            let _ = writeln!(md, "\n{n}");
        }
        println!("{md}");

        let dir = root().join("target").join("bench");
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut json = self.json.clone();
        if let Some(obj) = json.as_object_mut() {
            obj.insert("date".into(), date.clone().into());
            obj.insert("machine".into(), machine().into());
            obj.insert("command".into(), options.command.trim().into());
        }
        let path = dir.join(format!("{}.json", self.name));
        std::fs::write(&path, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("writing {}", path.display()))?;
        println!("JSON: {}", path.display());

        if options.record {
            let path = root().join("BENCHMARKS.md");
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .with_context(|| format!("opening {}", path.display()))?;
            f.write_all(md.as_bytes())?;
            println!("appended to {}", path.display());
        }
        Ok(())
    }
}
