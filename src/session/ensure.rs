//! `my-chrome ensure`: is our session ready? It never attaches: a missing or
//! stale session is exit 4, and the user's approval of a fresh `connect`.

use super::connect::fail;
use super::pinned::PinnedCli;
use super::state::{SessionState, session_state};
use crate::child::ChildEnv;
use crate::config::Config;
use crate::error::{Error, Exit};
use crate::helper::check::Depth;
use crate::helper::pin::Pin;
use crate::helper::{Helper, HelperError, trusted_node};
use crate::runtime::{Runtime, StateFile};

const APPROVAL: &str = "no my-chrome session is connected. Ask the user to approve taking their \
                        browser, then run `my-chrome connect`";

/// Checks the supported helper and the session; `Ok` when commands can be
/// forwarded. Shared by `ensure` and the forwarder.
pub fn require_ready(
    config: &Config,
) -> Result<(Runtime, ChildEnv, crate::helper::node::Node), Error> {
    let runtime = Runtime::open(&config.runtime)?;
    let pin = Pin::shipped();
    Helper::at(runtime.cli_dir()).check_supported(pin, Depth::Quick)?;
    let env = ChildEnv::new(config, &runtime.tmp_dir());
    let node = trusted_node(config, pin, &env).map_err(HelperError::from)?;
    // A connect that died left its record: scrub before anything else.
    if runtime.read_state(StateFile::Bootstrap)?.is_some() {
        let _lock = runtime.lock(config.lock_wait)?;
        let helper = Helper::at(runtime.cli_dir());
        let cli = PinnedCli {
            node: &node,
            helper: &helper,
            env: &env,
            runtime: &runtime,
            session: &config.session,
        };
        super::connect::recover(&runtime, &cli)?;
    }
    match session_state(&config.home, &runtime, &config.session, pin.core_version()) {
        SessionState::Ready(_) => Ok((runtime, env, node)),
        SessionState::Missing => Err(fail(Exit::NoSession, APPROVAL)),
        SessionState::Stale(why) => Err(fail(
            Exit::NoSession,
            format!("the session is stale ({why}); {APPROVAL}"),
        )),
        SessionState::Unavailable(why) => Err(fail(
            Exit::Failure,
            format!("the session cannot be used ({why}); nothing was run"),
        )),
    }
}

pub fn ensure(config: &Config) -> Result<(), Error> {
    let (runtime, env, node) = require_ready(config)?;
    let helper = Helper::at(runtime.cli_dir());
    let cli = PinnedCli {
        node: &node,
        helper: &helper,
        env: &env,
        runtime: &runtime,
        session: &config.session,
    };
    cli.sanitize_tabs();
    println!("my-chrome: ready (session {})", config.session);
    Ok(())
}
