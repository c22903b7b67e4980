//! What the tests that start `agentstream serve` as a child process share.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// Kills the server when the test ends, however it ends.
pub struct Served(pub Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `agentstream serve ARGS...`; the child and the URL it printed
/// on its first line.
pub fn serve(args: &[&std::ffi::OsStr]) -> (Served, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentstream"))
        .arg("serve")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    let stdout = child.stdout.take().expect("stdout is piped");
    let served = Served(child);
    let mut url = String::new();
    BufReader::new(stdout)
        .read_line(&mut url)
        .expect("the server prints its URL");
    (served, url.trim().to_owned())
}
