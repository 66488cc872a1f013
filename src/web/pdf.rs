//! The public API's PDF export: a one-to-two page A4 report of a completed scan, drawn from the
//! plugin's result document with `pdf-writer` and the standard Type1 fonts Helvetica and
//! Helvetica-Bold (WinAnsiEncoding, nothing embedded).
//!
//! Most of the text comes from the scanned server, which is hostile: it is only ever shown as
//! text (pdf-writer escapes the string syntax), characters outside WinAnsiEncoding become `?`,
//! control characters become spaces and every field is capped. The report never runs past two
//! pages: failed findings that do not fit are left out with a line saying how many, and that the
//! JSON export holds them all.

use crate::report::{Finding, RemediationStep, ScanResult, State, Status};
use crate::severity::Severity;
use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, Str, TextStr};

const PAGE_WIDTH: f32 = 595.0;
const PAGE_HEIGHT: f32 = 842.0;
const MARGIN: f32 = 50.0;
const CONTENT_WIDTH: f32 = PAGE_WIDTH - 2.0 * MARGIN;
/// The flow's bottom: the footer sits below it.
const BOTTOM: f32 = MARGIN + 16.0;
/// The first page's flow starts below the header (title, host, grade box).
const FIRST_TOP: f32 = PAGE_HEIGHT - MARGIN - 104.0;
const TOP: f32 = PAGE_HEIGHT - MARGIN;
const MAX_PAGES: usize = 2;
/// Failed findings laid out at most: two pages never hold more.
const MAX_FINDINGS: usize = 150;
const MAX_STEPS: usize = 15;
/// The producer named in the document's info and the footer.
const PRODUCER: &str = concat!("check-storage-security ", env!("CARGO_PKG_VERSION"));

const BLACK: [f32; 3] = [0.0, 0.0, 0.0];
const GRAY: [f32; 3] = [0.38, 0.38, 0.38];
const DARK: [f32; 3] = [0.2, 0.2, 0.2];

/// Helvetica's advance widths (1/1000 em) of the printable ASCII characters 32-126.
#[rustfmt::skip]
const HELVETICA: [u16; 95] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
];

/// Helvetica-Bold's advance widths of the printable ASCII characters 32-126.
#[rustfmt::skip]
const HELVETICA_BOLD: [u16; 95] = [
    278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278,
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611,
    975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778,
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556,
    333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611,
    611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584,
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Font {
    Regular,
    Bold,
}

impl Font {
    /// Its name in the pages' resources.
    fn name(self) -> Name<'static> {
        Name(match self {
            Font::Regular => b"F1",
            Font::Bold => b"F2",
        })
    }

    /// The width of WinAnsi-encoded text at `size` points. Characters above ASCII are taken
    /// wide enough for any Latin-1 letter: wrapping never runs past the margin.
    fn width(self, text: &[u8], size: f32) -> f32 {
        let table = match self {
            Font::Regular => &HELVETICA,
            Font::Bold => &HELVETICA_BOLD,
        };
        let units: u32 = text
            .iter()
            .map(|&b| match b {
                32..=126 => u32::from(table[usize::from(b - 32)]),
                0x85 | 0x89 | 0x8C | 0x97 | 0x99 | 0x9C | 0xC6 | 0xE6 => 1000,
                _ => 834,
            })
            .sum();
        units as f32 * size / 1000.0
    }

    fn at(self, size: f32, color: [f32; 3]) -> Style {
        Style {
            font: self,
            size,
            color,
        }
    }
}

/// Windows-1252's characters at 0x80-0x9F, in order; its five unassigned places hold the C1
/// control character of the same code, which [`win_ansi`] never looks up.
const WIN_ANSI_80: &str = "€\u{81}‚ƒ„…†‡ˆ‰Š‹Œ\u{8d}Ž\u{8f}\u{90}‘’“”•–—˜™š›œ\u{9d}žŸ";

/// One character in WinAnsiEncoding: Latin-1 as is, the 0x80-0x9F extras (typographic quotes,
/// dashes, the euro sign...), control characters as spaces, anything else `?`.
fn win_ansi(c: char) -> u8 {
    match c {
        ' '..='~' => c as u8,
        '\u{a0}'..='\u{ff}' if c != '\u{ad}' => c as u32 as u8,
        '\u{ad}' => b'-',
        '\t' | '\n' | '\r' | '\u{b}' | '\u{c}' => b' ',
        _ if c.is_control() => b'?',
        _ => WIN_ANSI_80
            .chars()
            .position(|extra| extra == c)
            .map_or(b'?', |at| 0x80 + at as u8),
    }
}

/// A document field as WinAnsi text of at most `max` characters (an ellipsis marks a cut).
fn encode(text: &str, max: usize) -> Vec<u8> {
    let mut out: Vec<u8> = text.trim().chars().take(max).map(win_ansi).collect();
    if text.trim().chars().nth(max).is_some() {
        out.push(0x85);
    }
    out
}

/// Text cut to fit `width` on one line, an ellipsis marking the cut.
fn fit(text: &[u8], font: Font, size: f32, width: f32) -> Vec<u8> {
    if font.width(text, size) <= width {
        return text.to_vec();
    }
    let mut out = text.to_vec();
    while !out.is_empty() && font.width(&out, size) + font.width(&[0x85], size) > width {
        out.pop();
    }
    out.push(0x85);
    out
}

/// Greedy word wrapping into lines of `width` points. Words longer than a line are broken.
fn wrap(text: &[u8], font: Font, size: f32, width: f32) -> Vec<Vec<u8>> {
    let mut lines: Vec<Vec<u8>> = Vec::new();
    let mut line: Vec<u8> = Vec::new();
    for word in text.split(|&b| b == b' ').filter(|w| !w.is_empty()) {
        let mut candidate = line.clone();
        if !candidate.is_empty() {
            candidate.push(b' ');
        }
        candidate.extend_from_slice(word);
        if font.width(&candidate, size) <= width {
            line = candidate;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        for &b in word {
            line.push(b);
            if font.width(&line, size) > width && line.len() > 1 {
                line.pop();
                lines.push(std::mem::replace(&mut line, vec![b]));
            }
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// How a run of text is drawn.
#[derive(Clone, Copy, Debug)]
struct Style {
    font: Font,
    size: f32,
    color: [f32; 3],
}

#[derive(Clone, Debug)]
struct Span {
    x: f32,
    style: Style,
    text: Vec<u8>,
}

#[derive(Clone, Debug, Default)]
struct Line {
    height: f32,
    spans: Vec<Span>,
}

/// Lines kept together on one page, `gap` points below what precedes them.
#[derive(Clone, Debug, Default)]
struct Block {
    gap: f32,
    lines: Vec<Line>,
}

impl Block {
    fn new(gap: f32) -> Block {
        Block {
            gap,
            lines: Vec::new(),
        }
    }

    /// A section's start: its heading, `gap` points below what precedes it.
    fn section(gap: f32, title: &str) -> Block {
        let mut block = Block::new(gap);
        block.text(MARGIN, title.as_bytes(), Font::Bold.at(12.5, BLACK));
        block.space(3.0);
        block
    }

    fn height(&self) -> f32 {
        self.lines.iter().map(|l| l.height).sum()
    }

    fn space(&mut self, height: f32) {
        self.lines.push(Line {
            height,
            spans: Vec::new(),
        });
    }

    /// `label` (bold, in `label_color`) then `text` wrapped with a hanging indent past the
    /// label; `x` is the left edge.
    fn labelled(
        &mut self,
        x: f32,
        label: &[u8],
        label_color: [f32; 3],
        text: &[u8],
        style: Style,
    ) -> &mut Self {
        let size = style.size;
        let indent = if label.is_empty() {
            0.0
        } else {
            Font::Bold.width(label, size) + size * 0.4
        };
        let width = MARGIN + CONTENT_WIDTH - x - indent;
        for (i, part) in wrap(text, style.font, size, width).into_iter().enumerate() {
            let mut spans = Vec::new();
            if i == 0 && !label.is_empty() {
                spans.push(Span {
                    x,
                    style: Font::Bold.at(size, label_color),
                    text: label.to_vec(),
                });
            }
            spans.push(Span {
                x: x + indent,
                style,
                text: part,
            });
            self.lines.push(Line {
                height: size * 1.3,
                spans,
            });
        }
        self
    }

    fn text(&mut self, x: f32, text: &[u8], style: Style) -> &mut Self {
        self.labelled(x, b"", style.color, text, style)
    }

    /// A line of the summary: a bold label, then regular text in `color`.
    fn field(&mut self, label: &[u8], label_color: [f32; 3], text: &[u8], color: [f32; 3]) {
        let style = Font::Regular.at(10.0, color);
        self.labelled(MARGIN, label, label_color, text, style);
    }
}

/// `section` kept on one page with the first of `blocks`, which it heads.
fn head(mut section: Block, blocks: &mut [Block]) {
    if let Some(first) = blocks.first_mut() {
        section.lines.extend(std::mem::take(first).lines);
        *first = section;
    }
}

fn severity_color(severity: Severity) -> [f32; 3] {
    match severity {
        Severity::Critical => [0.55, 0.0, 0.1],
        Severity::High => [0.8, 0.1, 0.1],
        Severity::Medium => [0.85, 0.42, 0.0],
        Severity::Low => [0.55, 0.5, 0.0],
    }
}

fn grade_color(grade: &str) -> [f32; 3] {
    match grade {
        "A+" | "A" => [0.1, 0.55, 0.25],
        "B" => [0.35, 0.6, 0.1],
        "C" => [0.85, 0.6, 0.0],
        "D" => [0.88, 0.4, 0.0],
        "E" | "F" => [0.78, 0.1, 0.1],
        _ => [0.45, 0.45, 0.45],
    }
}

fn state_color(state: State) -> [f32; 3] {
    match state {
        State::Ok => [0.1, 0.5, 0.2],
        State::Warning => [0.8, 0.45, 0.0],
        State::Critical => [0.78, 0.1, 0.1],
        State::Unknown => DARK,
    }
}

/// The summary under the header: state and message, product, counts.
fn summary(document: &ScanResult, failed: usize, waived: usize) -> Block {
    let mut block = Block::new(0.0);
    let label = format!("{}:", document.state.label());
    let message = encode(&document.message, 300);
    let color = state_color(document.state);
    block.field(label.as_bytes(), color, &message, BLACK);
    let product = document.product.as_ref();
    let mut name = encode(product.map_or("", |p| &p.name), 60);
    if name.is_empty() {
        name = b"unknown".to_vec();
    }
    let version = encode(product.map_or("", |p| &p.version), 60);
    if !version.is_empty() {
        name.push(b' ');
        name.extend_from_slice(&version);
    }
    block.space(4.0);
    block.field(b"Product:", BLACK, &name, BLACK);
    let findings = &document.findings;
    let passed = findings
        .iter()
        .filter(|f| f.status == Status::Passed)
        .count();
    let other = findings.len().saturating_sub(passed + failed);
    let mut counts = format!("{} checked: {failed} failed", findings.len());
    if waived > 0 {
        counts.push_str(&format!(" ({waived} waived)"));
    }
    counts.push_str(&format!(", {passed} passed"));
    if other > 0 {
        counts.push_str(&format!(", {other} not evaluated"));
    }
    block.field(b"Findings:", BLACK, counts.as_bytes(), BLACK);
    if let Some(submitter) = &document.submitter_waivers {
        let line = format!(
            "the grade and state above are without them. With them ({}): grade {}, state {}.",
            submitter.patterns.join(", "),
            submitter.grade,
            submitter.state.label()
        );
        block.field(b"Submitter's waivers:", DARK, &encode(&line, 400), DARK);
    }
    block
}

/// One failed finding; `by_submitter`: the submitter's waivers hide it (it stays failed in
/// the headline, and is marked).
fn finding_block(finding: &Finding, by_submitter: bool) -> Block {
    let mut block = Block::new(7.0);
    let waived = finding.ignored;
    let mut id = encode(&finding.id, 120);
    if waived {
        id.extend_from_slice(b"  [waived]");
    } else if by_submitter {
        id.extend_from_slice(b"  [waived by the submitter]");
    }
    let (color, label_color) = match waived {
        true => (GRAY, GRAY),
        false => (BLACK, severity_color(finding.severity)),
    };
    let label = finding.severity.as_str().to_ascii_uppercase();
    let style = Font::Bold.at(10.0, color);
    block.labelled(MARGIN, label.as_bytes(), label_color, &id, style);
    let indent = MARGIN + 12.0;
    let detail = encode(&finding.detail, 240);
    if !detail.is_empty() {
        block.text(indent, &detail, Font::Regular.at(9.0, color));
    }
    let remediation = encode(&finding.remediation, 240);
    if !remediation.is_empty() {
        let style = Font::Regular.at(9.0, if waived { GRAY } else { DARK });
        block.labelled(indent, b"Fix:", DARK, &remediation, style);
    }
    block
}

fn step_block(number: usize, step: &RemediationStep) -> Block {
    let mut block = Block::new(5.0);
    let label = format!("{number}.");
    block.field(label.as_bytes(), BLACK, &encode(&step.action, 240), BLACK);
    let mut note: Vec<Vec<u8>> = Vec::new();
    let system = encode(step.fixed_in.as_str(), 60);
    if !system.is_empty() {
        note.push([b"in ".as_slice(), &system].concat());
    }
    let resolves = step.resolves.len();
    if resolves > 0 {
        let plural = if resolves == 1 { "" } else { "s" };
        note.push(format!("resolves {resolves} finding{plural}").into_bytes());
    }
    if !note.is_empty() {
        let indent = MARGIN + Font::Bold.width(label.as_bytes(), 10.0) + 4.0;
        let style = Font::Regular.at(8.5, GRAY);
        block.text(indent, &note.join(b"; ".as_slice()), style);
    }
    block
}

/// Blocks placed on pages: each page lists (block index, y of its top).
fn paginate(blocks: &[Block]) -> Vec<Vec<(usize, f32)>> {
    let mut pages = vec![Vec::new()];
    let mut y = FIRST_TOP;
    for (i, block) in blocks.iter().enumerate() {
        let page = pages.last_mut().expect("one page at least");
        let gap = if page.is_empty() { 0.0 } else { block.gap };
        if y - gap - block.height() < BOTTOM && !page.is_empty() {
            pages.push(vec![(i, TOP)]);
            y = TOP - block.height();
        } else {
            page.push((i, y - gap));
            y -= gap + block.height();
        }
    }
    pages
}

fn draw_text(content: &mut Content, x: f32, y: f32, style: Style, text: &[u8]) {
    let [r, g, b] = style.color;
    content.set_fill_rgb(r, g, b);
    content.begin_text();
    content.set_font(style.font.name(), style.size);
    content.next_line(x, y);
    content.show(Str(text));
    content.end_text();
}

/// The first page's header: title, host, URL and scan time on the left, the grade on the right.
fn header(content: &mut Content, document: &ScanResult) {
    let box_size = 84.0;
    let box_x = PAGE_WIDTH - MARGIN - box_size;
    let box_y = PAGE_HEIGHT - MARGIN - box_size;
    let left = CONTENT_WIDTH - box_size - 14.0;
    let mut y = PAGE_HEIGHT - MARGIN - 18.0;
    let title = b"Storage security report";
    draw_text(content, MARGIN, y, Font::Bold.at(18.0, BLACK), title);
    y -= 24.0;
    let host = fit(&encode(&document.host, 200), Font::Bold, 13.0, left);
    draw_text(content, MARGIN, y, Font::Bold.at(13.0, BLACK), &host);
    let url = encode(document.url.as_deref().unwrap_or_default(), 300);
    let rows: [(&[u8], Vec<u8>); 2] = [
        (b"URL", url),
        (b"Scanned", encode(&document.scanned_at.to_string(), 40)),
    ];
    for (label, value) in rows {
        if value.is_empty() {
            continue;
        }
        y -= 15.0;
        draw_text(content, MARGIN, y, Font::Bold.at(9.0, GRAY), label);
        let value = fit(&value, Font::Regular, 9.0, left - 48.0);
        let style = Font::Regular.at(9.0, DARK);
        draw_text(content, MARGIN + 48.0, y, style, &value);
    }

    let mut grade = encode(&document.grade, 3);
    if grade.is_empty() {
        grade = b"?".to_vec();
    }
    let [r, g, b] = grade_color(&String::from_utf8_lossy(&grade));
    content.set_fill_rgb(r, g, b);
    content.rect(box_x, box_y, box_size, box_size);
    content.fill_nonzero();
    let mut centered = |y: f32, size: f32, text: &[u8]| {
        let x = box_x + (box_size - Font::Bold.width(text, size)) / 2.0;
        draw_text(content, x, y, Font::Bold.at(size, [1.0, 1.0, 1.0]), text);
    };
    centered(box_y + box_size - 14.0, 8.0, b"GRADE");
    let size = if grade.len() > 1 { 40.0 } else { 48.0 };
    centered(box_y + 18.0, size, &grade);

    content.set_stroke_rgb(0.75, 0.75, 0.75);
    content.set_line_width(0.6);
    content.move_to(MARGIN, box_y - 8.0);
    content.line_to(PAGE_WIDTH - MARGIN, box_y - 8.0);
    content.stroke();
}

fn footer(content: &mut Content, page: usize, pages: usize) {
    let style = Font::Regular.at(7.5, GRAY);
    let left = format!("{PRODUCER} - the JSON export holds the complete result");
    draw_text(content, MARGIN, MARGIN, style, left.as_bytes());
    let right = format!("page {page} of {pages}");
    let x = PAGE_WIDTH - MARGIN - Font::Regular.width(right.as_bytes(), 7.5);
    draw_text(content, x, MARGIN, style, right.as_bytes());
}

/// `block` with the line saying that `count` more `noun`s are left out.
fn left_out(mut block: Block, count: usize, noun: &str, style: Style) -> Block {
    let plural = if count == 1 { " is" } else { "s are" };
    let text = format!("{count} more {noun}{plural} left out; the JSON export has them all.");
    block.text(MARGIN, text.as_bytes(), style);
    block
}

/// The PDF report of a result document: one or two A4 pages, every text as a visitor reads
/// it.
pub fn render(document: &ScanResult) -> Vec<u8> {
    let document = &super::visitor::document(document);
    let submitter = document.submitter_waivers.as_ref();
    let mut failed: Vec<&Finding> = document
        .findings
        .iter()
        .filter(|f| f.status == Status::Failed)
        .collect();
    // Waived last, the worst first.
    failed.sort_by_key(|f| (f.ignored, std::cmp::Reverse(f.severity)));
    let waived = failed.iter().filter(|f| f.ignored).count();

    let summary = summary(document, failed.len(), waived);
    let findings_heading = format!("Failed findings ({})", failed.len());
    let findings_section = || Block::section(16.0, &findings_heading);
    let plan_section = || Block::section(18.0, "Remediation plan");
    let mut findings: Vec<Block> = failed
        .iter()
        .take(MAX_FINDINGS)
        .map(|f| finding_block(f, submitter.is_some_and(|s| s.hides(&f.id))))
        .collect();
    if findings.is_empty() {
        let mut none = Block::default();
        none.text(MARGIN, b"No check failed.", Font::Regular.at(10.0, BLACK));
        findings.push(none);
    }
    // The headings stay with the first finding and the first step.
    head(findings_section(), &mut findings);
    let steps_source = &document.remediation_plan.steps;
    let mut steps: Vec<Block> = steps_source
        .iter()
        .take(MAX_STEPS)
        .enumerate()
        .map(|(i, s)| step_block(i + 1, s))
        .collect();
    head(plan_section(), &mut steps);
    // As many findings and plan steps as two pages hold: findings give way first (down to five),
    // then steps (down to three), then the rest. Left-out lines say how many are missing.
    let layout = |shown: usize, shown_steps: usize| {
        let mut blocks: Vec<Block> = vec![summary.clone()];
        blocks.extend(findings.iter().take(shown).cloned());
        let findings_left_out = failed.len().saturating_sub(shown);
        if findings_left_out > 0 {
            let block = match shown {
                0 => findings_section(),
                _ => Block::new(8.0),
            };
            let style = Font::Bold.at(9.5, DARK);
            blocks.push(left_out(block, findings_left_out, "failed finding", style));
        }
        blocks.extend(steps.iter().take(shown_steps).cloned());
        let steps_left_out = steps_source.len() - shown_steps;
        if steps_left_out > 0 {
            let block = match shown_steps {
                0 => plan_section(),
                _ => Block::new(5.0),
            };
            let style = Font::Regular.at(9.0, DARK);
            blocks.push(left_out(block, steps_left_out, "step", style));
        }
        let pages = paginate(&blocks);
        (blocks, pages)
    };
    let floor = if failed.is_empty() { findings.len() } else { 0 };
    let mut shown = findings.len();
    let mut shown_steps = steps.len();
    while layout(shown, shown_steps).1.len() > MAX_PAGES {
        if shown > floor.max(5) {
            shown -= 1;
        } else if shown_steps > 3 {
            shown_steps -= 1;
        } else if shown > floor {
            shown -= 1;
        } else if shown_steps > 0 {
            shown_steps -= 1;
        } else {
            break;
        }
    }
    // Room the plan's cuts left goes back to findings.
    while shown < findings.len() && layout(shown + 1, shown_steps).1.len() <= MAX_PAGES {
        shown += 1;
    }
    let (blocks, mut pages) = layout(shown, shown_steps);
    // Never reached with the field caps; a third page is dropped all the same.
    pages.truncate(MAX_PAGES);

    let mut pdf = Pdf::new();
    let [catalog, tree, regular, bold, info] = [1, 2, 3, 4, 5].map(Ref::new);
    let first_page = 6;
    let page_ids: Vec<Ref> = (0..pages.len())
        .map(|i| Ref::new(first_page + 2 * i as i32))
        .collect();
    pdf.catalog(catalog).pages(tree);
    pdf.pages(tree)
        .kids(page_ids.iter().copied())
        .count(pages.len() as i32);
    for (id, name) in [(regular, "Helvetica"), (bold, "Helvetica-Bold")] {
        pdf.type1_font(id)
            .base_font(Name(name.as_bytes()))
            .encoding_predefined(Name(b"WinAnsiEncoding"));
    }
    let host: String = document
        .host
        .chars()
        .filter(|c| !c.is_control())
        .take(100)
        .collect();
    pdf.document_info(info)
        .title(TextStr(&format!("Storage security report: {host}")))
        .producer(TextStr(PRODUCER));

    for (number, placed) in pages.iter().enumerate() {
        let page_id = page_ids[number];
        let content_id = Ref::new(page_id.get() + 1);
        let mut content = Content::new();
        if number == 0 {
            header(&mut content, document);
        }
        for &(index, top) in placed {
            let mut y = top;
            for line in &blocks[index].lines {
                y -= line.height;
                for span in &line.spans {
                    if span.text.is_empty() {
                        continue;
                    }
                    // The baseline sits a fifth of the line above its bottom.
                    let baseline = y + line.height * 0.22;
                    draw_text(&mut content, span.x, baseline, span.style, &span.text);
                }
            }
        }
        footer(&mut content, number + 1, pages.len());
        pdf.stream(content_id, &content.finish());
        let mut page = pdf.page(page_id);
        page.media_box(Rect::new(0.0, 0.0, PAGE_WIDTH, PAGE_HEIGHT))
            .parent(tree)
            .contents(content_id);
        let mut resources = page.resources();
        let fonts = [(Font::Regular.name(), regular), (Font::Bold.name(), bold)];
        resources.fonts().pairs(fonts);
        resources.finish();
        page.finish();
    }
    pdf.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn win_ansi_maps_latin1_and_replaces_the_rest() {
        assert_eq!(
            encode("Grüße € – ok", 100),
            b"Gr\xfc\xdfe \x80 \x96 ok".to_vec()
        );
        assert_eq!(encode("Тест 漢字 😀", 100), b"???? ?? ?".to_vec());
        assert_eq!(encode("a\nb\tc\u{0}", 100), b"a b c?".to_vec());
        assert_eq!(encode("abcdef", 3), b"abc\x85".to_vec());
    }

    #[test]
    fn wrapping_keeps_every_line_within_the_width() {
        let text = encode(&format!("short words then {} end", "x".repeat(300)), 1000);
        let lines = wrap(&text, Font::Regular, 9.0, 300.0);
        assert!(lines.len() > 3);
        for line in &lines {
            assert!(Font::Regular.width(line, 9.0) <= 300.0, "{line:?}");
        }
        let joined: usize = lines.iter().map(Vec::len).sum();
        assert!(joined >= text.len() - 4);
    }

    #[test]
    fn hostile_strings_stay_inside_string_objects() {
        let document = json!({
            "host": "evil.example", "grade": "F", "state": "CRITICAL", "scannedAt": "2026-11-22T03:00:00Z",
            "message": ") Tj ET BT /F1 99 Tf (pwned) Tj (", "waivers": [],
            "findings": [{"id": "x\\", "status": "failed", "severity": "high",
                          "detail": "((unbalanced \\) \r\n endstream", "remediation": ")"}],
        });
        let pdf = render(&crate::report::read_document(document.to_string().as_bytes()).unwrap());
        let text = String::from_utf8_lossy(&pdf);
        assert!(
            !text.contains("(pwned) Tj"),
            "an unescaped operator slipped through"
        );
        assert!(text.contains(r"\) Tj ET BT /F1 99 Tf \(pwned\) Tj \("));
    }

    #[test]
    fn empty_documents_still_render() {
        let empty = br#"{"host": "", "scannedAt": "2026-11-22T03:00:00Z", "state": "UNKNOWN", "findings": [],
                         "waivers": []}"#;
        let pdf = render(&crate::report::read_document(empty).unwrap());
        assert!(pdf.starts_with(b"%PDF-"));
    }
}
