#![allow(clippy::unwrap_used)]
use super::*;

#[test]
fn parameters_read_as_bash_reads_them() {
    let mut vars = Vars::default();
    vars.assign("d", "/a/b/c");
    vars.assign("arr", "(rm -rf ~)");
    let mut p = |inner: &str| vars.parameter(inner);
    assert_eq!(p("d").as_deref(), Some("/a/b/c"));
    assert_eq!(p("d%/*").as_deref(), Some("/a/b"));
    assert_eq!(p("d##*/").as_deref(), Some("c"));
    assert_eq!(p("d#/a").as_deref(), Some("/b/c"));
    assert_eq!(p("d#").as_deref(), Some("/a/b/c"));
    assert_eq!(p("d%%/c").as_deref(), Some("/a/b"));
    assert_eq!(p("d:0").as_deref(), Some("/a/b/c"));
    assert_eq!(p("d:1:1").as_deref(), Some("a"));
    assert_eq!(p("d: -1").as_deref(), Some("c"));
    assert_eq!(p("d:(-3):2").as_deref(), Some("b/"));
    assert_eq!(p("d/b/x").as_deref(), Some("/a/x/c"));
    assert_eq!(p("d//\\//-").as_deref(), Some(UNKNOWN), "an escaped pattern is not followed");
    assert_eq!(p("d//a/").as_deref(), Some("//b/c"));
    assert_eq!(p("d@Q").as_deref(), Some("'/a/b/c'"));
    assert_eq!(p("d@U").as_deref(), Some("/A/B/C"));
    assert_eq!(p("d:-/x").as_deref(), Some("/a/b/c"));
    assert_eq!(p("HOME%/*").as_deref(), Some("${HOME}/.."));
    assert_eq!(p("HOME").as_deref(), None, "from the environment: left as written");
    assert_eq!(p("HOME:-/tmp").as_deref(), Some("${HOME}"), "always set");
    assert_eq!(p("REPLY").as_deref(), Some(UNKNOWN));
    assert_eq!(p("d/a*/b").as_deref(), Some(UNKNOWN));
    assert_eq!(p("d,,x").as_deref(), Some(UNKNOWN));
    assert_eq!(p("!d").as_deref(), Some(UNKNOWN));
    assert_eq!(p("#d").as_deref(), Some("6"));
    assert_eq!(p("arr[0]").as_deref(), Some("rm"));
    assert_eq!(p("arr[2]").as_deref(), Some("~"));
    assert_eq!(p("arr[-1]").as_deref(), Some("~"));
    assert_eq!(p("#arr[@]").as_deref(), Some("3"));
    assert_eq!(p("arr[$i]").as_deref(), Some(UNKNOWN));
    assert_eq!(vars.get("arr"), Some("rm"));
    let spliced = vars.splice(&Word { quoted: true, ..Word::plain("${arr[@]}") }).unwrap();
    assert_eq!(spliced.iter().map(|w| w.value.as_str()).collect::<Vec<_>>(), ["rm", "-rf", "~"]);
    vars.set_unknown("r");
    assert_eq!(vars.parameter("r").as_deref(), Some(UNKNOWN));
    // The written part of a value holding an expansion is cut; past it, unknown.
    vars.assign("h", "$HOME/a/b");
    assert_eq!(vars.parameter("h%/*").as_deref(), Some("$HOME/a"));
    assert_eq!(vars.parameter("h%%/*").as_deref(), Some(UNKNOWN));
    assert_eq!(vars.parameter("h#/").as_deref(), Some(UNKNOWN));
}

/// A default's word where the variable is certainly unset or empty, its value where it is
/// certainly set, and both readings where it may be either.
#[test]
fn defaults_follow_set_unset_and_empty() {
    let mut vars = Vars::default();
    vars.assign("e", "");
    vars.assign("x", "v");
    vars.unset("u");
    vars.set_unknown("q");
    let mut p = |inner: &str| vars.parameter(inner);
    assert_eq!(p("e:-~").as_deref(), Some("~"));
    assert_eq!(p("e-~").as_deref(), Some(""), "set, if empty");
    assert_eq!(p("u-~").as_deref(), Some("~"));
    assert_eq!(p("x:-~").as_deref(), Some("v"));
    assert_eq!(p("x:+w").as_deref(), Some("w"));
    assert_eq!(p("e:+w").as_deref(), Some(""));
    assert_eq!(p("e+w").as_deref(), Some("w"));
    assert_eq!(p("u+w").as_deref(), Some(""));
    assert_eq!(p("q-~").as_deref(), Some(UNKNOWN), "set, to something unknown");
    // Each expansion with two readings takes the first in reading 0, the second in reading 1.
    let read = |vars: &mut Vars, mask: u32, inner: &str| {
        vars.begin_reading(Reading::of(mask));
        let value = vars.parameter(inner);
        (value, vars.reading().met())
    };
    assert_eq!(read(&mut vars, 0, "q:-~"), (Some(UNKNOWN.to_string()), 1));
    assert_eq!(read(&mut vars, 1, "q:-~"), (Some("~".to_string()), 1));
    assert_eq!(read(&mut vars, 0, "X:-~"), (Some("${X}".to_string()), 1));
    assert_eq!(read(&mut vars, 1, "X:-~"), (Some("~".to_string()), 1));
    assert_eq!(read(&mut vars, 0, "X:+w"), (Some(String::new()), 1));
    assert_eq!(read(&mut vars, 1, "X:+w"), (Some("w".to_string()), 1));
    assert_eq!(read(&mut vars, 1, "u:=/"), (Some("/".to_string()), 0));
    assert_eq!(vars.parameter("u").as_deref(), Some("/"), "`:=` assigns");
}

#[test]
fn positional_parameters_follow_set_shift_and_appends() {
    let mut vars = Vars::default();
    assert_eq!(vars.parameter("1"), None, "unknown: left as written");
    vars.set_positionals(Some(vec!["rm".into(), "-rf".into(), "~".into()]));
    vars.insert("0".into(), "sh".into());
    assert_eq!(vars.parameter("1").as_deref(), Some("rm"));
    assert_eq!(vars.parameter("#").as_deref(), Some("3"));
    assert_eq!(vars.parameter("@:2").as_deref(), Some("-rf ~"));
    assert_eq!(vars.parameter("0").as_deref(), Some("sh"));
    vars.shift(None);
    assert_eq!(vars.parameter("1").as_deref(), Some("-rf"));
    vars.shift(Some("5"));
    assert_eq!(vars.parameter("#").as_deref(), Some("2"), "bash refuses to shift past the end");
    vars.shift(Some("$n"));
    assert_eq!(vars.parameter("1"), None);
    vars.assign("a", "r");
    vars.append("a", "m");
    assert_eq!(vars.get("a"), Some("rm"));
    vars.assign("arr", "(echo)");
    vars.append("arr", "(rm -rf)");
    assert_eq!(vars.parameter("arr[1]").as_deref(), Some("rm"));
    vars.append("arr", "x");
    assert_eq!(vars.parameter("arr[0]").as_deref(), Some("echox"));
    vars.append("P", ":/x");
    assert_eq!(vars.get("P"), Some("${P}:/x"), "the environment's value, then the appended text");
}
