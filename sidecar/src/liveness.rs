//! Whether the process that holds a lease still exists, when that can be proven: a crashed
//! sidecar restarted on the same machine then takes its lease over at once instead of waiting
//! for it to expire (the core's lease plan takes the proof as `holderGone`).
//!
//! Each sidecar process binds a **beacon**: a Linux abstract-namespace datagram socket with a
//! name unique to the process. The kernel removes it when the process ends, however it ends
//! (SIGKILL, OOM kill, container stop), and only then. The holder stores with its lease the
//! beacon's name, the kernel's boot id and its network namespace (abstract socket names are
//! per network namespace). A successor proves the holder gone when it runs under the same boot
//! id and in the same network namespace and nothing is bound to that name any more. Processes
//! on one host share the namespace; so do the containers of a Kubernetes pod, across restarts
//! (the pod sandbox keeps it). A reused pid cannot fool this (names are not pids); a paused
//! (SIGSTOP) holder still exists, so it is not taken over early. Anywhere else (other hosts,
//! other namespaces, no `/proc`) nothing can be proven and the lease expires as before.

use serde_json::{json, Value};

/// This process's beacon (bound while it lives) and the facts a successor needs.
#[derive(Debug, Default)]
pub struct Beacon {
    #[cfg(target_os = "linux")]
    _socket: Option<std::os::unix::net::UnixDatagram>,
    facts: Option<Value>,
}

/// This kernel's boot id and this process's network namespace, when readable.
#[cfg(target_os = "linux")]
fn namespace() -> Option<(String, String)> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let netns = std::fs::read_link("/proc/self/ns/net").ok()?;
    Some((boot.trim().to_owned(), netns.to_string_lossy().into_owned()))
}

/// This process's start time (clock ticks after boot: field 22 of `/proc/self/stat`, counted
/// after the command name, which may hold spaces and parentheses).
#[cfg(target_os = "linux")]
fn start_time() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

impl Beacon {
    /// Binds a beacon for this process (several per process are fine: tests run sidecars side
    /// by side). Without one (not Linux, no `/proc`), the facts are `None` and no successor
    /// ever takes over early.
    pub fn bind() -> Self {
        #[cfg(target_os = "linux")]
        {
            use std::os::linux::net::SocketAddrExt;
            use std::os::unix::net::{SocketAddr, UnixDatagram};
            use std::sync::atomic::{AtomicU32, Ordering};
            static SEQUENCE: AtomicU32 = AtomicU32::new(0);
            let Some((boot, netns)) = namespace() else {
                return Self::default();
            };
            // The pid and the process's start time name this process alone within a boot (a
            // reused pid has another start time).
            let Some(started) = start_time() else {
                return Self::default();
            };
            let name = format!(
                "mongo-seq/{}/{started}/{}",
                std::process::id(),
                SEQUENCE.fetch_add(1, Ordering::Relaxed)
            );
            let bound = SocketAddr::from_abstract_name(name.as_bytes())
                .and_then(|addr| UnixDatagram::bind_addr(&addr));
            match bound {
                Ok(socket) => Self {
                    _socket: Some(socket),
                    facts: Some(json!({
                        "host": crate::config::hostname(),
                        "pid": std::process::id(),
                        "bootId": boot,
                        "netns": netns,
                        "beacon": name,
                    })),
                },
                Err(e) => {
                    tracing::debug!(error = %e, "no liveness beacon: a restart waits for the lease to expire");
                    Self::default()
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        Self::default()
    }

    /// What to store with a lease this process acquires (`lease.process`).
    pub fn facts(&self) -> Option<Value> {
        self.facts.clone()
    }
}

/// `pid 12 on host h`: the facts an operator recognizes a process by (`None` when there are none).
pub fn describe(facts: &Value) -> Option<String> {
    let pid = facts.get("pid").map(|pid| {
        mongo_seq_core::ejson::read_i64(pid).map_or_else(|_| pid.to_string(), |pid| pid.to_string())
    });
    let host = facts.get("host").and_then(Value::as_str);
    match (pid, host) {
        (Some(pid), Some(host)) => Some(format!("pid {pid} on host {host}")),
        (Some(pid), None) => Some(format!("pid {pid}")),
        (None, Some(host)) => Some(format!("on host {host}")),
        (None, None) => None,
    }
}

/// Whether the process described by `facts` (a lease holder's) provably no longer exists.
/// `false` whenever it cannot be told (another host, another namespace, no beacon).
pub fn gone(facts: &Value) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::net::{SocketAddr, UnixDatagram};
        let (Some(boot), Some(netns), Some(name)) = (
            facts.get("bootId").and_then(Value::as_str),
            facts.get("netns").and_then(Value::as_str),
            facts.get("beacon").and_then(Value::as_str),
        ) else {
            return false;
        };
        if namespace().as_ref().map(|(b, n)| (b.as_str(), n.as_str())) != Some((boot, netns)) {
            return false;
        }
        let Ok(addr) = SocketAddr::from_abstract_name(name.as_bytes()) else {
            return false;
        };
        let Ok(probe) = UnixDatagram::unbound() else {
            return false;
        };
        // Connecting a datagram socket only looks the name up (nothing is sent, it never
        // blocks): refused means nobody holds that name any more.
        matches!(probe.connect_addr(&addr), Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = facts;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_beacon_is_not_gone_and_a_dropped_one_is() {
        let beacon = Beacon::bind();
        let Some(facts) = beacon.facts() else {
            return; // no /proc here: nothing can be proven, by design
        };
        assert!(!gone(&facts), "alive: {facts}");
        drop(beacon);
        assert!(gone(&facts), "gone once dropped: {facts}");
        // Facts from elsewhere prove nothing.
        let mut other = facts.clone();
        other["netns"] = json!("net:[1]");
        assert!(!gone(&other));
        other = facts.clone();
        other["bootId"] = json!("another-boot");
        assert!(!gone(&other));
        assert!(!gone(&json!({ "host": "h", "pid": 1 })));
    }

    #[test]
    fn a_holder_is_described_by_its_pid_and_host() {
        // As read back from the lease document (canonical Extended JSON).
        let facts = json!({ "host": "h", "pid": { "$numberInt": "7" }, "beacon": "b" });
        assert_eq!(describe(&facts).as_deref(), Some("pid 7 on host h"));
        assert_eq!(describe(&json!({ "pid": 8 })).as_deref(), Some("pid 8"));
        assert_eq!(describe(&json!({ "beacon": "b" })), None);
    }
}
