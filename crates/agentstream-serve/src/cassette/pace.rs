//! A replay's pace: when each piece of a cassette's body is sent, from
//! its `response.body.times` and the replay speed.

use std::io::Read;

use super::{CassetteDir, CassetteError};

/// A paced replay: piece *i* goes out `times[i] / speed` milliseconds
/// after the body starts (a piece past the last time goes at once).
#[derive(Debug)]
pub(crate) struct Pace {
    pub(super) times: Vec<u64>,
    pub(super) speed: f64,
}

impl Pace {
    /// How long after the body's start piece `i` is due.
    pub(super) fn due(&self, i: usize) -> Option<std::time::Duration> {
        let ms = *self.times.get(i)?;
        // `speed` is finite and positive (checked where it is set).
        std::time::Duration::try_from_secs_f64(ms as f64 / 1000.0 / self.speed).ok()
    }
}

/// The most bytes of `response.body.times` read (about two million
/// pieces' times).
const TIMES_BYTES: u64 = 16 << 20;

/// The pace of cassette `name` replayed at `speed` (`0`: none): its
/// `response.body.times`, or `None` when there is none (a cassette
/// recorded before the file existed plays without pauses).
pub(super) fn pace(
    dir: &CassetteDir,
    name: &str,
    speed: f64,
) -> Result<Option<Pace>, CassetteError> {
    if !(speed.is_finite() && speed > 0.0) {
        return Ok(None);
    }
    let relative = format!("{name}/response.body.times");
    let path = dir.path.join(&relative);
    let mut file = match dir.file(&relative) {
        Ok((file, _)) => file,
        Err(error) if error.is_not_found() => return Ok(None),
        Err(error) => return Err(error),
    };
    let mut text = Vec::new();
    file.by_ref()
        .take(TIMES_BYTES)
        .read_to_end(&mut text)
        .map_err(|e| CassetteError::io(&path, e))?;
    let times = super::pieces::parse_times(&text)
        .filter(|_| (text.len() as u64) < TIMES_BYTES)
        .ok_or_else(|| {
            CassetteError::new(
                &path,
                "not one count of milliseconds per line (or past 16 MiB)",
            )
        })?;
    Ok(Some(Pace { times, speed }))
}
