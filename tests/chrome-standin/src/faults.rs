//! Faults a test can ask for (`STANDIN_FAULTS`, comma-separated): each is
//! something a real Chrome or extension can do.

use std::time::Duration;

#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// `refuse-websocket`: connect to the relay and close at once.
    pub refuse_websocket: bool,
    /// `drop-after=N`: close the relay connection after N commands.
    pub drop_after: Option<usize>,
    /// `delay-ms=N`: wait N ms before every answer.
    pub delay: Option<Duration>,
    /// `spawn-second-main`: start another normal main process when asked to connect.
    pub spawn_second_main: bool,
    /// `exit-after=N`: die (SIGKILL) when the (N+1)th command arrives.
    pub exit_after: Option<usize>,
    /// `singleton=shutdown|silent|hang`: how the singleton answers a client
    /// instead of acting and answering `ACK`.
    pub singleton: Option<SingletonFault>,
    /// `stall=TEXT`: a debugger command whose parameters contain TEXT is
    /// never answered, as on a tab the debugger cannot drive.
    pub stall: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SingletonFault {
    /// Answer `SHUTDOWN`, as a browser on its way out does.
    Shutdown,
    /// Close without an answer.
    Silent,
    /// Never answer.
    Hang,
}

impl Faults {
    pub fn parse(spec: &str) -> Result<Faults, String> {
        let mut faults = Faults::default();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, value) = item.split_once('=').unwrap_or((item, ""));
            let number = || {
                value
                    .parse::<u64>()
                    .map_err(|_| format!("{name} needs a number"))
            };
            match name {
                "refuse-websocket" => faults.refuse_websocket = true,
                "drop-after" => faults.drop_after = Some(number()? as usize),
                "delay-ms" => faults.delay = Some(Duration::from_millis(number()?)),
                "spawn-second-main" => faults.spawn_second_main = true,
                "exit-after" => faults.exit_after = Some(number()? as usize),
                "stall" if !value.is_empty() => faults.stall = Some(value.to_string()),
                "singleton" => {
                    faults.singleton = Some(match value {
                        "shutdown" => SingletonFault::Shutdown,
                        "silent" => SingletonFault::Silent,
                        "hang" => SingletonFault::Hang,
                        other => return Err(format!("unknown singleton fault {other:?}")),
                    })
                }
                other => return Err(format!("unknown fault {other:?}")),
            }
        }
        Ok(faults)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_parse() {
        let f = Faults::parse("drop-after=3, delay-ms=50,spawn-second-main").unwrap();
        assert_eq!(f.drop_after, Some(3));
        assert_eq!(f.delay, Some(Duration::from_millis(50)));
        assert!(f.spawn_second_main && !f.refuse_websocket);
        assert!(Faults::parse("explode").is_err());
        assert_eq!(
            Faults::parse("singleton=hang").unwrap().singleton,
            Some(SingletonFault::Hang)
        );
        assert!(Faults::parse("singleton=maybe").is_err());
        assert!(Faults::parse("drop-after=x").is_err());
        assert_eq!(
            Faults::parse("stall=X1").unwrap().stall.as_deref(),
            Some("X1")
        );
        assert!(Faults::parse("stall").is_err());
    }
}
