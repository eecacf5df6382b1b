//! HAProxy in front of the instances, as `scripts/cluster.sh` runs it: round robin, a liveness
//! check, a POST never re-sent to another instance; its stats CSV for requests per instance.

use std::{
    collections::BTreeMap,
    process::{Child, Command, Stdio},
    time::Duration,
};

use anyhow::{bail, Context};

use crate::report;

pub struct Haproxy {
    child: Child,
    pub base: String,
    stats: String,
}

fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

impl Haproxy {
    /// Starts HAProxy on a free port in front of the instances on `ports`.
    pub async fn start(ports: &[u16]) -> anyhow::Result<Self> {
        let (port, stats_port) = (free_port()?, free_port()?);
        let mut cfg = format!(
            "global\n  maxconn 8000\ndefaults\n  mode http\n  timeout connect 2s\n  \
             timeout client 30s\n  timeout server 30s\n  option http-keep-alive\n  retries 2\n  \
             option redispatch\nfrontend shop\n  bind 127.0.0.1:{port}\n  default_backend instances\n\
             backend instances\n  balance roundrobin\n  option httpchk GET /api/live\n  \
             default-server inter 1s fall 2 rise 2\n"
        );
        for (i, p) in ports.iter().enumerate() {
            cfg.push_str(&format!("  server app{} 127.0.0.1:{p} check\n", i + 1));
        }
        cfg.push_str(&format!(
            "listen stats\n  bind 127.0.0.1:{stats_port}\n  stats enable\n  stats uri /stats\n"
        ));
        let dir = report::root().join("target").join("bench");
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(format!("haproxy-{}.cfg", std::process::id()));
        std::fs::write(&path, cfg)?;
        let child = Command::new("haproxy")
            .arg("-f")
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting haproxy (installed by scripts/setup.sh)")?;
        let lb = Self {
            child,
            base: format!("http://127.0.0.1:{port}"),
            stats: format!("http://127.0.0.1:{stats_port}/stats;csv"),
        };
        let client = reqwest::Client::new();
        for _ in 0..100 {
            let up = lb.requests().await.map(|r| r.len() == ports.len());
            if matches!(up, Ok(true))
                && client
                    .get(format!("{}/api/live", lb.base))
                    .send()
                    .await
                    .is_ok_and(|r| r.status().is_success())
            {
                return Ok(lb);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        bail!("haproxy did not come up")
    }

    /// Requests sent to each instance so far (`stot` of each server line), by server name.
    pub async fn requests(&self) -> anyhow::Result<BTreeMap<String, u64>> {
        let csv = reqwest::get(&self.stats).await?.text().await?;
        Ok(csv
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                (f.first() == Some(&"instances") && f.get(1).is_some_and(|s| s.starts_with("app")))
                    .then(|| Some((f[1].to_owned(), f.get(7)?.parse().ok()?)))
                    .flatten()
            })
            .collect())
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
