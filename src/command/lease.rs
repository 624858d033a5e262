//! `my-chrome lease [--json] [--log [N]]` and `my-chrome release`. Showing
//! the lease changes nothing.

use crate::config::Config;
use crate::error::Error;
use crate::lease::status::Status;
use crate::runtime::Runtime;

/// `my-chrome lease`.
pub fn show(config: &Config, json: bool, log: Option<usize>) -> Result<(), Error> {
    if let Some(n) = log {
        if let Some(runtime) = Runtime::inspect(&config.runtime)? {
            for line in crate::lease::log::tail(&runtime, n)? {
                println!("{line}");
            }
        }
        return Ok(());
    }
    let status = Status::gather(config)?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&status).expect("the status serialises")
        );
    } else {
        println!("lease: {}", status.summary());
        println!("you: agent {}", status.you);
    }
    Ok(())
}

/// `my-chrome release`.
pub fn release(config: &Config) -> Result<(), Error> {
    let (agent, released) = crate::lease::release(config)?;
    if released {
        println!("my-chrome: agent {agent} released the browser");
    } else {
        println!("my-chrome: agent {agent} holds no lease; nothing to release");
    }
    Ok(())
}
