//! The splitter: lexed tokens become simple commands, grouped in pipelines, with every nested
//! command read as well.
//!
//! Rule: a command line passes only if every simple command in it passes, so nothing that can
//! run may be left out: substitutions are read before the command that uses them, `sh -c` and
//! `eval` strings and `find -exec` clauses are read as commands, a heredoc, here-string or
//! `echo`/`printf` output piped into a shell is read as the script it is, and reserved words
//! (`if`, `then`, `do`, `{` ...) are stripped so the command after them is seen. A function
//! body's commands are read where they are defined (they may run later) and again at each call
//! with its arguments; a loop's body is read once per value of its variable; a command whose
//! expansions read two ways (`${X:-~}`) once each way. What bash evaluates as arithmetic is
//! evaluated too ([`arith`]). Text is read as the shell that runs it reads it: `sh -c` strings
//! both as dash and as bash (as `sh`) read them.
//!
//! What is read again or made (values, brace products, replays, `find -exec` per start path,
//! text printed into a shell) is charged to the line's [`Budget`]; nested reading stops at
//! [`MAX_DEPTH`]. Past either bound the rest stays as written and the script says so.

use std::collections::{HashMap, HashSet};

mod arith;
mod expand;
mod replay;
mod reserved;
mod variables;

use super::budget::{command_weight, Budget};
use super::fold;
use super::lexer::{self, Dialect, Op, Token};
use super::unwrap::{unwrap, Args, ShellCode};
use super::vars::{Reading, Vars};
use super::{basename, is_assignment, Origin, Redirect, Script, Signal, SimpleCommand, Word, MAX_DEPTH};
use replay::loop_variables;
use reserved::{close_group, open_group, strip_reserved_words};

/// Reads a command line.
pub fn parse(command: &str) -> Script {
    parse_budgeted(command).0
}

/// Reads a command line; also returns the bytes it made while reading (for the tests of the
/// bounds).
#[cfg(test)]
pub(crate) fn parse_measured(command: &str) -> (Script, usize) {
    let (script, budget) = parse_budgeted(command);
    (script, budget.spent())
}

/// Reads a command line; also returns what is left of the line's allowance, for what the
/// guardians make while following it (lookups from a working directory the line moved into).
pub(crate) fn parse_budgeted(command: &str) -> (Script, Budget) {
    let mut splitter = Splitter {
        commands: Vec::new(),
        pipelines: Vec::new(),
        functions: Vec::new(),
        signals: Vec::new(),
        vars: Vars::default(),
        seen: HashSet::new(),
        loops: HashMap::new(),
        bodies: HashMap::new(),
        replays: 0,
        replaying: 0,
        called: HashSet::new(),
        budget: Budget::for_len(command.len()),
        dialect: Dialect::Bash,
        collected: Vec::new(),
        assigned_in_replay: Vec::new(),
    };
    splitter.parse_into(command, 0, Origin::TopLevel, &[], Dialect::Bash);
    splitter.drop_called_definitions();
    if splitter.budget.exhausted() {
        splitter.signal(Signal::TooLarge);
    }
    let script = Script {
        commands: splitter.commands,
        pipelines: splitter.pipelines,
        functions: splitter.functions,
        signals: splitter.signals,
    };
    (script, splitter.budget)
}

struct Splitter {
    commands: Vec<SimpleCommand>,
    pipelines: Vec<Vec<usize>>,
    functions: Vec<String>,
    signals: Vec<Signal>,
    /// Variables set earlier in the line (`a=rm; $a -rf /`).
    vars: Vars,
    /// Substitution texts already read.
    seen: HashSet<String>,
    /// Variables that take several values: a `for NAME in a b c` loop's (`for d in / ~; do rm
    /// -rf $d; done`), or one assigned from an expansion with two readings (`d=${X:-~}`).
    loops: HashMap<String, Vec<String>>,
    /// Functions defined so far: the commands of their bodies (indices into `commands`).
    bodies: HashMap<String, Vec<usize>>,
    /// Commands emitted again for a loop value or a function call; bounded so nesting stays
    /// linear-ish and a recursive function ends.
    replays: usize,
    /// Inside a function call being read again: its commands are not a definition.
    replaying: usize,
    /// Functions called by name somewhere in the line.
    called: HashSet<String>,
    /// What the line may still make.
    budget: Budget,
    /// The shell reading the text being read.
    dialect: Dialect,
    /// Values assigned while a command is read more than one way, to become the several values
    /// of their variables.
    collected: Vec<(String, String)>,
    /// Loop variables whose values are being replayed, with what the replayed commands assigned
    /// them (`for f in *.txt; do f=${f%.txt}; ...`: f's values from there on).
    assigned_in_replay: Vec<(String, Vec<String>)>,
}

/// Values of one loop variable judged one by one before the rest is left unknown.
const MAX_LOOP_VALUES: usize = 32;
/// Commands emitted again for loops and function calls in one line.
const MAX_REPLAYS: usize = 4096;

/// One text's reading state: the command being gathered and the group it sits in.
struct Walk<'a> {
    chars: &'a [char],
    depth: usize,
    origin: Origin,
    inherited: &'a [String],
    words: Vec<Word>,
    redirects: Vec<Redirect>,
    /// Where the current command's last token ends.
    end: usize,
    pipeline: Vec<usize>,
    /// Open `{`/`(` groups.
    group_depth: usize,
    /// A function whose body is the next group.
    pending_function: Option<String>,
    /// Functions whose bodies are open, with the group depth their body closes at.
    function_stack: Vec<(String, usize)>,
}

impl Splitter {
    fn signal(&mut self, signal: Signal) {
        if !self.signals.contains(&signal) {
            self.signals.push(signal);
        }
    }

    /// Reads `text` at `depth` as `dialect` reads it; `inherited` are the wrappers of the
    /// command that runs it (`sudo sh -c '...'`: everything inside runs under sudo).
    fn parse_into(&mut self, text: &str, depth: usize, origin: Origin, inherited: &[String], dialect: Dialect) {
        if depth > MAX_DEPTH {
            self.signal(Signal::TooDeep);
            return;
        }
        let outer = std::mem::replace(&mut self.dialect, dialect);
        self.read_text(text, depth, origin, inherited);
        self.dialect = outer;
    }

    fn read_text(&mut self, text: &str, depth: usize, origin: Origin, inherited: &[String]) {
        let lexed = lexer::lex_as(text, depth, self.dialect);
        for s in lexed.signals {
            self.signal(s);
        }
        // `sh -c '((x))'`: dash runs subshells, bash as `sh` evaluates arithmetic.
        for expression in &lexed.arithmetic {
            self.arithmetic(expression, depth);
        }
        let mut walk = Walk {
            chars: &lexed.chars,
            depth,
            origin,
            inherited,
            words: Vec::new(),
            redirects: Vec::new(),
            end: 0,
            pipeline: Vec::new(),
            group_depth: 0,
            pending_function: None,
            function_stack: Vec::new(),
        };
        let mut tokens = lexed.tokens.into_iter().peekable();
        while let Some(token) = tokens.next() {
            match token {
                Token::Word(w) => {
                    walk.end = w.span.1;
                    walk.words.push(w);
                }
                Token::Redirect(r) => {
                    walk.end = walk.end.max(r.target.span.1);
                    walk.redirects.push(r);
                }
                Token::Op(Op::Pipe | Op::PipeAll) => self.finish(&mut walk, false),
                Token::Op(Op::Open) => {
                    // `name()` or `function name()` starts a function definition.
                    let is_definition = walk.redirects.is_empty()
                        && (walk.words.len() == 1 || (walk.words.len() == 2 && walk.words[0].value == "function"))
                        && matches!(tokens.peek(), Some(Token::Op(Op::Close)));
                    if is_definition {
                        tokens.next();
                        let name = walk.words.pop().map(|w| w.value).unwrap_or_default();
                        walk.words.clear();
                        self.functions.push(name.clone());
                        walk.pending_function = Some(name);
                        continue;
                    }
                    self.finish(&mut walk, false);
                    self.end_pipeline(&mut walk);
                    open_group(&mut walk);
                }
                Token::Op(Op::Close) => {
                    self.finish(&mut walk, false);
                    self.end_pipeline(&mut walk);
                    close_group(&mut walk);
                }
                Token::Op(op) => {
                    self.finish(&mut walk, op == Op::Background);
                    self.end_pipeline(&mut walk);
                }
            }
        }
        // The last command often holds the rest of the text (`eval ...`, `sh -c ...`): free the
        // tokens before it is read again one level down, so a level holds what it still needs.
        drop(tokens);
        self.finish(&mut walk, false);
        self.end_pipeline(&mut walk);
    }

    fn end_pipeline(&mut self, walk: &mut Walk<'_>) {
        if walk.pipeline.is_empty() {
            return;
        }
        let stages = std::mem::take(&mut walk.pipeline);
        let id = self.pipelines.len();
        for (stage, &index) in stages.iter().enumerate() {
            self.commands[index].pipeline = id;
            self.commands[index].stage = stage;
        }
        // Claim the id before reading anything nested, which adds pipelines of its own.
        self.pipelines.push(stages.clone());
        // `echo 'rm -rf /' | sh`: what is echoed is the script the shell runs.
        for pair in stages.windows(2) {
            let (left, right) = (&self.commands[pair[0]], &self.commands[pair[1]]);
            if !right.runs_stdin_as_shell() {
                continue;
            }
            let (depth, inherited) = (left.depth + 1, right.wrappers.clone());
            // Unknown words are read as written: the script is judged with them unknown.
            let dialect = self.commands[pair[1]].program.as_deref().map_or(self.dialect, Dialect::of);
            let Some(text) = self.printed_by(pair[0], false) else {
                // Not an `echo` or `printf`; or, for one, past the budget.
                if matches!(self.commands[pair[0]].program.as_deref(), Some("echo" | "printf")) {
                    self.budget.give_up();
                }
                continue;
            };
            // A shell reading a script on its input has positional parameters of its own.
            let code = ShellCode { text, args: Args::Unknown, dialect: Some(dialect) };
            self.run_code(&code, depth, &inherited, Origin::Stdin);
        }
    }

    /// Ends the command gathered so far (at an operator or the end of the text).
    fn finish(&mut self, walk: &mut Walk<'_>, background: bool) {
        let mut words = std::mem::take(&mut walk.words);
        let redirects = std::mem::take(&mut walk.redirects);
        // Nested commands run before the command that uses them; read them first, whatever
        // happens to the words below (a `for` header's `$(ls /)` runs too).
        for w in words.iter().chain(redirects.iter().map(|r| &r.target)) {
            for nested in &w.nested {
                // `sh -c "$(x)"` meets `x` twice (in the word, then in the string it runs):
                // read each text once, so nesting costs linear work, not exponential.
                if self.seen.insert(nested.text.clone()) {
                    self.parse_into(&nested.text, walk.depth + 1, Origin::Substitution, &[], self.dialect);
                }
            }
        }
        // So does the arithmetic they hold (`for ((...))`, `$((x))`, `${a[i]}`), and what it runs.
        for w in words.iter().chain(redirects.iter().map(|r| &r.target)) {
            for expression in &w.arithmetic {
                self.arithmetic(expression, walk.depth);
            }
        }
        let stripped = strip_reserved_words(&mut words, walk);
        if let Some(name) = stripped.defined {
            self.functions.push(name);
        }
        if let Some((name, values)) = stripped.loop_values {
            let values = self.loop_values(values);
            self.loops.insert(name, values);
        }
        if words.is_empty() && redirects.is_empty() {
            return;
        }
        let function = walk.function_stack.last().map(|(name, _)| name.clone());
        let end = walk.end;
        // What an `echo` before it in the pipeline feeds the command, when the reader knows it
        // (its own here-string or heredoc is read in `emit`, once its target is expanded).
        let stdin = walk.pipeline.last().and_then(|&i| self.printed_by(i, true));
        let at = Position {
            chars: walk.chars,
            end,
            depth: walk.depth,
            origin: walk.origin,
            inherited: walk.inherited,
            stdin: stdin.as_deref(),
        };
        let mut loops = loop_variables(&words, &redirects, &self.loops);
        // One level of replay per loop variable the command reads: bounded like nesting.
        if loops.len() > MAX_DEPTH {
            self.signal(Signal::TooDeep);
            loops.truncate(MAX_DEPTH);
        }
        let first = if loops.is_empty() {
            // Read once: the words move on (no copy held while what they run is read).
            self.emit(words, redirects, &at, background, function)
        } else {
            self.emit_each_value(&loops, &words, &redirects, &at, background, function.as_deref())
        };
        if let Some(index) = first {
            walk.pipeline.push(index);
        }
    }

    /// Unwraps and records one command (and what it runs); returns its index when it stays a
    /// command of its own. A command whose words hold an expansion with two readings
    /// (`rm -rf ${X:-~}`) is read once each way ([`Reading`]): the first reading counts them.
    fn emit(
        &mut self,
        words: Vec<Word>,
        redirects: Vec<Redirect>,
        at: &Position<'_>,
        background: bool,
        function: Option<String>,
    ) -> Option<usize> {
        let braced = words.iter().chain(redirects.iter().map(|r| &r.target)).any(|w| w.value.contains("${"));
        let copies = braced.then(|| (words.clone(), redirects.clone()));
        let outer = self.vars.begin_reading(Reading::of(0));
        let collected = std::mem::take(&mut self.collected);
        let mut first = self.emit_reading(words, redirects, at, background, function.clone());
        let met = self.vars.reading().met();
        if let Some((words, redirects)) = copies.filter(|_| met > 0) {
            for mask in 1..(1u32 << met) {
                if self.replays >= MAX_REPLAYS {
                    self.signal(Signal::TooDeep);
                    break;
                }
                if !self.budget.take(command_weight(&words, &redirects)) {
                    break;
                }
                self.replays += 1;
                self.vars.begin_reading(Reading::of(mask));
                let index = self.emit_reading(words.clone(), redirects.clone(), at, background, function.clone());
                first = first.or(index);
            }
        }
        let mine = std::mem::replace(&mut self.collected, collected);
        self.settle_readings(mine);
        self.vars.begin_reading(outer);
        first
    }

    /// [`Splitter::emit`] for one reading.
    fn emit_reading(
        &mut self,
        words: Vec<Word>,
        redirects: Vec<Redirect>,
        at: &Position<'_>,
        background: bool,
        function: Option<String>,
    ) -> Option<usize> {
        let (chars, end, depth, origin) = (at.chars, at.end, at.depth, at.origin);
        // `find . -exec find . -exec ...` nests through here without a text to read.
        if depth > MAX_DEPTH {
            self.signal(Signal::TooDeep);
            return None;
        }
        // A function's body, where it is defined, has its own `$1`, `$@`: unknown until a call.
        let defining = function.is_some() && self.replaying == 0;
        let caller = defining.then(|| self.vars.save_positionals());
        if defining {
            self.vars.set_positionals(None);
        }
        let (words, redirects) = self.expand(words, redirects);
        if let Some(caller) = caller {
            self.vars.restore_positionals(caller);
        }
        // `${x@P}`: a prompt string's substitutions run.
        for prompt in self.vars.take_prompts() {
            self.evaluate_code(&prompt, depth);
        }
        // `$SHELL -c '...'`: the user's shell, whatever it is, runs the string as a script.
        let mut words = words;
        if let Some(first) = words.first_mut() {
            if matches!(first.value.as_str(), "$SHELL" | "${SHELL}" | "$BASH" | "${BASH}")
                && !self.vars.contains_key("SHELL")
            {
                first.value = "bash".to_string();
                first.expands = false;
            }
        }
        // What it reads on its standard input: its own here-string or heredoc (all a `read`
        // sees), else what the pipeline feeds it.
        let own_stdin = given_on_stdin(&redirects);
        let unwrapped = unwrap(words, at.stdin.or(own_stdin.as_deref()), &mut self.budget);
        let mut wrappers = at.inherited.to_vec();
        wrappers.extend(unwrapped.wrappers);
        for code in &unwrapped.scripts {
            self.run_code(code, depth + 1, &wrappers, Origin::ShellString);
        }
        let mut assignments = unwrapped.assignments;
        let words = unwrapped.words;
        let declares = words
            .first()
            .is_some_and(|w| matches!(basename(&w.value), "export" | "declare" | "typeset" | "local" | "readonly"));
        if declares {
            assignments.extend(words[1..].iter().filter(|w| is_assignment(w)).cloned());
        }
        // Variables whose value bash itself runs as code (an interactive shell's prompt hook).
        for a in &assignments {
            if let Some(code) = a.value.strip_prefix("PROMPT_COMMAND=") {
                self.parse_into(code, depth + 1, Origin::ShellString, &wrappers, Dialect::Bash);
            }
        }
        self.arithmetic_of_command(&words, &assignments, depth);
        if declares || words.is_empty() {
            self.note_assignments(&assignments, declares.then_some(&words[..]));
        }
        self.note_variables_set(&words, own_stdin.as_deref());
        if words.is_empty() && redirects.is_empty() && assignments.is_empty() {
            return None;
        }
        let (program, dynamic) = match words.first() {
            Some(w) => {
                let (p, d) = self.resolve_program(w);
                (Some(p), d)
            }
            None => (None, false),
        };
        let raw = match words.first() {
            Some(w) if w.span.0 < end && end <= chars.len() => chars[w.span.0..end].iter().collect(),
            _ => String::new(),
        };
        let stdin_text: Vec<String> = redirects
            .iter()
            .filter_map(|r| match r.op {
                super::RedirectOp::HereString => Some(r.target.value.clone()),
                _ => r.body.clone(),
            })
            .collect();
        let mut command = SimpleCommand {
            program,
            dynamic,
            words,
            assignments,
            redirects,
            wrappers: wrappers.clone(),
            stdin_text,
            depth,
            origin,
            pipeline: 0,
            stage: 0,
            background,
            function,
            chdir: unwrapped.chdir.clone(),
            raw: String::new(),
        };
        command.raw = if raw.trim().is_empty() { command.text() } else { raw.trim().to_string() };
        // A heredoc or here-string given to a shell is a script.
        let shell_stdin = command.runs_stdin_as_shell();
        let mut stdin_scripts = if shell_stdin { command.stdin_text.clone() } else { Vec::new() };
        // `source <(echo 'rm -rf ~')`, `bash <(printf ...)`: what the substitution prints is
        // the script it runs.
        let runs_a_file = command.program.as_deref().is_some_and(|p| matches!(p, "source" | ".") || super::is_shell(p));
        if runs_a_file {
            for w in command.words.iter().skip(1) {
                for n in w.nested.iter().filter(|n| n.kind == super::NestedKind::Process) {
                    stdin_scripts.extend(fold::output(&n.text, &mut self.vars, &mut self.budget));
                }
            }
        }
        // `source` runs it in this shell; a shell as the shell it is.
        let stdin_dialect = match command.program.as_deref() {
            Some(p) if super::is_shell(p) => Dialect::of(p),
            _ => self.dialect,
        };
        let clauses = unwrapped.commands;
        let call = command
            .program
            .as_ref()
            .filter(|p| self.bodies.contains_key(p.as_str()) && command.function.as_ref() != Some(p))
            .map(|p| (p.clone(), command.words[1..].to_vec()));
        if let Some(name) = command.function.as_ref().filter(|_| self.replaying == 0) {
            self.bodies.entry(name.clone()).or_default().push(self.commands.len());
        }
        self.commands.push(command);
        let index = self.commands.len() - 1;
        if let Some((name, args)) = call {
            self.called.insert(name.clone());
            self.call_function(&name, &args, depth + 1, &wrappers);
        }
        for text in stdin_scripts {
            let code = ShellCode { text, args: Args::Unknown, dialect: Some(stdin_dialect) };
            self.run_code(&code, depth + 1, &wrappers, Origin::Stdin);
        }
        let clause_at = Position {
            chars: &[],
            end: 0,
            depth: depth + 1,
            origin: Origin::FindExec,
            inherited: &wrappers,
            stdin: None,
        };
        for clause in clauses {
            self.emit(clause, Vec::new(), &clause_at, false, None);
        }
        Some(index)
    }

    /// Reads a string run as shell code, with the positional parameters it runs with.
    fn run_code(&mut self, code: &ShellCode, depth: usize, wrappers: &[String], origin: Origin) {
        let dialect = code.dialect.unwrap_or(self.dialect);
        let bound = match &code.args {
            Args::Current => None,
            Args::New(args) => {
                let saved = self.vars.save_positionals();
                self.vars.set_zero(args.first().cloned());
                self.vars.set_positionals(Some(args.iter().skip(1).cloned().collect()));
                Some(saved)
            }
            Args::Unknown => {
                let saved = self.vars.save_positionals();
                self.vars.set_zero(None);
                self.vars.set_positionals(None);
                Some(saved)
            }
        };
        self.parse_into(&code.text, depth, origin, wrappers, dialect);
        if let Some(saved) = bound {
            self.vars.restore_positionals(saved);
        }
    }

    /// The program's basename, following `$(which rm)` and what [`fold`] and the line's
    /// variables made of the word; dynamic when any of it is only known at run time (an
    /// unresolved expansion or substitution, a glob: `/???/r?`).
    fn resolve_program(&self, word: &Word) -> (String, bool) {
        if let Some(inner) = &word.whole_substitution {
            let lexed = lexer::lex(inner, MAX_DEPTH);
            let words: Vec<&str> = lexed
                .tokens
                .iter()
                .filter_map(|t| match t {
                    Token::Word(w) if !w.expands => Some(w.value.as_str()),
                    _ => None,
                })
                .collect();
            // Only what names one program and prints it alone.
            let named = match words.as_slice() {
                ["which" | "realpath", name] => Some(*name),
                ["command", "-v", name] | ["type", "-P" | "-p", name] | ["readlink", "-f" | "-e", name] => Some(*name),
                _ => None,
            };
            return match named {
                Some(name) if !name.starts_with('-') => (basename(name).to_string(), false),
                _ => (word.value.clone(), true),
            };
        }
        let value = word.value.as_str();
        let unknown = word.expands && (value.contains('$') || value.contains('`'));
        let globbed = !word.quoted && value.contains(['*', '?', '[']) && !matches!(value, "[" | "[[");
        if !unknown && !globbed {
            return (basename(value).to_string(), false);
        }
        // The user's shell: whatever it is, it runs `-c` strings as one.
        if matches!(value, "$SHELL" | "${SHELL}" | "$BASH" | "${BASH}") && !self.vars.contains_key("SHELL") {
            return ("bash".to_string(), false);
        }
        (value.to_string(), true)
    }
}

/// Where a command sits: its text, its end in it, how deep, where from, under which wrappers,
/// and what the pipeline feeds its standard input when that is known.
struct Position<'a> {
    chars: &'a [char],
    end: usize,
    depth: usize,
    origin: Origin,
    inherited: &'a [String],
    stdin: Option<&'a str>,
}

/// The text a command's own here-string or heredoc gives it.
fn given_on_stdin(redirects: &[Redirect]) -> Option<String> {
    redirects.iter().rev().find_map(|r| match r.op {
        super::RedirectOp::HereString if !r.target.expands => Some(format!("{}\n", r.target.value)),
        super::RedirectOp::HereDoc { .. } if r.target.quoted || r.target.nested.is_empty() => r.body.clone(),
        _ => None,
    })
}
