//! Per-test isolation: each test id (the [`TEST_HEADER`] of a request)
//! plays its own copy of the server's script, with its own cursor, rule
//! counts and call numbers; the requests without the header play the
//! server's own.
//!
//! A *lane* is what one test id (or the server itself) keeps between
//! calls. A new id's lane is made the first time the id is seen, from the
//! server's script as it stands then (the turns are shared, not copied:
//! a lane costs a few pointers per turn). At most
//! [`ServerBuilder::max_test_ids`](crate::ServerBuilder::max_test_ids)
//! ids are kept ([`MAX_TEST_IDS`] by default); past it the least recently
//! used id is dropped, its requests with it, and starts afresh if it
//! comes back.

use std::collections::HashMap;
use std::sync::Arc;

use agentstream::model::{Model, ScriptStep, ScriptedModel, ScriptedReply, ScriptedTurn};
use agentstream_wire::server::ApiError;
use hyper::HeaderMap;

use crate::full_script::Script;
use crate::log::{Kept, RequestLog};
use crate::manner::Manner;
use crate::rules::{Counts, Rule, Rules};
use crate::script::{ServeTurn, Step};

/// The request header naming the test a call belongs to:
/// `x-agentstream-test: ID`, 1 to [`MAX_TEST_ID_BYTES`] visible ASCII
/// bytes (`!` to `~`). Any other value is answered with HTTP 400 in the
/// provider's error shape, naming the header.
pub const TEST_HEADER: &str = "x-agentstream-test";

/// The longest test id, in bytes.
pub const MAX_TEST_ID_BYTES: usize = 128;

/// How many test ids a server keeps by default (see
/// [`ServerBuilder::max_test_ids`](crate::ServerBuilder::max_test_ids)).
pub const MAX_TEST_IDS: usize = 1024;

/// The test id of a request: `None` without [`TEST_HEADER`].
///
/// # Errors
/// HTTP 400 naming the header, when its value is not 1 to
/// [`MAX_TEST_ID_BYTES`] visible ASCII bytes, or it is given twice.
pub(crate) fn test_id(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
    // A static name, made once: looked up without parsing it.
    static NAME: hyper::header::HeaderName = hyper::header::HeaderName::from_static(TEST_HEADER);
    let mut values = headers.get_all(&NAME).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    let bytes = value.as_bytes();
    let visible = bytes.iter().all(|b| (b'!'..=b'~').contains(b));
    if values.next().is_some() || bytes.is_empty() || bytes.len() > MAX_TEST_ID_BYTES || !visible {
        return Err(ApiError::new(
            400,
            format!(
                "the {TEST_HEADER} header must be given once, as 1 to {MAX_TEST_ID_BYTES} visible ASCII characters (no spaces)"
            ),
        ));
    }
    // Visible ASCII is UTF-8.
    Ok(value.to_str().ok())
}

/// `test` as the name of its cassette subdirectory (`DIR/<ID>`, for a
/// recording or replaying server): one path component, never `.` or
/// `..`, with no `/`, `\\` or `..` in it (a test id never holds NUL or
/// a space).
///
/// # Errors
/// HTTP 400 naming the header.
pub(crate) fn cassette_subdir(test: &str) -> Result<&str, ApiError> {
    if test.contains(['/', '\\']) || test.contains("..") || test == "." {
        return Err(ApiError::new(
            400,
            format!(
                "the {TEST_HEADER} header names a cassette subdirectory here: it cannot hold '/', '\\' or '..', nor be '.'"
            ),
        ));
    }
    Ok(test)
}

/// Whether `path` is a directory itself (not a symlink to one): the only
/// subdirectory a test id's cassettes are read from or written to.
pub(crate) fn is_real_dir(path: &std::path::Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_dir())
}

/// A script as a lane plays it: the model and the server's steps by
/// ordered element, the rules, and (for a script the server was given as
/// data) its turns as loaded, from which fresh copies are made.
#[derive(Clone)]
pub(crate) struct Play {
    pub(crate) model: Arc<dyn Model + Send + Sync>,
    /// The same model, when it is a [`ScriptedModel`]: its plain turns
    /// are written straight from their messages.
    pub(crate) scripted: Option<Arc<ScriptedModel>>,
    pub(crate) steps: Arc<Steps>,
    /// The elements' timing and quirks, by ordered element (empty when
    /// no element has any).
    pub(crate) manners: Arc<[Manner]>,
    /// The rules, tried before the ordered turns.
    pub(crate) rules: Arc<Rules>,
    /// What plays a rule's turn: the scripted model, or one of no turns.
    pub(crate) player: Arc<ScriptedModel>,
    /// How many turns the scripted model had when the lane started.
    pub(crate) turns: usize,
    /// The script's turns as loaded; `None` for a model the server was
    /// given as code (then every lane shares it, and it cannot be
    /// rewound).
    pub(crate) pristine: Option<Arc<[ScriptStep]>>,
}

impl std::fmt::Debug for Play {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Play")
            .field("steps", &self.steps.len())
            .field("turns", &self.turns)
            .finish_non_exhaustive()
    }
}

/// A script taken apart: the turns for the model, the server's steps and
/// the elements' manners (empty when none has one), by ordered element.
pub(crate) struct Split {
    pub(crate) turns: Vec<ScriptStep>,
    pub(crate) steps: Steps,
    pub(crate) manners: Vec<Manner>,
}

/// A script's turns for the model, its steps and manners, and the model
/// name its first message turn gives: the elements taken apart, the turns
/// moved, not copied.
pub(crate) fn split_script(script: impl IntoIterator<Item = ServeTurn>) -> (Split, Option<String>) {
    let (mut turns, mut steps, mut name) = (Vec::new(), Steps::default(), None);
    let mut manners = Vec::new();
    let script: Vec<ServeTurn> = script.into_iter().collect();
    let mut held = crate::held::TurnSteps::new(script.iter().filter_map(|e| e.turn.as_ref()));
    for element in script {
        let played = element
            .turn
            .iter()
            .chain(element.alternatives.iter().map(|a| &a.turn));
        for turn in played {
            if let (None, ScriptedReply::Message(message)) = (&name, turn.reply()) {
                name = Some(message.model.clone());
            }
        }
        if !element.manner.is_plain() {
            manners.resize(steps.len(), Manner::default());
            manners.push(element.manner.clone());
        }
        let (model, step) = element.into_parts(|turn| held.step(turn));
        turns.extend(model);
        steps.push(step);
    }
    (
        Split {
            turns,
            steps,
            manners,
        },
        name,
    )
}

impl Play {
    /// The play of a server's model, as the builder was given it.
    pub(crate) fn new(
        model: Arc<dyn Model + Send + Sync>,
        scripted: Option<Arc<ScriptedModel>>,
        steps: Steps,
        manners: Vec<Manner>,
        rules: Vec<Rule>,
        pristine: Option<Arc<[ScriptStep]>>,
    ) -> Self {
        let turns = scripted
            .as_ref()
            .map_or(0, |model| model.calls() + model.remaining());
        let player = scripted
            .clone()
            .unwrap_or_else(|| Arc::new(ScriptedModel::new(Vec::<ScriptedTurn>::new())));
        Play {
            model,
            scripted,
            steps: Arc::new(steps),
            manners: manners.into(),
            rules: Arc::new(Rules::new(rules)),
            player,
            turns,
            pristine,
        }
    }

    /// The play of a script given as data (`POST /v1/script`).
    pub(crate) fn of_script(script: Script) -> Self {
        let Script { rules, turns } = script;
        let (split, _) = split_script(turns);
        Self::of_parts(
            split.turns.into(),
            Arc::new(split.steps),
            split.manners.into(),
            Arc::new(Rules::new(rules)),
        )
    }

    fn of_parts(
        pristine: Arc<[ScriptStep]>,
        steps: Arc<Steps>,
        manners: Arc<[Manner]>,
        rules: Arc<Rules>,
    ) -> Self {
        let model = Arc::new(ScriptedModel::new(pristine.iter().cloned()));
        Play {
            model: model.clone(),
            scripted: Some(model.clone()),
            steps,
            manners,
            rules,
            player: model,
            turns: pristine.len(),
            pristine: Some(pristine),
        }
    }

    /// A copy with its own cursor, at the script's start; the same play
    /// (its model shared) for a model given as code.
    pub(crate) fn fresh(&self) -> Self {
        match &self.pristine {
            Some(turns) => Self::of_parts(
                turns.clone(),
                self.steps.clone(),
                self.manners.clone(),
                self.rules.clone(),
            ),
            None => self.clone(),
        }
    }

    /// This play with `more` appended (its turns after the turns, its
    /// rules after the rules), the model's cursor where it was; `None`
    /// for a model given as code.
    pub(crate) fn appended(&self, more: Script) -> Option<Self> {
        let pristine = self.pristine.as_ref()?;
        let Script { rules, turns } = more;
        let (split, _) = split_script(turns);
        let all: Vec<ScriptStep> = pristine.iter().cloned().chain(split.turns).collect();
        let mut manners: Vec<Manner> = self.manners.to_vec();
        if !split.manners.is_empty() {
            manners.resize(self.steps.len(), Manner::default());
            manners.extend(split.manners);
        }
        let mut all_steps = Steps::clone(&self.steps);
        all_steps.extend(split.steps);
        let play = Self::of_parts(
            all.into(),
            Arc::new(all_steps),
            manners.into(),
            Arc::new(self.rules.appended(rules)),
        );
        // The turns already taken are taken again from the copy (their
        // functions, if any, run on an empty context): the cursor moves
        // on without a way to set it.
        let taken = self.scripted.as_ref().map_or(0, |model| model.calls());
        if let Some(model) = &play.scripted {
            let empty = agentstream::message::Context::default();
            for _ in 0..taken {
                drop(model.take_turn(&empty));
            }
        }
        Some(play)
    }

    /// How many ordered elements the script has: its steps, or the
    /// scripted model's turns.
    pub(crate) fn ordered_len(&self) -> usize {
        self.steps.len().max(self.turns)
    }
}

/// The server's steps by ordered element, kept sparse: only the elements
/// whose step is not [`Step::Model`] (an HTTP error, a stream error, a
/// cut) hold one. Most elements are plain turns, and a [`Step`] is about
/// 190 bytes: a script of 27,000 turns held 5 MB of `Step::Model`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Steps {
    /// How many elements there are.
    len: usize,
    /// The elements whose step is not [`Step::Model`], by index, in order.
    other: Vec<(usize, Step)>,
}

impl Steps {
    /// Appends the next element's step.
    pub(crate) fn push(&mut self, step: Step) {
        if step != Step::Model {
            self.other.push((self.len, step));
        }
        self.len += 1;
    }

    /// Appends `more`'s elements after these.
    pub(crate) fn extend(&mut self, more: Steps) {
        let base = self.len;
        self.other
            .extend(more.other.into_iter().map(|(i, step)| (base + i, step)));
        self.len += more.len;
    }

    /// How many elements there are.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The step of element `element`: [`Step::Model`] for a plain turn and
    /// past the end.
    pub(crate) fn get(&self, element: usize) -> Step {
        let at = self.other.binary_search_by_key(&element, |(i, _)| *i);
        at.ok()
            .and_then(|at| self.other.get(at))
            .map_or(Step::Model, |(_, step)| step.clone())
    }
}

impl FromIterator<Step> for Steps {
    fn from_iter<I: IntoIterator<Item = Step>>(steps: I) -> Self {
        let mut all = Steps::default();
        for step in steps {
            all.push(step);
        }
        all
    }
}

/// What one test id (or the server) keeps between calls.
#[derive(Debug)]
pub(crate) struct Lane {
    /// The test id; `None` for the server's own lane.
    pub(crate) id: Option<Arc<str>>,
    pub(crate) play: Arc<Play>,
    /// The next call's number.
    pub(crate) next: usize,
    /// The calls no rule answered: the index of the next ordered element.
    pub(crate) ordered: usize,
    /// Each rule's counters.
    pub(crate) rule_counts: Vec<Counts>,
    /// When it was last used, on the lanes' clock.
    used: u64,
}

impl Lane {
    fn new(id: Option<Arc<str>>, play: Arc<Play>) -> Self {
        Lane {
            id,
            rule_counts: vec![Counts::default(); play.rules.len()],
            play,
            next: 0,
            ordered: 0,
            used: 0,
        }
    }

    /// Plays `play` from its start (the call numbers go on).
    pub(crate) fn replace(&mut self, play: Play) {
        self.rule_counts = vec![Counts::default(); play.rules.len()];
        self.play = Arc::new(play);
        self.ordered = 0;
    }

    /// Plays `play`, which extends the lane's, from where the lane was.
    pub(crate) fn extend(&mut self, play: Play) {
        self.rule_counts.resize(play.rules.len(), Counts::default());
        self.play = Arc::new(play);
    }

    /// Back to the start of its script: cursor, rule counts and call
    /// numbers.
    fn rewind(&mut self) {
        let play = self.play.fresh();
        self.replace(play);
        self.next = 0;
    }
}

/// The calls so far: the server's lane, each test id's, and the request
/// log they share (each request tagged with its test id).
pub(crate) struct Calls {
    pub(crate) server: Lane,
    tests: HashMap<Arc<str>, Lane>,
    /// The script a new test id starts from.
    template: Arc<Play>,
    clock: u64,
    max_tests: usize,
    /// Every call numbered so far, across lanes.
    pub(crate) total: usize,
    /// Whether any lane's script has rules: until one has, a call looks
    /// up no script before it is numbered.
    pub(crate) ruled: bool,
    pub(crate) log: RequestLog,
}

impl Calls {
    pub(crate) fn new(play: Play, max_tests: usize, log: RequestLog) -> Self {
        let play = Arc::new(play);
        Calls {
            ruled: !play.rules.is_empty(),
            server: Lane::new(None, play.clone()),
            tests: HashMap::new(),
            template: play,
            clock: 0,
            max_tests: max_tests.max(1),
            total: 0,
            log,
        }
    }

    /// The lane of `test` (the server's for `None`), made from the
    /// server's script the first time the id is seen; the least recently
    /// used id dropped (with its requests) past the bound.
    pub(crate) fn lane(&mut self, test: Option<&str>) -> &mut Lane {
        self.lane_and_log(test).0
    }

    /// [`lane`](Self::lane), and the log and the count of calls beside it.
    fn lane_and_log(&mut self, test: Option<&str>) -> (&mut Lane, &mut RequestLog, &mut usize) {
        let lanes = Lanes {
            template: &self.template,
            clock: &mut self.clock,
            max: self.max_tests,
        };
        let lane = lane_in(
            &mut self.server,
            &mut self.tests,
            &mut self.log,
            lanes,
            test,
        );
        (lane, &mut self.log, &mut self.total)
    }

    /// Numbers the next call of `test`'s lane and records `request`
    /// (given the number); the lane.
    pub(crate) fn number(
        &mut self,
        test: Option<&str>,
        request: impl FnOnce(usize) -> Kept,
    ) -> Result<&mut Lane, ApiError> {
        let (lane, log, total) = self.lane_and_log(test);
        log.push(lane.id.clone(), request(lane.next)).map_err(|e| {
            ApiError::new(
                500,
                format!("agentstream serve cannot record the request: {e}"),
            )
        })?;
        lane.next += 1;
        *total += 1;
        Ok(lane)
    }

    /// Replaces (or extends) the script of `test`'s lane, or, for `None`,
    /// the server's (which new test ids then start from); `Ok(false)` if
    /// the lane's model, given as code, cannot be extended.
    pub(crate) fn set_script(&mut self, test: Option<&str>, script: Script, append: bool) -> bool {
        let lane = self.lane(test);
        if append {
            let Some(play) = lane.play.appended(script) else {
                return false;
            };
            lane.extend(play);
        } else {
            lane.replace(Play::of_script(script));
        }
        if test.is_none() {
            self.template = self.server.play.clone();
        }
        let ruled = !self.lane(test).play.rules.is_empty();
        self.ruled |= ruled;
        true
    }

    /// Rewinds `test`'s lane (`None`: every lane) and clears its requests
    /// from the log; how many requests were cleared. `None` if a lane's
    /// model, given as code, cannot be rewound.
    pub(crate) fn reset(&mut self, test: Option<&str>) -> Option<usize> {
        match test {
            Some(id) => {
                let lane = self.lane(Some(id));
                lane.play.pristine.as_ref()?;
                lane.rewind();
                Some(self.log.clear(Some(Some(id))))
            }
            None => {
                self.server.play.pristine.as_ref()?;
                self.server.rewind();
                for lane in self.tests.values_mut() {
                    lane.rewind();
                }
                Some(self.log.clear(None))
            }
        }
    }
}

/// What making a lane needs besides the lanes themselves.
struct Lanes<'a> {
    template: &'a Arc<Play>,
    clock: &'a mut u64,
    max: usize,
}

fn lane_in<'a>(
    server: &'a mut Lane,
    tests: &'a mut HashMap<Arc<str>, Lane>,
    log: &mut RequestLog,
    lanes: Lanes<'_>,
    test: Option<&str>,
) -> &'a mut Lane {
    let Some(id) = test else {
        return server;
    };
    *lanes.clock += 1;
    let now = *lanes.clock;
    if !tests.contains_key(id) {
        if tests.len() >= lanes.max {
            let oldest = tests
                .iter()
                .min_by_key(|(_, lane)| lane.used)
                .map(|(id, _)| id.clone());
            if let Some(oldest) = oldest {
                tests.remove(&oldest);
                log.clear(Some(Some(&oldest)));
            }
        }
        let id: Arc<str> = id.into();
        let play = Arc::new(lanes.template.fresh());
        tests.insert(id.clone(), Lane::new(Some(id), play));
    }
    match tests.get_mut(id) {
        Some(lane) => {
            lane.used = now;
            lane
        }
        // Inserted just above.
        None => server,
    }
}
