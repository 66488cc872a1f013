//! A fleet's output written as its hosts complete, never holding their documents: each host's
//! part is rendered as soon as its scan ends (by the worker that scanned it), parts wait only
//! for the hosts before them (the output keeps the input order), and what a format needs of
//! the whole fleet is the tally of states and, for the formats whose first line or column
//! widths depend on every host, their per-host text (a row or a block, not the document). The
//! bytes are exactly what [`super::render`] writes.
//!
//! `json` and `agentlocal` write each part at once; `summary` and the monitoring output keep
//! their rows and blocks until the end. Parts that wait for a slow host beyond
//! [`MEMORY_FOR_WAITING`] bytes, and rows and blocks kept beyond [`MEMORY_FOR_KEPT`], go to a
//! temporary file of the run's own (unlinked at once): a silent host holds up the output, not
//! the memory, and a fleet's table costs disk. The other formats are one document for the
//! whole fleet built from every result (`sarif`, `junit`, `metrics`, `otlp`): not streamed.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

use super::{Context, Format, Tally, agentlocal, json, monitoring, summary};
use crate::report::ScanResult;

/// The bytes of written-at-once parts that wait in memory for an earlier host; beyond, they
/// wait in a spill file. A JSON document is about 40 KiB: 2 MiB hold 50 of them.
pub const MEMORY_FOR_WAITING: usize = 2 << 20;

/// The bytes of rows and blocks kept in memory for the end (`summary`, the monitoring
/// output); beyond, they are kept in a spill file: a fleet's table costs disk, not memory.
pub const MEMORY_FOR_KEPT: usize = 1 << 20;

/// Whether `format` is written host by host.
pub fn streams(format: Format) -> bool {
    matches!(
        format,
        Format::Json | Format::AgentLocal | Format::Summary | Format::Monitoring
    )
}

/// One host's share of the output.
pub enum Part {
    /// Written at once, in input order.
    Text(String),
    /// A row of the summary table.
    Row(summary::Row),
    /// A monitoring block and its performance data (`None`: it has none).
    Block(Option<String>, Option<String>),
}

/// Renders one host's part: pure, called by the worker that scanned it.
pub fn part(format: Format, result: &ScanResult, hosts: usize, ctx: &Context) -> Part {
    match format {
        Format::Json => Part::Text(json::element(result)),
        Format::AgentLocal => Part::Text(agentlocal::host_line(result, ctx) + "\n"),
        Format::Summary => Part::Row(summary::row(result, ctx)),
        _ => {
            let part = monitoring::host_part(result, hosts, ctx);
            let (block, perf) = (part.block(), part.perf());
            Part::Block(
                (!part.is_empty_block()).then_some(block),
                (!perf.is_empty()).then_some(perf),
            )
        }
    }
}

/// A temporary file of the run's own that texts wait in: unlinked as soon as it is made
/// (nothing is left behind, whatever ends the run), readable by the run's user only.
struct Spill {
    file: File,
    /// Where the next text goes.
    end: u64,
}

impl Spill {
    fn create() -> io::Result<Spill> {
        use std::os::unix::fs::OpenOptionsExt;
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "{}-{}-{n}.waiting",
            crate::program::PROGRAM,
            std::process::id()
        ));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        std::fs::remove_file(&path)?;
        Ok(Spill { file, end: 0 })
    }

    fn put(&mut self, text: &str) -> io::Result<(u64, usize)> {
        self.file.seek(SeekFrom::Start(self.end))?;
        self.file.write_all(text.as_bytes())?;
        let at = self.end;
        self.end += text.len() as u64;
        Ok((at, text.len()))
    }

    fn get(&mut self, at: u64, len: usize) -> io::Result<String> {
        self.file.seek(SeekFrom::Start(at))?;
        let mut bytes = vec![0; len];
        self.file.read_exact(&mut bytes)?;
        String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }
}

/// A text kept in memory or in a spill file.
enum Stored {
    Held(String),
    /// At this offset of the file, this long.
    Spilled(u64, usize),
}

/// Texts in memory up to a budget of bytes, beyond it in a spill file (made when first
/// needed; where none can be made or written, in memory after all: the run goes on).
struct Store {
    budget: usize,
    held: usize,
    spill: Option<Spill>,
    /// No spill file could be made: everything stays in memory.
    no_file: bool,
}

impl Store {
    fn new(budget: usize) -> Store {
        Store {
            budget,
            held: 0,
            spill: None,
            no_file: false,
        }
    }

    fn put(&mut self, text: String) -> Stored {
        if self.held + text.len() > self.budget && !self.no_file {
            if self.spill.is_none() {
                self.spill = Spill::create().ok();
                self.no_file = self.spill.is_none();
            }
            if let Some(Ok((at, len))) = self.spill.as_mut().map(|s| s.put(&text)) {
                return Stored::Spilled(at, len);
            }
        }
        self.held += text.len();
        Stored::Held(text)
    }

    fn take(&mut self, stored: Stored) -> io::Result<String> {
        match stored {
            Stored::Held(text) => {
                self.held -= text.len();
                Ok(text)
            }
            Stored::Spilled(at, len) => match self.spill.as_mut() {
                Some(spill) => spill.get(at, len),
                None => Err(io::Error::other("a spilled text without its file")),
            },
        }
    }

    /// Nothing is in the file any more: its space is used again.
    fn rewind(&mut self) {
        if let Some(spill) = self.spill.as_mut() {
            spill.end = 0;
        }
    }
}

/// The writer of one run's output: takes the parts in any order, writes them in input order.
pub struct Stream<W: Write> {
    format: Format,
    out: W,
    /// Text parts that came before an earlier host's.
    waiting: BTreeMap<usize, Stored>,
    waiting_store: Store,
    /// The index of the next part to write.
    next: usize,
    tally: Tally,
    /// Rows, or blocks and performance data, kept in input order for the end.
    kept: Vec<Stored>,
    kept_store: Store,
    /// Rows and blocks that came before an earlier host's (small: a line or a block each).
    pending: BTreeMap<usize, Part>,
    /// Rows, or blocks and performance data, taken in input order, with what they need of
    /// every host: the table's widths, or whether a host had a block or metrics.
    widths: summary::Widths,
    blocks: Vec<(bool, bool)>,
    /// The output failed (its reader went away): parts are dropped from then on, not kept.
    broken: bool,
}

impl<W: Write> Stream<W> {
    pub fn new(format: Format, out: W) -> Stream<W> {
        debug_assert!(streams(format));
        Stream {
            format,
            out,
            waiting: BTreeMap::new(),
            waiting_store: Store::new(MEMORY_FOR_WAITING),
            next: 0,
            tally: Tally::default(),
            kept: Vec::new(),
            kept_store: Store::new(MEMORY_FOR_KEPT),
            pending: BTreeMap::new(),
            widths: summary::Widths::default(),
            blocks: Vec::new(),
            broken: false,
        }
    }

    /// Takes host `index`'s part and state; writes it, and the parts it held back, when every
    /// host before it is written. Once a write fails, parts are counted and dropped.
    pub fn take(
        &mut self,
        index: usize,
        state: crate::report::State,
        part: Part,
    ) -> io::Result<()> {
        self.tally.add(state);
        if self.broken {
            return Ok(());
        }
        let taken = self.take_part(index, part);
        self.broken = taken.is_err();
        taken
    }

    fn take_part(&mut self, index: usize, part: Part) -> io::Result<()> {
        match part {
            Part::Text(text) if index == self.next => {
                self.write_text(text)?;
                while let Some(stored) = self.waiting.remove(&self.next) {
                    let text = self.waiting_store.take(stored)?;
                    self.write_text(text)?;
                }
                if self.waiting.is_empty() {
                    self.waiting_store.rewind();
                }
            }
            Part::Text(text) => {
                let stored = self.waiting_store.put(text);
                self.waiting.insert(index, stored);
            }
            // Rows and blocks are all kept until the end: they wait by index with the others.
            kept => self.keep(index, kept),
        }
        self.out.flush()
    }

    fn write_text(&mut self, text: String) -> io::Result<()> {
        if self.format == Format::Json {
            self.out.write_all(json::separator(self.next).as_bytes())?;
        }
        self.out.write_all(text.as_bytes())?;
        self.next += 1;
        Ok(())
    }

    /// Rows and blocks, kept in input order: those ahead of an earlier host wait in `pending`.
    fn keep(&mut self, index: usize, part: Part) {
        self.pending.insert(index, part);
        while let Some(part) = self.pending.remove(&self.next) {
            match part {
                Part::Row(row) => {
                    self.widths.fit(&row);
                    // As JSON: a cell may hold any character a server sent.
                    let text = serde_json::to_string(&row).unwrap_or_default();
                    let stored = self.kept_store.put(text);
                    self.kept.push(stored);
                }
                Part::Block(block, perf) => {
                    self.blocks.push((block.is_some(), perf.is_some()));
                    for text in [block, perf].into_iter().flatten() {
                        let stored = self.kept_store.put(text);
                        self.kept.push(stored);
                    }
                }
                Part::Text(_) => unreachable!("text parts are written, not kept"),
            }
            self.next += 1;
        }
    }

    /// How many parts wait for an earlier host's.
    pub fn waiting(&self) -> usize {
        self.waiting.len() + self.pending.len()
    }

    /// The states of the hosts taken so far.
    pub fn tally(&self) -> Tally {
        self.tally
    }

    /// Writes what is left once every host is in: the closing bracket, or the whole table or
    /// monitoring output (which needs every host's state and width first), and `extra`, a
    /// line where `self_update::check::add_line` puts it (before the performance data, after
    /// the table, else on stderr).
    pub fn finish(mut self, extra: Option<&str>) -> io::Result<W> {
        debug_assert_eq!(self.waiting(), 0, "every part is written");
        let to_stderr = |line: &str| eprintln!("{line}");
        match self.format {
            Format::Json => {
                self.out.write_all(json::END.as_bytes())?;
                extra.map(to_stderr);
            }
            Format::AgentLocal => {
                extra.map(to_stderr);
            }
            Format::Summary => {
                self.out
                    .write_all(summary::header(&self.widths).as_bytes())?;
                let hosts = self.kept.len();
                for stored in std::mem::take(&mut self.kept) {
                    let text = self.kept_store.take(stored)?;
                    let row: summary::Row = serde_json::from_str(&text)
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                    self.out
                        .write_all(summary::line(&row, &self.widths).as_bytes())?;
                }
                let tally = summary::tally_line(hosts, &self.tally.counts());
                self.out.write_all(tally.as_bytes())?;
                if let Some(line) = extra {
                    writeln!(self.out, "{line}")?;
                }
            }
            _ => self.finish_monitoring(extra)?,
        }
        self.out.flush()?;
        Ok(self.out)
    }

    /// The monitoring output: the opening line of a multi-host run, the blocks, `extra`, then
    /// the performance data, as `monitoring::whole` writes it.
    fn finish_monitoring(&mut self, extra: Option<&str>) -> io::Result<()> {
        let hosts = self.blocks.len();
        let mut kept = std::mem::take(&mut self.kept).into_iter();
        let mut perf = Vec::new();
        let mut first = true;
        let mut line = |out: &mut W, text: &str| -> io::Result<()> {
            if !std::mem::take(&mut first) {
                out.write_all(b"\n")?;
            }
            out.write_all(text.as_bytes())
        };
        if hosts != 1 {
            line(&mut self.out, &monitoring::opening(hosts, &self.tally))?;
        }
        for &(has_block, has_perf) in &self.blocks {
            if has_block {
                let stored = kept.next().expect("a kept block");
                let text = self.kept_store.take(stored)?;
                line(&mut self.out, &text)?;
            }
            if has_perf {
                // Read back at the end, after the blocks; its place in the file is enough.
                perf.push(kept.next().expect("kept metrics"));
            }
        }
        self.out.write_all(b"\n")?;
        if let Some(extra) = extra {
            writeln!(self.out, "{extra}")?;
        }
        self.out.write_all(b"|")?;
        for (i, stored) in perf.into_iter().enumerate() {
            if i > 0 {
                self.out.write_all(b" ")?;
            }
            let text = self.kept_store.take(stored)?;
            self.out.write_all(text.as_bytes())?;
        }
        self.out.write_all(b"\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::metrics::testing::{failed, now, scanned, settings};
    use crate::report::State;

    /// Host by host, in any order of completion, the stream writes what `render` writes.
    #[test]
    fn parts_in_any_order_write_what_render_writes() {
        let s = settings(&["-H", "a.example"]);
        let ctx = s.output_context(now());
        let mut worse = scanned("b.example", "7.1.0", Some(-40));
        worse.state = State::Critical;
        let results = [
            scanned("a.example", "8.1.0", None),
            worse,
            failed("c.example"),
            scanned("d.example", "8.0.1", None),
        ];
        for format in [
            Format::Json,
            Format::AgentLocal,
            Format::Summary,
            Format::Monitoring,
        ] {
            for (hosts, memory, extra) in [
                (&results[..1], MEMORY_FOR_WAITING, None),
                (&results[..], MEMORY_FOR_WAITING, None),
                // Every part but the next to write waits in the spill file.
                (&results[..], 1, None),
                // The self-update notice goes where `add_line` puts it.
                (
                    &results[..],
                    1,
                    Some("A newer check-storage-security is out"),
                ),
                (&results[..1], MEMORY_FOR_WAITING, Some("notice")),
            ] {
                let mut stream = Stream::new(format, Vec::new());
                stream.waiting_store.budget = memory;
                stream.kept_store.budget = memory;
                // The last host first, then the others: the first part waits for none.
                let mut order: Vec<usize> = (0..hosts.len()).rev().collect();
                order.rotate_left(1);
                for i in order {
                    let part = part(format, &hosts[i], hosts.len(), &ctx);
                    stream.take(i, hosts[i].state, part).unwrap();
                }
                assert_eq!(stream.waiting(), 0);
                let spilled =
                    stream.waiting_store.spill.is_some() || stream.kept_store.spill.is_some();
                assert_eq!(spilled, memory == 1, "{format:?}");
                let out = stream.finish(extra).unwrap();
                let mut rendered = crate::output::render(format, hosts, &ctx);
                if let Some(line) = extra {
                    rendered = crate::self_update::check::add_line(format, rendered, line);
                }
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    rendered,
                    "{format:?}, {} host(s), spilled: {spilled}",
                    hosts.len()
                );
            }
        }
    }

    /// A reader gone away (`| head`): the parts after the failed write are counted, not kept.
    #[test]
    fn after_a_failed_write_parts_are_counted_and_dropped() {
        struct Gone;
        impl Write for Gone {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let s = settings(&["-H", "a.example"]);
        let ctx = s.output_context(now());
        let hosts = [
            scanned("a.example", "8.1.0", None),
            scanned("b.example", "8.1.0", None),
            scanned("c.example", "8.1.0", None),
        ];
        let mut stream = Stream::new(Format::Json, Gone);
        let part0 = part(Format::Json, &hosts[0], 3, &ctx);
        assert!(stream.take(0, hosts[0].state, part0).is_err());
        for i in [2, 1] {
            let part = part(Format::Json, &hosts[i], 3, &ctx);
            assert!(stream.take(i, hosts[i].state, part).is_ok());
        }
        assert_eq!(
            stream.waiting(),
            0,
            "nothing kept for a reader that is gone"
        );
        assert_eq!(stream.tally().hosts(), 3);
    }

    /// A part is written as soon as the hosts before it are: an early host's JSON is out
    /// while later hosts still scan.
    #[test]
    fn a_part_is_written_once_the_hosts_before_it_are() {
        let s = settings(&["-H", "a.example"]);
        let ctx = s.output_context(now());
        let a = scanned("a.example", "8.1.0", None);
        let b = scanned("b.example", "8.1.0", None);
        let mut stream = Stream::new(Format::Json, Vec::new());
        stream
            .take(1, b.state, part(Format::Json, &b, 3, &ctx))
            .unwrap();
        assert_eq!(stream.waiting(), 1);
        assert!(stream.out.is_empty(), "b waits for a");
        stream
            .take(0, a.state, part(Format::Json, &a, 3, &ctx))
            .unwrap();
        assert_eq!(stream.waiting(), 0);
        let written = String::from_utf8(stream.out.clone()).unwrap();
        assert!(written.starts_with("[\n  {"), "{written}");
        assert!(written.contains("\"a.example\"") && written.contains("\"b.example\""));
        assert_eq!(stream.tally().hosts(), 2);
    }
}
