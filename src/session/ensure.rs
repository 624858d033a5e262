//! `my-chrome ensure`: is our session ready? It never attaches: a missing or
//! stale session is exit 4, and the user's approval of a fresh `connect`.

use crate::config::Config;
use crate::error::Error;
use crate::exit::Exit;
use crate::helper::check::Check;
use crate::session::connect_tab;
use crate::start::Start;

pub fn ensure(config: &Config) -> Result<(), Error> {
    // It may close and open tabs (`connect_tab::close_all`): that is acting on
    // the browser, in its turn.
    let started = Start::new(config, Check::Supported).turn("ensure").open()?;
    let session = started.require_ready()?;
    if let Err(why) = connect_tab::close_all(&session.socket_path, &started.daemon_cwd()?) {
        // Fail closed: no agent may keep a session that shows the token.
        let detached = started.cli()?.detach();
        return Err(Error::refused(
            Exit::Failure,
            format!(
                "the session shows the extension's connect tab, whose address carries the token, \
                 and it could not be closed ({why}); {}. Close that tab in Chrome, then ask the \
                 user to approve `my-chrome connect`",
                if detached {
                    "the session was detached"
                } else {
                    "the session could not be detached: run `my-chrome disconnect`"
                }
            ),
        ));
    }
    println!("my-chrome: ready (session {})", config.session);
    Ok(())
}
