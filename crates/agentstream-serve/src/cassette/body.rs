//! A cassette's answer at play time: its files checked against what they
//! were when the server started, and its body read from disk when it is
//! played (a small one kept in a bounded cache and shared, a large one
//! streamed piece by piece), never read whole at startup.

use std::collections::{HashMap, VecDeque};
use std::fs;
use std::hash::{Hash, Hasher};
use std::io::{self, BufRead, BufReader, Read};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use futures_util::Stream;
use hyper::body::Frame;

use super::pace::{pace, Pace};
use super::{CassetteDir, CassetteError, PieceLengths};

/// A body (with its lengths) at most this large is read whole when
/// played and kept in the [`Cache`]; a larger one is streamed from disk.
pub(super) const CACHED_BODY: u64 = 1 << 20;

/// The bytes of bodies and lengths the [`Cache`] holds at most.
const CACHE_BYTES: usize = 64 << 20;

/// The most bytes a streamed body reads from disk at once (a larger
/// piece is sent as several frames of at most this size).
const BATCH_BYTES: usize = 64 << 10;

/// The most pieces a streamed body reads from disk at once.
const BATCH_PIECES: usize = 4096;

/// What one of a cassette's files was when the server started: its size
/// and identity (inode, modification and change times), as a hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    identity: u64,
    /// The file's size.
    pub(super) len: u64,
}

impl Stamp {
    /// The stamp of the open `file`.
    pub(super) fn of(file: &fs::File) -> io::Result<Self> {
        let metadata = file.metadata()?;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        metadata.len().hash(&mut hasher);
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            (metadata.dev(), metadata.ino()).hash(&mut hasher);
            (metadata.mtime(), metadata.mtime_nsec()).hash(&mut hasher);
            (metadata.ctime(), metadata.ctime_nsec()).hash(&mut hasher);
        }
        #[cfg(not(unix))]
        metadata.modified().ok().hash(&mut hasher);
        Ok(Self {
            identity: hasher.finish(),
            len: metadata.len(),
        })
    }
}

/// The stamps of a cassette's four files (`None`: there was no
/// `response.body.lengths`, and the body is one piece).
#[derive(Debug, Clone, Copy)]
pub(super) struct Stamps {
    pub(super) request: Stamp,
    pub(super) response: Stamp,
    pub(super) body: Stamp,
    pub(super) lengths: Option<Stamp>,
}

/// A body and its piece lengths, read whole: the lengths compact (see
/// [`PieceLengths`]).
#[derive(Debug)]
pub(super) struct Whole {
    body: Bytes,
    lengths: PieceLengths,
}

impl Whole {
    /// The bytes it holds.
    fn size(&self) -> usize {
        self.body.len() + self.lengths.held()
    }

    /// `body` with the lengths of `text` (one decimal count per line,
    /// blank lines skipped), or with one piece when there is none; `None`
    /// when a line is not a count or the counts do not add up to the body.
    pub(super) fn new(body: Vec<u8>, text: Option<&[u8]>) -> Option<Self> {
        let lengths = match text {
            Some(text) => PieceLengths::parse(text, body.len())?,
            None => PieceLengths::one(body.len()),
        };
        Some(Self {
            body: Bytes::from(body),
            lengths,
        })
    }

    /// The pieces, each a view of the one copy of the body.
    fn pieces(self: Arc<Self>) -> impl Iterator<Item = Bytes> + Send {
        let (mut at, mut read) = (0usize, 0usize);
        std::iter::from_fn(move || {
            let n = self.lengths.next_at(&mut read)?;
            // Checked when built: the lengths add up to the body.
            let end = at.saturating_add(n).min(self.body.len());
            let start = std::mem::replace(&mut at, end);
            Some(self.body.slice(start..end))
        })
    }
}

/// The bodies read whole lately, up to [`CACHE_BYTES`]: the oldest goes
/// first.
#[derive(Debug, Default)]
pub(super) struct Cache {
    held: Mutex<Held>,
}

/// What a [`Cache`] holds: the bodies by cassette, in the order they
/// came, and their bytes.
#[derive(Debug, Default)]
struct Held {
    bodies: HashMap<usize, Arc<Whole>>,
    order: VecDeque<usize>,
    bytes: usize,
}

impl Cache {
    fn get(&self, k: usize) -> Option<Arc<Whole>> {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.bodies.get(&k).cloned()
    }

    fn put(&self, k: usize, whole: Arc<Whole>) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let Held {
            bodies: map,
            order,
            bytes,
        } = &mut *held;
        if map.contains_key(&k) || whole.size() > CACHE_BYTES {
            return;
        }
        while *bytes + whole.size() > CACHE_BYTES {
            let Some(oldest) = order.pop_front() else {
                break;
            };
            if let Some(gone) = map.remove(&oldest) {
                *bytes -= gone.size();
            }
        }
        *bytes += whole.size();
        order.push_back(k);
        map.insert(k, whole);
    }
}

/// A cassette's body as a request plays it: shared from memory, or read
/// from its file as the client takes it.
#[derive(Debug)]
pub(crate) struct Recorded {
    source: Source,
    /// Whether the body breaks off after its pieces.
    cut: bool,
    /// When each piece is sent, if the replay is paced.
    pace: Option<Pace>,
}

#[derive(Debug)]
enum Source {
    Whole(Arc<Whole>),
    Disk(Box<DiskBody>),
}

/// A body streamed from its file, checked against its lengths as it goes.
#[derive(Debug)]
struct DiskBody {
    body: fs::File,
    /// `response.body.lengths`, or `None` for one piece.
    lengths: Option<BufReader<fs::File>>,
    /// Where the files are, for errors.
    path: PathBuf,
    /// The lines of the lengths read so far.
    line: usize,
    /// The body's bytes not yet read, and those of the current piece.
    left: u64,
    piece: u64,
    /// Whether the one piece of a body without lengths was started.
    started: bool,
}

/// Some pieces read from disk: `data` and where each piece ends in it.
struct Batch {
    data: Bytes,
    ends: Vec<u32>,
}

impl DiskBody {
    fn error(&self, leaf: &str, what: impl std::fmt::Display) -> io::Error {
        io::Error::other(format!("{}: {what}", self.path.join(leaf).display()))
    }

    /// The next piece's length, `None` after the last.
    fn next_length(&mut self) -> io::Result<Option<u64>> {
        let Some(lengths) = self.lengths.as_mut() else {
            let first = !self.started;
            self.started = true;
            return Ok(first.then_some(self.left));
        };
        loop {
            let mut line = Vec::new();
            // A count is a few digits: a longer line is not one (and
            // is never read whole).
            let read = lengths.by_ref().take(64).read_until(b'\n', &mut line)?;
            if read == 0 {
                return Ok(None);
            }
            self.line += 1;
            // A whole line: its end, or the file's.
            let whole = line.ends_with(b"\n") || read < 64;
            let text = std::str::from_utf8(&line).unwrap_or("x").trim();
            if whole && text.is_empty() {
                continue;
            }
            return match text.parse() {
                Ok(n) if whole => Ok(Some(n)),
                _ => Err(self.error(
                    "response.body.lengths",
                    format_args!("line {} is not a byte count", self.line),
                )),
            };
        }
    }

    /// Reads the next pieces; an empty batch after the last.
    fn batch(&mut self) -> io::Result<Batch> {
        let mut data = BytesMut::new();
        let mut ends = Vec::new();
        while data.len() < BATCH_BYTES && ends.len() < BATCH_PIECES {
            if self.piece == 0 {
                match self.next_length()? {
                    Some(n) if n > self.left => {
                        return Err(self.error(
                            "response.body.lengths",
                            "the lengths do not add up to the body",
                        ))
                    }
                    Some(n) => self.piece = n,
                    None if self.left > 0 => {
                        return Err(self.error(
                            "response.body.lengths",
                            "the lengths do not add up to the body",
                        ))
                    }
                    None => break,
                }
                if self.piece == 0 {
                    ends.push(data.len() as u32);
                    continue;
                }
                // A piece that does not fit starts the next batch.
                if self.piece > (BATCH_BYTES - data.len()) as u64 && !data.is_empty() {
                    break;
                }
            }
            let room = (BATCH_BYTES - data.len()) as u64;
            let take = self.piece.min(room) as usize;
            let at = data.len();
            data.resize(at + take, 0);
            self.body.read_exact(&mut data[at..]).map_err(|e| {
                self.error(
                    "response.body",
                    format_args!("shorter than when the server started ({e})"),
                )
            })?;
            self.piece -= take as u64;
            self.left -= take as u64;
            // A piece larger than a batch goes out as several frames.
            ends.push(data.len() as u32);
        }
        Ok(Batch {
            data: data.freeze(),
            ends,
        })
    }
}

impl Recorded {
    /// A body read whole (see [`Whole`]).
    pub(super) fn whole(whole: Arc<Whole>, cut: bool) -> Self {
        Self {
            source: Source::Whole(whole),
            cut,
            pace: None,
        }
    }

    /// The body paced by `pace` (`None`: as fast as possible).
    pub(super) fn paced(mut self, pace: Option<Pace>) -> Self {
        self.pace = pace;
        self
    }

    /// The body as frames: each piece on its own, with a pause between
    /// pieces so the connection writes each one out; a cut body then
    /// ends in an error, which breaks the connection without the body's
    /// end, as it ended when it was recorded. An error reading a
    /// streamed body (a file changed since the server started) also
    /// breaks it off, naming the file. A paced body sends each piece
    /// when it is due (see [`Pace`]), counted from the first poll.
    pub(crate) fn frames(
        self,
    ) -> impl Stream<Item = Result<Frame<Bytes>, io::Error>> + Send + 'static {
        enum State {
            Whole(Box<dyn Iterator<Item = Bytes> + Send>),
            Disk(Option<Box<DiskBody>>, Batch, usize),
        }
        let cut = self.cut;
        // The pace, and when the body started (its first poll).
        let timer = self.pace.map(|pace| (pace, None));
        let state = match self.source {
            Source::Whole(whole) => State::Whole(Box::new(whole.pieces())),
            Source::Disk(disk) => State::Disk(
                Some(disk),
                Batch {
                    data: Bytes::new(),
                    ends: Vec::new(),
                },
                0,
            ),
        };
        futures_util::stream::unfold(
            (state, 0usize, false, timer),
            move |(mut state, sent, ended, mut timer)| async move {
                if ended {
                    return None;
                }
                if let Some((pace, start)) = &mut timer {
                    let start = *start.get_or_insert_with(tokio::time::Instant::now);
                    if let Some(due) = pace.due(sent) {
                        tokio::time::sleep_until(start + due).await;
                    }
                }
                if sent > 0 {
                    tokio::task::yield_now().await;
                }
                let piece = match &mut state {
                    State::Whole(pieces) => Ok(pieces.next()),
                    State::Disk(disk, batch, next) => loop {
                        if *next < batch.ends.len() {
                            let start = match *next {
                                0 => 0,
                                k => batch.ends[k - 1] as usize,
                            };
                            let end = batch.ends[*next] as usize;
                            *next += 1;
                            break Ok(Some(batch.data.slice(start..end)));
                        }
                        let Some(mut body) = disk.take() else {
                            break Ok(None);
                        };
                        let read = tokio::task::spawn_blocking(move || {
                            let batch = body.batch();
                            (body, batch)
                        })
                        .await;
                        match read {
                            Ok((body, Ok(read))) => {
                                if !read.ends.is_empty() {
                                    *disk = Some(body);
                                }
                                (*batch, *next) = (read, 0);
                            }
                            Ok((_, Err(error))) => break Err(error),
                            Err(_) => break Err(io::Error::other("reading the body failed")),
                        }
                    },
                };
                match piece {
                    Ok(Some(piece)) => {
                        Some((Ok(Frame::data(piece)), (state, sent + 1, false, timer)))
                    }
                    Ok(None) if cut => {
                        let error = io::Error::other("the recorded exchange was cut here");
                        Some((Err(error), (state, sent + 1, true, timer)))
                    }
                    Ok(None) => None,
                    Err(error) => Some((Err(error), (state, sent + 1, true, timer))),
                }
            },
        )
    }
}

/// Opens the regular file `leaf` of cassette `name` beneath `dir` and
/// checks it is what it was at startup (`stamp`; `None`: it did not
/// exist, and must not now).
pub(super) fn reopen(
    dir: &CassetteDir,
    name: &str,
    leaf: &str,
    stamp: Option<Stamp>,
) -> Result<Option<fs::File>, CassetteError> {
    let relative = format!("{name}/{leaf}");
    let path = dir.path.join(&relative);
    let changed = || {
        CassetteError::new(
            &path,
            "changed since the server started; restart it to replay the directory as it is now",
        )
    };
    let file = match (dir.file(&relative), stamp) {
        (Ok((file, _)), Some(_)) => file,
        (Err(error), None) if error.is_not_found() => return Ok(None),
        (Ok(_), None) => return Err(changed()),
        (Err(error), _) => return Err(error),
    };
    let now = Stamp::of(&file).map_err(|e| CassetteError::io(&path, e))?;
    if Some(now) != stamp {
        return Err(changed());
    }
    Ok(Some(file))
}

/// The body of cassette `k` (named `name`, with `stamps`) as a request
/// plays it, after checking each of its files is as it was at startup:
/// from `cache`, read whole when small, else streamed from disk; paced
/// by its arrival times at `speed` (`0`: as fast as possible).
pub(super) fn play(
    dir: &CassetteDir,
    cache: &Cache,
    k: usize,
    name: &str,
    stamps: &Stamps,
    cut: bool,
    speed: f64,
) -> Result<Recorded, CassetteError> {
    let pace = pace(dir, name, speed)?;
    Ok(play_unpaced(dir, cache, k, name, stamps, cut)?.paced(pace))
}

fn play_unpaced(
    dir: &CassetteDir,
    cache: &Cache,
    k: usize,
    name: &str,
    stamps: &Stamps,
    cut: bool,
) -> Result<Recorded, CassetteError> {
    reopen(dir, name, "request.json", Some(stamps.request))?;
    reopen(dir, name, "response.json", Some(stamps.response))?;
    let missing = |leaf: &str| {
        CassetteError::new(
            &dir.path.join(name).join(leaf),
            "changed since the server started",
        )
    };
    let body = reopen(dir, name, "response.body", Some(stamps.body))?
        .ok_or_else(|| missing("response.body"))?;
    let lengths = reopen(dir, name, "response.body.lengths", stamps.lengths)?;
    let lengths_len = stamps.lengths.map_or(0, |s| s.len);
    if stamps.body.len <= CACHED_BODY && lengths_len <= CACHED_BODY {
        if let Some(whole) = cache.get(k) {
            return Ok(Recorded::whole(whole, cut));
        }
        let read = |file: Option<fs::File>, leaf: &str| -> Result<Option<Vec<u8>>, CassetteError> {
            let Some(mut file) = file else {
                return Ok(None);
            };
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)
                .map_err(|e| CassetteError::io(&dir.path.join(name).join(leaf), e))?;
            Ok(Some(bytes))
        };
        let body = read(Some(body), "response.body")?.unwrap_or_default();
        let text = read(lengths, "response.body.lengths")?;
        let whole = Whole::new(body, text.as_deref()).ok_or_else(|| {
            CassetteError::new(
                &dir.path.join(name).join("response.body.lengths"),
                "the lengths do not add up to the body",
            )
        })?;
        let whole = Arc::new(whole);
        cache.put(k, whole.clone());
        return Ok(Recorded::whole(whole, cut));
    }
    Ok(Recorded {
        source: Source::Disk(Box::new(DiskBody {
            body,
            lengths: lengths.map(BufReader::new),
            path: dir.path.join(name),
            line: 0,
            left: stamps.body.len,
            piece: 0,
            started: false,
        })),
        cut,
        pace: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// When each frame of `recorded` came out, in milliseconds of the
    /// (paused, so exact) test clock.
    async fn arrivals(recorded: Recorded) -> Vec<u128> {
        use futures_util::StreamExt;
        let start = tokio::time::Instant::now();
        let mut frames = Box::pin(recorded.frames());
        let mut at = Vec::new();
        while let Some(frame) = frames.next().await {
            frame.unwrap();
            at.push(start.elapsed().as_millis());
        }
        at
    }

    #[tokio::test(start_paused = true)]
    async fn a_paced_body_sends_each_piece_when_due() {
        let whole = Arc::new(Whole::new(b"abcdef".to_vec(), Some(b"1\n2\n3\n")).unwrap());
        let times = vec![100, 400, 1000];
        for (speed, due) in [
            (1.0, [100, 400, 1000]),
            (2.0, [50, 200, 500]),
            (0.5, [200, 800, 2000]),
        ] {
            let pace = Pace {
                times: times.clone(),
                speed,
            };
            let recorded = Recorded::whole(whole.clone(), false).paced(Some(pace));
            assert_eq!(arrivals(recorded).await, due, "speed {speed}");
        }
        // Unpaced: at once.
        assert_eq!(
            arrivals(Recorded::whole(whole.clone(), false)).await,
            [0, 0, 0]
        );
        // Fewer times than pieces: the rest go at once after the last.
        let pace = Pace {
            times: vec![300],
            speed: 1.0,
        };
        let recorded = Recorded::whole(whole, false).paced(Some(pace));
        assert_eq!(arrivals(recorded).await, [300, 300, 300]);
    }

    fn pieces(whole: Whole) -> Vec<Vec<u8>> {
        Arc::new(whole).pieces().map(|p| p.to_vec()).collect()
    }

    #[test]
    fn lengths_are_kept_in_a_byte_or_two_each() {
        let body: Vec<u8> = (0..=255u8).cycle().take(18_000).collect();
        let whole = Whole::new(body.clone(), Some(b"1\n127\n128\n\n16383\n1361\n")).unwrap();
        // 1 + 1 + 2 + 2 + 2 bytes for five pieces, not 40.
        assert_eq!(whole.lengths.held(), 8);
        let got = pieces(whole);
        assert_eq!(
            got.iter().map(Vec::len).collect::<Vec<_>>(),
            [1, 127, 128, 16383, 1361]
        );
        assert_eq!(got.concat(), body);
        let one = pieces(Whole::new(body.clone(), None).unwrap());
        assert_eq!((one.len(), one.concat() == body), (1, true));
        assert!(Whole::new(body.clone(), Some(b"1\n")).is_none());
        assert!(Whole::new(body, Some(b"x\n")).is_none());
    }

    /// The frames a body streamed from disk gives: `body` in the pieces
    /// `lengths` lists, or the error naming the file.
    fn streamed(name: &str, body: &[u8], lengths: Option<&str>) -> Result<Vec<usize>, String> {
        let dir =
            std::env::temp_dir().join(format!("agentstream-body-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("response.body"), body).unwrap();
        let lengths = lengths.map(|text| {
            std::fs::write(dir.join("response.body.lengths"), text).unwrap();
            BufReader::new(fs::File::open(dir.join("response.body.lengths")).unwrap())
        });
        let mut disk = DiskBody {
            body: fs::File::open(dir.join("response.body")).unwrap(),
            lengths,
            path: dir.clone(),
            line: 0,
            left: body.len() as u64,
            piece: 0,
            started: false,
        };
        let mut sizes = Vec::new();
        let mut joined = Vec::new();
        let result = loop {
            match disk.batch() {
                Ok(batch) if batch.ends.is_empty() => break Ok(sizes),
                Ok(batch) => {
                    let mut start = 0;
                    for end in batch.ends {
                        sizes.push(end as usize - start);
                        start = end as usize;
                    }
                    joined.extend_from_slice(&batch.data);
                }
                Err(error) => break Err(error.to_string()),
            }
        };
        if result.is_ok() {
            assert_eq!(joined, body);
        }
        let _ = std::fs::remove_dir_all(&dir);
        result
    }

    #[test]
    fn a_body_streams_from_disk_in_its_pieces() {
        let body = vec![7u8; 200_000];
        let lengths = "1\n\n  99999 \n100000\n";
        // A piece that does not fit in the batch starts the next; one
        // larger than a batch goes out in frames of 64 KiB.
        assert_eq!(
            streamed("pieces", &body, Some(lengths)),
            Ok(vec![1, 65_536, 34_463, 65_536, 34_464])
        );
        assert_eq!(
            streamed("one", &body, None).unwrap().iter().sum::<usize>(),
            200_000
        );
        assert_eq!(streamed("empty", b"", None), Ok(vec![0]));
        for (name, lengths, error) in [
            ("bad", "1\nx\n", "line 2 is not a byte count"),
            (
                "long",
                &*format!("{}\n", "1".repeat(80)),
                "line 1 is not a byte count",
            ),
            ("short", "1\n", "do not add up"),
            ("past", "300000\n", "do not add up"),
        ] {
            let error_text = streamed(name, &body, Some(lengths)).unwrap_err();
            assert!(error_text.contains(error), "{name}: {error_text}");
            assert!(error_text.contains("response.body.lengths"), "{error_text}");
        }
    }

    #[test]
    fn the_cache_keeps_its_bound() {
        let cache = Cache::default();
        for k in 0..100 {
            let whole = Whole::new(vec![0; 1 << 20], None).unwrap();
            cache.put(k, Arc::new(whole));
        }
        let held = cache.held.lock().unwrap();
        assert!(held.bytes <= CACHE_BYTES, "{}", held.bytes);
        assert_eq!(held.bodies.len(), held.order.len());
        assert!(held.bodies.contains_key(&99) && !held.bodies.contains_key(&0));
    }
}
