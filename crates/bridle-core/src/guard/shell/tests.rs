//! The reader on the forms bash accepts: quoting, operators, redirections, heredocs, nesting
//! and wrappers.
#![allow(clippy::unwrap_used)]

use pretty_assertions::assert_eq;

use super::*;

fn programs(line: &str) -> Vec<String> {
    parse(line).commands.iter().map(|c| c.program.clone().unwrap_or_else(|| "<none>".into())).collect()
}

fn texts(line: &str) -> Vec<String> {
    parse(line).commands.iter().map(SimpleCommand::text).collect()
}

fn one(line: &str) -> SimpleCommand {
    let script = parse(line);
    assert_eq!(script.commands.len(), 1, "{line}: {:?}", script.commands);
    script.commands.into_iter().next().unwrap()
}

#[test]
fn splits_on_every_control_operator() {
    assert_eq!(
        programs("a && b || c; d | e |& f & g\nh (i) { j; }"),
        ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
    );
    let script = parse("git status && rm -rf ~");
    assert_eq!(texts("git status && rm -rf ~"), ["git status", "rm -rf ~"]);
    assert_eq!(script.commands[1].raw, "rm -rf ~");
}

#[test]
fn quotes_are_removed_and_operators_inside_them_are_text() {
    let c = one(r#"echo "a && b" 'c; d' e\ f"#);
    let values: Vec<&str> = c.words.iter().map(|w| w.value.as_str()).collect();
    assert_eq!(values, ["echo", "a && b", "c; d", "e f"]);
    assert_eq!(one(r#""rm" -rf x"#).program.as_deref(), Some("rm"));
    assert_eq!(one("r''m -rf x").program.as_deref(), Some("rm"));
    assert_eq!(one(r"\rm -rf x").program.as_deref(), Some("rm"));
    assert_eq!(one("/bin/rm -rf x").program.as_deref(), Some("rm"));
    assert_eq!(one(r#"echo "rm -rf /""#).program.as_deref(), Some("echo"));
}

#[test]
fn redirections_keep_their_descriptor_and_target() {
    let c = one("cargo build 2>&1 >out.log 3<>/dev/tcp/h/1 &>> all.log < in.txt");
    let r: Vec<(String, String)> = c.redirects.iter().map(|r| (r.operator(), r.target.value.clone())).collect();
    assert_eq!(
        r,
        [
            ("2>&".to_string(), "1".to_string()),
            (">".into(), "out.log".into()),
            ("3<>".into(), "/dev/tcp/h/1".into()),
            ("&>>".into(), "all.log".into()),
            ("<".into(), "in.txt".into())
        ]
    );
    assert!(c.redirects[0].file().is_none(), "2>&1 is a descriptor, not a file");
    assert_eq!(c.redirects[1].file().map(|(w, writes)| (w.value.as_str(), writes)), Some(("out.log", true)));
    assert_eq!(c.text(), "cargo build 2>&1 >out.log 3<>/dev/tcp/h/1 &>>all.log <in.txt");
}

#[test]
fn a_quoted_heredoc_is_data_and_an_unquoted_one_runs_its_substitutions() {
    let script = parse("cat <<'EOF' > notes.md\nrm -rf / $(reboot)\nEOF\necho done");
    assert_eq!(programs("cat <<'EOF' > notes.md\nrm -rf / $(reboot)\nEOF\necho done"), ["cat", "echo"]);
    assert!(script.signals.is_empty(), "{:?}", script.signals);
    assert_eq!(script.commands[0].stdin_text, ["rm -rf / $(reboot)\n"]);
    let script = parse("cat <<EOF\nhello $(reboot)\nEOF");
    assert_eq!(script.commands.iter().map(|c| c.program.clone().unwrap()).collect::<Vec<_>>(), ["reboot", "cat"]);
    assert!(script.signals.contains(&Signal::CommandSubstitution { quoted: true }));
    // `<<-` strips leading tabs, so an indented terminator ends it.
    assert_eq!(programs("cat <<-END\n\tline\n\tEND\nls"), ["cat", "ls"]);
}

#[test]
fn a_heredoc_or_echo_fed_to_a_shell_is_read_as_a_script() {
    assert_eq!(programs("bash <<'EOF'\nrm -rf /\nEOF"), ["bash", "rm"]);
    assert_eq!(programs("sh <<< 'reboot'"), ["sh", "reboot"]);
    assert_eq!(programs("echo 'rm -rf ~' | sh"), ["echo", "sh", "rm"]);
    assert_eq!(programs("python3 <<'EOF'\nimport os\nEOF"), ["python3"]);
}

#[test]
fn substitutions_are_read_first_and_flagged() {
    let script = parse(r#"echo "$(whoami)" `date` <(ls) $((1 + $(id -u))) $(pwd)"#);
    assert_eq!(
        script.commands.iter().map(|c| c.program.clone().unwrap()).collect::<Vec<_>>(),
        ["whoami", "date", "ls", "id", "pwd", "echo"]
    );
    for s in [
        Signal::CommandSubstitution { quoted: true },
        Signal::Backtick,
        Signal::ProcessSubstitution,
        Signal::CommandSubstitution { quoted: false },
    ] {
        assert!(script.signals.contains(&s), "{s:?} in {:?}", script.signals);
    }
    assert_eq!(programs("echo ${x:-$(reboot)}"), ["reboot", "echo", "echo"]);
}

#[test]
fn wrappers_are_unwrapped_with_their_options() {
    for (line, program, wrappers) in [
        ("env -u BAR FOO=1 rm x", "rm", vec!["env"]),
        ("env -i PATH=/bin rm x", "rm", vec!["env"]),
        ("command rm x", "rm", vec!["command"]),
        ("builtin cd x", "cd", vec!["builtin"]),
        ("exec -a name rm x", "rm", vec!["exec"]),
        ("nice -n 10 rm x", "rm", vec!["nice"]),
        ("nice -10 rm x", "rm", vec!["nice"]),
        ("nohup rm x &", "rm", vec!["nohup"]),
        ("timeout -s KILL 5 rm x", "rm", vec!["timeout"]),
        ("timeout 10s cargo test", "cargo", vec!["timeout"]),
        ("time -p cargo build", "cargo", vec!["time"]),
        ("xargs -0 -n 1 -I{} rm {}", "rm", vec!["xargs"]),
        ("xargs -P 4 -n1 rm", "rm", vec!["xargs"]),
        ("sudo -u root -E rm x", "rm", vec!["sudo"]),
        ("sudo env FOO=1 nice timeout 3 rm x", "rm", vec!["sudo", "env", "nice", "timeout"]),
        ("env -S 'rm -rf x'", "rm", vec!["env"]),
        ("python3 -m pip install x", "pip", vec!["python3"]),
        ("busybox rm x", "rm", vec!["busybox"]),
        ("stdbuf -oL rm x", "rm", vec!["stdbuf"]),
    ] {
        let c = one(line);
        assert_eq!(c.program.as_deref(), Some(program), "{line}");
        assert_eq!(c.wrappers, wrappers, "{line}");
    }
    assert_eq!(one("command -v rm").program.as_deref(), Some("command"), "a lookup, not a run");
    assert_eq!(one("sudo -i").program.as_deref(), Some("sudo"), "a root shell");
    assert_eq!(one("env").program.as_deref(), Some("env"));
    assert_eq!(one("xargs").program.as_deref(), Some("xargs"));
    assert_eq!(one("FOO=1 BAR=2 cargo test").assignments.len(), 2);
}

#[test]
fn shell_strings_and_eval_are_read_as_scripts_under_their_wrappers() {
    assert_eq!(programs("bash -c 'git status; rm -rf ~'"), ["git", "rm"]);
    assert_eq!(programs("sh -lc \"ls && reboot\""), ["ls", "reboot"]);
    assert_eq!(programs("eval 'rm -rf' '~'"), ["rm"]);
    let script = parse("sudo sh -c 'rm -rf /'");
    assert_eq!(script.commands[0].program.as_deref(), Some("rm"));
    assert!(script.commands[0].wrappers.contains(&"sudo".to_string()));
    assert_eq!(programs("su -c 'reboot' root"), ["reboot"]);
    assert_eq!(programs("watch -n 5 'ls; reboot'"), ["ls", "reboot"]);
    assert_eq!(programs("bash script.sh"), ["bash"], "a script file is not unwrapped");
}

#[test]
fn find_exec_runs_on_find_start_paths() {
    let script = parse(r"find ~ /etc -exec rm -rf {} \;");
    let t: Vec<String> = script.commands.iter().map(SimpleCommand::text).collect();
    assert_eq!(t, [r"find ~ /etc -exec rm -rf {} ;", "rm -rf ~", "rm -rf /etc"]);
    assert_eq!(texts("find . -name '*.rs' -exec wc -l {} +"), ["find . -name *.rs -exec wc -l {} +", "wc -l ."]);
    // A name test the start folder cannot pass: `{}` is beneath it, never the folder itself.
    assert_eq!(
        texts(r"find ~ /etc -name x -exec rm -rf {} \;"),
        [r"find ~ /etc -name x -exec rm -rf {} ;", "rm -rf ~/\u{2026}", "rm -rf /etc/\u{2026}"]
    );
    assert_eq!(texts("find . -name x -o -name y -exec rm {} +")[1], "rm .", "alternatives make it unsure");
}

#[test]
fn the_program_behind_which_and_variables_is_found() {
    assert_eq!(programs("$(which rm) -rf x"), ["which", "rm"]);
    assert_eq!(parse("`command -v rm` -rf x").commands.last().unwrap().program.as_deref(), Some("rm"));
    assert_eq!(programs("x=rm; $x -rf /"), ["<none>", "rm"]);
    // `$RM` may be unset or empty: read as the environment's program, and as `rm`.
    assert_eq!(programs("${RM:-rm} -rf x"), ["${RM}", "rm"]);
    assert_eq!(parse("$(echo rm) -rf x").commands[1].program.as_deref(), Some("rm"));
    let c = one("$CMD arg");
    assert!(c.dynamic);
}

#[test]
fn reserved_words_are_stripped_and_functions_noted() {
    assert_eq!(programs("if grep -q x f; then rm y; else echo z; fi"), ["grep", "rm", "echo"]);
    assert_eq!(programs("for f in *.rs; do wc -l \"$f\"; done"), ["wc"]);
    assert_eq!(programs("while read l; do echo $l; done < in.txt"), ["read", "echo", "<none>"]);
    let script = parse(":(){ :|:& };:");
    assert_eq!(script.functions, [":"]);
    // The call reads the body (in place of its definition); the recursion inside is not followed.
    let inside: Vec<_> = script.commands.iter().filter(|c| c.function.is_some()).collect();
    assert_eq!(inside.len(), 2);
    assert!(inside.iter().all(|c| c.origin == Origin::ShellString));
    assert!(inside[1].background);
    assert_eq!(script.pipelines[inside[0].pipeline].len(), 2, "still a pipeline");
    // Never called: the definition is what is judged.
    assert_eq!(parse("f(){ rm x; }").commands.len(), 1);
    assert_eq!(programs("[[ -f a && -f b ]] && ls"), ["[[", "ls"]);
}

/// Every `rm` command's arguments, as the guard reads them.
fn rm_args(line: &str) -> Vec<Vec<String>> {
    parse(line)
        .commands
        .iter()
        .filter(|c| c.program.as_deref() == Some("rm"))
        .map(|c| c.args().iter().map(|w| w.value.clone()).collect())
        .collect()
}

#[test]
fn a_loop_body_is_read_once_per_value() {
    assert_eq!(
        rm_args("for d in / ~/x{1,2}; do rm -rf $d; done"),
        [vec!["-rf", "/"], vec!["-rf", "~/x1"], vec!["-rf", "~/x2"]]
    );
    assert_eq!(rm_args("D=/e; for t in a b; do rm \"$D${t}\"; done"), [vec!["/ea"], vec!["/eb"]]);
    // Nested loops: every pair.
    assert_eq!(rm_args("for a in x y; do for b in 1 2; do rm $a$b; done; done").len(), 4);
    // Without `in` the values are the script's arguments: unknown, left as written.
    assert_eq!(rm_args("{rm,-rf,/};ls"), [vec!["-rf", "/"]], "a word right before `;` expands too");
    assert_eq!(rm_args("for d; do rm -rf $d; done"), [vec!["-rf", "$d"]]);
    // A word that only looks like the variable is not it.
    assert_eq!(rm_args("for d in /; do rm -rf $dd; done"), [vec!["-rf", "$dd"]]);
}

#[test]
fn a_function_call_reads_its_body_with_the_arguments() {
    let calls = rm_args("f(){ rm -rf \"$@\"; }; f / ~");
    assert_eq!(calls, [vec!["-rf", "/", "~"]]);
    // A program only known at run time could call it with anything: the definition stays.
    assert_eq!(rm_args("f(){ rm -rf \"$@\"; }; f x; $cmd"), [vec!["-rf", "$@"], vec!["-rf", "x"]]);
    assert_eq!(rm_args("function g { sudo rm -r \"$1/$2\"; }; g /etc x").last().unwrap(), &["-r", "/etc/x"]);
    let script = parse("function g { sudo rm -r \"$1\"; }; g /etc");
    assert_eq!(script.commands.last().unwrap().wrappers, ["sudo"], "the body's wrappers stay");
    // Mutual recursion ends.
    let script = parse("a(){ b; }; b(){ a; rm x; }; a");
    assert!(script.commands.len() < 64, "{}", script.commands.len());
}

#[test]
fn lexical_tricks_raise_signals() {
    for (line, signal) in [
        ("echo $'\\x72\\x6d'", Signal::AnsiCQuote),
        ("cat my\\ file", Signal::EscapedWhitespace),
        ("r\\\nm -rf x", Signal::ContinuationInWord),
        ("ls\u{1b}[2K", Signal::ControlChar('\u{1b}')),
        ("ls\u{a0}-la", Signal::UnicodeSpace('\u{a0}')),
        ("echo 'a\u{202e}b'", Signal::Invisible('\u{202e}')),
        ("echo ${!name}", Signal::Indirection),
        ("cat${IFS}/etc/passwd", Signal::IfsExpansion),
        ("echo 'unterminated", Signal::Unbalanced),
    ] {
        assert!(parse(line).signals.contains(&signal), "{line:?}: {:?}", parse(line).signals);
    }
    for line in ["echo '$(not run)' \"$HOME\" ${PATH} # $(comment)", "cargo build \\\n  --release", "echo \"a\u{a0}b\""]
    {
        assert!(parse(line).signals.is_empty(), "{line:?}: {:?}", parse(line).signals);
    }
}

#[test]
fn nesting_is_bounded() {
    let mut line = "ls".to_string();
    for _ in 0..40 {
        line = format!("eval \"$({line})\"");
    }
    let script = parse(&line);
    assert!(script.signals.contains(&Signal::TooDeep));
    assert!(script.commands.len() < 40, "{}", script.commands.len());
}

#[test]
fn flags_and_positionals() {
    let c = one("rm -rf --verbose -- -x y");
    assert!(c.has_flag("r") && c.has_flag("f") && c.has_flag("--verbose"));
    assert!(!c.has_flag("x"), "after --, -x is a file");
    let p: Vec<&str> = c.positionals().iter().map(|w| w.value.as_str()).collect();
    assert_eq!(p, ["-x", "y"]);
}

#[test]
fn random_shell_text_never_panics() {
    use rand::{Rng, SeedableRng};
    const PIECES: &[&str] = &[
        "$", "(", ")", "{", "}", "[", "]", "'", "\"", "`", "\\", "\n", " ", "\t", ";", "&", "|", "<", ">", "#", "!",
        "=", "*", "?", "~", "-", "$(", "${", "$'", "<<", "<<-", "<<'E'", "E", "\\c", "\\x", "\\u", "rm", "-rf", "/",
        "sh", "-c", "eval", "find", "-exec", "{}", "\\;", "sudo", "é", "\u{a0}", "\u{202e}", "\u{1b}", "0", "9",
        "2>&1", ":", "()", "x=", "IFS", "!x", "((", "))", "[[", "]]",
    ];
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for _ in 0..3_000 {
        let len = rng.random_range(0..60);
        let text: String = (0..len).map(|_| PIECES[rng.random_range(0..PIECES.len())]).collect();
        let script = parse(&text);
        for c in &script.commands {
            let _ = (c.text(), c.positionals(), c.reads_code_from_stdin());
        }
    }
}

#[test]
fn long_and_deep_input_is_read_in_bounded_time() {
    let start = std::time::Instant::now();
    let long = "echo a && ".repeat(20_000) + "ls";
    assert_eq!(parse(&long).commands.len(), 20_001);
    let deep = "${x:-".repeat(5_000) + &"}".repeat(5_000);
    let _ = parse(&format!("echo {deep}"));
    let subs = "$(".repeat(5_000) + &")".repeat(5_000);
    assert!(parse(&format!("echo {subs}")).signals.contains(&Signal::TooDeep));
    // 100,000 nested groups once took 18 s (reserved words removed from the front one by one).
    let nested = format!("{}rm -rf /{}", "{ ".repeat(100_000), "; }".repeat(100_000));
    let script = parse(&nested);
    assert!(script.commands.iter().any(|c| c.text().starts_with("rm -rf /")), "the inner command is read");
    assert!(start.elapsed() < std::time::Duration::from_secs(10), "{:?}", start.elapsed());
}

/// A small deterministic generator (xorshift), so a failure names its seed and replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

/// Pieces of shell that stress the reader: quotes, substitutions, groups, heredocs, loops,
/// functions, expansions, escapes and stray operators, in any order.
const FRAGMENTS: &[&str] = &[
    "rm -rf /",
    " ",
    "  ",
    ";",
    "&&",
    "||",
    "|",
    "&",
    "\n",
    "'",
    "\"",
    "`",
    "$(",
    ")",
    "(",
    "{",
    "}",
    "{a,b}",
    "$x",
    "${x:-/}",
    "${!x}",
    "$@",
    "$1",
    "\\",
    "\\\n",
    "<<EOF\n",
    "EOF\n",
    "<<<",
    ">",
    "2>&1",
    "<(",
    "x=/",
    "IFS=/",
    "for d in / ~; do ",
    "done",
    "f(){ ",
    "f /",
    "function g { ",
    "g x",
    "cd -",
    "cd /",
    "pushd /",
    "popd",
    "sudo ",
    "env -C / ",
    "sh -c '",
    "eval ",
    "find . -exec rm {} \\;",
    "echo ",
    "printf '\\x72'",
    "#",
    "!",
    "if ",
    "then ",
    "fi",
    "case x in",
    "esac",
    "$'\\x41'",
    "\u{200b}",
    "\u{a0}",
    "é",
    "~",
    "*",
    "while :; do ",
    "select s in a; do ",
    "alias a='rm -rf /'; a",
    "xargs ",
    "| bash",
    "timeout 5 ",
];

/// Random lines never make the reader panic, and what it returns grows at most linearly with
/// the input (bounded replays for loops and calls included).
#[test]
fn random_lines_never_panic_and_the_reading_stays_linear() {
    for seed in 1..=20_000u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let pieces = 1 + (rng.next() % 120) as usize;
        let line: String = (0..pieces).map(|_| rng.pick(FRAGMENTS)).collect();
        let script =
            std::panic::catch_unwind(|| parse(&line)).unwrap_or_else(|_| panic!("seed {seed} panicked: {line:?}"));
        let words: usize = script.commands.iter().map(|c| c.words.len() + c.redirects.len()).sum();
        let bound = 40 * line.len() + 64 * (script.commands.len().min(4_096));
        assert!(words <= bound, "seed {seed}: {words} words from {} bytes: {line:?}", line.len());
        for (id, pipeline) in script.pipelines.iter().enumerate() {
            for &i in pipeline {
                assert_eq!(script.commands[i].pipeline, id, "seed {seed}: pipeline ids hold: {line:?}");
            }
        }
    }
    // Growth: the same hostile pattern at 1x and 16x reads into 16x as much, not more.
    for unit in ["for d in / ~; do f(){ rm -rf \"$@\" $d; }; f $d; done; ", "{ x=$(y); ", "a=/; rm $a{b,c}; "] {
        let small = parse(&unit.repeat(64));
        let large = parse(&unit.repeat(1_024));
        let (s, l) = (small.commands.len().max(1), large.commands.len());
        assert!(l <= 16 * s + 4_096 + 16, "{unit:?}: {s} commands at 64 repeats, {l} at 1024");
    }
}

#[test]
fn inline_interpreter_code_names_its_paths() {
    let paths = |line: &str| -> Vec<(String, bool)> {
        let script = parse(line);
        let cmd = script.commands.last().unwrap();
        // The code word itself is also a (never judged) guess; only the places it names count.
        let named = operands::operands(cmd).into_iter().filter(|o| !o.path.contains([' ', '(', '`']));
        named.map(|o| (o.path, o.writes)).collect()
    };
    assert_eq!(paths("python3 -c \"import os; os.remove('/etc/x')\""), [("/etc/x".to_string(), true)]);
    assert_eq!(paths("perl -e 'print `cat ~/.ssh/id_rsa`'"), [("~/.ssh/id_rsa".to_string(), false)]);
    assert_eq!(paths("node -e 'fs.writeFileSync(\"../x\", 1)'"), [("../x".to_string(), true)]);
    assert_eq!(paths("ruby -e 'File.write(\"/etc/cron.d/x\", \"y\")'"), [("/etc/cron.d/x".to_string(), true)]);
    assert_eq!(paths("python3 -Wignore -c 'print(\"a/b\", \"https://x/y\")'"), []);
    assert_eq!(paths("python3.12 -c 'open(\"/etc/hosts\")'"), [("/etc/hosts".to_string(), false)]);
}

/// `((` is arithmetic only where bash reads it so (closed by `))`); otherwise two subshells whose
/// commands run, and in `sh` (dash) always. `$((...))` whose parentheses do not balance is a
/// command substitution.
#[test]
fn double_parentheses_are_read_as_bash_reads_them() {
    assert_eq!(programs("((rm -rf ~) )"), ["rm"]);
    assert_eq!(programs("((rm x);true)"), ["rm", "true"]);
    assert_eq!(programs("((i++))"), ["((i++))"]);
    assert_eq!(parse("for ((i=0;i<3;i++)); do echo $i; done").commands.len(), 1);
    assert_eq!(parse("for((i=0;i<3;i++)); do echo $i; done").commands.len(), 1);
    assert_eq!(programs("sh -c '((rm x))'"), ["rm"]);
    assert_eq!(programs("echo $((rm x)|(cat))"), ["rm", "cat", "echo"]);
    assert_eq!(programs("echo $((1+(2)))"), ["echo"]);
}

/// Positional parameters: `set --`, `shift`, a call's arguments, `sh -c CODE NAME ARGS`.
#[test]
fn positional_parameters_are_bound() {
    assert_eq!(texts("set -- a b; shift; rm \"$@\"")[2], "rm b");
    assert_eq!(texts("bash -c 'rm \"$1\" \"$0\"' x y"), ["rm y x"]);
    assert_eq!(texts("f() { shift; rm \"$@\"; }; f a b c"), ["f a b c", "shift", "rm b c"]);
    assert_eq!(texts("set -- a; f() { rm \"$1\"; }; f b")[2], "rm b", "the call's, not the line's");
    // What may be any number of words leaves them unknown, never empty.
    assert_eq!(texts("set -- $(cat f); rm \"$2\"")[2], "rm $2");
    assert_eq!(texts("echo /x | xargs sh -c 'rm \"$1\"' _")[1], "rm $1");
}
