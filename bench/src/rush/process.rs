//! The processes around a rush: the release server as a child, and `perf` on it.

use std::{
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::Duration,
};

use anyhow::{bail, Context};
use tokio::time::Instant;

use crate::report;

/// The release server as a child process.
pub struct Server {
    child: Child,
    pub base: String,
    /// Where its `/metrics` is served (a listener of its own).
    pub metrics: String,
}

impl Server {
    /// Starts the server on a free port.
    pub async fn start(env: &[(String, String)]) -> anyhow::Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        Self::start_on(env, port).await
    }

    /// Starts the server on `port` (a restart after [`Server::kill9`] keeps its port and its
    /// queue consumer name, as a restarted instance would).
    pub async fn start_on(env: &[(String, String)], port: u16) -> anyhow::Result<Self> {
        let bin = std::env::var("SECKILL_SERVER_BIN").map_or_else(
            |_| {
                let target = std::env::var("CARGO_TARGET_DIR")
                    .map_or_else(|_| report::root().join("target"), PathBuf::from);
                target.join("release").join("server")
            },
            PathBuf::from,
        );
        let addr = format!("127.0.0.1:{port}");
        let metrics = format!(
            "127.0.0.1:{}",
            std::net::TcpListener::bind("127.0.0.1:0")?
                .local_addr()?
                .port()
        );
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(report::root().join("target").join("bench-server.log"))
            .context("server log")?;
        let child = Command::new(&bin)
            .arg("serve")
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env("LEPTOS_SITE_ADDR", &addr)
            .env("SECKILL_METRICS_ADDR", &metrics)
            .env("SECKILL_INSTANCE_ID", format!("bench-{port}"))
            // `SECKILL_BENCH_SERVER_LOG=info` to see what the server did (target/bench-server.log).
            .env(
                "RUST_LOG",
                std::env::var("SECKILL_BENCH_SERVER_LOG").unwrap_or_else(|_| "warn".into()),
            )
            .stdout(log.try_clone().context("server log")?)
            .stderr(log)
            .spawn()
            .with_context(|| {
                format!(
                    "starting {} (build it with scripts/build.sh --release)",
                    bin.display()
                )
            })?;
        let server = Self {
            child,
            base: format!("http://{addr}"),
            metrics: format!("http://{metrics}"),
        };
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(r) = client
                .get(format!("{}/api/health", server.base))
                .send()
                .await
            {
                if r.status().is_success() {
                    return Ok(server);
                }
            }
            if Instant::now() >= deadline {
                bail!("the server did not become healthy; see target/bench-server.log");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Peak resident set (VmHWM) so far, in MB.
    pub fn peak_rss_mb(&self) -> f64 {
        self.status_mb("VmHWM:")
    }

    /// Resident set (VmRSS) now, in MB.
    pub fn rss_mb(&self) -> f64 {
        self.status_mb("VmRSS:")
    }

    /// A kB field of `/proc/<pid>/status`, in MB (NaN once the process is gone).
    fn status_mb(&self, field: &str) -> f64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with(field))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|kb| kb.parse::<f64>().ok())
            })
            .map_or(f64::NAN, |kb| kb / 1024.0)
    }

    /// CPU time used so far (user + system), in seconds (`/proc/<pid>/stat`, 100 ticks a
    /// second on Linux).
    pub fn cpu_seconds(&self) -> f64 {
        std::fs::read_to_string(format!("/proc/{}/stat", self.pid()))
            .ok()
            .and_then(|s| {
                // Fields after the command name (which may hold spaces), from field 3 on.
                let rest = s.rsplit_once(')')?.1;
                let fields: Vec<&str> = rest.split_whitespace().collect();
                let utime: f64 = fields.get(11)?.parse().ok()?;
                let stime: f64 = fields.get(12)?.parse().ok()?;
                Some((utime + stime) / 100.0)
            })
            .unwrap_or(f64::NAN)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.base
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or(0)
    }

    /// `kill -9`: no shutdown, no flush, as a crash.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM (graceful), then wait. Nothing when it has already exited (after [`Self::kill9`]
    /// its PID is reaped and may belong to someone else by now).
    pub fn stop(&mut self) {
        if !matches!(self.child.try_wait(), Ok(None)) {
            return;
        }
        let _ = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `perf record` on the server while the rush runs; the top symbols go to target/bench.
pub struct Profiler {
    child: Child,
    data: PathBuf,
}

impl Profiler {
    pub fn start(pid: u32) -> anyhow::Result<Self> {
        let dir = report::root().join("target").join("bench");
        std::fs::create_dir_all(&dir)?;
        let data = dir.join("perf.data");
        let child = Command::new("perf")
            .args([
                "record",
                "-F",
                "499",
                "--call-graph",
                "dwarf,32768",
                "-p",
                &pid.to_string(),
                "-o",
            ])
            .arg(&data)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("perf (apt install linux-perf)")?;
        Ok(Self { child, data })
    }

    pub fn stop(mut self) -> anyhow::Result<Vec<String>> {
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
        let out = Command::new("perf")
            .args([
                "report",
                "--stdio",
                "--no-children",
                "--sort",
                "dso,symbol",
                "-g",
                "none",
                "-i",
            ])
            .arg(&self.data)
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let top: Vec<String> = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .take(25)
            // Drop the empty call-graph columns and the padding.
            .map(|l| l.trim_end_matches([' ', '-']).to_owned())
            .collect();
        Ok(top)
    }
}
