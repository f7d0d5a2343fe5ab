//! Taking the terminal for the live view and giving it back in every case: when the view ends,
//! on a panic (a hook), on a signal (the loop ends first) and after a failed write (the error
//! ends the loop): raw mode off, the main screen back, the cursor shown, bracketed paste off.

use std::io::{self, Stdout};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::{cursor, event, execute, terminal};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// Whether the terminal is ours now (so it is given back once).
static TAKEN: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// The terminal, in raw mode on the alternate screen, until dropped.
pub(crate) struct Screen {
    pub(crate) terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl Screen {
    pub(crate) fn take() -> io::Result<Screen> {
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                // The message must land on the main screen, after the terminal is back.
                restore();
                previous(info);
            }));
        });
        TAKEN.store(true, Ordering::SeqCst);
        let taken = (|| {
            terminal::enable_raw_mode()?;
            execute!(
                io::stdout(),
                terminal::EnterAlternateScreen,
                event::EnableBracketedPaste,
                cursor::Hide
            )?;
            Terminal::new(CrosstermBackend::new(io::stdout()))
        })();
        match taken {
            Ok(terminal) => Ok(Screen { terminal }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}

/// Whether the terminal is still ours: `false` once a panic (on any thread) gave it back, so
/// the loop stops drawing on the main screen.
pub(crate) fn taken() -> bool {
    TAKEN.load(Ordering::SeqCst)
}

/// Gives the terminal back (once; errors ignored: the terminal may be gone).
pub(crate) fn restore() {
    if !TAKEN.swap(false, Ordering::SeqCst) {
        return;
    }
    let _ = terminal::disable_raw_mode();
    let _ = execute!(
        io::stdout(),
        event::DisableBracketedPaste,
        terminal::LeaveAlternateScreen,
        cursor::Show
    );
}
